"""Resolve ``symbol:`` edge targets to node URIs.

Analyzers see one file at a time, so an import, base class or call names a
symbol (``symbol:pkg.mod.Class``); the indexer knows every node of the
resource and replaces the name with the node's URI when exactly one node
answers to it (with the URIs of all of them when they are one name's definitions in
one file: a Java method's overloads, a Python name defined in alternative branches).
Ambiguous or external names stay symbolic.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Iterator
from functools import lru_cache

from cleveragents.models.uko import UKONode
from cleveragents_acms.analyzers._common import (
    CALL_RESULT,
    DEFAULT_EXPORT,
    DEPENDS_ON,
    DERIVED_KEY,
    EXPORT_BINDINGS,
    GUESSED_KEYS,
    GUESSED_TARGETS,
    IMPL_FOR,
    IMPLEMENTS_TRAIT,
    INHERITED_TARGET,
    MACRO_EXPORT,
    MACRO_KEY,
    MODULE_EXPORT,
    MODULE_IMPORTS,
    ON_DEMAND_IMPORTS,
    PROC_MACRO,
    PY_IMPORT,
    PY_REEXPORT,
    PYTHON_SUFFIXES,
    REEXPORT_TYPES,
    RUST_CRATE,
    RUST_IMPL,
    RUST_MACRO,
    RUST_USE,
    SCRIPT_EXPORT,
    SCRIPT_FILES,
    SCRIPT_SUFFIXES,
    SYMBOL,
    go_package_symbol,
    is_python,
    java_package,
    java_package_symbol,
    script_stem,
)
from cleveragents_acms.analyzers.packages import EXPORTED_AS, is_script_manifest
from cleveragents_acms.indexing.inheritance import Inheritance

__all__ = [
    "GUESSED_KEYS",
    "INHERITED_TARGET",
    "PYTHON_SUFFIXES",
    "PY_IMPORT",
    "PY_MODULE_TYPES",
    "REEXPORT_HOPS",
    "REEXPORT_TYPES",
    "RUST_CRATE",
    "RUST_HOPS",
    "RUST_USE",
    "SCRIPT_EXPORT",
    "SCRIPT_SUFFIXES",
    "SYMBOL",
    "Aliases",
    "ReExports",
    "answers_beside_none",
    "binds_names",
    "crate_module_files",
    "default_export_files",
    "dotted_names",
    "first_edge",
    "follow_module_imports",
    "is_overload_set",
    "is_script",
    "may_export_scripts",
    "module_of",
    "module_prefixes",
    "reexport_aliases",
    "reexport_types",
    "reexported_names",
    "reexports",
    "resolve_edges",
    "resolves",
    "rust_bindings",
    "rust_fallback_path",
    "rust_module",
    "rust_module_files",
    "rust_paths",
    "rust_use_names",
    "script_module",
    "script_module_files",
    "short_name",
    "symbol_keys",
    "wanted_modules",
    "wanted_names",
    "without_signatures",
]


_PREFIX = SYMBOL
#: How many ``use`` declarations a Rust path is followed through.
RUST_HOPS = 6
#: How many ``use`` declarations and globs one Rust path's search may look through
#: before it is left unresolved: searches branch at every alias and glob, and one that
#: found no module to end it went on for minutes (the most a path of ruff's or orjson's
#: trees takes is about 6,300).
RUST_SEARCH_STEPS = 50_000
#: How many re-exports (``export … from``, a package's ``from m import a``) a name is
#: followed through.
REEXPORT_HOPS = 6
#: How many names one search through re-exports may look at before it is left
#: unresolved (see :data:`RUST_SEARCH_STEPS`).
REEXPORT_SEARCH_STEPS = 20_000
#: A Rust path from the file's own module.
_RUST_RELATIVE = (_PREFIX + "self.", _PREFIX + "super.")


def symbol_keys(node: UKONode) -> set[str]:
    """Names a node answers to: name, qualname, full dotted name, dotted module path."""
    keys = {node.name, node.qualname, node.properties.get("fqname", "")}
    if node.path.endswith(".py"):
        module = _python_module(node.path)
        keys.add(f"{module}.{node.qualname}" if node.qualname else module)
    elif node.path.endswith(".rs"):
        for module in _rust_modules(node.path):
            keys.add(f"{module}.{node.qualname}" if node.qualname else module)
    elif node.path.endswith(SCRIPT_SUFFIXES) and not node.qualname:
        # A JavaScript or TypeScript module: what ``require("./view")`` and ``import * as
        # view from "./view"`` name; ``router/index.js`` is also ``router``.
        module = node.properties.get("module", "")
        keys.update((module, module.removesuffix(".index")) if module else ())
    elif exported := node.properties.get(MODULE_EXPORT, ""):
        # ``module.exports = Layer``: ``Layer.match`` is also the module's ``match``.
        member = node.qualname[len(exported) + 1 :]
        keys.update(f"{module}.{member}" for module in _script_modules(node))
    elif exported := node.properties.get(DEFAULT_EXPORT, ""):
        # ``export default Layer``: ``Layer`` is also the module's ``default``.
        member = node.qualname[len(exported) :]
        keys.update(f"{module}.default{member}" for module in _script_modules(node))
    elif node.path.endswith(".java") and node.properties.get("fqname"):
        keys.add(f"java:{node.properties['fqname']}")  # a name of its package's other files
    if node.uko_type == RUST_MACRO:
        keys.add(MACRO_KEY + node.name)
        if node.properties.get(MACRO_EXPORT) and rust_module(node.path) is not None:
            keys.add(f"{MACRO_KEY}crate.{node.name}")  # see ``_RustPaths._follow``
    if node.path.endswith(".go") and node.qualname and node.qualname.count(".") <= 1:
        keys.add(go_package_symbol(node.path, node.qualname))  # a name of the folder's package
    keys.discard("")
    if node.uko_type in _RUST_TYPES and "derive" in node.properties.get("decorators", ""):
        methods = derived_methods(node.properties["decorators"])
        keys |= {f"{DERIVED_KEY}{key}.{method}" for key in keys for method in methods}
    return keys


#: What a Rust node answers besides its paths, looked up when no node answers a path
#: itself (``_RustPaths._follow``): a ``#[macro_export]`` macro at its crate's root
#: (``macro:crate.write``: macros have a namespace of their own), a type for the methods
#: its ``#[derive]`` gives (``derived:crate.range.TextRange.default``).
_RUST_FALLBACKS = (MACRO_KEY, DERIVED_KEY)


def rust_fallback_path(key: str) -> str | None:
    """The Rust path one of those keys answers for (``macro:crate.write`` ->
    ``crate.write``), so a refresh looks for references by it; None for any other key
    (``macro:square``, a macro's name alone, is no path)."""
    for prefix in _RUST_FALLBACKS:
        if key.startswith(prefix):
            path = key[len(prefix) :]
            return path if prefix == DERIVED_KEY or path.startswith("crate.") else None
    return None


#: The Rust nodes a ``#[derive(…)]`` gives methods.
_RUST_TYPES = frozenset({"uko-rs:Struct", "uko-rs:Enum"})
#: The methods of the traits a ``#[derive(…)]`` implements (the standard library's, and
#: serde's): ``x.clone()`` of a type deriving ``Clone`` depends on the type.
_DERIVED_METHODS = {
    "Clone": ("clone", "clone_from"),
    "Default": ("default",),
    "Debug": ("fmt",),
    "PartialEq": ("eq", "ne"),
    "PartialOrd": ("partial_cmp", "lt", "le", "gt", "ge"),
    "Ord": ("cmp", "max", "min", "clamp"),
    "Hash": ("hash",),
    "Serialize": ("serialize",),
    "Deserialize": ("deserialize",),
}
_DERIVE = re.compile(r"\bderive\s*\(([^)]*)\)")


@lru_cache(maxsize=1 << 12)
def derived_methods(decorators: str) -> frozenset[str]:
    """The methods the ``#[derive(…)]`` attributes among ``decorators`` give a Rust type
    (``#[derive(Clone, serde::Serialize)]`` -> ``clone``, ``clone_from``, ``serialize``)."""
    traits = {
        part.strip().rsplit("::", 1)[-1]
        for found in _DERIVE.finditer(decorators)
        for part in found.group(1).split(",")
    }
    return frozenset(m for trait in traits for m in _DERIVED_METHODS.get(trait, ()))


def _script_modules(node: UKONode) -> tuple[str, str]:
    """The dotted names of the JavaScript or TypeScript module declaring ``node``, from its
    ``fqname``: ``lib.router.index`` and, as a folder is imported, ``lib.router``."""
    fqname = node.properties.get("fqname", "")
    module = fqname[: len(fqname) - len(node.qualname) - 1]
    return module, module.removesuffix(".index")


def _python_module(path: str) -> str:
    """``src/pkg/mod.py`` -> ``pkg.mod``; ``pkg/__init__.py`` -> ``pkg``."""
    module = path[:-3].replace("/", ".").removesuffix(".__init__")
    for prefix in ("src.", "lib."):
        module = module.removeprefix(prefix)
    return module


# A refresh of a Rust file reads every ``use`` of the resource (ruff's: 32k) and asks
# these of each one's path, that of a few thousand files.
@lru_cache(maxsize=1 << 16)
def _rust_modules(path: str) -> tuple[str, ...]:
    """The module paths of a Rust file: ``src/parser/mod.rs`` is ``src.parser`` and, from
    the crate's root, ``crate.parser`` (what ``use crate::parser::…`` and ``mod`` name)."""
    parts = path[:-3].split("/")
    if len(parts) > 1 and parts[-1] in ("mod", "lib", "main"):
        parts.pop()
    modules = [".".join(parts)]
    root = _crate_root(parts)
    if root is not None:
        modules.append(".".join(["crate", *parts[root:]]))
        # ... and from another crate of the tree, by the crate's name
        name = rust_crate_name("/".join(parts[:root]))
        if name is not None:
            modules.append(".".join([name, *parts[root:]]))
    return tuple(modules)


def _crate_root(folders: list[str]) -> int | None:
    """Where a crate's modules start among path parts: after the last ``src``."""
    if "src" not in folders:
        return None
    return len(folders) - folders[::-1].index("src")


def wanted_names(nodes: Iterable[UKONode]) -> set[str]:
    """What to look up among stored nodes by name for the ``symbol:`` targets: each
    target's short name, for Python each of its dotted prefixes, the names a module
    node has (``pkg.mod`` for ``pkg.mod.Class``, wherever the file is:
    ``python/pkg/mod.py`` as well as ``src/pkg/mod.py``), for Rust the owner of a
    method's path (``Expr`` for ``ast.Expr.start``: the type whose derives and traits
    may give it)."""
    names: set[str] = set()
    for node in nodes:
        python, rust = is_python(node), node.path.endswith(".rs")
        for _, target in node.edges:
            if not target.startswith(_PREFIX) or target.startswith(INHERITED_TARGET):
                continue
            dotted = target[len(_PREFIX) :]
            if python:  # ``pkg.make_client().get``: ``make_client`` and its class's ``get``
                callee, called, _ = dotted.partition(CALL_RESULT)
                if called and "." in callee:  # ``Series.resample()``: ``Series``, whose
                    names.add(short_name(callee.rpartition(".")[0]))  # bases may give it
                dotted = dotted.replace(CALL_RESULT, "")
            names.add(short_name(dotted))
            if python:
                parts = dotted.split(".")
                names.update(".".join(parts[:i]) for i in range(2, len(parts) + 1))
                if len(parts) > 1:  # the class whose member it may be, inherited
                    names.add(parts[-2])
            elif rust and "." in dotted:
                # The type, for the methods its ``#[derive]`` and its traits give it.
                names.add(short_name(dotted.rpartition(".")[0]))
    return names


def dotted_names(keys: Iterable[str]) -> set[str]:
    """The names of the nodes that may answer ``keys`` or stand on their way: each key's
    short name and each of its dotted prefixes (a Python module node is named
    ``pkg.mod``), as :func:`wanted_names` looks Python's targets up."""
    names: set[str] = set()
    for key in keys:
        parts = key.split(".")
        names.add(parts[-1])
        names.update(".".join(parts[:i]) for i in range(2, len(parts) + 1))
    return names


def module_prefixes(names: Iterable[str]) -> set[str]:
    """The dotted modules each of ``names`` may go through (``a.b.c`` -> ``a``, ``a.b``):
    where a Python module's imports may make it answer for the rest."""
    found: set[str] = set()
    for name in names:
        parts = name.split(".")
        found.update(".".join(parts[:i]) for i in range(1, len(parts)))
    return found


def follow_module_imports(
    names: set[str],
    read: Callable[[set[str]], list[UKONode]],
    grow: Callable[[list[UKONode]], set[str]],
) -> None:
    """Read the import statements of the modules ``names`` go through (``read``, given
    modules, returns the statements new to the search), then of the modules the names
    they give lead to (``grow`` takes them in and returns the names searched now), until
    no new module comes: what a refresh reads of a tree's plain imports, where a cold
    index has them all."""
    seen: set[str] = set()
    for _ in range(REEXPORT_HOPS + 1):
        modules = module_prefixes(names) - seen
        if not modules:
            return
        seen |= modules
        new = read(modules)
        if not new:
            return
        names = grow(new)


def short_name(key: str) -> str:
    """The name of the nodes that may answer ``key`` (``pkg.mod.Class`` -> ``Class``,
    ``macro:square`` -> ``square``), to look them up by name."""
    return key.rsplit(".", 1)[-1].removeprefix(MACRO_KEY)


def wanted_modules(nodes: Iterable[UKONode]) -> set[str]:
    """The files every ``symbol:`` target could be the module of, to look their module
    nodes up among stored nodes by path (a module node's name need not be its dotted
    path): so a refresh of one file resolves what a cold index did."""
    paths: set[str] = set()
    for node in nodes:
        for _, target in node.edges:
            if not target.startswith(_PREFIX) or target.startswith(INHERITED_TARGET):
                continue
            dotted = target[len(_PREFIX) :]
            if is_python(node):
                base = dotted.replace(CALL_RESULT, "").replace(".", "/")
                for root in ("", "src/", "lib/"):
                    for suffix in (".py", ".pyi"):  # a stub answers as its module does
                        paths.update((f"{root}{base}{suffix}", f"{root}{base}/__init__{suffix}"))
            elif node.path.endswith(".rs"):
                paths.update(rust_module_files(dotted, node.path))
            elif node.path.endswith(SCRIPT_SUFFIXES):
                paths.update(script_module_files(dotted))
    return paths


def script_module_files(dotted: str) -> list[str]:
    """The files a JavaScript or TypeScript module's dotted name can be (``src.lib`` ->
    ``src/lib.ts``, ``src/lib/index.js``, ``src/lib.d.ts`` …)."""
    base = dotted.replace(".", "/")
    return [p for suffix in SCRIPT_FILES for p in (f"{base}{suffix}", f"{base}/index{suffix}")]


def default_export_files(keys: Iterable[str]) -> set[str]:
    """The files whose ``export default`` declaration may answer a name among ``keys``
    (``src.widgets.default``, ``src.layer.default.match``): looked up by file, as the
    declaration's own name (``make``) is not in the name."""
    paths: set[str] = set()
    for key in keys:
        parts = key.split(".")
        if "default" in parts[1:]:
            paths.update(script_module_files(".".join(parts[: parts.index("default", 1)])))
    return paths


def rust_module_files(dotted: str, caller: str) -> list[str]:
    """The files a Rust module path used in ``caller`` can be: ``crate.a.b`` (from the
    crate's ``src/``) or ``src.a.b`` (``mod b;``, from the folder) -> ``…/a/b.rs`` or
    ``…/a/b/mod.rs``."""
    head, _, rest = dotted.partition(".")
    if head == "crate":
        root = rust_crate(caller)
        if root is None:
            return []
        if not rest:
            return [f"{root}/lib.rs", f"{root}/main.rs"]
        base = f"{root}/{rest.replace('.', '/')}"
    else:
        # ``mod b;`` names ``<the caller's folder>.b``: the folder is taken as it is, for a
        # folder name may hold dots (``clap-4.0.32/``).
        folder = caller.rsplit("/", 1)[0] if "/" in caller else ""
        prefix = folder.replace("/", ".") + "."
        if folder and dotted.startswith(prefix):
            base = f"{folder}/{dotted[len(prefix) :].replace('.', '/')}"
        else:
            base = dotted.replace(".", "/")
    return [f"{base}.rs", f"{base}/mod.rs"]


def crate_module_files(dotted: Iterable[str], roots: Iterable[str]) -> set[str]:
    """The files the Rust paths ``dotted`` that start with the name of a crate of the
    tree can be modules of (``geo.shapes.Point`` -> ``crates/geo/src/shapes.rs`` …, and
    ``geo`` -> its ``lib.rs``), from the paths of the crates' roots ``roots``."""
    crates: dict[str, str] = {}
    for root in roots:
        crate = rust_crate(root)
        name = rust_crate_name(crate) if crate is not None else None
        if name is not None:
            crates.setdefault(name, root)
    files: set[str] = set()
    for path in dotted:
        head, _, rest = path.partition(".")
        if head in crates:
            files.update(rust_module_files(f"crate.{rest}" if rest else "crate", crates[head]))
            parts = rest.split(".")
            for i in range(1, len(parts)):  # the modules on the way
                files.update(rust_module_files(".".join(["crate", *parts[:i]]), crates[head]))
    return files


def resolve_edges(nodes: Iterable[UKONode], known: Iterable[UKONode] = ()) -> int:
    """Rewrite resolvable ``symbol:`` targets in place; return how many were resolved.

    ``known`` are stored nodes that may answer (see :func:`wanted_names`).
    """
    nodes = list(nodes)
    table: dict[str, set[str]] = {}
    stubs: set[str] = set()
    py_modules: set[str] = set()
    uses: list[UKONode] = []
    exports: list[UKONode] = []
    for node in [*known, *nodes]:
        for key in symbol_keys(node):
            table.setdefault(key, set()).add(node.uri)
        if answers_beside_none(node):
            stubs.add(node.uri)
        if node.uko_type in PY_MODULE_TYPES:
            py_modules.add(node.uri)
        if node.uko_type == RUST_USE and node.properties.get("bindings"):
            uses.append(node)
        elif binds_names(node):
            exports.append(node)
    inherited: dict[str, UKONode] = {}  # nodes with inherited-member guesses
    members: list[tuple[UKONode, str, str]] = []  # Python ``pkg.Class.member`` unresolved
    rust = _RustPaths(table, uses, [*known, *nodes])
    through = ReExports(table, exports)
    on_demand = {
        n.path: n.properties[ON_DEMAND_IMPORTS].split("\n")
        for n in nodes
        if not n.qualname and n.properties.get(ON_DEMAND_IMPORTS)
    }
    resolved = 0
    for node in nodes:
        guessed = False
        overloads: list[tuple[str, str]] = []
        in_rust = node.path.endswith(".rs")
        python = is_python(node)
        reexporting = python or node.path.endswith(SCRIPT_SUFFIXES)
        importing = python and node.uko_type in _PY_IMPORTING
        # A function's own ``import re`` names a module too; its other plain names do not.
        module_names = (
            frozenset(node.properties[MODULE_IMPORTS].split("\n"))
            if python and MODULE_IMPORTS in node.properties
            else frozenset()
        )
        package = java_package(node) if node.path.endswith(".java") else None
        for i, (predicate, target) in enumerate(node.edges):
            if not target.startswith(_PREFIX):
                continue
            if target.startswith(INHERITED_TARGET):
                inherited[node.uri] = node  # once every base class edge is resolved
                continue
            name = target[len(_PREFIX) :]
            if in_rust:
                candidates = rust.lookup(name, node.path)
            else:
                candidates = None
                if package is not None:
                    candidates = _in_java_packages(
                        name, package, on_demand.get(node.path, ()), table
                    )
                candidates = candidates or table.get(name)
                if not candidates and reexporting:
                    candidates = through.follow(name)
            if (
                candidates
                and (importing or name in module_names)
                and "." not in name
                and predicate == DEPENDS_ON
            ):
                # ``import re`` names a module: not SymPy's function ``re``.
                candidates = candidates & py_modules
            if candidates:
                candidates = without_signatures(candidates, stubs)
            elif python and "." in name:
                members.append((node, predicate, target))  # perhaps a class's, inherited
            if candidates and len(candidates) == 1:
                (uri,) = candidates
                if uri != node.uri:
                    node.edges[i] = (predicate, uri)
                    resolved += 1
            elif candidates and is_overload_set(candidates):
                # A call by the name of overloaded Java methods is to one of them, which the
                # arguments' types pick (of a Python name defined in alternative branches,
                # the branch taken): it depends on the set.
                chosen = sorted(candidates - {node.uri})
                node.edges[i] = (predicate, chosen[0])
                overloads.extend((predicate, uri) for uri in chosen[1:])
                resolved += 1
            elif target.startswith(_RUST_RELATIVE) and node.path.endswith(".rs"):
                # Left unresolved, named from the crate's root: what the definition will
                # answer to if it comes (and what a reader can tell apart).
                node.edges[i] = (
                    predicate,
                    _PREFIX + rust_paths(target[len(_PREFIX) :], node.path)[0],
                )
            guessed = guessed or target.startswith(GUESSED_TARGETS)
        if guessed:
            node.edges = [e for e in node.edges if not e[1].startswith(GUESSED_TARGETS)]
        if overloads:
            node.edges = list(dict.fromkeys([*node.edges, *overloads]))
    if inherited or members:
        by_uri = {n.uri: n for n in known}
        by_uri.update((n.uri, n) for n in nodes)
        inheritance = Inheritance(by_uri)
        resolved += inheritance.resolve(inherited.values())
        # ``Form.clean`` that ``Form`` inherits: the member its bases give; ``apps.get_model``
        # of ``apps = Apps()``: the member of its class.
        for node, predicate, target in members:
            owner, _, member = target[len(_PREFIX) :].rpartition(".")
            # ``make_client().get``: the member of the class ``make_client`` returns.
            called = owner.endswith(CALL_RESULT)
            owner = owner.removesuffix(CALL_RESULT) if called else owner
            classes = table.get(owner) or through.follow(owner)
            if not classes and "." in owner:
                # ``Series.resample().mean``: a callee inherited; ``store.shared.query`` of
                # ``store: Store``: an attribute ``Store`` inherits.
                classes = _inherited_callee(owner, table, through, stubs, inheritance)
            if classes and len(classes := without_signatures(classes, stubs)) == 1:
                (uri,) = classes
                cls = inheritance.returned_class(uri) if called else inheritance.class_of(uri)
                found = inheritance.member(cls, member) if cls is not None else None
                if found is not None and found != node.uri:
                    node.edges = list(
                        dict.fromkeys(
                            (predicate, found) if e == (predicate, target) else e
                            for e in node.edges
                        )
                    )
                    resolved += 1
    return resolved


def _inherited_callee(
    callee: str,
    table: dict[str, set[str]],
    through: ReExports,
    stubs: set[str],
    inheritance: Inheritance,
) -> set[str]:
    """The method ``pkg.Series.resample`` names when ``Series`` only inherits it (from
    ``NDFrame``), as a call's member ``pkg.Series.resample`` resolves (or an attribute,
    ``pkg.Store.shared``): empty if that class is not one known class, or no class of its
    order defines it."""
    owner, _, method = callee.rpartition(".")
    classes = (table.get(owner) or through.follow(owner)) if owner else None
    if not classes or len(classes := without_signatures(classes, stubs)) != 1:
        return set()
    (uri,) = classes
    cls = inheritance.class_of(uri)
    found = inheritance.member(cls, method) if cls is not None else None
    return {found} if found is not None else set()


#: Python's module nodes, and the nodes whose ``dependsOn`` edges are imports: a plain
#: name there (``import re``, ``from re import compile``) is a top-level module's, which
#: only a module node answers (not any definition of the name).
PY_MODULE_TYPES = frozenset({"uko-py:Module", "uko-py:Package"})
_PY_IMPORTING = PY_MODULE_TYPES | {PY_IMPORT, PY_REEXPORT}


def binds_names(node: UKONode) -> bool:
    """Whether ``node`` makes its module answer for names of another, followed by
    :class:`ReExports`: a re-export (:data:`REEXPORT_TYPES`), or a Python module's
    top-level ``from m import a``, which says what it binds (a refresh reads those of
    the modules a name goes through only: :meth:`NodeStore.imports_from`)."""
    return node.uko_type in REEXPORT_TYPES or (
        node.uko_type == PY_IMPORT and EXPORT_BINDINGS in node.properties
    )


def _in_java_packages(
    name: str, package: str, on_demand: Iterable[str], table: dict[str, set[str]]
) -> set[str] | None:
    """What a Java file's name no import gives names, as the compiler looks: a plain name
    (``class B extends A``) in the file's package (``java:com.x.A``), a guess of it
    (``java:com.x.Helper.run``) as it is; then either in the packages the file imports on
    demand (``import java.util.*;``), in order. None when it is neither (the indexer
    then looks the name up alone)."""
    own = java_package_symbol(package, "")
    if "." not in name:
        rest, found = name, table.get(own + name)
    elif name.startswith(own):
        rest, found = name[len(own) :], table.get(name)
    else:
        return None
    return found or next(
        (hit for p in on_demand if (hit := table.get(java_package_symbol(p, rest)))), None
    )


def answers_beside_none(node: UKONode) -> bool:
    """An overload signature (TypeScript's, a ``typing.overload`` stub) or a TypeScript
    declaration merged into another of its name (``interface Model`` beside ``class
    Model``): it answers its name only where no other node does."""
    properties = node.properties
    return bool(properties.get("overload") or properties.get("merged"))


def without_signatures(candidates: set[str], signatures: set[str]) -> set[str]:
    """The nodes that answer a name ``candidates`` share, less the overload signatures
    among them (TypeScript's, ``typing.overload`` stubs) when several do: they share the
    name of the implementation they declare, and a call is to the implementation. So
    are TypeScript's merged declarations (see :func:`answers_beside_none`). Signatures
    that declare no implementation here (a ``.pyi`` stub's overloads) are what answers."""
    if len(candidates) < 2:
        return candidates
    return (candidates - signatures) or candidates


def resolves(candidates: set[str]) -> bool:
    """Whether a name the nodes ``candidates`` answer resolves: one node answers it, or
    the definitions of one name in one Java or Python file (see :func:`is_overload_set`)."""
    return len(candidates) == 1 or is_overload_set(candidates)


def is_overload_set(candidates: set[str]) -> bool:
    """True for the URIs of one name's definitions in one file, the second and later made
    unique as ``Name~2``, ``Name~3`` …: a Java method's overloads, or what a Python
    module defines in alternative branches (SymPy's ``testing/pytest.py`` defines
    ``raises`` as ``pytest.raises`` when pytest is there, else as a function of its own),
    a property's getter and setter, a stub's overloads. A reference by that name is to
    whichever one the arguments or the branch taken pick, so it depends on all of them
    (``symbol:java.util.Objects.requireNonNull``, three overloads, was left unresolved
    399 times in the JDK's ``java.util``; SymPy's tests call ``raises`` 3,441 times)."""
    if len(candidates) < 2:
        return False
    bases = {_overloaded(uri) for uri in candidates}
    return len(bases) == 1 and next(iter(bases)).partition("#")[0].endswith(_ONE_NAME_SETS)


#: The files whose several definitions of one name make a set a reference depends on.
_ONE_NAME_SETS = (".java", *PYTHON_SUFFIXES)


def _overloaded(uri: str) -> str:
    """``…/A.java#A.run~2`` -> ``…/A.java#A.run``; any other URI as it is."""
    head, tilde, tail = uri.rpartition("~")
    return head if tilde and tail.isdigit() and "#" in head else uri


def rust_module(path: str) -> str | None:
    """The crate path of a Rust file's module (``src/a/b.rs`` -> ``crate.a.b``,
    ``src/lib.rs`` -> ``crate``); None outside a crate's ``src/``."""
    return next((m for m in _rust_modules(path) if m == "crate" or m.startswith("crate.")), None)


def rust_paths(target: str, path: str) -> list[str]:
    """The crate paths a Rust path written in ``path`` can name, likeliest first:
    ``self::``/``super::`` from the file's module, ``crate::`` as it is, any other path
    as written (another crate's, or a name in scope) and then from the file's module
    (``use parser::Token`` in ``lib.rs`` is ``crate.parser.Token``)."""
    module = rust_module(path)
    parts = target.split(".")
    if module is None or parts[0] == "crate":
        return [target]
    if parts[0] in ("self", "super"):
        scope = module.split(".")
        if parts[0] == "self":
            parts = parts[1:]
        while parts and parts[0] == "super":
            parts = parts[1:]
            scope = scope[:-1] if len(scope) > 1 else scope
        return [".".join([*scope, *parts])]
    return [target, f"{module}.{target}"]


#: What every Rust module has in scope without a ``use``: the prelude's types, traits and
#: variants, and the primitive types. A name of these is not the crate's node of that name
#: (an enum's ``Eq`` variant, another crate's ``Default``) unless a ``use`` brings it in.
_RUST_PRELUDE = frozenset({
    "Option", "Some", "None", "Result", "Ok", "Err", "Box", "String", "Vec", "ToString",
    "ToOwned", "Clone", "Copy", "Send", "Sync", "Sized", "Unpin", "Drop", "Fn", "FnMut",
    "FnOnce", "drop", "Default", "Eq", "PartialEq", "Ord", "PartialOrd", "Hash", "Debug",
    "AsRef", "AsMut", "Into", "From", "TryFrom", "TryInto", "Iterator", "IntoIterator",
    "DoubleEndedIterator", "ExactSizeIterator", "Extend", "FromIterator", "self", "Self",
    "bool", "char", "str", "f32", "f64", "i8", "i16", "i32", "i64", "i128", "isize", "u8",
    "u16", "u32", "u64", "u128", "usize",
})  # fmt: skip


#: Path keywords, and the standard library's crates: a folder ``crates/core`` is not what
#: ``use core::fmt`` names.
_NOT_CRATE_NAMES = frozenset(
    {"crate", "self", "super", "core", "std", "alloc", "proc_macro", "test"}
)
#: A vendored crate's folder ends with its version (``gimli-0.34.0``).
_VERSION_SUFFIX = re.compile(r"-v?[0-9]+(\.[0-9]+)*([-+][0-9A-Za-z.+-]*)?$")


@lru_cache(maxsize=1 << 12)
def rust_crate_name(crate: str) -> str | None:
    """The name other crates of the tree write a crate's paths with, from the folder
    above its ``src`` (``crates/ruff_python_ast/src`` -> ``ruff_python_ast``,
    ``include/cargo/gimli-0.34.0/src`` -> ``gimli``, ``-`` read as ``_``, as Cargo
    does); None for a crate at the resource's root, whose folder is not in its paths."""
    folder = crate.rpartition("/")[0].rpartition("/")[2]
    name = _VERSION_SUFFIX.sub("", folder).replace("-", "_")
    return name if name.isidentifier() and name not in _NOT_CRATE_NAMES else None


@lru_cache(maxsize=1 << 16)
def rust_crate(path: str) -> str | None:
    """The ``src`` folder of the crate a Rust file belongs to (``vendor/a/src/x.rs`` ->
    ``vendor/a/src``); None outside a crate's ``src/``."""
    folders = path.split("/")[:-1]
    root = _crate_root(folders)
    return None if root is None else "/".join(folders[:root])


def is_script(path: str) -> bool:
    """A JavaScript or TypeScript file (a declaration file too)."""
    return path.endswith(SCRIPT_SUFFIXES)


def may_export_scripts(path: str) -> bool:
    """A file that may hold ``uko-ts:Export`` nodes: a script's, a manifest's (an npm
    ``package.json``, a ``tsconfig.json``)."""
    return path.endswith(SCRIPT_SUFFIXES) or is_script_manifest(path.rpartition("/")[2])


def reexport_types(paths: Iterable[str]) -> list[str]:
    """The types of the re-exports (:data:`REEXPORT_TYPES`) that names in the files at
    ``paths`` may go through: ``export … from`` for scripts and their manifests, a
    package's ``from m import a`` for Python files."""
    paths = list(paths)
    types = [SCRIPT_EXPORT] if any(may_export_scripts(p) for p in paths) else []
    if any(p.endswith(PYTHON_SUFFIXES) for p in paths):
        types.append(PY_REEXPORT)
    return types


def module_of(node: UKONode) -> str:
    """The dotted name of the module declaring ``node``, as imports name it: a script's
    from its file (``src.lib.model``), a Python one's from its ``fqname``
    (``django.db.models.base``, wherever the tree puts ``django``)."""
    if is_script(node.path):
        return script_module(node.path)
    fqname = node.properties.get("fqname") or node.properties.get("module", "")
    return fqname[: len(fqname) - len(node.qualname) - 1] if node.qualname else fqname


def script_module(path: str) -> str:
    """The dotted name of a JavaScript or TypeScript file's module, as its analyzer
    gives it (``src/lib/model.ts`` and ``src/lib/model.d.ts`` -> ``src.lib.model``)."""
    return script_stem(path).replace("/", ".")


def reexports(exports: Iterable[UKONode]) -> Iterator[tuple[str, str, str, str]]:
    """``(file, module, name, path)`` for each name an ``export … from`` node or a
    Python package's ``from m import a`` (:data:`REEXPORT_TYPES`) makes its module
    answer to (``""`` for ``export *`` and ``import *``, path then the module): a
    script's module both as its file's (``src.lib.index``) and as its folder's
    (``src.lib``)."""
    for export in exports:
        module = export.properties.get(EXPORTED_AS)
        if module is None:  # ``""``: a ``baseUrl``, what names no module answers go to
            module = script_module(export.path)
        modules = (
            (module, module.removesuffix(".index"))
            if module.endswith(".index") and is_script(export.path)
            else (module,)
        )
        for bound, target in _bindings(export.properties.get(EXPORT_BINDINGS) or "[]"):
            for name in modules:
                yield export.path, name, bound, target


def reexported_names(exports: Iterable[UKONode]) -> set[str]:
    """The short names of what ``export { a as b } from`` and ``from m import a as b``
    nodes name (``a``): the definitions a name through them may end at."""
    return {short_name(target) for _, _, bound, target in reexports(exports) if bound}


class ReExports:
    """Names followed through re-exports to the definition they stand for: JavaScript's
    and TypeScript's ``export … from`` (``src.lib.Model``, when ``src/lib/index.ts`` says
    ``export * from "./model"``, is ``src.lib.model.Model``) and a Python package's ``from
    m import a`` (``django.db.models.Model`` is ``django.db.models.base.Model``). A name
    its module exports by name is only that one (as TypeScript shadows ``export *``), one
    several ``export *`` give is every one of them (so ambiguous)."""

    def __init__(self, table: dict[str, set[str]], exports: Iterable[UKONode]) -> None:
        self.table = table
        self.named: dict[str, dict[str, list[str]]] = {}  # module -> name -> paths
        self.globs: dict[str, list[str]] = {}  # module -> the modules it exports all of
        # The modules the re-exports name: one that exports nothing ends a search even
        # where the table holds no node of it (a refresh's holds a few names' only).
        self.modules: set[str] = set()
        self._followed: dict[tuple[str, int], set[str]] = {}
        self._steps = 0
        self._begun: list[tuple[str, int]] = []
        self._looked: set[str] | None = None
        self.extend(exports)

    def extend(self, exports: Iterable[UKONode]) -> None:
        """Follow names through these re-exports too (what was followed is forgotten)."""
        for _, module, bound, target in reexports(exports):
            if bound:
                self.named.setdefault(module, {}).setdefault(bound, []).append(target)
                self.modules.add(target.rpartition(".")[0])
            else:
                self.globs.setdefault(module, []).append(target)
                self.modules.add(target)
        self._followed.clear()

    def looked_up(self, names: Iterable[str]) -> set[str]:
        """Every name the searches for ``names`` look up in the table: all they could,
        with a table that answers nothing (what a refresh reads of the stored nodes)."""
        self._looked = set()
        try:
            for name in names:
                self.follow(name)
            return self._looked
        finally:
            self._looked = None

    def follow(self, dotted: str, hops: int = REEXPORT_HOPS) -> set[str]:
        """The nodes answering what ``dotted`` stands for through re-exports (empty
        when it goes through none, or when its search spent :data:`REEXPORT_SEARCH_STEPS`
        steps: globs that export globs branch at every module)."""
        if hops <= 0 or not (self.named or self.globs):
            return set()
        self._steps, self._begun = 0, []
        try:
            return self._follow(dotted, hops)
        except _SearchTooLong:
            for key in self._begun:  # what the search left half-known is not kept
                self._followed.pop(key, None)
            return set()

    def _follow(self, dotted: str, hops: int) -> set[str]:
        if hops <= 0:
            return set()
        known = self._followed.get((dotted, hops))
        if known is not None:
            return known
        self._steps += 1
        if self._steps > REEXPORT_SEARCH_STEPS:
            raise _SearchTooLong(dotted)
        self._followed[(dotted, hops)] = set()  # re-exports in a cycle end here
        self._begun.append((dotted, hops))
        parts = dotted.split(".")
        found: set[str] = set()
        for cut in range(len(parts) - 1, 0, -1):  # the longest module that exports
            module, name, rest = ".".join(parts[:cut]), parts[cut], parts[cut + 1 :]
            if module not in self.named and module not in self.globs:
                if module in self.table or module in self.modules:
                    break  # a module, or a declaration, exporting nothing
                continue
            named = self.named.get(module, {}).get(name)
            if named:
                ways = [".".join([target, *rest]) for target in named]
            elif name != "default":  # ``export *`` leaves the default export out
                ways = [".".join([m, name, *rest]) for m in self.globs.get(module, ())]
            else:
                ways = []
            if self._looked is not None:
                self._looked.update(ways)
            for way in ways:
                found |= self.table.get(way) or self._follow(way, hops - 1)
            break
        if not found:  # from a ``baseUrl`` (``components.button`` in ``src``)
            for base in self.globs.get("", ()):
                if not dotted.startswith(base + "."):
                    way = f"{base}.{dotted}"
                    found |= self.table.get(way) or self._follow(way, hops - 1)
        self._followed[(dotted, hops)] = found
        return found


def reexport_aliases(exports: Iterable[UKONode], names: Iterable[str]) -> set[str]:
    """The other names that lead to ``names`` through ``export … from`` (``src.lib.Model``
    for ``src.lib.model.Model`` when ``src/lib/index.ts`` says ``export * from
    "./model"``, and on through the modules that export that one's names), members
    included (``src.lib.Model.select``)."""
    return Aliases(exports).of(names)


class Aliases:
    """:func:`reexport_aliases` over re-exports added as they are found (the table is
    built once, not again for each search)."""

    def __init__(self, exports: Iterable[UKONode] = ()) -> None:
        self.named: dict[str, set[str]] = {}  # path -> the names an export gives it
        self.globbed: dict[str, set[str]] = {}  # module -> the modules that export all of it
        self.add(exports)

    def add(self, exports: Iterable[UKONode]) -> None:
        for _, module, bound, target in reexports(exports):
            if bound:
                self.named.setdefault(target, set()).add(f"{module}.{bound}")
            else:
                self.globbed.setdefault(target, set()).add(module)

    def of(self, names: Iterable[str]) -> set[str]:
        """The aliases of ``names``, up to :data:`REEXPORT_HOPS` re-exports away."""
        named, globbed = self.named, self.globbed
        if not (named or globbed):
            return set()
        names = set(names)
        found: set[str] = set()
        frontier = names
        for _ in range(REEXPORT_HOPS):
            reached: set[str] = set()
            for name in frontier:
                parts = name.split(".")
                for cut in range(len(parts) - 1, 0, -1):  # the longest module exported
                    head, tail = ".".join(parts[:cut]), parts[cut:]
                    aliases = named.get(".".join(parts[: cut + 1]), ())
                    barrels = globbed.get(head, ())
                    reached.update(".".join([alias, *tail[1:]]) for alias in aliases)
                    reached.update(".".join([barrel, *tail]).lstrip(".") for barrel in barrels)
                    if aliases or barrels:
                        break
            frontier = reached - found - names
            if not frontier:
                break
            found |= frontier
        return found


class _RustPaths:
    """Rust paths followed through ``use`` declarations to the definition they name.

    A module answers to what it declares and to what its ``use`` declarations bring
    in (``pub use`` re-exports most of all, but a child module may also name its
    parent's imports through ``super::``): ``crate::input::ValidatedSet`` is the
    ``ValidatedSet`` that ``src/input/mod.rs`` uses from ``validated``.

    A path only reaches the Rust nodes of its own crate: every crate's root is
    ``crate``, and a tree of several (a workspace, vendored dependencies) would otherwise
    send one crate's ``crate::Error`` to another's. A path that starts with the name of
    another crate of the tree (:func:`rust_crate_name`) goes on from that crate's root,
    through its re-exports. A name of one segment (``Helper``) is what the file's module
    declares or brings in (a glob), else the one node of that name in the crate (brought
    in by a ``use`` these paths cannot follow); one of the prelude's names (``Eq``,
    ``Default``) only ever the former.
    """

    def __init__(
        self, table: dict[str, set[str]], uses: Iterable[UKONode], nodes: list[UKONode]
    ) -> None:
        self._table = table
        #: URI -> its crate, for the Rust nodes (see :func:`rust_crate`).
        self._crates = {n.uri: rust_crate(n.path) for n in nodes if n.path.endswith(".rs")}
        #: Crate name -> crate, for the names one crate of the tree has (two crates of
        #: one name, two versions vendored, leave it to neither).
        named: dict[str, set[str]] = {}
        for root in {c for c in self._crates.values() if c is not None}:
            name = rust_crate_name(root)
            if name is not None:
                named.setdefault(name, set()).add(root)
        self._named = {name: next(iter(c)) for name, c in named.items() if len(c) == 1}
        #: The proc-macro crates' macros (their functions, and derive macros' nodes): all
        #: that other crates see of them.
        self._proc_macros: dict[str, set[str]] = {}
        for n in nodes:
            crate = self._crates.get(n.uri)
            if crate is not None and n.properties.get(PROC_MACRO):
                self._proc_macros.setdefault(crate, set()).add(n.uri)
        #: ``(crate, module path) ->`` what a ``use`` binds to it, and the modules whose
        #: all a glob brings into a module.
        self._aliases: dict[tuple[str | None, str], list[str]] = {}
        self._globs: dict[tuple[str | None, str], list[str]] = {}
        #: ``(key, hops, crate) ->`` what :meth:`_follow` found. Paths branch at every
        #: alias and glob: a crate full of ``use super::*`` sent one lookup through
        #: millions of the same keys (orjson's sdist, 1,003 ``.rs`` files in 23 crates:
        #: the resolve phase ran for minutes).
        self._followed: dict[tuple[str, int, str | None], set[str] | None] = {}
        for file, module, bound, target in rust_bindings(uses):
            crate = rust_crate(file)
            if bound:
                self._aliases.setdefault((crate, f"{module}.{bound}"), []).append(target)
            else:
                self._globs.setdefault((crate, module), []).append(target)
        #: The ``impl Trait for Type`` blocks, and the Rust nodes' URIs: a method no node
        #: of the type answers is looked for among its traits' (:meth:`_provided`).
        self._trait_impls = [
            n for n in nodes if n.uko_type == RUST_IMPL and first_edge(n, IMPLEMENTS_TRAIT)
        ]
        self._rust_uris = set(self._crates)
        #: Type's URI -> the traits it implements, read from those blocks when first asked.
        self._traits: dict[str, set[str]] | None = None
        #: What is left of the current search's steps (:meth:`_search`).
        self._steps = RUST_SEARCH_STEPS

    def lookup(self, target: str, path: str) -> set[str] | None:
        """The nodes of ``path``'s crate that ``target``, written in that file, names."""
        crate = rust_crate(path)
        if "." in target or target in ("self", "super", "crate") or target.startswith(MACRO_KEY):
            keys = rust_paths(target, path)
        else:
            module = rust_module(path)
            keys = [f"{module}.{target}"] if module is not None else []
        for key in keys:
            found = self._search(key, crate)
            other = self._named.get(key.partition(".")[0])
            if found and other is not None and other != crate and other in self._proc_macros:
                # A proc-macro crate exports its macros only (not the private module
                # ``derive_message_formats`` beside the attribute macro of that name).
                found = found & self._proc_macros[other]
            if found:
                return found
        if "." in target:
            return self._provided(keys, crate)
        if target in _RUST_PRELUDE:
            return None
        return self._follow(target, 0, crate)

    def _provided(self, keys: list[str], crate: str | None) -> set[str] | None:
        """The method a trait gives the type by default (``expr.start()`` for ``Ranged``'s
        ``fn start``, as ``impl Ranged for Expr`` leaves it out), for the first of
        ``keys`` (``….Type.method`` paths) whose type implements one trait that has it."""
        traits = self._traits_of()
        for key in keys:
            owner, _, method = key.rpartition(".")
            kinds = self._search(owner, crate) if owner else None
            found = {
                member
                for kind in kinds or ()
                for trait in traits.get(kind, ())
                if (member := f"{trait}.{method}") in self._rust_uris
            }
            if found:
                return found
        return None

    def _traits_of(self) -> dict[str, set[str]]:
        if self._traits is None:
            self._traits = {}  # while they are read, no method is looked for among them
            traits: dict[str, set[str]] = {}
            for impl in self._trait_impls:
                for kind in self._targets(impl, IMPL_FOR):
                    traits.setdefault(kind, set()).update(self._targets(impl, IMPLEMENTS_TRAIT))
            self._traits = traits
        return self._traits

    def _targets(self, node: UKONode, predicate: str) -> set[str]:
        """The nodes ``node``'s edge ``predicate`` names (resolved here if not yet)."""
        target = first_edge(node, predicate)
        if not target.startswith(_PREFIX):
            return {target}
        return self.lookup(target[len(_PREFIX) :], node.path) or set()

    def _search(self, key: str, crate: str | None) -> set[str] | None:
        """:meth:`_follow` with a budget of :data:`RUST_SEARCH_STEPS` (None when spent)."""
        self._steps = RUST_SEARCH_STEPS
        try:
            return self._follow(key, RUST_HOPS, crate)
        except _SearchTooLong:
            return None

    def _follow(self, key: str, hops: int, crate: str | None) -> set[str] | None:
        head, _, rest = key.partition(".")
        if head in self._named:  # another crate's path (``ruff_python_ast::Expr``)
            key, crate = f"crate.{rest}" if rest else "crate", self._named[head]
        # ``crate::write`` is the crate's ``fn write`` if it has one, else the exported
        # macro; ``TextRange::default()`` a method declared, else the deriving type (the
        # keys of ``_RUST_FALLBACKS``, spelled out: this runs for every hop of every path).
        table = self._table
        found = table.get(key) or table.get(MACRO_KEY + key) or table.get(DERIVED_KEY + key)
        if found:
            found = {uri for uri in found if self._crates.get(uri, "") == crate}
        if found or hops == 0:
            return found
        if (key, hops, crate) in self._followed:
            return self._followed[key, hops, crate]
        self._steps -= 1
        if self._steps < 0:
            raise _SearchTooLong  # nothing of this search is remembered
        found = self._through_uses(key, hops, crate)
        self._followed[key, hops, crate] = found
        return found

    def _through_uses(self, key: str, hops: int, crate: str | None) -> set[str] | None:
        parts = key.split(".")
        # The longest prefix a ``use`` binds, the rest its members (``Alias.method``).
        for cut in range(len(parts), 1, -1):
            prefix, rest = ".".join(parts[:cut]), parts[cut:]
            for target in self._aliases.get((crate, prefix), ()):
                found = self._follow(".".join([target, *rest]), hops - 1, crate)
                if found:
                    return found
        # The longest module a glob brings names into, the rest a name and its members
        # (``crate.Config.load`` when ``lib.rs`` says ``pub use crate::config::*``). A
        # module or type of the crate that has no glob ends the search: what is below
        # it is its own (and going on to shorter modules would lengthen the paths at
        # every hop).
        for cut in range(len(parts) - 1, 0, -1):
            module, rest = ".".join(parts[:cut]), parts[cut:]
            globs = self._globs.get((crate, module))
            if globs:
                for target in globs:
                    found = self._follow(".".join([target, *rest]), hops - 1, crate)
                    if found:
                        return found
                return None
            if any(self._crates.get(uri, "") == crate for uri in self._table.get(module, ())):
                return None
        return None


class _SearchTooLong(Exception):
    """A search spent its steps: a Rust path's (:data:`RUST_SEARCH_STEPS`), a name's
    through re-exports (:data:`REEXPORT_SEARCH_STEPS`)."""


def first_edge(node: UKONode, predicate: str) -> str:
    """The target of ``node``'s first edge ``predicate`` (``""``: none)."""
    return next((target for p, target in node.edges if p == predicate), "")


def rust_bindings(uses: Iterable[UKONode]) -> Iterator[tuple[str, str, str, str]]:
    """``(file, module, name, path)`` for each name a Rust ``use`` node binds in its
    file's module (``""`` for a glob) and each crate path it may stand for
    (:func:`rust_paths`)."""
    for use in uses:
        module = rust_module(use.path)
        if module is None:
            continue
        for bound, full in _bindings(use.properties.get("bindings") or "[]"):
            for target in rust_paths(full, use.path):
                yield use.path, module, bound, target


@lru_cache(maxsize=1 << 16)
def _bindings(text: str) -> tuple[tuple[str, str], ...]:
    """A ``use`` node's ``bindings`` read (a run reads each several times; shared, so
    a tuple)."""
    return tuple((bound, full) for bound, full in json.loads(text))


def rust_use_names(uses: Iterable[UKONode]) -> set[str]:
    """The short names of what Rust ``use`` nodes bring in (``lex`` of ``use t::lex as
    tokenize``): the definitions a path through them may end at."""
    return {target.rsplit(".", 1)[-1] for *_, target in rust_bindings(uses)}
