"""Domain models every plugin speaks: pydantic values with ULIDs and UTC datetimes.

Nothing here imports the database layer, so plugins can depend on these freely.
"""

from __future__ import annotations

from cleveragents.models.ids import is_ulid, new_ulid, utcnow
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

__all__ = [
    "BUILTIN_RESOURCE_TYPES",
    "Classification",
    "LinkType",
    "Project",
    "ProjectResource",
    "Resource",
    "ResourceLink",
    "check_name",
    "is_ulid",
    "new_ulid",
    "utcnow",
]
