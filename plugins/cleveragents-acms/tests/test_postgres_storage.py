"""ACMS's tables on a real PostgreSQL server (started for this test session), as a team
that keeps CleverAgents' database on PostgreSQL runs them."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy import text

import cleveragents
from cleveragents.config import load_config
from cleveragents.plugins import PluginHost
from cleveragents.storage.database import Database
from cleveragents_acms.indexing.service import RepoIndexingService
from cleveragents_acms.indexing.tables import ensure_tables

RESOURCE = "01JP0000000000000000000000"


@pytest.fixture
def pg(postgres_url: str) -> Iterator[Database]:
    database = Database(postgres_url)
    yield database
    database.dispose()


def test_acms_tables_match_their_migrations(pg: Database) -> None:
    """ACMS's migrations (its own version table) build exactly the tables its code uses."""
    from alembic.autogenerate import compare_metadata
    from alembic.runtime.migration import MigrationContext

    from cleveragents_acms.indexing.tables import metadata

    ensure_tables(pg)
    ours = {table.name for table in metadata.sorted_tables}

    def acms_only(obj: object, name: str | None, kind: str, *_: object) -> bool:
        # core's tables share the database; core's own test compares them
        return kind != "table" or name in ours

    with pg.engine.connect() as connection:
        options = {"compare_type": True, "include_object": acms_only}
        context = MigrationContext.configure(connection, opts=options)
        assert compare_metadata(context, metadata) == []
        columns = {
            row[0]
            for row in connection.execute(
                text(
                    "SELECT column_name FROM information_schema.columns "
                    "WHERE table_name = 'repo_indexes'"
                )
            )
        }
    assert {"analyzers", "worker_pid", "status"} <= columns


def test_index_and_refresh_on_postgresql(
    pg: Database, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A full index, its status and a no-change refresh, with the status rows on PostgreSQL."""
    monkeypatch.setenv("CLEVERAGENTS_HOME", str(tmp_path / "home"))
    root = tmp_path / "repo"
    shutil.copytree(
        Path(cleveragents.__file__).parent / "storage",
        root / "storage",
        ignore=shutil.ignore_patterns("__pycache__"),
    )
    service = RepoIndexingService(
        pg, PluginHost.load(env={}).registry, load_config(cwd=tmp_path, env={}), workers=1
    )
    first = service.index_resource(RESOURCE, root, project="pg-demo")
    assert first.metadata.status == "ready" and first.metadata.file_count > 5
    assert first.metadata.analyzers and "python@" in first.metadata.analyzers
    again = service.refresh_index(RESOURCE, root)
    assert again.run is not None and again.run.files_analyzed == 0
    status = service.get_index_status(RESOURCE, "pg-demo")
    assert status is not None and status.node_count == first.metadata.node_count
