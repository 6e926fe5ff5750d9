"""Scoped views: backends whose every read is forced into one resource scope.

Strategies receive these (spec 000 "Scoped Backend Views"), never the raw
backends. A caller may pass its own ``scope`` to narrow the view further, but
the effective scope is always the intersection with the view's: it can never
be widened. Results of a backend that cannot filter by scope itself are
filtered here, by each subject's ``uko:sourceResource``.
"""

from __future__ import annotations

import inspect
from collections.abc import Iterable, Sequence
from typing import Any

from cleveragents.protocols.backends import (
    BackendSet,
    GraphBackend,
    GraphResult,
    TextBackend,
    TextResult,
    VectorBackend,
    VectorResult,
)
from cleveragents_acms.backends._validation import require_scope, require_text
from cleveragents_acms.ontology.namespaces import UKO

__all__ = ["ScopedGraphView", "ScopedTextView", "ScopedVectorView", "make_backend_set"]

_SOURCE_RESOURCE = UKO + "sourceResource"
_RESOURCE_KEYS = ("resource_id", "resource_ulid")


def _narrow(own: frozenset[str], requested: object) -> frozenset[str]:
    if requested is None:
        return own
    return own & require_scope(requested)


def _accepts_scope(method: Any) -> bool:
    try:
        return "scope" in inspect.signature(method).parameters
    except (TypeError, ValueError):
        return False


class _ScopedView:
    def __init__(self, backend: Any, scope: Iterable[str]) -> None:
        self._backend = backend
        self._scope = require_scope(scope)

    @property
    def scope(self) -> frozenset[str]:
        return self._scope

    @property
    def backend_type(self) -> str:
        return type(self._backend).__name__

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.backend_type}, {len(self._scope)} resources)"


class ScopedTextView(_ScopedView):
    """A TextBackend that only ever searches its scope."""

    def search(
        self, query: str, *, scope: frozenset[str] | None = None, max_results: int = 20
    ) -> list[TextResult]:
        effective = _narrow(self._scope, scope)
        results = self._backend.search(query, scope=effective, max_results=max_results)
        return [r for r in results if _in_scope(r.metadata, effective)]


class ScopedVectorView(_ScopedView):
    """A VectorBackend that only ever searches its scope."""

    @property
    def embedder(self) -> Any:
        """The embedder the index was built with, for embedding queries (None if unknown)."""
        return getattr(self._backend, "embedder", None)

    def similarity_search(
        self,
        embedding: Sequence[float],
        *,
        scope: frozenset[str] | None = None,
        top_k: int = 20,
    ) -> list[VectorResult]:
        effective = _narrow(self._scope, scope)
        results = self._backend.similarity_search(embedding, scope=effective, top_k=top_k)
        return [r for r in results if _in_scope(r.metadata, effective)]


def _in_scope(metadata: Any, scope: frozenset[str]) -> bool:
    """Results naming a resource must name one in scope (the backend already filtered)."""
    for key in _RESOURCE_KEYS:
        value = metadata.get(key) if metadata else None
        if value:
            return str(value) in scope
    return True


class ScopedGraphView(_ScopedView):
    """A GraphBackend whose queries, lookups and traversals stay inside its scope."""

    def sparql_query(self, query: str, *, scope: frozenset[str] | None = None) -> GraphResult:
        return self._backend.sparql_query(query, scope=_narrow(self._scope, scope))

    def get_triples(self, subject: str) -> GraphResult:
        require_text("subject", subject)
        if _accepts_scope(self._backend.get_triples):
            return self._backend.get_triples(subject, scope=self._scope)
        return self._filter(self._backend.get_triples(subject))

    def traverse(self, start: str, *, depth: int = 2, **options: Any) -> GraphResult:
        require_text("start", start)
        if _accepts_scope(self._backend.traverse):
            return self._backend.traverse(start, depth=depth, scope=self._scope, **options)
        if self._owner(start) not in (None, *self._scope):
            return GraphResult([])
        return self._filter(self._backend.traverse(start, depth=depth, **options))

    def query_at_time(self, timestamp: Any) -> GraphResult:
        """The scope's triples valid at ``timestamp`` (when the backend keeps revisions)."""
        return self._backend.query_at_time(timestamp, self._scope)

    def subgraph(self, include_temporal: Any = "current") -> GraphResult:
        """The whole scope's subgraph (spec 000 "UKO Subgraph Projection")."""
        return self._backend.subgraph_by_resources(sorted(self._scope), include_temporal)

    def _owner(self, subject: str) -> str | None:
        triples = self._backend.get_triples(subject).triples
        return next((o for _, p, o in triples if p == _SOURCE_RESOURCE), None)

    def _filter(self, result: GraphResult) -> GraphResult:
        owners: dict[str, str | None] = {}
        for subject in {t[0] for t in result.triples}:
            owners[subject] = self._owner(subject)
        kept = [t for t in result.triples if owners[t[0]] in (None, *self._scope)]
        return GraphResult(kept, result.metadata)


def make_backend_set(
    text: TextBackend | None,
    vector: VectorBackend | None,
    graph: GraphBackend | None,
    scope: Iterable[str],
) -> BackendSet:
    """A :class:`BackendSet` whose backends are scoped views over ``scope``."""
    frozen = require_scope(scope)
    return BackendSet(
        text=ScopedTextView(text, frozen) if text is not None else None,
        vector=ScopedVectorView(vector, frozen) if vector is not None else None,
        graph=ScopedGraphView(graph, frozen) if graph is not None else None,
        scope=frozen,
    )
