"""Runs migrations on the connection :mod:`cleveragents.storage.database` provides."""

from __future__ import annotations

from alembic import context

from cleveragents.storage.tables import metadata

connection = context.config.attributes.get("connection")
if connection is None:  # pragma: no cover - only reachable through the alembic CLI
    raise RuntimeError("run migrations through cleveragents.storage.database.Database.migrate()")

context.configure(
    connection=connection,
    target_metadata=metadata,
    # SQLite cannot ALTER most things in place; batch mode copies tables instead.
    render_as_batch=connection.dialect.name == "sqlite",
    compare_type=True,
)
with context.begin_transaction():
    context.run_migrations()
