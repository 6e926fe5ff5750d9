"""Stage 5: one rendering per UKO node when strategies found it at several depths.

Nodes are visited most relevant first against the remaining budget (the
spec's Specification pattern: "fits what is left"); each gets its deepest
rendering that fits, or its smallest one when none does (the packer then
decides whether it stays). The kept rendering carries the best relevance any
rendering of its node had: finding a node at a shallow depth with confidence
is evidence for the node, not for that depth.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from cleveragents.models.context import ContextFragment

__all__ = ["FitsRemainingBudget", "MaxDepthResolver"]


@dataclass(frozen=True)
class FitsRemainingBudget:
    """Specification: a rendering fits when its tokens do not exceed what is left."""

    remaining: int

    def is_satisfied_by(self, fragment: ContextFragment) -> bool:
        return fragment.token_count <= self.remaining


class MaxDepthResolver:
    """Keeps the highest-depth rendering of each node that fits the remaining budget."""

    def __init__(
        self, specification: Callable[[int], FitsRemainingBudget] = FitsRemainingBudget
    ) -> None:
        self.specification = specification

    def resolve(self, fragments: list[ContextFragment], budget: int) -> list[ContextFragment]:
        if not fragments:
            return []
        groups: dict[str, list[tuple[int, ContextFragment]]] = {}
        for index, fragment in enumerate(fragments):
            groups.setdefault(fragment.uko_node, []).append((index, fragment))
        if all(len(group) == 1 for group in groups.values()):
            return list(fragments)  # nothing to resolve

        def best_first(group: list[tuple[int, ContextFragment]]) -> tuple[float, int]:
            return (-max(f.relevance_score for _, f in group), group[0][0])

        remaining = max(0, int(budget))
        chosen: list[tuple[int, ContextFragment]] = []
        for group in sorted(groups.values(), key=best_first):
            if len(group) == 1:
                index, pick = group[0]
            else:
                index, pick = self._pick(group, self.specification(remaining))
                best = max(f.relevance_score for _, f in group)
                if pick.relevance_score < best:
                    pick = pick.model_copy(update={"relevance_score": best})
            chosen.append((index, pick))
            remaining = max(0, remaining - pick.token_count)
        return [fragment for _, fragment in sorted(chosen, key=lambda item: item[0])]

    @staticmethod
    def _pick(
        group: list[tuple[int, ContextFragment]], spec: FitsRemainingBudget
    ) -> tuple[int, ContextFragment]:
        deepest_first = sorted(
            group, key=lambda item: (-item[1].detail_depth, -item[1].relevance_score, item[0])
        )
        for item in deepest_first:
            if spec.is_satisfied_by(item[1]):
                return item
        return min(group, key=lambda item: (item[1].token_count, item[0]))
