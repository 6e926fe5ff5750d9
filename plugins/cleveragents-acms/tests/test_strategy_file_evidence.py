"""File evidence of arce: quoted messages, whole-file reading, the reporter's own classes."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from cleveragents.models.uko import DEPTH_FULL, node_uri
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


_ESCAPING_TESTS = """\
from unittest import TestCase

import pkg
from pkg.escaping import escape, unescape
from pkg.render import render


class EscapeTests(TestCase):
    def test_trailing_underscore(self):
        escape("a_")
        unescape("a")
        pkg.Escaper()  # through the package's re-export: unresolved, defined once

    def test_rendered(self):
        render(escape("b_"))

    def helper(self):  # not a test: its calls do not count
        return pkg.util.helper()
"""


def test_the_likeliest_tests_vote_for_the_code_they_call(tmp_path: Path) -> None:
    """Indexed for real: the test file votes for the code its tests call, resolved or by a
    name one file defines; a test file spread over many modules does not vote."""
    from cleveragents.config import load_config
    from cleveragents.plugins import PluginHost
    from cleveragents.storage.database import Database
    from cleveragents_acms.backends.scoped import make_backend_set
    from cleveragents_acms.indexing.project_index import ProjectIndex
    from cleveragents_acms.indexing.service import RepoIndexingService
    from cleveragents_acms.strategies._graph import GraphView
    from cleveragents_acms.strategies._tested import tested_code

    repo = tmp_path / "repo"
    files = {
        "pkg/__init__.py": "from pkg.escaping import Escaper\n",
        "pkg/escaping.py": "def escape(s):\n    return s\n\ndef unescape(s):\n    return s\n\n"
        "class Escaper:\n    pass\n",
        "pkg/render.py": "def render(s):\n    return s\n",
        "pkg/util.py": "def helper():\n    return 1\n",
        "tests/test_escaping.py": _ESCAPING_TESTS,
        "tests/test_misc.py": "".join(f"from pkg.m{i} import f{i}\n" for i in range(5))
        + "\n\ndef test_everything():\n"
        + "".join(f"    f{i}()\n" for i in range(5)),
        **{f"pkg/m{i}.py": f"def f{i}():\n    return {i}\n" for i in range(5)},
    }
    for relative, text in files.items():
        (repo / relative).parent.mkdir(parents=True, exist_ok=True)
        (repo / relative).write_text(text)
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("CLEVERAGENTS_HOME", str(tmp_path / "home"))
        host = PluginHost.load(env={})
        config = load_config(cwd=tmp_path, env={})
        database = Database.for_sqlite_file(tmp_path / "home" / "cleveragents.db")
        RepoIndexingService(database, host.registry, config, workers=1).index_resource(
            RESOURCE, repo, project="votes"
        )
        index = ProjectIndex.open("votes", host.registry, config, create=False)
    try:
        graph = make_backend_set(index.text, None, index.graph, [RESOURCE]).graph
        uris = {path: node_uri(RESOURCE, path) for path in files}
        scores = dict.fromkeys(uris.values(), 0.5)
        is_code = {u: not p.startswith("tests/") for p, u in uris.items()}

        votes = tested_code(GraphView(graph, frozenset({RESOURCE})), scores, is_code=is_code)
    finally:
        index.close()
        database.dispose()

    # escape twice, unescape and Escaper once each: 4 of 5 calls; render once
    assert votes[uris["pkg/escaping.py"]] == pytest.approx(0.5 * 4 / 5)
    assert votes[uris["pkg/render.py"]] == pytest.approx(0.5 * 1 / 5)
    assert uris["pkg/util.py"] not in votes  # called by a helper, not by a test
    assert not any(uris[f"pkg/m{i}.py"] in votes for i in range(5))  # 1/5 each: no focus


def test_a_projects_testing_helpers_are_test_code() -> None:
    from cleveragents_acms.strategies._support import is_test_path

    assert is_test_path("sklearn/utils/testing.py") and is_test_path("pandas/_testing.py")
    assert not is_test_path("mylib/testing_tools.py") and not is_test_path("pkg/contest.py")
