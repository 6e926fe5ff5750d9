"""Builders for the domain values tests need: fragments, requests, stub strategies.

Every argument has a sensible default, so a test names only what it is about::

    fragment = make_fragment("uko://r/app.py#main", token_count=40, relevance=0.9)
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from cleveragents.models.context import (
    AssembledContext,
    ContextBudget,
    ContextFragment,
    ContextRequest,
    FragmentProvenance,
    ScoredFragment,
    StrategyCapabilities,
)
from cleveragents.models.ids import new_ulid
from cleveragents.protocols.backends import BackendSet

__all__ = [
    "RESOURCE_A",
    "RESOURCE_B",
    "StubStrategy",
    "make_assembled_context",
    "make_fragment",
    "make_request",
    "make_scored",
]

#: Two fixed resource ULIDs, for tests about scope.
RESOURCE_A = "01J0000000000000000000000A"
RESOURCE_B = "01J0000000000000000000000B"


def make_fragment(
    uko_node: str = "uko://conformance/module.py#f",
    content: str | None = None,
    *,
    token_count: int | None = None,
    relevance: float = 0.5,
    depth: int = 9,
    resource_id: str = RESOURCE_A,
    path: str = "module.py",
    strategy: str = "conformance",
    fragment_id: str | None = None,
    start_line: int | None = 1,
    **fields: Any,
) -> ContextFragment:
    """A valid fragment; ``token_count`` defaults to the number of words of ``content``."""
    if content is None:
        content = f"def {uko_node.rsplit('#', 1)[-1] or 'f'}(): return {depth}"
    if token_count is None:
        token_count = len(content.split())
    provenance = FragmentProvenance(
        resource_id=resource_id,
        path=path,
        start_line=start_line,
        end_line=start_line,
        strategy=strategy,
    )
    return ContextFragment(
        fragment_id=fragment_id or new_ulid(),
        uko_node=uko_node,
        content=content,
        detail_depth=depth,
        token_count=token_count,
        relevance_score=relevance,
        provenance=provenance,
        **fields,
    )


def make_scored(
    fragment: ContextFragment, score: float | None = None, **components: float
) -> ScoredFragment:
    """Wrap ``fragment`` with a composite score (its relevance by default)."""
    value = fragment.relevance_score if score is None else score
    return ScoredFragment(fragment, value, dict(components) or {"relevance": value})


def make_request(
    query: str | None = "parse the configuration file", **fields: Any
) -> ContextRequest:
    """A ContextRequest with a query; pass any other CRP field by name."""
    return ContextRequest(query=query, **fields)


def make_assembled_context(
    fragments: Sequence[ContextFragment], *, max_tokens: int = 100_000, **fields: Any
) -> AssembledContext:
    """An AssembledContext over ``fragments`` with consistent totals and hash."""
    total = sum(f.token_count for f in fragments)
    budget = ContextBudget(max_tokens=max_tokens, reserved_tokens=0)
    return AssembledContext(
        fragments=tuple(fragments),
        total_tokens=total,
        budget=budget,
        budget_used=total / budget.available_tokens,
        strategies_used=tuple(sorted({f.provenance.strategy for f in fragments})),
        context_hash=AssembledContext.hash_fragments(list(fragments)),
        provenance_map={f.uko_node: f.provenance.model_dump() for f in fragments},
        **fields,
    )


class StubStrategy:
    """A ContextStrategy whose confidence and output are fixed by the test.

    It records every call to ``assemble`` in :attr:`calls` as ``(request, budget)``.
    With ``error`` set, ``assemble`` raises it (to test executors' isolation).
    """

    def __init__(
        self,
        name: str,
        confidence: float = 0.5,
        *,
        quality: float = 0.5,
        fragments: Sequence[ContextFragment] | Callable[[int], list[ContextFragment]] = (),
        error: BaseException | None = None,
        uses_text: bool = False,
    ) -> None:
        self.name = name
        self.confidence = confidence
        self.capabilities = StrategyCapabilities(quality_score=quality, uses_text=uses_text)
        self._fragments = fragments
        self.error = error
        self.calls: list[tuple[ContextRequest, int]] = []

    def can_handle(self, request: ContextRequest, backends: BackendSet) -> float:
        return self.confidence

    def assemble(
        self, request: ContextRequest, backends: BackendSet, budget: int, plan_context: object
    ) -> list[ContextFragment]:
        self.calls.append((request, budget))
        if self.error is not None:
            raise self.error
        if callable(self._fragments):
            return self._fragments(budget)
        return list(self._fragments)

    def __repr__(self) -> str:
        return f"StubStrategy({self.name!r}, {self.confidence})"
