"""The context system's own tables in the core database (migration ``0002``).

``context_policies`` holds each project's :class:`ProjectContextPolicy` as
JSON; ``context_tier_entries`` the warm and cold tiers (and a copy of the hot
one, so it survives the process); ``context_assemblies`` the history of
assemblies that ``context inspect`` and the ``query_history`` tool read.
"""

from __future__ import annotations

from sqlalchemy import CheckConstraint, Column, Integer, String, Table, Text

from cleveragents_acms.indexing.tables import ensure_tables, metadata

__all__ = ["context_assemblies", "context_policies", "context_tier_entries", "ensure_tables"]

context_policies = Table(
    "context_policies",
    metadata,
    Column("project_name", String(255), primary_key=True),
    Column("policy", Text, nullable=False),
    Column("updated_at", String(40), nullable=False),
)

context_tier_entries = Table(
    "context_tier_entries",
    metadata,
    Column("fragment_id", String(26), primary_key=True),
    Column("project_name", String(255), nullable=False, index=True),
    Column("tier", String(8), nullable=False),
    Column("uko_node", Text, nullable=False),
    Column("token_count", Integer, nullable=False, server_default="0"),
    #: The TieredFragment as JSON (hot and warm); NULL for cold entries.
    Column("fragment", Text, nullable=True),
    #: The compressed file of a cold entry, relative to ``contexts/cold/``.
    Column("archive_path", Text, nullable=True),
    Column("created_at", String(40), nullable=False),
    Column("tier_since", String(40), nullable=False),
    Column("last_accessed", String(40), nullable=False),
    Column("access_count", Integer, nullable=False, server_default="0"),
    CheckConstraint("tier IN ('hot', 'warm', 'cold')", name="ck_context_tier_entries_tier"),
)

context_assemblies = Table(
    "context_assemblies",
    metadata,
    Column("assembly_id", String(26), primary_key=True),
    Column("project_name", String(255), nullable=False, index=True),
    Column("created_at", String(40), nullable=False),
    Column("query", Text, nullable=True),
    Column("phase", String(20), nullable=False, server_default="default"),
    Column("model", String(100), nullable=True),
    Column("budget", Integer, nullable=False),
    Column("total_tokens", Integer, nullable=False, server_default="0"),
    Column("fragment_count", Integer, nullable=False, server_default="0"),
    Column("dropped_count", Integer, nullable=False, server_default="0"),
    Column("strategies", Text, nullable=False, server_default=""),
    Column("context_hash", String(64), nullable=False, server_default=""),
    #: The whole AssemblyReport as JSON.
    Column("report", Text, nullable=False),
)
