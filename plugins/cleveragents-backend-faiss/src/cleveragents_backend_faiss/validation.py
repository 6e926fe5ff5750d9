"""Argument checks shared by the backend's read and write paths."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from cleveragents.errors import ValidationError

__all__ = [
    "RESOURCE_METADATA_KEYS",
    "InvalidVectorQuery",
    "require_scope",
    "require_str",
    "resource_of",
    "str_metadata",
]

#: Metadata keys that name a document's resource ULID, in order of preference.
RESOURCE_METADATA_KEYS = ("resource_id", "resource_ulid", "resource")


class InvalidVectorQuery(ValidationError, ValueError):
    """A bad argument: a ValidationError for the CLI, a ValueError for plain Python callers."""


def require_str(name: str, value: object) -> str:
    if not isinstance(value, str) or not value.strip():
        raise InvalidVectorQuery(f"{name} must be a non-empty string")
    return value


def require_scope(scope: object) -> frozenset[str]:
    if isinstance(scope, (str, bytes)) or not isinstance(scope, (set, frozenset)):
        raise InvalidVectorQuery("scope must be a set of resource ULIDs")
    return frozenset(str(s) for s in scope)


def resource_of(metadata: Mapping[str, Any]) -> str:
    for key in RESOURCE_METADATA_KEYS:
        value = metadata.get(key)
        if value:
            return str(value)
    raise InvalidVectorQuery(
        f"metadata must name the document's resource ULID under '{RESOURCE_METADATA_KEYS[0]}'"
    )


def str_metadata(metadata: Mapping[str, Any]) -> dict[str, str]:
    return {str(k): str(v) for k, v in metadata.items() if k != "content"}
