"""``cleveragents project``: named sets of resources that context and plans are scoped to."""

from __future__ import annotations

from typing import Any

import click

from cleveragents.cli.context import App, pass_app
from cleveragents.cli.output import emit_json, emit_record, emit_table, success

__all__ = ["project"]


@click.group("project")
def project() -> None:
    """Create, list, inspect and delete projects, and link resources into them."""


@project.command("create")
@click.argument("name")
@click.option("--description", "-d", default=None, help="A short description.")
@click.option("--json", "as_json", is_flag=True, help="Print the new project as JSON.")
@pass_app
def create(app: App, name: str, description: str | None, as_json: bool) -> None:
    """Create project NAME (plain like `myproj` or namespaced like `local/api-service`)."""
    from cleveragents.models.resources import check_name

    check_name("project", name)
    description = (description or "").strip() or None

    from cleveragents.storage.audit import add_audit_row
    from cleveragents.storage.repositories import ProjectRepository

    with app.database.session() as session:
        created = ProjectRepository(session).create(name, description=description)
        add_audit_row(
            session,
            "entity_created",
            {"entity": "project", "name": name, "description": description},
            project_name=name,
        )
    if as_json:
        emit_json({**created.model_dump(mode="json"), "resources": []})
    else:
        success(f"Created project {name}")


@project.command("list")
@click.option("--json", "as_json", is_flag=True, help="Print JSON instead of a table.")
@pass_app
def list_projects(app: App, as_json: bool) -> None:
    """List projects with how many resources each holds."""
    from cleveragents.storage.repositories import ProjectRepository

    with app.database.session(write=False) as session:
        repository = ProjectRepository(session)
        projects = repository.all()
        counts = repository.resource_counts()

    if as_json:
        emit_json(
            [
                {**p.model_dump(mode="json"), "resource_count": counts.get(p.name, 0)}
                for p in projects
            ]
        )
        return
    rows = [
        {
            "name": p.name,
            "resources": counts.get(p.name, 0),
            "created": p.created_at.isoformat(timespec="seconds"),
            "description": p.description,
        }
        for p in projects
    ]
    emit_table(
        rows,
        ["name", "resources", "created", "description"],
        empty="No projects. Create one with `cleveragents project create NAME`.",
    )


@project.command("show")
@click.argument("name")
@click.option("--json", "as_json", is_flag=True, help="Print JSON instead of key: value lines.")
@pass_app
def show(app: App, name: str, as_json: bool) -> None:
    """Show project NAME and the resources linked into it."""
    from cleveragents.storage.repositories import ProjectRepository, ResourceRepository

    with app.database.session(write=False) as session:
        found = ProjectRepository(session).get(name)
        resources = ResourceRepository(session)
        links = {link.resource_id: link for link in resources.links_of_project(name)}
        members = resources.all(project=name)

    if as_json:
        emit_json(
            {
                **found.model_dump(mode="json"),
                "resources": [
                    {
                        "resource_id": r.resource_id,
                        "name": r.name,
                        "resource_type_name": r.resource_type_name,
                        "location": r.location,
                        "read_only": links[r.resource_id].read_only,
                    }
                    for r in members
                ],
            }
        )
        return
    record: dict[str, Any] = {
        "name": found.name,
        "description": found.description,
        "created": found.created_at.isoformat(timespec="seconds"),
        "updated": found.updated_at.isoformat(timespec="seconds"),
        "resources": [
            f"{r.label} ({r.resource_type_name}"
            + (", read-only" if links[r.resource_id].read_only else "")
            + ")"
            for r in members
        ],
    }
    record.update(found.properties)
    emit_record(record)


@project.command("delete")
@click.argument("name")
@click.option("--yes", "-y", is_flag=True, help="Do not ask for confirmation.")
@pass_app
def delete(app: App, name: str, yes: bool) -> None:
    """Delete project NAME; its resources are unlinked, not removed."""
    from cleveragents.cli.deletion import AuditedDeletion, confirm_and_delete
    from cleveragents.storage.repositories import ProjectRepository, ResourceRepository

    with app.database.session(write=False) as session:
        ProjectRepository(session).get(name)
        linked = len(ResourceRepository(session).links_of_project(name))

    def delete_project(session: Any) -> AuditedDeletion[list[Any]]:
        unlinked = ProjectRepository(session).delete(name)
        details = {
            "entity": "project",
            "name": name,
            "unlinked_resources": [link.resource_id for link in unlinked],
        }
        return unlinked, [(details, {"project_name": name})]

    suffix = f" and unlink its {linked} resource(s)" if linked else ""
    unlinked = confirm_and_delete(
        app, prompt=f"Delete project {name}{suffix}?", yes=yes, delete=delete_project
    )
    success(f"Deleted project {name} (unlinked {len(unlinked)} resource(s))")


@project.command("link-resource")
@click.argument("project_name", metavar="PROJECT")
@click.argument("resource_ref", metavar="RESOURCE")
@click.option("--read-only", is_flag=True, help="Agents may read but not change it here.")
@pass_app
def link_resource(app: App, project_name: str, resource_ref: str, read_only: bool) -> None:
    """Link RESOURCE (name or ULID) into PROJECT."""
    from cleveragents.cli.resource_cmd import notify_plugins
    from cleveragents.storage.audit import add_audit_row
    from cleveragents.storage.repositories import ResourceRepository

    with app.database.session() as session:
        resources = ResourceRepository(session)
        link = resources.link_to_project(project_name, resource_ref, read_only=read_only)
        linked = resources.get(link.resource_id)
        add_audit_row(
            session,
            "resource_linked",
            {"entity": "resource", "resource_id": linked.resource_id, "read_only": read_only},
            project_name=project_name,
        )
    mode = " (read-only)" if read_only else ""
    success(f"Linked resource {linked.label} to project {project_name}{mode}")
    notify_plugins(
        app, "cleveragents_resource_added", "resource added", resource=linked, project=project_name
    )
