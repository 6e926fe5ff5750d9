"""The plugin host: finds plugins through entry points; one bad plugin never sinks the rest.

Plugins are entry points of group ``cleveragents``; the entry-point name is the
plugin's name. Selection follows pytest's conventions:

* ``CLEVERAGENTS_DISABLE_PLUGIN_AUTOLOAD=1`` loads only the installed plugins named in
  ``CLEVERAGENTS_PLUGINS=a,b`` or with ``-p NAME``;
* ``CLEVERAGENTS_DISABLE_PLUGINS=a,b`` or ``-p no:NAME`` skips plugins.

A plugin that fails to import, fails pluggy's signature validation, raises in a
registration hook, clashes with another plugin's names or registers something
that breaks its slot's Protocol is recorded with its error and skipped; with
``strict=True`` (``--strict-plugins``) the first such failure is fatal.
"""

from __future__ import annotations

import difflib
import functools
import importlib
import os
import sys
import traceback
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from functools import cached_property
from importlib import metadata
from pathlib import Path
from typing import Any

import pluggy

from cleveragents import PROJECT_NAME, __version__, hookspecs
from cleveragents.errors import PluginError, ValidationError
from cleveragents.registry import Registration, Registry
from cleveragents.slots import SLOTS, Slot

__all__ = ["BUILTIN_PLUGINS", "PluginHost", "PluginRecord", "PluginSelection"]

#: The host's own features, registered through the same hooks third parties use.
BUILTIN_PLUGINS: dict[str, str] = {
    "core-commands": "cleveragents.defaults.commands",
    "core-sandboxes": "cleveragents.defaults.sandboxes",
}

_HOOK_NAMES = frozenset(
    name
    for name in dir(hookspecs)
    if callable(getattr(hookspecs, name))
    and hasattr(getattr(hookspecs, name), f"{PROJECT_NAME}_spec")
)


def _split(value: str | None) -> list[str]:
    return [part.strip() for part in (value or "").split(",") if part.strip()]


@dataclass
class PluginSelection:
    """Which plugins to load: autoload, allow-list and deny-list."""

    autoload: bool = True
    allow: list[str] = field(default_factory=list)
    deny: list[str] = field(default_factory=list)
    #: Names given with ``-p``; unknown ones are an error.
    explicit: list[str] = field(default_factory=list)

    @classmethod
    def from_env(
        cls, options: Iterable[str] = (), env: dict[str, str] | None = None
    ) -> PluginSelection:
        """Combine the ``CLEVERAGENTS_*`` variables with ``-p`` options."""
        env = dict(os.environ if env is None else env)
        autoload = env.get("CLEVERAGENTS_DISABLE_PLUGIN_AUTOLOAD", "").lower() not in (
            "1",
            "true",
            "yes",
            "on",
        )
        selection = cls(
            autoload=autoload,
            allow=_split(env.get("CLEVERAGENTS_PLUGINS")),
            deny=_split(env.get("CLEVERAGENTS_DISABLE_PLUGINS")),
        )
        for option in options:
            if option.startswith("no:"):
                selection.deny.append(option[3:])
                selection.explicit.append(option[3:])
            else:
                selection.allow.append(option)
                selection.explicit.append(option)
        return selection

    def wants(self, name: str) -> bool:
        if name in self.deny:
            return False
        return self.autoload or name in self.allow


@dataclass
class PluginRecord:
    """What ``plugins list`` shows about one plugin."""

    name: str
    distribution: str | None = None
    version: str | None = None
    entry_point: str | None = None
    location: str | None = None
    builtin: bool = False
    status: str = "loaded"  # loaded | disabled | error
    error: str | None = None
    traceback: str | None = None
    warnings: list[str] = field(default_factory=list)
    hooks: list[str] = field(default_factory=list)

    def fail(self, message: str, exc: BaseException | None = None) -> None:
        self.status, self.error = "error", message
        if exc is not None:
            self.traceback = "".join(traceback.format_exception(exc))

    def to_dict(self, provides: dict[str, list[str]]) -> dict[str, Any]:
        return {
            "name": self.name,
            "distribution": self.distribution,
            "version": self.version,
            "status": self.status,
            "error": self.error,
            "warnings": self.warnings,
            "builtin": self.builtin,
            "entry_point": self.entry_point,
            "location": self.location,
            "hooks": self.hooks,
            "provides": provides,
        }


class PluginHost:
    """Owns the pluggy manager, the plugin records and the registry built from them."""

    def __init__(self, selection: PluginSelection | None = None, *, strict: bool = False) -> None:
        self.selection = selection or PluginSelection()
        self.strict = strict
        self.pm = pluggy.PluginManager(PROJECT_NAME)
        self.pm.add_hookspecs(hookspecs)
        self.records: dict[str, PluginRecord] = {}
        self._configured_with: Any = None
        #: plugin name -> names of the CLI commands it added.
        self._commands: dict[str, list[str]] = {}

    # -- loading ------------------------------------------------------------------

    @classmethod
    def load(
        cls,
        options: Iterable[str] = (),
        *,
        strict: bool = False,
        env: dict[str, str] | None = None,
        entry_points: Iterable[metadata.EntryPoint] | None = None,
    ) -> PluginHost:
        """Build a host: built-in plugins, then every selected entry point."""
        selection = PluginSelection.from_env(options, env)
        host = cls(selection, strict=strict)
        eps = list(
            metadata.entry_points(group=PROJECT_NAME) if entry_points is None else entry_points
        )
        known = set(BUILTIN_PLUGINS) | {ep.name for ep in eps}
        unknown = [name for name in selection.explicit if name not in known]
        if unknown:
            raise ValidationError(
                f"unknown plugin '{unknown[0]}' given with -p "
                f"(installed: {', '.join(sorted(known))})"
            )
        for name, module in BUILTIN_PLUGINS.items():
            host._load_one(
                name,
                functools.partial(importlib.import_module, module),
                builtin=True,
                distribution="cleveragents-core",
                version=__version__,
                entry_point=module,
            )
        for ep in sorted(eps, key=lambda e: e.name):
            dist = getattr(ep, "dist", None)
            host._load_one(
                ep.name,
                ep.load,
                distribution=dist.name if dist else None,
                version=dist.version if dist else None,
                entry_point=ep.value,
            )
        return host

    def _load_one(
        self,
        name: str,
        loader: Callable[[], Any],
        *,
        builtin: bool = False,
        distribution: str | None = None,
        version: str | None = None,
        entry_point: str | None = None,
    ) -> None:
        if name in self.records:
            self.records[name].warnings.append(
                f"another entry point named '{name}' ({entry_point}) was ignored"
            )
            return
        record = PluginRecord(name, distribution, version, entry_point, builtin=builtin)
        self.records[name] = record
        # Autoload governs installed entry points only; built-ins load unless denied.
        if name in self.selection.deny or not (builtin or self.selection.wants(name)):
            record.status = "disabled"
            return
        try:
            plugin = loader()
        except BaseException as exc:
            if isinstance(exc, KeyboardInterrupt):
                raise
            self._failed(record, f"import failed: {type(exc).__name__}: {exc}", exc)
            return
        self.register(plugin, name, record=record)

    def register(self, plugin: object, name: str, *, record: PluginRecord | None = None) -> None:
        """Register a plugin object (module or instance) under ``name``.

        Used for entry points and by ``cleveragents.testing`` to add a plugin
        for one test. Invalidates the registry so it is rebuilt on next use.
        """
        record = record or self.records.setdefault(name, PluginRecord(name))
        record.location = _location_of(plugin)
        try:
            self.pm.register(plugin, name=name)
        except Exception as exc:  # pluggy.PluginValidationError, ValueError (duplicate)
            self._failed(record, f"invalid plugin: {exc}", exc)
            return
        # Hook names as pluggy sees them (``specname=`` renames an implementation).
        record.hooks = sorted(
            (opts or {}).get("specname") or attr
            for attr in dir(plugin)
            if (opts := self.pm.parse_hookimpl_opts(plugin, attr)) is not None
        )
        for hook in record.hooks:
            if hook not in _HOOK_NAMES:
                close = difflib.get_close_matches(hook, _HOOK_NAMES, n=1)
                hint = f" (did you mean '{close[0]}'?)" if close else ""
                message = f"unknown hook '{hook}'{hint}: it will never be called"
                record.warnings.append(message)
                if self.strict:
                    raise PluginError(f"plugin '{name}': {message}")
        self.__dict__.pop("registry", None)

    def unregister(self, name: str) -> None:
        """Remove a plugin and everything it registered."""
        if self.pm.has_plugin(name):
            self.pm.unregister(name=name)
        self.records.pop(name, None)
        self.__dict__.pop("registry", None)

    def _failed(self, record: PluginRecord, message: str, exc: BaseException | None) -> None:
        record.fail(message, exc)
        if self.pm.has_plugin(record.name):
            self.pm.unregister(name=record.name)
        if "registry" in self.__dict__:
            self.registry.remove_plugin(record.name)
        if self.strict:
            raise PluginError(f"plugin '{record.name}' failed: {message}") from exc

    # -- the registry -------------------------------------------------------------

    @cached_property
    def registry(self) -> Registry:
        """Call every registration hook, plugin by plugin, into a fresh Registry."""
        registry = Registry()
        self.__dict__["registry"] = registry  # visible to _failed while building
        for plugin_name in [n for n, r in self.records.items() if r.status == "loaded"]:
            if not self.pm.has_plugin(plugin_name):
                continue
            staged: list[Registration] = []
            try:
                for slot in SLOTS:
                    if slot.is_registration and slot.hook in self.records[plugin_name].hooks:
                        staged.extend(self._call_registration(plugin_name, slot))
                for registration in staged:
                    if not registration.is_lazy:
                        registration.resolve()
                    registry.add(registration)
            except PluginError as exc:
                self._failed(self.records[plugin_name], exc.message, exc)
            except Exception as exc:
                self._failed(
                    self.records[plugin_name],
                    f"hook raised {type(exc).__name__}: {exc}",
                    exc,
                )
        return registry

    def _call_registration(self, plugin_name: str, slot: Slot) -> list[Registration]:
        staged: list[Registration] = []

        def register(name: str, component: object) -> None:
            if not isinstance(name, str) or not name.strip():
                raise PluginError(f"plugin '{plugin_name}': {slot.hook} registered an empty name")
            staged.append(Registration(slot, name, plugin_name, component))

        try:
            for impl in self._impls_of(plugin_name, slot.hook):
                impl.function(register=register)
        except PluginError:
            raise
        except Exception as exc:
            raise PluginError(f"hook {slot.hook} raised {type(exc).__name__}: {exc}") from exc
        return staged

    def _impls_of(self, plugin_name: str, hook_name: str) -> list[Any]:
        """One plugin's implementations of a hook, called one plugin at a time for isolation."""
        hook = getattr(self.pm.hook, hook_name)
        return [impl for impl in hook.get_hookimpls() if impl.plugin_name == plugin_name]

    def provides(self, plugin_name: str) -> dict[str, list[str]]:
        provided = self.registry.provided_by(plugin_name)
        commands = self._commands.get(plugin_name)
        if commands:
            provided["command"] = commands
        return provided

    # -- CLI commands ---------------------------------------------------------------

    def add_commands(self, cli: Any) -> None:
        """Let every loaded plugin add its commands; a failing plugin's are removed."""
        for plugin_name, record in list(self.records.items()):
            if record.status != "loaded" or "register_commands" not in record.hooks:
                continue
            before = dict(cli.commands)
            try:
                for impl in self._impls_of(plugin_name, "register_commands"):
                    impl.function(cli=cli)
            except Exception as exc:
                for added in set(cli.commands) - set(before):
                    del cli.commands[added]
                cli.commands.update(before)
                self._failed(
                    record, f"hook register_commands raised {type(exc).__name__}: {exc}", exc
                )
                continue
            added = sorted(set(cli.commands) - set(before))
            replaced = [n for n in before if cli.commands[n] is not before[n]]
            if replaced:
                owner = next(
                    (p for p, names in self._commands.items() if replaced[0] in names), "?"
                )
                cli.commands.update(before)
                self._failed(
                    record,
                    f"command '{replaced[0]}' is registered by both plugin '{owner}' "
                    f"and plugin '{plugin_name}'",
                    None,
                )
                for name in added:
                    del cli.commands[name]
                continue
            self._commands[plugin_name] = added

    # -- lifecycle and events -------------------------------------------------------

    def configure(self, config: Any) -> None:
        """Run ``cleveragents_configure`` once, isolating each plugin."""
        if self._configured_with is not None:
            return
        self._configured_with = config
        for plugin_name, exc in self.call_event("cleveragents_configure", config=config):
            self._failed(self.records[plugin_name], f"configure failed: {exc}", exc)

    def unconfigure(self) -> None:
        if self._configured_with is not None:
            self.call_event("cleveragents_unconfigure", config=self._configured_with)
            self._configured_with = None

    def implements(self, hook_name: str) -> bool:
        """Whether any plugin implements the hook ``hook_name`` (so its arguments are
        worth building)."""
        return bool(getattr(self.pm.hook, hook_name).get_hookimpls())

    def call_event(self, hook_name: str, **kwargs: Any) -> list[tuple[str, BaseException]]:
        """Call an event hook on each plugin separately; return the failures.

        Unlike a plain pluggy call, one plugin raising does not stop the others.
        """
        failures: list[tuple[str, BaseException]] = []
        hook = getattr(self.pm.hook, hook_name)
        for impl in reversed(hook.get_hookimpls()):
            try:
                impl.function(**{arg: kwargs[arg] for arg in impl.argnames})
            except Exception as exc:
                failures.append((impl.plugin_name, exc))
        return failures

    # -- reporting ------------------------------------------------------------------

    def describe(self) -> list[dict[str, Any]]:
        """One dict per plugin, built-ins first, for ``plugins list --json``."""
        self.registry  # noqa: B018 - build it so failures show up in the records
        records = sorted(self.records.values(), key=lambda r: (not r.builtin, r.name))
        return [r.to_dict(self.provides(r.name) if r.status == "loaded" else {}) for r in records]


def _location_of(plugin: object) -> str | None:
    path = getattr(plugin, "__file__", None)
    if path is None:
        module = sys.modules.get(getattr(type(plugin), "__module__", ""), None)
        path = getattr(module, "__file__", None)
    return str(Path(path).resolve()) if path else None
