"""Runs ACMS migrations on the connection that ``tables.ensure_tables`` provides."""

from __future__ import annotations

from alembic import context

from cleveragents_acms.indexing.tables import VERSION_TABLE, metadata

connection = context.config.attributes.get("connection")
if connection is None:  # pragma: no cover - only reachable through the alembic CLI
    raise RuntimeError("run migrations through cleveragents_acms.indexing.tables.ensure_tables()")

context.configure(
    connection=connection,
    target_metadata=metadata,
    version_table=VERSION_TABLE,
    render_as_batch=connection.dialect.name == "sqlite",
)
with context.begin_transaction():
    context.run_migrations()
