"""Built-in sandbox strategies: ``filesystem_copy`` and ``none`` (spec 000, Sandbox Isolation)."""

from __future__ import annotations

from cleveragents import hookimpl
from cleveragents.hookspecs import Register


@hookimpl
def register_sandbox_strategies(register: Register) -> None:
    register("filesystem_copy", "cleveragents.sandboxes:FilesystemCopySandbox")
    register("none", "cleveragents.sandboxes:DirectSandbox")
