"""Index records (spec 001: FileRecord, IndexMetadata, RepoIndex) and run statistics."""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from datetime import datetime
from typing import Any, overload

__all__ = ["FileRecord", "FileRecords", "IndexMetadata", "IndexRun", "RepoIndex"]


@dataclass(frozen=True)
class FileRecord:
    """Per-file metadata stored during indexing."""

    path: str
    content_hash: str
    token_count: int
    size_bytes: int
    language: str
    last_modified: str
    analyzer: str | None = None
    node_count: int = 0
    errors: tuple[str, ...] = ()

    @classmethod
    def from_row(cls, row: Mapping[str, Any]) -> FileRecord:
        """The record of an ``indexed_files`` row."""
        return cls(
            path=row["path"],
            content_hash=row["content_hash"],
            token_count=row["token_count"],
            size_bytes=row["size_bytes"],
            language=row["language"],
            last_modified=row["last_modified"],
            analyzer=row["analyzer"],
            node_count=row["node_count"],
            errors=tuple((row["errors"] or "").splitlines()),
        )


class FileRecords(Sequence[FileRecord]):
    """The files of an index by path, made from their ``indexed_files`` rows when first
    read: a run hands back every file's record (12k on the benchmark corpus, 25 ms to
    make), which a command printing the run's summary never reads. Equal to any
    sequence of the same records; pickled as a tuple."""

    def __init__(self, rows: Sequence[Mapping[str, Any]]) -> None:
        self._rows = rows
        self._records: tuple[FileRecord, ...] | None = None

    def _all(self) -> tuple[FileRecord, ...]:
        if self._records is None:
            made = sorted((FileRecord.from_row(row) for row in self._rows), key=_by_path)
            self._records, self._rows = tuple(made), ()
        return self._records

    def __len__(self) -> int:
        return len(self._records) if self._records is not None else len(self._rows)

    @overload
    def __getitem__(self, index: int) -> FileRecord: ...

    @overload
    def __getitem__(self, index: slice) -> tuple[FileRecord, ...]: ...

    def __getitem__(self, index: int | slice) -> FileRecord | tuple[FileRecord, ...]:
        return self._all()[index]

    def __iter__(self) -> Iterator[FileRecord]:
        return iter(self._all())

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Sequence) or isinstance(other, str):
            return NotImplemented
        return self._all() == tuple(other)

    def __hash__(self) -> int:
        return hash(self._all())

    def __reduce__(self) -> tuple[Any, ...]:
        return (tuple, (self._all(),))

    def __repr__(self) -> str:
        return f"FileRecords({len(self)} files)"


def _by_path(record: FileRecord) -> str:
    return record.path


@dataclass(frozen=True)
class IndexMetadata:
    """Summary record of one resource's index in one project."""

    index_id: str
    resource_id: str
    project_name: str
    root_path: str
    indexed_at: datetime
    file_count: int
    node_count: int
    error_count: int
    token_estimate: int
    primary_language: str
    status: str  # pending | indexing | ready | stale | error
    error_message: str | None = None
    #: The analyzers (``name@version``) of the last completed run.
    analyzers: str | None = None

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["indexed_at"] = self.indexed_at.isoformat()
        return data


@dataclass
class IndexRun:
    """What one index or refresh run did (printed by the CLI, sent with events)."""

    files_seen: int = 0
    files_analyzed: int = 0
    files_unchanged: int = 0
    files_removed: int = 0
    files_skipped: int = 0
    #: Of ``files_analyzed``, unchanged files analysed again because what they name
    #: changed: a definition they use was removed, renamed or moved, one they name
    #: unresolved was added, or their package's ``__init__.py`` came or went; or every
    #: other file, when nearly all changed (reading them costs less than the search).
    files_dependent: int = 0
    #: Skipped files per reason (``binary``, ``total-size-limit`` …).
    skipped_reasons: dict[str, int] = field(default_factory=dict)
    #: Every file or folder left out, as ``(relative path, reason)``: folders (``.git/``,
    #: what ``.gitignore`` ignores) are one entry each, not one per file inside.
    skipped: list[tuple[str, str]] = field(default_factory=list)
    nodes_added: int = 0
    nodes_revised: int = 0
    nodes_retired: int = 0
    nodes_unchanged: int = 0
    errors: list[tuple[str, str]] = field(default_factory=list)
    #: How many paths a watcher named when the run looked at those alone, not walking the
    #: tree (``files_skipped`` and ``skipped`` then count those of them left out only);
    #: None when it walked.
    paths_looked_at: int | None = None
    #: Which files were analysed again without ``force``, and why (the analyzers changed):
    #: every file when an analyzer was added or removed, else those of the changed ones.
    reanalysis: str | None = None
    #: Stores brought up to the node store: off in earlier runs, or (the text index) skewed.
    rebuilt: list[str] = field(default_factory=list)
    seconds: float = 0.0
    #: Seconds per phase (open, discover, analyse, resolve, graph, nodes, text, vectors,
    #: graph-wait, commit, close, record, finish; graph-rebuild and vector-rebuild when a store
    #: turned back on is built from the node store; text-compact when the text index is
    #: written anew); changed files reach the text index during ``analyse`` (unless most
    #: files changed: then in text-compact), so ``text`` only counts removed files.
    phases: dict[str, float] = field(default_factory=dict)

    def timed(self, phase: str, seconds: float) -> None:
        self.phases[phase] = round(self.phases.get(phase, 0.0) + seconds, 3)

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["errors"] = [{"path": p, "error": e} for p, e in self.errors]
        data["skipped"] = [{"path": p, "reason": r} for p, r in self.skipped]
        return data


@dataclass(frozen=True)
class RepoIndex:
    """Returned by index and refresh operations: the metadata, the files and the run."""

    metadata: IndexMetadata
    #: By path (a :class:`FileRecords` from a run: made when first read).
    files: Sequence[FileRecord] = ()
    run: IndexRun | None = None
