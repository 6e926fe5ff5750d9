"""``FaissVectorBackend``: the ``faiss`` vector backend, one instance per project folder.

**Structure.** Vectors are L2-normalised on the way in, so inner product is
cosine similarity. Small indexes use ``IndexFlatIP`` (exact); once an index
holds ``hnsw_threshold`` live vectors (250,000 by default) it is rebuilt as
``IndexHNSWFlat`` with inner product (approximate, sub-linear), and back to flat
below half the threshold. ``index_type="flat"`` or ``"hnsw"`` pins the choice.
Both sit in an ``IndexIDMap2``: every vector has an int64 id that this class
maps to its UKO URI, resource ULID, content and metadata.

**Updates without rebuilds: base and delta.** Re-indexing a URI replaces its
vector; removing a URI or a whole resource removes its vectors. The index is
log-structured: the *base* is the FAISS index last written whole; vectors
added since form the *delta* (searched exactly with numpy), and base vectors
removed since are *tombstones* that every search filters out;
``update_metadata`` changes an entry's metadata (a moved node's lines) without
touching its vector, and the delta carries base entries so changed whole. A
commit writes only the delta until it exceeds ``delta_ratio`` of the base (and
``delta_min``; an updated entry counts a quarter of a vector); then, or on
``compact()``, the delta is folded into the base and the base written whole.
Flat bases drop their tombstones then; HNSW keeps them until they exceed
``tombstone_ratio`` (25%) of the stored vectors, when the graph is rebuilt
from the live vectors. Opening reads the manifest, the
keys and the delta only; the base index and the entries' content are read
when a search or a compaction first needs them (small bases on opening), the
base's vectors mapped from the file rather than copied (a change to the base
copies it first: ``_own_base``).

**Scope.** A search only ever sees vectors of the resources in ``scope``, and
still returns ``top_k`` of them when that many exist: small scopes (up to
``exact_scope_limit`` vectors) are scored exactly over their own vectors;
larger ones use a FAISS ``IDSelector`` inside the search, and an HNSW search
that comes back short is retried with a wider beam, then exactly. Nothing is
filtered after the fact.

**Durability.** Writes stay in memory until ``commit()``, which writes a new
generation (a delta, or a whole base) atomically
(:mod:`cleveragents_backend_faiss.storage`);
``close()`` commits pending writes unless ``commit_on_close=False``, and
``rollback()`` discards them. One process writes a project's index at a time.

**Faults.** An index built with another embedder or dimension raises
:class:`~cleveragents.errors.ConfigurationError` naming both and the fix. A
corrupt or truncated index is moved aside as ``*.corrupt`` (when opened, or
when a lazily read base turns out damaged); the backend goes on empty with
``needs_rebuild = True`` for the caller to re-embed from its sources. The flag
survives reopening and commits until ``reset()``.
"""

from __future__ import annotations

import dataclasses
import json
import math
import threading
from collections.abc import Collection, Iterable, Mapping, MutableMapping, Sequence
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any, cast

from cleveragents.errors import BusinessRuleViolation, ConfigurationError
from cleveragents.files import sync_directory
from cleveragents.protocols.backends import EmbeddingChunk, VectorResult
from cleveragents_backend_faiss import storage
from cleveragents_backend_faiss.options import INDEX_TYPES, parse_options, positive_int
from cleveragents_backend_faiss.validation import (
    RESOURCE_METADATA_KEYS,
    InvalidVectorQuery,
    require_scope,
    require_str,
    resource_of,
    str_metadata,
)

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import ArrayLike

__all__ = ["INDEX_TYPES", "RESOURCE_METADATA_KEYS", "FaissVectorBackend", "InvalidVectorQuery"]

_REBUILD_HINT = "run `cleveragents vector rebuild`"
_MAX_EF_SEARCH = 4096


class FaissVectorBackend:
    """VectorBackend + VectorIndexBackend over FAISS, persisted under ``location``.

    Options (``index.vector.options`` in the configuration): ``embedder`` and
    ``dimension`` (what the vectors come from; checked against the index on
    open), ``index_type`` (``auto`` | ``flat`` | ``hnsw``), ``hnsw_threshold``,
    ``hnsw_m``, ``hnsw_ef_construction``, ``hnsw_ef_search``,
    ``tombstone_ratio``, ``delta_ratio``, ``delta_min``, ``full_checksum_bytes``,
    ``exact_scope_limit``, ``verify_checksums``, ``commit_on_close``.
    """

    def __init__(self, location: Path | str, **options: Any) -> None:
        self.location = Path(location)
        self.options = parse_options(options)
        self._lock = threading.RLock()
        self._closed = False
        #: True when the stored index was unusable and was set aside: re-embed and commit.
        self.needs_rebuild = False
        #: Why the stored index was set aside, when it was.
        self.corruption: str | None = None
        self.location.mkdir(parents=True, exist_ok=True)
        self._load()

    # -- opening -------------------------------------------------------------------

    def _reset_state(self, dimension: int | None, embedder: str | None) -> None:
        self._close_content()
        self._dimension = dimension
        self._embedder = embedder
        self._structure = "flat" if self.options.index_type != "hnsw" else "hnsw"
        #: The base FAISS index once loaded (or built in memory); None until then.
        self._index: Any = None
        #: True while ``_index`` maps its file's vectors instead of holding a copy.
        self._mapped = False
        #: The committed manifest whose base files are on disk (None: no base yet).
        self._base: storage.Manifest | None = None
        self._base_loaded = True
        self._base_count = 0
        #: Rows of the base index file that were already dead when it was written.
        self._base_dead = 0
        self._checked: set[str] = set()
        #: Every live vector: base entries opened from the keys file carry no content yet.
        self._entries: MutableMapping[int, storage.Entry] = {}
        #: URI -> id and resource -> ids of ``_entries``, derived from them when first
        #: needed (None until then: a search needs no URI map, and 178k URIs take 50 ms).
        self._uri_map: dict[str, int] | None = {}
        self._resource_map: dict[str, set[int]] | None = {}
        #: Sorted id arrays per resource and the last scope's selector, rebuilt after writes.
        self._resource_arrays: dict[str, np.ndarray] = {}
        self._scope_cache: tuple[int, frozenset[str], Any, Any] | None = None
        self._version = 0
        #: Rows of the loaded base index that are not live (removed, or replaced).
        self._tombstones: set[int] = set()
        #: Ids of base entries removed since the base was written (persisted in the delta).
        self._deleted: set[int] = set()
        #: Ids of base entries given new metadata since (persisted whole in the delta).
        self._updated: set[int] = set()
        #: Vectors added since the base was written; ids from ``_delta_start`` on.
        self._delta: dict[int, np.ndarray] = {}
        self._delta_start = 0
        self._delta_cache: tuple[int, np.ndarray, np.ndarray] | None = None
        #: The base must be written whole at the next commit (rebuilt, emptied, new).
        self._full_write = False
        #: Keys of an index written before keys files existed, for the next commit to record.
        self._legacy_keys: dict[int, storage.Entry] | None = None
        #: True when the keys file predates the URI order: the next commit writes it anew.
        self._unordered_keys = False
        self._next_id = 0
        self._generation = 0
        self._dirty = False
        self._rows: np.ndarray | None = None

    def _close_content(self) -> None:
        content = getattr(self, "_content", None)
        if content is not None:
            content[0].close()
            content[1].close()
        self._content: tuple[Any, Any] | None = None

    def _load(self) -> None:
        configured = self.options
        self._reset_state(configured.dimension, configured.embedder)
        try:
            manifest = storage.read_manifest(self.location)
        except storage.CorruptIndexError as exc:
            self._set_aside(str(exc), None)
            return
        except ValueError as exc:
            raise ConfigurationError(str(exc)) from exc
        if manifest is None:
            if (self.location / f"{storage.MANIFEST_NAME}.corrupt").exists():
                self.needs_rebuild = True
                self.corruption = self.corruption or "a corrupt index was set aside earlier"
            return
        self._check_compatible(manifest)
        try:
            self._open(manifest)
        except (storage.CorruptIndexError, RuntimeError, ValueError, OSError) as exc:
            self._reset_state(configured.dimension, configured.embedder)
            self._set_aside(str(exc), manifest)

    def _verify(self, record: storage.FileRecord, *, eager: bool = False) -> Path:
        """Check a data file's size, and its checksum once (big base files when first read)."""
        options = self.options
        checksum = options.verify_checksums and record.name not in self._checked
        if checksum and not eager and record.size > options.full_checksum_bytes:
            checksum = False  # checked when the file is first read
        path = storage.verify_file(self.location, record, checksum=checksum)
        if checksum:
            self._checked.add(record.name)
        return path

    def _open(self, manifest: storage.Manifest) -> None:
        """Adopt ``manifest``: keys and delta now, the base index when first needed."""
        np = _numpy()
        self._verify(manifest.index_file)
        entries_path = self._verify(manifest.entries_file)
        entries: MutableMapping[int, storage.Entry]
        if manifest.keys_file is not None:
            entries = storage.read_keys(self._verify(manifest.keys_file, eager=True))
            self._unordered_keys = not entries.has_uri_order
        else:  # written before keys files: read the entries whole, record keys next commit
            entries = storage.read_entries(entries_path)
            self._legacy_keys = dict(entries)
        base_count = manifest.base_count if manifest.has_delta else manifest.count
        if len(entries) != base_count:
            raise storage.CorruptIndexError("the entries file does not match the manifest")
        deleted: set[int] = set()
        delta: dict[int, Any] = {}  # rows of np (a local module here, not a type)
        delta_start = max(manifest.next_id, _max_id(entries) + 1)
        if manifest.has_delta:
            delta_start = int(manifest.delta_start)  # type: ignore[arg-type]
            vectors_path = self._verify(manifest.delta_vectors, eager=True)  # type: ignore[arg-type]
            delta_path = self._verify(manifest.delta_entries, eager=True)  # type: ignore[arg-type]
            deleted, delta_entries, updated = storage.read_delta_entries(delta_path)
            matrix = np.load(vectors_path, allow_pickle=False)
            shape = (len(delta_entries), manifest.dimension)
            if matrix.dtype != np.float32 or matrix.shape != shape:
                raise storage.CorruptIndexError("the delta vectors do not match the delta entries")
            if isinstance(entries, storage.EntryTable):
                deleted_rows = entries.base_rows(sorted(deleted))
                held = bool((deleted_rows >= 0).all())
            else:
                held = all(vector_id in entries for vector_id in deleted)
            if not held:
                raise storage.CorruptIndexError("the delta removes vectors the base does not hold")
            if (
                _max_id(entries) >= delta_start
                or min(delta_entries, default=delta_start) < delta_start
            ):
                raise storage.CorruptIndexError("the delta's ids overlap the base's")
            # One search for the thousands of ids a delta may name, not one each.
            if isinstance(entries, storage.EntryTable):
                rows = entries.base_rows(updated)
                base_entries = [entries.base_entry(row) for row in rows.tolist() if row >= 0]
            else:
                base_entries = [entries[i] for i in updated if i in entries]
            if (
                len(updated) != manifest.updated
                or len(base_entries) != len(updated)
                or not deleted.isdisjoint(updated)
            ):
                raise storage.CorruptIndexError("the delta updates entries the base does not hold")
            for base_entry, entry in zip(base_entries, updated.values(), strict=True):
                if base_entry.uri != entry.uri:
                    raise storage.CorruptIndexError("the delta updates another URI's entry")
                base_entry.content, base_entry.metadata = entry.content, entry.metadata
            if isinstance(entries, storage.EntryTable):
                entries.drop_rows(deleted_rows)
            else:
                for vector_id in deleted:
                    del entries[vector_id]
            for row, vector_id in enumerate(sorted(delta_entries)):
                delta[vector_id] = matrix[row]
            entries.update(delta_entries)
        if len(entries) != manifest.count:
            raise storage.CorruptIndexError("the manifest's count does not match its files")
        self._base, self._base_loaded, self._base_count = manifest, False, base_count
        self._base_dead = max(0, manifest.tombstones - (len(deleted) if manifest.has_delta else 0))
        self._entries, self._deleted, self._delta = entries, deleted, delta
        self._updated = set(updated) if manifest.has_delta else set()
        self._delta_start = delta_start
        self._uri_map = self._resource_map = None  # derived from the entries when needed
        self._next_id = max(manifest.next_id, _max_id(entries) + 1, delta_start)
        self._generation = manifest.generation
        self._structure = "hnsw" if manifest.index_type == "hnsw" else "flat"
        self.needs_rebuild = self.needs_rebuild or manifest.needs_rebuild
        if manifest.index_file.size <= self.options.full_checksum_bytes:
            self._read_base(manifest)  # small: read now, so damage is found on opening
        pinned = self.options.index_type
        if pinned != "auto" and pinned != self._structure:
            self._rebuild(pinned)
            self._dirty = True
        else:
            self._after_writes()

    def load(self) -> bool:
        """Read the base index now (searches do it when first needed); False if it was corrupt."""
        with self._lock:
            self._require_open()
            return self._load_base()

    def _load_base(self) -> bool:
        """Read the base index file; on corruption set the index aside and return False."""
        if self._base_loaded:
            return True
        manifest = self._base
        assert manifest is not None
        try:
            self._read_base(manifest)
            return True
        except (storage.CorruptIndexError, RuntimeError, ValueError, OSError) as exc:
            reason = str(exc)
        if not self._dirty and self._committed_elsewhere(manifest):
            self._load()  # another process committed a new generation: read that instead
            return self._load_base()
        self._lose_base(reason, manifest)
        return False

    def _committed_elsewhere(self, manifest: storage.Manifest) -> bool:
        try:
            current = storage.read_manifest(self.location)
        except (storage.CorruptIndexError, ValueError):
            return False
        return current is not None and current.generation != manifest.generation

    def _lose_base(self, reason: str, manifest: storage.Manifest) -> None:
        """The base is unreadable: set it aside and go on empty, flagged for a rebuild."""
        dirty = self._dirty
        self._reset_state(self._dimension, self._embedder)
        self._set_aside(reason, manifest)
        self._dirty = dirty

    def _read_base(self, manifest: storage.Manifest) -> None:
        np = _numpy()
        faiss = _faiss_module()
        index_path = self._verify(manifest.index_file, eager=True)
        # Mapped, not read: a search of a large base starts at once, and only the pages it
        # touches are read (the HNSW graph itself is still read whole).
        mapping = getattr(faiss, "IO_FLAG_MMAP_IFC", 0)
        index = faiss.read_index(str(index_path), mapping)
        if not isinstance(index, faiss.IndexIDMap2):
            raise storage.CorruptIndexError("the index file does not hold an id-mapped index")
        if index.d != manifest.dimension:
            raise storage.CorruptIndexError(
                f"the index file has dimension {index.d}, the manifest says {manifest.dimension}"
            )
        rows = faiss.vector_to_array(index.id_map).astype(np.int64)
        if len(rows) and (np.diff(rows) <= 0).any():
            raise storage.CorruptIndexError("the index file's ids are out of order")
        base_live = np.fromiter((i for i in self._entries if i < self._delta_start), dtype=np.int64)
        base_ids = (
            base_live
            if not self._deleted
            else np.concatenate(
                [base_live, np.fromiter(self._deleted, dtype=np.int64, count=len(self._deleted))]
            )
        )
        if len(base_ids) != self._base_count or not np.isin(base_ids, rows).all():
            raise storage.CorruptIndexError("the entries file does not match the index file")
        inner = faiss.downcast_index(index.index)
        self._structure = "hnsw" if isinstance(inner, faiss.IndexHNSWFlat) else "flat"
        self._index, self._mapped = index, bool(mapping)
        self._tombstones = set(rows.tolist()).difference(base_live.tolist())
        self._base_loaded = True
        self._rows = rows
        self._version += 1

    def _own_base(self) -> None:
        """Copy a mapped base into memory of its own before it changes: FAISS aborts the
        whole process on a change to mapped vectors. Read again from its file, or, if a
        later generation removed the file, copied from the mapping."""
        if not self._mapped:
            return
        faiss = _faiss_module()
        manifest = self._base
        path = self.location / manifest.index_file.name if manifest is not None else None
        if path is not None and path.exists():
            self._index = faiss.read_index(str(path))
        else:
            self._index = faiss.deserialize_index(faiss.serialize_index(self._index))
        self._mapped = False
        self._rows = None

    def _entry(self, vector_id: int) -> storage.Entry | None:
        """The entry with its content, read from the base entries file when not yet read."""
        entry = self._entries[vector_id]
        if entry.content is not None:
            return entry
        manifest = self._base
        assert manifest is not None
        try:
            if self._content is None:
                import mmap

                path = self._verify(manifest.entries_file, eager=True)
                handle = path.open("rb")
                try:
                    mapped = mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ)
                except BaseException:
                    handle.close()
                    raise
                self._content = (mapped, handle)
            mapped = self._content[0]
            end = mapped.find(b"\n", entry.offset)
            line = mapped[entry.offset : end if end >= 0 else len(mapped)]
            found, full = storage.parse_entry(
                line, f"{manifest.entries_file.name} at {entry.offset}"
            )
            if found != vector_id or full.uri != entry.uri:
                raise storage.CorruptIndexError("the keys file does not match the entries file")
        except (storage.CorruptIndexError, ValueError, OSError) as exc:
            self._lose_base(str(exc), manifest)
            return None
        entry.content, entry.metadata = full.content, full.metadata
        return entry

    def _materialize(self) -> bool:
        """Read the content of every base entry (before the base is written anew)."""
        lazy = [i for i, e in self._entries.items() if e.content is None]
        if not lazy:
            return True
        manifest = self._base
        assert manifest is not None
        try:
            full = storage.read_entries(self._verify(manifest.entries_file, eager=True))
            for vector_id in lazy:
                entry, source = self._entries[vector_id], full.get(vector_id)
                if source is None or source.uri != entry.uri:
                    raise storage.CorruptIndexError("the keys file does not match the entries file")
                entry.content, entry.metadata = source.content, source.metadata
        except (storage.CorruptIndexError, ValueError, OSError) as exc:
            self._lose_base(str(exc), manifest)
            return False
        return True

    def _check_compatible(self, manifest: storage.Manifest) -> None:
        wanted_name, wanted_dim = self.options.embedder, self.options.dimension
        name_differs = wanted_name is not None and manifest.embedder not in (None, wanted_name)
        dim_differs = wanted_dim is not None and wanted_dim != manifest.dimension
        if name_differs or dim_differs:
            built = f"embedder {manifest.embedder or 'unknown'} (dim {manifest.dimension})"
            wanted = (
                f"embedder {wanted_name or manifest.embedder or 'unknown'} "
                f"(dim {wanted_dim or manifest.dimension})"
            )
            raise ConfigurationError(
                f"vector index at {self.location} was built with {built}; configured "
                f"{wanted}: {_REBUILD_HINT}",
                details={
                    "location": str(self.location),
                    "index_embedder": manifest.embedder,
                    "index_dimension": manifest.dimension,
                    "configured_embedder": wanted_name,
                    "configured_dimension": wanted_dim,
                },
            )
        self._embedder = wanted_name or manifest.embedder
        self._dimension = manifest.dimension

    def _set_aside(self, reason: str, manifest: storage.Manifest | None) -> None:
        from cleveragents.log import get_logger

        if manifest is not None:
            names = manifest.file_names()
        else:
            names = sorted(
                p.name
                for pattern in ("index-*.faiss", "entries-*.jsonl", "keys-*.bin", "delta-*")
                for p in self.location.glob(pattern)
                if not p.name.endswith((".corrupt", ".tmp"))
            )
        moved = storage.quarantine(self.location, [storage.MANIFEST_NAME, *names])
        self.needs_rebuild = True
        self.corruption = reason
        get_logger(__name__).warning(
            "vector index is corrupt; moved aside, starting empty until it is rebuilt",
            location=str(self.location),
            reason=reason,
            moved=[p.name for p in moved],
        )

    # -- properties ------------------------------------------------------------------

    @property
    def dimension(self) -> int | None:
        """Vector dimension: configured, read from the index, or set by the first write."""
        return self._dimension

    @property
    def embedder_name(self) -> str | None:
        """The embedder the vectors come from, as configured or recorded in the manifest."""
        return self._embedder

    @property
    def index_type(self) -> str:
        """The structure in use now: ``flat`` (exact) or ``hnsw`` (approximate)."""
        return self._structure

    @property
    def dirty(self) -> bool:
        """True when there are writes that ``commit()`` has not persisted yet."""
        return self._dirty

    def count(self, resource_id: str | None = None) -> int:
        """Live vectors, in all resources or in one."""
        with self._lock:
            if resource_id is None:
                return len(self._entries)
            return len(self._resource_ids.get(resource_id, ()))

    def stats(self) -> dict[str, Any]:
        """What ``cleveragents index status`` shows about this index."""
        with self._lock:
            return {
                "backend": "faiss",
                "location": str(self.location),
                "embedder": self._embedder,
                "dimension": self._dimension,
                "count": len(self._entries),
                "resources": {r: len(ids) for r, ids in sorted(self._resource_ids.items())},
                "index_type": self._structure,
                "tombstones": self._tombstone_count(),
                "delta": len(self._delta),
                "updated": len(self._updated),
                "base_loaded": self._base_loaded,
                "needs_rebuild": self.needs_rebuild,
                "dirty": self._dirty,
            }

    def _tombstone_count(self) -> int:
        if self._base_loaded:
            return len(self._tombstones)
        return self._base_dead + len(self._deleted)

    @staticmethod
    def describe(location: Path | str) -> dict[str, Any] | None:
        """The committed manifest of the index at ``location`` without loading it (None if none)."""
        try:
            manifest = storage.read_manifest(Path(location))
        except storage.CorruptIndexError as exc:
            return {"location": str(location), "corrupt": str(exc)}
        reason = FaissVectorBackend.check(location)
        if manifest is None:
            return None if reason is None else {"location": str(location), "corrupt": reason}
        data = manifest.to_dict()
        if reason is not None:
            data["corrupt"] = reason
        return data

    @staticmethod
    def check(location: Path | str) -> str | None:
        """Why the index at ``location`` needs a rebuild, from cheap checks (None: no reason).

        Reads the manifest and compares file sizes; checksums and FAISS's own
        checks happen when the index is opened and read.
        """
        location = Path(location)
        try:
            manifest = storage.read_manifest(location)
        except storage.CorruptIndexError as exc:
            return str(exc)
        except ValueError:
            return None  # a newer format: not for this version to judge
        if manifest is None:
            if (location / f"{storage.MANIFEST_NAME}.corrupt").exists():
                return "a corrupt index was set aside and not rebuilt yet"
            return None
        if manifest.needs_rebuild:
            return "the index was committed while incomplete"
        records = [
            manifest.index_file,
            manifest.entries_file,
            manifest.keys_file,
            manifest.delta_vectors,
            manifest.delta_entries,
        ]
        for record in records:
            if record is not None:
                try:
                    storage.verify_file(location, record, checksum=False)
                except storage.CorruptIndexError as exc:
                    return str(exc)
        return None

    # -- validation ------------------------------------------------------------------

    def _require_open(self) -> None:
        if self._closed:
            raise BusinessRuleViolation(f"the vector index at {self.location} is closed")

    def _check_dimension(self, got: int, what: str) -> None:
        if self._dimension is not None and got != self._dimension:
            raise InvalidVectorQuery(
                f"{what} has {got} dimensions; the vector index at {self.location} has "
                f"{self._dimension} (embedder {self._embedder or 'unknown'})",
                details={"got": got, "expected": self._dimension},
            )

    def _as_matrix(self, vectors: ArrayLike, rows: int) -> np.ndarray:
        np = _numpy()
        try:
            matrix = np.array(vectors, dtype=np.float32, copy=True, ndmin=2)
        except (TypeError, ValueError) as exc:
            raise InvalidVectorQuery(f"vectors must be numbers: {exc}") from exc
        if matrix.ndim != 2 or matrix.shape[0] != rows or matrix.shape[1] == 0:
            raise InvalidVectorQuery(
                f"expected {rows} vectors as a ({rows}, dimension) array, got shape {matrix.shape}"
            )
        self._check_dimension(matrix.shape[1], "a vector")
        if not np.isfinite(matrix).all():
            raise InvalidVectorQuery("vectors must be finite")
        norms = np.linalg.norm(matrix, axis=1)
        if (norms == 0).any():
            raise InvalidVectorQuery("vectors must have a non-zero norm")
        matrix /= norms[:, None]
        return np.ascontiguousarray(matrix)

    def _query_vector(self, embedding: Sequence[float]) -> np.ndarray:
        if isinstance(embedding, (str, bytes)) or embedding is None:
            raise InvalidVectorQuery("embedding must be a non-empty sequence of floats")
        try:
            length = len(embedding)
        except TypeError as exc:
            raise InvalidVectorQuery("embedding must be a non-empty sequence of floats") from exc
        if length == 0:
            raise InvalidVectorQuery("embedding must be a non-empty sequence of floats")
        self._check_dimension(length, "the query embedding")
        return self._as_matrix([embedding], 1)

    # -- the index structure ------------------------------------------------------------

    def _new_index(self, structure: str, dimension: int) -> Any:
        faiss = _faiss_module()
        if structure == "hnsw":
            inner = faiss.IndexHNSWFlat(dimension, self.options.hnsw_m, faiss.METRIC_INNER_PRODUCT)
            inner.hnsw.efConstruction = self.options.hnsw_ef_construction
            inner.hnsw.efSearch = self.options.hnsw_ef_search
        else:
            inner = faiss.IndexFlatIP(dimension)
        return faiss.IndexIDMap2(inner)  # the wrapper keeps ``inner`` alive

    def _row_ids(self) -> np.ndarray:
        """External ids of the base in storage order (ascending: ids only grow)."""
        if self._rows is None:
            self._rows = _faiss_module().vector_to_array(self._index.id_map).astype("int64")
        return self._rows

    def _stored_vectors(self) -> np.ndarray:
        """A zero-copy view of every base vector (tombstones included), in storage order."""
        np = _numpy()
        faiss = _faiss_module()
        inner = faiss.downcast_index(self._index.index)
        flat = faiss.downcast_index(inner.storage) if self._structure == "hnsw" else inner
        count, dim = flat.ntotal, self._index.d
        if count == 0:
            return np.empty((0, dim), dtype=np.float32)
        return faiss.rev_swig_ptr(flat.get_xb(), count * dim).reshape(count, dim)

    def _delta_arrays(self) -> tuple[np.ndarray, np.ndarray]:
        """(ascending ids, vectors) of the delta, cached until the next write."""
        np = _numpy()
        cached = self._delta_cache
        if cached is not None and cached[0] == self._version:
            return cached[1], cached[2]
        ids = np.array(sorted(self._delta), dtype=np.int64)
        if len(ids):
            matrix = np.stack([self._delta[i] for i in ids.tolist()])
        else:
            matrix = np.empty((0, self._dimension or 0), dtype=np.float32)
        self._delta_cache = (self._version, ids, matrix)
        return ids, matrix

    def _vectors_of(self, ids: np.ndarray) -> np.ndarray:
        """Copies of the vectors with ``ids`` (ascending, live), from the base and the delta."""
        np = _numpy()
        split = int(np.searchsorted(ids, self._delta_start))
        parts = []
        if split:
            positions = np.searchsorted(self._row_ids(), ids[:split])
            parts.append(self._stored_vectors()[positions])
        if split < len(ids):
            delta_ids, matrix = self._delta_arrays()
            parts.append(matrix[np.searchsorted(delta_ids, ids[split:])])
        return parts[0] if len(parts) == 1 else np.concatenate(parts)

    def _rebuild(self, structure: str) -> None:
        """Rebuild the base as ``structure`` from every live vector (base and delta)."""
        np = _numpy()
        if not self._load_base() or self._dimension is None:
            return
        live = np.array(sorted(self._entries), dtype=np.int64)
        vectors = self._vectors_of(live) if len(live) else None
        index = self._new_index(structure, self._dimension)
        if vectors is not None:
            index.add_with_ids(vectors, live)
        self._index, self._structure, self._mapped = index, structure, False
        self._absorbed()
        self._full_write = True

    def _absorbed(self) -> None:
        """The delta is now part of the in-memory base."""
        self._tombstones.clear()
        self._delta.clear()
        self._deleted.clear()
        self._updated.clear()
        self._delta_start = self._next_id
        self._rows = None
        self._version += 1

    def _after_writes(self) -> None:
        live = len(self._entries)
        if self.options.index_type == "auto" and self._dimension is not None and live:
            threshold = self.options.hnsw_threshold
            if self._structure == "flat" and live >= threshold:
                self._rebuild("hnsw")
            elif self._structure == "hnsw" and live < threshold // 2:
                self._rebuild("flat")
        if len(self._delta) >= max(1, self.options.delta_min) and (
            self._full_write or self._base is None
        ):
            self._absorb_delta()

    def _absorb_delta(self) -> None:
        """Add the delta to the in-memory base now, as the next commit writes the base anyway.

        Keeps searches of a big build (or rebuild) on the index instead of scanning
        a delta that never gets written.
        """
        if self._index is None:
            self._index = self._new_index(self._structure, int(self._dimension))  # type: ignore[arg-type]
        self._own_base()
        ids, matrix = self._delta_arrays()
        self._index.add_with_ids(matrix, ids)
        self._base_loaded = True
        self._delta.clear()
        self._delta_start = self._next_id
        self._rows = None
        self._version += 1
        self._full_write = True

    def _compaction_due(self) -> bool:
        """Whether the next commit writes the base whole rather than a delta."""
        if self._full_write or self._base is None:
            return True
        # An updated entry is a line of the delta's entries, about a quarter of a row's
        # cost (no vector); it does not slow searches.
        changed = len(self._delta) + len(self._deleted) + len(self._updated) // 4
        return changed > max(self.options.delta_min, self.options.delta_ratio * self._base_count)

    def _tombstones_due(self) -> bool:
        if self._structure != "hnsw" or self._index is None or not self._tombstones:
            return False
        return len(self._tombstones) > self.options.tombstone_ratio * self._index.ntotal

    def compact(self) -> None:
        """Fold the delta into the base at the next commit (dropping HNSW tombstones too)."""
        with self._lock:
            self._require_open()
            if self._delta or self._deleted or self._tombstones:
                # The whole write starts from the base: one not read yet (opened lazily)
                # is read now, or the write would hold the delta's vectors alone.
                if self._base is not None and not self._load_base():
                    return  # unreadable: set aside, to be rebuilt
                if self._structure == "hnsw" and self._tombstones:
                    self._rebuild(self._structure)
                self._full_write = True
                self._dirty = True

    def _entries_of(self, ids: Iterable[int]) -> dict[int, storage.Entry]:
        """id -> entry of ``ids``, all held (a delta's thousands at once from a keys file)."""
        if isinstance(self._entries, storage.EntryTable):
            return self._entries.entries_of(ids)
        return {vector_id: self._entries[vector_id] for vector_id in ids}

    def _ids_of(self, uris: Collection[str]) -> dict[str, int]:
        """URI -> id of those of ``uris`` the index holds. A few URIs are looked up in the
        keys file's URI order; for more, the URI map is derived from the entries, then
        kept up to date."""
        if not uris:
            return {}
        if self._uri_map is None:
            entries = self._entries
            # A binary search costs about as much as 30 entries of the map do.
            if isinstance(entries, storage.EntryTable) and len(uris) * 32 <= len(entries):
                found = entries.ids_of(uris)
                if found is not None:
                    return found
            if isinstance(entries, storage.EntryTable):
                self._uri_map = entries.uri_ids()
            else:
                self._uri_map = {entry.uri: vector_id for vector_id, entry in entries.items()}
        uri_map = self._uri_map
        return {uri: uri_map[uri] for uri in uris if uri in uri_map}

    @property
    def _resource_ids(self) -> dict[str, set[int]]:
        """Resource -> ids of its live vectors (derived from the entries when first needed)."""
        if self._resource_map is None:
            entries = self._entries
            if isinstance(entries, storage.EntryTable):
                self._resource_map = entries.resource_ids()
            else:
                by_resource: dict[str, set[int]] = {}
                for vector_id, entry in entries.items():
                    by_resource.setdefault(entry.resource_id, set()).add(vector_id)
                self._resource_map = by_resource
        return self._resource_map

    # -- writing -----------------------------------------------------------------------

    def _forget(self, ids: Iterable[int]) -> int:
        """Drop ``ids`` from the tables, the delta or (as tombstones) the base."""
        dropped = 0
        for vector_id in ids:
            entry = self._entries.pop(vector_id, None)
            if entry is None:
                continue
            dropped += 1
            if self._uri_map is not None:
                del self._uri_map[entry.uri]
            self._resource_arrays.pop(entry.resource_id, None)
            if self._resource_map is not None:
                owned = self._resource_map[entry.resource_id]
                owned.discard(vector_id)
                if not owned:
                    del self._resource_map[entry.resource_id]
            if vector_id >= self._delta_start:
                del self._delta[vector_id]
            else:
                self._deleted.add(vector_id)
                self._updated.discard(vector_id)
                if self._base_loaded:
                    self._tombstones.add(vector_id)
        if not dropped:
            return 0
        self._version += 1
        self._dirty = True
        return dropped

    def add(
        self,
        chunks: Sequence[EmbeddingChunk],
        vectors: ArrayLike,
        *,
        resource_id: str,
    ) -> int:
        """Index ``chunks`` of ``resource_id`` with one vector each; a known URI is replaced.

        ``vectors`` is a ``(len(chunks), dimension)`` array (normalised here). The
        chunk's ``uko_uri`` is its id; its ``content`` is what results return.
        """
        require_str("resource_id", resource_id)
        chunks = list(chunks)
        with self._lock:
            self._require_open()
            if not chunks:
                return 0
            matrix = self._as_matrix(vectors, len(chunks))
            latest: dict[str, int] = {}
            for position, chunk in enumerate(chunks):
                latest[require_str("uko_uri", chunk.uko_uri)] = position
            keep = sorted(latest.values())
            self._forget(self._ids_of(latest).values())
            if self._dimension is None:
                self._dimension = matrix.shape[1]
            uri_map = self._uri_map
            owned = (
                None
                if self._resource_map is None
                else self._resource_map.setdefault(resource_id, set())
            )
            for offset, position in enumerate(keep):
                vector_id = self._next_id + offset
                chunk = chunks[position]
                self._delta[vector_id] = matrix[position]
                self._entries[vector_id] = storage.Entry(
                    chunk.uko_uri, resource_id, str(chunk.content), str_metadata(chunk.metadata)
                )
                if uri_map is not None:
                    uri_map[chunk.uko_uri] = vector_id
                if owned is not None:
                    owned.add(vector_id)
            self._next_id += len(keep)
            self._resource_arrays.pop(resource_id, None)
            self._version += 1
            self._dirty = True
            self._after_writes()
            return len(keep)

    def update_metadata(self, changes: Mapping[str, Mapping[str, str]]) -> set[str]:
        """Merge new metadata into the entries of URIs (a moved node's lines), keeping
        their vectors: a commit writes them in the delta instead of the vectors again.
        Returns the URIs the index does not hold. A vector's resource is not metadata to
        change: it is added again under the other resource."""
        if any(key in m for m in changes.values() for key in RESOURCE_METADATA_KEYS):
            raise InvalidVectorQuery("update_metadata cannot move a vector to another resource")
        with self._lock:
            self._require_open()
            missing: set[str] = set()
            changed = 0
            held = self._ids_of([require_str("uko_uri", uri) for uri in changes])
            for uri, metadata in changes.items():
                vector_id = held.get(uri)
                entry = None if vector_id is None else self._entry(vector_id)
                if vector_id is None or entry is None:  # None: the base was lost reading it
                    missing.add(uri)
                    continue
                merged = {**(entry.metadata or {}), **str_metadata(metadata)}
                if merged == entry.metadata:
                    continue
                entry.metadata = merged
                changed += 1
                if vector_id < self._delta_start:
                    self._updated.add(vector_id)
            if changed:
                self._version += 1
                self._dirty = True
            return missing

    def delete_uris(self, uris: Iterable[str]) -> int:
        """Remove the vectors of ``uris`` (unknown ones are ignored); returns how many."""
        with self._lock:
            self._require_open()
            removed = self._forget(list(self._ids_of(set(uris)).values()))
            if removed:
                self._after_writes()
            return removed

    def delete_resource(self, resource_id: str) -> int:
        """Remove every vector of ``resource_id``; returns how many."""
        with self._lock:
            self._require_open()
            removed = self._forget(list(self._resource_ids.get(resource_id, ())))
            if removed:
                self._after_writes()
            return removed

    def clear(self) -> None:
        """Remove every vector (keeping embedder and dimension); ``commit()`` persists it."""
        with self._lock:
            self._require_open()
            self._empty(self._embedder, self._dimension)

    def reset(self, *, embedder: str | None, dimension: int | None) -> None:
        """Empty the index for a rebuild (``vector rebuild``); re-add everything, then commit."""
        if dimension is not None:
            positive_int("dimension", dimension)
        with self._lock:
            self._require_open()
            self.options = dataclasses.replace(self.options, embedder=embedder, dimension=dimension)
            self._empty(embedder, dimension)
            self.needs_rebuild = False
            self.corruption = None

    def _empty(self, embedder: str | None, dimension: int | None) -> None:
        generation = self._generation
        self._reset_state(dimension, embedder)
        self._generation = generation
        self._full_write = True
        self._dirty = True

    # -- the spec's single-document API (VectorIndexBackend) ---------------------------

    def index_embedding(
        self, project: str, doc_id: str, embedding: list[float], metadata: dict[str, Any]
    ) -> None:
        """Index one vector; ``metadata`` names its resource and may carry ``content``."""
        require_str("doc_id", doc_id)
        if isinstance(embedding, (str, bytes)) or len(embedding) == 0:
            raise InvalidVectorQuery("embedding must be a non-empty sequence of floats")
        resource = resource_of(metadata)
        chunk = EmbeddingChunk(doc_id, str(metadata.get("content", "")), str_metadata(metadata))
        self.add([chunk], [embedding], resource_id=resource)

    def remove_embedding(self, project: str, doc_id: str) -> None:
        """Remove one vector by its document id (its UKO URI)."""
        self.delete_uris([doc_id])

    # -- searching -------------------------------------------------------------------------

    def similarity_search(
        self,
        embedding: Sequence[float],
        *,
        scope: frozenset[str],
        top_k: int = 20,
        min_score: float = 0.0,
    ) -> list[VectorResult]:
        """The ``top_k`` vectors of resources in ``scope`` most similar to ``embedding``.

        Scores are cosine similarities clipped to [0, 1], descending (ties by URI).
        """
        if isinstance(top_k, bool) or not isinstance(top_k, int) or top_k < 1:
            raise InvalidVectorQuery(f"top_k must be a positive integer, got {top_k!r}")
        resources = require_scope(scope)
        with self._lock:
            self._require_open()
            query = self._query_vector(embedding)
            ids, count = self._scope_ids(resources)
            if count == 0:
                return []
            found_scores = self._search_everywhere(query, ids, resources, min(top_k, count))
            if found_scores is None:
                return []
            results = []
            for score, vector_id in zip(*found_scores, strict=True):
                entry = self._entry(vector_id)
                if entry is None:  # the base turned out corrupt and was set aside
                    return []
                clipped = min(1.0, max(0.0, float(score)))
                if not math.isfinite(clipped) or clipped < min_score:
                    continue
                metadata = {**(entry.metadata or {}), RESOURCE_METADATA_KEYS[0]: entry.resource_id}
                results.append(VectorResult(entry.uri, entry.content or "", clipped, metadata))
        results.sort(key=lambda r: (-r.score, r.uko_uri))
        return results

    def _search_everywhere(
        self, query: np.ndarray, ids: np.ndarray | None, resources: frozenset[str], k: int
    ) -> tuple[list[float], list[int]] | None:
        """The ``k`` best in-scope (scores, ids) over base and delta; None if the base is lost."""
        np = _numpy()
        if ids is None:
            base_ids, delta_ids = None, self._delta_arrays()[0]
            base_count = len(self._entries) - len(self._delta)
        else:
            split = int(np.searchsorted(ids, self._delta_start))
            base_ids, delta_ids = ids[:split], ids[split:]
            base_count = split
        parts = []
        if base_count:
            if not self._load_base():
                return None
            parts.append(self._search(query, base_ids, resources, min(k, base_count)))
        if len(delta_ids):
            parts.append(self._exact_delta(query, delta_ids, min(k, len(delta_ids))))
        if len(parts) == 1:
            scores, found = parts[0]
        else:
            scores = np.concatenate([p[0] for p in parts])
            found = np.concatenate([p[1] for p in parts])
            order = np.argsort(-scores, kind="stable")[:k]
            scores, found = scores[order], found[order]
        return scores.tolist(), found.tolist()

    def _scope_ids(self, resources: frozenset[str]) -> tuple[np.ndarray | None, int]:
        """(sorted in-scope ids, count); ids is None when the scope covers every resource."""
        np = _numpy()
        present = [r for r in resources if r in self._resource_ids]
        count = sum(len(self._resource_ids[r]) for r in present)
        if len(present) == len(self._resource_ids):
            return None, count
        arrays = []
        for resource in present:
            array = self._resource_arrays.get(resource)
            if array is None:
                array = np.array(sorted(self._resource_ids[resource]), dtype=np.int64)
                self._resource_arrays[resource] = array
            arrays.append(array)
        if len(arrays) == 1:
            return arrays[0], count
        return np.sort(np.concatenate(arrays)) if arrays else np.empty(0, np.int64), count

    def _base_live_ids(self) -> np.ndarray:
        start = self._delta_start
        return _numpy().array(sorted(i for i in self._entries if i < start), dtype="int64")

    def _selector(self, ids: np.ndarray | None, resources: frozenset[str]) -> Any:
        """A FAISS selector for the in-scope live base ids (None: no filter), cached per scope."""
        cached = self._scope_cache
        if cached is not None and cached[0] == self._version and cached[1] == resources:
            return cached[2]
        faiss = _faiss_module()
        holder: Any = None
        if ids is not None:
            selector = faiss.IDSelectorBatch(ids)
        elif self._tombstones:
            holder = faiss.IDSelectorBatch(_numpy().array(sorted(self._tombstones), dtype="int64"))
            selector = faiss.IDSelectorNot(holder)
        else:
            selector = None
        self._scope_cache = (self._version, resources, selector, holder)
        return selector

    def _search(
        self, query: np.ndarray, ids: np.ndarray | None, resources: frozenset[str], k: int
    ) -> tuple[np.ndarray, np.ndarray]:
        """(scores, ids) of the ``k`` best in-scope base vectors; exactly ``k`` of them.

        Small scopes are scored exactly over their own vectors; otherwise FAISS
        searches with an in-scope selector. An HNSW search that comes back short
        is retried with a four times wider beam, then answered exactly.
        """
        if ids is not None and len(ids) <= self.options.exact_scope_limit:
            return self._exact(query, ids, k)
        selector = self._selector(ids, resources)
        if self._structure == "flat":
            return self._faiss_search(query, k, selector)
        ef = max(self.options.hnsw_ef_search, 2 * k)
        while ef <= _MAX_EF_SEARCH:
            scores, found = self._faiss_search(query, k, selector, ef)
            if len(found) >= k:
                return scores, found
            ef *= 4
        return self._exact(query, self._base_live_ids() if ids is None else ids, k)

    def _faiss_search(
        self, query: np.ndarray, k: int, selector: Any, ef: int | None = None
    ) -> tuple[np.ndarray, np.ndarray]:
        faiss = _faiss_module()
        if self._structure == "hnsw":
            params = faiss.SearchParametersHNSW()
            params.efSearch = ef or self.options.hnsw_ef_search
        else:
            params = faiss.SearchParameters()
        if selector is not None:
            params.sel = selector
        # One query is searched on one thread: OpenMP's fork/join costs more than it saves
        # at these sizes, and far more when other processes share the cores.
        threads = faiss.omp_get_max_threads()
        faiss.omp_set_num_threads(1)
        try:
            scores, found = self._index.search(query, k, params=params)
        finally:
            faiss.omp_set_num_threads(threads)
        valid = found[0] >= 0
        return scores[0][valid], found[0][valid]

    def _exact_delta(
        self, query: np.ndarray, ids: np.ndarray, k: int
    ) -> tuple[np.ndarray, np.ndarray]:
        """Exact search of the delta; the whole delta is scored without copying it."""
        all_ids, matrix = self._delta_arrays()
        if len(ids) != len(all_ids):
            return self._exact(query, ids, k)
        return self._top(matrix @ query[0], all_ids, k)

    def _exact(self, query: np.ndarray, ids: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
        return self._top(self._vectors_of(ids) @ query[0], ids, k)

    @staticmethod
    def _top(scores: np.ndarray, ids: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
        np = _numpy()
        best = np.argpartition(-scores, k - 1)[:k] if k < len(scores) else np.arange(len(scores))
        order = best[np.argsort(-scores[best], kind="stable")]
        return scores[order], ids[order]

    # -- persistence -----------------------------------------------------------------------

    def commit(self) -> None:
        """Persist pending writes: a new delta, or the base written whole when compaction is due.

        Either way the previous generation stays valid until the new manifest replaces it.
        """
        with self._lock:
            self._require_open()
            if not self._dirty:
                return
            with storage.commit_lock(self.location):
                if self._dimension is None and not self._entries:
                    # Emptied with no dimension known: the folder holds no index at all.
                    (self.location / storage.MANIFEST_NAME).unlink(missing_ok=True)
                    sync_directory(self.location)
                    storage.remove_stale_files(self.location, set())
                    self._base = None
                elif self._compaction_due():
                    self._write_base()
                else:
                    self._write_delta()
            self._dirty = False

    def _write_base(self) -> None:
        """Fold the delta into the base index and write a whole new generation."""
        np = _numpy()
        if self._base is not None and not self._full_write:
            self._load_base()
        self._materialize()
        # From here the in-memory base holds the delta: until written, only a whole write will do.
        self._full_write = True
        if self._index is None:
            self._index = self._new_index(self._structure, int(self._dimension))  # type: ignore[arg-type]
            self._rows = None
        self._base_loaded = True
        if self._tombstones_due():
            self._rebuild(self._structure)
        self._own_base()
        if self._tombstones and self._structure == "flat":
            dead = np.array(sorted(self._tombstones), dtype=np.int64)
            self._index.remove_ids(_faiss_module().IDSelectorBatch(dead))
        if self._delta:
            ids, matrix = self._delta_arrays()
            self._index.add_with_ids(matrix, ids)
        tombstones = set() if self._structure == "flat" else set(self._tombstones)
        self._absorbed()
        self._tombstones = tombstones
        generation = self._generation + 1
        index_name, entries_name, keys_name = storage.generation_names(generation)
        names = (index_name, entries_name, keys_name)
        temporary = [self.location / f"{name}.tmp" for name in names]
        try:
            _faiss_module().write_index(self._index, str(temporary[0]))
            offsets = storage.write_entries(temporary[1], self._entries)
            storage.write_keys(temporary[2], self._entries, offsets)
            paths = [
                tmp.rename(self.location / name) for tmp, name in zip(temporary, names, strict=True)
            ]
            records = [storage.record_file(path) for path in paths]
            manifest = storage.Manifest(
                embedder=self._embedder,
                dimension=int(self._index.d),
                count=len(self._entries),
                index_type=self._structure,
                generation=generation,
                next_id=self._next_id,
                index_file=records[0],
                entries_file=records[1],
                tombstones=len(self._tombstones),
                keys_file=records[2],
                needs_rebuild=self.needs_rebuild,
            )
            self._publish(manifest)
        except BaseException:
            self._discard(temporary, names)
            raise
        for vector_id, offset in offsets.items():
            self._entries[vector_id].offset = offset
        self._close_content()
        self._checked = {record.name for record in records}
        self._base, self._base_count, self._full_write = manifest, len(self._entries), False
        self._base_dead = len(self._tombstones)
        self._legacy_keys, self._unordered_keys = None, False

    def _discard(self, temporary: list[Path], names: Sequence[str]) -> None:
        """Remove the files of a write that failed before its manifest was published."""
        for leftover in temporary:
            leftover.unlink(missing_ok=True)
        for name in names:
            (self.location / name).unlink(missing_ok=True)

    def _write_delta(self) -> None:
        """Write what changed since the base: its vectors, entries and removed ids."""
        base = self._base
        assert base is not None
        generation = self._generation + 1
        vectors_name, entries_name = storage.delta_names(generation)
        names = [vectors_name, entries_name]
        keys_record = base.keys_file
        rewrite = self._unordered_keys and isinstance(self._entries, storage.EntryTable)
        if (keys_record is None and self._legacy_keys is not None) or rewrite:
            names.append(storage.generation_names(base.generation)[2])
        temporary = [self.location / f"{name}.tmp" for name in names]
        try:
            ids, matrix = self._delta_arrays()
            with temporary[0].open("wb") as handle:
                _numpy().save(handle, matrix, allow_pickle=False)
            entries = self._entries_of(ids.tolist())
            updated = self._entries_of(self._updated)
            storage.write_delta_entries(temporary[1], self._deleted, entries, updated)
            if rewrite:  # the base's keys again, with the URI order
                cast(storage.EntryTable, self._entries).write_keys(temporary[2])
            elif len(temporary) == 3:
                legacy = self._legacy_keys or {}
                storage.write_keys(temporary[2], legacy, {i: e.offset for i, e in legacy.items()})
            paths = [
                tmp.rename(self.location / name) for tmp, name in zip(temporary, names, strict=True)
            ]
            records = [storage.record_file(path) for path in paths]
            if len(records) == 3:
                keys_record = records[2]
            manifest = dataclasses.replace(
                base,
                embedder=self._embedder,
                count=len(self._entries),
                generation=generation,
                next_id=self._next_id,
                keys_file=keys_record,
                base_count=self._base_count,
                delta_vectors=records[0],
                delta_entries=records[1],
                delta_start=self._delta_start,
                updated=len(self._updated),
                tombstones=self._base_dead + len(self._deleted),
                needs_rebuild=self.needs_rebuild,
            )
            self._publish(manifest)
        except BaseException:
            self._discard(temporary, names)
            raise
        self._checked.update(record.name for record in records)
        self._base = manifest
        self._legacy_keys, self._unordered_keys = None, False

    def _publish(self, manifest: storage.Manifest) -> None:
        """The commit point: replace the manifest, then remove files it no longer names."""
        sync_directory(self.location)
        storage.atomic_write_text(
            self.location / storage.MANIFEST_NAME,
            json.dumps(manifest.to_dict(), indent=2) + "\n",
        )
        self._generation = manifest.generation
        storage.remove_stale_files(self.location, set(manifest.file_names()))

    def rollback(self) -> None:
        """Discard writes since the last commit by reloading the committed files."""
        with self._lock:
            self._require_open()
            self._load()

    def close(self) -> None:
        """Commit pending writes (unless ``commit_on_close=False``) and release the index."""
        with self._lock:
            if self._closed:
                return
            try:
                if self._dirty and self.options.commit_on_close:
                    self.commit()
            finally:
                self._closed = True
                self._close_content()
                self._index = None
                self._rows = None
                self._delta = {}
                self._delta_cache = None

    def __enter__(self) -> FaissVectorBackend:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        """Commit on success, roll back on an exception, then close."""
        if exc_type is None:
            self.commit()
        elif not self._closed:
            self.rollback()
        self.close()

    def __repr__(self) -> str:
        return (
            f"FaissVectorBackend({str(self.location)!r}, embedder={self._embedder!r}, "
            f"dimension={self._dimension}, count={len(self._entries)}, index={self._structure})"
        )


def _numpy() -> Any:
    import numpy

    return numpy


def _faiss_module() -> Any:
    # Heavy (its native library, about 70 ms past numpy): imported when a base index is
    # read, built or searched, not for a commit that only writes the delta.
    import faiss

    return faiss


def _max_id(entries: Any) -> int:
    if isinstance(entries, storage.EntryTable):
        return entries.max_id()
    return max(entries, default=-1)
