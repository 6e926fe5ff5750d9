"""One place for CLI output: tables on a terminal, JSON for scripts, redacted always."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

import click

__all__ = ["emit_json", "emit_record", "emit_table", "success"]


def _text(value: Any) -> str:
    if value is None:
        return "-"
    if isinstance(value, (list, tuple, set, frozenset)):
        return ", ".join(_text(v) for v in value) or "-"
    return str(value)


def emit_json(data: Any, *, show_secrets: bool = False) -> None:
    """Print ``data`` as indented JSON (secrets redacted unless asked otherwise)."""
    from cleveragents.redaction import redact

    payload = data if show_secrets else redact(data)
    click.echo(json.dumps(payload, indent=2, sort_keys=False, default=str))


def emit_table(
    rows: Sequence[Mapping[str, Any]], columns: Sequence[str], *, empty: str = ""
) -> None:
    """A plain aligned table; a cell with newlines spans several lines of its row."""
    from cleveragents.redaction import redact

    if not rows:
        if empty:
            click.echo(empty)
        return
    cells = [[_text(redact(row.get(col))).split("\n") for col in columns] for row in rows]
    widths = [
        max(len(col), *(len(line) for r in cells for line in r[i])) for i, col in enumerate(columns)
    ]
    header = "  ".join(col.upper().ljust(w) for col, w in zip(columns, widths, strict=True))
    click.echo(header.rstrip())
    for r in cells:
        for n in range(max(len(lines) for lines in r)):
            parts = [
                (lines[n] if n < len(lines) else "").ljust(w)
                for lines, w in zip(r, widths, strict=True)
            ]
            click.echo("  ".join(parts).rstrip())


def emit_record(record: Mapping[str, Any]) -> None:
    """``key: value`` lines for a single entity (``show`` commands)."""
    from cleveragents.redaction import redact

    record = redact(dict(record))
    width = max((len(k) for k in record), default=0)
    for key, value in record.items():
        click.echo(f"{key.ljust(width)}  {_text(value)}")


def success(message: str) -> None:
    click.echo(message)
