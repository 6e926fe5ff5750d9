"""Hook specifications: one hook per extension slot, plus lifecycle and event hooks.

**Registration hooks** receive a ``register`` callback, as ``llm`` does, so their
signatures stay stable while what can be registered grows::

    @hookimpl
    def register_context_strategies(register):
        register("simple-keyword", "my_plugin.strategies:SimpleKeyword")

``register(name, component)`` takes the component itself, or a
``"module:attribute"`` string that is imported only when the component is first
used: keep heavy imports (tantivy, faiss, torch …) behind such strings so that
``cleveragents --help`` and ``plugins list`` stay fast. An attribute that is a
class is instantiated with no arguments, except in backend slots, which register
classes. Names are unique per slot; every component is checked against the
slot's Protocol (:mod:`cleveragents.protocols`) when it is resolved, and a
violation is reported naming the plugin.

A registration hook is called once per process, when the registry is built,
with each plugin's implementation called in isolation: one that raises marks
that plugin as failed and the others still register.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol

from cleveragents import hookspec

if TYPE_CHECKING:
    import click

    from cleveragents.config import Config
    from cleveragents.models.resources import Resource

__all__ = ["Register"]


class Register(Protocol):
    """The callback handed to every registration hook."""

    def __call__(self, name: str, component: object, /) -> None: ...


# -- Context Assembly Pipeline: one hook per stage ------------------------------


@hookspec
def register_strategy_selectors(register: Register) -> None:
    """Register strategy selectors (pipeline stage 1, slot ``strategy-selector``).

    Components satisfy :class:`~cleveragents.protocols.StrategySelectorProtocol`.
    Called when the registry is built; the one used is chosen by
    ``context.pipeline.strategy-selector`` through the scope chain
    plan > project > global > built-in.
    """


@hookspec
def register_budget_allocators(register: Register) -> None:
    """Register budget allocators (stage 2, slot ``budget-allocator``).

    Components satisfy :class:`~cleveragents.protocols.BudgetAllocatorProtocol`;
    chosen by ``context.pipeline.budget-allocator``.
    """


@hookspec
def register_strategy_executors(register: Register) -> None:
    """Register strategy executors (stage 3, slot ``strategy-executor``).

    Components satisfy :class:`~cleveragents.protocols.StrategyExecutorProtocol`;
    chosen by ``context.pipeline.strategy-executor``.
    """


@hookspec
def register_fragment_deduplicators(register: Register) -> None:
    """Register fragment deduplicators (stage 4, slot ``fragment-deduplicator``).

    Components satisfy :class:`~cleveragents.protocols.FragmentDeduplicatorProtocol`;
    chosen by ``context.pipeline.fragment-deduplicator``.
    """


@hookspec
def register_detail_depth_resolvers(register: Register) -> None:
    """Register detail-depth resolvers (stage 5, slot ``detail-depth-resolver``).

    Components satisfy :class:`~cleveragents.protocols.DetailDepthResolverProtocol`;
    chosen by ``context.pipeline.detail-depth-resolver``.
    """


@hookspec
def register_fragment_scorers(register: Register) -> None:
    """Register fragment scorers (stage 6, slot ``fragment-scorer``).

    Components satisfy :class:`~cleveragents.protocols.FragmentScorerProtocol`;
    chosen by ``context.pipeline.fragment-scorer``.
    """


@hookspec
def register_budget_packers(register: Register) -> None:
    """Register budget packers (stage 7, slot ``budget-packer``).

    Components satisfy :class:`~cleveragents.protocols.BudgetPackerProtocol`;
    chosen by ``context.pipeline.budget-packer``.
    """


@hookspec
def register_fragment_orderers(register: Register) -> None:
    """Register fragment orderers (stage 8, slot ``fragment-orderer``).

    Components satisfy :class:`~cleveragents.protocols.FragmentOrdererProtocol`;
    chosen by ``context.pipeline.fragment-orderer``.
    """


@hookspec
def register_preamble_generators(register: Register) -> None:
    """Register preamble generators (stage 9, slot ``preamble-generator``).

    Components satisfy :class:`~cleveragents.protocols.PreambleGeneratorProtocol`;
    chosen by ``context.pipeline.preamble-generator``.
    """


@hookspec
def register_skeleton_compressors(register: Register) -> None:
    """Register skeleton compressors (stage 10, slot ``skeleton-compressor``).

    Components satisfy :class:`~cleveragents.protocols.SkeletonCompressorProtocol`;
    chosen by ``context.pipeline.skeleton-compressor``.
    """


# -- Retrieval and knowledge ----------------------------------------------------


@hookspec
def register_context_strategies(register: Register) -> None:
    """Register context strategies (slot ``strategy``), e.g. ``simple-keyword``.

    Components satisfy :class:`~cleveragents.protocols.ContextStrategy`. The
    strategy selector polls every registered strategy's ``can_handle`` on each
    assembly; ``context.strategies.enabled`` limits which are considered.
    """


@hookspec
def register_analyzers(register: Register) -> None:
    """Register UKO analyzers (slot ``analyzer``) that turn files into UKO nodes.

    Components satisfy :class:`~cleveragents.protocols.UKOAnalyzer`. During
    indexing, each file goes to the most specific analyzer whose ``supports``
    accepts it.
    """


@hookspec
def register_vocabularies(register: Register) -> None:
    """Register UKO vocabularies (slot ``vocabulary``): Turtle files.

    The component is a :class:`pathlib.Path` (or ``"module:attribute"`` naming
    one) of an existing ``.ttl`` file. Loaded by the UKO loader after the
    built-in layers, so a vocabulary may extend any of them.
    """


@hookspec
def register_detail_level_maps(register: Register) -> None:
    """Register DetailLevelMaps (slot ``detail-level-map``) for a UKO domain.

    Components satisfy :class:`~cleveragents.protocols.DetailLevelMapLike`:
    ``domain`` (a prefix such as ``uko-tf``), ``parent`` (the map it inherits
    from) and ``levels`` (named level -> depth >= 0; insertion may shift levels past 9).
    """


@hookspec
def register_text_backends(register: Register) -> None:
    """Register text-search backend classes (slot ``text-backend``).

    The class satisfies :class:`~cleveragents.protocols.TextBackend` and
    :class:`~cleveragents.protocols.TextIndexBackend` and is built as
    ``cls(location, **options)`` per project; chosen by ``index.text.backend``.
    """


@hookspec
def register_vector_backends(register: Register) -> None:
    """Register vector-search backend classes (slot ``vector-backend``).

    The class satisfies :class:`~cleveragents.protocols.VectorBackend` and
    :class:`~cleveragents.protocols.VectorIndexBackend`; chosen by
    ``index.vector.backend``.
    """


@hookspec
def register_graph_backends(register: Register) -> None:
    """Register knowledge-graph backend classes (slot ``graph-backend``).

    The class satisfies :class:`~cleveragents.protocols.GraphBackend` and
    :class:`~cleveragents.protocols.GraphIndexBackend`; chosen by
    ``index.graph.backend``.
    """


@hookspec
def register_embedders(register: Register) -> None:
    """Register embedders (slot ``embedder``) used to vectorise UKO nodes.

    Components satisfy :class:`~cleveragents.protocols.Embedder`; chosen by
    ``index.embedding.provider``. An embedder must not download at run time.
    """


@hookspec
def register_tokenizers(register: Register) -> None:
    """Register tokenizers (slot ``tokenizer``) that count tokens for budgets.

    Components satisfy :class:`~cleveragents.protocols.Tokenizer`; chosen per
    target model by the context system: the one whose ``models`` (model-name
    prefixes) matches the model's name longest.
    """


# -- Agents and execution --------------------------------------------------------


@hookspec
def register_sandbox_strategies(register: Register) -> None:
    """Register sandbox strategies (slot ``sandbox``), e.g. ``git_worktree``.

    Components satisfy :class:`~cleveragents.protocols.SandboxStrategy`; chosen
    per resource by its ``sandbox_strategy`` or globally by ``sandbox.strategy``.
    """


@hookspec
def register_llm_providers(register: Register) -> None:
    """Register LLM providers (slot ``llm-provider``).

    Components satisfy :class:`~cleveragents.protocols.AIProviderInterface`;
    looked up by ``provider_name`` when an actor names a model.
    """


@hookspec
def register_tools(register: Register) -> None:
    """Register tools (slot ``tool``) that actors may call, e.g. ``request_context``.

    Components satisfy :class:`~cleveragents.protocols.Tool`; the registered
    name is the tool's namespaced name (``builtin/context/request_context``).
    """


@hookspec
def register_lsp_servers(register: Register) -> None:
    """Register language servers (slot ``lsp-server``) to run as tools or analyzers.

    Components satisfy :class:`~cleveragents.protocols.LSPServerSpec`: the
    command that starts the server process and the languages it serves.
    """


@hookspec
def register_commands(cli: click.Group) -> None:
    """Add commands or groups to the ``cleveragents`` CLI (slot ``command``).

    Called on every invocation, before arguments are parsed, with the root
    :class:`click.Group`; call ``cli.add_command(...)``. Keep the module that
    defines the commands free of heavy imports: import inside the command body.
    Commands reach the host, configuration and database through
    :class:`cleveragents.cli.context.App` (``@pass_app``).
    """


# -- Lifecycle and events --------------------------------------------------------


@hookspec
def cleveragents_configure(config: Config) -> None:
    """Called once the configuration is loaded, before a command that needs it runs.

    Read settings and set up process-wide state here, not at import time.
    """


@hookspec
def cleveragents_unconfigure(config: Config) -> None:
    """Called once at process exit after :func:`cleveragents_configure` ran; release resources."""


@hookspec
def cleveragents_resource_added(resource: Resource, project: str | None, app: Any) -> None:
    """Called after ``resource add`` or ``project link-resource`` stored a resource.

    The context system indexes the resource here. ``project`` is the project it
    was linked to, if any; ``app`` is the CLI's :class:`~cleveragents.cli.context.App`.
    An exception is reported to the user and leaves the stored resource intact.
    """


@hookspec
def cleveragents_resource_removed(resource: Resource, app: Any) -> None:
    """Called after a resource was removed; drop what was derived from it (indexes)."""


@hookspec
def cleveragents_resource_indexed(resource: Resource, stats: dict[str, Any]) -> None:
    """Called when indexing of ``resource`` finished; ``stats`` holds counts and timings."""


@hookspec
def cleveragents_plan_phase_changed(plan_id: str, old_phase: str | None, new_phase: str) -> None:
    """Called when a plan moves between lifecycle phases (strategize, execute, apply …)."""
