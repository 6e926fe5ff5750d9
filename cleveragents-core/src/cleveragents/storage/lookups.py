"""Reads a command makes on every run before it writes anything, without the ORM.

``cleveragents index PATH`` first asks whether PATH is a registered resource linked
into the project, and nearly always it is. The repositories answer through SQLModel's
ORM, whose import (with the table classes) takes about a tenth of a one-file refresh
through the command; these queries need SQLAlchemy's core alone. They read the same
rows with the same column types, so what they return is what the repositories would
(a test holds the two to each other); anything to create or change goes through the
repositories.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from sqlalchemy import JSON, text
from sqlalchemy.exc import SQLAlchemyError

from cleveragents.models.resources import Resource
from cleveragents.storage.columns import UTCDateTime

if TYPE_CHECKING:
    from cleveragents.storage.database import Database

__all__ = ["resource_at"]

_RESOURCE_AT = text(
    "SELECT resource_id, name, resource_type_name, classification, description, location, "
    "properties, content_hash, sandbox_strategy, created_at, updated_at FROM resources "
    "WHERE location = :location ORDER BY resource_id LIMIT 1"
    # Plain JSON reads ``jsonb`` too: the column's variant only matters to what is written.
).columns(properties=JSON(), created_at=UTCDateTime(), updated_at=UTCDateTime())
_PROJECTS_OF = text(
    "SELECT project_name FROM project_resources WHERE resource_id = :resource_id "
    "ORDER BY project_name"
)


def resource_at(database: Database, location: str) -> tuple[Resource, list[str]] | None:
    """The resource registered at ``location`` that ``ResourceRepository.find_by_location``
    lists first (the lowest ULID), with the names of the projects it is linked into;
    None when no resource is registered there, or the read failed (the repositories then
    say why)."""
    database.ensure_schema()
    try:
        with database.engine.connect() as connection:
            row = connection.execute(_RESOURCE_AT, {"location": location}).mappings().first()
            if row is None:
                return None
            projects = connection.execute(_PROJECTS_OF, {"resource_id": row["resource_id"]})
            linked = [name for (name,) in projects]
    except SQLAlchemyError:
        return None
    resource = Resource(**{**row, "properties": dict(row["properties"] or {})})
    return resource, linked
