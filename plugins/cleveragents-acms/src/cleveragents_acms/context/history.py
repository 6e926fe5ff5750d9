"""The record of every assembly: what ``context inspect`` shows and ``query_history`` searches.

An :class:`AssemblyReport` says how one context came to be: the request, the
budget and where it came from, each of the ten stages (component, the scope
that chose it, time, whether it was replaced after failing), what each
strategy was allotted and returned, the notes, the delivered fragments
(without content) and what was dropped or downgraded. :class:`HistoryStore`
keeps the last :data:`KEEP_PER_PROJECT` reports of each project in the
``context_assemblies`` table.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import delete, insert, or_, select

from cleveragents.models.ids import new_ulid
from cleveragents_acms.context.tables import context_assemblies, ensure_tables

__all__ = ["KEEP_PER_PROJECT", "AssemblyReport", "HistoryStore", "StageRecord", "StrategyRecord"]

KEEP_PER_PROJECT = 200
_A = context_assemblies.c


@dataclass
class StageRecord:
    """One of the ten stages in one assembly."""

    slot: str
    component: str
    chosen_by: str
    scope: str
    ms: float = 0.0
    replaced: bool = False
    problem: str | None = None


@dataclass
class StrategyRecord:
    """One strategy in one assembly: confidence, tokens allotted, fragments returned."""

    name: str
    confidence: float
    tokens: int = 0
    fragments: int = 0
    delivered: int = 0
    #: tokens it was given on top of ``tokens``: what the others left unused (the refill)
    refilled: int = 0


@dataclass
class AssemblyReport:
    """Everything about one assembly except the fragments' text."""

    project: str
    query: str | None
    request: dict[str, Any]
    budget: dict[str, Any]
    model: str | None
    tokenizer: str
    phase: str
    assembly_id: str = field(default_factory=new_ulid)
    created_at: str = field(default_factory=lambda: datetime.now(UTC).isoformat())
    stages: list[StageRecord] = field(default_factory=list)
    strategies: list[StrategyRecord] = field(default_factory=list)
    #: strategy -> why the selector left it out
    not_selected: dict[str, str] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    fragments: list[dict[str, Any]] = field(default_factory=list)
    dropped: list[dict[str, Any]] = field(default_factory=list)
    totals: dict[str, Any] = field(default_factory=dict)
    scope: dict[str, Any] = field(default_factory=dict)
    ms: float = 0.0
    dry_run: bool = False
    cached: bool = False

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> AssemblyReport:
        values = dict(data)
        values["stages"] = [StageRecord(**s) for s in values.get("stages", [])]
        values["strategies"] = [StrategyRecord(**s) for s in values.get("strategies", [])]
        known = set(cls.__dataclass_fields__)
        return cls(**{k: v for k, v in values.items() if k in known})


class HistoryStore:
    """Assembly reports by project, newest first."""

    def __init__(self, database: Any) -> None:
        self.database = database
        ensure_tables(database)

    def record(self, report: AssemblyReport) -> None:
        totals = report.totals
        with self.database.engine.begin() as conn:
            conn.execute(
                insert(context_assemblies).values(
                    assembly_id=report.assembly_id,
                    project_name=report.project,
                    created_at=report.created_at,
                    query=report.query,
                    phase=report.phase,
                    model=report.model,
                    budget=int(report.budget.get("budget", 0)),
                    total_tokens=int(totals.get("tokens", 0)),
                    fragment_count=len(report.fragments),
                    dropped_count=len(report.dropped),
                    strategies=",".join(s.name for s in report.strategies),
                    context_hash=str(totals.get("context_hash", "")),
                    report=json.dumps(report.to_dict(), default=str),
                )
            )
            stale = [
                row[0]
                for row in conn.execute(
                    select(_A.assembly_id)
                    .where(_A.project_name == report.project)
                    .order_by(_A.created_at.desc(), _A.assembly_id.desc())
                    .offset(KEEP_PER_PROJECT)
                )
            ]
            if stale:
                conn.execute(delete(context_assemblies).where(_A.assembly_id.in_(stale)))

    def last(self, project: str | None = None) -> AssemblyReport | None:
        found = self.search(project, limit=1)
        return found[0] if found else None

    def get(self, assembly_id: str) -> AssemblyReport | None:
        with self.database.engine.connect() as conn:
            raw = conn.execute(select(_A.report).where(_A.assembly_id == assembly_id)).scalar()
        return AssemblyReport.from_dict(json.loads(raw)) if raw else None

    def search(
        self, project: str | None = None, *, text: str | None = None, limit: int = 20
    ) -> list[AssemblyReport]:
        """Newest first; ``text`` matches the query, a delivered path or a node (any case)."""
        query = select(_A.report).order_by(_A.created_at.desc(), _A.assembly_id.desc())
        if project is not None:
            query = query.where(_A.project_name == project)
        if text:
            like = f"%{text.lower()}%"
            query = query.where(or_(_A.query.ilike(like), _A.report.ilike(like)))
        query = query.limit(max(1, int(limit)))
        with self.database.engine.connect() as conn:
            return [AssemblyReport.from_dict(json.loads(row[0])) for row in conn.execute(query)]
