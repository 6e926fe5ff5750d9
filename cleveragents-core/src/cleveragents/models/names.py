"""Names of projects and resources: what a valid one is (no models needed to tell).

Kept apart from :mod:`cleveragents.models.resources` so a command that only checks a name
does not import pydantic and build the models (about 90 ms of its start).
"""

from __future__ import annotations

import re

from cleveragents.errors import ValidationError

__all__ = ["check_name", "name_problem"]

_SEGMENT = r"[A-Za-z0-9][A-Za-z0-9._-]*"
_NAME_RE = re.compile(rf"^(?:{_SEGMENT}/)?{_SEGMENT}$")
_MAX_NAME_LENGTH = 200


def name_problem(name: str) -> str | None:
    """Why ``name`` is not a valid entity name, or ``None`` when it is.

    A name is one segment (``myproj``) or a namespace and a segment
    (``local/api-service``); a segment starts with a letter or digit and holds
    letters, digits, ``.``, ``_`` and ``-``.
    """
    if not name or not name.strip():
        return "must not be empty"
    if len(name) > _MAX_NAME_LENGTH:
        return f"is longer than {_MAX_NAME_LENGTH} characters"
    if not _NAME_RE.fullmatch(name):  # not match: its "$" also matches before a final "\n"
        return (
            "may hold only letters, digits, '.', '_' and '-', optionally after one "
            "namespace prefix such as 'local/'"
        )
    return None


def check_name(kind: str, name: str) -> str:
    """Return ``name`` unchanged or raise :class:`~cleveragents.errors.ValidationError`.

    :param kind: what is being named (``"project"``, ``"resource"``), for the message.
    """
    problem = name_problem(name)
    if problem is None:
        return name
    shown = f" {name!r}" if name.strip() else ""
    raise ValidationError(f"{kind} name{shown} {problem}", details={"kind": kind, "name": name})
