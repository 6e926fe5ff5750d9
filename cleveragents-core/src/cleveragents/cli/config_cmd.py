"""``cleveragents config``: read and change the configuration chain.

Values of secret keys (``provider.openai.api-key`` …) are shown masked
(``sk-…abcd``) and secret-looking values are redacted, unless
``--show-secrets`` is given. ``config list`` shows the keys that something sets
(a file, an environment variable, a flag); ``--all`` adds the built-in defaults.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import click

from cleveragents.cli.context import App, pass_app
from cleveragents.cli.output import emit_json, emit_table

if TYPE_CHECKING:
    from cleveragents.config import Scope

__all__ = ["config"]

_SHOW_SECRETS = click.option(
    "--show-secrets", is_flag=True, help="Show secret values instead of masking them."
)
_PROJECT = click.option(
    "--project",
    "in_project",
    is_flag=True,
    help="Change the project's .cleveragents/config.toml instead of the global file.",
)


def _hidden(key: str, value: Any, *, show_secrets: bool) -> Any:
    """``value`` as it may be shown: secret keys masked, secret-looking text redacted."""
    from cleveragents.redaction import is_secret_key, mask, redact

    if show_secrets:
        return value
    if is_secret_key(key) and value is not None and not isinstance(value, bool):
        return mask(value) if isinstance(value, str) else "***"
    return redact(value)


def _text(value: Any) -> str:
    """Strings as they are, everything else as TOML (``true``, ``[9, 4]``)."""
    from cleveragents.config import toml_value

    if value is None:
        return "(unset)"
    return value if isinstance(value, str) else toml_value(value)


def _scope(in_project: bool) -> Scope:
    return "project" if in_project else "global"


def _describe(source: str) -> str:
    """``env:NAME`` -> ``the environment variable NAME`` and so on."""
    kind, _, where = source.partition(":")
    if kind == "env":
        return f"the environment variable {where}"
    if kind == "project":
        return f"the project file {where}"
    return "a command-line option" if kind == "cli" else source


def _suggest(key: str) -> str:
    import difflib

    from cleveragents.config import DEFAULTS

    close = difflib.get_close_matches(key, list(DEFAULTS), n=1, cutoff=0.8)
    return f" (did you mean {close[0]}?)" if close else ""


def _audit(app: App, action: str, key: str, old: Any, new: Any, scope: Scope) -> None:
    """Record the change; a database problem must not undo a change already saved."""
    from cleveragents.errors import CleverAgentsError
    from cleveragents.redaction import redact

    details = {
        "key": key,
        "old": _hidden(key, old, show_secrets=False),
        "new": _hidden(key, new, show_secrets=False),
        "scope": scope,
        "action": action,
    }
    try:
        app.audit("config_changed", details)
    except Exception as exc:  # the configuration file is already written
        reason = exc.message if isinstance(exc, CleverAgentsError) else f"{exc}"
        click.echo(
            f"warning: {key} was saved, but the change could not be recorded in the audit log: "
            f"{redact(reason) or type(exc).__name__}",
            err=True,
        )


def _open_database_early(app: App) -> None:
    """Bind the audit log to the database in use *before* a change (e.g. of core.database-url)."""
    try:
        _ = app.database
    except Exception:  # reported when the audit event is written
        pass


def _plain_table(rows: list[dict[str, Any]], columns: list[str]) -> None:
    """Like :func:`emit_table`, for the one case where nothing may be redacted."""
    cells = [
        [col.upper() for col in columns],
        *([str(row[col]) for col in columns] for row in rows),
    ]
    widths = [max(len(line[i]) for line in cells) for i in range(len(columns))]
    for line in cells:
        click.echo("  ".join(c.ljust(w) for c, w in zip(line, widths, strict=True)).rstrip())


@click.group()
def config() -> None:
    """Show and change configuration (CLI flags > environment > project > global > defaults)."""


@config.command("get")
@click.argument("key")
@click.option("--json", "as_json", is_flag=True, help="Print {key, value, source} as JSON.")
@_SHOW_SECRETS
@pass_app
def get_value(app: App, key: str, as_json: bool, show_secrets: bool) -> None:
    """Print the effective value of KEY (a whole table when KEY names one)."""
    from cleveragents.errors import NotFoundError

    settings = app.config
    if key not in settings:
        raise NotFoundError(f"no configuration key {key!r}{_suggest(key)}", details={"key": key})
    value = _hidden(key, settings.get(key), show_secrets=show_secrets)
    if as_json:
        payload = {"key": key, "value": value, "source": settings.source(key)}
        emit_json(payload, show_secrets=show_secrets)
    elif isinstance(value, dict):
        prefix = key.rstrip(".")
        for sub, item in settings.section(prefix).items():
            full = f"{prefix}.{sub}"
            click.echo(f"{full} = {_text(_hidden(full, item, show_secrets=show_secrets))}")
    else:
        click.echo("" if value is None else _text(value))


@config.command("set")
@click.argument("key")
@click.argument("value")
@_PROJECT
@pass_app
def set_value(app: App, key: str, value: str, in_project: bool) -> None:
    """Set KEY to VALUE in the global config.toml (or the project's, with --project).

    VALUE is read as TOML when it is valid TOML (5, 0.2, true, [9, 4, 2, 0]) and
    as text otherwise. Prints `KEY: OLD -> NEW`.
    """
    from cleveragents.config import DEFAULTS
    from cleveragents.redaction import is_secret_key

    settings = app.config
    scope = _scope(in_project)
    key = settings.check_key(key)
    known = key in DEFAULTS or key in settings
    _open_database_early(app)
    old, new = settings.set(key, value, scope=scope)
    click.echo(
        f"{key}: {_text(_hidden(key, old, show_secrets=False))} -> "
        f"{_text(_hidden(key, new, show_secrets=False))}"
    )
    if not known and any(k.startswith(key.rpartition(".")[0] + ".") for k in DEFAULTS):
        click.echo(f"note: {key} is not a built-in key; only a plugin may read it", err=True)
    if (hidden_by := settings.overridden_by(key, scope)) is not None:
        click.echo(f"note: {_describe(hidden_by)} overrides this value", err=True)
    if scope == "project" and is_secret_key(key):
        click.echo(
            f"warning: {settings.path_for(scope)} may be shared with the project; "
            "prefer the global file or an environment variable for secrets",
            err=True,
        )
    _audit(app, "set", key, old, new, scope)


@config.command("unset")
@click.argument("key")
@_PROJECT
@pass_app
def unset_value(app: App, key: str, in_project: bool) -> None:
    """Remove KEY from the global config.toml (or the project's, with --project)."""
    settings = app.config
    scope = _scope(in_project)
    path = settings.path_for(scope)
    _open_database_early(app)
    old = settings.unset(key, scope=scope)
    if old is None:
        click.echo(f"{key} is not set in {path}")
        return
    new = settings.get(key)
    click.echo(
        f"{key}: {_text(_hidden(key, old, show_secrets=False))} -> "
        f"{_text(_hidden(key, new, show_secrets=False))}"
    )
    _audit(app, "unset", key, old, None, scope)


@config.command("list")
@click.option("--json", "as_json", is_flag=True, help="Print a JSON array instead of a table.")
@_SHOW_SECRETS
@click.option("--all", "show_all", is_flag=True, help="Include keys left at their default.")
@pass_app
def list_values(app: App, as_json: bool, show_secrets: bool, show_all: bool) -> None:
    """Keys set by a flag, the environment or a config file, with where each comes from."""
    rows = [
        {"key": key, "value": _hidden(key, value, show_secrets=show_secrets), "source": source}
        for key, value, source in app.config.items()
        if show_all or source != "default"
    ]
    if as_json:
        emit_json(rows, show_secrets=show_secrets)
        return
    for row in rows:
        row["value"] = _text(row["value"])
    if show_secrets:
        _plain_table(rows, ["key", "value", "source"])
        return
    emit_table(
        rows,
        ["key", "value", "source"],
        empty="Nothing is configured: every key has its default (see `config list --all`).",
    )


@config.command("path")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@pass_app
def show_paths(app: App, as_json: bool) -> None:
    """The configuration files consulted, lowest precedence first."""
    from cleveragents.config import config_paths

    rows = [
        {"scope": scope, "path": str(path), "exists": path.is_file()}
        for scope, path in config_paths(cwd=app.cwd)
    ]
    if as_json:
        emit_json(rows)
        return
    for row in rows:
        row["status"] = "exists" if row["exists"] else "missing"
    emit_table(rows, ["scope", "path", "status"])
