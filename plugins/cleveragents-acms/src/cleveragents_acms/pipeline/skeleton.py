"""Stage 10: a parent plan's context squeezed into a skeleton for a child plan.

Every parent fragment is re-rendered at depth 0-1 by the assembly's renderer
(the spec's Visitor: documents at depth 1, their table of contents; code and
everything else at depth 0, the listing), or, without a rendering there,
reduced to the first non-empty line of its content. Fragments nearest the
child's focus come first (then the parent's order), and they are taken
while they fit: the skeleton never exceeds ``skeleton_budget`` tokens.
Skeleton fragments carry ``metadata["skeleton"] = "true"``.
"""

from __future__ import annotations

from typing import Any

from cleveragents import assembly
from cleveragents.models.context import AssembledContext, ContextBudget, ContextFragment
from cleveragents_acms.pipeline._common import count_tokens, focus_distance, note

__all__ = ["DepthReductionCompressor"]


class DepthReductionCompressor:
    """Depth 0-1 renderings of the parent's fragments, focus first, within the budget."""

    def compress(
        self,
        parent_context: AssembledContext,
        child_focus: list[str],
        skeleton_budget: int,
    ) -> AssembledContext:
        budget = max(0, int(skeleton_budget))
        services = assembly.current()
        renderer = services.renderer if services is not None else None
        focus = tuple(child_focus or ())
        candidates = []
        if budget > 0:
            for rank, fragment in enumerate(parent_context.fragments):
                distance = focus_distance(fragment.uko_node, fragment.provenance.resource_id, focus)
                candidates.append((0 if distance is None else distance, rank, fragment))
            candidates.sort(key=lambda item: (item[0], item[1]))
        kept: dict[int, ContextFragment] = {}
        nodes: set[str] = set()
        remaining = budget
        for _, rank, fragment in candidates:
            if remaining <= 0:
                break
            if fragment.uko_node in nodes:
                continue
            reduced = self.reduce(fragment, renderer)
            if reduced is not None and 0 < reduced.token_count <= remaining:
                kept[rank] = reduced
                nodes.add(fragment.uko_node)
                remaining -= reduced.token_count
        fragments = tuple(kept[rank] for rank in sorted(kept))  # the parent's order
        total = sum(f.token_count for f in fragments)
        skeleton_of = parent_context.context_hash[:12] or parent_context.payload_id
        return AssembledContext(
            plan_id=parent_context.plan_id,
            fragments=fragments,
            total_tokens=total,
            budget=ContextBudget(max_tokens=max(1, budget), reserved_tokens=0),
            budget_used=total / budget if budget else 0.0,
            strategies_used=parent_context.strategies_used,
            context_hash=AssembledContext.hash_fragments(fragments),
            provenance_map={f.uko_node: f.provenance.model_dump(mode="json") for f in fragments},
            notes=(
                f"skeleton of {skeleton_of}: {len(fragments)} of "
                f"{len(parent_context.fragments)} fragments",
            ),
        )

    def target_depth(self, fragment: ContextFragment) -> int:
        """1 for documents (a table of contents), 0 for code and the rest (a listing)."""
        kind = fragment.metadata.get("uko_type", "") or fragment.metadata.get("domain", "")
        return 1 if kind.startswith("uko-doc") else 0

    def reduce(self, fragment: ContextFragment, renderer: Any) -> ContextFragment | None:
        """``fragment`` at depth 0-1: re-rendered, or its first line."""
        target = self.target_depth(fragment)
        if fragment.detail_depth <= target:
            return _marked(fragment)
        if renderer is not None:
            for depth in dict.fromkeys((target, 0, 1)):
                if depth >= fragment.detail_depth:
                    continue
                try:
                    rendered = renderer.render(fragment, depth)
                except Exception as exc:
                    note(f"renderer failed for {fragment.uko_node}: {type(exc).__name__}")
                    break
                if (
                    isinstance(rendered, ContextFragment)
                    and rendered.uko_node == fragment.uko_node
                    and rendered.content.strip()
                ):
                    return _marked(rendered)
        line = next((ln.strip() for ln in fragment.content.splitlines() if ln.strip()), "")
        if not line:
            return None
        return _marked(fragment.model_copy(update={"content": line, "detail_depth": 0}))


def _marked(fragment: ContextFragment) -> ContextFragment:
    """The fragment marked as skeleton, its tokens counted by the assembly's tokenizer."""
    update: dict[str, Any] = {}
    tokens = count_tokens(fragment.content)
    if tokens != fragment.token_count:
        update["token_count"] = tokens
    if fragment.metadata.get("skeleton") != "true" and len(fragment.metadata) < 64:
        update["metadata"] = {**fragment.metadata, "skeleton": "true"}
    return fragment.model_copy(update=update) if update else fragment
