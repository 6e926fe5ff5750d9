"""Run analyzers over many files, on every core.

Parsing dominates indexing time (``ast.parse`` runs at ~540 files/s on one
core), so files are analysed in a process pool. Workers rebuild the analyzers
from their ``"module:Class"`` references instead of receiving pickled objects;
analyzers registered as live objects run in this process instead.
"""

from __future__ import annotations

import gc
import hashlib
import os
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from cleveragents.models.uko import AnalysisResult
from cleveragents.registry import import_reference

__all__ = ["AnalyzerSpec", "FileAnalysis", "analyze_files"]

_HEAD_BYTES = 8192


@dataclass(frozen=True)
class AnalyzerSpec:
    """How to (re)build one analyzer: by reference, or the live object itself."""

    name: str
    reference: str | None
    instance: Any = None


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


_ANALYZERS: list[Any] = []


def _build(specs: Sequence[AnalyzerSpec]) -> list[Any]:
    analyzers = []
    for spec in specs:
        if spec.instance is not None:
            analyzers.append(spec.instance)
            continue
        target = import_reference(spec.reference or "")
        analyzers.append(target() if isinstance(target, type) else target)
    return sorted(analyzers, key=lambda a: -int(getattr(a, "specificity", 0)))


def _init_worker(specs: Sequence[AnalyzerSpec]) -> None:
    # Analysis allocates many short-lived objects and few cycles: collecting rarely
    # makes parsing about a third faster (see _work).
    gc.disable()
    _ANALYZERS[:] = _build(specs)


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
    errors: list[str] = []
    try:
        content = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        content = data.decode("utf-8", errors="replace")
        errors.append(f"invalid UTF-8 at byte {exc.start}; undecodable bytes replaced")
    try:
        result = analyzer.analyze(path, content, resource_id=resource_id, relative_path=relative)
    except Exception as exc:
        result = AnalysisResult(
            errors=[f"analyzer {analyzer.name} failed: {type(exc).__name__}: {exc}"]
        )
    result.errors[:0] = errors
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


def _work(args: tuple[str, str, str]) -> FileAnalysis:
    _DONE[0] += 1
    if _DONE[0] % 256 == 0:
        gc.collect()
    return analyze_one(_ANALYZERS, *args)


def analyze_files(
    specs: Sequence[AnalyzerSpec],
    root: Path,
    relatives: Sequence[str],
    resource_id: str,
    *,
    workers: int | None = None,
    on_done: Callable[[FileAnalysis], None] | None = None,
) -> Iterator[FileAnalysis]:
    """Yield one FileAnalysis per file, in completion order; parallel when worthwhile."""
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
    chunksize = max(8, min(64, len(relatives) // (workers * 8) or 1))
    with ProcessPoolExecutor(workers, initializer=_init_worker, initargs=(list(specs),)) as pool:
        jobs = ((str(root), relative, resource_id) for relative in relatives)
        for outcome in pool.map(_work, jobs, chunksize=chunksize):
            if on_done:
                on_done(outcome)
            yield outcome
