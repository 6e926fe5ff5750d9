"""The Context Assembly Pipeline: the mediator that runs the ten stages for every request.

Stages never talk to each other; the pipeline passes each one's output to
the next, inside :func:`cleveragents.assembly.use` so that stages can reach
the tokenizer, the renderer and their settings. Every stage runs on every
assembly. Stage 10 needs a parent context: with one (``plan_context`` with
a ``parent_context``) its skeleton is placed before the fragments; without
one it runs on an empty parent with a zero budget and contributes nothing.

Budget left unused by strategies that shared it is given to the leading
strategy, which runs once more before stages 4-8 run again (:meth:`_refill`).

The budget is hard. Token counts are recomputed with the assembly's
tokenizer (strategies may count differently), the skeleton and a share of
the preamble are reserved before packing, the preamble is generated for the
tokens the fragments left over and truncated if it overruns, and a last
check drops fragments rather than ever return
``total_tokens + preamble_tokens > available``.

``dropped`` lists what the packer left out or re-rendered shallower, then
what strategies wanted but could not fit in their share (``left_out`` of the
assembly's services) and the final context does not hold at that depth, in
the strategies' order of value, :data:`MAX_LEFT_OUT` of them at most.

A stage component that raises or breaks its contract (wrong type, over its
budget, an ordering that is not a permutation) is logged, replaced by the
built-in default of its slot for this assembly, and reported in ``notes``.
"""

from __future__ import annotations

import math
import time
from collections import Counter
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from cleveragents import assembly
from cleveragents.assembly import AssemblyServices
from cleveragents.errors import ValidationError
from cleveragents.models.context import (
    AssembledContext,
    ContextBudget,
    ContextFragment,
    ContextRequest,
    DroppedFragment,
    ScoredFragment,
)
from cleveragents.models.uko import DEPTH_FULL
from cleveragents.protocols.backends import BackendSet
from cleveragents_acms.pipeline._common import (
    ancestors,
    log,
    note,
    plan_attr,
    setting,
    tokenizer_truncate,
)
from cleveragents_acms.pipeline.config import PipelineConfig, default_pipeline_config
from cleveragents_acms.pipeline.defaults import default_component

if TYPE_CHECKING:
    from cleveragents.assembly import FragmentRenderer
    from cleveragents.protocols.pipeline import ContextStrategy
    from cleveragents.protocols.text import Tokenizer
    from cleveragents.protocols.uko import DetailLevelMapRegistry

__all__ = ["MAX_LEFT_OUT", "PREAMBLE_SHARE", "ContextAssemblyPipeline", "StageFailure"]

#: What strategies could not fit is listed in ``dropped`` up to this many nodes.
MAX_LEFT_OUT = 50

#: At most this share of the budget is held back for the preamble before packing.
PREAMBLE_SHARE = 0.10

Check = Callable[[Any], str | None]


class StageFailure(RuntimeError):
    """A built-in stage failed: there is no further fallback."""


class _ExactCounts:
    """Token counts by the assembly's tokenizer, cached by content."""

    def __init__(self, tokenizer: Tokenizer) -> None:
        self._count = tokenizer.count
        self._cache: dict[str, int] = {}

    def __call__(self, text: str) -> int:
        count = self._cache.get(text)
        if count is None:
            count = self._cache[text] = self._count(text)
        return count

    def fix(self, fragment: ContextFragment) -> ContextFragment:
        exact = self(fragment.content)
        if fragment.token_count == exact:
            return fragment
        return fragment.model_copy(update={"token_count": exact})

    def fix_all(self, fragments: Sequence[ContextFragment]) -> list[ContextFragment]:
        return [self.fix(f) for f in fragments]


class _CountingRenderer:
    """The caller's renderer, with token counts recomputed by the assembly's tokenizer."""

    def __init__(self, renderer: FragmentRenderer, counts: _ExactCounts) -> None:
        self._renderer = renderer
        self._counts = counts

    def render(self, fragment: ContextFragment, depth: int) -> ContextFragment | None:
        rendered = self._renderer.render(fragment, depth)
        return self._counts.fix(rendered) if isinstance(rendered, ContextFragment) else rendered


class ContextAssemblyPipeline:
    """Runs the ten stages of :class:`PipelineConfig` over one request at a time.

    :param config: the components (from :class:`PipelineConfigResolver`); the
        built-in defaults when omitted.
    :param strategies: the strategies the selector chooses from.
    :param tokenizer: counts the budget (default: cl100k).
    :param renderer: re-renders a fragment at another depth, for depth
        fallback and skeletons; without one, fragments that do not fit are dropped.
    :param detail_level_maps: handed to the packer (default: the built-in maps).
    """

    def __init__(
        self,
        config: PipelineConfig | None = None,
        strategies: Sequence[ContextStrategy] = (),
        *,
        tokenizer: Tokenizer | None = None,
        renderer: FragmentRenderer | None = None,
        detail_level_maps: DetailLevelMapRegistry | None = None,
    ) -> None:
        self._config = config or default_pipeline_config()
        self._strategies = tuple(strategies)
        self._tokenizer = tokenizer
        self._renderer = renderer
        self._detail_level_maps = detail_level_maps
        self._defaults: dict[str, Any] = {}

    @property
    def config(self) -> PipelineConfig:
        return self._config

    @property
    def strategies(self) -> tuple[ContextStrategy, ...]:
        return self._strategies

    @property
    def skeleton_compressor(self) -> Any:
        """Stage 10, for context inheritance between plans."""
        return self._config.skeleton_compressor

    @property
    def tokenizer(self) -> Tokenizer:
        if self._tokenizer is None:
            from cleveragents_acms.pipeline.tokenizers import get_tokenizer

            self._tokenizer = get_tokenizer("cl100k")
        return self._tokenizer

    @property
    def detail_level_maps(self) -> DetailLevelMapRegistry:
        if self._detail_level_maps is None:
            from cleveragents_acms.ontology.levels import DetailLevelMapRegistry

            self._detail_level_maps = DetailLevelMapRegistry()
        return self._detail_level_maps

    # -- the assembly ------------------------------------------------------------------------

    def assemble(
        self,
        request: ContextRequest,
        backends: BackendSet | None,
        budget: int | ContextBudget,
        plan_context: object = None,
    ) -> AssembledContext:
        """The context for ``request`` within ``budget`` (tokens, or a ContextBudget)."""
        if isinstance(budget, ContextBudget):
            context_budget = budget
        else:
            if isinstance(budget, bool) or not isinstance(budget, int) or budget < 1:
                raise ValidationError(f"budget must be a positive number of tokens, got {budget!r}")
            context_budget = ContextBudget(max_tokens=budget, reserved_tokens=0)
        available = context_budget.available_tokens
        limited = request.max_tokens is not None and request.max_tokens < available
        if limited:
            available = int(request.max_tokens or 0)
        backends = backends if backends is not None else BackendSet()
        counts = _ExactCounts(self.tokenizer)
        services = AssemblyServices(
            tokenizer=self.tokenizer,
            renderer=_CountingRenderer(self._renderer, counts) if self._renderer else None,
            settings=self._config.settings,
        )
        started = time.perf_counter()
        with assembly.use(services):
            for problem in self._config.problems.values():
                note(problem)
            if limited:
                note(f"the request limits the context to {available} tokens")
            result = self._assemble(
                request, backends, context_budget, available, plan_context, services, counts
            )
        log.debug(
            "context assembled",
            fragments=len(result.fragments),
            tokens=result.total_tokens + result.preamble_tokens,
            available=available,
            ms=round((time.perf_counter() - started) * 1000, 1),
        )
        return result

    def _assemble(
        self,
        request: ContextRequest,
        backends: BackendSet,
        context_budget: ContextBudget,
        available: int,
        plan_context: object,
        services: AssemblyServices,
        counts: _ExactCounts,
    ) -> AssembledContext:
        parent = plan_attr(plan_context, "parent_context")
        if not isinstance(parent, AssembledContext):
            parent = None
        skeleton_reserve = 0
        if parent is not None and parent.fragments:
            ratio = float(setting("skeleton-compressor", "skeleton-ratio"))
            skeleton_reserve = int(available * min(1.0, max(0.0, ratio)))
        preamble_max = 0
        if setting("preamble-generator", "preamble-enabled"):
            preamble_max = max(0, int(setting("preamble-generator", "preamble-max-tokens")))
        preamble_reserve = min(preamble_max, int((available - skeleton_reserve) * PREAMBLE_SHARE))
        fragment_budget = max(0, available - skeleton_reserve - preamble_reserve)

        # -- Phase 1: strategy orchestration ----------------------------------------------
        allocations, raw = self._orchestrate(
            self._strategies, request, backends, fragment_budget, plan_context, counts
        )
        if not raw and not request.preferred_strategies:
            # The strategies that stood by (the later ones of the fallback path) get their
            # turn when the selected ones failed or found nothing.
            tried = {_name(s) for s, _, _ in allocations}
            rest = [s for s in self._strategies if _name(s) not in tried]
            if tried and rest:
                left_out = sum(len(services.left_out.get(name, ())) for name in tried)
                found = (
                    f"found {left_out} candidates but none fits in {fragment_budget} "
                    f"token{'' if fragment_budget == 1 else 's'}"
                    if left_out
                    else "found nothing"
                )
                note(f"{', '.join(sorted(tried))} {found}; trying the others")
                allocations, raw = self._orchestrate(
                    rest, request, backends, fragment_budget, plan_context, counts
                )

        # -- Phase 2: fragment fusion ---------------------------------------------------------
        mark = len(services.dropped)
        scored, packed, ordered = self._fuse(raw, fragment_budget, plan_context, counts)
        refill = self._refill(
            allocations, raw, packed, fragment_budget, request, backends, plan_context, counts
        )
        if refill is not None:
            del services.dropped[mark:]  # what the final packing leaves out is what was dropped
            scored, packed, ordered = self._fuse(refill, fragment_budget, plan_context, counts)

        # -- Phase 3: context finalisation ----------------------------------------------------
        strategies_used = list(dict.fromkeys(_name(s) for s, _, _ in allocations))
        fragment_tokens = sum(f.token_count for f in ordered)
        budget_used = fragment_tokens / available if available else 0.0
        preamble_limit = max(0, min(preamble_max, available - skeleton_reserve - fragment_tokens))
        preamble = self._run(
            "preamble-generator",
            "generate",
            _optional_text,
            list(ordered),
            strategies_used,
            budget_used,
            preamble_limit,
        )
        preamble, preamble_tokens = self._fit_preamble(preamble, preamble_limit, counts)

        skeleton_parent = (
            parent
            if skeleton_reserve > 0 and parent is not None
            else (AssembledContext(budget=context_budget))
        )
        skeleton = self._run(
            "skeleton-compressor",
            "compress",
            _skeleton(skeleton_reserve, counts),
            skeleton_parent,
            list(request.focus),
            skeleton_reserve,
        )
        packed_nodes = {f.uko_node for f in ordered}
        inherited = [  # the child's own rendering of a node supersedes the skeleton's
            f for f in counts.fix_all(skeleton.fragments) if f.uko_node not in packed_nodes
        ]

        final = [*inherited, *ordered]
        final, preamble, preamble_tokens = self._enforce(
            final, preamble, preamble_tokens, available
        )
        total = sum(f.token_count for f in final)
        return AssembledContext(
            plan_id=plan_attr(plan_context, "plan_id"),
            fragments=tuple(final),
            total_tokens=total,
            budget=context_budget,
            budget_used=total / available if available else 0.0,
            strategies_used=tuple(strategies_used),
            context_hash=AssembledContext.hash_fragments(final),
            preamble=preamble,
            preamble_tokens=preamble_tokens,
            provenance_map=_provenance_map(final, scored),
            dropped=_dropped(services, final, strategies_used),
            notes=tuple(dict.fromkeys(services.notes)),
        )

    def _fuse(
        self,
        raw: Sequence[ContextFragment],
        fragment_budget: int,
        plan_context: object,
        counts: _ExactCounts,
    ) -> tuple[list[ScoredFragment], list[ContextFragment], list[ContextFragment]]:
        """Stages 4-8: deduplicate, resolve depths, score, pack, order."""
        deduped = self._run(
            "fragment-deduplicator", "deduplicate", _fragments, list(raw), fix=counts.fix_all
        )
        resolved = self._run(
            "detail-depth-resolver",
            "resolve",
            _fragments,
            list(deduped),
            fragment_budget,
            fix=counts.fix_all,
        )
        scored = self._run(
            "fragment-scorer", "score", _scored(resolved), list(resolved), plan_context
        )
        packed = self._run(
            "budget-packer",
            "pack",
            _packed(fragment_budget),
            list(scored),
            fragment_budget,
            self.detail_level_maps,
            fix=counts.fix_all,
        )
        ordered = self._run("fragment-orderer", "order", _permutation_of(packed), list(packed))
        return list(scored), list(packed), list(ordered)

    def _orchestrate(
        self,
        strategies: Sequence[Any],
        request: ContextRequest,
        backends: BackendSet,
        fragment_budget: int,
        plan_context: object,
        counts: _ExactCounts,
    ) -> tuple[list[Any], list[ContextFragment]]:
        """Stages 1-3: select among ``strategies``, allocate, execute."""
        candidates = self._run(
            "strategy-selector", "select", _selection, strategies, request, backends
        )
        allocations = self._run(
            "budget-allocator",
            "allocate",
            _allocation(candidates, fragment_budget),
            candidates,
            fragment_budget,
            request,
        )
        raw = self._run(
            "strategy-executor",
            "execute",
            _fragments,
            allocations,
            request,
            backends,
            plan_context,
            fix=counts.fix_all,
        )
        return allocations, raw

    def _refill(
        self,
        allocations: list[tuple[ContextStrategy, float, int]],
        raw: Sequence[ContextFragment],
        packed: Sequence[ContextFragment],
        fragment_budget: int,
        request: ContextRequest,
        backends: BackendSet,
        plan_context: object,
        counts: _ExactCounts,
    ) -> list[ContextFragment] | None:
        """The leading strategy again, given what the others left unused; None if not worth it.

        Strategies that share a budget overlap (the deduplicator drops the
        repeats) and some find less than their share, so the packed fragments
        often leave a sixth of the budget unused. When that is at least
        ``min-useful-budget``, or a tenth of the budget (a 3,000-token context
        left 428 tokens unused under the 500-token floor: 14 % of what the caller
        asked for), and the strategy the selector ranked first filled
        its own share, it runs again with its share plus the unused tokens, and
        its new fragments replace its first ones before stages 4-8 run again
        (``context.pipeline.budget-allocator.refill-unused``). Its share counts
        whole although the others' copies of what it found took part of it:
        granted only what their packed fragments leave, it delivers less that
        is new (measured in ``benchmarks/quality``: 38 / 50 / 61 / 66 % edit-hit
        against 41 / 54 / 61 / 70 %); granted the whole budget, it crowds the
        others out (41 / 55 / 61 / 70 %, but the gold file in 82-85 % of the
        contexts instead of 86-92 %).
        """
        if len(allocations) < 2 or not setting("budget-allocator", "refill-unused"):
            return None
        slack = fragment_budget - sum(f.token_count for f in packed)
        if slack < min(
            int(setting("budget-allocator", "min-useful-budget")), fragment_budget // 10
        ):
            return None
        leader, confidence, tokens = allocations[0]
        name = _name(leader)
        if sum(f.token_count for f in raw if f.provenance.strategy == name) < 0.8 * tokens:
            return None
        more = self._run(
            "strategy-executor",
            "execute",
            _fragments,
            [(leader, confidence, tokens + slack)],
            request,
            backends,
            plan_context,
            fix=counts.fix_all,
        )
        if not more:
            return None
        return [f for f in raw if f.provenance.strategy != name] + list(more)

    # -- running one stage ---------------------------------------------------------------

    def _run(
        self,
        slot: str,
        method: str,
        check: Check,
        *args: Any,
        fix: Callable[[Any], Any] | None = None,
    ) -> Any:
        """Stage ``slot``'s result; the slot's built-in default's when the component fails."""
        component = self._config.component(slot)
        services = assembly.current()
        mark = len(services.dropped) if services is not None else 0
        outcome = self._call(component, method, check, args, fix)
        if not isinstance(outcome, _Problem):
            return outcome
        problem = outcome
        default = self._default(slot)
        name = type(component).__name__
        if type(component) is type(default):
            raise StageFailure(f"built-in {slot} {name} {problem.message}") from problem.error
        log.warning("pipeline stage replaced", slot=slot, component=name, problem=problem.message)
        note(f"{slot} {name} {problem.message}; used the built-in {type(default).__name__}")
        if services is not None:
            del services.dropped[mark:]
        result = self._call(default, method, check, args, fix)
        if isinstance(result, _Problem):
            raise StageFailure(
                f"built-in {slot} {type(default).__name__} {result.message}"
            ) from result.error
        return result

    @staticmethod
    def _call(
        component: Any,
        method: str,
        check: Check,
        args: tuple[Any, ...],
        fix: Callable[[Any], Any] | None,
    ) -> Any:
        try:
            result = getattr(component, method)(*args)
            if (
                fix is not None
                and isinstance(result, list)
                and all(isinstance(f, ContextFragment) for f in result)
            ):
                result = fix(result)
            problem = check(result)
        except Exception as exc:
            return _Problem(f"raised {type(exc).__name__}: {exc}", exc)
        return _Problem(problem) if problem else result

    def _default(self, slot: str) -> Any:
        if slot not in self._defaults:
            self._defaults[slot] = default_component(slot)
        return self._defaults[slot]

    # -- the hard budget ---------------------------------------------------------------------

    def _fit_preamble(
        self, preamble: str | None, limit: int, counts: _ExactCounts
    ) -> tuple[str | None, int]:
        if not preamble:
            return None, 0
        tokens = counts(preamble)
        if tokens <= limit:
            return preamble, tokens
        cut = tokenizer_truncate(preamble, limit)
        note(f"preamble of {tokens} tokens cut to the {limit} left")
        if not cut.strip():
            return None, 0
        return cut, counts(cut)

    @staticmethod
    def _enforce(
        fragments: list[ContextFragment],
        preamble: str | None,
        preamble_tokens: int,
        available: int,
    ) -> tuple[list[ContextFragment], str | None, int]:
        """The last line of defence: nothing leaves over ``available`` tokens."""
        total = sum(f.token_count for f in fragments)
        if total + preamble_tokens <= available:
            return fragments, preamble, preamble_tokens
        note("over budget after every stage; trimmed the final context")
        if total > available:
            preamble, preamble_tokens = None, 0
        kept = list(fragments)
        while kept and total + preamble_tokens > available:
            total -= kept.pop().token_count
        return kept, preamble, preamble_tokens


class _Problem:
    """Why a stage's result cannot be used."""

    def __init__(self, message: str, error: BaseException | None = None) -> None:
        self.message = message
        self.error = error


# -- contracts the pipeline checks between stages -----------------------------------------


def _name(strategy: object) -> str:
    return str(getattr(strategy, "name", "") or type(strategy).__name__)


def _selection(result: Any) -> str | None:
    if not isinstance(result, list):
        return f"returned {type(result).__name__}, not a list"
    for item in result:
        if not (
            isinstance(item, tuple)
            and len(item) == 2
            and callable(getattr(item[0], "assemble", None))
        ):
            return "returned an item that is not a (strategy, confidence) pair"
        if not isinstance(item[1], (int, float)) or not 0.0 < float(item[1]) <= 1.0:
            return f"returned confidence {item[1]!r} outside (0, 1]"
    return None


def _allocation(candidates: list[Any], total: int) -> Check:
    known = {id(strategy) for strategy, _ in candidates}

    def check(result: Any) -> str | None:
        if not isinstance(result, list):
            return f"returned {type(result).__name__}, not a list"
        spent = 0
        for item in result:
            if not (isinstance(item, tuple) and len(item) == 3):
                return "returned an item that is not a (strategy, confidence, tokens) triple"
            strategy, _, tokens = item
            if id(strategy) not in known:
                return f"allocated to {_name(strategy)}, which was not selected"
            if isinstance(tokens, bool) or not isinstance(tokens, int) or tokens < 0:
                return f"allocated {tokens!r} tokens"
            spent += tokens
        if spent > total:
            return f"allocated {spent} tokens of {total}"
        return None

    return check


def _fragments(result: Any) -> str | None:
    if not isinstance(result, list):
        return f"returned {type(result).__name__}, not a list of fragments"
    bad = next((item for item in result if not isinstance(item, ContextFragment)), None)
    if bad is not None:
        return f"returned a {type(bad).__name__} among its fragments"
    return None


def _scored(fragments: list[ContextFragment]) -> Check:
    def check(result: Any) -> str | None:
        if not isinstance(result, list):
            return f"returned {type(result).__name__}, not a list of scored fragments"
        for item in result:
            if not isinstance(item, ScoredFragment) or not isinstance(
                item.fragment, ContextFragment
            ):
                return f"returned a {type(item).__name__}, not a ScoredFragment"
            score = item.composite_score
            if not isinstance(score, (int, float)) or not math.isfinite(score):
                return f"returned the score {score!r}"
        if len(result) != len(fragments):
            return f"scored {len(result)} of {len(fragments)} fragments"
        return None

    return check


def _packed(budget: int) -> Check:
    def check(result: Any) -> str | None:
        problem = _fragments(result)
        if problem:
            return problem
        used = sum(f.token_count for f in result)
        if used > budget:
            return f"packed {used} tokens into a budget of {budget}"
        nodes = [f.uko_node for f in result]
        if len(nodes) != len(set(nodes)):
            return "packed a node twice"
        return None

    return check


def _permutation_of(packed: list[ContextFragment]) -> Check:
    expected = Counter(f.fragment_id for f in packed)

    def check(result: Any) -> str | None:
        problem = _fragments(result)
        if problem:
            return problem
        if Counter(f.fragment_id for f in result) != expected:
            return "returned fragments that are not a reordering of its input"
        return None

    return check


def _optional_text(result: Any) -> str | None:
    if result is not None and not isinstance(result, str):
        return f"returned {type(result).__name__}, not a string or None"
    return None


def _skeleton(budget: int, counts: _ExactCounts) -> Check:
    def check(result: Any) -> str | None:
        if not isinstance(result, AssembledContext):
            return f"returned {type(result).__name__}, not an AssembledContext"
        used = sum(counts(f.content) for f in result.fragments)
        if used > budget:
            return f"made a skeleton of {used} tokens for a budget of {budget}"
        return None

    return check


def _dropped(
    services: AssemblyServices, final: Sequence[ContextFragment], ranked: Sequence[str]
) -> tuple[DroppedFragment, ...]:
    """The packer's drops, then the left-outs of the strategies (``ranked`` first, in that
    order: they ran in parallel) that the final context lacks."""
    delivered = {f.uko_node: f.detail_depth for f in final}
    whole = {uri for uri, depth in delivered.items() if depth >= DEPTH_FULL}
    listed = {d.uko_node for d in services.dropped}
    out = list(services.dropped)
    added = 0
    order = [
        *(s for s in ranked if s in services.left_out),
        *sorted(set(services.left_out) - set(ranked)),
    ]
    for record in (r for strategy in order for r in services.left_out[strategy]):
        if added >= MAX_LEFT_OUT:
            break
        if record.uko_node in listed or any(a in whole for a in ancestors(record.uko_node)):
            continue
        depth = delivered.get(record.uko_node)
        if depth is not None and depth >= record.detail_depth:
            continue
        listed.add(record.uko_node)
        added += 1
        out.append(
            record if depth is None else record.model_copy(update={"delivered_depth": depth})
        )
    return tuple(out)


def _provenance_map(
    fragments: list[ContextFragment], scored: list[ScoredFragment]
) -> dict[str, Any]:
    scores = {s.fragment.uko_node: s.composite_score for s in scored}
    out: dict[str, Any] = {}
    for fragment in fragments:
        entry = fragment.provenance.model_dump(mode="json")
        entry.update(
            fragment_id=fragment.fragment_id,
            detail_depth=fragment.detail_depth,
            token_count=fragment.token_count,
            relevance_score=fragment.relevance_score,
            skeleton=fragment.metadata.get("skeleton") == "true",
        )
        if fragment.uko_node in scores:
            entry["composite_score"] = round(scores[fragment.uko_node], 4)
        out[fragment.uko_node] = entry
    return out
