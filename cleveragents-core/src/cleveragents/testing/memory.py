"""Small, honest in-memory implementations for testing *other* components.

They keep every contract the conformance suites check (argument validation,
scope filtering, descending scores in [0, 1], removal), so a strategy or a
pipeline stage can be tested against them without Tantivy, FAISS or rdflib.
They are never what a user gets by default.

Conventions they share with the conformance suites, and that real backends
follow so the context system can filter by scope:

* a text or vector document names its resource in
  ``metadata[RESOURCE_METADATA_KEY]`` (the resource ULID);
* a graph node names its resource with a ``uko:sourceResource`` triple whose
  object is the resource ULID (:data:`UKO_SOURCE_RESOURCE`).
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from cleveragents.errors import ValidationError
from cleveragents.protocols.backends import BackendSet, GraphResult, TextResult, VectorResult

__all__ = [
    "RESOURCE_METADATA_KEY",
    "UKO_NAMESPACE",
    "UKO_SOURCE_PATH",
    "UKO_SOURCE_RESOURCE",
    "InMemoryGraphBackend",
    "InMemoryTextBackend",
    "InMemoryVectorBackend",
    "StaticDetailLevelMaps",
    "memory_backends",
]

#: Metadata key naming the resource (ULID) a text or vector document came from.
RESOURCE_METADATA_KEY = "resource_id"
UKO_NAMESPACE = "https://cleveragents.ai/ontology/uko#"
#: Predicate linking a UKO node to the ULID of the resource it was extracted from.
UKO_SOURCE_RESOURCE = UKO_NAMESPACE + "sourceResource"
UKO_SOURCE_PATH = UKO_NAMESPACE + "sourcePath"

_WORD = re.compile(r"\w+", re.UNICODE)


def _require_text(name: str, value: object) -> str:
    if not isinstance(value, str) or not value.strip():
        raise ValidationError(f"{name} must be a non-empty string")
    return value


def _require_positive(name: str, value: object) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ValidationError(f"{name} must be a positive integer, got {value!r}")
    return value


def _str_metadata(metadata: Mapping[str, Any]) -> dict[str, str]:
    return {str(k): str(v) for k, v in metadata.items()}


class InMemoryTextBackend:
    """Keyword search over documents held in a dict; scores are term coverage."""

    def __init__(self, location: Path | None = None, **options: Any) -> None:
        self.location = location
        self.options = options
        #: (project, doc_id) -> (content, metadata)
        self._docs: dict[tuple[str, str], tuple[str, dict[str, Any]]] = {}

    # -- write side (TextIndexBackend) ---------------------------------------------

    def index_document(
        self, project: str, doc_id: str, content: str, metadata: dict[str, Any]
    ) -> None:
        _require_text("doc_id", doc_id)
        self._docs[(project, doc_id)] = (content, dict(metadata))

    def remove_document(self, project: str, doc_id: str) -> None:
        self._docs.pop((project, doc_id), None)

    def rebuild_index(self, project: str) -> None:
        """Nothing to rebuild: the dict is the index."""

    # -- read side (TextBackend) -----------------------------------------------------

    def search(
        self, query: str, *, scope: frozenset[str], max_results: int = 20
    ) -> list[TextResult]:
        _require_text("query", query)
        _require_positive("max_results", max_results)
        terms = {t.lower() for t in _WORD.findall(query)}
        if not terms:
            return []
        results = []
        for (_, doc_id), (content, metadata) in self._docs.items():
            if str(metadata.get(RESOURCE_METADATA_KEY)) not in scope:
                continue
            words = [w.lower() for w in _WORD.findall(content)]
            matched = terms.intersection(words)
            if not matched:
                continue
            frequency = sum(words.count(t) for t in matched)
            coverage = len(matched) / len(terms)
            score = coverage * (0.5 + 0.5 * min(1.0, frequency / 5))
            results.append(TextResult(doc_id, content, round(score, 6), _str_metadata(metadata)))
        results.sort(key=lambda r: (-r.score, r.uko_uri))
        return results[:max_results]


class InMemoryVectorBackend:
    """Brute-force cosine similarity; scores clamped to [0, 1]."""

    def __init__(self, location: Path | None = None, **options: Any) -> None:
        self.location = location
        self.options = options
        self._vectors: dict[tuple[str, str], tuple[list[float], dict[str, Any]]] = {}

    def index_embedding(
        self, project: str, doc_id: str, embedding: list[float], metadata: dict[str, Any]
    ) -> None:
        _require_text("doc_id", doc_id)
        self._vectors[(project, doc_id)] = (_normalised(embedding), dict(metadata))

    def remove_embedding(self, project: str, doc_id: str) -> None:
        self._vectors.pop((project, doc_id), None)

    def similarity_search(
        self, embedding: Sequence[float], *, scope: frozenset[str], top_k: int = 20
    ) -> list[VectorResult]:
        query = _normalised(embedding)
        _require_positive("top_k", top_k)
        results = []
        for (_, doc_id), (vector, metadata) in self._vectors.items():
            if str(metadata.get(RESOURCE_METADATA_KEY)) not in scope:
                continue
            if len(vector) != len(query):
                raise ValidationError(
                    f"embedding has {len(query)} dimensions, the index has {len(vector)}"
                )
            cosine = sum(a * b for a, b in zip(query, vector, strict=True))
            score = min(1.0, max(0.0, cosine))
            content = str(metadata.get("content", ""))
            results.append(VectorResult(doc_id, content, score, _str_metadata(metadata)))
        results.sort(key=lambda r: (-r.score, r.uko_uri))
        return results[:top_k]


def _normalised(embedding: Sequence[float]) -> list[float]:
    if isinstance(embedding, (str, bytes)) or not embedding:
        raise ValidationError("embedding must be a non-empty sequence of floats")
    vector = [float(x) for x in embedding]
    norm = math.sqrt(sum(x * x for x in vector))
    if norm == 0.0 or not math.isfinite(norm):
        raise ValidationError("embedding must have a finite, non-zero norm")
    return [x / norm for x in vector]


_TERM = r'\?\w+|<[^>]*>|"[^"]*"'
_PATTERN = re.compile(rf"({_TERM})\s+({_TERM})\s+({_TERM})")


class InMemoryGraphBackend:
    """A set of triples with lookups, traversal and basic-graph-pattern queries.

    ``sparql_query`` understands ``SELECT … WHERE { p1 . p2 … }`` where each
    pattern is three terms: ``?var``, ``<iri>`` or ``"literal"``. It returns
    the matched triples, instantiated. Real SPARQL lives in the ACMS plugin.
    """

    def __init__(self, location: Path | None = None, **options: Any) -> None:
        self.location = location
        self.options = options
        self._triples: dict[str, set[tuple[str, str, str]]] = {}

    # -- write side --------------------------------------------------------------------

    def add_triple(self, project: str, subject: str, predicate: str, obj: str) -> None:
        for name, value in (("subject", subject), ("predicate", predicate), ("obj", obj)):
            _require_text(name, value)
        self._triples.setdefault(project, set()).add((subject, predicate, obj))

    def remove_triples(
        self, project: str, subject: str | None, predicate: str | None, obj: str | None
    ) -> None:
        triples = self._triples.get(project, set())
        for triple in [t for t in triples if _matches(t, (subject, predicate, obj))]:
            triples.discard(triple)

    # -- read side ---------------------------------------------------------------------

    def _all(self) -> set[tuple[str, str, str]]:
        return set().union(*self._triples.values()) if self._triples else set()

    def get_triples(self, subject: str) -> GraphResult:
        _require_text("subject", subject)
        return GraphResult(sorted(t for t in self._all() if t[0] == subject))

    def traverse(self, start: str, *, depth: int = 2) -> GraphResult:
        _require_text("start", start)
        if isinstance(depth, bool) or not isinstance(depth, int) or depth < 0:
            raise ValidationError(f"depth must be a non-negative integer, got {depth!r}")
        triples = self._all()
        found: set[tuple[str, str, str]] = set()
        frontier, seen = {start}, {start}
        for _ in range(depth):
            step = {t for t in triples if t[0] in frontier}
            found |= step
            frontier = {t[2] for t in step} - seen
            seen |= frontier
            if not frontier:
                break
        return GraphResult(sorted(found))

    def sparql_query(self, query: str, *, scope: frozenset[str]) -> GraphResult:
        _require_text("query", query)
        body = query[query.find("{") + 1 : query.rfind("}")] if "{" in query else ""
        patterns = _PATTERN.findall(body)
        if not patterns:
            raise ValidationError("unsupported query: expected SELECT … WHERE { ?s ?p ?o }")
        triples = self._visible(scope)
        matched: set[tuple[str, str, str]] = set()
        for bindings in _solve(list(patterns), triples, {}):
            for pattern in patterns:
                matched.add(tuple(_bind(term, bindings) for term in pattern))  # type: ignore[arg-type]
        return GraphResult(sorted(matched))

    def _visible(self, scope: frozenset[str]) -> set[tuple[str, str, str]]:
        """Triples whose subject is outside every resource, or inside one in ``scope``."""
        triples = self._all()
        owner = {s: o for s, p, o in triples if p == UKO_SOURCE_RESOURCE}
        return {t for t in triples if t[0] not in owner or owner[t[0]] in scope}


def _matches(triple: tuple[str, str, str], pattern: tuple[str | None, ...]) -> bool:
    return all(p is None or p == t for t, p in zip(triple, pattern, strict=True))


def _value(term: str) -> str:
    return term[1:-1] if term[:1] in ('"', "<") else term


def _bind(term: str, bindings: Mapping[str, str]) -> str:
    return bindings[term] if term.startswith("?") else _value(term)


def _solve(
    patterns: list[tuple[str, str, str]],
    triples: set[tuple[str, str, str]],
    bindings: dict[str, str],
) -> Iterable[dict[str, str]]:
    if not patterns:
        yield bindings
        return
    first, rest = patterns[0], patterns[1:]
    for triple in triples:
        new = dict(bindings)
        for term, value in zip(first, triple, strict=True):
            if term.startswith("?"):
                if new.setdefault(term, value) != value:
                    break
            elif _value(term) != value:
                break
        else:
            yield from _solve(rest, triples, new)


class StaticDetailLevelMaps:
    """A DetailLevelMapRegistry with the universal levels and optional extra domains."""

    def __init__(self, maps: Mapping[str, Mapping[str, int]] | None = None) -> None:
        from cleveragents.models.context import UNIVERSAL_LEVELS

        self._maps: dict[str, dict[str, int]] = {"uko": dict(UNIVERSAL_LEVELS)}
        for domain, levels in (maps or {}).items():
            self._maps[domain] = {**UNIVERSAL_LEVELS, **levels}

    def depth_of(self, level: str | int, domain: str | None = None) -> int:
        if isinstance(level, int):
            if not 0 <= level <= 9:
                raise ValidationError(f"depth must be 0-9, got {level}")
            return level
        levels = self.levels_for(domain or "uko")
        if level not in levels:
            raise ValidationError(f"unknown detail level '{level}' for domain '{domain or 'uko'}'")
        return levels[level]

    def levels_for(self, domain: str) -> Mapping[str, int]:
        return self._maps.get(domain, self._maps["uko"])

    def depths_for(self, domain: str) -> Iterable[int]:
        return sorted(set(self.levels_for(domain).values()), reverse=True)


def memory_backends(
    scope: Iterable[str],
    *,
    text: InMemoryTextBackend | None = None,
    vector: InMemoryVectorBackend | None = None,
    graph: InMemoryGraphBackend | None = None,
) -> BackendSet:
    """A :class:`BackendSet` over in-memory backends (new empty ones where not given)."""
    return BackendSet(
        text=text if text is not None else InMemoryTextBackend(),
        vector=vector if vector is not None else InMemoryVectorBackend(),
        graph=graph if graph is not None else InMemoryGraphBackend(),
        scope=frozenset(scope),
    )
