"""Python members through base classes: ``self.save()`` in a class that does not define
``save`` is a call to the ``save`` one of its bases has.

The analyzer sees one file, so it leaves such a call as a guess naming the class and
the member (``symbol:inherited:<class URI>.save``, see ``INHERITED_TARGET``; for
``super().save()``, ``symbol:inherited:super:<class URI>.save``, the class's own ``save``
left out); once every base class edge is resolved, :class:`Inheritance` walks the
class's bases in Python's method resolution order (C3) for the first class defining
the member. Only the resource's own classes are known: a base from elsewhere
(``unittest.TestCase``) is left out of the order, and a guess no class answers is no
edge.

The same lookup settles a name of a member through its class from anywhere
(``MyView.as_view()``) or through a module variable made by calling a class
(``apps.get_model()`` of ``apps = Apps()``, whose ``usesType`` edge names the class:
:meth:`Inheritance.class_of`), once the ordinary names have been resolved.

A refresh resolves the same way from the stored classes (:func:`stored_ancestry`); the
files to analyse again when a class gains members or changes its bases, or a variable
is made by another class, are found by ``dependents``.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING
from urllib.parse import quote

from cleveragents.models.uko import UKONode
from cleveragents_acms.analyzers._common import (
    ALIAS,
    CALL_RESULT,
    INHERITED_TARGET,
    INHERITS_FROM,
    SUPER_GUESS,
    SYMBOL,
    USES_TYPE,
    is_python,
)
from cleveragents_acms.analyzers.python import (
    T_ASYNC_FUNCTION,
    T_ATTRIBUTE,
    T_CLASS,
    T_ENUM,
    T_FUNCTION,
    T_METHOD,
    T_PROPERTY,
    T_PROTOCOL,
    T_VARIABLE,
)

if TYPE_CHECKING:
    from cleveragents_acms.indexing.store import NodeStore

#: Python values whose class (their ``usesType`` edge) a name of a member goes through:
#: a module variable (``apps = Apps()``), a class's attribute (``session: Session``) or
#: property (``def config(self) -> Config``: ``app.config.items``).
TYPED_VALUE_TYPES = (T_VARIABLE, T_ATTRIBUTE, T_PROPERTY)

__all__ = [
    "ALIAS_DEPTH",
    "INHERITANCE_DEPTH",
    "PYTHON_CALLABLE_TYPES",
    "PYTHON_CLASS_TYPES",
    "Inheritance",
    "inherited_guesses",
    "is_alias",
    "is_python_class",
    "load_ancestors",
    "member_references",
    "member_uris",
    "parse_guess",
    "stored_ancestry",
]

#: The node types of Python classes (a ``Protocol`` and an ``Enum`` are classes too).
PYTHON_CLASS_TYPES = frozenset({T_CLASS, T_PROTOCOL, T_ENUM})
#: How many module variables naming a class by another name (``Matrix = MutableMatrix``)
#: a class is looked for through, one naming the next.
ALIAS_DEPTH = 4


def is_alias(node: UKONode) -> bool:
    """A Python module variable that is a class under another name (``ALIAS``)."""
    return node.uko_type == T_VARIABLE and ALIAS in node.properties


#: The node types of what a Python call may call besides a class, whose return annotation
#: may say what the call gives (``CALL_RESULT``).
PYTHON_CALLABLE_TYPES = frozenset({T_FUNCTION, T_ASYNC_FUNCTION, T_METHOD})

#: How many definitions of one member name a class is looked at for (``run``, then its
#: redefinitions ``run~2`` …): the last one is the member, as in Python.
_REDEFINITIONS = 4
#: How many bases deep a class's method resolution order is followed.
INHERITANCE_DEPTH = 16


def member_uris(cls: str, name: str) -> list[str]:
    """The URIs the member ``name`` of the Python class of URI ``cls`` may have: its first
    definition, then its redefinitions (the analyzer's ``name~2`` …). A member's
    qualified name is its class's and its own name (as ``node_uri`` writes it)."""
    member = f"{cls}.{quote(name, safe='.')}"
    return [member, *(f"{member}~{i}" for i in range(2, _REDEFINITIONS + 1))]


def parse_guess(target: str) -> tuple[str, str, bool]:
    """``(class URI, member name, above)`` of an inherited-member guess; ``above`` for
    ``super().name()``, which looks above the class only."""
    rest = target[len(INHERITED_TARGET) :]
    above = rest.startswith(SUPER_GUESS)
    cls, _, name = rest[len(SUPER_GUESS) if above else 0 :].rpartition(".")
    return cls, name, above


def inherited_guesses(nodes: Iterable[UKONode]) -> list[tuple[str, str, bool]]:
    """:func:`parse_guess` of each guess of ``nodes`` that a member is inherited
    (:data:`INHERITED_TARGET`)."""
    return [
        parse_guess(target)
        for node in nodes
        for _, target in node.edges
        if target.startswith(INHERITED_TARGET)
    ]


def is_python_class(node: UKONode) -> bool:
    return node.uko_type in PYTHON_CLASS_TYPES


class Inheritance:
    """Python classes' members through their bases, among the nodes ``by_uri``: a base is a
    class an ``inheritsFrom`` edge resolved to; a base from elsewhere (``TestCase``) has
    no node and is left out of the order, so only the resource's own classes answer."""

    def __init__(self, by_uri: dict[str, UKONode]) -> None:
        self.by_uri = by_uri
        self._orders: dict[str, list[str]] = {}
        self._members: dict[tuple[str, str, bool], str | None] = {}

    def bases(self, uri: str) -> list[str]:
        """The URIs of the classes ``uri`` names as bases, in order."""
        return list(
            dict.fromkeys(
                target
                for target in _base_targets(self.by_uri[uri])
                if target in self.by_uri and is_python_class(self.by_uri[target])
            )
        )

    def order(self, uri: str, _seen: frozenset[str] = frozenset()) -> list[str]:
        """``uri`` and its bases in Python's method resolution order (C3); where C3 finds
        none (an inconsistent hierarchy), depth first, left to right."""
        known = self._orders.get(uri)
        if known is not None:
            return known
        if uri in _seen or len(_seen) >= INHERITANCE_DEPTH:  # a cycle, or too deep
            return [uri]
        bases = self.bases(uri)
        orders = [self.order(base, _seen | {uri}) for base in bases]
        merged = _c3_merge([*orders, bases])
        if merged is None:
            merged = list(dict.fromkeys(c for order in orders for c in order))
        self._orders[uri] = [uri, *(c for c in merged if c != uri)]
        return self._orders[uri]

    def member(self, cls: str, name: str, *, above: bool = False) -> str | None:
        """The URI of the member ``name`` the class ``cls`` has or inherits (``above``:
        only inherits, as ``super().name``); None when no class of its order (of those
        known) defines it."""
        key = (cls, name, above)
        if key not in self._members:
            self._members[key] = None
            if cls in self.by_uri and is_python_class(self.by_uri[cls]):
                for uri in self.order(cls)[1 if above else 0 :]:
                    found = [m for m in member_uris(uri, name) if m in self.by_uri]
                    if found:
                        self._members[key] = found[-1]
                        break
        return self._members[key]

    def class_of(self, uri: str) -> str | None:
        """The class a name of a member goes through: ``uri`` when it is a class's, the
        class of its value when it is a variable made by calling one (``USES_TYPE``)."""
        node = self.by_uri.get(uri)
        if node is None:
            return None
        if is_python_class(node):
            return uri
        return self._used_type(node)

    def returned_class(self, uri: str) -> str | None:
        """The class calling ``uri`` gives: a function's or method's whose return
        annotation names one (its ``usesType`` edge), or a class's own."""
        node = self.by_uri.get(uri)
        if node is None:
            return None
        if is_python_class(node):
            return uri
        return self._used_type(node) if node.uko_type in PYTHON_CALLABLE_TYPES else None

    def _used_type(self, node: UKONode) -> str | None:
        """The class of ``node``'s ``usesType`` edge, through the module variables that
        are classes under other names (``Matrix = MutableMatrix``, ``MutableMatrix =
        MutableDenseMatrix``: ``ALIAS``) to at most :data:`ALIAS_DEPTH` of them."""
        current: UKONode | None = node
        for _ in range(ALIAS_DEPTH + 1):
            if current is None:
                break
            used = [t for p, t in current.edges if p == USES_TYPE and t in self.by_uri]
            found = next((t for t in used if is_python_class(self.by_uri[t])), None)
            if found is not None:
                return found
            current = next((self.by_uri[t] for t in used if is_alias(self.by_uri[t])), None)
        return None

    def resolve(self, nodes: Iterable[UKONode]) -> int:
        """Rewrite the inherited-member guesses of ``nodes`` to the members' URIs and drop
        those no class answers; returns how many were resolved."""
        resolved = 0
        for node in nodes:
            edges: list[tuple[str, str]] = []
            for predicate, target in node.edges:
                if target.startswith(INHERITED_TARGET):
                    cls, name, above = parse_guess(target)
                    uri = self.member(cls, name, above=above)
                    if uri is None or uri == node.uri:
                        continue
                    target = uri
                    resolved += 1
                edges.append((predicate, target))
            node.edges = list(dict.fromkeys(edges))
        return resolved


def _c3_merge(sequences: list[list[str]]) -> list[str] | None:
    """C3's merge of the bases' orders and the bases: None when no order keeps them all."""
    merged: list[str] = []
    pending = [list(s) for s in sequences if s]
    while pending:
        for sequence in pending:
            head = sequence[0]
            if not any(head in other[1:] for other in pending):
                break
        else:
            return None
        merged.append(head)
        pending = [s[1:] if s[0] == head else s for s in pending]
        pending = [s for s in pending if s]
    return merged


def _base_targets(node: UKONode) -> list[str]:
    return [t for p, t in node.edges if p == INHERITS_FROM]


def load_ancestors(
    store: NodeStore, classes: Iterable[str], *, besides: Iterable[str] = ()
) -> dict[str, UKONode]:
    """The stored classes ``classes`` and those they inherit from, at any depth (but not
    ``besides``, or through them), with their edges, by URI."""
    found: dict[str, UKONode] = {}
    skipped = set(besides)
    frontier = set(classes)
    for _ in range(INHERITANCE_DEPTH + 1):
        wanted = frontier - found.keys() - skipped
        if not wanted:
            break
        loaded = {u: n for u, n in store.get_many(wanted).items() if is_python_class(n)}
        found.update(loaded)
        frontier = {
            t for n in loaded.values() for t in _base_targets(n) if not t.startswith(SYMBOL)
        }
    return found


def _used(node: UKONode) -> set[str]:
    """The node URIs of ``node``'s ``usesType`` edges (not the unresolved names)."""
    return {t for p, t in node.edges if p == USES_TYPE and not t.startswith(SYMBOL)}


def member_references(nodes: Iterable[UKONode]) -> list[tuple[str, str]]:
    """``(class name, member)`` of each Python name of ``nodes`` that may be a class's
    member (``pkg.views.Form.as_view`` -> ``("Form", "as_view")``): if no node answers
    it, the member the class inherits may. A callee of what a call returns is one too
    (``pkg.Series.resample().mean``: ``("resample()", "mean")`` and ``("Series",
    "resample")``)."""
    found = []
    for node in nodes:
        if not is_python(node):
            continue
        for _, target in node.edges:
            if not target.startswith(SYMBOL) or target.startswith(INHERITED_TARGET):
                continue
            dotted = target[len(SYMBOL) :]
            parts = dotted.split(".")
            if len(parts) > 1:
                found.append((parts[-2], parts[-1]))
            callee, called, _ = dotted.partition(CALL_RESULT)
            if called and "." in callee:  # ``Series.resample().mean``: ``resample`` too,
                owner = callee.split(".")  # which ``Series`` may inherit
                found.append((owner[-2], owner[-1]))
    return found


def stored_ancestry(
    store: NodeStore, resource_id: str, new: Sequence[UKONode], found: Iterable[UKONode]
) -> list[UKONode]:
    """What a refresh needs from the store to resolve as a cold index does the
    inherited-member guesses of ``new`` and its names of classes' members
    (:func:`member_references`): the stored classes they may go through, with their
    edges (their bases), base after base, and those classes' members of the names each
    wants. ``found`` are the stored nodes looked up by the names of ``new``'s targets,
    among them the bases its classes name and the classes its names go through (their
    edges are not resolved yet: a class is any class of the name it is written with)."""
    guesses = [(cls, name) for cls, name, _ in inherited_guesses(new)]
    fresh = {n.uri: n for n in new if is_python_class(n)}
    by_name: dict[str, list[str]] = {}
    for node in found:
        if is_python_class(node):
            by_name.setdefault(node.name, []).append(node.uri)
    # A class a name goes through, stored or in ``new``, with its own members too; for a
    # variable made by calling a class (``apps = Apps()``) or an attribute of one
    # (``session: Session``), that class.
    references = member_references(new)
    everywhere = {name: list(uris) for name, uris in by_name.items()}
    for uri, node in fresh.items():
        everywhere.setdefault(node.name, []).append(uri)
    named = {owner for owner, _ in references}
    # ``make_client().get``: the class ``make_client`` returns (its ``usesType`` edge), or
    # ``make_client`` itself, a class.
    called = {owner.removesuffix(CALL_RESULT) for owner in named if owner.endswith(CALL_RESULT)}
    for name in called:
        everywhere.setdefault(name + CALL_RESULT, []).extend(everywhere.get(name, ()))
    # A function a name calls as if it were a class (SymPy's ``SymmetricGroup(4).order``)
    # gives what it returns too.
    callees = called | named
    typed = store.get_many(
        n.uri
        for n in found
        if (n.uko_type in TYPED_VALUE_TYPES and n.name in named)
        or (n.uko_type in PYTHON_CALLABLE_TYPES and n.name in callees)
    )
    fresh_typed = [
        n
        for n in new
        if n.uko_type in TYPED_VALUE_TYPES
        or (n.uko_type in PYTHON_CALLABLE_TYPES and n.name in callees)
    ]
    # ``Matrix = MutableMatrix``: the variables an alias names, one after the other, loaded
    # with their edges as far as a class.
    fresh_variables = {n.uri: n for n in fresh_typed if n.uko_type == T_VARIABLE}
    aliased = {t for n in typed.values() if is_alias(n) for t in _used(n)}
    aliased |= {t for n in fresh_variables.values() if is_alias(n) for t in _used(n)}
    for _ in range(ALIAS_DEPTH):
        aliased -= typed.keys() | fresh_variables.keys()
        if not aliased:
            break
        loaded = {u: n for u, n in store.get_many(aliased).items() if n.uko_type == T_VARIABLE}
        typed.update(loaded)
        aliased = {t for n in loaded.values() if is_alias(n) for t in _used(n)}

    def chased(uri: str) -> str:
        """The class at the end of the aliases from ``uri`` (``uri`` itself if none)."""
        for _ in range(ALIAS_DEPTH):
            node = typed.get(uri) or fresh_variables.get(uri)
            if node is None or not is_alias(node):
                break
            uri = next(iter(_used(node)), uri)
        return uri

    for node in [*typed.values(), *fresh_typed]:
        if node.uko_type in TYPED_VALUE_TYPES:
            names = [node.name]
        else:
            names = [node.name + CALL_RESULT] if node.name in called else []
            names += [node.name] if node.name in named else []
        for predicate, target in node.edges:
            if predicate != USES_TYPE:
                continue
            if not target.startswith(SYMBOL):
                classes = [chased(target)]
            elif node.uri not in typed:  # not resolved yet: any class of its name
                classes = by_name.get(target.rsplit(".", 1)[-1], [])
            else:
                continue
            for owner in names:
                everywhere.setdefault(owner, []).extend(classes)
    owners = {(cls, member) for owner, member in references for cls in everywhere.get(owner, ())}
    if not guesses and not owners:
        return []
    ancestors: dict[str, UKONode] = {}
    known_bases: dict[str, list[str]] = {}

    def bases(uri: str) -> list[str]:
        if uri in known_bases:
            return known_bases[uri]
        node = fresh.get(uri) or ancestors.get(uri)
        if node is None:
            return []  # not loaded yet: asked again once it is
        if uri not in fresh:  # stored: resolved when it was written
            found = [t for t in _base_targets(node) if not t.startswith(SYMBOL)]
        else:
            found = [
                base
                for t in _base_targets(node)
                for base in (by_name.get(t.rsplit(".", 1)[-1], []) if t.startswith(SYMBOL) else [t])
            ]
        known_bases[uri] = found
        return found

    frontier = {base for uri in fresh for base in bases(uri)} | {cls for cls, _ in owners}
    ancestors.update(load_ancestors(store, frontier, besides=fresh))
    above: dict[str, set[str]] = {}  # each class -> the classes it may inherit from

    def ancestry(cls: str) -> set[str]:
        # Level by level, as sets: a base written by a common name (``Base``) is every
        # class of that name, and lists of them grew with each level's repeats.
        if cls not in above:
            seen: set[str] = set()
            level = set(bases(cls))
            for _ in range(INHERITANCE_DEPTH):
                level -= seen
                if not level:
                    break
                seen |= level
                level = {base for uri in level for base in bases(uri)}
            above[cls] = seen
        return above[cls]

    # Member name -> the classes it is looked for in: one pass over each pair, however
    # many classes share the ancestry (every test class of a tree guesses ``assert…``).
    wanted: dict[str, set[str]] = {}
    for cls, name in guesses:
        wanted.setdefault(name, set()).update(ancestry(cls))
    for cls, name in owners:
        looked_in = wanted.setdefault(name, set())
        looked_in.add(cls)
        looked_in.update(ancestry(cls))
    members = {
        uri
        for name, looked_in in wanted.items()
        for cls in looked_in
        for uri in member_uris(cls, name)
    }
    # The callees come last, with their edges (their ``usesType``): a member loaded
    # without them (``NDFrame.resample`` that ``Series`` inherits) says nothing it returns.
    return [
        *ancestors.values(),
        *store.nodes_at(resource_id, members - typed.keys()),
        *typed.values(),
    ]
