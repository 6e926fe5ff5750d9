"""Which component fills each of the ten pipeline slots, and with what settings.

Each slot is resolved through the scope chain plan > project > global >
built-in (Chain of Responsibility): the first scope that names a component
for the slot wins. A component is named as the registry accepts it: a
registered name (``"greedy-knapsack"``), ``"builtin:ClassName"`` (the
shipped default of that class) or ``"module:ClassName"``. An unknown name
is an error that lists the valid ones. A ``"module:ClassName"`` that cannot
be used (the import fails, the constructor raises, the object does not
satisfy the slot's Protocol) is replaced by the slot's built-in default and
reported (``PipelineConfig.problems``), as a component that fails while
running is.

* plan scope: ``Plan.pipeline_overrides`` (or any mapping slot -> component);
* project scope: a project's ``properties["pipeline"]`` (or any mapping);
* global scope: ``context.pipeline.<slot>`` of the configuration chain
  (CLI > environment > project file > global file);
* built-in: :data:`cleveragents.config.PIPELINE_SLOTS`.

Stage settings come from the configuration: ``context.pipeline.<slot>.*``
plus the few keys kept elsewhere (``context.fusion.*``,
``context.budget.min-useful-budget``, ``context.budget.skeleton-ratio``).
Strategy settings ``context.strategies.<name>.<key>`` (``arce.max-rounds``,
``breadth-depth-navigator.max-hops`` …) go to ``settings["strategies.<name>"]``,
where a strategy reads them during an assembly.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from typing import TYPE_CHECKING, Any

from cleveragents.config import DEFAULTS
from cleveragents.config import PIPELINE_SLOTS as BUILTIN_COMPONENTS
from cleveragents.errors import PluginError, ValidationError
from cleveragents_acms.pipeline._common import STAGE_SETTINGS, log

if TYPE_CHECKING:
    from cleveragents.config import Config
    from cleveragents.protocols.pipeline import (
        BudgetAllocatorProtocol,
        BudgetPackerProtocol,
        DetailDepthResolverProtocol,
        FragmentDeduplicatorProtocol,
        FragmentOrdererProtocol,
        FragmentScorerProtocol,
        PreambleGeneratorProtocol,
        SkeletonCompressorProtocol,
        StrategyExecutorProtocol,
        StrategySelectorProtocol,
    )
    from cleveragents.registry import Registry

__all__ = [
    "SCOPES",
    "SLOT_FIELDS",
    "PipelineConfig",
    "PipelineConfigResolver",
    "default_pipeline_config",
    "stage_settings",
    "strategy_settings",
]

#: Pipeline slot key -> PipelineConfig field, in stage order.
SLOT_FIELDS: dict[str, str] = {slot: slot.replace("-", "_") for slot in BUILTIN_COMPONENTS}
SCOPES = ("plan", "project", "global", "built-in")


@dataclass
class PipelineConfig:
    """The ten components of one assembly, and the settings they run with."""

    strategy_selector: StrategySelectorProtocol
    budget_allocator: BudgetAllocatorProtocol
    strategy_executor: StrategyExecutorProtocol
    fragment_deduplicator: FragmentDeduplicatorProtocol
    detail_depth_resolver: DetailDepthResolverProtocol
    fragment_scorer: FragmentScorerProtocol
    budget_packer: BudgetPackerProtocol
    fragment_orderer: FragmentOrdererProtocol
    preamble_generator: PreambleGeneratorProtocol
    skeleton_compressor: SkeletonCompressorProtocol
    #: slot -> settings of its stage (``settings["budget-packer"]["min-fragment-tokens"]``)
    settings: dict[str, dict[str, Any]] = field(default_factory=dict)
    #: slot -> (scope that chose it, the name it was chosen by)
    sources: dict[str, tuple[str, str]] = field(default_factory=dict)
    #: slot -> why the configured component was replaced by the built-in default
    problems: dict[str, str] = field(default_factory=dict)

    def component(self, slot: str) -> Any:
        return getattr(self, SLOT_FIELDS[slot])

    def replace(self, **components: Any) -> PipelineConfig:
        """A copy with some components swapped (Prototype)."""
        values = {f.name: getattr(self, f.name) for f in fields(self)}
        values.update(components)
        return PipelineConfig(**values)


def stage_settings(config: Config | Mapping[str, Any] | None = None) -> dict[str, dict[str, Any]]:
    """Every stage's settings: built-in defaults overlaid with ``config``."""

    def get(key: str) -> Any:
        if config is None:
            return DEFAULTS.get(key)
        if isinstance(config, Mapping):
            return config.get(key, DEFAULTS.get(key))
        return config.get(key, DEFAULTS.get(key))

    settings: dict[str, dict[str, Any]] = {slot: {} for slot in SLOT_FIELDS}
    known = [k for k in DEFAULTS if k.startswith("context.pipeline.") and k.count(".") == 3]
    if config is not None and not isinstance(config, Mapping):
        for slot in SLOT_FIELDS:
            for name in config.section(f"context.pipeline.{slot}"):
                known.append(f"context.pipeline.{slot}.{name}")
    elif isinstance(config, Mapping):
        known.extend(k for k in config if k.startswith("context.pipeline.") and k.count(".") == 3)
    for key in dict.fromkeys(known):
        _, _, slot, name = key.split(".", 3)
        if slot in settings:
            settings[slot][name] = get(key)
    for (slot, name), key in STAGE_SETTINGS.items():
        settings[slot][name] = get(key)
    settings.update(strategy_settings(config))
    return settings


def strategy_settings(
    config: Config | Mapping[str, Any] | None = None,
) -> dict[str, dict[str, Any]]:
    """``{"strategies.<name>": {key: value}}`` from ``context.strategies.<name>.<key>``."""
    prefix = "context.strategies."
    flat: dict[str, Any] = {
        k[len(prefix) :]: v for k, v in DEFAULTS.items() if k.startswith(prefix)
    }
    if isinstance(config, Mapping):
        flat.update((k[len(prefix) :], v) for k, v in config.items() if k.startswith(prefix))
    elif config is not None:
        flat.update(config.section("context.strategies"))
    out: dict[str, dict[str, Any]] = {}
    for relative, value in flat.items():
        name, dot, key = relative.partition(".")
        if dot and name and key:
            out.setdefault(f"strategies.{name}", {})[key] = value
    return out


def _overrides_of(scope: object) -> Mapping[str, Any]:
    """slot -> component of a scope given as a mapping, a Plan or a Project."""
    if scope is None:
        return {}
    if isinstance(scope, Mapping):
        return scope
    overrides = getattr(scope, "pipeline_overrides", None)
    if isinstance(overrides, Mapping):
        return overrides
    properties = getattr(scope, "properties", None)
    if isinstance(properties, Mapping) and isinstance(properties.get("pipeline"), Mapping):
        return properties["pipeline"]
    return {}


class PipelineConfigResolver:
    """Resolves the effective PipelineConfig through plan > project > global > built-in."""

    def __init__(self, registry: Registry, config: Config | Mapping[str, Any] | None = None):
        self.registry = registry
        self.config = config

    def global_overrides(self, config: Config | Mapping[str, Any] | None = None) -> dict[str, str]:
        """slot -> component named by the configuration (without the built-in defaults)."""
        config = self.config if config is None else config
        if config is None:
            return {}
        out: dict[str, str] = {}
        for slot in SLOT_FIELDS:
            key = f"context.pipeline.{slot}"
            if isinstance(config, Mapping):
                value = config.get(key)
            else:
                value = config.get(key) if config.source(key) != "default" else None
            if isinstance(value, Mapping):  # a table: its component
                value = value.get("component")
            if isinstance(value, str) and value.strip():
                out[slot] = value.strip()
        return out

    def resolve(
        self,
        plan: object = None,
        project: object = None,
        global_config: Config | Mapping[str, Any] | None = None,
    ) -> PipelineConfig:
        config = self.config if global_config is None else global_config
        chain = (
            ("plan", _overrides_of(plan)),
            ("project", _overrides_of(project)),
            ("global", self.global_overrides(config)),
            ("built-in", BUILTIN_COMPONENTS),
        )
        components: dict[str, Any] = {}
        sources: dict[str, tuple[str, str]] = {}
        problems: dict[str, str] = {}
        for slot, field_name in SLOT_FIELDS.items():
            scope_name, spec = next(
                ((name, scope[slot]) for name, scope in chain if scope.get(slot)),
                ("built-in", BUILTIN_COMPONENTS[slot]),
            )
            if not isinstance(spec, str):
                raise ValidationError(
                    f"{scope_name} scope names {slot} with a {type(spec).__name__}, "
                    "expected a component name"
                )
            try:
                components[field_name] = self.registry.resolve_scoped(
                    slot, *(scope for _, scope in chain)
                )
            except PluginError as exc:
                if ":" not in spec or spec.startswith("builtin:"):
                    raise
                default = self.registry.resolve(slot, BUILTIN_COMPONENTS[slot])
                components[field_name] = default
                problems[slot] = (
                    f"{slot} {spec} could not be used ({exc.message}); "
                    f"used the built-in {type(default).__name__}"
                )
                log.warning("pipeline component replaced", slot=slot, spec=spec, error=exc.message)
            sources[slot] = (scope_name, spec)
        return PipelineConfig(
            **components, settings=stage_settings(config), sources=sources, problems=problems
        )


def default_pipeline_config(settings: dict[str, dict[str, Any]] | None = None) -> PipelineConfig:
    """The built-in components, built directly (no registry needed)."""
    from cleveragents_acms.pipeline.defaults import default_components

    return PipelineConfig(
        **{SLOT_FIELDS[slot]: component for slot, component in default_components().items()},
        settings=settings if settings is not None else stage_settings(),
        sources={slot: ("built-in", spec) for slot, spec in BUILTIN_COMPONENTS.items()},
    )
