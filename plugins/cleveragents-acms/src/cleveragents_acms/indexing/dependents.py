"""Unchanged files a refresh must analyse again, because what they name changed.

An analyzer sees one file; the indexer resolves the ``symbol:`` names it leaves
against every node of the resource. So a file whose text did not change can
still come out differently from a cold index of the same files:

* its edges point at a node the refresh retires (a definition removed, renamed
  or moved, a file deleted), where a cold index leaves the name unresolved or
  finds its new home;
* it names, unresolved, what the refresh adds (the caller saved before the
  callee): a cold index resolves it;
* it is a Python module below a folder whose ``__init__.py`` came or went: its
  dotted name, and so what its relative imports name, changed.

Analysing those files again (their nodes are then revised only where their
edges changed) leaves the edges a cold index gives, but for one case: a name
that resolved to one definition stays resolved when a refresh adds a second
one, where a cold index leaves it ambiguous.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

from cleveragents_acms.indexing.resolve import symbol_keys

if TYPE_CHECKING:
    from cleveragents.models.uko import UKONode
    from cleveragents_acms.indexing.analysis import FileAnalysis
    from cleveragents_acms.indexing.project_index import ProjectIndex
    from cleveragents_acms.indexing.store import NodeStore

__all__ = ["dependent_files"]

_SYMBOL = "symbol:"


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
    found = _package_members(added | set(removed), present)
    before = set(nodes.current_fingerprints(resource_id, touched))
    now = [n for a in changed for n in a.result.nodes]
    gone = before - {n.uri for n in now}
    targets = set(gone) | {
        _SYMBOL + key for key in _new_names(nodes, resource_id, now, before, touched)
    }
    if targets:
        found |= _pointing_to(index, resource_id, targets)
    return (found - touched) & set(present)


def _package_members(paths: Iterable[str], present: Sequence[str]) -> set[str]:
    """The Python files below each folder whose ``__init__.py`` is among ``paths``."""
    packages = {
        path.rpartition("/")[0]
        for path in paths
        if path == "__init__.py" or path.endswith("/__init__.py")
    }
    if not packages:
        return set()
    return {
        path
        for path in present
        if path.endswith(".py")
        and any(not folder or path.startswith(folder + "/") for folder in packages)
    }


def _new_names(
    nodes: NodeStore, resource_id: str, now: Sequence[UKONode], before: set[str], touched: set[str]
) -> set[str]:
    """The names only one node answers to now, a node new to the index, where no other
    node answered them before: an unresolved reference to one of them resolves now."""
    counts = Counter(key for node in now if node.uri not in before for key in symbol_keys(node))
    candidates = {key for key, count in counts.items() if count == 1}
    if not candidates:
        return set()
    # Other nodes answering the same names: stored ones (of untouched files), and the
    # nodes of the changed files that are not new.
    short = {key.rsplit(".", 1)[-1] for key in candidates}
    others = [n for n in nodes.nodes_named([resource_id], short) if n.path not in touched]
    others += [n for n in now if n.uri in before]
    taken = {key for node in others for key in symbol_keys(node)}
    return candidates - taken


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
