"""The append-only audit trail (``audit_log``): who changed what, and when.

Details are redacted before they are stored, so a secret passed by mistake
never reaches the database.
"""

from __future__ import annotations

import getpass
import json
from typing import TYPE_CHECKING, Any

from sqlmodel import Session, col, select

from cleveragents.models.ids import utcnow
from cleveragents.storage.tables import AuditLogRow

if TYPE_CHECKING:
    from cleveragents.storage.database import Database

__all__ = ["AUDIT_COLUMNS", "add_audit_row", "list_events", "record_event"]

#: Optional columns a caller may fill besides ``event_type`` and ``details``.
AUDIT_COLUMNS = frozenset({"plan_id", "project_name", "actor_name", "user_identity"})


def _current_user() -> str | None:
    try:
        return getpass.getuser()
    except Exception:
        return None


def _storable(details: dict[str, Any]) -> dict[str, Any]:
    from cleveragents.redaction import redact

    # Round-trip through JSON so paths, datetimes … are stored as plain text.
    plain = json.loads(json.dumps(details, default=str))
    return dict(redact(plain))


def add_audit_row(
    session: Session, event_type: str, details: dict[str, Any], **columns: Any
) -> None:
    """Append an audit row inside ``session``'s transaction (atomic with the change).

    :param columns: any of :data:`AUDIT_COLUMNS`; ``user_identity`` defaults to
        the operating-system user.
    """
    unknown = set(columns) - AUDIT_COLUMNS
    if unknown:
        raise TypeError(f"unknown audit_log columns: {', '.join(sorted(unknown))}")
    if not event_type:
        raise ValueError("event_type must not be empty")
    columns.setdefault("user_identity", _current_user())
    session.add(
        AuditLogRow(
            event_type=event_type, details=_storable(details), created_at=utcnow(), **columns
        )
    )
    session.flush()


def record_event(
    database: Database, event_type: str, details: dict[str, Any], **columns: Any
) -> None:
    """Append one audit row in its own transaction.

    Prefer :func:`add_audit_row` with the session that made the change, so the
    change and its audit row commit together.
    """
    with database.session() as session:
        add_audit_row(session, event_type, details, **columns)


def list_events(
    database: Database,
    *,
    event_type: str | None = None,
    project_name: str | None = None,
    limit: int | None = None,
) -> list[dict[str, Any]]:
    """Audit rows, newest first, as plain dicts (``created_at`` in UTC)."""
    statement = select(AuditLogRow).order_by(col(AuditLogRow.id).desc())
    if event_type is not None:
        statement = statement.where(col(AuditLogRow.event_type) == event_type)
    if project_name is not None:
        statement = statement.where(col(AuditLogRow.project_name) == project_name)
    if limit is not None:
        statement = statement.limit(limit)
    with database.session(write=False) as session:
        rows = session.exec(statement).all()
        return [row.model_dump() for row in rows]
