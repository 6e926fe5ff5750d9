"""Persistence: SQLModel tables, Alembic migrations and repositories over SQLite or PostgreSQL.

Import from the submodules (``cleveragents.storage.database`` …); this package
stays empty so importing it costs nothing.
"""
