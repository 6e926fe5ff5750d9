"""Unchanged files a refresh must analyse again, because what they name changed.

An analyzer sees one file; the indexer resolves the ``symbol:`` names it leaves
against every node of the resource. So a file whose text did not change can
still come out differently from a cold index of the same files:

* its edges point at a node the refresh retires (a definition removed, renamed
  or moved, a file deleted), where a cold index leaves the name unresolved or
  finds its new home;
* it names, unresolved, what the refresh adds (the caller saved before the
  callee): a cold index resolves it;
* it references a definition by a name that a definition the refresh adds
  answers too: a cold index leaves the name ambiguous;
* a definition the refresh keeps answers other names now (a JavaScript file's
  ``module.exports`` changed, a Java file's package): references by the names it
  lost resolve elsewhere or not at all, and by those it gained resolve now;
* it is a Go or Java file that calls by a plain name what the refresh adds to its
  package, or a Java file to a package it imports on demand (a guess that is no edge
  while nothing answers it; the file's module node lists its guesses);
* it names what the refresh adds by a Rust path through ``use`` declarations
  (``crate::parser::Span`` re-exported from ``parser::spans``), or through a
  re-export (``export … from``, a Python package's ``from .base import Model``);
* it is a Python module below a folder whose ``__init__.py`` came or went: its
  dotted name, and so what its relative imports name, changed; or a Go file below a
  folder whose ``go.mod`` came, went or changed: its package's import path did;
* it is a Python file with a class inheriting (at any depth) from a class the refresh
  gave members or other bases, and a method calling through ``self`` or ``cls`` a
  member it guesses inherited (its module node lists their names), or a file naming
  such a member through the class, a subclass or a variable made by calling one
  (``MyView.as_view``, ``apps.get_model``, ``make_client().get``), or pointing to a
  module variable whose statement changed or a function whose return annotation did, or
  to one whose type (``usesType``) the refresh resolves, or no longer: the member may now
  be another class's, or found at last;
* it is a Go file of a package whose types, methods, interfaces or embeddings the
  refresh changed, and which of its types implement which interfaces changed with
  them (``go_interfaces``).

Analysing those files again (their nodes are then revised only where their
edges changed) leaves the edges a cold index gives.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING

from cleveragents_acms.analyzers._common import (
    ALIAS,
    CALL_RESULT,
    DERIVED_KEY,
    EXPORT_BINDINGS,
    IMPL_FOR,
    IMPLEMENTS_TRAIT,
    INHERITED_GUESSES,
    INHERITS_FROM,
    INSTANCE_OF,
    JAVA_KEY,
    PACKAGE_GUESSES,
    PROC_MACRO,
    PY_REEXPORT,
    RETURNS,
    RUST_IMPL,
    RUST_METHOD,
    RUST_TRAIT,
    UNINDEXED_IMPORTS,
    USES_TYPE,
    imported_module,
)
from cleveragents_acms.analyzers.python import T_ATTRIBUTE, T_IMPORT, T_METHOD, T_VARIABLE
from cleveragents_acms.indexing.go_interfaces import (
    GO_DECLARATIONS,
    go_folder,
    package_facts,
    stale_implementations,
)
from cleveragents_acms.indexing.inheritance import (
    ALIAS_DEPTH,
    INHERITANCE_DEPTH,
    PYTHON_CALLABLE_TYPES,
    PYTHON_CLASS_TYPES,
    TYPED_VALUE_TYPES,
    is_alias,
    is_python_class,
    load_ancestors,
    member_uris,
)
from cleveragents_acms.indexing.resolve import (
    GUESSED_KEYS,
    PY_MODULE_TYPES,
    PYTHON_SUFFIXES,
    RUST_HOPS,
    RUST_USE,
    SCRIPT_SUFFIXES,
    SYMBOL,
    Aliases,
    ReExports,
    answers_beside_none,
    binds_names,
    default_export_files,
    first_edge,
    follow_module_imports,
    module_of,
    module_prefixes,
    reexport_aliases,
    reexport_types,
    reexports,
    resolves,
    rust_bindings,
    rust_crate,
    rust_crate_name,
    rust_fallback_path,
    rust_module_files,
    script_module_files,
    short_name,
    symbol_keys,
    without_signatures,
)

if TYPE_CHECKING:
    from cleveragents.models.uko import UKONode
    from cleveragents_acms.indexing.analysis import FileAnalysis
    from cleveragents_acms.indexing.project_index import ProjectIndex
    from cleveragents_acms.indexing.store import NodeStore

__all__ = ["dependent_files"]


def dependent_files(
    index: ProjectIndex,
    resource_id: str,
    changed: Sequence[FileAnalysis],
    removed: Sequence[str],
    *,
    added: set[str],
    present: Sequence[str],
) -> set[str]:
    """The unchanged files among ``present`` to analyse again (see the module's text).

    ``changed`` are the analyses of the files whose text changed, ``removed`` the
    files gone and ``added`` the files new to the index.
    """
    nodes = index.nodes
    if not (changed or removed) or not nodes.has_resource(resource_id):
        return set()  # a cold index: nothing was resolved before
    touched = {a.relative for a in changed} | set(removed)
    found = _files_below("__init__.py", ".py", added | set(removed), present)
    found |= _files_below("go.mod", ".go", touched | added, present)  # changed ones too
    before = set(nodes.current_fingerprints(resource_id, touched))
    now = [n for a in changed for n in a.result.nodes]
    gone = before - {n.uri for n in now}
    # What JavaScript and TypeScript modules and Python packages re-export, read once
    # when a file of their languages changed (None: none did).
    kinds = reexport_types(touched)
    exports = (
        [n for kind in kinds for n in nodes.nodes_of_type(resource_id, kind)] if kinds else None
    )
    if exports is not None and PY_REEXPORT in kinds:
        # The plain modules' from-imports are read where needed (``_with_imports_to``):
        # the touched files' own, for what their bindings were.
        exports += [
            n for n in nodes.nodes_in_files(resource_id, touched, [T_IMPORT]) if binds_names(n)
        ]
    targets, guessed = _name_targets(nodes, resource_id, now, before, gone, touched, exports)
    targets |= gone | _changed_rust_bindings(nodes, resource_id, now, touched)
    targets |= _changed_trait_methods(nodes, resource_id, now, before, touched)
    targets |= _changed_reexports(nodes, resource_id, now, touched, exports)
    found |= _importing_through(index, resource_id, now, touched, exports)
    if targets:
        pointing = _pointing_to(index, resource_id, targets)
        found |= pointing | _typed_through(index, resource_id, pointing, targets)
    found |= _guessing_files(index, resource_id, guessed, present)
    found |= _inheriting_files(index, resource_id, now, before, exports)
    found |= _retyped(index, resource_id, now, before)
    found |= _go_packages_changed(nodes, resource_id, now, touched, present)
    return (found - touched) & set(present)


def _go_packages_changed(
    nodes: NodeStore,
    resource_id: str,
    now: Sequence[UKONode],
    touched: set[str],
    present: Sequence[str],
) -> set[str]:
    """The other Go files of the packages whose declarations (:func:`package_facts`) in
    the touched files changed, whose types now implement other interfaces than their
    stored edges say (:func:`stale_implementations`)."""
    paths = [p for p in touched if go_folder(p) is not None]
    if not paths:
        return set()
    before = package_facts(nodes.nodes_in_files(resource_id, paths, GO_DECLARATIONS))
    after = package_facts(now)
    folders = {f for f in before.keys() | after.keys() if before.get(f) != after.get(f)}
    if not folders:
        return set()
    others = [
        n
        for n in nodes.nodes_in_folders(resource_id, folders, ".go", GO_DECLARATIONS)
        if n.path not in touched
    ]
    return stale_implementations(others, now) & set(present)


def _files_below(
    marker: str, suffix: str, paths: Iterable[str], present: Sequence[str]
) -> set[str]:
    """The ``suffix`` files below each folder whose ``marker`` file is among ``paths``:
    the Python modules below an ``__init__.py`` (their dotted names follow it), the Go
    files below a ``go.mod`` (their packages' import paths follow its module path)."""
    folders = {path.rpartition("/")[0] for path in paths if path.rpartition("/")[2] == marker}
    if not folders:
        return set()
    return {
        path
        for path in present
        if path.endswith(suffix)
        and any(not folder or path.startswith(folder + "/") for folder in folders)
    }


def _name_targets(
    nodes: NodeStore,
    resource_id: str,
    now: Sequence[UKONode],
    before: set[str],
    gone: set[str],
    touched: set[str],
    exports: list[UKONode] | None = None,
) -> tuple[set[str], dict[str, str]]:
    """The edge targets whose meaning the nodes that come and go change (and those kept
    that answer other names now), for the names those nodes answer to (a name resolves
    when exactly one node answers it, or the overloads of one Java method:
    :func:`resolve.resolves`):

    * ``symbol:<name>``, where the nodes answering a name now resolve it and differ from
      those before: an unresolved reference to it resolves now;
    * the URIs of the nodes that resolved a name before, where they no longer are the
      ones answering it: a reference resolved to them by that name is ambiguous, or
      resolves elsewhere, now.

    Also the names the Go and Java analyzers guess a package holds that one node answers
    now and not before, each with that node's file (see :func:`_guessing_files`).
    """
    new = [n for n in now if n.uri not in before]
    keys = {key for node in new for key in symbol_keys(node)}
    stored_before = {n.uri: n for n in nodes.nodes_at(resource_id, before)}
    keys.update(
        key for uri in gone if uri in stored_before for key in symbol_keys(stored_before[uri])
    )
    renamed: list[UKONode] = []
    # A function that becomes a proc macro, or stops being one, is what another crate's
    # path to its name reaches, or no longer (``resolve._RustPaths.lookup``).
    proc_macros: set[str] = set()
    for node in now:  # kept, but answering other names (``module.exports`` or a package moved)
        if node.uri in stored_before:
            earlier = stored_before[node.uri]
            differ = symbol_keys(node) ^ symbol_keys(earlier)
            if differ:
                keys |= differ
                renamed.append(node)
            if node.properties.get(PROC_MACRO) != earlier.properties.get(PROC_MACRO):
                crate = rust_crate(node.path)
                name = rust_crate_name(crate) if crate is not None else None
                proc_macros |= {node.uri, f"{SYMBOL}{name}.{node.name}"} if name else set()
    if not keys:
        return proc_macros, {}
    short = {short_name(key) for key in keys}
    # A type answers for the methods its ``#[derive]`` gives (``derived:…Text.default``).
    short |= {
        short_name(key[len(DERIVED_KEY) :].rpartition(".")[0])
        for key in keys
        if key.startswith(DERIVED_KEY)
    }
    stored = nodes.nodes_named([resource_id], short)
    stored += nodes.default_exports_at([resource_id], default_export_files(keys))
    after = [n for n in stored if n.path not in touched] + list(now)
    answered_before, answered_now = _answering(stored, keys), _answering(after, keys)
    # A Rust file's names are answered within its own crate (``resolve._RustPaths``).
    crates_before, crates_now = (
        _answering_in_crates(stored, keys),
        _answering_in_crates(after, keys),
    )
    path_of = {n.uri: n.path for n in after}
    targets: set[str] = set()
    guessed: dict[str, str] = {}
    compared = [
        (key, answered_before.get(key, set()), answered_now.get(key, set())) for key in keys
    ]
    # A Python import of a plain name is answered by the modules among those alone
    # (``resolve.PY_MODULE_TYPES``): ``re.py`` added beside a function ``re`` resolves it.
    modules = {n.uri for n in [*stored, *now] if n.uko_type in PY_MODULE_TYPES}
    compared += [
        (key, was & modules, is_ & modules) for key, was, is_ in compared if "." not in key
    ]
    compared += [
        (key, crates_before.get((key, crate), set()), crates_now.get((key, crate), set()))
        for key, crate in crates_before.keys() | crates_now.keys()
    ]
    # A module that re-exports another's names (``export * from``, a package's ``from m
    # import a``) answers them too, through it (``resolve.ReExports``).
    if exports is not None:
        exports_before = _with_imports_to(nodes, resource_id, exports, keys)
        exports_now = [e for e in exports_before if e.path not in touched]
        exports_now += _searchable(nodes, resource_id, [n for n in now if binds_names(n)])
        aliases = reexport_aliases([*exports_before, *exports_now], keys) - keys
        if aliases:
            through_before = _answering_through(stored, exports_before, aliases)
            through_now = _answering_through(after, exports_now, aliases)
            compared += [
                (key, through_before.get(key, set()), through_now.get(key, set()))
                for key in aliases
            ]
    for key, was, is_ in compared:
        if resolves(is_) and was != is_:
            if key.startswith(GUESSED_KEYS):
                guessed[key] = path_of[next(iter(is_))]
            else:
                targets.add(SYMBOL + key)
        if resolves(was) and was != is_:
            targets.update(was)
    targets |= proc_macros
    if any(n.path.endswith(".rs") for n in [*new, *renamed]):
        coming = {t[len(SYMBOL) :] for t in targets if t.startswith(SYMBOL)}
        # An exported macro's or a derive's key stands for a path (``resolve._RustPaths``).
        coming |= {path for c in coming if (path := rust_fallback_path(c))}
        targets |= _rust_aliases(nodes, resource_id, now, coming)
    return targets, guessed


def _changed_rust_bindings(
    nodes: NodeStore, resource_id: str, now: Sequence[UKONode], touched: set[str]
) -> set[str]:
    """The targets the Rust ``use`` declarations of the changed files change:

    * what a ``use`` no longer brings in (a re-export removed): references that reached
      it through the ``use`` may not now. Which path a resolved reference took is not
      kept, so every definition of such a name is a target;
    * the paths a ``use`` now binds (a re-export added): references by those paths,
      left unresolved, may resolve now.
    """
    if not any(path.endswith(".rs") for path in touched):
        return set()
    stored = nodes.nodes_in_files(resource_id, touched, (RUST_USE,))
    before = set(rust_bindings(stored))
    after = set(rust_bindings(n for n in now if n.uko_type == RUST_USE))
    lost, gained = before - after, after - before
    names = {
        name for _, _, bound, target in lost for name in (bound, target.rsplit(".", 1)[-1]) if name
    }
    targets = {n.uri for n in nodes.nodes_named([resource_id], names)} if names else set()
    # A glob brings in all of a module: the nodes of the files the module can be.
    lost_globs, gained_globs = _glob_files(lost), _glob_files(gained)
    targets |= set(nodes.current_fingerprints(resource_id, {f for _, f in lost_globs}))
    brought = nodes.nodes_at(
        resource_id, nodes.current_fingerprints(resource_id, {f for _, f in gained_globs})
    )
    paths = {f"{module}.{bound}" for _, module, bound, _ in gained if bound}
    paths |= {
        f"{module}.{member.qualname or member.name}"
        for module, file in gained_globs
        for member in brought
        if member.path == file
    }
    if paths:
        targets |= {SYMBOL + path for path in paths} | _rust_aliases(nodes, resource_id, now, paths)
    return targets


def _changed_trait_methods(
    nodes: NodeStore, resource_id: str, now: Sequence[UKONode], before: set[str], touched: set[str]
) -> set[str]:
    """The targets the methods Rust traits give their types by default
    (``resolve._RustPaths``) change with the touched files:

    * a trait's method added or removed, or an ``impl Trait for Type`` added or removed:
      the paths of the type's method of that name (``ast.Expr.start``, and those through
      ``use`` declarations), left unresolved, may resolve now; and the methods of that
      name of the type's traits, which a reference resolved to may no longer be the one;
    * a type's own method added or removed: the traits' methods of that name, which a
      reference resolved to may now be the type's own (or, gone, the trait's again).
    """
    if not any(path.endswith(".rs") for path in touched):
        return set()
    was = nodes.nodes_at(resource_id, before)
    impls_before = nodes.nodes_in_files(resource_id, touched, (RUST_IMPL,))
    traits = {n.uri for n in [*was, *now] if n.uko_type == RUST_TRAIT}

    def members(found: Iterable[UKONode]) -> set[tuple[str, str]]:
        return {(owner, n.name) for n in found if (owner := n.uri.rpartition(".")[0]) in traits}

    def methods(found: Iterable[UKONode]) -> set[str]:
        return {n.uri for n in found if n.uko_type == RUST_METHOD}

    came_or_went = methods(was) ^ methods(now)
    own = {  # (the type's name, the method's) of a type's own methods come or gone
        (_type_name(n.uri.rpartition(".")[0]), n.name)
        for n in [*was, *now]
        if n.uri in came_or_went and n.uri.rpartition(".")[0] not in traits
    }
    given = members(was) ^ members(now)
    earlier = {n.uri for n in impls_before if first_edge(n, IMPLEMENTS_TRAIT)}
    later = {n.uri: n for n in now if n.uko_type == RUST_IMPL and first_edge(n, IMPLEMENTS_TRAIT)}
    impls = [n for n in impls_before if n.uri in earlier - later.keys()]
    impls += [n for uri, n in later.items() if uri not in earlier]
    if not (own or given or impls):
        return set()
    stored = [n for n in nodes.rust_trait_impls(resource_id) if n.path not in touched]
    pairs = _impl_pairs(nodes, resource_id, [*stored, *impls_before, *later.values()], now)
    changed = _impl_pairs(nodes, resource_id, impls, now)
    kinds: dict[str, set[str]] = {}  # trait -> the types implementing it
    traits_of: dict[str, set[str]] = {}  # type -> the traits it implements
    for kind, trait in pairs:
        kinds.setdefault(trait, set()).add(kind)
        traits_of.setdefault(kind, set()).add(trait)
    # What each type's method of a name may be: (type, name).
    wanted = {(kind, name) for trait, name in given for kind in kinds.get(trait, ())}
    if changed:
        implemented = {trait for _, trait in changed}
        files = {n.path for n in nodes.nodes_at(resource_id, implemented)}
        files |= {n.path for n in now if n.uri in implemented}
        declared = nodes.nodes_at(resource_id, nodes.current_fingerprints(resource_id, files))
        declared += now
        wanted |= {
            (kind, n.name)
            for kind, trait in changed
            for n in declared
            if n.uri.rpartition(".")[0] == trait
        }
    targets = {
        f"{trait}.{name}"
        for kind, traits in traits_of.items()
        for trait in traits
        for owner, name in own
        if _type_name(kind) == owner
    }
    targets |= {f"{trait}.{name}" for kind, name in wanted for trait in traits_of.get(kind, ())}
    types = {n.uri: n for n in nodes.nodes_at(resource_id, {kind for kind, _ in wanted})}
    types.update((n.uri, n) for n in now)
    paths: dict[str | None, set[str]] = {}  # by the type's crate, which ``crate.`` is
    for kind, name in wanted:
        if kind in types:
            keys = {f"{key}.{name}" for key in symbol_keys(types[kind])}
            paths.setdefault(rust_crate(types[kind].path), set()).update(keys)
    for crate, found in paths.items():
        targets |= {SYMBOL + path for path in found}
        targets |= _rust_aliases(nodes, resource_id, now, found, [crate])
    return targets


def _impl_pairs(
    nodes: NodeStore, resource_id: str, impls: Sequence[UKONode], now: Sequence[UKONode]
) -> set[tuple[str, str]]:
    """``(type, trait)`` for each ``impl Trait for Type`` of ``impls``: the URIs their
    edges name, or, not resolved yet (a changed file's), every Rust type or trait of that
    short name."""
    unresolved = {
        short_name(t[len(SYMBOL) :])
        for n in impls
        for t in (first_edge(n, IMPL_FOR), first_edge(n, IMPLEMENTS_TRAIT))
        if t.startswith(SYMBOL)
    }
    named: dict[str, set[str]] = {}
    if unresolved:
        for n in [*nodes.nodes_named([resource_id], unresolved), *now]:
            if n.name in unresolved and n.path.endswith(".rs"):
                named.setdefault(n.name, set()).add(n.uri)

    def reached(target: str) -> set[str]:
        if not target.startswith(SYMBOL):
            return {target} if target else set()
        return named.get(short_name(target[len(SYMBOL) :]), set())

    return {
        (kind, trait)
        for n in impls
        for kind in reached(first_edge(n, IMPL_FOR))
        for trait in reached(first_edge(n, IMPLEMENTS_TRAIT))
    }


def _type_name(uri: str) -> str:
    """The last name of the qualified name a URI ends with (``…/nodes.rs#outer.Expr`` ->
    ``Expr``): a type's, or, of a method's owner, the type whose ``impl`` holds it."""
    return uri.partition("#")[2].rpartition(".")[2]


def _with_imports_to(
    nodes: NodeStore, resource_id: str, exports: Sequence[UKONode], keys: set[str]
) -> list[UKONode]:
    """``exports`` and the stored top-level from-imports of Python modules through which
    a name leads to one of ``keys`` (``b.X`` to ``a.X`` when ``b.py`` says ``from a import
    X``; ``b.X.run`` to ``a.X.run``), through ``exports`` and one another, as far as
    :func:`reexport_aliases` follows them. A refresh reads those only: a tree's plain
    imports are thousands (25k of the benchmark's 10k files). What they bind of whole
    modules is left out (:func:`_without_module_bindings`)."""
    through = _searchable(nodes, resource_id, exports)
    known = {e.uri for e in exports}
    found: dict[str, UKONode] = {}
    aliases = Aliases(through)

    def read(modules: set[str]) -> list[UKONode]:
        return [
            n
            for n in nodes.imports_from(resource_id, modules)
            if binds_names(n) and n.uri not in found and n.uri not in known
        ]

    def grow(new: list[UKONode]) -> set[str]:
        kept = _without_module_bindings(nodes, resource_id, new)
        found.update((n.uri, n) for n in kept)
        aliases.add(kept)
        return set(keys) | aliases.of(keys)

    follow_module_imports(set(keys) | aliases.of(keys), read, grow)
    return [*through, *found.values()]


def _searchable(nodes: NodeStore, resource_id: str, exports: Sequence[UKONode]) -> list[UKONode]:
    """``exports``, their plain imports without what they bind of whole modules."""
    plain = [e for e in exports if e.uko_type == T_IMPORT]
    return [
        *(e for e in exports if e.uko_type != T_IMPORT),
        *_without_module_bindings(nodes, resource_id, plain),
    ]


def _without_module_bindings(
    nodes: NodeStore, resource_id: str, imports: Sequence[UKONode]
) -> list[UKONode]:
    """``imports`` without what they bind of whole modules (``from django.db import
    models``), which a search back from a name does not go through: every name of such a
    module would have an alias in each module importing it (a thousand of Django's import
    ``models``), while a reference through another module's import of a module is rare.
    A statement binding nothing else is left out."""
    targets = {t for node in imports for _, t in _bound_names(node)}
    if not targets:
        return []
    modules = {
        n.name
        for n in nodes.nodes_named([resource_id], targets)
        if n.uko_type in PY_MODULE_TYPES and not n.qualname
    }
    kept: list[UKONode] = []
    for node in imports:
        bound = _bound_names(node)
        named = [[b, t] for b, t in bound if t not in modules]
        if len(named) == len(bound):
            kept.append(node)
        elif named:
            properties = {**node.properties, EXPORT_BINDINGS: json.dumps(named)}
            kept.append(dataclasses.replace(node, properties=properties))
    return kept


def _binding_changes(
    exports: Sequence[UKONode], added: Sequence[UKONode], touched: set[str]
) -> tuple[set[tuple[str, str, str, str]], set[tuple[str, str, str, str]]]:
    """(lost, gained) bindings (:func:`reexports`) of the touched files: ``exports`` holds
    the stored ones, ``added`` the nodes binding names now."""
    before = set(reexports(e for e in exports if e.path in touched))
    after = set(reexports(added))
    return before - after, after - before


def _importing_through(
    index: ProjectIndex,
    resource_id: str,
    now: Sequence[UKONode],
    touched: set[str],
    exports: list[UKONode] | None,
) -> set[str]:
    """The files whose references went through a name a touched Python module no longer
    binds (``b.X`` of ``from a import X`` in ``b.py``): a reference resolved through the
    binding names the definition, not the way it went. Those are among the files
    importing from ``b`` what leads to the name (``from b import X``, ``from pkg import
    b``, ``import b``, and on through the modules importing it from those; also in a
    function, or as the second module of ``import a, b``, as the module lists them:
    ``UNINDEXED_IMPORTS``) that point into the files of what the statement reached; a
    statement that reached no node led no reference anywhere. (A name a module binds
    anew is looked for by the references left unresolved, ``_changed_reexports``.)"""
    if exports is None:
        return set()
    lost, _ = _binding_changes(exports, [n for n in now if binds_names(n)], touched)
    lost = {c for c in lost if c[2] and c[0].endswith(PYTHON_SUFFIXES)}
    if not lost:
        return set()
    nodes = index.nodes
    statements = nodes.nodes_in_files(resource_id, {c[0] for c in lost}, [T_IMPORT, PY_REEXPORT])
    lost_names = {(module, bound) for _, module, bound, _ in lost}
    reached = {
        target
        for statement in statements
        if any((module, b) in lost_names for _, module, b, _ in reexports([statement]))
        for _, target in statement.edges
        if not target.startswith(SYMBOL)
    }
    if not reached:
        return set()
    paths = {f"{module}.{bound}" for module, bound in lost_names}
    through = _with_imports_to(nodes, resource_id, exports, paths)
    names = paths | reexport_aliases(through, paths)
    # A statement leads to one of the names when what it binds is the name or a prefix of
    # it (``from pkg import b`` to ``pkg.b.X``); ``import b`` binds the module it names.
    prefixes = module_prefixes(names)
    covered = names | prefixes
    importing: set[str] = set()
    for node in nodes.imports_from(resource_id, prefixes):
        bound = [t for _, t in _bound_names(node)] or [imported_module(node.qualname)]
        if not covered.isdisjoint(bound):
            importing.add(node.path)
    homes = nodes.paths_of(resource_id, reached)
    pointing = _pointing_to(index, resource_id, set(nodes.current_fingerprints(resource_id, homes)))
    # What the index of import statements does not find, the module lists.
    for module in nodes.modules_at([resource_id], sorted(pointing - importing)):
        unindexed = module.properties.get(UNINDEXED_IMPORTS)
        if unindexed and not covered.isdisjoint(unindexed.split("\n")):
            importing.add(module.path)
    return importing & pointing


def _bound_names(node: UKONode) -> list[tuple[str, str]]:
    """``(name, path)`` of what an import statement binds by name (none for ``import m``)."""
    return [(b, t) for _, _, b, t in reexports([node]) if b] if binds_names(node) else []


def _changed_reexports(
    nodes: NodeStore,
    resource_id: str,
    now: Sequence[UKONode],
    touched: set[str],
    exports: list[UKONode] | None,
) -> set[str]:
    """The targets the re-exports of the changed files change (``export … from`` of
    JavaScript and TypeScript files, a Python package's ``from m import a``;
    ``exports``: those stored, None when no file of those languages changed):

    * every node what an export gives or gave can reach: a reference resolved through it
      may now resolve elsewhere or not at all (which way it took is not kept), and one
      through another export of the same name is ambiguous now (``export *`` twice);
    * the names an export now gives, and those of the modules exporting this one's:
      references by them, left unresolved, may resolve now.
    """
    if exports is None:
        return set()
    added = [n for n in now if binds_names(n)]
    lost, gained = _binding_changes(exports, added, touched)
    if not (lost or gained):
        return set()
    changed = lost | gained
    # What a glob exports all of: a script's module, or folder, by its files; a Python
    # module by its module node, named by its dotted name.
    globs = [(path, t) for path, _, bound, t in changed if not bound]
    python = {t for path, t in globs if path.endswith(PYTHON_SUFFIXES)}
    scripts = {t for path, t in globs if not path.endswith(PYTHON_SUFFIXES)}
    globbed = {f for t in scripts for f in script_module_files(t)}
    if python:
        modules = [*nodes.nodes_named([resource_id], python), *now]
        globbed |= {n.path for n in modules if not n.qualname and n.name in python}
    reached = nodes.nodes_at(resource_id, nodes.current_fingerprints(resource_id, globbed))
    reached += [n for n in now if n.path in globbed]
    # What a Python module binds by name: the files importing through it are found
    # instead (``_importing_through``), not every reference to a node of that name.
    names = {
        short_name(t)
        for path, _, bound, t in changed
        if bound and not path.endswith(PYTHON_SUFFIXES)
    }
    names |= {n.name for n in reached if n.qualname}
    targets = {n.uri for n in nodes.nodes_named([resource_id], names)} if names else set()
    # A path alias stands for a folder (``@/*``): every module below it.
    folders = {t.replace(".", "/") for t in scripts}
    reached += [
        n for folder in folders for n in nodes.nodes_below(resource_id, folder, SCRIPT_SUFFIXES)
    ]
    targets |= {n.uri for n in reached}
    paths = {f"{module}.{bound}" for _, module, bound, _ in gained if bound}
    paths |= {
        path
        for _, module, bound, target in gained
        if not bound
        for node in reached
        for path in _through_glob(module, target, node)
    }
    through = _with_imports_to(nodes, resource_id, [*exports, *added], paths)
    paths |= reexport_aliases(through, paths)
    return targets | {SYMBOL + path for path in paths}


def _through_glob(module: str, target: str, node: UKONode) -> set[str]:
    """The paths ``node`` answers to through ``module``'s export of all of ``target``, a
    module or a folder (``@.components.button.Button`` for ``Button`` of
    ``src/components/button.ts`` when ``@`` stands for the folder ``src``)."""
    own = module_of(node)
    found: set[str] = set()
    for form in {own, own.removesuffix(".index")}:
        if form == target or form.startswith(target + "."):
            tail = form[len(target) + 1 :]
            found.add(".".join(p for p in (module, tail, node.qualname) if p))
    return found


def _glob_files(bindings: Iterable[tuple[str, str, str, str]]) -> set[tuple[str, str]]:
    """``(module, file)``: the files each glob of ``bindings`` (from
    :func:`rust_bindings`) brings all of into ``module``."""
    return {
        (module, file)
        for path, module, bound, target in bindings
        if not bound
        for file in rust_module_files(target, path)
    }


def _rust_aliases(
    nodes: NodeStore,
    resource_id: str,
    now: Sequence[UKONode],
    names: set[str],
    crates: Iterable[str | None] | None = None,
) -> set[str]:
    """``symbol:`` targets for the other Rust paths that lead to ``names`` through ``use``
    declarations (``crate.parser.Span`` for ``crate.parser.spans.Span`` when
    ``parser/mod.rs`` has ``pub use self::spans::*``), and for their forms from a module
    on the way (``spans.Span``) and from the crate's name: the references left unresolved
    by one of those paths resolve now too. ``crate.`` is each of ``crates`` (by default,
    those of the Rust files among ``now``), whose own ``use`` declarations are followed."""
    if crates is None:
        crates = {rust_crate(n.path) for n in now if n.path.endswith(".rs")}
    crates = set(crates)
    uses = {n.uri: n for n in nodes.nodes_of_type(resource_id, RUST_USE)}
    uses.update((n.uri, n) for n in now if n.uko_type == RUST_USE)
    named: dict[str, set[str]] = {}  # path -> the paths a ``use`` binds to it
    globbed: dict[str, set[str]] = {}  # module -> the modules that bring in all of it
    for file, module, bound, target in rust_bindings(uses.values()):
        if rust_crate(file) not in crates:
            continue  # ``crate.`` is another crate there
        if bound:
            named.setdefault(target, set()).add(f"{module}.{bound}")
        else:
            globbed.setdefault(target, set()).add(module)
    found: set[str] = set()
    frontier = set(names)
    for _ in range(RUST_HOPS):
        reached: set[str] = set()
        for name in frontier:
            parts = name.split(".")
            # What a ``use`` binds to the path or to the longest prefix of it, the rest
            # its members, as ``resolve._RustPaths`` follows (``crate.Expr.start`` for
            # ``crate.nodes.Expr.start`` when ``lib.rs`` has ``pub use nodes::Expr``).
            for cut in range(len(parts), 1, -1):
                aliases = named.get(".".join(parts[:cut]))
                if aliases:
                    reached |= {".".join([alias, *parts[cut:]]) for alias in aliases}
                    break
            # From the longest module on the path that a glob brings in, as
            # ``resolve._RustPaths`` follows (``crate.Text.new`` for
            # ``crate.builders.Text.new`` when ``lib.rs`` has ``pub use builders::*``).
            for cut in range(len(parts) - 1, 0, -1):
                modules = globbed.get(".".join(parts[:cut]))
                if modules:
                    rest = ".".join(parts[cut:])
                    for module in modules:
                        if module.count(".") < cut:
                            reached.add(f"{module}.{rest}")
                        else:
                            # A module below bringing in all of one above (``use
                            # super::*``): its path is longer, and followed no further
                            # (each hop would lengthen the paths again, every such
                            # module's: millions of them in ruff's tree).
                            found.add(f"{module}.{rest}")
                    break
        frontier = reached - found - names
        if not frontier:
            break
        found |= frontier
    # A file writes a path from its own module (``errors::list_all_errors`` in
    # ``lib.rs``), kept so when unresolved: each tail of two segments or more.
    relative = {
        ".".join(parts[i:])
        for path in found | names
        if path.startswith("crate.")
        for parts in [path.split(".")]
        for i in range(1, len(parts) - 1)
    }
    # Another crate of the tree writes them from the crate's name (``geo::Point``).
    prefixes = {rust_crate_name(c) for c in crates if c is not None} - {None}
    by_name = {
        f"{prefix}.{path.removeprefix('crate.')}"
        for path in found | names
        if path.startswith("crate.")
        for prefix in prefixes
    }
    return {SYMBOL + path for path in found | relative | by_name}


def _guessing_files(
    index: ProjectIndex, resource_id: str, guessed: Mapping[str, str], present: Sequence[str]
) -> set[str]:
    """The files that call, by a plain name, what one of ``guessed`` names (a name the
    Go and Java analyzers guess a package holds -> the file now defining it).

    Such a call is a guess that the name is the package's, no edge while nothing answers
    it: each file's module node lists its guesses (``PACKAGE_GUESSES``), so only the
    files of the package (same folder and language) that made the guess are analysed
    again, not the whole package, and the Java files that import a package the name may
    be of on demand (``import a.b.*;``, an edge to ``symbol:a.b``), and those that import
    a class's static members on demand (``import static a.b.Checks.*;``, an edge to the
    class). A file whose module node has no list (indexed before there was one) may have
    made it.
    """
    if not guessed:
        return set()
    nodes = index.nodes
    folders = {(path.rpartition("/")[0], path.rpartition(".")[2]) for path in guessed.values()}
    package = {p for p in present if (p.rpartition("/")[0], p.rpartition(".")[2]) in folders}
    prefixes = {
        ".".join(parts[:i])
        for key in guessed
        if key.startswith(JAVA_KEY)
        for parts in [key[len(JAVA_KEY) :].split(".")]
        for i in range(1, len(parts))
    }
    imported = {SYMBOL + prefix for prefix in prefixes}
    # ``import static a.Checks.*;`` points to the class itself once resolved.
    imported |= {
        n.uri
        for n in nodes.nodes_named([resource_id], {short_name(p) for p in prefixes})
        if n.path.endswith(".java") and n.properties.get("fqname") in prefixes
    }
    if imported:
        package |= {p for p in _pointing_to(index, resource_id, imported) if p.endswith(".java")}
    keys = set(guessed)
    found: set[str] = set()
    for module in nodes.modules_at([resource_id], sorted(package)):
        names = module.properties.get(PACKAGE_GUESSES)
        if names is None or not keys.isdisjoint(names.split("\n")):
            found.add(module.path)
    return found


def _inheriting_files(
    index: ProjectIndex,
    resource_id: str,
    now: Sequence[UKONode],
    before: set[str],
    exports: Sequence[UKONode] | None,
) -> set[str]:
    """The files that may reach a member a class of ``now`` gained (a URI not among
    ``before``) or whose bases changed gives its subclasses (at any depth): those of the
    subclasses that guess one of those members inherited (any member, for changed bases)
    and those naming one of them as a member of the class, a subclass or a module
    variable made by calling one (``app.views.Form.as_view``, ``app.apps.get_model``,
    under the names packages re-export them by too), unresolved or resolved to a member
    of that name above the class; for changed bases, every file pointing to one of
    those classes. A member taken away needs nothing here: the edges to it point to a
    node the refresh retires."""
    classes = {n.uri: n for n in now if is_python_class(n)}
    if not classes:
        return set()
    gained: set[str] = set()
    changed: set[str] = set()
    for node in now:
        if node.parent in classes and node.uri not in before:
            gained.add(node.name)
            changed.add(node.parent)
    stored = index.nodes.nodes_at(resource_id, classes.keys() & before)
    rebased = {
        n.uri for n in stored if n.properties.get("bases") != classes[n.uri].properties.get("bases")
    }
    targets = changed | rebased
    chain = [classes[uri] for uri in targets]
    found: set[str] = set()
    pointing: set[str] = set()
    seen = set(targets)
    for _ in range(INHERITANCE_DEPTH):
        if not targets:
            break
        files = _pointing_to(index, resource_id, targets)
        pointing |= files
        subclasses = [
            c
            for c in index.nodes.nodes_in_files(resource_id, files, PYTHON_CLASS_TYPES)
            if c.uri not in seen and any(p == INHERITS_FROM and t in targets for p, t in c.edges)
        ]
        found.update(c.path for c in subclasses)
        chain += subclasses
        targets = {c.uri for c in subclasses}
        seen |= targets
    guessing = set()
    for module in index.nodes.modules_at([resource_id], sorted(found)):
        names = module.properties.get(INHERITED_GUESSES)
        if names and (rebased or not gained.isdisjoint(names.split("\n"))):
            guessing.add(module.path)
    if rebased:
        return guessing | pointing
    # Variables made by calling one of the classes: ``apps.get_model`` of ``apps = Apps()``;
    # functions returning one: ``make_client().get`` (``CALL_RESULT``).
    typed = _typed_in(index, resource_id, pointing, seen)
    callables = [v for v in typed if v.uko_type not in TYPED_VALUE_TYPES]
    variables = {v.uri for v in typed if v.uko_type in TYPED_VALUE_TYPES}
    # ... and the classes' names in other modules (``Matrix = MutableMatrix``: ``ALIAS``)
    aliases = _with_aliases(index, resource_id, variables | seen) - seen
    chain += index.nodes.nodes_at(resource_id, variables | aliases)
    keys = {key for cls in chain for key in symbol_keys(cls)}
    called = {key for f in callables for key in symbol_keys(f)}
    if exports is not None:
        exports = _with_imports_to(index.nodes, resource_id, exports, keys | called)
        aliases_of = Aliases(exports).of  # one table for both
        keys |= aliases_of(keys)
        called |= aliases_of(called)
    keys |= {key + CALL_RESULT for key in called}
    named = {f"{SYMBOL}{key}.{member}" for key in keys for member in gained}
    # ``Series().resample().mean`` where ``Series`` inherits ``resample``: named through the
    # subclass, not by the method's own key; found among the files calling the method.
    methods = {f.uri for f in callables if f.uko_type == T_METHOD}
    inherited_callee = (
        index.nodes.paths_naming(
            resource_id,
            _pointing_to(index, resource_id, methods),
            tuple(f"{CALL_RESULT}.{member}" for member in gained),
        )
        if methods
        else set()
    )
    # ... and resolved, to the member of that name a class above gave until now.
    named |= {
        uri
        for cls in load_ancestors(index.nodes, changed & before)
        for member in gained
        for uri in member_uris(cls, member)
    }
    return (
        guessing | inherited_callee | (_pointing_to(index, resource_id, named) if named else set())
    )


def _typed_through(
    index: ProjectIndex, resource_id: str, files: set[str], targets: set[str]
) -> set[str]:
    """The files pointing to a variable or function of ``files`` whose type (its
    ``usesType`` edge: the class it is made by, or returns) is one of ``targets``, the
    names a refresh changes the meaning of: what ``apps.get_model`` or
    ``make_client().get`` there reaches changes with it, one step further."""
    typed = {n.uri for n in _typed_in(index, resource_id, files, targets)}
    if not typed:
        return set()
    return _pointing_to(index, resource_id, _with_aliases(index, resource_id, typed))


def _typed_in(
    index: ProjectIndex, resource_id: str, files: set[str], classes: set[str]
) -> list[UKONode]:
    """The module variables and functions of ``files`` whose ``usesType`` edge is to one of
    ``classes`` (made by calling it, or returning it)."""
    return [
        n
        for n in index.nodes.nodes_in_files(
            resource_id, files, [*TYPED_VALUE_TYPES, *PYTHON_CALLABLE_TYPES]
        )
        if any(p == USES_TYPE and t in classes for p, t in n.edges)
    ]


def _retyped(
    index: ProjectIndex, resource_id: str, now: Sequence[UKONode], before: set[str]
) -> set[str]:
    """The files pointing to a Python module variable of ``now`` that may be made by
    calling another class than before (its statement changed, and one of them calls):
    ``apps.get_model`` there was the old class's member (``USES_TYPE``); to a class's
    attribute whose class changed (``INSTANCE_OF``: ``client.session.get``); or to a
    property or function whose return annotation changed: ``make_client().get`` there
    was the old class's.
    Either also when the file's imports changed: the same ``Client`` may be another
    class now (``from a import Client`` became ``from b import Client``)."""
    values = {n.uri: n for n in now if n.uko_type in TYPED_VALUE_TYPES and n.uri in before}
    callables = {n.uri: n for n in now if n.uko_type in PYTHON_CALLABLE_TYPES and n.uri in before}
    if not values and not callables:
        return set()
    paths = {n.path for n in [*values.values(), *callables.values()]}
    stored_imports = index.nodes.nodes_in_files(resource_id, paths, _IMPORT_TYPES)
    reimported = {path for path, *_ in _imports(now, paths) ^ _imports(stored_imports, paths)}
    changed = set()
    for n in index.nodes.nodes_at(resource_id, values.keys() | callables.keys()):
        current = values.get(n.uri) or callables[n.uri]  # ``n``: the stored version
        if current.uko_type == T_VARIABLE:
            # The statement, ``apps = Apps()``: a call, then or now, or a class under
            # another name (``ALIAS``).
            was, is_ = n.properties.get("signature", ""), current.properties["signature"]
            typed = "(" in was + is_ or ALIAS in n.properties or ALIAS in current.properties
        elif current.uko_type == T_ATTRIBUTE:  # a class's attribute: the class it says
            was = n.properties.get(INSTANCE_OF, "")
            is_ = current.properties.get(INSTANCE_OF, "")
            typed = bool(was or is_)
        else:  # the return annotation, or the class its ``return`` statements give
            was, is_ = _return_of(n), _return_of(current)
            typed = bool(was or is_)
        if typed and (was != is_ or n.path in reimported):
            changed.add(n.uri)
    if not changed:
        return set()
    return _pointing_to(index, resource_id, _with_aliases(index, resource_id, changed))


def _with_aliases(index: ProjectIndex, resource_id: str, uris: set[str]) -> set[str]:
    """``uris`` and the module variables naming one of them under another name, one
    naming the next up to ``ALIAS_DEPTH`` (``Matrix = MutableMatrix`` for
    ``MutableMatrix``): what their names reach changes with it."""
    found, frontier = set(uris), set(uris)
    for _ in range(ALIAS_DEPTH):
        files = _pointing_to(index, resource_id, frontier)
        if not files:
            break
        frontier = {
            n.uri
            for n in index.nodes.nodes_in_files(resource_id, files, [T_VARIABLE])
            if is_alias(n) and any(p == USES_TYPE and t in frontier for p, t in n.edges)
        } - found
        if not frontier:
            break
        found |= frontier
    return found


def _return_of(node: UKONode) -> str:
    """What a Python function says it returns: its return annotation, or the class its
    ``return`` statements give (``RETURNS``)."""
    properties = node.properties
    return properties.get("return_type") or properties.get(RETURNS, "")


#: A Python file's import statements (re-exporting or not).
_IMPORT_TYPES = (T_IMPORT, PY_REEXPORT)


def _imports(nodes: Iterable[UKONode], paths: set[str]) -> set[tuple[str, str, str]]:
    """``(file, qualified name, statement)`` of the import nodes among ``nodes`` in
    ``paths``."""
    return {
        (n.path, n.qualname, n.name)
        for n in nodes
        if n.uko_type in _IMPORT_TYPES and n.path in paths
    }


def _answering_through(
    nodes: Iterable[UKONode], exports: Iterable[UKONode], keys: set[str]
) -> dict[str, set[str]]:
    """``key -> URIs`` of the nodes answering each of ``keys``, itself or through the
    ``export … from`` nodes ``exports``, as the resolver counts them (an
    implementation's overload signatures do not answer beside it)."""
    table: dict[str, set[str]] = {}
    signatures: set[str] = set()
    for node in nodes:
        if answers_beside_none(node):
            signatures.add(node.uri)
        for key in symbol_keys(node):
            table.setdefault(key, set()).add(node.uri)
    through = ReExports(table, exports)
    found: dict[str, set[str]] = {}
    for key in keys:
        uris = table.get(key) or through.follow(key)
        if uris:
            found[key] = without_signatures(uris, signatures)
    return found


def _answering(nodes: Iterable[UKONode], keys: set[str]) -> dict[str, set[str]]:
    """``key -> URIs`` of the nodes answering each of ``keys``, as the resolver counts
    them (an implementation's overload signatures do not answer beside it)."""
    return _answering_through(nodes, (), keys)


def _answering_in_crates(
    nodes: Iterable[UKONode], keys: set[str]
) -> dict[tuple[str, str | None], set[str]]:
    """``(key, crate) -> URIs``: :func:`_answering` among the Rust nodes of each crate
    (:func:`resolve.rust_crate`), as the resolver counts them for a Rust file."""
    by_crate: dict[str | None, list[UKONode]] = {}
    for node in nodes:
        if node.path.endswith(".rs"):
            by_crate.setdefault(rust_crate(node.path), []).append(node)
    return {
        (key, crate): uris
        for crate, members in by_crate.items()
        for key, uris in _answering(members, keys).items()
    }


def _pointing_to(index: ProjectIndex, resource_id: str, targets: set[str]) -> set[str]:
    """The files with a current node that has an edge to one of ``targets``: looked up in
    the graph's index when it holds every node of the resource, else by a scan."""
    graph = index.graph
    lookup = getattr(graph, "subjects_pointing_to", None)
    if (
        lookup is not None
        and graph.has_resource(resource_id)
        and resource_id not in index.nodes.gaps("graph")
    ):
        return index.nodes.paths_of(resource_id, lookup(resource_id, targets))
    return index.nodes.paths_pointing_to(resource_id, targets)
