"""Each pipeline stage's algorithm on hand-built fragments and strategies."""

from __future__ import annotations

import subprocess
import sys
import threading
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

import cleveragents.config
from cleveragents import assembly
from cleveragents.assembly import AssemblyServices
from cleveragents.models.context import (
    AssembledContext,
    ContextFragment,
    ContextRequest,
    DroppedFragment,
    ScoredFragment,
    StrategyCapabilities,
)
from cleveragents.protocols.backends import BackendSet
from cleveragents.testing.factories import (
    RESOURCE_A,
    RESOURCE_B,
    StubStrategy,
    make_assembled_context,
    make_fragment,
    make_request,
    make_scored,
)
from cleveragents.testing.memory import StaticDetailLevelMaps
from cleveragents_acms.pipeline.allocator import ProportionalBudgetAllocator
from cleveragents_acms.pipeline.dedup import ContentHashDeduplicator
from cleveragents_acms.pipeline.depth import MaxDepthResolver
from cleveragents_acms.pipeline.executor import ParallelStrategyExecutor
from cleveragents_acms.pipeline.orderer import RelevanceCoherenceOrderer
from cleveragents_acms.pipeline.packer import GreedyKnapsackPacker, fallback_depths
from cleveragents_acms.pipeline.preamble import ProvenancePreambleGenerator
from cleveragents_acms.pipeline.scorer import WeightedCompositeScorer
from cleveragents_acms.pipeline.selector import ConfidenceWeightedSelector, StrategySelectionEvent
from cleveragents_acms.pipeline.skeleton import DepthReductionCompressor
from cleveragents_acms.pipeline.tokenizers import (
    claimed_tokenizer,
    get_tokenizer,
    tokenizer_for_model,
)

CL100K = get_tokenizer("cl100k")
BASE = "https://cleveragents.ai/r/01J0000000000000000000000A"


@contextmanager
def running(
    settings: Mapping[str, Mapping[str, Any]] | None = None, renderer: Any = None
) -> Iterator[AssemblyServices]:
    """An assembly in progress with the real cl100k tokenizer, to read notes and drops."""
    services = AssemblyServices(tokenizer=CL100K, renderer=renderer, settings=settings or {})
    with assembly.use(services):
        yield services


class NamedStrategy(StubStrategy):
    """A stub strategy that needs some backends."""

    def __init__(self, name: str, confidence: float, quality: float, *needs: str) -> None:
        super().__init__(name, confidence, quality=quality)
        self.capabilities = StrategyCapabilities(
            quality_score=quality,
            uses_text="text" in needs,
            uses_vector="vector" in needs,
            uses_graph="graph" in needs,
        )


class RaisingStrategy(StubStrategy):
    """can_handle raises."""

    def can_handle(self, request: ContextRequest, backends: BackendSet) -> float:
        raise RuntimeError("broken")


class SlowStrategy(StubStrategy):
    """assemble sleeps first."""

    def __init__(self, name: str, seconds: float, **kwargs: Any) -> None:
        super().__init__(name, 0.5, **kwargs)
        self.seconds = seconds

    def assemble(self, request: Any, backends: Any, budget: int, plan: object) -> list[Any]:
        time.sleep(self.seconds)
        return super().assemble(request, backends, budget, plan)


class WrongTypeStrategy(StubStrategy):
    """assemble returns a string."""

    def assemble(self, request: Any, backends: Any, budget: int, plan: object) -> Any:
        self.calls.append((request, budget))
        return "not fragments"


class ShallowRenderer:
    """Renders a node at a lower depth as its first ``depth + 1`` lines."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, int]] = []

    def render(self, fragment: ContextFragment, depth: int) -> ContextFragment | None:
        self.calls.append((fragment.uko_node, depth))
        lines = fragment.content.splitlines()[: depth + 1]
        content = "\n".join(lines)
        return fragment.model_copy(
            update={"content": content, "detail_depth": depth, "token_count": CL100K.count(content)}
        )


def backends(*kinds: str) -> BackendSet:
    """A BackendSet with placeholder backends of the given kinds."""
    return BackendSet(**{kind: object() for kind in kinds})  # type: ignore[arg-type]


def names(pairs: list[tuple[Any, ...]]) -> list[str]:
    return [pair[0].name for pair in pairs]


def code(name: str, lines: int = 12) -> str:
    body = "\n".join(f"    value_{i} = compute_{i}(argument, {i})" for i in range(lines))
    return f"def {name}(argument):\n{body}\n    return value_0\n"


def fragment(qualname: str, content: str | None = None, **kwargs: Any) -> ContextFragment:
    content = content if content is not None else code(qualname.replace(".", "_"))
    kwargs.setdefault("token_count", CL100K.count(content))
    return make_fragment(f"{BASE}/app.py#{qualname}", content, path="app.py", **kwargs)


# -- 1. ConfidenceWeightedSelector --------------------------------------------------------


def test_selector_ranks_by_confidence_times_quality() -> None:
    """A confident but weak strategy ranks below a less confident, better one."""
    keyword = StubStrategy("simple-keyword", 0.9, quality=0.3)
    navigator = StubStrategy("breadth-depth-navigator", 0.5, quality=0.85)
    sharing = ConfidenceWeightedSelector(share_fallback_path=True)
    chosen = sharing.select([keyword, navigator], make_request(), backends())
    assert chosen == [(navigator, 0.5), (keyword, 0.9)]


def test_the_fallback_path_is_a_degradation_path() -> None:
    """Unless the request names strategies, the first strategy of the fallback path that
    can run is selected and the later ones stand by; strategies off the path run beside
    it. A later one leads when the first cannot run."""
    arce = StubStrategy("arce", 0.9, quality=0.95)
    navigator = StubStrategy("breadth-depth-navigator", 0.6, quality=0.85)
    keyword = StubStrategy("simple-keyword", 0.7, quality=0.3)
    history = StubStrategy("temporal-archaeology", 0.5, quality=0.5)
    events: list[Any] = []
    selector = ConfidenceWeightedSelector(listeners=[events.append])
    offered = [keyword, navigator, arce, history]
    chosen = selector.select(offered, make_request(), backends())
    assert [s.name for s, _ in chosen] == ["arce", "temporal-archaeology"]
    assert events[-1].excluded == {
        "breadth-depth-navigator": "stands by for arce on the fallback path",
        "simple-keyword": "stands by for arce on the fallback path",
    }
    declining = StubStrategy("arce", 0.0, quality=0.95)
    chosen = selector.select([keyword, navigator, declining], make_request(), backends())
    assert [s.name for s, _ in chosen] == ["breadth-depth-navigator"]
    named = make_request(preferred_strategies=("arce", "simple-keyword"))
    chosen = selector.select(offered, named, backends())
    assert [s.name for s, _ in chosen] == ["arce", "simple-keyword"]
    with running({"strategy-selector": {"share-fallback-path": True}}):
        chosen = selector.select(offered, make_request(), backends())
    assert [s.name for s, _ in chosen] == [
        "arce", "breadth-depth-navigator", "temporal-archaeology", "simple-keyword"
    ]  # fmt: skip


def test_selector_skips_declining_raising_and_duplicate_strategies() -> None:
    """Confidence 0 and a raising can_handle are left out; the raise is noted."""
    strategies = [
        StubStrategy("never", 0.0),
        RaisingStrategy("broken", 0.9),
        StubStrategy("ok", 0.4),
        StubStrategy("ok", 0.9),
    ]
    with running() as services:
        chosen = ConfidenceWeightedSelector().select(strategies, make_request(), backends())
    assert [(s.name, c) for s, c in chosen] == [("ok", 0.4)]
    assert any("broken" in n and "RuntimeError" in n for n in services.notes)


def test_selector_drops_strategies_whose_backends_are_missing() -> None:
    """A strategy needing the vector backend does not run with text only."""
    semantic = NamedStrategy("semantic-embedding", 0.9, 0.6, "vector")
    keyword = NamedStrategy("simple-keyword", 0.5, 0.3, "text")
    with running() as services:
        chosen = ConfidenceWeightedSelector().select(
            [semantic, keyword], make_request(), backends("text")
        )
    assert names(chosen) == ["simple-keyword"]
    assert "semantic-embedding needs vector; falling back to simple-keyword" in services.notes


def test_selector_runs_only_the_named_strategies_and_ignores_unknown_ones() -> None:
    """preferred_strategies selects exactly those; an unknown name is noted, not an error."""
    best = StubStrategy("best", 0.9, quality=0.9)
    liked = StubStrategy("liked", 0.2, quality=0.2)
    also = StubStrategy("also", 0.1, quality=0.1)
    request = make_request(preferred_strategies=("nonexistent", "liked", "also"))
    events: list[StrategySelectionEvent] = []
    with running() as services:
        chosen = ConfidenceWeightedSelector(listeners=[events.append]).select(
            [best, liked, also], request, backends()
        )
    assert names(chosen) == ["liked", "also"]
    assert "unknown preferred strategy nonexistent ignored" in services.notes
    assert events[0].excluded == {"best": "not named by the request"}


def test_selector_degrades_along_the_fallback_path() -> None:
    """Preferred arce without vector falls back to breadth-depth-navigator, with a note."""
    arce = NamedStrategy("arce", 0.9, 0.95, "text", "vector", "graph")
    navigator = NamedStrategy("breadth-depth-navigator", 0.5, 0.85, "graph")
    semantic = NamedStrategy("semantic-embedding", 0.8, 0.6, "vector")
    keyword = NamedStrategy("simple-keyword", 0.9, 0.9, "text")
    request = make_request(preferred_strategies=("arce",))
    strategies = [arce, navigator, semantic, keyword]
    with running() as services:
        chosen = ConfidenceWeightedSelector().select(strategies, request, backends("text", "graph"))
    assert names(chosen) == ["breadth-depth-navigator"]
    assert "arce needs vector; falling back to breadth-depth-navigator" in services.notes


def test_selector_falls_back_to_simple_keyword_with_text_only() -> None:
    """With only a text backend, every step of the path is skipped down to simple-keyword."""
    arce = NamedStrategy("arce", 0.9, 0.95, "text", "vector", "graph")
    navigator = NamedStrategy("breadth-depth-navigator", 0.9, 0.85, "graph")
    keyword = NamedStrategy("simple-keyword", 0.5, 0.3, "text")
    request = make_request(preferred_strategies=("arce",))
    with running() as services:
        chosen = ConfidenceWeightedSelector().select(
            [arce, navigator, keyword], request, backends("text")
        )
    assert names(chosen) == ["simple-keyword"]
    assert "arce needs graph, vector; falling back to simple-keyword" in services.notes


def test_selector_reports_every_degradation_when_nothing_is_named() -> None:
    """Without named strategies, each strategy of the path that lacks a backend is noted."""
    arce = NamedStrategy("arce", 0.9, 0.95, "text", "vector", "graph")
    navigator = NamedStrategy("breadth-depth-navigator", 0.9, 0.85, "graph")
    keyword = NamedStrategy("simple-keyword", 0.5, 0.3, "text")
    with running() as services:
        chosen = ConfidenceWeightedSelector().select(
            [arce, navigator, keyword], make_request(), backends("text")
        )
    assert names(chosen) == ["simple-keyword"]
    assert "arce needs graph, vector; falling back to simple-keyword" in services.notes
    assert "breadth-depth-navigator needs graph; falling back to simple-keyword" in services.notes


def test_selector_reports_to_listeners() -> None:
    """Listeners receive a StrategySelectionEvent with what was excluded and why."""
    events: list[StrategySelectionEvent] = []
    selector = ConfidenceWeightedSelector(listeners=[events.append])
    selector.select([StubStrategy("a", 0.5), StubStrategy("b", 0.0)], make_request(), backends())
    assert events[0].selected == (("a", 0.5),)
    assert events[0].excluded == {"b": "declined (confidence 0)"}


# -- 2. ProportionalBudgetAllocator ------------------------------------------------------


def test_allocator_splits_in_proportion_to_confidence_times_quality() -> None:
    """Weights 0.5*0.8 and 0.5*0.4 split 3000 tokens 2000 / 1000."""
    a, b = StubStrategy("a", 0.5, quality=0.8), StubStrategy("b", 0.5, quality=0.4)
    allocations = ProportionalBudgetAllocator().allocate([(a, 0.5), (b, 0.5)], 3000, make_request())
    assert [(s.name, t) for s, _, t in allocations] == [("a", 2000), ("b", 1000)]


def test_allocator_excludes_shares_below_the_minimum_and_redistributes() -> None:
    """The weakest strategy's share under min-useful-budget goes to the others."""
    strong = StubStrategy("strong", 0.9, quality=0.9)
    middle = StubStrategy("middle", 0.5, quality=0.5)
    weak = StubStrategy("weak", 0.1, quality=0.3)
    candidates = [(strong, 0.9), (middle, 0.5), (weak, 0.1)]
    allocations = ProportionalBudgetAllocator().allocate(candidates, 3000, make_request())
    assert [s.name for s, _, _ in allocations] == ["strong", "middle"]
    assert sum(t for _, _, t in allocations) == 3000
    assert all(t >= 500 for _, _, t in allocations)


def test_allocator_honours_the_configured_minimum() -> None:
    """min-useful-budget comes from the running assembly's settings."""
    a, b = StubStrategy("a", 0.9, quality=0.9), StubStrategy("b", 0.2, quality=0.5)
    with running({"budget-allocator": {"min-useful-budget": 50}}):
        allocations = ProportionalBudgetAllocator().allocate(
            [(a, 0.9), (b, 0.2)], 1000, make_request()
        )
    assert [s.name for s, _, _ in allocations] == ["a", "b"]


def test_allocator_rounds_deterministically_to_the_exact_total() -> None:
    """Three equal strategies share 1001 tokens as 334/334/333, every time."""
    candidates = [(StubStrategy(n, 0.5), 0.5) for n in "abc"]
    first = ProportionalBudgetAllocator(min_useful_budget=0).allocate(
        candidates, 1001, make_request()
    )
    again = ProportionalBudgetAllocator(min_useful_budget=0).allocate(
        candidates, 1001, make_request()
    )
    assert [t for _, _, t in first] == [334, 334, 333] == [t for _, _, t in again]


def test_allocator_gives_a_budget_below_the_minimum_to_the_best_strategy() -> None:
    """With 300 tokens (below 500) the best strategy gets all of them; zero gets nothing."""
    best, other = StubStrategy("best", 0.9, quality=0.9), StubStrategy("other", 0.5)
    allocator = ProportionalBudgetAllocator()
    allocations = allocator.allocate([(other, 0.5), (best, 0.9)], 300, make_request())
    assert [(s.name, t) for s, _, t in allocations] == [("best", 300)]
    assert allocator.allocate([(best, 0.9)], 0, make_request()) == []


# -- 3. ParallelStrategyExecutor ---------------------------------------------------------


def test_executor_runs_strategies_in_parallel() -> None:
    """Three strategies sleeping 0.3 s each finish in well under 0.9 s."""
    strategies = [
        SlowStrategy(f"s{i}", 0.3, fragments=[make_fragment(f"uko://x#{i}")]) for i in range(3)
    ]
    started = time.perf_counter()
    fragments = ParallelStrategyExecutor().execute(
        [(s, 0.5, 100) for s in strategies], make_request(), backends(), None
    )
    assert time.perf_counter() - started < 0.75
    assert [f.uko_node for f in fragments] == ["uko://x#0", "uko://x#1", "uko://x#2"]


def test_executor_abandons_a_strategy_that_times_out() -> None:
    """A strategy slower than timeout-seconds is abandoned and noted; the others count."""
    slow = SlowStrategy("slow", 2.0, fragments=[make_fragment("uko://x#slow")])
    fast = StubStrategy("fast", 0.5, fragments=[make_fragment("uko://x#fast")])
    started = time.perf_counter()
    with running({"strategy-executor": {"timeout-seconds": 0.2}}) as services:
        fragments = ParallelStrategyExecutor().execute(
            [(slow, 0.5, 100), (fast, 0.5, 100)], make_request(), backends(), None
        )
    assert time.perf_counter() - started < 1.5
    assert [f.uko_node for f in fragments] == ["uko://x#fast"]
    assert any("slow timed out" in n for n in services.notes)


def test_executor_opens_the_circuit_after_consecutive_failures_per_plan() -> None:
    """Three failures for plan A skip the strategy for plan A only, until the cool-down."""
    clock = [0.0]
    executor = ParallelStrategyExecutor(cooldown_seconds=60, clock=lambda: clock[0])
    broken = StubStrategy("broken", 0.5, error=RuntimeError("down"))
    plan_a, plan_b = {"plan_id": "A"}, {"plan_id": "B"}
    for _ in range(3):
        executor.execute([(broken, 0.5, 100)], make_request(), backends(), plan_a)
    assert len(broken.calls) == 3
    with running() as services:
        executor.execute([(broken, 0.5, 100)], make_request(), backends(), plan_a)
    assert len(broken.calls) == 3, "the open circuit still called the strategy"
    assert any("circuit open" in n for n in services.notes)
    executor.execute([(broken, 0.5, 100)], make_request(), backends(), plan_b)
    assert len(broken.calls) == 4, "another plan's circuit is independent"
    clock[0] = 61.0
    executor.execute([(broken, 0.5, 100)], make_request(), backends(), plan_a)
    assert len(broken.calls) == 5, "after the cool-down a trial call is made"
    executor.execute([(broken, 0.5, 100)], make_request(), backends(), plan_a)
    assert len(broken.calls) == 5, "the failed trial re-opened the circuit"


def test_executor_success_resets_the_failure_count() -> None:
    """Failures must be consecutive to open the circuit."""
    flaky = StubStrategy("flaky", 0.5, error=RuntimeError("down"))
    executor = ParallelStrategyExecutor()
    for error in (RuntimeError("x"), RuntimeError("x"), None, RuntimeError("x"), RuntimeError("x")):
        flaky.error = error
        executor.execute([(flaky, 0.5, 100)], make_request(), backends(), None)
    assert not executor.is_open("flaky")


def test_executor_treats_a_wrong_return_type_as_a_failure() -> None:
    """A strategy returning a string contributes nothing and is noted."""
    wrong = WrongTypeStrategy("wrong", 0.5)
    right = StubStrategy("right", 0.5, fragments=[make_fragment("uko://x#r", strategy="")])
    with running() as services:
        fragments = ParallelStrategyExecutor().execute(
            [(wrong, 0.5, 10), (right, 0.5, 10)], make_request(), backends(), None
        )
    assert [f.provenance.strategy for f in fragments] == ["right"]
    assert fragments[0].metadata["strategy_quality"] == "0.5"
    assert any("wrong returned str" in n for n in services.notes)


def test_executor_runs_strategies_inside_the_assembly() -> None:
    """Strategies on worker threads see the running assembly's services."""
    seen: list[object] = []

    def produce(budget: int) -> list[ContextFragment]:
        seen.append((assembly.current(), threading.current_thread().name))
        return []

    with running() as services:
        ParallelStrategyExecutor().execute(
            [(StubStrategy("a", 0.5, fragments=produce), 0.5, 10)], make_request(), backends(), None
        )
    assert seen[0][0] is services
    assert seen[0][1] != threading.current_thread().name


# -- 4. ContentHashDeduplicator ----------------------------------------------------------


def test_dedup_keeps_the_most_relevant_copy_in_input_order() -> None:
    """Identical node and content: the highest relevance stays, order is stable."""
    a_low = fragment("a", "def a(): pass", relevance=0.2)
    b = fragment("b", "def b(): pass", relevance=0.1)
    a_high = fragment("a", "def a(): pass", relevance=0.9)
    a_other_depth = fragment("a", "def a(): ...", relevance=0.3, depth=4)
    kept = ContentHashDeduplicator().deduplicate([a_low, b, a_high, a_other_depth])
    assert [f.fragment_id for f in kept] == [
        b.fragment_id,
        a_high.fragment_id,
        a_other_depth.fragment_id,
    ]


def test_dedup_uko_identity_mode_keeps_one_per_node() -> None:
    """uko-identity ignores content: one fragment per URI."""
    first = fragment("a", "def a(): pass", relevance=0.2)
    second = fragment("a", "def a(): ...", relevance=0.7, depth=4)
    with running({"fragment-deduplicator": {"dedup-strategy": "uko-identity"}}):
        kept = ContentHashDeduplicator().deduplicate([first, second])
    assert [f.fragment_id for f in kept] == [second.fragment_id]


def test_dedup_semantic_mode_merges_near_identical_content() -> None:
    """Two nodes whose embeddings are nearly parallel collapse to the more relevant one."""
    vectors = {"copy one": [1.0, 0.0], "copy two": [0.999, 0.02], "else": [0.0, 1.0]}
    one = make_fragment("uko://x#one", "copy one", relevance=0.4)
    two = make_fragment("uko://y#two", "copy two", relevance=0.8)
    other = make_fragment("uko://z#else", "else", relevance=0.1)
    dedup = ContentHashDeduplicator(
        mode="semantic", embed=lambda texts: [vectors[t] for t in texts]
    )
    kept = dedup.deduplicate([one, two, other])
    assert [f.uko_node for f in kept] == ["uko://y#two", "uko://z#else"]


def test_dedup_semantic_mode_without_an_embedder_uses_content_hash() -> None:
    """No embed callable: content-hash deduplication and a note."""
    one, two = make_fragment("uko://x#a", "same"), make_fragment("uko://x#a", "same")
    with running({"fragment-deduplicator": {"dedup-strategy": "semantic"}}) as services:
        kept = ContentHashDeduplicator().deduplicate([one, two])
    assert len(kept) == 1
    assert "semantic deduplication needs an embedder; using content-hash" in services.notes


# -- 5. MaxDepthResolver -----------------------------------------------------------------


def test_depth_resolver_keeps_the_deepest_rendering_that_fits() -> None:
    """With room, depth 9 wins; with less, depth 4; with none, the smallest rendering."""
    deep = fragment("f", token_count=300, depth=9, relevance=0.3)
    middle = fragment("f", token_count=80, depth=4, relevance=0.9)
    shallow = fragment("f", token_count=5, depth=0)
    resolver = MaxDepthResolver()
    assert [f.detail_depth for f in resolver.resolve([shallow, deep, middle], 1000)] == [9]
    assert [f.detail_depth for f in resolver.resolve([shallow, deep, middle], 100)] == [4]
    assert [f.detail_depth for f in resolver.resolve([deep, middle, shallow], 2)] == [0]


def test_depth_resolver_spends_the_budget_on_the_most_relevant_node_first() -> None:
    """The more relevant node gets its deep rendering; the other is left with what remains."""
    hot = [
        fragment("hot", token_count=90, depth=9, relevance=0.9),
        fragment("hot", token_count=10, depth=0, relevance=0.9),
    ]
    cold = [
        fragment("cold", token_count=90, depth=9, relevance=0.2),
        fragment("cold", token_count=10, depth=0, relevance=0.2),
    ]
    resolved = MaxDepthResolver().resolve([*cold, *hot], 100)
    depths = {f.uko_node.rsplit("#", 1)[1]: f.detail_depth for f in resolved}
    assert depths == {"hot": 9, "cold": 0}


def test_depth_resolver_carries_the_best_relevance_to_the_kept_rendering() -> None:
    """Evidence for a node at one depth counts for the rendering that is kept."""
    deep = fragment("f", token_count=50, depth=9, relevance=0.3)
    shallow = fragment("f", token_count=5, depth=0, relevance=0.8)
    (kept,) = MaxDepthResolver().resolve([deep, shallow], 1000)
    assert (kept.fragment_id, kept.relevance_score) == (deep.fragment_id, 0.8)


# -- 6. WeightedCompositeScorer ----------------------------------------------------------


def components(scored: ScoredFragment) -> dict[str, float]:
    return {k: round(v, 3) for k, v in scored.score_components.items()}


def test_scorer_combines_the_four_weighted_dimensions() -> None:
    """0.4*relevance + 0.3*hierarchy + 0.2*quality + 0.1*recency with the default weights."""
    f = fragment("f", relevance=0.8, metadata={"focus_distance": "1", "strategy_quality": "0.9"})
    (scored,) = WeightedCompositeScorer().score([f], None)
    assert components(scored) == {
        "relevance": 0.8,
        "hierarchy": 0.5,
        "quality": 0.9,
        "recency": 1.0,
    }
    assert scored.composite_score == pytest.approx(0.4 * 0.8 + 0.3 * 0.5 + 0.2 * 0.9 + 0.1)


def test_scorer_derives_hierarchy_from_the_plan_focus() -> None:
    """The focus node scores 1.0, its method 0.5, the same file 1/3, elsewhere 1/5."""
    focus = {"focus": (f"{BASE}/app.py#Config",)}
    nodes = [
        fragment("Config"),
        fragment("Config.load"),
        fragment("main"),
        make_fragment("https://cleveragents.ai/r/OTHER/lib.py#x", resource_id=RESOURCE_B),
    ]
    scored = WeightedCompositeScorer().score(nodes, focus)
    assert [round(s.score_components["hierarchy"], 3) for s in scored] == [1.0, 0.5, 0.333, 0.2]


def test_scorer_uses_the_strategy_quality_mapping() -> None:
    """A strategy looked up by name overrides the metadata's quality."""
    f = fragment("f", strategy="breadth-depth-navigator", metadata={"strategy_quality": "0.1"})
    navigator = StubStrategy("breadth-depth-navigator", quality=0.85)
    (scored,) = WeightedCompositeScorer({"breadth-depth-navigator": navigator}).score([f], None)
    assert scored.score_components["quality"] == pytest.approx(0.85)


def test_scorer_decays_recency_for_retired_revisions() -> None:
    """Current nodes score 1.0; a revision retired 30 days ago 0.5; 60 days 0.25."""
    now = datetime(2025, 1, 31, tzinfo=UTC)

    def retired(days: int) -> ContextFragment:
        stamp = (now - timedelta(days=days)).isoformat()
        return fragment(f"r{days}", metadata={"is_current": "false", "valid_until": stamp})

    scorer = WeightedCompositeScorer(now=lambda: now)
    scored = scorer.score([fragment("cur"), retired(30), retired(60)], None)
    assert [round(s.score_components["recency"], 3) for s in scored] == [1.0, 0.5, 0.25]


def test_scorer_reads_its_weights_from_the_settings() -> None:
    """Relevance-only weights make the composite equal the relevance."""
    weights = {
        "relevance-weight": 1.0,
        "hierarchy-weight": 0.0,
        "quality-weight": 0.0,
        "recency-weight": 0.0,
    }
    with running({"fragment-scorer": weights}):
        (scored,) = WeightedCompositeScorer().score([fragment("f", relevance=0.37)], None)
    assert scored.composite_score == pytest.approx(0.37)


# -- 7. GreedyKnapsackPacker -------------------------------------------------------------


def test_fallback_depths_are_the_steps_below_the_current_depth() -> None:
    """A depth-9 fragment tries 4, 2, 0; a depth-4 one 2, 0."""
    assert list(fallback_depths(9, [9, 4, 2, 0])) == [4, 2, 0]
    assert list(fallback_depths(4, [0, 2, 4, 9])) == [2, 0]


def test_packer_takes_the_best_scores_first_and_never_exceeds_the_budget() -> None:
    """Greedy by composite score; what does not fit is dropped and recorded."""
    items = [
        make_scored(fragment(n, token_count=40), s) for n, s in (("a", 0.2), ("b", 0.9), ("c", 0.5))
    ]
    with running() as services:
        packed = GreedyKnapsackPacker().pack(items, 90, StaticDetailLevelMaps())
    assert [f.uko_node[-1] for f in packed] == ["b", "c"]
    assert services.dropped == [
        DroppedFragment(
            uko_node=f"{BASE}/app.py#a",
            path="app.py",
            detail_depth=9,
            delivered_depth=None,
            reason="over budget",
        )
    ]


def test_packer_downgrades_through_the_fallback_depths() -> None:
    """A depth-9 fragment that does not fit is re-rendered at 4, then 2, until it fits."""
    big = fragment("big", depth=9)
    renderer = ShallowRenderer()
    fits_at_two = CL100K.count("\n".join(big.content.splitlines()[:3]))
    with running(renderer=renderer) as services:
        packed = GreedyKnapsackPacker().pack(
            [make_scored(big)], fits_at_two, StaticDetailLevelMaps()
        )
    assert [(f.uko_node, f.detail_depth) for f in packed] == [(big.uko_node, 2)]
    assert renderer.calls == [(big.uko_node, 4), (big.uko_node, 2)]
    assert [(d.detail_depth, d.delivered_depth) for d in services.dropped] == [(9, 2)]


def test_packer_skips_fallback_renderings_below_the_minimum() -> None:
    """A re-rendering under min-fragment-tokens is not used; the fragment is dropped."""
    big = fragment("big", depth=9)
    with running({"budget-packer": {"min-fragment-tokens": 50}}, ShallowRenderer()) as services:
        packed = GreedyKnapsackPacker().pack([make_scored(big)], 40, StaticDetailLevelMaps())
    assert packed == []
    assert [d.delivered_depth for d in services.dropped] == [None]


def test_packer_without_a_renderer_drops_what_does_not_fit() -> None:
    """No renderer, no depth fallback; small fragments still fill the gap."""
    big, small = fragment("big", token_count=500), fragment("small", token_count=20)
    packed = GreedyKnapsackPacker().pack(
        [make_scored(big, 0.9), make_scored(small, 0.1)], 100, StaticDetailLevelMaps()
    )
    assert [f.uko_node[-5:] for f in packed] == ["small"]


def test_packer_never_packs_text_twice_across_containment() -> None:
    """A method packed before its whole class gives its tokens back; one scored after it is
    skipped; neither is listed as dropped. The refund lets the next fragment in."""
    method = fragment("Cart.add", token_count=40)
    whole = fragment("Cart", code("Cart") + "\n" + method.content, token_count=100)
    inside_after = fragment("Cart.remove", token_count=30)
    other = fragment("checkout", token_count=45)
    items = [
        make_scored(method, 0.9),
        make_scored(whole, 0.8),
        make_scored(inside_after, 0.7),
        make_scored(other, 0.6),
    ]
    with running() as services:
        packed = GreedyKnapsackPacker().pack(items, 150, StaticDetailLevelMaps())
    assert [f.uko_node.rsplit("#", 1)[1] for f in packed] == ["Cart", "checkout"]
    assert services.dropped == []  # without the refund, checkout would not have fitted


def test_packer_containment_needs_the_container_in_full() -> None:
    """A class packed as an outline (depth 6) holds no method bodies; an old revision of a
    method (``uri@time``) is not inside the current class either."""
    outline = fragment("Cart", "class Cart:\n    def add(self, sku): ...", depth=6)
    method = fragment("Cart.add", token_count=40)
    whole = fragment("Cart2", token_count=60)
    old = make_fragment(
        f"{BASE}/app.py#Cart2.add@2026-01-01T00:00:00.000000Z", "def add(): old", path="app.py"
    )
    items = [make_scored(outline, 0.9), make_scored(method, 0.8)]
    items += [make_scored(whole, 0.7), make_scored(old, 0.6)]
    packed = GreedyKnapsackPacker().pack(items, 1000, StaticDetailLevelMaps())
    assert [f.uko_node.rsplit("#", 1)[1] for f in packed] == [
        "Cart",
        "Cart.add",
        "Cart2",
        "Cart2.add@2026-01-01T00:00:00.000000Z",
    ]


# -- 8. RelevanceCoherenceOrderer --------------------------------------------------------


def located(
    node: str, path: str, line: int, resource: str = RESOURCE_A, **kw: Any
) -> ContextFragment:
    return make_fragment(
        f"{BASE}/{path}#{node}", f"# {node}", path=path, start_line=line, resource_id=resource, **kw
    )


def test_orderer_groups_by_file_in_source_order_groups_by_best_score() -> None:
    """Files appear by their best fragment; inside a file, by line, class before method."""
    packed = [  # as the packer hands them over: best score first
        located("Config.load", "config.py", 12),
        located("main", "app.py", 40),
        located("Config", "config.py", 10),
        located("helper", "app.py", 5),
        located("other", "config.py", 1, resource=RESOURCE_B),
    ]
    ordered = RelevanceCoherenceOrderer().order(packed)
    assert [f.uko_node.rsplit("#", 1)[1] for f in ordered] == [
        "Config",
        "Config.load",
        "helper",
        "main",
        "other",
    ]


def test_orderer_relevance_mode_keeps_the_score_order() -> None:
    """relevance: the packer's order, untouched."""
    packed = [located("b", "x.py", 9), located("a", "x.py", 1)]
    with running({"fragment-orderer": {"ordering": "relevance"}}):
        assert RelevanceCoherenceOrderer().order(packed) == packed


def test_orderer_topological_mode_puts_dependencies_first() -> None:
    """What a fragment depends on, or is contained in, comes before it."""
    uses = located("handler", "api.py", 1, metadata={"depends_on": f"{BASE}/db.py#connect"})
    method = located("Model.save", "db.py", 20)
    connect = located("connect", "db.py", 5)
    model = located("Model", "db.py", 10)
    ordered = RelevanceCoherenceOrderer(mode="topological").order([uses, method, connect, model])
    assert [f.uko_node.rsplit("#", 1)[1] for f in ordered] == [
        "connect",
        "handler",
        "Model",
        "Model.save",
    ]


def test_orderer_topological_mode_breaks_cycles_by_score() -> None:
    """Two fragments depending on each other come out best-scored first."""
    a = located("a", "x.py", 1, metadata={"depends_on": f"{BASE}/x.py#b"})
    b = located("b", "x.py", 2, metadata={"depends_on": f"{BASE}/x.py#a"})
    ordered = RelevanceCoherenceOrderer(mode="topological").order([a, b])
    assert [f.uko_node[-1] for f in ordered] == ["a", "b"]


def test_orderer_hooks_can_be_overridden() -> None:
    """A subclass groups by resource only and sorts by node name (Template Method)."""

    class ByResource(RelevanceCoherenceOrderer):
        def _group_key(self, fragment: ContextFragment) -> str:
            return fragment.provenance.resource_id

        def _intra_group_sort(self, group: list[Any]) -> list[Any]:
            return sorted(group, key=lambda item: item[1].uko_node.rsplit("#", 1)[1])

    packed = [located("z", "b.py", 1), located("a", "c.py", 9), located("m", "a.py", 3)]
    assert [f.uko_node[-1] for f in ByResource().order(packed)] == ["a", "m", "z"]


# -- 9. ProvenancePreambleGenerator ------------------------------------------------------


def test_preamble_lists_strategies_resources_and_structure() -> None:
    """The preamble names the files, symbols, strategies and budget use."""
    fragments = [
        located("Config", "config.py", 1),
        located("main", "app.py", 1),
        located("x", "y.py", 1, resource=RESOURCE_B),
    ]
    preamble = ProvenancePreambleGenerator().generate(fragments, ["simple-keyword"], 0.42, 200)
    assert preamble is not None
    assert "42% of budget" in preamble
    assert "simple-keyword" in preamble
    assert "config.py (d9): Config" in preamble
    assert RESOURCE_B in preamble
    assert "3 fragments, 6 tokens (42% of budget) from 3 files in 2 resources." in preamble
    alone = ProvenancePreambleGenerator().generate(fragments[:1], ["arce"], 0.1, 200)
    assert (
        alone is not None
        and "1 fragment, 2 tokens (10% of budget) from 1 file in 1 resource." in alone
    )


def test_preamble_counts_a_files_imports_instead_of_naming_them() -> None:
    """``import.os``, ``import.os~2`` … say nothing a count does not; symbols come first."""
    imports = [
        located(f"import.m{i}", "ctx.py", i + 1, metadata={"uko_type": "uko-py:Import"})
        for i in range(11)
    ]
    use = located("import.std", "lib.rs", 1, metadata={"uko_type": "uko-rs:Use"})
    function = located("match_request", "ctx.py", 40, metadata={"uko_type": "uko-py:Method"})
    preamble = ProvenancePreambleGenerator().generate([*imports, function, use], ["arce"], 0.5, 300)
    assert preamble is not None
    assert "ctx.py (d9): match_request, 11 imports" in preamble
    assert "lib.rs (d9): 1 import" in preamble
    assert "import.m" not in preamble


def test_preamble_names_a_redefined_symbol_once_and_counts_text_chunks() -> None:
    """TypeScript overloads are nodes ``map``, ``map~2``, ``map~3``: the map names ``map``.
    Chunks of text (``L1-10``) are counted: each fragment's header gives its lines."""
    overloads = [
        located("map" + suffix, "ops.ts", i + 1) for i, suffix in enumerate(("", "~2", "~3"))
    ]
    section = located("Usage~section2", "README.md", 1)
    preamble = ProvenancePreambleGenerator().generate([*overloads, section], ["arce"], 0.5, 300)
    assert preamble is not None
    assert "ops.ts (d9): map\n" in preamble
    assert "README.md (d9): Usage~section2" in preamble
    chunks = [located(f"L{n}-{n + 9}", "guide.txt", n) for n in (1, 11, 21)]
    prose = ProvenancePreambleGenerator().generate(chunks, ["arce"], 0.5, 300)
    assert prose is not None and "guide.txt (d9): 3 passages" in prose


def test_preamble_fits_max_tokens_by_the_real_tokenizer() -> None:
    """Many files: the structure map is cut with '… N more' and stays within the limit."""
    fragments = [located(f"f{i}", f"pkg/module_{i}.py", 1) for i in range(200)]
    for limit in (15, 40, 120):
        with running():
            preamble = ProvenancePreambleGenerator().generate(fragments, ["a", "b"], 0.9, limit)
        assert preamble is not None and CL100K.count(preamble) <= limit
    assert "more" in preamble


def test_a_file_whose_symbols_do_not_fit_is_named_alone() -> None:
    """With little room the structure map names files without their symbols, and a map
    with no room for one file is left out rather than shown as 'Structure: … N more'."""
    names = ", ".join(f"handler_number_{i}" for i in range(8))
    fragments = [
        located(f"handler_number_{i}", f"pkg/{path}.py", 1)
        for path in ("alpha", "beta")
        for i in range(8)
    ]
    full = ProvenancePreambleGenerator().generate(fragments, ["arce"], 0.5, 400)
    assert full is not None and f"pkg/alpha.py (d9): {names}" in full
    with running():
        short = ProvenancePreambleGenerator().generate(fragments, ["arce"], 0.5, 60)
    assert short is not None and CL100K.count(short) <= 60
    assert short.endswith("Structure:\n  - pkg/alpha.py (d9)\n  - pkg/beta.py (d9)")
    with running():
        none = ProvenancePreambleGenerator().generate(fragments, ["arce"], 0.5, 32)
    assert none is not None and "Structure" not in none and "more" not in none


def test_preamble_is_none_when_disabled_or_without_room() -> None:
    """preamble-enabled = false, or a limit too small for the summary, give None."""
    fragments = [located("a", "a.py", 1)]
    with running({"preamble-generator": {"preamble-enabled": False}}):
        assert ProvenancePreambleGenerator().generate(fragments, ["s"], 0.5, 200) is None
    assert ProvenancePreambleGenerator().generate(fragments, ["s"], 0.5, 2) is None


# -- 10. DepthReductionCompressor --------------------------------------------------------


def test_skeleton_re_renders_at_depth_zero_within_the_budget() -> None:
    """Every parent fragment comes back at depth 0 via the renderer, within the budget."""
    parent = make_assembled_context([fragment(f"f{i}") for i in range(5)])
    with running(renderer=ShallowRenderer()):
        skeleton = DepthReductionCompressor().compress(parent, [], 1000)
    assert [f.detail_depth for f in skeleton.fragments] == [0] * 5
    assert all(f.content.startswith("def f") and "\n" not in f.content for f in skeleton.fragments)
    assert all(f.metadata["skeleton"] == "true" for f in skeleton.fragments)
    assert skeleton.total_tokens == sum(CL100K.count(f.content) for f in skeleton.fragments)


def test_skeleton_without_a_renderer_keeps_first_lines() -> None:
    """No renderer: each fragment is reduced to its first non-empty line."""
    parent = make_assembled_context([fragment("f", "\n\nclass Big:\n    x = 1\n")])
    (only,) = DepthReductionCompressor().compress(parent, [], 100).fragments
    assert (only.content, only.detail_depth) == ("class Big:", 0)


def test_skeleton_prefers_the_child_focus_under_a_tight_budget() -> None:
    """With room for two lines, the focus node and its neighbour win; parent order is kept."""
    parent = make_assembled_context(
        [fragment(n) for n in ("alpha", "beta", "Focus", "Focus.method", "gamma")]
    )
    one_line = CL100K.count("def Focus(argument):")
    with running():
        skeleton = DepthReductionCompressor().compress(
            parent, [f"{BASE}/app.py#Focus"], 2 * one_line + 2
        )
    assert [f.uko_node.rsplit("#", 1)[1] for f in skeleton.fragments] == ["Focus", "Focus.method"]
    assert skeleton.total_tokens <= 2 * one_line + 2


def test_skeleton_of_nothing_or_with_no_budget_is_empty() -> None:
    """An empty parent or a zero budget yields an empty skeleton."""
    parent = make_assembled_context([fragment("f")])
    assert DepthReductionCompressor().compress(parent, [], 0).fragments == ()
    empty = DepthReductionCompressor().compress(AssembledContext(), [], 100)
    assert (empty.fragments, empty.total_tokens) == ((), 0)


# -- tokenizers ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("model", "name"),
    [
        ("gpt-4o", "o200k"),
        ("gpt-4o-mini-2024-07-18", "o200k"),
        ("o1-preview", "o200k"),
        ("o3-mini", "o200k"),
        ("gpt-4.1-nano", "o200k"),
        ("openai/gpt-4o", "o200k"),
        ("gpt-4", "cl100k"),
        ("gpt-4-turbo", "cl100k"),
        ("gpt-3.5-turbo", "cl100k"),
        ("text-embedding-3-small", "cl100k"),
        ("claude-sonnet-4", "cl100k"),
        ("", "cl100k"),
    ],
)
def test_tokenizer_for_model(model: str, name: str) -> None:
    """Models map to the vocabulary they count with; unknown ones to cl100k."""
    assert tokenizer_for_model(model) == name


def test_the_longest_claimed_prefix_chooses_the_tokenizer() -> None:
    """Claims are model-name prefixes, case-insensitive, provider prefixes ignored."""
    claims = {"wide": ("gpt-",), "narrow": ("gpt-4o",), "other": ("GPT-4O",), "none": ()}
    assert claimed_tokenizer("gpt-3.5-turbo", claims) == "wide"
    assert claimed_tokenizer("azure/gpt-4o-mini", claims) == "narrow"  # tie: first by name
    assert claimed_tokenizer("claude-opus-4", claims) is None
    assert claimed_tokenizer("", claims) is None


def test_tokenizers_count_like_the_openai_vocabularies() -> None:
    """Known token ids: cl100k and o200k split the same text differently."""
    assert get_tokenizer("cl100k").encode("hello world") == [15339, 1917]
    assert get_tokenizer("o200k").encode("hello world") == [24912, 2375]
    assert get_tokenizer("o200k").count("<|endoftext|>") > 1, "special tokens count as text"


def test_decoding_a_split_character_does_not_raise() -> None:
    """A token sequence that cuts a character in two decodes with U+FFFD."""
    tokens = CL100K.encode("日本語")
    assert CL100K.decode(tokens[:3]).startswith("日本")
    assert CL100K.truncate("日本語 and more", 2) in ("日", "日本", "")


def test_tokenizers_work_offline_without_importing_the_vocabulary_files() -> None:
    """With sockets disabled, a fresh process builds both tokenizers from the extension."""
    script = (
        "import socket, sys\n"
        "def refuse(*a, **k):\n    raise OSError('network disabled')\n"
        "socket.socket = refuse\n"
        "socket.create_connection = refuse\n"
        "from cleveragents_acms.pipeline.tokenizers import get_tokenizer, tokenizer_for_model\n"
        "print(get_tokenizer('cl100k').count('hello world'), get_tokenizer('o200k').count('hi'))\n"
        "print('bpe_openai.data' in sys.modules)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["2", "1", "False"]


def test_a_long_text_counts_as_its_parts_do() -> None:
    """About 46k tokens of source count as the sum of the same text's nine copies split
    at a line break (how fast: ``benchmarks/pipeline``)."""
    part = Path(cleveragents.config.__file__).read_text(encoding="utf-8")
    tokens = CL100K.count(part * 9)
    assert tokens > 40_000
    assert abs(tokens - 9 * CL100K.count(part)) <= 9  # only the seams may merge
