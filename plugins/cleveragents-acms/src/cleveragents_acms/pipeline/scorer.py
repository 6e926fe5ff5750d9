"""Stage 6: one composite score per fragment, from four weighted dimensions.

``composite = (wr*relevance + wh*hierarchy + wq*quality + wt*recency) / (wr+wh+wq+wt)``
with the weights of ``context.pipeline.fragment-scorer`` (0.4 / 0.3 / 0.2 / 0.1),
so the composite stays in [0, 1] whatever the weights are. A weighted sum
rather than the spec table's product: with a product, one weak dimension
(an old revision) would zero out a highly relevant fragment.

* relevance: the strategy's ``relevance_score``;
* hierarchy: ``1 / (1 + distance)`` to the nearest focus node, the distance
  from the fragment's ``focus_distance`` metadata or computed from the focus
  of the plan context (``plan_context.focus``); 0.5 when there is no focus;
* quality: the producing strategy's ``quality_score``, from the mapping given
  to the scorer (strategy name -> quality or strategy) or the fragment's
  ``strategy_quality`` metadata (set by the executor); 0.5 when unknown;
* recency: 1.0 for current nodes (``is_current`` not ``false``); a retired
  revision decays with a 30-day half-life from its ``valid_until`` (else
  ``valid_from``) timestamp, never below 0.1, and is 0.5 without one.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from typing import Any

from cleveragents.models.context import ContextFragment, ScoredFragment
from cleveragents.models.ids import parse_instant
from cleveragents_acms.pipeline._common import focus_distance, plan_attr, setting
from cleveragents_acms.pipeline.selector import quality_of

__all__ = ["DIMENSIONS", "WeightedCompositeScorer"]

DIMENSIONS = ("relevance", "hierarchy", "quality", "recency")
_STAGE = "fragment-scorer"
_HALF_LIFE_DAYS = 30.0
_RECENCY_FLOOR = 0.1


class WeightedCompositeScorer:
    """Composes four scoring dimensions (the spec's Decorator) into one weighted score."""

    def __init__(
        self,
        strategies: Mapping[str, Any] | None = None,
        *,
        weights: Mapping[str, float] | None = None,
        now: Callable[[], datetime] = lambda: datetime.now(UTC),
    ) -> None:
        self.strategy_quality = {
            name: value if isinstance(value, (int, float)) else quality_of(value)
            for name, value in (strategies or {}).items()
        }
        self.weights = dict(weights) if weights else None
        self._now = now

    def _weights(self) -> dict[str, float]:
        weights = {
            name: float(setting(_STAGE, f"{name}-weight", (self.weights or {}).get(name)))
            for name in DIMENSIONS
        }
        return weights if sum(weights.values()) > 0 else dict.fromkeys(DIMENSIONS, 1.0)

    def score(self, fragments: list[ContextFragment], plan_context: object) -> list[ScoredFragment]:
        if not fragments:
            return []
        weights = self._weights()
        total = sum(weights.values())
        focus = tuple(plan_attr(plan_context, "focus") or ())
        now = self._now()
        scored = []
        for fragment in fragments:
            components = {
                "relevance": fragment.relevance_score,
                "hierarchy": self.hierarchy(fragment, focus),
                "quality": self.quality(fragment),
                "recency": self.recency(fragment, now),
            }
            composite = sum(weights[k] * components[k] for k in DIMENSIONS) / total
            scored.append(ScoredFragment(fragment, min(1.0, max(0.0, composite)), components))
        return scored

    # -- the dimensions (override to change one) -------------------------------------

    def hierarchy(self, fragment: ContextFragment, focus: tuple[str, ...]) -> float:
        distance: float | None = _number(fragment.metadata.get("focus_distance"))
        if distance is None:
            hops = focus_distance(fragment.uko_node, fragment.provenance.resource_id, focus)
            distance = None if hops is None else float(hops)
        if distance is None:
            return 0.5
        return 1.0 / (1.0 + max(0.0, distance))

    def quality(self, fragment: ContextFragment) -> float:
        by_name = self.strategy_quality.get(fragment.provenance.strategy)
        if by_name is not None:
            return min(1.0, max(0.0, float(by_name)))
        declared = _number(fragment.metadata.get("strategy_quality"))
        return 0.5 if declared is None else min(1.0, max(0.0, declared))

    def recency(self, fragment: ContextFragment, now: datetime) -> float:
        if fragment.metadata.get("is_current", "true").strip().lower() not in ("false", "0", "no"):
            return 1.0
        stamp = parse_instant(
            fragment.metadata.get("valid_until") or fragment.metadata.get("valid_from")
        )
        if stamp is None:
            return 0.5
        age_days = max(0.0, (now - stamp).total_seconds() / 86400)
        return max(_RECENCY_FLOOR, 0.5 ** (age_days / _HALF_LIFE_DAYS))


def _number(value: str | None) -> float | None:
    if value is None:
        return None
    try:
        return float(value)
    except ValueError:
        return None
