"""NodeStore: every UKO node's renderings and provenance, current and retired.

The graph holds structure and the text index holds search fields; assembling a
context needs each node's text at several depths, which lives here, in one
SQLite file per project (``index/graph/<project>/nodes.db``). Renderings are
Zstandard-compressed JSON (rows written before hold zlib's, which are still read).
A node that changes or disappears is not deleted: its row gets ``is_current = 0``
and ``valid_until``, and the new version's row names it in ``revision_of`` (spec 000,
"Revision-Aware RDF").
"""

from __future__ import annotations

import hashlib
import json
import re
import sqlite3
import threading
import zlib
from collections.abc import Iterable, Iterator, Mapping, Sequence, Sized
from dataclasses import dataclass
from datetime import datetime
from json.encoder import encode_basestring_ascii as _json_string
from pathlib import Path
from typing import Any, NamedTuple

import zstandard

from cleveragents.models.ids import parse_instant
from cleveragents.models.uko import UKONode
from cleveragents_acms.analyzers._common import (
    DEFAULT_EXPORT,
    IMPLEMENTS_TRAIT,
    IMPORT_QUALNAME,
    PY_IMPORT,
    PY_REEXPORT,
    RUST_CRATE,
    RUST_IMPL,
    RUST_MODULE,
    RUST_USE,
    SCRIPT_EXPORT,
    SYMBOL,
    imported_module,
)

__all__ = [
    "STORES_WITH_GAPS",
    "NodeStore",
    "StoredFingerprint",
    "StoredNode",
    "content_digest",
    "moved_only",
    "node_blobs",
    "node_fingerprint",
    "same_as_earlier",
    "same_content",
]

_SCHEMA_VERSION = 1
_SCHEMA = """
CREATE TABLE IF NOT EXISTS nodes (
    uri TEXT NOT NULL,
    valid_from TEXT NOT NULL,
    valid_until TEXT,
    is_current INTEGER NOT NULL DEFAULT 1,
    revision_of TEXT,
    fingerprint TEXT NOT NULL,
    resource_id TEXT NOT NULL,
    path TEXT NOT NULL,
    start_line INTEGER NOT NULL,
    end_line INTEGER NOT NULL,
    uko_type TEXT NOT NULL,
    name TEXT NOT NULL,
    qualname TEXT NOT NULL,
    parent TEXT,
    language TEXT NOT NULL,
    renderings BLOB NOT NULL,
    properties TEXT NOT NULL,
    edges TEXT NOT NULL,
    PRIMARY KEY (uri, valid_from)
);
"""
#: The node types a refresh reads all of (:meth:`NodeStore.nodes_of_type`): Rust ``use``
#: declarations, JavaScript and TypeScript ``export … from`` and Python packages' ``from
#: m import a``, which names go through,
#: Rust crates' roots and modules, from which paths start and through which they go, and
#: Rust ``impl`` blocks, whose traits give types methods (:meth:`NodeStore.rust_trait_impls`).
LISTED_TYPES = (PY_REEXPORT, RUST_CRATE, RUST_IMPL, RUST_MODULE, RUST_USE, SCRIPT_EXPORT)
_LISTED = "uko_type IN ({})".format(", ".join(f"'{t}'" for t in LISTED_TYPES))
#: Python's import statements, re-exporting or not.
_IMPORTS = f"uko_type IN ('{PY_IMPORT}', '{PY_REEXPORT}')"
#: The lookups of current nodes, by name.
_INDEXES = {
    "nodes_current_uri": "nodes(uri) WHERE is_current = 1",
    "nodes_current_path": "nodes(resource_id, path) WHERE is_current = 1",
    "nodes_current_name": "nodes(name) WHERE is_current = 1",
    # Of the listed types only: a few rows, where a scan of the resource took 0.2 s.
    # The number goes up with every change of ``LISTED_TYPES`` (an index of other types
    # would not serve the query).
    "nodes_current_listed_4": (f"nodes(resource_id, uko_type) WHERE is_current = 1 AND {_LISTED}"),
    # Python's import statements by the module they import from (``import.<module>``):
    # what a refresh follows a name back through (:meth:`NodeStore.imports_from`).
    "nodes_current_imports": f"nodes(resource_id, qualname) WHERE is_current = 1 AND {_IMPORTS}",
}
#: Indexes of earlier versions, dropped when such a store is next written: the listed
#: types' before Rust crates, before Rust ``impl`` blocks, then before Python's re-exports.
_RETIRED_INDEXES = (
    "nodes_current_listed",
    "nodes_current_listed_types",
    "nodes_current_of_listed_types",
)
_CREATE_INDEXES = [f"CREATE INDEX IF NOT EXISTS {n} ON {on}" for n, on in _INDEXES.items()]
#: Modules past which :meth:`NodeStore.imports_from` reads all the resource's imports
#: at once rather than each module's by the index.
_MANY_MODULES = 2_000
#: Rows inserted into an empty table from which its indexes are built after the rows
#: rather than row by row (a fifth less CPU for the 262k rows of the 10k-file benchmark).
_BULK_ROWS = 10_000

#: Optional stores whose gaps are tracked (``index.<store>.backend = "none"``).
STORES_WITH_GAPS = ("graph", "vector")
_GAPS_TABLE = """
CREATE TABLE IF NOT EXISTS store_gaps (
    store TEXT NOT NULL,
    resource_id TEXT NOT NULL,
    PRIMARY KEY (store, resource_id)
)
"""
_WRITES_TABLE = """
CREATE TABLE IF NOT EXISTS store_writes (
    store TEXT NOT NULL,
    resource_id TEXT NOT NULL,
    PRIMARY KEY (store, resource_id)
)
"""

_COLUMNS = (
    "uri, valid_from, valid_until, is_current, revision_of, fingerprint, resource_id, path, "
    "start_line, end_line, uko_type, name, qualname, parent, language, renderings, "
    "properties, edges"
)


def content_digest(node: UKONode, encoded: tuple[bytes, str] | None = None) -> bytes:
    """The fingerprint's hash of all a node says but its edges (which name resolution may
    still rewrite): taken where the node is encoded, it lets the renderings go before the
    edges are known.

    ``encoded`` is the node's renderings and properties as :func:`node_blobs` encodes them
    (JSON), if already at hand. The properties count: a newer analyzer may find more in the
    same lines (``index --force``). So do the lines: a node moved by an edit above it is a
    new revision, or the store, the graph and the text index would keep its old lines.
    """
    return _placed(node, _span_digest(node, encoded or _encoded(node)))


def _span_digest(node: UKONode, encoded: tuple[bytes, str]) -> bytes:
    """The hash of what a node says but where it is (its line count only): the content
    hash of the fingerprints stored before lines and language counted."""
    renderings, properties = encoded
    digest = hashlib.blake2b(digest_size=16)
    for part in (
        node.uko_type,
        node.name,
        node.parent or "",
        str(node.end_line - node.start_line),
        properties,
    ):
        digest.update(part.encode())
        digest.update(b"\0")
    digest.update(renderings)
    return digest.digest()


def _placed(node: UKONode, span: bytes, lines: tuple[int, int] | None = None) -> bytes:
    """:func:`_span_digest` with the node's language and lines (or other ``lines``):
    :func:`content_digest`."""
    start, end = lines or (node.start_line, node.end_line)
    where = f"{node.language}\0{start}-{end}".encode()
    return hashlib.blake2b(span + where, digest_size=16).digest()


def _edges_digest(node: UKONode, seed: bytes = b"") -> hashlib.blake2b:
    """The hash of a node's edges, started from ``seed`` (the fingerprint's second half;
    with a span digest as seed, a whole fingerprint of the earlier kind)."""
    digest = hashlib.blake2b(seed, digest_size=16)
    for predicate, target in sorted(node.edges):
        digest.update(f"{predicate}\0{target}\0".encode())
    return digest


def node_fingerprint(node: UKONode, content: bytes | None = None) -> str:
    """Hash of what a node says: unchanged fingerprint means no new revision.

    ``content`` is the node's :func:`content_digest`, if taken before. The fingerprint is
    that digest's hex followed by the hash of the edges, so :func:`same_content` tells a
    node whose edges alone changed (its text document stays).
    """
    content = content or content_digest(node)
    return content.hex() + _edges_digest(node).hexdigest()


def same_content(fingerprint: str, content: bytes) -> bool:
    """Whether a stored :func:`node_fingerprint` is of a node with this
    :func:`content_digest` (fingerprints stored by earlier versions never are)."""
    return len(fingerprint) == 64 and fingerprint[:32] == content.hex()


def moved_only(stored: StoredFingerprint, node: UKONode, span: bytes | None) -> bool:
    """Whether a stored :func:`node_fingerprint` is of this node at other lines, saying
    the same (an edit above it moved it): what was made of its text, such as its vector,
    needs only its lines changed. ``span`` is as for :func:`same_as_earlier`."""
    if len(stored.fingerprint) != 64 or (stored.start_line, stored.end_line) == (
        node.start_line,
        node.end_line,
    ):
        return False
    span = span or _span_digest(node, _encoded(node))
    earlier = _placed(node, span, (stored.start_line, stored.end_line))
    return earlier.hex() == stored.fingerprint[:32]


def same_as_earlier(stored: StoredFingerprint, node: UKONode, span: bytes | None) -> bool:
    """Whether a fingerprint stored by an earlier version (half as long, without lines and
    language) is of this node at the same lines. ``span`` is the node's
    :func:`_span_digest` (from :func:`node_blobs`), or None to take it from the node.

    Kept so the first run of this version over an index does not revise every node of
    the files it analyses (every file, as the analyzers' versions changed); such a node's
    fingerprint is brought up to date in place (:meth:`NodeStore.set_fingerprints`).
    """
    if len(stored.fingerprint) != 32 or (stored.start_line, stored.end_line) != (
        node.start_line,
        node.end_line,
    ):
        return False
    span = span or _span_digest(node, _encoded(node))
    return _edges_digest(node, span).hexdigest() == stored.fingerprint


#: One encoder for every node: ``json.dumps`` with an option builds a new one per call.
_BY_DEPTH = json.JSONEncoder(sort_keys=True).encode


def _encoded(node: UKONode) -> tuple[bytes, str]:
    """A node's renderings (JSON, UTF-8, by ascending depth) and properties (JSON)."""
    return _BY_DEPTH(node.renderings).encode(), json.dumps(node.properties)


#: Zstandard level 1 compresses renderings as small as zlib's level 1 in a third of the
#: time, and decompresses them twice as fast.
_ZSTD_LEVEL = 1
_ZSTD_MAGIC = b"\x28\xb5\x2f\xfd"
#: Per thread: a (de)compression context is costly to make and may not be shared.
_codecs = threading.local()


def _compress(data: bytes) -> bytes:
    compressor = getattr(_codecs, "compressor", None)
    if compressor is None:
        compressor = _codecs.compressor = zstandard.ZstdCompressor(level=_ZSTD_LEVEL)
    return compressor.compress(data)


def _decompress(blob: bytes) -> bytes:
    if not blob.startswith(_ZSTD_MAGIC):
        return zlib.decompress(blob)  # a row written before the switch
    decompressor = getattr(_codecs, "decompressor", None)
    if decompressor is None:
        decompressor = _codecs.decompressor = zstandard.ZstdDecompressor()
    return decompressor.decompress(blob)


def node_blobs(node: UKONode) -> tuple[bytes, str, bytes, bytes]:
    """What the node store keeps of a node: its renderings (compressed JSON) and properties
    (JSON), and its :func:`content_digest` (and the span digest it is made from, which
    fingerprints of earlier versions hash). Pure, so the indexer computes them in its
    analysis workers, where the renderings are encoded once for both."""
    encoded = _encoded(node)
    span = _span_digest(node, encoded)
    return _compress(encoded[0]), encoded[1], _placed(node, span), span


def _columns(node: UKONode) -> tuple[bytes, str]:
    """The renderings and properties columns of a node whose blobs no worker made (its
    fingerprint took its own hash: no digest is needed here)."""
    renderings, properties = _encoded(node)
    return _compress(renderings), properties


def _edges_json(edges: Sequence[tuple[str, str]]) -> str:
    """``json.dumps(edges)``, the same text at a third of the cost (a cold index writes
    260k nodes' edges: 0.65 s of ``json.dumps``)."""
    if not edges:
        return "[]"
    return "[[" + "], [".join([_json_string(p) + ", " + _json_string(t) for p, t in edges]) + "]]"


class StoredFingerprint(NamedTuple):
    """What a refresh compares of a node's current version."""

    fingerprint: str
    valid_from: str
    start_line: int
    end_line: int


@dataclass(frozen=True)
class StoredNode:
    """One stored node version, with its lines and renderings."""

    node: UKONode
    valid_from: str
    valid_until: str | None
    is_current: bool
    revision_of: str | None
    fingerprint: str


#: The target of each edge in the stored JSON (``[["uko:dependsOn", "<target>"], …]``).
_EDGE_TARGET = re.compile(r', "([^"]*)"\]')


def _chunks(values: Sequence[Any]) -> Iterator[Sequence[Any]]:
    """``values`` 500 at a time: what one ``IN (...)`` list of a query holds."""
    for start in range(0, len(values), 500):
        yield values[start : start + 500]


#: The columns of a node without its renderings and edges (what resolving names needs).
_LIGHT = "uri, name, qualname, path, uko_type, start_line, end_line, resource_id, properties"


def _light_node(row: sqlite3.Row, **more: Any) -> UKONode:
    """The node of a row of the ``_LIGHT`` columns (and ``more`` fields)."""
    return UKONode(
        uri=row["uri"],
        uko_type=row["uko_type"],
        name=row["name"],
        path=row["path"],
        start_line=row["start_line"],
        end_line=row["end_line"],
        resource_id=row["resource_id"],
        qualname=row["qualname"],
        properties=json.loads(row["properties"]),
        **more,
    )


def _row_edges(row: sqlite3.Row) -> list[tuple[str, str]]:
    return [tuple(e) for e in json.loads(row["edges"])]


def _row_to_stored(row: sqlite3.Row) -> StoredNode:
    renderings = {int(k): v for k, v in json.loads(_decompress(row["renderings"])).items()}
    node = _light_node(
        row,
        parent=row["parent"],
        language=row["language"],
        renderings=renderings,
        edges=_row_edges(row),
    )
    return StoredNode(
        node,
        row["valid_from"],
        row["valid_until"],
        bool(row["is_current"]),
        row["revision_of"],
        row["fingerprint"],
    )


class NodeStore:
    """SQLite-backed store of node versions for one project."""

    def __init__(self, path: Path) -> None:
        self.path = path
        path.parent.mkdir(parents=True, exist_ok=True)
        self._db = sqlite3.connect(path, timeout=30, check_same_thread=False, isolation_level=None)
        self._db.row_factory = sqlite3.Row
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=NORMAL")
        self._indexed = False
        version = self._db.execute("PRAGMA user_version").fetchone()[0]
        if version not in (0, _SCHEMA_VERSION):
            raise RuntimeError(f"{path}: node store schema {version} is newer than this version")
        if version == 0:
            # Only a new store is written to here: a reader opening a store that an
            # indexer is writing must not queue behind its transaction.
            self._db.executescript(_SCHEMA + ";".join(_CREATE_INDEXES))
            self._db.execute(f"PRAGMA user_version={_SCHEMA_VERSION}")

    def close(self) -> None:
        self._db.close()

    # -- writing ------------------------------------------------------------------

    def begin(self) -> None:
        self._db.execute("BEGIN IMMEDIATE")
        if not self._indexed:  # a store made by an earlier version gains the newer ones
            for name in _RETIRED_INDEXES:
                self._db.execute(f"DROP INDEX IF EXISTS {name}")
            for statement in _CREATE_INDEXES:
                self._db.execute(statement)
            self._indexed = True

    def commit(self) -> None:
        self._db.execute("COMMIT")

    def rollback(self) -> None:
        if self._db.in_transaction:
            self._db.execute("ROLLBACK")

    def insert(
        self,
        nodes: Iterable[tuple[UKONode, str, str | None]],
        *,
        valid_from: str,
        blobs: Mapping[str, tuple[bytes, str, bytes, bytes]] | None = None,
    ) -> int:
        """Insert current versions: ``(node, fingerprint, revision_of_valid_from)``.

        ``blobs`` holds :func:`node_blobs` already computed, by node URI.
        """
        ready = blobs or {}
        bulk = isinstance(nodes, Sized) and len(nodes) >= _BULK_ROWS and self._is_empty()
        if bulk:  # in the caller's transaction, as is their rebuilding
            for name in _INDEXES:
                self._db.execute(f"DROP INDEX IF EXISTS {name}")
        rows = (
            (
                n.uri,
                valid_from,
                None,
                1,
                rev,
                fp,
                n.resource_id,
                n.path,
                n.start_line,
                n.end_line,
                n.uko_type,
                n.name,
                n.qualname,
                n.parent,
                n.language,
                *(ready[n.uri][:2] if n.uri in ready else _columns(n)),
                _edges_json(n.edges),
            )
            for n, fp, rev in nodes
        )
        cursor = self._db.executemany(
            f"INSERT OR REPLACE INTO nodes ({_COLUMNS}) VALUES ({','.join('?' * 18)})", rows
        )
        if bulk:
            for statement in _CREATE_INDEXES:
                self._db.execute(statement)
        return cursor.rowcount

    def _is_empty(self) -> bool:
        return self._db.execute("SELECT 1 FROM nodes LIMIT 1").fetchone() is None

    def retire(self, uris: Sequence[str], *, valid_until: str) -> int:
        """Mark the current versions of ``uris`` as no longer current."""
        cursor = self._db.executemany(
            "UPDATE nodes SET is_current = 0, valid_until = ? WHERE uri = ? AND is_current = 1",
            ((valid_until, uri) for uri in uris),
        )
        return cursor.rowcount

    def delete_resource(self, resource_id: str) -> int:
        self.clear_gaps(STORES_WITH_GAPS, [resource_id])
        if self._has_table("store_writes"):
            self._db.execute("DELETE FROM store_writes WHERE resource_id = ?", (resource_id,))
        return self._db.execute("DELETE FROM nodes WHERE resource_id = ?", (resource_id,)).rowcount

    # -- gaps: what an optional store (the graph, the vectors) missed while it was off --

    def mark_gap(self, store: str, resource_id: str) -> None:
        """Note that ``resource_id``'s nodes changed here while ``store`` was off, so that
        store is rebuilt from this one once it is back (in the writer's transaction)."""
        self._db.execute(_GAPS_TABLE)
        self._db.execute(
            "INSERT OR IGNORE INTO store_gaps (store, resource_id) VALUES (?, ?)",
            (store, resource_id),
        )

    def gaps(self, store: str) -> list[str]:
        """The resources whose nodes ``store`` lacks some of, sorted."""
        if not self._has_gaps_table():
            return []
        rows = self._db.execute(
            "SELECT resource_id FROM store_gaps WHERE store = ? ORDER BY resource_id", (store,)
        )
        return [str(row[0]) for row in rows]

    def clear_gaps(self, stores: Iterable[str], resource_ids: Iterable[str]) -> None:
        if not self._has_gaps_table():
            return
        self._db.executemany(
            "DELETE FROM store_gaps WHERE store = ? AND resource_id = ?",
            [(store, r) for store in stores for r in resource_ids],
        )

    def _has_gaps_table(self) -> bool:
        # Created by the first gap, so that a store written before it still opens read-only.
        return self._has_table("store_gaps")

    def _has_index(self, name: str) -> bool:
        row = self._db.execute(
            "SELECT 1 FROM sqlite_master WHERE type = 'index' AND name = ?", (name,)
        )
        return row.fetchone() is not None

    def _has_table(self, name: str) -> bool:
        row = self._db.execute(
            "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", (name,)
        )
        return row.fetchone() is not None

    # -- writes in flight: another store written ahead of this one -------------------

    def begin_writing(self, store: str, resource_id: str) -> bool:
        """Note, durably and before ``store`` is written, that a run writes
        ``resource_id``'s nodes there ahead of this store; :meth:`end_writing`, in the
        transaction that commits the run, takes the note back.

        Returns whether ``store`` agrees with this one: no earlier run left a note (it
        stopped between the two commits, so ``store`` may hold versions this one lacks),
        and some run has noted its writes here before (a store indexed by a version that
        kept no notes may be in that state without saying so).
        """
        if self._db.in_transaction:
            raise RuntimeError("begin_writing is its own commit: call it outside a transaction")
        agrees = (
            self._has_table("store_writes")
            and not self._db.execute(
                "SELECT 1 FROM store_writes WHERE store = ? AND resource_id = ?",
                (store, resource_id),
            ).fetchone()
        )
        # Synchronously: the other store's files may reach the disk before this
        # store's log would under ``synchronous=NORMAL``.
        self._db.execute("PRAGMA synchronous=FULL")
        try:
            self._db.execute(_WRITES_TABLE)
            self._db.execute(
                "INSERT OR IGNORE INTO store_writes (store, resource_id) VALUES (?, ?)",
                (store, resource_id),
            )
        finally:
            self._db.execute("PRAGMA synchronous=NORMAL")
        return agrees

    def end_writing(self, store: str, resource_id: str) -> None:
        if self._has_table("store_writes"):
            self._db.execute(
                "DELETE FROM store_writes WHERE store = ? AND resource_id = ?",
                (store, resource_id),
            )

    # -- reading ------------------------------------------------------------------

    def current_fingerprints(
        self, resource_id: str, paths: Iterable[str]
    ) -> dict[str, StoredFingerprint]:
        """``uri ->`` :class:`StoredFingerprint` of the current nodes of these files."""
        out: dict[str, StoredFingerprint] = {}
        # A cold index asks about thousands of files of a resource with no node yet.
        if not self._db.execute(
            "SELECT 1 FROM nodes WHERE resource_id = ? AND is_current = 1 LIMIT 1", (resource_id,)
        ).fetchone():
            return out
        for path in paths:
            for row in self._db.execute(
                "SELECT uri, fingerprint, valid_from, start_line, end_line FROM nodes "
                "WHERE resource_id = ? AND path = ? AND is_current = 1",
                (resource_id, path),
            ):
                out[row[0]] = StoredFingerprint(row[1], row[2], row[3], row[4])
        return out

    def set_fingerprints(self, fingerprints: Iterable[tuple[str, str]]) -> None:
        """Replace the fingerprints of current nodes, ``(uri, fingerprint)``, in place (no
        new version: what the node says is the same, only how it is hashed changed)."""
        self._db.executemany(
            "UPDATE nodes SET fingerprint = ? WHERE uri = ? AND is_current = 1",
            [(fingerprint, uri) for uri, fingerprint in fingerprints],
        )

    def get(self, uri: str) -> StoredNode | None:
        """The current version of ``uri``, else its latest retired version; for a revision
        IRI (``<uri>@<validFrom>``) the version that became valid then."""
        row = self._db.execute(
            f"SELECT {_COLUMNS} FROM nodes WHERE uri = ? "
            "ORDER BY is_current DESC, valid_from DESC LIMIT 1",
            (uri,),
        ).fetchone()
        return _row_to_stored(row) if row else self._revision(uri)

    def _revision(self, uri: str) -> StoredNode | None:
        """The version a revision IRI names. Temporal fragments write the stamp as stored
        (``+00:00``), the graph in xsd form (``Z``): instants are compared, not text."""
        base, sep, stamp = uri.rpartition("@")
        when = parse_instant(stamp) if sep and base else None
        if when is None:
            return None
        stamps = self._db.execute("SELECT valid_from FROM nodes WHERE uri = ?", (base,))
        match = next((row[0] for row in stamps if parse_instant(row[0]) == when), None)
        if match is None:
            return None
        row = self._db.execute(
            f"SELECT {_COLUMNS} FROM nodes WHERE uri = ? AND valid_from = ?", (base, match)
        ).fetchone()
        return _row_to_stored(row) if row else None

    def get_many(self, uris: Iterable[str]) -> dict[str, UKONode]:
        """Current nodes for ``uris`` (missing ones are left out)."""
        out: dict[str, UKONode] = {}
        uris = list(dict.fromkeys(uris))
        for chunk in _chunks(uris):
            query = (
                f"SELECT {_COLUMNS} FROM nodes WHERE is_current = 1 AND uri IN "
                f"({','.join('?' * len(chunk))})"
            )
            for row in self._db.execute(query, chunk):
                out[row["uri"]] = _row_to_stored(row).node
        return out

    def history(self, uri: str) -> list[StoredNode]:
        """Every stored version of ``uri``, oldest first."""
        rows = self._db.execute(
            f"SELECT {_COLUMNS} FROM nodes WHERE uri = ? ORDER BY valid_from", (uri,)
        )
        return [_row_to_stored(r) for r in rows]

    def at_time(self, when: datetime, resource_ids: Iterable[str]) -> list[StoredNode]:
        """Node versions valid at ``when`` (validFrom <= when < validUntil)."""
        stamp = when.isoformat()
        ids = list(resource_ids)
        rows = self._db.execute(
            f"SELECT {_COLUMNS} FROM nodes WHERE valid_from <= ? "
            "AND (valid_until IS NULL OR valid_until > ?) "
            f"AND resource_id IN ({','.join('?' * len(ids))})",
            (stamp, stamp, *ids),
        )
        return [_row_to_stored(r) for r in rows]

    def has_resource(self, resource_id: str) -> bool:
        """True when any version of a node of ``resource_id`` was ever committed here."""
        # A current node first, by the (resource, path) index; only a resource with none
        # left is looked for among retired versions, by a scan (0.17 s at 270k rows when
        # another resource's rows come first).
        for condition in ("is_current = 1 AND resource_id = ?", "resource_id = ?"):
            row = self._db.execute(f"SELECT 1 FROM nodes WHERE {condition} LIMIT 1", (resource_id,))
            if row.fetchone() is not None:
                return True
        return False

    def current_resources(self) -> list[str]:
        """The resources that have current nodes, sorted."""
        rows = self._db.execute("SELECT DISTINCT resource_id FROM nodes WHERE is_current = 1")
        return sorted(str(row[0]) for row in rows)

    def iter_current(self, resource_ids: Iterable[str]) -> Iterator[UKONode]:
        ids = list(resource_ids)
        rows = self._db.execute(
            f"SELECT {_COLUMNS} FROM nodes WHERE is_current = 1 "
            f"AND resource_id IN ({','.join('?' * len(ids))})",
            ids,
        )
        for row in rows:
            yield _row_to_stored(row).node

    def iter_current_files(self, resource_id: str) -> Iterator[list[UKONode]]:
        """The current nodes of ``resource_id``, one list per file, in path order (read
        along the index of current paths: nothing is sorted, one file is held at a time)."""
        rows = self._db.execute(
            f"SELECT {_COLUMNS} FROM nodes WHERE is_current = 1 AND resource_id = ? ORDER BY path",
            (resource_id,),
        )
        batch: list[UKONode] = []
        for row in rows:
            node = _row_to_stored(row).node
            if batch and batch[0].path != node.path:
                yield batch
                batch = []
            batch.append(node)
        if batch:
            yield batch

    def iter_current_versions(self, resource_id: str) -> Iterator[StoredNode]:
        """The current version of every node of ``resource_id``, oldest first."""
        # Sorted by row id, then read in chunks: sorting whole rows would sort their blobs.
        order = self._db.execute(
            "SELECT rowid FROM nodes WHERE is_current = 1 AND resource_id = ? "
            "ORDER BY valid_from, rowid",
            (resource_id,),
        ).fetchall()
        rowids = [row[0] for row in order]
        for chunk in _chunks(rowids):
            marks = ",".join("?" * len(chunk))
            rows = self._db.execute(
                f"SELECT rowid, {_COLUMNS} FROM nodes WHERE rowid IN ({marks})", chunk
            ).fetchall()
            by_id = {row["rowid"]: row for row in rows}
            for rowid in chunk:
                yield _row_to_stored(by_id[rowid])

    def modules_at(self, resource_ids: Iterable[str], paths: Iterable[str]) -> list[UKONode]:
        """The current module-level nodes (without renderings) of the files at ``paths``."""
        return self._light_nodes(
            "qualname = '' AND resource_id IN ({ids}) AND path", resource_ids, paths
        )

    def default_exports_at(
        self, resource_ids: Iterable[str], paths: Iterable[str]
    ) -> list[UKONode]:
        """The current nodes (without renderings) of the files at ``paths`` that a
        JavaScript or TypeScript ``export default`` marks (``DEFAULT_EXPORT``)."""
        return self._light_nodes(
            f"instr(properties, '\"{DEFAULT_EXPORT}\"') AND resource_id IN ({{ids}}) AND path",
            resource_ids,
            paths,
        )

    def nodes_at(self, resource_id: str, uris: Iterable[str]) -> list[UKONode]:
        """The current nodes (without renderings) ``uris`` of ``resource_id``."""
        return self._light_nodes("+resource_id IN ({ids}) AND uri", [resource_id], uris)

    def imports_from(self, resource_id: str, modules: Iterable[str]) -> list[UKONode]:
        """The current Python import statements (without renderings, re-exports too) of
        ``resource_id`` that import from one of the dotted ``modules``: ``from m import a``, whose
        qualified name is ``import.m`` (``import.m~2`` for a second one in its file)."""
        wanted = set(modules)
        if not wanted:
            return []
        if len(wanted) > _MANY_MODULES or (
            not self._indexed and not self._has_index("nodes_current_imports")
        ):
            # Many modules, or a store of an earlier version whose index comes with its
            # next write: one pass over the resource's imports, not a scan per module.
            rows = self._db.execute(
                f"SELECT {_LIGHT} FROM nodes WHERE is_current = 1 AND {_IMPORTS} "
                "AND resource_id = ?",
                (resource_id,),
            )
            return [_light_node(row) for row in rows if imported_module(row["qualname"]) in wanted]
        # ``import.m`` itself, then ``import.m~2`` on: two ranges of the index, not the
        # range of ``import.m`` on, which holds every import from below ``m`` too (7k of
        # the benchmark's 25k for ``django``, read to keep a hundred).
        select = (
            f"SELECT {_LIGHT} FROM nodes WHERE is_current = 1 AND {_IMPORTS} AND resource_id = ?"
        )
        query = f"{select} AND qualname = ? UNION ALL {select} AND qualname > ? AND qualname < ?"
        found: list[UKONode] = []
        for module in sorted(wanted):
            low = f"{IMPORT_QUALNAME}{module}"
            rows = self._db.execute(
                query, (resource_id, low, resource_id, f"{low}~", f"{low}~\U0010ffff")
            )
            found += map(_light_node, rows)
        return found

    def nodes_in_files(
        self, resource_id: str, paths: Iterable[str], uko_types: Iterable[str]
    ) -> list[UKONode]:
        """The current nodes (without renderings, with edges) of ``uko_types`` in the files
        ``paths``."""
        found: list[UKONode] = []
        wanted = sorted(set(paths))
        for chunk in _chunks(wanted):
            found += self._with_edges(
                f"path IN ({','.join('?' * len(chunk))})", chunk, resource_id, uko_types
            )
        return found

    def nodes_in_folders(
        self, resource_id: str, folders: Iterable[str], suffix: str, uko_types: Iterable[str]
    ) -> list[UKONode]:
        """The current nodes (without renderings, with edges) of ``uko_types`` in the
        ``suffix`` files right in ``folders`` (``""``: the resource's root), not in the
        folders below them."""
        found: list[UKONode] = []
        for folder in sorted(set(folders)):
            # The files of a folder sort between "folder/" and "folder0" ('0' follows '/').
            low, high = (f"{folder}/", f"{folder}0") if folder else ("", "\U0010ffff")
            nodes = self._with_edges("path >= ? AND path < ?", [low, high], resource_id, uko_types)
            found += [n for n in nodes if n.path.endswith(suffix) and "/" not in n.path[len(low) :]]
        return found

    def nodes_below(
        self, resource_id: str, folder: str, suffixes: tuple[str, ...]
    ) -> list[UKONode]:
        """The current nodes (without renderings) of the ``suffixes`` files anywhere below
        ``folder`` (``""``: the resource's root)."""
        low, high = (f"{folder}/", f"{folder}0") if folder else ("", "\U0010ffff")
        rows = self._db.execute(
            f"SELECT {_LIGHT} FROM nodes WHERE is_current = 1 AND resource_id = ? "
            "AND path >= ? AND path < ?",
            (resource_id, low, high),
        )
        return [_light_node(row) for row in rows if row["path"].endswith(suffixes)]

    def _with_edges(
        self, condition: str, args: Sequence[str], resource_id: str, uko_types: Iterable[str]
    ) -> list[UKONode]:
        types = sorted(set(uko_types))
        rows = self._db.execute(
            f"SELECT {_LIGHT}, edges FROM nodes WHERE is_current = 1 AND resource_id = ? "
            f"AND {condition} AND uko_type IN ({','.join('?' * len(types))})",
            (resource_id, *args, *types),
        )
        return [_light_node(row, edges=_row_edges(row)) for row in rows]

    def nodes_of_type(self, resource_id: str, uko_type: str) -> list[UKONode]:
        """The current nodes (without renderings) of one UKO type in ``resource_id``."""
        listed = f"{_LISTED} AND " if uko_type in LISTED_TYPES else ""  # by their index
        return self._light_nodes(
            f"resource_id IN ({{ids}}) AND {listed}uko_type", [resource_id], [uko_type]
        )

    def rust_trait_impls(self, resource_id: str) -> list[UKONode]:
        """The current ``impl Trait for Type`` blocks of ``resource_id`` (without
        renderings, with edges)."""
        return self._with_edges(
            f"{_LISTED} AND instr(edges, ?) > 0", [IMPLEMENTS_TRAIT], resource_id, [RUST_IMPL]
        )

    def nodes_named(self, resource_ids: Iterable[str], names: Iterable[str]) -> list[UKONode]:
        """Current nodes (without renderings) whose ``name`` is one of ``names``.

        Used to resolve ``symbol:`` edges: only the names a run needs are looked up.
        """
        # ``+resource_id``: look the names up by the name index. With one resource SQLite
        # would otherwise pick the (resource, path) index and read every node of the
        # resource: 0.2 s instead of 10 ms for one file of a 260k-node index.
        return self._light_nodes("+resource_id IN ({ids}) AND name", resource_ids, names)

    def paths_of(self, resource_id: str, uris: Iterable[str]) -> set[str]:
        """The files of the current nodes ``uris`` of ``resource_id``."""
        found: set[str] = set()
        wanted = sorted(set(uris))
        for chunk in _chunks(wanted):
            # ``+resource_id``: by the URI index, not every node of the resource (0.14 s
            # at 260k nodes).
            rows = self._db.execute(
                "SELECT DISTINCT path FROM nodes WHERE is_current = 1 AND +resource_id = ? "
                f"AND uri IN ({','.join('?' * len(chunk))})",
                (resource_id, *chunk),
            )
            found.update(row[0] for row in rows)
        return found

    def paths_pointing_to(self, resource_id: str, targets: Iterable[str]) -> set[str]:
        """Files of ``resource_id`` with a current node that has an edge to one of
        ``targets`` (node URIs, ``symbol:`` names): one scan of the resource's edges
        (about 0.3 s at 260k nodes), for when the graph cannot answer by its index."""
        wanted = frozenset(targets)
        if not wanted:
            return set()

        def points(edges: str) -> bool:
            return not wanted.isdisjoint(_EDGE_TARGET.findall(edges))

        self._db.create_function("ca_points", 1, points, deterministic=True)
        rows = self._db.execute(
            "SELECT DISTINCT path FROM nodes WHERE resource_id = ? AND is_current = 1 "
            "AND edges != '[]' AND ca_points(edges)",
            (resource_id,),
        )
        return {row[0] for row in rows}

    def paths_naming(
        self, resource_id: str, paths: Iterable[str], ends: tuple[str, ...]
    ) -> set[str]:
        """Those of ``paths`` with a current node that has an unresolved edge (a
        ``symbol:`` target) ending with one of ``ends``."""
        found: set[str] = set()
        wanted = sorted(set(paths))
        for chunk in _chunks(wanted):
            rows = self._db.execute(
                "SELECT path, edges FROM nodes WHERE resource_id = ? AND is_current = 1 "
                f"AND path IN ({','.join('?' * len(chunk))}) AND instr(edges, 'symbol:') > 0",
                (resource_id, *chunk),
            )
            found.update(
                path
                for path, edges in rows
                if path not in found
                and any(
                    t.startswith(SYMBOL) and t.endswith(ends) for t in _EDGE_TARGET.findall(edges)
                )
            )
        return found

    def _light_nodes(
        self, condition: str, resource_ids: Iterable[str], values: Iterable[str]
    ) -> list[UKONode]:
        """Current nodes (without renderings) where ``condition IN (values)`` holds, its
        ``{ids}`` standing for the resources; the values are asked 500 at a time."""
        ids, wanted = list(resource_ids), sorted(set(values))
        where = condition.format(ids=",".join("?" * len(ids)))
        found: list[UKONode] = []
        for chunk in _chunks(wanted):
            rows = self._db.execute(
                f"SELECT {_LIGHT} FROM nodes WHERE is_current = 1 "
                f"AND {where} IN ({','.join('?' * len(chunk))})",
                (*ids, *chunk),
            )
            found.extend(map(_light_node, rows))
        return found

    def edge_counts(self, resource_id: str) -> tuple[int, int]:
        """(edges, edges that reach a node) of the current nodes of ``resource_id``: the
        others are names no node answers (``symbol:…``), such as a library's."""
        edges = reaching = 0
        rows = self._db.execute(
            "SELECT edges FROM nodes WHERE is_current = 1 AND resource_id = ?", (resource_id,)
        )
        for (text,) in rows:
            found = json.loads(text or "[]")
            edges += len(found)
            reaching += sum(1 for _, target in found if not target.startswith(SYMBOL))
        return edges, reaching

    def count(self, resource_id: str | None = None, *, current_only: bool = True) -> int:
        where, args = [], []
        if current_only:
            where.append("is_current = 1")
        if resource_id:
            where.append("resource_id = ?")
            args.append(resource_id)
        clause = f" WHERE {' AND '.join(where)}" if where else ""
        return int(self._db.execute(f"SELECT count(*) FROM nodes{clause}", args).fetchone()[0])
