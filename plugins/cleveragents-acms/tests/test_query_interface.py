"""UKOQueryInterface over real graph backends: classification, layers and inferred relations."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from rdflib import Graph, Literal, URIRef

from cleveragents.errors import ValidationError
from cleveragents.models.uko import node_uri
from cleveragents.protocols import GraphResult
from cleveragents.testing.memory import InMemoryGraphBackend
from cleveragents_acms.ontology.loader import UKOLoader
from cleveragents_acms.ontology.namespaces import RDF_TYPE, expand
from cleveragents_acms.uko.inference import (
    IMPLICIT_DEPENDS_ON,
    IMPLICIT_SIBLING_OF,
    UKOInferenceEngine,
)
from cleveragents_acms.uko.query import (
    LAYER_DOMAIN,
    LAYER_PARADIGM,
    LAYER_TECHNOLOGY,
    LAYER_UNIVERSAL,
    ClassificationResult,
    UKOArgumentError,
    UKOQueryInterface,
)

SOURCE = expand("uko:sourceResource")
CONTAINS = expand("uko:contains")
PY, DOCS, INFRA, OO, EMPTY = (
    f"01J00000000000000000000{suffix}" for suffix in ("PY1", "DC1", "NF1", "QQ1", "MT1")
)
RESOURCES = [PY, DOCS, INFRA, OO, EMPTY]


class RdflibGraphBackend:
    """A GraphBackend on an rdflib graph: real SPARQL, scope by uko:sourceResource.

    ``resource_iri`` stores resources as IRIs (``urn:cleveragents:resource:<ULID>``)
    instead of plain ULID literals, as a backend may.
    """

    def __init__(self, *, resource_iri: bool = False) -> None:
        self.graph = Graph()
        self.resource_iri = resource_iri

    def add_triple(self, project: str, subject: str, predicate: str, obj: str) -> None:
        del project
        if predicate == SOURCE:
            value = (
                URIRef(f"urn:cleveragents:resource:{obj}") if self.resource_iri else Literal(obj)
            )
        else:
            value = URIRef(obj) if "://" in obj else Literal(obj)
        self.graph.add((URIRef(subject), URIRef(predicate), value))

    def _owner(self, subject: object) -> str | None:
        value = self.graph.value(subject, URIRef(SOURCE))  # type: ignore[arg-type]
        return None if value is None else str(value).rsplit(":", 1)[-1]

    def sparql_query(self, query: str, *, scope: frozenset[str]) -> GraphResult:
        visible = Graph()
        for triple in self.graph:
            owner = self._owner(triple[0])
            if owner is None or owner in scope:
                visible.add(triple)
        result = visible.query(query)
        assert result.graph is not None, "the query interface sends CONSTRUCT queries"
        return GraphResult(sorted((str(s), str(p), str(o)) for s, p, o in result.graph))

    def get_triples(self, subject: str) -> GraphResult:
        return GraphResult(
            sorted(
                (subject, str(p), str(o)) for p, o in self.graph.predicate_objects(URIRef(subject))
            )
        )

    def traverse(self, start: str, *, depth: int = 2) -> GraphResult:
        return self.get_triples(start) if depth else GraphResult([])


def _python_resource() -> list[tuple[str, str, str]]:
    module = node_uri(PY, "auth/manager.py")
    cls = node_uri(PY, "auth/manager.py", "AuthManager")
    login = node_uri(PY, "auth/manager.py", "AuthManager.login")
    helper = node_uri(PY, "auth/manager.py", "hash_password")
    main = node_uri(PY, "auth/manager.py", "main")
    triples = [
        (module, RDF_TYPE, expand("uko-py:Module")),
        (cls, RDF_TYPE, expand("uko-py:Class")),
        (login, RDF_TYPE, expand("uko-py:Method")),
        (helper, RDF_TYPE, expand("uko-py:Function")),
        (main, RDF_TYPE, expand("uko-py:Function")),
        (module, CONTAINS, cls),
        (module, CONTAINS, helper),
        (module, CONTAINS, main),
        (cls, CONTAINS, login),
        (login, expand("uko:references"), helper),
    ]
    return triples + [(s, SOURCE, PY) for s in {t[0] for t in triples}]


def _typed_resource(resource_id: str, nodes: dict[str, str]) -> list[tuple[str, str, str]]:
    triples = []
    for path, curie in nodes.items():
        uri = node_uri(resource_id, path)
        triples += [(uri, RDF_TYPE, expand(curie)), (uri, SOURCE, resource_id)]
    return triples


def _corpus() -> list[tuple[str, str, str]]:
    explicit = [
        *_python_resource(),
        *_typed_resource(
            DOCS, {"README.md": "uko-doc:Document", "README.md#intro": "uko-doc:Section"}
        ),
        *_typed_resource(
            INFRA, {"compose.yaml": "uko-infra:Service", "compose.yaml#x": "uko:Container"}
        ),
        *_typed_resource(OO, {"Shape": "uko-oo:Class", "Shape#area": "uko-oo:Method"}),
    ]
    inferred = UKOInferenceEngine(UKOLoader()).infer(explicit)
    return explicit + [t.as_tuple() for t in inferred]


BackendFactory = Callable[[], object]
BACKENDS: dict[str, BackendFactory] = {
    "rdflib": RdflibGraphBackend,
    "rdflib-resource-iris": lambda: RdflibGraphBackend(resource_iri=True),
    "kernel-memory": InMemoryGraphBackend,
}


@pytest.fixture(params=sorted(BACKENDS))
def interface(request: pytest.FixtureRequest) -> UKOQueryInterface:
    """A query interface over one backend loaded with four resources (one not indexed)."""
    backend = BACKENDS[request.param]()
    for s, p, o in _corpus():
        backend.add_triple("local/app", s, p, o)  # type: ignore[attr-defined]
    return UKOQueryInterface(backend, "local/app", resources=RESOURCES)  # type: ignore[arg-type]


def test_classify_python_resource(interface: UKOQueryInterface) -> None:
    """A Python resource is layer 3 with uko-py:Module as its primary (top-level) type."""
    result = interface.classify_resource(PY)
    assert result.resource_id == PY
    assert result.layer == LAYER_TECHNOLOGY
    assert result.primary_type == "uko-py:Module"
    assert result.all_types == ("uko-py:Class", "uko-py:Function", "uko-py:Method", "uko-py:Module")


def test_classification_carries_implicit_relations(interface: UKOQueryInterface) -> None:
    """Inferred siblings and dependencies of the resource come back with the classification."""
    result = interface.classify_resource(PY)
    predicates = {p for _, p, _ in result.implicit_relations}
    assert predicates == {IMPLICIT_SIBLING_OF, IMPLICIT_DEPENDS_ON}
    assert (
        node_uri(PY, "auth/manager.py", "AuthManager.login"),
        IMPLICIT_DEPENDS_ON,
        node_uri(PY, "auth/manager.py", "hash_password"),
    ) in result.implicit_relations
    assert result.implicit_relations == tuple(interface.get_implicit_relations(PY))


def test_classification_is_scoped_to_the_resource(interface: UKOQueryInterface) -> None:
    """Another resource's types and relations never leak into a classification."""
    docs = interface.classify_resource(DOCS)
    assert docs.layer == LAYER_DOMAIN
    assert docs.primary_type == "uko-doc:Document"
    assert docs.all_types == ("uko-doc:Document", "uko-doc:Section")
    assert all(PY not in s for s, _, _ in docs.implicit_relations)


def test_unindexed_resource_is_layer_zero(interface: UKOQueryInterface) -> None:
    """A resource without nodes gets the default classification."""
    assert interface.classify_resource(EMPTY) == ClassificationResult(EMPTY)
    assert interface.get_implicit_relations(EMPTY) == []


def test_resources_by_layer(interface: UKOQueryInterface) -> None:
    """Each resource is listed under its highest populated layer."""
    assert interface.get_resources_by_layer(LAYER_TECHNOLOGY) == [PY]
    assert interface.get_resources_by_layer(LAYER_PARADIGM) == [OO]
    assert interface.get_resources_by_layer(LAYER_DOMAIN) == sorted([DOCS, INFRA])
    assert interface.get_resources_by_layer(LAYER_UNIVERSAL) == [EMPTY]


def test_resources_may_be_a_callable() -> None:
    """The project's resources can be supplied lazily."""
    backend = InMemoryGraphBackend()
    for s, p, o in _corpus():
        backend.add_triple("local/app", s, p, o)
    interface = UKOQueryInterface(backend, "local/app", resources=lambda: [PY, DOCS])
    assert interface.get_resources_by_layer(LAYER_TECHNOLOGY) == [PY]
    assert UKOQueryInterface(backend, "local/app").get_resources_by_layer(3) == []


def test_vocabulary_types_get_their_derived_layer(tmp_path: Path) -> None:
    """Types from a registered vocabulary are classified with the loader's layer."""
    path = tmp_path / "uko-tf.ttl"
    path.write_text(
        "@prefix owl: <http://www.w3.org/2002/07/owl#> .\n"
        "@prefix rdfs: <http://www.w3.org/2000/01/rdf-schema#> .\n"
        "@prefix uko-infra: <https://cleveragents.ai/ontology/uko/infra#> .\n"
        "@prefix uko-tf: <https://cleveragents.ai/ontology/uko/tf#> .\n"
        "uko-tf:TerraformModule a owl:Class ; rdfs:subClassOf uko-infra:ConfigBlock .\n",
        encoding="utf-8",
    )
    loader = UKOLoader([path])
    backend = InMemoryGraphBackend()
    uri = node_uri(INFRA, "main.tf")
    backend.add_triple("p", uri, RDF_TYPE, loader.expand("uko-tf:TerraformModule"))
    backend.add_triple("p", uri, SOURCE, INFRA)
    result = UKOQueryInterface(backend, "p", loader=loader).classify_resource(INFRA)
    assert (result.layer, result.primary_type) == (2, "uko-tf:TerraformModule")


def test_non_uko_types_are_ignored() -> None:
    """Types outside the UKO namespaces do not raise the layer or become primary."""
    backend = InMemoryGraphBackend()
    uri = node_uri(PY, "x.py")
    backend.add_triple("p", uri, RDF_TYPE, "http://www.w3.org/2002/07/owl#NamedIndividual")
    backend.add_triple("p", uri, SOURCE, PY)
    assert UKOQueryInterface(backend, "p").classify_resource(PY) == ClassificationResult(PY)


def test_argument_validation() -> None:
    """Bad arguments raise TypeError or ValueError (also ValidationError), as spec 002 says."""
    backend = InMemoryGraphBackend()
    with pytest.raises(TypeError, match="GraphBackend"):
        UKOQueryInterface(object(), "p")  # type: ignore[arg-type]
    for project in ("", "   "):
        with pytest.raises(ValueError, match="project"):
            UKOQueryInterface(backend, project)
    interface = UKOQueryInterface(backend, "p")
    for bad_id in ("", "  "):
        with pytest.raises(ValueError, match="resource_id"):
            interface.classify_resource(bad_id)
        with pytest.raises(ValueError, match="resource_id"):
            interface.get_implicit_relations(bad_id)
    for layer in (-1, 4, True, "3"):
        with pytest.raises(ValueError, match="layer"):
            interface.get_resources_by_layer(layer)  # type: ignore[arg-type]
    assert issubclass(UKOArgumentError, ValidationError)
