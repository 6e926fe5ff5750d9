"""Refresh benchmark: a tree moved from one release of a package to the next, refreshed,
beside a cold index of the same tree in the same run.

A ``git pull`` or a dependency bump changes many files at once. Each step copies the
next release over the tree (files that did not change keep their time stamps), refreshes
the index, then indexes the same tree cold into a home of its own. It reports both times,
their ratio and the refresh's phases, and checks that the refreshed index holds the same
current nodes, names and edges as the cold one. Each sequence ends back at its first
release (a downgrade: files, modules and definitions go).

    python benchmarks/refresh/run.py [--json] [--packages flask,httpx] [--cache DIR]

Releases are wheels fetched once with ``pip download`` (nothing is built) into
``~/.cache/cleveragents-bench/refresh``. Exits with 1 when a refreshed index differs from
the cold one.
"""

from __future__ import annotations

import argparse
import filecmp
import functools
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import zipfile
from pathlib import Path
from typing import Any

#: Package -> releases, in the order the tree goes through them (then back to the first).
SEQUENCES: dict[str, tuple[str, ...]] = {
    "flask": ("2.2.5", "2.3.3", "3.0.3"),
    "werkzeug": ("2.3.8", "3.0.4"),
    "httpx": ("0.25.2", "0.27.2"),
    "rich": ("13.3.5", "13.9.4"),
    "sqlalchemy": ("2.0.0", "2.0.20", "2.0.36"),
}
RESOURCE_ID = "01JBENCH000000000000000000"
PROJECT = "refresh"


def fetch(cache: Path, package: str, version: str) -> Path:
    """The unpacked wheel of ``package`` ``version``, without its ``.dist-info``."""
    release = cache / "releases" / f"{package}-{version}"
    if (release / ".complete").exists():
        return release
    downloads = cache / "downloads"
    downloads.mkdir(parents=True, exist_ok=True)
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "download",
            "--quiet",
            "--no-deps",
            "--only-binary",
            ":all:",
            "-d",
            str(downloads),
            f"{package}=={version}",
        ],
        check=True,
    )
    prefix = f"{package.replace('-', '_')}-{version}-".lower()
    wheel = next(w for w in downloads.glob("*.whl") if w.name.lower().startswith(prefix))
    shutil.rmtree(release, ignore_errors=True)
    with zipfile.ZipFile(wheel) as zipped:
        for name in zipped.namelist():
            if ".dist-info/" not in name:
                zipped.extract(name, release)
    (release / ".complete").write_text(version)
    return release


def sync(release: Path, tree: Path) -> dict[str, int]:
    """Make ``tree`` hold what ``release`` holds, writing only the files that differ."""
    want = {
        p.relative_to(release) for p in release.rglob("*") if p.is_file() and p.name != ".complete"
    }
    have = {p.relative_to(tree) for p in tree.rglob("*") if p.is_file()}
    counts = {"added": 0, "changed": 0, "removed": 0}
    for relative in have - want:
        (tree / relative).unlink()
        counts["removed"] += 1
    for relative in want:
        target = tree / relative
        if relative in have:
            if filecmp.cmp(release / relative, target, shallow=False):
                continue
            counts["changed"] += 1
        else:
            counts["added"] += 1
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(release / relative, target)
    return counts


@functools.cache
def _registry() -> Any:
    """The installed plugins' registry (loaded once for every home)."""
    from cleveragents.plugins import PluginHost

    return PluginHost.load([]).registry


class Home:
    """An indexing service with a home folder of its own."""

    def __init__(self, folder: Path) -> None:
        from cleveragents.config import load_config
        from cleveragents.storage.database import Database
        from cleveragents_acms.indexing.service import RepoIndexingService

        os.environ["CLEVERAGENTS_HOME"] = str(folder)
        self.folder = folder
        self.database = Database.for_sqlite_file(folder / "cleveragents.db")
        self.service = RepoIndexingService(self.database, _registry(), load_config(cwd=folder))

    def index(self, tree: Path, include: tuple[str, ...] = ()) -> tuple[float, Any]:
        """Seconds and the run of indexing ``tree`` (a refresh when indexed before)."""
        os.environ["CLEVERAGENTS_HOME"] = str(self.folder)
        started = time.perf_counter()
        result = self.service.index_resource(
            RESOURCE_ID, tree, project=PROJECT, include_globs=include
        )
        return time.perf_counter() - started, result.run

    def current(self) -> dict[str, Any]:
        """Every current node's name and edges."""
        from cleveragents_acms.indexing.project_index import ProjectIndex

        os.environ["CLEVERAGENTS_HOME"] = str(self.folder)
        index = ProjectIndex.open(PROJECT, self.service.registry, self.service.config)
        try:
            return {
                n.uri: (n.name, sorted(t for _, t in n.edges))
                for n in index.nodes.iter_current([RESOURCE_ID])
            }
        finally:
            index.close()

    def close(self) -> None:
        self.database.dispose()


def differences(refreshed: dict[str, Any], cold: dict[str, Any], limit: int = 10) -> list[str]:
    """What the refreshed index holds otherwise than the cold one, node by node."""
    found = []
    for uri in sorted(refreshed.keys() | cold.keys()):
        mine, theirs = refreshed.get(uri), cold.get(uri)
        if mine == theirs:
            continue
        if mine is None or theirs is None:
            found.append(f"{uri}: only in the {'cold' if mine is None else 'refreshed'} index")
        else:
            extra, missing = set(mine[1]) - set(theirs[1]), set(theirs[1]) - set(mine[1])
            found.append(f"{uri}: refreshed only {sorted(extra)}, cold only {sorted(missing)}")
    return found[:limit] + ([f"... {len(found) - limit} more"] if len(found) > limit else [])


def _step(
    package: str,
    to: str,
    files: dict[str, int],
    run: Any,
    refresh_s: float,
    cold_s: float,
    diff: list[str],
) -> dict[str, Any]:
    """One step's results: the refresh's run beside the cold index's time."""
    return {
        "package": package,
        "to": to,
        "files": files,
        "analysed": run.files_analyzed,
        "dependents": run.files_dependent,
        "nodes": {
            "added": run.nodes_added,
            "revised": run.nodes_revised,
            "retired": run.nodes_retired,
            "unchanged": run.nodes_unchanged,
        },
        "refresh_s": round(refresh_s, 2),
        "cold_s": round(cold_s, 2),
        "refresh_vs_cold": round(refresh_s / cold_s, 2),
        "phases_s": {k: round(v, 2) for k, v in run.phases.items()},
        "same_as_cold": not diff,
        "differences": diff,
    }


def run_sequence(cache: Path, work: Path, package: str, versions: tuple[str, ...]) -> list[dict]:
    releases = [fetch(cache, package, v) for v in versions]
    tree = work / package / "tree"
    tree.mkdir(parents=True)
    live = Home(work / package / "home")
    steps = []
    try:
        sync(releases[0], tree)
        seconds, run = live.index(tree)
        print(
            f"{package} {versions[0]}: cold {seconds:.1f}s, {run.files_analyzed} files",
            file=sys.stderr,
        )
        back = [(versions[0], releases[0])]
        for version, release in [*zip(versions[1:], releases[1:], strict=True), *back]:
            files = sync(release, tree)
            refresh_s, run = live.index(tree)
            refreshed = live.current()
            cold_home = Home(work / package / f"cold-{len(steps)}")
            try:
                cold_s, _ = cold_home.index(tree)
                cold = cold_home.current()
            finally:
                cold_home.close()
                shutil.rmtree(cold_home.folder, ignore_errors=True)
            diff = differences(refreshed, cold)
            step = _step(package, version, files, run, refresh_s, cold_s, diff)
            steps.append(step)
            print(
                f"{package} -> {version}: {sum(files.values())} files changed, "
                f"{run.files_analyzed} analysed; refresh {refresh_s:.1f}s, cold {cold_s:.1f}s "
                f"({step['refresh_vs_cold']}x); {'same as cold' if not diff else 'DIFFERS'}",
                file=sys.stderr,
            )
    finally:
        live.close()
    return steps


def report(steps: list[dict], *, as_json: bool) -> None:
    """Print the steps and their totals; exit with 1 when one differs from its cold index."""
    refresh = sum(s["refresh_s"] for s in steps)
    cold = sum(s["cold_s"] for s in steps)
    summary = {
        "steps": steps,
        "refresh_s": round(refresh, 2),
        "cold_s": round(cold, 2),
        "refresh_vs_cold": round(refresh / cold, 2) if cold else None,
        "all_same_as_cold": all(s["same_as_cold"] for s in steps),
        "load_average": os.getloadavg(),
    }
    if as_json:
        print(json.dumps(summary, indent=2))
    else:
        header = ("step", "files", "analysed", "refresh", "cold", "ratio")
        print(
            f"{header[0]:<28} {header[1]:>6} {header[2]:>8} {header[3]:>8} {header[4]:>7} "
            f"{header[5]:>6}  same"
        )
        for s in steps:
            print(
                f"{s['package'] + ' -> ' + s['to']:<28} {sum(s['files'].values()):>6} "
                f"{s['analysed']:>8} {s['refresh_s']:>7.1f}s {s['cold_s']:>6.1f}s "
                f"{s['refresh_vs_cold']:>6}  {'yes' if s['same_as_cold'] else 'NO'}"
            )
        print(
            f"all steps: refresh {refresh:.1f}s, cold {cold:.1f}s ({summary['refresh_vs_cold']}x)"
        )
        for s in steps:
            for line in s["differences"]:
                print(f"  {s['package']} -> {s['to']}: {line}")
    sys.exit(0 if summary["all_same_as_cold"] else 1)


def run_history(repository: Path, work: Path, commits: int, include: tuple[str, ...]) -> list:
    """Each of the last ``commits`` commits of ``repository`` (first parents, oldest
    first) checked out in turn, refreshed and compared with a cold index."""
    tree = work / "history"
    subprocess.run(["git", "clone", "--quiet", str(repository), str(tree)], check=True)
    listed = subprocess.run(
        ["git", "-C", str(tree), "rev-list", "--first-parent", f"--max-count={commits}", "HEAD"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()[::-1]
    live = Home(work / "history-home")
    steps = []
    try:
        for number, commit in enumerate(listed):
            subprocess.run(["git", "-C", str(tree), "checkout", "--quiet", commit], check=True)
            refresh_s, run = live.index(tree, include)
            refreshed = live.current()
            cold_home = Home(work / f"history-cold-{number}")
            try:
                cold_s, _ = cold_home.index(tree, include)
                diff = differences(refreshed, cold_home.current())
            finally:
                cold_home.close()
                shutil.rmtree(cold_home.folder, ignore_errors=True)
            if number:  # the first is the history's cold index
                steps.append(_step(repository.name, commit[:10], {}, run, refresh_s, cold_s, diff))
            print(
                f"{commit[:10]} ({number + 1}/{len(listed)}): {run.files_analyzed} analysed, "
                f"refresh {refresh_s:.1f}s; {'same as cold' if not diff else 'DIFFERS'}",
                file=sys.stderr,
            )
    finally:
        live.close()
    return steps


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--json", action="store_true", help="print the results as JSON")
    parser.add_argument("--packages", default=",".join(SEQUENCES), help="comma-separated")
    parser.add_argument(
        "--cache", type=Path, default=Path.home() / ".cache" / "cleveragents-bench" / "refresh"
    )
    parser.add_argument(
        "--git",
        type=Path,
        help="instead of releases, the history of this git repository, commit by commit",
    )
    parser.add_argument("--commits", type=int, default=50, help="with --git: how many")
    parser.add_argument(
        "--include", default="", help="with --git: comma-separated globs of the files indexed"
    )
    args = parser.parse_args()
    if args.git is not None:
        with tempfile.TemporaryDirectory(prefix="cleveragents-refresh-") as folder:
            include = tuple(g for g in args.include.split(",") if g)
            steps = run_history(args.git.resolve(), Path(folder), args.commits, include)
        report(steps, as_json=args.json)
    packages = [p for p in args.packages.split(",") if p]
    unknown = [p for p in packages if p not in SEQUENCES]
    if unknown:
        parser.error(f"unknown package(s) {', '.join(unknown)}; known: {', '.join(SEQUENCES)}")
    steps: list[dict] = []
    with tempfile.TemporaryDirectory(prefix="cleveragents-refresh-") as folder:
        for package in packages:
            steps += run_sequence(args.cache, Path(folder), package, SEQUENCES[package])
    report(steps, as_json=args.json)


if __name__ == "__main__":
    main()
