"""Glue between the CLI (or an event hook) and RepoIndexingService.

``index_path`` is what ``cleveragents index PATH`` does: make sure the project
and resource exist, index with a progress bar on a terminal, and tell the
plugins (``cleveragents_resource_indexed``).
"""

from __future__ import annotations

import math
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from cleveragents.storage.lookups import StoredResource
from cleveragents_acms.indexing.models import RepoIndex
from cleveragents_acms.indexing.service import (
    PhaseListener,
    PhaseProgress,
    Progress,
    RepoIndexingService,
)

if TYPE_CHECKING:
    from cleveragents.models.resources import Resource
    from cleveragents_acms.analyzers.walk_ahead import WalkAhead

__all__ = ["ensure_resource", "index_path", "index_resource", "resource_json", "service_for"]


def service_for(app: Any) -> RepoIndexingService:
    """The indexing service over the app's database, registry and configuration."""
    app.host.configure(app.config)
    return RepoIndexingService(app.database, app.registry, app.config)


def ensure_resource(
    app: Any, path: Path, project: str | None
) -> tuple[Resource | StoredResource, str]:
    """The resource registered at ``path`` (created if needed), linked into ``project``:
    as it is stored when it was there already (nearly always; no model built), else the
    model just registered.

    Without a project, the project is named after the resource.
    """
    from cleveragents.models.names import check_name
    from cleveragents.storage.lookups import resource_at

    given = path.expanduser()
    if given.is_dir():  # else the checks below say what is wrong with it
        # Nearly always all is there already: found without the ORM (0.1 s to import).
        found = resource_at(app.database, str(given.resolve()))
        if found is not None:
            stored, linked = found
            project_name = check_name("project", project or stored.label)
            if project_name in linked:
                return stored, project_name

    from cleveragents.cli.resource_cmd import default_resource_name, describe_location
    from cleveragents.models.resources import Resource
    from cleveragents.storage.audit import add_audit_row
    from cleveragents.storage.repositories import ProjectRepository, ResourceRepository

    location, resource_type, properties = describe_location(str(path), "auto")
    with app.database.session() as session:
        resources = ResourceRepository(session)
        projects = ProjectRepository(session)
        existing = resources.find_by_location(str(location))
        if existing:
            resource = existing[0]
        else:
            name = default_resource_name(location)
            suffix = 2
            while resources.find_by_name(name) is not None:
                name, suffix = f"{default_resource_name(location)}-{suffix}", suffix + 1
            resource = resources.add(
                Resource(
                    name=name,
                    resource_type_name=resource_type,
                    location=str(location),
                    properties=properties,
                )
            )
            add_audit_row(
                session,
                "entity_created",
                {
                    "entity": "resource",
                    "resource_id": resource.resource_id,
                    "name": resource.name,
                    "location": resource.location,
                },
            )
        project_name = check_name("project", project or resource.label)
        if projects.find(project_name) is None:
            projects.create(project_name, description=f"created by `cleveragents index {location}`")
            add_audit_row(
                session,
                "entity_created",
                {"entity": "project", "name": project_name},
                project_name=project_name,
            )
        if not any(
            link.project_name == project_name
            for link in resources.projects_of(resource.resource_id)
        ):
            resources.link_to_project(project_name, resource.resource_id)
    return resource, project_name


#: What the bar says while a run writes its stores, every file analysed (a big cold run
#: spends about 40 % of its time there).
_WRITING = {
    "resolve": "resolving names",
    "graph": "writing the graph",
    "nodes": "writing the node store",
    "text": "updating the text index",
    "vectors": "adding vectors",
    "commit": "committing",
    "graph-wait": "waiting for the graph load",
    "graph-rebuild": "building the graph from the node store",
    "vector-rebuild": "embedding the node store's nodes",
    "text-compact": "writing the text index anew",
    "close": "closing the stores",
    "record": "recording the files",
    "finish": "finishing",
}
_ITEM_CHARS = 48


def _shown(item: str | None) -> str:
    """The file being analysed or the writing phase, cut to fit the bar's line."""
    if not item:
        return ""
    return item if len(item) <= _ITEM_CHARS else "…" + item[-(_ITEM_CHARS - 1) :]


@contextmanager
def _progress(
    label: str, enabled: bool
) -> Iterator[tuple[Progress | None, PhaseListener | None, PhaseProgress | None]]:
    """The run's progress callbacks (files analysed, phases, nodes a phase wrote) for a
    bar on stderr."""
    if not enabled:
        yield None, None, None
        return
    bar_holder: dict[str, Any] = {}

    def bar_of(length: int) -> Any:
        bar = bar_holder.get("bar")
        if bar is None:
            bar = click.progressbar(
                length=length,
                label=label,
                file=sys.stderr,
                show_pos=True,
                show_eta=True,
                item_show_func=_shown,
            )
            bar.__enter__()
            bar_holder["bar"] = bar
        return bar

    def update(done: int, total: int, path: str) -> None:
        bar_of(total).update(1, current_item=path)

    def phase(name: str) -> None:
        bar = bar_holder.get("bar")
        if bar is not None and name in _WRITING:  # files were analysed: say what follows
            bar.current_item = f"{_WRITING[name]}…"
            bar.render_progress()

    def phase_progress(name: str, done: int, total: int) -> None:
        if name not in _WRITING:
            return
        if "bar" not in bar_holder:
            # No file changed (files were only removed): the bar counts the phase's nodes.
            bar_holder["nodes"] = True
        bar = bar_of(total)
        if bar_holder.get("nodes"):
            bar.update(done - bar.pos, current_item=f"{_WRITING[name]} (nodes)…")
        else:
            bar.current_item = f"{_WRITING[name]} ({done:,} of {total:,} nodes)…"
            bar.render_progress()

    try:
        yield update, phase, phase_progress
    finally:
        if "bar" in bar_holder:
            bar_holder["bar"].__exit__(None, None, None)


def index_resource(
    app: Any,
    resource: Resource | StoredResource,
    project: str,
    *,
    force: bool = False,
    show_progress: bool | None = None,
    wait: bool = True,
    walk_ahead: WalkAhead | None = None,
) -> RepoIndex:
    """Index one stored resource into ``project`` and fire ``cleveragents_resource_indexed``.

    While another process indexes it (a ``--watch`` refreshing), wait for that run to end,
    unless ``wait`` is false (then fail at once). ``walk_ahead``: the resource's tree,
    walked while the command started (``RepoIndexingService.index_resource``).
    """
    if show_progress is None:
        show_progress = sys.stderr.isatty()
    service = service_for(app)

    def waiting(pid: int) -> None:
        click.echo(
            f"waiting for process {pid}, which is indexing {resource.label} into project "
            f"{project} (Ctrl-C to stop)",
            err=True,
        )

    with _progress(f"indexing {resource.label}", show_progress) as callbacks:
        progress, on_phase, on_phase_progress = callbacks
        result = service.index_resource(
            resource.resource_id,
            resource.location or "",
            project=project,
            force=force,
            progress=progress,
            on_phase=on_phase,
            on_phase_progress=on_phase_progress,
            wait=math.inf if wait else 0.0,
            on_wait=waiting,
            walk_ahead=walk_ahead,
        )
    from cleveragents_acms.indexing.vectors import repair_project_vectors

    repair_project_vectors(app.registry, app.config, project)  # when the run did not open it
    stats = {
        "project": project,
        **(result.run.to_dict() if result.run else {}),
        "files": result.metadata.file_count,
        "nodes": result.metadata.node_count,
    }
    if app.host.implements("cleveragents_resource_indexed"):  # else no model is built
        model = resource.model() if isinstance(resource, StoredResource) else resource
        for plugin, exc in app.host.call_event(
            "cleveragents_resource_indexed", resource=model, stats=stats
        ):
            click.echo(f"warning: plugin {plugin} failed on resource indexed: {exc}", err=True)
    return result


def resource_json(resource: Resource | StoredResource) -> dict[str, Any]:
    """The resource as ``--json`` prints it (the model's JSON dump, however it was read)."""
    if isinstance(resource, StoredResource):
        return resource.json()
    return resource.model_dump(mode="json")


def index_path(
    app: Any,
    path: Path,
    project: str | None,
    *,
    force: bool = False,
    show_progress: bool | None = None,
    wait: bool = True,
    walk_ahead: WalkAhead | None = None,
) -> tuple[Resource | StoredResource, RepoIndex]:
    """``cleveragents index PATH``: register what is needed, then index (``walk_ahead``:
    PATH's tree, walked while the command started)."""
    from cleveragents.errors import ValidationError

    if not path.exists():
        raise ValidationError(f"path does not exist: {path}")
    if not path.is_dir():
        raise ValidationError(f"not a directory: {path}")
    resource, project_name = ensure_resource(app, path, project)
    return resource, index_resource(
        app,
        resource,
        project_name,
        force=force,
        show_progress=show_progress,
        wait=wait,
        walk_ahead=walk_ahead,
    )
