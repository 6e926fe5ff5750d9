"""RDF plumbing of the graph backend: graph names, terms, TriG/N-Quads text and query guards."""

from __future__ import annotations

import re
from collections.abc import Iterable
from datetime import UTC, datetime
from typing import Any
from urllib.parse import quote

import pyoxigraph as ox

from cleveragents_acms.backends._validation import InvalidArgumentError
from cleveragents_acms.ontology.namespaces import LAYERS, UKO, expand

GRAPH_BASE = "urn:cleveragents:graph:"
PROJECT_BASE = "urn:cleveragents:project:"
_HISTORY = ":history"

XSD = "http://www.w3.org/2001/XMLSchema#"
RDF_TYPE = "http://www.w3.org/1999/02/22-rdf-syntax-ns#type"
DCTERMS = "http://purl.org/dc/terms/"
PREFIXES: dict[str, str] = {
    **{prefix: namespace for prefix, (namespace, _) in LAYERS.items()},
    "rdf": "http://www.w3.org/1999/02/22-rdf-syntax-ns#",
    "rdfs": "http://www.w3.org/2000/01/rdf-schema#",
    "owl": "http://www.w3.org/2002/07/owl#",
    "xsd": XSD,
    "dcterms": DCTERMS,
    "prov": "http://www.w3.org/ns/prov#",
}

_N = {
    name: ox.NamedNode(UKO + name)
    for name in (
        "name",
        "qualifiedName",
        "language",
        "sourceResource",
        "sourcePath",
        "sourceRange",
        "validFrom",
        "validUntil",
        "isCurrent",
        "isRevisionOf",
        "contains",
    )
}
_TYPE = ox.NamedNode(RDF_TYPE)
_VERSION_OF = ox.NamedNode(DCTERMS + "isVersionOf")
_DATETIME = ox.NamedNode(XSD + "dateTime")
_FALSE = ox.Literal(False)

#: Node property keys with a home in the ontology (or in Dublin Core).
PROPERTY_CURIES: dict[str, str] = {
    "signature": "uko-code:signature",
    "docstring": "uko-code:docstring",
    "visibility": "uko-code:visibility",
    "return_type": "uko-code:hasReturnType",
    "parameters": "uko-code:hasParameters",
    "decorators": "uko-py:decorators",
    "is_async": "uko-py:isAsync",
    "exports": "uko-py:exports",
    "content_hash": "uko:contentHash",
    "title": "dcterms:title",
}

#: The datatype and object properties of the core vocabulary (``uko.ttl``): a bare
#: property key naming one of them is written as that ``uko:`` term.
UKO_PROPERTIES = frozenset({
    "confidence", "contains", "contentHash", "dependsOn", "hasFullContent", "hasRendering",
    "implicitContains", "implicitDependsOn", "implicitRelation", "implicitSiblingOf",
    "isCurrent", "isInferred", "isRevisionOf", "language", "layer", "name", "qualifiedName",
    "references", "renderingDepth", "sourcePath", "sourceRange", "sourceResource",
    "validFrom", "validUntil",
})  # fmt: skip

#: A scheme and no whitespace anywhere: a value to write as an IRI, not a literal.
_IRI_LIKE = re.compile(r"[A-Za-z][A-Za-z0-9+.\-]*:\S*\Z")
_IRI_FORBIDDEN = re.compile(r'[\x00-\x20<>"{}|^`\\]')
_SERVICE = re.compile(
    r"(?<![\w:?$])SERVICE\s+(?:SILENT\s+)?(?:<|[?$]|[A-Za-z_][\w.-]*:)", re.IGNORECASE
)
_STRIP_FOR_SERVICE = re.compile(
    r'"""[\s\S]*?"""|\'\'\'[\s\S]*?\'\'\'|"(?:[^"\\\n]|\\.)*"'
    r"|'(?:[^'\\\n]|\\.)*'|<[^<>\s]*>|#[^\n]*"
)


def current_graph(resource_id: str) -> str:
    """IRI of the named graph holding the current triples of ``resource_id``."""
    return GRAPH_BASE + quote(resource_id, safe="")


def history_graph(resource_id: str) -> str:
    """IRI of the named graph holding the retired versions of ``resource_id``'s nodes."""
    return current_graph(resource_id) + _HISTORY


def revision_iri(uri: str, valid_from: datetime | str) -> str:
    """IRI of the version of ``uri`` that became valid at ``valid_from``."""
    stamp = valid_from if isinstance(valid_from, str) else _lexical(valid_from)
    return f"{uri}@{stamp}"


def _lexical(moment: datetime) -> str:
    """xsd:dateTime in UTC with a ``Z`` (naive datetimes are taken as UTC)."""
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    moment = moment.astimezone(UTC)
    text = moment.strftime("%Y-%m-%dT%H:%M:%S")
    if moment.microsecond:
        text += f".{moment.microsecond:06d}"
    return text + "Z"


def _expand(curie: str) -> str:
    expanded = expand(curie)
    if expanded == curie:
        prefix, sep, local = curie.partition(":")
        if sep and prefix in PREFIXES:
            return PREFIXES[prefix] + local
    return expanded


def _safe_iri(value: str) -> str:
    """``value`` with characters N-Quads and TriG forbid in an IRI percent-encoded."""
    if _IRI_FORBIDDEN.search(value):
        return _IRI_FORBIDDEN.sub(lambda m: quote(m.group(), safe=""), value)
    return value


def _looks_like_iri(value: str) -> bool:
    return _IRI_LIKE.match(value) is not None


def _literal(value: str) -> str:
    # Chained replaces run in C; str.translate looks every character up in a dict.
    return (
        '"'
        + value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n").replace("\r", "\\r")
        + '"'
    )


def _term_str(term: Any) -> str:
    if isinstance(term, ox.NamedNode | ox.Literal):
        return term.value
    if isinstance(term, ox.BlankNode):
        return f"_:{term.value}"
    return str(term)


def _is_current_graph(graph: Any) -> bool:
    return (
        isinstance(graph, ox.NamedNode)
        and graph.value.startswith(GRAPH_BASE)
        and not graph.value.endswith(_HISTORY)
    )


def _history_of(graph: Any) -> ox.NamedNode:
    return ox.NamedNode(_graph_str(graph) + _HISTORY)


def _reject_service(query: str) -> None:
    bare = _STRIP_FOR_SERVICE.sub(lambda m: "<>" if m.group().startswith("<") else " ", query)
    if _SERVICE.search(bare):
        raise InvalidArgumentError("federated SERVICE queries are not allowed")


def _graph_str(graph: Any) -> str:
    return graph.value if isinstance(graph, ox.NamedNode) else ""


def _is_history(graph: Any) -> bool:
    return isinstance(graph, ox.NamedNode) and graph.value.endswith(_HISTORY)


def _triple(quad: ox.Quad) -> tuple[str, str, str]:
    return _term_str(quad.subject), _term_str(quad.predicate), _term_str(quad.object)


def _data_block(quads: Iterable[ox.Quad]) -> tuple[str, list[ox.Quad]]:
    """The text of a SPARQL ``INSERT DATA`` or ``DELETE DATA`` block of ``quads``, each
    graph's triples together, and the quads left out of it: those with a blank node,
    which such a block cannot hold."""
    graphs: dict[Any, list[str]] = {}
    blank: list[ox.Quad] = []
    for quad in quads:
        subject, obj = quad.subject, quad.object
        if isinstance(subject, ox.BlankNode) or isinstance(obj, ox.BlankNode):
            blank.append(quad)
        else:
            graphs.setdefault(quad.graph_name, []).append(f"{subject} {quad.predicate} {obj} .")
    text = " ".join(f"GRAPH {graph} {{ {' '.join(triples)} }}" for graph, triples in graphs.items())
    return text, blank


def _property_iri(key: str) -> str | None:
    """The predicate a node property is written to the graph with, or None.

    A key with a prefix (``uko-doc:wordCount``) is written as it says, a bare key
    as its vocabulary term. Any other bare key is the analyzer's own bookkeeping
    (``kind``, ``fqname``, ``module`` …): it stays with the node in the node store,
    and the graph holds vocabulary terms only (an eighth fewer quads to load).
    """
    curie = PROPERTY_CURIES.get(key)
    if curie is not None:
        return _expand(curie)
    if ":" in key:
        return _safe_iri(_expand(key))
    return UKO + key if key in UKO_PROPERTIES else None


def _subject_term(value: str) -> ox.NamedNode | ox.BlankNode:
    if value.startswith("_:"):
        return ox.BlankNode(value[2:])
    try:
        return ox.NamedNode(_safe_iri(_expand(value)))
    except ValueError as exc:
        raise InvalidArgumentError(f"not an IRI: {value!r}") from exc


def _subject_or_none(value: str) -> ox.NamedNode | ox.BlankNode | None:
    """A lookup key for ``value``; None when it cannot name anything in the store."""
    try:
        return _subject_term(value)
    except InvalidArgumentError:
        return None


def _predicate_term(value: str) -> ox.NamedNode:
    try:
        return ox.NamedNode(_safe_iri(_expand(value)))
    except ValueError as exc:
        raise InvalidArgumentError(f"not an IRI: {value!r}") from exc


def _object_term(value: str) -> ox.NamedNode | ox.BlankNode | ox.Literal:
    if value.startswith("_:"):
        return ox.BlankNode(value[2:])
    expanded = _expand(value)
    if _looks_like_iri(expanded):
        try:
            return ox.NamedNode(_safe_iri(expanded))
        except ValueError:
            pass
    return ox.Literal(value)
