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

from collections import defaultdict
from collections.abc import Mapping
from typing import TYPE_CHECKING

from cleveragents_acms.strategies._file_text import CANDIDATES
from cleveragents_acms.strategies._graph import (
    CONTAINS,
    DEPENDS_ON,
    NAME,
    SYMBOL,
    iri,
    literal,
    path_of,
)
from cleveragents_acms.strategies._support import is_test_path

if TYPE_CHECKING:
    from cleveragents_acms.strategies._graph import GraphView

__all__ = ["tested_code"]

#: How many of the likeliest files may vote: as many as are read whole.
VOTERS = CANDIDATES
#: A test file votes when at least this share of its calls go to one code file.
FOCUS = 0.3
#: An unresolved name defined in more files than this says nothing about which one.
_MAX_DEFINING_FILES = 2
#: The file (or unresolved symbol) a call's target is in: a node URI up to its ``#``.
_FILE_OF_TARGET = (
    f'BIND(STR(?target) AS ?t) BIND(IF(STRSTARTS(?t, "{SYMBOL}") || !CONTAINS(?t, "#"), ?t, '
    'STRBEFORE(?t, "#")) AS ?called)'
)


def tested_code(
    view: GraphView, scores: Mapping[str, float], *, is_code: Mapping[str, bool]
) -> dict[str, float]:
    """File URI -> the likeliest test files' votes for it (``is_code``: the candidates a
    vote may go to: code, not tests or prose)."""
    likeliest = sorted(scores, key=lambda f: (-scores[f], f))[:VOTERS]
    voters = [f for f in likeliest if scores[f] > 0 and is_test_path(path_of(f))]
    votes: dict[str, float] = defaultdict(float)
    for test_file, calls in _called_files(view, voters).items():
        called = {f: n for f, n in calls.items() if is_code.get(f, False)}
        if not called or max(called.values()) < FOCUS * sum(calls.values()):
            continue  # the test file is about no one module: helpers, fixtures, many APIs
        total = sum(called.values())
        for file_uri, count in called.items():
            votes[file_uri] += scores[test_file] * count / total
    return dict(votes)


def _called_files(view: GraphView, test_files: list[str]) -> dict[str, dict[str, float]]:
    """Test file -> how often its test functions (top level or in a class) call into each
    other file: two aggregate queries for all the files, so the store does the counting."""
    values = " ".join(i for i in map(iri, test_files) if i)
    if not values:
        return {}
    rows = view.select(
        f"SELECT ?file ?called (COUNT(*) AS ?calls) WHERE {{ VALUES ?file {{ {values} }} "
        f"?file <{CONTAINS}>/<{CONTAINS}>? ?test . ?test <{NAME}> ?name . "
        f'FILTER(STRSTARTS(?name, "test")) ?test <{DEPENDS_ON}> ?target . {_FILE_OF_TARGET} }} '
        "GROUP BY ?file ?called"
    )
    called: dict[str, dict[str, float]] = {}
    unresolved: list[tuple[str, str, int]] = []
    for row in rows or ():
        test_file, target = row.get("file", ""), row.get("called", "")
        count = int(row.get("calls") or 0)
        calls = called.setdefault(test_file, defaultdict(float))
        if target.startswith(SYMBOL):
            unresolved.append((test_file, target.rsplit(".", 1)[-1].removeprefix(SYMBOL), count))
        elif target != test_file:
            calls[target] += count
    defining = _defining_files(view, {name for _, name, _ in unresolved if len(name) > 2})
    for test_file, name, count in unresolved:
        for file_uri in defining.get(name, ()):
            if file_uri != test_file:
                called[test_file][file_uri] += count / len(defining[name])
    return called


def _defining_files(view: GraphView, names: set[str]) -> dict[str, list[str]]:
    """Name -> the files defining it, for the names at most two files define: what an
    unresolved ``pkg.Name`` (a package's re-export) most likely is."""
    if not names:
        return {}
    values = " ".join(literal(n) for n in sorted(names))
    rows = view.select(
        f"SELECT ?name (MIN(?f) AS ?first) (MAX(?f) AS ?last) WHERE {{ VALUES ?name {{ {values} }} "
        f"?node <{NAME}> ?name . BIND(STR(?node) AS ?t) "
        'BIND(IF(CONTAINS(?t, "#"), STRBEFORE(?t, "#"), ?t) AS ?f) } '
        f"GROUP BY ?name HAVING (COUNT(DISTINCT ?f) <= {_MAX_DEFINING_FILES})"
    )
    return {
        row["name"]: sorted({row["first"], row["last"]})
        for row in rows or ()
        if row.get("name") and row.get("first") and row.get("last")
    }
