"""Argument checks shared by the backends (spec 004 preconditions)."""

from __future__ import annotations

from collections.abc import Iterable

from cleveragents.errors import ValidationError

__all__ = [
    "InvalidArgumentError",
    "require_depth",
    "require_positive",
    "require_scope",
    "require_text",
]


class InvalidArgumentError(ValidationError, ValueError):
    """A precondition of a backend call failed; both a ValidationError and a ValueError."""


def require_text(name: str, value: object) -> str:
    if not isinstance(value, str) or not value.strip():
        raise InvalidArgumentError(f"{name} must be a non-empty string")
    return value


def require_positive(name: str, value: object) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise InvalidArgumentError(f"{name} must be a positive integer, got {value!r}")
    return value


def require_depth(value: object) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise InvalidArgumentError(f"depth must be a non-negative integer, got {value!r}")
    return value


def require_scope(scope: object) -> frozenset[str]:
    """The scope as a frozenset of resource ULIDs; a bare string is refused (not a set of one)."""
    if isinstance(scope, (str, bytes)) or not isinstance(scope, Iterable):
        raise InvalidArgumentError(f"scope must be a set of resource ULIDs, got {scope!r}")
    items = frozenset(scope)
    if not all(isinstance(item, str) for item in items):
        raise InvalidArgumentError("scope must contain resource ULIDs (strings) only")
    return items
