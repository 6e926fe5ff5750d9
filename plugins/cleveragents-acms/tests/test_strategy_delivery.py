"""How arce's delivery spends a small budget: whole functions of the likeliest file first."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from types import SimpleNamespace
from typing import Any

from cleveragents.models.uko import DEPTH_FULL, DEPTH_OUTLINE, DEPTH_SIGNATURES
from cleveragents_acms.strategies._delivery import Delivery, _Unit

BEST = "r/best.py"
OTHER = "r/other.py"


class _Filler:
    """Takes a unit at the first of the offered depths whose size fits (as BudgetFiller)."""

    def __init__(self, budget: int, sizes: Mapping[str, Mapping[int, int]]) -> None:
        self.budget = budget
        self.sizes = sizes
        self.fragments: list[Any] = []

    @property
    def remaining(self) -> int:
        return self.budget - sum(f.token_count for f in self.fragments)

    def __contains__(self, uri: object) -> bool:
        return any(f.uko_node == uri for f in self.fragments)

    def offer(
        self,
        uri: str,
        depths: Sequence[int],
        relevance: float,
        *,
        metadata: Mapping[str, str] | None = None,
        limit: int | None = None,
        node: Any = None,
    ) -> Any:
        room = self.remaining if limit is None else min(self.remaining, limit)
        for depth in depths:
            tokens = self.sizes.get(uri, {}).get(depth)
            if tokens is not None and tokens <= room:
                fragment = SimpleNamespace(uko_node=uri, detail_depth=depth, token_count=tokens)
                self.fragments.append(fragment)
                return fragment
        return None


def _deliver(
    budget: int,
    units: list[_Unit],
    probability: dict[str, float],
    sizes: Mapping[str, Mapping[int, int]],
) -> dict[str, int]:
    delivery = object.__new__(Delivery)
    delivery.budget = budget
    delivery.filler = _Filler(budget, sizes)
    nodes = {u.uri: object() for u in units}
    delivery._take(units, list(probability), probability, nodes)  # type: ignore[arg-type]
    return {f.uko_node: f.detail_depth for f in delivery.filler.fragments}


def _function(file: str, name: str, value: float) -> _Unit:
    return _Unit(f"{file}#{name}", file, value, DEPTH_FULL, "node")


def test_a_runner_up_file_may_not_spend_half_a_small_budget_on_one_function() -> None:
    """What one unit may cost scales with its file's probability."""
    units = [
        _function(BEST, "parse", 1.0),
        _function(OTHER, "convert", 0.9),  # the runner-up's hedge
        _function(BEST, "read", 0.5),
    ]
    sizes = {
        f"{BEST}#parse": {DEPTH_FULL: 1500, DEPTH_OUTLINE: 100},
        f"{OTHER}#convert": {DEPTH_FULL: 1000, DEPTH_OUTLINE: 60, DEPTH_SIGNATURES: 20},
        f"{BEST}#read": {DEPTH_FULL: 1400, DEPTH_OUTLINE: 100},
    }
    delivered = _deliver(4000, units, {BEST: 1.0, OTHER: 0.3}, sizes)
    assert delivered[f"{BEST}#parse"] == DEPTH_FULL
    assert delivered[f"{BEST}#read"] == DEPTH_FULL  # the best file's second function, whole
    assert delivered[f"{OTHER}#convert"] < DEPTH_FULL  # the runner-up: still in sight, cheaply
    # with a budget large enough, the runner-up's function comes whole as well
    delivered = _deliver(16000, units, {BEST: 1.0, OTHER: 0.3}, sizes)
    assert set(delivered.values()) == {DEPTH_FULL}


def test_a_function_too_long_to_fit_whole_gets_only_a_short_outline() -> None:
    units = [
        _function(BEST, "huge", 1.0),
        _function(BEST, "long_outline", 0.9),
        _function(BEST, "next", 0.8),
    ]
    sizes = {
        f"{BEST}#huge": {DEPTH_FULL: 9000, DEPTH_OUTLINE: 80},
        f"{BEST}#long_outline": {DEPTH_FULL: 9000, DEPTH_OUTLINE: 1500},
        f"{BEST}#next": {DEPTH_FULL: 1800, DEPTH_OUTLINE: 100},
    }
    delivered = _deliver(4000, units, {BEST: 1.0}, sizes)
    assert delivered[f"{BEST}#huge"] == DEPTH_OUTLINE  # a short outline is a cheap glimpse
    assert f"{BEST}#long_outline" not in delivered  # a long one would crowd out ...
    assert delivered[f"{BEST}#next"] == DEPTH_FULL  # ... the next function in full
