"""The reads without the ORM give what the repositories give, on SQLite and PostgreSQL."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from datetime import UTC
from pathlib import Path

import pytest

from cleveragents.models.resources import Resource
from cleveragents.storage.database import Database
from cleveragents.storage.lookups import resource_at
from cleveragents.storage.repositories import ProjectRepository, ResourceRepository


@pytest.fixture(params=["sqlite", "postgresql"])
def database(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Database]:
    if request.param == "sqlite":
        db = Database.for_sqlite_file(tmp_path / "cleveragents.db", busy_timeout=1.0)
    else:
        db = Database(request.getfixturevalue("postgres_url"), busy_timeout=2.0)
    yield db
    db.dispose()


def test_resource_at_agrees_with_the_repositories(database: Database) -> None:
    """The first resource at a location (lowest ULID, as ``find_by_location`` orders
    them), its properties and time stamps as the ORM reads them, and the projects it is
    linked into; None where nothing is registered."""
    assert resource_at(database, "/srv/api") is None  # a fresh database is migrated first
    with database.session() as session:
        projects = ProjectRepository(session)
        projects.create("local/b")
        projects.create("local/a")
        resources = ResourceRepository(session)
        first = resources.add(
            Resource(
                name="api",
                resource_type_name="git/checkout",
                location="/srv/api",
                properties={"vcs": "git", "branches": ["main", "dev"], "depth": 3},
            )
        )
        resources.add(Resource(resource_type_name="filesystem/directory", location="/srv/api"))
        resources.add(Resource(name="other", resource_type_name="x/y", location="/srv/other"))
        resources.link_to_project("local/b", first.resource_id)
        resources.link_to_project("local/a", first.resource_id, read_only=True)
    with database.session(write=False) as session:
        resources = ResourceRepository(session)
        expected = resources.find_by_location("/srv/api")[0]
        links = [link.project_name for link in resources.projects_of(expected.resource_id)]
    found = resource_at(database, "/srv/api")
    assert found is not None
    stored, linked = found
    resource = stored.model()
    assert resource == expected and stored.resource_id == first.resource_id
    assert resource.created_at.tzinfo is UTC and resource.properties["branches"] == ["main", "dev"]
    assert linked == links == ["local/a", "local/b"]
    # Read as stored, it says what the model says, without building it.
    assert (stored.label, stored.name, stored.location) == ("api", "api", "/srv/api")
    assert stored.json() == expected.model_dump(mode="json")
    other = resource_at(database, "/srv/other")
    assert other is not None and other[0].name == "other" and other[1] == []
    unnamed = resource_at(database, "/srv/api2")
    assert unnamed is None
    with database.session() as session:
        ResourceRepository(session).add(
            Resource(resource_type_name="filesystem/directory", location="/srv/api2")
        )
    unnamed = resource_at(database, "/srv/api2")
    assert unnamed is not None
    assert unnamed[0].label == unnamed[0].model().label == unnamed[0].resource_id
    assert unnamed[0].json() == unnamed[0].model().model_dump(mode="json")
    assert resource_at(database, "/srv/none") is None


def test_a_lookup_imports_neither_the_orm_nor_postgresql_s_dialect(tmp_path: Path) -> None:
    """What an index refresh asks first costs SQLAlchemy's core alone (once the database
    is migrated: migrating reads the tables' classes), without pydantic's models."""
    migrated = Database.for_sqlite_file(tmp_path / "c.db")
    migrated.migrate()
    migrated.dispose()
    code = (
        "import sys\n"
        "from cleveragents.storage.database import Database\n"
        "from cleveragents.storage.lookups import resource_at\n"
        f"db = Database.for_sqlite_file({str(tmp_path / 'c.db')!r})\n"
        "assert resource_at(db, '/srv/none') is None\n"
        "print(sorted(m for m in ('sqlmodel', 'sqlalchemy.orm', 'cleveragents.storage.tables',"
        " 'sqlalchemy.dialects.postgresql', 'pydantic') if m in sys.modules))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"
