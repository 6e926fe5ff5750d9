"""DetailLevelMaps: built-in maps, inheritance, insertion shifting and name <-> depth lookups."""

from __future__ import annotations

import pytest

from cleveragents.errors import NotFoundError, ValidationError
from cleveragents.models.context import UNIVERSAL_LEVELS, DetailLevelMap
from cleveragents.protocols import DetailLevelMapRegistry as DetailLevelMapRegistryProtocol
from cleveragents_acms.ontology.levels import BUILTIN_MAPS, DetailLevelMapRegistry, domain_of
from cleveragents_acms.ontology.loader import UKOLoader


@pytest.fixture(scope="module")
def levels() -> DetailLevelMapRegistry:
    """The built-in maps, with the ontology for node-type lookups."""
    return DetailLevelMapRegistry(loader=UKOLoader())


def test_satisfies_the_kernel_protocol(levels: DetailLevelMapRegistry) -> None:
    """The registry is a cleveragents.protocols.DetailLevelMapRegistry."""
    assert isinstance(levels, DetailLevelMapRegistryProtocol)
    assert all(isinstance(m, DetailLevelMap) for m in BUILTIN_MAPS)


def test_universal_levels(levels: DetailLevelMapRegistry) -> None:
    """Layer 0 names MODULE_LISTING 0, SIGNATURES 4 and FULL_SOURCE 9 (spec 001)."""
    assert dict(levels.levels_for("uko")) == UNIVERSAL_LEVELS
    assert levels.depth_of("FULL_SOURCE") == 9
    assert levels.depths_for("uko") == [0, 4, 9]


def test_code_map_matches_the_spec_table(levels: DetailLevelMapRegistry) -> None:
    """uko-code keeps the spec's depths: MODULE_LISTING 0 … SIGNATURES 4 … FULL_SOURCE 9."""
    code = levels.levels_for("uko-code")
    assert code["MODULE_LISTING"] == 0
    assert code["MEMBER_LISTING"] == 2
    assert code["MEMBER_SUMMARY"] == 3
    assert code["SIGNATURES"] == 4
    assert code["SIGNATURES_WITH_DOCS"] == 5
    assert code["STRUCTURAL_OUTLINE"] == 6
    assert code["FULL_SOURCE"] == 9


def test_child_includes_parent_levels(levels: DetailLevelMapRegistry) -> None:
    """Every uko-code level is resolvable for uko-func, which adds none of its own."""
    assert dict(levels.levels_for("uko-func")) == dict(levels.levels_for("uko-code"))
    assert levels.chain("uko-func") == ["uko-func", "uko-code", "uko"]


def test_lookup_chain_for_python(levels: DetailLevelMapRegistry) -> None:
    """Python lookups walk uko-py -> uko-oo -> uko-code -> uko (spec 000)."""
    assert levels.chain("uko-py") == ["uko-py", "uko-oo", "uko-code", "uko"]


def test_oo_insertion_shifts_later_levels(levels: DetailLevelMapRegistry) -> None:
    """CLASS_HIERARCHY inserted at 3 moves MEMBER_SUMMARY and everything after it up by one."""
    code, oo = levels.levels_for("uko-code"), levels.levels_for("uko-oo")
    assert oo["CLASS_HIERARCHY"] == 3
    assert oo["MEMBER_LISTING"] == code["MEMBER_LISTING"] == 2
    for name in ("MEMBER_SUMMARY", "SIGNATURES", "STRUCTURAL_OUTLINE", "FULL_SOURCE"):
        assert oo[name] == code[name] + 1
    assert "CLASS_HIERARCHY" not in levels.levels_for("uko-code")


def test_python_insertions_land_between_the_named_levels(levels: DetailLevelMapRegistry) -> None:
    """DECORATED_SIGNATURES, TYPE_STUBS and WITH_TESTS sit where spec 000 puts them."""
    py = levels.levels_for("uko-py")
    assert py["SIGNATURES_WITH_DOCS"] + 1 == py["DECORATED_SIGNATURES"]
    assert py["DECORATED_SIGNATURES"] + 1 == py["STRUCTURAL_OUTLINE"]
    assert py["KEY_LOGIC"] + 1 == py["TYPE_STUBS"] == py["NEAR_COMPLETE"] - 1
    assert py["WITH_TESTS"] == py["FULL_SOURCE"] + 1


def test_python_numbering_is_consecutive(levels: DetailLevelMapRegistry) -> None:
    """After the insertions the Python levels from MEMBER_LISTING on are numbered without gaps."""
    depths = levels.depths_for("uko-py")
    assert depths == [0, *range(2, 14)]
    assert levels.depth_of("FULL_SOURCE", "uko-py") == 12


def test_insertion_in_a_registered_map() -> None:
    """A child inserting between two levels shifts the later ones; the parent is unchanged."""
    levels = DetailLevelMapRegistry(
        [
            DetailLevelMap(domain="x", parent="uko", levels={"A": 0, "B": 1, "C": 2, "D": 5}),
            DetailLevelMap(domain="x-child", parent="x", levels={"BETWEEN": 1}),
        ]
    )
    assert dict(levels.levels_for("x-child")) == {
        "A": 0,
        "BETWEEN": 1,
        "B": 2,
        "C": 3,
        "SIGNATURES": 4,
        "D": 6,
        "FULL_SOURCE": 9,
        "MODULE_LISTING": 0,
    }
    assert levels.levels_for("x")["B"] == 1


def test_insertion_into_a_gap_shifts_nothing() -> None:
    """A new level at an unnamed depth fills the gap and leaves the others alone."""
    levels = DetailLevelMapRegistry(
        [
            DetailLevelMap(domain="x", parent="uko", levels={"A": 0, "C": 2}),
            DetailLevelMap(domain="x-child", parent="x", levels={"B": 1}),
        ]
    )
    child = levels.levels_for("x-child")
    assert (child["A"], child["B"], child["C"]) == (0, 1, 2)


def test_successive_insertions_use_final_depths() -> None:
    """Two insertions in one map are stated at their final places, shallowest first."""
    levels = DetailLevelMapRegistry(
        [
            DetailLevelMap(domain="x", parent="uko", levels={"A": 0, "B": 1, "C": 2}),
            DetailLevelMap(domain="x-child", parent="x", levels={"AB": 1, "BC": 3}),
        ]
    )
    child = levels.levels_for("x-child")
    assert [child[n] for n in ("A", "AB", "B", "BC", "C")] == [0, 1, 2, 3, 4]


def test_inherited_level_cannot_be_moved() -> None:
    """Restating an inherited level at another depth is rejected; at the same depth it is fine."""
    levels = DetailLevelMapRegistry(
        [
            DetailLevelMap(domain="x", parent="uko", levels={"A": 0, "B": 1}),
            DetailLevelMap(domain="same", parent="x", levels={"B": 1}),
            DetailLevelMap(domain="moved", parent="x", levels={"B": 3}),
        ]
    )
    assert levels.levels_for("same")["B"] == 1
    with pytest.raises(ValidationError, match="cannot move"):
        levels.levels_for("moved")


def test_domain_maps_keep_universal_names_as_fallback(levels: DetailLevelMapRegistry) -> None:
    """Document names their own depths; a universal name still resolves by walking up to uko."""
    assert levels.depth_of("TITLE_ONLY", "uko-doc") == 0
    assert levels.depth_of("FULL_TOC", "uko-doc") == 3
    assert levels.depth_of("FULL_CONTENT", "uko-doc") == 10
    assert levels.depth_of("SIGNATURES", "uko-doc") == 4
    assert levels.depth_of("TYPED_COLUMNS", "uko-data") == 3
    assert levels.depth_of("FULL_CATALOG", "uko-data") == 11


def test_name_and_depth_both_ways(levels: DetailLevelMapRegistry) -> None:
    """Every named level maps to its depth and back, preferring the domain's own name."""
    for domain in ("uko", "uko-code", "uko-oo", "uko-py", "uko-doc", "uko-data", "uko-infra"):
        for name, depth in levels.levels_for(domain).items():
            assert levels.depth_of(name, domain) == depth
            assert levels.depth_of(depth, domain) == depth
            assert levels.depth_of(levels.name_of(depth, domain) or "", domain) == depth
    assert levels.name_of(0, "uko-doc") == "TITLE_ONLY"
    assert levels.name_of(4, "uko-doc") == "TOC_WITH_SUMMARIES"
    assert levels.name_of(9, "uko-doc") == "FULL_SOURCE"
    assert levels.name_of(3, "uko-oo") == "CLASS_HIERARCHY"
    assert levels.name_of(1, "uko-code") is None


def test_integers_pass_through_and_names_are_lenient(levels: DetailLevelMapRegistry) -> None:
    """Raw depths are used as they are; names ignore case and accept dashes."""
    assert levels.depth_of(7) == 7
    assert levels.depth_of(42, "uko-doc") == 42
    assert levels.depth_of("3") == 3
    assert levels.depth_of("full-source", "uko-code") == 9
    assert levels.depth_of(" signatures_with_docs ", "uko-code") == 5


@pytest.mark.parametrize("bad", [-1, True, 2.5, None])
def test_invalid_depths_are_rejected(levels: DetailLevelMapRegistry, bad: object) -> None:
    """Negative, boolean and non-integer depths are a ValidationError."""
    with pytest.raises(ValidationError):
        levels.depth_of(bad)  # type: ignore[arg-type]


def test_unknown_level_lists_valid_names(levels: DetailLevelMapRegistry) -> None:
    """An unknown name raises ValidationError listing the domain's valid names."""
    with pytest.raises(ValidationError, match="MEMBER_LISTING") as caught:
        levels.depth_of("EVERYTHING", "uko-code")
    assert "unknown detail level 'EVERYTHING' for uko-code" in caught.value.message
    assert "FULL_SOURCE" in caught.value.details["valid"]
    with pytest.raises(ValidationError, match="TITLE_ONLY"):
        levels.depth_of("CLASS_HIERARCHY", "uko-doc")


def test_node_types_pick_the_most_specific_map(levels: DetailLevelMapRegistry) -> None:
    """A node type resolves to the nearest domain with a map, via its ancestors."""
    assert levels.domain_of("uko-py:Function") == "uko-py"
    assert levels.domain_of("uko-ts:Class") == "uko-oo"
    assert levels.domain_of("uko-rs:Struct") == "uko-code"
    assert levels.domain_of("uko-func:PureFunction") == "uko-func"
    assert levels.domain_of("uko-doc:Section") == "uko-doc"
    assert levels.domain_of("uko:Container") == "uko"
    assert levels.domain_of("other:Thing") == "uko"
    assert levels.depth_of("CLASS_HIERARCHY", "uko-java:Class") == 3
    assert levels.depth_of("SIGNATURES", "uko-py:Method") == 5


def test_domain_of_without_a_loader_falls_back_by_prefix() -> None:
    """Without the ontology, languages fall back to their paradigm, others to uko."""
    assert domain_of("uko-ts:Anything") == "uko-oo"
    assert domain_of("uko-rs:Anything") == "uko-code"
    assert domain_of("uko-py:Anything") == "uko-py"
    assert domain_of("uko-tf:Resource") == "uko"
    assert DetailLevelMapRegistry().levels_for("uko-java") == (
        DetailLevelMapRegistry().levels_for("uko-oo")
    )


def test_registering_a_map_replaces_and_invalidates() -> None:
    """A later map for a domain replaces the earlier one and lookups see it."""
    levels = DetailLevelMapRegistry()
    assert levels.depth_of("SIGNATURES", "uko-py") == 5
    levels.register(DetailLevelMap(domain="uko-py", parent="uko-code", levels={"STUBS": 5}))
    assert levels.depth_of("SIGNATURES", "uko-py") == 4
    assert levels.depth_of("STUBS", "uko-py") == 5
    assert levels.map_for("uko-py").parent == "uko-code"
    with pytest.raises(NotFoundError):
        levels.map_for("uko-nothing")


def test_invalid_maps_are_rejected() -> None:
    """Empty domains, negative depths and unknown or looping parents are reported."""
    levels = DetailLevelMapRegistry()
    with pytest.raises(ValidationError, match="domain"):
        levels.register(DetailLevelMap.model_construct(domain="", parent=None, levels={}))
    with pytest.raises(ValidationError, match="depth >= 0"):
        levels.register(DetailLevelMap.model_construct(domain="x", parent=None, levels={"A": -1}))
    levels.register(DetailLevelMap(domain="orphan", parent="uko-missing", levels={}))
    with pytest.raises(ValidationError, match="uko-missing"):
        levels.levels_for("orphan")
    levels.register(DetailLevelMap(domain="a", parent="b", levels={}))
    levels.register(DetailLevelMap(domain="b", parent="a", levels={}))
    with pytest.raises(ValidationError, match="loops"):
        levels.levels_for("a")
    assert levels.depth_of("SIGNATURES", "uko-code") == 4


def test_parentless_map_extends_the_universal_one() -> None:
    """A map without a parent still resolves universal names through uko."""
    levels = DetailLevelMapRegistry([DetailLevelMap(domain="x", levels={"ONLY": 2})])
    assert levels.chain("x") == ["x", "uko"]
    assert levels.depth_of("FULL_SOURCE", "x") == 9
    assert levels.depth_of("ONLY", "x:Node") == 2
