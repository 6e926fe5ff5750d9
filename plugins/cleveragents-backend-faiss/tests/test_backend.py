"""FaissVectorBackend behaviour: structure choice, updates, scope, ranking, persistence."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

from cleveragents.errors import ValidationError
from cleveragents.protocols import EmbeddingChunk

pytest.importorskip(
    "cleveragents_backend_faiss", reason="cleveragents-backend-faiss is not installed"
)
from cleveragents_backend_faiss.backend import FaissVectorBackend

DIM = 16
A, B = "01HRESOURCEAAAAAAAAAAAAAAA", "01HRESOURCEBBBBBBBBBBBBBBB"


def unit(rows: np.ndarray) -> np.ndarray:
    return (rows / np.linalg.norm(rows, axis=1, keepdims=True)).astype(np.float32)


def random_vectors(count: int, seed: int = 0, dim: int = DIM) -> np.ndarray:
    return unit(np.random.default_rng(seed).standard_normal((count, dim)))


def chunks(prefix: str, count: int) -> list[EmbeddingChunk]:
    return [
        EmbeddingChunk(f"{prefix}#{i}", f"content {prefix} {i}", {"n": str(i)})
        for i in range(count)
    ]


def open_backend(path: Path, **options: Any) -> FaissVectorBackend:
    return FaissVectorBackend(path, **options)


def uris(results: list[Any]) -> list[str]:
    return [r.uko_uri for r in results]


# -- exact vs approximate -------------------------------------------------------------------------


def test_auto_uses_flat_below_the_threshold_and_hnsw_above(tmp_path: Path) -> None:
    """``auto`` switches to HNSW at the threshold and back to flat below half of it."""
    backend = open_backend(tmp_path / "v", hnsw_threshold=200)
    backend.add(chunks("a", 150), random_vectors(150), resource_id=A)
    assert backend.index_type == "flat"
    backend.add(chunks("b", 60), random_vectors(60, seed=1), resource_id=B)
    assert backend.index_type == "hnsw"
    backend.delete_resource(A)
    assert backend.index_type == "flat"
    assert backend.count() == 60


@pytest.mark.parametrize("pinned", ["flat", "hnsw"])
def test_a_pinned_index_type_is_kept_at_any_size(tmp_path: Path, pinned: str) -> None:
    """``index_type="flat"|"hnsw"`` overrides the size rule."""
    backend = open_backend(tmp_path / "v", index_type=pinned, hnsw_threshold=10)
    backend.add(chunks("a", 50), random_vectors(50), resource_id=A)
    assert backend.index_type == pinned


def test_reopening_with_another_pinned_type_converts_the_index(tmp_path: Path) -> None:
    """A stored flat index opened with ``index_type="hnsw"`` becomes HNSW, same vectors."""
    vectors = random_vectors(40)
    with open_backend(tmp_path / "v", index_type="flat") as backend:
        backend.add(chunks("a", 40), vectors, resource_id=A)
    with open_backend(tmp_path / "v", index_type="hnsw") as backend:
        assert backend.index_type == "hnsw"
        hits = backend.similarity_search(vectors[7], scope=frozenset({A}), top_k=1)
        assert uris(hits) == ["a#7"]


# -- updates --------------------------------------------------------------------------------------


@pytest.mark.parametrize("index_type", ["flat", "hnsw"])
def test_reindexing_a_uri_replaces_its_vector(tmp_path: Path, index_type: str) -> None:
    """Adding a known URI again replaces its vector and content; the count stays."""
    backend = open_backend(tmp_path / "v", index_type=index_type)
    old, new = random_vectors(2, seed=3)
    backend.add([EmbeddingChunk("n#1", "old body")], [old], resource_id=A)
    backend.add([EmbeddingChunk("n#1", "new body")], [new], resource_id=A)
    assert backend.count() == 1
    best = backend.similarity_search(new, scope=frozenset({A}), top_k=5)
    assert [(r.uko_uri, r.content) for r in best] == [("n#1", "new body")]
    assert best[0].score == pytest.approx(1.0, abs=1e-5)


def test_a_batch_with_a_repeated_uri_keeps_the_last(tmp_path: Path) -> None:
    """Within one ``add`` the last chunk of a URI wins."""
    backend = open_backend(tmp_path / "v")
    vectors = random_vectors(2, seed=4)
    backend.add(
        [EmbeddingChunk("n#1", "first"), EmbeddingChunk("n#1", "second")], vectors, resource_id=A
    )
    assert backend.count() == 1
    assert backend.similarity_search(vectors[1], scope=frozenset({A}))[0].content == "second"


def test_a_uri_moved_to_another_resource_leaves_the_first(tmp_path: Path) -> None:
    """Re-indexing a URI under another resource moves it; counts follow."""
    backend = open_backend(tmp_path / "v")
    vector = random_vectors(1)
    backend.add([EmbeddingChunk("n#1", "x")], vector, resource_id=A)
    backend.add([EmbeddingChunk("n#1", "x")], vector, resource_id=B)
    assert (backend.count(A), backend.count(B)) == (0, 1)
    assert backend.similarity_search(vector[0], scope=frozenset({A})) == []


def test_removing_a_resource_on_flat_does_not_rebuild(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Flat indexes remove ids in place: no rebuild, the other resource's vectors stay."""
    backend = open_backend(tmp_path / "v", index_type="flat")
    backend.add(chunks("a", 30), random_vectors(30), resource_id=A)
    backend.add(chunks("b", 20), random_vectors(20, seed=1), resource_id=B)

    def no_rebuild(*args: Any) -> None:
        raise AssertionError("a removal must not rebuild the index")

    monkeypatch.setattr(FaissVectorBackend, "_rebuild", no_rebuild)
    assert backend.delete_resource(A) == 30
    assert backend.stats()["tombstones"] == 0
    assert (backend.count(), backend.count(A), backend.count(B)) == (20, 0, 20)
    query = random_vectors(1, seed=1)[0]
    assert all(
        r.uko_uri.startswith("b#")
        for r in backend.similarity_search(query, scope=frozenset({A, B}))
    )
    assert backend.delete_uris(["b#0", "b#1", "unknown"]) == 2
    assert backend.count(B) == 18


def test_removing_on_hnsw_leaves_tombstones_until_compaction(tmp_path: Path) -> None:
    """HNSW removals are tombstones (searches skip them); commit compacts past the ratio."""
    backend = open_backend(
        tmp_path / "v",
        index_type="hnsw",
        tombstone_ratio=0.3,
        exact_scope_limit=0,
        delta_min=0,
        delta_ratio=0,  # every commit folds its changes into the base
    )
    vectors = random_vectors(100)
    backend.add(chunks("a", 100), vectors, resource_id=A)
    backend.commit()
    backend.delete_uris([f"a#{i}" for i in range(20)])
    assert backend.stats()["tombstones"] == 20
    found = uris(backend.similarity_search(vectors[0], scope=frozenset({A}), top_k=100))
    assert len(found) == 80 and "a#0" not in found
    backend.commit()
    assert backend.stats()["tombstones"] == 20, "20% is below the 30% ratio: no compaction yet"
    backend.delete_uris([f"a#{i}" for i in range(20, 40)])
    backend.commit()
    assert backend.stats()["tombstones"] == 0
    assert backend.count() == 60
    assert len(backend.similarity_search(vectors[50], scope=frozenset({A}), top_k=100)) == 60


# -- scope ----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("index_type", "exact_scope_limit"),
    [("flat", 20_000), ("flat", 0), ("hnsw", 20_000), ("hnsw", 0)],
    ids=["flat-exact", "flat-selector", "hnsw-exact", "hnsw-selector"],
)
def test_scope_returns_top_k_in_scope_even_when_others_are_closer(
    tmp_path: Path, index_type: str, exact_scope_limit: int
) -> None:
    """Out-of-scope vectors right next to the query never crowd out in-scope results."""
    backend = open_backend(
        tmp_path / "v", index_type=index_type, exact_scope_limit=exact_scope_limit
    )
    rng = np.random.default_rng(7)
    query = random_vectors(1, seed=8)[0]
    near = unit(query + 0.05 * rng.standard_normal((2000, DIM)))
    far = random_vectors(60, seed=9)
    backend.add(chunks("b", 2000), near, resource_id=B)
    backend.add(chunks("a", 60), far, resource_id=A)
    results = backend.similarity_search(query, scope=frozenset({A}), top_k=10)
    assert len(results) == 10
    assert all(r.uko_uri.startswith("a#") for r in results)
    assert all(r.metadata["resource_id"] == A for r in results)
    expected = np.argsort(-(far @ query))[:10]
    if index_type == "flat":
        assert uris(results) == [f"a#{i}" for i in expected]
    else:
        assert len(set(uris(results)) & {f"a#{i}" for i in expected}) >= 8


def test_top_k_larger_than_the_scope_returns_the_whole_scope(tmp_path: Path) -> None:
    """Asking for more than exists returns what exists, never out-of-scope filler."""
    backend = open_backend(tmp_path / "v")
    backend.add(chunks("a", 3), random_vectors(3), resource_id=A)
    backend.add(chunks("b", 50), random_vectors(50, seed=2), resource_id=B)
    results = backend.similarity_search(
        random_vectors(1, seed=5)[0], scope=frozenset({A}), top_k=20
    )
    assert sorted(uris(results)) == ["a#0", "a#1", "a#2"]


def test_empty_or_unknown_scopes_find_nothing(tmp_path: Path) -> None:
    """An empty scope or one naming no indexed resource returns []."""
    backend = open_backend(tmp_path / "v")
    backend.add(chunks("a", 3), random_vectors(3), resource_id=A)
    query = random_vectors(1)[0]
    assert backend.similarity_search(query, scope=frozenset()) == []
    assert backend.similarity_search(query, scope=frozenset({"01HNOTINDEXED"})) == []


# -- ranking --------------------------------------------------------------------------------------


@pytest.mark.parametrize("index_type", ["flat", "hnsw"])
def test_scores_are_cosine_descending_and_clipped_to_unit_range(
    tmp_path: Path, index_type: str
) -> None:
    """Scores equal clipped cosine similarity, in [0, 1], best first, ties by URI."""
    backend = open_backend(tmp_path / "v", index_type=index_type)
    raw = np.random.default_rng(11).standard_normal((40, DIM)) * 5.0  # not normalised on input
    backend.add(chunks("a", 40), raw, resource_id=A)
    query = np.random.default_rng(12).standard_normal(DIM)
    results = backend.similarity_search(query.tolist(), scope=frozenset({A}), top_k=40)
    assert len(results) == 40
    scores = [r.score for r in results]
    assert scores == sorted(scores, reverse=True)
    assert all(0.0 <= s <= 1.0 for s in scores)
    cosine = unit(raw) @ (query / np.linalg.norm(query))
    expected = {f"a#{i}": max(0.0, float(c)) for i, c in enumerate(cosine)}
    for result in results:
        assert result.score == pytest.approx(expected[result.uko_uri], abs=1e-5)
    assert min(scores) == 0.0, "negative similarities are clipped to 0"
    zero = [r.uko_uri for r in results if r.score == 0.0]
    assert zero == sorted(zero)


def test_min_score_drops_weak_matches(tmp_path: Path) -> None:
    """``min_score`` keeps only results at or above it."""
    backend = open_backend(tmp_path / "v")
    backend.add(chunks("a", 30), random_vectors(30), resource_id=A)
    results = backend.similarity_search(
        random_vectors(1, seed=3)[0], scope=frozenset({A}), top_k=30, min_score=0.2
    )
    assert results and all(r.score >= 0.2 for r in results)


def test_results_carry_content_and_metadata(tmp_path: Path) -> None:
    """A result returns the chunk's content, its metadata and its resource."""
    backend = open_backend(tmp_path / "v")
    vector = random_vectors(1)
    chunk = EmbeddingChunk("uko://a/x.py#f", "def f(): pass", {"path": "x.py", "depth": 9})
    backend.add([chunk], vector, resource_id=A)
    (result,) = backend.similarity_search(vector[0], scope=frozenset({A}))
    assert result.content == "def f(): pass"
    assert result.metadata == {"path": "x.py", "depth": "9", "resource_id": A}


# -- validation -----------------------------------------------------------------------------------


@pytest.mark.parametrize("embedding", [[], (), np.array([])])
def test_an_empty_embedding_is_a_value_error(tmp_path: Path, embedding: Any) -> None:
    """Empty embeddings raise ValueError (also a ValidationError for the CLI)."""
    backend = open_backend(tmp_path / "v")
    with pytest.raises(ValueError, match="non-empty") as caught:
        backend.similarity_search(embedding, scope=frozenset({A}))
    assert isinstance(caught.value, ValidationError)


@pytest.mark.parametrize("top_k", [0, -1, True, 2.5])
def test_a_non_positive_top_k_is_a_value_error(tmp_path: Path, top_k: Any) -> None:
    """top_k must be a positive int."""
    with pytest.raises(ValueError, match="top_k"):
        open_backend(tmp_path / "v").similarity_search(
            [1.0] * DIM, scope=frozenset({A}), top_k=top_k
        )


def test_a_wrong_dimension_names_both_dimensions(tmp_path: Path) -> None:
    """Querying or adding with the wrong dimension raises ValidationError naming both."""
    backend = open_backend(tmp_path / "v")
    backend.add(chunks("a", 2), random_vectors(2), resource_id=A)
    with pytest.raises(ValidationError, match=rf"has 5 dimensions.*has {DIM}"):
        backend.similarity_search([1.0] * 5, scope=frozenset({A}))
    with pytest.raises(ValidationError, match=rf"has 8 dimensions.*has {DIM}"):
        backend.add(chunks("c", 1), random_vectors(1, dim=8), resource_id=A)


def test_a_configured_dimension_is_checked_before_anything_is_stored(tmp_path: Path) -> None:
    """With ``dimension`` configured even an empty index rejects other sizes."""
    backend = open_backend(tmp_path / "v", embedder="hashing-ngram", dimension=DIM)
    with pytest.raises(ValidationError, match=rf"has 3 dimensions.*has {DIM}"):
        backend.similarity_search([1.0, 0.0, 0.0], scope=frozenset({A}))


@pytest.mark.parametrize(
    "bad", [[[float("nan")] * DIM], [[0.0] * DIM], [["x"] * DIM]], ids=["nan", "zero", "text"]
)
def test_unusable_vectors_are_rejected(tmp_path: Path, bad: Any) -> None:
    """NaN, zero-norm and non-numeric vectors never enter the index."""
    backend = open_backend(tmp_path / "v")
    with pytest.raises(ValidationError):
        backend.add(chunks("a", 1), bad, resource_id=A)
    assert backend.count() == 0


def test_add_checks_shapes_and_scope_types(tmp_path: Path) -> None:
    """Vectors must match the chunks one to one; scope must be a set, not a string."""
    backend = open_backend(tmp_path / "v")
    with pytest.raises(ValidationError, match="expected 3 vectors"):
        backend.add(chunks("a", 3), random_vectors(2), resource_id=A)
    with pytest.raises(ValidationError, match="resource_id"):
        backend.add(chunks("a", 1), random_vectors(1), resource_id="")
    with pytest.raises(ValidationError, match="scope"):
        backend.similarity_search([1.0] * DIM, scope=A)  # type: ignore[arg-type]


def test_index_embedding_needs_the_resource_in_metadata(tmp_path: Path) -> None:
    """A single document without a resource ULID could never be in scope: rejected."""
    backend = open_backend(tmp_path / "v")
    with pytest.raises(ValidationError, match="resource"):
        backend.index_embedding("p", "uko://x", [1.0] * DIM, {"path": "x.py"})
    backend.index_embedding("p", "uko://x", [1.0] * DIM, {"resource_ulid": A, "content": "body"})
    (hit,) = backend.similarity_search([1.0] * DIM, scope=frozenset({A}))
    assert (hit.uko_uri, hit.content) == ("uko://x", "body")
    backend.remove_embedding("p", "uko://x")
    assert backend.count() == 0


# -- persistence ----------------------------------------------------------------------------------


@pytest.mark.parametrize("index_type", ["flat", "hnsw"])
def test_a_committed_index_survives_reopening(tmp_path: Path, index_type: str) -> None:
    """Vectors, contents, resources and the embedder come back after reopening."""
    vectors = random_vectors(60)
    with open_backend(tmp_path / "v", index_type=index_type, embedder="hashing-ngram") as backend:
        backend.add(chunks("a", 40), vectors[:40], resource_id=A)
        backend.add(chunks("b", 20), vectors[40:], resource_id=B)
        backend.delete_uris(["a#0"])
        before = backend.similarity_search(vectors[5], scope=frozenset({A, B}), top_k=10)
    reopened = open_backend(tmp_path / "v", index_type=index_type)
    assert (reopened.count(), reopened.count(A), reopened.count(B)) == (59, 39, 20)
    assert reopened.embedder_name == "hashing-ngram"
    assert reopened.dimension == DIM
    after = reopened.similarity_search(vectors[5], scope=frozenset({A, B}), top_k=10)
    assert [r.uko_uri for r in after] == [r.uko_uri for r in before]
    assert [r.score for r in after] == pytest.approx([r.score for r in before], abs=1e-6)
    assert [(r.content, r.metadata) for r in after] == [(r.content, r.metadata) for r in before]
    assert reopened.similarity_search(vectors[0], scope=frozenset({A}), top_k=1)[0].uko_uri != "a#0"
    reopened.add(chunks("c", 1), random_vectors(1, seed=99), resource_id=A)
    assert reopened.count() == 60, "new ids never collide with stored ones"


def test_close_commits_unless_told_not_to(tmp_path: Path) -> None:
    """``close()`` persists writes; ``commit_on_close=False`` and ``rollback()`` drop them."""
    backend = open_backend(tmp_path / "v")
    backend.add(chunks("a", 3), random_vectors(3), resource_id=A)
    backend.close()
    assert open_backend(tmp_path / "v").count() == 3
    discarding = open_backend(tmp_path / "v", commit_on_close=False)
    discarding.add(chunks("b", 2), random_vectors(2), resource_id=B)
    discarding.close()
    rolled = open_backend(tmp_path / "v")
    rolled.delete_resource(A)
    rolled.rollback()
    assert rolled.count() == 3
    assert open_backend(tmp_path / "v").count() == 3


def test_a_failed_batch_in_a_with_block_is_rolled_back(tmp_path: Path) -> None:
    """The context manager commits on success and rolls back on an exception."""
    with open_backend(tmp_path / "v") as backend:
        backend.add(chunks("a", 2), random_vectors(2), resource_id=A)
    with pytest.raises(RuntimeError), open_backend(tmp_path / "v") as backend:
        backend.add(chunks("b", 5), random_vectors(5), resource_id=B)
        raise RuntimeError("indexer failed")
    assert open_backend(tmp_path / "v").count() == 2


def test_only_the_current_generation_stays_on_disk(tmp_path: Path) -> None:
    """Each commit replaces the files; older generations are removed."""
    backend = open_backend(tmp_path / "v", delta_min=0, delta_ratio=0)  # every commit compacts
    for round_ in range(3):
        backend.add(chunks(f"r{round_}", 2), random_vectors(2, seed=round_), resource_id=A)
        backend.commit()
    names = sorted(p.name for p in (tmp_path / "v").iterdir() if not p.name.startswith("."))
    assert len(names) == 4 and names[3] == "manifest.json"
    assert names[0].startswith("entries-3-") and names[1].startswith("index-3-")
    assert names[2].startswith("keys-3-")
    manifest = FaissVectorBackend.describe(tmp_path / "v")
    assert manifest is not None and manifest["count"] == 6 and manifest["generation"] == 3


def test_an_empty_index_searches_and_commits_cleanly(tmp_path: Path) -> None:
    """An empty index returns [] and writes nothing until it holds something."""
    backend = open_backend(tmp_path / "v")
    assert backend.similarity_search([0.5] * DIM, scope=frozenset({A})) == []
    assert backend.count() == 0 and backend.dimension is None
    backend.commit()
    backend.close()
    assert FaissVectorBackend.describe(tmp_path / "v") is None
    assert open_backend(tmp_path / "v").count() == 0


def test_clearing_persists_an_empty_index(tmp_path: Path) -> None:
    """``clear()`` + ``commit()`` leaves an empty index of the same dimension."""
    with open_backend(tmp_path / "v", embedder="e") as backend:
        backend.add(chunks("a", 3), random_vectors(3), resource_id=A)
    with open_backend(tmp_path / "v") as backend:
        backend.clear()
    reopened = open_backend(tmp_path / "v")
    assert (reopened.count(), reopened.dimension, reopened.embedder_name) == (0, DIM, "e")
    assert reopened.similarity_search([0.5] * DIM, scope=frozenset({A})) == []


def test_a_closed_backend_refuses_work(tmp_path: Path) -> None:
    """Using a backend after ``close()`` is an error, closing twice is not."""
    backend = open_backend(tmp_path / "v")
    backend.close()
    backend.close()
    with pytest.raises(Exception, match="closed"):
        backend.similarity_search([1.0] * DIM, scope=frozenset({A}))
