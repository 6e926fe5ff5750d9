"""What the strategies share: settings, depths, fragments from hits, filling a budget.

Strategies turn search hits into fragments through the assembly's
``NodeSource`` (``backends.nodes``), which renders any indexed node at any
depth. Without one (a bare set of backends, as in the conformance suite) a
hit becomes a fragment of the text the backend returned with it.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypeVar

from cleveragents import assembly
from cleveragents.config import DEFAULTS
from cleveragents.errors import ValidationError
from cleveragents.models.context import (
    ContextFragment,
    ContextRequest,
    DroppedFragment,
    FragmentProvenance,
)
from cleveragents.models.uko import (
    DEPTH_FULL,
    DEPTH_MEMBERS,
    DEPTH_NAME,
    DEPTH_OUTLINE,
    DEPTH_SIGNATURES,
)
from cleveragents_acms.pipeline._common import count_tokens, file_of, log, type_name

if TYPE_CHECKING:
    from cleveragents.models.uko import UKONode
    from cleveragents.protocols.backends import BackendSet

__all__ = [
    "CALLABLE_TYPES",
    "CONTAINER_TYPES",
    "RENDER_DEPTHS",
    "BudgetFiller",
    "Hit",
    "clamp",
    "default_depth",
    "defers",
    "depths_from",
    "file_of",
    "fill_in_rank_order",
    "hit_from_result",
    "is_callable",
    "is_container",
    "is_test_path",
    "log",
    "query_of",
    "requested_depth",
    "safe_search",
    "shallower",
    "strategy_setting",
]

#: The depths analyzers render, shallow to deep.
RENDER_DEPTHS: tuple[int, ...] = (
    DEPTH_NAME,
    DEPTH_MEMBERS,
    DEPTH_SIGNATURES,
    DEPTH_OUTLINE,
    DEPTH_FULL,
)

#: No tokenizer packs more characters than this into one token of source text.
_MAX_CHARS_PER_TOKEN = 8
#: Offers that did not fit recorded per strategy and assembly, best first.
LEFT_OUT_PER_STRATEGY = 100
#: Local names (after the prefix) of node types that hold executable code.
CALLABLE_TYPES = frozenset(
    {"Function", "AsyncFunction", "Method", "Property", "TestFunction", "Constructor", "Callable"}
)
#: Local names of node types that hold other nodes.
CONTAINER_TYPES = frozenset(
    {"Module", "Package", "Class", "Protocol", "Enum", "Interface", "Struct", "Trait", "File"}
)


def is_callable(uko_type: str) -> bool:
    return type_name(uko_type) in CALLABLE_TYPES


def is_container(uko_type: str) -> bool:
    return type_name(uko_type) in CONTAINER_TYPES


def is_test_path(path: str) -> bool:
    """True for test-suite files (``tests/``, ``test_x.py``, ``x_test.go``, ``conftest.py``)
    and their support modules (``utils/testing.py``, ``_testing.py``)."""
    parts = path.lower().split("/")
    name = parts[-1]
    stem = name.rsplit(".", 1)[0]
    return (
        any(p in ("test", "tests", "testing", "__tests__") for p in parts[:-1])
        or stem.startswith("test_")
        or stem.endswith(("_test", "_tests", ".test", ".spec"))
        or stem in ("conftest", "tests", "test", "testing", "_testing")
    )


#: Confidence (and fragment relevance) kept by a strategy the request did not ask for
#: when it asked for others.
DEFER_FACTOR = 0.25
_S = TypeVar("_S")


def _deferring(strategy: object, request: ContextRequest) -> bool:
    preferred = request.preferred_strategies
    return bool(preferred) and getattr(strategy, "name", "") not in preferred


def defers(cls: type[_S]) -> type[_S]:
    """Class decorator: a strategy defers to the strategies a request prefers.

    The allocator shares the budget by confidence x quality among every
    strategy that can run. The context service runs exactly the strategies a
    request names (``--strategy X``); a pipeline driven directly with preferred
    strategies may still run others, and then they claim :data:`DEFER_FACTOR`
    of their confidence and their fragments rank below the preferred ones'
    (relevance x :data:`DEFER_FACTOR`).
    """
    can_handle = cls.can_handle  # type: ignore[attr-defined]
    assemble = cls.assemble  # type: ignore[attr-defined]

    @functools.wraps(can_handle)
    def deferring_can_handle(self: Any, request: ContextRequest, backends: BackendSet) -> float:
        confidence = float(can_handle(self, request, backends))
        return confidence * DEFER_FACTOR if _deferring(self, request) else confidence

    @functools.wraps(assemble)
    def deferring_assemble(
        self: Any, request: ContextRequest, backends: BackendSet, budget: int, plan_context: object
    ) -> list[ContextFragment]:
        fragments = assemble(self, request, backends, budget, plan_context)
        if not _deferring(self, request):
            return fragments  # type: ignore[no-any-return]
        return [
            f.model_copy(update={"relevance_score": f.relevance_score * DEFER_FACTOR})
            for f in fragments
        ]

    cls.can_handle = deferring_can_handle  # type: ignore[attr-defined]
    cls.assemble = deferring_assemble  # type: ignore[attr-defined]
    return cls


def clamp(value: float) -> float:
    return min(1.0, max(0.0, float(value)))


def strategy_setting(strategy: str, key: str, explicit: Any = None) -> Any:
    """A strategy's setting: ``explicit``, else the running assembly's, else the built-in default.

    The assembly's settings hold it as ``settings["strategies.<name>"][key]`` or
    ``settings["strategies"]["<name>.<key>"]``; the built-in default is the
    configuration key ``context.strategies.<name>.<key>``.
    """
    if explicit is not None:
        return explicit
    services = assembly.current()
    if services is not None:
        for stage, name in ((f"strategies.{strategy}", key), ("strategies", f"{strategy}.{key}")):
            value = services.setting(stage, name, None)
            if value is not None:
                return value
    return DEFAULTS.get(f"context.strategies.{strategy}.{key}")


def query_of(request: ContextRequest) -> str:
    """The request's question plus its named entities, as one text."""
    parts = [(request.query or "").strip(), *(e for e in request.entities if e.strip())]
    return "\n".join(p for p in parts if p)


_LEVELS: list[Any] = []


def _level_maps() -> Any:
    if not _LEVELS:
        from cleveragents_acms.ontology.levels import DetailLevelMapRegistry

        _LEVELS.append(DetailLevelMapRegistry())
    return _LEVELS[0]


def requested_depth(request: ContextRequest, uko_type: str | None = None) -> int | None:
    """The depth the request asks for (a named level resolved for ``uko_type``), capped at 9.

    ``None`` when the request leaves the depth to the strategy (it did not set one)
    or names a level this node type does not know.
    """
    if "depth" not in request.model_fields_set:
        return None
    value = request.depth
    if isinstance(value, int):
        return min(value, DEPTH_FULL)
    maps = _level_maps()
    try:
        domain = maps.domain_of(uko_type) if uko_type else None
        return min(int(maps.depth_of(value, domain)), DEPTH_FULL)
    except (ValidationError, ValueError, KeyError):
        try:
            return min(int(maps.depth_of(value, None)), DEPTH_FULL)
        except (ValidationError, ValueError, KeyError):
            return None


def shallower(depth: int, steps: int = 1) -> int:
    """The rendered depth ``steps`` rungs below ``depth`` on :data:`RENDER_DEPTHS`."""
    rungs = [d for d in RENDER_DEPTHS if d <= depth] or [DEPTH_NAME]
    return rungs[max(0, len(rungs) - 1 - steps)]


def depths_from(depth: int, floor: int = DEPTH_NAME) -> list[int]:
    """``depth`` and every rendered depth below it down to ``floor``, deepest first."""
    return [depth] + [d for d in reversed(RENDER_DEPTHS) if floor <= d < depth]


@dataclass
class Hit:
    """A search result reduced to what strategies use."""

    uri: str
    score: float
    content: str = ""
    path: str = ""
    name: str = ""
    qualname: str = ""
    uko_type: str = ""
    resource_id: str = ""
    start_line: int | None = None
    end_line: int | None = None

    @property
    def file(self) -> str:
        return file_of(self.uri)


def _int(value: object) -> int | None:
    try:
        number = int(str(value))
    except (TypeError, ValueError):
        return None
    return number if number >= 1 else None


def hit_from_result(result: Any) -> Hit:
    """A :class:`Hit` from a TextResult or VectorResult."""
    metadata: Mapping[str, Any] = getattr(result, "metadata", None) or {}
    return Hit(
        uri=str(result.uko_uri),
        score=clamp(getattr(result, "score", 0.0) or 0.0),
        content=str(getattr(result, "content", "") or metadata.get("content", "") or ""),
        path=str(metadata.get("path", "") or ""),
        name=str(metadata.get("name", "") or ""),
        qualname=str(metadata.get("qualname", "") or ""),
        uko_type=str(metadata.get("uko_type", "") or ""),
        resource_id=str(metadata.get("resource_id") or metadata.get("resource_ulid") or ""),
        start_line=_int(metadata.get("start_line")),
        end_line=_int(metadata.get("end_line")),
    )


def safe_search(backends: BackendSet, query: str, limit: int) -> list[Hit]:
    """Text hits for ``query`` (none when there is no text backend or the query is unusable)."""
    if backends.text is None or not query.strip():
        return []
    try:
        results = backends.text.search(query, scope=backends.scope, max_results=limit)
    except (ValidationError, ValueError) as exc:
        log.debug("text search refused a query", query=query[:80], error=str(exc))
        return []
    return [hit_from_result(r) for r in results]


@dataclass
class BudgetFiller:
    """Collects fragments, one per node, without ever exceeding ``budget`` tokens.

    Each offer tries the node at a list of depths, deepest first, and keeps the
    first rendering that fits what is left. An offer that does not fit at its
    deepest depth is recorded for the assembly's ``dropped`` list (the first
    :data:`LEFT_OUT_PER_STRATEGY`; offers come best first): it is what this
    strategy's share of the budget left out.
    """

    backends: BackendSet
    budget: int
    strategy: str
    fragments: list[ContextFragment] = field(default_factory=list)
    used: int = 0
    _nodes: set[str] = field(default_factory=set)
    _cache: dict[tuple[str, int], ContextFragment | None] = field(default_factory=dict)
    _left_out: set[str] = field(default_factory=set)

    @property
    def remaining(self) -> int:
        return max(0, self.budget - self.used)

    def __contains__(self, uri: object) -> bool:
        return uri in self._nodes

    def render(self, uri: str, depth: int, hit: Hit | None = None) -> ContextFragment | None:
        """``uri`` at the richest rendering <= ``depth`` (cached; relevance set on offer)."""
        key = (uri, depth)
        if key not in self._cache:
            self._cache[key] = self._render(uri, depth, hit)
        return self._cache[key]

    def _render(self, uri: str, depth: int, hit: Hit | None) -> ContextFragment | None:
        nodes = self.backends.nodes
        if nodes is not None:
            try:
                fragment = nodes.fragment(uri, depth, relevance=0.5, strategy=self.strategy)
            except (ValidationError, ValueError, KeyError) as exc:
                log.debug("node source could not render", uri=uri, error=str(exc))
                return None
            if fragment is None or fragment.provenance.resource_id not in self.backends.scope:
                return None
            return fragment
        if hit is None or not hit.content.strip():
            return None
        return _fragment_from_hit(hit, self.strategy)

    def offer(
        self,
        uri: str,
        depths: Sequence[int],
        relevance: float,
        *,
        hit: Hit | None = None,
        metadata: Mapping[str, str] | None = None,
        limit: int | None = None,
        node: UKONode | None = None,
    ) -> ContextFragment | None:
        """Add ``uri`` at the deepest of ``depths`` that fits (within ``limit`` tokens, if given).

        With the ``node`` at hand, renderings that cannot fit (judged by their
        length) are not rendered at all.
        """
        if uri in self._nodes:
            return None
        room = self.remaining if limit is None else min(self.remaining, limit)
        if room <= 0:
            self.left_out(uri, max(depths, default=DEPTH_FULL), node=node, hit=hit, room=room)
            return None
        tried: set[int] = set()
        too_large = False
        for depth in depths:
            if node is not None and len(node.rendering(depth)) > room * _MAX_CHARS_PER_TOKEN:
                too_large = True
                continue
            fragment = self.render(uri, depth, hit)
            if fragment is None:
                if self.backends.nodes is None and hit is not None:
                    return None
                continue
            if fragment.detail_depth in tried:
                continue
            tried.add(fragment.detail_depth)
            if 0 < fragment.token_count <= room and fragment.content.strip():
                if fragment.detail_depth < max(depths) and (too_large or len(tried) > 1):
                    self.left_out(uri, max(depths), node=node, hit=hit, room=room)
                return self.add(fragment, relevance, metadata)
            too_large = too_large or fragment.token_count > room
        if too_large:
            self.left_out(uri, max(depths), node=node, hit=hit, room=room)
        return None

    def left_out(
        self,
        uri: str,
        depth: int,
        *,
        node: UKONode | None = None,
        hit: Hit | None = None,
        room: int | None = None,
        reason: str = "",
    ) -> None:
        """Record that ``uri`` at ``depth`` did not fit (see the class docstring), or was
        left out for ``reason``."""
        from cleveragents_acms.strategies._graph import path_of  # _graph imports this module

        services = assembly.current()
        if services is None or self.budget <= 0 or uri in self._left_out:
            return
        if len(self._left_out) >= LEFT_OUT_PER_STRATEGY:
            return
        path = node.path if node is not None else hit.path if hit is not None else ""
        path = path or path_of(uri)
        if not path:
            return
        self._left_out.add(uri)
        left = self.remaining if room is None else room
        services.leave_out(
            self.strategy,
            DroppedFragment(
                uko_node=uri,
                path=path,
                detail_depth=depth,
                reason=reason
                or f"did not fit {self.strategy}'s share ({left} of {self.budget} tokens left)",
            ),
        )

    def add(
        self,
        fragment: ContextFragment,
        relevance: float,
        metadata: Mapping[str, str] | None = None,
    ) -> ContextFragment | None:
        """Add a ready fragment (with ``relevance`` and extra ``metadata``) if it fits."""
        if fragment.uko_node in self._nodes or fragment.token_count > self.remaining:
            return None
        update: dict[str, Any] = {"relevance_score": clamp(relevance)}
        if metadata:
            merged = {**fragment.metadata, **{k: str(v) for k, v in metadata.items() if v != ""}}
            update["metadata"] = dict(list(merged.items())[:60])
        if fragment.provenance.strategy != self.strategy:
            update["provenance"] = fragment.provenance.model_copy(
                update={"strategy": self.strategy}
            )
        fragment = fragment.model_copy(update=update)
        self.fragments.append(fragment)
        self._nodes.add(fragment.uko_node)
        self.used += fragment.token_count
        return fragment

    def annotate(self, uri: str, metadata: Mapping[str, str]) -> None:
        """Add ``metadata`` to ``uri``'s fragment (a note found after it was added)."""
        self.fragments[:] = [
            f.model_copy(update={"metadata": {**f.metadata, **metadata}})
            if f.uko_node == uri
            else f
            for f in self.fragments
        ]

    def withdraw(self, uri: str) -> None:
        """Take ``uri``'s fragment back out (its text turned out to be in another one)."""
        if uri not in self._nodes:
            return
        self._nodes.discard(uri)
        self.used -= sum(f.token_count for f in self.fragments if f.uko_node == uri)
        self.fragments[:] = [f for f in self.fragments if f.uko_node != uri]


def _fragment_from_hit(hit: Hit, strategy: str) -> ContextFragment | None:
    """A fragment of the text a backend returned with a hit (no node source available)."""
    if not hit.resource_id or not hit.path:
        return None
    content = hit.content
    start = hit.start_line
    end = hit.end_line if hit.end_line and start and hit.end_line >= start else start
    provenance = FragmentProvenance(
        resource_id=hit.resource_id,
        path=hit.path,
        start_line=start,
        end_line=end,
        strategy=strategy,
    )
    metadata = {k: v for k, v in (("uko_type", hit.uko_type), ("name", hit.name)) if v}
    return ContextFragment(
        uko_node=hit.uri,
        content=content,
        detail_depth=DEPTH_SIGNATURES if hit.uko_type else DEPTH_FULL,
        token_count=count_tokens(content),
        provenance=provenance,
        metadata=metadata,
    )


def fill_in_rank_order(
    request: ContextRequest,
    backends: BackendSet,
    budget: int,
    strategy: str,
    ranked: Iterable[Hit],
    *,
    full_hits: int = 3,
) -> list[ContextFragment]:
    """Fragments of ``ranked`` hits, best first, until the budget is spent: the depth the
    request names, else :func:`default_depth` (the first ``full_hits`` callables in full)."""
    filler = BudgetFiller(backends, budget, strategy)
    full_left = full_hits
    for hit in ranked:
        if filler.remaining <= 0:
            break
        depth = requested_depth(request, hit.uko_type)
        if depth is None:
            depth = default_depth(hit.uko_type, best=full_left > 0)
        added = filler.offer(hit.uri, depths_from(depth), hit.score, hit=hit)
        if added is not None and added.detail_depth == DEPTH_FULL:
            full_left -= 1
    return filler.fragments


def default_depth(uko_type: str, *, best: bool) -> int:
    """What a strategy delivers when the request names no depth.

    The best callables in full; other callables as signatures; containers as
    their signatures (members listed with their signatures).
    """
    if is_callable(uko_type):
        return DEPTH_FULL if best else DEPTH_OUTLINE
    return DEPTH_SIGNATURES
