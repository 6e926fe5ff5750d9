"""The physical index of one project: text backend, graph backend and node store.

Folders follow the kernel's layout: ``index/text/<project>/``,
``index/graph/<project>/`` (graph store and ``nodes.db``) and, when a vector
plugin is installed, ``index/vector/<project>/``. Backends are the classes
registered in the kernel's backend slots, chosen by ``index.*.backend``.
"""

from __future__ import annotations

import inspect
import threading
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from cleveragents import paths
from cleveragents.errors import ConfigurationError, NotFoundError
from cleveragents_acms.indexing.store import NodeStore
from cleveragents_acms.indexing.vectors import VectorIndex, open_vector_index

__all__ = [
    "NO_BACKEND",
    "OPTIONAL_STORES",
    "ProjectIndex",
    "backend_class",
    "backend_options",
    "construct_backend",
    "open_backend",
]


#: ``index.<kind>.backend = "none"``: the stores a project's index can go without (the
#: spec's progressive enhancement path: text search first, vectors and the graph added
#: later). Every stage has the text index and the node store.
NO_BACKEND = "none"
OPTIONAL_STORES = ("graph", "vector")


def backend_class(registry: Any, config: Any, kind: str) -> type | None:
    """The configured ``kind`` backend class (``index.<kind>.backend``), None if none is
    installed or the store is turned off (``none``)."""
    name = config.get(f"index.{kind}.backend") if config is not None else None
    if name == NO_BACKEND:
        if kind not in OPTIONAL_STORES:
            raise ConfigurationError(
                f'index.{kind}.backend cannot be "{NO_BACKEND}": every index has a {kind} '
                f"store (only {' and '.join(OPTIONAL_STORES)} can be turned off)"
            )
        return None
    view = registry[f"{kind}-backend"]
    if not len(view):
        return None
    if not name or name not in view:
        if name and name not in view:
            raise ConfigurationError(
                f"index.{kind}.backend = '{name}' is not installed "
                f"(available: {', '.join(sorted(view))}"
                + (f', or "{NO_BACKEND}" to index without it)' if kind in OPTIONAL_STORES else ")")
            )
        name = sorted(view)[0]
    return view[name]


def open_backend(registry: Any, config: Any, kind: str, location: Path, **extra: Any) -> Any | None:
    """Instantiate the configured ``kind`` backend class at ``location`` (None if absent)."""
    cls = backend_class(registry, config, kind)
    if cls is None:
        return None
    location.mkdir(parents=True, exist_ok=True)
    return construct_backend(cls, kind, location, {**backend_options(config, kind), **extra})


def backend_options(config: Any, kind: str) -> dict[str, Any]:
    """``index.<kind>.options``: a table of keyword arguments for the backend class."""
    options = config.get(f"index.{kind}.options") if config is not None else None
    if options is None:
        return {}
    if not isinstance(options, Mapping):
        raise ConfigurationError(
            f"index.{kind}.options must be a table of the {kind} backend's options, "
            f"such as {{name = value}} (TOML, also in CLEVERAGENTS_INDEX__"
            f"{kind.upper()}__OPTIONS); got {options!r}"
        )
    return dict(options)


def construct_backend(cls: type, kind: str, location: Path, options: Mapping[str, Any]) -> Any:
    """``cls(location, **options)``; options it does not take are a configuration error."""
    try:
        inspect.signature(cls).bind(location, **options)
    except TypeError as exc:
        raise ConfigurationError(
            f"index.{kind}.options do not suit the {kind} backend {cls.__name__}: {exc}"
        ) from exc
    except ValueError:  # no signature to check (a builtin): let the call say
        pass
    return cls(location, **options)


class _Opening:
    """``opener(*args)`` run in a thread of its own: :meth:`result` waits for it."""

    def __init__(self, opener: Any, *args: Any) -> None:
        self._value: Any = None
        self._error: BaseException | None = None
        self._thread = threading.Thread(
            target=self._run, args=(opener, args), name="open-graph", daemon=True
        )
        self._thread.start()

    def _run(self, opener: Any, args: tuple[Any, ...]) -> None:
        try:
            self._value = opener(*args)
        except BaseException as exc:  # handed to the thread that waits
            self._error = exc

    def result(self, *, quiet: bool = False) -> Any:
        """What the opener returned; what it raised is raised here, unless ``quiet``."""
        self._thread.join()
        if self._error is not None and not quiet:
            raise self._error
        return self._value


@dataclass
class ProjectIndex:
    """Open handles on one project's stores; close() releases them."""

    project: str
    text: Any
    graph: Any
    nodes: NodeStore
    #: Present when a vector plugin is installed (opened for writing only).
    vectors: VectorIndex | None = None
    extras: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def open(
        cls,
        project: str,
        registry: Any,
        config: Any,
        *,
        create: bool = True,
        with_vectors: bool = False,
    ) -> ProjectIndex:
        graph_dir = paths.index_dir("graph", project)
        if not create and not (graph_dir / "nodes.db").exists():
            raise NotFoundError(
                f"project '{project}' has no index yet: "
                f"run `cleveragents index PATH --project {project}`"
            )
        graph_class = backend_class(registry, config, "graph")
        graph_opening = None
        if graph_class is not None and getattr(graph_class, "opens_in_background", False):
            # Its store opens without the GIL (RocksDB reads its files' metadata: 20-35
            # ms on the benchmark corpus) while this thread opens the others.
            graph_opening = _Opening(open_backend, registry, config, "graph", graph_dir / "store")
        opened: list[Any] = []
        try:
            text = open_backend(registry, config, "text", paths.index_dir("text", project))
            opened.append(text)
            if with_vectors:
                vectors = open_vector_index(registry, config, project)
                opened.append(vectors)
            else:
                vectors = None
            graph = (
                graph_opening.result()
                if graph_opening is not None
                else open_backend(registry, config, "graph", graph_dir / "store")
            )
        except BaseException:
            if graph_opening is not None:
                opened.append(graph_opening.result(quiet=True))
            for backend in opened:
                close = getattr(backend, "close", None)
                if close is not None:
                    close()
            raise
        return cls(project, text, graph, NodeStore(graph_dir / "nodes.db"), vectors)

    def close(self) -> None:
        for backend in (self.text, self.graph, self.nodes, self.vectors):
            close = getattr(backend, "close", None)
            if close is not None:
                close()
