"""Java trees: a cold index, and what their names resolve to.

    .venv/bin/python benchmarks/java/run.py [--cache DIR] [--json]

A source distribution from PyPI that no one here wrote, fetched once through PyPI's JSON
API as every benchmark of trees does (``benchmarks/sdist_trees.py``), into the cache
folder (default ~/.cache/cleveragents-bench/java):

* jpype1 1.7.1: the Java half of a Python-Java bridge, 133 ``.java`` files in the
  packages ``org.jpype.*`` and the test harness ``jpype.*``, whose classes extend and
  call one another across files without imports (same package), through nested
  classes (``TypeFactoryHarness.BaseResource``) and under names several packages
  declare (``A``, ``B``, ``E`` in ``jpype.mro`` and ``jpype.override``).

For the tree it measures, in one run:

* a peer: every ``.java`` file read and parsed by the tree-sitter Java grammar on every
  core, nothing kept (``peer_parse_only_s``); the cold index is reported as a multiple
  of it;
* a cold index through the command as a user runs it (``cleveragents index ROOT
  --json``, into a fresh home): seconds, nodes and the seconds of its phases;
* the Java files analysed and resolved in this process (``resolution``): the seconds
  ``resolve_edges`` takes, the edges it resolved (``resolved``, names across files), the
  edges that reach a node in all (``to_nodes``, the analyzer's own too; ``bases``: of
  them, a class's base classes and interfaces), those left unresolved, and of these the
  ones naming a package of the tree (``unresolved_naming_a_package``).
"""

from __future__ import annotations

import functools
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from sdist_trees import (
    analysed,
    arguments,
    measure_trees,
    parse_file,
    parsed_on_every_core,
    report,
    timed_resolution,
)

SDISTS = (("jpype1", "1.7.1"),)
_BASES = ("uko-oo:inheritsFrom", "uko-oo:implements")


def parse_only_seconds(root: Path) -> float:
    """The peer: every ``.java`` file read and parsed on every core, nothing kept."""
    return parsed_on_every_core(functools.partial(parse_file, "java"), sorted(root.rglob("*.java")))


def resolution(root: Path) -> dict[str, Any]:
    """The tree's Java files analysed and resolved here; what the edges reach."""
    from cleveragents_acms.analyzers.treesitter import JavaAnalyzer

    analyzer = JavaAnalyzer()
    nodes = analysed(root, sorted(root.rglob("*.java")), lambda _: analyzer)
    packages = {n.properties["package"] for n in nodes if n.properties.get("package")}
    resolved, seconds = timed_resolution(nodes)
    to_nodes = bases = unresolved = naming = 0
    for node in nodes:
        for predicate, target in node.edges:
            if target.startswith("symbol:"):
                unresolved += 1
                name = target[len("symbol:") :]
                naming += any(name.startswith(p + ".") for p in packages)
            else:
                to_nodes += 1
                bases += predicate in _BASES
    return {
        "java_files": len({n.path for n in nodes}),
        "nodes": len(nodes),
        "resolve_edges_s": round(seconds, 2),
        "resolved": resolved,
        "to_nodes": to_nodes,
        "bases": bases,
        "unresolved": unresolved,
        "unresolved_naming_a_package": naming,
    }


def _line(cold: dict[str, Any], names: dict[str, Any]) -> str:
    return (
        f"cold index {cold['seconds']} s ({cold['vs_parse_only']}x the parse-only peer); "
        f"{names['to_nodes']} edges reach a node ({names['resolved']} resolved across files "
        f"in {names['resolve_edges_s']} s, {names['bases']} to base classes and "
        f"interfaces), {names['unresolved']} "
        f"unresolved ({names['unresolved_naming_a_package']} naming a package of the tree)"
    )


def main() -> None:
    args = arguments(__doc__)
    results = measure_trees(SDISTS, args.cache / "java", parse_only_seconds, resolution)
    report(results, args.json, _line)


if __name__ == "__main__":
    main()
