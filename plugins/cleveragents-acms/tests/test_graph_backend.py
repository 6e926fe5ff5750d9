"""OxigraphGraphBackend: node triples, scoped SPARQL, traversal, revisions and persistence."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pyoxigraph as ox
import pytest

from cleveragents.errors import CleverAgentsError, ConfigurationError, ValidationError
from cleveragents.models.context import TemporalScope
from cleveragents.models.uko import UKONode, node_uri
from cleveragents.protocols import GraphBackend, GraphIndexBackend
from cleveragents_acms.backends.graph import (
    OxigraphGraphBackend,
    current_graph,
    history_graph,
    revision_iri,
)
from cleveragents_acms.ontology.namespaces import UKO, expand

RES_A = "01J00000000000000000000RSA"
RES_B = "01J00000000000000000000RSB"
T1 = datetime(2026, 1, 10, tzinfo=UTC)
T2 = datetime(2026, 1, 15, 10, 30, tzinfo=UTC)
T3 = datetime(2026, 1, 20, tzinfo=UTC)
RDF_TYPE = "http://www.w3.org/1999/02/22-rdf-syntax-ns#type"
SIGNATURE = expand("uko-code:signature")
CALLS = expand("uko-code:calls")


def module(resource: str, path: str) -> UKONode:
    """A module node."""
    return UKONode(
        node_uri(resource, path),
        "uko-py:Module",
        path.rsplit("/", 1)[-1],
        path,
        1,
        40,
        resource,
        language="python",
    )


def function(
    resource: str,
    path: str,
    name: str,
    *,
    signature: str = "",
    edges: list[tuple[str, str]] | None = None,
    lines: tuple[int, int] = (2, 9),
) -> UKONode:
    """A function node contained in its module."""
    return UKONode(
        node_uri(resource, path, name),
        "uko-py:Function",
        name,
        path,
        lines[0],
        lines[1],
        resource,
        parent=node_uri(resource, path),
        qualname=name,
        language="python",
        edges=list(edges or []),
        properties={"signature": signature or f"def {name}()"},
    )


@pytest.fixture
def backend(tmp_path: Path) -> Iterator[OxigraphGraphBackend]:
    opened = OxigraphGraphBackend(tmp_path / "graph")
    yield opened
    opened.close()


@pytest.fixture
def two_resources(backend: OxigraphGraphBackend) -> OxigraphGraphBackend:
    helper_b = node_uri(RES_B, "lib.py", "helper")
    backend.add_nodes(
        [
            module(RES_A, "app.py"),
            function(
                RES_A,
                "app.py",
                "main",
                edges=[
                    ("uko-code:calls", node_uri(RES_A, "app.py", "run")),
                    ("uko-code:imports", "symbol:os.path"),
                ],
            ),
            function(RES_A, "app.py", "run", edges=[("uko-code:calls", helper_b)]),
            module(RES_B, "lib.py"),
            function(RES_B, "lib.py", "helper"),
        ],
        valid_from=T1,
    )
    return backend


def subjects(triples: list[tuple[str, str, str]]) -> set[str]:
    return {s for s, _, _ in triples}


def test_backend_satisfies_both_protocols(backend: OxigraphGraphBackend) -> None:
    """The class is a GraphBackend and a GraphIndexBackend."""
    assert isinstance(backend, GraphBackend)
    assert isinstance(backend, GraphIndexBackend)


def test_node_triples_follow_the_provenance_model(two_resources: OxigraphGraphBackend) -> None:
    """Type, name, provenance, validity, containment, properties and edges are stored."""
    main = node_uri(RES_A, "app.py", "main")
    triples = set(two_resources.get_triples(main).triples)
    assert (main, RDF_TYPE, expand("uko-py:Function")) in triples
    assert (main, UKO + "name", "main") in triples
    assert (main, UKO + "qualifiedName", "main") in triples
    assert (main, UKO + "sourceResource", RES_A) in triples
    assert (main, UKO + "sourcePath", "app.py") in triples
    assert (main, UKO + "sourceRange", "2:1-9:0") in triples
    assert (main, UKO + "validFrom", "2026-01-10T00:00:00Z") in triples
    assert (main, UKO + "isCurrent", "true") in triples
    assert (main, SIGNATURE, "def main()") in triples
    assert (main, CALLS, node_uri(RES_A, "app.py", "run")) in triples
    assert (main, expand("uko-code:imports"), "symbol:os.path") in triples
    parent = two_resources.get_triples(node_uri(RES_A, "app.py")).triples
    assert (node_uri(RES_A, "app.py"), UKO + "contains", main) in parent


def test_only_vocabulary_properties_reach_the_graph(backend: OxigraphGraphBackend) -> None:
    """Terms of the ontology, prefixed keys and Dublin Core titles are written; an
    analyzer's bookkeeping keys stay with the node (in the node store)."""
    node = function(RES_A, "m.py", "f")
    node.properties.update(
        {
            "kind": "function",
            "fqname": "m.f",
            "module": "m",
            "title": "F",
            "visibility": "public",
            "uko-doc:wordCount": "3",
            "contentHash": "abc",
        }
    )
    backend.add_nodes([node], valid_from=T1)
    subject = node_uri(RES_A, "m.py", "f")
    predicates = {p: o for _, p, o in backend.get_triples(subject).triples}
    assert predicates[expand("uko-code:visibility")] == "public"
    assert predicates[expand("uko-doc:wordCount")] == "3"
    assert predicates["http://purl.org/dc/terms/title"] == "F"
    assert predicates[UKO + "contentHash"] == "abc"
    assert not {UKO + "kind", UKO + "fqname", UKO + "module"} & set(predicates)


def test_the_bare_property_keys_are_the_core_vocabulary() -> None:
    """UKO_PROPERTIES is uko.ttl's property list, kept without parsing Turtle on writes."""
    from cleveragents_acms.backends._rdf import UKO_PROPERTIES
    from cleveragents_acms.ontology.loader import UKOLoader

    defined = {curie.split(":", 1)[1] for curie in UKOLoader().properties("uko")}
    assert defined == UKO_PROPERTIES


def test_literals_with_quotes_and_newlines_round_trip(backend: OxigraphGraphBackend) -> None:
    """Property values are escaped, not interpreted."""
    tricky = 'def f(x="a\\"b"):\n    """Doc with "quotes" and \\ backslash."""'
    backend.add_nodes([function(RES_A, "m.py", "f", signature=tricky)], valid_from=T1)
    triples = backend.get_triples(node_uri(RES_A, "m.py", "f")).triples
    assert (node_uri(RES_A, "m.py", "f"), SIGNATURE, tricky) in triples


def test_edge_targets_become_iris_or_literals(backend: OxigraphGraphBackend) -> None:
    """A target with a scheme and no whitespace is an IRI; anything else stays a literal."""
    node = function(
        RES_A,
        "m.py",
        "f",
        edges=[
            ("uko-code:calls", "https://example.org/lib#g"),
            ("uko-code:calls", "symbol:pkg.helper"),
            ("uko-code:calls", "symbol:not an iri"),
            ("uko-code:calls", "plain words"),
        ],
    )
    backend.add_nodes([node], valid_from=T1)
    quads = backend.store.quads_for_pattern(ox.NamedNode(node.uri), ox.NamedNode(CALLS), None)
    kinds = {q.object.value: isinstance(q.object, ox.NamedNode) for q in quads}
    assert kinds == {
        "https://example.org/lib#g": True,
        "symbol:pkg.helper": True,
        "symbol:not an iri": False,
        "plain words": False,
    }


def test_sparql_is_confined_to_the_scope(two_resources: OxigraphGraphBackend) -> None:
    """A query that ignores scope still only sees the scope's nodes."""
    everything = "SELECT ?s ?p ?o WHERE { ?s ?p ?o }"
    seen_a = subjects(two_resources.sparql_query(everything, scope=frozenset({RES_A})).triples)
    seen_b = subjects(two_resources.sparql_query(everything, scope=frozenset({RES_B})).triples)
    assert all(s.startswith(f"https://cleveragents.ai/r/{RES_A}/") for s in seen_a)
    assert all(s.startswith(f"https://cleveragents.ai/r/{RES_B}/") for s in seen_b)
    assert seen_a and seen_b
    assert two_resources.sparql_query(everything, scope=frozenset()).triples == []


@pytest.mark.parametrize(
    "query",
    [
        f"SELECT ?s ?p ?o FROM <{current_graph(RES_B)}> WHERE {{ ?s ?p ?o }}",
        f"SELECT ?s ?p ?o WHERE {{ GRAPH <{current_graph(RES_B)}> {{ ?s ?p ?o }} }}",
        "SELECT ?s ?p ?o WHERE { GRAPH ?g { ?s ?p ?o } }",
        f"SELECT ?s ?p ?o FROM NAMED <{current_graph(RES_B)}> WHERE {{ GRAPH ?g {{ ?s ?p ?o }} }}",
        f'CONSTRUCT {{ ?s ?p ?o }} WHERE {{ ?s uko:sourceResource "{RES_B}" ; ?p ?o }}',
    ],
)
def test_dataset_clauses_cannot_escape_the_scope(
    two_resources: OxigraphGraphBackend, query: str
) -> None:
    """FROM, FROM NAMED and GRAPH clauses cannot reach another resource."""
    found = two_resources.sparql_query(query, scope=frozenset({RES_A})).triples
    assert not any(RES_B in s for s, _, _ in found)


def test_select_construct_and_ask_results(two_resources: OxigraphGraphBackend) -> None:
    """SELECT rows, CONSTRUCT triples and ASK answers are all reported."""
    scope = frozenset({RES_A})
    rows = two_resources.select("SELECT ?f WHERE { ?f a uko-py:Function } ORDER BY ?f", scope=scope)
    assert [r["f"].rsplit("#", 1)[-1] for r in rows] == ["main", "run"]
    one_var = two_resources.sparql_query("SELECT ?f WHERE { ?f a uko-py:Function }", scope=scope)
    assert one_var.metadata["form"] == "select" and one_var.metadata["count"] == "2"
    built = two_resources.sparql_query(
        "CONSTRUCT { ?f uko:name ?n } WHERE { ?f a uko-py:Function ; uko:name ?n }", scope=scope
    )
    assert sorted(o for _, _, o in built.triples) == ["main", "run"]
    asked = two_resources.sparql_query('ASK { ?f uko:name "helper" }', scope=scope)
    assert asked.metadata["boolean"] == "false" and asked.triples == []


@pytest.mark.parametrize(
    "query",
    [
        "",
        "   ",
        "SELECT * WHERE {",
        "DROP ALL",
        "INSERT DATA { <a:b> <a:c> <a:d> }",
        "SELECT * WHERE { SERVICE <http://localhost:9/sparql> { ?s ?p ?o } }",
    ],
)
def test_bad_queries_are_rejected(two_resources: OxigraphGraphBackend, query: str) -> None:
    """Empty, malformed, updating and federated queries raise a validation error."""
    with pytest.raises(ValidationError):
        two_resources.sparql_query(query, scope=frozenset({RES_A}))


@pytest.mark.parametrize(
    "query",
    [
        'SELECT ?s WHERE { ?s uko:name "SERVICE <http://x/>" }',
        "SELECT ?service WHERE { ?service uko:name ?n }",
        "SELECT ?s WHERE { ?s uko:service ?n } # SERVICE <http://x/>",
        "SELECT ?s WHERE { ?s <http://x/SERVICE> ?n }",
    ],
)
def test_the_word_service_alone_is_not_a_federated_call(
    two_resources: OxigraphGraphBackend, query: str
) -> None:
    """SERVICE in literals, variables, names and comments is allowed."""
    two_resources.sparql_query(query, scope=frozenset({RES_A}))


@pytest.mark.parametrize(
    "query",
    [
        "SELECT * WHERE { service silent <http://localhost:9/> { ?s ?p ?o } }",
        "SELECT * WHERE { SERVICE ?endpoint { ?s ?p ?o } }",
        "PREFIX ex: <http://localhost:9/> SELECT * WHERE { SERVICE ex:sparql { ?s ?p ?o } }",
    ],
)
def test_federated_calls_are_refused(two_resources: OxigraphGraphBackend, query: str) -> None:
    """Every spelling of a SERVICE call is refused before it reaches the network."""
    with pytest.raises(ValidationError, match="SERVICE"):
        two_resources.sparql_query(query, scope=frozenset({RES_A}))


def test_traverse_respects_depth_direction_and_scope(two_resources: OxigraphGraphBackend) -> None:
    """Traversal follows IRI links hop by hop, never into another scope."""
    mod = node_uri(RES_A, "app.py")
    main, run = node_uri(RES_A, "app.py", "main"), node_uri(RES_A, "app.py", "run")
    helper = node_uri(RES_B, "lib.py", "helper")
    one = two_resources.traverse(mod, depth=1)
    assert subjects(one.triples) == {mod}
    two = two_resources.traverse(mod, depth=2)
    assert subjects(two.triples) == {mod, main, run}
    three = two_resources.traverse(mod, depth=3)
    assert helper in subjects(three.triples)
    scoped = two_resources.traverse(mod, depth=3, scope=frozenset({RES_A}))
    assert helper not in subjects(scoped.triples)
    assert all(RES_B not in s for s, _, _ in scoped.triples)
    assert two_resources.traverse(mod, depth=0).triples == []
    incoming = two_resources.traverse(run, depth=1, direction="in")
    assert (main, CALLS, run) in incoming.triples
    calls_only = two_resources.traverse(main, depth=3, edge_types=["uko-code:calls"])
    assert {p for _, p, _ in calls_only.triples} == {CALLS}


def test_traverse_and_lookup_validation(two_resources: OxigraphGraphBackend) -> None:
    """Empty starts and negative depths are rejected; unknown subjects are empty."""
    with pytest.raises(ValueError):
        two_resources.traverse("", depth=1)
    with pytest.raises(ValueError):
        two_resources.traverse(node_uri(RES_A, "app.py"), depth=-1)
    with pytest.raises(ValueError):
        two_resources.get_triples("  ")
    assert two_resources.get_triples("https://example.org/nothing").triples == []
    assert two_resources.get_triples("not an iri").triples == []


def test_get_triples_in_scope(two_resources: OxigraphGraphBackend) -> None:
    """A scoped lookup of another resource's node finds nothing."""
    helper = node_uri(RES_B, "lib.py", "helper")
    assert two_resources.get_triples(helper, scope=frozenset({RES_A})).triples == []
    assert two_resources.get_triples(helper, scope=frozenset({RES_B})).triples


def test_revision_chain_in_place(backend: OxigraphGraphBackend) -> None:
    """Retire v1 with a same-URI successor, add v2: history, link and current view."""
    mod, f = module(RES_A, "m.py"), function(RES_A, "m.py", "f", signature="def f(x)")
    backend.add_nodes([mod, f], valid_from=T1)
    assert backend.retire([f.uri], valid_until=T2, successor_uris={f.uri}) == 1
    backend.add_nodes([function(RES_A, "m.py", "f", signature="def f(x, y)")], valid_from=T2)
    old = revision_iri(f.uri, T1)
    current = set(backend.get_triples(f.uri).triples)
    assert (f.uri, UKO + "isRevisionOf", old) in current
    assert (f.uri, SIGNATURE, "def f(x, y)") in current
    assert (f.uri, SIGNATURE, "def f(x)") not in current
    history = set(backend.get_triples(old).triples)
    assert (old, UKO + "isCurrent", "false") in history
    assert (old, UKO + "validUntil", "2026-01-15T10:30:00Z") in history
    assert (old, SIGNATURE, "def f(x)") in history
    assert (old, "http://purl.org/dc/terms/isVersionOf", f.uri) in history
    # the module still contains f: its link survives the revision of f
    assert (mod.uri, UKO + "contains", f.uri) in backend.get_triples(mod.uri).triples
    signatures = backend.select(
        "SELECT ?sig WHERE { ?f uko-code:signature ?sig }", scope=frozenset({RES_A})
    )
    assert [r["sig"] for r in signatures] == ["def f(x, y)"]


def test_a_module_retired_with_its_functions_keeps_them_in_its_history(
    backend: OxigraphGraphBackend,
) -> None:
    """A file removed retires its module and its functions in one call, the functions
    first: every version is read before any is moved, so the module's version in history
    still contains each of its 3,000 functions (a call of that size once moved the first
    2,000 and more before reading the module, whose copy then lacked them: 826 left)."""
    mod = module(RES_A, "big.py")
    functions = [function(RES_A, "big.py", f"f{i}") for i in range(3000)]
    backend.add_nodes([mod, *functions], valid_from=T1)
    retired = backend.retire([f.uri for f in functions] + [mod.uri], valid_until=T2)
    assert retired == 3001
    history = backend.get_triples(revision_iri(mod.uri, T1)).triples
    assert sum(p == UKO + "contains" for _, p, _ in history) == 3000
    assert backend.get_triples(mod.uri).triples == []


def test_query_at_time_returns_each_version(backend: OxigraphGraphBackend) -> None:
    """Before the change the old version is valid, after it the new one."""
    f = function(RES_A, "m.py", "f", signature="def f(x)")
    backend.add_nodes([module(RES_A, "m.py"), f], valid_from=T1)
    backend.retire([f.uri], valid_until=T2, successor_uris=[f.uri])
    backend.add_nodes([function(RES_A, "m.py", "f", signature="def f(x, y)")], valid_from=T2)
    scope = frozenset({RES_A})

    def signature_at(moment: datetime) -> list[str]:
        triples = backend.query_at_time(moment, scope).triples
        return sorted(o for s, p, o in triples if s == f.uri and p == SIGNATURE)

    assert signature_at(T1 - timedelta(days=1)) == []
    assert signature_at(T1) == ["def f(x)"]
    assert signature_at(T2 - timedelta(seconds=1)) == ["def f(x)"]
    assert signature_at(T2) == ["def f(x, y)"]
    assert signature_at(T3) == ["def f(x, y)"]
    assert backend.query_at_time(T3, frozenset({RES_B})).triples == []


def test_sparql_at_time_sees_the_graph_as_it_stood(backend: OxigraphGraphBackend) -> None:
    """A query at T sees the versions valid at T under their nodes' URIs: a node removed
    since is there, one added since is not, a revised one has its old text; no
    bookkeeping of later changes; the same triples as ``query_at_time``."""
    gone = function(RES_A, "m.py", "gone", signature="def gone()")
    f = function(RES_A, "m.py", "f", signature="def f(x)")
    backend.add_nodes([module(RES_A, "m.py"), f, gone], valid_from=T1)
    backend.retire([f.uri], valid_until=T2, successor_uris=[f.uri])
    backend.retire([gone.uri], valid_until=T2)
    backend.add_nodes(
        [function(RES_A, "m.py", "f", signature="def f(x, y)"), function(RES_A, "m.py", "new")],
        valid_from=T2,
    )
    scope = frozenset({RES_A})
    named = "SELECT ?n ?sig WHERE { ?f uko:name ?n OPTIONAL { ?f uko-code:signature ?sig } }"

    def rows(moment: datetime) -> list[tuple[str, str]]:
        result = backend.sparql_at_time(named, moment, scope=scope)
        return sorted((r["n"], r.get("sig", "")) for r in json.loads(result.metadata["bindings"]))

    assert rows(T1 - timedelta(days=1)) == []
    assert rows(T1) == [("f", "def f(x)"), ("gone", "def gone()"), ("m.py", "")]
    assert rows(T3) == [("f", "def f(x, y)"), ("m.py", ""), ("new", "def new()")]
    subjects = "SELECT DISTINCT ?s WHERE { ?s ?p ?o }"
    uris = json.loads(backend.sparql_at_time(subjects, T1, scope=scope).metadata["bindings"])
    assert {r["s"] for r in uris} == {module(RES_A, "m.py").uri, f.uri, gone.uri}
    bookkeeping = "ASK { { ?s uko:isCurrent ?c } UNION { ?s uko:validUntil ?u } }"
    for moment in (T1, T3):
        assert backend.sparql_at_time(bookkeeping, moment, scope=scope).metadata["boolean"] == (
            "false"
        )
        everything = backend.sparql_at_time(
            "SELECT ?s ?p ?o WHERE { ?s ?p ?o }", moment, scope=scope
        )
        assert sorted(everything.triples) == backend.query_at_time(moment, scope).triples
    assert backend.sparql_at_time(named, T3, scope=frozenset({RES_B})).metadata["count"] == "0"


def test_add_nodes_revises_an_already_current_node(backend: OxigraphGraphBackend) -> None:
    """Re-adding a URI chains the revisions automatically: v3 -> v2 -> v1."""
    uri = node_uri(RES_A, "m.py", "f")
    for stamp, signature in ((T1, "def f()"), (T2, "def f(a)"), (T3, "def f(a, b)")):
        backend.add_nodes([function(RES_A, "m.py", "f", signature=signature)], valid_from=stamp)
    chain = backend.select(
        "SELECT ?new ?old WHERE { ?new uko:isRevisionOf ?old }",
        scope=frozenset({RES_A}),
        include_history=True,
    )
    links = {(r["new"], r["old"]) for r in chain}
    assert links == {(uri, revision_iri(uri, T2)), (revision_iri(uri, T2), revision_iri(uri, T1))}
    again = function(RES_A, "m.py", "f", signature="def f(a, b, c)")
    backend.add_nodes([again], valid_from=T3)  # same instant: replaced, no new revision
    signatures = [o for _, p, o in backend.get_triples(uri).triples if p == SIGNATURE]
    assert signatures == ["def f(a, b, c)"]


def _every_quad(backend: OxigraphGraphBackend) -> set[str]:
    return {str(q) for q in backend.store.quads_for_pattern(None, None, None, None)}


def _moved_and_changed(lines: int) -> list[UKONode]:
    """m.py's module, ``f`` moved down by ``lines`` lines and ``g`` with a new signature."""
    return [
        module(RES_A, "m.py"),
        function(RES_A, "m.py", "f", lines=(2 + lines, 9 + lines)),
        function(RES_A, "m.py", "g", signature="def g(x)", lines=(12, 14)),
    ]


@pytest.mark.parametrize("bulk_threshold", [20_000, 1])
def test_add_nodes_revises_as_retiring_then_adding_did(tmp_path: Path, bulk_threshold: int) -> None:
    """A revision by ``add_nodes`` keeps the triples that did not change where they are
    and writes only the others; the graph ends up as it did when every triple of the
    old version was taken out and the new version's all put in (big batches of copies
    into history go through the bulk loader: ``bulk_threshold=1`` sends every one)."""
    stores = [
        OxigraphGraphBackend(tmp_path / name, bulk_threshold=bulk_threshold)
        for name in ("revised", "retired")
    ]
    revised, retired = stores
    try:
        for backend in stores:
            backend.add_nodes(
                [*_moved_and_changed(0), function(RES_A, "m.py", "gone")], valid_from=T1
            )
        nodes = _moved_and_changed(3)
        uris = [n.uri for n in nodes]
        nodes.append(function(RES_A, "m.py", "new", lines=(16, 18)))  # in the same batch
        revised.add_nodes(nodes, valid_from=T2)
        revised.retire([node_uri(RES_A, "m.py", "gone")], valid_until=T2)
        retired.retire(
            [node_uri(RES_A, "m.py", "gone"), *uris], valid_until=T2, successor_uris=set(uris)
        )
        retired.add_nodes(nodes, valid_from=T2)
        assert _every_quad(revised) == _every_quad(retired)
        f = node_uri(RES_A, "m.py", "f")
        assert (f, UKO + "sourceRange", "5:1-12:0") in revised.get_triples(f).triples
        added = node_uri(RES_A, "m.py", "new")
        assert (added, UKO + "sourceRange", "16:1-18:0") in revised.get_triples(added).triples
    finally:
        for backend in stores:
            backend.close()


class _StoreFailingUpdates:
    """A store whose SPARQL updates fail: a run stopped in the middle of a revision."""

    def __init__(self, store: ox.Store) -> None:
        self._store = store

    def update(self, query: str) -> None:
        raise OSError("stopped")

    def __getattr__(self, name: str) -> object:
        return getattr(self._store, name)


def test_a_revision_stopped_midway_leaves_the_current_version_and_is_redone(
    backend: OxigraphGraphBackend,
) -> None:
    """The copies into history go in first, on their own: stopped before the current
    graph changes, the current version is as it was and no query at a time sees the
    unfinished copy; the run that redoes it ends the version once."""
    backend.add_nodes(_moved_and_changed(0), valid_from=T1)
    f = node_uri(RES_A, "m.py", "f")
    before = sorted(backend.get_triples(f).triples)
    store = backend.store
    backend._store = _StoreFailingUpdates(store)  # type: ignore[assignment]
    with pytest.raises(OSError, match="stopped"):
        backend.add_nodes(_moved_and_changed(3), valid_from=T2)
    backend._store = store
    assert sorted(backend.get_triples(f).triples) == before
    scope = frozenset({RES_A})
    at_t2 = backend.query_at_time(T2, scope).triples
    assert sorted(t for t in at_t2 if t[0] == f) == sorted(
        t for t in backend.query_at_time(T1, scope).triples if t[0] == f
    )
    backend.add_nodes(_moved_and_changed(3), valid_from=T3)
    ends = backend.select(
        "SELECT ?until WHERE { ?old uko:validUntil ?until }",
        scope=scope,
        include_history=True,
    )
    assert sorted(r["until"] for r in ends) == ["2026-01-20T00:00:00Z"] * 3
    assert (f, UKO + "sourceRange", "5:1-12:0") in backend.get_triples(f).triples


def test_closing_flushes_a_large_log_so_readers_need_not_replay_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each process that opens the store replays its write-ahead log; past the limit, a
    writer's close writes the log into the store's files, leaving an empty one."""
    import cleveragents_acms.backends.graph as graph_module

    location = tmp_path / "graph"
    for limit, flushed in ((1 << 40, False), (0, True)):
        monkeypatch.setattr(graph_module, "_FLUSH_LOG_BYTES", limit)
        backend = OxigraphGraphBackend(location)
        backend.add_nodes(_moved_and_changed(limit and 1), valid_from=T2 if limit else T3)
        assert graph_module._log_bytes(location) > 0
        backend.close()
        assert (graph_module._log_bytes(location) == 0) is flushed
    reader = OxigraphGraphBackend(location, read_only=True)
    f = node_uri(RES_A, "m.py", "f")
    assert (f, UKO + "sourceRange", "2:1-9:0") in reader.get_triples(f).triples
    reader.close()


def test_a_writer_keeps_only_the_newest_diagnostic_logs(tmp_path: Path) -> None:
    """Each writer's open starts a RocksDB diagnostic log and keeps the last as
    ``LOG.old.*``: closing a writer removes all but the newest few, and the store still
    holds every write."""
    import cleveragents_acms.backends.graph as graph_module

    location = tmp_path / "graph"
    for step in range(graph_module._INFO_LOGS_KEPT + 4):
        backend = OxigraphGraphBackend(location)
        backend.add_nodes([function(RES_A, "m.py", f"f{step}")], valid_from=T1)
        backend.close()
    old_logs = sorted(p.name for p in location.glob("LOG.old.*"))
    assert len(old_logs) == graph_module._INFO_LOGS_KEPT
    reader = OxigraphGraphBackend(location, read_only=True)
    for step in range(graph_module._INFO_LOGS_KEPT + 4):
        assert reader.get_triples(node_uri(RES_A, "m.py", f"f{step}")).triples
    reader.close()
    assert sorted(p.name for p in location.glob("LOG.old.*")) == old_logs  # readers write none


def test_retire_with_a_renamed_successor(backend: OxigraphGraphBackend) -> None:
    """A successor under another URI points to the retired version."""
    old, new = function(RES_A, "m.py", "old_name"), function(RES_A, "m.py", "new_name")
    backend.add_nodes([module(RES_A, "m.py"), old], valid_from=T1)
    backend.add_nodes([new], valid_from=T2)
    backend.retire([old.uri], valid_until=T2, successor_uris={old.uri: new.uri})
    assert (new.uri, UKO + "isRevisionOf", revision_iri(old.uri, T1)) in backend.get_triples(
        new.uri
    ).triples
    assert backend.get_triples(old.uri).triples == []
    module_links = backend.get_triples(node_uri(RES_A, "m.py")).triples
    assert (node_uri(RES_A, "m.py"), UKO + "contains", old.uri) not in module_links
    assert (node_uri(RES_A, "m.py"), UKO + "contains", new.uri) in module_links


def test_retire_without_successor_and_unknown_uris(backend: OxigraphGraphBackend) -> None:
    """Removed nodes leave the current graph; unknown URIs are ignored."""
    f = function(RES_A, "m.py", "f")
    backend.add_nodes([module(RES_A, "m.py"), f], valid_from=T1)
    assert backend.retire([f.uri, "https://example.org/unknown"], valid_until=T2) == 1
    assert backend.get_triples(f.uri).triples == []
    assert backend.retire([f.uri], valid_until=T3) == 0
    everything = backend.sparql_query(
        "SELECT ?s ?p ?o WHERE { ?s ?p ?o }", scope=frozenset({RES_A})
    )
    assert f.uri not in subjects(everything.triples)
    assert revision_iri(f.uri, T1) in subjects(
        backend.sparql_query(
            "SELECT ?s ?p ?o WHERE { ?s ?p ?o }", scope=frozenset({RES_A}), include_history=True
        ).triples
    )


def test_subgraph_by_resources_and_temporal_scope(backend: OxigraphGraphBackend) -> None:
    """CURRENT, RECENT and ALL projections of a resource set."""
    f = function(RES_A, "m.py", "f")
    backend.add_nodes([module(RES_A, "m.py"), f, module(RES_B, "b.py")], valid_from=T1)
    backend.retire([f.uri], valid_until=T2)
    current = backend.subgraph_by_resources([RES_A], TemporalScope.CURRENT)
    assert subjects(current.triples) == {node_uri(RES_A, "m.py")}
    everything = backend.subgraph_by_resources([RES_A], TemporalScope.ALL)
    assert revision_iri(f.uri, T1) in subjects(everything.triples)
    soon = backend.subgraph_by_resources([RES_A], "recent", now=T2 + timedelta(hours=1))
    assert revision_iri(f.uri, T1) in subjects(soon.triples)
    later = backend.subgraph_by_resources([RES_A], "recent", now=T2 + timedelta(days=3))
    assert subjects(later.triples) == {node_uri(RES_A, "m.py")}
    both = backend.subgraph_by_resources([RES_A, RES_B])
    assert node_uri(RES_B, "b.py") in subjects(both.triples)
    assert node_uri(RES_B, "b.py") not in subjects(current.triples)


def test_delete_resource_and_count(two_resources: OxigraphGraphBackend) -> None:
    """Deleting a resource drops its current and historical triples only."""
    a_count, b_count = two_resources.count(RES_A), two_resources.count(RES_B)
    assert a_count > 0 and b_count > 0
    assert two_resources.count() == a_count + b_count
    two_resources.retire([node_uri(RES_A, "app.py", "run")], valid_until=T2)
    two_resources.delete_resource(RES_A)
    assert two_resources.count(RES_A) == 0
    assert two_resources.count() == b_count
    assert not two_resources.store.contains_named_graph(
        __import__("pyoxigraph").NamedNode(history_graph(RES_A))
    )


def test_generic_triple_api(backend: OxigraphGraphBackend) -> None:
    """add_triple joins the subject's resource graph; remove_triples matches patterns."""
    node = "https://example.org/n/1"
    backend.add_triple("p", node, "uko:name", "one")
    shared = backend.sparql_query("SELECT ?s ?p ?o WHERE { ?s ?p ?o }", scope=frozenset({RES_B}))
    assert node in subjects(shared.triples)  # no resource yet: shared
    backend.add_triple("p", node, UKO + "sourceResource", RES_A)
    backend.add_triple("p", node, "uko:dependsOn", "https://example.org/n/2")
    hidden = backend.sparql_query("SELECT ?s ?p ?o WHERE { ?s ?p ?o }", scope=frozenset({RES_B}))
    assert node not in subjects(hidden.triples)
    visible = backend.sparql_query("SELECT ?s ?p ?o WHERE { ?s ?p ?o }", scope=frozenset({RES_A}))
    assert {
        (node, UKO + "name", "one"),
        (node, UKO + "dependsOn", "https://example.org/n/2"),
    } <= set(visible.triples)
    backend.remove_triples("p", node, "uko:dependsOn", None)
    assert (node, UKO + "dependsOn", "https://example.org/n/2") not in backend.get_triples(
        node
    ).triples
    backend.remove_triples("p", None, None, "one")
    assert (node, UKO + "name", "one") not in backend.get_triples(node).triples
    with pytest.raises(ValueError):
        backend.add_triple("p", node, "uko:name", "")


def test_store_persists_across_reopen(tmp_path: Path) -> None:
    """Triples, revisions and shared graphs survive closing and reopening."""
    first = OxigraphGraphBackend(tmp_path / "graph")
    f = function(RES_A, "m.py", "f")
    first.add_nodes([module(RES_A, "m.py"), f], valid_from=T1)
    first.add_nodes([function(RES_A, "m.py", "f", signature="def f(z)")], valid_from=T2)
    first.add_triple("p", "https://example.org/shared", "uko:name", "shared")
    total = first.count()
    first.close()
    with pytest.raises(ConfigurationError):
        first.count()
    second = OxigraphGraphBackend(tmp_path / "graph")
    assert second.count() == total
    assert (f.uri, SIGNATURE, "def f(z)") in second.get_triples(f.uri).triples
    assert second.get_triples(revision_iri(f.uri, T1)).triples
    found = second.sparql_query("SELECT ?s ?p ?o WHERE { ?s ?p ?o }", scope=frozenset())
    assert "https://example.org/shared" in subjects(found.triples)
    second.close()


def test_writes_survive_a_killed_process(tmp_path: Path) -> None:
    """close() does not flush: what add_nodes wrote is durable the moment it returns."""
    script = (
        "import os, signal, sys\n"
        "from datetime import UTC, datetime\n"
        "from cleveragents.models.uko import UKONode, node_uri\n"
        "from cleveragents_acms.backends.graph import OxigraphGraphBackend\n"
        "graph = OxigraphGraphBackend(sys.argv[1])\n"
        f"node = UKONode(node_uri('{RES_A}', 'm.py'), 'uko-py:Module', 'm.py', 'm.py', 1, 9,"
        f" '{RES_A}')\n"
        "print(graph.add_nodes([node], valid_from=datetime.now(UTC)), flush=True)\n"
        "os.kill(os.getpid(), signal.SIGKILL)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script, str(tmp_path / "graph")], capture_output=True, text=True
    )
    assert done.returncode == -signal.SIGKILL
    written = int(done.stdout.split()[0])
    assert written > 5
    reopened = OxigraphGraphBackend(tmp_path / "graph")
    assert reopened.count() == written
    assert reopened.get_triples(node_uri(RES_A, "m.py")).triples
    reopened.close()


def test_bulk_load_sanity(backend: OxigraphGraphBackend) -> None:
    """A batch over the bulk threshold loads through the bulk loader and is queryable."""
    nodes = [module(RES_A, f"pkg/m{i}.py") for i in range(200)]
    nodes += [
        function(
            RES_A,
            f"pkg/m{i % 200}.py",
            f"f{i}",
            edges=[("uko-code:calls", node_uri(RES_A, f"pkg/m{(i + 1) % 200}.py", f"f{i + 1}"))],
        )
        for i in range(3_000)
    ]
    written = backend.add_nodes(nodes, valid_from=T1)
    assert written > backend._bulk_threshold
    assert backend.count() == written
    rows = backend.select(
        "SELECT (COUNT(?f) AS ?n) WHERE { ?f a uko-py:Function }", scope=frozenset({RES_A})
    )
    assert rows == [{"n": "3000"}]


def test_read_only_instances_read_but_never_write(tmp_path: Path) -> None:
    """A read-only opening sees the committed graph and refuses writes."""
    writer = OxigraphGraphBackend(tmp_path / "graph")
    writer.add_nodes([module(RES_A, "m.py")], valid_from=T1)
    writer.close()
    reader = OxigraphGraphBackend(tmp_path / "graph", read_only=True)
    try:
        assert reader.get_triples(node_uri(RES_A, "m.py")).triples
        with pytest.raises(ConfigurationError, match="read-only"):
            reader.add_nodes([module(RES_A, "n.py")], valid_from=T2)
        with pytest.raises(ConfigurationError, match="read-only"):
            reader.delete_resource(RES_A)
    finally:
        reader.close()


def test_a_reader_s_query_at_a_time_sees_the_writer_s_last_writes(tmp_path: Path) -> None:
    """A query at a time reads a copy of the store; a read-only reader's copy also
    replays the write-ahead log, where a writer that closed with a small log left its
    last writes. No copy is left behind."""
    writer = OxigraphGraphBackend(tmp_path / "graph")
    f = function(RES_A, "m.py", "f", signature="def f(x)")
    writer.add_nodes([module(RES_A, "m.py"), f], valid_from=T1)
    writer.add_nodes([function(RES_A, "m.py", "f", signature="def f(x, y)")], valid_from=T2)
    writer.close()
    reader = OxigraphGraphBackend(tmp_path / "graph", read_only=True)
    try:
        for moment, signature in ((T1, "def f(x)"), (T3, "def f(x, y)")):
            triples = reader.query_at_time(moment, frozenset({RES_A})).triples
            assert [o for s, p, o in triples if s == f.uri and p == SIGNATURE] == [signature]
        named = "SELECT ?g WHERE { GRAPH ?g { ?s ?p ?o } }"  # a copy's graphs are not named
        assert reader.sparql_at_time(named, T3, scope=frozenset({RES_A})).metadata["count"] == "0"
    finally:
        reader.close()
    assert [p.name for p in tmp_path.iterdir()] == ["graph"]


def test_a_query_at_a_time_whose_copy_fails_is_a_clear_error(
    backend: OxigraphGraphBackend, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A copy that cannot be made or written (a full disk) is an error that says what
    was tried, and leaves no copy behind."""
    import cleveragents_acms.backends.graph as graph_module

    backend.add_nodes([module(RES_A, "m.py")], valid_from=T1)

    def full(*_: object) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(graph_module, "_read_at_time", full)
    with pytest.raises(CleverAgentsError, match=r"copy of the graph store.*No space left"):
        backend.sparql_at_time("ASK { ?s ?p ?o }", T2, scope=frozenset({RES_A}))
    assert not list(backend.location.parent.glob(".at-*"))


def test_a_store_in_use_is_a_clear_error(backend: OxigraphGraphBackend) -> None:
    """A second writer on the same folder gets a ConfigurationError, not a crash."""
    with pytest.raises(ConfigurationError, match="another process"):
        OxigraphGraphBackend(backend.location)


def _many(resource: str, count: int) -> list[UKONode]:
    nodes = [module(resource, "big.py")]
    nodes += [
        function(
            resource,
            "big.py",
            f"f{i}",
            edges=[("uko-code:calls", node_uri(resource, "big.py", f"f{(i + 1) % count}"))],
        )
        for i in range(count)
    ]
    return nodes


def test_a_background_load_writes_what_an_in_process_load_writes(tmp_path: Path) -> None:
    """The child-process bulk load (used for big fresh loads) gives the same quads."""
    nodes = _many(RES_A, 300)
    direct = OxigraphGraphBackend(tmp_path / "direct")
    direct.add_nodes(nodes, valid_from=T1)
    background = OxigraphGraphBackend(tmp_path / "background")
    assert not background.has_resource(RES_A)
    load = background.load_in_background()
    assert load.add_nodes(nodes[:100], valid_from=T1) > 0
    load.add_nodes(nodes[100:], valid_from=T1)
    assert load.finish() == direct.count()
    assert background.has_resource(RES_A)
    assert background.count() == direct.count()
    f7 = node_uri(RES_A, "big.py", "f7")
    assert sorted(background.get_triples(f7).triples) == sorted(direct.get_triples(f7).triples)
    # The store is back in this process: ordinary writes and revisions work.
    background.add_nodes([function(RES_A, "big.py", "f7", signature="def f7(x)")], valid_from=T2)
    assert background.query_at_time(T1 + timedelta(days=1), frozenset({RES_A})).triples
    direct.close()
    background.close()


def test_a_failed_background_load_raises_and_gives_the_store_back(tmp_path: Path) -> None:
    """If the loader process dies, finish() says so and the store is usable again."""
    from cleveragents.errors import CleverAgentsError

    backend = OxigraphGraphBackend(tmp_path / "graph")
    load = backend.load_in_background()
    load._process.kill()
    load.add_nodes(_many(RES_A, 50), valid_from=T1)
    with pytest.raises(CleverAgentsError, match="loading the graph store failed"):
        load.finish()
    backend.add_nodes([module(RES_B, "lib.py")], valid_from=T1)
    assert backend.has_resource(RES_B)
    aborted = backend.load_in_background()
    aborted.abort()
    assert backend.count(RES_B) > 0
    backend.close()
