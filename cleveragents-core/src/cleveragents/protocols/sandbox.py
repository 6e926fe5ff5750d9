"""Sandbox strategies (spec 000, Custom Sandbox Strategies)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol, runtime_checkable

if TYPE_CHECKING:
    from cleveragents.models.resources import Resource
    from cleveragents.models.sandbox import Change, DiffView, SandboxRef

__all__ = ["SandboxStrategy"]


@runtime_checkable
class SandboxStrategy(Protocol):
    """Isolates a plan's writes from the original resource until apply."""

    def create(self, plan_id: str, resource: Resource) -> SandboxRef: ...

    def read(self, ref: SandboxRef, path: str) -> bytes: ...

    def write(self, ref: SandboxRef, path: str, content: bytes) -> Change: ...

    def diff(self, ref: SandboxRef) -> DiffView: ...

    def commit(self, ref: SandboxRef) -> None: ...

    def rollback(self, ref: SandboxRef) -> None: ...

    def checkpoint(self, ref: SandboxRef, checkpoint_id: str) -> None: ...

    def restore_checkpoint(self, ref: SandboxRef, checkpoint_id: str) -> None: ...

    def cleanup(self, ref: SandboxRef) -> None: ...
