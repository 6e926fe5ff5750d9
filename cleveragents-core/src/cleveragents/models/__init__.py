"""Domain models every plugin speaks: pydantic values with ULIDs and UTC datetimes.

Nothing here imports the database layer, so plugins can depend on these freely.
Modules: ``resources`` (projects, resources), ``context`` (the Context Request
Protocol and assembled contexts), ``uko`` (nodes analyzers produce), ``plans``
(plans, decisions, events), ``sandbox`` (sandbox handles and diffs).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from cleveragents.models.context import (
        AssembledContext,
        ContextBudget,
        ContextFragment,
        ContextRequest,
        DetailLevelMap,
        DroppedFragment,
        FragmentProvenance,
        ScoredFragment,
        StrategyCapabilities,
        TemporalScope,
    )
    from cleveragents.models.ids import is_ulid, new_ulid, parse_instant, utcnow
    from cleveragents.models.names import check_name
    from cleveragents.models.plans import Decision, DomainEvent, Plan
    from cleveragents.models.resources import (
        BUILTIN_RESOURCE_TYPES,
        Classification,
        LinkType,
        Project,
        ProjectResource,
        Resource,
        ResourceLink,
    )
    from cleveragents.models.sandbox import Change, DiffView, SandboxRef
    from cleveragents.models.uko import AnalysisResult, UKONode, node_uri

#: Where each name below lives: a submodule is imported when one of its names is first
#: asked for, so ``import cleveragents.models.resources`` does not build every model
#: (the context models alone take 10-20 ms of a command's start). The imports above are
#: for type checkers.
_HOMES = {
    "AnalysisResult": "uko",
    "AssembledContext": "context",
    "BUILTIN_RESOURCE_TYPES": "resources",
    "Change": "sandbox",
    "Classification": "resources",
    "ContextBudget": "context",
    "ContextFragment": "context",
    "ContextRequest": "context",
    "Decision": "plans",
    "DetailLevelMap": "context",
    "DiffView": "sandbox",
    "DomainEvent": "plans",
    "DroppedFragment": "context",
    "FragmentProvenance": "context",
    "LinkType": "resources",
    "Plan": "plans",
    "Project": "resources",
    "ProjectResource": "resources",
    "Resource": "resources",
    "ResourceLink": "resources",
    "SandboxRef": "sandbox",
    "ScoredFragment": "context",
    "StrategyCapabilities": "context",
    "TemporalScope": "context",
    "UKONode": "uko",
    "check_name": "names",
    "is_ulid": "ids",
    "new_ulid": "ids",
    "node_uri": "uko",
    "parse_instant": "ids",
    "utcnow": "ids",
}


__all__ = [
    "BUILTIN_RESOURCE_TYPES",
    "AnalysisResult",
    "AssembledContext",
    "Change",
    "Classification",
    "ContextBudget",
    "ContextFragment",
    "ContextRequest",
    "Decision",
    "DetailLevelMap",
    "DiffView",
    "DomainEvent",
    "DroppedFragment",
    "FragmentProvenance",
    "LinkType",
    "Plan",
    "Project",
    "ProjectResource",
    "Resource",
    "ResourceLink",
    "SandboxRef",
    "ScoredFragment",
    "StrategyCapabilities",
    "TemporalScope",
    "UKONode",
    "check_name",
    "is_ulid",
    "new_ulid",
    "node_uri",
    "parse_instant",
    "utcnow",
]


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{home}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *_HOMES])
