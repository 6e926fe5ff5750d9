"""Strategy ``plan-decision-context``: what this plan and its ancestors decided, and why.

A child plan must remember its parents' decisions ("use async patterns for
all auth operations"). The plan context handed to an assembly is duck-typed,
as the spec's ``PlanContext`` is an open record; this strategy reads, at each
level of the hierarchy:

* ``decisions`` (or ``inherited_decisions``): Decision models, or mappings
  with the same fields (``decision_id``, ``plan_id``, ``decision_type``,
  ``summary``, ``rationale``, ``superseded_by``, ``created_at``);
* ``parent_context``: the parent's AssembledContext, whose decision fragments
  (``urn:cleveragents:decision:<id>``) are carried down;
* ``parent`` (or ``parent_plan_context``): the next level up.

Each decision becomes a fragment ``urn:cleveragents:decision:<id>`` ranked by
how close its plan is (own plan first, each ancestor level 0.8 of the one
below), how much of the question it shares words with, and whether it still
stands (a superseded decision ranks low and says by what).

``can_handle`` only receives the request and the backends, so whoever runs
an assembly for a plan publishes its context with
:func:`publish_plan_context` (the executor copies the running context into
its worker threads); without one the strategy declines. Quality 0.7.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from datetime import datetime
from typing import TYPE_CHECKING, Any

from cleveragents.models.context import (
    AssembledContext,
    ContextFragment,
    ContextRequest,
    FragmentProvenance,
    StrategyCapabilities,
)
from cleveragents_acms.pipeline._common import count_tokens, plan_attr
from cleveragents_acms.strategies._support import clamp, defers, query_of

if TYPE_CHECKING:
    from cleveragents.protocols.backends import BackendSet

__all__ = [
    "DECISION_PREFIX",
    "PlanDecisionContextStrategy",
    "current_plan_context",
    "publish_plan_context",
]

DECISION_PREFIX = "urn:cleveragents:decision:"
_ANCESTOR_DECAY = 0.8
_MAX_LEVELS = 16
_WORD = re.compile(r"[a-z0-9]{3,}")

_PLAN_CONTEXT: ContextVar[object | None] = ContextVar("cleveragents_plan_context", default=None)


@contextmanager
def publish_plan_context(plan_context: object) -> Iterator[None]:
    """Make ``plan_context`` visible to ``can_handle`` for the duration of one assembly."""
    token = _PLAN_CONTEXT.set(plan_context)
    try:
        yield
    finally:
        _PLAN_CONTEXT.reset(token)


def current_plan_context() -> object | None:
    """The plan context published for the running assembly, if any."""
    return _PLAN_CONTEXT.get()


def _field(record: object, name: str, default: Any = None) -> Any:
    if isinstance(record, Mapping):
        return record.get(name, default)
    return getattr(record, name, default)


def _decisions_at(level: object) -> list[object]:
    found: list[object] = []
    for name in ("decisions", "inherited_decisions"):
        value = plan_attr(level, name)
        if value:
            found.extend(value if isinstance(value, list | tuple) else [value])
    plan = plan_attr(level, "plan")
    if plan is not None:
        value = _field(plan, "decisions")
        if value:
            found.extend(value)
    return found


def _parent_of(level: object) -> object | None:
    for name in ("parent", "parent_plan_context"):
        value = plan_attr(level, name)
        if value is not None and value is not level:
            return value
    return None


def walk_decisions(plan_context: object) -> list[tuple[int, object]]:
    """``(ancestry distance, decision record)`` of every decision reachable from the context."""
    out: list[tuple[int, object]] = []
    level: object | None = plan_context
    seen: set[int] = set()
    distance = 0
    while level is not None and id(level) not in seen and distance < _MAX_LEVELS:
        seen.add(id(level))
        out.extend((distance, d) for d in _decisions_at(level))
        parent_context = plan_attr(level, "parent_context")
        if isinstance(parent_context, AssembledContext):
            out.extend(
                (distance + 1, f)
                for f in parent_context.fragments
                if f.uko_node.startswith(DECISION_PREFIX)
            )
        level = _parent_of(level)
        distance += 1
    return out


def _words(text: str) -> set[str]:
    return set(_WORD.findall(text.lower()))


@defers
class PlanDecisionContextStrategy:
    """Decision records of the plan hierarchy as fragments (spec 000, "plan-decision-context")."""

    name = "plan-decision-context"
    capabilities = StrategyCapabilities(
        uses_temporal=True, quality_score=0.7, supports_plan_hierarchy=True
    )

    def can_handle(self, request: ContextRequest, backends: BackendSet) -> float:
        plan_context = current_plan_context()
        if plan_context is None or not walk_decisions(plan_context):
            return 0.0
        return 0.8

    def assemble(
        self,
        request: ContextRequest,
        backends: BackendSet,
        budget: int,
        plan_context: object,
    ) -> list[ContextFragment]:
        plan_context = plan_context if plan_context is not None else current_plan_context()
        if budget <= 0 or plan_context is None:
            return []
        question = _words(query_of(request) + " " + " ".join(request.focus))
        candidates: dict[str, ContextFragment] = {}
        for distance, record in walk_decisions(plan_context):
            fragment = self._fragment(record, distance, question)
            if fragment is None:
                continue
            known = candidates.get(fragment.uko_node)
            if known is None or fragment.relevance_score > known.relevance_score:
                candidates[fragment.uko_node] = fragment
        out: list[ContextFragment] = []
        used = 0
        for fragment in sorted(candidates.values(), key=lambda f: -f.relevance_score):
            if used + fragment.token_count <= budget:
                out.append(fragment)
                used += fragment.token_count
        return out

    def _fragment(
        self, record: object, distance: int, question: set[str]
    ) -> ContextFragment | None:
        if isinstance(record, ContextFragment):  # carried down from a parent context
            relevance = record.relevance_score * _ANCESTOR_DECAY ** max(0, distance)
            metadata = {**record.metadata, "focus_distance": str(distance)}
            return record.model_copy(
                update={
                    "relevance_score": clamp(relevance),
                    "metadata": metadata,
                    "provenance": record.provenance.model_copy(update={"strategy": self.name}),
                }
            )
        decision_id = str(_field(record, "decision_id", "") or "")
        summary = str(_field(record, "summary", "") or "").strip()
        if not decision_id or not summary:
            return None
        plan_id = str(_field(record, "plan_id", "") or "plan")
        kind = str(_field(record, "decision_type", "") or "decision")
        rationale = str(_field(record, "rationale", "") or "").strip()
        superseded_by = _field(record, "superseded_by")
        created = _field(record, "created_at")
        lines = [f"Decision ({kind}) of plan {plan_id}: {summary}"]
        if rationale:
            lines.append(f"Rationale: {rationale}")
        if superseded_by:
            lines.append(f"Superseded by decision {superseded_by}.")
        content = "\n".join(lines)
        overlap = len(question & _words(f"{summary} {rationale}"))
        relevance = (0.55 + 0.45 * min(1.0, overlap / 4)) * _ANCESTOR_DECAY**distance
        if superseded_by:
            relevance *= 0.3
        metadata = {
            "focus_distance": str(distance),
            "decision_type": kind,
            "plan_id": plan_id,
            "is_current": "false" if superseded_by else "true",
        }
        if isinstance(created, datetime):
            metadata["valid_from"] = created.isoformat()
        return ContextFragment(
            uko_node=f"{DECISION_PREFIX}{decision_id}",
            content=content,
            detail_depth=9,
            token_count=count_tokens(content),
            relevance_score=clamp(relevance),
            provenance=FragmentProvenance(
                resource_id=plan_id, path=f"plan:{plan_id}", strategy=self.name
            ),
            tier="warm" if distance <= 1 else "cold",
            metadata=metadata,
        )
