"""ContextService: everything between a question and an AssembledContext.

``assemble(request, project=…)`` resolves what the project's context view
lets this phase see, opens the project's index for reading, builds the
scoped BackendSet (text, graph, vector when there is one, and the node
store), chooses the tokenizer for the target model and the ten pipeline
components through the scope chain plan > project > global > built-in,
takes the enabled strategies, runs the pipeline, checks the result against
the view (paths, file and total sizes) and the files on disk, and records
the assembly in the history that ``context inspect`` and ``query_history``
read.

The budget is a hard ceiling, counted with the real tokenizer, preamble
included. Everything the service removes after the pipeline ran (a policy
exclusion, a size limit) only ever shrinks the context.
"""

from __future__ import annotations

import dataclasses
import time
from collections import OrderedDict
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime
from functools import cached_property
from typing import Any

from cleveragents.errors import CleverAgentsError, NotFoundError, ValidationError
from cleveragents.models.context import (
    AssembledContext,
    ContextFragment,
    ContextRequest,
    TemporalScope,
)
from cleveragents.models.ids import new_ulid, utcnow
from cleveragents.models.plans import Decision, Plan
from cleveragents.protocols.backends import GraphResult, TextResult
from cleveragents.registry import import_reference
from cleveragents_acms.context.budget import (
    DEFAULT_BUDGET,
    AdaptiveAssembler,
    BudgetBreakdown,
    request_key,
    tool_definition_tokens,
)
from cleveragents_acms.context.finish import build_report, files_changed, finish
from cleveragents_acms.context.history import AssemblyReport, HistoryStore
from cleveragents_acms.context.nodes import FreshnessChecker, NodeRenderer, NodeStoreSource
from cleveragents_acms.context.policy import (
    PHASES,
    ContextView,
    PolicyStore,
    ProjectContextPolicy,
)
from cleveragents_acms.context.recording import RecordingPipeline
from cleveragents_acms.context.scope import (
    OpenVectorIndexes,
    PathFilteredText,
    PathFilteredVector,
    ProjectReaders,
    ProjectScope,
    resolve_scope,
)
from cleveragents_acms.context.tiers import ContextTierService, TierBudget
from cleveragents_acms.indexing.project_index import NO_BACKEND

__all__ = ["AssemblyOutcome", "ContextService"]

_PLANS_KEPT = 256
#: Offered for every assembly made for a plan (it reads the plan's decisions).
PLAN_DECISIONS = "plan-decision-context"


@dataclass(frozen=True)
class AssemblyOutcome:
    """An assembled context with the report of how it was made."""

    context: AssembledContext
    report: AssemblyReport
    budget: BudgetBreakdown


class ContextService:
    """Assembles contexts for a project's questions; also owns policies, tiers and history.

    :param database: the core database (``cleveragents.storage.database.Database``).
    :param registry: the plugin registry (strategies, stages, backends, tokenizers).
    :param config: the configuration chain (``cleveragents.config.Config``).
    """

    def __init__(self, database: Any, registry: Any, config: Any) -> None:
        self.database = database
        self.registry = registry
        self.config = config
        self.policies = PolicyStore(database)
        self.history = HistoryStore(database)
        threshold = float(config.get("context.budget.refresh-threshold", 0.30))
        self.adaptive = AdaptiveAssembler(threshold)
        self._cached_reports: dict[str, AssemblyReport] = {}
        self._vectors = OpenVectorIndexes()
        #: plan id -> the last context assembled for it (parents of child plans).
        #: plan id -> its last context and plan context (for child plans), newest last.
        self._plans: OrderedDict[str, tuple[AssembledContext, dict[str, Any]]] = OrderedDict()

    def close(self) -> None:
        """Release the vector indexes kept open between assemblies."""
        self._vectors.close()

    @cached_property
    def tiers(self) -> ContextTierService:
        return ContextTierService(self.database, self.config, budget_for=self.tier_budget)

    def tier_budget(self, project: str) -> TierBudget:
        settings = self.policies.get(project).settings
        return TierBudget.from_config(
            self.config,
            hot_max_tokens=settings.hot_max_tokens,
            warm_max_decisions=settings.warm_max_decisions,
            cold_max_decisions=settings.cold_max_decisions,
        )

    # -- the public API ---------------------------------------------------------------

    def assemble(
        self,
        request: ContextRequest,
        *,
        project: str,
        budget: int | None = None,
        model: str | None = None,
        plan: Plan | None = None,
        phase: str = "default",
        parent_context: AssembledContext | None = None,
        decisions: Sequence[Decision] = (),
    ) -> AssembledContext:
        """The context for ``request`` in ``project``, within ``budget`` tokens.

        With a ``plan``, its phase picks the context view and its pipeline
        overrides win; a child plan (``parent_plan_id``) inherits a skeleton of
        the context last assembled for its parent here, unless ``parent_context``
        is given. ``decisions`` (the plan's own) reach the plan-decision-context
        strategy, with those of the ancestors.

        Re-assembles only when the budget moved by more than
        ``context.budget.refresh-threshold`` since the last assembly of the same
        request (or the index or the files it came from changed).

        :raises ValidationError: empty request, budget <= 0, unknown phase or depth.
        :raises NotFoundError: unknown project, strategy or component; no index.
        """
        return self.run(
            request,
            project=project,
            budget=budget,
            model=model,
            plan=plan,
            phase=phase,
            parent_context=parent_context,
            decisions=decisions,
        ).context

    def run(
        self,
        request: ContextRequest,
        *,
        project: str,
        budget: int | None = None,
        model: str | None = None,
        plan: Plan | None = None,
        phase: str = "default",
        parent_context: AssembledContext | None = None,
        decisions: Sequence[Decision] = (),
        dry_run: bool = False,
        reuse: bool = True,
    ) -> AssemblyOutcome:
        """Like :meth:`assemble`, returning the report too; ``dry_run`` records nothing."""
        self._validate(request, budget, phase)
        if plan is not None and phase == "default" and plan.phase in PHASES:
            phase = plan.phase
        policy = self.policies.get(project)
        view = policy.resolve_view(phase)
        scope = resolve_scope(self.database, self.registry, self.config, project, view)
        for_plan = plan is not None or bool(decisions)
        request = self._apply_settings(request, policy, for_plan=for_plan)
        strategies, strategy_notes = self._strategies(request, policy, for_plan=for_plan)
        parent = self._plans.get(plan.parent_plan_id) if plan and plan.parent_plan_id else None
        if parent_context is None and parent is not None:
            parent_context = parent[0]
        plan_context: dict[str, Any] = {
            "plan": plan,
            "plan_id": plan.plan_id if plan else None,
            "parent_context": parent_context,
            "parent": parent[1] if parent is not None else None,
            "decisions": list(decisions),
            "focus": list(request.focus),
            "phase": phase,
        }
        breakdown, budget_notes = self.budget_for(
            project=project, budget=budget, model=model, with_skeleton=parent_context is not None
        )
        counting_note = self._counting(model)[2]
        if counting_note:
            budget_notes.append(counting_note)
        parent_hash = parent_context.context_hash if parent_context is not None else ""
        decided = ",".join(d.decision_id for d in decisions)
        key = request_key(
            project, request, phase, model, plan.plan_id if plan else "", parent_hash, decided
        )
        stamp = f"{scope.stamp}|{policy.model_dump_json()}"
        cached = self._cached_reports.get(key)
        if not reuse or (cached is not None and files_changed(cached, scope)):
            self.adaptive.forget(key)
        built: list[AssemblyOutcome] = []

        def build(total: int) -> AssembledContext:
            built.append(
                self._assemble(
                    request,
                    project=project,
                    policy=policy,
                    view=view,
                    scope=scope,
                    strategies=strategies,
                    breakdown=breakdown,
                    total=total,
                    model=model,
                    plan=plan,
                    phase=phase,
                    plan_context=plan_context,
                    notes=[*scope.notes, *strategy_notes, *budget_notes],
                    dry_run=dry_run,
                )
            )
            return built[-1].context

        context, fresh = self.adaptive.assemble(key, breakdown.assembly_budget, build, stamp=stamp)
        if fresh:
            result = built[-1]
            self._cached_reports[key] = result.report
        else:
            previous = self._cached_reports[key]
            report = dataclasses.replace(
                previous,
                assembly_id=new_ulid(),
                created_at=utcnow().isoformat(),
                budget=breakdown.to_dict(),
                totals={**previous.totals, "budget": context.budget.available_tokens},
                cached=True,
                dry_run=dry_run,
            )
            result = AssemblyOutcome(context, report, breakdown)
        if plan is not None:
            self._plans[plan.plan_id] = (result.context, plan_context)
            self._plans.move_to_end(plan.plan_id)
            while len(self._plans) > _PLANS_KEPT:
                self._plans.popitem(last=False)
        if not dry_run:
            self.history.record(result.report)
        return result

    def budget_for(
        self,
        *,
        project: str | None = None,
        budget: int | None = None,
        model: str | None = None,
        with_skeleton: bool = False,
    ) -> tuple[BudgetBreakdown, list[str]]:
        """The budget an assembly gets, and notes about how it was chosen."""
        if budget is not None:
            return BudgetBreakdown.explicit(budget, model), []
        if model is None:
            return BudgetBreakdown(budget=DEFAULT_BUDGET, source="default"), []
        settings = self.policies.get(project).settings if project else None
        ratio = self._skeleton_ratio(settings) if with_skeleton else 0.0
        breakdown = BudgetBreakdown.for_model(
            model,
            tool_definitions=self._tool_tokens(model),
            skeleton_ratio=ratio,
            soft_cap=settings.hot_max_tokens if settings is not None else None,
        )
        if breakdown is None:
            note = (
                f"the context window of model '{model}' is unknown; "
                f"used the default budget of {DEFAULT_BUDGET} tokens (give --budget)"
            )
            return BudgetBreakdown(budget=DEFAULT_BUDGET, source="default", model=model), [note]
        return breakdown, []

    def expand(
        self, uri: str, *, project: str, depth: int | str = 9, phase: str = "default"
    ) -> ContextFragment:
        """Any node of the project as a fragment with provenance (e.g. one the budget dropped).

        ``uri`` is a node URI, or what ``--focus`` takes: ``PATH``, ``PATH#QUALNAME``,
        ``PATH:LINE`` (the innermost node there) or a name; a name several nodes
        have is an error that lists them.
        """
        from cleveragents_acms.strategies._anchors import is_node_uri

        if not uri or not uri.strip():
            raise ValidationError("give the URI of a node (from `context assemble`'s dropped list)")
        target = uri.strip()
        policy = self.policies.get(project)
        view = policy.resolve_view(phase)
        scope = resolve_scope(self.database, self.registry, self.config, project, view)
        readers = ProjectReaders(self.registry, self.config, project, vectors=self._vectors)
        try:
            source = self._node_source(readers, scope, view, policy, self._tokenizer(None)[1])
            if not is_node_uri(target):
                target = _node_named(target, readers, scope, source, project)
            stored = readers.nodes.get(target)
            numeric = self._depth_number(depth, stored.node.uko_type if stored else None)
            fragment = source.fragment(target, numeric, relevance=1.0, strategy="expand")
        finally:
            readers.close()
        if fragment is None:
            raise NotFoundError(
                f"no node {uri} in project '{project}' (or its context view excludes it)",
                details={"uri": uri, "project": project},
            )
        return fragment

    def search(
        self, query: str, *, project: str, limit: int = 20, phase: str = "default"
    ) -> list[TextResult]:
        """The project's text index searched for ``query`` (BM25, identifier-aware), best
        first: what strategies see, so only resources and paths the phase's view allows."""
        if not query or not query.strip():
            raise ValidationError("give words to search for")
        if limit < 1:
            raise ValidationError(f"limit must be at least 1, got {limit}")
        with self._store_of(project, phase, "text", "text index") as (text, scope, view):
            return PathFilteredText(text, view).search(
                query.strip(), scope=scope.resources, max_results=limit
            )

    def sparql(
        self,
        query: str,
        *,
        project: str,
        include_history: bool = False,
        at: datetime | None = None,
    ) -> GraphResult:
        """A SPARQL query over the project's knowledge graph, restricted to the resources
        the default view allows (``include_history``: retired node versions too; ``at``:
        the graph as it stood then, each node version valid at that time under its node's
        URI)."""
        if not query or not query.strip():
            raise ValidationError("give a SPARQL query")
        if at is not None and include_history:
            raise ValidationError("ask for the graph at a time or with its history, not both")
        with self._store_of(project, "default", "graph", "knowledge graph") as (graph, scope, _):
            if at is not None:
                if not callable(getattr(graph, "sparql_at_time", None)):
                    raise ValidationError(
                        f"{type(graph).__name__} keeps no revisions to query at a time"
                    )
                return graph.sparql_at_time(query, at, scope=scope.resources)
            history = {"include_history": True} if include_history else {}
            return graph.sparql_query(query, scope=scope.resources, **history)

    @contextmanager
    def _store_of(
        self, project: str, phase: str, store: str, label: str
    ) -> Iterator[tuple[Any, ProjectScope, ContextView]]:
        """One of the project's stores opened for reading (``store``: an attribute of
        :class:`ProjectReaders`), with the scope and view of ``phase``; a missing store
        is a NotFoundError that says why."""
        view = self.policies.get(project).resolve_view(phase)
        scope = resolve_scope(self.database, self.registry, self.config, project, view)
        readers = ProjectReaders(self.registry, self.config, project, with_vectors=False)
        try:
            handle = getattr(readers, store)
            if handle is None:
                off = self.config.get(f"index.{store}.backend") == NO_BACKEND
                raise NotFoundError(
                    "; ".join(readers.notes)
                    or f"project '{project}' has no {label}"
                    + (f' (index.{store}.backend is "{NO_BACKEND}")' if off else "")
                )
            yield handle, scope, view
        finally:
            readers.close()

    def tokenizer_name(self, model: str | None) -> str:
        return self._tokenizer(model)[0]

    # -- one assembly -------------------------------------------------------------------

    def _assemble(
        self,
        request: ContextRequest,
        *,
        project: str,
        policy: ProjectContextPolicy,
        view: ContextView,
        scope: ProjectScope,
        strategies: list[Any],
        breakdown: BudgetBreakdown,
        total: int,
        model: str | None,
        plan: Plan | None,
        phase: str,
        plan_context: dict[str, Any],
        notes: list[str],
        dry_run: bool,
    ) -> AssemblyOutcome:
        from cleveragents_acms.backends.scoped import make_backend_set
        from cleveragents_acms.ontology.levels import DetailLevelMapRegistry
        from cleveragents_acms.pipeline.config import PipelineConfigResolver

        started = time.perf_counter()
        tokenizer_name, tokenizer = self._tokenizer(model)
        config = PipelineConfigResolver(self.registry, self.config).resolve(
            plan=plan, project=policy.settings.pipeline or None
        )
        if policy.settings.skeleton_ratio is not None:
            config.settings["skeleton-compressor"]["skeleton-ratio"] = (
                policy.settings.skeleton_ratio
            )
        readers = ProjectReaders(self.registry, self.config, project, vectors=self._vectors)
        try:
            source = self._node_source(readers, scope, view, policy, tokenizer)
            backends = make_backend_set(
                readers.text, readers.vector, readers.graph, scope.resources
            )
            config = self._with_dedup_embedder(config, readers)
            notes = [*notes, *_focus_notes(request, backends, project)]
            backends = dataclasses.replace(
                backends,
                text=PathFilteredText(backends.text, view)
                if backends.text and _paths(view)
                else backends.text,
                vector=PathFilteredVector(backends.vector, view)
                if backends.vector and _paths(view)
                else backends.vector,
                nodes=source,
            )
            pipeline = RecordingPipeline(
                config,
                strategies,
                tokenizer=tokenizer,
                renderer=NodeRenderer(source),
                detail_level_maps=DetailLevelMapRegistry.from_registry(self.registry),
            )
            with _published(plan_context):
                context = pipeline.assemble(request, backends, total, plan_context)
            context = finish(
                context, source, view, tokenizer, pipeline, total, self._preamble_max_tokens()
            )
            context = context.model_copy(
                update={
                    "notes": tuple(
                        dict.fromkeys([*notes, *readers.notes, *context.notes, *source.notes])
                    )
                }
            )
        finally:
            readers.close()
        report = build_report(
            context,
            pipeline,
            request=request,
            project=project,
            breakdown=breakdown,
            model=model,
            tokenizer=tokenizer_name,
            phase=phase,
            scope=scope,
            ms=round((time.perf_counter() - started) * 1000, 1),
            dry_run=dry_run,
        )
        return AssemblyOutcome(context, report, breakdown)

    # -- building blocks ---------------------------------------------------------------

    def _validate(self, request: ContextRequest, budget: int | None, phase: str) -> None:
        if not isinstance(request, ContextRequest):
            raise ValidationError("expected a ContextRequest")
        if request.is_empty:
            raise ValidationError("the request is empty: give a question or --focus")
        if budget is not None and (
            isinstance(budget, bool) or not isinstance(budget, int) or budget <= 0
        ):
            raise ValidationError(f"budget must be a positive number of tokens, got {budget!r}")
        if phase not in PHASES:
            raise ValidationError(f"unknown phase '{phase}' (phases: {', '.join(PHASES)})")
        if isinstance(request.depth, str):
            self._depth_number(request.depth, None)

    def _depth_number(self, depth: int | str, uko_type: str | None) -> int:
        """A depth or named level as a number (named levels checked against every domain)."""
        from cleveragents_acms.ontology.levels import DetailLevelMapRegistry

        levels = DetailLevelMapRegistry.from_registry(self.registry)
        if uko_type:
            return levels.depth_of(depth, levels.domain_of(uko_type))
        if isinstance(depth, int) or str(depth).strip().isdigit():
            return levels.depth_of(depth)
        names: list[str] = []
        for domain in levels.domains():
            try:
                return levels.depth_of(depth, domain)
            except ValidationError:
                names.extend(levels.levels_for(domain))
        valid = ", ".join(sorted(set(names)))
        raise ValidationError(f"unknown detail level '{depth}' (valid: {valid}, or 0-9)")

    def _apply_settings(
        self, request: ContextRequest, policy: ProjectContextPolicy, *, for_plan: bool = False
    ) -> ContextRequest:
        """The project's defaults for what the request leaves unset.

        The project's preferred strategies are what a request that names none runs, as if
        it named them (with plan-decision-context, for a plan's assembly).
        """
        settings = policy.settings
        given = request.model_fields_set
        update: dict[str, Any] = {}
        if not request.preferred_strategies and settings.strategies:
            known = PLAN_DECISIONS in self.registry.strategies
            plan_strategies = [PLAN_DECISIONS] if for_plan and known else []
            named = dict.fromkeys([*settings.strategies, *plan_strategies])
            update["preferred_strategies"] = tuple(named)
        if "breadth" not in given and settings.default_breadth is not None:
            update["breadth"] = settings.default_breadth
        if "depth" not in given and settings.default_depth is not None:
            update["depth"] = settings.default_depth
        if "temporal" not in given and settings.temporal_scope is not None:
            update["temporal"] = TemporalScope(settings.temporal_scope)
        return request.model_copy(update=update) if update else request

    def _strategies(
        self, request: ContextRequest, policy: ProjectContextPolicy, *, for_plan: bool = False
    ) -> tuple[list[Any], list[str]]:
        """The strategies to offer the selector.

        A request that names strategies (``--strategy``, ``strategies=``) gets
        exactly those, plus the strategies after each on the spec's fallback
        path (the selector uses one only as a stand-in for a named strategy
        that lacks a backend); a project's preferred strategies count as named
        (:meth:`_apply_settings`). Otherwise: ``context.strategies.enabled``,
        then plan-decision-context when the assembly is for a plan (it declines
        without decisions).
        """
        from cleveragents_acms.pipeline.selector import FALLBACK_CHAIN

        view = self.registry.strategies
        valid = sorted(view)
        for name in (*request.preferred_strategies, *policy.settings.strategies):
            if name not in view:
                raise NotFoundError(
                    f"unknown strategy '{name}' "
                    f"(available: {', '.join(valid) or 'none installed'})",
                    details={"strategy": name, "available": valid},
                )
        if request.preferred_strategies:
            named = list(request.preferred_strategies)
            stand_ins = [
                later
                for name in named
                if name in FALLBACK_CHAIN
                for later in FALLBACK_CHAIN[FALLBACK_CHAIN.index(name) + 1 :]
            ]
            wanted = list(dict.fromkeys([*named, *stand_ins]))
        else:
            enabled = self.config.get("context.strategies.enabled") or []
            plan_strategies = [PLAN_DECISIONS] if for_plan and PLAN_DECISIONS in view else []
            wanted = list(dict.fromkeys([*enabled, *plan_strategies]))
        notes: list[str] = []
        strategies: list[Any] = []
        for name in wanted:
            if name not in view:
                notes.append(f"enabled strategy {name} is not installed")
                continue
            try:
                strategies.append(view[name])
            except CleverAgentsError as exc:
                notes.append(f"strategy {name} could not be loaded: {exc.message}")
        if not valid:
            notes.append("no context strategies are installed")
        return strategies, notes

    def _with_dedup_embedder(self, config: Any, readers: ProjectReaders) -> Any:
        """The pipeline config with the project's embedder for ``semantic`` deduplication.

        The embedder is the one the project's vectors were built with, else the
        installation's choice (``index.embedding.provider``). Without one the
        deduplicator falls back to content-hash and notes it.
        """
        from cleveragents_acms.indexing.vectors import choose_embedder
        from cleveragents_acms.pipeline.dedup import ContentHashDeduplicator

        deduplicator = config.fragment_deduplicator
        mode = config.settings.get("fragment-deduplicator", {}).get("dedup-strategy")
        if (
            mode != "semantic"
            or not isinstance(deduplicator, ContentHashDeduplicator)
            or deduplicator.embed is not None
        ):
            return config
        embedder = getattr(readers.vector, "embedder", None)
        if embedder is None:
            try:
                chosen = choose_embedder(self.registry, self.config)
            except CleverAgentsError:
                chosen = None
            embedder = chosen[1] if chosen is not None else None
        if embedder is None:
            return config
        return config.replace(
            fragment_deduplicator=ContentHashDeduplicator(
                mode=deduplicator.mode,
                embed=embedder.embed,
                similarity_threshold=deduplicator.similarity_threshold,
            )
        )

    def _tokenizer(self, model: str | None) -> tuple[str, Any]:
        name, tokenizer, _ = self._counting(model)
        return name, tokenizer

    def _counting(self, model: str | None) -> tuple[str, Any, str | None]:
        """The tokenizer that counts as ``model`` does: the installed one whose ``models``
        prefix matches the model's name longest; else cl100k, with a note saying so."""
        from cleveragents_acms.pipeline.tokenizers import claimed_tokenizer, get_tokenizer

        view = self.registry.tokenizers
        name = claimed_tokenizer(model, _tokenizer_claims(view)) if model else "cl100k"
        if name is not None and name in view:
            try:
                return name, view[name], None
            except CleverAgentsError as exc:
                note = f"tokenizer {name} for model '{model}' could not be loaded ({exc.message})"
        elif name == "cl100k":
            return name, get_tokenizer(name), None
        else:
            note = f"no installed tokenizer counts tokens as model '{model}' does"
        return "cl100k", get_tokenizer("cl100k"), note + "; counted with cl100k instead"

    def _tool_tokens(self, model: str | None) -> int:
        tools: dict[str, Any] = {}
        view = self.registry.tools
        for name in view:
            try:
                tools[name] = view[name]
            except CleverAgentsError:
                continue
        return tool_definition_tokens(tools, self._tokenizer(model)[1].count)

    def _preamble_max_tokens(self) -> int:
        return int(self.config.get("context.fusion.preamble-max-tokens", 200))

    def _skeleton_ratio(self, settings: Any) -> float:
        if settings is not None and settings.skeleton_ratio is not None:
            return float(settings.skeleton_ratio)
        return float(self.config.get("context.budget.skeleton-ratio", 0.15))

    def _node_source(
        self,
        readers: ProjectReaders,
        scope: ProjectScope,
        view: ContextView,
        policy: ProjectContextPolicy,
        tokenizer: Any,
    ) -> NodeStoreSource:
        freshness = FreshnessChecker(self.database, scope.roots, self._analyzers)
        return NodeStoreSource(
            readers.nodes,
            scope.resources,
            tokenizer=tokenizer,
            freshness=freshness,
            refresh=policy.settings.auto_refresh,
            path_allowed=view.allows_path if _paths(view) else None,
            file_allowed=view.allows_file_size if view.max_file_size else None,
        )

    def _analyzers(self) -> list[Any]:
        """The registered analyzers, most specific first (to re-analyse changed files)."""
        analyzers = []
        for registration in self.registry.analyzers.registrations():
            try:
                analyzers.append(registration.resolve())
            except CleverAgentsError:
                continue
        return sorted(analyzers, key=lambda a: -int(getattr(a, "specificity", 0)))


@contextmanager
def _published(plan_context: dict[str, Any]) -> Iterator[None]:
    """Let strategies that read the plan context in ``can_handle`` see it (plan decisions)."""
    if plan_context.get("plan") is None and not plan_context.get("decisions"):
        yield
        return
    try:
        from cleveragents_acms.strategies.plan_decisions import publish_plan_context
    except ImportError:
        yield
        return
    with publish_plan_context(plan_context):
        yield


def _paths(view: ContextView) -> bool:
    return bool(view.include_paths or view.exclude_paths)


def _tokenizer_claims(view: Any) -> dict[str, tuple[str, ...]]:
    """Tokenizer name -> the model-name prefixes it claims (``models``), read from its
    class when it is not loaded yet: loading a vocabulary can take a tenth of a second."""
    claims: dict[str, tuple[str, ...]] = {}
    for registration in view.registrations():
        target: Any = registration.target
        try:
            if registration.is_resolved:
                target = registration.resolve()
            elif registration.is_lazy:
                target = import_reference(str(target))
        except Exception:  # a broken plugin claims nothing; using it reports the error
            continue
        models = getattr(target, "models", ())
        if isinstance(models, str):
            models = (models,)
        claims[registration.name] = tuple(m for m in models if isinstance(m, str))
    return claims


def _node_named(item: str, readers: Any, scope: ProjectScope, source: Any, project: str) -> str:
    """The one node ``item`` names, resolved as a focus item is (see ``expand``)."""
    from cleveragents_acms.backends.scoped import make_backend_set
    from cleveragents_acms.strategies._anchors import resolve_focus
    from cleveragents_acms.strategies._graph import GraphView

    backends = dataclasses.replace(
        make_backend_set(readers.text, None, readers.graph, scope.resources), nodes=source
    )
    view = GraphView(backends.graph, backends.scope) if backends.graph is not None else None
    found = sorted(resolve_focus([item], view, backends))
    if not found:
        raise NotFoundError(
            f"no node, file or name '{item}' in project '{project}': give a node URI, "
            "PATH, PATH#QUALNAME, PATH:LINE or a name",
            details={"uri": item, "project": project},
        )
    if len(found) > 1:
        raise ValidationError(
            f"'{item}' names {len(found)} nodes in project '{project}'; give one of: "
            + " ".join(found),
            details={"uri": item, "project": project, "candidates": found},
        )
    return found[0]


def _focus_notes(request: ContextRequest, backends: Any, project: str) -> list[str]:
    """A note for each --focus item that names nothing the project's scope holds."""
    if not request.focus:
        return []
    from cleveragents_acms.strategies._anchors import unresolved_focus
    from cleveragents_acms.strategies._graph import GraphView

    view = GraphView(backends.graph, backends.scope) if backends.graph is not None else None
    return [
        f"focus '{item}' matches no node, file or name in project '{project}'"
        for item in unresolved_focus(request.focus, view, backends)
    ]
