"""Indexed UKO nodes as context fragments: the real :class:`~cleveragents.protocols.NodeSource`.

:class:`NodeStoreSource` reads a project's :class:`NodeStore`, restricted to a
scope of resource ULIDs (and to the paths the project's context view allows),
and delivers any node at the richest rendering at or below the depth asked
for, with its exact token count, its provenance (resource, path, line range,
source hash) and the metadata the pipeline stages read (``is_current``,
``valid_from``, ``uko_type``, ``parent``, ``depends_on``).
:class:`NodeRenderer` re-renders a fragment at another depth for the packer's
depth fallback and the skeleton compressor.

Freshness: before a node is delivered, its file is checked against what was
indexed (:class:`FreshnessChecker`, once per file per assembly: size and
mtime first, the content hash only when they differ). A changed file is
analysed again in this process and the node with the same URI is delivered
from the current text (``metadata["refreshed"] = "true"``); when that is not
possible (the node is gone, the file was deleted, the analyzer failed, or
auto-refresh is off) the indexed text is delivered with ``metadata["stale"] =
"true"`` and a note. A context is never silently stale.

Secret-looking values are masked (the kernel's redaction) before tokens are
counted, so what is counted is what is delivered.
"""

from __future__ import annotations

import hashlib
import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sqlalchemy import select

from cleveragents.models.context import ContextFragment, FragmentProvenance
from cleveragents.models.uko import UKONode
from cleveragents.redaction import redact_text
from cleveragents_acms.indexing.tables import indexed_files

if TYPE_CHECKING:
    from cleveragents.protocols.text import Tokenizer
    from cleveragents_acms.indexing.store import NodeStore, StoredNode

__all__ = [
    "DEPENDS_ON_PREDICATES",
    "FileState",
    "FreshnessChecker",
    "IndexedRoot",
    "NodeRenderer",
    "NodeStoreSource",
]

#: Edges whose resolved targets become ``metadata["depends_on"]`` (uko:dependsOn and kin).
DEPENDS_ON_PREDICATES = frozenset(
    {
        "uko:dependsOn",
        "uko-code:imports",
        "uko-code:calls",
        "uko-oo:inheritsFrom",
        "uko-oo:implements",
    }
)
_MAX_DEPENDS_ON = 40
_MAX_DEPTH = 9


@dataclass(frozen=True)
class IndexedRoot:
    """Where one resource of the project is indexed: its status row and folder."""

    resource_id: str
    index_id: str
    root: Path
    name: str | None = None


@dataclass
class FileState:
    """What a file is now, compared with what was indexed."""

    status: str  # "fresh" | "refreshed" | "stale" | "unknown"
    reason: str = ""
    source_hash: str | None = None
    size: int | None = None
    #: The file's nodes analysed from its current text (status "refreshed").
    nodes: dict[str, UKONode] = field(default_factory=dict)


class FreshnessChecker:
    """Compares files with ``indexed_files``, once per file, and re-analyses changed ones.

    :param database: the core database holding ``indexed_files``.
    :param roots: resource ULID -> where it is indexed.
    :param analyzers: the analyzers to run on a changed file, most specific
        first (``None``: changed files are only flagged, never re-analysed).
    """

    def __init__(
        self,
        database: Any,
        roots: Mapping[str, IndexedRoot],
        analyzers: Sequence[Any] | Callable[[], Sequence[Any]] | None = None,
    ) -> None:
        self.database = database
        self.roots = dict(roots)
        self._analyzers = analyzers
        self._states: dict[tuple[str, str], FileState] = {}
        self._lock = threading.Lock()

    def analyzers(self) -> Sequence[Any] | None:
        if callable(self._analyzers):
            self._analyzers = list(self._analyzers())
        return self._analyzers

    def state(self, resource_id: str, path: str) -> FileState:
        key = (resource_id, path)
        with self._lock:
            known = self._states.get(key)
        if known is not None:
            return known
        state = self._check(resource_id, path)
        with self._lock:
            return self._states.setdefault(key, state)

    def states(self) -> dict[tuple[str, str], FileState]:
        with self._lock:
            return dict(self._states)

    def _record(self, root: IndexedRoot, path: str) -> Mapping[str, Any] | None:
        with self.database.engine.connect() as conn:
            return (
                conn.execute(
                    select(
                        indexed_files.c.content_hash,
                        indexed_files.c.size_bytes,
                        indexed_files.c.last_modified,
                    ).where(indexed_files.c.index_id == root.index_id, indexed_files.c.path == path)
                )
                .mappings()
                .first()
            )

    def _check(self, resource_id: str, path: str) -> FileState:
        root = self.roots.get(resource_id)
        if root is None:
            return FileState("unknown", "resource is not indexed in this project")
        record = self._record(root, path)
        indexed_hash = record["content_hash"] if record else None
        file = root.root / path
        try:
            stat = file.stat()
        except OSError:
            return FileState("stale", "the file no longer exists", indexed_hash)
        if record is None:
            return FileState("unknown", "file not recorded in the index", None, stat.st_size)
        if (
            str(stat.st_mtime_ns) == record["last_modified"]
            and stat.st_size == record["size_bytes"]
        ):
            return FileState("fresh", "", indexed_hash, stat.st_size)
        try:
            data = file.read_bytes()
        except OSError as exc:
            return FileState("stale", f"the file cannot be read: {exc.strerror or exc}")
        digest = hashlib.sha256(data).hexdigest()
        if digest == indexed_hash:
            return FileState("fresh", "", digest, len(data))
        analyzers = self.analyzers()
        if not analyzers:
            return FileState("stale", "the file changed since it was indexed", digest, len(data))
        from cleveragents_acms.indexing.analysis import analyze_one

        outcome = analyze_one(analyzers, str(root.root), path, resource_id)
        if outcome.analyzer is None or not outcome.result.nodes:
            problem = "; ".join(outcome.result.errors[:1]) or "no nodes"
            return FileState(
                "stale", f"the file changed and could not be analysed again ({problem})", digest
            )
        return FileState(
            "refreshed",
            "re-rendered from the file as it is now",
            outcome.content_hash,
            outcome.size,
            {n.uri: n for n in outcome.result.nodes},
        )


@dataclass(frozen=True)
class _Entry:
    node: UKONode
    valid_from: str | None
    valid_until: str | None
    is_current: bool
    #: Resolved dependsOn targets of the indexed version (edges of a re-analysed node are not).
    depends_on: tuple[str, ...] = ()


class NodeStoreSource:
    """A project's node store as a ``NodeSource``, restricted to ``scope``.

    :param store: the project's :class:`NodeStore`.
    :param scope: resource ULIDs the caller may see.
    :param tokenizer: counts each fragment's tokens exactly.
    :param freshness: checks files against the index (``None``: no checks).
    :param refresh: re-render changed files from their current text (else only flag them).
    :param path_allowed: the context view's path filter (``None``: every path).
    :param file_allowed: a size check on the source file (bytes; ``None`` when unknown).
    """

    def __init__(
        self,
        store: NodeStore,
        scope: Iterable[str],
        *,
        tokenizer: Tokenizer,
        freshness: FreshnessChecker | None = None,
        refresh: bool = True,
        path_allowed: Callable[[str], bool] | None = None,
        file_allowed: Callable[[int | None], bool] | None = None,
    ) -> None:
        self.store = store
        self.scope = frozenset(scope)
        self.tokenizer = tokenizer
        self.freshness = freshness
        self.refresh = refresh
        self.path_allowed = path_allowed or (lambda _path: True)
        self.file_allowed = file_allowed
        self._entries: dict[str, _Entry | None] = {}
        self._counts: dict[str, int] = {}
        self._lock = threading.Lock()
        self._notes: list[str] = []
        #: Texts this source delivered, secrets already masked.
        self._masked: set[str] = set()

    # -- the NodeSource Protocol ---------------------------------------------------------

    def fragment(
        self, uri: str, depth: int, *, relevance: float = 0.5, strategy: str = ""
    ) -> ContextFragment | None:
        """The node at the richest rendering <= ``depth``, token-counted; None if unknown."""
        entry = self._entry(uri)
        if entry is None:
            return None
        node, metadata, source_hash = self._deliverable(entry)
        depth = max(0, int(depth))
        rendered_depth = max((d for d in node.renderings if d <= depth), default=0)
        content = redact_text(node.rendering(depth))
        self._masked.add(content)
        start = max(1, node.start_line)
        provenance = FragmentProvenance(
            resource_id=node.resource_id,
            path=node.path,
            start_line=start,
            end_line=max(start, node.end_line),
            strategy=strategy,
            source_hash=source_hash,
            indexed_at=_parse(entry.valid_from),
        )
        return ContextFragment(
            uko_node=uri,
            content=content,
            detail_depth=min(_MAX_DEPTH, rendered_depth),
            token_count=self._count(content),
            relevance_score=min(1.0, max(0.0, float(relevance))),
            provenance=provenance,
            metadata=metadata,
        )

    def nodes(self, uris: Sequence[str]) -> Mapping[str, UKONode]:
        """Current in-scope nodes by URI (unknown or out-of-scope URIs are left out).

        These are the nodes as indexed, for ranking and structure; the text a
        strategy delivers comes from :meth:`fragment`, which checks freshness.
        """
        wanted = [u for u in dict.fromkeys(uris) if u not in self._entries]
        if wanted:
            found = self.store.get_many(wanted)
            with self._lock:
                for uri in wanted:
                    node = found.get(uri)
                    if node is None:
                        continue  # perhaps retired: _entry() looks it up when a fragment is asked
                    if not self._visible(node):
                        self._entries[uri] = None
                    elif uri not in self._entries:
                        self._entries[uri] = _Entry(node, None, None, True, _depends_on(node.edges))
        out: dict[str, UKONode] = {}
        for uri in uris:
            entry = self._entries.get(uri)
            if entry is not None and entry.is_current:
                out[uri] = entry.node
        return out

    # -- beyond the Protocol ------------------------------------------------------------

    def node(self, uri: str) -> UKONode | None:
        """The node as it would be delivered (current text when its file changed)."""
        entry = self._entry(uri)
        return None if entry is None else self._deliverable(entry)[0]

    def history(self, uri: str) -> list[StoredNode]:
        """Every stored version of ``uri`` in scope, oldest first (temporal strategies)."""
        return [v for v in self.store.history(uri) if self._visible(v.node)]

    def delivered(self, content: str) -> bool:
        """Whether ``content`` is a text this source produced (already masked)."""
        return content in self._masked

    @property
    def notes(self) -> list[str]:
        """Freshness notes collected so far (one per file)."""
        with self._lock:
            return list(self._notes)

    def file_size(self, resource_id: str, path: str) -> int | None:
        if self.freshness is None:
            return None
        return self.freshness.state(resource_id, path).size

    # -- internals ------------------------------------------------------------------------

    def _visible(self, node: UKONode) -> bool:
        if node.resource_id not in self.scope or not self.path_allowed(node.path):
            return False
        if self.file_allowed is None:
            return True
        return self.file_allowed(self.file_size(node.resource_id, node.path))

    def _entry(self, uri: str) -> _Entry | None:
        if not isinstance(uri, str) or not uri:
            return None
        with self._lock:
            if uri in self._entries:
                cached = self._entries[uri]
                if cached is None or cached.valid_from is not None:
                    return cached
        stored = self.store.get(uri)
        if stored is None or not self._visible(stored.node):
            with self._lock:
                self._entries[uri] = None
            return None
        entry = _Entry(
            stored.node,
            stored.valid_from,
            stored.valid_until,
            stored.is_current,
            _depends_on(stored.node.edges),
        )
        with self._lock:
            self._entries[uri] = entry
        return entry

    def _deliverable(self, entry: _Entry) -> tuple[UKONode, dict[str, str], str | None]:
        """The node to deliver, its metadata and the hash of the text it comes from."""
        node = entry.node
        metadata = {
            "uko_type": node.uko_type,
            "name": node.name,
            "is_current": "true" if entry.is_current else "false",
        }
        for key, value in (
            ("qualname", node.qualname),
            ("language", node.language),
            ("parent", node.parent),
            ("valid_from", entry.valid_from),
            ("valid_until", entry.valid_until),
            ("depends_on", " ".join(entry.depends_on)),
        ):
            if value:
                metadata[key] = value
        source_hash = None
        if self.freshness is not None and entry.is_current:
            state = self.freshness.state(node.resource_id, node.path)
            source_hash = state.source_hash
            if state.status == "refreshed":
                current = state.nodes.get(node.uri)
                if current is not None and self.refresh:
                    metadata["refreshed"] = "true"
                    self._note(f"{node.path} changed since it was indexed; re-rendered from disk")
                    return current, metadata, state.source_hash
                reason = (
                    "the node is no longer in the changed file"
                    if current is None
                    else "the file changed since it was indexed (auto-refresh is off)"
                )
                metadata.update(stale="true", stale_reason=reason)
                self._note(f"{node.path}: {reason}; delivered as indexed (stale)")
            elif state.status == "stale":
                metadata.update(stale="true", stale_reason=state.reason)
                self._note(f"{node.path}: {state.reason}; delivered as indexed (stale)")
        return node, metadata, source_hash

    def _note(self, message: str) -> None:
        with self._lock:
            if message not in self._notes:
                self._notes.append(message)

    def _count(self, text: str) -> int:
        count = self._counts.get(text)
        if count is None:
            count = self._counts[text] = self.tokenizer.count(text)
        return count


class NodeRenderer:
    """Re-renders a fragment's node at another depth (an ``assembly.FragmentRenderer``)."""

    def __init__(self, source: NodeStoreSource) -> None:
        self.source = source

    def render(self, fragment: ContextFragment, depth: int) -> ContextFragment | None:
        rendered = self.source.fragment(
            fragment.uko_node,
            depth,
            relevance=fragment.relevance_score,
            strategy=fragment.provenance.strategy,
        )
        if rendered is None:
            return None
        metadata = {**fragment.metadata, **rendered.metadata}
        if len(metadata) > 64:
            metadata = dict(list(metadata.items())[:64])
        return fragment.model_copy(
            update={
                "content": rendered.content,
                "detail_depth": rendered.detail_depth,
                "token_count": rendered.token_count,
                "provenance": rendered.provenance,
                "metadata": metadata,
            }
        )


def _depends_on(edges: Iterable[tuple[str, str]]) -> tuple[str, ...]:
    targets = [t for p, t in edges if p in DEPENDS_ON_PREDICATES and not t.startswith("symbol:")]
    return tuple(dict.fromkeys(targets))[:_MAX_DEPENDS_ON]


def _parse(stamp: str | None) -> datetime | None:
    if not stamp:
        return None
    try:
        return datetime.fromisoformat(stamp)
    except ValueError:
        return None
