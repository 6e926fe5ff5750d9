"""The peers measured in the same run: plain BM25 retrieval packed into the budget.

A small, self-contained Okapi BM25 (k1 = 1.2, b = 0.75, idf =
ln(1 + (N - df + 0.5) / (df + 0.5))) written here with numpy, independent of
the project's Tantivy backend, so the baselines share no code with what they
are compared with. Terms: every identifier-like word of the text, lower-cased,
plus the parts of snake_case / camelCase compounds, English stop words and
one-letter words removed, no stemming. The query is the issue text; each
distinct query term counts once.

Three baselines, all packed greedily in rank order into the same cl100k budget
(a unit that does not fit is skipped and the next one tried):

* ``bm25-files``: whole non-test ``.py`` files of the release;
* ``bm25-chunks``: the class and function/method nodes of the index (each
  node's full source, depth 9) and each module's top-level code (the file
  minus its top-level classes and functions), non-test files only; a chunk
  whose enclosing chunk is already packed is skipped (its text is already
  there);
* ``bm25-grouped``: the same ranked chunks grouped under their file, files in
  the order of their best chunk, each file's chunks in rank order.

Every packed unit costs the tokens of ``# path\\n`` plus its text; packing looks
at the best ``MAX_SCAN`` (3,000) units at most.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

__all__ = [
    "BM25",
    "Unit",
    "chunk_units",
    "file_units",
    "is_test_path",
    "pack_grouped",
    "pack_ranked",
    "terms",
]

_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*|[0-9]+")
_CAMEL = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|[0-9]+")
_STOP = frozenset(
    [
        "a",
        "an",
        "and",
        "are",
        "as",
        "at",
        "be",
        "but",
        "by",
        "for",
        "from",
        "has",
        "have",
        "if",
        "in",
        "into",
        "is",
        "it",
        "its",
        "no",
        "not",
        "of",
        "on",
        "or",
        "so",
        "such",
        "that",
        "the",
        "their",
        "then",
        "there",
        "these",
        "they",
        "this",
        "to",
        "was",
        "were",
        "will",
        "with",
        "we",
        "you",
        "i",
        "do",
        "does",
        "did",
        "can",
        "could",
        "should",
        "would",
        "my",
        "me",
        "our",
    ]
)
_MODULE_TYPES = frozenset({"uko-py:Module", "uko-py:Package"})
_TEST_DIRS = frozenset({"tests", "test"})
_CHUNK_TYPES = frozenset(
    {
        "uko-py:Module",
        "uko-py:Package",
        "uko-py:Class",
        "uko-py:Protocol",
        "uko-py:Enum",
        "uko-py:Function",
        "uko-py:AsyncFunction",
        "uko-py:Method",
        "uko-py:Property",
    }
)


#: Packing looks at no more than this many ranked units (enough to fill 32k tokens).
MAX_SCAN = 3000


def terms(text: str) -> list[str]:
    out: list[str] = []
    for word in _WORD.findall(text):
        low = word.lower()
        if len(low) > 1 and low not in _STOP:
            out.append(low)
        parts = [p for chunk in word.split("_") for p in _CAMEL.findall(chunk)]
        if len(parts) > 1:
            out.extend(p.lower() for p in parts if len(p) > 1 and p.lower() not in _STOP)
    return out


def is_test_path(path: str) -> bool:
    parts = path.split("/")
    name = parts[-1]
    return (
        any(p in _TEST_DIRS for p in parts[:-1])
        or name.startswith("test_")
        or name.endswith("_test.py")
        or name in ("conftest.py", "tests.py")
    )


@dataclass
class Unit:
    """One retrievable piece: a whole file or one node's source."""

    key: str
    path: str
    text: str
    parent: str | None = None
    tokens: int = -1


@dataclass
class BM25:
    units: Sequence[Unit]
    k1: float = 1.2
    b: float = 0.75
    _postings: dict[str, tuple[np.ndarray, np.ndarray]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        lengths = np.zeros(len(self.units), dtype=np.float64)
        postings: dict[str, tuple[list[int], list[int]]] = {}
        for index, unit in enumerate(self.units):
            counts = Counter(terms(unit.text + " " + unit.path))
            lengths[index] = sum(counts.values())
            for term, tf in counts.items():
                docs, tfs = postings.setdefault(term, ([], []))
                docs.append(index)
                tfs.append(tf)
        self._postings = {
            t: (np.asarray(d, dtype=np.int32), np.asarray(f, dtype=np.float64))
            for t, (d, f) in postings.items()
        }
        average = float(lengths.mean()) if len(lengths) else 1.0
        self._norm = self.k1 * (1 - self.b + self.b * lengths / max(average, 1e-9))

    def rank(self, query: str) -> list[tuple[int, float]]:
        """``(unit index, score)`` of every unit matching some query term, best first."""
        scores = np.zeros(len(self.units), dtype=np.float64)
        n = len(self.units)
        for term in set(terms(query)):
            posting = self._postings.get(term)
            if posting is None:
                continue
            docs, tfs = posting
            idf = math.log(1 + (n - len(docs) + 0.5) / (len(docs) + 0.5))
            scores[docs] += idf * tfs * (self.k1 + 1) / (tfs + self._norm[docs])
        hits = np.nonzero(scores)[0]
        order = hits[np.argsort(-scores[hits], kind="stable")]
        return [(int(i), float(scores[i])) for i in order]


def file_units(root: Path) -> list[Unit]:
    units = []
    for file in sorted(root.rglob("*.py")):
        if not file.is_file():
            continue
        relative = file.relative_to(root).as_posix()
        if is_test_path(relative):
            continue
        text = file.read_text(encoding="utf-8", errors="replace")
        units.append(Unit(relative, relative, text))
    return units


def chunk_units(nodes: Iterable[Any]) -> list[Unit]:
    """Module / class / function nodes of non-test Python files, as chunks.

    A class or function chunk is the node's full source (depth 9). A module's
    full source is its whole file, which the file baseline already measures, so
    its chunk is the module-level code only: the file without the lines of its
    top-level classes and functions (imports, constants, module docstring).
    """
    modules: dict[str, Any] = {}
    children: dict[str, list[tuple[int, int]]] = {}
    units = []
    for node in nodes:
        if node.uko_type not in _CHUNK_TYPES or not node.path.endswith(".py"):
            continue
        if is_test_path(node.path):
            continue
        if node.uko_type in _MODULE_TYPES:
            modules[node.uri] = node
            continue
        if node.parent:
            children.setdefault(node.parent, []).append((node.start_line, node.end_line))
        units.append(Unit(node.uri, node.path, node.rendering(9), node.parent))
    for uri, module in modules.items():
        lines = module.rendering(9).splitlines()
        covered = set()
        for start, end in children.get(uri, ()):
            covered.update(range(start - module.start_line, end - module.start_line + 1))
        text = "\n".join(line for i, line in enumerate(lines) if i not in covered).strip()
        if text:
            units.append(Unit(uri, module.path, text + "\n", module.parent))
    return units


def _cost(unit: Unit, count) -> int:
    if unit.tokens < 0:
        unit.tokens = count(f"# {unit.path}\n") + count(unit.text)
    return unit.tokens


def pack_ranked(
    units: Sequence[Unit], ranking: list[tuple[int, float]], budget: int, count
) -> list[tuple[Unit, float]]:
    """Greedy packing in rank order; skip what does not fit or is inside a packed unit."""
    packed: list[tuple[Unit, float]] = []
    keys: set[str] = set()
    by_key = {u.key: u for u in units}
    left = budget
    for index, score in ranking[:MAX_SCAN]:
        if left <= 0:
            break
        unit = units[index]
        if _inside_packed(unit, keys, by_key):
            continue
        cost = _cost(unit, count)
        if cost <= left:
            packed.append((unit, score))
            keys.add(unit.key)
            left -= cost
    return packed


def pack_grouped(
    units: Sequence[Unit], ranking: list[tuple[int, float]], budget: int, count
) -> list[tuple[Unit, float]]:
    """Chunks grouped under their file (files by best chunk), then packed like pack_ranked."""
    groups: dict[str, list[tuple[int, float]]] = {}
    for index, score in ranking:
        groups.setdefault(units[index].path, []).append((index, score))
    regrouped = [hit for hits in groups.values() for hit in hits]
    return pack_ranked(units, regrouped, budget, count)


def _inside_packed(unit: Unit, keys: set[str], by_key: dict[str, Unit]) -> bool:
    parent = unit.parent
    seen = 0
    while parent and seen < 50:
        if parent in keys:
            return True
        ancestor = by_key.get(parent)
        parent = ancestor.parent if ancestor else None
        seen += 1
    return False
