"""``cleveragents init``: lay out ``$CLEVERAGENTS_HOME`` and bring the database up to date.

Safe to run again: existing folders and files are kept, and the database is
only migrated forward. ``--force`` rewrites ``config.toml`` from the defaults,
keeping the previous file as ``config.toml.<timestamp>.bak``.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import click

from cleveragents.cli.context import App, pass_app

__all__ = ["default_config_text", "init"]

#: Folders created under ``$CLEVERAGENTS_HOME``.
LAYOUT = ("logs", "index/text", "index/vector", "index/graph", "cache")

_HEADER = """\
# CleverAgents configuration (global).
#
# Every setting below is commented out and shows its built-in default:
# uncomment a line to change it, or run `cleveragents config set KEY VALUE`.
# Precedence: command-line flags > CLEVERAGENTS_* environment variables
# (CLEVERAGENTS_CONTEXT__BUDGET__SKELETON_RATIO=0.2 sets
# context.budget.skeleton-ratio) > the project's .cleveragents/config.toml
# > this file > built-in defaults.
"""

#: Lines shown for keys whose default is "not set".
_UNSET_EXAMPLES = {
    "core.database-url": (
        "# Not set: SQLite at $CLEVERAGENTS_HOME/cleveragents.db. Server mode:",
        '# database-url = "postgresql+psycopg://user@localhost/cleveragents"',
    ),
}


def default_config_text() -> str:
    """A ``config.toml`` listing every built-in default, commented out."""
    from cleveragents.config import COMPONENT_KEY, DEFAULTS, toml_key, toml_value

    tables: dict[str, list[str]] = {}
    for key, value in DEFAULTS.items():
        table, _, leaf = key.rpartition(".")
        if any(other.startswith(key + ".") for other in DEFAULTS):
            # A pipeline slot with settings: its component goes inside its own table.
            table, leaf = key, COMPONENT_KEY
        lines = tables.setdefault(table, [])
        if value is None:
            lines.extend(_UNSET_EXAMPLES.get(key, (f"# {toml_key(leaf)} =  (not set)",)))
        else:
            lines.append(f"# {toml_key(leaf)} = {toml_value(value)}")
    body = "".join(f"\n# [{table}]\n" + "\n".join(lines) + "\n" for table, lines in tables.items())
    return _HEADER + body


def _write_new(path: Path, text: str) -> None:
    """Write a private file atomically (never a half-written config)."""
    from cleveragents.files import replace_file

    replace_file(path, text, mode=0o600)


def _prepare_home(home: Path, *, force: bool) -> list[str]:
    """Create the folders and ``config.toml``; returns one line per thing done."""
    done: list[str] = []
    if not home.is_dir():
        home.mkdir(parents=True, mode=0o700)
        done.append(f"created {home}")
    config_path = home / "config.toml"
    if not config_path.exists():
        _write_new(config_path, default_config_text())
        done.append(f"created {config_path} (every default, commented out)")
    elif force:
        backup = config_path.with_name(f"config.toml.{time.strftime('%Y%m%d-%H%M%S')}.bak")
        backup.write_bytes(config_path.read_bytes())
        backup.chmod(0o600)
        _write_new(config_path, default_config_text())
        done.append(f"replaced {config_path} with the defaults (previous file: {backup})")
    else:
        done.append(f"kept {config_path} (use --force to replace it with the defaults)")
    for folder in LAYOUT:
        path = home / folder
        if not path.is_dir():
            path.mkdir(parents=True, exist_ok=True)
            done.append(f"created {path}")
    return done


def _migrate(app: App) -> dict[str, Any]:
    """Create or migrate the database; ``{"skipped": reason}`` when storage is unavailable."""
    try:
        database = app.database
    except ModuleNotFoundError as exc:
        if exc.name and exc.name.startswith("cleveragents.storage"):
            return {"skipped": "the storage module is not installed"}
        raise
    before = database.schema_version()
    after = database.migrate()
    return {"location": database.location, "before": before, "after": after}


@click.command()
@click.option("--force", is_flag=True, help="Rewrite config.toml from the defaults (with backup).")
@pass_app
def init(app: App, force: bool) -> None:
    """Create the data folder, a commented config.toml and the database (idempotent)."""
    from cleveragents import paths
    from cleveragents.errors import ConfigurationError

    home = paths.home()
    try:
        done = _prepare_home(home, force=force)
    except OSError as exc:
        where = exc.filename or home
        raise ConfigurationError(
            f"cannot set up {where}: {exc.strerror or exc}", details={"path": str(where)}
        ) from None
    for line in done:
        click.echo(line)
    if force:
        app.__dict__.pop("config", None)  # the file it was read from has just changed
    database = _migrate(app)
    if "skipped" in database:
        click.echo(f"database: skipped ({database['skipped']})")
    elif database["before"] is None:
        click.echo(f"created database {database['location']} (schema {database['after']})")
    elif database["before"] != database["after"]:
        click.echo(
            f"migrated database {database['location']} "
            f"from schema {database['before']} to {database['after']}"
        )
    else:
        click.echo(f"database {database['location']} is up to date (schema {database['after']})")
    click.echo(f"CleverAgents is ready in {home}")
