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
