"""What ACMS registers with the kernel: strings only, so listing plugins imports nothing heavy."""

from __future__ import annotations

from pathlib import Path

from cleveragents import hookimpl


@hookimpl
def register_commands(cli: object) -> None:
    from cleveragents_acms.cli.context_cmd import context
    from cleveragents_acms.cli.index_cmd import index
    from cleveragents_acms.cli.project_context_cmd import project_context
    from cleveragents_acms.cli.vector_cmd import vector

    cli.add_command(index)  # type: ignore[attr-defined]
    cli.add_command(context)  # type: ignore[attr-defined]
    cli.add_command(vector)  # type: ignore[attr-defined]
    project = getattr(cli, "commands", {}).get("project")
    if project is not None and hasattr(project, "add_command"):
        project.add_command(project_context)  # `project context set|show|inspect|simulate`


@hookimpl
def register_tools(register: object) -> None:
    """The ``builtin/context`` tools: request_context, query_history, get_context_budget."""
    for name, reference in (
        ("request_context", "cleveragents_acms.context.tools:RequestContextTool"),
        ("query_history", "cleveragents_acms.context.tools:QueryHistoryTool"),
        ("get_context_budget", "cleveragents_acms.context.tools:GetContextBudgetTool"),
    ):
        register(f"builtin/context/{name}", reference)  # type: ignore[operator]


@hookimpl
def cleveragents_resource_added(resource: object, project: str | None, app: object) -> None:
    """`resource add` and `project link-resource` index the resource right away."""
    from cleveragents_acms.indexing.runner import ensure_resource, index_resource

    location = getattr(resource, "location", None)
    if not location:
        return
    import click

    from cleveragents_acms.cli.index_cmd import interrupted, summary

    stored, project_name = ensure_resource(app, Path(location), project)
    try:
        result = index_resource(app, stored, project_name)
    except KeyboardInterrupt:
        click.echo(interrupted(location), err=True)
        raise SystemExit(130) from None  # not an Exception: the host lets it through
    click.echo(summary(stored, result))


@hookimpl
def cleveragents_resource_removed(resource: object, app: object) -> None:
    """Drop a removed resource from every project index."""
    from cleveragents_acms.indexing.runner import service_for

    service_for(app).remove_index(resource.resource_id)  # type: ignore[attr-defined]


@hookimpl
def register_text_backends(register: object) -> None:
    """Tantivy full-text search over UKO nodes (``index.text.backend = "tantivy"``)."""
    register("tantivy", "cleveragents_acms.backends.text:TantivyTextBackend")  # type: ignore[operator]


@hookimpl
def register_graph_backends(register: object) -> None:
    """UKO triples in pyoxigraph, scoped SPARQL and revisions (``index.graph.backend``)."""
    register("oxigraph", "cleveragents_acms.backends.graph:OxigraphGraphBackend")  # type: ignore[operator]


@hookimpl
def register_context_strategies(register: object) -> None:
    """The built-in strategies: keyword, semantic, navigator, arce, temporal, plan decisions."""
    for name, reference in (
        ("simple-keyword", "cleveragents_acms.strategies.keyword:SimpleKeywordStrategy"),
        ("semantic-embedding", "cleveragents_acms.strategies.semantic:SemanticEmbeddingStrategy"),
        (
            "breadth-depth-navigator",
            "cleveragents_acms.strategies.navigator:BreadthDepthNavigatorStrategy",
        ),
        ("arce", "cleveragents_acms.strategies.arce:ArceStrategy"),
        (
            "temporal-archaeology",
            "cleveragents_acms.strategies.temporal:TemporalArchaeologyStrategy",
        ),
        (
            "plan-decision-context",
            "cleveragents_acms.strategies.plan_decisions:PlanDecisionContextStrategy",
        ),
    ):
        register(name, reference)  # type: ignore[operator]


_ANALYZERS = "cleveragents_acms.analyzers"


@hookimpl
def register_analyzers(register: object) -> None:
    """Files to UKO nodes: Python (ast), Markdown, tree-sitter languages, any other text."""
    for name, reference in (
        ("python", f"{_ANALYZERS}.python:PythonAnalyzer"),
        ("markdown", f"{_ANALYZERS}.markdown:MarkdownAnalyzer"),
        ("typescript", f"{_ANALYZERS}.treesitter:TypeScriptAnalyzer"),
        ("javascript", f"{_ANALYZERS}.treesitter:JavaScriptAnalyzer"),
        ("go", f"{_ANALYZERS}.treesitter:GoAnalyzer"),
        ("rust", f"{_ANALYZERS}.treesitter:RustAnalyzer"),
        ("java", f"{_ANALYZERS}.treesitter:JavaAnalyzer"),
        ("text", f"{_ANALYZERS}.text:GenericTextAnalyzer"),
    ):
        register(name, reference)  # type: ignore[operator]


# -- Context Assembly Pipeline: the shipped default of each stage, and tokenizers ------

_PIPELINE = "cleveragents_acms.pipeline"


@hookimpl
def register_strategy_selectors(register: object) -> None:
    """Stage 1: confidence x quality, preferences, fallback degradation path."""
    register("confidence-weighted", f"{_PIPELINE}.selector:ConfidenceWeightedSelector")  # type: ignore[operator]


@hookimpl
def register_budget_allocators(register: object) -> None:
    """Stage 2: budget proportional to confidence x quality, min-useful-budget each."""
    register("proportional", f"{_PIPELINE}.allocator:ProportionalBudgetAllocator")  # type: ignore[operator]


@hookimpl
def register_strategy_executors(register: object) -> None:
    """Stage 3: parallel strategies with timeouts and circuit breakers."""
    register("parallel", f"{_PIPELINE}.executor:ParallelStrategyExecutor")  # type: ignore[operator]


@hookimpl
def register_fragment_deduplicators(register: object) -> None:
    """Stage 4: content-hash, uko-identity or semantic deduplication."""
    register("content-hash", f"{_PIPELINE}.dedup:ContentHashDeduplicator")  # type: ignore[operator]


@hookimpl
def register_detail_depth_resolvers(register: object) -> None:
    """Stage 5: the deepest rendering of each node that fits."""
    register("max-depth", f"{_PIPELINE}.depth:MaxDepthResolver")  # type: ignore[operator]


@hookimpl
def register_fragment_scorers(register: object) -> None:
    """Stage 6: relevance, hierarchy, quality and recency, weighted."""
    register("weighted-composite", f"{_PIPELINE}.scorer:WeightedCompositeScorer")  # type: ignore[operator]


@hookimpl
def register_budget_packers(register: object) -> None:
    """Stage 7: greedy knapsack with depth fallback."""
    register("greedy-knapsack", f"{_PIPELINE}.packer:GreedyKnapsackPacker")  # type: ignore[operator]


@hookimpl
def register_fragment_orderers(register: object) -> None:
    """Stage 8: relevance, topological or relevance-coherence order."""
    register("relevance-coherence", f"{_PIPELINE}.orderer:RelevanceCoherenceOrderer")  # type: ignore[operator]


@hookimpl
def register_preamble_generators(register: object) -> None:
    """Stage 9: provenance preamble within preamble-max-tokens."""
    register("provenance", f"{_PIPELINE}.preamble:ProvenancePreambleGenerator")  # type: ignore[operator]


@hookimpl
def register_skeleton_compressors(register: object) -> None:
    """Stage 10: depth 0-1 skeleton of a parent plan's context."""
    register("depth-reduction", f"{_PIPELINE}.skeleton:DepthReductionCompressor")  # type: ignore[operator]


@hookimpl
def register_tokenizers(register: object) -> None:
    """OpenAI's cl100k and o200k vocabularies, offline, through bpe-openai."""
    register("cl100k", f"{_PIPELINE}.tokenizers:Cl100kTokenizer")  # type: ignore[operator]
    register("o200k", f"{_PIPELINE}.tokenizers:O200kTokenizer")  # type: ignore[operator]
