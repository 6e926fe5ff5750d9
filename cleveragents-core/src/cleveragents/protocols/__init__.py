"""``@runtime_checkable`` Protocols for every extension slot, with the spec's names.

Implementations need not subclass anything: the registry checks registered
objects structurally at load time and names the plugin that broke a contract.
"""

from __future__ import annotations

from cleveragents.protocols.agents import (
    AIProviderInterface,
    LSPServerSpec,
    ProviderCapabilities,
    Tool,
)
from cleveragents.protocols.backends import (
    BackendSet,
    EmbeddingChunk,
    GraphBackend,
    GraphIndexBackend,
    GraphResult,
    NodeSource,
    TextBackend,
    TextIndexBackend,
    TextResult,
    VectorBackend,
    VectorIndexBackend,
    VectorResult,
)
from cleveragents.protocols.pipeline import (
    BudgetAllocatorProtocol,
    BudgetPackerProtocol,
    ContextStrategy,
    DetailDepthResolverProtocol,
    FragmentDeduplicatorProtocol,
    FragmentOrdererProtocol,
    FragmentScorerProtocol,
    PreambleGeneratorProtocol,
    SkeletonCompressorProtocol,
    StrategyExecutorProtocol,
    StrategySelectorProtocol,
)
from cleveragents.protocols.sandbox import SandboxStrategy
from cleveragents.protocols.text import Embedder, Tokenizer
from cleveragents.protocols.uko import (
    DetailLevelMapLike,
    DetailLevelMapRegistry,
    UKOAnalyzer,
)

__all__ = [
    "AIProviderInterface",
    "BackendSet",
    "BudgetAllocatorProtocol",
    "BudgetPackerProtocol",
    "ContextStrategy",
    "DetailDepthResolverProtocol",
    "DetailLevelMapLike",
    "DetailLevelMapRegistry",
    "Embedder",
    "EmbeddingChunk",
    "FragmentDeduplicatorProtocol",
    "FragmentOrdererProtocol",
    "FragmentScorerProtocol",
    "GraphBackend",
    "GraphIndexBackend",
    "GraphResult",
    "LSPServerSpec",
    "NodeSource",
    "PreambleGeneratorProtocol",
    "ProviderCapabilities",
    "SandboxStrategy",
    "SkeletonCompressorProtocol",
    "StrategyExecutorProtocol",
    "StrategySelectorProtocol",
    "TextBackend",
    "TextIndexBackend",
    "TextResult",
    "Tokenizer",
    "Tool",
    "UKOAnalyzer",
    "VectorBackend",
    "VectorIndexBackend",
    "VectorResult",
]
