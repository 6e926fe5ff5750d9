"""The object every command receives as ``ctx.obj``: lazy access to host, config, database.

Nothing heavy is built until a command asks for it, so ``--help`` and
``plugins list`` never open the database or import SQLAlchemy.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

if TYPE_CHECKING:
    from cleveragents.config import Config
    from cleveragents.plugins import PluginHost
    from cleveragents.registry import Registry
    from cleveragents.storage.database import Database

__all__ = ["App", "pass_app"]


@dataclass
class App:
    host: PluginHost
    debug: bool = False
    cwd: Path = field(default_factory=Path.cwd)
    #: ``key -> value`` overrides from global CLI flags (highest precedence).
    overrides: dict[str, Any] = field(default_factory=dict)

    @property
    def registry(self) -> Registry:
        return self.host.registry

    @cached_property
    def config(self) -> Config:
        from cleveragents.config import load_config

        return load_config(cwd=self.cwd, overrides=self.overrides)

    @cached_property
    def database(self) -> Database:
        from cleveragents.storage.database import Database

        return Database.from_config(self.config)

    def audit(self, event_type: str, details: dict[str, Any], **columns: Any) -> None:
        """Append one row to ``audit_log`` (details are redacted before storage)."""
        from cleveragents.storage.audit import record_event

        record_event(self.database, event_type, details, **columns)


pass_app = click.make_pass_decorator(App)
