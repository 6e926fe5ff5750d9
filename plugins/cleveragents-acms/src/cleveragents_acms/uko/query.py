"""A typed view of the UKO graph for context strategies (spec 002, UKOQueryInterface).

Strategies ask "what kind of resource is this, at which ontology layer, and what
was inferred about it" without writing SPARQL. The interface talks to any
:class:`cleveragents.protocols.GraphBackend` using only basic graph patterns
(``CONSTRUCT { P } WHERE { P }`` for a basic graph pattern P), which every
backend answers with the matching triples, and relies on the backend's ``scope``
to restrict results to a resource: a node belongs to the resource named by its
``uko:sourceResource``.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from cleveragents.errors import ValidationError
from cleveragents.protocols import GraphBackend
from cleveragents_acms.ontology.namespaces import RDF_TYPE, UKO
from cleveragents_acms.uko.inference import IMPLICIT_PREDICATES

if TYPE_CHECKING:
    from cleveragents_acms.ontology.loader import UKOLoader

__all__ = [
    "LAYER_DOMAIN",
    "LAYER_PARADIGM",
    "LAYER_TECHNOLOGY",
    "LAYER_UNIVERSAL",
    "ClassificationResult",
    "UKOArgumentError",
    "UKOQueryInterface",
]

LAYER_UNIVERSAL = 0
LAYER_DOMAIN = 1
LAYER_PARADIGM = 2
LAYER_TECHNOLOGY = 3

_SOURCE_RESOURCE = UKO + "sourceResource"
_CONTAINS = UKO + "contains"
_ULID = re.compile(r"[0-9A-HJKMNP-TV-Z]{26}$", re.IGNORECASE)


class UKOArgumentError(ValidationError, ValueError):
    """A bad argument: a ValidationError for the CLI and A2A, a ValueError as spec 002 says."""


@dataclass(frozen=True)
class ClassificationResult:
    """What the graph says about one resource (spec 002)."""

    resource_id: str
    #: Highest UKO layer populated for this resource (0-3).
    layer: int = LAYER_UNIVERSAL
    #: CURIE of the type of the resource's top-level units, e.g. ``uko-py:Module``.
    primary_type: str = ""
    all_types: tuple[str, ...] = ()
    implicit_relations: tuple[tuple[str, str, str], ...] = ()


def _term(value: str) -> str:
    """A backend's rendering of a term as a plain IRI or lexical value."""
    if value.startswith("<") and value.endswith(">"):
        return value[1:-1]
    if value.startswith('"'):
        end = value.rfind('"')
        return value[1:end] if end > 0 else value
    return value


def _resource_of(value: str, scope: frozenset[str]) -> str:
    """The resource in a ``uko:sourceResource`` value: a ULID, or an IRI ending in one."""
    value = _term(value)
    match = _ULID.search(value)
    candidates = (value, match.group(0).upper() if match else "", re.split(r"[/:#]", value)[-1])
    return next((c for c in candidates if c in scope), value)


class UKOQueryInterface:
    """Typed queries over the UKO graph of one project.

    :param graph_backend: any :class:`~cleveragents.protocols.GraphBackend`.
    :param project: the project's namespaced name (``"local/my-app"``).
    :param resources: the project's resource ULIDs, or a callable returning them;
        :meth:`get_resources_by_layer` looks only at these.
    :param loader: the ontology (for layers of vocabulary prefixes and to tell
        containers); the built-in layers when omitted.
    :raises TypeError: ``graph_backend`` is not a GraphBackend.
    :raises UKOArgumentError: ``project`` is empty.
    """

    def __init__(
        self,
        graph_backend: GraphBackend,
        project: str,
        *,
        resources: Iterable[str] | Callable[[], Iterable[str]] = (),
        loader: UKOLoader | None = None,
    ) -> None:
        if not isinstance(graph_backend, GraphBackend):
            raise TypeError(
                f"graph_backend must satisfy GraphBackend "
                f"(sparql_query, get_triples, traverse), got {type(graph_backend).__name__}"
            )
        if not isinstance(project, str) or not project.strip():
            raise UKOArgumentError("project must be a non-empty string")
        self.graph_backend = graph_backend
        self.project = project
        self._resources = resources
        self._loader = loader

    @property
    def loader(self) -> UKOLoader:
        if self._loader is None:
            from cleveragents_acms.ontology.loader import UKOLoader

            self._loader = UKOLoader()
        return self._loader

    def resources(self) -> list[str]:
        """The resource ULIDs this interface answers for."""
        source = self._resources() if callable(self._resources) else self._resources
        return sorted({r for r in source if isinstance(r, str) and r.strip()})

    # -- spec 002 -------------------------------------------------------------------------

    def classify_resource(self, resource_id: str) -> ClassificationResult:
        """Types, layer and inferred relations of one resource; layer 0 if not indexed."""
        resource_id = self._require_id(resource_id)
        typed = self._typed_subjects(frozenset({resource_id})).get(resource_id, {})
        if not typed:
            return ClassificationResult(resource_id)
        types = {t for ts in typed.values() for t in ts}
        layers = {t: self._layer(t) for t in types}
        uko_types = {t: layer for t, layer in layers.items() if layer is not None}
        if not uko_types:
            return ClassificationResult(resource_id)
        return ClassificationResult(
            resource_id=resource_id,
            layer=max(uko_types.values()),
            primary_type=self._primary_type(resource_id, typed, uko_types),
            all_types=tuple(sorted(uko_types)),
            implicit_relations=tuple(self._implicit(resource_id, set(typed))),
        )

    def get_resources_by_layer(self, layer: int) -> list[str]:
        """Resource ULIDs whose highest populated layer is ``layer`` (0-3)."""
        if isinstance(layer, bool) or not isinstance(layer, int) or not 0 <= layer <= 3:
            raise UKOArgumentError(f"layer must be an integer from 0 to 3, got {layer!r}")
        resources = self.resources()
        if not resources:
            return []
        typed = self._typed_subjects(frozenset(resources))
        found = []
        for resource_id in resources:
            layers = [self._layer(t) for ts in typed.get(resource_id, {}).values() for t in ts]
            known = [lv for lv in layers if lv is not None]
            if max(known, default=LAYER_UNIVERSAL) == layer:
                found.append(resource_id)
        return found

    def get_implicit_relations(self, resource_id: str) -> list[tuple[str, str, str]]:
        """Inferred (subject, predicate, object) triples of a resource's nodes."""
        resource_id = self._require_id(resource_id)
        subjects = set(self._typed_subjects(frozenset({resource_id})).get(resource_id, {}))
        return self._implicit(resource_id, subjects) if subjects else []

    # -- helpers --------------------------------------------------------------------------

    @staticmethod
    def _require_id(resource_id: str) -> str:
        if not isinstance(resource_id, str) or not resource_id.strip():
            raise UKOArgumentError("resource_id must be a non-empty string")
        return resource_id.strip()

    def _query(self, body: str, scope: frozenset[str]) -> list[tuple[str, str, str]]:
        # CONSTRUCT returns triples from any SPARQL engine, and the kernel's
        # pattern-matching backends answer it the same way.
        query = f"CONSTRUCT {{ {body} }} WHERE {{ {body} }}"
        result = self.graph_backend.sparql_query(query, scope=scope)
        return [(_term(s), _term(p), _term(o)) for s, p, o in result.triples]

    def _typed_subjects(self, scope: frozenset[str]) -> dict[str, dict[str, set[str]]]:
        """resource -> subject -> compacted rdf:type values, for resources in ``scope``."""
        rows = self._query(f"?s <{_SOURCE_RESOURCE}> ?r . ?s <{RDF_TYPE}> ?t .", scope)
        owner: dict[str, str] = {}
        types: dict[str, set[str]] = {}
        for s, p, o in rows:
            if p == _SOURCE_RESOURCE:
                owner[s] = _resource_of(o, scope)
            elif p == RDF_TYPE:
                types.setdefault(s, set()).add(self.loader.compact(o))
        by_resource: dict[str, dict[str, set[str]]] = {}
        for subject, resource_id in owner.items():
            if resource_id in scope and subject in types:
                by_resource.setdefault(resource_id, {})[subject] = types[subject]
        return by_resource

    def _layer(self, curie: str) -> int | None:
        if "://" in curie or ":" not in curie:
            return None
        try:
            return self.loader.layer_of(curie)
        except ValidationError:
            return None

    def _primary_type(
        self, resource_id: str, typed: dict[str, set[str]], layers: dict[str, int]
    ) -> str:
        """The type of the resource's top-level units, preferring the deepest layer.

        Top-level units are those no other unit of the resource contains; their
        types are ranked by layer, then by how many units have them.
        """
        contained = {
            o
            for s, _, o in self._query(f"?s <{_CONTAINS}> ?o .", frozenset({resource_id}))
            if s in typed
        }
        roots = [s for s in typed if s not in contained] or list(typed)
        counts = Counter(t for s in roots for t in typed[s] if t in layers)
        if not counts:
            counts = Counter(t for ts in typed.values() for t in ts if t in layers)
        return min(counts, key=lambda t: (-layers[t], -counts[t], t))

    def _implicit(self, resource_id: str, subjects: set[str]) -> list[tuple[str, str, str]]:
        scope = frozenset({resource_id})
        found: set[tuple[str, str, str]] = set()
        for predicate in sorted(IMPLICIT_PREDICATES):
            for s, p, o in self._query(f"?s <{predicate}> ?o .", scope):
                if p == predicate and (s in subjects or o in subjects):
                    found.add((s, p, o))
        return sorted(found)
