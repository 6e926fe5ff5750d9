"""Reads a command makes on every run before it writes anything, without the ORM.

``cleveragents index PATH`` first asks whether PATH is a registered resource linked
into the project, and nearly always it is. The repositories answer through SQLModel's
ORM, whose import (with the table classes) takes about a tenth of a one-file refresh
through the command; these queries need SQLAlchemy's core alone. They read the same
rows with the same column types, so what they return is what the repositories would
(a test holds the two to each other); anything to create or change goes through the
repositories. The resource comes back as its row (:class:`StoredResource`), not yet as
the pydantic model: importing pydantic and building the models takes about 90 ms more,
which a run that only reads the resource's id and location need not pay.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any

from sqlalchemy import JSON, text
from sqlalchemy.exc import SQLAlchemyError

from cleveragents.storage.columns import UTCDateTime

if TYPE_CHECKING:
    from cleveragents.models.resources import Resource
    from cleveragents.storage.database import Database

__all__ = ["StoredResource", "resource_at"]


@dataclass(frozen=True, slots=True)
class StoredResource:
    """A registered resource as its row reads: the :class:`Resource` model's fields,
    with its ``label``; :meth:`model` builds the model when something needs it (a plugin
    hook is called with it)."""

    fields: Mapping[str, Any]

    @property
    def resource_id(self) -> str:
        return str(self.fields["resource_id"])

    @property
    def name(self) -> str | None:
        return self.fields["name"]

    @property
    def location(self) -> str | None:
        return self.fields["location"]

    @property
    def label(self) -> str:
        """As :attr:`Resource.label`: the name when there is one, else the ULID."""
        return self.name or self.resource_id

    def model(self) -> Resource:
        """The :class:`Resource` model of these fields."""
        from cleveragents.models.resources import Resource

        return Resource(**self.fields)

    def json(self) -> dict[str, Any]:
        """What ``self.model().model_dump(mode="json")`` gives, without building it:
        the fields, instants in ISO 8601 with ``Z`` for UTC."""
        return {key: _json_value(value) for key, value in self.fields.items()}


def _json_value(value: Any) -> Any:
    if isinstance(value, datetime):
        stamp = value.isoformat()
        return stamp[:-6] + "Z" if stamp.endswith("+00:00") else stamp
    return value


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


def resource_at(database: Database, location: str) -> tuple[StoredResource, list[str]] | None:
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
    return StoredResource({**row, "properties": dict(row["properties"] or {})}), linked
