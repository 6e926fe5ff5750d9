"""``cleveragents index``: build, refresh, watch and inspect code-base indexes."""

from __future__ import annotations

import math
import sys
from pathlib import Path
from typing import Any

import click

from cleveragents.cli.context import App, pass_app
from cleveragents.cli.output import emit_json, emit_table
from cleveragents_acms.cli._context_common import PHASES

__all__ = ["index"]


class _PathOrCommand(click.Group):
    """``index PATH`` runs the default command; ``index status`` the subcommand."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        if args and args[0] not in self.commands and args[0] not in ("-h", "--help"):
            args = ["build", *args]
        return super().parse_args(ctx, args)


class _PathCommand(click.Command):
    """The command ``index PATH`` runs (``build``, hidden): its usage line reads as a
    user types it, ``cleveragents index [OPTIONS] PATH``, and an error's hint says
    ``Try 'cleveragents index PATH --help'``."""

    def make_context(
        self,
        info_name: str | None,
        args: list[str],
        parent: click.Context | None = None,
        **extra: Any,
    ) -> click.Context:
        return super().make_context("PATH", args, parent, **extra)

    def format_usage(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        group = ctx.parent.command_path if ctx.parent is not None else ctx.command_path
        formatter.write_usage(group, " ".join(self.collect_usage_pieces(ctx)))


@click.group(cls=_PathOrCommand)
def index() -> None:
    """Index a code base: `cleveragents index PATH [--project NAME] [--force] [--watch] [--json]`.

    Indexing is incremental: only files whose content changed are analysed
    again (every file after the analyzers changed, or with --force). --watch
    keeps the index fresh as files are saved. `cleveragents index PATH --help`
    describes the options. Subcommands: status, search (the text index), sparql
    (the knowledge graph).
    """


def interrupted(path: Path | str) -> str:
    """What to tell someone who stopped a run with Ctrl-C."""
    return (
        f"\nInterrupted: the index of {path} is as it was before this run (if there was "
        "one, it still answers); run `cleveragents index` on it again to finish."
    )


def summary(resource: Any, result: Any) -> str:
    """What a run did, for people: counts, skipped files, limits hit, file problems."""
    from cleveragents_acms.analyzers.files import SkipReason

    run, meta = result.run, result.metadata
    parts = [
        f"Indexed {resource.label} into project {meta.project_name}: {meta.file_count} files, "
        f"{meta.node_count} nodes ({meta.primary_language})",
    ]
    if run is not None:
        parts.append(
            f"  this run: files {run.files_analyzed} analysed, {run.files_unchanged} unchanged, "
            f"{run.files_removed} removed, {run.files_skipped} skipped; nodes "
            f"{run.nodes_added} new, {run.nodes_revised} revised, {run.nodes_retired} retired, "
            f"{run.nodes_unchanged} unchanged; {run.seconds:.2f}s"
        )
        if run.files_dependent:
            parts.append(
                f"  of those, {run.files_dependent} unchanged file(s) analysed again, as what "
                "they name changed (a definition added, removed, renamed or moved, a "
                "package's __init__.py added or removed, or what a Go package declares)"
            )
        if run.reanalysis:
            parts.append(f"  {run.reanalysis}")
        parts.extend(f"  rebuilt {what}" for what in run.rebuilt)
        if run.skipped_reasons:
            ranked = sorted(run.skipped_reasons.items(), key=lambda item: -item[1])
            parts.append("  skipped: " + ", ".join(f"{n} {reason}" for reason, n in ranked))
            parts.extend(_surprising_skips(run.skipped))
        over = run.skipped_reasons.get(SkipReason.TOTAL_SIZE)
        if over:
            parts.append(
                f"  warning: {over} files were left out because the index reached its "
                "total-size limit (context.file.max-total-size); raise it, or set it to 0 for "
                "no limit, to index them"
            )
        if meta.file_count == 0:
            parts.append(
                f"  warning: nothing to index under {resource.location}: no file there is text "
                "the indexer takes (check the path, .gitignore and the skipped files above)"
            )
        if run.errors:
            parts.append(
                f"  {len(run.errors)} file problem(s), e.g. {run.errors[0][0]}: "
                f"{run.errors[0][1]} (all of them: `cleveragents index status`)"
            )
    return "\n".join(parts)


_NAMED_PER_REASON = 3


def _surprising_skips(skipped: list[tuple[str, str]]) -> list[str]:
    """``    generated: a.py, b.py … and 4 more`` lines for the skips worth a look: those
    a user expects (ignored, tool folders, binary files …) are only counted, these are
    named, since a source file may be among them."""
    from cleveragents_acms.analyzers.files import SkipReason

    named = {
        SkipReason.GENERATED,
        SkipReason.MINIFIED,
        SkipReason.TOO_LARGE,
        SkipReason.UNREADABLE,
        SkipReason.SYMLINK_OUTSIDE,
        SkipReason.SYMLINK_LOOP,
        SkipReason.SYMLINK_DUPLICATE,
        SkipReason.BROKEN_SYMLINK,
        SkipReason.NOT_REGULAR,
    }
    by_reason: dict[str, list[str]] = {}
    for path, reason in skipped:
        kind = reason.split(":", 1)[0]
        if kind in named:
            by_reason.setdefault(kind, []).append(path)
    lines = []
    for kind, paths in sorted(by_reason.items()):
        shown = ", ".join(paths[:_NAMED_PER_REASON])
        more = len(paths) - _NAMED_PER_REASON
        tail = f" and {more} more (all in --json: run.skipped)" if more > 0 else ""
        lines.append(f"    {kind}: {shown}{tail}")
    return lines


@index.command("build", hidden=True, cls=_PathCommand)
@click.argument("path", type=click.Path(path_type=Path))
@click.option(
    "--project", "project", default=None, help="Project to index into (default: folder name)."
)
@click.option(
    "--force",
    is_flag=True,
    help="Re-analyse every file, not only changed ones (a run does so by itself once the "
    "analyzers changed: an upgrade, an analyzer plugin installed or removed).",
)
@click.option("--watch", "watch_", is_flag=True, help="Keep running and refresh on every change.")
@click.option(
    "--no-wait",
    is_flag=True,
    help="Fail at once if another process is indexing PATH into the project (by default "
    "the run waits for that one to end: a --watch refreshing, say).",
)
@click.option("--json", "as_json", is_flag=True, help="Print the result as JSON.")
@pass_app
def build(
    app: App,
    path: Path,
    project: str | None,
    force: bool,
    watch_: bool,
    no_wait: bool,
    as_json: bool,
) -> None:
    """Index PATH (creating its project and resource if needed)."""
    from cleveragents_acms.analyzers.walk_ahead import WalkAhead

    # The tree is walked in a child process while this one imports the indexer.
    walk_ahead = WalkAhead.configured(path.expanduser(), app.config)
    from cleveragents_acms.indexing.runner import index_path, resource_json, service_for

    try:
        resource, result = index_path(
            app,
            path.expanduser(),
            project,
            force=force,
            show_progress=None if not as_json else False,
            wait=not no_wait,
            walk_ahead=walk_ahead,
        )
    except KeyboardInterrupt:
        click.echo(interrupted(path), err=True)
        raise click.exceptions.Exit(130) from None
    if as_json:
        emit_json(
            {
                "resource": resource_json(resource),
                "index": result.metadata.to_dict(),
                "run": result.run.to_dict() if result.run else None,
            }
        )
    else:
        click.echo(summary(resource, result))
    if not watch_:
        return
    from cleveragents_acms.indexing.watch import watch

    service = service_for(app)
    project_name = result.metadata.project_name

    def refresh(paths: list[str] | None) -> Any:
        # Another run of the command (or another watcher) may be indexing: wait for it.
        # The saved paths spare a walk of the whole tree (when nothing else can have changed).
        return service.index_resource(
            resource.resource_id,
            resource.location or "",
            project=project_name,
            wait=math.inf,
            changed_paths=paths,
        )

    def report(refreshed: Any, changes: int) -> None:
        run = refreshed.run
        cause = (
            "caught up with changes made while starting"
            if changes < 0
            else f"refreshed after {changes} change(s)"
        )
        dependent = (
            f" ({run.files_dependent} unchanged, for what they name)" if run.files_dependent else ""
        )
        click.echo(
            f"{cause}: {run.files_analyzed} analysed{dependent}, "
            f"{run.files_removed} removed in {run.seconds:.2f}s"
        )

    watch(
        Path(resource.location or path),
        refresh,
        on_refresh=report,
        on_error=lambda exc: click.echo(f"warning: refresh failed: {exc}", err=True),
        on_ready=lambda: click.echo(f"watching {resource.location} (Ctrl-C to stop)"),
    )


#: The files with problems ``index status`` lists per index (``--json`` lists them all).
_PROBLEMS_SHOWN = 10


@index.command("status")
@click.option("--project", "project", default=None, help="Only this project's indexes.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON instead of a table.")
@pass_app
def status(app: App, project: str | None, as_json: bool) -> None:
    """Status of every index: files, nodes, language, state, problems."""
    from cleveragents_acms.indexing.runner import service_for

    service = service_for(app)
    service.cleanup_stale_indexing()
    indexes = service.list_indexes(project)
    vectors = {m.project_name: _vector_summary(app, m.project_name) for m in indexes}
    graphs = {m.index_id: _graph_state(app, m.project_name, m.resource_id) for m in indexes}
    problems = {
        m.index_id: service.file_problems(m.index_id) if m.error_count else {} for m in indexes
    }
    if as_json:
        emit_json(
            [
                {
                    **m.to_dict(),
                    "vectors": vectors[m.project_name],
                    "graph": graphs[m.index_id],
                    "file_problems": problems[m.index_id],
                }
                for m in indexes
            ]
        )
        return
    rows = [
        {
            "project": m.project_name,
            "path": m.root_path,
            "status": m.status + (f": {m.error_message}" if m.error_message else ""),
            "files": m.file_count,
            "nodes": m.node_count,
            "errors": m.error_count,
            "language": m.primary_language,
            "indexed at": m.indexed_at.strftime("%Y-%m-%d %H:%M:%S"),
            "vectors": _vector_label(vectors[m.project_name]),
            "graph": _BEHIND if graphs[m.index_id] == "behind" else graphs[m.index_id],
        }
        for m in indexes
    ]
    columns = [
        "project",
        "path",
        "status",
        "files",
        "nodes",
        "errors",
        "language",
        "graph",
        "vectors",
        "indexed at",
    ]
    emit_table(rows, columns, empty="No indexes yet: run `cleveragents index PATH`.")
    for m in indexes:
        found = problems[m.index_id]
        if found:
            click.echo(f"\nFiles with problems in {m.project_name} ({m.root_path}):")
            for path, errors in list(found.items())[:_PROBLEMS_SHOWN]:
                click.echo(f"  {path}: {'; '.join(errors)}")
            if len(found) > _PROBLEMS_SHOWN:
                click.echo(
                    f"  ... {len(found) - _PROBLEMS_SHOWN} more (all in --json: file_problems)"
                )


@index.command("compact")
@click.option("--project", "project", default=None, help="Only this project (default: all).")
@click.option("--json", "as_json", is_flag=True, help="Print JSON instead of text.")
@pass_app
def compact(app: App, project: str | None, as_json: bool) -> None:
    """Write text indexes anew from their node stores, dropping replaced documents.

    Tantivy counts a replaced document in BM25's document frequencies until a merge drops
    it, so after many edits scores drift from a cold index's; a refresh writes the text
    index anew past a share of them, this at once. The old index answers until the end.
    """
    from cleveragents_acms.indexing.runner import service_for

    service = service_for(app)
    projects = sorted({m.project_name for m in service.list_indexes(project)})
    if project and not projects:
        raise click.UsageError(f"project {project!r} has no index: run `cleveragents index`")
    results = []
    for name in projects:
        done = service.compact_text(name)
        written, replaced = (done[0], done[1]) if done else (0, 0)
        results.append(
            {"project": name, "written": written, "replaced": replaced, "compacted": bool(done)}
        )
        if not as_json:
            click.echo(
                f"{name}: {written} documents written anew, {replaced} replaced ones dropped"
                if done
                else f"{name}: no replaced document; nothing to do"
            )
    if as_json:
        emit_json(results)
    elif not projects:
        click.echo("No indexes yet: run `cleveragents index PATH`.")


_BEHIND = "behind: run `cleveragents index`"

_PROJECT_HELP = "Project (default: the one holding the cwd, or the only one)."


def _query_text(query: str) -> str:
    """QUERY as given, or standard input for ``-``."""
    return sys.stdin.read() if query == "-" else query


@index.command("search")
@click.argument("query")
@click.option("--project", "project", default=None, help=_PROJECT_HELP)
@click.option("--limit", default=20, show_default=True, help="Results at most.")
@click.option(
    "--phase",
    type=click.Choice(PHASES),
    default="default",
    show_default=True,
    help="Whose context view limits the resources and paths searched.",
)
@click.option("--json", "as_json", is_flag=True, help="Print JSON instead of a table.")
@pass_app
def search(
    app: App, query: str, project: str | None, limit: int, phase: str, as_json: bool
) -> None:
    """Search the project's text index for QUERY, best match first.

    The search strategies' own index: BM25 over names, qualified names, signatures,
    paths, docstrings and bodies, identifier-aware (`parseHttpRequest`,
    `parse_http_request` and `http request` find each other). QUERY `-` reads it from
    standard input.
    """
    from cleveragents_acms.cli._context_common import resolve_project, service_for

    name = resolve_project(app, project)
    query = _query_text(query)
    results = service_for(app).search(query, project=name, limit=limit, phase=phase)
    rows = [
        {
            "score": round(r.score, 3),
            "path": r.metadata.get("path", ""),
            "lines": f"{r.metadata.get('start_line', '?')}-{r.metadata.get('end_line', '?')}",
            "type": r.metadata.get("uko_type", ""),
            "name": r.metadata.get("qualname") or r.metadata.get("name", ""),
            "uri": r.uko_uri,
            "snippet": r.content,
        }
        for r in results
    ]
    if as_json:
        emit_json({"project": name, "query": query, "results": rows})
        return
    emit_table(
        [{**row, "location": f"{row['path']}:{row['lines']}"} for row in rows],
        ["score", "location", "type", "name"],
        empty=f"Nothing in project {name} matches {query!r}.",
    )


@index.command("sparql")
@click.argument("query")
@click.option("--project", "project", default=None, help=_PROJECT_HELP)
@click.option(
    "--history", is_flag=True, help="Also match retired versions of nodes (revision history)."
)
@click.option(
    "--at",
    "at",
    default=None,
    metavar="TIME",
    help="Query the graph as it stood at TIME (ISO 8601, e.g. 2026-11-30T14:00; "
    "UTC unless it has an offset).",
)
@click.option("--json", "as_json", is_flag=True, help="Print JSON instead of a table.")
@pass_app
def sparql(
    app: App, query: str, project: str | None, history: bool, at: str | None, as_json: bool
) -> None:
    """Run a SPARQL query over the project's knowledge graph.

    Only the project's resources are visible. The UKO prefixes (uko:, uko-code:,
    uko-py: …, rdf:, rdfs:, xsd:, dcterms:) are predeclared. SELECT prints a table,
    ASK true or false, CONSTRUCT and DESCRIBE their triples. QUERY `-` reads it from
    standard input, e.g. `cleveragents index sparql - < query.rq`.

    --at TIME answers from the node versions valid at TIME, each under its node's URI
    (what a file defined and depended on before a change), read from a copy of the
    store made for the query: a few seconds for 100k nodes. --history matches every version,
    retired ones under their revision IRIs.
    """
    import json

    from cleveragents.models.ids import parse_instant
    from cleveragents_acms.cli._context_common import resolve_project, service_for

    when = parse_instant(at) if at is not None else None
    if at is not None and when is None:
        raise click.BadParameter(
            f"{at!r} is not an ISO 8601 time (e.g. 2026-11-30 or 2026-11-30T14:00:00+01:00)",
            param_hint="--at",
        )
    if when is not None and history:
        raise click.UsageError("--at and --history do not go together: choose one")
    name = resolve_project(app, project)
    result = service_for(app).sparql(
        _query_text(query), project=name, include_history=history, at=when
    )
    stamp = {"at": when.isoformat()} if when is not None else {}
    form = result.metadata.get("form")
    if form == "ask":
        answer = result.metadata.get("boolean") == "true"
        if as_json:
            emit_json({**stamp, "boolean": answer})
        else:
            click.echo(str(answer).lower())
    elif form == "select":
        variables = [v for v in result.metadata.get("variables", "").split(",") if v]
        rows = json.loads(result.metadata.get("bindings", "[]"))
        if as_json:
            emit_json({**stamp, "variables": variables, "rows": rows})
        else:
            emit_table(rows, variables, empty="No rows.")
    elif as_json:
        emit_json({**stamp, "triples": [list(t) for t in result.triples]})
    else:
        for triple in result.triples:
            click.echo(" ".join(triple))


def _gaps(project: str, store: str) -> list[str]:
    """The resources whose nodes changed while ``store`` was off (see the node store)."""
    from cleveragents import paths
    from cleveragents_acms.indexing.store import NodeStore

    location = paths.index_dir("graph", project) / "nodes.db"
    if not location.exists():
        return []
    nodes = NodeStore(location)
    try:
        return nodes.gaps(store)
    finally:
        nodes.close()


def _graph_state(app: App, project: str, resource_id: str) -> str:
    """``on``; ``off`` (``index.graph.backend = "none"``); or behind: it was off while
    files changed, and the next ``cleveragents index`` builds it from the node store."""
    from cleveragents_acms.indexing.project_index import backend_class

    if backend_class(app.registry, app.config, "graph") is None:
        return "off"
    return "behind" if resource_id in _gaps(project, "graph") else "on"


def _vector_summary(app: App, project: str) -> dict[str, Any] | None:
    """Count, dimension and embedder of the project's vector index, read without loading it."""
    from cleveragents import paths
    from cleveragents_acms.indexing.project_index import NO_BACKEND

    if app.config.get("index.vector.backend") == NO_BACKEND:
        return {"off": True}
    if len(app.registry.backends.vector) and _gaps(project, "vector"):
        return {"behind": True}
    view = app.registry.backends.vector
    for name in view:
        describe = getattr(view[name], "describe", None)
        info = describe(paths.index_dir("vector", project)) if describe else None
        if info:
            keys = ("count", "dimension", "embedder", "index_type", "corrupt")
            return {k: info[k] for k in keys if k in info}
    return None


def _vector_label(summary: dict[str, Any] | None) -> str:
    if not summary:
        return "-"
    if summary.get("off"):
        return "off"
    if summary.get("behind"):
        return _BEHIND
    if "corrupt" in summary:
        return "corrupt: run `cleveragents vector rebuild`"
    return f"{summary.get('count', 0)} x {summary.get('dimension')}d ({summary.get('embedder')})"
