"""Tests as evidence: the tests a question matches point at the code they exercise.

A bug report describes behaviour, and so do the tests of that behaviour, often
in the same words ("squash", "index_together", "trailing underscore"). Test
files are weighed down as places to change (:meth:`._evidence.Evidence._prior`),
but among the likeliest files they still say where to look: each test file
there votes, with its own score, for the code files its test functions call,
in proportion to how often they call each. A call the indexer resolved counts
for its file; an unresolved one (``migrations.AddIndex``, through a package's
re-export) counts for the files that define that name, when at most two do.
Like the whole-file reading (:mod:`._file_text`), this is a second opinion on
the candidates, not a way to find new ones.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Mapping
from typing import TYPE_CHECKING

from cleveragents_acms.strategies._graph import DEPENDS_ON, path_of
from cleveragents_acms.strategies._support import file_of, is_test_path

if TYPE_CHECKING:
    from cleveragents_acms.strategies._graph import GraphView

__all__ = ["tested_code"]

#: How many of the likeliest files may vote (as many as are read whole).
VOTERS = 30
#: A test file votes when at least this share of its calls go to one code file.
FOCUS = 0.3
#: An unresolved name defined in more files than this says nothing about which one.
_MAX_DEFINING_FILES = 2
#: Names of one test file looked up, at most.
_MAX_NAMES = 300


def tested_code(
    view: GraphView, scores: Mapping[str, float], *, is_code: Mapping[str, bool]
) -> dict[str, float]:
    """File URI -> the likeliest test files' votes for it (``is_code``: the candidates a
    vote may go to: code, not tests or prose)."""
    likeliest = sorted(scores, key=lambda f: (-scores[f], f))[:VOTERS]
    votes: dict[str, float] = defaultdict(float)
    for test_file in likeliest:
        if scores[test_file] <= 0 or not is_test_path(path_of(test_file)):
            continue
        calls = _called_files(view, test_file)
        called = {f: n for f, n in calls.items() if is_code.get(f, False)}
        if not called or max(called.values()) < FOCUS * sum(calls.values()):
            continue  # the test file is about no one module: helpers, fixtures, many APIs
        total = sum(called.values())
        for file_uri, count in called.items():
            votes[file_uri] += scores[test_file] * count / total
    return dict(votes)


def _called_files(view: GraphView, test_file: str) -> dict[str, float]:
    """How often the test functions of ``test_file`` call into each other file.

    One file at a time: a name lookup returns a bounded number of rows, and the names
    of many files at once would let the common ones crowd the rare ones out.
    """
    tests = [u for u in view.descendants(test_file, levels=3) if _is_test_name(u)]
    called: dict[str, float] = defaultdict(float)
    if not tests:
        return called
    for links in view.neighbours(tests, predicates=(DEPENDS_ON,), incoming=False).values():
        for _, target, _ in links:
            called[file_of(target)] += 1
    unresolved: Counter[str] = Counter()
    for names in view.symbols(tests, predicates=(DEPENDS_ON,)).values():
        unresolved.update(n.rsplit(".", 1)[-1] for n in names)
    wanted = [n for n in unresolved if len(n) > 2][:_MAX_NAMES]
    for name, uris in view.by_name(wanted, limit=_MAX_DEFINING_FILES + 2).items():
        files = {file_of(u) for u in uris}
        if 0 < len(files) <= _MAX_DEFINING_FILES:
            for file_uri in files:
                called[file_uri] += unresolved[name] / len(files)
    called.pop(test_file, None)
    return called


def _is_test_name(uri: str) -> bool:
    """``…#FooTests.test_bar`` or ``…#test_bar``: what pytest and unittest collect."""
    return uri.rsplit("#", 1)[-1].rsplit(".", 1)[-1].startswith("test")
