"""The ``builtin/context`` tools actors call while they reason (spec 001, "Actor Integration").

* ``builtin/context/request_context``: assemble context for a question, within a budget;
* ``builtin/context/query_history``: past assemblies of a project (what was asked, what
  was delivered and dropped);
* ``builtin/context/get_context_budget``: the budget a model leaves for context, and what
  remains after the tokens already used.

Each satisfies :class:`cleveragents.protocols.Tool`. The registry builds them
with no arguments; they then open the context service of the environment
(``$CLEVERAGENTS_HOME``, the configuration chain, the installed plugins) on
first use. A host that already has a service hands it over with :func:`bind`.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, ClassVar

from cleveragents.errors import ValidationError

if TYPE_CHECKING:
    from cleveragents_acms.context.service import ContextService

__all__ = ["GetContextBudgetTool", "QueryHistoryTool", "RequestContextTool", "bind"]

_bound: list[ContextService] = []
_lock = threading.Lock()


def bind(service: ContextService | None) -> None:
    """Make every context tool use ``service`` (``None``: open one from the environment)."""
    with _lock:
        _bound[:] = [service] if service is not None else []


def _service() -> ContextService:
    with _lock:
        if _bound:
            return _bound[0]
    from cleveragents_acms.api import open_context

    return open_context()  # one per $CLEVERAGENTS_HOME, built on first use


def _string(arguments: Mapping[str, Any], key: str, *, required: bool = False) -> str | None:
    value = arguments.get(key)
    if value is None or (isinstance(value, str) and not value.strip()):
        if required:
            raise ValidationError(f"'{key}' is required")
        return None
    if not isinstance(value, str):
        raise ValidationError(f"'{key}' must be a string")
    return value.strip()


def _integer(arguments: Mapping[str, Any], key: str, *, minimum: int = 0) -> int | None:
    value = arguments.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise ValidationError(f"'{key}' must be an integer >= {minimum}")
    return value


def _strings(arguments: Mapping[str, Any], key: str) -> tuple[str, ...]:
    value = arguments.get(key) or ()
    if isinstance(value, str):
        value = (value,)
    if not all(isinstance(v, str) for v in value):
        raise ValidationError(f"'{key}' must be a list of strings")
    return tuple(v for v in value if v.strip())


class _ContextTool:
    name: ClassVar[str]
    description: ClassVar[str]
    input_schema: ClassVar[Mapping[str, Any]]

    def invoke(self, arguments: Mapping[str, Any]) -> Any:
        if not isinstance(arguments, Mapping):
            raise ValidationError("tool arguments must be an object")
        unknown = sorted(set(arguments) - set(self.input_schema.get("properties", {})))
        if unknown:
            raise ValidationError(f"unknown argument(s) for {self.name}: {', '.join(unknown)}")
        return self._invoke(arguments)

    def _invoke(self, arguments: Mapping[str, Any]) -> Any:  # pragma: no cover - abstract
        raise NotImplementedError


class RequestContextTool(_ContextTool):
    """Assemble a budgeted context from the project's index."""

    name = "request_context"
    description = (
        "Assemble context from the project's indexed code and documents for a question, "
        "within a token budget. Returns ordered fragments with file:line provenance, plus "
        "what the budget left out (pass one of those URIs as 'focus' to get it)."
    )
    input_schema: ClassVar[Mapping[str, Any]] = {
        "type": "object",
        "properties": {
            "query": {"type": "string", "description": "The question, in natural language."},
            "project": {"type": "string", "description": "Project name."},
            "budget": {"type": "integer", "minimum": 1, "description": "Token budget."},
            "model": {"type": "string", "description": "Target model (tokenizer, budget)."},
            "focus": {"type": "array", "items": {"type": "string"}, "description": "Node URIs."},
            "depth": {
                "type": ["integer", "string"],
                "description": "Detail depth 0-9 or a named level such as SIGNATURES.",
            },
            "breadth": {"type": "integer", "minimum": 0},
            "strategies": {"type": "array", "items": {"type": "string"}},
            "phase": {"type": "string", "enum": ["default", "strategize", "execute", "apply"]},
        },
        "required": ["project"],
        "additionalProperties": False,
    }

    def _invoke(self, arguments: Mapping[str, Any]) -> dict[str, Any]:
        from cleveragents.models.context import ContextRequest

        project = _string(arguments, "project", required=True)
        depth = arguments.get("depth")
        fields: dict[str, Any] = {
            "query": _string(arguments, "query"),
            "focus": _strings(arguments, "focus"),
            "preferred_strategies": _strings(arguments, "strategies"),
        }
        if depth is not None:
            if isinstance(depth, bool) or not isinstance(depth, (int, str)):
                raise ValidationError("'depth' must be an integer or a level name")
            fields["depth"] = depth
        breadth = _integer(arguments, "breadth")
        if breadth is not None:
            fields["breadth"] = breadth
        request = ContextRequest(**fields)
        if request.is_empty:
            raise ValidationError("the request is empty: give a query or focus")
        outcome = _service().run(
            request,
            project=str(project),
            budget=_integer(arguments, "budget", minimum=1),
            model=_string(arguments, "model"),
            phase=_string(arguments, "phase") or "default",
        )
        context = outcome.context
        return {
            "assembly_id": outcome.report.assembly_id,
            "preamble": context.preamble,
            "fragments": [
                {
                    "uko_node": f.uko_node,
                    "location": f.provenance.location,
                    "depth": f.detail_depth,
                    "tokens": f.token_count,
                    "strategy": f.provenance.strategy,
                    "stale": f.metadata.get("stale") == "true",
                    "content": f.content,
                }
                for f in context.fragments
            ],
            "total_tokens": context.total_tokens + context.preamble_tokens,
            "budget": context.budget.available_tokens,
            "dropped": [d.model_dump(mode="json") for d in context.dropped],
            "notes": list(context.notes),
        }


class QueryHistoryTool(_ContextTool):
    """Past assemblies: what was asked, delivered and left out."""

    name = "query_history"
    description = (
        "Search the history of context assemblies of a project: the questions asked, the "
        "files and symbols delivered, what was dropped, newest first."
    )
    input_schema: ClassVar[Mapping[str, Any]] = {
        "type": "object",
        "properties": {
            "project": {"type": "string", "description": "Project name (all when omitted)."},
            "query": {
                "type": "string",
                "description": "Text to look for in past questions, paths or node URIs.",
            },
            "limit": {"type": "integer", "minimum": 1, "maximum": 200, "default": 10},
        },
        "additionalProperties": False,
    }

    def _invoke(self, arguments: Mapping[str, Any]) -> dict[str, Any]:
        limit = _integer(arguments, "limit", minimum=1) or 10
        reports = _service().history.search(
            _string(arguments, "project"), text=_string(arguments, "query"), limit=min(limit, 200)
        )
        return {
            "assemblies": [
                {
                    "assembly_id": r.assembly_id,
                    "created_at": r.created_at,
                    "project": r.project,
                    "query": r.query,
                    "phase": r.phase,
                    "tokens": r.totals.get("tokens"),
                    "budget": r.budget.get("budget"),
                    "strategies": [s.name for s in r.strategies],
                    "delivered": [f["location"] for f in r.fragments],
                    "dropped": len(r.dropped),
                    "notes": r.notes,
                }
                for r in reports
            ]
        }


class GetContextBudgetTool(_ContextTool):
    """The budget left for context, for a model and what was already used."""

    name = "get_context_budget"
    description = (
        "The token budget available for context: the model's context window minus the "
        "response reserve and tool definitions (or an explicit budget), and what remains "
        "after the tokens already used."
    )
    input_schema: ClassVar[Mapping[str, Any]] = {
        "type": "object",
        "properties": {
            "model": {"type": "string", "description": "Target model, e.g. gpt-4o."},
            "project": {"type": "string", "description": "Project (its tier caps apply)."},
            "budget": {"type": "integer", "minimum": 1, "description": "An explicit budget."},
            "used_tokens": {"type": "integer", "minimum": 0, "default": 0},
        },
        "additionalProperties": False,
    }

    def _invoke(self, arguments: Mapping[str, Any]) -> dict[str, Any]:
        service = _service()
        breakdown, notes = service.budget_for(
            project=_string(arguments, "project"),
            budget=_integer(arguments, "budget", minimum=1),
            model=_string(arguments, "model"),
        )
        used = _integer(arguments, "used_tokens") or 0
        threshold = float(service.config.get("context.budget.refresh-threshold", 0.30))
        return {
            **breakdown.to_dict(),
            "used_tokens": used,
            "remaining_tokens": max(0, breakdown.budget - used),
            "refresh_threshold": threshold,
            "refresh_recommended": used / breakdown.budget > threshold
            if breakdown.budget
            else True,
            "tokenizer": service.tokenizer_name(_string(arguments, "model")),
            "notes": notes,
        }
