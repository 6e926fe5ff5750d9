"""Identifier-aware text: ``parseHTTPRequest``, ``parse_http_request`` and "http request" meet.

Tantivy's Rust-side regex tokenizer has no look-ahead (so it cannot split an
acronym from the word after it) and is several times slower than its simple
tokenizer, so identifiers are split here, in Python, and the index uses the
fast ``simple`` tokenizer (split on anything not alphanumeric, lower-cased):

* short fields (name, qualified name, signature, path) get the original text
  plus, for every compound identifier, its lower-case sub-words and their
  concatenation (``parse http request parsehttprequest``);
* long fields (docstring, body) only get a space inserted at camel-case and
  acronym boundaries (``parse HTTP Request``), which is cheap enough for
  hundreds of megabytes;
* queries get the same sub-words plus the concatenation of each adjacent pair,
  so "http request" also finds the body token of ``HTTPRequest`` and
  "utf 8" the token ``utf8``.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from itertools import pairwise

__all__ = [
    "MAX_PAIRED_WORDS",
    "MAX_QUERY_WORDS",
    "NestedTextSplitter",
    "expand_identifiers",
    "identifier_key",
    "query_variants",
    "split_camel_case",
    "subwords",
]

#: Words of a query beyond this are ignored (a pasted file is not a query).
MAX_QUERY_WORDS = 32
#: Queries of more words get no adjacent-pair joins.
MAX_PAIRED_WORDS = 6

_WORD = re.compile(r"\w+")
_ASCII_PART = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|[0-9]+")
#: An upper-case letter that starts a new part: after a lower-case letter or digit
#: (``getHttp``), or ending an acronym (``HTTPResponse``). Led by ``[A-Z]`` so the
#: regex engine skips ahead to capitals: twice as fast as trying every position.
_PART_START = re.compile(r"[A-Z](?:(?<=[a-z0-9][A-Z])|(?<=[A-Z][A-Z])(?=[a-z]))")
_NOT_ALNUM = re.compile(r"[\W_]+")

_cache: dict[str, tuple[str, ...]] = {}
_CACHE_LIMIT = 200_000


def subwords(word: str) -> tuple[str, ...]:
    """Lower-case parts of one identifier: ``ParseHTTPRequest2`` -> parse, http, request, 2."""
    cached = _cache.get(word)
    if cached is not None:
        return cached
    if word.isascii():
        parts = tuple(p.lower() for p in _ASCII_PART.findall(word))
    else:
        parts = tuple(p.lower() for p in word.split("_") if p)
    if len(_cache) >= _CACHE_LIMIT:
        _cache.clear()
    _cache[word] = parts
    return parts


def _is_plain(word: str) -> bool:
    """True for words that split into themselves: ``parse``, ``HTTP``, ``Request``."""
    return word.isalpha() and (word.islower() or word.isupper() or word[1:].islower())


_extras_cache: dict[str, tuple[str, ...]] = {}


def _extras(word: str) -> tuple[str, ...]:
    """What :func:`expand_identifiers` adds for one word: its sub-words and their join."""
    extras = _extras_cache.get(word)
    if extras is None:
        parts = () if _is_plain(word) else subwords(word)
        extras = (*parts, "".join(parts)) if len(parts) > 1 else ()
        if len(_extras_cache) >= _CACHE_LIMIT:
            _extras_cache.clear()
        _extras_cache[word] = extras
    return extras


def expand_identifiers(text: str) -> str:
    """``text`` plus the sub-words and joined form of every compound identifier in it."""
    extras: list[str] = []
    for word in dict.fromkeys(_WORD.findall(text)):
        extras.extend(_extras(word))
    return f"{text} {' '.join(extras)}" if extras else text


def split_camel_case(text: str) -> str:
    """Space out camel-case and acronym boundaries: ``getHTTPResponse`` -> ``get HTTP Response``."""
    return _PART_START.sub(_spaced, text)


def _spaced(match: re.Match[str]) -> str:
    # A function, not the template r" \g<0>": Python 3.11 expands a template match by
    # match in Python, a quarter slower over a corpus's bodies.
    return " " + match.group()


class NestedTextSplitter:
    """:func:`split_camel_case` for the nested texts of one file.

    A module's text holds its classes', a class's its methods': every line is
    split once and looked up when it comes again (lines never change, as no
    boundary spans a newline).
    """

    def __init__(self) -> None:
        self._lines: dict[str, str] = {}

    def __call__(self, text: str) -> str:
        lines = text.split("\n")
        known = self._lines
        try:
            return "\n".join([known[line] for line in lines])
        except KeyError:
            spaced = split_camel_case(text)
            known.update(zip(lines, spaced.split("\n"), strict=True))
            return spaced


def identifier_key(text: str) -> str:
    """Case- and separator-free identifier: ``parse_HTTP-Request`` -> ``parsehttprequest``."""
    return _NOT_ALNUM.sub("", text).lower()


def query_variants(query: str) -> tuple[str, str, list[str]]:
    """Split a user query into (primary text, secondary text, identifier keys).

    The primary text holds the words, their sub-words and joined forms; the
    secondary text the concatenations of adjacent sub-words, which are weaker
    evidence. The keys are candidates for an exact identifier match.
    """
    words = _WORD.findall(query)[:MAX_QUERY_WORDS]
    sequence: list[str] = []
    primary: list[str] = list(words)
    for word in words:
        parts = subwords(word)
        sequence.extend(parts)
        primary.extend(parts)
        if len(parts) > 1:
            primary.append("".join(parts))
    # Pairs help short, identifier-like queries; in prose they are noise and cost.
    pairs = [a + b for a, b in pairwise(sequence)] if len(words) <= MAX_PAIRED_WORDS else []
    keys = _unique(identifier_key(w) for w in words)
    if 1 < len(words) <= 5:
        keys.append("".join(sequence))
    return " ".join(primary), " ".join(pairs), [k for k in keys if k]


def _unique(items: Iterable[str]) -> list[str]:
    return list(dict.fromkeys(items))
