"""The storage layer on SQLite: migrations, sessions, repositories, audit, errors."""

from __future__ import annotations

import ast
import sqlite3
import threading
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from hypothesis import example, given
from hypothesis import strategies as st
from sqlalchemy import text

from cleveragents.errors import (
    AlreadyExistsError,
    BusinessRuleViolation,
    ConfigurationError,
    DatabaseError,
    DatabaseLockedError,
    NotFoundError,
    ValidationError,
)
from cleveragents.models import (
    Project,
    Resource,
    check_name,
    is_ulid,
    new_ulid,
    parse_instant,
    utcnow,
)
from cleveragents.storage.audit import add_audit_row, list_events, record_event
from cleveragents.storage.database import MIGRATIONS_DIR, Database, head_revision, known_revisions
from cleveragents.storage.repositories import ProjectRepository, ResourceRepository


class StandInConfig:
    """The one method of ``cleveragents.config.Config`` that storage uses."""

    def __init__(self, values: dict[str, Any]) -> None:
        self.values = values

    def get(self, key: str, default: Any = None) -> Any:
        return self.values.get(key, default)


@pytest.fixture
def db(tmp_path: Path) -> Iterator[Database]:
    database = Database.for_sqlite_file(tmp_path / "data" / "cleveragents.db", busy_timeout=1.0)
    yield database
    database.dispose()


def directory(name: str | None = "api", location: str = "/srv/api") -> Resource:
    return Resource(name=name, resource_type_name="filesystem/directory", location=location)


# -- database and migrations ---------------------------------------------------------------


def test_fresh_database_is_migrated_on_first_use(db: Database) -> None:
    """The first session creates the file and upgrades the schema to the head revision."""
    assert db.path is not None and not db.path.exists()
    assert db.schema_version() is None
    with db.session() as session:
        assert ProjectRepository(session).all() == []
    assert db.path.exists()
    assert db.schema_version() == head_revision()


def test_check_reports_backend_version_and_wal(db: Database) -> None:
    """``check()`` describes a missing database without creating it, then a migrated one."""
    before = db.check()
    assert before["ok"] and before["exists"] is False and before["schema_version"] is None
    assert db.path is not None and not db.path.exists()
    db.migrate()
    report = db.check()
    assert report["ok"] and report["error"] is None
    assert report["backend"] == "sqlite"
    assert report["path"] == str(db.path)
    assert report["schema_version"] == report["head_revision"] == head_revision()
    assert report["up_to_date"] is True
    assert report["journal_mode"] == "wal"


def test_sqlite_connections_enforce_foreign_keys_and_busy_timeout(db: Database) -> None:
    """Every pooled connection has foreign keys on, WAL, and the configured busy timeout."""
    with db.session() as session:
        conn = session.connection()
        assert conn.exec_driver_sql("PRAGMA foreign_keys").scalar() == 1
        assert conn.exec_driver_sql("PRAGMA journal_mode").scalar() == "wal"
        assert conn.exec_driver_sql("PRAGMA busy_timeout").scalar() == 1000


def test_head_revision_agrees_with_alembic() -> None:
    """The file-name shortcut for the head revision matches Alembic's own view."""
    from alembic.config import Config
    from alembic.script import ScriptDirectory

    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS_DIR))
    scripts = ScriptDirectory.from_config(config)
    assert scripts.get_heads() == [head_revision()]
    chain = [script.revision for script in reversed(list(scripts.walk_revisions()))]
    assert chain == known_revisions()


def test_migrations_never_drop_anything_on_upgrade() -> None:
    """No ``upgrade()`` calls a drop operation: migrations only add to the schema."""
    for path in sorted((MIGRATIONS_DIR / "versions").glob("*.py")):
        tree = ast.parse(path.read_text())
        upgrade = next(
            n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "upgrade"
        )
        calls = {
            node.func.attr
            for node in ast.walk(upgrade)
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
        }
        assert not {c for c in calls if c.startswith("drop") or c == "execute"}, path.name


def test_tables_match_the_migrated_schema(db: Database) -> None:
    """The SQLModel tables describe exactly what the migrations build."""
    from alembic.autogenerate import compare_metadata
    from alembic.runtime.migration import MigrationContext

    from cleveragents.storage.tables import metadata

    db.migrate()
    with db.engine.connect() as connection:
        context = MigrationContext.configure(connection, opts={"compare_type": True})
        assert compare_metadata(context, metadata) == []


def test_migrating_twice_is_a_no_op(db: Database) -> None:
    """A second handle on a migrated database keeps its data and revision."""
    with db.session() as session:
        ProjectRepository(session).create("keep")
    again = Database.for_sqlite_file(db.path or "", busy_timeout=1.0)
    try:
        assert again.migrate() == head_revision()
        with again.session(write=False) as session:
            assert [p.name for p in ProjectRepository(session).all()] == ["keep"]
    finally:
        again.dispose()


def test_concurrent_first_use_migrates_once(tmp_path: Path) -> None:
    """Several handles racing on a fresh file all end up on the head revision."""
    path = tmp_path / "race.db"
    errors: list[BaseException] = []
    handles = [Database.for_sqlite_file(path, busy_timeout=10.0) for _ in range(4)]

    def use(database: Database, index: int) -> None:
        try:
            with database.session() as session:
                ProjectRepository(session).create(f"p{index}")
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=use, args=(h, i)) for i, h in enumerate(handles)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    for handle in handles:
        handle.dispose()
    assert errors == []
    check = Database.for_sqlite_file(path)
    with check.session(write=False) as session:
        assert len(ProjectRepository(session).all()) == 4
    assert check.schema_version() == head_revision()
    check.dispose()


def test_newer_schema_is_refused(db: Database) -> None:
    """A database written by a newer release is reported, not downgraded or clobbered."""
    db.migrate()
    with db.engine.begin() as connection:
        connection.execute(text("UPDATE alembic_version SET version_num = '9999'"))
    newcomer = Database.for_sqlite_file(db.path or "")
    with pytest.raises(DatabaseError, match="9999 is newer"):
        newcomer.migrate()
    newcomer.dispose()


def test_from_config_defaults_to_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Without ``core.database-url`` the database is ``$CLEVERAGENTS_HOME/cleveragents.db``."""
    home = tmp_path / "home"
    monkeypatch.setenv("CLEVERAGENTS_HOME", str(home))
    database = Database.from_config(StandInConfig({"core.database-busy-timeout": "0.5"}))
    assert database.path == home / "cleveragents.db"
    assert database.busy_timeout == 0.5
    assert not home.exists()
    with database.session() as session:
        ProjectRepository(session).create("p")
    assert (home / "cleveragents.db").is_file()
    database.dispose()


def test_from_config_uses_the_url(tmp_path: Path) -> None:
    """``core.database-url`` wins over the default location; the timeout defaults to 5 s."""
    url = f"sqlite:///{tmp_path / 'elsewhere.db'}"
    database = Database.from_config(StandInConfig({"core.database-url": url}))
    assert database.path == tmp_path / "elsewhere.db"
    assert database.busy_timeout == 5.0
    assert database.backend == "sqlite"


@pytest.mark.parametrize(
    "values",
    [{"core.database-busy-timeout": "soon"}, {"core.database-url": "not a url"}],
)
def test_bad_configuration_is_a_configuration_error(values: dict[str, Any]) -> None:
    """A malformed URL or timeout is reported as configuration, before any connection."""
    with pytest.raises(ConfigurationError):
        Database.from_config(StandInConfig(values))


def test_password_is_masked(tmp_path: Path) -> None:
    """The URL shown in diagnostics and messages never contains the password."""
    database = Database("postgresql+psycopg://me:hunter2@db.example:5432/agents")
    assert "hunter2" not in database.safe_url
    assert "hunter2" not in repr(database)
    assert database.backend == "postgresql" and database.path is None


# -- sessions and errors -------------------------------------------------------------------


def test_session_rolls_back_on_error(db: Database) -> None:
    """An exception inside the block discards everything the block wrote."""
    with pytest.raises(RuntimeError), db.session() as session:
        ProjectRepository(session).create("ghost")
        raise RuntimeError("boom")
    with db.session(write=False) as session:
        assert ProjectRepository(session).find("ghost") is None


def test_locked_database_raises_database_locked_error(db: Database) -> None:
    """A write lock held by another connection past the busy timeout is a clear error."""
    db.migrate()
    quick = Database.for_sqlite_file(db.path or "", busy_timeout=0.1)
    holder = sqlite3.connect(str(db.path), isolation_level=None)
    holder.execute("BEGIN EXCLUSIVE")
    try:
        with pytest.raises(DatabaseLockedError) as caught, quick.session() as session:
            ProjectRepository(session).create("blocked")
        assert caught.value.message == f"database is locked by another process: {db.path}"
    finally:
        holder.execute("ROLLBACK")
        holder.close()
        quick.dispose()
    with db.session(write=False) as session:
        assert ProjectRepository(session).find("blocked") is None


def test_reads_are_not_blocked_by_a_writer(db: Database) -> None:
    """WAL lets a read-only session proceed while another process holds the write lock."""
    with db.session() as session:
        ProjectRepository(session).create("visible")
    holder = sqlite3.connect(str(db.path), isolation_level=None)
    holder.execute("BEGIN EXCLUSIVE")
    try:
        with db.session(write=False) as session:
            assert [p.name for p in ProjectRepository(session).all()] == ["visible"]
    finally:
        holder.execute("ROLLBACK")
        holder.close()


def test_sql_errors_become_database_errors(db: Database) -> None:
    """Any other SQLAlchemy failure surfaces as a one-line DatabaseError."""
    with pytest.raises(DatabaseError) as caught, db.session() as session:
        session.connection().execute(text("SELECT * FROM no_such_table"))
    assert not isinstance(caught.value, DatabaseLockedError)
    assert "no such table: no_such_table" in caught.value.message
    assert "\n" not in caught.value.message


def test_unusable_database_folder_is_a_database_error(tmp_path: Path) -> None:
    """A database path under a regular file fails with DatabaseError, not OSError."""
    blocker = tmp_path / "file"
    blocker.write_text("")
    database = Database.for_sqlite_file(blocker / "cleveragents.db")
    with pytest.raises(DatabaseError, match="cannot"):
        database.migrate()


# -- projects ------------------------------------------------------------------------------


def test_project_create_get_list_delete(db: Database) -> None:
    """Projects round-trip with their fields and aware UTC timestamps."""
    with db.session() as session:
        projects = ProjectRepository(session)
        created = projects.create("local/api-service", description="The API")
        projects.create("myproj")
    with db.session(write=False) as session:
        projects = ProjectRepository(session)
        fetched = projects.get("local/api-service")
        assert [p.name for p in projects.all()] == ["local/api-service", "myproj"]
    assert fetched == created
    assert fetched.namespace == "local"
    assert fetched.created_at.tzinfo is UTC
    with db.session() as session:
        ProjectRepository(session).delete("myproj")
    with (
        db.session(write=False) as session,
        pytest.raises(NotFoundError, match="project 'myproj' not found"),
    ):
        ProjectRepository(session).get("myproj")


def test_duplicate_project_is_already_exists(db: Database) -> None:
    """Creating a project twice raises AlreadyExistsError and keeps the first one."""
    with db.session() as session:
        ProjectRepository(session).create("dup", description="first")
    with (
        pytest.raises(AlreadyExistsError, match="project 'dup' already exists"),
        db.session() as session,
    ):
        ProjectRepository(session).create("dup", description="second")
    with db.session(write=False) as session:
        assert ProjectRepository(session).get("dup").description == "first"


@pytest.mark.parametrize("name", ["", "  ", "a b", "/x", "x/", "a/b/c", "-lead", "x" * 201, "ü"])
def test_invalid_names_are_validation_errors(db: Database, name: str) -> None:
    """Empty and malformed names are refused before anything is written."""
    with pytest.raises(ValidationError), db.session() as session:
        ProjectRepository(session).create(name)
    with db.session(write=False) as session:
        assert ProjectRepository(session).all() == []


_SEGMENT = st.from_regex(r"\A[A-Za-z0-9][A-Za-z0-9._-]{0,30}\Z")


@given(namespace=st.none() | _SEGMENT, segment=_SEGMENT)
def test_valid_names_are_accepted(namespace: str | None, segment: str) -> None:
    """Every one- or two-segment name of allowed characters is a valid project name."""
    name = segment if namespace is None else f"{namespace}/{segment}"
    assert check_name("project", name) == name
    assert Project(name=name).name == name


@given(st.text(min_size=1, max_size=20).filter(lambda s: any(c.isspace() for c in s)))
@example("0\n")  # a final newline: a regular expression's "$" matches just before it
def test_names_with_whitespace_are_rejected(name: str) -> None:
    """No name containing whitespace passes validation."""
    with pytest.raises(ValidationError):
        check_name("resource", name)


# -- resources -----------------------------------------------------------------------------


def test_resource_add_and_find_by_name_or_id(db: Database) -> None:
    """A resource is found by name and by ULID (in any letter case)."""
    with db.session() as session:
        stored = ResourceRepository(session).add(directory())
    with db.session(write=False) as session:
        resources = ResourceRepository(session)
        assert resources.get("api") == stored
        assert resources.get(stored.resource_id) == stored
        assert resources.get(stored.resource_id.lower()) == stored
        assert resources.find_by_location("/srv/api") == [stored]
        assert resources.find("nope") is None
        with pytest.raises(NotFoundError):
            resources.get("nope")
    assert is_ulid(stored.resource_id)
    assert stored.created_at.tzinfo is UTC


def test_resource_name_is_unique_but_unnamed_resources_are_not(db: Database) -> None:
    """The partial unique index allows any number of unnamed (discovered) resources."""
    with db.session() as session:
        resources = ResourceRepository(session)
        resources.add(directory())
        resources.add(directory(None, "/srv/a"))
        resources.add(directory(None, "/srv/b"))
    with (
        pytest.raises(AlreadyExistsError, match="resource 'api' already exists"),
        db.session() as session,
    ):
        ResourceRepository(session).add(directory(location="/elsewhere"))
    with db.session(write=False) as session:
        assert len(ResourceRepository(session).all()) == 3


def test_project_linkage_and_project_delete_unlinks(db: Database) -> None:
    """Deleting a project removes its links but leaves the resources."""
    with db.session() as session:
        ProjectRepository(session).create("p1")
        ProjectRepository(session).create("p2")
        resources = ResourceRepository(session)
        api = resources.add(directory())
        resources.link_to_project("p1", "api", read_only=True)
        resources.link_to_project("p2", api.resource_id)
        with pytest.raises(AlreadyExistsError, match="already linked"):
            resources.link_to_project("p1", "api")
    with db.session(write=False) as session:
        resources = ResourceRepository(session)
        assert [r.name for r in resources.all(project="p1")] == ["api"]
        links = resources.projects_of(api.resource_id)
        assert [(link.project_name, link.read_only) for link in links] == [
            ("p1", True),
            ("p2", False),
        ]
        assert ProjectRepository(session).resource_counts() == {"p1": 1, "p2": 1}
    with db.session() as session:
        unlinked = ProjectRepository(session).delete("p1")
    assert [link.resource_id for link in unlinked] == [api.resource_id]
    with db.session(write=False) as session:
        resources = ResourceRepository(session)
        assert resources.get("api") == api
        assert [link.project_name for link in resources.projects_of(api.resource_id)] == ["p2"]


def test_linking_needs_existing_project_and_resource(db: Database) -> None:
    """Linking to a missing project or resource is NotFoundError."""
    with db.session() as session:
        ResourceRepository(session).add(directory())
        ProjectRepository(session).create("p")
    with db.session() as session:
        with pytest.raises(NotFoundError, match="project 'nope'"):
            ResourceRepository(session).link_to_project("nope", "api")
        with pytest.raises(NotFoundError, match="resource 'nope'"):
            ResourceRepository(session).link_to_project("p", "nope")


def test_resource_dag_links_and_cycles(db: Database) -> None:
    """Links form a DAG: descendants are found and cycles are refused."""
    with db.session() as session:
        resources = ResourceRepository(session)
        root = resources.add(directory("root", "/r"))
        mid = resources.add(directory("mid", "/r/m"))
        leaf = resources.add(directory(None, "/r/m/l"))
        resources.link(root.resource_id, mid.resource_id)
        resources.link(mid.resource_id, leaf.resource_id, "references")
        with pytest.raises(BusinessRuleViolation, match="cycle"):
            resources.link(leaf.resource_id, root.resource_id)
        with pytest.raises(BusinessRuleViolation, match="cycle"):
            resources.link(mid.resource_id, mid.resource_id)
        assert {r.resource_id for r in resources.descendants(root.resource_id)} == {
            mid.resource_id,
            leaf.resource_id,
        }
        assert [r.name for r in resources.parents(mid.resource_id)] == ["root"]
        assert resources.links_from(mid.resource_id)[0].link_type == "references"


def test_resource_remove_drops_links_and_unnamed_children(db: Database) -> None:
    """Removing a resource removes its links and the unnamed children only it contains."""
    with db.session() as session:
        ProjectRepository(session).create("p")
        resources = ResourceRepository(session)
        root = resources.add(directory("root", "/r"))
        named = resources.add(directory("named", "/r/n"))
        child = resources.add(directory(None, "/r/c"))
        resources.link(root.resource_id, named.resource_id)
        resources.link(root.resource_id, child.resource_id)
        resources.link_to_project("p", "root")
    with db.session() as session:
        removed = ResourceRepository(session).remove("root")
    assert [r.resource_id for r in removed] == [root.resource_id, child.resource_id]
    with db.session(write=False) as session:
        resources = ResourceRepository(session)
        assert [r.name for r in resources.all()] == ["named"]
        assert resources.parents(named.resource_id) == []
        assert resources.all(project="p") == []


def test_update_detects_concurrent_changes(db: Database) -> None:
    """Optimistic concurrency: an update based on a stale read is refused."""
    with db.session() as session:
        stored = ResourceRepository(session).add(directory())
    with db.session() as session:
        fresh = ResourceRepository(session).update(stored.model_copy(update={"description": "x"}))
    assert fresh.updated_at > stored.updated_at
    with (
        pytest.raises(BusinessRuleViolation, match="changed by someone else"),
        db.session() as session,
    ):
        ResourceRepository(session).update(stored.model_copy(update={"description": "y"}))
    with db.session(write=False) as session:
        assert ResourceRepository(session).get("api").description == "x"


def test_properties_round_trip_as_json(db: Database) -> None:
    """Nested type-specific properties survive storage unchanged."""
    properties = {"vcs": "git", "head_commit": "a" * 40, "tags": ["v1", "v2"], "n": {"x": 1.5}}
    with db.session() as session:
        ResourceRepository(session).add(
            Resource(
                name="g", resource_type_name="git/checkout", location="/g", properties=properties
            )
        )
    with db.session(write=False) as session:
        assert ResourceRepository(session).get("g").properties == properties


# -- models --------------------------------------------------------------------------------


def test_models_are_frozen_with_ulids_and_utc() -> None:
    """Domain models are immutable values with fresh ULIDs and aware UTC timestamps."""
    first, second = directory(), directory()
    assert first.resource_id != second.resource_id
    assert is_ulid(new_ulid()) and not is_ulid("not-a-ulid")
    assert utcnow().tzinfo is UTC
    with pytest.raises(Exception, match="frozen"):
        first.name = "other"  # type: ignore[misc]


def test_time_stamps_parse_as_aware_instants() -> None:
    """``Z``, an offset or none (taken as UTC) give the same instant; anything else None."""
    moment = datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)
    for stamp in ("2026-01-02T03:04:05Z", "2026-01-02T03:04:05+00:00", "2026-01-02T03:04:05"):
        assert parse_instant(stamp) == moment
    assert parse_instant("2026-01-02T04:04:05+01:00") == moment
    assert parse_instant("not a time") is None and parse_instant("") is None
    assert parse_instant(None) is None


# -- audit ---------------------------------------------------------------------------------


def test_record_event_redacts_details(db: Database) -> None:
    """Audit details are redacted before storage; columns and user identity are filled."""
    record_event(
        db,
        "entity_created",
        {"entity": "project", "api_key": "sk-live-1234567890abcdef", "path": Path("/x")},
        project_name="p",
    )
    (event,) = list_events(db, event_type="entity_created")
    assert event["project_name"] == "p"
    assert event["details"]["entity"] == "project"
    assert event["details"]["path"] == "/x"
    assert "sk-live-1234567890abcdef" not in str(event["details"])
    assert event["user_identity"]
    assert event["created_at"].tzinfo is UTC


def test_audit_row_commits_with_the_change(db: Database) -> None:
    """An audit row added in a failed transaction disappears with the change."""
    with pytest.raises(RuntimeError), db.session() as session:
        ProjectRepository(session).create("p")
        add_audit_row(session, "entity_created", {"entity": "project"}, project_name="p")
        raise RuntimeError("abort")
    assert list_events(db) == []


def test_audit_rejects_unknown_columns(db: Database) -> None:
    """A typo in an audit column name is an error, not a silently dropped value."""
    with pytest.raises(TypeError, match="projectname"):
        record_event(db, "entity_created", {}, projectname="p")
