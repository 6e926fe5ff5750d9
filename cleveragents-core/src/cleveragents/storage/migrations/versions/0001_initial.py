"""Projects, resources, their links, project linkage and the audit log.

Revision ID: 0001
Revises:
Create Date: 2025-01-01
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None

_JSON = sa.JSON().with_variant(postgresql.JSONB(), "postgresql")


def _timestamp(name: str) -> sa.Column:
    return sa.Column(
        name, sa.DateTime(timezone=True), nullable=False, server_default=sa.func.current_timestamp()
    )


def upgrade() -> None:
    op.create_table(
        "projects",
        sa.Column("name", sa.String(), nullable=False),
        sa.Column("description", sa.String(), nullable=True),
        sa.Column("properties", _JSON, nullable=True),
        _timestamp("created_at"),
        _timestamp("updated_at"),
        sa.PrimaryKeyConstraint("name"),
    )
    op.create_table(
        "resources",
        sa.Column("resource_id", sa.String(), nullable=False),
        sa.Column("name", sa.String(), nullable=True),
        sa.Column("resource_type_name", sa.String(), nullable=False),
        sa.Column("classification", sa.String(), nullable=False),
        sa.Column("description", sa.String(), nullable=True),
        sa.Column("properties", _JSON, nullable=True),
        sa.Column("location", sa.String(), nullable=True),
        sa.Column("content_hash", sa.String(), nullable=True),
        sa.Column("sandbox_strategy", sa.String(), nullable=True),
        _timestamp("created_at"),
        _timestamp("updated_at"),
        sa.PrimaryKeyConstraint("resource_id"),
    )
    op.create_index(
        "idx_resources_name",
        "resources",
        ["name"],
        unique=True,
        sqlite_where=sa.text("name IS NOT NULL"),
        postgresql_where=sa.text("name IS NOT NULL"),
    )
    op.create_index("idx_resources_type", "resources", ["resource_type_name"])
    op.create_index("idx_resources_classification", "resources", ["classification"])
    op.create_index("idx_resources_location", "resources", ["location"])
    op.create_table(
        "resource_links",
        sa.Column("parent_id", sa.String(), nullable=False),
        sa.Column("child_id", sa.String(), nullable=False),
        sa.Column("link_type", sa.String(), nullable=True, server_default="contains"),
        _timestamp("created_at"),
        sa.ForeignKeyConstraint(["parent_id"], ["resources.resource_id"], ondelete="CASCADE"),
        sa.ForeignKeyConstraint(["child_id"], ["resources.resource_id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("parent_id", "child_id"),
    )
    op.create_index("idx_resource_links_child", "resource_links", ["child_id"])
    op.create_table(
        "project_resources",
        sa.Column("project_name", sa.String(), nullable=False),
        sa.Column("resource_id", sa.String(), nullable=False),
        sa.Column("read_only", sa.Boolean(), nullable=True, server_default=sa.text("false")),
        _timestamp("linked_at"),
        sa.ForeignKeyConstraint(["project_name"], ["projects.name"], ondelete="CASCADE"),
        sa.ForeignKeyConstraint(["resource_id"], ["resources.resource_id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("project_name", "resource_id"),
    )
    op.create_index("idx_project_resources_resource", "project_resources", ["resource_id"])
    op.create_table(
        "audit_log",
        sa.Column(
            "id",
            sa.BigInteger().with_variant(sa.Integer(), "sqlite"),
            nullable=False,
            primary_key=True,
        ),
        sa.Column("event_type", sa.String(), nullable=False),
        sa.Column("plan_id", sa.String(), nullable=True),
        sa.Column("project_name", sa.String(), nullable=True),
        sa.Column("actor_name", sa.String(), nullable=True),
        sa.Column("user_identity", sa.String(), nullable=True),
        sa.Column("details", _JSON, nullable=False),
        _timestamp("created_at"),
        sqlite_autoincrement=True,
    )
    op.create_index("idx_audit_event", "audit_log", ["event_type"])
    op.create_index(
        "idx_audit_plan",
        "audit_log",
        ["plan_id"],
        sqlite_where=sa.text("plan_id IS NOT NULL"),
        postgresql_where=sa.text("plan_id IS NOT NULL"),
    )
    op.create_index("idx_audit_created", "audit_log", ["created_at"])


def downgrade() -> None:
    """Development only (production moves forward): this drops every table it created."""
    for index, table in [
        ("idx_audit_created", "audit_log"),
        ("idx_audit_plan", "audit_log"),
        ("idx_audit_event", "audit_log"),
    ]:
        op.drop_index(index, table_name=table)
    op.drop_table("audit_log")
    op.drop_index("idx_project_resources_resource", table_name="project_resources")
    op.drop_table("project_resources")
    op.drop_index("idx_resource_links_child", table_name="resource_links")
    op.drop_table("resource_links")
    for index in (
        "idx_resources_location",
        "idx_resources_classification",
        "idx_resources_type",
        "idx_resources_name",
    ):
        op.drop_index(index, table_name="resources")
    op.drop_table("resources")
    op.drop_table("projects")
