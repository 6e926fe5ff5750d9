"""Rust trees of several crates: how a cold index and the resolution of paths fare.

    .venv/bin/python benchmarks/rust/run.py [--cache DIR] [--json]

Two source distributions from PyPI that no one here wrote, fetched once through PyPI's
JSON API (their build backend, maturin, is not needed: nothing is built) and unpacked
into the cache folder (default ~/.cache/cleveragents-bench/rust):

* orjson 3.13.0: 1,003 ``.rs`` files in 23 crates, 22 of them vendored under
  ``include/cargo/`` (every crate's root is ``crate``, and their ``use super::*`` globs
  branch at every module);
* ruff 0.17.6: a workspace of 37 crates under ``crates/``, which name one another by
  their crate names (``use ruff_python_ast::Expr``).

For each tree it measures, in one run:

* a peer: every ``.rs`` file read and parsed by the tree-sitter Rust grammar on every
  core, nothing kept (``peer_parse_only_s``); the cold index is reported as a multiple
  of it (``cold.vs_parse_only``);
* a cold index through the command as a user runs it (``cleveragents index ROOT
  --json``, into a fresh home): seconds, nodes and the seconds of its phases;
* the Rust files analysed and their paths resolved in this process
  (``resolution``): the seconds ``resolve_edges`` takes, the edges resolved, those that
  reach another crate (``cross_crate``: by its name, or through a re-export or glob
  that names it), and the edges left unresolved that name a crate of the tree
  (``unresolved_naming_a_crate``).
"""

from __future__ import annotations

import functools
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from sdist_trees import (
    RESOURCE_ID,
    analysed,
    arguments,
    measure_trees,
    parse_file,
    parsed_on_every_core,
    report,
    timed_resolution,
)

SDISTS = (("orjson", "3.13.0"), ("ruff", "0.17.6"))


def parse_only_seconds(root: Path) -> float:
    """The peer: every ``.rs`` file read and parsed on every core, nothing kept."""
    return parsed_on_every_core(functools.partial(parse_file, "rust"), sorted(root.rglob("*.rs")))


def resolution(root: Path) -> dict[str, Any]:
    """The tree's Rust files analysed and resolved here; what the edges reach."""
    from cleveragents_acms.analyzers.treesitter import RustAnalyzer
    from cleveragents_acms.indexing.resolve import rust_crate, rust_crate_name

    analyzer = RustAnalyzer()
    nodes = analysed(root, sorted(root.rglob("*.rs")), lambda _: analyzer)
    before = {n.uri: list(n.edges) for n in nodes}
    resolved, seconds = timed_resolution(nodes)
    names = {rust_crate_name(c) for n in nodes if (c := rust_crate(n.path))} - {None}
    crossing = unresolved = naming = 0
    for node in nodes:
        for (_, was), (_, now) in zip(before[node.uri], node.edges, strict=True):
            if now.startswith("symbol:"):
                unresolved += 1
                naming += now[len("symbol:") :].split(".")[0] in names
            elif was != now and was.startswith("symbol:"):
                target = now.split(f"/r/{RESOURCE_ID}/", 1)[1].split("#")[0]
                crossing += rust_crate(node.path) != rust_crate(target)
    return {
        "rust_files": len({n.path for n in nodes}),
        "nodes": len(nodes),
        "resolve_edges_s": round(seconds, 2),
        "resolved": resolved,
        "cross_crate": crossing,
        "unresolved": unresolved,
        "unresolved_naming_a_crate": naming,
    }


def _line(cold: dict[str, Any], paths: dict[str, Any]) -> str:
    return (
        f"cold index {cold['seconds']} s ({cold['vs_parse_only']}x the parse-only peer), "
        f"resolve phase {cold['phases_s'].get('resolve')} s; {paths['resolved']} edges "
        f"resolved in {paths['resolve_edges_s']} s ({paths['cross_crate']} reach another "
        f"crate), {paths['unresolved_naming_a_crate']} unresolved naming a crate of the tree"
    )


def main() -> None:
    args = arguments(__doc__)
    results = measure_trees(SDISTS, args.cache / "rust", parse_only_seconds, resolution)
    report(results, args.json, _line)


if __name__ == "__main__":
    main()
