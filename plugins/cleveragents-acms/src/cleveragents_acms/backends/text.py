"""Full-text search over UKO nodes with Tantivy (BM25), persisted per project.

One Tantivy document per UKO node. Fields (boost) and how they are indexed:

* ``name_key`` (6): the name without case or separators, raw (exact identifier);
* ``name`` (3), ``qualname`` (2.5), ``signature`` (2), ``path`` (1.5): text plus
  the sub-words and joined form of each compound identifier;
* ``docstring`` (1.2), ``body`` (1): words split at camel-case boundaries,
  English stop words removed, stemmed.

``uri``, ``resource_id`` and ``res_path`` are raw keys for filtering and
deletion. The body (``node.rendering(9)``) is indexed but not stored: the node
store keeps renderings; a result's ``content`` is a short stored snippet (the
signature-depth rendering).

Queries are built programmatically from terms (never through Tantivy's query
parser), so user text cannot break them: one dis-max clause per query word (and
sub-word) over the fields, so the best field counts and documents matching more
words rank higher; the resource scope is a filter clause
inside the query, so ``max_results`` in-scope hits come back. Scores are BM25
mapped into [0, 1) by ``raw / (best_raw + 2)``: ordering is preserved, the best
hit of a strong match scores near 1, a weak one well below.

Queries share one long-lived reader; it is reloaded before each search (about
60 µs) so commits by another process are seen at once. Writes go through one
Tantivy writer opened on demand and released at
``commit()``/``rollback()``, so the directory lock is only held while a batch is
open. ``index_document``/``remove_document`` (the spec's single-document API)
are committed lazily by the next ``search``; bulk batches (``add_nodes`` …)
are only committed by ``commit()``.
"""

from __future__ import annotations

import functools
import json
import threading
from collections.abc import Callable, Iterable
from json.encoder import encode_basestring_ascii as _json_string
from pathlib import Path
from typing import Any

import tantivy

from cleveragents.errors import ConfigurationError
from cleveragents.models.uko import DEPTH_FULL, DEPTH_SIGNATURES, UKONode
from cleveragents.protocols.backends import TextResult
from cleveragents_acms.backends._validation import (
    require_positive,
    require_scope,
    require_text,
)
from cleveragents_acms.backends.identifiers import (
    NestedTextSplitter,
    expand_identifiers,
    identifier_key,
    query_variants,
    split_camel_case,
)

__all__ = ["FIELD_BOOSTS", "RESOURCE_METADATA_KEY", "TantivyTextBackend"]

SCHEMA_VERSION = 1
_MARKER = "cleveragents-text.json"
#: Metadata key naming a document's resource (the kernel's convention);
#: ``resource_ulid`` is accepted as an alias and also set on results.
RESOURCE_METADATA_KEY = "resource_id"

_IDENT = "ca_ident"
_WORDS = "ca_words"
_MAX_TOKEN = 80
_SCORE_DAMPING = 2.0
_SECONDARY_WEIGHT = 0.5
_TIE_BREAKER = 0.2

#: Field -> boost of the text fields a query searches.
FIELD_BOOSTS: dict[str, float] = {
    "name": 3.0,
    "qualname": 2.5,
    "signature": 2.0,
    "path": 1.5,
    "docstring": 1.2,
    "body": 1.0,
}
_KEY_BOOST = 6.0
_IDENT_FIELDS = ("name", "qualname", "signature", "path")
_WORD_FIELDS = ("docstring", "body")


def _schema() -> tantivy.Schema:
    builder = tantivy.SchemaBuilder()
    for raw in ("uri", "resource_id", "project", "uko_type", "language"):
        builder.add_text_field(raw, stored=True, tokenizer_name="raw", index_option="basic")
    for raw in ("res_path", "doc_key", "name_key"):
        builder.add_text_field(raw, stored=False, tokenizer_name="raw", index_option="freq")
    for name in _IDENT_FIELDS:
        builder.add_text_field(name, stored=False, tokenizer_name=_IDENT, index_option="freq")
    for name in _WORD_FIELDS:
        builder.add_text_field(name, stored=False, tokenizer_name=_WORDS, index_option="freq")
    builder.add_integer_field("start_line", stored=True)
    builder.add_integer_field("end_line", stored=True)
    builder.add_bytes_field("snippet", stored=True, indexed=False)
    builder.add_bytes_field("extra", stored=True, indexed=False)
    return builder.build()


def _analyzers() -> dict[str, tantivy.TextAnalyzer]:
    def base() -> tantivy.TextAnalyzerBuilder:
        return (
            tantivy.TextAnalyzerBuilder(tantivy.Tokenizer.simple())
            .filter(tantivy.Filter.remove_long(_MAX_TOKEN))
            .filter(tantivy.Filter.lowercase())
        )

    return {
        _IDENT: base().build(),
        _WORDS: base()
        .filter(tantivy.Filter.stopword("english"))
        .filter(tantivy.Filter.stemmer("english"))
        .build(),
    }


def node_fields(
    node: UKONode, split_body: Callable[[str], str] = split_camel_case
) -> dict[str, Any]:
    """The analysed search fields of a node's document (the costly part of indexing it).

    ``split_body`` is :func:`split_camel_case` or, for the nodes of one file, a
    :class:`NestedTextSplitter` (same result, nested bodies split once).
    """
    properties = node.properties
    return {
        "name_key": identifier_key(node.name),
        "name": expand_identifiers(node.name),
        "qualname": expand_identifiers(node.qualname),
        "signature": expand_identifiers(properties.get("signature", "")),
        "path": _expanded_path(node.path),
        "docstring": split_camel_case(properties.get("docstring", "")),
        "body": split_body(node.rendering(DEPTH_FULL)),
        "extra": _display(node.path, node.name, node.qualname),
    }


@functools.lru_cache(maxsize=4096)
def _expanded_path(path: str) -> str:
    # Every node of a file has its path: expanded once per file.
    return expand_identifiers(path)


class TantivyTextBackend:
    """TextBackend + TextIndexBackend over a Tantivy index at ``location``.

    :param heap_size: memory budget of the writer in bytes (bigger = fewer segments).
    :param num_threads: indexing threads (0: one per core, at most 8). One by default:
        building a document in Python takes longer than Tantivy takes to index it, so
        one thread keeps up with the indexer, whose analysis workers have every core;
        each further thread only adds CPU time (its own segments, merged later: on the
        10k-file benchmark, two threads cost 15 % more CPU than one).
    :param snippet_chars: how much of the signature-depth rendering a result carries.
    """

    #: ``commit()`` may run in a thread of its own while other threads go on: Tantivy lets
    #: go of the GIL while it writes its segments, and the lock keeps other calls waiting
    #: until it ends. The indexer commits this way beside name resolution.
    commits_in_background = True

    def __init__(
        self,
        location: Path | str,
        *,
        heap_size: int = 256_000_000,
        num_threads: int = 1,
        snippet_chars: int = 600,
    ) -> None:
        self.location = Path(location)
        self.location.mkdir(parents=True, exist_ok=True)
        self._heap_size = heap_size
        self._num_threads = num_threads
        self._snippet_chars = snippet_chars
        self._lock = threading.RLock()
        self._writer: tantivy.IndexWriter | None = None
        self._bulk_pending = False
        self._single_pending = False
        self._index = self._open()
        self._schema = self._index.schema
        self._analyzers = _analyzers()
        for name, analyzer in self._analyzers.items():
            self._index.register_tokenizer(name, analyzer)
        self._index.config_reader(reload_policy="commit")

    # -- opening ------------------------------------------------------------------

    def _open(self) -> tantivy.Index:
        marker = self.location / _MARKER
        if tantivy.Index.exists(str(self.location)):
            version = None
            if marker.exists():
                version = json.loads(marker.read_text(encoding="utf-8")).get("schema")
            if version != SCHEMA_VERSION:
                raise ConfigurationError(
                    f"the text index at {self.location} has schema version {version}, "
                    f"this version needs {SCHEMA_VERSION}: delete the folder and re-index"
                )
            return tantivy.Index.open(str(self.location))
        index = tantivy.Index(_schema(), path=str(self.location), reuse=False)
        marker.write_text(json.dumps({"schema": SCHEMA_VERSION}), encoding="utf-8")
        return index

    def _writer_for_write(self) -> tantivy.IndexWriter:
        if self._writer is None:
            try:
                self._writer = self._index.writer(self._heap_size, self._num_threads)
            except ValueError as exc:
                raise ConfigurationError(
                    f"the text index at {self.location} is being written by another process: {exc}"
                ) from exc
        return self._writer

    # -- bulk write API (used by the indexer) ---------------------------------------

    def add_nodes(self, nodes: Iterable[UKONode]) -> int:
        """Queue one document per node; nothing is visible until :meth:`commit`.

        Pass one file's nodes per call: their nested bodies are split once.
        """
        count = 0
        split_body = NestedTextSplitter()
        with self._lock:
            writer = self._writer_for_write()
            self._bulk_pending = True
            for node in nodes:
                writer.add_document(self._node_document(node, split_body))
                count += 1
        return count

    def _node_document(self, node: UKONode, split_body: Callable[[str], str]) -> tantivy.Document:
        snippet = (
            node.rendering(DEPTH_SIGNATURES) or node.properties.get("signature", "") or node.name
        )
        # Typed by the schema: untyped, each value is tried as text, integer, float, date
        # and facet before the bytes it is (a third of the document's cost).
        return tantivy.Document.from_dict(
            {
                "uri": node.uri,
                "resource_id": node.resource_id,
                "res_path": f"{node.resource_id}/{node.path}",
                "doc_key": node.uri,
                "uko_type": node.uko_type,
                "language": node.language,
                "start_line": node.start_line,
                "end_line": node.end_line,
                "snippet": snippet[: self._snippet_chars].encode("utf-8", "replace"),
                **node_fields(node, split_body),
            },
            self._schema,
        )

    def delete_paths(self, resource_id: str, paths: Iterable[str]) -> None:
        """Queue deletion of every document of ``paths`` in ``resource_id``."""
        with self._lock:
            writer = self._writer_for_write()
            self._bulk_pending = True
            for path in paths:
                writer.delete_documents_by_term("res_path", f"{resource_id}/{path}")

    def delete_nodes(self, uris: Iterable[str]) -> None:
        """Queue deletion of the documents of these node URIs."""
        with self._lock:
            writer = self._writer_for_write()
            self._bulk_pending = True
            for uri in uris:
                writer.delete_documents_by_term("doc_key", uri)

    def clear(self) -> None:
        """Queue the deletion of every document; the old ones stay searchable until
        :meth:`commit`, and :meth:`rollback` keeps them. Unlike deleting documents one by
        one, it leaves no replaced document in the term statistics."""
        with self._lock:
            writer = self._writer_for_write()
            self._bulk_pending = True
            writer.delete_all_documents()

    def delete_resource(self, resource_id: str) -> None:
        """Queue deletion of every document of ``resource_id``."""
        with self._lock:
            writer = self._writer_for_write()
            self._bulk_pending = True
            writer.delete_documents_by_term("resource_id", resource_id)

    def commit(self) -> None:
        """Make every queued change durable and visible, then release the writer."""
        with self._lock:
            if self._writer is None:
                return
            self._writer.commit()
            self._writer = None
            self._bulk_pending = self._single_pending = False
            self._index.reload()

    def rollback(self) -> None:
        """Drop every change queued since the last commit."""
        with self._lock:
            writer, self._writer = self._writer, None
            self._bulk_pending = self._single_pending = False
            if writer is not None:
                # Let go of the writer even if this fails (its folder deleted under it): a
                # second rollback of a broken writer panics in Tantivy.
                writer.rollback()

    def count(self, resource_id: str | None = None) -> int:
        """Committed documents, of one resource or all."""
        self._commit_single_writes()
        self._index.reload()
        searcher = self._index.searcher()
        if resource_id is None:
            return int(searcher.num_docs)
        query = tantivy.Query.term_query(self._schema, "resource_id", resource_id)
        found = searcher.search(query, limit=1, count=True)
        return int(getattr(found, "count", 0) or 0)

    def replaced_count(self) -> int:
        """Committed documents deleted or replaced but still in their segments: Tantivy
        counts them in each term's document frequency (so in BM25) until a merge drops
        them, which is why a refresh rewrites only the documents that changed."""
        meta = json.loads((self.location / "meta.json").read_text(encoding="utf-8"))
        return sum(
            int((segment.get("deletes") or {}).get("num_deleted_docs", 0))
            for segment in meta.get("segments", ())
        )

    def close(self) -> None:
        """Commit pending single-document writes; drop an open bulk batch."""
        with self._lock:
            writer, self._writer = self._writer, None
            if writer is not None:
                if self._bulk_pending:
                    writer.rollback()
                else:
                    writer.commit()

    # -- TextIndexBackend (spec 000 "Custom Index Backends") ------------------------

    def index_document(
        self, project: str, doc_id: str, content: str, metadata: dict[str, Any]
    ) -> None:
        """Index (or replace) one free-form document; visible to the next search.

        Only ``content`` is searched; ``metadata`` is kept and returned with
        results (its ``resource_id`` names the resource, for scope).
        """
        require_text("doc_id", doc_id)
        metadata = dict(metadata or {})
        resource = str(metadata.get(RESOURCE_METADATA_KEY) or metadata.get("resource_ulid") or "")
        path = str(metadata.get("path", ""))
        document = tantivy.Document(
            uri=doc_id,
            resource_id=resource,
            project=project,
            res_path=f"{resource}/{path}",
            doc_key=_doc_key(project, doc_id),
            body=split_camel_case(content or ""),
            uko_type=str(metadata.get("uko_type", "")),
            language=str(metadata.get("language", "")),
            snippet=(content or "").encode("utf-8", "replace"),
            extra=json.dumps({str(k): str(v) for k, v in metadata.items()}).encode("utf-8"),
        )
        with self._lock:
            writer = self._writer_for_write()
            writer.delete_documents_by_term("doc_key", _doc_key(project, doc_id))
            writer.add_document(document)
            self._single_pending = True

    def remove_document(self, project: str, doc_id: str) -> None:
        """Remove a document added by :meth:`index_document` (or a node, by URI)."""
        with self._lock:
            writer = self._writer_for_write()
            writer.delete_documents_by_term("doc_key", _doc_key(project, doc_id))
            writer.delete_documents_by_term("doc_key", doc_id)
            self._single_pending = True

    def rebuild_index(self, project: str) -> None:
        """Commit what is pending and reclaim the space of deleted documents."""
        with self._lock:
            writer = self._writer_for_write()
            writer.commit()
            writer.garbage_collect_files()
            self._writer = None
            self._bulk_pending = self._single_pending = False
            self._index.reload()

    def _commit_single_writes(self) -> None:
        if self._single_pending and not self._bulk_pending:
            self.commit()

    # -- TextBackend ------------------------------------------------------------------

    def search(
        self, query: str, *, scope: frozenset[str], max_results: int = 20
    ) -> list[TextResult]:
        """BM25 search restricted to ``scope``; scores in [0, 1), best first."""
        require_text("query", query)
        require_positive("max_results", max_results)
        scope = require_scope(scope)
        if not scope:
            return []
        text_query = self._build_query(query)
        if text_query is None:
            return []
        self._commit_single_writes()
        scope_filter = tantivy.Query.const_score_query(
            tantivy.Query.term_set_query(self._schema, "resource_id", sorted(scope)), 0.0
        )
        combined = tantivy.Query.boolean_query(
            [(tantivy.Occur.Must, text_query), (tantivy.Occur.Must, scope_filter)]
        )
        self._index.reload()  # ~60 µs: sees commits of other writers at once
        searcher = self._index.searcher()
        hits = searcher.search(combined, limit=max_results + 10, count=False).hits
        if not hits:
            return []
        top = max(float(score) for score, _ in hits)
        results: list[TextResult] = []
        seen: set[str] = set()
        for score, address in hits:
            document = searcher.doc(address)
            uri = document.get_first("uri") or ""
            if not uri or uri in seen:
                continue
            seen.add(uri)
            normalised = max(0.0, min(1.0, float(score) / (top + _SCORE_DAMPING)))
            results.append(_result(uri, document, normalised))
            if len(results) == max_results:
                break
        results.sort(key=lambda r: -r.score)
        return results

    def _analyzer_for(self, field: str) -> tantivy.TextAnalyzer:
        return self._analyzers[_IDENT if field in _IDENT_FIELDS else _WORDS]

    def _build_query(self, query: str) -> tantivy.Query | None:
        primary, secondary, keys = query_variants(query)
        clauses: list[tuple[tantivy.Occur, tantivy.Query]] = []
        strong = list(dict.fromkeys(primary.split()))
        weak = [w for w in dict.fromkeys(secondary.split()) if w not in strong]
        seen: set[tuple[str, ...]] = set()
        for words, weight in ((strong, 1.0), (weak, _SECONDARY_WEIGHT)):
            for word in words:
                # One clause per query word: the best field counts (dis-max), so a
                # name repeated in name, qualname and signature is not counted thrice
                # and documents matching more words rank higher.
                per_field = [
                    (field, term)
                    for field in FIELD_BOOSTS
                    for term in dict.fromkeys(self._analyzer_for(field).analyze(word))
                ]
                signature = tuple(f"{f}\x00{t}" for f, t in per_field)
                if not per_field or signature in seen:
                    continue
                seen.add(signature)
                alternatives = [
                    tantivy.Query.boost_query(
                        tantivy.Query.term_query(self._schema, field, term, "freq"),
                        FIELD_BOOSTS[field] * weight,
                    )
                    for field, term in per_field
                ]
                clauses.append(
                    (
                        tantivy.Occur.Should,
                        tantivy.Query.disjunction_max_query(alternatives, _TIE_BREAKER),
                    )
                )
        for key in keys:
            clause = tantivy.Query.term_query(self._schema, "name_key", key, "freq")
            clauses.append((tantivy.Occur.Should, tantivy.Query.boost_query(clause, _KEY_BOOST)))
        if not clauses:
            return None
        return tantivy.Query.boolean_query(clauses)


def _doc_key(project: str, doc_id: str) -> str:
    return f"{project}\x1f{doc_id}"


def _result(uri: str, document: tantivy.Document, score: float) -> TextResult:
    raw_snippet = document.get_first("snippet")
    content = bytes(raw_snippet).decode("utf-8", "replace") if raw_snippet else ""
    metadata: dict[str, str] = {}
    extra = document.get_first("extra")
    if extra:
        metadata.update(json.loads(bytes(extra).decode("utf-8")))
    for field in ("uko_type", "language"):
        value = document.get_first(field)
        if value and field not in metadata:
            metadata[field] = str(value)
    resource = document.get_first("resource_id") or ""
    metadata[RESOURCE_METADATA_KEY] = resource
    metadata["resource_ulid"] = resource
    for field in ("start_line", "end_line"):
        value = document.get_first(field)
        if value is not None:
            metadata[field] = str(value)
    return TextResult(uko_uri=uri, content=content, score=score, metadata=metadata)


def _display(path: str, name: str, qualname: str) -> bytes:
    """The metadata a node result shows, stored as JSON (the indexed fields are expanded).

    The same bytes as ``json.dumps`` of the dict, a quarter of its cost (once per node).
    """
    return (
        f'{{"path": {_json_string(path)}, "name": {_json_string(name)}, '
        f'"qualname": {_json_string(qualname)}}}'
    ).encode()
