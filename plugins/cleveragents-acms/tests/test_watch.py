"""The watch loop on a real folder: armed, caught up, then one refresh per batch of saves."""

from __future__ import annotations

import threading
import time
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from cleveragents_acms.indexing.watch import watch


def test_the_watch_catches_up_before_it_is_ready_then_follows_saves(tmp_path: Path) -> None:
    """What changed before the watcher was armed is taken in by a catch-up refresh, reported
    (``changes`` -1) before ``on_ready``; a file saved afterwards triggers a refresh told
    the path saved (the catch-up is told none: it walks)."""
    events: list[Any] = []
    ready, saved_seen, stop = threading.Event(), threading.Event(), threading.Event()

    asked: list[list[str] | None] = []

    def refresh(paths: list[str] | None) -> Any:
        asked.append(paths)
        return SimpleNamespace(run=SimpleNamespace(files_analyzed=1, files_removed=0))

    def on_refresh(result: Any, changes: int) -> None:
        events.append(changes)
        if changes > 0:
            saved_seen.set()

    def on_ready() -> None:
        events.append("ready")
        ready.set()

    watcher = threading.Thread(
        target=watch,
        args=(tmp_path, refresh),
        kwargs={"on_refresh": on_refresh, "on_ready": on_ready, "stop_event": stop},
        daemon=True,
    )
    watcher.start()
    try:
        assert ready.wait(30), "the watcher never became ready"
        (tmp_path / "saved.py").write_text("def saved_after_ready():\n    return 1\n")
        assert saved_seen.wait(30), "a file saved after ready was not seen"
    finally:
        stop.set()
        watcher.join(timeout=30)
    assert not watcher.is_alive()
    assert events[:2] == [-1, "ready"]
    assert all(isinstance(e, int) and e > 0 for e in events[2:])
    # The catch-up walks; a save names its path.
    assert asked[0] is None
    assert ["saved.py"] in asked[1:]


def test_a_catch_up_that_finds_nothing_is_not_reported(tmp_path: Path) -> None:
    """An unchanged folder: the watch becomes ready without a refresh report."""
    events: list[Any] = []
    stop = threading.Event()

    def refresh(paths: list[str] | None) -> Any:
        return SimpleNamespace(run=SimpleNamespace(files_analyzed=0, files_removed=0))

    def on_ready() -> None:
        events.append("ready")
        stop.set()

    started = time.monotonic()
    watch(
        tmp_path,
        refresh,
        on_refresh=lambda result, changes: events.append(changes),
        on_ready=on_ready,
        stop_event=stop,
    )
    assert events == ["ready"]
    assert time.monotonic() - started < 30
