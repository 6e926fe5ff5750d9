"""Confirm, delete and audit in one transaction: what every ``delete``/``remove`` command does."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

import click

if TYPE_CHECKING:
    from sqlalchemy.orm import Session

    from cleveragents.cli.context import App

__all__ = ["AuditedDeletion", "confirm_and_delete"]

T = TypeVar("T")

#: What a deletion returns: its result, and the ``entity_deleted`` audit rows to
#: write with it as ``(details, columns)`` pairs.
AuditedDeletion = tuple[T, Sequence[tuple[Mapping[str, Any], Mapping[str, Any]]]]


def confirm_and_delete(
    app: App, *, prompt: str, yes: bool, delete: Callable[[Session], AuditedDeletion[T]]
) -> T:
    """Ask ``prompt`` (unless ``yes``), then delete and audit atomically.

    ``delete`` runs inside a write session; its audit rows are added in the same
    transaction, so a failed deletion leaves neither the change nor its audit.
    Answering no aborts the command (``Aborted.``, exit 130) before anything is written.
    """
    from cleveragents.storage.audit import add_audit_row

    if not yes:
        click.confirm(prompt, abort=True)
    with app.database.session() as session:
        result, rows = delete(session)
        for details, columns in rows:
            add_audit_row(session, "entity_deleted", dict(details), **dict(columns))
    return result
