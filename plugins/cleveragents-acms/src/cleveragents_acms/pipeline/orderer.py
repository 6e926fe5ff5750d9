"""Stage 8: the order fragments are presented in.

The packer hands fragments over best score first, so a fragment's position
in the input is its score rank. ``context.fusion.ordering`` chooses:

``relevance``
    strict score order (the input order).
``topological``
    dependencies first: a node that another depends on (``depends_on``
    metadata, space-separated URIs) or contains (its parent by qualified
    name, or its ``parent`` metadata) comes before it; among the nodes that
    are free to come next, the best-scored goes first; cycles are broken by
    score.
``relevance-coherence`` (default)
    fragments grouped by resource and file, each group in source order
    (parents before children at the same line), groups ordered by their best
    fragment's score.

Subclasses change the grouping through the Template Method hooks
:meth:`RelevanceCoherenceOrderer._group_key` and
:meth:`RelevanceCoherenceOrderer._intra_group_sort`.
"""

from __future__ import annotations

import heapq
from collections.abc import Hashable

from cleveragents.models.context import ContextFragment
from cleveragents_acms.pipeline._common import containment_depth, note, parent_of, setting

__all__ = ["ORDERINGS", "RelevanceCoherenceOrderer"]

ORDERINGS = ("relevance", "topological", "relevance-coherence")
_STAGE = "fragment-orderer"

Ranked = tuple[int, ContextFragment]


class RelevanceCoherenceOrderer:
    """Orders by relevance, by dependencies, or by coherent file groups (the default)."""

    def __init__(self, *, mode: str | None = None) -> None:
        self.mode = mode

    def order(self, fragments: list[ContextFragment]) -> list[ContextFragment]:
        if not fragments:
            return []
        mode = str(setting(_STAGE, "ordering", self.mode))
        ranked = list(enumerate(fragments))
        if mode == "relevance":
            return list(fragments)
        if mode == "topological":
            return [f for _, f in self._topological(ranked)]
        if mode != "relevance-coherence":
            note(f"unknown ordering {mode!r}; using relevance-coherence")
        return [f for _, f in self._coherent(ranked)]

    # -- relevance-coherence ---------------------------------------------------------------

    def _coherent(self, ranked: list[Ranked]) -> list[Ranked]:
        groups: dict[Hashable, list[Ranked]] = {}
        for item in ranked:
            groups.setdefault(self._group_key(item[1]), []).append(item)
        # a group ranks by its best member: the smallest input position
        ordered_groups = sorted(groups.values(), key=lambda group: min(r for r, _ in group))
        return [item for group in ordered_groups for item in self._intra_group_sort(group)]

    def _group_key(self, fragment: ContextFragment) -> Hashable:
        """Fragments with equal keys are shown together: by resource and file."""
        return fragment.provenance.resource_id, fragment.provenance.path

    def _intra_group_sort(self, group: list[Ranked]) -> list[Ranked]:
        """Source order within a group; a container before what it contains at the same line."""
        return sorted(
            group,
            key=lambda item: (
                item[1].provenance.start_line or 0,
                containment_depth(item[1].uko_node),
                item[1].uko_node,
                item[0],
            ),
        )

    # -- topological -------------------------------------------------------------------------

    def _topological(self, ranked: list[Ranked]) -> list[Ranked]:
        """Kahn's algorithm over the dependencies among these fragments, best score first."""
        position_of: dict[str, int] = {}
        for rank, fragment in ranked:
            position_of.setdefault(fragment.uko_node, rank)
        prerequisites: dict[int, set[int]] = {rank: set() for rank, _ in ranked}
        for rank, fragment in ranked:
            for node in _prerequisite_nodes(fragment, position_of):
                earlier = position_of.get(node)
                if earlier is not None and earlier != rank:
                    prerequisites[rank].add(earlier)
        dependants: dict[int, set[int]] = {rank: set() for rank, _ in ranked}
        for rank, required in prerequisites.items():
            for earlier_rank in required:
                dependants[earlier_rank].add(rank)
        waiting = {rank: len(required) for rank, required in prerequisites.items()}
        by_rank = dict(ranked)
        ready = [rank for rank, count in waiting.items() if count == 0]
        heapq.heapify(ready)
        result: list[Ranked] = []
        placed: set[int] = set()
        while len(result) < len(ranked):
            if not ready:  # a cycle: release the best-scored fragment still waiting
                heapq.heappush(ready, min(rank for rank in waiting if rank not in placed))
            rank = heapq.heappop(ready)
            if rank in placed:
                continue
            placed.add(rank)
            result.append((rank, by_rank[rank]))
            for after in dependants[rank]:
                waiting[after] -= 1
                if waiting[after] == 0 and after not in placed:
                    heapq.heappush(ready, after)
        return result


def _prerequisite_nodes(fragment: ContextFragment, present: dict[str, int]) -> list[str]:
    """Nodes that come before ``fragment``: what it depends on and its nearest present container."""
    nodes = fragment.metadata.get("depends_on", "").split()
    ancestor = fragment.metadata.get("parent") or parent_of(fragment.uko_node)
    while ancestor and ancestor not in present:
        ancestor = parent_of(ancestor)
    if ancestor:
        nodes.append(ancestor)
    return nodes
