"""The UKO ontology in memory: the built-in layer files plus registered vocabularies.

The twelve built-in Turtle files (one per layer prefix) are parsed once per
process and shared by every :class:`UKOLoader`; a loader adds the vocabularies
it is given (third parties register them through the kernel's ``vocabulary``
slot) on top. Answers are CURIEs (``uko-oo:Class``); every method also accepts
full IRIs.
"""

from __future__ import annotations

import functools
from collections import deque
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field, replace
from importlib import resources
from pathlib import Path
from typing import Any

from rdflib import BNode, Graph, Literal, URIRef
from rdflib.namespace import OWL, RDF, RDFS

from cleveragents.errors import (
    CleverAgentsError,
    ConfigurationError,
    NotFoundError,
    ValidationError,
)
from cleveragents_acms.ontology import namespaces
from cleveragents_acms.ontology.namespaces import LAYERS, STANDARD

__all__ = ["BUILTIN_FILES", "OntologyTerm", "UKOLoader"]

#: The packaged layer files, in layer order.
BUILTIN_FILES: tuple[str, ...] = tuple(f"{prefix}.ttl" for prefix in LAYERS)

_LAYER = URIRef(namespaces.UKO + "layer")
_KINDS: dict[URIRef, str] = {
    OWL.Class: "class",
    OWL.ObjectProperty: "object-property",
    OWL.DatatypeProperty: "datatype-property",
    OWL.AnnotationProperty: "annotation-property",
}
_PARENT = {"class": RDFS.subClassOf}  # every property kind uses rdfs:subPropertyOf
_MAX_LAYER = 3


@dataclass(frozen=True, slots=True)
class OntologyTerm:
    """One class or property: what the Turtle files say about it (IRIs, not CURIEs)."""

    iri: str
    kind: str  # class | object-property | datatype-property | annotation-property
    label: str = ""
    comment: str = ""
    #: rdfs:subClassOf (classes) or rdfs:subPropertyOf (properties), in declared order.
    parents: tuple[str, ...] = ()
    domain: tuple[str, ...] = ()
    range: tuple[str, ...] = ()
    #: File the term was first declared in.
    source: str = ""

    @property
    def is_class(self) -> bool:
        return self.kind == "class"


@dataclass
class _Parsed:
    """One parsed Turtle file: its graph, terms, prefixes and declared layers."""

    source: str
    graph: Graph
    terms: dict[str, OntologyTerm] = field(default_factory=dict)
    prefixes: dict[str, str] = field(default_factory=dict)
    #: ontology IRI -> layer stated with ``uko:layer`` on its owl:Ontology header.
    layers: dict[str, int] = field(default_factory=dict)
    #: Untyped subjects that add parents to a term declared elsewhere: iri -> parents.
    extensions: dict[str, tuple[str, ...]] = field(default_factory=dict)


def _text(graph: Graph, subject: URIRef, predicate: URIRef) -> str:
    values = [o for o in graph.objects(subject, predicate) if isinstance(o, Literal)]
    for value in values:
        if value.language in (None, "en"):
            return str(value)
    return str(values[0]) if values else ""


def _iris(graph: Graph, subject: URIRef, predicate: URIRef) -> tuple[str, ...]:
    # Objects of one subject come back in document order; blank nodes are OWL
    # restrictions or unions, which the UKO does not use for its hierarchy.
    return tuple(
        dict.fromkeys(str(o) for o in graph.objects(subject, predicate) if isinstance(o, URIRef))
    )


def _parse(source: str, data: bytes, *, location: str) -> _Parsed:
    graph = Graph(bind_namespaces="none")
    try:
        graph.parse(data=data, format="turtle", publicID=location)
    except SyntaxError as exc:  # rdflib's BadSyntax carries a 0-based line
        line = getattr(exc, "lines", None)
        why = getattr(exc, "_why", None) or str(exc).splitlines()[-1]
        where = f", line {line + 1}" if isinstance(line, int) else ""
        raise ConfigurationError(
            f"invalid UKO vocabulary {source}{where}: {why}",
            details={"file": source, "line": line + 1 if isinstance(line, int) else None},
        ) from exc
    except Exception as exc:
        raise ConfigurationError(
            f"invalid UKO vocabulary {source}: {type(exc).__name__}: {exc}",
            details={"file": source},
        ) from exc
    parsed = _Parsed(source=source, graph=graph)
    parsed.prefixes = {prefix: str(namespace) for prefix, namespace in graph.namespaces() if prefix}
    for subject, kind_iri in graph.subject_objects(RDF.type):
        kind = _KINDS.get(kind_iri)  # type: ignore[call-overload]
        if isinstance(subject, URIRef) and kind_iri == OWL.Ontology:
            layer = graph.value(subject, _LAYER)
            if isinstance(layer, Literal) and str(layer).isdigit():
                parsed.layers[str(subject)] = int(str(layer))
        if kind is None or isinstance(subject, BNode) or str(subject) in parsed.terms:
            continue
        assert isinstance(subject, URIRef)
        parsed.terms[str(subject)] = OntologyTerm(
            iri=str(subject),
            kind=kind,
            label=_text(graph, subject, RDFS.label),
            comment=_text(graph, subject, RDFS.comment),
            parents=_iris(graph, subject, _PARENT.get(kind, RDFS.subPropertyOf)),
            domain=_iris(graph, subject, RDFS.domain),
            range=_iris(graph, subject, RDFS.range),
            source=source,
        )
    for predicate in (RDFS.subClassOf, RDFS.subPropertyOf):
        for subject in set(graph.subjects(predicate, None)):
            if isinstance(subject, URIRef) and str(subject) not in parsed.terms:
                parents = _iris(graph, subject, predicate)
                if predicate == RDFS.subClassOf:  # rdfs: a subclass is a class
                    parsed.terms[str(subject)] = OntologyTerm(
                        str(subject), "class", parents=parents, source=source
                    )
                else:
                    parsed.extensions[str(subject)] = parents
    return parsed


@functools.cache
def _builtin() -> tuple[_Parsed, ...]:
    package = resources.files("cleveragents_acms.ontology")
    return tuple(
        _parse(name, package.joinpath(name).read_bytes(), location=f"{namespaces.BASE}/{name}")
        for name in BUILTIN_FILES
    )


@functools.lru_cache(maxsize=64)
def _vocabulary(path: str, mtime_ns: int, size: int) -> _Parsed:
    del mtime_ns, size  # cache keys only: a changed file is parsed again
    return _parse(path, Path(path).read_bytes(), location=Path(path).as_uri())


def _load_vocabulary(path: Path) -> _Parsed:
    try:
        stat = path.stat()
    except OSError as exc:
        raise ConfigurationError(
            f"UKO vocabulary not found: {path}", details={"file": str(path)}
        ) from exc
    if not path.is_file():
        raise ConfigurationError(
            f"UKO vocabulary is not a file: {path}", details={"file": str(path)}
        )
    return _vocabulary(str(path.resolve()), stat.st_mtime_ns, stat.st_size)


class UKOLoader:
    """The built-in UKO layers plus extra vocabularies, with inheritance and layer lookups.

    :param vocabularies: paths of extra Turtle files, loaded after the built-in
        layers in the given order; a file may extend any built-in class.
    :raises ConfigurationError: a vocabulary is missing or not valid Turtle
        (the message names the file and line).
    """

    def __init__(self, vocabularies: Iterable[str | Path] = ()) -> None:
        self.vocabularies: tuple[Path, ...] = tuple(Path(v) for v in vocabularies)
        #: Vocabularies skipped by :meth:`from_registry` (plugin, message).
        self.errors: list[tuple[str, str]] = []
        self._parsed: list[_Parsed] = list(_builtin())
        for path in self.vocabularies:
            self._parsed.append(_load_vocabulary(path))
        self._rebuild()

    @classmethod
    def from_registry(cls, registry: Any, *, strict: bool = False) -> UKOLoader:
        """A loader with every vocabulary registered in the kernel's ``vocabulary`` slot.

        ``registry`` is a :class:`cleveragents.registry.Registry`. A vocabulary that
        cannot be loaded is skipped and recorded in :attr:`errors` (plugin name and
        message), as the kernel isolates a failing plugin; with ``strict=True`` it
        raises instead.
        """
        loader = cls()
        view = registry["vocabulary"]
        for name in view:
            plugin = view.registration(name).plugin if hasattr(view, "registration") else "?"
            try:
                loader.add_vocabulary(Path(str(view[name])))
            except CleverAgentsError as exc:
                if strict:
                    raise
                loader.errors.append((plugin, f"vocabulary '{name}': {exc.message}"))
        return loader

    def add_vocabulary(self, path: str | Path) -> None:
        """Load one more Turtle file on top of what is loaded."""
        parsed = _load_vocabulary(Path(path))
        self.vocabularies = (*self.vocabularies, Path(path))
        self._parsed.append(parsed)
        self._rebuild()

    def _rebuild(self) -> None:
        self._terms: dict[str, OntologyTerm] = {}
        self._prefixes: dict[str, str] = {p: ns for p, (ns, _) in LAYERS.items()}
        self._declared_layers: dict[str, int] = {}
        for parsed in self._parsed:
            for prefix, namespace in parsed.prefixes.items():
                if prefix not in STANDARD:
                    self._prefixes.setdefault(prefix, namespace)
            self._declared_layers.update(parsed.layers)
            for iri, term in parsed.terms.items():
                known = self._terms.get(iri)
                if known is None:
                    self._terms[iri] = term
                else:  # a later file extends a known term
                    self._terms[iri] = replace(
                        known,
                        parents=tuple(dict.fromkeys((*known.parents, *term.parents))),
                        domain=known.domain or term.domain,
                        range=known.range or term.range,
                        label=known.label or term.label,
                        comment=known.comment or term.comment,
                    )
            for iri, parents in parsed.extensions.items():
                known = self._terms.get(iri)
                if known is not None:
                    merged = tuple(dict.fromkeys((*known.parents, *parents)))
                    self._terms[iri] = replace(known, parents=merged)
        self._children: dict[str, list[str]] | None = None
        self._prefix_layers: dict[str, int] = {}
        self.__dict__.pop("graph", None)

    # -- names ------------------------------------------------------------------

    def prefixes(self) -> dict[str, str]:
        """prefix -> namespace IRI of every UKO layer and loaded vocabulary."""
        return dict(self._prefixes)

    def expand(self, curie: str) -> str:
        """``uko-tf:Resource`` -> full IRI (vocabulary prefixes included)."""
        return namespaces.expand(curie, self._prefixes)

    def compact(self, iri: str) -> str:
        """Full IRI -> CURIE when its namespace is known."""
        return namespaces.compact(iri, self._prefixes)

    # -- terms ------------------------------------------------------------------

    def __contains__(self, curie: object) -> bool:
        return isinstance(curie, str) and self.expand(curie) in self._terms

    def term(self, curie: str) -> OntologyTerm:
        """What the ontology says about ``curie``; NotFoundError when it declares nothing."""
        term = self._terms.get(self.expand(curie))
        if term is None:
            raise NotFoundError(f"unknown UKO term '{curie}'", details={"term": curie})
        return term

    def _select(self, kinds: Iterable[str], prefix: str | None) -> list[str]:
        wanted = set(kinds)
        namespace = self._prefixes.get(prefix.rstrip(":")) if prefix else None
        if prefix and namespace is None:
            return []
        return sorted(
            self.compact(iri)
            for iri, term in self._terms.items()
            if term.kind in wanted and (namespace is None or iri.startswith(namespace))
        )

    def classes(self, prefix: str | None = None) -> list[str]:
        """CURIEs of every class, or of those in one prefix (``"uko-py"``)."""
        return self._select(("class",), prefix)

    def properties(self, prefix: str | None = None, *, kind: str | None = None) -> list[str]:
        """CURIEs of every property; ``kind`` is ``object``, ``datatype`` or ``annotation``."""
        kinds = [k for k in _KINDS.values() if k != "class"]
        if kind is not None:
            kinds = [k for k in kinds if k.startswith(kind)]
        return self._select(kinds, prefix)

    def parents(self, curie: str) -> list[str]:
        """Direct superclasses (or superproperties) in declared order."""
        return [self.compact(p) for p in self.term(curie).parents]

    def resolve_inheritance(self, curie: str) -> list[str]:
        """``curie`` followed by all its ancestors, breadth first, each once.

        Multiple parents are visited in the order the Turtle declares them, so
        ``uko-oo:Class`` gives ``[uko-oo:Class, uko-code:TypeDefinition,
        uko:Container, uko:Atom, uko:InformationUnit]``. Works for properties
        too (over ``rdfs:subPropertyOf``).
        """
        start = self.expand(curie)
        if start not in self._terms:
            raise NotFoundError(f"unknown UKO term '{curie}'", details={"term": curie})
        order, seen, queue = [], {start}, deque([start])
        while queue:
            iri = queue.popleft()
            order.append(self.compact(iri))
            term = self._terms.get(iri)
            for parent in term.parents if term else ():
                if parent not in seen:
                    seen.add(parent)
                    queue.append(parent)
        return order

    def is_subclass(self, curie: str, ancestor: str) -> bool:
        """True when ``curie`` is ``ancestor`` or inherits from it (classes or properties)."""
        if curie not in self:
            return False
        return self.compact(self.expand(ancestor)) in self.resolve_inheritance(curie)

    def descendants(self, curie: str, *, direct: bool = False) -> list[str]:
        """Every class (or property) that inherits from ``curie``, breadth first."""
        if self._children is None:
            children: dict[str, list[str]] = {}
            for iri, term in self._terms.items():
                for parent in term.parents:
                    children.setdefault(parent, []).append(iri)
            self._children = children
        start = self.expand(curie)
        self.term(curie)
        order: list[str] = []
        seen, queue = {start}, deque([start])
        while queue:
            for child in sorted(self._children.get(queue.popleft(), ())):
                if child not in seen:
                    seen.add(child)
                    order.append(self.compact(child))
                    if not direct:
                        queue.append(child)
        return order

    def unresolved_parents(self) -> list[tuple[str, str]]:
        """(term, parent) pairs whose parent no loaded file declares: likely typos."""
        known = set(self._terms) | {str(RDFS.label), str(RDFS.comment)}
        return sorted(
            (self.compact(iri), self.compact(parent))
            for iri, term in self._terms.items()
            for parent in term.parents
            if parent not in known
        )

    # -- layers -----------------------------------------------------------------

    def layer_of(self, curie: str) -> int:
        """The UKO layer (0-3) of a term, CURIE prefix (``"uko-py"``) or IRI, by prefix.

        Built-in prefixes have fixed layers. A vocabulary's prefix takes the layer
        its owl:Ontology header states with ``uko:layer``, else one more than the
        deepest layer its classes inherit from (at most 3).
        """
        if curie.rstrip(":") in self._prefixes:
            prefix = curie.rstrip(":")
        else:
            prefix = self.compact(curie).partition(":")[0] if ":" in curie else ""
        if prefix not in self._prefixes:
            raise ValidationError(
                f"'{curie}' is not in a known UKO namespace "
                f"(known prefixes: {', '.join(sorted(self._prefixes))})",
                details={"term": curie},
            )
        return self._prefix_layer(prefix, set())

    def _prefix_layer(self, prefix: str, visiting: set[str]) -> int:
        if prefix in self._prefix_layers:
            return self._prefix_layers[prefix]
        builtin = namespaces.layer_of_prefix(prefix)
        namespace = self._prefixes[prefix]
        if builtin is not None:
            return builtin
        for ontology, layer in self._declared_layers.items():
            if namespace.rstrip("#/") == ontology.rstrip("#/"):
                self._prefix_layers[prefix] = min(layer, _MAX_LAYER)
                return self._prefix_layers[prefix]
        visiting = visiting | {prefix}
        deepest = 0
        for iri, term in self._terms.items():
            if not iri.startswith(namespace):
                continue
            for parent in term.parents:
                parent_prefix = self.compact(parent).partition(":")[0]
                if parent_prefix in self._prefixes and parent_prefix not in visiting:
                    deepest = max(deepest, self._prefix_layer(parent_prefix, visiting) + 1)
        layer = min(max(deepest, 1), _MAX_LAYER)
        self._prefix_layers[prefix] = layer
        return layer

    # -- the graph --------------------------------------------------------------

    @functools.cached_property
    def graph(self) -> Graph:
        """All loaded triples in one rdflib graph (a fresh copy per loader)."""
        graph = Graph(bind_namespaces="core")
        for prefix, namespace in self._prefixes.items():
            graph.bind(prefix, namespace)
        for parsed in self._parsed:
            graph += parsed.graph
        return graph

    def __iter__(self) -> Iterator[OntologyTerm]:
        return iter(self._terms.values())

    def __len__(self) -> int:
        return len(self._terms)

    def as_mapping(self) -> Mapping[str, OntologyTerm]:
        """CURIE -> term for every loaded class and property."""
        return {self.compact(iri): term for iri, term in self._terms.items()}
