"""File evidence of arce: quoted messages, whole-file reading, the reporter's own classes."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from cleveragents.models.uko import DEPTH_FULL
from cleveragents_acms.strategies._file_text import whole_file_scores
from cleveragents_acms.strategies._messages import _longest_run
from cleveragents_acms.strategies.query import analyze


@dataclass
class _Node:
    text: str
    renderings: dict[int, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.renderings[DEPTH_FULL] = self.text

    def rendering(self, depth: int) -> str:
        return self.renderings.get(depth, "")


class _Nodes:
    def __init__(self, texts: dict[str, str]) -> None:
        self.texts = texts

    def nodes(self, uris: list[str]) -> dict[str, Any]:
        return {u: _Node(self.texts[u]) for u in uris if u in self.texts}


@dataclass
class _Backends:
    nodes: Any


def test_a_format_string_holds_part_of_the_message() -> None:
    code = " raise valueerror unknown format code r for object of type s "
    words = ["unknown", "format", "code", "f", "for", "object", "of", "type", "str"]
    assert _longest_run(words, code) == 4  # "for object of type"
    assert _longest_run(["is", "not", "a"], " it is not a thing ") == 0  # stop words only


def test_whole_file_reading_prefers_the_file_where_the_words_meet() -> None:
    analysis = analyze("Colorbar extend ignores the drawedges option\n\n`drawedges=True`")
    backends = _Backends(
        _Nodes(
            {
                "f/colorbar.py": "class Colorbar:\n    def _add_solids(self, drawedges, extend):",
                "f/axes.py": "def colorbar(self): return Colorbar(self)",
                "f/other.py": "def unrelated(): pass",
            }
        )
    )
    scores = whole_file_scores(backends, analysis, ["f/colorbar.py", "f/axes.py", "f/other.py"])
    assert max(scores, key=scores.__getitem__) == "f/colorbar.py"
    assert scores["f/other.py"] == 0.0


def test_classes_the_question_defines_are_the_reporters() -> None:
    analysis = analyze(
        "Display of choices is wrong\n\n```\nclass FooBar(models.Model):\n"
        "    foo_bar = models.CharField(choices=[(1, 'foo')])\n```\n"
    )
    assert "FooBar" in analysis.own_classes
    assert analysis.identifiers["FooBar"] < analysis.identifiers["CharField"]


def test_prose_is_weighed_down_only_beside_code() -> None:
    """In a code base, documentation rarely holds what must change; in a documentation
    project (nearly every candidate prose), it is what the question is about."""
    from cleveragents.models.uko import node_uri
    from cleveragents_acms.strategies._evidence import Evidence

    def evidence(paths: list[str]) -> dict[str, float]:
        found = Evidence(analyze("How do I substitute a custom user model?"))
        found.issue = {node_uri(RESOURCE, p): 10.0 - i for i, p in enumerate(paths)}
        return {uri.rsplit("/", 1)[-1]: s for uri, s in found.file_scores().items()}

    book = ["topics/page0.txt", "conf.py", *(f"topics/page{i}.txt" for i in range(1, 9))]
    scores = evidence(book)
    assert max(scores, key=scores.__getitem__) == "page0.txt"
    assert scores["page0.txt"] > scores["conf.py"]
    code = ["topics/page0.txt", *(f"auth/models{i}.py" for i in range(4))]
    scores = evidence(code)
    assert scores["page0.txt"] < scores["models0.py"]


RESOURCE = "01JD0000000000000000000000"


class _TestGraph:
    """The reads :func:`tested_code` makes, over a few hand-made nodes."""

    def __init__(self, contains: dict[str, list[str]], calls: dict[str, list[str]]) -> None:
        self.contains = contains
        self.calls = calls
        self.definitions: dict[str, list[str]] = {}

    def descendants(self, uri: str, *, levels: int = 3) -> list[str]:
        found, frontier = [], [uri]
        for _ in range(levels):
            frontier = [c for u in frontier for c in self.contains.get(u, [])]
            found.extend(frontier)
        return found

    def neighbours(self, uris: list[str], **_: Any) -> dict[str, list[tuple[str, str, bool]]]:
        return {
            u: [("dependsOn", t, True) for t in self.calls.get(u, []) if "symbol:" not in t]
            for u in uris
        }

    def symbols(self, uris: list[str], **_: Any) -> dict[str, list[str]]:
        return {
            u: [t.removeprefix("symbol:") for t in self.calls.get(u, []) if "symbol:" in t]
            for u in uris
        }

    def by_name(self, names: list[str], *, limit: int = 200) -> dict[str, list[str]]:
        return {n: self.definitions.get(n, [])[:limit] for n in names}


def test_the_likeliest_tests_vote_for_the_code_they_call() -> None:
    from cleveragents_acms.strategies._tested import tested_code

    base = "https://cleveragents.ai/r/R/"
    test_file, helpers = base + "tests/test_escaping.py", base + "tests/test_misc.py"
    escaping, render, util = base + "pkg/escaping.py", base + "pkg/render.py", base + "pkg/util.py"
    graph = _TestGraph(
        contains={
            test_file: [test_file + "#EscapeTests"],
            test_file + "#EscapeTests": [test_file + "#EscapeTests.test_trailing", f"{test_file}#x"],
            helpers: [helpers + "#test_many"],
        },
        calls={
            # resolved twice, through a re-export once (``pkg.Escaper``), and once elsewhere
            test_file + "#EscapeTests.test_trailing": [
                escaping + "#escape",
                escaping + "#unescape",
                "symbol:pkg.Escaper",
                render + "#render",
            ],
            f"{test_file}#x": [util + "#helper"],  # not a test: its calls do not count
            helpers + "#test_many": [f"{base}pkg/m{i}.py#f" for i in range(5)],
        },
    )
    graph.definitions["Escaper"] = [escaping + "#Escaper"]
    scores = {test_file: 0.6, helpers: 0.5, escaping: 0.2, render: 0.4, util: 0.3}
    is_code = {escaping: True, render: True, util: True, test_file: False, helpers: False}
    is_code |= {f"{base}pkg/m{i}.py": True for i in range(5)}

    votes = tested_code(graph, scores, is_code=is_code)  # type: ignore[arg-type]

    assert votes[escaping] == 0.6 * 3 / 4 and votes[render] == 0.6 / 4
    assert util not in votes
    # a test file spread over five modules is about none of them, and does not vote
    assert not any(f"pkg/m{i}.py" in f for f in votes for i in range(5))


def test_a_projects_testing_helpers_are_test_code() -> None:
    from cleveragents_acms.strategies._support import is_test_path

    assert is_test_path("sklearn/utils/testing.py") and is_test_path("pandas/_testing.py")
    assert not is_test_path("mylib/testing_tools.py") and not is_test_path("pkg/contest.py")
