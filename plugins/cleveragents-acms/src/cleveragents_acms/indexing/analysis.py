"""Run analyzers over many files, on every core.

Parsing dominates indexing time (``ast.parse`` runs at ~540 files/s on one
core), so files are analysed in a process pool. Workers rebuild the analyzers
from their ``"module:Class"`` references instead of receiving pickled objects;
analyzers registered as live objects run in this process instead.

A *light* embedder (one that declares ``light = True``: no model to load, such
as ``hashing-ngram``) also runs in the workers, so a file's chunks are embedded
in parallel beside its parsing; a model-backed embedder is better batched in
the main process, where the indexer embeds whatever arrives without vectors.
"""

from __future__ import annotations

import contextlib
import functools
import gc
import hashlib
import importlib.metadata
import os
import signal
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from cleveragents.models.uko import AnalysisResult
from cleveragents.registry import import_reference
from cleveragents_acms.analyzers._common import forget_go_modules, language_of
from cleveragents_acms.analyzers._python_support import forget_packages
from cleveragents_acms.analyzers.files import decode_text
from cleveragents_acms.indexing.store import node_blobs

__all__ = [
    "ComponentSpec",
    "FileAnalysis",
    "NodeVectors",
    "analyze_files",
    "analyzer_changes",
    "analyzer_versions",
    "changed_analyzers",
    "embed_nodes",
]

_HEAD_BYTES = 8192


@dataclass(frozen=True)
class ComponentSpec:
    """How to (re)build an analyzer or embedder: by reference, or the live object itself."""

    name: str
    reference: str | None
    instance: Any = None

    def build(self) -> Any:
        if self.instance is not None:
            return self.instance
        target = import_reference(self.reference or "")
        return target() if isinstance(target, type) else target

    def declared(self, attribute: str, default: Any = None) -> Any:
        """An attribute the component declares (``name``, ``revision``), read from its
        class without building it; ``default`` when it has none or cannot be imported."""
        if self.instance is not None:
            return getattr(self.instance, attribute, default)
        try:
            return getattr(import_reference(self.reference or ""), attribute, default)
        except Exception:  # a broken reference fails where the analyzers are built
            return default


def analyzer_versions(specs: Sequence[ComponentSpec]) -> str:
    """``markdown@0.1.0 python@0.1.0+2 …``: each analyzer by name and the version of the
    distribution its package comes from (``?`` when unknown), then ``+revision`` when the
    analyzer declares a ``revision`` (raised when what it finds in the same file changes
    within one release), sorted.

    An index records it: when it changes (an upgrade, a revision, an analyzer plugin
    installed or removed), what the analyzers find in unchanged files may change too.
    """
    tags = []
    for spec in specs:
        if spec.instance is not None:
            module = type(spec.instance).__module__
        else:
            module = (spec.reference or "").partition(":")[0]
        revision = spec.declared("revision")
        tag = f"{spec.name}@{_distribution_version(module.split('.')[0])}"
        tags.append(f"{tag}+{revision}" if revision else tag)
    return " ".join(sorted(tags))


def _tags(versions: str) -> dict[str, str]:
    return dict(tag.rpartition("@")[::2] for tag in versions.split())


def changed_analyzers(before: str, now: str) -> frozenset[str] | None:
    """The analyzers whose version differs between two :func:`analyzer_versions`; None
    when one was added or removed, as which analyzer a file goes to may change then."""
    old, new = _tags(before), _tags(now)
    if old.keys() != new.keys():
        return None
    return frozenset(name for name in new if old[name] != new[name])


def analyzer_changes(before: str, now: str) -> str:
    """``python@0.1.0 -> python@0.2.0, +go@0.1.0``: what differs between two
    :func:`analyzer_versions`."""
    old, new = _tags(before), _tags(now)
    changes = [
        f"{name}@{old[name]} -> {name}@{new[name]}"
        for name in sorted(old.keys() & new.keys())
        if old[name] != new[name]
    ]
    changes += [f"+{name}@{new[name]}" for name in sorted(new.keys() - old.keys())]
    changes += [f"-{name}@{old[name]}" for name in sorted(old.keys() - new.keys())]
    return ", ".join(changes)


@functools.cache
def _distribution_version(package: str) -> str:
    if not package:
        return "?"
    with contextlib.suppress(importlib.metadata.PackageNotFoundError, ValueError):
        return importlib.metadata.version(package)  # usually named as its package
    # The full map scans every installed distribution: only when the name differs.
    for name in importlib.metadata.packages_distributions().get(package) or []:
        with contextlib.suppress(importlib.metadata.PackageNotFoundError, ValueError):
            return importlib.metadata.version(name)
    return "?"


@dataclass
class NodeVectors:
    """Vectors of some nodes, by URI: one matrix, which travels back from a worker about
    four times cheaper than one array per node."""

    uris: list[str]
    #: ``(len(uris), dimension)``, one row per URI.
    matrix: Any

    def __len__(self) -> int:
        return len(self.uris)

    def items(self) -> Iterator[tuple[str, Any]]:
        return zip(self.uris, self.matrix, strict=True)

    def only(self, uris: set[str]) -> NodeVectors:
        """The vectors of those of ``uris`` this holds."""
        rows = [i for i, uri in enumerate(self.uris) if uri in uris]
        return NodeVectors([self.uris[i] for i in rows], self.matrix[rows])


@dataclass
class FileAnalysis:
    """The outcome for one file."""

    relative: str
    content_hash: str
    size: int
    language: str
    analyzer: str | None
    result: AnalysisResult = field(default_factory=AnalysisResult)
    token_estimate: int = 0
    #: The nodes' unit vectors, when a light embedder ran beside the analyzer ...
    vectors: NodeVectors | None = None
    #: ... and the name of that embedder.
    vectors_from: str | None = None
    #: Node URI -> what the node store keeps of it (``store.node_blobs``: the renderings
    #: compressed, the properties, the fingerprint's hash of all but the edges, and the
    #: line-count-only hash that fingerprints of earlier versions were made from), when
    #: computed in a worker.
    store_blobs: dict[str, tuple[bytes, str, bytes, bytes]] = field(default_factory=dict)


_ANALYZERS: list[Any] = []
_EMBEDDER: list[tuple[str, Any]] = []


def _build(specs: Sequence[ComponentSpec]) -> list[Any]:
    analyzers = [spec.build() for spec in specs]
    return sorted(analyzers, key=lambda a: -int(getattr(a, "specificity", 0)))


def _init_worker(specs: Sequence[ComponentSpec], embedder: ComponentSpec | None) -> None:
    # Ctrl-C reaches the whole process group; the indexer decides what stops (see
    # _interrupts_held). A worker that died of it broke the pool, and Python 3.11's pool
    # could then leave the other workers running and the indexer waiting for them.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    if hasattr(signal, "pthread_sigmask"):
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})
    _exit_with_parent(os.getppid())
    # Analysis allocates many short-lived objects and few cycles: collecting rarely
    # makes parsing about a third faster (see _work).
    gc.disable()
    _ANALYZERS[:] = _build(specs)
    _EMBEDDER[:] = [(embedder.name, embedder.build())] if embedder is not None else []
    # What the worker inherited from the indexer at fork, and its analyzers, live as long
    # as it does: frozen, they are left out of each periodic collection (~0.1 s each).
    gc.freeze()


def _exit_with_parent(parent: int) -> None:
    """End this worker once the indexer is gone, even killed (SIGKILL runs no clean-up):
    else it would block for ever writing results that no one reads."""

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(0.5)
        os._exit(1)

    threading.Thread(target=watch, name="parent-watch", daemon=True).start()


def embed_nodes(embedder: Any, nodes: Sequence[Any]) -> NodeVectors:
    """The vectors of the embeddable ``nodes`` (what the vector index stores)."""
    import numpy as np

    from cleveragents_acms.indexing.vectors import chunk_text, embeddable

    chosen = [n for n in nodes if embeddable(n)]
    embed = getattr(embedder, "embed_array", None) or embedder.embed
    matrix = np.asarray(embed([chunk_text(n) for n in chosen]) if chosen else [], np.float32)
    return NodeVectors([n.uri for n in chosen], matrix)


def _choose(analyzers: Sequence[Any], path: Path, head: bytes) -> Any | None:
    for analyzer in analyzers:  # sorted most specific first
        try:
            if analyzer.supports(path, head):
                return analyzer
        except Exception:
            continue
    return None


def analyze_one(
    analyzers: Sequence[Any], root: str, relative: str, resource_id: str
) -> FileAnalysis:
    """Read, hash and analyse one file; never raises for a bad file."""
    path = Path(root) / relative
    try:
        data = path.read_bytes()
    except OSError as exc:
        return FileAnalysis(
            relative,
            "",
            0,
            "unknown",
            None,
            AnalysisResult(errors=[f"unreadable: {exc.strerror or exc}"]),
        )
    digest = hashlib.sha256(data).hexdigest()
    analyzer = _choose(analyzers, path, data[:_HEAD_BYTES])
    if analyzer is None:
        return FileAnalysis(
            relative,
            digest,
            len(data),
            "unknown",
            None,
            AnalysisResult(errors=["no analyzer supports this file"]),
        )
    content, errors = decode_text(relative, data)
    try:
        result = analyzer.analyze(path, content, resource_id=resource_id, relative_path=relative)
    except Exception as exc:
        result = AnalysisResult(
            errors=[f"analyzer {analyzer.name} failed: {type(exc).__name__}: {exc}"]
        )
    result.errors[:0] = errors
    # The name says more than a fallback analyzer's "text" (``.rst``, ``.c``, ``.yaml``).
    language = language_of(relative)
    if language == "unknown":
        language = (getattr(analyzer, "languages", None) or ("unknown",))[0]
    # ~4 characters per token: a cheap estimate for IndexMetadata; budgets use a real tokenizer.
    return FileAnalysis(
        relative,
        digest,
        len(data),
        language,
        analyzer.name,
        result,
        token_estimate=len(content) // 4,
    )


_DONE = [0]


def _work(jobs: Sequence[tuple[str, str, str]]) -> list[FileAnalysis]:
    """Analyse a few files; their chunks are embedded together (an embedder's fixed cost
    per call is then paid once per job, not once per file)."""
    outcomes = []
    for job in jobs:
        _DONE[0] += 1
        if _DONE[0] % 256 == 0:
            gc.collect()
        outcome = analyze_one(_ANALYZERS, *job)
        # What the main process would otherwise compute per node, serially, while writing
        # (compressed, so it also travels back cheaper than the renderings it encodes).
        outcome.store_blobs = {n.uri: node_blobs(n) for n in outcome.result.nodes}
        outcomes.append(outcome)
    if _EMBEDDER:
        name, embedder = _EMBEDDER[0]
        nodes = [n for outcome in outcomes for n in outcome.result.nodes]
        try:
            vectors = embed_nodes(embedder, nodes)
        except Exception:  # the main process embeds what comes without vectors
            vectors = None
        if vectors is not None:
            for outcome in outcomes:
                outcome.vectors = vectors.only({n.uri for n in outcome.result.nodes})
                outcome.vectors_from = name
    return outcomes


def analyze_files(
    specs: Sequence[ComponentSpec],
    root: Path,
    relatives: Sequence[str],
    resource_id: str,
    *,
    workers: int | None = None,
    on_done: Callable[[FileAnalysis], None] | None = None,
    embedder: ComponentSpec | None = None,
) -> Iterator[FileAnalysis]:
    """Yield one FileAnalysis per file, in completion order; parallel when worthwhile.

    ``embedder`` (a light one, by reference) is run in the workers, as is the
    node store's encoding; without workers, both are left to the writers.
    """
    # Before the workers are forked, so that they start without it either.
    forget_packages()
    forget_go_modules()
    workers = workers if workers is not None else min(os.cpu_count() or 1, 8)
    picklable = all(spec.reference for spec in specs)
    if workers <= 1 or len(relatives) < 64 or not picklable:
        analyzers = _build(specs)
        for relative in relatives:
            outcome = analyze_one(analyzers, str(root), relative, resource_id)
            if on_done:
                on_done(outcome)
            yield outcome
        return
    if embedder is not None and not embedder.reference:
        embedder = None
    # Jobs of several files: enough that a job's embedding is batched, few enough that
    # both workers stay busy to the end.
    size = max(8, min(32, len(relatives) // (workers * 8) or 1))
    pool = ProcessPoolExecutor(workers, initializer=_init_worker, initargs=(list(specs), embedder))
    try:
        jobs = (
            [(str(root), relative, resource_id) for relative in relatives[i : i + size]]
            for i in range(0, len(relatives), size)
        )
        with _interrupts_held():  # the workers are forked here: none may die of Ctrl-C
            results = pool.map(_work, jobs)
        for outcomes in results:
            for outcome in outcomes:
                if on_done:
                    on_done(outcome)
                yield outcome
    finally:
        # Stopped (Ctrl-C, an error, the caller gone): the jobs not started are dropped,
        # the running ones end, and so do the workers.
        pool.shutdown(wait=True, cancel_futures=True)


@contextlib.contextmanager
def _interrupts_held() -> Iterator[None]:
    """Hold Ctrl-C back until the pool has started (it comes through right after):

    * a process forked meanwhile starts with SIGINT blocked, until it ignores it
      (:func:`_init_worker`);
    * the KeyboardInterrupt waits: blocking SIGINT in this thread is not enough, as
      another thread (Tantivy's, RocksDB's) may take the signal, and Python raises it in
      the main thread all the same. Raised while the pool started its workers and not
      yet the thread that stops them, it left them waiting for work, and the process
      waiting for them at exit, for ever.
    """
    caught: list[Any] = []
    previous_handler: Any = None
    if threading.current_thread() is threading.main_thread():
        previous_handler = signal.signal(signal.SIGINT, lambda _, frame: caught.append(frame))
    masked = hasattr(signal, "pthread_sigmask")
    previous_mask = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT}) if masked else None
    try:
        yield
    finally:
        if previous_mask is not None:
            signal.pthread_sigmask(signal.SIG_SETMASK, previous_mask)  # a held one lands now
        if previous_handler is not None:
            signal.signal(signal.SIGINT, previous_handler)
            if caught and callable(previous_handler):
                previous_handler(signal.SIGINT, caught[0])  # the default raises it
            elif caught and previous_handler == signal.SIG_DFL:
                raise KeyboardInterrupt
