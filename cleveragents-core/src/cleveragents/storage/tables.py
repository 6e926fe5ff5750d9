"""SQLModel tables for the spec's schema (spec 000, "Database Schema Design").

Only storage code touches these rows; everything above it speaks the frozen
domain models of :mod:`cleveragents.models`. The schema itself is created and
evolved by the Alembic migrations in ``storage/migrations/versions`` — these
classes must describe exactly what the latest migration builds
(``tests/test_storage.py`` checks that they agree).
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import BigInteger, Index, Integer, func, text
from sqlmodel import Field, SQLModel

from cleveragents.storage.columns import JSONDocument, UTCDateTime

__all__ = [
    "AuditLogRow",
    "ProjectResourceRow",
    "ProjectRow",
    "ResourceLinkRow",
    "ResourceRow",
    "metadata",
]

metadata = SQLModel.metadata


def _timestamp() -> Any:
    """A NOT NULL UTC timestamp that the database fills in when a row omits it."""
    return Field(
        sa_type=UTCDateTime,
        nullable=False,
        sa_column_kwargs={"server_default": func.current_timestamp()},
    )


class ProjectRow(SQLModel, table=True):
    __tablename__ = "projects"

    name: str = Field(primary_key=True)
    description: str | None = None
    properties: dict[str, Any] | None = Field(default=None, sa_type=JSONDocument)
    created_at: datetime = _timestamp()
    updated_at: datetime = _timestamp()


class ResourceRow(SQLModel, table=True):
    __tablename__ = "resources"
    __table_args__ = (
        Index(
            "idx_resources_name",
            "name",
            unique=True,
            sqlite_where=text("name IS NOT NULL"),
            postgresql_where=text("name IS NOT NULL"),
        ),
        Index("idx_resources_type", "resource_type_name"),
        Index("idx_resources_classification", "classification"),
        Index("idx_resources_location", "location"),
    )

    resource_id: str = Field(primary_key=True)
    name: str | None = None
    resource_type_name: str
    classification: str
    description: str | None = None
    properties: dict[str, Any] | None = Field(default=None, sa_type=JSONDocument)
    location: str | None = None
    content_hash: str | None = None
    sandbox_strategy: str | None = None
    created_at: datetime = _timestamp()
    updated_at: datetime = _timestamp()


class ResourceLinkRow(SQLModel, table=True):
    __tablename__ = "resource_links"
    __table_args__ = (Index("idx_resource_links_child", "child_id"),)

    parent_id: str = Field(
        primary_key=True, foreign_key="resources.resource_id", ondelete="CASCADE"
    )
    child_id: str = Field(primary_key=True, foreign_key="resources.resource_id", ondelete="CASCADE")
    link_type: str | None = Field(
        default="contains", sa_column_kwargs={"server_default": "contains"}
    )
    created_at: datetime = _timestamp()


class ProjectResourceRow(SQLModel, table=True):
    __tablename__ = "project_resources"
    __table_args__ = (Index("idx_project_resources_resource", "resource_id"),)

    project_name: str = Field(primary_key=True, foreign_key="projects.name", ondelete="CASCADE")
    resource_id: str = Field(
        primary_key=True, foreign_key="resources.resource_id", ondelete="CASCADE"
    )
    read_only: bool | None = Field(
        default=False, sa_column_kwargs={"server_default": text("false")}
    )
    linked_at: datetime = _timestamp()


class AuditLogRow(SQLModel, table=True):
    __tablename__ = "audit_log"
    __table_args__ = (
        Index("idx_audit_event", "event_type"),
        Index(
            "idx_audit_plan",
            "plan_id",
            sqlite_where=text("plan_id IS NOT NULL"),
            postgresql_where=text("plan_id IS NOT NULL"),
        ),
        Index("idx_audit_created", "created_at"),
        {"sqlite_autoincrement": True},
    )

    id: int | None = Field(
        default=None,
        primary_key=True,
        sa_type=BigInteger().with_variant(Integer(), "sqlite"),
    )
    event_type: str
    plan_id: str | None = None
    project_name: str | None = None
    actor_name: str | None = None
    user_identity: str | None = None
    details: dict[str, Any] = Field(sa_type=JSONDocument, nullable=False)
    created_at: datetime = _timestamp()
