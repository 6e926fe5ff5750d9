"""Go's implicit interfaces: which types of a package implement which of its interfaces.

Go never says that a type implements an interface: it does when its method set holds
every method the interface asks for. One file cannot tell, since a type's methods may
be declared in any file of its package (a folder), and so may the interface. So the
indexer derives the ``uko-oo:implements`` edges once it holds the package's nodes: the
nodes of a run and the stored nodes of the package's other files. A refresh that
changes what a package declares (a type, a method, an interface's methods, an
embedding: :func:`package_facts`) also analyses those of the package's other files
whose types now implement other interfaces (:func:`stale_implementations`, through
``dependents``), so their edges are what a cold index gives.

What is matched, and what is not:

* methods by name and by their parameters' and results' types as written (names
  dropped, ``a, b int`` as two ``int``; a signature that cannot be read matches by name),
  without telling pointer receivers from value receivers (``*Square`` is taken to
  have ``Square``'s methods and the other way round);
* a type has the methods declared with it as receiver and those promoted from the
  types of the package it embeds, depth by depth; those of an imported type it embeds
  (``sync.Mutex``) are not known here;
* an interface asks for its methods and those of the package's interfaces it
  embeds; one that embeds an imported interface (``io.Reader``) is left out, as its
  methods are not known, and so are interfaces that ask for no method (``any``,
  constraints such as ``~int | ~float64``);
* only the package's own interfaces: a type with a ``Write`` method gets no edge to
  ``io.Writer``, nor one of another package of the resource. A folder's external tests
  (``package shapes_test``) are a package of their own, and files below ``testdata``
  none (the go tool leaves them out: each is a program of its own).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from urllib.parse import unquote

from cleveragents.models.uko import UKONode
from cleveragents_acms.analyzers._common import IMPLEMENTS, INHERITS_FROM, go_package_symbol

__all__ = [
    "GO_DECLARATIONS",
    "add_implementations",
    "go_folder",
    "package_facts",
    "stale_implementations",
]

_INTERFACE = "uko-oo:Interface"
_METHOD = "uko-oo:Method"
_MODULE = "uko-code:Module"
_TYPES = frozenset({"uko-proc:Struct", "uko-code:TypeDefinition", _INTERFACE})
#: The UKO types of the Go nodes that say what a package's types and interfaces are
#: (the module nodes name each file's package).
GO_DECLARATIONS = _TYPES | {_METHOD, _MODULE}
#: An embedded type that is not one of the package's (imported, or unknown).
_ELSEWHERE = ""


def go_folder(path: str) -> str | None:
    """The folder of a Go file's package, ``""`` at the resource's root; None for other
    files and for those the go tool leaves out: below a ``testdata`` folder or one whose
    name starts with ``.`` or ``_`` (test inputs, each file a program of its own)."""
    if not path.endswith(".go"):
        return None
    folder = path.rpartition("/")[0]
    if folder and any(p == "testdata" or p[:1] in "._" for p in folder.split("/")):
        return None
    return folder


def _receiver(qualname: str) -> str:
    """``List[T].Len`` -> ``List``: the type a method is declared on."""
    return qualname.rpartition(".")[0].partition("[")[0]


@dataclass
class _Package:
    """What a package declares: its types, each one's methods and embedded types. A
    folder may hold two (``shapes`` and the external tests' ``shapes_test``)."""

    #: Each name's declarations: several when build constraints pick one per platform.
    types: dict[str, list[UKONode]] = field(default_factory=dict)
    #: Each type's methods: name -> the signatures declared (None: one not read).
    methods: dict[str, dict[str, set[str | None]]] = field(default_factory=dict)
    embeds: dict[str, list[str]] = field(default_factory=dict)

    def add(self, node: UKONode) -> None:
        if node.uko_type == _METHOD:
            receiver = _receiver(node.qualname)
            if receiver:
                own = self.methods.setdefault(receiver, {})
                own.setdefault(node.name, set()).add(_signature(node))
        elif node.uko_type in _TYPES and node.qualname and "." not in node.qualname:
            self.types.setdefault(node.qualname, []).append(node)
            self.embeds.setdefault(node.qualname, []).extend(
                self._local(node, target) for p, target in node.edges if p == INHERITS_FROM
            )

    def _local(self, node: UKONode, target: str) -> str:
        """The name of the package's type an embedding names, or ``_ELSEWHERE``: what
        the guess a type of another file of the package answers names
        (``symbol:go:<folder>.Base``), or the URI of a type of the package's folder that
        the analyzer or the resolver put in its place."""
        guess = f"symbol:{go_package_symbol(node.path, '')}"
        if target.startswith(guess):
            name = target[len(guess) :]
        else:
            file, _, fragment = target.rpartition("#")
            folder = node.uri.rpartition("#")[0].rpartition("/")[0]
            if not file or file.rpartition("/")[0] != folder:
                return _ELSEWHERE
            name = unquote(fragment)
        return name if name and "." not in name else _ELSEWHERE

    def method_set(self, name: str) -> tuple[dict[str, set[str | None]], bool]:
        """The methods of type ``name``, own and promoted from the package's embedded
        types; and whether all of them are known (nothing embedded from elsewhere)."""
        found: dict[str, set[str | None]] = {}
        complete = True
        seen: set[str] = set()
        level = [name]
        while level:
            below: list[str] = []
            for kind in level:
                if kind in seen:
                    continue
                seen.add(kind)
                for method, signatures in self.methods.get(kind, {}).items():
                    found.setdefault(method, set()).update(signatures)
                for embedded in self.embeds.get(kind, ()):
                    if embedded in self.types:
                        below.append(embedded)
                    else:
                        complete = False
            level = below
        return found, complete


def _has(methods: dict[str, set[str | None]], wanted: dict[str, set[str | None]]) -> bool:
    """Whether ``methods`` hold every method ``wanted`` asks for, by name and signature."""
    for name, asked in wanted.items():
        declared = methods.get(name)
        if declared is None:
            return False
        if None not in declared and None not in asked and not declared & asked:
            return False
    return True


def _signature(node: UKONode) -> str | None:
    """A method's parameter and result types as written, without names or spaces
    (``func (s *S) Read(p []byte) (n int, err error)`` -> ``([]byte)(int,error)``); None
    when its signature cannot be read."""
    text = node.properties.get("signature", "")
    if text.startswith("func"):  # a method declaration: skip its receiver
        receiver = _group(text, text.find("("))
        if receiver is None:
            return None
        text = text[receiver[1] :].lstrip()
    if not text.startswith(node.name):
        return None
    text = text[len(node.name) :].lstrip()
    params = _group(text, 0)
    if params is None:
        return None
    results = text[params[1] :].strip()
    if results.startswith("("):
        group = _group(results, 0)
        if group is None:
            return None
        results = results[1 : group[1] - 1]
    taken = _types(text[1 : params[1] - 1]), _types(results)
    if taken[0] is None or taken[1] is None:
        return None
    return f"({','.join(taken[0])})({','.join(taken[1])})"


def _group(text: str, start: int) -> tuple[int, int] | None:
    """The span of the bracketed group opening at ``start`` (its closing bracket
    included), or None."""
    if start < 0 or start >= len(text) or text[start] not in "([{":
        return None
    depth = 0
    for i in range(start, len(text)):
        if text[i] in "([{":
            depth += 1
        elif text[i] in ")]}":
            depth -= 1
            if not depth:
                return start, i + 1
    return None


def _types(items: str) -> list[str] | None:
    """The types of a parameter or result list (``a, b int, c ...string`` -> ``int``,
    ``int``, ``...string``); None if it cannot be read."""
    pieces: list[str] = []
    depth, start = 0, 0
    for i, char in enumerate(items):
        if char in "([{":
            depth += 1
        elif char in ")]}":
            depth -= 1
        elif char == "," and not depth:
            pieces.append(items[start:i].strip())
            start = i + 1
    pieces.append(items[start:].strip())
    pieces = [p for p in pieces if p]
    named = [_named(p) for p in pieces]
    if not any(named):
        return ["".join(p.split()) for p in pieces]
    found: list[str] = []
    waiting = 0  # names that share the type of the next named piece (``a, b int``)
    for piece, kind in zip(pieces, named, strict=True):
        if kind is None:
            if not piece.isidentifier():
                return None
            waiting += 1
        else:
            found += [kind] * (waiting + 1)
            waiting = 0
    return None if waiting else found


def _named(piece: str) -> str | None:
    """The type of a named parameter (``p []byte`` -> ``[]byte``), None if unnamed."""
    first, _, rest = piece.partition(" ")
    if not rest.strip() or not first.isidentifier() or first in ("chan", "func", "map"):
        return None
    return "".join(rest.split())


def _packages(nodes: Iterable[UKONode]) -> dict[tuple[str, str], _Package]:
    """The packages of ``nodes`` by folder and package name."""
    nodes = [n for n in nodes if n.uko_type in GO_DECLARATIONS and go_folder(n.path) is not None]
    names = {n.path: n.properties.get("package", "") for n in nodes if n.uko_type == _MODULE}
    packages: dict[tuple[str, str], _Package] = {}
    for node in nodes:
        if node.uko_type != _MODULE:
            key = (go_folder(node.path) or "", names.get(node.path, ""))
            packages.setdefault(key, _Package()).add(node)
    return packages


def add_implementations(nodes: Sequence[UKONode], stored: Iterable[UKONode] = ()) -> int:
    """Add ``uko-oo:implements`` edges to the Go types among ``nodes`` (a run's), from
    what their packages declare in ``nodes`` and in ``stored`` (the current nodes of the
    packages' other files). Returns how many edges were added."""
    mine = {id(n) for n in nodes if n.uko_type in _TYPES and n.uko_type != _INTERFACE}
    if not mine:
        return 0
    added = 0
    for package in _packages([*stored, *nodes]).values():
        interfaces: list[tuple[dict[str, set[str | None]], list[str]]] = []
        for name, declared in sorted(package.types.items()):
            uris = sorted(n.uri for n in declared if n.uko_type == _INTERFACE)
            wanted, complete = package.method_set(name) if uris else ({}, False)
            if wanted and complete:
                interfaces.append((wanted, uris))
        if not interfaces:
            continue
        for name, declared in package.types.items():
            types = [n for n in declared if id(n) in mine]
            if not types:
                continue
            methods, _ = package.method_set(name)
            for node in types:
                for wanted, uris in interfaces:
                    if _has(methods, wanted):
                        new = [(IMPLEMENTS, u) for u in uris if (IMPLEMENTS, u) not in node.edges]
                        node.edges.extend(new)
                        added += len(new)
    return added


def stale_implementations(others: Sequence[UKONode], new: Sequence[UKONode]) -> set[str]:
    """The files among ``others`` (the stored nodes, with their edges, of the package
    files a refresh leaves as they are) whose types implement other interfaces than
    their stored edges say, now that the refresh's files declare ``new``: those a
    refresh must analyse again."""
    copies = [
        dataclasses.replace(n, edges=[e for e in n.edges if e[0] != IMPLEMENTS]) for n in others
    ]
    add_implementations(copies, new)
    return {
        node.path
        for node, copy in zip(others, copies, strict=True)
        if _implemented(node) != _implemented(copy)
    }


def _implemented(node: UKONode) -> set[tuple[str, str]]:
    return {e for e in node.edges if e[0] == IMPLEMENTS}


def package_facts(nodes: Iterable[UKONode]) -> dict[str, frozenset[tuple[str, ...]]]:
    """Per package (folder), what its nodes among ``nodes`` declare that the edges of
    :func:`add_implementations` follow: types, methods by receiver and embeddings by the
    name of the package's type (or as from elsewhere). Stored and new nodes compare
    equal when they declare the same, resolved or not."""
    facts: dict[str, set[tuple[str, ...]]] = {}
    for (folder, name), package in _packages(nodes).items():
        found = facts.setdefault(folder, set())
        found.update(
            (name, "type", kind, node.uko_type)
            for kind, declared in package.types.items()
            for node in declared
        )
        found.update(
            (name, "method", t, m, str(signature))
            for t, ms in package.methods.items()
            for m, signatures in ms.items()
            for signature in signatures
        )
        found.update((name, "embeds", t, e) for t, es in package.embeds.items() for e in es)
    return {folder: frozenset(found) for folder, found in facts.items()}
