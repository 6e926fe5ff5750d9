"""What one assembly may see of a project, and the backends it reads through.

:func:`resolve_scope` turns a project into the set of resource ULIDs an
assembly may read (spec 000, "Resource Scope Resolution": the project's
resources and their descendants, indexed in this project, filtered by the
phase's context view) and reports the state of each index.
:class:`ProjectReaders` opens the project's stores for reading: the text
backend, the graph backend (read-only, so an ``index --watch`` in another
process keeps its lock), the vector backend when one is installed and holds
data for the project, and the node store.
"""

from __future__ import annotations

import inspect
import threading
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from cleveragents import paths
from cleveragents.errors import CleverAgentsError, NotFoundError
from cleveragents.protocols.backends import TextResult, VectorResult
from cleveragents_acms.context.nodes import IndexedRoot
from cleveragents_acms.context.policy import ContextView
from cleveragents_acms.indexing.analysis import analyzer_changes, analyzer_versions
from cleveragents_acms.indexing.project_index import (
    backend_class,
    backend_options,
    construct_backend,
    open_backend,
)
from cleveragents_acms.indexing.store import NodeStore

__all__ = [
    "OpenVectorIndexes",
    "PathFilteredText",
    "PathFilteredVector",
    "ProjectReaders",
    "ProjectScope",
    "resolve_scope",
]

_USABLE = ("ready", "stale")


def _installed_analyzers(indexing: Any) -> str | None:
    """The installed analyzers as an index records them (``None`` when there are none)."""
    try:
        return analyzer_versions(indexing.analyzer_specs())
    except CleverAgentsError:
        return None


def index_hint(project: str) -> str:
    return f"run `cleveragents index PATH --project {project}`"


@dataclass
class ProjectScope:
    """The resources one assembly may read, and the notes about the indexes behind them."""

    project: str
    resources: frozenset[str]
    roots: dict[str, IndexedRoot]
    excluded: dict[str, str] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    #: A stamp that changes whenever any of the project's indexes changes.
    stamp: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {
            "resources": [
                {
                    "resource_id": rid,
                    "name": self.roots[rid].name,
                    "root": str(self.roots[rid].root),
                }
                for rid in sorted(self.resources)
            ],
            "excluded": self.excluded,
        }


def resolve_scope(
    database: Any, registry: Any, config: Any, project: str, view: ContextView
) -> ProjectScope:
    """The project's indexed resources the view allows.

    :raises NotFoundError: the project does not exist, or has no usable index.
    """
    from cleveragents.storage.repositories import ProjectRepository, ResourceRepository
    from cleveragents_acms.indexing.service import RepoIndexingService

    with database.session(write=False) as session:
        ProjectRepository(session).get(project)
        repository = ResourceRepository(session)
        linked = repository.all(project=project)
        members = {r.resource_id: r for r in linked}
        for resource in linked:
            for child in repository.descendants(resource.resource_id):
                members.setdefault(child.resource_id, child)

    indexing = RepoIndexingService(database, registry, config)
    indexes = indexing.list_indexes(project)
    if indexes and all(m.status == "ready" and not m.file_count for m in indexes):
        roots = ", ".join(sorted(m.root_path for m in indexes))
        raise NotFoundError(
            f"project '{project}' is indexed but holds no files ({roots}): nothing to "
            f"assemble from (`cleveragents index PATH --project {project}` lists the files "
            f"it skipped and why)",
            details={"project": project},
        )
    if not indexes or not (paths.index_dir("graph", project) / "nodes.db").exists():
        raise NotFoundError(
            f"project '{project}' has no index: {index_hint(project)}",
            details={"project": project},
        )
    scope = ProjectScope(project, frozenset(), {})
    usable: dict[str, IndexedRoot] = {}
    installed = _installed_analyzers(indexing)
    for meta in indexes:
        name = members[meta.resource_id].name if meta.resource_id in members else None
        label = name or meta.root_path
        if meta.status in _USABLE or meta.file_count > 0:
            usable[meta.resource_id] = IndexedRoot(
                meta.resource_id, meta.index_id, Path(meta.root_path), name
            )
        if meta.analyzers and installed and meta.analyzers != installed:
            changes = analyzer_changes(meta.analyzers, installed)
            scope.notes.append(
                f"the index of {label} was built by other analyzers ({changes}): "
                f"{index_hint(project)} analyses the files they read again"
            )
        if meta.status == "stale":
            scope.notes.append(f"the index of {label} is stale: {index_hint(project)}")
        elif meta.status == "indexing":
            scope.notes.append(f"{label} is being indexed; the previous index was used")
        elif meta.status == "error":
            problem = meta.error_message or "indexing failed"
            scope.notes.append(f"the index of {label} failed ({problem}): {index_hint(project)}")
    if not usable:
        states = ", ".join(sorted({m.status for m in indexes}))
        raise NotFoundError(
            f"project '{project}' has no usable index ({states}): {index_hint(project)}",
            details={"project": project},
        )
    allowed: set[str] = set()
    for resource_id, root in usable.items():
        if members and resource_id not in members:
            scope.excluded[resource_id] = "no longer linked to the project"
        elif not view.allows_resource(root.name, resource_id):
            scope.excluded[resource_id] = "excluded by the project's context view"
        else:
            allowed.add(resource_id)
    if not allowed:
        scope.notes.append("the project's context view excludes every indexed resource")
    scope.resources = frozenset(allowed)
    scope.roots = usable
    scope.stamp = "|".join(
        sorted(f"{m.resource_id}:{m.indexed_at.isoformat()}:{m.status}" for m in indexes)
    )
    return scope


def _open_read_only(registry: Any, config: Any, kind: str, location: Path) -> Any | None:
    """Like ``open_backend``, asking for a read-only handle when the class offers one."""
    cls = backend_class(registry, config, kind)  # raises for unknown names
    if cls is None:
        return None
    options = backend_options(config, kind)
    try:
        accepts = "read_only" in inspect.signature(cls).parameters
    except (TypeError, ValueError):
        accepts = False
    if accepts:
        options["read_only"] = True
    return construct_backend(cls, kind, location, options)


class OpenVectorIndexes:
    """Vector backends kept open between assemblies, one per project.

    Opening a large vector index (checksums, id maps) and reading it for its first
    search cost more than the rest of an assembly: about 0.5 s at 190k vectors. A
    service keeps each handle while the index's files are unchanged, and opens the
    index afresh once an indexing run (or a watch) has written it. A replaced handle
    is left to the assemblies still reading it. At most ``max_open`` projects are
    held (each keeps its vectors in memory), the least recently used let go first.
    """

    def __init__(self, max_open: int = 4) -> None:
        self._lock = threading.Lock()
        self._max_open = max_open
        #: project -> (files' signature, backend), least recently used first.
        self._held: OrderedDict[str, tuple[tuple[Any, ...], Any]] = OrderedDict()

    @staticmethod
    def _signature(location: Path) -> tuple[Any, ...]:
        try:
            return tuple(
                sorted(
                    (p.name, s.st_size, s.st_mtime_ns)
                    for p in location.iterdir()
                    for s in [p.stat()]
                )
            )
        except OSError:
            return ()

    def open(self, project: str, location: Path, opener: Callable[[], Any]) -> Any:
        """The held backend of ``project`` if its files are unchanged, else ``opener()``."""
        signature = self._signature(location)
        with self._lock:
            held = self._held.get(project)
            if held is not None and signature and held[0] == signature:
                self._held.move_to_end(project)
                return held[1]
        backend = opener()
        with self._lock:
            self._held[project] = (signature, backend)
            self._held.move_to_end(project)
            while len(self._held) > self._max_open:  # each holds its vectors in memory
                self._held.popitem(last=False)
        return backend

    def forget(self, project: str) -> None:
        with self._lock:
            self._held.pop(project, None)

    def close(self) -> None:
        with self._lock:
            held, self._held = list(self._held.values()), OrderedDict()
        for _, backend in held:
            _close(backend)


class ProjectReaders:
    """Read handles on one project's stores; ``close()`` releases them.

    ``vectors`` (a service's :class:`OpenVectorIndexes`) lends a vector backend kept
    open between assemblies instead of opening one for this assembly alone;
    ``with_vectors=False`` leaves the vector index closed (a text or graph query).
    """

    def __init__(
        self,
        registry: Any,
        config: Any,
        project: str,
        *,
        vectors: OpenVectorIndexes | None = None,
        with_vectors: bool = True,
    ) -> None:
        self.project = project
        self._config = config
        self._vectors = vectors
        self._lent = False  # the vector backend belongs to ``vectors``, not to this reader
        self.notes: list[str] = []
        graph_dir = paths.index_dir("graph", project)
        self.nodes = NodeStore(graph_dir / "nodes.db")
        self.text: Any = None
        self.graph: Any = None
        self.vector: Any = None
        text_dir = paths.index_dir("text", project)
        if not text_dir.is_dir() or not any(text_dir.iterdir()):
            self.notes.append(
                f"the text index of project '{project}' is missing; text search unavailable: "
                f"run `cleveragents index PATH --project {project} --force`"
            )
        else:
            try:
                self.text = open_backend(registry, config, "text", text_dir)
            except CleverAgentsError:
                raise
            except Exception as exc:
                self.notes.append(f"text search unavailable: {type(exc).__name__}: {exc}")
        try:
            self.graph = _open_read_only(registry, config, "graph", graph_dir / "store")
        except CleverAgentsError as exc:
            self.notes.append(f"graph unavailable: {exc.message}")
        except Exception as exc:
            self.notes.append(f"graph unavailable: {type(exc).__name__}: {exc}")
        # Opening a big vector index is most of opening the stores (0.4 s at 180k vectors).
        self.vector = self._open_vector(registry, config) if with_vectors else None

    def _open_vector(self, registry: Any, config: Any) -> Any | None:
        if backend_class(registry, config, "vector") is None:
            return None
        location = paths.index_dir("vector", self.project)
        if not location.is_dir() or not any(location.iterdir()):
            return None  # installed, but nothing was embedded for this project

        def opener() -> Any:
            return open_backend(registry, config, "vector", location)

        try:
            backend = (
                self._vectors.open(self.project, location, opener)
                if self._vectors is not None
                else opener()
            )
        except CleverAgentsError as exc:
            self.notes.append(f"vector search unavailable: {exc.message}")
            return None
        except Exception as exc:
            self.notes.append(f"vector search unavailable: {type(exc).__name__}: {exc}")
            return None
        if getattr(backend, "needs_rebuild", False):  # found corrupt on opening: rebuild now
            self._prepare(registry, backend)
        count = getattr(backend, "count", None)
        try:
            empty = callable(count) and int(count()) == 0
        except Exception:
            empty = False
        if empty:
            if self._vectors is not None:
                self._vectors.forget(self.project)
            _close(backend)
            return None
        self._lent = self._vectors is not None
        return self._with_embedder(registry, backend)

    def _with_embedder(self, registry: Any, backend: Any) -> Any:
        """Queries must be embedded by the embedder the index was built with."""
        name = getattr(backend, "embedder_name", None)
        if name and name in registry.embedders:
            return VectorWithEmbedder(
                backend, registry.embedders[name], prepare=lambda: self._prepare(registry, backend)
            )
        self.notes.append(
            f"semantic search unavailable: the vector index was built with embedder '{name}', "
            "which is not installed; run `cleveragents vector rebuild`"
        )
        return backend

    def _prepare(self, registry: Any, backend: Any) -> None:
        """Read the vector index (rebuilding it first if it is corrupt) for its first search."""
        from cleveragents_acms.indexing.vectors import prepare_for_search

        try:
            prepare_for_search(registry, self._config, self.project, backend, self.nodes)
        except Exception as exc:
            self.notes.append(f"vector index could not be rebuilt: {type(exc).__name__}: {exc}")

    def close(self) -> None:
        for handle in (self.text, self.graph, None if self._lent else self.vector, self.nodes):
            _close(handle)


def _close(handle: Any) -> None:
    close = getattr(handle, "close", None)
    if callable(close):
        try:
            close()
        except Exception:
            pass


class PathFilteredText:
    """A text view that leaves out results from paths the context view excludes."""

    def __init__(self, inner: Any, view: ContextView) -> None:
        self._inner = inner
        self._view = view

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)

    def search(
        self, query: str, *, scope: frozenset[str] | None = None, max_results: int = 20
    ) -> list[TextResult]:
        results = self._inner.search(query, scope=scope, max_results=max_results * 2)
        return [r for r in results if _allowed(self._view, r.metadata)][:max_results]


class VectorWithEmbedder:
    """A vector backend paired with the embedder its vectors come from.

    ``prepare`` runs once, before the first search: reading a large index costs
    a noticeable part of an assembly, so only assemblies that search it pay.
    """

    def __init__(self, inner: Any, embedder: Any, *, prepare: Any = None) -> None:
        self._inner = inner
        self.embedder = embedder
        self._prepare = prepare

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)

    def similarity_search(
        self, embedding: Any, *, scope: frozenset[str] | None = None, top_k: int = 20
    ) -> list[VectorResult]:
        if self._prepare is not None:
            prepare, self._prepare = self._prepare, None
            prepare()
        return self._inner.similarity_search(embedding, scope=scope, top_k=top_k)


class PathFilteredVector:
    """A vector view that leaves out results from paths the context view excludes."""

    def __init__(self, inner: Any, view: ContextView) -> None:
        self._inner = inner
        self._view = view

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)

    def similarity_search(
        self, embedding: Any, *, scope: frozenset[str] | None = None, top_k: int = 20
    ) -> list[VectorResult]:
        results = self._inner.similarity_search(embedding, scope=scope, top_k=top_k * 2)
        return [r for r in results if _allowed(self._view, r.metadata)][:top_k]


def _allowed(view: ContextView, metadata: Any) -> bool:
    path = metadata.get("path") if metadata else None
    return True if not path else view.allows_path(str(path))
