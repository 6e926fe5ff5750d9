"""Identifiers and timestamps: ULIDs for entities, timezone-aware UTC for every instant."""

from __future__ import annotations

from datetime import UTC, datetime

__all__ = ["is_ulid", "new_ulid", "parse_instant", "utcnow"]


def new_ulid() -> str:
    """A fresh ULID as its 26-character Crockford base32 string (time-ordered)."""
    # Imported when first used: the package looks up its own version on import, a scan of
    # the installed distributions that costs a command which only reads ids 20-30 ms.
    from ulid import ULID

    return str(ULID())


def is_ulid(value: str) -> bool:
    """Whether ``value`` is the canonical string form of a ULID."""
    if len(value) != 26:
        return False
    from ulid import ULID

    try:
        ULID.from_str(value)
    except ValueError:
        return False
    return True


def parse_instant(value: str | None) -> datetime | None:
    """An ISO 8601 time stamp (``Z`` or an offset; a naive one taken as UTC) as an aware
    datetime, else None: the node store writes ``+00:00``, RDF literals ``Z``."""
    if not value:
        return None
    try:
        moment = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


def utcnow() -> datetime:
    """The current instant, timezone-aware in UTC (never a naive datetime)."""
    return datetime.now(UTC)
