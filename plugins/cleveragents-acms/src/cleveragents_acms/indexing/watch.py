"""Keep an index fresh while files change (``cleveragents index PATH --watch``).

File-system events are batched (200 ms debounce) and each batch triggers an
incremental refresh, which re-analyses only files whose content changed, so a
saved file is searchable well within two seconds.

Nothing saved is missed: once the watcher is armed (its first poll returned),
one catch-up refresh takes in what changed since the index was built, and only
then is the watch reported ready.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from cleveragents_acms.indexing.models import RepoIndex

__all__ = ["watch"]

#: How long the watcher waits for events before yielding nothing (the first yield says
#: it is armed).
_ARMED_POLL_MS = 300


def _relevant(change: tuple[Any, str], root: Path) -> bool:
    parts = Path(change[1]).relative_to(root).parts if change[1].startswith(str(root)) else ()
    return not any(p in (".git", "__pycache__", "node_modules") for p in parts)


def _relative(change: tuple[Any, str], root: Path) -> str | None:
    """The changed path relative to ``root`` (forward slashes), None when outside it."""
    try:
        return Path(change[1]).relative_to(root).as_posix()
    except ValueError:
        return None


def watch(
    root: Path,
    refresh: Callable[[list[str] | None], RepoIndex],
    *,
    on_refresh: Callable[[RepoIndex, int], None] | None = None,
    on_error: Callable[[BaseException], None] | None = None,
    on_ready: Callable[[], None] | None = None,
    stop_event: threading.Event | None = None,
    debounce_ms: int = 200,
) -> None:
    """Call ``refresh`` after every batch of relevant changes under ``root`` until stopped:
    ``refresh(paths)`` with the paths the batch names (relative to ``root``), which may
    spare the refresh a walk of the tree; ``refresh(None)`` for the catch-up, which walks.

    ``on_ready`` is called once the watcher is armed and caught up: a file saved
    after that is seen. ``on_refresh(result, changes)`` reports each refresh that
    events caused, and the catch-up (``changes`` -1) when it found something.
    """
    import watchfiles

    root = root.resolve()
    ready = False
    for changes in watchfiles.watch(
        root,
        debounce=debounce_ms,
        step=50,
        stop_event=stop_event,
        raise_interrupt=False,
        # the first (empty) yield comes once the watcher is armed
        rust_timeout=_ARMED_POLL_MS,
        yield_on_timeout=True,
    ):
        relevant = [c for c in changes if _relevant(c, root)]
        if not ready:
            ready = True
            _refresh(refresh, None, on_refresh, on_error, -1)  # changed before it was armed
            if on_ready is not None:
                on_ready()
        if relevant:
            paths = [_relative(c, root) for c in relevant]
            named = None if None in paths else sorted({p for p in paths if p})
            _refresh(refresh, named, on_refresh, on_error, len(relevant))


def _refresh(
    refresh: Callable[[list[str] | None], RepoIndex],
    paths: list[str] | None,
    on_refresh: Callable[[RepoIndex, int], None] | None,
    on_error: Callable[[BaseException], None] | None,
    changes: int,
) -> None:
    """One refresh; ``changes`` is how many events caused it (-1: the catch-up, reported
    only when it analysed or removed something)."""
    try:
        result = refresh(paths)
    except Exception as exc:
        if on_error is not None:
            on_error(exc)
        return
    run = result.run
    caught_up = run is None or not (run.files_analyzed or run.files_removed)
    if on_refresh is not None and not (changes < 0 and caught_up):
        on_refresh(result, changes)
