"""``cleveragents context``: assemble, simulate, inspect and expand contexts; manage tier entries.

``context assemble QUESTION`` prints the preamble, every fragment with its
``path:start-end``, depth, score and strategy, the totals, and what the
budget dropped or downgraded (``context expand URI`` renders any of those).
``context list/add/show/clear`` (and ``promote/demote/evict``) manage the
entries of the hot, warm and cold tiers.
"""

from __future__ import annotations

from typing import Any

import click

from cleveragents.cli.context import App, pass_app
from cleveragents.cli.output import emit_json, emit_record, emit_table, success
from cleveragents_acms.cli._context_common import (
    AssemblyOptions,
    apply_settings,
    assembly_options,
    echo_context,
    echo_fragment,
    echo_report,
    outcome_payload,
    resolve_project,
    run_simulation,
    service_for,
)

__all__ = ["context"]


@click.group("context")
def context() -> None:
    """Assemble budgeted context for a question, and manage context tier entries."""


@context.command("assemble")
@click.argument("query", required=False, default="")
@click.option("--project", default=None, help="Project (default: the one holding the cwd).")
@click.option("--path", default=None, type=click.Path(), help="Index PATH first (incrementally).")
@assembly_options
@click.option(
    "--max-dropped",
    type=int,
    default=20,
    show_default=True,
    help="How many dropped fragments to list (all in --json).",
)
@pass_app
def assemble(
    app: App,
    query: str,
    project: str | None,
    path: str | None,
    max_dropped: int,
    options: AssemblyOptions,
) -> None:
    """Assemble the context for QUERY within the budget and print it."""
    request = options.request(query)
    apply_settings(app, options.settings)
    service = service_for(app)
    name = resolve_project(app, project, path)
    outcome = service.run(
        request, project=name, budget=options.budget, model=options.model, phase=options.phase
    )
    if options.as_json:
        emit_json(outcome_payload(outcome, name))
    else:
        echo_context(outcome, name, max_dropped=max_dropped)


@context.command("simulate")
@click.argument("query", required=False, default="")
@click.option("--project", default=None, help="Project (default: the one holding the cwd).")
@click.option("--path", default=None, type=click.Path(), help="Index PATH first (incrementally).")
@assembly_options
@pass_app
def simulate(
    app: App, query: str, project: str | None, path: str | None, options: AssemblyOptions
) -> None:
    """Dry run: what would be selected and each strategy's allocation, without content."""
    options.request(query)  # a bad request fails before anything is indexed
    apply_settings(app, options.settings)
    name = resolve_project(app, project, path)
    run_simulation(app, name, query, options)


@context.command("inspect")
@click.option("--project", default=None, help="Project (default: the one holding the cwd).")
@click.option("--id", "assembly_id", default=None, help="A given assembly instead of the last.")
@click.option("--max-dropped", type=int, default=20, show_default=True)
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@pass_app
def inspect(
    app: App, project: str | None, assembly_id: str | None, max_dropped: int, as_json: bool
) -> None:
    """The last assembly: stages run, components per slot and their scope, notes, timings."""
    from cleveragents.errors import NotFoundError

    service = service_for(app)
    if assembly_id:
        report = service.history.get(assembly_id)
        if report is None:
            raise NotFoundError(f"assembly '{assembly_id}' not found")
    else:
        name = resolve_project(app, project)
        report = service.history.last(name)
        if report is None:
            raise NotFoundError(
                f"no assembly recorded for project '{name}' yet: "
                f"run `cleveragents context assemble QUESTION --project {name}`"
            )
    if as_json:
        emit_json(report.to_dict())
    else:
        echo_report(report, max_dropped=max_dropped)


@context.command("expand")
@click.argument("uri")
@click.option("--project", default=None, help="Project (default: the one holding the cwd).")
@click.option(
    "--depth",
    default="9",
    show_default=True,
    metavar="NAME|N",
    help="Detail depth 0-9 or a named level.",
)
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@pass_app
def expand(app: App, uri: str, project: str | None, depth: str, as_json: bool) -> None:
    """Render node URI (e.g. one the budget dropped) as a fragment with provenance.

    URI may also be PATH, PATH#QUALNAME, PATH:LINE (the innermost node there) or a
    name, as --focus takes them; a name several nodes have lists their URIs.
    """
    from cleveragents_acms.cli._context_common import parse_depth

    service = service_for(app)
    name = resolve_project(app, project)
    fragment = service.expand(uri, project=name, depth=parse_depth(depth) or 0)
    if as_json:
        emit_json(fragment.model_dump(mode="json"))
        return
    echo_fragment(None, fragment)
    provenance = fragment.provenance
    click.echo(
        f"resource {provenance.resource_id}; source hash {provenance.source_hash or '-'}; "
        f"indexed {provenance.indexed_at.isoformat() if provenance.indexed_at else '-'}"
    )


# -- tier entries ------------------------------------------------------------------------

_TIERS = ("hot", "warm", "cold")


def _entry_row(entry: Any) -> dict[str, Any]:
    return {
        "id": entry.fragment_id,
        "tier": entry.tier,
        "project": entry.project_name,
        "tokens": entry.token_count,
        "source": entry.provenance.location,
        "last used": entry.last_accessed.strftime("%Y-%m-%d %H:%M:%S"),
        "uses": entry.access_count,
    }


@context.command("list")
@click.option("--project", default=None, help="Project (default: the one holding the cwd).")
@click.option("--tier", type=click.Choice(_TIERS), default=None, help="Only this tier.")
@click.option(
    "--role",
    type=click.Choice(("strategist", "executor", "reviewer")),
    default=None,
    help="Only what an actor of this role sees.",
)
@click.option("--json", "as_json", is_flag=True, help="Print JSON instead of a table.")
@pass_app
def list_entries(
    app: App, project: str | None, tier: str | None, role: str | None, as_json: bool
) -> None:
    """List the context entries of the project, hot first."""
    service = service_for(app)
    name = resolve_project(app, project)
    if role is not None:
        entries = service.tiers.get_for_actor(role, [name])
        if tier is not None:
            entries = [e for e in entries if e.tier == tier]
    else:
        entries = service.tiers.entries([name], (tier,) if tier else _TIERS)
    if as_json:
        emit_json([e.model_dump(mode="json") for e in entries])
        return
    emit_table(
        [_entry_row(e) for e in entries],
        ["id", "tier", "tokens", "source", "last used", "uses"],
        empty=f"No context entries in project {name}.",
    )


@context.command("add")
@click.argument("target", required=False)
@click.option("--project", default=None, help="Project (default: the one holding the cwd).")
@click.option("--tier", type=click.Choice(_TIERS), default="warm", show_default=True)
@click.option("--text", default=None, help="Add this text (a decision, a note) instead of TARGET.")
@click.option(
    "--depth",
    default="9",
    show_default=True,
    metavar="NAME|N",
    help="Depth to render a node URI at.",
)
@click.option("--relevance", type=click.FloatRange(0.0, 1.0), default=0.5, show_default=True)
@click.option("--json", "as_json", is_flag=True, help="Print the stored entry as JSON.")
@pass_app
def add(
    app: App,
    target: str | None,
    project: str | None,
    tier: str,
    text: str | None,
    depth: str,
    relevance: float,
    as_json: bool,
) -> None:
    """Add a context entry: a node URI, a file (PATH or PATH:START-END), or --text.

    PATH is read from the working directory or from a root of the project's
    resources; a TARGET that is no file is resolved as `context expand` resolves it
    (PATH#QUALNAME, PATH:LINE of an indexed file, a name).
    """
    from cleveragents_acms.cli._context_common import parse_depth
    from cleveragents_acms.context.entries import make_entry

    service = service_for(app)
    name = resolve_project(app, project)
    entry = make_entry(
        service,
        name,
        target,
        text=text,
        tier=tier,
        depth=parse_depth(depth) or 0,
        relevance=relevance,
        cwd=app.cwd,
    )
    service.tiers.store(entry)
    stored = service.tiers.find(entry.fragment_id) or entry
    if as_json:
        emit_json(stored.model_dump(mode="json"))
    else:
        moved = (
            f" (moved to {stored.tier}: the {tier} tier was full)" if stored.tier != tier else ""
        )
        success(
            f"Added context entry {stored.fragment_id} to the {tier} tier of project {name}: "
            f"{stored.provenance.location}, {stored.token_count} tokens{moved}"
        )


@context.command("show")
@click.argument("entry_id")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@pass_app
def show(app: App, entry_id: str, as_json: bool) -> None:
    """Show one context entry with its content."""
    from cleveragents.errors import NotFoundError
    from cleveragents.redaction import redact_text

    entry = service_for(app).tiers.get(entry_id)
    if entry is None:
        raise NotFoundError(f"context entry '{entry_id}' not found")
    if as_json:
        emit_json(entry.model_dump(mode="json"))
        return
    emit_record(
        {
            **_entry_row(entry),
            "node": entry.uko_node,
            "depth": entry.detail_depth,
            "relevance": entry.relevance_score,
            "in tier since": entry.tier_since.isoformat(timespec="seconds"),
        }
    )
    click.echo()
    click.echo(redact_text(entry.content))


@context.command("clear")
@click.option("--project", default=None, help="Project (default: the one holding the cwd).")
@click.option("--tier", type=click.Choice(_TIERS), default=None, help="Only this tier.")
@click.option("--yes", "-y", is_flag=True, help="Do not ask for confirmation.")
@pass_app
def clear(app: App, project: str | None, tier: str | None, yes: bool) -> None:
    """Remove every context entry of the project (of one tier with --tier)."""
    service = service_for(app)
    name = resolve_project(app, project)
    where = f"the {tier} tier of " if tier else ""
    if not yes:
        click.confirm(f"Remove every context entry from {where}project {name}?", abort=True)
    removed = service.tiers.clear(name, tier)
    success(
        f"Removed {removed} context entr{'y' if removed == 1 else 'ies'} from {where}project {name}"
    )


@context.command("promote")
@click.argument("entry_id")
@pass_app
def promote(app: App, entry_id: str) -> None:
    """Move an entry up a tier (cold -> warm -> hot)."""
    moved = service_for(app).tiers.promote(entry_id)
    success(f"Context entry {entry_id} is now {moved.tier}")


@context.command("demote")
@click.argument("entry_id")
@click.option("--summarize", is_flag=True, help="Keep only the entry's first lines.")
@pass_app
def demote(app: App, entry_id: str, summarize: bool) -> None:
    """Move an entry down a tier (hot -> warm -> cold)."""
    moved = service_for(app).tiers.demote(entry_id, summarize=summarize)
    success(f"Context entry {entry_id} is now {moved.tier}")


@context.command("evict")
@click.option("--project", default=None, help="Project (default: the one holding the cwd).")
@click.option("--tier", type=click.Choice(_TIERS), required=True)
@click.option("--count", type=int, required=True, help="How many to evict.")
@pass_app
def evict(app: App, project: str | None, tier: str, count: int) -> None:
    """Remove the COUNT least recently used entries of a tier."""
    service = service_for(app)
    name = resolve_project(app, project)
    removed = service.tiers.evict_lru(tier, count, project=name)
    success(
        f"Evicted {removed} entr{'y' if removed == 1 else 'ies'} from the {tier} tier of "
        f"project {name}"
    )
