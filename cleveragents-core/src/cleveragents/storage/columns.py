"""Column types that behave the same on SQLite and PostgreSQL."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from sqlalchemy import JSON, DateTime
from sqlalchemy.engine import Dialect
from sqlalchemy.types import TypeDecorator, TypeEngine

__all__ = ["JSONDocument", "UTCDateTime"]

if TYPE_CHECKING:
    JSONDocument: TypeEngine[Any]


def __getattr__(name: str) -> Any:
    # ``JSONDocument``: JSON text on SQLite (queryable with ``json_extract``), ``jsonb`` on
    # PostgreSQL. Made when first asked for: PostgreSQL's dialect takes 20-30 ms to
    # import, which a command reading through ``UTCDateTime`` alone does not pay.
    if name != "JSONDocument":
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from sqlalchemy.dialects.postgresql import JSONB

    document: TypeEngine[Any] = JSON().with_variant(JSONB(), "postgresql")
    globals()[name] = document
    return document


class UTCDateTime(TypeDecorator[datetime]):
    """Store instants in UTC and always hand back timezone-aware datetimes.

    SQLite has no time zones: values are stored as UTC text and read back
    with ``tzinfo=UTC``. PostgreSQL stores ``timestamptz``.
    """

    impl = DateTime(timezone=True)
    cache_ok = True

    def process_bind_param(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        if value.tzinfo is None:
            raise ValueError(f"naive datetime {value!r}: use cleveragents.models.utcnow()")
        value = value.astimezone(UTC)
        return value.replace(tzinfo=None) if dialect.name == "sqlite" else value

    def process_result_value(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        if value.tzinfo is None:
            return value.replace(tzinfo=UTC)
        return value.astimezone(UTC)
