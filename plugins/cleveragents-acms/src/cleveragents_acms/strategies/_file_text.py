"""Whole-file lexical evidence: the likeliest files read as one text each, and compared.

Search ranks nodes, and a file's node evidence is its best nodes. But the
place a fix goes is often where the question's words meet across a file: the
class it names, the helper its message comes from, the option it mentions,
each in a different function. So the likeliest files (by the other evidence)
are read whole and scored against every term of the question with BM25,
document frequencies taken among these files only: a word all of them use
says nothing about which one to change, a word only one of them has says
much. The result is a second opinion on the same candidates, not a way to
find new ones.
"""

from __future__ import annotations

import math
import re
import threading
from collections import Counter, OrderedDict
from functools import lru_cache
from typing import TYPE_CHECKING

from cleveragents.models.uko import DEPTH_FULL
from cleveragents_acms.strategies.query import parts_of

if TYPE_CHECKING:
    from cleveragents.protocols.backends import BackendSet
    from cleveragents_acms.strategies._evidence import Evidence
    from cleveragents_acms.strategies.query import QueryAnalysis

__all__ = ["read_likeliest", "whole_file_scores"]

#: How many of the likeliest files are read.
CANDIDATES = 30
_K1 = 1.2
_B = 0.75
#: A term's salience counts up to this much (one repeated name must not decide alone).
_MAX_SALIENCE = 3.0
_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def read_likeliest(backends: BackendSet, evidence: Evidence) -> None:
    """Read the likeliest files of ``evidence`` whole; their file scores then count it."""
    files = evidence.file_scores()
    likeliest = sorted(files, key=lambda f: (-files[f], f))[:CANDIDATES]
    evidence.file_text = whole_file_scores(backends, evidence.analysis, likeliest)


def whole_file_scores(
    backends: BackendSet, analysis: QueryAnalysis, files: list[str]
) -> dict[str, float]:
    """File URI -> BM25 of its whole text against the question's terms, among ``files``."""
    terms = analysis.terms()
    if backends.nodes is None or not files or not terms:
        return {}
    bags: dict[str, Counter[str]] = {}
    lengths: dict[str, int] = {}
    for uri, node in backends.nodes.nodes(files).items():
        text = node.renderings.get(DEPTH_FULL, "") or node.rendering(DEPTH_FULL)
        bags[uri], lengths[uri] = _BAGS.get(uri, text)
    if not bags:
        return {}
    frequency: Counter[str] = Counter()
    for bag in bags.values():
        frequency.update(t for t in terms if t in bag)
    count = len(bags)
    average = max(1.0, sum(lengths.values()) / count)
    scores: dict[str, float] = {}
    for uri, bag in bags.items():
        norm = _K1 * (1 - _B + _B * lengths[uri] / average)
        score = 0.0
        for term, weight in terms.items():
            tf = bag.get(term, 0)
            if tf:
                idf = math.log(1 + (count - frequency[term] + 0.5) / (frequency[term] + 0.5))
                score += min(weight, _MAX_SALIENCE) * idf * tf * (_K1 + 1) / (tf + norm)
        scores[uri] = score
    return scores


def _bag(text: str) -> tuple[Counter[str], int]:
    """Counts of the identifier parts of ``text``, and how many parts it has."""
    bag: Counter[str] = Counter()
    for word, count in Counter(_WORD.findall(text)).items():
        for part in _parts(word):
            bag[part] += count
    return bag, sum(bag.values())


class _BagCache:
    """The bags of the files read lately: the same files come up again and again.

    Keyed by URI and checked against the text's hash, so an edited file is read again.
    """

    def __init__(self, size: int) -> None:
        self.size = size
        self._bags: OrderedDict[str, tuple[int, Counter[str], int]] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, uri: str, text: str) -> tuple[Counter[str], int]:
        key = hash(text)
        with self._lock:
            known = self._bags.get(uri)
            if known is not None and known[0] == key:
                self._bags.move_to_end(uri)
                return known[1], known[2]
        bag, length = _bag(text)
        with self._lock:
            self._bags[uri] = (key, bag, length)
            while len(self._bags) > self.size:
                self._bags.popitem(last=False)
        return bag, length


_BAGS = _BagCache(128)


@lru_cache(maxsize=200_000)
def _parts(word: str) -> tuple[str, ...]:
    """``handle_mask`` -> handle, mask (one-letter parts say nothing)."""
    return tuple(p for p in parts_of(word) if len(p) > 1)
