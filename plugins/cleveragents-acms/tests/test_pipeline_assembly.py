"""The pipeline mediator: every stage runs, the budget is hard, the result is complete."""

from __future__ import annotations

from typing import Any

import pytest

from cleveragents import assembly
from cleveragents.errors import ValidationError
from cleveragents.models.context import (
    AssembledContext,
    ContextBudget,
    ContextFragment,
    DroppedFragment,
    StrategyCapabilities,
)
from cleveragents.protocols.backends import BackendSet
from cleveragents.testing.factories import (
    StubStrategy,
    make_assembled_context,
    make_fragment,
    make_request,
)
from cleveragents_acms.pipeline.assembly import ContextAssemblyPipeline
from cleveragents_acms.pipeline.config import SLOT_FIELDS, default_pipeline_config, stage_settings
from cleveragents_acms.pipeline.tokenizers import get_tokenizer

CL100K = get_tokenizer("cl100k")
BASE = "https://cleveragents.ai/r/01J0000000000000000000000A"


class Spy:
    """Wraps a stage component and records the arguments of each call."""

    def __init__(self, inner: Any, method: str) -> None:
        self.inner, self.method, self.calls = inner, method, []
        setattr(self, method, self._call)

    def _call(self, *args: Any) -> Any:
        self.calls.append(args)
        return getattr(self.inner, self.method)(*args)


METHODS = {
    "strategy-selector": "select",
    "budget-allocator": "allocate",
    "strategy-executor": "execute",
    "fragment-deduplicator": "deduplicate",
    "detail-depth-resolver": "resolve",
    "fragment-scorer": "score",
    "budget-packer": "pack",
    "fragment-orderer": "order",
    "preamble-generator": "generate",
    "skeleton-compressor": "compress",
}


class FirstLinesRenderer:
    """Depth d keeps the first d + 1 lines."""

    def render(self, fragment: ContextFragment, depth: int) -> ContextFragment | None:
        content = "\n".join(fragment.content.splitlines()[: depth + 1])
        return fragment.model_copy(
            update={"content": content, "detail_depth": depth, "token_count": 1}
        )  # wrong on purpose: recounted


def source(name: str, lines: int = 20) -> str:
    body = "\n".join(f"    total += weight_{i} * value_{i}" for i in range(lines))
    return f"def {name}(values):\n    total = 0\n{body}\n    return total\n"


def fragments(count: int, *, lines: int = 20, strategy: str = "") -> list[ContextFragment]:
    return [
        make_fragment(
            f"{BASE}/pkg/m{i % 3}.py#f{i}",
            source(f"f{i}", lines),
            token_count=1,
            relevance=round(0.95 * 0.93**i, 3),
            path=f"pkg/m{i % 3}.py",
            start_line=1 + 30 * i,
            strategy=strategy,
        )
        for i in range(count)
    ]


def spied_pipeline(
    strategies: list[Any], **kwargs: Any
) -> tuple[ContextAssemblyPipeline, dict[str, Spy]]:
    config = default_pipeline_config()
    spies = {slot: Spy(config.component(slot), METHODS[slot]) for slot in SLOT_FIELDS}
    config = config.replace(**{SLOT_FIELDS[slot]: spy for slot, spy in spies.items()})
    return ContextAssemblyPipeline(config, strategies, tokenizer=CL100K, **kwargs), spies


def exact_total(context: AssembledContext) -> int:
    """What the context costs by the real tokenizer, preamble included."""
    return sum(CL100K.count(f.content) for f in context.fragments) + CL100K.count(
        context.preamble or ""
    )


def test_every_stage_runs_on_every_assembly() -> None:
    """All ten stages are called once; without a parent the skeleton gets an empty one and 0."""
    strategy = StubStrategy("simple-keyword", 0.8, fragments=fragments(6))
    pipeline, spies = spied_pipeline([strategy])
    pipeline.assemble(make_request(), BackendSet(), 4000)
    assert {slot: len(spy.calls) for slot, spy in spies.items()} == dict.fromkeys(SLOT_FIELDS, 1)
    parent, _focus, budget = spies["skeleton-compressor"].calls[0]
    assert (parent.fragments, budget) == ((), 0)


def test_every_stage_runs_even_with_nothing_to_assemble() -> None:
    """No strategies at all: every stage still runs, on empty input."""
    pipeline, spies = spied_pipeline([])
    context = pipeline.assemble(make_request(), None, 100)
    assert all(len(spy.calls) == 1 for spy in spies.values())
    assert (context.fragments, context.total_tokens) == ((), 0)


def test_the_result_is_complete_and_consistent() -> None:
    """Counts, hash, provenance, strategies, budget use and preamble all agree."""
    strategy = StubStrategy("simple-keyword", 0.8, quality=0.3, fragments=fragments(8))
    pipeline = ContextAssemblyPipeline(None, [strategy], tokenizer=CL100K)
    context = pipeline.assemble(make_request(), BackendSet(), 3000, {"plan_id": "plan-1"})
    assert context.plan_id == "plan-1"
    assert context.strategies_used == ("simple-keyword",)
    assert all(f.token_count == CL100K.count(f.content) for f in context.fragments)
    assert context.total_tokens == sum(f.token_count for f in context.fragments)
    assert context.context_hash == AssembledContext.hash_fragments(context.fragments)
    assert set(context.provenance_map) == {f.uko_node for f in context.fragments}
    entry = context.provenance_map[context.fragments[0].uko_node]
    assert {"path", "strategy", "detail_depth", "composite_score"} <= set(entry)
    assert context.budget_used == pytest.approx(context.total_tokens / 3000)
    assert context.preamble and "simple-keyword" in context.preamble
    assert context.preamble_tokens == CL100K.count(context.preamble)
    assert exact_total(context) <= 3000 and context.is_within_budget


def test_strategies_counting_wrongly_cannot_break_the_budget() -> None:
    """Fragments claiming 1 token each are recounted before packing."""
    strategy = StubStrategy("simple-keyword", 0.9, fragments=fragments(30))
    context = ContextAssemblyPipeline(None, [strategy], tokenizer=CL100K).assemble(
        make_request(), None, 700
    )
    assert context.fragments
    assert exact_total(context) <= 700
    assert any(d.delivered_depth is None for d in context.dropped)


def test_depth_fallback_downgrades_when_the_budget_is_tight() -> None:
    """With a renderer, fragments that do not fit arrive shallower instead of disappearing."""
    strategy = StubStrategy("simple-keyword", 0.9, fragments=fragments(12))
    pipeline = ContextAssemblyPipeline(
        None, [strategy], tokenizer=CL100K, renderer=FirstLinesRenderer()
    )
    context = pipeline.assemble(make_request(), None, 1200)
    depths = {f.detail_depth for f in context.fragments}
    assert 9 in depths and depths & {0, 2, 4}
    downgraded = [d for d in context.dropped if d.delivered_depth is not None]
    assert downgraded and all(d.delivered_depth < d.detail_depth for d in downgraded)
    assert exact_total(context) <= 1200


def test_a_parent_context_contributes_a_skeleton_first() -> None:
    """The parent's skeleton leads, stays within skeleton-ratio, and yields to deeper nodes."""
    parent = make_assembled_context(
        [
            make_fragment(f"{BASE}/lib.py#g{i}", source(f"g{i}"), token_count=10, path="lib.py")
            for i in range(10)
        ]
        + fragments(1)
    )
    strategy = StubStrategy("simple-keyword", 0.9, fragments=fragments(3))
    pipeline = ContextAssemblyPipeline(None, [strategy], tokenizer=CL100K)
    context = pipeline.assemble(
        make_request(focus=(f"{BASE}/lib.py#g3",)), None, 2000, {"parent_context": parent}
    )
    skeleton = [f for f in context.fragments if f.metadata.get("skeleton") == "true"]
    assert skeleton and context.fragments[: len(skeleton)] == tuple(skeleton)
    assert sum(f.token_count for f in skeleton) <= int(2000 * 0.15)
    assert all(f.detail_depth == 0 for f in skeleton)
    nodes = [f.uko_node for f in context.fragments]
    assert len(nodes) == len(set(nodes)), "the child's rendering replaces the skeleton's"
    assert exact_total(context) <= 2000


def test_the_preamble_is_reserved_and_can_be_disabled() -> None:
    """A full budget still leaves room for the preamble; disabled, there is none."""
    strategy = StubStrategy("simple-keyword", 0.9, fragments=fragments(40))
    pipeline = ContextAssemblyPipeline(None, [strategy], tokenizer=CL100K)
    context = pipeline.assemble(make_request(), None, 2000)
    assert context.preamble is not None and 0 < context.preamble_tokens <= 200
    assert exact_total(context) <= 2000

    settings = stage_settings({"context.fusion.preamble-enabled": False})
    quiet = ContextAssemblyPipeline(default_pipeline_config(settings), [strategy], tokenizer=CL100K)
    context = quiet.assemble(make_request(), None, 2000)
    assert (context.preamble, context.preamble_tokens) == (None, 0)


def test_a_context_budget_and_the_request_limit_are_honoured() -> None:
    """available = max - reserved, capped by request.max_tokens."""
    strategy = StubStrategy("simple-keyword", 0.9, fragments=fragments(40))
    pipeline = ContextAssemblyPipeline(None, [strategy], tokenizer=CL100K)
    context = pipeline.assemble(
        make_request(), None, ContextBudget(max_tokens=3000, reserved_tokens=2000)
    )
    assert exact_total(context) <= 1000 and context.budget.available_tokens == 1000
    limited = pipeline.assemble(make_request(max_tokens=300), None, 3000)
    assert exact_total(limited) <= 300
    assert "the request limits the context to 300 tokens" in limited.notes


def test_a_budget_must_be_positive() -> None:
    """Zero or negative budgets are a validation error, not an empty context."""
    with pytest.raises(ValidationError):
        ContextAssemblyPipeline(None, []).assemble(make_request(), None, 0)


def test_the_fallback_path_is_reported_in_the_notes() -> None:
    """Preferred arce without a vector backend: notes explain the degradation."""

    class Needs(StubStrategy):
        def __init__(self, name: str, quality: float, **uses: bool) -> None:
            super().__init__(name, 0.9, quality=quality, fragments=fragments(2, strategy=name))
            self.capabilities = StrategyCapabilities(quality_score=quality, **uses)

    strategies = [
        Needs("arce", 0.95, uses_text=True, uses_vector=True, uses_graph=True),
        Needs("breadth-depth-navigator", 0.85, uses_graph=True),
        Needs("simple-keyword", 0.3, uses_text=True),
    ]
    available = BackendSet(text=object(), graph=object())  # type: ignore[arg-type]
    context = ContextAssemblyPipeline(None, strategies, tokenizer=CL100K).assemble(
        make_request(preferred_strategies=("arce",)), available, 8000
    )
    assert "arce needs vector; falling back to breadth-depth-navigator" in context.notes
    assert context.strategies_used[0] == "breadth-depth-navigator"
    assert "arce" not in context.strategies_used


def filling(name: str) -> Any:
    """A strategy's output that fills whatever budget it is given (distinct functions)."""

    def produce(budget: int) -> list[ContextFragment]:
        made, spent = [], 0
        for i in range(500):
            fragment = make_fragment(
                f"{BASE}/pkg/{name}.py#g{i}",
                source(f"g{i}", 8),
                relevance=round(0.9 - i * 0.001, 4),
                path=f"pkg/{name}.py",
                start_line=1 + 20 * i,
                strategy=name,
            )
            cost = CL100K.count(fragment.content)
            if spent + cost > budget:
                break
            made.append(fragment.model_copy(update={"token_count": cost}))
            spent += cost
        return made

    return produce


def test_budget_the_others_leave_unused_goes_to_the_leading_strategy() -> None:
    """The leader filled its share, the other found little: the leader runs again with
    its share plus the slack, the context uses the budget, and stages 4-8 run twice."""
    leader = StubStrategy("arce", 0.9, quality=0.95, fragments=filling("arce"))
    sparse = StubStrategy("temporal-archaeology", 0.7, quality=0.3, fragments=fragments(1))
    pipeline, spies = spied_pipeline([leader, sparse])
    context = pipeline.assemble(make_request(), BackendSet(), 8000)

    (_, first), (_, second) = leader.calls
    assert len(sparse.calls) == 1
    assert second >= first + 500  # at least min-useful-budget was left over
    assert exact_total(context) <= 8000
    assert context.total_tokens > 0.85 * 8000 * 0.9  # the fragment budget is nearly used
    assert {slot: len(spies[slot].calls) for slot in ("strategy-executor", "budget-packer")} == {
        "strategy-executor": 2,
        "budget-packer": 2,
    }
    assert set(context.strategies_used) == {"arce", "temporal-archaeology"}

    settings = stage_settings({"context.pipeline.budget-allocator.refill-unused": False})
    leader.calls.clear()
    plain = ContextAssemblyPipeline(
        default_pipeline_config(settings), [leader, sparse], tokenizer=CL100K
    ).assemble(make_request(), BackendSet(), 8000)
    assert len(leader.calls) == 1
    assert plain.total_tokens < context.total_tokens - 500


def test_a_small_budget_is_refilled_below_the_min_useful_budget() -> None:
    """At 3,000 tokens a few hundred left unused are a tenth of the context: refilled,
    though fewer than min-useful-budget (500)."""
    history = filling("temporal-archaeology")
    leader = StubStrategy("arce", 0.9, quality=0.95, fragments=filling("arce"))
    sparse = StubStrategy(  # finds two thirds of its share
        "temporal-archaeology", 0.7, quality=0.3, fragments=lambda budget: history(budget * 2 // 3)
    )
    pipeline, _ = spied_pipeline([leader, sparse])
    context = pipeline.assemble(make_request(), BackendSet(), 3000)

    (_, first), (_, second) = leader.calls
    assert 300 <= second - first < 500
    assert exact_total(context) <= 3000
    preamble = exact_total(context) - context.total_tokens
    assert context.total_tokens > 0.95 * (3000 - preamble)


def test_no_refill_for_a_lone_strategy_or_a_leader_that_left_its_share_unused() -> None:
    """Giving more tokens to a strategy that did not use its own share is pointless."""
    alone = StubStrategy("arce", 0.9, quality=0.95, fragments=fragments(2))
    ContextAssemblyPipeline(None, [alone], tokenizer=CL100K).assemble(
        make_request(), BackendSet(), 8000
    )
    assert len(alone.calls) == 1

    timid = StubStrategy("arce", 0.9, quality=0.95, fragments=fragments(2, strategy="arce"))
    other = StubStrategy("temporal-archaeology", 0.7, quality=0.3, fragments=fragments(1))
    ContextAssemblyPipeline(None, [timid, other], tokenizer=CL100K).assemble(
        make_request(), BackendSet(), 8000
    )
    assert len(timid.calls) == 1


def test_inspection_reports_the_refilled_allocation() -> None:
    """`context inspect` shows what the leader was finally given and returned."""
    from cleveragents_acms.context.recording import RecordingPipeline

    leader = StubStrategy("arce", 0.9, quality=0.95, fragments=filling("arce"))
    sparse = StubStrategy("temporal-archaeology", 0.7, quality=0.3, fragments=fragments(1))
    pipeline = RecordingPipeline(None, [leader, sparse], tokenizer=CL100K)
    context = pipeline.assemble(make_request(), BackendSet(), 8000)
    records = {r.name: r for r in pipeline.strategy_records(context)}
    (_, first), (_, second) = leader.calls
    assert (records["arce"].tokens, records["arce"].refilled) == (first, second - first)
    assert records["temporal-archaeology"].refilled == 0
    assert records["arce"].fragments == len(filling("arce")(second))
    assert records["temporal-archaeology"].fragments == 1
    assert all(ms >= 0 for ms in pipeline.stage_ms.values())


def test_after_a_refill_dropped_lists_what_the_final_packing_left_out() -> None:
    """Packing runs twice; the context's dropped list is the second packing's, not both."""
    leader = StubStrategy("arce", 0.9, quality=0.95, fragments=filling("arce"))
    huge = make_fragment(f"{BASE}/pkg/big.py#huge", source("huge", 900), path="pkg/big.py")
    sparse = StubStrategy("temporal-archaeology", 0.7, quality=0.3, fragments=[huge])
    context = ContextAssemblyPipeline(None, [leader, sparse], tokenizer=CL100K).assemble(
        make_request(), BackendSet(), 8000
    )
    assert len(leader.calls) == 2
    nodes = [d.uko_node for d in context.dropped]
    assert nodes.count(huge.uko_node) == 1 and len(set(nodes)) == len(nodes)
    assert exact_total(context) <= 8000


def test_a_leader_that_fails_on_the_refill_keeps_its_first_fragments() -> None:
    """Nothing is lost when the second call raises: the first answer stands, with a note."""
    produce = filling("arce")
    calls: list[int] = []

    def once(budget: int) -> list[ContextFragment]:
        calls.append(budget)
        if len(calls) > 1:
            raise RuntimeError("index went away")
        return produce(budget)

    leader = StubStrategy("arce", 0.9, quality=0.95, fragments=once)
    sparse = StubStrategy("temporal-archaeology", 0.7, quality=0.3, fragments=fragments(1))
    context = ContextAssemblyPipeline(None, [leader, sparse], tokenizer=CL100K).assemble(
        make_request(), BackendSet(), 8000
    )
    assert len(calls) == 2
    first = produce(calls[0])
    assert {f.uko_node for f in first} <= {f.uko_node for f in context.fragments}
    assert any("arce" in note and "RuntimeError" in note for note in context.notes)
    assert exact_total(context) <= 8000


def test_what_a_strategy_could_not_fit_is_listed_unless_delivered() -> None:
    """A strategy fills its own share, so the packer drops nothing: the nodes it recorded
    as left out (``assembly.current().left_out``) are the ``dropped`` list, less those the
    context holds at that depth or inside a node delivered whole, in the strategy's order."""
    from cleveragents import assembly
    from cleveragents.models.context import DroppedFragment

    whole = make_fragment(f"{BASE}/pkg/whole.py", source("w", 3), path="pkg/whole.py")
    outline = make_fragment(
        f"{BASE}/pkg/m.py#Shallow", "class Shallow: ...", path="pkg/m.py", depth=4
    )
    deep = make_fragment(f"{BASE}/pkg/m.py#deep", source("deep", 3), path="pkg/m.py")

    def produce(budget: int) -> list[ContextFragment]:
        services = assembly.current()
        assert services is not None
        for uri, path in [
            (f"{BASE}/pkg/m.py#missing", "pkg/m.py"),  # not delivered at all
            (f"{BASE}/pkg/m.py#Shallow", "pkg/m.py"),  # delivered at 4, wanted at 9
            (f"{BASE}/pkg/m.py#deep", "pkg/m.py"),  # delivered in full later on
            (f"{BASE}/pkg/whole.py#inner", "pkg/whole.py"),  # inside a file delivered whole
            (f"{BASE}/pkg/m.py#missing", "pkg/m.py"),  # recorded twice, listed once
        ]:
            services.leave_out(
                "simple-keyword",
                DroppedFragment(uko_node=uri, path=path, detail_depth=9, reason="no room"),
            )
        return [whole, outline, deep]

    strategy = StubStrategy("simple-keyword", 0.9, fragments=produce)
    context = ContextAssemblyPipeline(None, [strategy], tokenizer=CL100K).assemble(
        make_request(), BackendSet(), 4000
    )
    assert {f.uko_node for f in context.fragments} == {
        whole.uko_node,
        outline.uko_node,
        deep.uko_node,
    }
    listed = [
        (d.uko_node.rsplit("#", 1)[1], d.detail_depth, d.delivered_depth) for d in context.dropped
    ]
    assert listed == [("missing", 9, None), ("Shallow", 9, 4)]


def test_the_strategies_standing_by_run_when_the_lead_finds_nothing() -> None:
    """The fallback path's later strategies stand by for arce; when it fails or finds
    nothing they get their turn, with a note, so a context is still produced. A request
    that names arce gets exactly what arce found."""

    def broken(budget: int) -> list[ContextFragment]:
        raise RuntimeError("index went away")

    for lead in (
        StubStrategy("arce", 0.9, quality=0.95, fragments=[]),
        StubStrategy("arce", 0.9, quality=0.95, fragments=broken),
    ):
        navigator = StubStrategy(
            "breadth-depth-navigator", 0.6, quality=0.85, fragments=fragments(3)
        )
        pipeline = ContextAssemblyPipeline(None, [lead, navigator], tokenizer=CL100K)
        context = pipeline.assemble(make_request(), BackendSet(), 4000)
        assert len(navigator.calls) == 1
        assert len(context.fragments) == 3
        assert context.strategies_used == ("breadth-depth-navigator",)
        assert "arce found nothing; trying the others" in context.notes

    def nothing_fits(budget: int) -> list[ContextFragment]:
        services = assembly.current()
        assert services is not None
        for index in range(2):
            too_big = DroppedFragment(
                uko_node=f"urn:test:big{index}", path="big.py", detail_depth=9, reason="too big"
            )
            services.leave_out("arce", too_big)
        return []

    lead = StubStrategy("arce", 0.9, quality=0.95, fragments=nothing_fits)
    navigator = StubStrategy("breadth-depth-navigator", 0.6, quality=0.85, fragments=fragments(3))
    pipeline = ContextAssemblyPipeline(None, [lead, navigator], tokenizer=CL100K)
    context = pipeline.assemble(make_request(), BackendSet(), 4000)
    assert any("arce found 2 candidates but none fits in" in n for n in context.notes)

    named = make_request(preferred_strategies=("arce",))
    navigator = StubStrategy("breadth-depth-navigator", 0.6, quality=0.85, fragments=fragments(3))
    empty = StubStrategy("arce", 0.9, quality=0.95, fragments=[])
    context = ContextAssemblyPipeline(None, [empty, navigator], tokenizer=CL100K).assemble(
        named, BackendSet(), 4000
    )
    assert not context.fragments and not navigator.calls
