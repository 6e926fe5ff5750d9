"""UKOGraphPersistence (spec 002): snapshots of the UKO graph and the revision chain.

The graph backend is already durable (a pyoxigraph store on disk); a snapshot
is a portable copy of it, for backups, moving an index between machines or
restoring after a store was lost. Snapshots are N-Quads (named graphs, so the
per-resource layout and the history survive) written whole or not at all
(:func:`cleveragents.files.replace_file`).

The revision chain records one entry per indexing run, each linked to the one
before, in a small JSON Lines file beside the snapshot; ``revision_at(T)`` says
which run produced the graph that was current at T, and ``query_at_time(T)``
asks the backend for the triples valid at T.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from cleveragents import paths
from cleveragents.errors import ValidationError
from cleveragents.files import replace_file
from cleveragents.models.ids import new_ulid
from cleveragents.protocols.backends import GraphIndexBackend, GraphResult

__all__ = ["SNAPSHOT_NAME", "RevisionEntry", "SnapshotCapable", "UKOGraphPersistence"]

SNAPSHOT_NAME = "uko-graph.nq"
_HEADER = "# cleveragents uko snapshot v1"


@runtime_checkable
class SnapshotCapable(Protocol):
    """A graph backend that can write and read all its quads as N-Quads."""

    def export_nquads(self, output: Any) -> None: ...

    def import_nquads(self, path: Path, *, replace: bool = True) -> None: ...


@dataclass(frozen=True)
class RevisionEntry:
    """One indexing run in the revision chain."""

    revision_id: str
    previous_id: str | None
    project: str
    created_at: str
    triple_count: int
    summary: Mapping[str, str] = field(default_factory=dict)

    @property
    def created(self) -> datetime:
        return datetime.fromisoformat(self.created_at)


class UKOGraphPersistence:
    """Saves and restores one project's UKO graph and keeps its revision chain.

    :param graph_backend: the backend holding the live graph (a GraphIndexBackend;
        snapshots need :class:`SnapshotCapable`, temporal queries ``query_at_time``).
    :param project: namespaced project name, e.g. ``local/my-app``.
    :param persist_path: snapshot file; defaults to the project's graph index folder.
    """

    def __init__(
        self, graph_backend: Any, project: str, persist_path: Path | str | None = None
    ) -> None:
        if not isinstance(graph_backend, GraphIndexBackend):
            raise TypeError(
                f"graph_backend must satisfy GraphIndexBackend, got {type(graph_backend).__name__}"
            )
        if not isinstance(project, str) or not project.strip():
            raise ValueError("project must be a non-empty string")
        self.graph_backend = graph_backend
        self.project = project
        self.persist_path = (
            Path(persist_path).expanduser()
            if persist_path is not None
            else paths.index_dir("graph", project) / SNAPSHOT_NAME
        )
        self.chain_path = self.persist_path.with_name(self.persist_path.name + ".revisions.jsonl")

    # -- snapshots ------------------------------------------------------------------

    def _snapshot_backend(self) -> SnapshotCapable:
        if not isinstance(self.graph_backend, SnapshotCapable):
            raise ValidationError(
                f"{type(self.graph_backend).__name__} cannot export its triples "
                "(it needs export_nquads/import_nquads)"
            )
        return self.graph_backend

    def save(self) -> Path:
        """Write every triple of the backend to the snapshot file, atomically."""
        backend = self._snapshot_backend()
        created = datetime.now(UTC).isoformat()
        header = f"{_HEADER} project={json.dumps(self.project)} created={created}\n"

        def write(handle: Any) -> None:
            handle.write(header.encode("utf-8"))
            backend.export_nquads(handle)

        replace_file(self.persist_path, write)
        return self.persist_path

    def load(self) -> bool:
        """Replace the backend's triples with the snapshot; False when there is none."""
        if not self.persist_path.is_file():
            return False
        with self.persist_path.open("rb") as handle:
            first = handle.readline().decode("utf-8", "replace")
        if not first.startswith(_HEADER):
            raise ValidationError(f"{self.persist_path} is not a UKO graph snapshot")
        self._snapshot_backend().import_nquads(self.persist_path, replace=True)
        return True

    snapshot = save
    restore = load

    # -- revision chain ------------------------------------------------------------------

    def revisions(self) -> list[RevisionEntry]:
        """Every recorded indexing run, oldest first."""
        if not self.chain_path.is_file():
            return []
        entries = []
        for line in self.chain_path.read_text(encoding="utf-8").splitlines():
            if line.strip():
                data = json.loads(line)
                entries.append(RevisionEntry(**{**data, "summary": dict(data.get("summary", {}))}))
        return entries

    def latest_revision(self) -> RevisionEntry | None:
        entries = self.revisions()
        return entries[-1] if entries else None

    def record_revision(
        self,
        *,
        timestamp: datetime | None = None,
        summary: Mapping[str, Any] | None = None,
    ) -> RevisionEntry:
        """Append an entry for an indexing run, linked to the previous one."""
        entries = self.revisions()
        moment = _utc(timestamp or datetime.now(UTC))
        count_method = getattr(self.graph_backend, "count", None)
        entry = RevisionEntry(
            revision_id=new_ulid(),
            previous_id=entries[-1].revision_id if entries else None,
            project=self.project,
            created_at=moment.isoformat(),
            triple_count=int(count_method()) if callable(count_method) else 0,
            summary={str(k): str(v) for k, v in (summary or {}).items()},
        )
        lines = [json.dumps(_entry_dict(e)) for e in [*entries, entry]]
        payload = ("\n".join(lines) + "\n").encode("utf-8")
        replace_file(self.chain_path, payload)
        return entry

    def revision_at(self, timestamp: datetime) -> RevisionEntry | None:
        """The last indexing run at or before ``timestamp``."""
        moment = _utc(timestamp)
        found = None
        for entry in self.revisions():
            if entry.created <= moment:
                found = entry
        return found

    # -- temporal queries ----------------------------------------------------------------

    def query_at_time(
        self, timestamp: datetime, scope: frozenset[str] | None = None
    ) -> GraphResult:
        """Triples valid at ``timestamp`` (``validFrom <= T < validUntil``), from the backend."""
        query = getattr(self.graph_backend, "query_at_time", None)
        if not callable(query):
            raise ValidationError(
                f"{type(self.graph_backend).__name__} keeps no revisions (no query_at_time)"
            )
        return query(_utc(timestamp), scope)


def _utc(moment: datetime) -> datetime:
    return moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment.astimezone(UTC)


def _entry_dict(entry: RevisionEntry) -> dict[str, Any]:
    data = asdict(entry)
    data["summary"] = dict(entry.summary)
    return data
