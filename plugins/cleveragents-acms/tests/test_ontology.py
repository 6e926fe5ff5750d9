"""The packaged UKO ontology: every layer file, every spec term, inheritance and layers."""

from __future__ import annotations

import time
from importlib import resources
from pathlib import Path

import pytest
from rdflib import Graph
from rdflib.namespace import OWL, RDF

from cleveragents.errors import ConfigurationError, NotFoundError, ValidationError
from cleveragents_acms.ontology import loader as loader_module
from cleveragents_acms.ontology.loader import BUILTIN_FILES, UKOLoader
from cleveragents_acms.ontology.namespaces import LAYERS, compact, expand

# Every class and property the spec's Turtle listings declare for layers 0-2
# (spec 000, "Universal Knowledge Ontology"): CURIE -> declared parents.
SPEC_CLASSES = {
    "uko:InformationUnit": (),
    "uko:Container": ("uko:InformationUnit",),
    "uko:Atom": ("uko:InformationUnit",),
    "uko:Annotation": ("uko:InformationUnit",),
    "uko:Boundary": ("uko:InformationUnit",),
    "uko-code:Module": ("uko:Container",),
    "uko-code:Callable": ("uko:Atom",),
    "uko-code:TypeDefinition": ("uko:Atom",),
    "uko-code:TestCase": ("uko:Atom",),
    "uko-code:Import": ("uko:Annotation",),
    "uko-doc:Document": ("uko:Container",),
    "uko-doc:Part": ("uko:Container",),
    "uko-doc:Chapter": ("uko:Container",),
    "uko-doc:Section": ("uko:Container",),
    "uko-doc:Subsection": ("uko-doc:Section",),
    "uko-doc:Paragraph": ("uko:Atom",),
    "uko-doc:CodeBlock": ("uko:Atom",),
    "uko-doc:Figure": ("uko:Atom",),
    "uko-doc:Table": ("uko:Atom",),
    "uko-doc:BlockQuote": ("uko:Atom",),
    "uko-doc:ListBlock": ("uko:Atom",),
    "uko-doc:Footnote": ("uko:Annotation",),
    "uko-doc:Citation": ("uko:Annotation",),
    "uko-doc:Comment": ("uko:Annotation",),
    "uko-doc:TableOfContents": ("uko:Boundary",),
    "uko-doc:Index": ("uko:Boundary",),
    "uko-doc:Glossary": ("uko:Boundary",),
    "uko-data:Database": ("uko:Container",),
    "uko-data:Schema": ("uko:Container",),
    "uko-data:Table": ("uko:Container",),
    "uko-data:View": ("uko:Container",),
    "uko-data:Column": ("uko:Atom",),
    "uko-data:StoredProcedure": ("uko:Atom",),
    "uko-data:Trigger": ("uko:Atom",),
    "uko-data:Migration": ("uko:Atom",),
    "uko-data:Constraint": ("uko:Annotation",),
    "uko-data:Index": ("uko:Annotation",),
    "uko-data:ColumnComment": ("uko:Annotation",),
    "uko-data:ForeignKey": ("uko:Boundary",),
    "uko-data:APIEndpoint": ("uko:Boundary",),
    "uko-infra:Service": ("uko:Container",),
    "uko-infra:ConfigBlock": ("uko:Container",),
    "uko-infra:DeploymentUnit": ("uko:Container",),
    "uko-infra:ConfigKey": ("uko:Atom",),
    "uko-infra:EnvironmentVariable": ("uko:Atom",),
    "uko-infra:Endpoint": ("uko:Boundary",),
    "uko-infra:Port": ("uko:Boundary",),
    "uko-oo:Class": ("uko-code:TypeDefinition", "uko:Container"),
    "uko-oo:Interface": ("uko-code:TypeDefinition", "uko:Boundary"),
    "uko-oo:Method": ("uko-code:Callable",),
    "uko-oo:Attribute": ("uko:Atom",),
    "uko-func:PureFunction": ("uko-code:Callable",),
    "uko-func:TypeClass": ("uko-code:TypeDefinition", "uko:Boundary"),
    "uko-func:Monad": ("uko-code:TypeDefinition",),
}

SPEC_PROPERTIES = {
    "uko:contains": ("object", (), "uko:Container", "uko:InformationUnit"),
    "uko:references": ("object", (), "uko:InformationUnit", "uko:InformationUnit"),
    "uko:dependsOn": ("object", (), "uko:InformationUnit", "uko:InformationUnit"),
    "uko:hasRendering": ("datatype", (), "uko:InformationUnit", "xsd:string"),
    "uko:renderingDepth": ("datatype", (), "uko:InformationUnit", "xsd:nonNegativeInteger"),
    "uko:hasFullContent": ("datatype", (), "uko:InformationUnit", "xsd:string"),
    "uko:sourceResource": ("object", (), "uko:InformationUnit", None),
    "uko:sourcePath": ("datatype", (), "uko:InformationUnit", "xsd:string"),
    "uko:sourceRange": ("datatype", (), "uko:InformationUnit", "xsd:string"),
    "uko:validFrom": ("datatype", (), "uko:InformationUnit", "xsd:dateTime"),
    "uko:validUntil": ("datatype", (), "uko:InformationUnit", "xsd:dateTime"),
    "uko:isCurrent": ("datatype", (), "uko:InformationUnit", "xsd:boolean"),
    "uko:isRevisionOf": ("object", (), "uko:InformationUnit", "uko:InformationUnit"),
    "uko-code:hasReturnType": ("datatype", (), "uko-code:Callable", "xsd:string"),
    "uko-code:hasParameters": ("datatype", (), "uko-code:Callable", "xsd:string"),
    "uko-code:testsCallable": ("object", (), "uko-code:TestCase", "uko-code:Callable"),
    "uko-doc:discussesTopic": (
        "object",
        ("uko:references",),
        "uko:InformationUnit",
        "uko:InformationUnit",
    ),
    "uko-doc:cites": ("object", ("uko:references",), "uko:InformationUnit", "uko-doc:Citation"),
    "uko-doc:crossReferences": (
        "object",
        ("uko:references",),
        "uko:InformationUnit",
        "uko:InformationUnit",
    ),
    "uko-doc:precedes": ("object", (), "uko:InformationUnit", "uko:InformationUnit"),
    "uko-doc:headingLevel": ("datatype", (), "uko-doc:Section", "xsd:integer"),
    "uko-doc:headingText": ("datatype", (), "uko-doc:Section", "xsd:string"),
    "uko-doc:wordCount": ("datatype", (), "uko:InformationUnit", "xsd:integer"),
    "uko-doc:language": ("datatype", (), "uko-doc:Document", "xsd:string"),
    "uko-doc:topicKeywords": ("datatype", (), "uko:InformationUnit", "xsd:string"),
    "uko-data:foreignKeyTo": ("object", ("uko:dependsOn",), "uko-data:Column", "uko-data:Column"),
    "uko-data:viewReferences": ("object", ("uko:dependsOn",), "uko-data:View", "uko-data:Table"),
    "uko-data:procedureAccesses": (
        "object",
        ("uko:dependsOn",),
        "uko-data:StoredProcedure",
        "uko-data:Table",
    ),
    "uko-data:triggerFires": ("object", ("uko:dependsOn",), "uko-data:Trigger", "uko-data:Table"),
    "uko-data:migrationAlters": (
        "object",
        ("uko:dependsOn",),
        "uko-data:Migration",
        "uko-data:Table",
    ),
    "uko-data:dataType": ("datatype", (), "uko-data:Column", "xsd:string"),
    "uko-data:isNullable": ("datatype", (), "uko-data:Column", "xsd:boolean"),
    "uko-data:isPrimaryKey": ("datatype", (), "uko-data:Column", "xsd:boolean"),
    "uko-data:rowEstimate": ("datatype", (), "uko-data:Table", "xsd:long"),
    "uko-data:viewDefinition": ("datatype", (), "uko-data:View", "xsd:string"),
    "uko-data:procedureBody": ("datatype", (), "uko-data:StoredProcedure", "xsd:string"),
    "uko-infra:connectsTo": (
        "object",
        ("uko:dependsOn",),
        "uko-infra:Service",
        "uko-infra:Service",
    ),
    "uko-infra:exposes": ("object", (), "uko-infra:Service", "uko-infra:Endpoint"),
    "uko-oo:inheritsFrom": ("object", ("uko:dependsOn",), "uko-oo:Class", "uko-oo:Class"),
    "uko-oo:implements": ("object", ("uko:dependsOn",), "uko-oo:Class", "uko-oo:Interface"),
}

SPEC_LAYERS = {
    "uko": 0,
    "uko-code": 1,
    "uko-doc": 1,
    "uko-data": 1,
    "uko-infra": 1,
    "uko-oo": 2,
    "uko-func": 2,
    "uko-proc": 2,
    "uko-py": 3,
    "uko-ts": 3,
    "uko-rs": 3,
    "uko-java": 3,
}


@pytest.fixture(scope="module")
def loader() -> UKOLoader:
    """The built-in ontology."""
    return UKOLoader()


@pytest.mark.parametrize("name", BUILTIN_FILES)
def test_every_layer_file_parses_on_its_own(name: str) -> None:
    """Each packaged Turtle file is valid and declares an ontology with terms."""
    data = resources.files("cleveragents_acms.ontology").joinpath(name).read_bytes()
    graph = Graph().parse(data=data, format="turtle")
    assert len(list(graph.subjects(RDF.type, OWL.Ontology))) == 1
    assert len(list(graph.subjects(RDF.type, OWL.Class))) >= 1


def test_one_file_per_prefix() -> None:
    """The packaged files are exactly one per UKO prefix."""
    assert sorted(BUILTIN_FILES) == sorted(f"{prefix}.ttl" for prefix in LAYERS)
    assert {prefix: layer for prefix, (_, layer) in LAYERS.items()} == SPEC_LAYERS


@pytest.mark.parametrize("curie", sorted(SPEC_CLASSES))
def test_spec_class_is_declared_with_its_parents(loader: UKOLoader, curie: str) -> None:
    """Every spec class exists, is labelled and commented, and has the spec's parents in order."""
    term = loader.term(curie)
    assert term.kind == "class"
    assert term.label and term.comment
    assert loader.parents(curie) == list(SPEC_CLASSES[curie])


@pytest.mark.parametrize("curie", sorted(SPEC_PROPERTIES))
def test_spec_property_is_declared_as_specified(loader: UKOLoader, curie: str) -> None:
    """Every spec property has the spec's kind, super-property, domain and range."""
    kind, parents, domain, range_ = SPEC_PROPERTIES[curie]
    term = loader.term(curie)
    assert term.kind == f"{kind}-property"
    assert term.label and term.comment
    assert loader.parents(curie) == list(parents)
    assert [loader.compact(d) for d in term.domain] == ([domain] if domain else [])
    assert [loader.compact(r) for r in term.range] == ([range_] if range_ else [])


def test_provenance_temporal_and_test_properties_exist(loader: UKOLoader) -> None:
    """Provenance, temporal and uko-code:testsCallable properties are part of the ontology."""
    names = set(loader.properties())
    for curie in (
        "uko:sourceResource",
        "uko:sourcePath",
        "uko:sourceRange",
        "uko:validFrom",
        "uko:validUntil",
        "uko:isCurrent",
        "uko:isRevisionOf",
        "uko-code:testsCallable",
    ):
        assert curie in names


def test_inference_vocabulary_is_declared(loader: UKOLoader) -> None:
    """The predicates the inference engine writes are sub-properties of uko:implicitRelation."""
    for curie in ("uko:implicitSiblingOf", "uko:implicitContains", "uko:implicitDependsOn"):
        assert loader.resolve_inheritance(curie) == [curie, "uko:implicitRelation"]


def test_every_layer_has_classes_and_all_parents_resolve(loader: UKOLoader) -> None:
    """Each prefix declares classes, and no term inherits from an undeclared one."""
    for prefix in LAYERS:
        assert loader.classes(prefix), prefix
    assert loader.unresolved_parents() == []


def test_every_class_reaches_information_unit(loader: UKOLoader) -> None:
    """The universal view: every class inherits from uko:InformationUnit."""
    for curie in loader.classes():
        assert loader.is_subclass(curie, "uko:InformationUnit"), curie


def test_layer3_classes_specialise_their_paradigms(loader: UKOLoader) -> None:
    """Language classes sit under the paradigm and domain classes the analyzers rely on."""
    assert loader.is_subclass("uko-py:Class", "uko-oo:Class")
    assert loader.is_subclass("uko-py:Method", "uko-code:Callable")
    assert loader.is_subclass("uko-py:Module", "uko-code:Module")
    assert loader.is_subclass("uko-ts:Interface", "uko:Boundary")
    assert loader.is_subclass("uko-rs:Trait", "uko-func:TypeClass")
    assert loader.is_subclass("uko-java:Constructor", "uko-oo:Method")
    assert not loader.is_subclass("uko-py:Function", "uko-oo:Method")


def test_resolve_inheritance_of_oo_class_is_breadth_first(loader: UKOLoader) -> None:
    """uko-oo:Class: itself, both parents in declared order, then their parents (spec 001)."""
    assert loader.resolve_inheritance("uko-oo:Class") == [
        "uko-oo:Class",
        "uko-code:TypeDefinition",
        "uko:Container",
        "uko:Atom",
        "uko:InformationUnit",
    ]


def test_resolve_inheritance_visits_a_shared_ancestor_once(loader: UKOLoader) -> None:
    """A multi-parent class over two paradigms lists each ancestor once, level by level."""
    assert loader.resolve_inheritance("uko-py:Property") == [
        "uko-py:Property",
        "uko-py:Method",
        "uko-oo:Attribute",
        "uko-oo:Method",
        "uko:Atom",
        "uko-code:Callable",
        "uko:InformationUnit",
    ]


def test_resolve_inheritance_accepts_iris_and_covers_properties(loader: UKOLoader) -> None:
    """A full IRI works like its CURIE, and properties resolve over rdfs:subPropertyOf."""
    iri = expand("uko-func:TypeClass")
    assert loader.resolve_inheritance(iri) == loader.resolve_inheritance("uko-func:TypeClass")
    assert loader.resolve_inheritance("uko-oo:inheritsFrom") == [
        "uko-oo:inheritsFrom",
        "uko:dependsOn",
    ]


def test_unknown_term_is_not_found(loader: UKOLoader) -> None:
    """Asking about an undeclared class raises NotFoundError naming it."""
    with pytest.raises(NotFoundError, match="uko-py:Nothing"):
        loader.resolve_inheritance("uko-py:Nothing")
    assert not loader.is_subclass("uko-py:Nothing", "uko:InformationUnit")


def test_descendants_of_boundary(loader: UKOLoader) -> None:
    """Sub-classes are found transitively, across layers."""
    below = loader.descendants("uko:Boundary")
    assert {"uko-oo:Interface", "uko-py:Protocol", "uko-data:ForeignKey"} <= set(below)
    assert "uko-py:Protocol" not in loader.descendants("uko:Boundary", direct=True)


@pytest.mark.parametrize(("prefix", "layer"), sorted(SPEC_LAYERS.items()))
def test_layers_are_identified_by_prefix(loader: UKOLoader, prefix: str, layer: int) -> None:
    """All four layers (0-3) are identified by prefix, for terms, prefixes and IRIs."""
    curie = loader.classes(prefix)[0]
    assert loader.layer_of(curie) == layer
    assert loader.layer_of(prefix) == layer
    assert loader.layer_of(f"{prefix}:") == layer
    assert loader.layer_of(expand(curie)) == layer


def test_layer_of_unknown_prefix_is_a_validation_error(loader: UKOLoader) -> None:
    """A prefix outside the ontology is rejected with the known prefixes listed."""
    with pytest.raises(ValidationError, match="uko-py"):
        loader.layer_of("foo:Bar")


def test_curie_helpers_round_trip() -> None:
    """expand and compact are inverse for every UKO prefix."""
    for prefix, (namespace, _) in LAYERS.items():
        assert expand(f"{prefix}:X") == namespace + "X"
        assert compact(namespace + "X") == f"{prefix}:X"
    assert expand("rdf:type", {}) == "http://www.w3.org/1999/02/22-rdf-syntax-ns#type"


def test_graph_holds_every_file(loader: UKOLoader) -> None:
    """The combined rdflib graph has the triples of all layer files."""
    graph = loader.graph
    assert len(list(graph.subjects(RDF.type, OWL.Ontology))) == len(BUILTIN_FILES)
    assert (None, None, None) in graph


def test_loading_is_fast() -> None:
    """Parsing every layer file takes well under half a second, and happens once per process."""
    loader_module._builtin.cache_clear()
    started = time.perf_counter()
    UKOLoader()
    cold = time.perf_counter() - started
    started = time.perf_counter()
    for _ in range(20):
        UKOLoader()
    warm = time.perf_counter() - started
    assert cold < 0.5
    assert warm < cold


def test_vocabulary_extends_builtin_classes(tmp_path: Path) -> None:
    """A vocabulary file adds classes under built-in ones and gets a derived layer."""
    path = tmp_path / "uko-k8s.ttl"
    path.write_text(
        "@prefix uko-infra: <https://cleveragents.ai/ontology/uko/infra#> .\n"
        "@prefix k8s: <https://example.org/k8s#> .\n"
        "@prefix owl: <http://www.w3.org/2002/07/owl#> .\n"
        "@prefix rdfs: <http://www.w3.org/2000/01/rdf-schema#> .\n"
        "k8s:Deployment a owl:Class ; rdfs:subClassOf uko-infra:DeploymentUnit .\n"
        "uko-infra:Service rdfs:subClassOf k8s:Workload .\n"
        "k8s:Workload a owl:Class .\n",
        encoding="utf-8",
    )
    loader = UKOLoader([path])
    assert loader.prefixes()["k8s"] == "https://example.org/k8s#"
    assert loader.resolve_inheritance("k8s:Deployment")[:3] == [
        "k8s:Deployment",
        "uko-infra:DeploymentUnit",
        "uko:Container",
    ]
    assert loader.parents("uko-infra:Service") == ["uko:Container", "k8s:Workload"]
    assert loader.layer_of("k8s:Deployment") == 2
    assert "k8s:Deployment" not in UKOLoader()


def test_vocabulary_may_state_its_layer(tmp_path: Path) -> None:
    """An owl:Ontology header with uko:layer sets the vocabulary's layer."""
    path = tmp_path / "pg.ttl"
    path.write_text(
        "@prefix uko: <https://cleveragents.ai/ontology/uko#> .\n"
        "@prefix uko-data: <https://cleveragents.ai/ontology/uko/data#> .\n"
        "@prefix uko-pg: <https://example.org/uko/pg#> .\n"
        "@prefix owl: <http://www.w3.org/2002/07/owl#> .\n"
        "@prefix rdfs: <http://www.w3.org/2000/01/rdf-schema#> .\n"
        "<https://example.org/uko/pg> a owl:Ontology ; uko:layer 3 .\n"
        "uko-pg:Extension a owl:Class ; rdfs:subClassOf uko-data:Schema .\n",
        encoding="utf-8",
    )
    assert UKOLoader([path]).layer_of("uko-pg:Extension") == 3


def test_invalid_vocabulary_names_file_and_line(tmp_path: Path) -> None:
    """A Turtle syntax error is a ConfigurationError naming the file and the line."""
    path = tmp_path / "broken.ttl"
    path.write_text(
        "@prefix owl: <http://www.w3.org/2002/07/owl#> .\n\n"
        "<urn:a> a owl:Class ;\n  rdfs:x <urn:b> .\n",
        encoding="utf-8",
    )
    with pytest.raises(ConfigurationError, match=r"broken\.ttl, line 4") as caught:
        UKOLoader([path])
    assert caught.value.details["line"] == 4


def test_missing_vocabulary_is_a_configuration_error(tmp_path: Path) -> None:
    """A vocabulary path that does not exist is reported with its path."""
    with pytest.raises(ConfigurationError, match="not found"):
        UKOLoader([tmp_path / "absent.ttl"])
