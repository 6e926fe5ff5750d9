"""``cleveragents diagnostics``: one screen that says whether this installation is healthy."""

from __future__ import annotations

import os
import stat
from typing import Any

import click

from cleveragents.cli.context import App, pass_app
from cleveragents.cli.output import emit_json, emit_table

__all__ = ["collect", "diagnostics"]


def _check(name: str, status: str, detail: str) -> dict[str, str]:
    return {"check": name, "status": status, "detail": detail}


def collect(app: App) -> dict[str, Any]:
    """Run every check; each failure is reported, none stops the others."""
    from cleveragents import __version__, paths

    checks: list[dict[str, str]] = []
    home = paths.home()
    checks.append(
        _check(
            "home",
            "ok" if home.is_dir() else "warn",
            f"{home}" + ("" if home.is_dir() else " (missing: run `cleveragents init`)"),
        )
    )
    try:
        config = app.config
        checks.append(
            _check(
                "config",
                "ok",
                f"global {config.global_path}"
                + (f", project {config.project_path}" if config.project_path else ""),
            )
        )
        mode = config.global_path.stat().st_mode if config.global_path.exists() else None
        if mode is not None and mode & (stat.S_IRWXG | stat.S_IRWXO):
            checks.append(
                _check(
                    "config permissions",
                    "warn",
                    f"{config.global_path} is readable by others; run chmod 600",
                )
            )
    except Exception as exc:
        checks.append(_check("config", "error", str(getattr(exc, "message", exc))))
    try:
        info = app.database.check()
        checks.append(
            _check(
                "database",
                "ok" if info.get("ok", True) else "error",
                ", ".join(f"{k}={v}" for k, v in info.items() if k != "ok"),
            )
        )
    except Exception as exc:
        checks.append(_check("database", "error", str(getattr(exc, "message", exc))))
    entries = app.host.describe()
    broken = [e for e in entries if e["status"] == "error"]
    loaded = [e for e in entries if e["status"] == "loaded"]
    checks.append(
        _check(
            "plugins",
            "error" if broken else "ok",
            f"{len(loaded)} loaded, {len(broken)} failed"
            + "".join(f"; {e['name']}: {e['error']}" for e in broken),
        )
    )
    for kind in ("text", "vector", "graph"):
        folder = home / "index" / kind
        projects = sorted(p.name for p in folder.iterdir()) if folder.is_dir() else []
        writable = (
            os.access(folder if folder.is_dir() else home, os.W_OK) if home.exists() else True
        )
        checks.append(
            _check(
                f"index/{kind}",
                "ok" if writable else "error",
                f"{folder}: {len(projects)} project(s)" + ("" if writable else ", not writable"),
            )
        )
    return {"version": __version__, "home": str(home), "checks": checks, "plugins": entries}


@click.command()
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@pass_app
def diagnostics(app: App, as_json: bool) -> None:
    """Check configuration, database, plugins and index folders.

    Exits non-zero when a check fails.
    """
    report = collect(app)
    if as_json:
        emit_json(report)
    else:
        click.echo(f"cleveragents {report['version']}  home: {report['home']}")
        emit_table(report["checks"], ["check", "status", "detail"])
    if any(c["status"] == "error" for c in report["checks"]):
        raise SystemExit(1)
