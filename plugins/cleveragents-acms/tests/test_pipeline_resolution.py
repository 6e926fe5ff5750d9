"""Which component fills each pipeline slot: plan > project > global > built-in, and failures."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from cleveragents.config import Config, load_config
from cleveragents.errors import NotFoundError
from cleveragents.models.plans import Plan
from cleveragents.models.resources import Project
from cleveragents.plugins import PluginHost
from cleveragents.registry import Registry
from cleveragents.testing.factories import StubStrategy, make_fragment, make_request
from cleveragents_acms.pipeline.assembly import ContextAssemblyPipeline
from cleveragents_acms.pipeline.config import SLOT_FIELDS, PipelineConfigResolver
from cleveragents_acms.pipeline.defaults import DEFAULTS
from cleveragents_acms.pipeline.packer import GreedyKnapsackPacker
from cleveragents_acms.pipeline.tokenizers import get_tokenizer

CUSTOM_MODULE = '''
from cleveragents_acms.pipeline.orderer import RelevanceCoherenceOrderer
from cleveragents_acms.pipeline.scorer import WeightedCompositeScorer


class ReversedOrderer:
    """Shows the least relevant fragment first."""

    def order(self, fragments):
        return list(reversed(fragments))


class DomainAwareScorer(WeightedCompositeScorer):
    """A scorer subclass a project might configure."""


class ExplodingPacker:
    """Raises on every call."""

    def pack(self, scored_fragments, budget, detail_level_maps):
        raise RuntimeError("packer exploded")


class WrongTypeScorer:
    """Returns plain fragments instead of ScoredFragments."""

    def score(self, fragments, plan_context):
        return list(fragments)


class OverBudgetPacker:
    """Packs everything, whatever the budget."""

    def pack(self, scored_fragments, budget, detail_level_maps):
        return [s.fragment for s in scored_fragments]
'''


@pytest.fixture
def extensions(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    """An importable module ``my_extensions`` with custom stage components."""
    folder = tmp_path / "ext"
    folder.mkdir()
    (folder / "my_extensions.py").write_text(textwrap.dedent(CUSTOM_MODULE), encoding="utf-8")
    monkeypatch.syspath_prepend(str(folder))
    return "my_extensions"


@pytest.fixture
def registry(plugin_host: PluginHost) -> Registry:
    """The registry built from the installed plugins, as the CLI builds it."""
    assert plugin_host.records["acms"].status == "loaded", plugin_host.records["acms"].error
    return plugin_host.registry


def config_with(tmp_path: Path, **env: str) -> Config:
    """The configuration chain with ``CLEVERAGENTS_*`` variables set."""
    return load_config(cwd=tmp_path, env=env)


def test_the_plugin_registers_every_slot_default_under_its_name(registry: Registry) -> None:
    """Ten stage defaults and two tokenizers, registered lazily by name."""
    for slot, (name, reference) in DEFAULTS.items():
        registration = registry[slot].registration(name)
        assert (registration.plugin, registration.target) == ("acms", reference)
    assert {"cl100k", "o200k"} <= set(registry.tokenizers)
    assert registry.tokenizers["o200k"].count("hello world") == 2


def test_built_in_defaults_fill_every_slot(registry: Registry, tmp_path: Path) -> None:
    """With no overrides, every slot resolves to its built-in default by class name."""
    resolved = PipelineConfigResolver(registry, config_with(tmp_path)).resolve()
    for slot, (_, reference) in DEFAULTS.items():
        component = resolved.component(slot)
        assert type(component).__name__ == reference.rsplit(":", 1)[1]
        assert resolved.sources[slot][0] == "built-in"
    assert resolved.settings["budget-packer"]["depth-fallback-steps"] == [9, 4, 2, 0]
    assert resolved.settings["preamble-generator"]["preamble-max-tokens"] == 200


def test_builtin_class_names_resolve_through_the_registry(registry: Registry) -> None:
    """``builtin:GreedyKnapsackPacker`` is the registered greedy-knapsack packer."""
    packer = registry.resolve("budget-packer", "builtin:GreedyKnapsackPacker")
    assert packer is registry["budget-packer"]["greedy-knapsack"]
    assert isinstance(packer, GreedyKnapsackPacker)


def test_scope_chain_plan_over_project_over_global_over_builtin(
    registry: Registry, tmp_path: Path, extensions: str
) -> None:
    """Each scope overrides the broader ones only for the slots it names."""
    config = config_with(
        tmp_path,
        CLEVERAGENTS_CONTEXT__PIPELINE__FRAGMENT_ORDERER=f"{extensions}:ReversedOrderer",
        CLEVERAGENTS_CONTEXT__PIPELINE__FRAGMENT_SCORER="weighted-composite",
        CLEVERAGENTS_CONTEXT__PIPELINE__BUDGET_PACKER="builtin:GreedyKnapsackPacker",
    )
    project = Project(
        name="local/api-service",
        properties={
            "pipeline": {
                "fragment-scorer": f"{extensions}:DomainAwareScorer",
                "fragment-orderer": "relevance-coherence",
            }
        },
    )
    plan = Plan(
        title="refactor", pipeline_overrides={"fragment-orderer": f"{extensions}:ReversedOrderer"}
    )
    resolver = PipelineConfigResolver(registry, config)

    only_global = resolver.resolve()
    assert type(only_global.fragment_orderer).__name__ == "ReversedOrderer"
    assert only_global.sources["fragment-orderer"] == ("global", f"{extensions}:ReversedOrderer")
    assert only_global.sources["fragment-scorer"] == ("global", "weighted-composite")

    with_project = resolver.resolve(project=project)
    assert type(with_project.fragment_scorer).__name__ == "DomainAwareScorer"
    assert type(with_project.fragment_orderer).__name__ == "RelevanceCoherenceOrderer"
    assert with_project.sources["fragment-orderer"][0] == "project"

    with_plan = resolver.resolve(plan=plan, project=project)
    assert type(with_plan.fragment_orderer).__name__ == "ReversedOrderer"
    assert with_plan.sources["fragment-orderer"][0] == "plan"
    assert with_plan.sources["fragment-scorer"][0] == "project"
    assert with_plan.sources["strategy-selector"][0] == "built-in"
    assert with_plan.sources["budget-packer"][0] == "global"


def test_plain_mappings_work_as_scopes(registry: Registry) -> None:
    """Scopes may be plain mappings: {slot: component}."""
    resolver = PipelineConfigResolver(
        registry, {"context.pipeline.fragment-orderer": "relevance-coherence"}
    )
    resolved = resolver.resolve(plan={"budget-packer": "greedy-knapsack"}, project=None)
    assert resolved.sources["budget-packer"] == ("plan", "greedy-knapsack")
    assert resolved.sources["fragment-orderer"] == ("global", "relevance-coherence")


def test_an_unknown_component_name_lists_the_valid_ones(registry: Registry) -> None:
    """A typo names the slot and every registered component."""
    resolver = PipelineConfigResolver(registry)
    with pytest.raises(
        NotFoundError, match=r"unknown budget-packer 'greedy-knapsak'.*greedy-knapsack"
    ):
        resolver.resolve(plan={"budget-packer": "greedy-knapsak"})
    with pytest.raises(NotFoundError, match=r"class 'NoSuchPacker'.*greedy-knapsack"):
        resolver.resolve(plan={"budget-packer": "builtin:NoSuchPacker"})


def test_settings_come_from_the_configuration_chain(registry: Registry, tmp_path: Path) -> None:
    """context.pipeline.<slot>.* and the fusion/budget keys reach the stages' settings."""
    config = config_with(
        tmp_path,
        CLEVERAGENTS_CONTEXT__PIPELINE__BUDGET_PACKER__MIN_FRAGMENT_TOKENS="25",
        CLEVERAGENTS_CONTEXT__FUSION__ORDERING="topological",
        CLEVERAGENTS_CONTEXT__BUDGET__MIN_USEFUL_BUDGET="100",
        CLEVERAGENTS_CONTEXT__STRATEGIES__ARCE__MAX_ROUNDS="1",
    )
    settings = PipelineConfigResolver(registry, config).resolve().settings
    assert settings["budget-packer"]["min-fragment-tokens"] == 25
    assert settings["fragment-orderer"]["ordering"] == "topological"
    assert settings["budget-allocator"]["min-useful-budget"] == 100
    assert settings["strategies.arce"]["max-rounds"] == 1
    assert settings["strategies.breadth-depth-navigator"]["max-hops"] == 4  # the default
    stages = {key for key in settings if not key.startswith("strategies.")}
    assert stages == set(SLOT_FIELDS)


def pipeline_for(registry: Registry, plan: dict[str, str]) -> ContextAssemblyPipeline:
    fragments = [
        make_fragment(f"uko://r/app.py#f{i}", f"def f{i}(): return {i}", relevance=0.1 * i)
        for i in range(1, 6)
    ]
    strategy = StubStrategy("simple-keyword", 0.9, fragments=fragments)
    config = PipelineConfigResolver(registry).resolve(plan=plan)
    return ContextAssemblyPipeline(config, [strategy], tokenizer=get_tokenizer("cl100k"))


@pytest.mark.parametrize(
    ("slot", "component", "problem"),
    [
        ("budget-packer", "ExplodingPacker", "raised RuntimeError: packer exploded"),
        ("fragment-scorer", "WrongTypeScorer", "returned a ContextFragment, not a ScoredFragment"),
        ("budget-packer", "OverBudgetPacker", "packed"),
    ],
)
def test_a_failing_custom_component_is_replaced_by_the_default(
    registry: Registry, extensions: str, slot: str, component: str, problem: str
) -> None:
    """The assembly completes with the slot's default, and the notes say what happened."""
    pipeline = pipeline_for(registry, {slot: f"{extensions}:{component}"})
    context = pipeline.assemble(make_request(), None, 30)
    default_class = DEFAULTS[slot][1].rsplit(":", 1)[1]
    replaced = [n for n in context.notes if n.startswith(f"{slot} {component}")]
    assert replaced, context.notes
    assert problem in replaced[0]
    assert replaced[0].endswith(f"used the built-in {default_class}")
    assert context.fragments, "the default still produced a context"
    assert context.is_within_budget


def test_a_custom_orderer_from_a_module_is_used(registry: Registry, extensions: str) -> None:
    """``module:Class`` at plan scope is imported, instantiated and run."""
    pipeline = pipeline_for(registry, {"fragment-orderer": f"{extensions}:ReversedOrderer"})
    context = pipeline.assemble(make_request(), None, 2000)
    relevance = [f.relevance_score for f in context.fragments]
    assert relevance == sorted(relevance), "reversed: least relevant first"
    assert not [n for n in context.notes if "fragment-orderer" in n]


def test_a_custom_component_that_breaks_the_protocol_is_replaced(
    registry: Registry, extensions: str
) -> None:
    """A class without the slot's method gives way to the built-in, with the reason recorded."""
    config = PipelineConfigResolver(registry).resolve(
        plan={"fragment-orderer": f"{extensions}:ExplodingPacker"}
    )
    assert type(config.fragment_orderer).__name__ == "RelevanceCoherenceOrderer"
    assert config.sources["fragment-orderer"] == ("plan", f"{extensions}:ExplodingPacker")
    problem = config.problems["fragment-orderer"]
    assert "does not satisfy FragmentOrdererProtocol" in problem
    assert problem.endswith("used the built-in RelevanceCoherenceOrderer")
    context = ContextAssemblyPipeline(
        config,
        [StubStrategy("simple-keyword", 0.9, fragments=[make_fragment("uko://r/a.py#f")])],
        tokenizer=get_tokenizer("cl100k"),
    ).assemble(make_request(), None, 2000)
    assert problem in context.notes and context.fragments
    with pytest.raises(NotFoundError, match=r"unknown fragment-orderer 'nope'"):
        PipelineConfigResolver(registry).resolve(plan={"fragment-orderer": "nope"})
