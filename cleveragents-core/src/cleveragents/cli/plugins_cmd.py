"""``cleveragents plugins``: what is installed, what each plugin provides, and what is broken."""

from __future__ import annotations

from typing import Any

import click

from cleveragents.cli.context import App, pass_app
from cleveragents.cli.output import emit_json, emit_record, emit_table

__all__ = ["plugins"]


def _status(entry: dict[str, Any]) -> str:
    if entry["status"] == "error":
        return f"error: {entry['error']}"
    if entry["warnings"]:
        return f"{entry['status']} ({len(entry['warnings'])} warning(s))"
    return str(entry["status"])


def _provides(entry: dict[str, Any]) -> str:
    return "\n".join(f"{slot}: {', '.join(names)}" for slot, names in entry["provides"].items())


@click.group()
def plugins() -> None:
    """List, inspect and check installed plugins."""


@plugins.command("list")
@click.option("--json", "as_json", is_flag=True, help="Print JSON instead of a table.")
@pass_app
def list_plugins(app: App, as_json: bool) -> None:
    """Every plugin with its distribution, version, slots and status."""
    entries = app.host.describe()
    if as_json:
        emit_json(entries)
        return
    rows = [
        {
            "name": e["name"],
            "distribution": e["distribution"],
            "version": e["version"],
            "provides": _provides(e),
            "status": _status(e),
        }
        for e in entries
    ]
    emit_table(rows, ["name", "distribution", "version", "provides", "status"])
    for e in entries:
        for warning in e["warnings"]:
            click.echo(f"warning: plugin '{e['name']}': {warning}", err=True)


@plugins.command("show")
@click.argument("name")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@pass_app
def show_plugin(app: App, name: str, as_json: bool) -> None:
    """Hooks, entry point, location and components of plugin NAME."""
    from cleveragents.errors import NotFoundError

    entries = {e["name"]: e for e in app.host.describe()}
    if name not in entries:
        raise NotFoundError(f"no plugin named '{name}' (installed: {', '.join(sorted(entries))})")
    entry = entries[name]
    components = [
        {"slot": r.slot.key, "name": r.name, "target": r.describe()}
        for r in app.registry.all_registrations()
        if r.plugin == name
    ]
    record = app.host.records[name]
    if as_json:
        emit_json({**entry, "components": components})
        return
    emit_record(
        {
            "name": entry["name"],
            "distribution": entry["distribution"],
            "version": entry["version"],
            "status": _status(entry),
            "entry point": entry["entry_point"],
            "location": entry["location"],
            "hooks": entry["hooks"],
        }
    )
    for warning in entry["warnings"]:
        click.echo(f"warning     {warning}")
    if components:
        click.echo("")
        emit_table(components, ["slot", "name", "target"])
    if record.traceback and app.debug:
        click.echo(record.traceback, err=True)


@plugins.command("check")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@pass_app
def check_plugins(app: App, as_json: bool) -> None:
    """Import every component and check it against its slot's Protocol.

    Exits non-zero when a plugin failed to load or a component breaks its contract.
    """
    failures = [
        {"plugin": r.plugin, "slot": r.slot.key, "name": r.name, "error": exc.message}
        for r, exc in app.registry.validate_all()
    ]
    failures += [
        {"plugin": e["name"], "slot": "-", "name": "-", "error": e["error"]}
        for e in app.host.describe()
        if e["status"] == "error"
    ]
    checked = len(app.registry.all_registrations())
    if as_json:
        emit_json({"checked": checked, "failures": failures})
    elif failures:
        emit_table(failures, ["plugin", "slot", "name", "error"])
    else:
        click.echo(f"{checked} components checked, all conform to their Protocols.")
    if failures:
        raise SystemExit(1)
