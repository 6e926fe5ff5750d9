"""Keep an index fresh while files change (``cleveragents index PATH --watch``).

File-system events are batched (200 ms debounce) and each batch triggers an
incremental refresh, which re-analyses only files whose content changed, so a
saved file is searchable well within two seconds.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from cleveragents_acms.indexing.models import RepoIndex

__all__ = ["watch"]


def _relevant(change: tuple[Any, str], root: Path) -> bool:
    parts = Path(change[1]).relative_to(root).parts if change[1].startswith(str(root)) else ()
    return not any(p in (".git", "__pycache__", "node_modules") for p in parts)


def watch(
    root: Path,
    refresh: Callable[[], RepoIndex],
    *,
    on_refresh: Callable[[RepoIndex, int], None] | None = None,
    on_error: Callable[[BaseException], None] | None = None,
    stop_event: threading.Event | None = None,
    debounce_ms: int = 200,
) -> None:
    """Call ``refresh`` after every batch of relevant changes under ``root`` until stopped."""
    import watchfiles

    root = root.resolve()
    for changes in watchfiles.watch(
        root, debounce=debounce_ms, step=50, stop_event=stop_event, raise_interrupt=False
    ):
        relevant = [c for c in changes if _relevant(c, root)]
        if not relevant:
            continue
        try:
            result = refresh()
        except Exception as exc:
            if on_error is not None:
                on_error(exc)
            continue
        if on_refresh is not None:
            on_refresh(result, len(relevant))
