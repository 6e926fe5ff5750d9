"""Stage 4: removes duplicate fragments, keeping the most relevant of each set of duplicates.

``context.fusion.dedup-strategy`` picks what counts as a duplicate:

``content-hash`` (default)
    the same UKO node with the same content (a node found by two strategies);
    the same node at two depths is not a duplicate, the depth resolver decides.
``uko-identity``
    the same UKO node, whatever its content.
``semantic``
    content-hash first, then any two fragments whose embeddings have a cosine
    similarity above 0.95 (copies of a function in two files). Needs an
    ``embed`` callable (texts -> L2-normalised vectors); without one the
    deduplicator uses content-hash and says so in the notes.

Survivors keep their input order.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Callable, Hashable, Sequence

from cleveragents.models.context import ContextFragment
from cleveragents_acms.pipeline._common import note, setting

__all__ = ["DEDUP_MODES", "ContentHashDeduplicator"]

DEDUP_MODES = ("content-hash", "uko-identity", "semantic")
_STAGE = "fragment-deduplicator"

Embed = Callable[[Sequence[str]], Sequence[Sequence[float]]]


class ContentHashDeduplicator:
    """Groups duplicates by a key (Strategy pattern per mode) and keeps the best of each group."""

    def __init__(
        self,
        *,
        mode: str | None = None,
        embed: Embed | None = None,
        similarity_threshold: float = 0.95,
    ) -> None:
        self.mode = mode
        self.embed = embed
        self.similarity_threshold = similarity_threshold

    def deduplicate(self, fragments: list[ContextFragment]) -> list[ContextFragment]:
        if not fragments:
            return []
        mode = str(setting(_STAGE, "dedup-strategy", self.mode))
        if mode not in DEDUP_MODES:
            note(f"unknown dedup strategy {mode!r}; using content-hash")
            mode = "content-hash"
        if mode == "semantic" and self.embed is None:
            note("semantic deduplication needs an embedder; using content-hash")
            mode = "content-hash"
        key = _by_node if mode == "uko-identity" else _by_node_and_content
        kept = _keep_best(list(enumerate(fragments)), key)
        if mode == "semantic":
            kept = self._semantic(kept)
        return [fragment for _, fragment in sorted(kept, key=lambda item: item[0])]

    def _semantic(
        self, kept: list[tuple[int, ContextFragment]]
    ) -> list[tuple[int, ContextFragment]]:
        """Greedy: most relevant first, dropping any fragment too similar to one already kept."""
        assert self.embed is not None
        try:
            vectors = [list(map(float, v)) for v in self.embed([f.content for _, f in kept])]
        except Exception as exc:
            note(f"semantic deduplication failed ({type(exc).__name__}); using content-hash")
            return kept
        if len(vectors) != len(kept):
            note("semantic deduplication: the embedder returned the wrong number of vectors")
            return kept
        order = sorted(range(len(kept)), key=lambda i: (-kept[i][1].relevance_score, kept[i][0]))
        closest = _closest(vectors)
        survivors: list[int] = []
        for i in order:
            if closest(i, survivors) <= self.similarity_threshold:
                survivors.append(i)
        return [kept[i] for i in survivors]


def _by_node(fragment: ContextFragment) -> Hashable:
    return fragment.uko_node


def _by_node_and_content(fragment: ContextFragment) -> Hashable:
    return fragment.uko_node, hashlib.sha256(fragment.content.encode("utf-8")).digest()


def _keep_best(
    indexed: list[tuple[int, ContextFragment]], key: Callable[[ContextFragment], Hashable]
) -> list[tuple[int, ContextFragment]]:
    """One fragment per key: the highest relevance_score, the first one among equals."""
    best: dict[Hashable, tuple[int, ContextFragment]] = {}
    for index, fragment in indexed:
        group = key(fragment)
        current = best.get(group)
        if current is None or fragment.relevance_score > current[1].relevance_score:
            best[group] = (index, fragment)
    return list(best.values())


def _closest(vectors: list[list[float]]) -> Callable[[int, list[int]], float]:
    """The highest cosine similarity of vector ``i`` to any of ``others`` (numpy when installed)."""
    try:
        import numpy as np
    except ImportError:  # pure Python, fine for a few hundred fragments
        norms = [math.sqrt(sum(x * x for x in v)) or 1.0 for v in vectors]

        def cosine(i: int, j: int) -> float:
            dot = sum(a * b for a, b in zip(vectors[i], vectors[j], strict=False))
            return dot / (norms[i] * norms[j])

        return lambda i, others: max((cosine(i, j) for j in others), default=-1.0)
    try:
        matrix = np.asarray(vectors, dtype=np.float32)
    except ValueError:  # ragged vectors
        return lambda i, others: -1.0
    if matrix.ndim != 2:
        return lambda i, others: -1.0
    lengths = np.linalg.norm(matrix, axis=1, keepdims=True)
    lengths[lengths == 0] = 1.0
    unit = matrix / lengths

    def closest(i: int, others: list[int]) -> float:
        return float(np.max(unit[others] @ unit[i])) if others else -1.0

    return closest
