"""Projects, resources and the links between them (spec 000, "Resource Registry").

These are the immutable values plugins receive (``cleveragents_resource_added``
hands a :class:`Resource` to the indexer); they carry no database machinery.
Storage maps them to and from its tables in :mod:`cleveragents.storage`.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from cleveragents.models.ids import new_ulid, utcnow
from cleveragents.models.names import check_name, name_problem

__all__ = [
    "BUILTIN_RESOURCE_TYPES",
    "Classification",
    "LinkType",
    "Project",
    "ProjectResource",
    "Resource",
    "ResourceLink",
    "check_name",
    "name_problem",
]

Classification = Literal["physical", "virtual"]
LinkType = Literal["contains", "references", "derived_from"]

#: Resource types core knows how to recognise on its own.
BUILTIN_RESOURCE_TYPES: tuple[str, ...] = ("filesystem/directory", "git/checkout")


def _valid_name(value: str) -> str:
    problem = name_problem(value)
    if problem is not None:
        raise ValueError(f"name {problem}")
    return value


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class Project(_Frozen):
    """A named set of resources that plans and context requests are scoped to."""

    name: str
    description: str | None = None
    properties: dict[str, Any] = Field(default_factory=dict)
    created_at: datetime = Field(default_factory=utcnow)
    updated_at: datetime = Field(default_factory=utcnow)

    @field_validator("name")
    @classmethod
    def _check_name(cls, value: str) -> str:
        return _valid_name(value)

    @property
    def namespace(self) -> str | None:
        """``"local"`` for ``local/api-service``; ``None`` for an unnamespaced name."""
        return self.name.split("/", 1)[0] if "/" in self.name else None


class Resource(_Frozen):
    """Something agents read or change: a directory, a git checkout, a database …

    ``name`` is ``None`` for children discovered automatically under a named
    resource. Physical resources have an absolute ``location``.
    """

    resource_id: str = Field(default_factory=new_ulid)
    name: str | None = None
    resource_type_name: str
    classification: Classification = "physical"
    description: str | None = None
    location: str | None = None
    #: Type-specific facts, e.g. ``{"vcs": "git", "head_commit": "…"}``.
    properties: dict[str, Any] = Field(default_factory=dict)
    content_hash: str | None = None
    #: Per-resource override of the sandbox strategy.
    sandbox_strategy: str | None = None
    created_at: datetime = Field(default_factory=utcnow)
    updated_at: datetime = Field(default_factory=utcnow)

    @field_validator("name")
    @classmethod
    def _check_name(cls, value: str | None) -> str | None:
        return None if value is None else _valid_name(value)

    @field_validator("resource_type_name")
    @classmethod
    def _check_type(cls, value: str) -> str:
        return _valid_name(value)

    @property
    def label(self) -> str:
        """The name when there is one, else the ULID: how the CLI refers to it."""
        return self.name or self.resource_id


class ResourceLink(_Frozen):
    """An edge of the resource DAG: ``parent_id`` contains / references ``child_id``."""

    parent_id: str
    child_id: str
    link_type: LinkType = "contains"
    created_at: datetime = Field(default_factory=utcnow)


class ProjectResource(_Frozen):
    """A resource linked into a project, possibly read-only for that project."""

    project_name: str
    resource_id: str
    read_only: bool = False
    linked_at: datetime = Field(default_factory=utcnow)
