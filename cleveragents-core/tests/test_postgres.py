"""The same storage layer against a real PostgreSQL server started for this test session."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from datetime import UTC

import pytest
from sqlalchemy import text

from cleveragents.errors import AlreadyExistsError, DatabaseError, DatabaseLockedError
from cleveragents.models import Resource
from cleveragents.storage.audit import list_events, record_event
from cleveragents.storage.database import Database, head_revision
from cleveragents.storage.repositories import ProjectRepository, ResourceRepository


@pytest.fixture
def pg(postgres_url: str) -> Iterator[Database]:
    database = Database(postgres_url, busy_timeout=2.0)
    yield database
    database.dispose()


def test_migrations_run_on_first_use(pg: Database) -> None:
    """An empty PostgreSQL database is migrated to the head revision on first use."""
    assert pg.schema_version() is None
    with pg.session() as session:
        assert ProjectRepository(session).all() == []
    assert pg.schema_version() == head_revision()
    report = pg.check()
    assert report["ok"] and report["backend"] == "postgresql"
    assert report["up_to_date"] is True and report["server_version"]


def test_tables_match_the_migrated_schema(pg: Database) -> None:
    """Models and migrations agree on PostgreSQL too (jsonb, timestamptz, bigserial)."""
    from alembic.autogenerate import compare_metadata
    from alembic.runtime.migration import MigrationContext

    from cleveragents.storage.tables import metadata

    pg.migrate()
    with pg.engine.connect() as connection:
        context = MigrationContext.configure(connection, opts={"compare_type": True})
        assert compare_metadata(context, metadata) == []
        column_types: dict[str, str] = dict(
            connection.execute(
                text(
                    "SELECT column_name, data_type FROM information_schema.columns "
                    "WHERE table_name = 'resources'"
                )
            ).all()
        )
    assert column_types["properties"] == "jsonb"
    assert column_types["created_at"] == "timestamp with time zone"


def test_repositories_round_trip(pg: Database) -> None:
    """Projects, resources, links and cascade on delete behave as on SQLite."""
    with pg.session() as session:
        ProjectRepository(session).create("local/api-service", description="API")
        resources = ResourceRepository(session)
        stored = resources.add(
            Resource(
                name="api",
                resource_type_name="git/checkout",
                location="/srv/api",
                properties={"vcs": "git", "head_commit": "f" * 40},
            )
        )
        resources.link_to_project("local/api-service", "api", read_only=True)
    with pg.session(write=False) as session:
        resources = ResourceRepository(session)
        fetched = resources.get(stored.resource_id)
        assert fetched == stored
        assert fetched.created_at.tzinfo is UTC
        assert [r.name for r in resources.all(project="local/api-service")] == ["api"]
    with pg.session() as session:
        ProjectRepository(session).delete("local/api-service")
    with pg.session(write=False) as session:
        assert ResourceRepository(session).projects_of(stored.resource_id) == []
        assert ProjectRepository(session).all() == []
    with pg.session() as session:
        ResourceRepository(session).remove("api")
    with pg.session(write=False) as session:
        assert ResourceRepository(session).all() == []


def test_duplicate_project_is_already_exists(pg: Database) -> None:
    """Uniqueness is enforced with the same error as on SQLite, leaving the first row."""
    with pg.session() as session:
        ProjectRepository(session).create("dup", description="first")
    with pytest.raises(AlreadyExistsError), pg.session() as session:
        ProjectRepository(session).create("dup", description="second")
    with pg.session(write=False) as session:
        assert ProjectRepository(session).get("dup").description == "first"


def test_audit_log_on_postgres(pg: Database) -> None:
    """Audit rows get increasing ids and redacted JSON details."""
    record_event(pg, "entity_created", {"entity": "project", "password": "hunter2"})
    record_event(pg, "entity_deleted", {"entity": "project"})
    events = list_events(pg)
    assert [e["event_type"] for e in events] == ["entity_deleted", "entity_created"]
    assert events[0]["id"] > events[1]["id"]
    assert "hunter2" not in str(events[1]["details"])


def test_lock_timeout_raises_database_locked_error(postgres_url: str) -> None:
    """A table lock held past the busy timeout becomes DatabaseLockedError."""
    holder = Database(postgres_url)
    quick = Database(postgres_url, busy_timeout=0.2)
    holder.migrate()
    try:
        with holder.engine.connect() as connection, connection.begin():
            connection.execute(text("LOCK TABLE projects IN ACCESS EXCLUSIVE MODE"))
            with (
                pytest.raises(DatabaseLockedError, match="locked by another process"),
                quick.session() as session,
            ):
                ProjectRepository(session).create("blocked")
    finally:
        holder.dispose()
        quick.dispose()


def test_concurrent_first_use_migrates_once(postgres_url: str) -> None:
    """Handles racing to migrate a fresh database serialise on the advisory lock."""
    handles = [Database(postgres_url, busy_timeout=10.0) for _ in range(4)]
    errors: list[BaseException] = []

    def use(database: Database) -> None:
        try:
            database.migrate()
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=use, args=(h,)) for h in handles]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    try:
        assert errors == []
        assert all(h.schema_version() == head_revision() for h in handles)
    finally:
        for handle in handles:
            handle.dispose()


def test_unreachable_server_is_a_one_line_database_error() -> None:
    """A server that is not there is a DatabaseError naming the URL without its password."""
    database = Database("postgresql+psycopg://me:hunter2@127.0.0.1:1/none", busy_timeout=1.0)
    with pytest.raises(DatabaseError) as caught:
        database.migrate()
    assert caught.value.message.startswith(
        "cannot connect to database postgresql+psycopg://me:***@"
    )
    assert "hunter2" not in caught.value.message
    assert "\n" not in caught.value.message
    report = database.check()
    assert report["ok"] is False and "cannot connect" in report["error"]
