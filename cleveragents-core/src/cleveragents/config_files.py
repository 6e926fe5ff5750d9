"""``config.toml`` files as flat dotted keys: read with :mod:`tomllib`, edited with tomlkit.

Reading uses the standard library; a syntax error becomes a
:class:`~cleveragents.errors.ConfigurationError` naming the file, line and
column. Writing changes one key with :mod:`tomlkit` (imported only then), so
comments and layout survive; the result is checked to differ from the old file
in that key only, and replaces it atomically.

A pipeline slot is both a value (its component, ``"module:ClassName"``) and a
table (that component's settings), which one TOML file cannot say with the same
name. Inside a ``[context.pipeline.<slot>]`` table the component is therefore
written as ``component = "…"``; ``[context.pipeline]`` + ``<slot> = "…"`` works
as well when the slot has no settings in that file.
"""

from __future__ import annotations

import json
import math
import re
import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from cleveragents.errors import ConfigurationError, ValidationError

if TYPE_CHECKING:
    from tomlkit.container import Container
    from tomlkit.items import Table

__all__ = [
    "COMPONENT_KEY",
    "COMPONENT_TABLES",
    "DELETE",
    "flatten",
    "nest",
    "parse_toml",
    "parse_value",
    "read_file",
    "toml_key",
    "toml_value",
    "update_file",
]

#: Inside ``[context.pipeline.<slot>]``, the key that holds the slot's component.
COMPONENT_KEY = "component"
#: Tables whose child tables may carry their own value under :data:`COMPONENT_KEY`.
COMPONENT_TABLES = frozenset({"context.pipeline"})
#: Pass as the value to :func:`update_file` to remove the key.
DELETE: Any = object()


def parse_value(text: str) -> Any:
    """``text`` read as a TOML value when it is one (``5``, ``true``, ``[9, 4]``), else itself."""
    if not text.strip() or "\n" in text or "\r" in text:
        return text
    try:
        value = tomllib.loads(f"v = {text}")["v"]
    except tomllib.TOMLDecodeError:
        return text
    return value if isinstance(value, (bool, int, float, str, list, dict)) else text


def toml_key(name: str) -> str:
    """``name`` as a TOML key: bare when it can be, quoted otherwise."""
    return name if re.fullmatch(r"[A-Za-z0-9_-]+", name) else json.dumps(name, ensure_ascii=False)


def toml_value(value: Any) -> str:
    """``value`` written as TOML (``true``, ``0.15``, ``"x"``, ``[9, 4]``, ``{a = 1}``)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if math.isnan(value):
            return "nan"
        return repr(value) if math.isfinite(value) else ("inf" if value > 0 else "-inf")
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(toml_value(item) for item in value) + "]"
    if isinstance(value, Mapping):
        return (
            "{" + ", ".join(f"{toml_key(str(k))} = {toml_value(v)}" for k, v in value.items()) + "}"
        )
    # JSON escapes are TOML escapes, except that TOML also forbids a raw DEL.
    return json.dumps(str(value), ensure_ascii=False).replace("\x7f", "\\u007f")


def flatten(table: Mapping[str, Any], prefix: str = "") -> dict[str, Any]:
    """Nested tables as dotted keys: ``{"a": {"b": 1}}`` -> ``{"a.b": 1}``."""
    out: dict[str, Any] = {}
    for name, value in table.items():
        key = f"{prefix}.{name}" if prefix else str(name)
        if isinstance(value, Mapping):
            if prefix in COMPONENT_TABLES and COMPONENT_KEY in value:
                out[key] = value[COMPONENT_KEY]
                value = {k: v for k, v in value.items() if k != COMPONENT_KEY}
            out.update(flatten(value, key))
        elif value is not None:
            out[key] = value
    return out


def nest(flat: Mapping[str, Any]) -> dict[str, Any]:
    """The inverse of :func:`flatten`: the tables a TOML file would hold."""
    root: dict[str, Any] = {}
    for key in sorted(flat):
        node = root
        *parents, leaf = key.split(".")
        for part in parents:
            child = node.get(part)
            if not isinstance(child, dict):
                child = {} if child is None else {COMPONENT_KEY: child}
                node[part] = child
            node = child
        if isinstance(node.get(leaf), dict):
            node[leaf][COMPONENT_KEY] = flat[key]
        else:
            node[leaf] = flat[key]
    return root


_WHERE = re.compile(r"\s*\((at line (?P<line>\d+), column (?P<column>\d+)|at end of document)\)$")


def parse_toml(text: str, path: Path) -> dict[str, Any]:
    """``tomllib.loads`` whose error names ``path``, the line and the column."""
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        reason = str(exc)
        details: dict[str, Any] = {"file": str(path)}
        where = ""
        if match := _WHERE.search(reason):
            reason = reason[: match.start()]
            if match["line"]:
                details.update(line=int(match["line"]), column=int(match["column"]))
                where = f" at line {match['line']}, column {match['column']}"
            else:
                where = " at end of document"
        raise ConfigurationError(
            f"invalid TOML in {path}{where}: {reason}", details=details
        ) from None


def read_file(path: Path) -> dict[str, Any]:
    """The flat keys of a config file; ``{}`` when it does not exist."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return {}
    except OSError as exc:
        raise ConfigurationError(
            f"cannot read {path}: {exc.strerror or exc}", details={"file": str(path)}
        ) from None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ConfigurationError(
            f"invalid TOML in {path}: not UTF-8 text (byte {exc.start})",
            details={"file": str(path)},
        ) from None
    return flatten(parse_toml(text, path))


def _is_table(item: object) -> bool:
    return isinstance(item, Mapping)


def _edit(doc: Container | Table, key: str, value: Any) -> None:
    """Set (or, with ``DELETE``, delete) ``key`` in a tomlkit document."""
    import tomlkit

    *parents, leaf = key.split(".")
    trail: list[tuple[Any, str]] = []
    container: Any = doc
    for depth, part in enumerate(parents):
        parent_key = ".".join(parents[:depth])
        existing = container.get(part)
        if existing is None:
            if value is DELETE:
                return
            last = depth == len(parents) - 1 and not isinstance(value, Mapping)
            container[part] = tomlkit.table(is_super_table=not last)
        elif not _is_table(existing):
            if value is DELETE:
                return
            if parent_key not in COMPONENT_TABLES:
                raise ValidationError(
                    f"cannot set {key}: {'.'.join(parents[: depth + 1])} is a value, not a table"
                )
            component = existing.unwrap() if hasattr(existing, "unwrap") else existing
            del container[part]
            table = tomlkit.table()
            table[COMPONENT_KEY] = component
            container[part] = table
        trail.append((container, part))
        container = container[part]
    parent_key = ".".join(parents)
    target = container.get(leaf)
    holds_component = parent_key in COMPONENT_TABLES and _is_table(target)
    if value is DELETE:
        if holds_component:
            target.pop(COMPONENT_KEY, None)
            if not target:
                del container[leaf]
        else:
            container.pop(leaf, None)
        for owner, part in reversed(trail):  # drop tables left empty
            if len(owner[part]) == 0:
                del owner[part]
            else:
                break
    elif holds_component and not isinstance(value, Mapping):
        target[COMPONENT_KEY] = value
    else:
        container[leaf] = value


def update_file(path: Path, key: str, value: Any, *, private: bool) -> dict[str, Any]:
    """Apply one change to the file at ``path`` and return its new flat keys."""
    import tomlkit

    target = path.resolve() if path.is_symlink() else path
    before = read_file(target)  # also validates the current text
    text = target.read_text(encoding="utf-8") if target.exists() else ""
    doc = tomlkit.parse(text)
    _edit(doc, key, value)
    new_text = doc.as_string()
    if new_text and not new_text.endswith("\n"):
        new_text += "\n"
    after = flatten(parse_toml(new_text, target))
    # Never write a file that changes more than the one key asked for.
    changed = {key} | (
        {key + "." + k for k in flatten(value)} if isinstance(value, Mapping) else set()
    )
    expected = {k: v for k, v in before.items() if k not in changed}
    if value is not DELETE:
        expected.update(flatten({key: value}))
    if after != expected:
        raise ConfigurationError(
            f"cannot update {key} in {target} without changing other keys; edit the file by hand",
            details={"file": str(target), "key": key},
        )
    mode = 0o600 if private else (target.stat().st_mode & 0o777 if target.exists() else 0o644)
    _atomic_write(target, new_text, mode)
    return after


def _atomic_write(path: Path, text: str, mode: int) -> None:
    from cleveragents.files import replace_file

    try:
        replace_file(path, text, mode=mode)
    except OSError as exc:
        raise ConfigurationError(
            f"cannot write {path}: {exc.strerror or exc}", details={"file": str(path)}
        ) from None
