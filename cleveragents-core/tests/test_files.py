"""``cleveragents.files.replace_file``: a file is replaced whole or not at all."""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import BinaryIO

import pytest

from cleveragents.files import replace_file, sync_directory


def test_text_bytes_and_writer_content(tmp_path: Path) -> None:
    """Text is written as UTF-8 without newline translation; bytes as they are; a writer
    function gets the binary handle. Missing folders are created."""
    target = tmp_path / "a" / "b" / "config.toml"
    replace_file(target, "name = 'é'\r\nnext = 1\n")
    assert target.read_bytes() == "name = 'é'\r\nnext = 1\n".encode()
    replace_file(target, b"\x00\x01")
    assert target.read_bytes() == b"\x00\x01"

    def writer(handle: BinaryIO) -> None:
        handle.write(b"one ")
        handle.write(b"two")

    replace_file(target, writer, durable=True)
    assert target.read_bytes() == b"one two"
    assert sorted(p.name for p in target.parent.iterdir()) == ["config.toml"]


def test_mode(tmp_path: Path) -> None:
    """The new file has the mode asked for; without one it is private (0o600)."""
    shared, private = tmp_path / "shared.json", tmp_path / "private.toml"
    replace_file(shared, "{}", mode=0o644)
    replace_file(private, "secret")
    assert stat.S_IMODE(shared.stat().st_mode) == 0o644
    assert stat.S_IMODE(private.stat().st_mode) == 0o600


def test_a_failed_write_leaves_the_old_file_and_no_temporary(tmp_path: Path) -> None:
    """A writer that fails half way (a full disk, Ctrl-C) changes nothing on disk."""
    target = tmp_path / "chain.jsonl"
    target.write_text("old\n")

    def failing(handle: BinaryIO) -> None:
        handle.write(b"half of the new")
        raise OSError(28, "No space left on device")

    with pytest.raises(OSError, match="No space left"):
        replace_file(target, failing)
    assert target.read_text() == "old\n"
    assert [p.name for p in tmp_path.iterdir()] == ["chain.jsonl"]

    def interrupted(handle: BinaryIO) -> None:
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        replace_file(target, interrupted)
    assert target.read_text() == "old\n"
    assert [p.name for p in tmp_path.iterdir()] == ["chain.jsonl"]


@pytest.mark.skipif(os.name != "posix", reason="folders are fsynced on POSIX only")
def test_sync_directory_accepts_a_folder_and_rejects_a_missing_one(tmp_path: Path) -> None:
    sync_directory(tmp_path)
    with pytest.raises(FileNotFoundError):
        sync_directory(tmp_path / "missing")
