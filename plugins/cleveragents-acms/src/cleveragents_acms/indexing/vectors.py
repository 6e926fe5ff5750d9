"""Embedding UKO nodes into the vector backend, when a vector plugin is installed.

Without a registered vector backend and embedder this module does nothing and
ACMS runs on text and graph alone. With them, every new node version is
embedded during indexing (one chunk per node: function, class, section …,
its URI as id) and retired versions are removed, in the same run and with the
same all-or-nothing commit as the text index. Imports, attributes and
variables are not embedded: they are found through their container.

A vector index found corrupt (the backend sets it aside and raises its
``needs_rebuild`` flag) is rebuilt from the node store, which holds every
current node with its renderings, as soon as it is opened for indexing or for
searching: the text and graph indexes are not touched.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from cleveragents import paths
from cleveragents.errors import ConfigurationError
from cleveragents.models.uko import UKONode
from cleveragents.protocols.backends import EmbeddingChunk

__all__ = [
    "VectorIndex",
    "choose_embedder",
    "chunk_text",
    "embeddable",
    "open_vector_index",
    "prepare_for_search",
    "rebuild_from_nodes",
    "repair_if_corrupt",
    "repair_project_vectors",
]

#: Characters of a node's text that are embedded (the head carries name, signature, docs).
_CHUNK_CHARS = 1500
#: Node kinds too small to be worth a vector of their own; their container carries them.
_NOT_EMBEDDED = frozenset(
    {"Import", "ReExport", "Attribute", "Variable", "Constant", "Field", "EnumMember"}
)


def embeddable(node: UKONode) -> bool:
    """Chunks are functions, classes, modules, sections …: not imports or attributes."""
    return node.uko_type.rsplit(":", 1)[-1] not in _NOT_EMBEDDED


_BATCH = 256


def choose_embedder(registry: Any, config: Any) -> tuple[str, Any] | None:
    """``(name, embedder)`` per ``index.embedding.provider``; ``auto`` takes the preferred one."""
    view = registry.embedders
    if not len(view):
        return None
    wanted = config.get("index.embedding.provider", "auto") if config is not None else "auto"
    if wanted and wanted != "auto":
        return wanted, view.get_or_error(wanted)
    ranked = sorted(view, key=lambda name: -int(getattr(view[name], "preference", 0)))
    return ranked[0], view[ranked[0]]


def _lines(node: UKONode) -> dict[str, str]:
    """The vector entry's metadata that says where the node is (what a move changes)."""
    return {"start_line": str(node.start_line), "end_line": str(node.end_line)}


def chunk_text(node: UKONode) -> str:
    """What is embedded for a node: its full text when short, its outline otherwise."""
    text = node.rendering(9)
    if len(text) > _CHUNK_CHARS:
        text = node.rendering(6)
    return f"{node.qualname or node.name}\n{text[:_CHUNK_CHARS]}"


@dataclass
class VectorIndex:
    """A project's vector backend with the embedder its vectors come from."""

    backend: Any
    embedder_name: str
    embedder: Any

    def add(
        self,
        nodes: Sequence[UKONode],
        resource_id: str,
        vectors: Mapping[str, Any] | None = None,
    ) -> int:
        """Embed and store ``nodes``; ``vectors`` holds ones already embedded (by URI)."""
        nodes = [n for n in nodes if embeddable(n)]
        ready = vectors or {}
        added = 0
        for start in range(0, len(nodes), _BATCH):
            batch = nodes[start : start + _BATCH]
            missing = [n for n in batch if n.uri not in ready]
            fresh: dict[str, Any] = {}
            if missing:
                # An array is much cheaper to hand over than lists of floats, when offered.
                embed = getattr(self.embedder, "embed_array", None) or self.embedder.embed
                embedded = embed([chunk_text(n) for n in missing])
                fresh = {n.uri: row for n, row in zip(missing, embedded, strict=True)}
            rows = [ready[n.uri] if n.uri in ready else fresh[n.uri] for n in batch]
            chunks = [
                EmbeddingChunk(
                    n.uri,
                    n.rendering(4)[:1000],
                    {
                        "resource_id": resource_id,
                        "path": n.path,
                        **_lines(n),
                        "uko_type": n.uko_type,
                    },
                )
                for n in batch
            ]
            added += self.backend.add(chunks, rows, resource_id=resource_id)
        return added

    def relocate(self, nodes: Sequence[UKONode]) -> list[UKONode]:
        """Give the stored vectors of ``nodes``, which only moved, their new lines; returns
        those whose vector must be made anew (none stored, or a backend that cannot change
        an entry in place)."""
        nodes = [n for n in nodes if embeddable(n)]
        update = getattr(self.backend, "update_metadata", None)
        if update is None or not nodes:
            return nodes
        missing = update({n.uri: _lines(n) for n in nodes})
        return [n for n in nodes if n.uri in missing]

    def remove(self, uris: Sequence[str]) -> None:
        if uris:
            self.backend.delete_uris(uris)

    def commit(self) -> None:
        self.backend.commit()

    def rollback(self) -> None:
        rollback = getattr(self.backend, "rollback", None)
        if rollback is not None:
            rollback()

    def close(self) -> None:
        self.backend.close()


def open_vector_index(
    registry: Any, config: Any, project: str, *, reset: bool = False
) -> VectorIndex | None:
    """The project's vector index, or None when no vector plugin is installed.

    An index built with another embedder or dimension raises ConfigurationError
    that names ``cleveragents vector rebuild``; ``reset=True`` empties it for
    that rebuild instead.
    """
    from cleveragents_acms.indexing.project_index import backend_class, open_backend

    if backend_class(registry, config, "vector") is None:
        return None
    chosen = choose_embedder(registry, config)
    if chosen is None:
        return None
    name, embedder = chosen
    location = paths.index_dir("vector", project)
    options = {"embedder": name, "dimension": int(embedder.dimension)}
    try:
        backend = open_backend(registry, config, "vector", location, **options)
    except ConfigurationError:
        if not reset:
            raise
        backend = open_backend(registry, config, "vector", location)
    if backend is None:
        return None
    if reset:
        backend.reset(embedder=name, dimension=int(embedder.dimension))
    vectors = VectorIndex(backend, name, embedder)
    if not reset:
        try:
            repair_if_corrupt(vectors, project)
        except BaseException:
            vectors.close()
            raise
    return vectors


def rebuild_from_nodes(
    vectors: VectorIndex,
    nodes: Any,
    resource_ids: Sequence[str] | None = None,
    *,
    progress: Callable[[int, int], None] | None = None,
) -> int:
    """Empty ``vectors`` and re-embed the current nodes of ``resource_ids`` (default: every
    resource of ``nodes``); commits. Returns the number of vectors.

    ``progress(done, total)`` follows the nodes embedded so far.
    """
    vectors.backend.reset(embedder=vectors.embedder_name, dimension=int(vectors.embedder.dimension))
    ids = list(nodes.current_resources() if resource_ids is None else resource_ids)
    total = sum(nodes.count(resource_id) for resource_id in ids)
    added = done = 0
    try:
        for resource_id in ids:
            batch: list[UKONode] = []
            for node in nodes.iter_current([resource_id]):
                batch.append(node)
                if len(batch) == 1024:
                    added += vectors.add(batch, resource_id)
                    done += len(batch)
                    batch = []
                    if progress is not None:
                        progress(done, total)
            added += vectors.add(batch, resource_id)
            done += len(batch)
            if progress is not None:
                progress(done, total)
        vectors.commit()
    except BaseException:
        vectors.rollback()
        raise
    if set(ids) & set(nodes.gaps("vector")):  # resources indexed while vectors were off
        nodes.begin()
        nodes.clear_gaps(["vector"], ids)
        nodes.commit()
    return added


def repair_if_corrupt(vectors: VectorIndex, project: str, nodes: Any = None) -> int | None:
    """Rebuild a vector index its backend found corrupt from the project's node store.

    Returns the number of vectors re-embedded, or None when nothing needed doing
    (or there is no node store to rebuild from). ``nodes`` is an open NodeStore;
    without it the project's store is opened for the occasion.
    """
    backend = vectors.backend
    if not getattr(backend, "needs_rebuild", False):
        return None
    from cleveragents.log import get_logger
    from cleveragents_acms.indexing.store import NodeStore

    log = get_logger(__name__)
    owned = None
    if nodes is None:
        path = paths.index_dir("graph", project) / "nodes.db"
        if not path.exists():
            return None
        nodes = owned = NodeStore(path)
    try:
        log.warning(
            "vector index is corrupt; rebuilding it from the node store",
            project=project,
            reason=getattr(backend, "corruption", None),
        )
        added = rebuild_from_nodes(vectors, nodes)
    finally:
        if owned is not None:
            owned.close()
    log.warning("vector index rebuilt", project=project, vectors=added)
    return added


def prepare_for_search(registry: Any, config: Any, project: str, backend: Any, nodes: Any) -> None:
    """Read a vector backend opened for searching, and rebuild it first if it is corrupt.

    Reading the whole index now (a search needs it anyway) is what finds damage
    that opening alone does not; the rebuild re-embeds with the configured embedder.
    """
    load = getattr(backend, "load", None)
    if callable(load):
        load()
    if not getattr(backend, "needs_rebuild", False):
        return
    chosen = choose_embedder(registry, config)
    if chosen is None:
        return
    repair_if_corrupt(VectorIndex(backend, chosen[0], chosen[1]), project, nodes)


def repair_project_vectors(registry: Any, config: Any, project: str) -> int | None:
    """Rebuild the project's vector index if cheap checks find it damaged.

    For indexing runs that changed nothing and so never opened the vector index;
    returns the number of vectors re-embedded, or None.
    """
    from cleveragents_acms.indexing.project_index import backend_class

    view = registry.backends.vector
    location = paths.index_dir("vector", project)
    if backend_class(registry, config, "vector") is None or not location.is_dir():
        return None
    damaged = False
    for name in view:
        check = getattr(view[name], "check", None)
        if callable(check) and check(location):
            damaged = True
    if not damaged:
        return None
    vectors = open_vector_index(registry, config, project)  # rebuilds on opening
    if vectors is None:
        return None
    try:
        return int(vectors.backend.count())
    finally:
        vectors.close()
