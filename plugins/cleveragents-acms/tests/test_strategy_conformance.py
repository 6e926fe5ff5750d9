"""Every built-in strategy passes the kernel's context-strategy conformance suite."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from cleveragents.testing.conformance import ContextStrategyConformance
from cleveragents.testing.conformance.strategies import EMBEDDING_DIMENSION, hashed_embedding
from cleveragents_acms.strategies.arce import ArceStrategy
from cleveragents_acms.strategies.keyword import SimpleKeywordStrategy
from cleveragents_acms.strategies.navigator import BreadthDepthNavigatorStrategy
from cleveragents_acms.strategies.plan_decisions import PlanDecisionContextStrategy
from cleveragents_acms.strategies.semantic import SemanticEmbeddingStrategy
from cleveragents_acms.strategies.temporal import TemporalArchaeologyStrategy


class HashedEmbedder:
    """The suite's bag-of-words embedding, as an Embedder."""

    name = "hashed-test"
    dimension = EMBEDDING_DIMENSION

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        return [hashed_embedding(text) for text in texts]


class TestSimpleKeyword(ContextStrategyConformance):
    def make_component(self) -> Any:
        return SimpleKeywordStrategy()


class TestSemanticEmbedding(ContextStrategyConformance):
    def make_component(self) -> Any:
        return SemanticEmbeddingStrategy(embedder=HashedEmbedder())


class TestBreadthDepthNavigator(ContextStrategyConformance):
    def make_component(self) -> Any:
        return BreadthDepthNavigatorStrategy()


class TestArce(ContextStrategyConformance):
    def make_component(self) -> Any:
        return ArceStrategy(embedder=HashedEmbedder())


class TestTemporalArchaeology(ContextStrategyConformance):
    #: the suite's requests are about the current code: the strategy declines them
    finds_corpus_matches = False

    def make_component(self) -> Any:
        return TemporalArchaeologyStrategy()


class TestPlanDecisionContext(ContextStrategyConformance):
    #: the suite passes no plan context: nothing to deliver
    finds_corpus_matches = False

    def make_component(self) -> Any:
        return PlanDecisionContextStrategy()
