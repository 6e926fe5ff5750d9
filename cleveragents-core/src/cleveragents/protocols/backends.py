"""Backend Abstraction Layer (spec 004) and the index-side contracts (spec 000).

Strategies query backends through the read Protocols (``TextBackend`` …) and
always pass a ``scope``: the set of resource ULIDs the caller may see. Indexers
write through the ``*IndexBackend`` Protocols. Backend slots register *classes*
(``cls(location: pathlib.Path, **options)``), which the context system opens per
project; a class is checked structurally against both Protocols at load time.

Scope convention: a document or vector carries the ULID of its resource as
``metadata["resource_id"]``; a graph node carries it as the object of its
``uko:sourceResource`` triple. ``scope`` is matched against these.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

if TYPE_CHECKING:
    from cleveragents.models.context import ContextFragment
    from cleveragents.models.uko import UKONode

__all__ = [
    "BackendSet",
    "EmbeddingChunk",
    "GraphBackend",
    "GraphIndexBackend",
    "GraphResult",
    "NodeSource",
    "TextBackend",
    "TextIndexBackend",
    "TextResult",
    "VectorBackend",
    "VectorIndexBackend",
    "VectorResult",
]


@dataclass(frozen=True)
class TextResult:
    uko_uri: str
    content: str
    score: float
    metadata: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class VectorResult:
    uko_uri: str
    content: str
    score: float  # cosine similarity in [0, 1]
    metadata: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class GraphResult:
    triples: list[tuple[str, str, str]]
    metadata: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class EmbeddingChunk:
    """One unit to embed: usually a UKO node (function, class, section)."""

    uko_uri: str
    content: str
    metadata: Mapping[str, str] = field(default_factory=dict)


@runtime_checkable
class TextBackend(Protocol):
    """Full-text search; results by descending score, restricted to ``scope``."""

    def search(
        self, query: str, *, scope: frozenset[str], max_results: int = 20
    ) -> list[TextResult]: ...


@runtime_checkable
class VectorBackend(Protocol):
    """Embedding similarity search; results by descending cosine similarity."""

    def similarity_search(
        self, embedding: Sequence[float], *, scope: frozenset[str], top_k: int = 20
    ) -> list[VectorResult]: ...


@runtime_checkable
class GraphBackend(Protocol):
    """UKO triples: SPARQL, lookups and traversal, restricted to ``scope``."""

    def sparql_query(self, query: str, *, scope: frozenset[str]) -> GraphResult: ...

    def get_triples(self, subject: str) -> GraphResult: ...

    def traverse(self, start: str, *, depth: int = 2) -> GraphResult: ...


@runtime_checkable
class TextIndexBackend(Protocol):
    """Write side of a text backend (spec 000, Custom Index Backends)."""

    def index_document(
        self, project: str, doc_id: str, content: str, metadata: dict[str, Any]
    ) -> None: ...

    def remove_document(self, project: str, doc_id: str) -> None: ...

    def rebuild_index(self, project: str) -> None: ...


@runtime_checkable
class VectorIndexBackend(Protocol):
    """Write side of a vector backend."""

    def index_embedding(
        self, project: str, doc_id: str, embedding: list[float], metadata: dict[str, Any]
    ) -> None: ...

    def remove_embedding(self, project: str, doc_id: str) -> None: ...


@runtime_checkable
class GraphIndexBackend(Protocol):
    """Write side of a graph backend."""

    def add_triple(self, project: str, subject: str, predicate: str, obj: str) -> None: ...

    def remove_triples(
        self, project: str, subject: str | None, predicate: str | None, obj: str | None
    ) -> None: ...


@runtime_checkable
class NodeSource(Protocol):
    """Indexed UKO nodes with their renderings, restricted to the scope like the backends.

    Strategies turn search hits (URIs) into fragments through this: the same
    node can be delivered at any depth its analyzer rendered.
    """

    def fragment(
        self, uri: str, depth: int, *, relevance: float = 0.5, strategy: str = ""
    ) -> ContextFragment | None:
        """The node at the richest rendering <= ``depth``, token-counted; None if unknown."""
        ...

    def nodes(self, uris: Sequence[str]) -> Mapping[str, UKONode]:
        """Current in-scope nodes by URI (unknown or out-of-scope URIs are left out)."""
        ...


@dataclass(frozen=True)
class BackendSet:
    """The scoped backends an assembly may use; ``None`` when not installed."""

    text: TextBackend | None = None
    vector: VectorBackend | None = None
    graph: GraphBackend | None = None
    scope: frozenset[str] = frozenset()
    #: Node renderings and provenance (the context system's node store).
    nodes: NodeSource | None = None

    def available(self) -> set[str]:
        """Names of the backend kinds present: a subset of {"text", "vector", "graph"}."""
        return {k for k in ("text", "vector", "graph") if getattr(self, k) is not None}
