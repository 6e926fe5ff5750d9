"""After the pipeline: the checks the service applies, and the report of the assembly.

:func:`finish` holds the assembled context against the project's context view
(paths, file and total sizes), masks secret-looking text, flags fragments whose
files changed without being re-rendered, keeps the budget after all of that,
and names replaced pipeline stages at the top of the preamble.
:func:`build_report` writes down how the context came to be (``context inspect``).
"""

from __future__ import annotations

from typing import Any

from cleveragents import assembly
from cleveragents.assembly import AssemblyServices
from cleveragents.models.context import (
    AssembledContext,
    ContextFragment,
    ContextRequest,
    DroppedFragment,
)
from cleveragents.redaction import redact_text
from cleveragents_acms.context.budget import BudgetBreakdown
from cleveragents_acms.context.history import AssemblyReport
from cleveragents_acms.context.nodes import NodeStoreSource
from cleveragents_acms.context.policy import ContextBudgetEnforcer, ContextView, rebuild_context
from cleveragents_acms.context.recording import RecordingPipeline
from cleveragents_acms.context.scope import ProjectScope

__all__ = ["build_report", "files_changed", "finish"]


def finish(
    context: AssembledContext,
    source: NodeStoreSource,
    view: ContextView,
    tokenizer: Any,
    pipeline: RecordingPipeline,
    total: int,
    preamble_max_tokens: int,
) -> AssembledContext:
    """Checks after the pipeline: the view, secrets, the files on disk, sizes."""
    kept: list[ContextFragment] = []
    dropped: list[DroppedFragment] = []
    changed = False
    for fragment in context.fragments:
        path = fragment.provenance.path
        if path and not view.allows_path(path):
            dropped.append(DroppedFragment.of(fragment, "excluded by the project's context view"))
            continue
        content = (
            fragment.content
            if source.delivered(fragment.content)
            else redact_text(fragment.content)
        )
        if content != fragment.content:
            fragment = fragment.model_copy(
                update={"content": content, "token_count": tokenizer.count(content)}
            )
            changed = True
        if "uko_type" not in fragment.metadata and source.freshness is not None:
            state = source.freshness.state(fragment.provenance.resource_id, path)
            if state.status in ("stale", "refreshed") and len(fragment.metadata) < 63:
                fragment = fragment.model_copy(
                    update={
                        "metadata": {
                            **fragment.metadata,
                            "stale": "true",
                            "stale_reason": "the file changed since it was indexed",
                        }
                    }
                )
                changed = True
        kept.append(fragment)
    available = min(total, context.budget.available_tokens)
    over = sum(f.token_count for f in kept) + context.preamble_tokens - available
    while over > 0 and kept:
        weakest = min(kept, key=lambda f: f.relevance_score)
        kept.remove(weakest)
        dropped.append(DroppedFragment.of(weakest, "over budget after masking secrets"))
        over -= weakest.token_count
    if dropped or changed:
        context = rebuild_context(context, kept, dropped)
    enforced = ContextBudgetEnforcer(
        lambda f: source.file_size(f.provenance.resource_id, f.provenance.path)
    ).enforce(context, view)
    if enforced is not context or dropped:
        enforced = _refresh_preamble(enforced, pipeline, tokenizer, preamble_max_tokens)
    return _warn_in_preamble(enforced, pipeline, tokenizer)


def _warn_in_preamble(
    context: AssembledContext, pipeline: RecordingPipeline, tokenizer: Any
) -> AssembledContext:
    """Name replaced stages at the top of the preamble, within the preamble's tokens."""
    from cleveragents_acms.pipeline._common import tokenizer_truncate

    problems = list(pipeline.stage_problems.values())
    if not problems:
        return context
    room = context.budget.available_tokens - context.total_tokens
    warning = "\n".join(f"Warning: {problem}" for problem in problems)
    if tokenizer.count(warning) > room:
        return context  # the notes still say it
    preamble = warning
    if context.preamble:
        rest = room - tokenizer.count(warning + "\n")
        kept = tokenizer_truncate(context.preamble, rest) if rest > 0 else ""
        if kept.strip():
            preamble = f"{warning}\n{kept}"
    tokens = tokenizer.count(preamble)
    if tokens > room:
        preamble, tokens = warning, tokenizer.count(warning)
    return context.model_copy(update={"preamble": preamble, "preamble_tokens": tokens})


def _refresh_preamble(
    context: AssembledContext, pipeline: RecordingPipeline, tokenizer: Any, max_tokens: int
) -> AssembledContext:
    """A new preamble for a context the service shrank (it must not describe what is gone)."""
    from cleveragents_acms.pipeline._common import tokenizer_truncate

    available = context.budget.available_tokens
    limit = max(
        0,
        min(
            max_tokens,
            available - context.total_tokens,
        ),
    )
    preamble: str | None = None
    services = AssemblyServices(tokenizer=tokenizer, settings=pipeline.config.settings)
    with assembly.use(services):
        try:
            preamble = pipeline.config.preamble_generator.generate(
                list(context.fragments),
                list(context.strategies_used),
                context.budget_used,
                limit,
            )
        except Exception:
            preamble = None
        if isinstance(preamble, str) and tokenizer.count(preamble) > limit:
            preamble = tokenizer_truncate(preamble, limit)
    if not isinstance(preamble, str) or not preamble.strip():
        return context.model_copy(update={"preamble": None, "preamble_tokens": 0})
    return context.model_copy(
        update={"preamble": preamble, "preamble_tokens": tokenizer.count(preamble)}
    )


def files_changed(report: AssemblyReport, scope: ProjectScope) -> bool:
    """Whether a file a cached context came from changed on disk since."""
    for item in report.fragments:
        root = scope.roots.get(item.get("resource_id", ""))
        stamp = item.get("file_stamp")
        if root is None or not stamp:
            continue
        try:
            stat = (root.root / item["path"]).stat()
        except OSError:
            return True
        if f"{stat.st_mtime_ns}:{stat.st_size}" != stamp:
            return True
    return False


def build_report(
    context: AssembledContext,
    pipeline: RecordingPipeline,
    *,
    request: ContextRequest,
    project: str,
    breakdown: BudgetBreakdown,
    model: str | None,
    tokenizer: str,
    phase: str,
    scope: ProjectScope,
    ms: float,
    dry_run: bool,
) -> AssemblyReport:
    fragments = []
    for fragment in context.fragments:
        entry = context.provenance_map.get(fragment.uko_node, {})
        root = scope.roots.get(fragment.provenance.resource_id)
        file_stamp = None
        if root is not None and fragment.provenance.path:
            try:
                stat = (root.root / fragment.provenance.path).stat()
                file_stamp = f"{stat.st_mtime_ns}:{stat.st_size}"
            except OSError:
                file_stamp = None
        fragments.append(
            {
                "uko_node": fragment.uko_node,
                "resource_id": fragment.provenance.resource_id,
                "path": fragment.provenance.path,
                "location": fragment.provenance.location,
                "depth": fragment.detail_depth,
                "tokens": fragment.token_count,
                "relevance": fragment.relevance_score,
                "score": entry.get("composite_score"),
                "strategy": fragment.provenance.strategy,
                "stale": fragment.metadata.get("stale") == "true",
                "refreshed": fragment.metadata.get("refreshed") == "true",
                "skeleton": fragment.metadata.get("skeleton") == "true",
                "file_stamp": file_stamp,
            }
        )
    return AssemblyReport(
        project=project,
        query=request.query,
        request=request.model_dump(mode="json"),
        budget=breakdown.to_dict(),
        model=model,
        tokenizer=tokenizer,
        phase=phase,
        stages=pipeline.stage_records(),
        strategies=pipeline.strategy_records(context),
        not_selected=dict(pipeline.not_selected),
        notes=list(context.notes),
        fragments=fragments,
        dropped=[d.model_dump(mode="json") for d in context.dropped],
        totals={
            "tokens": context.total_tokens + context.preamble_tokens,
            "fragment_tokens": context.total_tokens,
            "preamble_tokens": context.preamble_tokens,
            "budget": context.budget.available_tokens,
            "budget_used": round(context.budget_used, 4),
            "strategies_used": list(context.strategies_used),
            "context_hash": context.context_hash,
        },
        scope=scope.to_dict(),
        ms=ms,
        dry_run=dry_run,
    )
