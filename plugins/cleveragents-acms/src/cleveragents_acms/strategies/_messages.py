"""Where the question's messages are written in the code.

An issue often quotes what the program printed: an exception's message, a
warning, a log line. That text is usually a string literal at the place that
must change (or close to it), so finding the literal is strong evidence for
its file. The text index only ranks words, so the nodes its search returns for
a message are read back and checked: the longest run of the message's words
that the code holds in the same order. A format string matches in parts
(``"Unknown format code %r for object"`` holds ``unknown format code`` of
``Unknown format code 'f' for object of type 'str'``), so runs, not the whole
message, are what counts.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from cleveragents.models.uko import DEPTH_FULL
from cleveragents_acms.strategies._support import file_of, safe_search
from cleveragents_acms.strategies.query import STOP_WORDS

if TYPE_CHECKING:
    from cleveragents.protocols.backends import BackendSet
    from cleveragents_acms.strategies.query import QueryAnalysis

__all__ = ["message_sites"]

_TOKEN = re.compile(r"[a-z0-9]+")
#: Messages checked, and the search hits read back per message.
_MESSAGES = 4
_HITS = 12
#: A run of fewer words is too common to mean anything; this many or more is certain.
_MIN_RUN = 3
_FULL_RUN = 6
_MAX_WORDS = 30


def message_sites(backends: BackendSet, analysis: QueryAnalysis) -> dict[str, float]:
    """File URI -> how surely one of its nodes holds a message of the question (0..1]."""
    if backends.nodes is None or not analysis.messages:
        return {}
    wanted: list[tuple[list[str], list[str]]] = []
    for message in analysis.messages[:_MESSAGES]:
        words = _TOKEN.findall(message.lower())[:_MAX_WORDS]
        if len(words) < _MIN_RUN:
            continue
        hits = safe_search(backends, " ".join(dict.fromkeys(words)), _HITS)
        wanted.append((words, [h.uri for h in hits]))
    uris = list(dict.fromkeys(u for _, found in wanted for u in found))
    if not uris:
        return {}
    nodes = backends.nodes.nodes(uris)
    texts: dict[str, str] = {}
    sites: dict[str, float] = {}
    for words, found in wanted:
        for uri in found:
            node = nodes.get(uri)
            if node is None:
                continue
            if uri not in texts:
                source = node.renderings.get(DEPTH_FULL, "") or node.rendering(DEPTH_FULL)
                texts[uri] = " " + " ".join(_TOKEN.findall(source.lower())) + " "
            run = _longest_run(words, texts[uri])
            if run >= _MIN_RUN:
                value = min(1.0, (run - _MIN_RUN + 1) / (_FULL_RUN - _MIN_RUN + 1))
                file_uri = file_of(uri)
                sites[file_uri] = max(sites.get(file_uri, 0.0), value)
    return sites


def _longest_run(words: list[str], text: str) -> int:
    """Most consecutive ``words`` found in order in ``text`` (not counting stop-word-only runs)."""
    best = 0
    for start in range(len(words) - _MIN_RUN + 1):
        if len(words) - start <= best:
            break
        length = max(best, _MIN_RUN - 1) + 1  # only a longer run than the best counts
        while start + length <= len(words) and _holds(text, words[start : start + length]):
            if any(w not in STOP_WORDS for w in words[start : start + length]):
                best = length
            length += 1
    return best


def _holds(text: str, words: list[str]) -> bool:
    return f" {' '.join(words)} " in text
