"""Context policies, the warm and cold tier entries, and the assembly history.

Revision ID: 0002
Revises: 0001
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "context_policies",
        sa.Column("project_name", sa.String(255), primary_key=True),
        sa.Column("policy", sa.Text, nullable=False),
        sa.Column("updated_at", sa.String(40), nullable=False),
    )
    op.create_table(
        "context_tier_entries",
        sa.Column("fragment_id", sa.String(26), primary_key=True),
        sa.Column("project_name", sa.String(255), nullable=False, index=True),
        sa.Column("tier", sa.String(8), nullable=False),
        sa.Column("uko_node", sa.Text, nullable=False),
        sa.Column("token_count", sa.Integer, nullable=False, server_default="0"),
        sa.Column("fragment", sa.Text, nullable=True),
        sa.Column("archive_path", sa.Text, nullable=True),
        sa.Column("created_at", sa.String(40), nullable=False),
        sa.Column("tier_since", sa.String(40), nullable=False),
        sa.Column("last_accessed", sa.String(40), nullable=False),
        sa.Column("access_count", sa.Integer, nullable=False, server_default="0"),
        sa.CheckConstraint("tier IN ('hot', 'warm', 'cold')", name="ck_context_tier_entries_tier"),
    )
    op.create_table(
        "context_assemblies",
        sa.Column("assembly_id", sa.String(26), primary_key=True),
        sa.Column("project_name", sa.String(255), nullable=False, index=True),
        sa.Column("created_at", sa.String(40), nullable=False),
        sa.Column("query", sa.Text, nullable=True),
        sa.Column("phase", sa.String(20), nullable=False, server_default="default"),
        sa.Column("model", sa.String(100), nullable=True),
        sa.Column("budget", sa.Integer, nullable=False),
        sa.Column("total_tokens", sa.Integer, nullable=False, server_default="0"),
        sa.Column("fragment_count", sa.Integer, nullable=False, server_default="0"),
        sa.Column("dropped_count", sa.Integer, nullable=False, server_default="0"),
        sa.Column("strategies", sa.Text, nullable=False, server_default=""),
        sa.Column("context_hash", sa.String(64), nullable=False, server_default=""),
        sa.Column("report", sa.Text, nullable=False),
    )


def downgrade() -> None:
    op.drop_table("context_assemblies")
    op.drop_table("context_tier_entries")
    op.drop_table("context_policies")
