"""The files of a vector index and how they are written without ever being half-written.

An index folder holds one *generation* of data files and the manifest that
names them::

    manifest.json              format, embedder, dimension, count, the files below
    index-<gen>-<tag>.faiss    the FAISS index (vectors and, for HNSW, the graph)
    entries-<gen>-<tag>.jsonl  one line per live vector: id, UKO URI, resource, content, metadata

A commit writes the new data files under temporary names, fsyncs them, renames
them into place, and only then replaces ``manifest.json`` (write to a temporary
file, fsync, ``os.replace``). The manifest is the commit point: a crash before
it leaves the previous manifest pointing at the previous, untouched files; a
crash after it leaves the new generation complete. Files no manifest names
are removed by the next successful commit.

The manifest records each data file's size and SHA-256, so truncation and bit
rot are detected when the index is opened, before FAISS reads a byte.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import secrets
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = [
    "FORMAT_NAME",
    "FORMAT_VERSION",
    "MANIFEST_NAME",
    "CorruptIndexError",
    "Entry",
    "FileRecord",
    "Manifest",
    "atomic_write_text",
    "commit_lock",
    "fsync_directory",
    "generation_names",
    "quarantine",
    "read_entries",
    "read_manifest",
    "record_file",
    "remove_stale_files",
    "verify_file",
    "write_entries",
]

FORMAT_NAME = "cleveragents-faiss"
FORMAT_VERSION = 1
MANIFEST_NAME = "manifest.json"
_DATA_PATTERNS = ("index-*.faiss", "entries-*.jsonl", "*.tmp")
_CHUNK = 1 << 20


class CorruptIndexError(Exception):
    """An index file is missing, truncated, altered or unreadable."""


@dataclass(slots=True)
class Entry:
    """One live vector's record in the entries file."""

    uri: str
    resource_id: str
    content: str
    metadata: dict[str, str]


@dataclass(frozen=True)
class FileRecord:
    """A data file as the manifest names it."""

    name: str
    size: int
    sha256: str

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "size": self.size, "sha256": self.sha256}

    @classmethod
    def from_dict(cls, data: Any) -> FileRecord:
        if not isinstance(data, dict):
            raise CorruptIndexError("manifest file record is not an object")
        try:
            return cls(str(data["name"]), int(data["size"]), str(data["sha256"]))
        except (KeyError, TypeError, ValueError) as exc:
            raise CorruptIndexError(f"manifest file record is malformed: {exc}") from exc


@dataclass(frozen=True)
class Manifest:
    """What ``manifest.json`` says about the committed generation."""

    embedder: str | None
    dimension: int
    count: int
    index_type: str
    generation: int
    next_id: int
    index_file: FileRecord
    entries_file: FileRecord
    tombstones: int = 0

    def to_dict(self) -> dict[str, Any]:
        return {
            "format": FORMAT_NAME,
            "format_version": FORMAT_VERSION,
            "embedder": self.embedder,
            "dimension": self.dimension,
            "count": self.count,
            "index_type": self.index_type,
            "generation": self.generation,
            "next_id": self.next_id,
            "tombstones": self.tombstones,
            "files": {"index": self.index_file.to_dict(), "entries": self.entries_file.to_dict()},
        }


def read_manifest(location: Path) -> Manifest | None:
    """The committed manifest, None when the folder holds no index yet.

    Raises :class:`CorruptIndexError` for an unreadable or inconsistent manifest
    and :class:`ValueError` for a manifest of a newer format version.
    """
    path = location / MANIFEST_NAME
    try:
        raw = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise CorruptIndexError(f"cannot read {path.name}: {exc}") from exc
    try:
        data = json.loads(raw)
    except json.JSONDecodeError as exc:
        raise CorruptIndexError(f"{path.name} is not valid JSON: {exc}") from exc
    if not isinstance(data, dict) or data.get("format") != FORMAT_NAME:
        raise CorruptIndexError(f"{path.name} is not a {FORMAT_NAME} manifest")
    version = data.get("format_version")
    if not isinstance(version, int):
        raise CorruptIndexError(f"{path.name} has no format version")
    if version > FORMAT_VERSION:
        raise ValueError(
            f"the vector index at {location} has format version {version}; this "
            f"cleveragents-backend-faiss reads up to version {FORMAT_VERSION}: upgrade it"
        )
    try:
        files = data["files"]
        embedder = data.get("embedder")
        manifest = Manifest(
            embedder=None if embedder is None else str(embedder),
            dimension=int(data["dimension"]),
            count=int(data["count"]),
            index_type=str(data["index_type"]),
            generation=int(data["generation"]),
            next_id=int(data["next_id"]),
            index_file=FileRecord.from_dict(files["index"]),
            entries_file=FileRecord.from_dict(files["entries"]),
            tombstones=int(data.get("tombstones", 0)),
        )
    except (KeyError, TypeError, ValueError) as exc:
        raise CorruptIndexError(f"{path.name} is malformed: {exc}") from exc
    if manifest.dimension < 1 or manifest.count < 0:
        raise CorruptIndexError(f"{path.name} has an impossible dimension or count")
    return manifest


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        while block := handle.read(_CHUNK):
            digest.update(block)
    return digest.hexdigest()


def verify_file(location: Path, record: FileRecord, *, checksum: bool = True) -> Path:
    """The path of a manifest-named file after checking its size (and checksum)."""
    path = location / record.name
    if Path(record.name).name != record.name:
        raise CorruptIndexError(f"manifest names a file outside the index: {record.name!r}")
    try:
        size = path.stat().st_size
    except FileNotFoundError as exc:
        raise CorruptIndexError(f"{record.name} is missing") from exc
    if size != record.size:
        raise CorruptIndexError(
            f"{record.name} has {size} bytes, the manifest recorded {record.size} (truncated?)"
        )
    if checksum and sha256_of(path) != record.sha256:
        raise CorruptIndexError(f"{record.name} does not match its checksum")
    return path


def generation_names(generation: int) -> tuple[str, str]:
    """Fresh names for a generation's index and entries files."""
    tag = secrets.token_hex(4)
    return f"index-{generation}-{tag}.faiss", f"entries-{generation}-{tag}.jsonl"


def fsync_file(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def fsync_directory(location: Path) -> None:
    """Make renames inside ``location`` durable (a no-op where unsupported)."""
    if os.name != "posix":
        return
    fd = os.open(location, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def record_file(path: Path) -> FileRecord:
    """Fsync a finished data file and describe it for the manifest."""
    fsync_file(path)
    return FileRecord(path.name, path.stat().st_size, sha256_of(path))


def atomic_write_text(path: Path, text: str) -> None:
    """Replace ``path`` with ``text`` so that readers see the old or the new file, whole."""
    tmp = path.with_name(f"{path.name}.{secrets.token_hex(4)}.tmp")
    try:
        with tmp.open("w", encoding="utf-8") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    fsync_directory(path.parent)


def remove_stale_files(location: Path, keep: set[str]) -> None:
    """Delete data and temporary files that the current manifest does not name."""
    for pattern in _DATA_PATTERNS:
        for path in location.glob(pattern):
            if path.name not in keep:
                path.unlink(missing_ok=True)


def quarantine(location: Path, names: list[str]) -> list[Path]:
    """Move the named files aside as ``<name>.corrupt`` (replacing older ones)."""
    moved = []
    for name in names:
        path = location / name
        if path.exists():
            target = path.with_name(path.name + ".corrupt")
            os.replace(path, target)
            moved.append(target)
    return moved


@contextlib.contextmanager
def commit_lock(location: Path) -> Iterator[None]:
    """Serialise commits of several processes on one folder (advisory, POSIX only)."""
    try:
        import fcntl
    except ImportError:  # pragma: no cover - Windows
        yield
        return
    with (location / ".lock").open("a+") as handle:
        fcntl.flock(handle.fileno(), fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle.fileno(), fcntl.LOCK_UN)


def read_entries(path: Path) -> dict[int, Entry]:
    """The entries file as id -> Entry; a malformed line is CorruptIndexError."""
    entries: dict[int, Entry] = {}
    with path.open(encoding="utf-8") as handle:
        for number, line in enumerate(handle, 1):
            try:
                row = json.loads(line)
                entry = Entry(
                    str(row["uri"]),
                    str(row["resource"]),
                    str(row["content"]),
                    {str(k): str(v) for k, v in row["metadata"].items()},
                )
                entries[int(row["id"])] = entry
            except (json.JSONDecodeError, KeyError, TypeError, AttributeError) as exc:
                raise CorruptIndexError(f"{path.name} line {number} is malformed: {exc}") from exc
    return entries


def write_entries(path: Path, entries: dict[int, Entry]) -> None:
    """Write the entries file: one JSON object per line, by ascending id."""
    with path.open("w", encoding="utf-8") as handle:
        for vector_id in sorted(entries):
            entry = entries[vector_id]
            row = {
                "id": vector_id,
                "uri": entry.uri,
                "resource": entry.resource_id,
                "content": entry.content,
                "metadata": entry.metadata,
            }
            handle.write(json.dumps(row, ensure_ascii=False) + "\n")
