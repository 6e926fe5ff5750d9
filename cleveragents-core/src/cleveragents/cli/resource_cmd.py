"""``cleveragents resource``: register directories and git checkouts agents work on.

Adding a resource stores it, optionally links it into a project, and then
tells the plugins (``cleveragents_resource_added``) so the context system can
index it. A plugin failing there is reported as a warning; the resource stays.
"""

from __future__ import annotations

import os
import re
import subprocess
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from cleveragents.cli.context import App, pass_app
from cleveragents.cli.output import emit_json, emit_record, emit_table, success

if TYPE_CHECKING:
    from cleveragents.models.resources import ProjectResource, Resource

__all__ = [
    "describe_location",
    "detect_resource_type",
    "git_facts",
    "notify_plugins",
    "resource",
    "resource_payload",
]

RESOURCE_TYPES = ("auto", "filesystem/directory", "git/checkout")


# -- inspecting a location ------------------------------------------------------------


def detect_resource_type(path: Path) -> str:
    """``git/checkout`` when ``path`` holds ``.git`` (a folder, or a file for worktrees)."""
    return "git/checkout" if (path / ".git").exists() else "filesystem/directory"


def git_facts(path: Path) -> dict[str, Any]:
    """What a git checkout is at: ``head_commit`` and ``branch`` (``None`` when unknown)."""

    def git(*args: str) -> str | None:
        try:
            done = subprocess.run(
                ["git", "-C", str(path), *args],
                capture_output=True,
                text=True,
                timeout=15,
                check=False,
                env={**os.environ, "GIT_OPTIONAL_LOCKS": "0"},
            )
        except (OSError, subprocess.SubprocessError):
            return None
        value = done.stdout.strip()
        return value if done.returncode == 0 and value else None

    return {
        "vcs": "git",
        "head_commit": git("rev-parse", "--verify", "--quiet", "HEAD^{commit}"),
        "branch": git("symbolic-ref", "--quiet", "--short", "HEAD"),
    }


def describe_location(
    raw_path: str, requested_type: str = "auto"
) -> tuple[Path, str, dict[str, Any]]:
    """Validate a path given on the command line: ``(resolved path, type, properties)``.

    :raises ValidationError: the path does not exist, is not a directory, or is
        not a git checkout although ``git/checkout`` was requested.
    """
    from cleveragents.errors import ValidationError

    if not raw_path.strip():
        raise ValidationError("path must not be empty")
    given = Path(raw_path).expanduser()
    if not given.exists():
        raise ValidationError(f"path does not exist: {os.path.abspath(given)}")
    path = given.resolve()
    if not path.is_dir():
        raise ValidationError(f"not a directory: {path}")
    type_name = detect_resource_type(path) if requested_type == "auto" else requested_type
    if type_name == "git/checkout":
        if not (path / ".git").exists():
            raise ValidationError(f"not a git checkout (no .git): {path}")
        return path, type_name, git_facts(path)
    return path, type_name, {}


def default_resource_name(path: Path) -> str:
    """A valid resource name derived from the folder name (``my repo`` -> ``my-repo``)."""
    name = re.sub(r"[^A-Za-z0-9._-]+", "-", path.name).strip("-._")
    return name or "resource"


# -- output and plugin notification ---------------------------------------------------


def resource_payload(resource: Resource, links: Sequence[ProjectResource] = ()) -> dict[str, Any]:
    """The JSON form of a resource with the projects it is linked into."""
    data = resource.model_dump(mode="json")
    data["projects"] = [
        {"project": link.project_name, "read_only": link.read_only} for link in links
    ]
    return data


def _project_labels(links: Sequence[ProjectResource]) -> list[str]:
    return [link.project_name + (" (read-only)" if link.read_only else "") for link in links]


def notify_plugins(app: App, hook_name: str, what: str, **kwargs: Any) -> None:
    """Fire an event hook; print one warning line per plugin that raised."""
    from cleveragents.redaction import redact

    for plugin_name, exc in app.host.call_event(hook_name, app=app, **kwargs):
        lines = str(exc).strip().splitlines()
        reason = redact(lines[0]) if lines else type(exc).__name__
        click.echo(f"warning: plugin {plugin_name} failed on {what}: {reason}", err=True)


# -- commands -------------------------------------------------------------------------


@click.group("resource")
def resource() -> None:
    """Register, list, inspect and remove resources (directories, git checkouts)."""


@resource.command("add")
@click.argument("path")
@click.option("--name", default=None, help="Resource name (default: the folder name).")
@click.option("--project", "project_name", default=None, help="Also link it into this project.")
@click.option(
    "--type",
    "type_name",
    type=click.Choice(RESOURCE_TYPES),
    default="auto",
    show_default=True,
    help="Resource type; 'auto' recognises git checkouts by their .git.",
)
@click.option("--description", default=None, help="A short description.")
@click.option("--read-only", is_flag=True, help="Link it read-only into --project.")
@click.option("--json", "as_json", is_flag=True, help="Print the stored resource as JSON.")
@pass_app
def add(
    app: App,
    path: str,
    name: str | None,
    project_name: str | None,
    type_name: str,
    description: str | None,
    read_only: bool,
    as_json: bool,
) -> None:
    """Register the directory or git checkout at PATH as a resource."""
    from cleveragents.errors import AlreadyExistsError, ValidationError
    from cleveragents.models.resources import Resource, check_name

    location, resource_type, properties = describe_location(path, type_name)
    resource_name = check_name(
        "resource", name if name is not None else default_resource_name(location)
    )
    if project_name is not None:
        check_name("project", project_name)
    elif read_only:
        raise ValidationError("--read-only needs --project")
    new = Resource(
        name=resource_name,
        resource_type_name=resource_type,
        classification="physical",
        description=(description or "").strip() or None,
        location=str(location),
        properties=properties,
    )

    from cleveragents.storage.audit import add_audit_row
    from cleveragents.storage.repositories import ProjectRepository, ResourceRepository

    with app.database.session() as session:
        resources = ResourceRepository(session)
        if project_name is not None:
            ProjectRepository(session).get(project_name)
        existing = resources.find_by_location(str(location))
        if existing:
            raise AlreadyExistsError(
                f"{location} is already registered as resource '{existing[0].label}'",
                details={"resource_id": existing[0].resource_id},
            )
        if resources.find_by_name(resource_name) is not None:
            hint = "" if name is not None else "; choose another with --name"
            raise AlreadyExistsError(f"resource '{resource_name}' already exists{hint}")
        stored = resources.add(new)
        links = []
        if project_name is not None:
            links.append(
                resources.link_to_project(project_name, stored.resource_id, read_only=read_only)
            )
        add_audit_row(
            session,
            "entity_created",
            {
                "entity": "resource",
                "resource_id": stored.resource_id,
                "name": stored.name,
                "resource_type_name": stored.resource_type_name,
                "location": stored.location,
            },
            project_name=project_name,
        )

    if as_json:
        emit_json(resource_payload(stored, links))
    else:
        linked = f", linked to project {project_name}" if project_name else ""
        success(
            f"Added resource {stored.name} ({stored.resource_type_name}) {stored.resource_id} "
            f"at {stored.location}{linked}"
        )
    notify_plugins(
        app, "cleveragents_resource_added", "resource added", resource=stored, project=project_name
    )


@resource.command("list")
@click.option(
    "--project", "project_name", default=None, help="Only resources linked to this project."
)
@click.option("--json", "as_json", is_flag=True, help="Print JSON instead of a table.")
@pass_app
def list_resources(app: App, project_name: str | None, as_json: bool) -> None:
    """List resources, optionally only those of one project."""
    from cleveragents.storage.repositories import ProjectRepository, ResourceRepository

    with app.database.session(write=False) as session:
        if project_name is not None:
            ProjectRepository(session).get(project_name)
        repository = ResourceRepository(session)
        found = repository.all(project=project_name)
        links = repository.project_links(r.resource_id for r in found)

    if as_json:
        emit_json([resource_payload(r, links.get(r.resource_id, [])) for r in found])
        return
    rows = [
        {
            "name": r.label,
            "id": r.resource_id,
            "type": r.resource_type_name,
            "projects": _project_labels(links.get(r.resource_id, [])),
            "location": r.location,
        }
        for r in found
    ]
    where = f" in project {project_name}" if project_name else ""
    emit_table(rows, ["name", "id", "type", "projects", "location"], empty=f"No resources{where}.")


@resource.command("show")
@click.argument("name_or_id")
@click.option("--json", "as_json", is_flag=True, help="Print JSON instead of key: value lines.")
@pass_app
def show(app: App, name_or_id: str, as_json: bool) -> None:
    """Show one resource, by name or ULID."""
    from cleveragents.storage.repositories import ResourceRepository

    with app.database.session(write=False) as session:
        repository = ResourceRepository(session)
        found = repository.get(name_or_id)
        links = repository.projects_of(found.resource_id)
        children = repository.children(found.resource_id)
        parents = repository.parents(found.resource_id)

    payload = resource_payload(found, links)
    payload["parents"] = [p.resource_id for p in parents]
    payload["children"] = [c.resource_id for c in children]
    if as_json:
        emit_json(payload)
        return
    record: dict[str, Any] = {
        "name": found.name,
        "id": found.resource_id,
        "type": found.resource_type_name,
        "classification": found.classification,
        "location": found.location,
        "description": found.description,
        "projects": _project_labels(links),
    }
    record.update({f"{key}": value for key, value in sorted(found.properties.items())})
    record.update(
        {
            "sandbox strategy": found.sandbox_strategy,
            "content hash": found.content_hash,
            "parents": [p.label for p in parents],
            "children": len(children),
            "created": found.created_at.isoformat(timespec="seconds"),
            "updated": found.updated_at.isoformat(timespec="seconds"),
        }
    )
    emit_record(record)


@resource.command("remove")
@click.argument("name_or_id")
@click.option("--yes", "-y", is_flag=True, help="Do not ask for confirmation.")
@pass_app
def remove(app: App, name_or_id: str, yes: bool) -> None:
    """Remove a resource and its project links (the files on disk are untouched)."""
    from cleveragents.cli.deletion import AuditedDeletion, confirm_and_delete
    from cleveragents.storage.repositories import ResourceRepository

    with app.database.session(write=False) as session:
        target = ResourceRepository(session).get(name_or_id)

    def remove_resource(session: Any) -> AuditedDeletion[list[Any]]:
        repository = ResourceRepository(session)
        links = repository.projects_of(target.resource_id)
        removed = repository.remove(target.resource_id)
        rows: list[tuple[dict[str, Any], dict[str, Any]]] = [
            (
                {
                    "entity": "resource",
                    "resource_id": item.resource_id,
                    "name": item.name,
                    "location": item.location,
                    "projects": [link.project_name for link in links] if item is removed[0] else [],
                },
                {},
            )
            for item in removed
        ]
        return removed, rows

    removed = confirm_and_delete(
        app,
        prompt=f"Remove resource {target.label} ({target.location or target.resource_type_name})?",
        yes=yes,
        delete=remove_resource,
    )

    extra = f" and {len(removed) - 1} contained resource(s)" if len(removed) > 1 else ""
    success(f"Removed resource {target.label}{extra}")
    for item in removed:
        notify_plugins(app, "cleveragents_resource_removed", "resource removed", resource=item)
