"""The ten Context Assembly Pipeline stages and the ContextStrategy contract (spec 000).

Phase 1 orchestrates strategies, phase 2 fuses their fragments, phase 3
finalises the context. Each stage is replaceable: a plugin registers an object
satisfying one of these Protocols through the matching ``register_*`` hook.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Protocol, runtime_checkable

if TYPE_CHECKING:
    from cleveragents.models.context import (
        AssembledContext,
        ContextFragment,
        ContextRequest,
        ScoredFragment,
        StrategyCapabilities,
    )
    from cleveragents.protocols.backends import BackendSet
    from cleveragents.protocols.uko import DetailLevelMapRegistry

    PlanContext = object

__all__ = [
    "BudgetAllocatorProtocol",
    "BudgetPackerProtocol",
    "ContextStrategy",
    "DetailDepthResolverProtocol",
    "FragmentDeduplicatorProtocol",
    "FragmentOrdererProtocol",
    "FragmentScorerProtocol",
    "PreambleGeneratorProtocol",
    "SkeletonCompressorProtocol",
    "StrategyExecutorProtocol",
    "StrategySelectorProtocol",
]


@runtime_checkable
class ContextStrategy(Protocol):
    """A retrieval strategy: turns a ContextRequest into candidate fragments."""

    name: str
    capabilities: StrategyCapabilities

    def can_handle(self, request: ContextRequest, backends: BackendSet) -> float:
        """Confidence 0.0-1.0 that this strategy helps; 0.0 excludes it."""
        ...

    def assemble(
        self,
        request: ContextRequest,
        backends: BackendSet,
        budget: int,
        plan_context: PlanContext,
    ) -> list[ContextFragment]:
        """Fragments for ``request`` whose token counts sum to at most ``budget``."""
        ...


# -- Phase 1: strategy orchestration ------------------------------------------


@runtime_checkable
class StrategySelectorProtocol(Protocol):
    """Decides which strategies to invoke and with what confidence."""

    def select(
        self,
        strategies: Sequence[ContextStrategy],
        request: ContextRequest,
        backends: BackendSet,
    ) -> list[tuple[ContextStrategy, float]]:
        """(strategy, confidence) pairs sorted by priority; 0.0 is excluded."""
        ...


@runtime_checkable
class BudgetAllocatorProtocol(Protocol):
    """Distributes the token budget across the selected strategies."""

    def allocate(
        self,
        candidates: list[tuple[ContextStrategy, float]],
        total_budget: int,
        request: ContextRequest,
    ) -> list[tuple[ContextStrategy, float, int]]:
        """(strategy, confidence, tokens) triples; tokens sum to <= total_budget."""
        ...


@runtime_checkable
class StrategyExecutorProtocol(Protocol):
    """Runs strategies: parallelism, timeouts, circuit breaking, error recovery."""

    def execute(
        self,
        allocations: list[tuple[ContextStrategy, float, int]],
        request: ContextRequest,
        backends: BackendSet,
        plan_context: PlanContext,
    ) -> list[ContextFragment]:
        """All fragments of all strategies; a failing strategy is logged and skipped."""
        ...


# -- Phase 2: fragment fusion ---------------------------------------------------


@runtime_checkable
class FragmentDeduplicatorProtocol(Protocol):
    """Removes duplicates; of duplicates the highest relevance_score is kept."""

    def deduplicate(self, fragments: list[ContextFragment]) -> list[ContextFragment]: ...


@runtime_checkable
class DetailDepthResolverProtocol(Protocol):
    """Resolves one UKO node appearing at several depths."""

    def resolve(self, fragments: list[ContextFragment], budget: int) -> list[ContextFragment]: ...


@runtime_checkable
class FragmentScorerProtocol(Protocol):
    """Composite relevance for ranking during packing."""

    def score(
        self, fragments: list[ContextFragment], plan_context: PlanContext
    ) -> list[ScoredFragment]: ...


@runtime_checkable
class BudgetPackerProtocol(Protocol):
    """Fits scored fragments into the budget, re-rendering at lower depths if needed."""

    def pack(
        self,
        scored_fragments: list[ScoredFragment],
        budget: int,
        detail_level_maps: DetailLevelMapRegistry,
    ) -> list[ContextFragment]: ...


@runtime_checkable
class FragmentOrdererProtocol(Protocol):
    """Orders packed fragments for coherence in the prompt."""

    def order(self, fragments: list[ContextFragment]) -> list[ContextFragment]: ...


# -- Phase 3: context finalisation ----------------------------------------------


@runtime_checkable
class PreambleGeneratorProtocol(Protocol):
    """Writes the summary prepended to the context: what, why, from where."""

    def generate(
        self,
        fragments: list[ContextFragment],
        strategies_used: list[str],
        budget_used: float,
        max_tokens: int,
    ) -> str | None: ...


@runtime_checkable
class SkeletonCompressorProtocol(Protocol):
    """Compresses a parent plan's context into a skeleton for a child plan."""

    def compress(
        self,
        parent_context: AssembledContext,
        child_focus: list[str],
        skeleton_budget: int,
    ) -> AssembledContext: ...
