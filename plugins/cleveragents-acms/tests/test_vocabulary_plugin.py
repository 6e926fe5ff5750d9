"""A third-party plugin adds a UKO vocabulary and a DetailLevelMap through the kernel hooks."""

from __future__ import annotations

from pathlib import Path

import pytest

from cleveragents import hookimpl
from cleveragents.errors import ConfigurationError
from cleveragents.hookspecs import Register
from cleveragents.models.context import DetailLevelMap
from cleveragents.plugins import PluginHost
from cleveragents_acms.ontology.levels import DetailLevelMapRegistry
from cleveragents_acms.ontology.loader import UKOLoader

# The spec's example vocabulary (spec 000, "Adding a New UKO Vocabulary").
TERRAFORM_TTL = """\
@prefix owl: <http://www.w3.org/2002/07/owl#> .
@prefix rdfs: <http://www.w3.org/2000/01/rdf-schema#> .
@prefix uko: <https://cleveragents.ai/ontology/uko#> .
@prefix uko-infra: <https://cleveragents.ai/ontology/uko/infra#> .
@prefix uko-tf: <https://cleveragents.ai/ontology/uko/tf#> .

uko-tf:TerraformModule a owl:Class ;
    rdfs:subClassOf uko-infra:ConfigBlock, uko:Container .
uko-tf:Resource a owl:Class ;
    rdfs:subClassOf uko:Container .
uko-tf:Variable a owl:Class ;
    rdfs:subClassOf uko-infra:ConfigKey .
uko-tf:Output a owl:Class ;
    rdfs:subClassOf uko:Boundary .
uko-tf:provisionsOn a owl:ObjectProperty ;
    rdfs:subPropertyOf uko:dependsOn ;
    rdfs:domain uko-tf:Resource ;
    rdfs:range uko-infra:Service .
"""

#: RESOURCE_GRAPH fills the unnamed depth 3 of uko-infra; PLAN_SUMMARY is inserted at 4.
TERRAFORM_LEVELS = DetailLevelMap(
    domain="uko-tf", parent="uko-infra", levels={"RESOURCE_GRAPH": 3, "PLAN_SUMMARY": 4}
)


class TerraformPlugin:
    """What a terraform plugin distribution would register."""

    def __init__(self, vocabulary: Path) -> None:
        self.vocabulary = vocabulary

    @hookimpl
    def register_vocabularies(self, register: Register) -> None:
        register("terraform", self.vocabulary)

    @hookimpl
    def register_detail_level_maps(self, register: Register) -> None:
        register("uko-tf", TERRAFORM_LEVELS)


def _host(plugin: object, name: str = "terraform") -> PluginHost:
    host = PluginHost.load(env={}, entry_points=[])
    host.register(plugin, name)
    return host


@pytest.fixture
def host(tmp_path: Path) -> PluginHost:
    """A plugin host with only the kernel's own plugins and the terraform plugin."""
    vocabulary = tmp_path / "uko-tf.ttl"
    vocabulary.write_text(TERRAFORM_TTL, encoding="utf-8")
    return _host(TerraformPlugin(vocabulary))


def test_kernel_registry_holds_the_plugin_components(host: PluginHost) -> None:
    """Both registrations land in their slots under the plugin's name."""
    assert host.records["terraform"].status == "loaded"
    assert host.registry.provided_by("terraform") == {
        "vocabulary": ["terraform"],
        "detail-level-map": ["uko-tf"],
    }


def test_loader_sees_the_vocabulary(host: PluginHost) -> None:
    """The loader built from the registry knows uko-tf classes and their parents."""
    loader = UKOLoader.from_registry(host.registry)
    assert loader.errors == []
    assert "uko-tf:TerraformModule" in loader.classes("uko-tf")
    assert loader.parents("uko-tf:TerraformModule") == ["uko-infra:ConfigBlock", "uko:Container"]
    assert loader.resolve_inheritance("uko-tf:TerraformModule") == [
        "uko-tf:TerraformModule",
        "uko-infra:ConfigBlock",
        "uko:Container",
        "uko:InformationUnit",
    ]
    assert loader.is_subclass("uko-tf:Variable", "uko:Atom")
    assert loader.is_subclass("uko-tf:provisionsOn", "uko:dependsOn")
    assert loader.layer_of("uko-tf:TerraformModule") == 2
    assert loader.prefixes()["uko-tf"] == "https://cleveragents.ai/ontology/uko/tf#"


def test_levels_resolve_the_plugin_map_and_fall_back(host: PluginHost) -> None:
    """uko-tf levels resolve; names it lacks come from uko-infra, then uko."""
    loader = UKOLoader.from_registry(host.registry)
    levels = DetailLevelMapRegistry.from_registry(host.registry, loader=loader)
    assert levels.errors == []
    assert levels.chain("uko-tf") == ["uko-tf", "uko-infra", "uko"]
    assert levels.domain_of("uko-tf:TerraformModule") == "uko-tf"
    assert levels.depth_of("RESOURCE_GRAPH", "uko-tf:Resource") == 3
    assert levels.depth_of("PLAN_SUMMARY", "uko-tf") == 4
    infra = levels.levels_for("uko-infra")
    tf = levels.levels_for("uko-tf")
    assert tf["SERVICE_LISTING"] == infra["SERVICE_LISTING"] == 0
    assert tf["CONFIG_KEYS"] == infra["CONFIG_KEYS"] + 1
    assert levels.depth_of("FULL_CONFIG", "uko-tf") == infra["FULL_CONFIG"] + 1
    assert levels.depth_of("SIGNATURES", "uko-tf") == 4
    assert levels.name_of(4, "uko-tf") == "PLAN_SUMMARY"


def test_without_the_plugin_a_tf_type_falls_back(tmp_path: Path) -> None:
    """With the vocabulary but no map, a uko-tf type uses its parent's infra map."""

    class VocabularyOnly:
        @hookimpl
        def register_vocabularies(self, register: Register) -> None:
            path = tmp_path / "uko-tf.ttl"
            path.write_text(TERRAFORM_TTL, encoding="utf-8")
            register("terraform", path)

    host = _host(VocabularyOnly())
    loader = UKOLoader.from_registry(host.registry)
    levels = DetailLevelMapRegistry.from_registry(host.registry, loader=loader)
    assert levels.domain_of("uko-tf:Variable") == "uko-infra"
    assert levels.depth_of("FULL_CONFIG", "uko-tf:TerraformModule") == 9


def test_broken_vocabulary_is_isolated(tmp_path: Path) -> None:
    """A plugin's invalid Turtle is skipped and reported; strict mode raises it."""
    broken = tmp_path / "broken.ttl"
    broken.write_text("@prefix uko: <urn:x#> .\nuko:A a uko:B\nuko:C .\n", encoding="utf-8")
    host = _host(TerraformPlugin(broken), name="broken")
    loader = UKOLoader.from_registry(host.registry)
    assert [plugin for plugin, _ in loader.errors] == ["broken"]
    assert "broken.ttl, line" in loader.errors[0][1]
    assert "uko-oo:Class" in loader
    with pytest.raises(ConfigurationError, match=r"broken\.ttl"):
        UKOLoader.from_registry(host.registry, strict=True)
