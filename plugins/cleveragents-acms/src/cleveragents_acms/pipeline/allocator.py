"""Stage 2: the token budget per strategy, proportional to confidence x quality.

Each strategy gets at least ``min-useful-budget`` tokens
(``context.budget.min-useful-budget``) or none: while the smallest share is
below that minimum, the strategy with the lowest weight leaves and its share
is redistributed. When the whole budget is below the minimum, the best
strategy alone gets all of it rather than nobody getting anything.
Rounding is by largest remainder, so allocations are integers, deterministic
and sum to exactly the total.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from cleveragents_acms.pipeline._common import setting
from cleveragents_acms.pipeline.selector import quality_of

if TYPE_CHECKING:
    from cleveragents.models.context import ContextRequest
    from cleveragents.protocols.pipeline import ContextStrategy

__all__ = ["ProportionalBudgetAllocator"]

_STAGE = "budget-allocator"


class ProportionalBudgetAllocator:
    """Splits the budget by confidence x quality_score; too-small shares are excluded."""

    def __init__(self, *, min_useful_budget: int | None = None) -> None:
        self.min_useful_budget = min_useful_budget

    def allocate(
        self,
        candidates: list[tuple[ContextStrategy, float]],
        total_budget: int,
        request: ContextRequest,
    ) -> list[tuple[ContextStrategy, float, int]]:
        total = int(total_budget)
        if total <= 0 or not candidates:
            return []
        minimum = min(int(setting(_STAGE, "min-useful-budget", self.min_useful_budget)), total)
        weights = [max(0.0, float(confidence)) * quality_of(s) for s, confidence in candidates]
        if not any(weights):  # every strategy claims quality 0: fall back to confidence
            weights = [max(0.0, float(confidence)) for _, confidence in candidates]
        active = [i for i, weight in enumerate(weights) if weight > 0]
        shares: dict[int, float] = {}
        while active:
            weight_sum = sum(weights[i] for i in active)
            shares = {i: total * weights[i] / weight_sum for i in active}
            # the lowest weight leaves first; among equals, the later candidate
            weakest = min(active, key=lambda i: (weights[i], -i))
            if shares[weakest] >= minimum:
                break
            active.remove(weakest)
        if not active:
            return []
        tokens = _largest_remainder(shares, total)
        return [(candidates[i][0], candidates[i][1], tokens[i]) for i in sorted(active)]


def _largest_remainder(shares: dict[int, float], total: int) -> dict[int, int]:
    """Integer shares summing to ``total``: floors, then one more for the largest remainders."""
    tokens = {i: int(share) for i, share in shares.items()}
    left = total - sum(tokens.values())
    while left < 0:  # float error pushed a floor over its share
        largest = max(tokens, key=lambda i: (tokens[i], -i))
        tokens[largest] -= 1
        left += 1
    by_remainder = sorted(shares, key=lambda i: (-(shares[i] - tokens[i]), i))
    for i in by_remainder[: max(0, left)]:
        tokens[i] += 1
    return tokens
