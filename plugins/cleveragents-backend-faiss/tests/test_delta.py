"""The log-structured layout: a base index written by compactions plus a small delta."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from cleveragents.protocols import EmbeddingChunk

pytest.importorskip(
    "cleveragents_backend_faiss", reason="cleveragents-backend-faiss is not installed"
)
import faiss

from cleveragents_backend_faiss import storage
from cleveragents_backend_faiss.backend import FaissVectorBackend

DIM = 8
A = "01HRESOURCEAAAAAAAAAAAAAAA"
B = "01HRESOURCEBBBBBBBBBBBBBBB"
#: Large bases are read lazily; these options make a small test index behave like one.
LAZY = {"full_checksum_bytes": 0}


def random_vectors(count: int, seed: int = 0) -> np.ndarray:
    rows = np.random.default_rng(seed).standard_normal((count, DIM))
    return (rows / np.linalg.norm(rows, axis=1, keepdims=True)).astype(np.float32)


def chunks(prefix: str, count: int, start: int = 0) -> list[EmbeddingChunk]:
    return [
        EmbeddingChunk(f"{prefix}#{i}", f"content {prefix} {i}", {"n": str(i)})
        for i in range(start, start + count)
    ]


def manifest(path: Path) -> dict[str, Any]:
    return json.loads((path / storage.MANIFEST_NAME).read_text())


def base_files(path: Path) -> dict[str, bytes]:
    files = manifest(path)["files"]
    return {
        files[k]["name"]: (path / files[k]["name"]).read_bytes()
        for k in ("index", "entries", "keys")
    }


def exact_top(live: dict[str, np.ndarray], query: np.ndarray, k: int) -> list[str]:
    names = sorted(live)
    scores = np.stack([live[n] for n in names]) @ query
    order = sorted(range(len(names)), key=lambda i: (-scores[i], names[i]))
    return [names[i] for i in order[:k]]


def committed_base(path: Path, count: int = 200, **options: Any) -> tuple[FaissVectorBackend, Any]:
    """A backend whose first ``count`` vectors (resource A) are a committed base."""
    vectors = random_vectors(count)
    backend = FaissVectorBackend(path, **options)
    backend.add(chunks("a", count), vectors, resource_id=A)
    backend.commit()
    assert "delta_vectors" not in manifest(path)["files"]
    return backend, vectors


def test_a_small_change_commits_a_delta_and_leaves_the_base_alone(tmp_path: Path) -> None:
    """Replacing one file's vectors writes only the delta; base files stay byte for byte."""
    backend, _ = committed_base(tmp_path / "v")
    assert FaissVectorBackend.check(tmp_path / "v") is None
    before = base_files(tmp_path / "v")
    backend.delete_uris([f"a#{i}" for i in range(5)])
    backend.add(chunks("a", 5), random_vectors(5, seed=7), resource_id=A)  # new vectors
    backend.commit()
    data = manifest(tmp_path / "v")
    assert data["format_version"] == 2 and data["count"] == 200 and data["base_count"] == 200
    assert {"delta_vectors", "delta_entries"} <= data["files"].keys()
    assert base_files(tmp_path / "v") == before
    assert len(list((tmp_path / "v").glob("delta-*"))) == 2


@pytest.mark.parametrize("index_type", ["flat", "hnsw"])
def test_searches_merge_base_and_delta_and_skip_removed_ids(
    tmp_path: Path, index_type: str
) -> None:
    """Top-k over base + delta equals the exact answer over the live vectors, before and
    after reopening; removed base vectors never come back."""
    options = {"index_type": index_type, "exact_scope_limit": 0, **LAZY}
    backend, vectors = committed_base(tmp_path / "v", **options)
    live = {f"a#{i}": vectors[i] for i in range(200)}
    replaced = random_vectors(10, seed=3)
    backend.add(chunks("a", 10), replaced, resource_id=A)  # replaces a#0..a#9
    backend.delete_uris([f"a#{i}" for i in range(10, 20)])
    extra = random_vectors(30, seed=4)
    backend.add(chunks("b", 30), extra, resource_id=B)
    for i in range(10):
        live[f"a#{i}"] = replaced[i]
    for i in range(10, 20):
        del live[f"a#{i}"]
    live.update({f"b#{i}": extra[i] for i in range(30)})
    backend.commit()
    assert backend.stats()["delta"] == 40
    reopened = FaissVectorBackend(tmp_path / "v", **options)
    assert not reopened.stats()["base_loaded"]
    assert (reopened.count(), reopened.count(A), reopened.count(B)) == (220, 190, 30)
    everything = frozenset({A, B})
    for seed in range(5):
        query = random_vectors(1, seed=100 + seed)[0]
        for handle in (backend, reopened):
            found = [r.uko_uri for r in handle.similarity_search(query, scope=everything, top_k=15)]
            assert found == exact_top(live, query, 15)
    removed = reopened.similarity_search(vectors[12], scope=frozenset({A}), top_k=190)
    assert len(removed) == 190 and not {r.uko_uri for r in removed} & {"a#12"}
    hit = reopened.similarity_search(replaced[3], scope=frozenset({A}), top_k=1)[0]
    assert (hit.uko_uri, hit.content, hit.metadata["n"]) == ("a#3", "content a 3", "3")


def test_scope_filtering_covers_both_parts(tmp_path: Path) -> None:
    """A scope sees its own vectors in base and delta, and top_k of them when that many exist."""
    backend, _ = committed_base(tmp_path / "v", exact_scope_limit=0, **LAZY)
    backend.add(chunks("b", 5), random_vectors(5, seed=5), resource_id=B)
    backend.add(chunks("a", 3, start=500), random_vectors(3, seed=6), resource_id=A)
    backend.commit()
    reopened = FaissVectorBackend(tmp_path / "v", exact_scope_limit=0, **LAZY)
    query = random_vectors(1, seed=9)[0]
    only_b = reopened.similarity_search(query, scope=frozenset({B}), top_k=10)
    assert sorted(r.uko_uri for r in only_b) == [f"b#{i}" for i in range(5)]
    only_a = reopened.similarity_search(query, scope=frozenset({A}), top_k=203)
    assert len(only_a) == 203 and all(r.metadata["resource_id"] == A for r in only_a)
    assert {"a#500", "a#501", "a#502"} <= {r.uko_uri for r in only_a}
    assert reopened.similarity_search(query, scope=frozenset({"01HNOTHERE"}), top_k=3) == []


@pytest.mark.parametrize("index_type", ["flat", "hnsw"])
def test_compaction_keeps_results_identical(tmp_path: Path, index_type: str) -> None:
    """Folding the delta into the base changes the files, not the answers."""
    backend, _ = committed_base(tmp_path / "v", index_type=index_type)
    backend.add(chunks("a", 20), random_vectors(20, seed=11), resource_id=A)
    backend.delete_uris([f"a#{i}" for i in range(50, 60)])
    backend.add(chunks("b", 15), random_vectors(15, seed=12), resource_id=B)
    backend.commit()
    queries = random_vectors(8, seed=13)
    scopes = [frozenset({A, B}), frozenset({A}), frozenset({B})]
    before = [
        [r.uko_uri for r in backend.similarity_search(q, scope=s, top_k=12)]
        for q in queries
        for s in scopes
    ]
    backend.compact()
    backend.commit()
    data = manifest(tmp_path / "v")
    assert "delta_vectors" not in data["files"] and data["format_version"] == 1
    assert backend.stats()["delta"] == 0
    reopened = FaissVectorBackend(tmp_path / "v")
    for handle in (backend, reopened):
        after = [
            [r.uko_uri for r in handle.similarity_search(q, scope=s, top_k=12)]
            for q in queries
            for s in scopes
        ]
        assert after == before
    assert reopened.count() == 205 and not list((tmp_path / "v").glob("delta-*"))


def test_the_delta_is_compacted_when_it_outgrows_its_share(tmp_path: Path) -> None:
    """Past ``delta_ratio`` of the base (and ``delta_min``) a commit writes the base whole."""
    backend, _ = committed_base(tmp_path / "v", delta_ratio=0.1, delta_min=5)
    backend.add(chunks("b", 15), random_vectors(15, seed=1), resource_id=B)
    backend.commit()
    assert "delta_vectors" in manifest(tmp_path / "v")["files"]
    backend.add(chunks("c", 10), random_vectors(10, seed=2), resource_id=B)
    backend.commit()  # 25 > 10% of 200
    data = manifest(tmp_path / "v")
    assert "delta_vectors" not in data["files"] and data["count"] == 225
    assert FaissVectorBackend(tmp_path / "v").count() == 225


def test_a_refresh_does_not_read_the_base_index(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Opening, replacing a file's vectors and committing never reads the big index file."""
    committed_base(tmp_path / "v", **LAZY)[0].close()

    def no_read(*args: Any) -> None:
        raise AssertionError("the base index must not be read")

    monkeypatch.setattr(faiss, "read_index", no_read)
    for round_ in range(3):
        backend = FaissVectorBackend(tmp_path / "v", **LAZY)
        backend.delete_uris([f"a#{i}" for i in range(round_ * 3, round_ * 3 + 3)])
        backend.add(chunks("a", 3, start=round_ * 3), random_vectors(3, seed=round_), resource_id=A)
        backend.commit()
        backend.close()
    monkeypatch.undo()
    reopened = FaissVectorBackend(tmp_path / "v", **LAZY)
    assert reopened.count() == 200 and manifest(tmp_path / "v")["base_count"] == 200
    query = random_vectors(3, seed=2)[2]
    assert reopened.similarity_search(query, scope=frozenset({A}), top_k=1)[0].uko_uri == "a#8"


def test_a_crash_while_writing_the_delta_keeps_the_previous_state(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A delta write that fails halfway leaves the previous commit, whole, and no stray files."""
    backend, _ = committed_base(tmp_path / "v")
    backend.add(chunks("b", 4), random_vectors(4, seed=1), resource_id=B)
    backend.commit()  # a first delta
    before = {p.name: p.read_bytes() for p in (tmp_path / "v").iterdir() if p.name != ".lock"}
    real = storage.write_delta_entries

    def crash_midway(path: Path, deleted: Any, entries: Any, updated: Any) -> None:
        real(path, deleted, entries, updated)
        with open(path, "r+b") as handle:
            handle.truncate(10)
        raise OSError("disk full")

    backend.delete_uris(["a#1", "b#0"])
    backend.add(chunks("c", 2), random_vectors(2, seed=2), resource_id=B)
    monkeypatch.setattr(storage, "write_delta_entries", crash_midway)
    with pytest.raises(OSError, match="disk full"):
        backend.commit()
    after = {p.name: p.read_bytes() for p in (tmp_path / "v").iterdir() if p.name != ".lock"}
    assert after == before
    reopened = FaissVectorBackend(tmp_path / "v")
    assert (reopened.count(), reopened.count(B), reopened.needs_rebuild) == (204, 4, False)
    monkeypatch.undo()
    backend.commit()
    assert FaissVectorBackend(tmp_path / "v").count() == 204


def test_a_corrupt_delta_is_set_aside(tmp_path: Path) -> None:
    """A damaged delta file is corruption like any other: set aside, flagged for a rebuild."""
    backend, _ = committed_base(tmp_path / "v")
    backend.add(chunks("b", 4), random_vectors(4, seed=1), resource_id=B)
    backend.commit()
    target = tmp_path / "v" / manifest(tmp_path / "v")["files"]["delta_vectors"]["name"]
    target.write_bytes(target.read_bytes()[:-8])
    reopened = FaissVectorBackend(tmp_path / "v")
    assert reopened.needs_rebuild and reopened.count() == 0
    assert FaissVectorBackend(tmp_path / "v").needs_rebuild, "the flag survives reopening"
    assert "corrupt" in (FaissVectorBackend.describe(tmp_path / "v") or {})


def test_a_corrupt_lazy_base_is_found_when_first_read(tmp_path: Path) -> None:
    """A big base is checked when read; damage then sets it aside and flags a rebuild."""
    committed_base(tmp_path / "v", **LAZY)[0].close()
    index = tmp_path / "v" / manifest(tmp_path / "v")["files"]["index"]["name"]
    raw = bytearray(index.read_bytes())
    raw[len(raw) // 2] ^= 0xFF
    index.write_bytes(bytes(raw))
    backend = FaissVectorBackend(tmp_path / "v", **LAZY)
    assert backend.count() == 200 and not backend.needs_rebuild
    assert backend.load() is False
    assert backend.needs_rebuild and "checksum" in str(backend.corruption)
    assert backend.count() == 0
    assert FaissVectorBackend(tmp_path / "v", **LAZY).needs_rebuild


def test_an_index_written_before_deltas_opens_and_gains_keys(tmp_path: Path) -> None:
    """Format 1 without a keys file (the old layout) opens unchanged; the next commit adds keys."""
    backend, vectors = committed_base(tmp_path / "v")
    backend.close()
    data = manifest(tmp_path / "v")
    (tmp_path / "v" / data["files"].pop("keys")["name"]).unlink()
    (tmp_path / "v" / storage.MANIFEST_NAME).write_text(json.dumps(data))
    old = FaissVectorBackend(tmp_path / "v")
    assert old.count() == 200 and not old.needs_rebuild
    hit = old.similarity_search(vectors[7], scope=frozenset({A}), top_k=1)[0]
    assert (hit.uko_uri, hit.content) == ("a#7", "content a 7")
    old.delete_uris(["a#0"])
    old.commit()
    assert "keys" in manifest(tmp_path / "v")["files"]
    again = FaissVectorBackend(tmp_path / "v", **LAZY)
    assert again.count() == 199
    hit = again.similarity_search(vectors[7], scope=frozenset({A}), top_k=1)[0]
    assert (hit.uko_uri, hit.content) == ("a#7", "content a 7")


def test_rollback_discards_pending_delta_writes(tmp_path: Path) -> None:
    """Writes after the last commit vanish on rollback; the committed delta stays."""
    backend, _ = committed_base(tmp_path / "v")
    backend.add(chunks("b", 2), random_vectors(2, seed=1), resource_id=B)
    backend.commit()
    backend.delete_resource(B)
    backend.delete_uris(["a#5"])
    backend.rollback()
    assert (backend.count(), backend.count(B)) == (202, 2)


def test_keys_survive_uris_with_line_breaks(tmp_path: Path) -> None:
    """The keys file stores URIs one per line, or as JSON when one holds a line break."""
    backend = FaissVectorBackend(tmp_path / "v", **LAZY)
    odd = [EmbeddingChunk("odd\nuri", "first"), EmbeddingChunk("plain", "second")]
    backend.add(odd, random_vectors(2), resource_id=A)
    backend.commit()
    reopened = FaissVectorBackend(tmp_path / "v", **LAZY)
    hit = reopened.similarity_search(random_vectors(2)[0], scope=frozenset({A}), top_k=1)[0]
    assert (hit.uko_uri, hit.content) == ("odd\nuri", "first")
    assert reopened.delete_uris(["plain"]) == 1 and reopened.count() == 1


def test_a_few_uris_are_found_in_the_keys_files_uri_order(tmp_path: Path) -> None:
    """The keys file lists the rows in URI order: a reopened index finds a few URIs by
    binary search (non-ASCII ones among them, in the order str comparison gives), without
    a map of every URI, and what it removes and adds reads back as with the map."""
    words = ["zeta", "Äpfel", "alpha", "ünd", "b", "ß"] * 40
    names = [f"r/{word}#{i}" for i, word in enumerate(words)]
    backend = FaissVectorBackend(tmp_path / "v", **LAZY)
    vectors = random_vectors(len(names))
    backend.add([EmbeddingChunk(n, f"content {n}") for n in names], vectors, resource_id=A)
    backend.commit()
    keys = storage.read_keys(next((tmp_path / "v").glob("keys-*.bin")))
    column = keys._uris
    assert isinstance(column, storage.UriColumn)
    assert [column[int(row)] for row in column._by_uri] == sorted(names)
    assert all(column.row_of(n) == row for row, n in enumerate(names))
    assert column.row_of("r/zeta#") == column.row_of("") == column.row_of("zzz") == -1

    reopened = FaissVectorBackend(tmp_path / "v", **LAZY)
    assert reopened.delete_uris([names[1], names[3], "r/none#0"]) == 2
    assert reopened.delete_uris([names[1]]) == 0  # gone already
    reopened.add([EmbeddingChunk(names[3], "again")], vectors[3:4], resource_id=B)
    assert reopened.update_metadata({names[3]: {"n": "3"}, names[1]: {"n": "1"}}) == {names[1]}
    assert reopened._uri_map is None
    reopened.commit()
    again = FaissVectorBackend(tmp_path / "v", **LAZY)
    assert (again.count(A), again.count(B)) == (len(names) - 2, 1)
    hit = again.similarity_search(vectors[3], scope=frozenset({B}), top_k=1)[0]
    assert (hit.uko_uri, hit.content, hit.metadata["n"]) == (names[3], "again", "3")
    # Many URIs at once: the map of them all is derived instead, with the same answer.
    assert again.delete_uris(names[:100]) == 99 and again._uri_map is not None
    assert again.count() == len(names) - 100  # names[1] went before, names[3] came back


def test_keys_written_before_the_uri_order_still_open(tmp_path: Path) -> None:
    """A keys file with only ids, owners, offsets and the URI lines (as written before
    the URI order) opens; URIs are then found through the map of them all."""
    _, vectors = committed_base(tmp_path / "v", count=100, **LAZY)
    keys = next((tmp_path / "v").glob("keys-*.bin"))
    raw = keys.read_bytes()
    end = raw.index(b"\n")
    header = json.loads(raw[:end])
    assert header.pop("uri_index") is True
    width = 8 * header["count"]
    start = end + 1
    old = json.dumps(header).encode() + b"\n" + raw[start : start + 3 * width]
    keys.write_bytes(old + raw[start + 5 * width :])
    data = manifest(tmp_path / "v")
    data["files"]["keys"]["size"] = keys.stat().st_size
    (tmp_path / "v" / storage.MANIFEST_NAME).write_text(json.dumps(data))
    reopened = FaissVectorBackend(tmp_path / "v", verify_checksums=False)
    assert not reopened.needs_rebuild and isinstance(reopened._entries._uris, list)
    assert reopened.delete_uris(["a#4"]) == 1 and reopened._uri_map is not None
    found = reopened.similarity_search(vectors[4], scope=frozenset({A}), top_k=100)
    assert len(found) == 99 and "a#4" not in {r.uko_uri for r in found}
    # The next commit (a delta) writes the keys again, with the order; the base's own
    # index and entries stay as they were.
    index_file = data["files"]["index"]["name"]
    reopened.commit()
    upgraded = manifest(tmp_path / "v")["files"]
    assert upgraded["keys"]["name"] != keys.name and not keys.exists()
    assert upgraded["index"]["name"] == index_file and "delta_vectors" in upgraded
    again = FaissVectorBackend(tmp_path / "v", **LAZY)
    assert isinstance(again._entries._uris, storage.UriColumn) and again.count() == 99
    assert again.delete_uris(["a#5", "a#4"]) == 1 and again._uri_map is None
    again.commit()
    assert manifest(tmp_path / "v")["files"]["keys"]["name"] == upgraded["keys"]["name"]
    last = FaissVectorBackend(tmp_path / "v", **LAZY)
    found = last.similarity_search(vectors[6], scope=frozenset({A}), top_k=100)
    assert sorted(r.uko_uri for r in found) == sorted(
        f"a#{i}" for i in range(100) if i not in (4, 5)
    )


def test_a_bulk_build_goes_straight_into_the_index(tmp_path: Path) -> None:
    """Before the first commit (or after reset()) a big delta joins the in-memory index."""
    backend = FaissVectorBackend(tmp_path / "v", delta_min=50)
    vectors = random_vectors(120)
    backend.add(chunks("a", 120), vectors, resource_id=A)
    assert backend.stats()["delta"] == 0
    backend.delete_uris(["a#3"])
    found = backend.similarity_search(vectors[3], scope=frozenset({A}), top_k=119)
    assert len(found) == 119 and "a#3" not in {r.uko_uri for r in found}
    backend.commit()
    backend.reset(embedder="other", dimension=DIM)
    backend.add(chunks("b", 60), vectors[:60], resource_id=B)
    assert backend.stats()["delta"] == 0 and backend.count() == 60
    backend.commit()
    reopened = FaissVectorBackend(tmp_path / "v")
    assert (reopened.count(), reopened.embedder_name) == (60, "other")
    assert reopened.similarity_search(vectors[7], scope=frozenset({B}), top_k=1)[0].uko_uri == "b#7"


def _settle(path: Path) -> None:
    """Date the index's data files a minute back, as files left alone since are."""
    import os
    import time

    past = time.time() - 60
    for data in path.iterdir():
        os.utime(data, (past, past))


@pytest.mark.parametrize("structure", ["flat", "hnsw"])
def test_a_reopened_base_is_mapped_and_copied_before_it_changes(
    tmp_path: Path, structure: str
) -> None:
    """A base read again maps its file (a search of a large index starts at once); a
    compaction that folds the delta into it, or drops its tombstones, works on a copy of
    its own (FAISS aborts the process on a change to mapped vectors) and searches agree
    with exact scoring before and after."""
    options = {**LAZY, "index_type": structure}
    backend, vectors = committed_base(tmp_path / "v", **options)
    backend.close()
    reopened = FaissVectorBackend(tmp_path / "v", **options)
    assert reopened.load() and reopened._mapped
    live = {f"a#{i}": vectors[i] for i in range(200)}
    query = vectors[3]
    assert [
        r.uko_uri for r in reopened.similarity_search(query, scope=frozenset({A}), top_k=5)
    ] == exact_top(live, query, 5)
    reopened.delete_uris([f"a#{i}" for i in range(10)])
    added = random_vectors(20, seed=3)
    reopened.add(chunks("b", 20), added, resource_id=B)
    reopened.compact()
    reopened.commit()
    assert not reopened._mapped
    for i in range(10):
        del live[f"a#{i}"]
    live.update({f"b#{i}": added[i] for i in range(20)})
    assert [
        r.uko_uri for r in reopened.similarity_search(query, scope=frozenset({A, B}), top_k=5)
    ] == exact_top(live, query, 5)
    reopened.close()
    again = FaissVectorBackend(tmp_path / "v", **options)
    assert again.count() == 210
    assert [
        r.uko_uri for r in again.similarity_search(added[4], scope=frozenset({A, B}), top_k=3)
    ] == exact_top(live, added[4], 3)
    again.close()


def test_a_checksum_that_matched_is_not_taken_again_until_the_file_changes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The large base files are hashed the first time a process reads them and noted in
    ``verified.json``; the next processes trust the note while the file keeps its size,
    time stamp and inode. A file rewritten since is hashed again, and its damage found.
    A file modified in the last seconds is not noted (a write within the file system's
    time stamp granularity could not be told apart)."""
    committed_base(tmp_path / "v", **LAZY)[0].close()
    index = tmp_path / "v" / manifest(tmp_path / "v")["files"]["index"]["name"]
    fresh = FaissVectorBackend(tmp_path / "v", **LAZY)
    assert fresh.load()
    fresh.close()
    assert not (tmp_path / "v" / storage.VERIFIED_NAME).exists()  # too fresh to note
    _settle(tmp_path / "v")
    first = FaissVectorBackend(tmp_path / "v", **LAZY)
    assert first.load()
    first.close()
    noted = json.loads((tmp_path / "v" / storage.VERIFIED_NAME).read_text())
    assert index.name in noted
    hashed: list[str] = []
    real = storage.sha256_of
    monkeypatch.setattr(storage, "sha256_of", lambda path: hashed.append(path.name) or real(path))
    second = FaissVectorBackend(tmp_path / "v", **LAZY)
    assert second.load() and hashed == []
    second.close()
    raw = bytearray(index.read_bytes())
    raw[len(raw) // 2] ^= 0xFF
    index.write_bytes(bytes(raw))
    _settle(tmp_path / "v")  # the same size, but a new time stamp
    damaged = FaissVectorBackend(tmp_path / "v", **LAZY)
    assert damaged.load() is False and "checksum" in str(damaged.corruption)
    assert index.name in hashed


def test_a_commit_that_only_writes_the_delta_never_imports_faiss(tmp_path: Path) -> None:
    """Refreshing one file opens a large index and commits a delta: faiss's native library
    (about 70 ms to import) is left unloaded until the base is read."""
    committed_base(tmp_path / "v", **LAZY)[0].close()
    script = (
        "import sys, numpy as np\n"
        "from cleveragents.protocols import EmbeddingChunk\n"
        "from cleveragents_backend_faiss.backend import FaissVectorBackend\n"
        f"backend = FaissVectorBackend({str(tmp_path / 'v')!r}, full_checksum_bytes=0)\n"
        f"backend.delete_uris(['a#1'])\n"
        f"vector = np.ones((1, {DIM}), np.float32) / {DIM} ** 0.5\n"
        f"backend.add([EmbeddingChunk('a#1', 'one', {{}})], vector, resource_id={A!r})\n"
        "backend.commit()\n"
        "print('faiss' in sys.modules)\n"
        "assert backend.load()\n"
        "print('faiss' in sys.modules)\n"
    )
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["False", "True"]
    assert "delta_vectors" in manifest(tmp_path / "v")["files"]


def hit(backend: FaissVectorBackend, vector: np.ndarray) -> tuple[str, str, dict[str, str]]:
    found = backend.similarity_search(vector, scope=frozenset({A, B}), top_k=1)[0]
    metadata = {k: v for k, v in found.metadata.items() if k != "resource_id"}
    return found.uko_uri, found.content, metadata


def test_new_metadata_for_base_entries_goes_in_the_delta_without_their_vectors(
    tmp_path: Path,
) -> None:
    """A moved node's lines: the base stays byte for byte, the delta holds no vector, and
    searches (this process and a new one) return the new metadata with the old content."""
    backend, vectors = committed_base(tmp_path / "v", exact_scope_limit=0, **LAZY)
    before = base_files(tmp_path / "v")
    backend.add(chunks("b", 2), random_vectors(2, seed=5), resource_id=B)  # a delta row
    missing = backend.update_metadata(
        {"a#3": {"n": "moved"}, "a#4": {"line": "9"}, "b#1": {"n": "too"}, "nowhere": {"n": "x"}}
    )
    assert missing == {"nowhere"}
    with pytest.raises(ValueError, match="another resource"):
        backend.update_metadata({"a#3": {"resource_id": B}})
    assert backend.update_metadata({"a#4": {"line": "9"}}) == set()  # nothing new: no update
    backend.commit()
    data = manifest(tmp_path / "v")
    assert (data["format_version"], data["updated"], data["count"]) == (3, 2, 202)
    assert base_files(tmp_path / "v") == before
    assert np.load(tmp_path / "v" / data["files"]["delta_vectors"]["name"]).shape == (2, DIM)
    reopened = FaissVectorBackend(tmp_path / "v", exact_scope_limit=0, **LAZY)
    assert reopened.stats()["updated"] == 2 and not reopened.stats()["base_loaded"]
    for handle in (backend, reopened):
        assert hit(handle, vectors[3]) == ("a#3", "content a 3", {"n": "moved"})
        assert hit(handle, vectors[4]) == ("a#4", "content a 4", {"n": "4", "line": "9"})
        assert hit(handle, vectors[5]) == ("a#5", "content a 5", {"n": "5"})
        assert handle.similarity_search(vectors[3], scope=frozenset({A}), top_k=1)[0].score > 0.99
    assert reopened.count() == 202


def test_updated_entries_survive_removal_compaction_and_later_deltas(tmp_path: Path) -> None:
    """An updated entry removed is simply gone; one kept is written into the next base with
    its new metadata (format 1 again: no delta)."""
    backend, vectors = committed_base(tmp_path / "v", exact_scope_limit=0, **LAZY)
    backend.update_metadata({"a#1": {"n": "one"}, "a#2": {"n": "two"}})
    backend.commit()
    reopened = FaissVectorBackend(tmp_path / "v", exact_scope_limit=0, **LAZY)
    reopened.delete_uris(["a#2"])
    reopened.update_metadata({"a#1": {"n": "uno"}})
    reopened.commit()
    assert manifest(tmp_path / "v")["updated"] == 1
    again = FaissVectorBackend(tmp_path / "v", exact_scope_limit=0, **LAZY)
    assert hit(again, vectors[1]) == ("a#1", "content a 1", {"n": "uno"})
    nearest = again.similarity_search(vectors[2], scope=frozenset({A}), top_k=5)
    assert "a#2" not in {r.uko_uri for r in nearest}
    again.compact()
    again.commit()
    data = manifest(tmp_path / "v")
    assert data["format_version"] == 1 and "updated" not in data and data["count"] == 199
    last = FaissVectorBackend(tmp_path / "v", exact_scope_limit=0, **LAZY)
    assert hit(last, vectors[1]) == ("a#1", "content a 1", {"n": "uno"})


def test_a_delta_whose_updates_do_not_match_the_base_is_set_aside(tmp_path: Path) -> None:
    """An update naming an id the base lacks, or a count the manifest does not say, is a
    corrupt index: moved aside, flagged for a rebuild."""
    backend, _ = committed_base(tmp_path / "v", **LAZY)
    backend.update_metadata({"a#1": {"n": "one"}})
    backend.commit()
    data = manifest(tmp_path / "v")
    data["updated"] = 2
    (tmp_path / "v" / storage.MANIFEST_NAME).write_text(json.dumps(data))
    broken = FaissVectorBackend(tmp_path / "v", **LAZY)
    assert broken.needs_rebuild and "updates" in (broken.corruption or "")
    assert broken.count() == 0


def test_a_reopened_delta_is_searched_without_a_uri_map(tmp_path: Path) -> None:
    """An index whose delta removes, updates and adds entries opens without deriving its
    URI -> id map (a search and counts need none); the writes after it derive it, and what
    they commit reads back the same."""
    backend, vectors = committed_base(tmp_path / "v", exact_scope_limit=0, **LAZY)
    backend.delete_uris([f"a#{i}" for i in range(3)])
    backend.update_metadata({f"a#{i}": {"n": "moved"} for i in range(3, 40)})
    backend.add(chunks("b", 4), random_vectors(4, seed=3), resource_id=B)
    backend.commit()
    reopened = FaissVectorBackend(tmp_path / "v", exact_scope_limit=0, **LAZY)
    assert (reopened.count(A), reopened.count(B), reopened.count()) == (197, 4, 201)
    assert hit(reopened, vectors[5]) == ("a#5", "content a 5", {"n": "moved"})
    assert hit(reopened, vectors[50]) == ("a#50", "content a 50", {"n": "50"})
    assert reopened._uri_map is None
    assert reopened.delete_uris([]) == 0 and reopened._uri_map is None
    assert reopened.delete_uris(["a#5", "b#1", "a#0"]) == 2  # a#0 went before
    reopened.add(chunks("a", 1, start=6), random_vectors(1, seed=9), resource_id=A)
    assert reopened.update_metadata({"a#7": {"n": "again"}, "a#5": {"n": "gone"}}) == {"a#5"}
    reopened.commit()
    again = FaissVectorBackend(tmp_path / "v", exact_scope_limit=0, **LAZY)
    assert (again.count(A), again.count(B)) == (196, 3)
    found = again.similarity_search(vectors[7], scope=frozenset({A, B}), top_k=300)
    by_uri = {r.uko_uri: r for r in found}
    assert len(by_uri) == len(found) == 199
    assert not {"a#0", "a#5", "b#1"} & set(by_uri)
    assert by_uri["a#7"].metadata["n"] == "again" and by_uri["a#8"].metadata["n"] == "moved"
    assert hit(again, random_vectors(1, seed=9)[0])[0] == "a#6"  # its new vector


@pytest.mark.skipif(sys.platform == "win32", reason="keys files are mapped on POSIX only")
def test_a_mapped_keys_file_still_answers_after_a_compaction_removed_it(tmp_path: Path) -> None:
    """A reopened index maps its keys file (a refresh then reads the pages it looks at,
    not the whole file). Another writer's compaction replaces and removes that file; the
    reader still finds its URIs, and a new open reads the new file."""
    import mmap

    _, vectors = committed_base(tmp_path / "v", count=120, **LAZY)
    reader = FaissVectorBackend(tmp_path / "v", **LAZY)
    assert isinstance(reader._entries._uris._raw, mmap.mmap)  # type: ignore[union-attr]
    old_keys = next((tmp_path / "v").glob("keys-*.bin"))

    writer = FaissVectorBackend(tmp_path / "v", **LAZY)
    writer.add(chunks("b", 30), random_vectors(30, seed=3), resource_id=B)
    writer.delete_uris([f"a#{i}" for i in range(10)])
    writer.compact()
    writer.commit()
    assert not old_keys.exists()

    assert reader._ids_of(["a#5", "a#50", "b#0"]) == {"a#5": 5, "a#50": 50}
    hit = reader.similarity_search(vectors[50], scope=frozenset({A}), top_k=1)[0]
    assert hit.uko_uri == "a#50"
    again = FaissVectorBackend(tmp_path / "v", **LAZY)
    assert (again.count(A), again.count(B)) == (110, 30)
    assert again._ids_of(["a#5"]) == {}


@pytest.mark.parametrize("index_type", ["flat", "hnsw"])
def test_compacting_a_base_not_read_yet_keeps_its_vectors(tmp_path: Path, index_type: str) -> None:
    """``compact`` on an index opened lazily (its base not read) folds the delta into the
    whole base: before, a flat base's vectors were dropped and only the delta's written,
    so the next open set the index aside."""
    _, vectors = committed_base(tmp_path / "v", count=120, index_type=index_type, **LAZY)
    backend = FaissVectorBackend(tmp_path / "v", index_type=index_type, **LAZY)
    backend.add(chunks("b", 30), random_vectors(30, seed=3), resource_id=B)
    backend.delete_uris([f"a#{i}" for i in range(10)])
    backend.compact()
    backend.commit()
    again = FaissVectorBackend(tmp_path / "v", index_type=index_type)
    assert again.corruption is None
    assert (again.count(A), again.count(B)) == (110, 30)
    hit = again.similarity_search(vectors[50], scope=frozenset({A}), top_k=1)[0]
    assert hit.uko_uri == "a#50"
