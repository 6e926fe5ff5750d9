"""Plans, decisions and domain events: the records the plan lifecycle produces."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from cleveragents.models.ids import new_ulid, utcnow

__all__ = ["Decision", "DomainEvent", "Plan", "PlanPhase"]

#: Lifecycle phases in order; context views follow the same chain.
PlanPhase = str
PHASES: tuple[str, ...] = ("strategize", "execute", "apply")


class Plan(BaseModel):
    """A unit of agent work on one or more projects, possibly a child of another plan."""

    model_config = ConfigDict(frozen=True)

    plan_id: str = Field(default_factory=new_ulid)
    title: str = Field(min_length=1)
    project_names: tuple[str, ...] = ()
    parent_plan_id: str | None = None
    phase: PlanPhase = "strategize"
    pipeline_overrides: dict[str, str] = Field(default_factory=dict)
    created_at: datetime = Field(default_factory=utcnow)


class Decision(BaseModel):
    """A choice an actor made during a plan, with the context it was made in."""

    model_config = ConfigDict(frozen=True)

    decision_id: str = Field(default_factory=new_ulid)
    plan_id: str
    decision_type: str
    summary: str
    rationale: str = ""
    superseded_by: str | None = None
    context_snapshot: dict[str, Any] = Field(default_factory=dict)
    created_at: datetime = Field(default_factory=utcnow)


class DomainEvent(BaseModel):
    """Something that happened (``resource.indexed``, ``plan.phase_changed`` …)."""

    model_config = ConfigDict(frozen=True)

    event_id: str = Field(default_factory=new_ulid)
    event_type: str = Field(min_length=1)
    payload: dict[str, Any] = Field(default_factory=dict)
    occurred_at: datetime = Field(default_factory=utcnow)
