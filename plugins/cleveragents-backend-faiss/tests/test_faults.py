"""Faults: another embedder, corrupt or truncated files, crashes while saving, bad options."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from cleveragents.errors import ConfigurationError
from cleveragents.protocols import EmbeddingChunk

pytest.importorskip(
    "cleveragents_backend_faiss", reason="cleveragents-backend-faiss is not installed"
)
import faiss

from cleveragents_backend_faiss import storage
from cleveragents_backend_faiss.backend import FaissVectorBackend

DIM = 8
A = "01HRESOURCEAAAAAAAAAAAAAAA"


def vectors(count: int, seed: int = 0) -> np.ndarray:
    rows = np.random.default_rng(seed).standard_normal((count, DIM))
    return (rows / np.linalg.norm(rows, axis=1, keepdims=True)).astype(np.float32)


def build(path: Path, count: int = 10, **options: Any) -> np.ndarray:
    """A committed index of ``count`` vectors in resource A."""
    data = vectors(count)
    with FaissVectorBackend(path, **options) as backend:
        backend.add(
            [EmbeddingChunk(f"n#{i}", f"body {i}") for i in range(count)], data, resource_id=A
        )
    return data


def manifest(path: Path) -> dict[str, Any]:
    return json.loads((path / storage.MANIFEST_NAME).read_text())


def data_file(path: Path, kind: str) -> Path:
    return path / manifest(path)["files"][kind]["name"]


# -- another embedder or dimension ----------------------------------------------------------------


def test_another_embedder_is_a_configuration_error_offering_rebuild(tmp_path: Path) -> None:
    """Opening an index with another embedder names both and says how to fix it."""
    build(tmp_path / "v", embedder="minilm", dimension=DIM)
    with pytest.raises(ConfigurationError) as caught:
        FaissVectorBackend(tmp_path / "v", embedder="hashing-ngram", dimension=DIM)
    message = str(caught.value)
    assert f"vector index at {tmp_path / 'v'} was built with embedder minilm (dim {DIM})" in message
    assert f"configured embedder hashing-ngram (dim {DIM})" in message
    assert "`cleveragents vector rebuild`" in message
    assert (tmp_path / "v" / storage.MANIFEST_NAME).exists(), "a mismatch never deletes the index"


def test_another_dimension_is_a_configuration_error(tmp_path: Path) -> None:
    """Same embedder name, other dimension: still refused."""
    build(tmp_path / "v", embedder="hashing-ngram", dimension=DIM)
    with pytest.raises(
        ConfigurationError, match=r"dim 8\); configured embedder hashing-ngram \(dim 512\)"
    ):
        FaissVectorBackend(tmp_path / "v", embedder="hashing-ngram", dimension=512)


def test_reset_switches_embedders_for_a_rebuild(tmp_path: Path) -> None:
    """Opening without options, ``reset()`` to the new embedder, re-add, commit: then it opens."""
    build(tmp_path / "v", embedder="old", dimension=DIM)
    with FaissVectorBackend(tmp_path / "v") as backend:
        assert backend.embedder_name == "old"
        backend.reset(embedder="new", dimension=4)
        backend.add([EmbeddingChunk("n#0", "x")], [[1.0, 0.0, 0.0, 0.0]], resource_id=A)
    reopened = FaissVectorBackend(tmp_path / "v", embedder="new", dimension=4)
    assert (reopened.count(), reopened.dimension) == (1, 4)


# -- corrupt and truncated files ------------------------------------------------------------------


def truncate_index(path: Path) -> None:
    target = data_file(path, "index")
    target.write_bytes(target.read_bytes()[: target.stat().st_size // 2])


def flip_a_byte(path: Path) -> None:
    target = data_file(path, "index")
    raw = bytearray(target.read_bytes())
    raw[len(raw) // 2] ^= 0xFF
    target.write_bytes(bytes(raw))


def garbage_manifest(path: Path) -> None:
    (path / storage.MANIFEST_NAME).write_text("{ not json")


def missing_entries(path: Path) -> None:
    data_file(path, "entries").unlink()


@pytest.mark.parametrize(
    "damage",
    [truncate_index, flip_a_byte, garbage_manifest, missing_entries],
    ids=["truncated", "bit-flip", "bad-manifest", "missing-entries"],
)
def test_a_corrupt_index_is_set_aside_and_reported(tmp_path: Path, damage: Any) -> None:
    """Damage is detected, files move to ``*.corrupt``, the index opens empty needing a rebuild."""
    data = build(tmp_path / "v")
    damage(tmp_path / "v")
    backend = FaissVectorBackend(tmp_path / "v")
    assert backend.needs_rebuild is True
    assert backend.corruption
    assert backend.count() == 0
    assert backend.similarity_search(data[0], scope=frozenset({A})) == []
    corrupt = sorted(p.name for p in (tmp_path / "v").glob("*.corrupt"))
    assert "manifest.json.corrupt" in corrupt
    assert not (tmp_path / "v" / storage.MANIFEST_NAME).exists()
    backend.add([EmbeddingChunk("n#0", "again")], data[:1], resource_id=A)
    backend.commit()
    assert backend.needs_rebuild is True, "a commit of part of the data is still incomplete"
    reopened = FaissVectorBackend(tmp_path / "v")
    assert (reopened.count(), reopened.needs_rebuild) == (1, True)
    reopened.reset(embedder=None, dimension=DIM)
    reopened.add([EmbeddingChunk(f"n#{i}", "again") for i in range(10)], data, resource_id=A)
    reopened.commit()
    rebuilt = FaissVectorBackend(tmp_path / "v")
    assert (rebuilt.count(), rebuilt.needs_rebuild) == (10, False)


def test_unreadable_faiss_data_is_caught_without_checksums(tmp_path: Path) -> None:
    """With checksums off, FAISS's own read failure is still detected."""
    build(tmp_path / "v")
    target = data_file(tmp_path / "v", "index")
    target.write_bytes(b"\0" * target.stat().st_size)
    backend = FaissVectorBackend(tmp_path / "v", verify_checksums=False)
    assert backend.needs_rebuild and backend.count() == 0


def test_keys_that_disagree_with_the_index_are_corrupt(tmp_path: Path) -> None:
    """A keys file naming ids the index lacks is caught by the consistency check."""
    build(tmp_path / "v")
    keys = data_file(tmp_path / "v", "keys")
    table = storage.read_keys(keys)
    entries = {vector_id: table[vector_id] for vector_id in table}
    entries[10_000] = entries.pop(0)
    storage.write_keys(keys, entries, {i: e.offset for i, e in entries.items()})
    stored = manifest(tmp_path / "v")
    stored["files"]["keys"]["size"] = keys.stat().st_size
    (tmp_path / "v" / storage.MANIFEST_NAME).write_text(json.dumps(stored))
    backend = FaissVectorBackend(tmp_path / "v", verify_checksums=False)
    assert backend.needs_rebuild and "does not match" in str(backend.corruption)


@pytest.mark.parametrize(
    ("column", "value", "why"),
    [(4, 0, "names a row twice"), (4, 99, "names rows it lacks"), (3, 10**6, "do not fit")],
)
def test_a_damaged_uri_order_is_corrupt(tmp_path: Path, column: int, value: int, why: str) -> None:
    """The keys file's URI order (which rows, in URI order) and line ends are checked when
    it is read: a URI looked up in a damaged one would be missed, its vector kept."""
    build(tmp_path / "v")
    keys = data_file(tmp_path / "v", "keys")
    raw = bytearray(keys.read_bytes())
    start = raw.index(b"\n") + 1
    at = start + 8 * 10 * column + 8  # the column's second value
    raw[at : at + 8] = value.to_bytes(8, "little")
    keys.write_bytes(bytes(raw))
    with pytest.raises(storage.CorruptIndexError, match=why):
        storage.read_keys(keys)
    backend = FaissVectorBackend(tmp_path / "v", verify_checksums=False)
    assert backend.needs_rebuild and why in str(backend.corruption)


def test_entries_that_disagree_with_the_keys_are_found_when_read(tmp_path: Path) -> None:
    """An entries line that is not the one the keys point at: set aside at first read."""
    data = build(tmp_path / "v")
    entries = data_file(tmp_path / "v", "entries")
    lines = entries.read_text().splitlines()
    lines[0], lines[1] = lines[1], lines[0]
    entries.write_text("\n".join(lines) + "\n")
    backend = FaissVectorBackend(tmp_path / "v", verify_checksums=False)
    assert backend.count() == 10 and not backend.needs_rebuild
    assert backend.similarity_search(data[0], scope=frozenset({A}), top_k=3) == []
    assert backend.needs_rebuild and "does not match" in str(backend.corruption)
    assert backend.count() == 0 and not (tmp_path / "v" / storage.MANIFEST_NAME).exists()


def test_a_newer_format_is_refused_not_destroyed(tmp_path: Path) -> None:
    """A manifest from a newer version is a configuration error; nothing is moved."""
    build(tmp_path / "v")
    data = manifest(tmp_path / "v")
    data["format_version"] = storage.FORMAT_VERSION + 1
    (tmp_path / "v" / storage.MANIFEST_NAME).write_text(json.dumps(data))
    with pytest.raises(ConfigurationError, match="format version"):
        FaissVectorBackend(tmp_path / "v")
    assert not list((tmp_path / "v").glob("*.corrupt"))


# -- crashes while saving -------------------------------------------------------------------------


def files_of(path: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(path.iterdir()) if p.name != ".lock"}


def test_a_crash_while_writing_the_index_keeps_the_previous_files(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """FAISS failing halfway through a write leaves the last commit intact and loadable."""
    data = build(tmp_path / "v")
    before = files_of(tmp_path / "v")
    real_write = faiss.write_index

    def crash_midway(index: Any, filename: str) -> None:
        real_write(index, filename)
        with open(filename, "r+b") as handle:
            handle.truncate(100)
        raise RuntimeError("disk full")

    backend = FaissVectorBackend(tmp_path / "v", delta_min=0, delta_ratio=0)  # compacts
    backend.delete_uris(["n#0", "n#1"])
    backend.add([EmbeddingChunk("new#0", "new")], vectors(1, seed=5), resource_id=A)
    monkeypatch.setattr(faiss, "write_index", crash_midway)
    with pytest.raises(RuntimeError, match="disk full"):
        backend.commit()
    assert files_of(tmp_path / "v") == before, "no partial or temporary file may remain"
    reopened = FaissVectorBackend(tmp_path / "v")
    assert (reopened.count(), reopened.needs_rebuild) == (10, False)
    assert reopened.similarity_search(data[0], scope=frozenset({A}), top_k=1)[0].uko_uri == "n#0"
    monkeypatch.setattr(faiss, "write_index", real_write)
    backend.commit()
    assert FaissVectorBackend(tmp_path / "v").count() == 9


def test_a_crash_before_the_manifest_is_replaced_keeps_the_previous_commit(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Data files written but manifest not yet replaced: the old manifest still rules."""
    build(tmp_path / "v")
    before = files_of(tmp_path / "v")

    def crash(path: Path, text: str) -> None:
        raise OSError("power cut")

    backend = FaissVectorBackend(tmp_path / "v")
    backend.delete_uris(["n#0"])
    monkeypatch.setattr(storage, "atomic_write_text", crash)
    with pytest.raises(OSError, match="power cut"):
        backend.commit()
    assert files_of(tmp_path / "v") == before
    assert FaissVectorBackend(tmp_path / "v").count() == 10


def test_leftover_temporary_files_are_ignored_and_cleaned(tmp_path: Path) -> None:
    """Files a killed process left behind do not disturb loading and go at the next commit."""
    build(tmp_path / "v")
    (tmp_path / "v" / "index-9-deadbeef.faiss.tmp").write_bytes(b"partial")
    (tmp_path / "v" / "manifest.json.1234.tmp").write_text("{")
    backend = FaissVectorBackend(tmp_path / "v")
    assert backend.count() == 10 and not backend.needs_rebuild
    backend.delete_uris(["n#3"])
    backend.commit()
    assert not list((tmp_path / "v").glob("*.tmp"))


# -- options --------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "options",
    [{"index_type": "ivf"}, {"hnsw_threshold": 0}, {"tombstone_ratio": 0}, {"dimensions": 3}],
    ids=["index-type", "threshold", "ratio", "typo"],
)
def test_bad_options_are_configuration_errors(tmp_path: Path, options: dict[str, Any]) -> None:
    """Invalid or misspelt options fail at open with a ConfigurationError."""
    with pytest.raises(ConfigurationError):
        FaissVectorBackend(tmp_path / "v", **options)
