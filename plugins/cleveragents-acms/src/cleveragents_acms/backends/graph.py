"""UKO triples in a persisted pyoxigraph store: scoped SPARQL, traversal and revisions.

Layout (named graphs)
---------------------
* ``urn:cleveragents:graph:<ULID>``: the *current* triples of every node whose
  ``uko:sourceResource`` is that resource. A node's stable URI (from
  ``cleveragents.models.uko.node_uri``) always denotes its current version.
* ``urn:cleveragents:graph:<ULID>:history``: retired versions of that
  resource's nodes (see below).
* ``urn:cleveragents:project:<project>``: triples added through the generic
  ``add_triple`` whose subject belongs to no resource. Like the kernel's
  in-memory backend, these shared triples are visible in every scope.

A scoped SPARQL query runs against a dataset made only of the scope's graphs
(``default_graph`` = the scope's current graphs plus the shared ones,
``named_graphs`` likewise), so no query text (``FROM``, ``GRAPH <…>``) can reach
another resource. Federated ``SERVICE`` calls are refused.

Revisions (spec 000 "Revision-Aware RDF")
-----------------------------------------
Retiring a node moves its triples from the current graph into the history
graph under a *revision IRI* ``<uri>@<validFrom>`` (``@`` never occurs in node
URIs, which percent-encode it) with ``uko:isCurrent false``, ``uko:validUntil``
and ``dcterms:isVersionOf <uri>``. Its successor (the same URI re-added, or
another URI named in ``successor_uris``) carries ``uko:isRevisionOf`` pointing
to the revision IRI, so the chain is ``uri -> uri@t2 -> uri@t1``. Adding a node
whose URI is already current revises it the same way, except that its current
triples change only where the new version differs. When a node is revised
in place its outgoing ``uko:contains`` links stay in the current graph (its
unchanged children still exist); a node retired without successor, or renamed
to another URI, also loses the incoming ``uko:contains`` of its parent.
``query_at_time(T)`` returns the triples of every version with
``validFrom <= T < validUntil``, with subjects mapped back to the stable URI.

Node triples
------------
Per node: ``rdf:type``, ``uko:name``, ``uko:qualifiedName``, ``uko:language``,
``uko:sourceResource`` (the ULID as a literal, the kernel's convention),
``uko:sourcePath``, ``uko:sourceRange`` (``"15:1-87:0"``), ``uko:validFrom``,
``uko:isCurrent true``, ``<parent> uko:contains <node>``, one triple per
property (``signature`` -> ``uko-code:signature``, ``docstring`` ->
``uko-code:docstring``, ``decorators`` -> ``uko-py:decorators``, a CURIE key
as given, any other key in the ``uko:`` namespace) and one per edge. Edge
targets the indexer could not resolve stay IRIs of the ``symbol:`` scheme
(``symbol:os.path``): they are valid IRIs, shared by every node that names the
same symbol, and have no triples of their own (traversal treats them as leaves).

Results are strings: an IRI as itself, a literal as its lexical value, a blank
node as ``_:id``.
"""

from __future__ import annotations

import contextlib
import json
import shutil
import tempfile
import threading
import time
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any, BinaryIO, TypeVar
from urllib.parse import quote

import pyoxigraph as ox

from cleveragents.errors import CleverAgentsError, ConfigurationError
from cleveragents.models.ids import parse_instant
from cleveragents.models.uko import UKONode
from cleveragents.protocols.backends import GraphResult
from cleveragents_acms.backends._validation import (
    InvalidArgumentError,
    require_depth,
    require_scope,
    require_text,
)
from cleveragents_acms.ontology.namespaces import UKO

if TYPE_CHECKING:
    from cleveragents.models.context import TemporalScope
    from cleveragents_acms.backends.graph_loader import BackgroundLoad


__all__ = [
    "GRAPH_BASE",
    "PROJECT_BASE",
    "OxigraphGraphBackend",
    "current_graph",
    "history_graph",
    "revision_iri",
]

from cleveragents_acms.backends._rdf import (
    _DATETIME,
    _FALSE,
    _HISTORY,
    _N,
    _VERSION_OF,
    DCTERMS,
    GRAPH_BASE,
    PREFIXES,
    PROJECT_BASE,
    RDF_TYPE,
    XSD,
    _data_block,
    _expand,
    _graph_str,
    _history_of,
    _is_current_graph,
    _is_history,
    _lexical,
    _literal,
    _looks_like_iri,
    _object_term,
    _predicate_term,
    _property_iri,
    _reject_service,
    _safe_iri,
    _subject_or_none,
    _subject_term,
    _term_str,
    _triple,
    current_graph,
    history_graph,
    revision_iri,
)

#: A write-ahead log larger than this is flushed when a writer closes the store (see
#: ``OxigraphGraphBackend.close``): replaying 4 MB takes about 0.1 s.
_FLUSH_LOG_BYTES = 4 << 20

#: Allocators the background loader's process can run with.
LOADER_ALLOCATORS = ("mimalloc", "system")

_T = TypeVar("_T")

#: The folders of the store's copies made for a query at a time (beside the store) ...
_COPY_PREFIX = ".at-"
#: ... and the graph of such a copy that holds the retired versions valid at the time.
_AT_TIME_GRAPH = "urn:cleveragents:at-time"
#: A copy older than this was left by a process that stopped before removing it.
_STALE_COPY_SECONDS = 3600


class OxigraphGraphBackend:
    """GraphBackend + GraphIndexBackend over a pyoxigraph store at ``location``.

    :param bulk_threshold: batches with at least this many triples use the
        non-transactional bulk loader (fast, writes new files); smaller ones a
        transactional load.
    :param recent_window_hours: how far back ``TemporalScope.RECENT`` reaches
        (``context.tiers.warm.retention-hours``).
    :param read_only: open without taking the store's lock (for readers while no
        other process writes; writes then raise ConfigurationError).
    :param loader_allocator: the memory allocator of the background loader's process:
        ``"mimalloc"`` (preloaded when the ``cmeel-mimalloc`` wheel is installed, on
        Linux; see ``graph_loader``) or ``"system"``.
    """

    #: The indexer may build it in a thread of its own while it opens its other stores:
    #: pyoxigraph opens the store without holding the GIL, and the store is used from any
    #: thread after.
    opens_in_background = True

    def __init__(
        self,
        location: Path | str,
        *,
        bulk_threshold: int = 20_000,
        recent_window_hours: float = 24.0,
        read_only: bool = False,
        loader_allocator: str = "mimalloc",
    ) -> None:
        if loader_allocator not in LOADER_ALLOCATORS:
            raise ConfigurationError(
                f"unknown loader_allocator {loader_allocator!r} "
                f"(available: {', '.join(LOADER_ALLOCATORS)})"
            )
        self.loader_allocator = loader_allocator
        self.location = Path(location)
        self.location.mkdir(parents=True, exist_ok=True)
        self._bulk_threshold = bulk_threshold
        self._recent_window = timedelta(hours=recent_window_hours)
        self._lock = threading.RLock()
        self.read_only = read_only
        try:
            self._store: ox.Store | None = (
                ox.Store.read_only(str(self.location))
                if read_only
                else ox.Store(str(self.location))
            )
        except OSError as exc:
            raise ConfigurationError(
                f"cannot open the graph store at {self.location} "
                f"(is another process using it?): {exc}"
            ) from exc
        self._shared: set[str] = {
            g.value
            for g in self.store.named_graphs()
            if isinstance(g, ox.NamedNode) and g.value.startswith(PROJECT_BASE)
        }

    @property
    def store(self) -> ox.Store:
        if self._store is None:
            raise ConfigurationError(f"the graph store at {self.location} is closed")
        return self._store

    def _writable(self) -> ox.Store:
        if self.read_only:
            raise ConfigurationError(f"the graph store at {self.location} is open read-only")
        return self.store

    # -- node API (used by the indexer) ---------------------------------------------

    def add_nodes(
        self, nodes: Iterable[UKONode], *, valid_from: datetime, fresh: bool = False
    ) -> int:
        """Add the current version of each node; an already current URI is revised.

        ``fresh=True`` promises that no URI is current (the caller retired them
        first), which skips one lookup per node: a third of a cold load.
        Returns the number of triples written.
        """
        self._writable()
        stamp = _lexical(valid_from)
        nodes = list(nodes)
        with self._lock:
            revised = {} if fresh else self._revised_uris(nodes, stamp)
            count = 0
            if revised:
                # The revised go through a transaction of their own; the new ones load
                # as usual (in bulk, for a big batch).
                count = self._revise([n for n in nodes if n.uri in revised], stamp, revised)
                nodes = [n for n in nodes if n.uri not in revised]
            parts: list[str] = []
            added = _TriGWriter(stamp, parts).write(nodes)
            self._load_trig("".join(parts), added)
        return count + added

    def node_trig(self, nodes: Iterable[UKONode], valid_from: datetime, out: list[str]) -> int:
        """Append the TriG text of the current version of ``nodes`` to ``out``; returns the
        number of quads it holds."""
        return _TriGWriter(_lexical(valid_from), out).write(nodes)

    def load_in_background(self) -> BackgroundLoad:
        """Hand the store to a child process for a bulk load of fresh nodes.

        The store is closed here until ``finish()`` (see ``graph_loader``).
        """
        self._writable()
        from cleveragents_acms.backends.graph_loader import BackgroundLoad

        return BackgroundLoad(self)

    def _revised_uris(self, nodes: list[UKONode], stamp: str) -> dict[str, ox.Quad]:
        """The URIs among ``nodes`` that are current since before ``stamp``, to revise,
        each with its current ``validFrom`` quad (which :meth:`_retire_one` then need not
        read again: about a tenth of a revision's time).

        A URI current since ``stamp`` itself (written twice by one run) loses its
        triples without a revision: it is written again as it is now.
        """
        store = self.store
        graphs: dict[str, bool] = {}
        replace: list[ox.Quad] = []
        revise: dict[str, ox.Quad] = {}
        valid_from = _N["validFrom"]
        for node in nodes:
            graph = current_graph(node.resource_id)
            if graph not in graphs:
                graphs[graph] = store.contains_named_graph(ox.NamedNode(graph))
            if not graphs[graph]:
                continue
            subject = ox.NamedNode(node.uri)
            start = next(
                (
                    q
                    for q in store.quads_for_pattern(subject, valid_from, None, None)
                    if _is_current_graph(q.graph_name)
                ),
                None,
            )
            if start is None:
                continue
            if _term_str(start.object) == stamp:
                replace.extend(
                    q
                    for q in store.quads_for_pattern(subject, None, None, start.graph_name)
                    if q.predicate != _N["isRevisionOf"]
                )
            else:
                revise[node.uri] = start
        for quad in replace:
            store.remove(quad)
        return revise

    def _revise(self, nodes: list[UKONode], stamp: str, starts: Mapping[str, ox.Quad]) -> int:
        """Write ``nodes``, each a new version of a current one; returns the number of
        triples of the new versions.

        Each old version is copied into history whole, but the current graph only
        loses the triples the new version no longer has and gains the ones it adds:
        an edit above a function moves it, and of its dozen or more triples only
        ``sourceRange`` and ``validFrom`` change. Deleting and adding every triple
        wrote twice as many. ``starts``: each URI's current ``validFrom`` quad.
        """
        # The TriG writer is what says which triples a node has: its text, parsed back.
        parts: list[str] = []
        count = _TriGWriter(stamp, parts).write(nodes)
        data = "".join(parts).encode("utf-8", "replace")
        new = list(ox.parse(input=data, format=ox.RdfFormat.TRIG, lenient=True))
        revised = list(dict.fromkeys(n.uri for n in nodes))
        targets = {ox.NamedNode(uri) for uri in revised}
        new_of: dict[str, set[ox.Quad]] = {uri: set() for uri in revised}
        for quad in new:
            if quad.subject in targets:
                new_of[quad.subject.value].add(quad)  # type: ignore[union-attr]
        until = ox.Literal(stamp, datatype=_DATETIME)
        moves = _Moves()
        kept: set[ox.Quad] = set()
        for uri in revised:
            self._retire_one(uri, until, uri, moves, keep=new_of[uri], kept=kept, start=starts[uri])
        moves.inserts.extend(q for q in new if q not in kept)
        self._apply(moves)
        return count

    def _load_trig(self, text: str, count: int) -> None:
        if not count:
            return
        data = text.encode("utf-8", "replace")
        if count >= self._bulk_threshold:
            self.store.bulk_load(input=data, format=ox.RdfFormat.TRIG, lenient=True)
        else:
            self.store.load(input=data, format=ox.RdfFormat.TRIG, lenient=True)

    def retire(
        self,
        uris: Iterable[str],
        *,
        valid_until: datetime,
        successor_uris: Mapping[str, str] | Collection[str] | None = None,
    ) -> int:
        """Move the current version of each URI into history; returns how many were current.

        ``successor_uris`` is either a mapping retired URI -> successor URI, or a
        collection of retired URIs whose successor keeps the same URI (a node
        revised in place; add its new version with :meth:`add_nodes` afterwards).
        """
        self._writable()
        if successor_uris is None:
            successors: dict[str, str] = {}
        elif isinstance(successor_uris, Mapping):
            successors = {str(k): str(v) for k, v in successor_uris.items()}
        else:
            successors = {str(u): str(u) for u in successor_uris}
        until = ox.Literal(_lexical(valid_until), datatype=_DATETIME)
        retired = 0
        with self._lock:
            moves = _Moves()
            for uri in dict.fromkeys(uris):
                if self._retire_one(uri, until, successors.get(uri), moves):
                    retired += 1
                # Read every version first, then write: reads after writes are slower
                # (7,293 nodes retired in 5,000s: 6.3 s applying every 50k moves, 5.1 s
                # once per call).
                if len(moves) > 500_000:
                    self._apply(moves)
                    moves = _Moves()
            self._apply(moves)
        return retired

    def _retire_one(
        self,
        uri: str,
        until: ox.Literal,
        successor: str | None,
        moves: _Moves,
        *,
        keep: Collection[ox.Quad] = (),
        kept: set[ox.Quad] | None = None,
        start: ox.Quad | None = None,
    ) -> bool:
        """Queue the move of ``uri``'s current version into history; False if not current.

        ``keep``: triples of the new version (revised in place) to leave where they
        are; those found are added to ``kept``. ``start``: the version's ``validFrom``
        quad, when the caller read it already.
        """
        store = self.store
        subject = ox.NamedNode(uri)
        if start is None:
            start = next(
                (
                    q
                    for q in store.quads_for_pattern(subject, _N["validFrom"], None, None)
                    if _is_current_graph(q.graph_name)
                ),
                None,
            )
            if start is None:
                return False
        graph = start.graph_name
        history = _history_of(graph)
        revision = ox.NamedNode(revision_iri(uri, _term_str(start.object)))
        in_place = successor == uri
        # Bound once: this loop runs for every triple of every version a run retires.
        copy, delete, quad_of = moves.copies.append, moves.deletes.append, ox.Quad
        is_current, contains = _N["isCurrent"], _N["contains"]
        for quad in store.quads_for_pattern(subject, None, None, graph):
            predicate = quad.predicate
            if predicate != is_current:
                copy(quad_of(revision, predicate, quad.object, history))
            if quad in keep:
                if kept is not None:
                    kept.add(quad)
            elif not (in_place and predicate == contains):
                delete(quad)
        copy(quad_of(revision, is_current, _FALSE, history))
        copy(quad_of(revision, _VERSION_OF, subject, history))
        moves.inserts.append(ox.Quad(revision, _N["validUntil"], until, history))
        if successor:
            successor_graph = graph if in_place else (self._graph_of(successor) or graph)
            moves.inserts.append(
                ox.Quad(ox.NamedNode(successor), _N["isRevisionOf"], revision, successor_graph)
            )
        if not in_place:
            moves.deletes.extend(store.quads_for_pattern(None, contains, subject, graph))
        return True

    def _apply(self, moves: _Moves) -> None:
        """Copy the retired versions into history, then change the current graphs and
        end those versions in one transaction (a SPARQL update).

        The copies go first, on their own (adding them directly costs half what a
        SPARQL update does, and a batch of ``bulk_threshold`` or more goes through the
        bulk loader): a run stopped between the two leaves the current graphs as they
        were, and versions without ``validUntil`` that no query at a time takes; the
        run that redoes the change writes the same copies again.
        """
        if len(moves.copies) >= self._bulk_threshold:
            self.store.bulk_extend(moves.copies)
        elif moves.copies:
            self.store.extend(moves.copies)
        if not moves.inserts and not moves.deletes:
            return
        # DATA blocks cannot hold blank nodes; those (rare) quads go one by one.
        deleted, blank_deletes = _data_block(moves.deletes)
        inserted, blank_inserts = _data_block(moves.inserts)
        for quad in blank_deletes:
            self.store.remove(quad)
        if blank_inserts:
            self.store.extend(blank_inserts)
        parts: list[str] = []
        if deleted:
            parts.append(f"DELETE DATA {{ {deleted} }}")
        if inserted:
            parts.append(f"INSERT DATA {{ {inserted} }}")
        if parts:
            self.store.update(" ; ".join(parts))

    def _graph_of(self, uri: str) -> ox.NamedNode | None:
        for quad in self.store.quads_for_pattern(
            ox.NamedNode(uri), _N["sourceResource"], None, None
        ):
            if _is_current_graph(quad.graph_name):
                return ox.NamedNode(_graph_str(quad.graph_name))
        return None

    def subjects_pointing_to(self, resource_id: str, targets: Iterable[str]) -> set[str]:
        """The current nodes of ``resource_id`` with an edge to one of ``targets`` (node
        URIs or ``symbol:`` names), looked up by object: what a refresh must analyse again
        when those nodes go or those names come."""
        graph = ox.NamedNode(current_graph(resource_id))
        found: set[str] = set()
        with self._lock:
            for target in targets:
                try:
                    term = ox.NamedNode(_safe_iri(target))
                except ValueError:
                    continue
                for quad in self.store.quads_for_pattern(None, None, term, graph):
                    # A parent's ``contains`` is in the child's own file: not a reference.
                    if isinstance(quad.subject, ox.NamedNode) and quad.predicate != _N["contains"]:
                        found.add(quad.subject.value)
        return found

    def has_resource(self, resource_id: str) -> bool:
        """True when the resource has current nodes in this store."""
        return self.store.contains_named_graph(ox.NamedNode(current_graph(resource_id)))

    def delete_resource(self, resource_id: str) -> None:
        """Drop every triple of ``resource_id``, current and historical."""
        self._writable()
        with self._lock:
            for graph in (current_graph(resource_id), history_graph(resource_id)):
                node = ox.NamedNode(graph)
                if self.store.contains_named_graph(node):
                    self.store.remove_graph(node)

    def count(self, resource_id: str | None = None, *, include_history: bool = True) -> int:
        """Number of stored triples (quads), of one resource or of the whole store."""
        if resource_id is None:
            return len(self.store)
        graphs = [current_graph(resource_id)]
        if include_history:
            graphs.append(history_graph(resource_id))
        total = 0
        for graph in graphs:
            result = self.store.query(
                f"SELECT (COUNT(*) AS ?n) WHERE {{ GRAPH <{graph}> {{ ?s ?p ?o }} }}"
            )
            assert isinstance(result, ox.QuerySolutions)
            total += int(_term_str(next(iter(result))["n"]))
        return total

    # -- GraphIndexBackend (spec 000 "Custom Index Backends") -----------------------

    def add_triple(self, project: str, subject: str, predicate: str, obj: str) -> None:
        """Add one triple; it joins its subject's resource graph, else the project's."""
        require_text("subject", subject)
        require_text("predicate", predicate)
        require_text("obj", obj)
        self._writable()
        s = _subject_term(subject)
        p = _predicate_term(predicate)
        with self._lock:
            if p == _N["sourceResource"]:
                graph = ox.NamedNode(current_graph(obj))
                self._adopt(s, graph)
                self.store.add(ox.Quad(s, p, ox.Literal(obj), graph))
                return
            owner = self._graph_of(subject) if isinstance(s, ox.NamedNode) else None
            if owner is None:
                owner = ox.NamedNode(PROJECT_BASE + quote(project or "", safe=""))
                self._shared.add(owner.value)
            self.store.add(ox.Quad(s, p, _object_term(obj), owner))

    def _adopt(self, subject: Any, graph: ox.NamedNode) -> None:
        """Move ``subject``'s shared triples into its resource graph."""
        for name in list(self._shared):
            for quad in list(self.store.quads_for_pattern(subject, None, None, ox.NamedNode(name))):
                self.store.remove(quad)
                self.store.add(ox.Quad(quad.subject, quad.predicate, quad.object, graph))

    def remove_triples(
        self, project: str, subject: str | None, predicate: str | None, obj: str | None
    ) -> None:
        """Remove matching triples from the project's graph and the current resource graphs."""
        self._writable()
        s = _subject_term(subject) if subject else None
        p = _predicate_term(predicate) if predicate else None
        wanted = {obj, _expand(obj)} if obj is not None else None
        own = PROJECT_BASE + quote(project or "", safe="")
        with self._lock:
            doomed = [
                quad
                for quad in self.store.quads_for_pattern(s, p, None, None)
                if (quad.graph_name == ox.NamedNode(own) or _is_current_graph(quad.graph_name))
                and (wanted is None or _term_str(quad.object) in wanted)
            ]
            for quad in doomed:
                self.store.remove(quad)

    # -- GraphBackend ---------------------------------------------------------------

    def sparql_query(
        self, query: str, *, scope: frozenset[str], include_history: bool = False
    ) -> GraphResult:
        """Run SPARQL over the scope's graphs only (plus the shared ones).

        CONSTRUCT/DESCRIBE give their triples; a SELECT of three variables gives
        one triple per row, any other SELECT one triple ``(_:rowN, var, value)``
        per binding; rows are also in ``metadata["bindings"]`` (JSON). ASK gives
        no triples and ``metadata["boolean"]``.
        """
        return _shaped(self._query(query, scope, include_history))

    def select(
        self, query: str, *, scope: frozenset[str], include_history: bool = False
    ) -> list[dict[str, str]]:
        """Rows of a scoped SELECT as ``{variable: value}`` (unbound variables left out)."""
        result = self._query(query, scope, include_history)
        if not isinstance(result, ox.QuerySolutions):
            raise InvalidArgumentError("select() needs a SELECT query")
        names = [v.value for v in result.variables]
        return [
            {name: _term_str(solution[name]) for name in names if solution[name] is not None}
            for solution in result
        ]

    def _query(self, query: str, scope: object, include_history: bool) -> Any:
        require_text("query", query)
        scope = require_scope(scope)
        _reject_service(query)
        graphs = self._dataset(scope, include_history)
        return _answer(
            self.store, query, default_graph=[*graphs, ox.DefaultGraph()], named_graphs=graphs
        )

    def _dataset(self, scope: frozenset[str] | None, include_history: bool) -> list[Any]:
        if scope is None:
            return [
                g
                for g in self.store.named_graphs()
                if isinstance(g, ox.NamedNode)
                and (include_history or not g.value.endswith(_HISTORY))
            ]
        graphs = [ox.NamedNode(current_graph(r)) for r in sorted(scope)]
        if include_history:
            graphs += [ox.NamedNode(history_graph(r)) for r in sorted(scope)]
        graphs += [ox.NamedNode(g) for g in sorted(self._shared)]
        return graphs

    def _allowed(self, scope: frozenset[str] | None) -> set[str] | None:
        if scope is None:
            return None
        return {g.value for g in self._dataset(require_scope(scope), True)} | {""}

    def get_triples(self, subject: str, *, scope: frozenset[str] | None = None) -> GraphResult:
        """Every triple about ``subject`` (a node URI, a revision IRI or a CURIE)."""
        require_text("subject", subject)
        allowed = self._allowed(scope)
        term = _subject_or_none(subject)
        if term is None:
            return GraphResult([])
        triples = {
            (_term_str(q.subject), _term_str(q.predicate), _term_str(q.object))
            for q in self.store.quads_for_pattern(term, None, None, None)
            if allowed is None or _graph_str(q.graph_name) in allowed
        }
        return GraphResult(sorted(triples))

    def traverse(
        self,
        start: str,
        *,
        depth: int = 2,
        scope: frozenset[str] | None = None,
        direction: str = "out",
        edge_types: Iterable[str] | None = None,
        max_triples: int = 10_000,
    ) -> GraphResult:
        """Triples within ``depth`` hops of ``start`` (breadth first over IRI links).

        ``direction`` is ``"out"`` (subject -> object), ``"in"`` or ``"both"``;
        ``edge_types`` limits the predicates followed (CURIEs or IRIs).
        ``rdf:type`` links are reported but never followed (classes are hubs).
        """
        require_text("start", start)
        require_depth(depth)
        if direction not in ("out", "in", "both"):
            raise InvalidArgumentError(f"direction must be out, in or both, got {direction!r}")
        allowed = self._allowed(scope)
        followed = {_expand(e) for e in edge_types} if edge_types is not None else None
        found: set[tuple[str, str, str]] = set()
        origin = _subject_or_none(start)
        if origin is None:
            return GraphResult([])
        frontier: set[Any] = {origin}
        seen = set(frontier)
        truncated = False
        for _ in range(depth):
            following: set[Any] = set()
            for node in frontier:
                for quad, neighbour in self._neighbours(node, direction):
                    if allowed is not None and _graph_str(quad.graph_name) not in allowed:
                        continue
                    if _is_history(quad.graph_name):
                        continue
                    predicate = quad.predicate.value
                    if followed is not None and predicate not in followed:
                        continue
                    found.add((_term_str(quad.subject), predicate, _term_str(quad.object)))
                    if (
                        predicate != RDF_TYPE
                        and neighbour not in seen
                        and isinstance(neighbour, ox.NamedNode | ox.BlankNode)
                    ):
                        following.add(neighbour)
                        seen.add(neighbour)
                if len(found) >= max_triples:
                    truncated = True
                    break
            frontier = following
            if truncated or not frontier:
                break
        metadata = {"truncated": "true"} if truncated else {}
        return GraphResult(sorted(found), metadata)

    def _neighbours(self, node: Any, direction: str) -> Iterator[tuple[ox.Quad, Any]]:
        if direction in ("out", "both"):
            for quad in self.store.quads_for_pattern(node, None, None, None):
                yield quad, quad.object
        if direction in ("in", "both") and not isinstance(node, ox.Literal):
            for quad in self.store.quads_for_pattern(None, None, node, None):
                yield quad, quad.subject

    # -- temporal views -------------------------------------------------------------

    def query_at_time(
        self, timestamp: datetime, scope: frozenset[str] | None = None
    ) -> GraphResult:
        """The node triples valid at ``timestamp`` (``validFrom <= T < validUntil``).

        Subjects of old versions are mapped back to their stable URI; the
        bookkeeping of later changes (``isCurrent``, ``validUntil``) is left out.
        ``scope=None`` reads every resource (administrative use).
        """

        def read(store: ox.Store, graphs: list[Any]) -> list[tuple[str, str, str]]:
            return sorted(
                {_triple(q) for g in graphs for q in store.quads_for_pattern(None, None, None, g)}
            )

        return GraphResult(
            self._at_time(timestamp, scope, read), {"timestamp": _lexical(timestamp)}
        )

    def sparql_at_time(
        self, query: str, timestamp: datetime, *, scope: frozenset[str]
    ) -> GraphResult:
        """:meth:`sparql_query` over the graph as it stood at ``timestamp``: the triples
        :meth:`query_at_time` gives, as the default graph (no named graphs)."""
        require_text("query", query)
        scope = require_scope(scope)
        _reject_service(query)

        def read(store: ox.Store, graphs: list[Any]) -> GraphResult:
            answer = _answer(store, query, default_graph=graphs, named_graphs=[])
            return _shaped(answer, timestamp=_lexical(timestamp))

        return self._at_time(timestamp, scope, read)

    def _at_time(
        self,
        timestamp: datetime,
        scope: frozenset[str] | None,
        read: Callable[[ox.Store, list[Any]], _T],
    ) -> _T:
        """``read(copy, graphs)``: a copy of the store whose graphs ``graphs`` hold the
        node triples valid at ``timestamp``; the copy is closed and removed after.

        Most of a graph at any time is its current versions, so the copy is a
        checkpoint of the store (its files hard-linked, a few milliseconds however big)
        in which the scope's current graphs lose the versions made after ``timestamp``
        and every ``isCurrent``, and a graph of its own gets the retired versions valid
        then, each under its node's URI, from the history graphs. Current graphs hold
        node triples only (each subject has a ``validFrom``), so nothing else needs
        taking out. A copy in memory, as before, read every triple out of the store:
        16 s for the JDK's 110k nodes; Django's 97k: 14-18 s against 1.5-2 s so.
        """
        if scope is not None:
            scope = require_scope(scope)
        graphs = self._dataset(scope, include_history=True)
        current = [g for g in graphs if _is_current_graph(g)]
        history = [g for g in graphs if _is_history(g)]
        _sweep_copies(self.location.parent)
        folder: Path | None = None
        try:
            folder = Path(tempfile.mkdtemp(prefix=_COPY_PREFIX, dir=self.location.parent))
            with self._lock:
                self.store.backup(str(folder / "store"))
            if self.read_only:
                _copy_write_ahead_log(self.location, folder / "store")
            # The copy is opened, and closed, by the call: gone before its files go.
            return _read_at_time(folder / "store", timestamp, current, history, read)
        except OSError as exc:  # a full disk, or files a writer compacted away since
            raise CleverAgentsError(
                f"a query at a time reads a copy of the graph store, made beside it in "
                f"{self.location.parent}, and the copy failed: {exc}"
            ) from exc
        finally:
            if folder is not None:
                shutil.rmtree(folder, ignore_errors=True)

    def subgraph_by_resources(
        self,
        resource_ids: Iterable[str],
        include_temporal: TemporalScope | str = "current",
        *,
        now: datetime | None = None,
    ) -> GraphResult:
        """All triples of the given resources (spec 000 "UKO Subgraph Projection").

        CURRENT: current versions only; RECENT: plus versions retired within the
        recent window; ALL: every version (history subjects are revision IRIs).
        """
        # Here, not at the top: the context models are not built for an indexing run.
        from cleveragents.models.context import TemporalScope

        temporal = TemporalScope(include_temporal)
        ids = sorted(set(resource_ids))
        cutoff = (now or datetime.now(UTC)) - self._recent_window
        triples: set[tuple[str, str, str]] = set()
        for resource in ids:
            for quad in self.store.quads_for_pattern(
                None, None, None, ox.NamedNode(current_graph(resource))
            ):
                triples.add(_triple(quad))
            if temporal is TemporalScope.CURRENT:
                continue
            history = ox.NamedNode(history_graph(resource))
            keep: set[Any] | None = None
            if temporal is TemporalScope.RECENT:
                keep = set()
                for quad in self.store.quads_for_pattern(None, _N["validUntil"], None, history):
                    until = parse_instant(_term_str(quad.object))
                    if until is not None and until >= cutoff:
                        keep.add(quad.subject)
            for quad in self.store.quads_for_pattern(None, None, None, history):
                if keep is None or quad.subject in keep:
                    triples.add(_triple(quad))
        return GraphResult(
            sorted(triples), {"temporal": temporal.value, "resources": ",".join(ids)}
        )

    # -- snapshots --------------------------------------------------------------------

    def export_nquads(self, output: BinaryIO) -> None:
        """Write every quad (all graphs) as N-Quads to a binary stream."""
        with self._lock:
            self.store.dump(output, ox.RdfFormat.N_QUADS)

    def import_nquads(self, path: Path, *, replace: bool = True) -> None:
        """Load an N-Quads file (from :meth:`export_nquads`); ``replace`` clears the store first."""
        self._writable()
        with self._lock:
            if replace:
                self.store.clear()
                self._shared.clear()
            self.store.bulk_load(path=str(path), format=ox.RdfFormat.N_QUADS)
            self._shared |= {
                g.value
                for g in self.store.named_graphs()
                if isinstance(g, ox.NamedNode) and g.value.startswith(PROJECT_BASE)
            }

    def flush(self) -> None:
        self.store.flush()

    def reopen(self) -> None:
        """Open the store again after :meth:`close` (a background load gave it back)."""
        with self._lock:
            if self._store is None:
                self._store = (
                    ox.Store.read_only(str(self.location))
                    if self.read_only
                    else ox.Store(str(self.location))
                )

    def close(self) -> None:
        """Release the store (its directory lock goes with it).

        Every write is already durable in the store's write-ahead log (bulk loads
        write their files directly), but each process that opens the store replays
        that log, and a reader (``context assemble``) cannot keep what it replayed:
        after a refresh that revised 6,400 nodes, a 108 MB log made every open take
        3 s until the next writer's. So a log past ``_FLUSH_LOG_BYTES`` is flushed into
        the store's files here (0.55 s for that one). A smaller one is left: flushed
        after every one-file refresh, one flush in two or three waited seconds for a
        compaction (1.9-6.2 s, measured by an earlier version that always flushed).
        """
        with self._lock:
            store, self._store = self._store, None
            if store is None or self.read_only:
                return
            _prune_info_logs(self.location)
            if _log_bytes(self.location) <= _FLUSH_LOG_BYTES:
                return
            with contextlib.suppress(OSError):  # the log still holds every write
                store.flush()


def _read_at_time(
    path: Path,
    timestamp: datetime,
    current: list[Any],
    history: list[Any],
    read: Callable[[ox.Store, list[Any]], _T],
) -> _T:
    """``read`` over the store copy at ``path`` made to hold what was valid at
    ``timestamp`` (see ``OxigraphGraphBackend._at_time``)."""
    copy = ox.Store(str(path))
    at = f'"{_lexical(timestamp)}"^^<{XSD}dateTime>'
    graphs = [ox.NamedNode(_AT_TIME_GRAPH)]
    if current:
        values = f"VALUES ?g {{ {' '.join(f'<{g.value}>' for g in current)} }}"
        counted = copy.query(
            f"SELECT (COUNT(?s) AS ?all) (SUM(IF(?from > {at}, 1, 0)) AS ?later) WHERE {{ "
            f"{values} GRAPH ?g {{ ?s <{UKO}validFrom> ?from }} }}"
        )
        assert isinstance(counted, ox.QuerySolutions)
        counts = next(iter(counted))
        later, total = int(_term_str(counts["later"])), int(_term_str(counts["all"]))
        if 2 * later <= total:  # most of it was valid then: take the later versions out
            copy.update(
                f"DELETE {{ GRAPH ?g {{ ?s ?p ?o }} }} WHERE {{ {values} "
                f"GRAPH ?g {{ ?s <{UKO}validFrom> ?from FILTER(?from > {at}) ?s ?p ?o }} }}"
            )
            copy.update(
                f"DELETE {{ GRAPH ?g {{ ?s <{UKO}isCurrent> ?current }} }} WHERE {{ "
                f"{values} GRAPH ?g {{ ?s <{UKO}isCurrent> ?current }} }}"
            )
            graphs += current
        else:  # most of it came since: copy the earlier versions out instead
            copy.update(
                f"INSERT {{ GRAPH <{_AT_TIME_GRAPH}> {{ ?s ?p ?o }} }} WHERE {{ {values} "
                f"GRAPH ?g {{ ?s <{UKO}validFrom> ?from FILTER(?from <= {at}) ?s ?p ?o "
                f"FILTER(?p != <{UKO}isCurrent>) }} }}"
            )
    if history:
        skip = ", ".join(f"<{p.value}>" for p in (_VERSION_OF, _N["isCurrent"], _N["validUntil"]))
        copy.update(
            f"""INSERT {{ GRAPH <{_AT_TIME_GRAPH}> {{ ?stable ?p ?o }} }} WHERE {{
              VALUES ?h {{ {" ".join(f"<{g.value}>" for g in history)} }}
              GRAPH ?h {{
                ?s <{DCTERMS}isVersionOf> ?stable ; <{UKO}validFrom> ?from ;
                   <{UKO}validUntil> ?until .
                FILTER(?from <= {at} && ?until > {at})
                ?s ?p ?o .
                FILTER(?p NOT IN ({skip}))
              }}
            }}"""
        )
    return read(copy, graphs)


def _copy_write_ahead_log(location: Path, copy: Path) -> None:
    """Give a read-only store's checkpoint the write-ahead log it leaves out: a reader
    cannot flush what the log holds into the files the checkpoint links, and the last
    writes of a writer that closed with a small log are only there (see
    ``OxigraphGraphBackend.close``). Opening the copy replays it."""
    for log in _write_ahead_logs(location):
        if not (copy / log.name).exists():
            shutil.copyfile(log, copy / log.name)


def _sweep_copies(folder: Path) -> None:
    """Remove copies of the store that a stopped process left (their hard links would
    keep files the store has compacted away)."""
    cutoff = time.time() - _STALE_COPY_SECONDS
    for stale in folder.glob(_COPY_PREFIX + "*"):
        with contextlib.suppress(OSError):
            if stale.stat().st_mtime < cutoff:
                shutil.rmtree(stale, ignore_errors=True)


def _write_ahead_logs(location: Path) -> list[Path]:
    """The store's write-ahead log files (``000111.log``; not RocksDB's info ``LOG``)."""
    return [p for p in location.glob("*.log") if p.stem.isdigit()]


#: RocksDB's diagnostic logs kept beside the store: each writer's open starts one (about
#: 140 kB) and RocksDB keeps a thousand, 140 MB after as many one-file refreshes.
_INFO_LOGS_KEPT = 4


def _prune_info_logs(location: Path, keep: int = _INFO_LOGS_KEPT) -> None:
    """Remove all but the newest ``keep`` of the store's old diagnostic logs (``LOG.old.*``,
    named by their time in microseconds); the store never reads them."""
    old = sorted(location.glob("LOG.old.*"), key=lambda p: p.name.rsplit(".", 1)[-1].zfill(20))
    for path in old[: max(0, len(old) - keep)]:
        with contextlib.suppress(OSError):
            path.unlink()


def _log_bytes(location: Path) -> int:
    """The size of the store's current write-ahead log (the highest-numbered one)."""
    logs = _write_ahead_logs(location)
    try:
        return max(logs, key=lambda p: int(p.stem)).stat().st_size if logs else 0
    except OSError:
        return 0


class _Moves:
    """What retiring versions writes: ``copies`` into history (added first), then
    ``deletes`` and ``inserts`` in one transaction."""

    __slots__ = ("copies", "deletes", "inserts")

    def __init__(self) -> None:
        self.copies: list[ox.Quad] = []
        self.deletes: list[ox.Quad] = []
        self.inserts: list[ox.Quad] = []

    def __len__(self) -> int:
        return len(self.copies) + len(self.deletes) + len(self.inserts)


class _TriGWriter:
    """The TriG text of node versions, for bulk loads.

    A cold index writes millions of quads. TriG names each graph once and each
    node's subject once (N-Quads repeats both on every line, 2.5 times the
    text to build and parse); the IRIs a batch repeats (types, predicates) are
    worked out once per batch, not once per quad.
    """

    def __init__(self, stamp: str, out: list[str]) -> None:
        self.out = out
        self._valid_from = f'"{stamp}"^^<{XSD}dateTime>'
        self._iris: dict[str, str] = {}
        self._properties: dict[str, str] = {}

    def _iri(self, curie: str) -> str:
        iri = self._iris.get(curie)
        if iri is None:
            iri = self._iris[curie] = f"<{_safe_iri(_expand(curie))}>"
        return iri

    def write(self, nodes: Iterable[UKONode]) -> int:
        """Append the nodes' quads; returns how many."""
        out = self.out
        quads = 0
        resource: str | None = None
        for node in nodes:
            if node.resource_id != resource:  # one graph block per resource
                if resource is not None:
                    out.append("}\n")
                resource = node.resource_id
                out.append(f"<{current_graph(resource)}> {{\n")
            s = f"<{_safe_iri(node.uri)}>"
            if node.parent:
                out.append(f"<{_safe_iri(node.parent)}> <{UKO}contains> {s} .\n")
                quads += 1
            out.append(f"{s} <{RDF_TYPE}> {self._iri(node.uko_type)}")
            out.append(f";<{UKO}name> {_literal(node.name)}")
            if node.qualname:
                out.append(f";<{UKO}qualifiedName> {_literal(node.qualname)}")
                quads += 1
            if node.language:
                out.append(f";<{UKO}language> {_literal(node.language)}")
                quads += 1
            out.append(f";<{UKO}sourceResource> {_literal(node.resource_id)}")
            out.append(f";<{UKO}sourcePath> {_literal(node.path)}")
            out.append(f';<{UKO}sourceRange> "{node.start_line}:1-{node.end_line}:0"')
            out.append(f";<{UKO}validFrom> {self._valid_from}")
            out.append(f';<{UKO}isCurrent> "true"^^<{XSD}boolean>')
            quads += 7
            for key, value in node.properties.items():
                if value is None or value == "":
                    continue
                predicate = self._properties.get(key)
                if predicate is None:
                    predicate = self._properties[key] = _property_iri(key) or ""
                if predicate:
                    out.append(f";<{predicate}> {_literal(str(value))}")
                    quads += 1
            for predicate, target in node.edges:
                if not target:
                    continue
                obj = f"<{_safe_iri(target)}>" if _looks_like_iri(target) else _literal(target)
                out.append(f";{self._iri(predicate)} {obj}")
                quads += 1
            out.append(" .\n")
        if resource is not None:
            out.append("}\n")
        return quads


def _answer(store: ox.Store, query: str, **dataset: Any) -> Any:
    """``store.query`` with the UKO prefixes; a syntax error is the user's."""
    try:
        return store.query(query, prefixes=PREFIXES, **dataset)
    except SyntaxError as exc:
        raise InvalidArgumentError(f"invalid SPARQL query: {exc}") from exc


def _shaped(result: Any, **extra: str) -> GraphResult:
    """A query's answer as :meth:`OxigraphGraphBackend.sparql_query` gives it (``extra``:
    more metadata)."""
    if isinstance(result, ox.QueryBoolean):
        return GraphResult([], {"form": "ask", "boolean": str(bool(result)).lower(), **extra})
    if isinstance(result, ox.QueryTriples):
        triples = [
            (_term_str(t.subject), _term_str(t.predicate), _term_str(t.object)) for t in result
        ]
        return GraphResult(triples, {"form": "construct", "count": str(len(triples)), **extra})
    names = [v.value for v in result.variables]
    rows = [
        {name: _term_str(solution[name]) for name in names if solution[name] is not None}
        for solution in result
    ]
    if len(names) == 3:
        triples = [
            (row.get(names[0], ""), row.get(names[1], ""), row.get(names[2], "")) for row in rows
        ]
    else:
        triples = [(f"_:row{i}", n, v) for i, row in enumerate(rows) for n, v in row.items()]
    return GraphResult(
        triples,  # type: ignore[arg-type]
        {
            "form": "select",
            "variables": ",".join(names),
            "bindings": json.dumps(rows),
            "count": str(len(rows)),
            **extra,
        },
    )
