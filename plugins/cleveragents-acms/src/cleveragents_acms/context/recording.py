"""A pipeline that remembers what each stage did, for ``context inspect`` and ``simulate``.

:class:`RecordingPipeline` is the ordinary :class:`ContextAssemblyPipeline`
with every stage timed and its outcome kept: which component ran, whether it
failed and was replaced by the built-in default, which strategies were
selected with what confidence, what each was allotted and how many fragments
each returned. A new instance serves one assembly.
"""

from __future__ import annotations

import time
from collections import Counter
from typing import Any

from cleveragents import assembly
from cleveragents.models.context import AssembledContext, ContextFragment
from cleveragents_acms.context.history import StageRecord, StrategyRecord
from cleveragents_acms.pipeline.assembly import ContextAssemblyPipeline
from cleveragents_acms.pipeline.config import SLOT_FIELDS
from cleveragents_acms.pipeline.selector import SELECTION_MEMO

__all__ = ["RecordingPipeline"]


def _name(strategy: object) -> str:
    return str(getattr(strategy, "name", "") or type(strategy).__name__)


class RecordingPipeline(ContextAssemblyPipeline):
    """Times each stage and keeps the orchestration results of phase 1."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.stage_ms: dict[str, float] = {}
        #: slot -> why its component was replaced (when loading it, or while it ran)
        self.stage_problems: dict[str, str] = dict(self.config.problems)
        self.selected: list[tuple[str, float]] = []
        #: strategy -> why the selector left it out (standing by, declined, a backend missing)
        self.not_selected: dict[str, str] = {}
        self.allocated: dict[str, int] = {}
        self.returned: Counter[str] = Counter()
        self.refilled: dict[str, int] = {}
        self._refilling = False

    def _run(self, slot: str, method: str, check: Any, *args: Any, fix: Any = None) -> Any:
        services = assembly.current()
        before = len(services.notes) if services is not None else 0
        started = time.perf_counter()
        try:
            result = super()._run(slot, method, check, *args, fix=fix)
        finally:  # a refill runs some stages twice: their times add up
            elapsed = (time.perf_counter() - started) * 1000
            self.stage_ms[slot] = round(self.stage_ms.get(slot, 0.0) + elapsed, 2)
        if services is not None:
            replaced = [
                n
                for n in services.notes[before:]
                if n.startswith(f"{slot} ") and "used the built-in" in n
            ]
            if replaced:
                self.stage_problems[slot] = replaced[0]
        if slot == "strategy-selector":
            self.selected = [(_name(s), float(c)) for s, c in result]
            event = services.memo.get(SELECTION_MEMO) if services is not None else None
            self.not_selected = dict(getattr(event, "excluded", None) or {})
        elif slot == "budget-allocator":
            self.allocated = {_name(s): int(t) for s, _, t in result}
        elif slot == "strategy-executor":
            returned = Counter(
                f.provenance.strategy or "?" for f in result if isinstance(f, ContextFragment)
            )
            if not self._refilling:
                self.returned = returned
            elif returned:  # the leading strategy again, with the unused tokens added
                for strategy, _, tokens in args[0]:
                    name = _name(strategy)
                    self.refilled[name] = int(tokens) - self.allocated.get(name, 0)
                for name, count in returned.items():  # its new fragments replace its first
                    self.returned[name] = count
        return result

    def _refill(self, *args: Any) -> Any:
        self._refilling = True
        try:
            return super()._refill(*args)
        finally:
            self._refilling = False

    def stage_records(self) -> list[StageRecord]:
        records = []
        for slot in SLOT_FIELDS:
            component = self.config.component(slot)
            scope, chosen_by = self.config.sources.get(slot, ("built-in", "?"))
            problem = self.stage_problems.get(slot)
            records.append(
                StageRecord(
                    slot=slot,
                    component=type(component).__name__,
                    chosen_by=chosen_by,
                    scope=scope,
                    ms=self.stage_ms.get(slot, 0.0),
                    replaced=problem is not None,
                    problem=problem,
                )
            )
        return records

    def strategy_records(self, context: AssembledContext) -> list[StrategyRecord]:
        delivered = Counter(f.provenance.strategy or "?" for f in context.fragments)
        return [
            StrategyRecord(
                name=name,
                confidence=round(confidence, 4),
                tokens=self.allocated.get(name, 0),
                fragments=self.returned.get(name, 0),
                delivered=delivered.get(name, 0),
                refilled=self.refilled.get(name, 0),
            )
            for name, confidence in self.selected
        ]
