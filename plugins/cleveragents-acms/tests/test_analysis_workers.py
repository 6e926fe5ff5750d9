"""The analysis workers and Ctrl-C: the indexer decides what stops, and stops them all."""

from __future__ import annotations

import multiprocessing
import os
import signal
import time
from pathlib import Path

import pytest

from cleveragents_acms.indexing.analysis import ComponentSpec, FileAnalysis, analyze_files

PYTHON = ComponentSpec("python", "cleveragents_acms.analyzers.python:PythonAnalyzer")
ROOT = Path(pytest.__file__).parent.parent / "_pytest"  # a real package, 60+ files


def _sources() -> list[str]:
    files = sorted(str(p.relative_to(ROOT)) for p in ROOT.rglob("*.py"))
    assert len(files) >= 64  # enough for the worker pool to be used
    return files


def _workers() -> set[int]:
    """This process's worker processes not there before the test (other tests' are left)."""
    return {c.pid for c in multiprocessing.active_children() if c.pid is not None} - _BEFORE


_BEFORE: set[int] = set()


@pytest.fixture(autouse=True)
def _known_children() -> None:
    _BEFORE.clear()
    _BEFORE.update(c.pid for c in multiprocessing.active_children() if c.pid is not None)


def _workers_gone(deadline: float = 10.0) -> bool:
    end = time.monotonic() + deadline
    while _workers() and time.monotonic() < end:
        time.sleep(0.05)
    return not _workers()


@pytest.mark.skipif(not hasattr(signal, "pthread_sigmask"), reason="POSIX signals")
def test_a_ctrl_c_that_reaches_the_workers_does_not_break_the_run() -> None:
    """A terminal's Ctrl-C goes to the whole process group. The workers ignore it: the
    indexer decides what stops. (A worker that died of it broke the pool; Python 3.11's
    pool could then leave the other workers alive and the indexer waiting for them.)"""
    relatives = _sources()
    interrupted: list[int] = []

    def interrupt_workers(_: FileAnalysis) -> None:
        if not interrupted:
            for pid in _workers():
                os.kill(pid, signal.SIGINT)
                interrupted.append(pid)

    done = list(
        analyze_files([PYTHON], ROOT, relatives, "01TESTRESOURCE0000000000", workers=2,
                      on_done=interrupt_workers)
    )  # fmt: skip
    assert len(interrupted) == 2
    assert sorted(d.relative for d in done) == relatives
    assert _workers_gone()


@pytest.mark.filterwarnings("error::pytest.PytestUnhandledThreadExceptionWarning")
def test_stopping_mid_run_ends_every_worker() -> None:
    """Interrupted in the indexer (KeyboardInterrupt) or abandoned by its caller, a run
    drops the jobs not started, and its workers end."""
    relatives = _sources()

    def stop(_: FileAnalysis) -> None:
        raise KeyboardInterrupt

    started = time.monotonic()
    with pytest.raises(KeyboardInterrupt):
        list(analyze_files([PYTHON], ROOT, relatives, "01TESTRESOURCE0000000000", workers=2,
                           on_done=stop))  # fmt: skip
    assert _workers_gone()

    run = analyze_files([PYTHON], ROOT, relatives, "01TESTRESOURCE0000000000", workers=2)
    first = next(run)
    assert first.relative in relatives
    run.close()  # the caller stops reading
    assert _workers_gone()
    assert time.monotonic() - started < 60  # no job left waiting for the rest of the files


def test_the_workers_vectors_are_the_embedders_node_by_node() -> None:
    """Each file comes back with one vector per embeddable node, the one the embedder
    gives that node's text in this process."""
    import numpy as np

    from cleveragents_acms.indexing.vectors import chunk_text, embeddable
    from cleveragents_backend_faiss.embedders import HashingNgramEmbedder

    embedder = ComponentSpec(
        "hashing-ngram", "cleveragents_backend_faiss.embedders:HashingNgramEmbedder"
    )
    outcomes = list(analyze_files([PYTHON], ROOT, _sources(), "R", workers=2, embedder=embedder))
    local = HashingNgramEmbedder()
    checked = 0
    for outcome in outcomes:
        wanted = [n for n in outcome.result.nodes if embeddable(n)]
        assert outcome.vectors is not None and outcome.vectors_from == "hashing-ngram"
        assert outcome.vectors.uris == [n.uri for n in wanted]
        if wanted:
            expected = local.embed_array([chunk_text(n) for n in wanted])
            assert np.allclose(outcome.vectors.matrix, expected, atol=1e-6)
            checked += len(wanted)
    assert checked > 1000


def test_ctrl_c_while_the_pool_starts_is_raised_once_it_has() -> None:
    """A Ctrl-C while the workers are forked waits until the pool can stop them: raised
    mid-start (another thread may take the signal, and Python raises it in the main
    thread whatever its mask), it left the workers waiting for work and the process
    waiting for them at exit, for ever."""
    import threading

    from cleveragents_acms.indexing.analysis import _interrupts_held

    # Python's own Ctrl-C handler, whatever this process inherited: started in the
    # background by a shell without job control, it ignores SIGINT (and so, rightly, does
    # the indexer).
    inherited = signal.signal(signal.SIGINT, signal.default_int_handler)
    go = threading.Event()

    def send() -> None:  # a thread started before, with SIGINT not blocked (Tantivy's …)
        go.wait()
        # Taken by this thread, before the join below returns: a signal to the process
        # may go to any thread that does not block it (another test's idle RocksDB
        # thread), which a busy machine may not run within the sleep below.
        signal.pthread_kill(threading.get_ident(), signal.SIGINT)

    sender = threading.Thread(target=send)
    sender.start()
    reached = False
    try:
        with pytest.raises(KeyboardInterrupt), _interrupts_held():
            go.set()
            sender.join()
            time.sleep(0.05)  # time for the handler to run, were it to raise here
            reached = True
        assert reached
        assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
    finally:
        signal.signal(signal.SIGINT, inherited)
