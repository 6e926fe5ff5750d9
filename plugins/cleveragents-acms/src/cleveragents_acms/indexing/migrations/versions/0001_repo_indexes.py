"""repo_indexes and indexed_files.

Revision ID: 0001
Revises:
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "repo_indexes",
        sa.Column("index_id", sa.String(26), primary_key=True),
        sa.Column("resource_id", sa.String(26), nullable=False, index=True),
        sa.Column("project_name", sa.String(255), nullable=False),
        sa.Column("root_path", sa.Text, nullable=False),
        sa.Column("indexed_at", sa.String(40), nullable=False),
        sa.Column("file_count", sa.Integer, nullable=False, server_default="0"),
        sa.Column("node_count", sa.Integer, nullable=False, server_default="0"),
        sa.Column("error_count", sa.Integer, nullable=False, server_default="0"),
        sa.Column("token_estimate", sa.Integer, nullable=False, server_default="0"),
        sa.Column("primary_language", sa.String(50), nullable=False, server_default="unknown"),
        sa.Column("status", sa.String(20), nullable=False),
        sa.Column("error_message", sa.Text, nullable=True),
        sa.Column("worker_pid", sa.Integer, nullable=True),
        sa.Column("worker_host", sa.String(255), nullable=True),
        sa.Column("created_at", sa.String(40), nullable=False),
        sa.UniqueConstraint("resource_id", "project_name", name="uq_repo_indexes_resource_project"),
        sa.CheckConstraint(
            "status IN ('pending', 'indexing', 'ready', 'stale', 'error')",
            name="ck_repo_indexes_status",
        ),
    )
    op.create_table(
        "indexed_files",
        sa.Column(
            "index_id",
            sa.String(26),
            sa.ForeignKey("repo_indexes.index_id", ondelete="CASCADE"),
            primary_key=True,
        ),
        sa.Column("path", sa.String(1024), primary_key=True),
        sa.Column("content_hash", sa.String(64), nullable=False),
        sa.Column("token_count", sa.Integer, nullable=False, server_default="0"),
        sa.Column("size_bytes", sa.Integer, nullable=False, server_default="0"),
        sa.Column("language", sa.String(50), nullable=False, server_default="unknown"),
        sa.Column("analyzer", sa.String(64), nullable=True),
        sa.Column("node_count", sa.Integer, nullable=False, server_default="0"),
        sa.Column("errors", sa.Text, nullable=True),
        sa.Column("last_modified", sa.String(40), nullable=False),
    )


def downgrade() -> None:
    op.drop_table("indexed_files")
    op.drop_table("repo_indexes")
