"""``cleveragents init`` and ``cleveragents config``, run as the installed command."""

from __future__ import annotations

import json
import re
import sqlite3
import stat
import tomllib
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from cleveragents.testing.fixtures import CliResult

SECRET = "sk-proj-abcdefghijklmnopqrstuvwxyz1234"
Run = Callable[..., CliResult]


@pytest.fixture
def work(tmp_path: Path) -> Path:
    """A working directory outside any repository, so no stray project file is found."""
    path = tmp_path / "work"
    path.mkdir()
    return path


@pytest.fixture
def cli(run_cli: Run, work: Path) -> Run:
    """``run_cli`` started in ``work`` with no ``CLEVERAGENTS_*`` configuration inherited."""

    def run(
        *args: str, env: dict[str, str | None] | None = None, cwd: Path | None = None
    ) -> CliResult:
        clean: dict[str, str | None] = {"CLEVERAGENTS_PROJECT_CONFIG": None}
        return run_cli(*args, env={**clean, **(env or {})}, cwd=cwd or work)

    return run


def _ok(result: CliResult) -> CliResult:
    assert result.exit_code == 0, str(result)
    assert "Traceback" not in result.stderr, str(result)
    return result


def _audit_rows(home: Path) -> list[tuple[str, dict[str, Any]]]:
    with sqlite3.connect(home / "cleveragents.db") as db:
        rows = db.execute("SELECT event_type, details FROM audit_log ORDER BY id").fetchall()
    return [(kind, json.loads(details)) for kind, details in rows]


def test_config_help_lists_subcommands(cli: Run) -> None:
    """``config --help`` documents get, set, unset, list and path."""
    out = _ok(cli("config", "--help")).stdout
    for name in ("get", "set", "unset", "list", "path"):
        assert name in out


# -- init ------------------------------------------------------------------------


def test_init_creates_the_layout(cli: Run, cleveragents_home: Path) -> None:
    """``init`` creates config.toml, the folders and the database, and says so."""
    out = _ok(cli("init")).stdout
    for folder in ("logs", "index/text", "index/vector", "index/graph", "cache"):
        assert (cleveragents_home / folder).is_dir()
    config_file = cleveragents_home / "config.toml"
    assert stat.S_IMODE(config_file.stat().st_mode) == 0o600
    assert f"created {config_file}" in out
    assert "created database" in out or "database: skipped" in out
    assert (cleveragents_home / "cleveragents.db").is_file()


def test_init_config_lists_every_default_commented_out(cli: Run, cleveragents_home: Path) -> None:
    """The new config.toml sets nothing, and uncommented it is exactly the defaults."""
    from cleveragents.config import DEFAULTS, load_config

    _ok(cli("init"))
    text = (cleveragents_home / "config.toml").read_text()
    assert tomllib.loads(text) == {}
    setting = re.compile(r"^# (\[[a-z.-]+\]$|[a-z-]+ = )")
    uncommented = "\n".join(line[2:] for line in text.splitlines() if setting.match(line))
    (cleveragents_home / "config.toml").write_text(uncommented)
    config = load_config(cwd=cleveragents_home, env={})
    for key, value in DEFAULTS.items():
        if value is not None:
            assert config.get(key) == value, key
            assert config.source(key).startswith("global:"), key


def test_init_is_idempotent_and_force_keeps_a_backup(cli: Run, cleveragents_home: Path) -> None:
    """A second ``init`` keeps the edited config; ``--force`` replaces it and keeps a backup."""
    _ok(cli("init"))
    config_file = cleveragents_home / "config.toml"
    config_file.write_text("[core.log]\nlevel = 'debug'\n")
    second = _ok(cli("init")).stdout
    assert "kept" in second and "up to date" in second
    assert config_file.read_text() == "[core.log]\nlevel = 'debug'\n"
    forced = _ok(cli("init", "--force")).stdout
    (backup,) = cleveragents_home.glob("config.toml.*.bak")
    assert backup.read_text() == "[core.log]\nlevel = 'debug'\n"
    assert str(backup) in forced
    assert tomllib.loads(config_file.read_text()) == {}


def test_init_replaces_a_malformed_config_with_force(cli: Run, cleveragents_home: Path) -> None:
    """A broken config.toml stops other commands but ``init --force`` repairs it."""
    (cleveragents_home / "config.toml").write_text("[core\n")
    broken = cli("config", "list")
    assert broken.exit_code == 1
    assert "Error [525] CONFIGURATION_ERROR: invalid TOML in" in broken.stderr
    assert "at line 1" in broken.stderr and "Traceback" not in broken.stderr
    _ok(cli("init", "--force"))
    _ok(cli("config", "list"))


# -- set / get / unset -------------------------------------------------------------


def test_set_prints_old_and_new_and_get_reads_it(cli: Run, cleveragents_home: Path) -> None:
    """``set`` prints ``key: old -> new``; ``get`` prints the value and its source."""
    result = _ok(cli("config", "set", "context.budget.skeleton-ratio", "0.2"))
    assert result.stdout.strip() == "context.budget.skeleton-ratio: 0.15 -> 0.2"
    assert _ok(cli("config", "get", "context.budget.skeleton-ratio")).stdout == "0.2\n"
    payload = _ok(cli("config", "get", "context.budget.skeleton-ratio", "--json")).json()
    assert payload == {
        "key": "context.budget.skeleton-ratio",
        "value": 0.2,
        "source": f"global:{cleveragents_home / 'config.toml'}",
    }


def test_set_preserves_comments(cli: Run, cleveragents_home: Path) -> None:
    """Editing through the CLI keeps the user's comments."""
    _ok(cli("init"))
    config_file = cleveragents_home / "config.toml"
    config_file.write_text("# mine\n[context.hot]\nmax-tokens = 9000  # tuned\n")
    _ok(cli("config", "set", "context.hot.max-tokens", "12000"))
    assert config_file.read_text() == "# mine\n[context.hot]\nmax-tokens = 12000  # tuned\n"


def test_set_project_writes_the_project_file(cli: Run, work: Path, cleveragents_home: Path) -> None:
    """``--project`` writes ``.cleveragents/config.toml`` in the project, which then wins."""
    _ok(cli("config", "set", "sandbox.strategy", "none"))
    _ok(cli("config", "set", "--project", "sandbox.strategy", "git_worktree"))
    project_file = work / ".cleveragents" / "config.toml"
    assert tomllib.loads(project_file.read_text()) == {"sandbox": {"strategy": "git_worktree"}}
    payload = _ok(cli("config", "get", "sandbox.strategy", "--json")).json()
    assert payload["value"] == "git_worktree"
    assert payload["source"] == f"project:{project_file}"
    sub = work / "deep" / "er"
    sub.mkdir(parents=True)
    assert _ok(cli("config", "get", "sandbox.strategy", cwd=sub)).stdout == "git_worktree\n"


def test_get_a_table_prints_its_keys(cli: Run) -> None:
    """``get`` of a table prints ``key = value`` lines; ``--json`` gives the nested table.

    A pipeline slot is a value (its component) even though it also has settings.
    """
    out = _ok(cli("config", "get", "context.budget")).stdout
    assert out.splitlines() == [
        "context.budget.min-useful-budget = 500",
        "context.budget.refresh-threshold = 0.3",
        "context.budget.skeleton-ratio = 0.15",
    ]
    slot = _ok(cli("config", "get", "context.pipeline.budget-packer")).stdout
    assert slot == "builtin:GreedyKnapsackPacker\n"
    table = _ok(cli("config", "get", "context.pipeline", "--json")).json()["value"]
    assert table["fragment-orderer"] == "builtin:RelevanceCoherenceOrderer"
    assert table["strategy-executor"]["timeout-seconds"] == 30


def test_unset_restores_the_default(cli: Run, cleveragents_home: Path) -> None:
    """``unset`` removes the key from the file and shows the value now in effect."""
    _ok(cli("config", "set", "core.log.level", "debug"))
    out = _ok(cli("config", "unset", "core.log.level")).stdout
    assert out.strip() == "core.log.level: debug -> warning"
    assert "is not set" in _ok(cli("config", "unset", "core.log.level")).stdout
    assert _ok(cli("config", "get", "core.log.level")).stdout == "warning\n"


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (("set", "nope.key", "1"), "Error [422] VALIDATION_FAILED: unknown configuration key"),
        (("set", "context.budget.skeleton-ratio", "lots"), "expects a number, got 'lots'"),
        (("set", "context.hot.max-token", "5"), "did you mean context.hot.max-tokens?"),
        (("get", "context.nothing"), "Error [404] NOT_FOUND: no configuration key"),
    ],
)
def test_bad_input_is_one_line_and_writes_nothing(
    cli: Run, cleveragents_home: Path, args: tuple[str, ...], expected: str
) -> None:
    """Bad keys and values exit 1 with one error line; no file is written."""
    result = cli("config", *args)
    assert result.exit_code == 1, str(result)
    assert expected in result.stderr
    assert "Traceback" not in result.stderr
    assert not (cleveragents_home / "config.toml").exists()


def test_environment_overrides_and_is_reported(cli: Run) -> None:
    """Env values win over files; ``set`` warns when one hides the new value."""
    env = {"CLEVERAGENTS_CONTEXT__HOT__MAX_TOKENS": "4000"}
    result = _ok(cli("config", "set", "context.hot.max-tokens", "9000", env=env))
    assert "CLEVERAGENTS_CONTEXT__HOT__MAX_TOKENS overrides this value" in result.stderr
    payload = _ok(cli("config", "get", "context.hot.max-tokens", "--json", env=env)).json()
    assert payload == {
        "key": "context.hot.max-tokens",
        "value": 4000,
        "source": "env:CLEVERAGENTS_CONTEXT__HOT__MAX_TOKENS",
    }


# -- secrets -------------------------------------------------------------------------


def test_secrets_are_masked_unless_asked(cli: Run, cleveragents_home: Path) -> None:
    """Secret keys show as ``sk-proj-…1234`` in set, get and list; --show-secrets reveals them."""
    result = _ok(cli("config", "set", "provider.openai.api-key", SECRET))
    assert result.stdout.strip() == "provider.openai.api-key: (unset) -> sk-proj-…1234"
    assert SECRET in (cleveragents_home / "config.toml").read_text()
    assert stat.S_IMODE((cleveragents_home / "config.toml").stat().st_mode) == 0o600

    listing = _ok(cli("config", "list")).stdout
    assert "sk-proj-…1234" in listing and SECRET not in listing
    as_json = _ok(cli("config", "list", "--json")).json()
    assert {"key": "provider.openai.api-key", "value": "sk-proj-…1234"}.items() <= as_json[
        0
    ].items()
    assert SECRET not in _ok(cli("config", "get", "provider.openai.api-key")).stdout
    assert SECRET not in _ok(cli("config", "get", "provider.openai", "--json")).stdout

    assert SECRET in _ok(cli("config", "list", "--show-secrets")).stdout
    assert SECRET in _ok(cli("config", "get", "provider.openai.api-key", "--show-secrets")).stdout
    shown = _ok(cli("config", "list", "--json", "--show-secrets")).json()
    assert shown[0]["value"] == SECRET


def test_secret_looking_values_are_redacted_under_any_key(cli: Run) -> None:
    """A token pasted under an ordinary key is still hidden, as is a URL password."""
    _ok(cli("config", "set", "plugin.acme.note", SECRET))
    _ok(cli("config", "set", "core.database-url", "postgresql+psycopg://bob:hunter2@db/app"))
    listing = _ok(cli("config", "list")).stdout
    assert SECRET not in listing and "hunter2" not in listing
    assert "postgresql+psycopg://bob:***@db/app" in listing


def test_project_secret_warns(cli: Run) -> None:
    """Storing a secret in the (shareable) project file prints a warning."""
    result = _ok(cli("config", "set", "--project", "provider.anthropic.api-key", SECRET))
    assert "warning:" in result.stderr and "secrets" in result.stderr


# -- list / path -----------------------------------------------------------------------


def test_list_shows_set_keys_and_all_shows_defaults(cli: Run, cleveragents_home: Path) -> None:
    """``list`` shows what is set (with sources); ``--all`` adds every default."""
    empty = _ok(cli("config", "list")).stdout
    assert "every key has its default" in empty
    _ok(cli("config", "set", "plugins.strict", "true"))
    rows = _ok(cli("config", "list", "--json")).json()
    assert rows == [
        {
            "key": "plugins.strict",
            "value": True,
            "source": f"global:{cleveragents_home / 'config.toml'}",
        }
    ]
    table = _ok(cli("config", "list")).stdout.splitlines()
    assert table[0].split() == ["KEY", "VALUE", "SOURCE"]
    assert table[1].split()[:2] == ["plugins.strict", "true"]
    everything = {row["key"]: row for row in _ok(cli("config", "list", "--all", "--json")).json()}
    assert everything["context.budget.skeleton-ratio"] == {
        "key": "context.budget.skeleton-ratio",
        "value": 0.15,
        "source": "default",
    }
    assert everything["core.database-url"]["value"] is None


def test_path_lists_the_files_consulted(cli: Run, work: Path, cleveragents_home: Path) -> None:
    """``path`` names the global and project files and whether they exist."""
    rows = _ok(cli("config", "path", "--json")).json()
    assert rows == [
        {"scope": "global", "path": str(cleveragents_home / "config.toml"), "exists": False},
        {"scope": "project", "path": str(work / ".cleveragents" / "config.toml"), "exists": False},
    ]
    (cleveragents_home / "config.toml").write_text("[core\n")  # still works on a broken file
    out = _ok(cli("config", "path")).stdout
    assert "exists" in out and "missing" in out


# -- audit -----------------------------------------------------------------------------


def test_set_and_unset_are_audited_with_masked_secrets(cli: Run, cleveragents_home: Path) -> None:
    """Each change appends a ``config_changed`` event; secrets are masked in it."""
    _ok(cli("config", "set", "provider.openai.api-key", SECRET))
    _ok(cli("config", "set", "context.hot.max-tokens", "9000"))
    _ok(cli("config", "unset", "context.hot.max-tokens"))
    events = _audit_rows(cleveragents_home)
    assert [kind for kind, _ in events] == ["config_changed"] * 3
    first, second, third = (details for _, details in events)
    assert first["key"] == "provider.openai.api-key"
    assert first["new"] == "sk-proj-…1234" and first["old"] is None
    assert (second["old"], second["new"]) == (16000, 9000)
    assert (third["action"], third["old"]) == ("unset", 9000)
    assert SECRET not in json.dumps(events)


def test_audit_failure_keeps_the_change(cli: Run, cleveragents_home: Path, tmp_path: Path) -> None:
    """If the database cannot be written the change stays, with a warning and exit 0."""
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("")
    env = {"CLEVERAGENTS_CORE__DATABASE_URL": f"sqlite:///{blocker}/db.sqlite"}
    result = _ok(cli("config", "set", "context.hot.max-tokens", "7000", env=env))
    assert result.stdout.strip() == "context.hot.max-tokens: 16000 -> 7000"
    assert "warning: context.hot.max-tokens was saved" in result.stderr
    assert _ok(cli("config", "get", "context.hot.max-tokens")).stdout == "7000\n"
