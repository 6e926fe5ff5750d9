"""The analyzers (name and version) each index was last built with.

Revision ID: 0003
Revises: 0002
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("repo_indexes") as batch:
        batch.add_column(sa.Column("analyzers", sa.Text, nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("repo_indexes") as batch:
        batch.drop_column("analyzers")
