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

import argparse
import functools
import json
import os
import subprocess
import sys
import tarfile
import tempfile
import time
import urllib.parse
import urllib.request
from collections.abc import Callable, Iterable
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

SDISTS = (("orjson", "3.13.0"), ("ruff", "0.17.6"))
RESOURCE_ID = "01JBENCH000000000000000000"


def fetch(cache: Path, name: str, version: str) -> Path:
    """The unpacked sdist of ``name`` ``version`` (downloaded once)."""
    tree = cache / f"{name}-{version}"
    if (tree / ".complete").exists():
        return tree
    api = f"https://pypi.org/pypi/{name}/json"
    with urllib.request.urlopen(api, timeout=120) as response:
        project = json.load(response)
    files = project.get("releases", {}).get(version) or (
        project["urls"] if project["info"]["version"] == version else []
    )
    sdist = next((u for u in files if u["packagetype"] == "sdist"), None)
    if sdist is None:
        raise SystemExit(f"no sdist of {name} {version} on PyPI")
    archive = cache / sdist["filename"]
    cache.mkdir(parents=True, exist_ok=True)
    urllib.request.urlretrieve(urllib.parse.urljoin(api, sdist["url"]), archive)
    with tarfile.open(archive) as tar:
        top = tar.getnames()[0].split("/")[0]
        tar.extractall(cache, filter="data")
    if (cache / top) != tree:
        (cache / top).rename(tree)
    (tree / ".complete").write_text(version)
    return tree


@functools.cache
def _rust_parser() -> Any:
    import tree_sitter

    from cleveragents_acms.analyzers.treesitter import grammar

    return tree_sitter.Parser(grammar("rust"))


def _parse(path: str) -> None:
    _rust_parser().parse(Path(path).read_bytes())


def parse_only_seconds(root: Path) -> float:
    """The peer: every ``.rs`` file read and parsed on every core, nothing kept."""
    files = [str(p) for p in sorted(root.rglob("*.rs"))]
    start = time.perf_counter()
    with ProcessPoolExecutor(os.cpu_count() or 1) as pool:
        list(pool.map(_parse, files, chunksize=32))
    return time.perf_counter() - start


def cold_index(root: Path, project: str) -> dict[str, Any]:
    """``cleveragents index ROOT --json`` into a fresh home, as a user runs it."""
    command = Path(sys.executable).with_name("cleveragents")
    with tempfile.TemporaryDirectory() as home:
        env = {**os.environ, "CLEVERAGENTS_HOME": home}
        started = time.perf_counter()
        done = subprocess.run(
            [str(command), "index", str(root), "--project", project, "--json"],
            env=env,
            capture_output=True,
            text=True,
            check=True,
        )
        seconds = time.perf_counter() - started
    result = json.loads(done.stdout)
    return {
        "seconds": round(seconds, 2),
        "files": result["index"]["file_count"],
        "nodes": result["index"]["node_count"],
        "phases_s": {k: round(v, 3) for k, v in result["run"]["phases"].items()},
    }


def resolution(root: Path) -> dict[str, Any]:
    """The tree's Rust files analysed and resolved here; what the edges reach."""
    from cleveragents_acms.analyzers.treesitter import RustAnalyzer
    from cleveragents_acms.indexing.resolve import resolve_edges, rust_crate, rust_crate_name

    analyzer, nodes = RustAnalyzer(), []
    for path in sorted(root.rglob("*.rs")):
        relative = path.relative_to(root).as_posix()
        text = path.read_text(encoding="utf-8", errors="replace")
        found = analyzer.analyze(path, text, resource_id=RESOURCE_ID, relative_path=relative)
        nodes.extend(found.nodes)
    before = {n.uri: list(n.edges) for n in nodes}
    started = time.perf_counter()
    resolved = resolve_edges(nodes)
    seconds = time.perf_counter() - started
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


def arguments(doc: str) -> argparse.Namespace:
    """``--cache DIR`` and ``--json``, as this benchmark and the TypeScript one take them."""
    parser = argparse.ArgumentParser(description=doc.split("\n")[0])
    parser.add_argument("--cache", type=Path, default=Path.home() / ".cache/cleveragents-bench")
    parser.add_argument("--json", action="store_true", help="print the results as JSON")
    return parser.parse_args()


def measure_trees(
    sdists: Iterable[tuple[str, str]],
    cache: Path,
    peer: Callable[[Path], float],
    resolution: Callable[[Path], dict[str, Any]],
) -> dict[str, Any]:
    """For each sdist, fetched into ``cache``: ``peer``'s seconds, a cold index through the
    command (and its multiple of the peer) and what ``resolution`` finds."""
    results: dict[str, Any] = {"load_average_at_start": list(os.getloadavg())}
    for name, version in sdists:
        tree = fetch(cache, name, version)
        seconds = peer(tree)
        cold = cold_index(tree, name)
        cold["vs_parse_only"] = round(cold["seconds"] / seconds, 1)
        results[f"{name}-{version}"] = {
            "peer_parse_only_s": round(seconds, 2),
            "cold": cold,
            "resolution": resolution(tree),
        }
    return results


def report(
    results: dict[str, Any], as_json: bool, line: Callable[[dict[str, Any], dict[str, Any]], str]
) -> None:
    """The results as JSON, or a line for each tree from its cold index and resolution."""
    if as_json:
        print(json.dumps(results, indent=2))
        return
    for tree, found in results.items():
        if tree != "load_average_at_start":
            print(f"{tree}: {line(found['cold'], found['resolution'])}")


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
