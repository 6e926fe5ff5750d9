"""What the ``context`` and ``project context`` commands share: options, requests, output.

Every command that assembles (``context assemble``, ``context simulate``,
``project context simulate``) takes :func:`assembly_options` and receives them
as one :class:`AssemblyOptions`; the text and JSON output of assemblies,
dry runs and reports is printed here and nowhere else.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from dataclasses import dataclass, fields
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

if TYPE_CHECKING:
    from cleveragents.models.context import AssembledContext, ContextFragment, ContextRequest
    from cleveragents_acms.context.history import AssemblyReport
    from cleveragents_acms.context.service import AssemblyOutcome, ContextService

__all__ = [
    "PHASES",
    "AssemblyOptions",
    "apply_settings",
    "assembly_options",
    "build_request",
    "echo_context",
    "echo_fragment",
    "echo_report",
    "outcome_payload",
    "resolve_project",
    "run_simulation",
    "service_for",
]

PHASES = ("default", "strategize", "execute", "apply")


@dataclass(frozen=True)
class AssemblyOptions:
    """The options of an assembling command, as given on the command line."""

    budget: int | None = None
    model: str | None = None
    focus: tuple[str, ...] = ()
    depth: str | None = None
    breadth: int | None = None
    strategies: tuple[str, ...] = ()
    phase: str = "default"
    as_json: bool = False
    settings: tuple[str, ...] = ()

    def request(self, query: str | None) -> ContextRequest:
        """The ContextRequest for ``query``; checks the budget too."""
        request = build_request(
            query,
            focus=self.focus,
            depth=self.depth,
            breadth=self.breadth,
            strategies=self.strategies,
        )
        if self.budget is not None and self.budget <= 0:
            from cleveragents.errors import ValidationError

            raise ValidationError(f"budget must be a positive number of tokens, got {self.budget}")
        return request


_OPTION_NAMES = tuple(f.name for f in fields(AssemblyOptions))


def assembly_options(command: Callable[..., Any]) -> Callable[..., Any]:
    """Adds the assembling options; the command receives them as ``options: AssemblyOptions``."""

    @functools.wraps(command)
    def with_options(*args: Any, **kwargs: Any) -> Any:
        options = AssemblyOptions(**{name: kwargs.pop(name) for name in _OPTION_NAMES})
        return command(*args, options=options, **kwargs)

    decorators = [
        click.option(
            "--budget",
            type=int,
            default=None,
            help="Token budget (default: 8000, "
            "or the model's context window minus reserves with --model).",
        ),
        click.option(
            "--model",
            default=None,
            help="Target model: picks the tokenizer and the "
            "default budget (e.g. gpt-4o, claude-sonnet-4).",
        ),
        click.option(
            "--focus",
            multiple=True,
            metavar="X",
            help="A node URI or identifier to focus on (repeatable).",
        ),
        click.option(
            "--depth",
            default=None,
            metavar="NAME|N",
            help="Detail depth 0-9 or a named level (SIGNATURES, FULL_SOURCE …).",
        ),
        click.option("--breadth", type=int, default=None, help="Dependency hops outward."),
        click.option(
            "--strategy",
            "strategies",
            multiple=True,
            metavar="S",
            help="Run exactly this strategy (repeatable); default: the enabled ones.",
        ),
        click.option(
            "--phase",
            type=click.Choice(PHASES),
            default="default",
            show_default=True,
            help="Which context view of the project applies.",
        ),
        click.option(
            "--set",
            "settings",
            multiple=True,
            metavar="KEY=VALUE",
            help="Override a context.* configuration key for this run (repeatable), "
            "e.g. context.strategies.arce.max-rounds=1.",
        ),
        click.option("--json", "as_json", is_flag=True, help="Print JSON."),
    ]
    for decorator in reversed(decorators):
        with_options = decorator(with_options)
    return with_options


def apply_settings(app: Any, settings: tuple[str, ...]) -> None:
    """``--set KEY=VALUE`` pairs as the command-line layer of the configuration chain.

    Only ``context.*`` keys; values are read as TOML values (``3``, ``true``,
    ``["arce"]``) and checked like any configuration value.
    """
    if not settings:
        return
    from cleveragents.config_files import parse_value
    from cleveragents.errors import ValidationError

    overrides: dict[str, Any] = {}
    for pair in settings:
        key, equals, text = pair.partition("=")
        key = key.strip()
        if not equals or not key or not text.strip():
            raise ValidationError(f"--set expects KEY=VALUE, got {pair!r}")
        if not key.startswith("context."):
            raise ValidationError(f"--set only takes context.* keys, got {key!r}")
        value = parse_value(text.strip())
        from cleveragents.config import DEFAULTS

        if isinstance(DEFAULTS.get(key), str) and not isinstance(value, str):
            value = text.strip()
        overrides[key] = value
    app.overrides = {**app.overrides, **overrides}
    app.__dict__.pop("config", None)  # reload the chain with the new top layer


def service_for(app: Any) -> ContextService:
    """The context service over the app's database, registry and configuration."""
    from cleveragents_acms.context.service import ContextService

    app.host.configure(app.config)
    return ContextService(app.database, app.registry, app.config)


def resolve_project(app: Any, project: str | None, path: str | None = None) -> str:
    """The project a command works on.

    With ``--path``, the folder is indexed first (incrementally, with progress on a
    terminal) into ``--project`` or a project named after the folder. Otherwise
    ``--project``; else the project holding a resource that contains the working
    directory; else the only project there is.
    """
    from cleveragents.errors import ValidationError
    from cleveragents.models.names import check_name

    if path is not None:
        from cleveragents_acms.analyzers.walk_ahead import WalkAhead

        folder = Path(path).expanduser()
        # The tree is walked in a child process while this one imports the indexer.
        walk_ahead = WalkAhead.configured(folder, app.config)
        from cleveragents_acms.indexing.runner import index_path

        resource, result = index_path(app, folder, project, walk_ahead=walk_ahead)
        meta, run = result.metadata, result.run
        changed = f", {run.files_analyzed} analysed" if run is not None else ""
        click.echo(
            f"Indexed {resource.label} into project {meta.project_name}: "
            f"{meta.file_count} files{changed}",
            err=True,
        )
        return meta.project_name
    if project is not None:
        return check_name("project", project)
    from cleveragents.storage.repositories import ProjectRepository, ResourceRepository

    cwd = app.cwd.resolve()
    with app.database.session(write=False) as session:
        projects = ProjectRepository(session).all()
        resources = ResourceRepository(session)
        for candidate in projects:
            for resource in resources.all(project=candidate.name):
                location = Path(resource.location) if resource.location else None
                if location is not None and (cwd == location or location in cwd.parents):
                    return candidate.name
    if len(projects) == 1:
        return projects[0].name
    if not projects:
        raise ValidationError("no projects yet: run `cleveragents index PATH --project NAME`")
    names = ", ".join(p.name for p in projects)
    raise ValidationError(f"give --project (projects: {names})")


def parse_depth(depth: str | None) -> int | str | None:
    if depth is None:
        return None
    text = depth.strip()
    if text.isdigit():
        return int(text)
    if text.startswith("-") and text[1:].isdigit():
        from cleveragents.errors import ValidationError

        raise ValidationError(f"depth must be >= 0 or a named level, got {depth}")
    return text


def build_request(
    query: str | None,
    *,
    focus: tuple[str, ...] = (),
    depth: str | None = None,
    breadth: int | None = None,
    strategies: tuple[str, ...] = (),
    purpose: str = "",
) -> ContextRequest:
    """A ContextRequest from command-line options (only what was given is set)."""
    from cleveragents.errors import ValidationError
    from cleveragents.models.context import ContextRequest

    fields: dict[str, Any] = {"query": (query or "").strip() or None}
    if focus:
        fields["focus"] = tuple(f for f in focus if f.strip())
    if breadth is not None:
        if breadth < 0:
            raise ValidationError(f"breadth must be >= 0, got {breadth}")
        fields["breadth"] = breadth
    parsed = parse_depth(depth)
    if parsed is not None:
        fields["depth"] = parsed
    if strategies:
        fields["preferred_strategies"] = tuple(strategies)
    if purpose:
        fields["purpose"] = purpose
    request = ContextRequest(**fields)
    if request.is_empty:
        raise ValidationError("the request is empty: give a question or --focus")
    return request


# -- output --------------------------------------------------------------------------------


def _score(context: AssembledContext, fragment: ContextFragment) -> str:
    entry = context.provenance_map.get(fragment.uko_node, {})
    score = entry.get("composite_score", fragment.relevance_score)
    return f"{float(score):.3f}"


def _flags(fragment: ContextFragment) -> list[str]:
    flags = [
        label
        for key, label in (("stale", "STALE"), ("refreshed", "refreshed"), ("skeleton", "skeleton"))
        if fragment.metadata.get(key) == "true"
    ]
    if fragment.metadata.get("is_current") == "false":
        until = fragment.metadata.get("valid_until")
        flags.append(f"earlier version, until {until}" if until else "earlier version")
    return flags


def _echo_header(
    label: str,
    location: str,
    fragment: ContextFragment,
    score: str | None,
    tokens: int,
    extra: str | None,
) -> None:
    """``label  path:start-end  depth D  score S  strategy  N tokens  extra``."""
    parts = [label, location, f"depth {fragment.detail_depth}"]
    if score is not None:
        parts.append(f"score {score}")
    if fragment.provenance.strategy:
        parts.append(fragment.provenance.strategy)
    parts.append(f"{tokens} tokens")
    if extra:
        parts.append(extra)
    click.echo("  ".join(parts))


def echo_fragment(index: int | None, fragment: ContextFragment, score: str | None = None) -> None:
    """A fragment's header line (location, depth, score, strategy, tokens) and its text."""
    from cleveragents.redaction import redact_text
    from cleveragents_acms.pipeline._common import NEAR_COPIES

    flags = _flags(fragment)
    _echo_header(
        f"--- [{index}]" if index is not None else "---",
        fragment.provenance.location,
        fragment,
        score,
        fragment.token_count,
        f"[{', '.join(flags)}]" if flags else None,
    )
    click.echo(f"    {fragment.uko_node}")
    if fragment.metadata.get("stale") == "true" and fragment.metadata.get("stale_reason"):
        click.echo(f"    stale: {fragment.metadata['stale_reason']}")
    if fragment.metadata.get(NEAR_COPIES):
        click.echo(f"    near copies, left out: {fragment.metadata[NEAR_COPIES]}")
    click.echo(redact_text(fragment.content))
    click.echo()


#: Fragments of at most this many lines are grouped (imports, attributes, constants); a
#: longer one keeps a header of its own, where it starts is worth a line.
_SHORT_LINES = 5


def _short(fragment: ContextFragment) -> bool:
    start, end = fragment.provenance.start_line, fragment.provenance.end_line
    return start is not None and end is not None and end - start < _SHORT_LINES


def _continues(previous: ContextFragment, fragment: ContextFragment) -> bool:
    """Whether ``fragment``, a short one, starts on the line after short ``previous`` ends,
    as the same kind of fragment (file, depth, strategy; no flags)."""
    before, after = previous.provenance, fragment.provenance
    return (
        _short(previous)
        and _short(fragment)
        and before.end_line is not None
        and after.start_line == before.end_line + 1
        and (after.resource_id, after.path, after.strategy)
        == (before.resource_id, before.path, before.strategy)
        and fragment.detail_depth == previous.detail_depth
        and not _flags(previous)
        and not _flags(fragment)
    )


def contiguous_runs(fragments: Sequence[ContextFragment]) -> list[list[ContextFragment]]:
    """The fragments in order, short consecutive ones that continue each other's lines
    together (a file's import statements are a fragment each: printed with one header, not
    twenty)."""
    runs: list[list[ContextFragment]] = []
    for fragment in fragments:
        if runs and _continues(runs[-1][-1], fragment):
            runs[-1].append(fragment)
        else:
            runs.append([fragment])
    return runs


def echo_run(index: int, run: Sequence[ContextFragment], score: str) -> None:
    """Fragments of consecutive lines under one header: ``[first-last]``, the lines they
    span, the best score, their tokens together, and every fragment's URI."""
    from cleveragents.redaction import redact_text

    first, last = run[0], run[-1]
    _echo_header(
        f"--- [{index}-{index + len(run) - 1}]",
        f"{first.provenance.path}:{first.provenance.start_line}-{last.provenance.end_line}",
        first,
        score,
        sum(f.token_count for f in run),
        f"({len(run)} fragments)",
    )
    base = first.uko_node.partition("#")[0]
    if all(f.uko_node.startswith(base + "#") for f in run):  # one file's nodes: base once
        click.echo(f"    {base}  " + "  ".join("#" + f.uko_node.partition("#")[2] for f in run))
    else:
        for fragment in run:
            click.echo(f"    {fragment.uko_node}")
    click.echo(redact_text("\n".join(f.content for f in run)))
    click.echo()


def echo_dropped(context: AssembledContext, project: str, limit: int) -> None:
    if not context.dropped:
        return
    downgraded = [d for d in context.dropped if d.delivered_depth is not None]
    dropped = [d for d in context.dropped if d.delivered_depth is None]
    click.echo(
        f"Dropped or downgraded: {len(dropped)} dropped, {len(downgraded)} re-rendered shallower"
    )
    shown = [*downgraded, *dropped]
    for item in shown[:limit]:
        delivered = "-" if item.delivered_depth is None else str(item.delivered_depth)
        click.echo(
            f"  depth {item.detail_depth} -> {delivered}  {item.path}  {item.uko_node}  "
            f"({item.reason})"
        )
    if len(shown) > limit:
        click.echo(f"  … {len(shown) - limit} more (see --json or `cleveragents context inspect`)")
    click.echo(f"  Expand any of them: cleveragents context expand URI --project {project}")


def echo_context(outcome: AssemblyOutcome, project: str, *, max_dropped: int = 20) -> None:
    """``context assemble``'s text output: preamble, fragments, totals, dropped, notes."""
    context = outcome.context
    if context.preamble:
        click.echo(context.preamble)
        click.echo()
    index = 1
    for run in contiguous_runs(context.fragments):
        if len(run) == 1:
            echo_fragment(index, run[0], _score(context, run[0]))
        else:
            echo_run(index, run, max((_score(context, f) for f in run), key=float))
        index += len(run)
    echo_totals(outcome)
    echo_dropped(context, project, max_dropped)
    echo_notes(context.notes)


def echo_totals(outcome: AssemblyOutcome) -> None:
    context, report = outcome.context, outcome.report
    used = context.total_tokens + context.preamble_tokens
    available = context.budget.available_tokens
    share = used / available if available else 0.0
    strategies = ", ".join(context.strategies_used) or "none"
    click.echo(
        f"Total: {len(context.fragments)} fragments, {context.total_tokens} tokens + "
        f"{context.preamble_tokens} preamble = {used} of {available} tokens ({share:.0%}, "
        f"{report.tokenizer}); strategies: {strategies}; {report.ms:.0f} ms"
        + (" (cached)" if report.cached else "")
    )


def echo_notes(notes: tuple[str, ...] | list[str]) -> None:
    if not notes:
        return
    click.echo("Notes:")
    for note in notes:
        click.echo(f"  - {note}")


def outcome_payload(outcome: AssemblyOutcome, project: str) -> dict[str, Any]:
    """The JSON form of an assembly: the AssembledContext plus how it was made."""
    data = outcome.context.model_dump(mode="json")
    data.update(
        project=project,
        assembly_id=outcome.report.assembly_id,
        tokenizer=outcome.report.tokenizer,
        budget_breakdown=outcome.budget.to_dict(),
        cached=outcome.report.cached,
    )
    return data


def run_simulation(app: Any, name: str, query: str, options: AssemblyOptions) -> None:
    """A dry run: what would be selected and the allocation per strategy, without content."""
    from cleveragents.cli.output import emit_json

    request = options.request(query)
    outcome = service_for(app).run(
        request,
        project=name,
        budget=options.budget,
        model=options.model,
        phase=options.phase,
        dry_run=True,
    )
    report = outcome.report
    if options.as_json:
        emit_json(report.to_dict())
        return
    click.echo(
        f"Dry run for project {name} (nothing recorded); budget {report.budget['budget']} "
        f"tokens ({report.budget['source']}), tokenizer {report.tokenizer}"
    )
    click.echo()
    click.echo("Allocation per strategy:")
    _strategy_table(report.strategies, "selected", empty="  (no strategy would run)")
    _echo_not_selected(report)
    click.echo()
    click.echo("Would be selected:")
    _fragment_table(report.fragments, empty="  (nothing)")
    click.echo()
    echo_totals(outcome)
    if report.dropped:
        downgraded = sum(1 for d in report.dropped if d.get("delivered_depth") is not None)
        click.echo(f"Would drop {len(report.dropped) - downgraded} and downgrade {downgraded}.")
    echo_notes(report.notes)


def _echo_not_selected(report: Any) -> None:
    """One line per strategy the selector left out, with why (standing by, declined …)."""
    for name, why in report.not_selected.items():
        click.echo(f"  not selected: {name} ({why})")


def _strategy_table(strategies: Any, delivered: str, *, empty: str) -> None:
    """One row per strategy: confidence, token share, fragments returned and delivered."""
    from cleveragents.cli.output import emit_table

    emit_table(
        [
            {
                "strategy": s.name,
                "confidence": f"{s.confidence:.2f}",
                "tokens": f"{s.tokens} +{s.refilled} unused" if s.refilled else s.tokens,
                "returned": s.fragments,
                delivered: s.delivered,
            }
            for s in strategies
        ],
        ["strategy", "confidence", "tokens", "returned", delivered],
        empty=empty,
    )


def _fragment_table(rows: list[dict[str, Any]], *, empty: str = "") -> None:
    from cleveragents.cli.output import emit_table

    emit_table(
        [
            {
                "location": f["location"],
                "depth": f["depth"],
                "tokens": f["tokens"],
                "score": "-" if f.get("score") is None else f"{f['score']:.3f}",
                "strategy": f["strategy"],
            }
            for f in rows
        ],
        ["location", "depth", "tokens", "score", "strategy"],
        empty=empty,
    )


def echo_report(report: AssemblyReport, *, max_dropped: int = 20) -> None:
    """``context inspect``: stages, strategies, notes, timings and the dropped list."""
    from cleveragents.cli.output import emit_table

    click.echo(
        f"Assembly {report.assembly_id} of project {report.project} at {report.created_at}"
        + (" (dry run)" if report.dry_run else "")
        + (" (reused: budget within the refresh threshold)" if report.cached else "")
    )
    click.echo(f"  query: {report.query or '-'}   phase: {report.phase}")
    budget = report.budget
    click.echo(
        f"  budget: {budget.get('budget')} tokens ({budget.get('source')}"
        + (f", model {report.model}" if report.model else "")
        + f"), tokenizer {report.tokenizer}; total {report.ms:.0f} ms"
    )
    totals = report.totals
    click.echo(
        f"  delivered: {len(report.fragments)} fragments, {totals.get('fragment_tokens', 0)} "
        f"tokens + {totals.get('preamble_tokens', 0)} preamble"
    )
    click.echo()
    click.echo("Stages:")
    emit_table(
        [
            {
                "slot": s.slot,
                "component": s.component,
                "chosen by": s.chosen_by,
                "scope": s.scope,
                "ms": f"{s.ms:.2f}",
                "status": "replaced" if s.replaced else "ok",
            }
            for s in report.stages
        ],
        ["slot", "component", "chosen by", "scope", "ms", "status"],
    )
    for stage in report.stages:
        if stage.problem:
            click.echo(f"  ! {stage.problem}")
    click.echo()
    click.echo("Strategies:")
    _strategy_table(report.strategies, "delivered", empty="  (no strategy ran)")
    _echo_not_selected(report)
    click.echo()
    if report.fragments:
        click.echo("Fragments:")
        _fragment_table(report.fragments)
        click.echo()
    if report.dropped:
        click.echo(f"Dropped or downgraded ({len(report.dropped)}):")
        for item in report.dropped[:max_dropped]:
            delivered = item.get("delivered_depth")
            shown = "-" if delivered is None else delivered
            click.echo(
                f"  depth {item['detail_depth']} -> {shown}  {item['path']}  "
                f"{item['uko_node']}  ({item['reason']})"
            )
        if len(report.dropped) > max_dropped:
            click.echo(f"  … {len(report.dropped) - max_dropped} more (see --json)")
    echo_notes(report.notes)
