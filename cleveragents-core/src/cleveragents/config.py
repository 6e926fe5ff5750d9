"""The configuration chain: CLI flags > environment > project file > global file > defaults.

Keys are dotted and kebab-case, as the specification names them
(``context.budget.skeleton-ratio``, ``context.pipeline.fragment-scorer``); a
TOML table is a key prefix, so ``[context.budget]`` + ``skeleton-ratio = 0.2``
is the key ``context.budget.skeleton-ratio``. Every key can also come from an
environment variable: ``CLEVERAGENTS_`` + the key upper-cased with ``.`` → ``__``
and ``-`` → ``_`` (``CLEVERAGENTS_CONTEXT__BUDGET__SKELETON_RATIO=0.2``); its
value is read as a TOML value when it is one (``5``, ``true``, ``[9, 4]``) and
as a plain string otherwise.

A pipeline slot is both a value (its component) and a table (its settings):
``context.pipeline.fragment-scorer`` and
``context.pipeline.fragment-scorer.relevance-weight`` are both keys. How such
a slot is written in a file is described in :mod:`cleveragents.config_files`,
which also does all reading and writing of files.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from cleveragents import paths
from cleveragents.config_files import (
    COMPONENT_KEY,
    DELETE,
    flatten,
    nest,
    parse_value,
    read_file,
    toml_key,
    toml_value,
    update_file,
)
from cleveragents.errors import ConfigurationError, ValidationError

__all__ = [
    "COMPONENT_KEY",
    "DEFAULTS",
    "ENV_PREFIX",
    "PIPELINE_SLOTS",
    "SECTIONS",
    "Config",
    "Scope",
    "config_paths",
    "env_var_name",
    "load_config",
    "parse_value",
    "toml_key",
    "toml_value",
]

Scope = Literal["global", "project"]

ENV_PREFIX = "CLEVERAGENTS_"
PROJECT_CONFIG_ENV = "CLEVERAGENTS_PROJECT_CONFIG"
#: Top-level sections a key may belong to (``plugin.<name>.*`` is for third-party plugins).
SECTIONS = ("context", "core", "index", "sandbox", "plugins", "provider", "plugin")

PIPELINE_SLOTS: dict[str, str] = {
    "strategy-selector": "builtin:ConfidenceWeightedSelector",
    "budget-allocator": "builtin:ProportionalBudgetAllocator",
    "strategy-executor": "builtin:ParallelStrategyExecutor",
    "fragment-deduplicator": "builtin:ContentHashDeduplicator",
    "detail-depth-resolver": "builtin:MaxDepthResolver",
    "fragment-scorer": "builtin:WeightedCompositeScorer",
    "budget-packer": "builtin:GreedyKnapsackPacker",
    "fragment-orderer": "builtin:RelevanceCoherenceOrderer",
    "preamble-generator": "builtin:ProvenancePreambleGenerator",
    "skeleton-compressor": "builtin:DepthReductionCompressor",
}

#: Built-in defaults, the last link of the chain. ``None`` means "not set".
DEFAULTS: dict[str, Any] = {
    # -- core ---------------------------------------------------------------
    # None: SQLite at $CLEVERAGENTS_HOME/cleveragents.db; a postgresql:// URL for server mode.
    "core.database-url": None,
    "core.database-busy-timeout": 5.0,
    "core.log.level": "warning",
    "core.log.retention-days": 30,
    "core.backup.retention-days": 30,
    # -- context: tiers, strategies, limits ----------------------------------
    "context.hot.max-tokens": 16000,
    "context.warm.max-decisions": 100,
    "context.warm.retention-hours": 24,
    "context.cold.max-decisions": 500,
    "context.cold.retention-days": 90,
    # The spec's default set (001, "Default enabled") plus arce. The selector treats the
    # spec's fallback path arce -> breadth-depth-navigator -> semantic-embedding ->
    # simple-keyword as a degradation path: of these, the first that can run is selected
    # and the others stand by for it (and run if it finds nothing); a note says when a
    # missing backend made the selector degrade. On the quality benchmark
    # (benchmarks/quality/README.md) the four sharing the budget put the code to change
    # in the context in 46 / 57 / 64 / 70 % of the issues at 4k / 8k / 16k / 32k tokens
    # and ranked the gold file in the top five for 75-79 %; arce alone 48 / 59 / 64 / 75 %
    # and 84 % (context.pipeline.strategy-selector.share-fallback-path restores sharing).
    "context.strategies.enabled": [
        "arce",
        "simple-keyword",
        "semantic-embedding",
        "breadth-depth-navigator",
    ],
    "context.strategies.arce.max-rounds": 3,
    "context.strategies.breadth-depth-navigator.max-hops": 4,
    "context.query.min-relevance": 0.3,
    # 0: no limit
    "context.file.max-size": 1_048_576,
    "context.file.max-total-size": 52_428_800,
    "context.budget.refresh-threshold": 0.30,
    "context.budget.min-useful-budget": 500,
    "context.budget.skeleton-ratio": 0.15,
    "context.fusion.preamble-enabled": True,
    "context.fusion.preamble-max-tokens": 200,
    "context.fusion.ordering": "relevance-coherence",
    "context.fusion.dedup-strategy": "content-hash",
    # -- context: the ten pipeline components and their settings -------------
    **{f"context.pipeline.{slot}": component for slot, component in PIPELINE_SLOTS.items()},
    # what strategies sharing a budget leave unused goes to the leading one
    "context.pipeline.budget-allocator.refill-unused": True,
    # false: of the fallback path, the first strategy that can run is selected and the
    # later ones stand by for it (unless a request names strategies)
    "context.pipeline.strategy-selector.share-fallback-path": False,
    "context.pipeline.strategy-executor.timeout-seconds": 30,
    "context.pipeline.strategy-executor.max-workers": 4,
    "context.pipeline.strategy-executor.circuit-breaker-threshold": 3,
    "context.pipeline.fragment-scorer.relevance-weight": 0.4,
    "context.pipeline.fragment-scorer.hierarchy-weight": 0.3,
    "context.pipeline.fragment-scorer.quality-weight": 0.2,
    "context.pipeline.fragment-scorer.recency-weight": 0.1,
    "context.pipeline.budget-packer.depth-fallback-steps": [9, 4, 2, 0],
    "context.pipeline.budget-packer.min-fragment-tokens": 10,
    # -- index backends ------------------------------------------------------
    "index.text.backend": "tantivy",
    "index.vector.backend": "faiss",
    "index.graph.backend": "oxigraph",
    # "auto": the best embedder an installed plugin registers that works offline.
    "index.embedding.provider": "auto",
    # -- sandbox, plugins ----------------------------------------------------
    "sandbox.strategy": "filesystem_copy",
    "plugins.strict": False,
}

_LOG_LEVELS = ("debug", "info", "warning", "error", "critical")
_UNIT_INTERVAL = frozenset(
    {
        "context.budget.skeleton-ratio",
        "context.budget.refresh-threshold",
        "context.query.min-relevance",
        *(k for k in DEFAULTS if k.startswith("context.pipeline.fragment-scorer.")),
    }
)
_KIND: dict[type, str] = {
    bool: "true or false",
    int: "an integer",
    float: "a number",
    str: "a string",
    list: "an array",
}
_MISSING: Any = object()


def env_var_name(key: str) -> str:
    """The environment variable that sets ``key``: ``CLEVERAGENTS_CORE__LOG__LEVEL``."""
    return ENV_PREFIX + key.upper().replace(".", "__").replace("-", "_")


def _coerce(key: str, text: str) -> Any:
    """A string from the command line or environment, typed for ``key``."""
    value = parse_value(text)
    if isinstance(DEFAULTS.get(key), str) and not isinstance(value, str):
        return text  # core.log.level = 5 is a (bad) string, not a number
    return value


def _problem(key: str, value: Any) -> str | None:
    """Why ``value`` does not suit ``key``, or ``None`` when it does."""
    default = DEFAULTS.get(key, _MISSING)
    if default is _MISSING or default is None:
        return None
    expected = type(default)
    if expected is bool:
        ok = isinstance(value, bool)
    elif expected is int:
        ok = isinstance(value, int) and not isinstance(value, bool)
    elif expected is float:
        ok = isinstance(value, (int, float)) and not isinstance(value, bool)
    else:
        ok = isinstance(value, expected)
    if not ok:
        return f"expects {_KIND.get(expected, expected.__name__)}, got {value!r}"
    if key == "core.log.level" and str(value).lower() not in _LOG_LEVELS:
        return f"must be one of {', '.join(_LOG_LEVELS)}, got {value!r}"
    if key in _UNIT_INTERVAL and not 0 <= value <= 1:
        return f"must be between 0 and 1, got {value!r}"
    if isinstance(value, (int, float)) and not isinstance(value, bool) and value < 0:
        return f"must not be negative, got {value!r}"
    return None


# -- the environment and the files -----------------------------------------------


def _key_from_env_name(name: str) -> str | None:
    parts = name[len(ENV_PREFIX) :].split("__")
    if len(parts) < 2 or not all(parts):
        return None
    return ".".join(part.lower().replace("_", "-") for part in parts)


def _read_env(
    env: Mapping[str, str], known: Iterable[str]
) -> tuple[dict[str, Any], dict[str, str]]:
    """Config keys set through ``CLEVERAGENTS_SECTION__KEY`` variables, and their names."""
    by_name = {env_var_name(key): key for key in known}
    values: dict[str, Any] = {}
    names: dict[str, str] = {}
    for name in sorted(env):
        if not name.startswith(ENV_PREFIX) or "__" not in name:
            continue
        key = by_name.get(name) or _key_from_env_name(name)
        if key is None:
            continue
        for sub, value in flatten({key: _coerce(key, env[name])}).items():
            values[sub] = value
            names[sub] = name
    return values, names


def _global_config_path() -> Path:
    return paths.home() / "config.toml"


def _project_config_path(cwd: Path, env: Mapping[str, str], global_path: Path) -> Path:
    """The project ``config.toml`` to read and to write with ``--project``.

    ``$CLEVERAGENTS_PROJECT_CONFIG`` wins; otherwise the nearest
    ``.cleveragents/config.toml`` from ``cwd`` upwards (never the global one).
    When there is none, the file that ``config set --project`` would create:
    in the nearest folder holding ``.cleveragents/`` or ``.git``, else in ``cwd``.
    """
    if configured := env.get(PROJECT_CONFIG_ENV):
        return (cwd / Path(configured).expanduser()).absolute()
    start = cwd.absolute()
    global_dir = global_path.parent.absolute()
    try:
        global_dir = global_dir.resolve()
        start = start.resolve()
    except OSError:
        pass
    fallback: Path | None = None
    for folder in (start, *start.parents):
        marker = folder / ".cleveragents"
        if marker == global_dir:
            continue
        candidate = marker / "config.toml"
        if candidate.is_file():
            return candidate
        if fallback is None and (marker.is_dir() or (folder / ".git").exists()):
            fallback = candidate
    return fallback or start / ".cleveragents" / "config.toml"


def config_paths(
    *, cwd: Path | None = None, env: Mapping[str, str] | None = None
) -> list[tuple[str, Path]]:
    """The files :func:`load_config` reads, lowest precedence first, without reading them."""
    env = os.environ if env is None else env
    global_path = _global_config_path()
    project_path = _project_config_path(Path.cwd() if cwd is None else Path(cwd), env, global_path)
    return [("global", global_path), ("project", project_path)]


# -- the chain --------------------------------------------------------------------


@dataclass
class _Layer:
    label: str  # "cli", "env", "project", "global", "default"
    values: dict[str, Any]
    path: Path | None = None
    env_names: dict[str, str] = field(default_factory=dict)

    def source(self, key: str) -> str:
        if self.label == "env":
            return f"env:{self.env_names[key]}"
        if self.path is not None:
            return f"{self.label}:{self.path}"
        return self.label


class Config:
    """The merged configuration, and the place to change it.

    Built by :func:`load_config`. Reads are plain dict lookups; :meth:`set` and
    :meth:`unset` rewrite one file atomically and update this object.
    """

    def __init__(
        self,
        *,
        global_path: Path,
        project_path: Path,
        cli: Mapping[str, Any] | None = None,
        env: Mapping[str, Any] | None = None,
        env_names: Mapping[str, str] | None = None,
        project: Mapping[str, Any] | None = None,
        global_: Mapping[str, Any] | None = None,
    ) -> None:
        self.global_path = global_path
        self.project_path = project_path
        # highest precedence first
        self._layers = [
            _Layer("cli", dict(cli or {})),
            _Layer("env", dict(env or {}), env_names=dict(env_names or {})),
            _Layer("project", dict(project or {}), project_path),
            _Layer("global", dict(global_ or {}), global_path),
            _Layer("default", dict(DEFAULTS)),
        ]
        self._merge()

    def _merge(self) -> None:
        merged: dict[str, tuple[Any, _Layer]] = {}
        for layer in reversed(self._layers):
            merged.update((key, (value, layer)) for key, value in layer.values.items())
        self._merged = merged

    def _layer(self, label: str) -> _Layer:
        return next(layer for layer in self._layers if layer.label == label)

    def _canonical(self, key: str) -> str:
        """``key`` as known: ``Context.Budget.Skeleton_Ratio`` finds ``…skeleton-ratio``."""
        key = key.strip()
        if key in self._merged or key in DEFAULTS:
            return key
        kebab = key.lower().replace("_", "-")
        if kebab in self._merged or kebab in DEFAULTS:
            return kebab
        return key

    def _children(self, key: str) -> dict[str, Any]:
        prefix = key + "."
        return {k[len(prefix) :]: v for k, (v, _) in self._merged.items() if k.startswith(prefix)}

    # -- reading -----------------------------------------------------------

    def get(self, key: str, default: Any = None) -> Any:
        """The effective value of ``key``, or of a whole table as a nested dict.

        A table's dict is what a TOML file would hold: a pipeline slot that
        has settings appears as ``{"component": "…", "timeout-seconds": 30}``.
        """
        key = self._canonical(key)
        if key in self._merged:
            return self._merged[key][0]
        children = self._children(key)
        return nest(children) if children else default

    def __contains__(self, key: str) -> bool:
        key = self._canonical(key)
        return key in self._merged or bool(self._children(key))

    def section(self, prefix: str) -> dict[str, Any]:
        """The flat keys under ``prefix``, relative to it: ``{"fragment-scorer": …, …}``."""
        return dict(sorted(self._children(self._canonical(prefix)).items()))

    def source(self, key: str) -> str:
        """Where the value of ``key`` comes from.

        ``"cli"``, ``"env:NAME"``, ``"project:/path"``, ``"global:/path"`` or
        ``"default"``; for a table, the most specific source among its keys;
        ``"unset"`` for a key nothing sets.
        """
        key = self._canonical(key)
        if key in self._merged:
            return self._merged[key][1].source(key)
        prefix = key + "."
        for layer in self._layers:
            for name in layer.values:
                if name.startswith(prefix):
                    return layer.source(name)
        return "unset"

    def items(self) -> list[tuple[str, Any, str]]:
        """Every effective key, sorted: ``(key, value, source)``."""
        return [
            (key, value, layer.source(key)) for key, (value, layer) in sorted(self._merged.items())
        ]

    def as_dict(self) -> dict[str, Any]:
        """The whole effective configuration as nested tables."""
        return nest({key: value for key, (value, _) in self._merged.items()})

    def files(self) -> list[tuple[str, Path]]:
        """The files consulted, lowest precedence first: ``[("global", …), ("project", …)]``."""
        return [("global", self.global_path), ("project", self.project_path)]

    def overridden_by(self, key: str, scope: Scope) -> str | None:
        """The source that hides a value written to ``scope``, if any (env, cli, project)."""
        key = self._canonical(key)
        labels = ("cli", "env") if scope == "project" else ("cli", "env", "project")
        for label in labels:
            layer = self._layer(label)
            if key in layer.values:
                return layer.source(key)
        return None

    # -- writing -----------------------------------------------------------

    def path_for(self, scope: Scope) -> Path:
        if scope == "global":
            return self.global_path
        if scope == "project":
            return self.project_path
        raise ValidationError(f"unknown configuration scope {scope!r} (use 'global' or 'project')")

    def check_key(self, key: str) -> str:
        """The canonical form of a key that may be set; raises ``ValidationError`` otherwise.

        A new key is accepted under a known section (third-party settings go
        under ``plugin.<name>.``), unless it looks like a typo of a built-in key.
        """
        key = self._canonical(key)
        parts = key.split(".")
        if (
            len(parts) < 2
            or not all(parts)
            or parts[0] not in SECTIONS
            or not all(re.fullmatch(r"[A-Za-z0-9_/:-]+", part) for part in parts)
        ):
            raise ValidationError(
                f"unknown configuration key {key!r} (known sections: {', '.join(SECTIONS)})",
                details={"key": key},
            )
        if key in self._merged:  # defaults included
            return key
        children = sorted(k for k in self._merged if k.startswith(key + "."))
        if children:
            raise ValidationError(
                f"{key!r} is a section, not a key (for example: {children[0]})",
                details={"key": key},
            )
        import difflib

        close = difflib.get_close_matches(key, list(DEFAULTS), n=1, cutoff=0.85)
        if close:
            raise ValidationError(
                f"unknown configuration key {key!r} (did you mean {close[0]}?)",
                details={"key": key, "suggestion": close[0]},
            )
        return key

    def set(self, key: str, value: Any, *, scope: Scope = "global") -> tuple[Any, Any]:
        """Write ``key = value`` into the ``scope`` file; returns ``(old, new)`` effective values.

        A string ``value`` is read as a TOML value when it is one (``5``,
        ``true``, ``[9, 4]``), except for keys whose default is a string.
        The file keeps its comments and layout; it is replaced atomically, and
        the global file is private to the user (mode 0600).
        """
        path = self.path_for(scope)
        key = self.check_key(key)
        if isinstance(value, str):
            value = _coerce(key, value)
        if value is None:
            raise ValidationError(f"no value for {key!r}; use 'config unset' to remove it")
        if problem := _problem(key, value):
            raise ValidationError(f"invalid value for {key}: {problem}", details={"key": key})
        old = self.get(key)
        values = update_file(path, key, value, private=scope == "global")
        self._layer(scope).values = values
        self._merge()
        return old, value

    def unset(self, key: str, *, scope: Scope = "global") -> Any:
        """Remove ``key`` from the ``scope`` file; returns the value it had there, or ``None``."""
        path = self.path_for(scope)
        key = self._canonical(key)
        layer = self._layer(scope)
        if key not in layer.values:
            if any(k.startswith(key + ".") for k in layer.values):
                raise ValidationError(
                    f"{key!r} is a section; unset its keys one at a time", details={"key": key}
                )
            return None
        old = layer.values[key]
        layer.values = update_file(path, key, DELETE, private=scope == "global")
        self._merge()
        return old


# -- writing files --------------------------------------------------------------


# -- loading ------------------------------------------------------------------------


def _validate(values: Mapping[str, Any], where: str) -> None:
    for key, value in values.items():
        if problem := _problem(key, value):
            raise ConfigurationError(
                f"invalid value for {key} in {where}: {problem}", details={"key": key}
            )


def load_config(
    *,
    cwd: Path | None = None,
    overrides: Mapping[str, Any] | None = None,
    env: Mapping[str, str] | None = None,
) -> Config:
    """Read the whole chain: ``overrides`` > ``env`` > project file > global file > defaults.

    :param cwd: where to start looking for ``.cleveragents/config.toml`` (default: the cwd).
    :param overrides: ``{"core.log.level": "debug"}`` from CLI flags; ``None`` values are skipped.
    :param env: the environment to read ``CLEVERAGENTS_*`` variables from (default: ``os.environ``).
    :raises ConfigurationError: a file is not valid TOML (naming file and line) or a
        known key has a value of the wrong type.
    """
    env = os.environ if env is None else env
    (_, global_path), (_, project_path) = config_paths(cwd=cwd, env=env)
    global_values = read_file(global_path)
    project_values = read_file(project_path) if project_path != global_path else {}
    cli = flatten({k: v for k, v in (overrides or {}).items() if v is not None})
    known = {*DEFAULTS, *global_values, *project_values, *cli}
    env_values, env_names = _read_env(env, known)
    _validate(global_values, str(global_path))
    _validate(project_values, str(project_path))
    for key, value in env_values.items():
        _validate({key: value}, env_names[key])
    _validate(cli, "command-line options")
    return Config(
        global_path=global_path,
        project_path=project_path,
        cli=cli,
        env=env_values,
        env_names=env_names,
        project=project_values,
        global_=global_values,
    )
