"""Domain models every plugin speaks: pydantic values with ULIDs and UTC datetimes.

Nothing here imports the database layer, so plugins can depend on these freely.
Modules: ``resources`` (projects, resources), ``context`` (the Context Request
Protocol and assembled contexts), ``uko`` (nodes analyzers produce), ``plans``
(plans, decisions, events), ``sandbox`` (sandbox handles and diffs).
"""

from __future__ import annotations

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
from cleveragents.models.plans import Decision, DomainEvent, Plan
from cleveragents.models.resources import (
    BUILTIN_RESOURCE_TYPES,
    Classification,
    LinkType,
    Project,
    ProjectResource,
    Resource,
    ResourceLink,
    check_name,
)
from cleveragents.models.sandbox import Change, DiffView, SandboxRef
from cleveragents.models.uko import AnalysisResult, UKONode, node_uri

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
