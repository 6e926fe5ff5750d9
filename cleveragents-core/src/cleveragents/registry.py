"""The resolved view of what plugins provide: ``registry.strategies``, ``registry.pipeline[…]``.

A registration is either the component itself (checked against its slot's
Protocols when registered) or a lazy ``"module:attribute"`` reference, imported
and checked the first time it is used. Either way a component that breaks its
contract raises :class:`~cleveragents.errors.PluginError` naming the plugin.
"""

from __future__ import annotations

import importlib
import typing
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from types import SimpleNamespace
from typing import Any

from cleveragents.errors import NotFoundError, PluginError, ValidationError
from cleveragents.slots import PIPELINE_SLOTS, SLOTS, SLOTS_BY_KEY, Slot

__all__ = ["Registration", "Registry", "SlotView", "import_reference", "protocol_violations"]

_UNRESOLVED: Any = object()


def import_reference(reference: str) -> Any:
    """Import ``"package.module:attribute.path"``; raise ImportError/AttributeError."""
    module_name, sep, attr_path = reference.partition(":")
    if not sep or not module_name or not attr_path:
        raise ValueError(f"expected 'module:attribute', got {reference!r}")
    obj: Any = importlib.import_module(module_name)
    for part in attr_path.split("."):
        obj = getattr(obj, part)
    return obj


def _protocol_members(proto: type) -> list[str]:
    attrs = getattr(proto, "__protocol_attrs__", None)
    if attrs is None:  # Python 3.11
        attrs = typing._get_protocol_attrs(proto)  # type: ignore[attr-defined]
    return sorted(attrs)


def protocol_violations(component: object, slot: Slot) -> list[str]:
    """What ``component`` lacks to fill ``slot``; empty when it conforms."""
    if slot.check is not None:
        problem = slot.check(component)
        return [problem] if problem else []
    if slot.registers_classes and not isinstance(component, type):
        return [f"expected a class, got an instance of {type(component).__name__}"]
    problems = []
    for proto in slot.protocols:
        missing = [m for m in _protocol_members(proto) if not hasattr(component, m)]
        not_callable = [
            m
            for m in _protocol_members(proto)
            if m not in missing
            and callable(getattr(proto, m, None))
            and not isinstance(getattr(proto, m, None), property)
            and not callable(getattr(component, m))
        ]
        if missing:
            problems.append(f"does not satisfy {proto.__name__}: missing {', '.join(missing)}")
        if not_callable:
            problems.append(f"{proto.__name__}: not callable: {', '.join(not_callable)}")
    return problems


@dataclass
class Registration:
    """One named component a plugin registered in one slot."""

    slot: Slot
    name: str
    plugin: str
    target: object
    _value: Any = field(default=_UNRESOLVED, repr=False)

    @property
    def is_lazy(self) -> bool:
        return isinstance(self.target, str) and self.slot.check is None

    @property
    def is_resolved(self) -> bool:
        return self._value is not _UNRESOLVED

    def describe(self) -> str:
        """Where the component comes from, for ``plugins show``."""
        if isinstance(self.target, str):
            return self.target
        kind = self.target if isinstance(self.target, type) else type(self.target)
        return f"{kind.__module__}:{kind.__qualname__}"

    def resolve(self) -> Any:
        """The component, imported and instantiated on first use, then checked."""
        if self._value is not _UNRESOLVED:
            return self._value
        component = self.target
        try:
            if self.is_lazy:
                component = import_reference(str(self.target))
            if isinstance(component, type) and not self.slot.registers_classes:
                component = component()
        except Exception as exc:
            raise PluginError(
                f"plugin '{self.plugin}': {self.slot.key} '{self.name}' could not be loaded "
                f"from {self.describe()}: {type(exc).__name__}: {exc}",
                details={"plugin": self.plugin, "slot": self.slot.key, "name": self.name},
            ) from exc
        self.check(component)
        self._value = component
        return component

    def check(self, component: object) -> None:
        problems = protocol_violations(component, self.slot)
        if problems:
            raise PluginError(
                f"plugin '{self.plugin}': {self.slot.key} '{self.name}' " + "; ".join(problems),
                details={"plugin": self.plugin, "slot": self.slot.key, "name": self.name},
            )


class SlotView(Mapping[str, Any]):
    """Name -> component for one slot; looking a name up resolves it."""

    def __init__(self, slot: Slot, registrations: dict[str, Registration]) -> None:
        self.slot = slot
        self._registrations = registrations

    def __getitem__(self, name: str) -> Any:
        return self._registrations[name].resolve()

    def __contains__(self, name: object) -> bool:
        # Mapping's default looks the name up, which would load the component.
        return name in self._registrations

    def __iter__(self) -> Iterator[str]:
        return iter(self._registrations)

    def __len__(self) -> int:
        return len(self._registrations)

    def registration(self, name: str) -> Registration:
        return self._registrations[name]

    def registrations(self) -> list[Registration]:
        return list(self._registrations.values())

    def get_or_error(self, name: str) -> Any:
        """The component called ``name``, or a NotFoundError listing the valid names."""
        if name not in self._registrations:
            valid = ", ".join(sorted(self._registrations)) or "none registered"
            raise NotFoundError(f"unknown {self.slot.key} '{name}' (available: {valid})")
        return self[name]


class Registry:
    """Every registration of every loaded plugin, by slot."""

    def __init__(self) -> None:
        self._slots: dict[str, dict[str, Registration]] = {s.key: {} for s in SLOTS}

    # -- building ---------------------------------------------------------------

    def add(self, registration: Registration) -> None:
        """Add one registration; a name clash raises PluginError naming both plugins."""
        existing = self._slots[registration.slot.key].get(registration.name)
        if existing is not None:
            raise PluginError(
                f"{registration.slot.key} '{registration.name}' is registered by both "
                f"plugin '{existing.plugin}' and plugin '{registration.plugin}'",
                details={"plugins": [existing.plugin, registration.plugin]},
            )
        self._slots[registration.slot.key][registration.name] = registration

    def remove_plugin(self, plugin: str) -> None:
        for registrations in self._slots.values():
            for name in [n for n, r in registrations.items() if r.plugin == plugin]:
                del registrations[name]

    # -- reading ------------------------------------------------------------------

    def __getitem__(self, slot_key: str) -> SlotView:
        if slot_key not in self._slots:
            raise ValidationError(
                f"unknown slot '{slot_key}' (slots: {', '.join(sorted(self._slots))})"
            )
        return SlotView(SLOTS_BY_KEY[slot_key], self._slots[slot_key])

    def all_registrations(self) -> list[Registration]:
        return [r for regs in self._slots.values() for r in regs.values()]

    def provided_by(self, plugin: str) -> dict[str, list[str]]:
        """``{slot: [names]}`` that ``plugin`` provides, in slot order."""
        out: dict[str, list[str]] = {}
        for key, registrations in self._slots.items():
            names = [n for n, r in registrations.items() if r.plugin == plugin]
            if names:
                out[key] = names
        return out

    @property
    def strategies(self) -> SlotView:
        return self["strategy"]

    @property
    def analyzers(self) -> SlotView:
        return self["analyzer"]

    @property
    def embedders(self) -> SlotView:
        return self["embedder"]

    @property
    def tokenizers(self) -> SlotView:
        return self["tokenizer"]

    @property
    def sandboxes(self) -> SlotView:
        return self["sandbox"]

    @property
    def tools(self) -> SlotView:
        return self["tool"]

    @property
    def backends(self) -> SimpleNamespace:
        """``registry.backends.text`` / ``.vector`` / ``.graph``: backend classes by name."""
        return SimpleNamespace(
            text=self["text-backend"], vector=self["vector-backend"], graph=self["graph-backend"]
        )

    @property
    def pipeline(self) -> dict[str, SlotView]:
        """``registry.pipeline["fragment-scorer"]``: components of each pipeline stage."""
        return {slot.key: self[slot.key] for slot in PIPELINE_SLOTS}

    # -- choosing a component -------------------------------------------------------

    def resolve(self, slot_key: str, spec: str) -> Any:
        """A component by registered name, ``"builtin:ClassName"`` or ``"module:ClassName"``.

        ``builtin:X`` picks the registered component whose class is named ``X``
        (the spec's notation for the shipped defaults); any other ``module:attr``
        is imported, instantiated if a class, and checked against the slot.
        """
        view = self[slot_key]
        if not isinstance(spec, str) or not spec.strip():
            raise ValidationError(f"empty component name for slot '{slot_key}'")
        if spec in view:
            return view[spec]
        module_name, sep, attr = spec.partition(":")
        if sep and module_name == "builtin":
            for registration in view.registrations():
                if registration.describe().rpartition(":")[2].split(".")[-1] == attr:
                    return registration.resolve()
            raise NotFoundError(
                f"no registered {slot_key} is implemented by class '{attr}' "
                f"(registered: {', '.join(sorted(view)) or 'none'})"
            )
        if sep:
            ad_hoc = Registration(view.slot, spec, f"config:{module_name}", spec)
            return ad_hoc.resolve()
        return view.get_or_error(spec)

    def resolve_scoped(self, slot_key: str, *scopes: Mapping[str, Any] | None) -> Any:
        """The component named by the first scope that sets ``slot_key``.

        Pass scopes most specific first: plan, project, global (the global
        configuration carries the built-in defaults).
        """
        for scope in scopes:
            if scope and scope.get(slot_key):
                return self.resolve(slot_key, scope[slot_key])
        raise ValidationError(f"no component configured for slot '{slot_key}'")

    def validate_all(self) -> list[tuple[Registration, PluginError]]:
        """Resolve every registration; return those that fail (``plugins check``)."""
        failures = []
        for registration in self.all_registrations():
            try:
                registration.resolve()
            except PluginError as exc:
                failures.append((registration, exc))
        return failures
