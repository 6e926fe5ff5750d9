"""The shipped pipeline stages and tokenizers pass the kernel's conformance suites."""

from __future__ import annotations

from cleveragents.testing.conformance import (
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
    TokenizerConformance,
)
from cleveragents_acms.pipeline.allocator import ProportionalBudgetAllocator
from cleveragents_acms.pipeline.dedup import ContentHashDeduplicator
from cleveragents_acms.pipeline.depth import MaxDepthResolver
from cleveragents_acms.pipeline.executor import ParallelStrategyExecutor
from cleveragents_acms.pipeline.orderer import RelevanceCoherenceOrderer
from cleveragents_acms.pipeline.packer import GreedyKnapsackPacker
from cleveragents_acms.pipeline.preamble import ProvenancePreambleGenerator
from cleveragents_acms.pipeline.scorer import WeightedCompositeScorer
from cleveragents_acms.pipeline.selector import ConfidenceWeightedSelector
from cleveragents_acms.pipeline.skeleton import DepthReductionCompressor
from cleveragents_acms.pipeline.tokenizers import Cl100kTokenizer, O200kTokenizer


class TestConfidenceWeightedSelector(StrategySelectorConformance):
    """Stage 1 default."""

    def make_component(self) -> ConfidenceWeightedSelector:
        return ConfidenceWeightedSelector()


class TestProportionalBudgetAllocator(BudgetAllocatorConformance):
    """Stage 2 default."""

    def make_component(self) -> ProportionalBudgetAllocator:
        return ProportionalBudgetAllocator()


class TestParallelStrategyExecutor(StrategyExecutorConformance):
    """Stage 3 default."""

    def make_component(self) -> ParallelStrategyExecutor:
        return ParallelStrategyExecutor()


class TestContentHashDeduplicator(FragmentDeduplicatorConformance):
    """Stage 4 default, content-hash mode."""

    def make_component(self) -> ContentHashDeduplicator:
        return ContentHashDeduplicator()


class TestMaxDepthResolver(DetailDepthResolverConformance):
    """Stage 5 default."""

    def make_component(self) -> MaxDepthResolver:
        return MaxDepthResolver()


class TestWeightedCompositeScorer(FragmentScorerConformance):
    """Stage 6 default."""

    def make_component(self) -> WeightedCompositeScorer:
        return WeightedCompositeScorer()


class TestGreedyKnapsackPacker(BudgetPackerConformance):
    """Stage 7 default."""

    def make_component(self) -> GreedyKnapsackPacker:
        return GreedyKnapsackPacker()


class TestRelevanceCoherenceOrderer(FragmentOrdererConformance):
    """Stage 8 default, relevance-coherence mode."""

    def make_component(self) -> RelevanceCoherenceOrderer:
        return RelevanceCoherenceOrderer()


class TestTopologicalOrderer(FragmentOrdererConformance):
    """Stage 8 default, topological mode."""

    def make_component(self) -> RelevanceCoherenceOrderer:
        return RelevanceCoherenceOrderer(mode="topological")


class TestProvenancePreambleGenerator(PreambleGeneratorConformance):
    """Stage 9 default."""

    def make_component(self) -> ProvenancePreambleGenerator:
        return ProvenancePreambleGenerator()


class TestDepthReductionCompressor(SkeletonCompressorConformance):
    """Stage 10 default."""

    def make_component(self) -> DepthReductionCompressor:
        return DepthReductionCompressor()


class TestCl100kTokenizer(TokenizerConformance):
    """cl100k through bpe-openai."""

    def make_component(self) -> Cl100kTokenizer:
        return Cl100kTokenizer()


class TestO200kTokenizer(TokenizerConformance):
    """o200k through bpe-openai."""

    def make_component(self) -> O200kTokenizer:
        return O200kTokenizer()
