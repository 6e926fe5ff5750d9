"""Stage 7: fits the scored fragments into the budget, re-rendering shallower when needed.

Greedy knapsack: best composite score first, each fragment taken when it
fits. One that does not fit walks the depth fallback sequence
(``depth-fallback-steps``, default 9 -> 4 -> 2 -> 0; only depths below its
own) and is re-rendered there by the assembly's renderer
(``cleveragents.assembly.current().renderer``) until a rendering fits; a
rendering smaller than ``min-fragment-tokens`` is not worth its place and is
skipped, as is an empty fragment. The budget is never exceeded.

Every downgraded or dropped fragment is recorded as a
:class:`~cleveragents.models.context.DroppedFragment` in the running
assembly's ``dropped`` list, so an agent can ask for it later.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, Any

from cleveragents import assembly
from cleveragents.models.context import ContextFragment, DroppedFragment, ScoredFragment
from cleveragents_acms.pipeline._common import note, setting

if TYPE_CHECKING:
    from cleveragents.protocols.uko import DetailLevelMapRegistry

__all__ = ["GreedyKnapsackPacker", "fallback_depths"]

_STAGE = "budget-packer"


def fallback_depths(current_depth: int, steps: Sequence[int]) -> Iterator[int]:
    """The fallback sequence for a fragment at ``current_depth``: the steps below it, deepest first.

    The spec's Iterator over the depth fallback sequence.
    """
    yield from sorted({int(s) for s in steps if 0 <= int(s) < current_depth}, reverse=True)


class GreedyKnapsackPacker:
    """Greedy by composite score with depth fallback; never over budget."""

    def __init__(
        self,
        *,
        depth_fallback_steps: Sequence[int] | None = None,
        min_fragment_tokens: int | None = None,
    ) -> None:
        self.depth_fallback_steps = depth_fallback_steps
        self.min_fragment_tokens = min_fragment_tokens

    def pack(
        self,
        scored_fragments: list[ScoredFragment],
        budget: int,
        detail_level_maps: DetailLevelMapRegistry | None,
    ) -> list[ContextFragment]:
        services = assembly.current()
        renderer = services.renderer if services is not None else None
        steps = list(setting(_STAGE, "depth-fallback-steps", self.depth_fallback_steps))
        minimum = int(setting(_STAGE, "min-fragment-tokens", self.min_fragment_tokens))
        dropped: list[DroppedFragment] = []
        packed: list[ContextFragment] = []
        nodes: set[str] = set()
        remaining = max(0, int(budget))
        ranked = sorted(
            enumerate(scored_fragments), key=lambda item: (-item[1].composite_score, item[0])
        )
        for _, item in ranked:
            fragment = item.fragment
            if fragment.uko_node in nodes:
                reason = "another rendering of the node was packed"
                dropped.append(DroppedFragment.of(fragment, reason))
                continue
            if fragment.token_count <= 0 or not fragment.content.strip():
                dropped.append(DroppedFragment.of(fragment, "empty fragment"))
                continue
            if fragment.token_count <= remaining:
                packed.append(fragment)
                nodes.add(fragment.uko_node)
                remaining -= fragment.token_count
                continue
            shallower = self._fallback(fragment, remaining, steps, minimum, renderer)
            if shallower is None:
                reason = "over budget at every depth" if renderer else "over budget"
                dropped.append(DroppedFragment.of(fragment, reason))
                continue
            packed.append(shallower)
            nodes.add(fragment.uko_node)
            remaining -= shallower.token_count
            dropped.append(
                DroppedFragment.of(fragment, "re-rendered shallower to fit", shallower.detail_depth)
            )
        if services is not None:
            services.dropped.extend(dropped)
        return packed

    @staticmethod
    def _fallback(
        fragment: ContextFragment,
        remaining: int,
        steps: Sequence[int],
        minimum: int,
        renderer: Any,
    ) -> ContextFragment | None:
        """The deepest fallback rendering of ``fragment`` that fits ``remaining`` tokens."""
        if renderer is None or remaining < max(1, minimum):
            return None
        for depth in fallback_depths(fragment.detail_depth, steps):
            try:
                rendered = renderer.render(fragment, depth)
            except Exception as exc:
                note(
                    f"renderer failed for {fragment.uko_node} at depth {depth}: "
                    f"{type(exc).__name__}"
                )
                continue
            if (
                not isinstance(rendered, ContextFragment)
                or rendered.uko_node != fragment.uko_node
                or rendered.detail_depth >= fragment.detail_depth
                or not rendered.content.strip()
            ):
                continue
            if minimum <= rendered.token_count <= remaining and rendered.token_count > 0:
                return rendered
        return None
