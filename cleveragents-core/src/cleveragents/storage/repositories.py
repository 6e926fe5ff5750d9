"""Reading and writing projects and resources inside one session (one transaction).

Repositories take an open session from :meth:`Database.session
<cleveragents.storage.database.Database.session>` so a command can change
several entities and append its audit row atomically. They accept and return
the frozen domain models, never table rows, and raise the project's errors
(:class:`~cleveragents.errors.NotFoundError`,
:class:`~cleveragents.errors.AlreadyExistsError`, …).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from sqlalchemy import delete, func, or_
from sqlalchemy.exc import IntegrityError
from sqlmodel import Session, col, select

from cleveragents.errors import AlreadyExistsError, BusinessRuleViolation, NotFoundError
from cleveragents.models.ids import is_ulid, utcnow
from cleveragents.models.resources import (
    LinkType,
    Project,
    ProjectResource,
    Resource,
    ResourceLink,
    check_name,
)
from cleveragents.storage.tables import (
    ProjectResourceRow,
    ProjectRow,
    ResourceLinkRow,
    ResourceRow,
)

__all__ = ["ProjectRepository", "ResourceRepository"]


def _project(row: ProjectRow) -> Project:
    return Project(
        name=row.name,
        description=row.description,
        properties=dict(row.properties or {}),
        created_at=row.created_at,
        updated_at=row.updated_at,
    )


def _resource(row: ResourceRow) -> Resource:
    return Resource(
        resource_id=row.resource_id,
        name=row.name,
        resource_type_name=row.resource_type_name,
        classification=row.classification,  # type: ignore[arg-type]
        description=row.description,
        location=row.location,
        properties=dict(row.properties or {}),
        content_hash=row.content_hash,
        sandbox_strategy=row.sandbox_strategy,
        created_at=row.created_at,
        updated_at=row.updated_at,
    )


def _project_link(row: ProjectResourceRow) -> ProjectResource:
    return ProjectResource(
        project_name=row.project_name,
        resource_id=row.resource_id,
        read_only=bool(row.read_only),
        linked_at=row.linked_at,
    )


def _resource_link(row: ResourceLinkRow) -> ResourceLink:
    return ResourceLink(
        parent_id=row.parent_id,
        child_id=row.child_id,
        link_type=(row.link_type or "contains"),  # type: ignore[arg-type]
        created_at=row.created_at,
    )


class ProjectRepository:
    """Projects by name."""

    def __init__(self, session: Session) -> None:
        self.session = session

    def create(
        self,
        name: str,
        *,
        description: str | None = None,
        properties: Mapping[str, Any] | None = None,
    ) -> Project:
        """Store a new project; :class:`AlreadyExistsError` when the name is taken."""
        check_name("project", name)
        if self.session.get(ProjectRow, name) is not None:
            raise AlreadyExistsError(f"project '{name}' already exists", details={"name": name})
        project = Project(name=name, description=description, properties=dict(properties or {}))
        self.session.add(ProjectRow(**project.model_dump()))
        try:
            self.session.flush()
        except IntegrityError as exc:  # created concurrently by another process
            raise AlreadyExistsError(
                f"project '{name}' already exists", details={"name": name}
            ) from exc
        return project

    def find(self, name: str) -> Project | None:
        row = self.session.get(ProjectRow, name)
        return None if row is None else _project(row)

    def get(self, name: str) -> Project:
        """The project called ``name``; :class:`NotFoundError` when there is none."""
        project = self.find(name)
        if project is None:
            raise NotFoundError(f"project '{name}' not found", details={"name": name})
        return project

    def all(self) -> list[Project]:
        """Every project, by name."""
        rows = self.session.exec(select(ProjectRow).order_by(col(ProjectRow.name)))
        return [_project(row) for row in rows]

    def resource_counts(self) -> dict[str, int]:
        """``project name -> number of linked resources`` (projects without any are absent)."""
        statement = select(ProjectResourceRow.project_name, func.count()).group_by(
            col(ProjectResourceRow.project_name)
        )
        return {name: count for name, count in self.session.exec(statement)}

    def delete(self, name: str) -> list[ProjectResource]:
        """Delete the project and its resource links; return the links that were removed.

        The resources themselves stay: they may belong to other projects.
        """
        row = self.session.get(ProjectRow, name)
        if row is None:
            raise NotFoundError(f"project '{name}' not found", details={"name": name})
        links = ResourceRepository(self.session).links_of_project(name)
        self.session.execute(
            delete(ProjectResourceRow).where(col(ProjectResourceRow.project_name) == name)
        )
        self.session.delete(row)
        self.session.flush()
        return links


class ResourceRepository:
    """Resources, the resource DAG (``resource_links``) and project linkage."""

    def __init__(self, session: Session) -> None:
        self.session = session

    # -- resources --------------------------------------------------------------------

    def add(self, resource: Resource) -> Resource:
        """Store ``resource``; :class:`AlreadyExistsError` when its name is taken."""
        if resource.name is not None and self.find_by_name(resource.name) is not None:
            raise AlreadyExistsError(
                f"resource '{resource.name}' already exists", details={"name": resource.name}
            )
        self.session.add(ResourceRow(**resource.model_dump()))
        try:
            self.session.flush()
        except IntegrityError as exc:
            raise AlreadyExistsError(
                f"resource '{resource.label}' already exists", details={"name": resource.name}
            ) from exc
        return resource

    def find_by_name(self, name: str) -> Resource | None:
        row = self.session.exec(select(ResourceRow).where(col(ResourceRow.name) == name)).first()
        return None if row is None else _resource(row)

    def find_by_location(self, location: str) -> list[Resource]:
        """Resources registered at ``location`` (an absolute path)."""
        statement = (
            select(ResourceRow)
            .where(col(ResourceRow.location) == location)
            .order_by(col(ResourceRow.resource_id))
        )
        return [_resource(row) for row in self.session.exec(statement)]

    def find(self, name_or_id: str) -> Resource | None:
        """Look a resource up by ULID first, then by name."""
        if is_ulid(name_or_id):
            row = self.session.get(ResourceRow, name_or_id.upper())
            if row is not None:
                return _resource(row)
        return self.find_by_name(name_or_id)

    def get(self, name_or_id: str) -> Resource:
        """Like :meth:`find`, raising :class:`NotFoundError` when nothing matches."""
        resource = self.find(name_or_id)
        if resource is None:
            raise NotFoundError(f"resource '{name_or_id}' not found", details={"name": name_or_id})
        return resource

    def all(self, *, project: str | None = None) -> list[Resource]:
        """All resources, or those linked to ``project``; named ones first, by name."""
        statement = select(ResourceRow)
        if project is not None:
            statement = statement.join(
                ProjectResourceRow,
                col(ProjectResourceRow.resource_id) == col(ResourceRow.resource_id),
            ).where(col(ProjectResourceRow.project_name) == project)
        statement = statement.order_by(
            col(ResourceRow.name).is_(None), col(ResourceRow.name), col(ResourceRow.resource_id)
        )
        return [_resource(row) for row in self.session.exec(statement)]

    def update(self, resource: Resource) -> Resource:
        """Replace the stored fields of ``resource`` (matched by id); bumps ``updated_at``.

        Fails with :class:`BusinessRuleViolation` when the row changed since
        ``resource`` was read (optimistic concurrency on ``updated_at``).
        """
        row = self.session.get(ResourceRow, resource.resource_id)
        if row is None:
            raise NotFoundError(f"resource '{resource.label}' not found")
        if row.updated_at != resource.updated_at:
            raise BusinessRuleViolation(
                f"resource '{resource.label}' was changed by someone else; read it again"
            )
        updated = resource.model_copy(update={"updated_at": utcnow()})
        for key, value in updated.model_dump(exclude={"resource_id", "created_at"}).items():
            setattr(row, key, value)
        try:
            self.session.flush()
        except IntegrityError as exc:
            raise AlreadyExistsError(f"resource '{resource.name}' already exists") from exc
        return updated

    def remove(self, name_or_id: str) -> list[Resource]:
        """Delete a resource with its links; return what was removed, the resource first.

        Unnamed children it alone contains (discovered automatically under it)
        are removed with it; named children stay and lose only the link.
        """
        root = self.get(name_or_id)
        removed: list[Resource] = []
        pending = [root]
        while pending:
            resource = pending.pop()
            orphans = [
                child
                for child in self.children(resource.resource_id)
                if child.name is None and len(self.parents(child.resource_id)) == 1
            ]
            self._delete(resource.resource_id)
            removed.append(resource)
            pending.extend(orphans)
        self.session.flush()
        return removed

    def _delete(self, resource_id: str) -> None:
        self.session.execute(
            delete(ProjectResourceRow).where(col(ProjectResourceRow.resource_id) == resource_id)
        )
        self.session.execute(
            delete(ResourceLinkRow).where(
                or_(
                    col(ResourceLinkRow.parent_id) == resource_id,
                    col(ResourceLinkRow.child_id) == resource_id,
                )
            )
        )
        self.session.execute(delete(ResourceRow).where(col(ResourceRow.resource_id) == resource_id))

    # -- the resource DAG -------------------------------------------------------------

    def link(self, parent_id: str, child_id: str, link_type: LinkType = "contains") -> ResourceLink:
        """Add the edge ``parent -> child``; refuses edges that would close a cycle."""
        parent, child = self.get(parent_id), self.get(child_id)
        if parent.resource_id == child.resource_id or parent.resource_id in {
            r.resource_id for r in self.descendants(child.resource_id)
        }:
            raise BusinessRuleViolation(
                f"linking '{parent.label}' -> '{child.label}' would create a cycle"
            )
        key = (parent.resource_id, child.resource_id)
        if self.session.get(ResourceLinkRow, key) is not None:
            raise AlreadyExistsError(f"'{parent.label}' is already linked to '{child.label}'")
        link = ResourceLink(
            parent_id=parent.resource_id, child_id=child.resource_id, link_type=link_type
        )
        self.session.add(ResourceLinkRow(**link.model_dump()))
        self.session.flush()
        return link

    def unlink(self, parent_id: str, child_id: str) -> None:
        row = self.session.get(ResourceLinkRow, (parent_id, child_id))
        if row is None:
            raise NotFoundError(f"no link from '{parent_id}' to '{child_id}'")
        self.session.delete(row)
        self.session.flush()

    def links_from(self, resource_id: str) -> list[ResourceLink]:
        statement = select(ResourceLinkRow).where(col(ResourceLinkRow.parent_id) == resource_id)
        return [_resource_link(row) for row in self.session.exec(statement)]

    def children(self, resource_id: str) -> list[Resource]:
        statement = (
            select(ResourceRow)
            .join(ResourceLinkRow, col(ResourceLinkRow.child_id) == col(ResourceRow.resource_id))
            .where(col(ResourceLinkRow.parent_id) == resource_id)
            .order_by(col(ResourceRow.resource_id))
        )
        return [_resource(row) for row in self.session.exec(statement)]

    def parents(self, resource_id: str) -> list[Resource]:
        statement = (
            select(ResourceRow)
            .join(ResourceLinkRow, col(ResourceLinkRow.parent_id) == col(ResourceRow.resource_id))
            .where(col(ResourceLinkRow.child_id) == resource_id)
            .order_by(col(ResourceRow.resource_id))
        )
        return [_resource(row) for row in self.session.exec(statement)]

    def descendants(self, resource_id: str) -> list[Resource]:
        """Every resource reachable from ``resource_id`` (breadth first, each once)."""
        seen: dict[str, Resource] = {}
        frontier = [resource_id]
        while frontier:
            statement = (
                select(ResourceRow)
                .join(
                    ResourceLinkRow, col(ResourceLinkRow.child_id) == col(ResourceRow.resource_id)
                )
                .where(col(ResourceLinkRow.parent_id).in_(frontier))
            )
            found = [_resource(row) for row in self.session.exec(statement)]
            frontier = [r.resource_id for r in found if r.resource_id not in seen]
            seen.update((r.resource_id, r) for r in found)
        return list(seen.values())

    # -- project linkage --------------------------------------------------------------

    def link_to_project(
        self, project_name: str, name_or_id: str, *, read_only: bool = False
    ) -> ProjectResource:
        """Link a resource into a project; both must exist and not be linked yet."""
        ProjectRepository(self.session).get(project_name)
        resource = self.get(name_or_id)
        key = (project_name, resource.resource_id)
        if self.session.get(ProjectResourceRow, key) is not None:
            raise AlreadyExistsError(
                f"resource '{resource.label}' is already linked to project '{project_name}'"
            )
        link = ProjectResource(
            project_name=project_name, resource_id=resource.resource_id, read_only=read_only
        )
        self.session.add(ProjectResourceRow(**link.model_dump()))
        self.session.flush()
        return link

    def unlink_from_project(self, project_name: str, name_or_id: str) -> None:
        resource = self.get(name_or_id)
        row = self.session.get(ProjectResourceRow, (project_name, resource.resource_id))
        if row is None:
            raise NotFoundError(
                f"resource '{resource.label}' is not linked to project '{project_name}'"
            )
        self.session.delete(row)
        self.session.flush()

    def links_of_project(self, project_name: str) -> list[ProjectResource]:
        statement = (
            select(ProjectResourceRow)
            .where(col(ProjectResourceRow.project_name) == project_name)
            .order_by(col(ProjectResourceRow.resource_id))
        )
        return [_project_link(row) for row in self.session.exec(statement)]

    def projects_of(self, resource_id: str) -> list[ProjectResource]:
        """The projects ``resource_id`` is linked into, by project name."""
        return self.project_links([resource_id]).get(resource_id, [])

    def project_links(self, resource_ids: Iterable[str]) -> dict[str, list[ProjectResource]]:
        """``resource id -> its project links`` for many resources in one query."""
        ids = list(resource_ids)
        if not ids:
            return {}
        statement = (
            select(ProjectResourceRow)
            .where(col(ProjectResourceRow.resource_id).in_(ids))
            .order_by(col(ProjectResourceRow.project_name))
        )
        result: dict[str, list[ProjectResource]] = {}
        for row in self.session.exec(statement):
            result.setdefault(row.resource_id, []).append(_project_link(row))
        return result
