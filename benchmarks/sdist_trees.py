"""What the benchmarks of source trees from PyPI share (Rust, TypeScript, Java).

Each fetches source distributions once through PyPI's JSON API (nothing is built),
measures a peer that only parses the tree's files on every core, a cold index through
the command as a user runs it, and what the tree's names resolve to in the process; this
module holds the fetching, the peer's pool, the cold index, the analysis and timed
resolution in the process, and the report.
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
def _parser(grammar: str) -> Any:
    import tree_sitter

    from cleveragents_acms.analyzers.treesitter import grammar as load

    return tree_sitter.Parser(load(grammar))


def parse_file(grammar: str, path: str) -> None:
    """The peers' work on one file: read it and parse it with a tree-sitter ``grammar``
    (``rust``, ``java``, ``typescript`` …), nothing kept."""
    _parser(grammar).parse(Path(path).read_bytes())


def parsed_on_every_core(parse: Callable[[str], None], files: Iterable[Path]) -> float:
    """The peers' seconds: ``parse`` (a module-level function) run on each file, on
    every core, nothing kept."""
    paths = [str(f) for f in files]
    start = time.perf_counter()
    with ProcessPoolExecutor(os.cpu_count() or 1) as pool:
        list(pool.map(parse, paths, chunksize=32))
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


def analysed(root: Path, files: Iterable[Path], analyzer_for: Callable[[Path], Any]) -> list[Any]:
    """The nodes ``analyzer_for(path)`` gives each of ``files`` (below ``root``), in this
    process, as the indexer's workers analyse them."""
    nodes: list[Any] = []
    for path in files:
        relative = path.relative_to(root).as_posix()
        text = path.read_text(encoding="utf-8", errors="replace")
        found = analyzer_for(path).analyze(
            path, text, resource_id=RESOURCE_ID, relative_path=relative
        )
        nodes.extend(found.nodes)
    return nodes


def timed_resolution(nodes: list[Any]) -> tuple[int, float]:
    """``resolve_edges(nodes)`` (in place): the edges it resolved and its seconds."""
    from cleveragents_acms.indexing.resolve import resolve_edges

    started = time.perf_counter()
    resolved = resolve_edges(nodes)
    return resolved, time.perf_counter() - started


def arguments(doc: str) -> argparse.Namespace:
    """``--cache DIR`` and ``--json``, as every benchmark of trees takes them."""
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
