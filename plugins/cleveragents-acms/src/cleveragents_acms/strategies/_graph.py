"""Reads of a scoped GraphBackend that the graph-aware strategies need, cached per assembly.

The UKO graph (see :mod:`cleveragents_acms.backends.graph`) links nodes by
``uko:contains`` (file -> class -> method), ``uko:dependsOn`` (imports,
calls, bases, decorators), ``uko:references`` (types a signature names),
``uko-oo:inheritsFrom``, ``uko-oo:implements`` (Java's and TypeScript's
``implements``, Go's types and the interfaces of their package they satisfy) and
``uko-code:testsCallable``. A :class:`GraphView`
batches its reads into SPARQL ``VALUES`` queries when the backend speaks
SPARQL, and falls back to ``get_triples``/basic patterns for simpler backends
(such as the kernel's in-memory one). Every read goes through the scoped view
the strategy was given, so nothing outside the scope is ever seen.

Edge targets the indexer could not resolve (``symbol:pkg.name``) are leaves
shared by every node naming the symbol; they are not followed.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Sequence
from typing import Any
from urllib.parse import quote

from cleveragents.errors import CleverAgentsError
from cleveragents_acms.ontology.namespaces import LAYERS, RDF_TYPE, UKO
from cleveragents_acms.strategies._support import log

__all__ = [
    "CONTAINS",
    "DEPENDS_ON",
    "GRAPH_EDGES",
    "IMPLEMENTS",
    "INHERITS_FROM",
    "NAME",
    "REFERENCES",
    "TESTS_CALLABLE",
    "GraphView",
    "iri",
    "literal",
]

CONTAINS = UKO + "contains"
DEPENDS_ON = UKO + "dependsOn"
REFERENCES = UKO + "references"
INHERITS_FROM = LAYERS["uko-oo"][0] + "inheritsFrom"
IMPLEMENTS = LAYERS["uko-oo"][0] + "implements"
TESTS_CALLABLE = LAYERS["uko-code"][0] + "testsCallable"
DECORATED_BY = LAYERS["uko-py"][0] + "decoratedBy"
#: The structural links worth following, with how strongly each ties two nodes.
GRAPH_EDGES: dict[str, float] = {
    DEPENDS_ON: 1.0,
    INHERITS_FROM: 1.0,
    IMPLEMENTS: 1.0,
    REFERENCES: 0.5,
    CONTAINS: 0.7,
    TESTS_CALLABLE: 0.3,
    DECORATED_BY: 0.3,
}
NAME = UKO + "name"
_QUALNAME = UKO + "qualifiedName"
_SAFE_IRI = re.compile(r'^[^\s<>"{}|^`\\]+$')
_BATCH = 200
_NODE_BASE = "https://cleveragents.ai/r/"
#: The scheme of a target the indexer could not resolve.
SYMBOL = "symbol:"


def iri(uri: str) -> str | None:
    return f"<{uri}>" if _SAFE_IRI.match(uri) and ":" in uri else None


def literal(text: str) -> str:
    escaped = text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")
    return f'"{escaped}"'


class GraphView:
    """Cached, batched reads of one scoped graph backend for one assembly."""

    def __init__(self, graph: Any, scope: frozenset[str]) -> None:
        self.graph = graph
        self.scope = scope
        self._sparql = True
        self._out: dict[str, list[tuple[str, str]]] = {}
        self._in: dict[str, list[tuple[str, str]]] = {}
        self._facts: dict[str, dict[str, str]] = {}

    # -- low level ------------------------------------------------------------------

    def select(self, query: str) -> list[dict[str, str]] | None:
        """Rows of a SELECT; ``None`` when the backend cannot run it (then use fallbacks)."""
        if not self._sparql:
            return None
        try:
            result = self.graph.sparql_query(query, scope=self.scope)
        except (CleverAgentsError, ValueError, TypeError, SyntaxError, NotImplementedError) as exc:
            log.debug("graph query unsupported, using fallbacks", error=str(exc)[:120])
            self._sparql = False
            return None
        bindings = (result.metadata or {}).get("bindings")
        if bindings is not None:
            try:
                return list(json.loads(bindings))
            except (TypeError, ValueError):
                return None
        self._sparql = False  # a backend without bindings: basic patterns only
        return None

    def _triples(self, subject: str) -> list[tuple[str, str, str]]:
        try:
            return list(self.graph.get_triples(subject).triples)
        except (CleverAgentsError, ValueError, TypeError) as exc:
            log.debug("get_triples failed", subject=subject, error=str(exc)[:120])
            return []

    # -- edges ------------------------------------------------------------------------

    def neighbours(
        self,
        uris: Iterable[str],
        *,
        predicates: Iterable[str] = tuple(GRAPH_EDGES),
        incoming: bool = True,
    ) -> dict[str, list[tuple[str, str, bool]]]:
        """``uri -> [(predicate, other node, outgoing?)]`` over ``predicates`` (node URIs only)."""
        wanted = set(predicates)
        uris = [u for u in dict.fromkeys(uris) if u]
        self._load(uris, outgoing=True)
        if incoming:
            self._load(uris, outgoing=False)
        out: dict[str, list[tuple[str, str, bool]]] = {}
        for uri in uris:
            links = [(p, o, True) for p, o in self._out.get(uri, ()) if p in wanted]
            if incoming:
                links.extend((p, s, False) for p, s in self._in.get(uri, ()) if p in wanted)
            out[uri] = [link for link in links if not link[1].startswith(SYMBOL)]
        return out

    def _load(self, uris: Sequence[str], *, outgoing: bool) -> None:
        cache = self._out if outgoing else self._in
        todo = [u for u in uris if u not in cache]
        if not todo:
            return
        for uri in todo:
            cache[uri] = []
        filter_ = ", ".join(f"<{p}>" for p in GRAPH_EDGES)
        for start in range(0, len(todo), _BATCH):
            chunk = [u for u in todo[start : start + _BATCH] if iri(u)]
            if not chunk:
                continue
            values = " ".join(f"<{u}>" for u in chunk)
            if outgoing:
                query = (
                    f"SELECT ?s ?p ?o WHERE {{ VALUES ?s {{ {values} }} ?s ?p ?o . "
                    f"FILTER(?p IN ({filter_}) && isIRI(?o)) }}"
                )
            else:
                query = (
                    f"SELECT ?s ?p ?o WHERE {{ VALUES ?o {{ {values} }} ?s ?p ?o . "
                    f"FILTER(?p IN ({filter_})) }}"
                )
            rows = self.select(query)
            if rows is None:
                self._load_slowly(chunk, outgoing=outgoing)
                continue
            for row in rows:
                s, p, o = row.get("s", ""), row.get("p", ""), row.get("o", "")
                if outgoing and s in cache:
                    cache[s].append((p, o))
                elif not outgoing and o in cache:
                    cache[o].append((p, s))

    def _load_slowly(self, uris: Sequence[str], *, outgoing: bool) -> None:
        """Per-node reads for backends without full SPARQL."""
        cache = self._out if outgoing else self._in
        for uri in uris:
            if outgoing:
                cache[uri] = [(p, o) for _, p, o in self._triples(uri) if p in GRAPH_EDGES]
                continue
            links: list[tuple[str, str]] = []
            for predicate in GRAPH_EDGES:
                subject = iri(uri)
                if subject is None:
                    break
                try:
                    result = self.graph.sparql_query(
                        f"SELECT ?s WHERE {{ ?s <{predicate}> {subject} }}", scope=self.scope
                    )
                except (CleverAgentsError, ValueError, TypeError) as exc:
                    log.debug("incoming edges unavailable", error=str(exc)[:120])
                    break
                links.extend((predicate, t[0]) for t in result.triples if t[2] == uri)
            cache[uri] = links

    def children(self, uris: Iterable[str]) -> dict[str, list[str]]:
        """``uri -> URIs it contains`` (one level)."""
        links = self.neighbours(uris, predicates=(CONTAINS,), incoming=False)
        return {uri: [o for _, o, _ in found] for uri, found in links.items()}

    def descendants(self, uri: str, *, levels: int = 3) -> list[str]:
        """Everything ``uri`` contains, down to ``levels`` levels, breadth first."""
        found: list[str] = []
        frontier = [uri]
        seen = {uri}
        for _ in range(levels):
            nxt: list[str] = []
            for children in self.children(frontier).values():
                for child in children:
                    if child not in seen:
                        seen.add(child)
                        nxt.append(child)
            found.extend(nxt)
            frontier = nxt
            if not frontier:
                break
        return found

    # -- lookups -----------------------------------------------------------------------

    def facts(self, uri: str) -> dict[str, str]:
        """Literal facts of a node: name, qualifiedName, sourcePath, type, revisions …"""
        if uri not in self._facts:
            facts: dict[str, str] = {}
            for _, p, o in self._triples(uri):
                key = p.rsplit("#", 1)[-1]
                if p == RDF_TYPE:
                    key = "type"
                facts.setdefault(key, o)
            self._facts[uri] = facts
        return self._facts[uri]

    def exists(self, uri: str) -> bool:
        return bool(self.facts(uri))

    def by_name(self, names: Iterable[str], *, limit: int = 200) -> dict[str, list[str]]:
        """``name -> node URIs`` whose simple or qualified name is exactly ``name``."""
        names = [n for n in dict.fromkeys(names) if n and len(n) < 200]
        out: dict[str, list[str]] = {n: [] for n in names}
        if not names:
            return out
        values = " ".join(literal(n) for n in names)
        rows = self.select(
            f"SELECT ?n ?v WHERE {{ VALUES ?v {{ {values} }} "
            f"{{ ?n <{NAME}> ?v }} UNION {{ ?n <{_QUALNAME}> ?v }} }} LIMIT {limit * len(names)}"
        )
        if rows is None:
            for name in names:
                try:
                    result = self.graph.sparql_query(
                        f"SELECT ?n WHERE {{ ?n <{NAME}> {literal(name)} }}", scope=self.scope
                    )
                except (CleverAgentsError, ValueError, TypeError):
                    continue
                out[name] = [t[0] for t in result.triples if t[2] == name][:limit]
            return out
        for row in rows:
            name, node = row.get("v", ""), row.get("n", "")
            if name in out and node and node not in out[name] and len(out[name]) < limit:
                out[name].append(node)
        return out

    def files_by_path(self, paths: Iterable[str]) -> dict[str, list[str]]:
        """``path -> file node URIs`` for exact repository-relative paths, per resource in scope."""
        out: dict[str, list[str]] = {}
        for path in dict.fromkeys(paths):
            found = []
            for resource in sorted(self.scope):
                uri = f"{_NODE_BASE}{resource}/{quote(path, safe='/')}"
                if self.exists(uri):
                    found.append(uri)
            out[path] = found
        return out

    def former_children(self, uri: str, *, versions: int = 3) -> list[str]:
        """Nodes that earlier versions of ``uri`` contained and the current one does not."""
        current = set(self.children([uri]).get(uri, []))
        former: list[str] = []
        for revision in self.revisions(uri)[:versions]:
            for _, predicate, child in self._triples(revision):
                if predicate == CONTAINS and child not in current and child not in former:
                    former.append(child)
        return former

    def revisions(self, uri: str) -> list[str]:
        """Revision IRIs of ``uri``'s earlier versions, newest first."""
        chain: list[str] = []
        current = uri
        for _ in range(50):
            previous = self.facts(current).get("isRevisionOf")
            if not previous or previous in chain:
                break
            chain.append(previous)
            current = previous
        return chain


def resource_of(uri: str) -> str:
    """The resource ULID in a node URI (``…/r/<ULID>/path#qualname``), or ``""``."""
    if not uri.startswith(_NODE_BASE):
        return ""
    return uri[len(_NODE_BASE) :].split("/", 1)[0]


def path_of(uri: str) -> str:
    """The file path in a node URI (percent-decoded)."""
    from urllib.parse import unquote

    if not uri.startswith(_NODE_BASE):
        return ""
    rest = uri[len(_NODE_BASE) :].split("/", 1)
    return unquote(rest[1].split("#", 1)[0]) if len(rest) == 2 else ""
