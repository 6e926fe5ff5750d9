"""Writing a file whole or not at all, for the kernel and every plugin.

A crash, a full disk or Ctrl-C while a file is written must leave readers the
old file or the new one, never half of it: the content goes to a temporary
sibling, is fsynced, then renamed over the target (a rename within one folder
is atomic on POSIX and Windows).
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import BinaryIO

__all__ = ["replace_file", "sync_directory"]


def replace_file(
    path: Path,
    content: str | bytes | Callable[[BinaryIO], object],
    *,
    mode: int | None = None,
    durable: bool = False,
) -> None:
    """Replace ``path`` with ``content`` (text as UTF-8, no newline translation; bytes; or a
    function writing into the binary handle it is given), creating its folder if need be.

    The new file has ``mode`` (else the temporary file's 0o600). ``durable`` also fsyncs
    the folder, so that the rename itself survives a power cut. On any failure the
    temporary file is removed, ``path`` is left as it was and the error is raised.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, temporary = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            if isinstance(content, str):
                handle.write(content.encode("utf-8"))
            elif isinstance(content, bytes):
                handle.write(content)
            else:
                content(handle)
            handle.flush()
            os.fsync(handle.fileno())
        if mode is not None:
            os.chmod(temporary, mode)
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
    if durable:
        sync_directory(path.parent)


def sync_directory(location: Path) -> None:
    """Make the renames inside ``location`` durable (a no-op where folders cannot be
    fsynced)."""
    if os.name != "posix":
        return
    fd = os.open(location, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
