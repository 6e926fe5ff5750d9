"""Property: whatever the fragments and the budget, the context never exceeds the budget.

Counted with the real cl100k tokenizer, preamble and skeleton included, and
with strategies and renderers that report wrong token counts on purpose.
"""

from __future__ import annotations

from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cleveragents import assembly
from cleveragents.assembly import AssemblyServices
from cleveragents.models.context import ContextFragment, ScoredFragment
from cleveragents.testing.factories import (
    RESOURCE_A,
    RESOURCE_B,
    StubStrategy,
    make_assembled_context,
    make_fragment,
    make_request,
)
from cleveragents.testing.memory import StaticDetailLevelMaps
from cleveragents_acms.pipeline.assembly import ContextAssemblyPipeline
from cleveragents_acms.pipeline.config import default_pipeline_config, stage_settings
from cleveragents_acms.pipeline.packer import GreedyKnapsackPacker, fallback_depths
from cleveragents_acms.pipeline.tokenizers import get_tokenizer

CL100K = get_tokenizer("cl100k")
STEPS = [9, 4, 2, 0]


class ShallowerRenderer:
    """Depth d keeps a (d + 1) / 10 share of the lines; depth 2 has no rendering.

    It reports a wrong token count on purpose: the pipeline must recount.
    """

    def render(self, fragment: ContextFragment, depth: int) -> ContextFragment | None:
        if depth == 2:
            return None
        lines = fragment.content.splitlines() or [fragment.content]
        keep = max(1, len(lines) * (depth + 1) // 10)
        content = "\n".join(lines[:keep])
        return fragment.model_copy(
            update={"content": content, "detail_depth": depth, "token_count": 1}
        )


class ExactShallowerRenderer(ShallowerRenderer):
    """The same renderings with exact counts (for the packer on its own)."""

    def render(self, fragment: ContextFragment, depth: int) -> ContextFragment | None:
        rendered = super().render(fragment, depth)
        if rendered is None:
            return None
        return rendered.model_copy(update={"token_count": CL100K.count(rendered.content)})


lines = st.text(alphabet=st.characters(blacklist_categories=("Cs",)), min_size=0, max_size=60)
contents = st.lists(lines, min_size=1, max_size=14).map("\n".join)


@st.composite
def fragment_sets(draw: Any, max_size: int = 25) -> list[ContextFragment]:
    """Random fragments over a few nodes at depths 0/2/4/9 with wrong token counts."""
    count = draw(st.integers(min_value=0, max_value=max_size))
    out = []
    for _ in range(count):
        node = draw(st.integers(min_value=0, max_value=12))
        out.append(
            make_fragment(
                f"https://cleveragents.ai/r/{RESOURCE_A}/m{node % 4}.py#n{node}",
                draw(contents),
                token_count=draw(st.integers(min_value=0, max_value=50)),
                relevance=draw(st.floats(min_value=0, max_value=1)),
                depth=draw(st.sampled_from([0, 2, 4, 9])),
                resource_id=draw(st.sampled_from([RESOURCE_A, RESOURCE_B])),
                path=f"m{node % 4}.py",
                start_line=1 + node,
                metadata={"focus_distance": str(draw(st.integers(0, 4)))},
            )
        )
    return out


budgets = st.one_of(
    st.integers(min_value=1, max_value=40), st.integers(min_value=1, max_value=4000)
)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    first=fragment_sets(),
    second=fragment_sets(max_size=10),
    parent=fragment_sets(max_size=12),
    budget=budgets,
    preamble_max=st.integers(min_value=0, max_value=400),
    preamble_enabled=st.booleans(),
    with_parent=st.booleans(),
    with_renderer=st.booleans(),
)
def test_the_assembled_context_never_exceeds_the_budget(
    first: list[ContextFragment],
    second: list[ContextFragment],
    parent: list[ContextFragment],
    budget: int,
    preamble_max: int,
    preamble_enabled: bool,
    with_parent: bool,
    with_renderer: bool,
) -> None:
    """Fragments + preamble, counted with cl100k, fit ``budget`` for any input."""
    settings_ = stage_settings(
        {
            "context.fusion.preamble-max-tokens": preamble_max,
            "context.fusion.preamble-enabled": preamble_enabled,
            "context.budget.min-useful-budget": 1,
        }
    )
    strategies = [
        StubStrategy("simple-keyword", 0.7, quality=0.3, fragments=first),
        StubStrategy("breadth-depth-navigator", 0.5, quality=0.85, fragments=second),
    ]
    pipeline = ContextAssemblyPipeline(
        default_pipeline_config(settings_),
        strategies,
        tokenizer=CL100K,
        renderer=ShallowerRenderer() if with_renderer else None,
    )
    plan = {"parent_context": make_assembled_context(parent)} if with_parent else None
    context = pipeline.assemble(make_request(), None, budget, plan)

    real = sum(CL100K.count(f.content) for f in context.fragments)
    preamble = CL100K.count(context.preamble) if context.preamble else 0
    assert real + preamble <= budget, f"{real} + {preamble} tokens for a budget of {budget}"
    assert context.total_tokens == real and context.preamble_tokens == preamble
    assert context.is_within_budget
    nodes = [f.uko_node for f in context.fragments]
    assert len(nodes) == len(set(nodes))
    assert not [n for n in context.notes if "used the built-in" in n or "trimmed" in n]


@settings(max_examples=200, deadline=None)
@given(
    fragments=fragment_sets(),
    scores=st.lists(st.floats(min_value=0, max_value=1), min_size=25, max_size=25),
    budget=budgets,
    minimum=st.integers(min_value=0, max_value=20),
)
def test_depth_fallback_downgrades_instead_of_dropping(
    fragments: list[ContextFragment], scores: list[float], budget: int, minimum: int
) -> None:
    """A fragment is dropped only when no shallower rendering would have fitted."""
    renderer = ExactShallowerRenderer()
    exact = {}
    for f in fragments:  # one rendering per node, exact counts, as the pipeline hands over
        exact.setdefault(f.uko_node, f.model_copy(update={"token_count": CL100K.count(f.content)}))
    scored = [ScoredFragment(f, s) for f, s in zip(exact.values(), scores, strict=False)]
    services = AssemblyServices(
        tokenizer=CL100K,
        renderer=renderer,
        settings={"budget-packer": {"min-fragment-tokens": minimum, "depth-fallback-steps": STEPS}},
    )
    with assembly.use(services):
        packed = GreedyKnapsackPacker().pack(scored, budget, StaticDetailLevelMaps())

    used = sum(f.token_count for f in packed)
    assert used <= budget
    left = budget - used
    by_node = {s.fragment.uko_node: s.fragment for s in scored}
    for dropped in services.dropped:
        original = by_node[dropped.uko_node]
        if dropped.delivered_depth is not None:
            assert dropped.delivered_depth < dropped.detail_depth
            continue
        if original.token_count == 0 or not original.content.strip():
            continue  # empty fragments are never packed
        # remaining budget only shrinks, so what fits now would have fitted then
        for depth in fallback_depths(original.detail_depth, STEPS):
            rendering = renderer.render(original, depth)
            if rendering is None or not rendering.content.strip():
                continue
            fits = minimum <= rendering.token_count <= left and rendering.token_count > 0
            assert not fits, (
                f"{dropped.uko_node} was dropped although depth {depth} "
                f"({rendering.token_count} tokens) fits the {left} left"
            )
