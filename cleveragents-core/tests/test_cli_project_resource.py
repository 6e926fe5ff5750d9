"""``cleveragents project`` and ``cleveragents resource`` through the installed console script."""

from __future__ import annotations

import json
import shutil
import sqlite3
import subprocess
import sys
import textwrap
import time
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from typing import Any

import pytest

from cleveragents.storage.database import Database, head_revision

TIMEOUT_S = 60


def _executable() -> str:
    beside = Path(sys.executable).with_name("cleveragents")
    found = str(beside) if beside.exists() else shutil.which("cleveragents")
    if found is None:
        pytest.skip("the cleveragents console script is not installed")
    return found


RECORDER_PLUGIN = '''
"""Test plugin: records resource events in $CA_TEST_EVENTS; fails when $CA_TEST_FAIL is set."""

import json
import os

from cleveragents import hookimpl


def _record(event, **data):
    with open(os.environ["CA_TEST_EVENTS"], "a") as out:
        out.write(json.dumps({"event": event, **data}) + "\\n")
    if os.environ.get("CA_TEST_FAIL"):
        raise RuntimeError(f"{event} exploded\\nsecond line")


@hookimpl
def cleveragents_resource_added(resource, project, app):
    _record("added", resource_id=resource.resource_id, name=resource.name, project=project)


@hookimpl
def cleveragents_resource_removed(resource, app):
    _record("removed", resource_id=resource.resource_id, name=resource.name)
'''


@dataclass
class CLI:
    """Runs ``cleveragents`` in a subprocess with a private ``CLEVERAGENTS_HOME``."""

    executable: str
    home: Path
    cwd: Path
    env: dict[str, str]

    @property
    def db_path(self) -> Path:
        return self.home / "cleveragents.db"

    def __call__(
        self, *args: str, input: str | None = None, env: dict[str, str] | None = None
    ) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [self.executable, *args],
            cwd=self.cwd,
            env={**self.env, **(env or {})},
            input=input,
            capture_output=True,
            text=True,
            timeout=TIMEOUT_S,
            check=False,
        )

    def ok(self, *args: str, **kwargs: Any) -> subprocess.CompletedProcess[str]:
        done = self(*args, **kwargs)
        assert done.returncode == 0, f"{args}: {done.stderr}"
        return done

    def json(self, *args: str) -> Any:
        return json.loads(self.ok(*args, "--json").stdout)

    def fails(self, *args: str, prefix: str) -> str:
        """Run a command that must fail with one error line starting with ``prefix``."""
        done = self(*args)
        assert done.returncode != 0
        lines = done.stderr.strip().splitlines()
        assert len(lines) == 1, done.stderr
        assert lines[0].startswith(prefix), lines[0]
        assert "Traceback" not in done.stderr
        return lines[0]

    def audit(self) -> list[tuple[str, str | None, dict[str, Any]]]:
        with sqlite3.connect(self.db_path) as connection:
            rows = connection.execute(
                "SELECT event_type, project_name, details FROM audit_log ORDER BY id"
            ).fetchall()
        return [(event, project, json.loads(details)) for event, project, details in rows]

    def events(self) -> list[dict[str, Any]]:
        path = Path(self.env["CA_TEST_EVENTS"])
        if not path.exists():
            return []
        return [json.loads(line) for line in path.read_text().splitlines()]


@pytest.fixture
def cli(tmp_path: Path) -> CLI:
    plugin_dir = tmp_path / "plugin-site"
    dist_info = plugin_dir / "ca_test_recorder-0.1.dist-info"
    dist_info.mkdir(parents=True)
    (plugin_dir / "ca_test_recorder.py").write_text(textwrap.dedent(RECORDER_PLUGIN))
    (dist_info / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: ca-test-recorder\nVersion: 0.1\n"
    )
    (dist_info / "entry_points.txt").write_text("[cleveragents]\nrecorder = ca_test_recorder\n")
    # Other installed plugins (the indexer …) are kept out: these tests are about core.
    others = sorted({ep.name for ep in metadata.entry_points(group="cleveragents")})
    work = tmp_path / "work"
    work.mkdir()
    env = {
        "PATH": str(Path(sys.executable).parent) + ":/usr/bin:/bin",
        "HOME": str(tmp_path),
        "CLEVERAGENTS_HOME": str(tmp_path / "home"),
        "CLEVERAGENTS_DISABLE_PLUGINS": ",".join(others),
        "PYTHONPATH": str(plugin_dir),
        "CA_TEST_EVENTS": str(tmp_path / "events.jsonl"),
        "LC_ALL": "C.UTF-8",
    }
    return CLI(_executable(), tmp_path / "home", work, env)


def git_checkout(path: Path) -> str:
    """A real git repository with one commit; returns the commit id."""
    path.mkdir(parents=True)
    (path / "README.md").write_text("hello\n")

    def git(*args: str) -> str:
        return subprocess.run(
            ["git", "-C", str(path), *args], check=True, capture_output=True, text=True
        ).stdout.strip()

    git("init", "-q", "-b", "main")
    git("add", "README.md")
    git("-c", "user.name=Test", "-c", "user.email=test@example.com", "commit", "-q", "-m", "init")
    return git("rev-parse", "HEAD")


# -- projects ------------------------------------------------------------------------------


def test_project_create_list_show_delete(cli: CLI) -> None:
    """The project life cycle, with table, record and JSON output."""
    assert (
        "Created project local/api-service"
        in cli.ok("project", "create", "local/api-service", "--description", "The API").stdout
    )
    cli.ok("project", "create", "scratch")
    table = cli.ok("project", "list").stdout.splitlines()
    assert table[0].split() == ["NAME", "RESOURCES", "CREATED", "DESCRIPTION"]
    assert [line.split()[0] for line in table[1:]] == ["local/api-service", "scratch"]
    shown = cli.ok("project", "show", "local/api-service").stdout
    assert "The API" in shown and "local/api-service" in shown
    assert cli.ok("project", "delete", "scratch", "--yes").stdout.startswith(
        "Deleted project scratch"
    )
    assert [p["name"] for p in cli.json("project", "list")] == ["local/api-service"]
    cli.fails("project", "show", "scratch", prefix="Error [404] NOT_FOUND: project 'scratch'")
    assert [(e, p) for e, p, _ in cli.audit()] == [
        ("entity_created", "local/api-service"),
        ("entity_created", "scratch"),
        ("entity_deleted", "scratch"),
    ]


def test_empty_project_list(cli: CLI) -> None:
    """An empty installation lists no projects, as a hint or as ``[]``."""
    assert "No projects" in cli.ok("project", "list").stdout
    assert cli.json("project", "list") == []


def test_duplicate_project_fails_and_changes_nothing(cli: CLI) -> None:
    """A second create of the same name is a one-line 409 and leaves the database as it was."""
    cli.ok("project", "create", "api", "--description", "first")
    before = (cli.json("project", "list"), cli.audit())
    line = cli.fails("project", "create", "api", "--description", "second", prefix="Error [409]")
    assert line == "Error [409] ALREADY_EXISTS: project 'api' already exists"
    assert (cli.json("project", "list"), cli.audit()) == before


@pytest.mark.parametrize("name", ["", "has space", "a/b/c", "-x"])
def test_invalid_project_name_is_rejected(cli: CLI, name: str) -> None:
    """Malformed names fail validation before the database is even created."""
    cli.fails("project", "create", "--", name, prefix="Error [422] VALIDATION_FAILED: project name")
    assert not cli.db_path.exists()


def test_project_delete_asks_first(cli: CLI) -> None:
    """Without --yes, answering no keeps the project."""
    cli.ok("project", "create", "keep")
    done = cli("project", "delete", "keep", input="n\n")
    assert done.returncode != 0
    assert [p["name"] for p in cli.json("project", "list")] == ["keep"]
    cli.ok("project", "delete", "keep", input="y\n")
    assert cli.json("project", "list") == []


# -- resources -----------------------------------------------------------------------------


def test_resource_add_directory_and_json_shape(cli: CLI, tmp_path: Path) -> None:
    """A plain folder becomes a filesystem/directory resource at its resolved path."""
    folder = tmp_path / "docs"
    folder.mkdir()
    (tmp_path / "link").symlink_to(folder)
    added = cli.json("resource", "add", str(tmp_path / "link"), "--name", "docs")
    assert added["name"] == "docs"
    assert added["resource_type_name"] == "filesystem/directory"
    assert added["classification"] == "physical"
    assert added["location"] == str(folder.resolve())
    assert added["projects"] == []
    assert len(added["resource_id"]) == 26
    (listed,) = cli.json("resource", "list")
    assert set(listed) >= {
        "resource_id",
        "name",
        "resource_type_name",
        "classification",
        "description",
        "location",
        "properties",
        "content_hash",
        "sandbox_strategy",
        "created_at",
        "updated_at",
        "projects",
    }
    assert listed["resource_id"] == added["resource_id"]
    shown = cli.json("resource", "show", added["resource_id"])
    assert shown["name"] == "docs" and shown["children"] == [] and shown["parents"] == []
    assert cli.audit()[-1][0] == "entity_created"


def test_resource_add_detects_git_checkout(cli: CLI, tmp_path: Path) -> None:
    """A folder with .git is a git/checkout; its HEAD commit and branch are recorded."""
    commit = git_checkout(tmp_path / "repo")
    added = cli.json("resource", "add", str(tmp_path / "repo"))
    assert added["name"] == "repo"
    assert added["resource_type_name"] == "git/checkout"
    assert added["properties"] == {"vcs": "git", "head_commit": commit, "branch": "main"}
    shown = cli.ok("resource", "show", "repo").stdout
    assert commit in shown and "git/checkout" in shown


def test_resource_add_nonexistent_path_changes_nothing(cli: CLI, tmp_path: Path) -> None:
    """A missing path is a one-line validation error and stores nothing."""
    missing = tmp_path / "nowhere"
    line = cli.fails("resource", "add", str(missing), prefix="Error [422] VALIDATION_FAILED")
    assert line.endswith(f"path does not exist: {missing}")
    assert not cli.db_path.exists()
    assert cli.json("resource", "list") == []


def test_resource_add_rejects_wrong_type_and_files(cli: CLI, tmp_path: Path) -> None:
    """--type git/checkout needs a .git; a regular file is not a resource root."""
    (tmp_path / "plain").mkdir()
    (tmp_path / "file.txt").write_text("x")
    cli.fails(
        "resource",
        "add",
        str(tmp_path / "plain"),
        "--type",
        "git/checkout",
        prefix="Error [422] VALIDATION_FAILED: not a git checkout",
    )
    cli.fails(
        "resource",
        "add",
        str(tmp_path / "file.txt"),
        prefix="Error [422] VALIDATION_FAILED: not a directory",
    )
    assert cli.json("resource", "list") == []


def test_resource_add_twice_is_already_exists(cli: CLI, tmp_path: Path) -> None:
    """The same location or the same name cannot be registered twice."""
    (tmp_path / "a").mkdir()
    (tmp_path / "b" / "a").mkdir(parents=True)
    cli.ok("resource", "add", str(tmp_path / "a"))
    cli.fails("resource", "add", str(tmp_path / "a"), "--name", "other", prefix="Error [409]")
    line = cli.fails("resource", "add", str(tmp_path / "b" / "a"), prefix="Error [409]")
    assert "resource 'a' already exists" in line
    assert len(cli.json("resource", "list")) == 1


def test_resource_add_into_missing_project_changes_nothing(cli: CLI, tmp_path: Path) -> None:
    """--project naming no project is a 404 and the resource is not stored."""
    (tmp_path / "src").mkdir()
    cli.ok("project", "create", "real")
    cli.fails(
        "resource",
        "add",
        str(tmp_path / "src"),
        "--project",
        "ghost",
        prefix="Error [404] NOT_FOUND: project 'ghost'",
    )
    assert cli.json("resource", "list") == []


def test_resource_add_with_project_and_link_resource(cli: CLI, tmp_path: Path) -> None:
    """Resources join projects on add or later with link-resource (optionally read-only)."""
    git_checkout(tmp_path / "api")
    (tmp_path / "shared").mkdir()
    cli.ok("project", "create", "local/api-service")
    cli.ok("project", "create", "other")
    added = cli.json("resource", "add", str(tmp_path / "api"), "--project", "local/api-service")
    assert added["projects"] == [{"project": "local/api-service", "read_only": False}]
    cli.ok("resource", "add", str(tmp_path / "shared"))
    linked = cli.ok("project", "link-resource", "local/api-service", "shared", "--read-only")
    assert "read-only" in linked.stdout
    cli.ok("project", "link-resource", "other", added["resource_id"])
    cli.fails(
        "project",
        "link-resource",
        "other",
        "api",
        prefix="Error [409] ALREADY_EXISTS: resource 'api' is already linked",
    )

    project = cli.json("project", "show", "local/api-service")
    assert set(project) >= {"name", "description", "properties", "created_at", "resources"}
    assert {(r["name"], r["read_only"]) for r in project["resources"]} == {
        ("api", False),
        ("shared", True),
    }
    assert set(project["resources"][0]) == {
        "resource_id",
        "name",
        "resource_type_name",
        "location",
        "read_only",
    }
    counts = {p["name"]: p["resource_count"] for p in cli.json("project", "list")}
    assert counts == {"local/api-service": 2, "other": 1}
    assert [r["name"] for r in cli.json("resource", "list", "--project", "other")] == ["api"]
    table = cli.ok("resource", "list").stdout
    assert "shared" in table and "local/api-service (read-only)" in table

    assert [(e["event"], e["name"], e["project"]) for e in cli.events()] == [
        ("added", "api", "local/api-service"),
        ("added", "shared", None),
        ("added", "shared", "local/api-service"),
        ("added", "api", "other"),
    ]


def test_project_delete_unlinks_but_keeps_resources(cli: CLI, tmp_path: Path) -> None:
    """Deleting a project audits entity_deleted and leaves its resources registered."""
    (tmp_path / "src").mkdir()
    cli.ok("project", "create", "p")
    added = cli.json("resource", "add", str(tmp_path / "src"), "--project", "p")
    assert "unlinked 1 resource" in cli.ok("project", "delete", "p", "--yes").stdout
    (remaining,) = cli.json("resource", "list")
    assert remaining["resource_id"] == added["resource_id"] and remaining["projects"] == []
    event, project, details = cli.audit()[-1]
    assert (event, project) == ("entity_deleted", "p")
    assert details["unlinked_resources"] == [added["resource_id"]]


def test_resource_remove(cli: CLI, tmp_path: Path) -> None:
    """Removing a resource unlinks it, audits it, and tells the plugins."""
    (tmp_path / "src").mkdir()
    cli.ok("project", "create", "p")
    added = cli.json("resource", "add", str(tmp_path / "src"), "--project", "p")
    assert cli("resource", "remove", "src", input="n\n").returncode != 0
    assert len(cli.json("resource", "list")) == 1
    assert "Removed resource src" in cli.ok("resource", "remove", "src", "--yes").stdout
    assert cli.json("resource", "list") == []
    assert cli.json("project", "show", "p")["resources"] == []
    assert (tmp_path / "src").is_dir()
    event, _, details = cli.audit()[-1]
    assert event == "entity_deleted" and details["resource_id"] == added["resource_id"]
    assert cli.events()[-1] == {
        "event": "removed",
        "resource_id": added["resource_id"],
        "name": "src",
    }
    cli.fails("resource", "remove", "src", "--yes", prefix="Error [404] NOT_FOUND: resource 'src'")


def test_plugin_failure_is_a_warning_and_the_resource_stays(cli: CLI, tmp_path: Path) -> None:
    """A plugin raising in resource_added prints one warning line; the command succeeds."""
    (tmp_path / "src").mkdir()
    done = cli.ok("resource", "add", str(tmp_path / "src"), env={"CA_TEST_FAIL": "1"})
    assert done.stderr.strip() == (
        "warning: plugin recorder failed on resource added: added exploded"
    )
    assert [r["name"] for r in cli.json("resource", "list")] == ["src"]
    removed = cli.ok("resource", "remove", "src", "--yes", env={"CA_TEST_FAIL": "1"})
    assert "warning: plugin recorder failed on resource removed" in removed.stderr
    assert cli.json("resource", "list") == []


# -- the database underneath -----------------------------------------------------------------


def test_migrations_applied_on_first_use(cli: CLI) -> None:
    """The first command creates the database in WAL mode at the head schema revision."""
    assert not cli.db_path.exists()
    cli.ok("project", "list")
    with sqlite3.connect(cli.db_path) as connection:
        assert connection.execute("SELECT version_num FROM alembic_version").fetchone() == (
            head_revision(),
        )
        assert connection.execute("PRAGMA journal_mode").fetchone() == ("wal",)
    database = Database.for_sqlite_file(cli.db_path)
    assert database.schema_version() == head_revision()
    assert database.check()["up_to_date"] is True
    database.dispose()


def test_locked_database_is_a_one_line_error(cli: CLI) -> None:
    """A writer blocked past the busy timeout fails fast with DATABASE_LOCKED; reads still work."""
    cli.ok("project", "create", "first")
    holder = sqlite3.connect(cli.db_path, isolation_level=None)
    holder.execute("BEGIN EXCLUSIVE")
    try:
        started = time.monotonic()
        done = cli(
            "project", "create", "second", env={"CLEVERAGENTS_CORE__DATABASE_BUSY_TIMEOUT": "0.2"}
        )
        elapsed = time.monotonic() - started
        assert done.returncode != 0
        assert done.stderr.strip() == (
            f"Error [523] DATABASE_LOCKED: database is locked by another process: {cli.db_path}"
        )
        assert elapsed < 4.5, "the busy timeout from the environment was not applied"
        assert [p["name"] for p in cli.json("project", "list")] == ["first"]
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    assert [p["name"] for p in cli.json("project", "list")] == ["first"]
