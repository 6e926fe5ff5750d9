"""Stage 7: fits the scored fragments into the budget, re-rendering shallower when needed.

Greedy knapsack: best composite score first, each fragment taken when it
fits. One that does not fit walks the depth fallback sequence
(``depth-fallback-steps``, default 9 -> 4 -> 2 -> 0; only depths below its
own) and is re-rendered there by the assembly's renderer
(``cleveragents.assembly.current().renderer``) until a rendering fits; a
rendering smaller than ``min-fragment-tokens`` is not worth its place and is
skipped, as is an empty fragment. The budget is never exceeded.

Containment counts: a node packed in full (depth 9) holds the text of every node
inside it (by URI: a file its symbols, a class its methods), so a fragment of
such a node is not packed again, and one packed earlier gives its tokens back
(strategies that share a budget often deliver a file whole and, separately,
functions of it).

Every downgraded or dropped fragment is recorded as a
:class:`~cleveragents.models.context.DroppedFragment` in the running
assembly's ``dropped`` list, so an agent can ask for it later.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, Any

from cleveragents import assembly
from cleveragents.models.context import ContextFragment, DroppedFragment, ScoredFragment
from cleveragents.models.uko import DEPTH_FULL
from cleveragents_acms.pipeline._common import ancestors, note, setting

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
        packed = _Packed()
        remaining = max(0, int(budget))
        ranked = sorted(
            enumerate(scored_fragments), key=lambda item: (-item[1].composite_score, item[0])
        )
        for _, item in ranked:
            fragment = item.fragment
            if packed.covers(fragment.uko_node):
                continue  # inside a node packed in full: its text is in the context already
            if fragment.uko_node in packed.nodes:
                reason = "another rendering of the node was packed"
                dropped.append(DroppedFragment.of(fragment, reason))
                continue
            if fragment.token_count <= 0 or not fragment.content.strip():
                dropped.append(DroppedFragment.of(fragment, "empty fragment"))
                continue
            if fragment.token_count <= remaining:
                remaining += packed.add(fragment)
                continue
            shallower = self._fallback(fragment, remaining, steps, minimum, renderer)
            if shallower is None:
                reason = "over budget at every depth" if renderer else "over budget"
                dropped.append(DroppedFragment.of(fragment, reason))
                continue
            remaining += packed.add(shallower)
            dropped.append(
                DroppedFragment.of(fragment, "re-rendered shallower to fit", shallower.detail_depth)
            )
        if services is not None:
            services.dropped.extend(d for d in dropped if not packed.covers(d.uko_node))
        return packed.fragments()

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


class _Packed:
    """The packed fragments, aware of containment: a node packed in full (depth 9) holds
    the text of every node inside it (a file its classes, a class its methods), so those
    are neither packed again nor listed as dropped, and any packed before it give their
    tokens back."""

    def __init__(self) -> None:
        #: in packing order; a key per fragment (its node is new: duplicates never get here)
        self._fragments: dict[int, ContextFragment] = {}
        self.nodes: set[str] = set()
        self._full: set[str] = set()
        #: ancestor URI -> keys of packed fragments inside it
        self._inside: dict[str, list[int]] = {}

    def covers(self, uri: str) -> bool:
        return any(ancestor in self._full for ancestor in ancestors(uri))

    def add(self, fragment: ContextFragment) -> int:
        """Pack ``fragment``; the change in free tokens (its cost, less what it absorbs)."""
        key = len(self.nodes)
        self._fragments[key] = fragment
        self.nodes.add(fragment.uko_node)
        for ancestor in ancestors(fragment.uko_node):
            self._inside.setdefault(ancestor, []).append(key)
        change = -fragment.token_count
        if fragment.detail_depth >= DEPTH_FULL:
            self._full.add(fragment.uko_node)
            for inner in self._inside.pop(fragment.uko_node, []):
                absorbed = self._fragments.pop(inner, None)
                if absorbed is not None:
                    change += absorbed.token_count
        return change

    def fragments(self) -> list[ContextFragment]:
        return list(self._fragments.values())
