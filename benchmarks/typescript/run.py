"""TypeScript and JavaScript trees: a cold index, and what their names resolve to.

    .venv/bin/python benchmarks/typescript/run.py [--cache DIR] [--json]

Two source distributions from PyPI that no one here wrote, fetched once through PyPI's
JSON API as every benchmark of trees does (``benchmarks/sdist_trees.py``), into the
cache folder (default ~/.cache/cleveragents-bench/typescript):

* bokeh 3.10.2: bokehjs as 782 ``.d.ts`` declaration files (``export declare class``),
  whose folders re-export one another (``models/index.d.ts``: ``export *`` from 32
  folders that do the same);
* jupyterlab 4.6.6: its ``galata`` test package and the tests that import it by its
  npm name (``import { galata } from "@jupyterlab/galata"``).

For each tree it measures, in one run:

* a peer: every script file read and parsed by its tree-sitter grammar on every core,
  nothing kept (``peer_parse_only_s``); the cold index is reported as a multiple of it;
* a cold index through the command as a user runs it (``cleveragents index ROOT
  --json``, into a fresh home): seconds, nodes and the seconds of its phases;
* the script files and manifests (``package.json``, ``tsconfig.json``) analysed and
  resolved in this process (``resolution``): the seconds ``resolve_edges`` takes, the
  edges of script nodes resolved, those resolved through another module's exports or a
  package's name (``through_exports``: no node answers the name itself), those left
  unresolved, and of these the ones naming a package of the tree.
"""

from __future__ import annotations

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

SDISTS = (("bokeh", "3.10.2"), ("jupyterlab", "4.6.6"))
_TYPESCRIPT = (".ts", ".tsx", ".mts", ".cts")
_JAVASCRIPT = (".js", ".jsx", ".mjs", ".cjs")


def _scripts(root: Path) -> list[Path]:
    """The script files of ``root`` the indexer takes (``.gitignore``, skipped folders)."""
    from cleveragents_acms.analyzers.files import discover

    found = discover(root)
    return [Path(f.path) for f in found.files if f.relative.endswith(_TYPESCRIPT + _JAVASCRIPT)]


def _parse(path: str) -> None:
    kind = (
        "tsx"
        if path.endswith(".tsx")
        else "typescript"
        if path.endswith(_TYPESCRIPT)
        else "javascript"
    )
    parse_file(kind, path)


def parse_only_seconds(files: list[Path]) -> float:
    """The peer: every script file read and parsed on every core, nothing kept."""
    return parsed_on_every_core(_parse, files)


def resolution(root: Path, files: list[Path]) -> dict[str, Any]:
    """The tree's script files and manifests analysed and resolved here."""
    from cleveragents_acms.analyzers.packages import is_script_manifest
    from cleveragents_acms.analyzers.text import GenericTextAnalyzer
    from cleveragents_acms.analyzers.treesitter import JavaScriptAnalyzer, TypeScriptAnalyzer
    from cleveragents_acms.indexing.resolve import SCRIPT_EXPORT, symbol_keys

    typescript, javascript, text = TypeScriptAnalyzer(), JavaScriptAnalyzer(), GenericTextAnalyzer()
    manifests = [
        p
        for p in root.rglob("*.json")
        if is_script_manifest(p.name) and "node_modules" not in p.parts
    ]

    def analyzer_for(path: Path) -> Any:
        if path.suffix == ".json":
            return text
        return typescript if path.suffix in _TYPESCRIPT else javascript

    nodes = analysed(root, [*files, *manifests], analyzer_for)
    keys = {key for node in nodes for key in symbol_keys(node)}
    packages = {n.properties["exported_as"] for n in nodes if n.properties.get("exported_as")}
    before = {n.uri: list(n.edges) for n in nodes}
    resolved, seconds = timed_resolution(nodes)
    scripts = [n for n in nodes if n.path.endswith(_TYPESCRIPT + _JAVASCRIPT)]
    resolved_here = through = unresolved = naming = 0
    for node in scripts:
        for (_, was), (_, now) in zip(before[node.uri], node.edges, strict=True):
            if now.startswith("symbol:"):
                unresolved += 1
                name = now[len("symbol:") :]
                naming += any(name == p or name.startswith(p + ".") for p in packages)
            elif was != now and was.startswith("symbol:"):
                resolved_here += 1
                through += was[len("symbol:") :] not in keys
    return {
        "script_files": len(files),
        "manifests": len(manifests),
        "nodes": len(nodes),
        "exports": sum(n.uko_type == SCRIPT_EXPORT for n in nodes),
        "resolve_edges_s": round(seconds, 2),
        "resolved_all": resolved,
        "resolved": resolved_here,
        "through_exports": through,
        "unresolved": unresolved,
        "unresolved_naming_a_package": naming,
    }


def main() -> None:
    args = arguments(__doc__)
    results = measure_trees(
        SDISTS,
        args.cache / "typescript",
        lambda tree: parse_only_seconds(_scripts(tree)),
        lambda tree: resolution(tree, _scripts(tree)),
    )
    report(results, args.json, _line)


def _line(cold: dict[str, Any], names: dict[str, Any]) -> str:
    return (
        f"cold index {cold['seconds']} s ({cold['vs_parse_only']}x the parse-only peer); "
        f"{names['resolved']} script edges resolved in {names['resolve_edges_s']} s "
        f"({names['through_exports']} through exports or a package's name), "
        f"{names['unresolved']} unresolved ({names['unresolved_naming_a_package']} naming "
        f"a package of the tree)"
    )


if __name__ == "__main__":
    main()
