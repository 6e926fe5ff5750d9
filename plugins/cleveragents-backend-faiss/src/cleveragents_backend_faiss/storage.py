"""The files of a vector index and how they are written without ever being half-written.

An index folder holds one *generation* of data files and the manifest that
names them. The data is log-structured: a large *base* written whole by a
compaction, and a small *delta* of what changed since, rewritten by every
other commit::

    manifest.json              format, embedder, dimension, count, the files below
    index-<gen>-<tag>.faiss    base: the FAISS index (vectors and, for HNSW, the graph)
    entries-<gen>-<tag>.jsonl  base: one line per vector: id, UKO URI, resource, content, metadata
    keys-<gen>-<tag>.bin       base: ids, URIs (and their order), resources and line offsets
                               of the entries file
    delta-<gen>-<tag>.npy      delta: the vectors added since the base (float32 rows)
    delta-<gen>-<tag>.jsonl    delta: ids of base vectors removed since, then one line per row,
                               then base entries given new metadata (a moved node's lines)

Opening reads only the manifest, the keys file and the delta; the base index
and the entries' content are read when a search or a compaction needs them. A URI
is looked up in the keys file's URI order, not in a map of them all; a keys file
written before that order had its place is written again by the next commit.
An index written before deltas existed (no keys, no delta) is a base with an
empty delta, and is read as such. A manifest without a delta keeps format
version 1, so readers that predate deltas still open it, and one whose delta
updates no base entry version 2, so readers that predate updates do.

A commit writes the new data files under temporary names, fsyncs them, renames
them into place, and only then replaces ``manifest.json`` (write to a temporary
file, fsync, ``os.replace``). The manifest is the commit point: a crash before
it leaves the previous manifest pointing at the previous, untouched files; a
crash after it leaves the new generation complete. Files no manifest names
are removed by the next successful commit.

The manifest records each data file's size and SHA-256, so truncation and bit
rot are detected when the index is opened, before FAISS reads a byte. A file whose
checksum matched is noted in ``verified.json`` with its size, time stamp and inode,
so the next process that opens the index does not hash hundreds of megabytes
again; a file still changing when it was checked (modified in the last seconds) is
not noted, since a write within the file system's time stamp granularity would
leave its stamp unchanged.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import mmap
import os
import secrets
import time
from collections.abc import Iterable, Iterator, Mapping, MutableMapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cleveragents.files import replace_file

__all__ = [
    "BASE_FORMAT_VERSION",
    "DELTA_FORMAT_VERSION",
    "FORMAT_NAME",
    "FORMAT_VERSION",
    "MANIFEST_NAME",
    "VERIFIED_NAME",
    "CorruptIndexError",
    "Entry",
    "EntryTable",
    "FileRecord",
    "Manifest",
    "UriColumn",
    "atomic_write_text",
    "commit_lock",
    "delta_names",
    "generation_names",
    "parse_entry",
    "quarantine",
    "read_delta_entries",
    "read_entries",
    "read_keys",
    "read_manifest",
    "record_file",
    "remove_stale_files",
    "verify_file",
    "write_delta_entries",
    "write_entries",
    "write_keys",
]

FORMAT_NAME = "cleveragents-faiss"
FORMAT_VERSION = 3
#: The version written when there is no delta: what readers without deltas understand.
BASE_FORMAT_VERSION = 1
#: The version written for a delta that changes no base entry in place: what readers
#: without entry updates understand.
DELTA_FORMAT_VERSION = 2
MANIFEST_NAME = "manifest.json"
_DATA_PATTERNS = (
    "index-*.faiss",
    "entries-*.jsonl",
    "keys-*.bin",
    "delta-*.npy",
    "delta-*.jsonl",
    "*.tmp",
)
_CHUNK = 1 << 20
#: Files whose checksum matched: ``{name: [size, mtime_ns, inode, sha256]}``.
VERIFIED_NAME = "verified.json"
#: How long a file must have been left alone before its checksum is taken as lasting.
_SETTLED_NS = 2_000_000_000


class CorruptIndexError(Exception):
    """An index file is missing, truncated, altered or unreadable."""


@dataclass(slots=True)
class Entry:
    """One live vector's record in the entries file."""

    uri: str
    resource_id: str
    #: None until read: an entry opened from the keys file has only its offset.
    content: str | None
    metadata: dict[str, str] | None
    #: Byte offset of the entry's line in the base entries file (-1: not in the base).
    offset: int = -1


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
    #: The base's keys file (absent in indexes written before deltas).
    keys_file: FileRecord | None = None
    #: Entries in the base entries file (None: ``count``, there being no delta).
    base_count: int | None = None
    #: The delta's vectors and entries (None: no delta).
    delta_vectors: FileRecord | None = None
    delta_entries: FileRecord | None = None
    #: Ids from here on belong to the delta.
    delta_start: int | None = None
    #: Base entries the delta gives new metadata (their vectors unchanged).
    updated: int = 0
    #: Written while the index was known to be incomplete (set aside as corrupt).
    needs_rebuild: bool = False

    @property
    def has_delta(self) -> bool:
        return self.delta_vectors is not None and self.delta_entries is not None

    def file_names(self) -> list[str]:
        records = (
            self.index_file,
            self.entries_file,
            self.keys_file,
            self.delta_vectors,
            self.delta_entries,
        )
        return [r.name for r in records if r is not None]

    def to_dict(self) -> dict[str, Any]:
        files = {"index": self.index_file.to_dict(), "entries": self.entries_file.to_dict()}
        if self.keys_file is not None:
            files["keys"] = self.keys_file.to_dict()
        extra: dict[str, Any] = {}
        if self.has_delta:
            files["delta_vectors"] = self.delta_vectors.to_dict()  # type: ignore[union-attr]
            files["delta_entries"] = self.delta_entries.to_dict()  # type: ignore[union-attr]
            extra = {"base_count": self.base_count, "delta_start": self.delta_start}
            if self.updated:
                extra["updated"] = self.updated
        if self.needs_rebuild:
            extra["needs_rebuild"] = True
        return {
            "format": FORMAT_NAME,
            "format_version": (
                FORMAT_VERSION
                if self.has_delta and self.updated
                else DELTA_FORMAT_VERSION
                if self.has_delta
                else BASE_FORMAT_VERSION
            ),
            "embedder": self.embedder,
            "dimension": self.dimension,
            "count": self.count,
            "index_type": self.index_type,
            "generation": self.generation,
            "next_id": self.next_id,
            "tombstones": self.tombstones,
            **extra,
            "files": files,
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

        def optional(key: str) -> FileRecord | None:
            return FileRecord.from_dict(files[key]) if key in files else None

        def optional_int(key: str) -> int | None:
            return None if data.get(key) is None else int(data[key])

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
            keys_file=optional("keys"),
            base_count=optional_int("base_count"),
            delta_vectors=optional("delta_vectors"),
            delta_entries=optional("delta_entries"),
            delta_start=optional_int("delta_start"),
            updated=int(data.get("updated", 0)),
            needs_rebuild=bool(data.get("needs_rebuild", False)),
        )
    except (KeyError, TypeError, ValueError) as exc:
        raise CorruptIndexError(f"{path.name} is malformed: {exc}") from exc
    if manifest.dimension < 1 or manifest.count < 0:
        raise CorruptIndexError(f"{path.name} has an impossible dimension or count")
    if (manifest.delta_vectors is None) != (manifest.delta_entries is None) or (
        manifest.has_delta and (manifest.base_count is None or manifest.delta_start is None)
    ):
        raise CorruptIndexError(f"{path.name} names an incomplete delta")
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
        info = path.stat()
    except FileNotFoundError as exc:
        raise CorruptIndexError(f"{record.name} is missing") from exc
    size = info.st_size
    if size != record.size:
        raise CorruptIndexError(
            f"{record.name} has {size} bytes, the manifest recorded {record.size} (truncated?)"
        )
    if checksum and not _verified_before(location, record, info):
        if sha256_of(path) != record.sha256:
            raise CorruptIndexError(f"{record.name} does not match its checksum")
        _remember_verified(location, record, info)
    return path


def _stamp(record: FileRecord, info: os.stat_result) -> list[Any]:
    return [info.st_size, info.st_mtime_ns, info.st_ino, record.sha256]


def _read_verified(location: Path) -> dict[str, Any]:
    try:
        found = json.loads((location / VERIFIED_NAME).read_text())
    except (OSError, ValueError):
        return {}
    return found if isinstance(found, dict) else {}


def _verified_before(location: Path, record: FileRecord, info: os.stat_result) -> bool:
    """True when this very file (size, time stamp, inode) matched this checksum before."""
    return _read_verified(location).get(record.name) == _stamp(record, info)


def _remember_verified(location: Path, record: FileRecord, info: os.stat_result) -> None:
    """Note a file whose checksum matched, unless it was modified too recently to tell a
    later write from this one by its time stamp. Best effort: a read-only folder, or
    another process writing the note at the same time, only means hashing again."""
    if time.time_ns() - info.st_mtime_ns < _SETTLED_NS:
        return
    verified = _read_verified(location)
    present = {p.name for pattern in _DATA_PATTERNS for p in location.glob(pattern)}
    verified = {name: stamp for name, stamp in verified.items() if name in present}
    verified[record.name] = _stamp(record, info)
    with contextlib.suppress(OSError):
        replace_file(location / VERIFIED_NAME, json.dumps(verified), mode=0o644, durable=False)


def generation_names(generation: int) -> tuple[str, str, str]:
    """Fresh names for a generation's base files: index, entries and keys."""
    tag = secrets.token_hex(4)
    return (
        f"index-{generation}-{tag}.faiss",
        f"entries-{generation}-{tag}.jsonl",
        f"keys-{generation}-{tag}.bin",
    )


def delta_names(generation: int) -> tuple[str, str]:
    """Fresh names for a generation's delta files: vectors and entries."""
    tag = secrets.token_hex(4)
    return f"delta-{generation}-{tag}.npy", f"delta-{generation}-{tag}.jsonl"


def fsync_file(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
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
    replace_file(path, text, mode=0o644, durable=True)


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


def parse_entry(line: bytes | str, where: str) -> tuple[int, Entry]:
    """One entries line as (id, Entry); a malformed line is CorruptIndexError."""
    try:
        row = json.loads(line)
        entry = Entry(
            str(row["uri"]),
            str(row["resource"]),
            str(row["content"]),
            {str(k): str(v) for k, v in row["metadata"].items()},
        )
        return int(row["id"]), entry
    except (json.JSONDecodeError, UnicodeDecodeError, KeyError, TypeError, AttributeError) as exc:
        raise CorruptIndexError(f"{where} is malformed: {exc}") from exc


def read_entries(path: Path) -> dict[int, Entry]:
    """The entries file as id -> Entry (with each line's offset); malformed: CorruptIndexError."""
    entries: dict[int, Entry] = {}
    offset = 0
    with path.open("rb") as handle:
        for number, line in enumerate(handle, 1):
            vector_id, entry = parse_entry(line, f"{path.name} line {number}")
            entry.offset = offset
            entries[vector_id] = entry
            offset += len(line)
    return entries


#: One encoder for every entry: ``json.dumps`` with an option builds a new one per call.
_UNESCAPED = json.JSONEncoder(ensure_ascii=False).encode


def _entry_line(vector_id: int, entry: Entry) -> bytes:
    row = {
        "id": vector_id,
        "uri": entry.uri,
        "resource": entry.resource_id,
        "content": entry.content,
        "metadata": entry.metadata,
    }
    return (_UNESCAPED(row) + "\n").encode("utf-8")


def write_entries(path: Path, entries: Mapping[int, Entry]) -> dict[int, int]:
    """Write the entries file, one JSON object per line by ascending id; returns id -> offset."""
    offsets: dict[int, int] = {}
    position = 0
    with path.open("wb") as handle:
        for vector_id in sorted(entries):
            line = _entry_line(vector_id, entries[vector_id])
            handle.write(line)
            offsets[vector_id] = position
            position += len(line)
    return offsets


def write_keys(path: Path, entries: Mapping[int, Entry], offsets: Mapping[int, int]) -> None:
    """Write the keys file: what opening needs of the entries file, without the content.

    A JSON header line (count, resources), then the ids, owners (index into the
    resources) and line offsets as little-endian int64 columns, then, when the URIs are
    written one per line, where each line ends and the rows in URI order (two more
    columns, ``"uri_index"`` in the header: a URI is found by binary search without
    reading them all), then the URIs one per line (as a JSON array instead if one of
    them holds a line break).
    """
    ids = sorted(offsets)
    resources: dict[str, int] = {}
    owners = [resources.setdefault(entries[i].resource_id, len(resources)) for i in ids]
    uris = [entries[i].uri for i in ids]
    _write_key_columns(path, ids, owners, [offsets[i] for i in ids], uris, list(resources))


def _write_key_columns(
    path: Path, ids: Any, owners: Any, offsets: Any, uris: list[str], resources: list[str]
) -> None:
    """The keys file of these columns (see :func:`write_keys`)."""
    import numpy as np

    as_lines = not any("\n" in u or "\r" in u for u in uris)
    header: dict[str, Any] = {
        "count": len(uris),
        "resources": resources,
        "uris": "lines" if as_lines else "json",
    }
    columns: list[Any] = [ids, owners, offsets]
    if as_lines:
        encoded = [u.encode("utf-8") for u in uris]
        text = b"\n".join(encoded)
        lengths = np.fromiter(map(len, encoded), dtype=np.int64, count=len(encoded))
        header["uri_index"] = True
        # UTF-8 bytes sort as their code points do: the order str comparison gives too.
        by_uri = sorted(range(len(encoded)), key=encoded.__getitem__)
        columns += [np.cumsum(lengths + 1) - 1, by_uri]
    else:
        text = json.dumps(uris, ensure_ascii=False).encode("utf-8")
    with path.open("wb") as handle:
        handle.write((json.dumps(header, ensure_ascii=False) + "\n").encode("utf-8"))
        for column in columns:
            handle.write(np.asarray(column, dtype="<i8").tobytes())
        handle.write(text)


class UriColumn:
    """The URIs of a keys file, one per line, with the end of each line and the rows in
    URI order: a URI is found by binary search and decoded when asked for. Opening an
    index of 178k vectors does not split its 22 MB of URIs into strings (60 ms), nor does
    a refresh that removes a file's few vectors build a map of every URI (70 ms more)."""

    def __init__(self, raw: bytes | mmap.mmap, start: int, ends: Any, by_uri: Any) -> None:
        self._raw = raw
        self._start = start
        # Memory views: an element read from one is a Python int at once (numpy's
        # scalars are several times slower to index and compare).
        self._ends = memoryview(ends)
        self._by_uri = memoryview(by_uri)

    def __len__(self) -> int:
        return len(self._ends)

    def _bytes(self, row: int) -> bytes:
        start = self._start + (self._ends[row - 1] + 1 if row else 0)
        return self._raw[start : self._start + self._ends[row]]

    def __getitem__(self, row: int) -> str:
        return self._bytes(row).decode("utf-8")

    def as_list(self) -> list[str]:
        """Every URI, by row (what a map of them all is built from)."""
        return self._raw[self._start :].decode("utf-8").split("\n") if len(self) else []

    def row_of(self, uri: str) -> int:
        """The row of ``uri``, or -1."""
        key = uri.encode("utf-8")
        order, low, high = self._by_uri, 0, len(self._by_uri)
        while low < high:
            middle = (low + high) >> 1
            if self._bytes(order[middle]) < key:
                low = middle + 1
            else:
                high = middle
        if low < len(order) and self._bytes(order[low]) == key:
            return int(order[low])
        return -1


class EntryTable(MutableMapping[int, Entry]):
    """id -> Entry over a keys file: base entries stay in columns until one is asked for.

    Opening a large index must not create an object per vector; lookups find a
    base row by binary search over the ascending ids, and entries added later
    (the delta's) live in an ordinary dict.
    """

    def __init__(
        self,
        ids: Any,
        uris: list[str] | UriColumn,
        resources: list[str],
        owners: Any,
        offsets: Any,
    ) -> None:
        import numpy as np

        self._ids = np.asarray(ids, dtype=np.int64)
        self._uris = uris
        self._resources = resources
        self._owners = np.asarray(owners, dtype=np.int64)
        self._offsets = np.asarray(offsets, dtype=np.int64)
        self._alive = np.ones(len(self._ids), dtype=bool)
        self._live_rows = len(self._ids)
        self._made: dict[int, Entry] = {}
        self._extra: dict[int, Entry] = {}
        # The delta's ids all come after the base's: most lookups of them end here.
        self._first, self._last = (int(self._ids[0]), int(self._ids[-1])) if len(ids) else (0, -1)

    def _row(self, key: object) -> int:
        if not isinstance(key, int) or not self._live_rows or not self._first <= key <= self._last:
            return -1
        ids = self._ids
        row = int(ids.searchsorted(key))
        if ids[row] == key and self._alive[row]:
            return row
        return -1

    def base_rows(self, keys: Iterable[int]) -> Any:
        """The rows of the live base entries ``keys``, -1 for a key it lacks: one binary
        search for all of them (a delta's thousands of ids, when the index opens)."""
        import numpy as np

        wanted = np.fromiter(keys, dtype=np.int64)
        if not len(self._ids):
            return np.full(len(wanted), -1, dtype=np.int64)
        rows = np.minimum(self._ids.searchsorted(wanted), len(self._ids) - 1)
        found = (self._ids[rows] == wanted) & self._alive[rows]
        return np.where(found, rows, -1)

    def base_entry(self, row: int) -> Entry:
        """The entry of a live base row (made once, then the same object)."""
        key = int(self._ids[row])
        entry = self._made.get(key)
        if entry is None:
            resource = self._resources[int(self._owners[row])]
            entry = Entry(self._uris[row], resource, None, None, int(self._offsets[row]))
            self._made[key] = entry
        return entry

    def entries_of(self, keys: Iterable[int]) -> dict[int, Entry]:
        """The entries of ``keys`` (KeyError for one it lacks), base ones found together."""
        found: dict[int, Entry] = {}
        base: list[int] = []
        for key in keys:
            entry = self._extra.get(key)
            if entry is None:
                base.append(key)
            else:
                found[key] = entry
        rows = self.base_rows(base).tolist()
        for key, row in zip(base, rows, strict=True):
            if row < 0:
                raise KeyError(key)
            found[key] = self.base_entry(row)
        return found

    def drop_rows(self, rows: Any) -> None:
        """Remove the entries of live base ``rows`` (from :meth:`base_rows`) at once."""
        rows = rows[rows >= 0]
        dying = rows[self._alive[rows]]
        self._alive[dying] = False
        self._live_rows -= len(dying)
        for key in self._ids[dying].tolist():
            self._made.pop(key, None)

    def __getitem__(self, key: int) -> Entry:
        entry = self._extra.get(key)
        if entry is not None:
            return entry
        row = self._row(key)
        if row < 0:
            raise KeyError(key)
        return self.base_entry(row)

    def __setitem__(self, key: int, value: Entry) -> None:
        if self._row(key) >= 0:
            self.__delitem__(key)
        self._extra[key] = value

    def __delitem__(self, key: int) -> None:
        if key in self._extra:
            del self._extra[key]
            return
        row = self._row(key)
        if row < 0:
            raise KeyError(key)
        self._alive[row] = False
        self._live_rows -= 1
        self._made.pop(key, None)

    def __contains__(self, key: object) -> bool:
        return key in self._extra or self._row(key) >= 0

    def __len__(self) -> int:
        return self._live_rows + len(self._extra)

    def __iter__(self) -> Iterator[int]:
        yield from self._ids[self._alive].tolist()
        yield from list(self._extra)

    def max_id(self) -> int:
        return max(self._last, max(self._extra, default=-1))

    @property
    def has_uri_order(self) -> bool:
        """Whether URIs are found by binary search (:meth:`ids_of`): the keys file was
        written with its URIs in order, or they hold a line break (no order to write)."""
        return isinstance(self._uris, UriColumn) or any("\n" in u or "\r" in u for u in self._uris)

    def write_keys(self, path: Path) -> None:
        """Write the keys file this table was read from again, with the URI order (every
        base row, removed since or not, as the base's files hold them)."""
        column = self._uris
        uris = column.as_list() if isinstance(column, UriColumn) else list(column)
        _write_key_columns(path, self._ids, self._owners, self._offsets, uris, self._resources)

    def ids_of(self, uris: Iterable[str]) -> dict[str, int] | None:
        """URI -> id of the live entries among ``uris``, each found by binary search; None
        when the keys file has no URI order (one written before it): :meth:`uri_ids`."""
        column = self._uris
        if not isinstance(column, UriColumn):
            return None
        added = {entry.uri: vector_id for vector_id, entry in self._extra.items()}
        found: dict[str, int] = {}
        for uri in uris:
            vector_id = added.get(uri)
            if vector_id is None:
                row = column.row_of(uri)
                if row < 0 or not self._alive[row]:
                    continue
                vector_id = int(self._ids[row])
            found[uri] = vector_id
        return found

    def uri_ids(self) -> dict[str, int]:
        """URI -> id of the live entries, built column-wise."""
        column = self._uris
        uris = column.as_list() if isinstance(column, UriColumn) else column
        uri_ids = dict(zip(uris, self._ids.tolist(), strict=True))
        for row in (~self._alive).nonzero()[0].tolist():  # few: removed since the base
            del uri_ids[uris[row]]
        for vector_id, entry in self._extra.items():
            uri_ids[entry.uri] = vector_id
        return uri_ids

    def resource_ids(self) -> dict[str, set[int]]:
        """Resource -> ids of the live entries, built column-wise."""
        by_resource: dict[str, set[int]] = {}
        for number, resource in enumerate(self._resources):
            mask = (self._owners == number) & self._alive
            if mask.any():
                by_resource[resource] = set(self._ids[mask].tolist())
        for vector_id, entry in self._extra.items():
            by_resource.setdefault(entry.resource_id, set()).add(vector_id)
        return by_resource


def read_keys(path: Path) -> EntryTable:
    """The keys file as id -> Entry without content (read lazily at ``offset``)."""
    import numpy as np

    raw = _mapped(path)
    try:
        end = raw.find(b"\n")
        if end < 0:
            raise ValueError("no header line")
        header = json.loads(raw[:end])
        count = int(header["count"])
        resources = [str(r) for r in header["resources"]]
        start = end + 1
        width = 8 * count
        indexed = header["uris"] == "lines" and bool(header.get("uri_index"))
        columns = 5 if indexed else 3
        if count < 0 or len(raw) < start + columns * width:
            raise ValueError("shorter than its columns")
        ids, owners, offsets, *index = (
            np.frombuffer(raw, dtype="<i8", count=count, offset=start + n * width).astype(np.int64)
            for n in range(columns)
        )
        uris: list[str] | UriColumn
        if indexed:
            ends, by_uri = index
            text_start = start + columns * width
            _check_uri_index(ends, by_uri, len(raw) - text_start)
            uris = UriColumn(raw, text_start, ends, by_uri)
        else:
            text = raw[start + columns * width :].decode("utf-8")
            if header["uris"] == "lines":
                uris = text.split("\n") if count else []
            else:
                uris = [str(u) for u in json.loads(text)]
            if len(uris) != count:
                raise ValueError(f"{len(uris)} URIs for {count} ids")
        table = EntryTable(ids, uris, resources, owners, offsets)
    except (json.JSONDecodeError, UnicodeDecodeError, KeyError, TypeError, ValueError) as exc:
        raise CorruptIndexError(f"{path.name} is malformed: {exc}") from exc
    if count and (
        (ids[1:] <= ids[:-1]).any() or owners.min() < 0 or owners.max() >= len(resources)
    ):
        raise CorruptIndexError(f"{path.name} is malformed: ids out of order or bad owners")
    return table


def _mapped(path: Path) -> bytes | mmap.mmap:
    """The file's bytes, mapped where a mapped file may still be replaced (POSIX): opening
    then reads only the pages it touches, and a keys file's URIs are most of its bytes
    (22 of 30 MB for 178k vectors), looked at one by one. Read whole elsewhere."""
    if os.name != "posix":
        return path.read_bytes()
    with path.open("rb") as handle:
        try:
            return mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ)
        except ValueError:  # an empty file cannot be mapped
            return b""


def _check_uri_index(ends: Any, by_uri: Any, text_bytes: int) -> None:
    """ValueError unless ``ends`` are the ends of lines filling ``text_bytes`` and
    ``by_uri`` holds every row once (what a torn or foreign keys file would not)."""
    import numpy as np

    count = len(ends)
    if count == 0:
        if text_bytes:
            raise ValueError("URIs without ids")
        return
    if int(ends[-1]) != text_bytes or int(ends[0]) < 0 or (ends[1:] <= ends[:-1]).any():
        raise ValueError("the URIs' line ends do not fit their text")
    if int(by_uri.min()) < 0 or int(by_uri.max()) >= count:
        raise ValueError("the URI order names rows it lacks")
    if int(np.bincount(by_uri, minlength=count).max()) != 1:
        raise ValueError("the URI order names a row twice")


def write_delta_entries(
    path: Path,
    deleted: Iterable[int],
    entries: Mapping[int, Entry],
    updated: Mapping[int, Entry] | None = None,
) -> None:
    """The delta's entries: a header line with the removed base ids (and the ids of the
    base entries it updates), then one line per row, then the updated base entries whole."""
    updated = updated or {}
    with path.open("wb") as handle:
        header: dict[str, Any] = {"deleted": sorted(deleted)}
        if updated:
            header["updated"] = sorted(updated)
        handle.write((json.dumps(header) + "\n").encode("utf-8"))
        for vector_id in sorted(entries):
            handle.write(_entry_line(vector_id, entries[vector_id]))
        for vector_id in sorted(updated):
            handle.write(_entry_line(vector_id, updated[vector_id]))


def read_delta_entries(path: Path) -> tuple[set[int], dict[int, Entry], dict[int, Entry]]:
    """(removed base ids, id -> Entry of the rows, id -> Entry of updated base entries)
    from a delta entries file."""
    with path.open("rb") as handle:
        try:
            header = json.loads(handle.readline())
            deleted = {int(i) for i in header["deleted"]}
            updated_ids = {int(i) for i in header.get("updated", ())}
        except (json.JSONDecodeError, UnicodeDecodeError, KeyError, TypeError, ValueError) as exc:
            raise CorruptIndexError(f"{path.name} header is malformed: {exc}") from exc
        entries: dict[int, Entry] = {}
        updated: dict[int, Entry] = {}
        for number, line in enumerate(handle, 2):
            vector_id, entry = parse_entry(line, f"{path.name} line {number}")
            (updated if vector_id in updated_ids else entries)[vector_id] = entry
    if len(updated) != len(updated_ids):
        raise CorruptIndexError(f"{path.name} lacks entries its header says it updates")
    return deleted, entries, updated
