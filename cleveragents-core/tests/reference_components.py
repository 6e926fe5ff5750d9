"""Small, correct implementations of every slot, used to prove the conformance suites.

A suite that fails one of these is wrong; a suite that passes a broken
variant of one of these (see ``test_conformance_suites.py``) is too weak.
"""

from __future__ import annotations

import ast
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cleveragents.models.context import (
    AssembledContext,
    ContextFragment,
    ContextRequest,
    FragmentProvenance,
    ScoredFragment,
    StrategyCapabilities,
)
from cleveragents.models.uko import AnalysisResult, UKONode, node_uri
from cleveragents.protocols.backends import BackendSet
from cleveragents.testing.conformance.strategies import hashed_embedding
from cleveragents.testing.memory import UKO_SOURCE_PATH, UKO_SOURCE_RESOURCE

# -- tokenizers and embedders ---------------------------------------------------------


class ByteTripletTokenizer:
    """Three UTF-8 bytes per token: exact round trips, about one token per three characters."""

    name = "byte-triplet"

    def encode(self, text: str) -> list[int]:
        data = text.encode("utf-8")
        return [
            (len(chunk) << 24) | int.from_bytes(chunk, "big")
            for chunk in (data[i : i + 3] for i in range(0, len(data), 3))
        ]

    def decode(self, tokens: Sequence[int]) -> str:
        data = b"".join((t & 0xFFFFFF).to_bytes(t >> 24, "big") for t in tokens)
        return data.decode("utf-8")

    def count(self, text: str) -> int:
        return -(-len(text.encode("utf-8")) // 3)


class HashingEmbedder:
    """Bag-of-words hashed into 64 dimensions and L2-normalised."""

    name = "hashing-64"
    dimension = 64

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        return [hashed_embedding(text, self.dimension) for text in texts]


class KeywordStrategy:
    """Text search for the request's query, packed into the budget (four characters a token)."""

    name = "reference-keyword"
    capabilities = StrategyCapabilities(uses_text=True, quality_score=0.3)

    def can_handle(self, request: ContextRequest, backends: BackendSet) -> float:
        return 0.3 if backends.text is not None and (request.query or "").strip() else 0.0

    def assemble(
        self, request: ContextRequest, backends: BackendSet, budget: int, plan_context: object
    ) -> list[ContextFragment]:
        if backends.text is None or not (request.query or "").strip():
            return []
        fragments, used = [], 0
        for hit in backends.text.search(request.query or "", scope=backends.scope):
            tokens = -(-len(hit.content) // 4)
            if used + tokens > budget:
                continue
            used += tokens
            provenance = FragmentProvenance(
                resource_id=hit.metadata["resource_id"],
                path=hit.metadata["path"],
                strategy=self.name,
            )
            fragments.append(
                ContextFragment(
                    uko_node=hit.uko_uri,
                    content=hit.content,
                    token_count=tokens,
                    relevance_score=hit.score,
                    provenance=provenance,
                )
            )
        return fragments


# -- pipeline stages --------------------------------------------------------------------


class Selector:
    def select(
        self, strategies: Sequence[Any], request: ContextRequest, backends: BackendSet
    ) -> list[tuple[Any, float]]:
        scored = [(s, float(s.can_handle(request, backends))) for s in strategies]
        chosen = [(s, c) for s, c in scored if c > 0]
        chosen.sort(key=lambda pair: pair[1] * pair[0].capabilities.quality_score, reverse=True)
        return chosen


class Allocator:
    def allocate(
        self, candidates: list[tuple[Any, float]], total_budget: int, request: ContextRequest
    ) -> list[tuple[Any, float, int]]:
        weight = sum(c for _, c in candidates) or 1.0
        return [(s, c, int(total_budget * c / weight)) for s, c in candidates]


class Executor:
    def execute(
        self,
        allocations: list[tuple[Any, float, int]],
        request: ContextRequest,
        backends: BackendSet,
        plan_context: object,
    ) -> list[ContextFragment]:
        fragments: list[ContextFragment] = []
        for strategy, _, budget in allocations:
            try:
                fragments.extend(strategy.assemble(request, backends, budget, plan_context))
            except Exception:
                continue
        return fragments


class Deduplicator:
    def deduplicate(self, fragments: list[ContextFragment]) -> list[ContextFragment]:
        best: dict[tuple[str, str], ContextFragment] = {}
        for fragment in fragments:
            key = (fragment.uko_node, fragment.content_hash)
            if key not in best or fragment.relevance_score > best[key].relevance_score:
                best[key] = fragment
        return list(best.values())


class DepthResolver:
    def resolve(self, fragments: list[ContextFragment], budget: int) -> list[ContextFragment]:
        by_node: dict[str, list[ContextFragment]] = {}
        for fragment in fragments:
            by_node.setdefault(fragment.uko_node, []).append(fragment)
        chosen = []
        for renderings in by_node.values():
            fitting = [f for f in renderings if f.token_count <= budget]
            pool = fitting or [min(renderings, key=lambda f: f.token_count)]
            chosen.append(max(pool, key=lambda f: (f.detail_depth, f.relevance_score)))
        return chosen


class Scorer:
    def score(self, fragments: list[ContextFragment], plan_context: object) -> list[ScoredFragment]:
        return [
            ScoredFragment(f, f.relevance_score, {"relevance": f.relevance_score})
            for f in fragments
        ]


class Packer:
    def pack(
        self, scored_fragments: list[ScoredFragment], budget: int, detail_level_maps: object
    ) -> list[ContextFragment]:
        packed, used, nodes = [], 0, set()
        for item in sorted(scored_fragments, key=lambda s: s.composite_score, reverse=True):
            fragment = item.fragment
            if fragment.uko_node in nodes or used + fragment.token_count > budget:
                continue
            packed.append(fragment)
            nodes.add(fragment.uko_node)
            used += fragment.token_count
        return packed


class Orderer:
    def order(self, fragments: list[ContextFragment]) -> list[ContextFragment]:
        return sorted(
            fragments,
            key=lambda f: (f.provenance.path, f.provenance.start_line or 0, f.fragment_id),
        )


class Preamble:
    def generate(
        self,
        fragments: list[ContextFragment],
        strategies_used: list[str],
        budget_used: float,
        max_tokens: int,
    ) -> str | None:
        paths = sorted({f.provenance.path for f in fragments})
        text = (
            f"{len(fragments)} fragments from {len(paths)} files "
            f"({', '.join(paths)}); strategies: {', '.join(strategies_used)}; "
            f"budget used {budget_used:.0%}."
        )
        words = text.split()[:max_tokens]
        return " ".join(words)[: 4 * max_tokens]


class Compressor:
    def compress(
        self, parent_context: AssembledContext, child_focus: list[str], skeleton_budget: int
    ) -> AssembledContext:
        ranked = sorted(
            parent_context.fragments,
            key=lambda f: (f.uko_node not in child_focus, -f.relevance_score),
        )
        kept, used = [], 0
        for fragment in ranked:
            if used + fragment.token_count <= skeleton_budget:
                kept.append(fragment)
                used += fragment.token_count
        return parent_context.model_copy(
            update={"fragments": tuple(kept), "total_tokens": used, "preamble": None}
        )


# -- agents and knowledge -----------------------------------------------------------------


class EchoTool:
    name = "testing/echo"
    description = "Returns its text argument unchanged."
    input_schema: Mapping[str, Any] = {
        "type": "object",
        "properties": {"text": {"type": "string"}},
        "required": ["text"],
        "additionalProperties": False,
    }

    def invoke(self, arguments: Mapping[str, Any]) -> Any:
        return {"text": arguments["text"]}


@dataclass
class PyrightSpec:
    name: str = "pyright"
    languages: tuple[str, ...] = ("python",)
    command: tuple[str, ...] = ("pyright-langserver", "--stdio")


@dataclass
class _Capabilities:
    supports_streaming: bool = True
    supports_tools: bool = True
    supports_embeddings: bool = False
    max_context_tokens: int = 128_000


class OfflineProvider:
    @property
    def provider_name(self) -> str:
        return "offline"

    @property
    def capabilities(self) -> _Capabilities:
        return _Capabilities()

    def create_chat_model(self, model: str, temperature: float = 0.7, **kwargs: Any) -> Any:
        return {"model": model, "temperature": temperature}

    def create_embedding_model(self, model: str, **kwargs: Any) -> Any:
        return HashingEmbedder()


class PythonDefinitionsAnalyzer:
    """Module, top-level functions and classes of one Python file, via ``ast``."""

    name = "python-definitions"
    languages = ("python",)
    specificity = 10

    def supports(self, path: Path, head: bytes) -> bool:
        return path.suffix == ".py"

    def analyze(
        self, path: Path, content: str, *, resource_id: str, relative_path: str
    ) -> AnalysisResult:
        result = AnalysisResult()
        try:
            tree = ast.parse(content)
        except SyntaxError as exc:
            result.errors.append(f"{relative_path}:{exc.lineno}: {exc.msg}")
            return result
        lines = content.splitlines() or [""]
        module = UKONode(
            uri=node_uri(resource_id, relative_path),
            uko_type="uko-py:Module",
            name=relative_path.rsplit("/", 1)[-1],
            path=relative_path,
            start_line=1,
            end_line=len(lines),
            resource_id=resource_id,
            language="python",
            renderings={0: relative_path, 9: content},
        )
        result.nodes.append(module)
        for node in tree.body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                end = node.end_lineno or node.lineno
                result.nodes.append(
                    UKONode(
                        uri=node_uri(resource_id, relative_path, node.name),
                        uko_type="uko-py:Class"
                        if isinstance(node, ast.ClassDef)
                        else "uko-py:Function",
                        name=node.name,
                        path=relative_path,
                        start_line=node.lineno,
                        end_line=end,
                        resource_id=resource_id,
                        parent=module.uri,
                        qualname=node.name,
                        language="python",
                        renderings={0: node.name, 9: "\n".join(lines[node.lineno - 1 : end])},
                    )
                )
        for node in result.nodes:
            result.triples.append((node.uri, UKO_SOURCE_RESOURCE, resource_id))
            result.triples.append((node.uri, UKO_SOURCE_PATH, relative_path))
        return result
