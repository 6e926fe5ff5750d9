"""Ranking primitives: personalised PageRank on a local subgraph, reciprocal-rank fusion.

Both are small and dependency-free on purpose: the graphs they see are the
few hundred to few thousand nodes around a question, not the whole index.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

__all__ = ["normalise", "personalized_pagerank", "reciprocal_rank_fusion"]


def personalized_pagerank(
    edges: Mapping[str, Mapping[str, float]],
    personalization: Mapping[str, float],
    *,
    damping: float = 0.85,
    iterations: int = 40,
    tolerance: float = 1e-7,
) -> dict[str, float]:
    """PageRank whose random jumps land on ``personalization`` (weights, need not sum to 1).

    ``edges[a][b] = w`` is a link from ``a`` to ``b`` of weight ``w``. Rank of
    nodes without outgoing links (dangling) flows back to the personalisation,
    as in aider's repository map, so the walk never leaves the neighbourhood of
    what the question is about. Power iteration until the L1 change is below
    ``tolerance``; the result sums to 1.
    """
    jump = {node: max(0.0, float(w)) for node, w in personalization.items() if w and w > 0}
    total = sum(jump.values())
    if total <= 0:
        return {}
    jump = {node: w / total for node, w in jump.items()}
    # an ordered set: the sums below then add up in the same order in every process
    nodes: dict[str, None] = dict.fromkeys([*jump, *edges])
    for targets in edges.values():
        nodes.update(dict.fromkeys(targets))
    out_weight = {
        node: sum(w for w in targets.values() if w > 0) for node, targets in edges.items()
    }
    links = [
        (node, [(t, w / out_weight[node]) for t, w in targets.items() if w > 0])
        for node, targets in edges.items()
        if out_weight.get(node, 0.0) > 0
    ]
    linked = {node for node, _ in links}
    rank = dict.fromkeys(nodes, 0.0)
    rank.update(jump)
    for _ in range(iterations):
        dangling = sum(r for node, r in rank.items() if node not in linked)
        nxt = dict.fromkeys(nodes, 0.0)
        for node, weight in jump.items():
            nxt[node] = (1.0 - damping + damping * dangling) * weight
        for node, outgoing in links:
            share = damping * rank[node]
            if share:
                for target, w in outgoing:
                    nxt[target] += share * w
        change = sum(abs(nxt[n] - rank[n]) for n in nodes)
        rank = nxt
        if change < tolerance:
            break
    return rank


def reciprocal_rank_fusion(
    rankings: Iterable[tuple[Sequence[str], float]], *, k: float = 60.0
) -> dict[str, float]:
    """Weighted RRF: ``sum(weight / (k + rank))`` over the rankings each item appears in."""
    fused: dict[str, float] = {}
    for ranking, weight in rankings:
        if weight <= 0:
            continue
        seen: set[str] = set()
        for position, item in enumerate(ranking, start=1):
            if item in seen:
                continue
            seen.add(item)
            fused[item] = fused.get(item, 0.0) + weight / (k + position)
    return fused


def normalise(scores: Mapping[str, float]) -> dict[str, float]:
    """Scores divided by the best one (all in [0, 1]); empty stays empty."""
    if not scores:
        return {}
    best = max(scores.values())
    if best <= 0:
        return dict.fromkeys(scores, 0.0)
    return {key: max(0.0, value) / best for key, value in scores.items()}
