"""Scoped views: two projects share one text index and one graph store, and never meet."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest

from cleveragents.models.uko import UKONode, node_uri
from cleveragents.protocols import BackendSet, GraphBackend, TextBackend, VectorBackend
from cleveragents.testing.memory import InMemoryGraphBackend, InMemoryVectorBackend
from cleveragents_acms.backends.graph import OxigraphGraphBackend
from cleveragents_acms.backends.scoped import (
    ScopedGraphView,
    ScopedTextView,
    ScopedVectorView,
    make_backend_set,
)
from cleveragents_acms.backends.text import TantivyTextBackend
from cleveragents_acms.ontology.namespaces import UKO

API = "01J00000000000000000000API"  # resource of project local/api-service
WEB = "01J00000000000000000000WEB"  # resource of project local/frontend
T1 = datetime(2026, 1, 10, tzinfo=UTC)


def nodes_of(resource: str) -> list[UKONode]:
    """A module with two functions; the same names in every resource."""
    module = node_uri(resource, "auth.py")
    login = node_uri(resource, "auth.py", "login")
    check = node_uri(resource, "auth.py", "check_token")
    return [
        UKONode(
            module,
            "uko-py:Module",
            "auth",
            "auth.py",
            1,
            30,
            resource,
            renderings={9: "def login(): ...\ndef check_token(): ..."},
        ),
        UKONode(
            login,
            "uko-py:Function",
            "login",
            "auth.py",
            1,
            10,
            resource,
            parent=module,
            qualname="login",
            edges=[("uko-code:calls", check)],
            renderings={4: "def login(user)", 9: "def login(user):\n    check_token()"},
        ),
        UKONode(
            check,
            "uko-py:Function",
            "check_token",
            "auth.py",
            11,
            30,
            resource,
            parent=module,
            qualname="check_token",
            renderings={4: "def check_token(token)"},
        ),
    ]


@pytest.fixture
def shared(tmp_path: Path) -> Iterator[tuple[TantivyTextBackend, OxigraphGraphBackend]]:
    text = TantivyTextBackend(tmp_path / "text")
    graph = OxigraphGraphBackend(tmp_path / "graph")
    for resource in (API, WEB):
        text.add_nodes(nodes_of(resource))
        graph.add_nodes(nodes_of(resource), valid_from=T1)
    text.commit()
    yield text, graph
    text.close()
    graph.close()


def resources_in(triples: list[tuple[str, str, str]]) -> set[str]:
    return {
        part.split("/")[4]
        for triple in triples
        for part in triple
        if part.startswith("https://cleveragents.ai/r/")
    }


def test_views_satisfy_the_read_protocols(
    shared: tuple[TantivyTextBackend, OxigraphGraphBackend],
) -> None:
    """The views are what strategies expect: TextBackend, GraphBackend, VectorBackend."""
    text, graph = shared
    assert isinstance(ScopedTextView(text, {API}), TextBackend)
    assert isinstance(ScopedGraphView(graph, {API}), GraphBackend)
    assert isinstance(ScopedVectorView(InMemoryVectorBackend(), {API}), VectorBackend)


def test_text_view_never_leaves_its_scope(
    shared: tuple[TantivyTextBackend, OxigraphGraphBackend],
) -> None:
    """Search through a view returns only its resources, even when asked for more."""
    text, _ = shared
    api = ScopedTextView(text, frozenset({API}))
    results = api.search("check token login")
    assert results and {r.metadata["resource_id"] for r in results} == {API}
    widened = api.search("check token login", scope=frozenset({API, WEB}))
    assert {r.metadata["resource_id"] for r in widened} == {API}
    assert api.search("login", scope=frozenset({WEB})) == []


def test_graph_view_confines_sparql_lookup_traversal_and_subgraph(
    shared: tuple[TantivyTextBackend, OxigraphGraphBackend],
) -> None:
    """SPARQL, get_triples, traverse and subgraph of the WEB view never show API nodes."""
    _, graph = shared
    web = ScopedGraphView(graph, frozenset({WEB}))
    everything = web.sparql_query("SELECT ?s ?p ?o WHERE { ?s ?p ?o }")
    assert resources_in(everything.triples) == {WEB}
    assert resources_in(
        web.sparql_query("SELECT ?s ?p ?o WHERE { ?s ?p ?o }", scope=frozenset({API, WEB})).triples
    ) == {WEB}
    assert web.get_triples(node_uri(API, "auth.py", "login")).triples == []
    assert web.get_triples(node_uri(WEB, "auth.py", "login")).triples
    assert web.traverse(node_uri(API, "auth.py"), depth=3).triples == []
    assert resources_in(web.traverse(node_uri(WEB, "auth.py"), depth=3).triples) == {WEB}
    assert resources_in(web.subgraph().triples) == {WEB}
    assert resources_in(web.query_at_time(datetime(2026, 2, 1, tzinfo=UTC)).triples) == {WEB}


def test_graph_view_filters_backends_without_scope_support() -> None:
    """A backend whose lookups ignore scope is filtered by uko:sourceResource."""
    memory = InMemoryGraphBackend()
    for node, owner in (("urn:n:api", API), ("urn:n:web", WEB)):
        memory.add_triple("p", node, UKO + "sourceResource", owner)
    memory.add_triple("p", "urn:n:api", UKO + "dependsOn", "urn:n:web")
    web = ScopedGraphView(memory, frozenset({WEB}))
    assert web.get_triples("urn:n:api").triples == []
    assert web.get_triples("urn:n:web").triples == [("urn:n:web", UKO + "sourceResource", WEB)]
    assert web.traverse("urn:n:api", depth=2).triples == []


def test_make_backend_set_wraps_every_backend(
    shared: tuple[TantivyTextBackend, OxigraphGraphBackend],
) -> None:
    """The BackendSet carries the scope and scoped views of the installed backends."""
    text, graph = shared
    backends = make_backend_set(text, None, graph, [API])
    assert isinstance(backends, BackendSet)
    assert backends.scope == frozenset({API})
    assert backends.available() == {"text", "graph"}
    assert isinstance(backends.text, ScopedTextView) and backends.text.scope == {API}
    assert isinstance(backends.graph, ScopedGraphView)
    assert backends.vector is None
    with_vector = make_backend_set(None, InMemoryVectorBackend(), None, {WEB})
    assert isinstance(with_vector.vector, ScopedVectorView)


def test_vector_view_confines_similarity_search() -> None:
    """A vector view passes only its scope down."""
    vectors = InMemoryVectorBackend()
    vectors.index_embedding("p", "urn:a", [1.0, 0.0], {"resource_id": API})
    vectors.index_embedding("p", "urn:w", [1.0, 0.0], {"resource_id": WEB})
    view = ScopedVectorView(vectors, {WEB})
    assert [r.uko_uri for r in view.similarity_search([1.0, 0.0])] == ["urn:w"]
    assert view.similarity_search([1.0, 0.0], scope=frozenset({API})) == []


def test_a_string_scope_is_rejected(
    shared: tuple[TantivyTextBackend, OxigraphGraphBackend],
) -> None:
    """A bare ULID string is not a scope."""
    text, _ = shared
    with pytest.raises(ValueError):
        ScopedTextView(text, API)
