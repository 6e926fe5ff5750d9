"""The shipped default of each pipeline slot: its registered name and where its class lives."""

from __future__ import annotations

from typing import Any

from cleveragents.registry import import_reference

__all__ = ["DEFAULTS", "TOKENIZERS", "default_component", "default_components"]

_PACKAGE = "cleveragents_acms.pipeline"

#: slot -> (registered name, "module:Class"); the plugin registers exactly these.
DEFAULTS: dict[str, tuple[str, str]] = {
    "strategy-selector": ("confidence-weighted", f"{_PACKAGE}.selector:ConfidenceWeightedSelector"),
    "budget-allocator": ("proportional", f"{_PACKAGE}.allocator:ProportionalBudgetAllocator"),
    "strategy-executor": ("parallel", f"{_PACKAGE}.executor:ParallelStrategyExecutor"),
    "fragment-deduplicator": ("content-hash", f"{_PACKAGE}.dedup:ContentHashDeduplicator"),
    "detail-depth-resolver": ("max-depth", f"{_PACKAGE}.depth:MaxDepthResolver"),
    "fragment-scorer": ("weighted-composite", f"{_PACKAGE}.scorer:WeightedCompositeScorer"),
    "budget-packer": ("greedy-knapsack", f"{_PACKAGE}.packer:GreedyKnapsackPacker"),
    "fragment-orderer": ("relevance-coherence", f"{_PACKAGE}.orderer:RelevanceCoherenceOrderer"),
    "preamble-generator": ("provenance", f"{_PACKAGE}.preamble:ProvenancePreambleGenerator"),
    "skeleton-compressor": ("depth-reduction", f"{_PACKAGE}.skeleton:DepthReductionCompressor"),
}

#: tokenizer name -> "module:Class"
TOKENIZERS: dict[str, str] = {
    "cl100k": f"{_PACKAGE}.tokenizers:Cl100kTokenizer",
    "o200k": f"{_PACKAGE}.tokenizers:O200kTokenizer",
}


def default_component(slot: str) -> Any:
    """A fresh instance of the shipped default for ``slot``."""
    return import_reference(DEFAULTS[slot][1])()


def default_components() -> dict[str, Any]:
    return {slot: default_component(slot) for slot in DEFAULTS}
