"""Releases to measure on: fetched from PyPI with pip, unpacked and indexed once, cached.

A corpus is ``<pypi_name>-<version>`` (``django-3.0``): the newest patch
release of that version, found by pip itself with the specifier
``"<pypi_name>==<version>.*"`` (``==1.1.*`` matches 1.1.1 but not 1.10).

How a release is fetched, in this order, always with the ordinary pip client
and ``--no-deps`` (nothing is installed, compiled or built):

1. the sdist: ``pip download --no-binary :all: --no-build-isolation``. pip
   still asks the project's build backend for the package metadata
   (``prepare_metadata_for_build_wheel``; for setuptools projects this is
   ``setup.py egg_info`` in the current environment). ``--no-build-isolation``
   keeps pip from installing build requirements, so this step either works
   with what is installed or fails fast (e.g. a project that needs
   ``setuptools_scm`` or ``numpy`` at metadata time);
2. else a wheel for this interpreter: ``--only-binary :all:``;
3. else a wheel for an older CPython on manylinux, for releases whose wheels
   predate this interpreter: ``--only-binary :all: --python-version 3.X
   --platform manylinux2014_x86_64 --implementation cp`` for 3.10 down to 3.6.

The archive is unpacked into ``<cache>/releases/<corpus>/`` (an sdist's top
folder, e.g. ``Django-3.0.14/``, becomes the indexed root) and indexed into
project ``<corpus>`` of the benchmark home ``<cache>/home`` with the same code
as ``cleveragents index PATH --project <corpus>``. Every step is skipped when its
result is already in the cache.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
import tarfile
import time
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = ["Corpus", "CorpusError", "fetch_release", "index_release", "map_gold_path"]

_OLD_PYTHONS = ("3.10", "3.9", "3.8", "3.7", "3.6")
_PIP_TIMEOUT_S = 900
_ERROR_LINE = re.compile(r"^(ERROR: |[A-Za-z_.]*(Error|Exception): )")


class CorpusError(RuntimeError):
    """A release that could not be fetched, unpacked or indexed (reported, then skipped)."""


@dataclass
class Corpus:
    name: str  # django-3.0
    pypi_name: str
    version: str
    root: Path  # the folder that is indexed
    kind: str  # sdist | wheel
    archive: str
    #: why the earlier ways (an sdist first) did not work, when a later one did
    notes: tuple[str, ...] = ()


def log(message: str) -> None:
    print(f"[quality] {message}", file=sys.stderr, flush=True)


def _pip(args: list[str], dest: Path) -> tuple[bool, str]:
    command = [
        sys.executable,
        "-m",
        "pip",
        "download",
        "--no-deps",
        "--quiet",
        "--disable-pip-version-check",
        "-d",
        str(dest),
        *args,
    ]
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=_PIP_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        return False, "pip timed out"
    return done.returncode == 0, _reason(done.stderr or done.stdout)


def _reason(output: str) -> str:
    """The telling line of pip's output: the last exception or ``ERROR:`` line."""
    lines = [line.strip() for line in output.splitlines() if line.strip()]
    for line in reversed(lines):
        if _ERROR_LINE.match(line):
            return line
    return lines[-1] if lines else ""


def _download(spec: str, dest: Path) -> tuple[str, Path, list[str]]:
    attempts: list[tuple[str, list[str]]] = [
        ("sdist", ["--no-binary", ":all:", "--no-build-isolation", spec]),
        ("wheel", ["--only-binary", ":all:", spec]),
    ]
    for python in _OLD_PYTHONS:
        attempts.append(
            (
                "wheel",
                [
                    "--only-binary",
                    ":all:",
                    "--python-version",
                    python,
                    "--implementation",
                    "cp",
                    "--platform",
                    "manylinux2014_x86_64",
                    spec,
                ],
            )
        )
    problems = []
    for kind, args in attempts:
        scratch = dest / "partial"
        shutil.rmtree(scratch, ignore_errors=True)
        scratch.mkdir(parents=True)
        ok, message = _pip(args, scratch)
        files = [p for p in scratch.iterdir() if p.is_file()]
        if ok and files:
            archive = files[0]
            final = dest / archive.name
            archive.replace(final)
            shutil.rmtree(scratch, ignore_errors=True)
            return kind, final, problems
        target = args[args.index("--python-version") + 1] if "--python-version" in args else ""
        problems.append(f"{kind}{' for Python ' + target if target else ''}: {message[:160]}")
    shutil.rmtree(dest / "partial", ignore_errors=True)
    # Attempts that failed for the same reason are said once: "wheel, wheel for Python 3.10 …".
    by_reason: dict[str, list[str]] = {}
    for problem in problems:
        label, reason = problem.split(": ", 1)
        by_reason.setdefault(reason, []).append(label)
    reasons = [f"{', '.join(labels)}: {reason}" for reason, labels in by_reason.items()]
    raise CorpusError(f"pip could not fetch {spec}: " + " | ".join(reasons))


def _unpack(archive: Path, target: Path) -> Path:
    partial = target.with_name(target.name + ".partial")
    shutil.rmtree(partial, ignore_errors=True)
    partial.mkdir(parents=True)
    if archive.name.endswith((".tar.gz", ".tgz", ".tar.bz2", ".tar")):
        with tarfile.open(archive) as tar:
            tar.extractall(partial, filter="data")
    elif archive.suffix in (".zip", ".whl"):
        with zipfile.ZipFile(archive) as zf:
            zf.extractall(partial)
    else:
        raise CorpusError(f"unknown archive type: {archive.name}")
    shutil.rmtree(target, ignore_errors=True)
    partial.replace(target)
    return target


def _indexed_root(unpacked: Path, kind: str) -> Path:
    """An sdist's single top folder, else the unpacked folder itself (a wheel)."""
    entries = [p for p in unpacked.iterdir() if not p.name.startswith(".")]
    if kind == "sdist" and len(entries) == 1 and entries[0].is_dir():
        return entries[0]
    return unpacked


def fetch_release(cache: Path, name: str, pypi_name: str, version: str) -> Corpus:
    """Download (once) and unpack (once) the newest ``version.*`` release of ``pypi_name``."""
    record_path = cache / "releases" / f"{name}.json"
    unpacked = cache / "releases" / name
    if record_path.exists() and unpacked.is_dir():
        record = json.loads(record_path.read_text())
        return Corpus(
            name,
            pypi_name,
            version,
            Path(record["root"]),
            record["kind"],
            record["archive"],
            tuple(record.get("notes", ())),
        )
    downloads = cache / "downloads" / name
    downloads.mkdir(parents=True, exist_ok=True)
    existing = [p for p in downloads.iterdir() if p.is_file()]
    notes: list[str] = []
    if existing:
        archive = existing[0]
        kind = "wheel" if archive.suffix == ".whl" else "sdist"
    else:
        started = time.perf_counter()
        kind, archive, notes = _download(f"{pypi_name}=={version}.*", downloads)
        log(f"{name}: downloaded {archive.name} ({kind}) in {time.perf_counter() - started:.0f}s")
    _unpack(archive, unpacked)
    root = _indexed_root(unpacked, kind)
    record_path.write_text(
        json.dumps({"root": str(root), "kind": kind, "archive": archive.name, "notes": notes})
    )
    return Corpus(name, pypi_name, version, root, kind, archive.name, tuple(notes))


class Indexer:
    """Indexes releases into projects of the benchmark home, as ``cleveragents index`` does."""

    def __init__(self, cache: Path) -> None:
        from cleveragents.cli.context import App
        from cleveragents.plugins import PluginHost

        self.app = App(host=PluginHost.load(), cwd=cache)

    def _service(self) -> Any:
        from cleveragents_acms.indexing.runner import service_for

        return service_for(self.app)

    def is_ready(self, corpus: Corpus) -> bool:
        """Indexed, by the analyzers installed now: when they changed, the next
        :meth:`index` analyses again the files of those that did, as ``index`` does."""
        from cleveragents_acms.indexing.analysis import analyzer_versions

        service = self._service()
        installed = analyzer_versions(service.analyzer_specs())
        for metadata in service.list_indexes(corpus.name):
            if metadata.status == "ready" and Path(metadata.root_path) == corpus.root.resolve():
                return metadata.analyzers in (None, installed)
        return False

    def index(self, corpus: Corpus, *, force: bool = False) -> dict[str, Any]:
        from cleveragents_acms.indexing.runner import index_path

        started = time.perf_counter()
        _, result = index_path(self.app, corpus.root, corpus.name, force=force, show_progress=False)
        meta = result.metadata
        return {
            "files": meta.file_count,
            "nodes": meta.node_count,
            "seconds": round(time.perf_counter() - started, 1),
        }

    def ensure_vectors(self, corpus: Corpus) -> int | None:
        """Embed the release's nodes when a vector plugin is installed and the index was
        built without one (as `cleveragents vector rebuild` does); None if nothing to do."""
        from cleveragents import paths
        from cleveragents_acms.indexing.store import NodeStore
        from cleveragents_acms.indexing.vectors import open_vector_index, rebuild_from_nodes

        if (paths.index_dir("vector", corpus.name) / "manifest.json").exists():
            return None
        vectors = open_vector_index(self.app.registry, self.app.config, corpus.name, reset=True)
        if vectors is None:
            return None
        nodes = NodeStore(paths.index_dir("graph", corpus.name) / "nodes.db")
        try:
            return rebuild_from_nodes(vectors, nodes)
        finally:
            nodes.close()
            vectors.close()

    def current_nodes(self, corpus: Corpus) -> list[Any]:
        """Every current UKO node of the release's index (for the chunk baselines)."""
        from cleveragents_acms.indexing.project_index import ProjectIndex

        ids = {m.resource_id for m in self._service().list_indexes(corpus.name)}
        index = ProjectIndex.open(corpus.name, self.app.registry, self.app.config, create=False)
        try:
            return list(index.nodes.iter_current(ids))
        finally:
            index.close()


def index_release(indexer: Indexer, corpus: Corpus, *, reindex: bool) -> dict[str, Any] | None:
    """Index ``corpus`` unless its index is ready; None when nothing had to be done."""
    if not reindex and indexer.is_ready(corpus):
        added = indexer.ensure_vectors(corpus)
        return None if added is None else {"vectors_added": added}
    return indexer.index(corpus, force=reindex)


def map_gold_path(gold: str, files: list[str]) -> str | None:
    """The path inside the release of repository path ``gold``, matched by suffix.

    ``django/db/models/query.py`` is itself in an sdist; a wheel drops prefixes
    such as ``lib/`` or ``src/`` (``lib/matplotlib/axes/_axes.py`` ->
    ``matplotlib/axes/_axes.py``). The candidate sharing the longest run of
    trailing path components wins; at least the package folder and file name
    must match.
    """
    gold_parts = gold.split("/")
    best, best_len = None, 0
    for path in files:
        parts = path.split("/")
        common = 0
        while (
            common < len(parts)
            and common < len(gold_parts)
            and parts[-1 - common] == gold_parts[-1 - common]
        ):
            common += 1
        need = min(2, len(gold_parts))
        if common >= need and common > best_len:
            best, best_len = path, common
    return best
