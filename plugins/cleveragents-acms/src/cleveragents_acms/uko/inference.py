"""Implicit UKO relations inferred from the triples analyzers extract (spec 002).

Three patterns, each producing triples with confidence 0.7 and ``inferred=True``:

* **co-occurrence** -> ``uko:implicitSiblingOf``: two subjects with the same
  ``rdf:type`` in the same container. Siblings are scoped to a container
  (explicit ``uko:contains`` parent, else the URI parent) because "same type
  anywhere" is quadratic and says nothing in a large repository; a group larger
  than ``max_group_size`` is skipped for the same reason. The property is
  symmetric, so each pair is emitted once (lexically smaller URI first).
* **containment** -> ``uko:implicitContains``: a subject's URI extends another
  subject's URI at a ``/`` or ``#`` boundary (or a ``.`` inside the fragment).
  Only the nearest such ancestor is linked; the rest follows transitively.
* **dependency** -> ``uko:implicitDependsOn``: one of a subject's object values
  is, or mentions, another subject's URI.

An inferred triple that repeats an explicit one is dropped, and inferred input
triples are ignored, so running the engine again over its own output adds
nothing. Predicates of the output are full IRIs; the output lists containment,
then siblings, then dependencies, each in a fixed order whatever the input order.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, NamedTuple

from cleveragents.errors import ValidationError
from cleveragents_acms.ontology.namespaces import RDF_TYPE, UKO, expand

if TYPE_CHECKING:
    from cleveragents_acms.ontology.loader import UKOLoader

__all__ = [
    "IMPLICIT_CONTAINS",
    "IMPLICIT_DEPENDS_ON",
    "IMPLICIT_PREDICATES",
    "IMPLICIT_SIBLING_OF",
    "INFERENCE_CONFIDENCE",
    "UKOInferenceEngine",
    "UKOTriple",
]

#: Confidence of every inferred triple (spec 002); extracted triples have 1.0.
INFERENCE_CONFIDENCE = 0.7

IMPLICIT_SIBLING_OF = UKO + "implicitSiblingOf"
IMPLICIT_CONTAINS = UKO + "implicitContains"
IMPLICIT_DEPENDS_ON = UKO + "implicitDependsOn"
IMPLICIT_PREDICATES = frozenset({IMPLICIT_SIBLING_OF, IMPLICIT_CONTAINS, IMPLICIT_DEPENDS_ON})

_CONTAINS = UKO + "contains"
_DEPENDS_ON = UKO + "dependsOn"
#: Object values of these predicates are structure or bookkeeping, not dependencies.
_NOT_DEPENDENCIES = frozenset(
    {
        RDF_TYPE,
        _CONTAINS,
        UKO + "isRevisionOf",
        UKO + "sourceResource",
        UKO + "implicitRelation",
        expand("uko-doc:precedes"),
        "http://www.w3.org/2000/01/rdf-schema#subClassOf",
        "http://www.w3.org/2000/01/rdf-schema#seeAlso",
        *IMPLICIT_PREDICATES,
    }
)
_URI_IN_TEXT = re.compile(r"[a-zA-Z][a-zA-Z0-9+.-]*:[^\s\"'<>`{}|\\^]+")
_TRAILING = ".,;:!?)]"


class UKOTriple(NamedTuple):
    """A (subject, predicate, object) statement with its confidence.

    Extracted triples have confidence 1.0; inferred ones 0.7 and ``inferred=True``.
    A named tuple because a repository yields hundreds of thousands of them.
    """

    subject: str
    predicate: str
    object: str
    confidence: float = 1.0
    inferred: bool = False

    def as_tuple(self) -> tuple[str, str, str]:
        return (self.subject, self.predicate, self.object)


def _triple(item: UKOTriple | Sequence[str]) -> UKOTriple:
    if isinstance(item, UKOTriple):
        return item
    if len(item) != 3 or not all(isinstance(part, str) for part in item):
        raise ValidationError(f"expected a (subject, predicate, object) triple, got {item!r}")
    return UKOTriple(item[0], item[1], item[2])


def _predicate(value: str) -> str:
    if "://" in value:
        return value
    return RDF_TYPE if value in ("a", "rdf:type") else expand(value)


def _uri_parent(uri: str, known: set[str]) -> str | None:
    """The longest other subject that ``uri`` extends at a path or fragment boundary."""
    fragment_at = uri.find("#")
    for index in range(len(uri) - 1, 0, -1):
        char = uri[index]
        if char in "/#" or (char == "." and 0 <= fragment_at < index):
            candidate = uri[:index]
            if candidate in known and candidate != uri:
                return candidate
    return None


class UKOInferenceEngine:
    """Adds implicit relations to a batch of UKO triples (spec 002, UKOInferenceEngine).

    :param loader: tells which predicates already are dependencies (sub-properties
        of ``uko:dependsOn``); without one, only ``uko:dependsOn`` itself counts.
    :param max_group_size: sibling groups larger than this are skipped.
    """

    confidence = INFERENCE_CONFIDENCE

    def __init__(self, loader: UKOLoader | None = None, *, max_group_size: int = 50) -> None:
        if isinstance(max_group_size, bool) or not isinstance(max_group_size, int):
            raise ValidationError(f"max_group_size must be an integer, got {max_group_size!r}")
        if max_group_size < 2:
            raise ValidationError(f"max_group_size must be at least 2, got {max_group_size}")
        self.max_group_size = max_group_size
        self._dependency_predicates = {_DEPENDS_ON}
        if loader is not None and "uko:dependsOn" in loader:
            self._dependency_predicates |= {
                loader.expand(p) for p in loader.descendants("uko:dependsOn")
            }

    def infer(self, triples: Iterable[UKOTriple | Sequence[str]]) -> list[UKOTriple]:
        """The implicit triples the three patterns find in ``triples``."""
        explicit = [
            t
            for t in (_triple(item) for item in triples)
            if not t.inferred and _predicate(t.predicate) not in IMPLICIT_PREDICATES
        ]
        normalized = [(t.subject, _predicate(t.predicate), t.object) for t in explicit if t.subject]
        subjects = {s for s, _, _ in normalized}
        stated = set(normalized)
        found = [
            *self._containment(subjects, stated),
            *self._co_occurrence(normalized, subjects),
            *self._dependencies(normalized, subjects),
        ]
        return [UKOTriple(s, p, o, self.confidence, True) for s, p, o in found]

    # -- the three patterns ---------------------------------------------------------

    @staticmethod
    def _containment(
        subjects: set[str], stated: set[tuple[str, str, str]]
    ) -> list[tuple[str, str, str]]:
        found = []
        for subject in sorted(subjects):
            parent = _uri_parent(subject, subjects)
            if parent is not None and (parent, _CONTAINS, subject) not in stated:
                found.append((parent, IMPLICIT_CONTAINS, subject))
        return found

    def _co_occurrence(
        self, triples: list[tuple[str, str, str]], subjects: set[str]
    ) -> list[tuple[str, str, str]]:
        container: dict[str, str] = {}
        for s, p, o in triples:
            if p == _CONTAINS:
                container.setdefault(o, s)
        groups: dict[tuple[str, str | None], set[str]] = defaultdict(set)
        for s, p, o in triples:
            if p == RDF_TYPE:
                scope = container.get(s) or _uri_parent(s, subjects)
                groups[(o, scope)].add(s)
        found: dict[tuple[str, str, str], None] = {}
        for key in sorted(groups, key=lambda k: (k[0], k[1] or "")):
            members = groups[key]
            if len(members) < 2 or len(members) > self.max_group_size:
                continue
            ordered = sorted(members)
            for index, first in enumerate(ordered):
                for second in ordered[index + 1 :]:
                    found[(first, IMPLICIT_SIBLING_OF, second)] = None
        return list(found)

    def _dependencies(
        self, triples: list[tuple[str, str, str]], subjects: set[str]
    ) -> list[tuple[str, str, str]]:
        explicit = {(s, o) for s, p, o in triples if p in self._dependency_predicates}
        found = set()
        for s, p, o in triples:
            if p in _NOT_DEPENDENCIES or p in self._dependency_predicates:
                continue
            targets = {o} if o in subjects else set()
            if o not in subjects and ":" in o:
                for match in _URI_IN_TEXT.findall(o):
                    candidate = match.rstrip(_TRAILING)
                    if candidate in subjects:
                        targets.add(candidate)
            for target in targets:
                if target != s and (s, target) not in explicit:
                    found.add((s, IMPLICIT_DEPENDS_ON, target))
        return sorted(found)
