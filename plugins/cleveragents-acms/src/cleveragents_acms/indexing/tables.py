"""ACMS tables in the core database: ``repo_indexes`` and ``indexed_files`` (spec 001).

They carry their own Alembic history (version table ``acms_alembic_version``),
so installing or upgrading this plugin never touches core's migrations.
"""

from __future__ import annotations

import threading
import weakref
from pathlib import Path
from typing import Any

from sqlalchemy import (
    CheckConstraint,
    Column,
    ForeignKey,
    Integer,
    MetaData,
    String,
    Table,
    Text,
    UniqueConstraint,
    inspect,
    text,
)

__all__ = ["VERSION_TABLE", "ensure_tables", "indexed_files", "metadata", "repo_indexes"]

VERSION_TABLE = "acms_alembic_version"
MIGRATIONS_DIR = Path(__file__).with_name("migrations")
STATUSES = ("pending", "indexing", "ready", "stale", "error")

metadata = MetaData()

repo_indexes = Table(
    "repo_indexes",
    metadata,
    Column("index_id", String(26), primary_key=True),
    Column("resource_id", String(26), nullable=False, index=True),
    Column("project_name", String(255), nullable=False),
    Column("root_path", Text, nullable=False),
    Column("indexed_at", String(40), nullable=False),
    Column("file_count", Integer, nullable=False, server_default="0"),
    Column("node_count", Integer, nullable=False, server_default="0"),
    Column("error_count", Integer, nullable=False, server_default="0"),
    Column("token_estimate", Integer, nullable=False, server_default="0"),
    Column("primary_language", String(50), nullable=False, server_default="unknown"),
    Column("status", String(20), nullable=False),
    Column("error_message", Text, nullable=True),
    # Who is indexing right now: lets start-up tell a live run from a crashed one.
    Column("worker_pid", Integer, nullable=True),
    Column("worker_host", String(255), nullable=True),
    # ``markdown@0.1.0 python@0.1.0 …``: a refresh after they change analyses every file.
    Column("analyzers", Text, nullable=True),
    Column("created_at", String(40), nullable=False),
    UniqueConstraint("resource_id", "project_name", name="uq_repo_indexes_resource_project"),
    CheckConstraint(
        "status IN ('pending', 'indexing', 'ready', 'stale', 'error')",
        name="ck_repo_indexes_status",
    ),
)

indexed_files = Table(
    "indexed_files",
    metadata,
    Column(
        "index_id",
        String(26),
        ForeignKey("repo_indexes.index_id", ondelete="CASCADE"),
        primary_key=True,
    ),
    Column("path", String(1024), primary_key=True),
    Column("content_hash", String(64), nullable=False),
    Column("token_count", Integer, nullable=False, server_default="0"),
    Column("size_bytes", Integer, nullable=False, server_default="0"),
    Column("language", String(50), nullable=False, server_default="unknown"),
    Column("analyzer", String(64), nullable=True),
    Column("node_count", Integer, nullable=False, server_default="0"),
    Column("errors", Text, nullable=True),
    Column("last_modified", String(40), nullable=False),
)

#: The handles already migrated. Per handle, as the core's schema is: a home deleted and
#: made again in one process (a server, a test) is a new handle, checked again.
_migrated: weakref.WeakSet[Any] = weakref.WeakSet()
_lock = threading.Lock()


def ensure_tables(database: Any) -> None:
    """Apply ACMS's migrations to ``database`` (a core Database) once per handle."""
    database.ensure_schema()
    if database in _migrated:
        return
    with _lock:
        if database in _migrated:
            return
        with database.engine.connect() as connection:
            current = None
            if inspect(connection).has_table(VERSION_TABLE):
                current = connection.execute(
                    text(f"SELECT version_num FROM {VERSION_TABLE}")
                ).scalar()
        heads = sorted(
            p.name.split("_")[0] for p in (MIGRATIONS_DIR / "versions").glob("[0-9]*.py")
        )
        if current != heads[-1]:
            # Alembic is imported only to migrate: a tenth of a second of every command.
            from alembic import command
            from alembic.config import Config

            with database.engine.connect() as connection, connection.begin():
                config = Config()
                config.set_main_option("script_location", str(MIGRATIONS_DIR).replace("%", "%%"))
                config.attributes["connection"] = connection
                command.upgrade(config, "head")
        _migrated.add(database)
