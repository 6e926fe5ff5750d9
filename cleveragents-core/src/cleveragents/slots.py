"""The catalogue of extension slots: the one table that ties hooks to Protocols.

Every registration hook in :mod:`cleveragents.hookspecs` appears here once, with
the Protocol(s) its components must satisfy. The registry, ``plugins list``,
the docs test and the conformance kit all read this table, so adding a slot is
one hookspec plus one row.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from cleveragents import protocols as p

__all__ = ["PIPELINE_SLOTS", "SLOTS", "SLOTS_BY_HOOK", "SLOTS_BY_KEY", "Slot"]


def _turtle_file(component: object) -> str | None:
    path = Path(str(component))
    if path.suffix != ".ttl":
        return f"expected a Turtle file (.ttl), got {str(component)!r}"
    if not path.is_file():
        return f"Turtle file does not exist: {path}"
    return None


@dataclass(frozen=True)
class Slot:
    """One extension slot: its key (as shown to users), hook and contract."""

    key: str
    hook: str
    protocols: tuple[type, ...]
    summary: str
    #: Backend slots register classes that the consumer instantiates per project.
    registers_classes: bool = False
    #: Extra check for slots whose components are not Protocol objects (files).
    check: Callable[[object], str | None] | None = None
    #: Registration hooks hand out ``register``; ``command`` hands out the CLI group.
    is_registration: bool = True


PIPELINE_SLOTS: tuple[Slot, ...] = (
    Slot(
        "strategy-selector",
        "register_strategy_selectors",
        (p.StrategySelectorProtocol,),
        "stage 1: which strategies run, with what confidence",
    ),
    Slot(
        "budget-allocator",
        "register_budget_allocators",
        (p.BudgetAllocatorProtocol,),
        "stage 2: token budget per strategy",
    ),
    Slot(
        "strategy-executor",
        "register_strategy_executors",
        (p.StrategyExecutorProtocol,),
        "stage 3: runs strategies (timeouts, circuit breaker)",
    ),
    Slot(
        "fragment-deduplicator",
        "register_fragment_deduplicators",
        (p.FragmentDeduplicatorProtocol,),
        "stage 4: removes duplicate fragments",
    ),
    Slot(
        "detail-depth-resolver",
        "register_detail_depth_resolvers",
        (p.DetailDepthResolverProtocol,),
        "stage 5: one depth per UKO node",
    ),
    Slot(
        "fragment-scorer",
        "register_fragment_scorers",
        (p.FragmentScorerProtocol,),
        "stage 6: composite relevance score",
    ),
    Slot(
        "budget-packer",
        "register_budget_packers",
        (p.BudgetPackerProtocol,),
        "stage 7: fits fragments into the budget with depth fallback",
    ),
    Slot(
        "fragment-orderer",
        "register_fragment_orderers",
        (p.FragmentOrdererProtocol,),
        "stage 8: presentation order",
    ),
    Slot(
        "preamble-generator",
        "register_preamble_generators",
        (p.PreambleGeneratorProtocol,),
        "stage 9: provenance summary",
    ),
    Slot(
        "skeleton-compressor",
        "register_skeleton_compressors",
        (p.SkeletonCompressorProtocol,),
        "stage 10: skeleton for child plans",
    ),
)

SLOTS: tuple[Slot, ...] = (
    *PIPELINE_SLOTS,
    Slot(
        "strategy",
        "register_context_strategies",
        (p.ContextStrategy,),
        "context retrieval strategies",
    ),
    Slot("analyzer", "register_analyzers", (p.UKOAnalyzer,), "file -> UKO nodes"),
    Slot(
        "vocabulary",
        "register_vocabularies",
        (),
        "UKO vocabularies (Turtle files)",
        check=_turtle_file,
    ),
    Slot(
        "detail-level-map",
        "register_detail_level_maps",
        (p.DetailLevelMapLike,),
        "named detail levels per UKO domain",
    ),
    Slot(
        "text-backend",
        "register_text_backends",
        (p.TextBackend, p.TextIndexBackend),
        "full-text search backends",
        registers_classes=True,
    ),
    Slot(
        "vector-backend",
        "register_vector_backends",
        (p.VectorBackend, p.VectorIndexBackend),
        "vector similarity backends",
        registers_classes=True,
    ),
    Slot(
        "graph-backend",
        "register_graph_backends",
        (p.GraphBackend, p.GraphIndexBackend),
        "knowledge-graph backends",
        registers_classes=True,
    ),
    Slot("embedder", "register_embedders", (p.Embedder,), "text -> vectors, offline"),
    Slot("tokenizer", "register_tokenizers", (p.Tokenizer,), "token counting for budgets"),
    Slot(
        "sandbox",
        "register_sandbox_strategies",
        (p.SandboxStrategy,),
        "sandbox isolation strategies",
    ),
    Slot("llm-provider", "register_llm_providers", (p.AIProviderInterface,), "LLM providers"),
    Slot("tool", "register_tools", (p.Tool,), "tools actors may call"),
    Slot("lsp-server", "register_lsp_servers", (p.LSPServerSpec,), "language servers"),
    Slot("command", "register_commands", (), "CLI commands and groups", is_registration=False),
)

SLOTS_BY_KEY: dict[str, Slot] = {slot.key: slot for slot in SLOTS}
SLOTS_BY_HOOK: dict[str, Slot] = {slot.hook: slot for slot in SLOTS}
