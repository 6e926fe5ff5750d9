"""Conformance suites: one base test class per slot, subclassed by every implementation.

A suite proves that a component honours its slot's Protocol *and* the contract
the rest of the system relies on (budgets, scope, ordering, round trips). Its
name does not start with ``Test``, so pytest runs it only through a subclass
that says how to build the component::

    from cleveragents.testing.conformance import ContextStrategyConformance

    class TestMyStrategy(ContextStrategyConformance):
        def make_component(self):
            return MyStrategy()

``make_component`` may take ``tmp_path`` (a fresh directory for the component).
Backend suites build ``backend_class(location, **backend_options)`` instead.
See ``docs/testing-kit.md`` for every suite and its knobs.
"""

from __future__ import annotations

from cleveragents.testing.conformance._base import INVALID_ARGUMENT, ComponentConformance
from cleveragents.testing.conformance.agents import (
    LLMProviderConformance,
    LSPServerSpecConformance,
    ToolConformance,
)
from cleveragents.testing.conformance.backends import (
    GraphBackendConformance,
    TextBackendConformance,
    VectorBackendConformance,
)
from cleveragents.testing.conformance.pipeline import (
    BudgetAllocatorConformance,
    BudgetPackerConformance,
    DetailDepthResolverConformance,
    FragmentDeduplicatorConformance,
    FragmentOrdererConformance,
    FragmentScorerConformance,
    PreambleGeneratorConformance,
    SkeletonCompressorConformance,
    StrategyExecutorConformance,
    StrategySelectorConformance,
)
from cleveragents.testing.conformance.sandbox import SandboxStrategyConformance
from cleveragents.testing.conformance.strategies import ContextStrategyConformance
from cleveragents.testing.conformance.text import EmbedderConformance, TokenizerConformance
from cleveragents.testing.conformance.uko import AnalyzerConformance, DetailLevelMapConformance

__all__ = [
    "INVALID_ARGUMENT",
    "SUITES_BY_SLOT",
    "AnalyzerConformance",
    "BudgetAllocatorConformance",
    "BudgetPackerConformance",
    "ComponentConformance",
    "ContextStrategyConformance",
    "DetailDepthResolverConformance",
    "DetailLevelMapConformance",
    "EmbedderConformance",
    "FragmentDeduplicatorConformance",
    "FragmentOrdererConformance",
    "FragmentScorerConformance",
    "GraphBackendConformance",
    "LLMProviderConformance",
    "LSPServerSpecConformance",
    "PreambleGeneratorConformance",
    "SandboxStrategyConformance",
    "SkeletonCompressorConformance",
    "StrategyExecutorConformance",
    "StrategySelectorConformance",
    "TextBackendConformance",
    "TokenizerConformance",
    "ToolConformance",
    "VectorBackendConformance",
]

#: The suite for each slot key; slots without one (vocabulary, command) are
#: checked by the registry itself and by ``cleveragents plugins check``.
SUITES_BY_SLOT: dict[str, type[ComponentConformance]] = {
    suite.slot_key: suite
    for suite in (
        StrategySelectorConformance,
        BudgetAllocatorConformance,
        StrategyExecutorConformance,
        FragmentDeduplicatorConformance,
        DetailDepthResolverConformance,
        FragmentScorerConformance,
        BudgetPackerConformance,
        FragmentOrdererConformance,
        PreambleGeneratorConformance,
        SkeletonCompressorConformance,
        ContextStrategyConformance,
        AnalyzerConformance,
        DetailLevelMapConformance,
        TextBackendConformance,
        VectorBackendConformance,
        GraphBackendConformance,
        EmbedderConformance,
        TokenizerConformance,
        SandboxStrategyConformance,
        LLMProviderConformance,
        ToolConformance,
        LSPServerSpecConformance,
    )
}
