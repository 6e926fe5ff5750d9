"""Conformance suites for text, vector and graph backends (spec 004, Backend Abstraction Layer).

Backend slots register classes built as ``cls(location, **options)``; set
:attr:`backend_class` and :attr:`backend_options`, or override
``make_component(tmp_path)``. The suites write through the ``*IndexBackend``
Protocol and read through the query Protocol, as the context system does.
Documents name their resource as the in-memory backends do (see
:mod:`cleveragents.testing.memory`); override :meth:`document_metadata` or
:meth:`provenance_triples` if yours differs.
"""

from __future__ import annotations

import math
from itertools import pairwise
from pathlib import Path
from typing import Any, ClassVar

import pytest

from cleveragents.protocols.backends import GraphResult, TextResult, VectorResult
from cleveragents.testing.conformance._base import INVALID_ARGUMENT, ComponentConformance
from cleveragents.testing.factories import RESOURCE_A, RESOURCE_B
from cleveragents.testing.memory import RESOURCE_METADATA_KEY, UKO_SOURCE_PATH, UKO_SOURCE_RESOURCE

__all__ = ["GraphBackendConformance", "TextBackendConformance", "VectorBackendConformance"]

PROJECT = "conformance"
SCOPE_AB = frozenset({RESOURCE_A, RESOURCE_B})


class _BackendConformance(ComponentConformance):
    #: The backend class under test; ``make_component`` builds it per test.
    backend_class: ClassVar[type | None] = None
    #: Keyword options passed to the class after the location.
    backend_options: ClassVar[dict[str, Any]] = {}

    def make_component(self, tmp_path: Path) -> Any:  # type: ignore[override]
        if self.backend_class is None:
            raise NotImplementedError(
                f"{type(self).__name__} must set backend_class or define make_component(tmp_path)"
            )
        return self.backend_class(tmp_path / "index", **self.backend_options)

    def document_metadata(self, resource_id: str, path: str) -> dict[str, Any]:
        """Metadata indexed with a document of ``resource_id``."""
        return {RESOURCE_METADATA_KEY: resource_id, "path": path}


class TextBackendConformance(_BackendConformance):
    """TextBackend + TextIndexBackend: validation, ranking, scope, removal."""

    slot_key = "text-backend"

    def after_indexing(self, backend: Any) -> None:
        """Called after each batch of writes; the context system calls nothing here."""

    def index(self, backend: Any, doc_id: str, content: str, resource: str = RESOURCE_A) -> None:
        metadata = self.document_metadata(resource, doc_id.rsplit("/", 1)[-1])
        backend.index_document(PROJECT, doc_id, content, metadata)

    @pytest.fixture
    def corpus(self, component: Any) -> Any:
        docs = {
            "uko://a/parser.py#parse_config": "def parse_config(path): read the config file",
            "uko://a/loader.py#load": "def load(name): load a module by name",
            "uko://a/config.py#Config": "class Config: config config config settings holder",
            "uko://a/readme.md#intro": "This project parses files and prints reports",
        }
        for doc_id, content in docs.items():
            self.index(component, doc_id, content)
        self.after_indexing(component)
        return component

    def test_empty_query_is_rejected(self, component: Any) -> None:
        with pytest.raises(INVALID_ARGUMENT):
            component.search("", scope=SCOPE_AB)

    @pytest.mark.parametrize("max_results", [0, -1])
    def test_non_positive_max_results_is_rejected(self, component: Any, max_results: int) -> None:
        with pytest.raises(INVALID_ARGUMENT):
            component.search("config", scope=SCOPE_AB, max_results=max_results)

    def test_an_empty_index_finds_nothing(self, component: Any) -> None:
        assert component.search("config", scope=SCOPE_AB) == []

    def test_results_are_ranked_by_descending_score_in_unit_range(self, corpus: Any) -> None:
        results = corpus.search("config", scope=SCOPE_AB)
        assert results, "a term present in three documents must match"
        assert all(isinstance(r, TextResult) for r in results)
        scores = [r.score for r in results]
        assert scores == sorted(scores, reverse=True)
        assert all(0.0 <= s <= 1.0 and math.isfinite(s) for s in scores)
        assert all(r.uko_uri for r in results)

    def test_the_most_relevant_document_ranks_first(self, corpus: Any) -> None:
        results = corpus.search("config", scope=SCOPE_AB)
        assert results[0].uko_uri == "uko://a/config.py#Config"
        assert "uko://a/loader.py#load" not in {r.uko_uri for r in results}

    def test_max_results_caps_the_result_count(self, corpus: Any) -> None:
        assert len(corpus.search("config", scope=SCOPE_AB, max_results=1)) == 1

    def test_scope_hides_other_resources(self, component: Any) -> None:
        self.index(component, "uko://a/x.py#needle", "needle in resource a", RESOURCE_A)
        self.index(component, "uko://b/y.py#needle", "needle in resource b", RESOURCE_B)
        self.after_indexing(component)
        only_a = {r.uko_uri for r in component.search("needle", scope=frozenset({RESOURCE_A}))}
        only_b = {r.uko_uri for r in component.search("needle", scope=frozenset({RESOURCE_B}))}
        both = {r.uko_uri for r in component.search("needle", scope=SCOPE_AB)}
        assert only_a == {"uko://a/x.py#needle"}
        assert only_b == {"uko://b/y.py#needle"}
        assert both == only_a | only_b
        assert component.search("needle", scope=frozenset()) == []

    def test_removed_documents_are_not_found(self, corpus: Any) -> None:
        corpus.remove_document(PROJECT, "uko://a/config.py#Config")
        self.after_indexing(corpus)
        found = {r.uko_uri for r in corpus.search("config", scope=SCOPE_AB)}
        assert "uko://a/config.py#Config" not in found
        assert "uko://a/parser.py#parse_config" in found

    def test_reindexing_a_document_replaces_it(self, corpus: Any) -> None:
        self.index(corpus, "uko://a/parser.py#parse_config", "def parse_yaml(stream): yaml only")
        self.after_indexing(corpus)
        assert "uko://a/parser.py#parse_config" not in {
            r.uko_uri for r in corpus.search("config", scope=SCOPE_AB)
        }
        hits = corpus.search("yaml", scope=SCOPE_AB)
        assert [r.uko_uri for r in hits] == ["uko://a/parser.py#parse_config"]

    def test_rebuild_keeps_the_documents(self, corpus: Any) -> None:
        corpus.rebuild_index(PROJECT)
        self.after_indexing(corpus)
        assert corpus.search("config", scope=SCOPE_AB)


class VectorBackendConformance(_BackendConformance):
    """VectorBackend + VectorIndexBackend: validation, cosine ranking, scope, removal."""

    slot_key = "vector-backend"
    #: Dimension of the test vectors; pass it in backend_options if the class needs it.
    dimension: ClassVar[int] = 8

    def after_indexing(self, backend: Any) -> None:
        """Called after each batch of writes; the context system calls nothing here."""

    def vector(self, *hot: int, sign: float = 1.0) -> list[float]:
        """A unit vector with equal weight on the ``hot`` axes."""
        weight = sign / math.sqrt(len(hot))
        return [weight if i in hot else 0.0 for i in range(self.dimension)]

    def index(
        self, backend: Any, doc_id: str, vector: list[float], resource: str = RESOURCE_A
    ) -> None:
        metadata = {**self.document_metadata(resource, doc_id), "content": doc_id}
        backend.index_embedding(PROJECT, doc_id, vector, metadata)

    @pytest.fixture
    def corpus(self, component: Any) -> Any:
        self.index(component, "uko://a#x", self.vector(0))
        self.index(component, "uko://a#xy", self.vector(0, 1))
        self.index(component, "uko://a#y", self.vector(1))
        self.index(component, "uko://a#minus-x", self.vector(0, sign=-1.0))
        self.after_indexing(component)
        return component

    def test_empty_embedding_is_rejected(self, component: Any) -> None:
        with pytest.raises(INVALID_ARGUMENT):
            component.similarity_search([], scope=SCOPE_AB)

    @pytest.mark.parametrize("top_k", [0, -3])
    def test_non_positive_top_k_is_rejected(self, component: Any, top_k: int) -> None:
        with pytest.raises(INVALID_ARGUMENT):
            component.similarity_search(self.vector(0), scope=SCOPE_AB, top_k=top_k)

    def test_an_empty_index_finds_nothing(self, component: Any) -> None:
        assert component.similarity_search(self.vector(0), scope=SCOPE_AB) == []

    def test_nearest_vector_ranks_first_with_similarity_one(self, corpus: Any) -> None:
        results = corpus.similarity_search(self.vector(0), scope=SCOPE_AB)
        assert all(isinstance(r, VectorResult) for r in results)
        assert [r.uko_uri for r in results[:2]] == ["uko://a#x", "uko://a#xy"]
        assert results[0].score == pytest.approx(1.0, abs=1e-3)
        assert results[1].score == pytest.approx(1 / math.sqrt(2), abs=1e-2)

    def test_scores_are_descending_and_in_unit_range(self, corpus: Any) -> None:
        results = corpus.similarity_search(self.vector(0, 1), scope=SCOPE_AB)
        scores = [r.score for r in results]
        assert scores == sorted(scores, reverse=True)
        assert all(0.0 <= s <= 1.0 and math.isfinite(s) for s in scores), scores

    def test_top_k_caps_the_result_count(self, corpus: Any) -> None:
        assert len(corpus.similarity_search(self.vector(0), scope=SCOPE_AB, top_k=2)) == 2

    def test_scope_hides_other_resources(self, component: Any) -> None:
        self.index(component, "uko://a#v", self.vector(2), RESOURCE_A)
        self.index(component, "uko://b#v", self.vector(2), RESOURCE_B)
        self.after_indexing(component)
        query = self.vector(2)
        only_a = {
            r.uko_uri for r in component.similarity_search(query, scope=frozenset({RESOURCE_A}))
        }
        only_b = {
            r.uko_uri for r in component.similarity_search(query, scope=frozenset({RESOURCE_B}))
        }
        assert only_a == {"uko://a#v"}
        assert only_b == {"uko://b#v"}
        assert component.similarity_search(query, scope=frozenset()) == []

    def test_removed_embeddings_are_not_found(self, corpus: Any) -> None:
        corpus.remove_embedding(PROJECT, "uko://a#x")
        self.after_indexing(corpus)
        found = [r.uko_uri for r in corpus.similarity_search(self.vector(0), scope=SCOPE_AB)]
        assert "uko://a#x" not in found
        assert found[0] == "uko://a#xy"


class GraphBackendConformance(_BackendConformance):
    """GraphBackend + GraphIndexBackend: validation, lookups, traversal depth, scope, removal.

    The scope test runs ``SELECT ?s ?p ?o WHERE { ?s ?p ?o }``; a backend
    with another query language overrides :attr:`all_triples_query`.
    """

    slot_key = "graph-backend"
    all_triples_query: ClassVar[str] = "SELECT ?s ?p ?o WHERE { ?s ?p ?o }"
    predicate: ClassVar[str] = "https://cleveragents.ai/ontology/uko#dependsOn"

    def provenance_triples(
        self, node: str, resource_id: str, path: str
    ) -> list[tuple[str, str, str]]:
        """The triples that tie ``node`` to its resource, as analyzers write them."""
        return [(node, UKO_SOURCE_RESOURCE, resource_id), (node, UKO_SOURCE_PATH, path)]

    def add(self, backend: Any, triples: list[tuple[str, str, str]]) -> None:
        for subject, predicate, obj in triples:
            backend.add_triple(PROJECT, subject, predicate, obj)

    @pytest.fixture
    def chain(self, component: Any) -> Any:
        """``a -> b -> c -> d`` over :attr:`predicate`, all in resource A."""
        nodes = [f"https://example.org/node/{n}" for n in "abcd"]
        for node in nodes:
            self.add(component, self.provenance_triples(node, RESOURCE_A, "chain.py"))
        self.add(component, [(s, self.predicate, o) for s, o in pairwise(nodes)])
        return component

    @staticmethod
    def _edges(result: GraphResult, predicate: str) -> set[tuple[str, str]]:
        return {
            (s.rsplit("/", 1)[-1], o.rsplit("/", 1)[-1])
            for s, p, o in result.triples
            if p == predicate
        }

    @pytest.mark.parametrize("call", ["sparql_query", "get_triples", "traverse"])
    def test_empty_strings_are_rejected(self, component: Any, call: str) -> None:
        with pytest.raises(INVALID_ARGUMENT):
            if call == "sparql_query":
                component.sparql_query("", scope=SCOPE_AB)
            else:
                getattr(component, call)("")

    def test_negative_depth_is_rejected(self, chain: Any) -> None:
        with pytest.raises(INVALID_ARGUMENT):
            chain.traverse("https://example.org/node/a", depth=-1)

    def test_get_triples_returns_the_subjects_triples(self, chain: Any) -> None:
        result = chain.get_triples("https://example.org/node/b")
        assert isinstance(result, GraphResult)
        assert all(s == "https://example.org/node/b" for s, _, _ in result.triples)
        assert self._edges(result, self.predicate) == {("b", "c")}

    def test_an_unknown_subject_has_no_triples(self, chain: Any) -> None:
        assert list(chain.get_triples("https://example.org/node/unknown").triples) == []

    def test_traverse_stays_within_depth(self, chain: Any) -> None:
        start = "https://example.org/node/a"
        assert self._edges(chain.traverse(start, depth=1), self.predicate) == {("a", "b")}
        assert self._edges(chain.traverse(start, depth=2), self.predicate) == {
            ("a", "b"),
            ("b", "c"),
        }
        assert self._edges(chain.traverse(start, depth=3), self.predicate) == {
            ("a", "b"),
            ("b", "c"),
            ("c", "d"),
        }

    def test_sparql_scope_hides_other_resources(self, component: Any) -> None:
        node_a, node_b = "https://example.org/node/in-a", "https://example.org/node/in-b"
        self.add(component, self.provenance_triples(node_a, RESOURCE_A, "a.py"))
        self.add(component, self.provenance_triples(node_b, RESOURCE_B, "b.py"))
        self.add(component, [(node_a, self.predicate, node_b)])
        subjects_a = {
            s
            for s, _, _ in component.sparql_query(
                self.all_triples_query, scope=frozenset({RESOURCE_A})
            ).triples
        }
        subjects_b = {
            s
            for s, _, _ in component.sparql_query(
                self.all_triples_query, scope=frozenset({RESOURCE_B})
            ).triples
        }
        assert node_a in subjects_a and node_b not in subjects_a
        assert node_b in subjects_b and node_a not in subjects_b

    def test_remove_triples_by_subject(self, chain: Any) -> None:
        chain.remove_triples(PROJECT, "https://example.org/node/b", None, None)
        assert list(chain.get_triples("https://example.org/node/b").triples) == []
        assert self._edges(
            chain.traverse("https://example.org/node/a", depth=3), self.predicate
        ) == {
            ("a", "b"),
        }
