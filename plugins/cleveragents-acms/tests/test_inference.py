"""UKOInferenceEngine: the three inference patterns of spec 002, confidence 0.7."""

from __future__ import annotations

import pytest

from cleveragents.errors import ValidationError
from cleveragents.models.uko import node_uri
from cleveragents_acms.ontology.loader import UKOLoader
from cleveragents_acms.ontology.namespaces import RDF_TYPE, expand
from cleveragents_acms.uko.inference import (
    IMPLICIT_CONTAINS,
    IMPLICIT_DEPENDS_ON,
    IMPLICIT_SIBLING_OF,
    INFERENCE_CONFIDENCE,
    UKOInferenceEngine,
    UKOTriple,
)

RID = "01J0000000000000000000PY01"
MODULE = node_uri(RID, "pkg/auth.py")
CLASS = node_uri(RID, "pkg/auth.py", "AuthManager")
LOGIN = node_uri(RID, "pkg/auth.py", "AuthManager.login")
LOGOUT = node_uri(RID, "pkg/auth.py", "AuthManager.logout")
HELPER = node_uri(RID, "pkg/auth.py", "helper")
MAIN = node_uri(RID, "pkg/auth.py", "main")
CONTAINS, REFERENCES = expand("uko:contains"), expand("uko:references")


def _typed(uri: str, curie: str) -> tuple[str, str, str]:
    return (uri, RDF_TYPE, expand(curie))


@pytest.fixture(scope="module")
def engine() -> UKOInferenceEngine:
    """An engine that knows the ontology's dependency properties."""
    return UKOInferenceEngine(UKOLoader())


def _pairs(triples: list[UKOTriple], predicate: str) -> set[tuple[str, str]]:
    return {(t.subject, t.object) for t in triples if t.predicate == predicate}


def test_inferred_triples_carry_confidence_and_flag(engine: UKOInferenceEngine) -> None:
    """Every inferred triple has confidence 0.7 and is marked inferred."""
    inferred = engine.infer(
        [
            _typed(HELPER, "uko-py:Function"),
            _typed(MAIN, "uko-py:Function"),
            _typed(MODULE, "uko-py:Module"),
        ]
    )
    assert inferred
    assert INFERENCE_CONFIDENCE == 0.7
    assert all(t.confidence == 0.7 and t.inferred for t in inferred)
    assert UKOTriple("s", "p", "o").confidence == 1.0


def test_co_occurrence_links_same_type_in_same_container(engine: UKOInferenceEngine) -> None:
    """Two functions of one module are siblings, once; a method of a class is not their sibling."""
    inferred = engine.infer(
        [
            _typed(MODULE, "uko-py:Module"),
            _typed(CLASS, "uko-py:Class"),
            _typed(HELPER, "uko-py:Function"),
            _typed(MAIN, "uko-py:Function"),
            _typed(LOGIN, "uko-py:Function"),
            (MODULE, CONTAINS, HELPER),
            (MODULE, CONTAINS, MAIN),
        ]
    )
    assert _pairs(inferred, IMPLICIT_SIBLING_OF) == {(HELPER, MAIN)}


def test_co_occurrence_skips_oversized_groups() -> None:
    """A type shared by more units than max_group_size yields no sibling pairs."""
    many = [_typed(node_uri(RID, "big.py", f"f{i}"), "uko-py:Function") for i in range(6)]
    assert not _pairs(UKOInferenceEngine(max_group_size=5).infer(many), IMPLICIT_SIBLING_OF)
    assert len(_pairs(UKOInferenceEngine(max_group_size=6).infer(many), IMPLICIT_SIBLING_OF)) == 15


def test_containment_follows_uri_boundaries(engine: UKOInferenceEngine) -> None:
    """A URI extending another at '#', '/' or a fragment '.' is contained by the nearest one."""
    auth_manager_x = node_uri(RID, "pkg/auth.py", "AuthManagerX")
    package = node_uri(RID, "pkg")
    inferred = engine.infer(
        [
            _typed(package, "uko-py:Package"),
            _typed(MODULE, "uko-py:Module"),
            _typed(CLASS, "uko-py:Class"),
            _typed(LOGIN, "uko-py:Method"),
            _typed(auth_manager_x, "uko-py:Class"),
        ]
    )
    assert _pairs(inferred, IMPLICIT_CONTAINS) == {
        (package, MODULE),
        (MODULE, CLASS),
        (CLASS, LOGIN),
        (MODULE, auth_manager_x),
    }


def test_containment_already_stated_is_not_repeated(engine: UKOInferenceEngine) -> None:
    """An explicit uko:contains makes the implicit one redundant."""
    inferred = engine.infer(
        [_typed(CLASS, "uko-py:Class"), _typed(LOGIN, "uko-py:Method"), (CLASS, CONTAINS, LOGIN)]
    )
    assert not _pairs(inferred, IMPLICIT_CONTAINS)


def test_dependency_from_object_values(engine: UKOInferenceEngine) -> None:
    """A reference to another unit, or its URI in a literal, is an implicit dependency."""
    inferred = engine.infer(
        [
            _typed(LOGIN, "uko-py:Method"),
            _typed(HELPER, "uko-py:Function"),
            _typed(CLASS, "uko-py:Class"),
            _typed(MAIN, "uko-py:Function"),
            (LOGIN, REFERENCES, HELPER),
            (MAIN, expand("uko-code:docstring"), f"Wraps {CLASS}. See also {MAIN}."),
            (MAIN, expand("uko:sourcePath"), "pkg/auth.py"),
        ]
    )
    assert _pairs(inferred, IMPLICIT_DEPENDS_ON) == {(LOGIN, HELPER), (MAIN, CLASS)}


def test_explicit_dependencies_and_structure_are_not_repeated(engine: UKOInferenceEngine) -> None:
    """dependsOn and its sub-properties, containment and revisions infer no dependency."""
    inferred = engine.infer(
        [
            _typed(MAIN, "uko-py:Function"),
            _typed(HELPER, "uko-py:Function"),
            _typed(LOGIN, "uko-py:Method"),
            _typed(CLASS, "uko-py:Class"),
            (MAIN, expand("uko-code:calls"), HELPER),
            (MAIN, REFERENCES, HELPER),
            (LOGIN, expand("uko:dependsOn"), CLASS),
            (CLASS, CONTAINS, LOGIN),
            (LOGIN, expand("uko:isRevisionOf"), HELPER),
        ]
    )
    assert not _pairs(inferred, IMPLICIT_DEPENDS_ON)


def test_without_loader_only_depends_on_counts_as_explicit() -> None:
    """Without the ontology a uko-code:calls edge is not known to be a dependency."""
    inferred = UKOInferenceEngine().infer(
        [
            _typed(MAIN, "uko-py:Function"),
            _typed(HELPER, "uko-py:Function"),
            (MAIN, expand("uko-code:calls"), HELPER),
        ]
    )
    assert (MAIN, HELPER) in _pairs(inferred, IMPLICIT_DEPENDS_ON)


def test_accepts_curies_tuples_and_a(engine: UKOInferenceEngine) -> None:
    """Predicates may be CURIEs or 'a'; output predicates are full IRIs."""
    inferred = engine.infer(
        [
            (MODULE, "a", "uko-py:Module"),
            (HELPER, "rdf:type", "f"),
            (MAIN, "a", "f"),
            (MODULE, "uko:contains", HELPER),
            (MODULE, "uko:contains", MAIN),
        ]
    )
    assert [t.as_tuple() for t in inferred] == [(HELPER, IMPLICIT_SIBLING_OF, MAIN)]


def test_rerunning_over_own_output_adds_nothing(engine: UKOInferenceEngine) -> None:
    """Inferred inputs are ignored, so inference is idempotent."""
    explicit = [
        _typed(MODULE, "uko-py:Module"),
        _typed(HELPER, "uko-py:Function"),
        _typed(MAIN, "uko-py:Function"),
        (MAIN, REFERENCES, HELPER),
    ]
    first = engine.infer(explicit)
    again = engine.infer([*[UKOTriple(*t) for t in explicit], *first])
    assert again == first
    assert engine.infer([t.as_tuple() for t in first]) == []


def test_output_is_deterministic(engine: UKOInferenceEngine) -> None:
    """The same input in any order gives the same output, without duplicates."""
    triples = [
        _typed(MODULE, "uko-py:Module"),
        _typed(CLASS, "uko-py:Class"),
        _typed(LOGIN, "uko-py:Method"),
        _typed(LOGOUT, "uko-py:Method"),
        _typed(HELPER, "uko-py:Function"),
    ]
    first = engine.infer(triples)
    assert first == engine.infer(list(reversed(triples)))
    assert len(set(first)) == len(first)


def test_bad_input_is_rejected() -> None:
    """A malformed triple or group size is a ValidationError."""
    with pytest.raises(ValidationError):
        UKOInferenceEngine().infer([("only", "two")])  # type: ignore[list-item]
    with pytest.raises(ValidationError):
        UKOInferenceEngine(max_group_size=1)


def test_a_repository_of_twenty_thousand_units_is_inferred_whole(
    engine: UKOInferenceEngine,
) -> None:
    """Twenty thousand units across 500 modules: every sibling pair within a module and
    every module-to-module dependency is inferred, no more."""
    triples: list[tuple[str, str, str]] = []
    for m in range(500):
        module = node_uri(RID, f"pkg/m{m}.py")
        triples.append(_typed(module, "uko-py:Module"))
        for f in range(40):
            function = node_uri(RID, f"pkg/m{m}.py", f"f{f}")
            triples += [_typed(function, "uko-py:Function"), (module, CONTAINS, function)]
            triples.append((function, REFERENCES, node_uri(RID, f"pkg/m{(m + 1) % 500}.py", "f0")))
    inferred = engine.infer(triples)
    assert len(_pairs(inferred, IMPLICIT_SIBLING_OF)) == 500 * 40 * 39 // 2
    assert len(_pairs(inferred, IMPLICIT_DEPENDS_ON)) == 500 * 40
