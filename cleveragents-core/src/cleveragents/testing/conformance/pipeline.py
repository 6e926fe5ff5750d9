"""Conformance suites for the ten Context Assembly Pipeline stages (spec 000).

Each suite checks the postconditions the pipeline relies on when it chains
the stages, on hand-made and on seeded random inputs (no extra dependency):
allocations within the total budget, packs within the budget, deduplication
keeping the best duplicate, orderings that are permutations …
"""

from __future__ import annotations

import random
from collections import Counter
from typing import Any, ClassVar

import pytest

from cleveragents.models.context import AssembledContext, ContextFragment, ScoredFragment
from cleveragents.protocols.backends import BackendSet
from cleveragents.testing.conformance._base import ComponentConformance
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

__all__ = [
    "BudgetAllocatorConformance",
    "BudgetPackerConformance",
    "DetailDepthResolverConformance",
    "FragmentDeduplicatorConformance",
    "FragmentOrdererConformance",
    "FragmentScorerConformance",
    "PreambleGeneratorConformance",
    "SkeletonCompressorConformance",
    "StrategyExecutorConformance",
    "StrategySelectorConformance",
    "random_fragments",
]

SEED = 20240601


def random_fragments(
    rng: random.Random, count: int, *, nodes: int | None = None
) -> list[ContextFragment]:
    """``count`` valid fragments over ``nodes`` distinct UKO nodes (default: all distinct)."""
    fragments = []
    for i in range(count):
        node = i if nodes is None else rng.randrange(nodes)
        depth = rng.choice([0, 2, 4, 9])
        words = rng.randint(1, 60)
        content = " ".join(f"w{node}_{depth}_{k}" for k in range(words))
        fragments.append(
            make_fragment(
                f"uko://conformance/m{node % 7}.py#n{node}",
                content,
                token_count=words,
                relevance=round(rng.random(), 3),
                depth=depth,
                resource_id=rng.choice([RESOURCE_A, RESOURCE_B]),
                path=f"m{node % 7}.py",
                start_line=1 + node,
            )
        )
    return fragments


def _ids(fragments: list[ContextFragment]) -> list[str]:
    return [f.fragment_id for f in fragments]


# -- Phase 1 -------------------------------------------------------------------------


class StrategySelectorConformance(ComponentConformance):
    """Excludes confidence 0, returns each strategy once, highest confidence first."""

    slot_key = "strategy-selector"

    def select(self, component: Any, strategies: list[StubStrategy]) -> list[tuple[Any, float]]:
        result = component.select(strategies, make_request(), BackendSet())
        assert isinstance(result, list)
        for item in result:
            assert isinstance(item, tuple) and len(item) == 2, item
        return result

    def test_no_strategies_select_nothing(self, component: Any) -> None:
        assert self.select(component, []) == []

    def test_zero_confidence_is_excluded(self, component: Any) -> None:
        strategies = [StubStrategy("never", 0.0), StubStrategy("maybe", 0.4)]
        chosen = [s.name for s, _ in self.select(component, strategies)]
        assert "never" not in chosen
        assert chosen == ["maybe"]

    def test_sorted_by_confidence_when_qualities_are_equal(self, component: Any) -> None:
        rng = random.Random(SEED)
        for _ in range(25):
            strategies = [
                StubStrategy(f"s{i}", rng.choice([0.0, round(rng.random(), 3)]))
                for i in range(rng.randint(1, 8))
            ]
            result = self.select(component, strategies)
            names = [s.name for s, _ in result]
            assert len(names) == len(set(names)), "a strategy was selected twice"
            assert all(s in strategies for s, _ in result), "selected an unknown strategy"
            assert all(s.confidence > 0 for s, _ in result), "selected a strategy at 0.0"
            confidences = [c for _, c in result]
            assert all(0.0 < c <= 1.0 for c in confidences), confidences
            assert confidences == sorted(confidences, reverse=True)


class BudgetAllocatorConformance(ComponentConformance):
    """Allocations are non-negative, per candidate, and sum to at most the total."""

    slot_key = "budget-allocator"

    def test_no_candidates_allocate_nothing(self, component: Any) -> None:
        assert component.allocate([], 1000, make_request()) == []

    def test_allocations_never_exceed_the_total_budget(self, component: Any) -> None:
        rng = random.Random(SEED)
        for _ in range(60):
            candidates = [
                (StubStrategy(f"s{i}", c, quality=round(rng.random(), 2)), c)
                for i, c in enumerate(
                    round(rng.uniform(0.01, 1.0), 3) for _ in range(rng.randint(1, 6))
                )
            ]
            total = rng.choice([1, 7, 100, 999, 8000, 128_000])
            allocations = component.allocate(candidates, total, make_request())
            assert isinstance(allocations, list)
            tokens = [t for _, _, t in allocations]
            assert all(isinstance(t, int) and t >= 0 for t in tokens), tokens
            assert sum(tokens) <= total, f"{sum(tokens)} allocated of {total}"
            strategies = [s for s, _, _ in allocations]
            assert len({id(s) for s in strategies}) == len(strategies)
            known = {id(s): c for s, c in candidates}
            for strategy, confidence, _ in allocations:
                assert id(strategy) in known, "allocated to a strategy that was not a candidate"
                assert confidence == pytest.approx(known[id(strategy)])

    def test_a_single_candidate_gets_a_useful_share(self, component: Any) -> None:
        only = StubStrategy("only", 0.9)
        allocations = component.allocate([(only, 0.9)], 4000, make_request())
        assert [(s.name, t > 0) for s, _, t in allocations] == [("only", True)]


class StrategyExecutorConformance(ComponentConformance):
    """Runs every allocation with its budget; a failing strategy never sinks the others."""

    slot_key = "strategy-executor"

    def execute(self, component: Any, allocations: list[tuple[Any, float, int]]) -> list[Any]:
        fragments = component.execute(allocations, make_request(), BackendSet(), None)
        assert isinstance(fragments, list)
        return fragments

    def test_nothing_to_run_gives_nothing(self, component: Any) -> None:
        assert self.execute(component, []) == []

    def test_collects_every_strategys_fragments(self, component: Any) -> None:
        first = StubStrategy("first", 0.9, fragments=[make_fragment("uko://x#1")])
        second = StubStrategy(
            "second", 0.5, fragments=[make_fragment("uko://x#2"), make_fragment("uko://x#3")]
        )
        fragments = self.execute(component, [(first, 0.9, 300), (second, 0.5, 200)])
        assert sorted(f.uko_node for f in fragments) == ["uko://x#1", "uko://x#2", "uko://x#3"]

    def test_each_strategy_gets_its_allocated_budget(self, component: Any) -> None:
        first, second = StubStrategy("first", 0.9), StubStrategy("second", 0.5)
        self.execute(component, [(first, 0.9, 300), (second, 0.5, 120)])
        assert [budget for _, budget in first.calls] == [300]
        assert [budget for _, budget in second.calls] == [120]

    def test_a_failing_strategy_is_skipped(self, component: Any) -> None:
        broken = StubStrategy("broken", 0.9, error=RuntimeError("strategy exploded"))
        healthy = StubStrategy("healthy", 0.5, fragments=[make_fragment("uko://x#ok")])
        fragments = self.execute(component, [(broken, 0.9, 100), (healthy, 0.5, 100)])
        assert [f.uko_node for f in fragments] == ["uko://x#ok"]


# -- Phase 2 -------------------------------------------------------------------------


class FragmentDeduplicatorConformance(ComponentConformance):
    """Returns a subset without duplicates, keeping the most relevant of each group."""

    slot_key = "fragment-deduplicator"

    def test_no_fragments_give_no_fragments(self, component: Any) -> None:
        assert component.deduplicate([]) == []

    def test_distinct_fragments_are_all_kept(self, component: Any) -> None:
        fragments = random_fragments(random.Random(SEED), 12)
        assert sorted(_ids(component.deduplicate(fragments))) == sorted(_ids(fragments))

    def test_duplicates_keep_the_highest_relevance(self, component: Any) -> None:
        low = make_fragment("uko://dup#f", "def f(): pass", relevance=0.2, strategy="a")
        high = make_fragment("uko://dup#f", "def f(): pass", relevance=0.9, strategy="b")
        mid = make_fragment("uko://dup#f", "def f(): pass", relevance=0.5, strategy="c")
        other = make_fragment("uko://dup#g", "def g(): pass", relevance=0.1)
        kept = component.deduplicate([low, high, other, mid])
        assert sorted(_ids(kept)) == sorted([high.fragment_id, other.fragment_id])

    def test_result_is_a_subset_without_repeated_content(self, component: Any) -> None:
        rng = random.Random(SEED)
        for _ in range(20):
            base = random_fragments(rng, rng.randint(1, 10))
            copies = [
                make_fragment(
                    f.uko_node,
                    f.content,
                    token_count=f.token_count,
                    relevance=round(rng.random(), 3),
                    depth=f.detail_depth,
                )
                for f in rng.sample(base, rng.randint(0, len(base)))
            ]
            fragments = base + copies
            rng.shuffle(fragments)
            kept = component.deduplicate(fragments)
            assert set(_ids(kept)) <= set(_ids(fragments))
            keys = Counter((f.uko_node, f.content) for f in kept)
            assert max(keys.values()) == 1, "duplicates survived"
            assert {(f.uko_node, f.content) for f in kept} == {
                (f.uko_node, f.content) for f in fragments
            }
            for f in kept:
                best = max(
                    g.relevance_score
                    for g in fragments
                    if (g.uko_node, g.content) == (f.uko_node, f.content)
                )
                assert f.relevance_score == best


class DetailDepthResolverConformance(ComponentConformance):
    """One fragment per UKO node, chosen among that node's renderings."""

    slot_key = "detail-depth-resolver"
    #: The spec's default keeps the deepest rendering that fits the budget.
    prefers_deepest: ClassVar[bool] = True

    def test_no_fragments_give_no_fragments(self, component: Any) -> None:
        assert component.resolve([], 1000) == []

    def test_one_rendering_per_node_with_an_ample_budget(self, component: Any) -> None:
        rng = random.Random(SEED)
        for _ in range(20):
            fragments = random_fragments(rng, rng.randint(1, 15), nodes=5)
            resolved = component.resolve(fragments, 100_000)
            nodes = [f.uko_node for f in resolved]
            assert len(nodes) == len(set(nodes)), "a node is still present at several depths"
            assert set(nodes) == {f.uko_node for f in fragments}, "a node was lost"
            assert set(_ids(resolved)) <= set(_ids(fragments))

    def test_prefers_the_deepest_rendering_that_fits(self, component: Any) -> None:
        if not self.prefers_deepest:
            pytest.skip("this resolver does not prefer the deepest rendering")
        shallow = make_fragment("uko://n#f", "f", token_count=5, depth=0)
        deep = make_fragment("uko://n#f", "def f(): ...", token_count=50, depth=9)
        assert _ids(component.resolve([shallow, deep], 1000)) == [deep.fragment_id]


class FragmentScorerConformance(ComponentConformance):
    """One ScoredFragment per fragment, scores in [0, 1], monotone in relevance."""

    slot_key = "fragment-scorer"

    def test_no_fragments_give_no_scores(self, component: Any) -> None:
        assert component.score([], None) == []

    def test_scores_every_fragment_in_unit_range(self, component: Any) -> None:
        fragments = random_fragments(random.Random(SEED), 30)
        scored = component.score(fragments, None)
        assert all(isinstance(s, ScoredFragment) for s in scored)
        assert sorted(s.fragment.fragment_id for s in scored) == sorted(_ids(fragments))
        for item in scored:
            assert 0.0 <= item.composite_score <= 1.0, item.composite_score
            assert all(isinstance(v, (int, float)) for v in item.score_components.values())

    def test_more_relevant_scores_at_least_as_high(self, component: Any) -> None:
        low = make_fragment("uko://s#low", "def low(): pass", relevance=0.1)
        high = make_fragment("uko://s#high", "def low(): pass", relevance=0.9)
        scores = {
            s.fragment.uko_node: s.composite_score for s in component.score([low, high], None)
        }
        assert scores["uko://s#high"] >= scores["uko://s#low"]


class BudgetPackerConformance(ComponentConformance):
    """Never over budget; a subset of the input nodes, ordered by score."""

    slot_key = "budget-packer"

    def make_detail_level_maps(self) -> Any:
        return StaticDetailLevelMaps()

    def pack(
        self, component: Any, scored: list[ScoredFragment], budget: int
    ) -> list[ContextFragment]:
        packed = component.pack(scored, budget, self.make_detail_level_maps())
        assert isinstance(packed, list)
        assert all(isinstance(f, ContextFragment) for f in packed)
        return packed

    def test_nothing_to_pack_gives_nothing(self, component: Any) -> None:
        assert self.pack(component, [], 1000) == []

    def test_a_zero_budget_packs_nothing(self, component: Any) -> None:
        scored = [make_scored(f) for f in random_fragments(random.Random(SEED), 5)]
        assert self.pack(component, scored, 0) == []

    def test_never_exceeds_the_budget_and_returns_a_subset(self, component: Any) -> None:
        rng = random.Random(SEED)
        for _ in range(60):
            fragments = random_fragments(rng, rng.randint(1, 25))
            scored = [make_scored(f, round(rng.random(), 3)) for f in fragments]
            budget = rng.choice([1, 5, 20, 60, 150, 400, 2000])
            packed = self.pack(component, scored, budget)
            used = sum(f.token_count for f in packed)
            assert used <= budget, f"packed {used} tokens into a budget of {budget}"
            nodes = [f.uko_node for f in packed]
            assert len(nodes) == len(set(nodes)), "a node was packed twice"
            assert set(nodes) <= {f.uko_node for f in fragments}, (
                "packed a fragment it was not given"
            )

    def test_everything_fits_when_the_budget_allows(self, component: Any) -> None:
        fragments = random_fragments(random.Random(SEED), 10)
        scored = [make_scored(f) for f in fragments]
        packed = self.pack(component, scored, sum(f.token_count for f in fragments))
        assert sorted(f.uko_node for f in packed) == sorted(f.uko_node for f in fragments)

    def test_packed_fragments_are_ordered_by_score(self, component: Any) -> None:
        fragments = random_fragments(random.Random(SEED + 1), 12)
        scores = {f.uko_node: round(0.05 + i / 20, 3) for i, f in enumerate(reversed(fragments))}
        packed = self.pack(
            component, [make_scored(f, scores[f.uko_node]) for f in fragments], 10_000
        )
        order = [scores[f.uko_node] for f in packed]
        assert order == sorted(order, reverse=True)

    def test_the_best_fragment_wins_a_tight_budget(self, component: Any) -> None:
        best = make_fragment("uko://p#best", token_count=30, relevance=0.9)
        rest = [make_fragment(f"uko://p#r{i}", token_count=30, relevance=0.2) for i in range(3)]
        scored = [make_scored(f) for f in [*rest, best]]
        assert [f.uko_node for f in self.pack(component, scored, 30)] == ["uko://p#best"]


class FragmentOrdererConformance(ComponentConformance):
    """The order is a permutation of the input: nothing added, nothing lost."""

    slot_key = "fragment-orderer"

    def test_no_fragments_give_no_fragments(self, component: Any) -> None:
        assert component.order([]) == []

    def test_returns_a_permutation(self, component: Any) -> None:
        rng = random.Random(SEED)
        for _ in range(30):
            fragments = random_fragments(rng, rng.randint(1, 20))
            ordered = component.order(list(fragments))
            assert sorted(_ids(ordered)) == sorted(_ids(fragments))

    def test_ordering_is_deterministic(self, component: Any) -> None:
        fragments = random_fragments(random.Random(SEED), 15)
        assert _ids(component.order(list(fragments))) == _ids(component.order(list(fragments)))


# -- Phase 3 -------------------------------------------------------------------------


class PreambleGeneratorConformance(ComponentConformance):
    """A string (or None when disabled) that stays roughly within ``max_tokens``.

    "Roughly" is measured without a tokenizer: at most ``max_tokens``
    whitespace-separated words and ``chars_per_token * max_tokens`` characters.
    """

    slot_key = "preamble-generator"
    chars_per_token: ClassVar[int] = 8

    def generate(
        self, component: Any, fragments: list[ContextFragment], max_tokens: int
    ) -> str | None:
        strategies = sorted({f.provenance.strategy for f in fragments}) or ["simple-keyword"]
        preamble = component.generate(fragments, strategies, 0.42, max_tokens)
        assert preamble is None or isinstance(preamble, str), type(preamble)
        return preamble

    def test_no_fragments_do_not_raise(self, component: Any) -> None:
        self.generate(component, [], 200)

    @pytest.mark.parametrize("max_tokens", [20, 60, 200])
    def test_respects_max_tokens_roughly(self, component: Any, max_tokens: int) -> None:
        fragments = random_fragments(random.Random(SEED), 80)
        preamble = self.generate(component, fragments, max_tokens)
        if preamble is None:
            return
        assert len(preamble.split()) <= max_tokens, f"{len(preamble.split())} words"
        assert len(preamble) <= self.chars_per_token * max_tokens, f"{len(preamble)} characters"


class SkeletonCompressorConformance(ComponentConformance):
    """An AssembledContext of the parent's nodes that fits ``skeleton_budget``."""

    slot_key = "skeleton-compressor"

    def compress(
        self, component: Any, parent: AssembledContext, focus: list[str], budget: int
    ) -> AssembledContext:
        skeleton = component.compress(parent, focus, budget)
        assert isinstance(skeleton, AssembledContext), type(skeleton)
        return skeleton

    @pytest.fixture
    def parent(self) -> AssembledContext:
        return make_assembled_context(random_fragments(random.Random(SEED), 20))

    @pytest.mark.parametrize("budget", [0, 10, 50, 200, 10_000])
    def test_fits_the_skeleton_budget(
        self, component: Any, parent: AssembledContext, budget: int
    ) -> None:
        skeleton = self.compress(component, parent, [parent.fragments[0].uko_node], budget)
        used = sum(f.token_count for f in skeleton.fragments)
        assert used <= budget, f"skeleton uses {used} tokens of {budget}"
        assert skeleton.total_tokens <= budget

    def test_keeps_only_the_parents_nodes(self, component: Any, parent: AssembledContext) -> None:
        skeleton = self.compress(component, parent, [], 500)
        assert {f.uko_node for f in skeleton.fragments} <= {f.uko_node for f in parent.fragments}

    def test_an_empty_parent_gives_an_empty_skeleton(self, component: Any) -> None:
        skeleton = self.compress(component, make_assembled_context([]), [], 100)
        assert skeleton.fragments == ()
