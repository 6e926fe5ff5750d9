"""Strategy ``arce``: Analyze, Retrieve, Contextualize, Execute (spec 000, quality 0.95).

**Analyze.** The question is split into evidence (:mod:`.query`): names,
dotted names, paths and traceback frames, error names and messages, code in
backticks and fences, salient prose; each kind becomes one or more short
text queries, and paths, modules and focus items are resolved to nodes.

**Retrieve.** Every text query, the vector search (when a vector backend and
an embedder are present) and a graph expansion of the best results are
fused by weighted reciprocal-rank fusion, with the spec's weights text 0.4 /
vector 0.4 / graph 0.2 (renormalised over the channels present). The graph
channel ranks the neighbourhood of the current best nodes by personalised
PageRank. Up to ``context.strategies.arce.max-rounds`` rounds refine the
result: names found in the signatures and calls of the best nodes become
new queries, until the best files and nodes stop changing.

**Contextualize.** A change is made in files, so node scores are aggregated
per file (best node, then decaying contributions of the next ones) and the
nodes of the best files are re-scored locally against every term of the
question (names, messages, traceback functions, prose), not only the few
words a text query holds.

**Execute.** The budget goes to what most likely must change: candidates are
(file, unit) pairs valued by the file's probability times the unit's share of
the file's evidence; a unit is a whole small file, or one function or method
in full (a long one as its outline when it cannot fit), or the outline of the
class holding delivered methods. Units are taken best first while they fit;
the best file's units carry the highest relevance, so files rank in the
context as they ranked here.

Without a node source (a bare set of backends) the fused hits are delivered
as the backends returned them.
"""

from __future__ import annotations

import math
import re
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from cleveragents.models.context import ContextFragment, ContextRequest, StrategyCapabilities
from cleveragents.models.uko import DEPTH_FULL, DEPTH_MEMBERS, DEPTH_OUTLINE, DEPTH_SIGNATURES

from cleveragents_acms.strategies._anchors import module_paths, resolve_focus, resolve_paths
from cleveragents_acms.strategies._graph import GraphView, path_of
from cleveragents_acms.strategies._support import (
    BudgetFiller,
    Hit,
    depths_from,
    file_of,
    is_callable,
    is_container,
    is_test_path,
    query_of,
    requested_depth,
    safe_search,
    strategy_setting,
)
from cleveragents_acms.strategies.navigator import expand_neighbourhood
from cleveragents_acms.strategies.query import (
    QueryAnalysis,
    TextQuery,
    analyze,
    identifier_parts,
    parts_of,
)
from cleveragents_acms.strategies.ranking import (
    normalise,
    personalized_pagerank,
    reciprocal_rank_fusion,
)
from cleveragents_acms.strategies.semantic import (
    _embedder,
    embed_query,
    embedding_text,
    vector_hits,
)

if TYPE_CHECKING:
    from cleveragents.models.uko import UKONode
    from cleveragents.protocols.backends import BackendSet

__all__ = ["ArceStrategy", "CHANNEL_WEIGHTS"]

#: The spec's fusion weights per retrieval channel.
CHANNEL_WEIGHTS: dict[str, float] = {"text": 0.4, "vector": 0.4, "graph": 0.2}
_RRF_K = 30.0
#: How much of the text channel a resolved mention (path, module, focus) list carries.
_MENTION_SHARE = 0.5
_GRAPH_SEEDS = 10
_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_TOKEN = re.compile(r"[a-z0-9]+")


@dataclass
class _Evidence:
    """The fused state of one assembly."""

    analysis: QueryAnalysis
    hits: dict[str, Hit] = field(default_factory=dict)
    text_lists: list[tuple[list[str], float]] = field(default_factory=list)
    vector_list: list[str] = field(default_factory=list)
    mention_list: list[str] = field(default_factory=list)
    graph_list: list[str] = field(default_factory=list)
    queried: set[str] = field(default_factory=set)
    fused: dict[str, float] = field(default_factory=dict)

    def channel_weights(self) -> dict[str, float]:
        present = {"text": bool(self.text_lists or self.mention_list)}
        present["vector"] = bool(self.vector_list)
        present["graph"] = bool(self.graph_list)
        total = sum(CHANNEL_WEIGHTS[c] for c, ok in present.items() if ok)
        return {c: CHANNEL_WEIGHTS[c] / total if ok and total else 0.0 for c, ok in present.items()}

    def fuse(self) -> dict[str, float]:
        weights = self.channel_weights()
        rankings: list[tuple[list[str], float]] = []
        text_total = sum(w for _, w in self.text_lists) + (
            _MENTION_SHARE if self.mention_list else 0.0
        )
        for ranking, weight in self.text_lists:
            rankings.append((ranking, weights["text"] * weight / text_total))
        if self.mention_list:
            rankings.append((self.mention_list, weights["text"] * _MENTION_SHARE / text_total))
        rankings.append((self.vector_list, weights["vector"]))
        rankings.append((self.graph_list, weights["graph"]))
        self.fused = reciprocal_rank_fusion(rankings, k=_RRF_K)
        return self.fused

    def top(self, count: int) -> list[str]:
        return sorted(self.fused, key=lambda u: -self.fused[u])[:count]


class ArceStrategy:
    """Multi-modal, file-aware retrieval with fusion and refinement (spec 000, "arce")."""

    name = "arce"
    capabilities = StrategyCapabilities(
        uses_text=True,
        uses_graph=True,
        quality_score=0.95,
        supports_depth_breadth=True,
        uko_levels=("uko", "uko-code", "uko-oo", "uko-py"),
    )

    def __init__(
        self,
        *,
        max_rounds: int | None = None,
        hits_per_query: int = 60,
        top_files: int = 8,
        embedder: Any = None,
    ) -> None:
        self.max_rounds = max_rounds
        self.hits_per_query = hits_per_query
        self.top_files = top_files
        #: Embedder for the vector channel (else the lookup of :mod:`.semantic`).
        self.embedder = embedder

    # -- ContextStrategy -----------------------------------------------------------------

    def can_handle(self, request: ContextRequest, backends: BackendSet) -> float:
        if backends.text is None or backends.graph is None:
            return 0.0
        analysis = analyze(query_of(request), *request.focus)
        if analysis.is_empty and not request.focus:
            return 0.0
        return 0.9 if backends.vector is not None else 0.85

    def assemble(
        self,
        request: ContextRequest,
        backends: BackendSet,
        budget: int,
        plan_context: object,
    ) -> list[ContextFragment]:
        if budget <= 0 or backends.text is None:
            return []
        analysis = analyze(query_of(request), *request.focus)
        if analysis.is_empty and not request.focus:
            return []
        view = GraphView(backends.graph, backends.scope) if backends.graph is not None else None
        evidence = _Evidence(analysis)
        self._retrieve(request, backends, view, evidence)
        if not evidence.fused:
            return []
        if backends.nodes is None or view is None:
            return self._deliver_hits(request, backends, budget, evidence)
        return _Delivery(self.name, request, backends, view, evidence, budget).run(
            self.top_files
        )

    # -- Analyze + Retrieve ----------------------------------------------------------------

    def _retrieve(
        self,
        request: ContextRequest,
        backends: BackendSet,
        view: GraphView | None,
        evidence: _Evidence,
    ) -> None:
        analysis = evidence.analysis
        for query in analysis.text_queries():
            self._search(backends, evidence, query)
        evidence.mention_list = self._mentions(request, analysis, view, backends)
        self._vector(request, backends, evidence)
        evidence.fuse()
        rounds = max(1, int(strategy_setting(self.name, "max-rounds", self.max_rounds) or 1))
        previous: tuple[frozenset[str], frozenset[str]] | None = None
        for round_number in range(1, rounds + 1):
            if view is not None:
                evidence.graph_list = self._graph_channel(view, evidence)
                evidence.fuse()
            current = _signature(evidence)
            if current == previous or round_number == rounds:
                break
            previous = current
            new_queries = self._refinements(backends, evidence)
            if not new_queries:
                break
            for query in new_queries:
                self._search(backends, evidence, query)
            evidence.fuse()

    def _search(self, backends: BackendSet, evidence: _Evidence, query: TextQuery) -> None:
        key = query.text.lower()
        if key in evidence.queried:
            return
        evidence.queried.add(key)
        hits = safe_search(backends, query.text, self.hits_per_query)
        if not hits:
            return
        for hit in hits:
            known = evidence.hits.get(hit.uri)
            if known is None or hit.score > known.score:
                evidence.hits[hit.uri] = hit
        evidence.text_lists.append(([h.uri for h in hits], query.weight))

    def _mentions(
        self,
        request: ContextRequest,
        analysis: QueryAnalysis,
        view: GraphView | None,
        backends: BackendSet,
    ) -> list[str]:
        """Nodes the question points at: focus items, mentioned files and modules."""
        found: list[str] = []
        if request.focus:
            found.extend(resolve_focus(request.focus, view, backends))
        paths = list(analysis.paths[:12])
        for module in analysis.modules[:4]:
            paths.extend(module_paths(module)[:4])
        for files in resolve_paths(paths, view, backends, search=False).values():
            found.extend(files[:1])
        return list(dict.fromkeys(found))

    def _vector(self, request: ContextRequest, backends: BackendSet, evidence: _Evidence) -> None:
        if backends.vector is None:
            return
        embedder = _embedder(self)
        if embedder is None:
            return
        embedding = embed_query(embedder, embedding_text(request))
        if embedding is None:
            return
        hits = vector_hits(backends, embedding, self.hits_per_query)
        for hit in hits:
            evidence.hits.setdefault(hit.uri, hit)
        evidence.vector_list = [h.uri for h in hits]

    def _graph_channel(self, view: GraphView, evidence: _Evidence) -> list[str]:
        """The neighbourhood of the best nodes, ranked by PageRank personalised to them."""
        seeds = {uri: evidence.fused[uri] for uri in evidence.top(_GRAPH_SEEDS)}
        if not seeds:
            return []
        hood = expand_neighbourhood(view, seeds, 1, beam=80, max_nodes=400)
        personal = dict(seeds)
        names = {n.lower() for n in evidence.analysis.names()}
        for uri in hood.distance:
            if _simple_name(uri).lower() in names:
                personal[uri] = personal.get(uri, 0.0) + max(seeds.values()) * 0.5
        rank = personalized_pagerank(hood.edges, personal)
        return sorted(rank, key=lambda u: -rank[u])[:60]

    def _refinements(self, backends: BackendSet, evidence: _Evidence) -> list[TextQuery]:
        """Names the best nodes' signatures and calls mention that no query asked for yet."""
        top = evidence.top(5)
        if backends.nodes is None or not top:
            return []
        asked = {q for q in evidence.queried}
        question = {p for name in evidence.analysis.names() for p in identifier_parts(name)}
        question |= set(evidence.analysis.keywords)
        counts: Counter[str] = Counter()
        for node in backends.nodes.nodes(top).values():
            text = " ".join(
                [node.properties.get("signature", ""), node.properties.get("docstring", "")]
            )
            for word in set(_WORD.findall(text)):
                parts = identifier_parts(word)
                if len(word) > 3 and word.lower() not in asked and len(parts) > 1:
                    if question.intersection(parts):
                        counts[word] += 1
        return [TextQuery("refinement", word, 0.4) for word, _ in counts.most_common(3)]

    # -- delivery without a node source ---------------------------------------------------

    def _deliver_hits(
        self, request: ContextRequest, backends: BackendSet, budget: int, evidence: _Evidence
    ) -> list[ContextFragment]:
        scores = normalise(evidence.fused)
        filler = BudgetFiller(backends, budget, self.name)
        for uri in evidence.top(len(scores)):
            hit = evidence.hits.get(uri)
            if hit is None or filler.remaining <= 0:
                continue
            depth = requested_depth(request, hit.uko_type) or DEPTH_FULL
            filler.offer(uri, depths_from(depth), scores[uri], hit=hit)
        return filler.fragments


def _signature(evidence: _Evidence) -> tuple[frozenset[str], frozenset[str]]:
    """What "the result stabilised" compares: the best five files and ten nodes."""
    top = evidence.top(40)
    files = list(dict.fromkeys(file_of(u) for u in top))[:5]
    return frozenset(files), frozenset(top[:10])


def _simple_name(uri: str) -> str:
    if "#" in uri:
        return uri.rsplit("#", 1)[1].rsplit(".", 1)[-1]
    return uri.rsplit("/", 1)[-1].rsplit(".", 1)[0]


# -- Contextualize + Execute --------------------------------------------------------------


@dataclass
class _Unit:
    uri: str
    file: str
    value: float
    depth: int
    kind: str  # "file" | "node" | "outline"


class _Delivery:
    """File-aware delivery of one assembly's evidence within its budget."""

    def __init__(
        self,
        strategy: str,
        request: ContextRequest,
        backends: BackendSet,
        view: GraphView,
        evidence: _Evidence,
        budget: int,
    ) -> None:
        self.strategy = strategy
        self.request = request
        self.backends = backends
        self.view = view
        self.evidence = evidence
        self.budget = budget
        self.filler = BudgetFiller(backends, budget, strategy)
        broad = "strateg" in (request.purpose or "").lower()
        self.callable_depth = DEPTH_SIGNATURES if broad else DEPTH_FULL

    def run(self, top_files: int) -> list[ContextFragment]:
        node_scores = normalise(self.evidence.fused)
        files = self._file_scores(node_scores)
        ranked = sorted(files, key=lambda f: -files[f])[:top_files]
        if not ranked:
            return []
        probability = self._file_probabilities(ranked, files)
        members = self._members(ranked)
        nodes = self.backends.nodes.nodes(  # type: ignore[union-attr]
            [u for f in ranked for u in members[f]] + ranked
        )
        local = _LocalScorer(self.evidence.analysis, nodes)
        units: list[_Unit] = []
        for file_uri in ranked:
            p = probability[file_uri]
            units.append(_Unit(file_uri, file_uri, p, DEPTH_FULL, "file"))
            scores = self._unit_scores(members[file_uri], nodes, node_scores, local)
            for uri, share in scores.items():
                node = nodes[uri]
                depth = requested_depth(self.request, node.uko_type)
                if is_callable(node.uko_type):
                    value, kind, default = p * share, "node", self.callable_depth
                elif is_container(node.uko_type):
                    value, kind, default = p * share * 0.6, "outline", DEPTH_SIGNATURES
                else:
                    value, kind, default = p * share * 0.5, "node", DEPTH_FULL
                units.append(_Unit(uri, file_uri, value, depth or default, kind))
        return self._take(units, ranked, probability, nodes)

    # -- Contextualize ----------------------------------------------------------------

    def _file_scores(self, node_scores: Mapping[str, float]) -> dict[str, float]:
        """Node evidence summed per file: the best node, then halving contributions.

        Test files count a third unless the question is about tests: what must
        change is rarely the test that shows it.
        """
        per_file: dict[str, list[float]] = defaultdict(list)
        for uri, score in node_scores.items():
            per_file[file_of(uri)].append(score)
        about_tests = bool({"test", "tests", "testing"} & set(self.evidence.analysis.keywords))
        files: dict[str, float] = {}
        for file_uri, scores in per_file.items():
            scores.sort(reverse=True)
            score = sum(s * 0.5**i for i, s in enumerate(scores[:6]))
            if not about_tests and is_test_path(path_of(file_uri)):
                score /= 3.0
            files[file_uri] = score
        return files

    @staticmethod
    def _file_probabilities(ranked: list[str], files: Mapping[str, float]) -> dict[str, float]:
        """Each file's share of belief, the best file 1.0 (a softmax over aggregated scores)."""
        best = files[ranked[0]] or 1.0
        logits = {f: 4.0 * files[f] / best for f in ranked}
        top = max(logits.values())
        exp = {f: math.exp(v - top) for f, v in logits.items()}
        return exp

    def _members(self, files: list[str]) -> dict[str, list[str]]:
        """Every node each file contains (three levels: classes, methods, nested)."""
        members: dict[str, list[str]] = {f: [] for f in files}
        owner = {f: f for f in files}
        frontier = list(files)
        for _ in range(3):
            children = self.view.children(frontier)
            frontier = []
            for parent, found in children.items():
                for child in found:
                    if child not in owner:
                        owner[child] = owner[parent]
                        members[owner[parent]].append(child)
                        frontier.append(child)
            if not frontier:
                break
        return members

    def _unit_scores(
        self,
        members: list[str],
        nodes: Mapping[str, UKONode],
        node_scores: Mapping[str, float],
        local: _LocalScorer,
    ) -> dict[str, float]:
        """Each member's share of its file's evidence (the best member 1.0); imports left out."""
        candidates = [u for u in members if u in nodes and not _is_import(nodes[u].uko_type)]
        lexical = normalise({u: local.score(nodes[u]) for u in candidates})
        combined = {
            uri: 0.5 * node_scores.get(uri, 0.0) + 0.5 * lexical.get(uri, 0.0)
            for uri in candidates
        }
        return normalise(combined)

    # -- Execute -----------------------------------------------------------------------

    def _take(
        self,
        units: list[_Unit],
        ranked: list[str],
        probability: Mapping[str, float],
        nodes: Mapping[str, UKONode],
    ) -> list[ContextFragment]:
        filler = self.filler
        whole: set[str] = set()
        taken_in: dict[str, list[str]] = defaultdict(list)
        file_rank = {f: i for i, f in enumerate(ranked)}
        units.sort(key=lambda u: (-u.value, file_rank[u.file], u.uri))
        for unit in units:
            if filler.remaining < 10:
                break
            if unit.file in whole:
                continue
            metadata = {"focus_distance": str(min(4, file_rank[unit.file]))}
            p = probability[unit.file]
            relevance = p * (0.6 + 0.4 * min(1.0, unit.value / max(p, 1e-9)))
            node = nodes.get(unit.uri)
            if unit.kind == "file":
                share = 0.6 if file_rank[unit.file] == 0 else 0.3
                added = filler.offer(
                    unit.uri,
                    [DEPTH_FULL],
                    relevance,
                    metadata=metadata,
                    limit=int(self.budget * share),
                    node=node,
                )
                if added is not None:
                    whole.add(unit.file)
                continue
            if node is None or any(_inside(unit.uri, t) for t in taken_in[unit.file]):
                continue
            floor = DEPTH_OUTLINE if unit.kind == "node" else DEPTH_MEMBERS
            added = filler.offer(
                unit.uri,
                depths_from(unit.depth, floor),
                relevance,
                metadata=metadata,
                limit=int(self.budget * 0.5),
                node=node,
            )
            if added is not None and added.detail_depth >= DEPTH_FULL:
                taken_in[unit.file].append(unit.uri)
        return filler.fragments


def _is_import(uko_type: str) -> bool:
    return uko_type.rsplit(":", 1)[-1] == "Import"


def _inside(uri: str, container: str) -> bool:
    return uri.startswith(container + ".") and file_of(uri) == file_of(container)


class _LocalScorer:
    """BM25-like score of a node's text against every term of the question.

    Document frequencies come from the candidate nodes themselves (the members
    of the best files), so a word every function of those files uses counts
    little. A node whose name the question mentions, or whose body holds one of
    the question's messages, gets a bonus.
    """

    def __init__(self, analysis: QueryAnalysis, nodes: Mapping[str, UKONode]) -> None:
        self.terms = analysis.terms()
        self.names = {n.lower() for n in analysis.names()}
        self.trace = {t.lower() for t in analysis.trace_functions}
        self.messages = [t for m in analysis.messages[:4] for t in _trigrams(m[:80])]
        self._bags: dict[str, Counter[str]] = {}
        df: Counter[str] = Counter()
        for uri, node in nodes.items():
            bag = self._bag(node)
            self._bags[uri] = bag
            df.update(set(bag) & set(self.terms))
        total = max(1, len(nodes))
        self.idf = {t: math.log(1 + (total - df[t] + 0.5) / (df[t] + 0.5)) for t in self.terms}
        lengths = [sum(b.values()) for b in self._bags.values()] or [1]
        self.average = max(1.0, sum(lengths) / len(lengths))

    @staticmethod
    def _text(node: UKONode) -> str:
        if is_callable(node.uko_type):
            return node.renderings.get(DEPTH_FULL, "") or node.rendering(DEPTH_FULL)
        return " ".join(
            [node.name, node.properties.get("signature", ""), node.properties.get("docstring", "")]
        )

    def _bag(self, node: UKONode) -> Counter[str]:
        bag: Counter[str] = Counter()
        for word, count in Counter(_WORD.findall(self._text(node))).items():
            for part in parts_of(word):
                if len(part) > 1:
                    bag[part] += count
        return bag

    def score(self, node: UKONode) -> float:
        bag = self._bags.get(node.uri)
        if bag is None:
            bag = self._bags[node.uri] = self._bag(node)
        length = sum(bag.values())
        norm = 1.2 * (0.25 + 0.75 * length / self.average)
        score = 0.0
        for term, weight in self.terms.items():
            tf = bag.get(term, 0)
            if tf:
                score += min(weight, 3.0) * self.idf.get(term, 0.0) * tf * 2.2 / (tf + norm)
        name = node.name.lower()
        if name in self.names or node.qualname.lower() in self.names:
            score *= 1.5
            score += 5.0
        if name in self.trace:
            score += 5.0
        if self.messages and is_callable(node.uko_type):
            text = " " + " ".join(_TOKEN.findall(self._text(node).lower())) + " "
            if any(trigram in text for trigram in self.messages):
                score += 8.0
        return score


def _trigrams(message: str) -> list[str]:
    """Runs of three words of ``message``, space-padded, to find it quoted in code."""
    words = _TOKEN.findall(message.lower())
    return [f" {' '.join(words[i : i + 3])} " for i in range(len(words) - 2)]

