"""Sandbox value types shared by every SandboxStrategy."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

__all__ = ["Change", "DiffView", "SandboxRef"]


class SandboxRef(BaseModel):
    """Handle to one plan's sandbox of one resource."""

    model_config = ConfigDict(frozen=True)

    plan_id: str
    resource_id: str
    strategy: str
    #: Where the plan reads and writes (the copy, the worktree, or the original).
    path: str
    #: The original resource location.
    source: str


class Change(BaseModel):
    """One file written in a sandbox."""

    model_config = ConfigDict(frozen=True)

    path: str
    kind: str  # added | modified | deleted
    size_bytes: int = 0


class DiffView(BaseModel):
    """The sandbox's changes against the original, as a unified diff."""

    model_config = ConfigDict(frozen=True)

    changes: tuple[Change, ...] = ()
    unified_diff: str = ""
