"""Conformance suites for the knowledge side: UKO analyzers and detail-level maps."""

from __future__ import annotations

from pathlib import Path
from typing import Any, ClassVar

import pytest

from cleveragents.models.uko import AnalysisResult, UKONode
from cleveragents.testing.conformance._base import ComponentConformance
from cleveragents.testing.factories import RESOURCE_A

__all__ = ["AnalyzerConformance", "DetailLevelMapConformance"]


class AnalyzerConformance(ComponentConformance):
    """``supports`` its own files, and ``analyze`` returns nodes with provenance.

    Set :attr:`sample_file` to ``(relative path, content)`` of a small file in
    the analyzer's language, :attr:`foreign_file` to one it must not claim,
    and :attr:`malformed_file` to one with a syntax error, which ``analyze``
    must report in ``errors`` instead of raising.
    """

    slot_key = "analyzer"
    sample_file: ClassVar[tuple[str, str]] = ("pkg/module.py", "def f():\n    return 1\n")
    foreign_file: ClassVar[tuple[str, bytes] | None] = ("image.png", b"\x89PNG\r\n\x1a\n\x00\x00")
    malformed_file: ClassVar[tuple[str, str] | None] = None

    def write(self, root: Path, relative: str, content: str | bytes) -> Path:
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content, encoding="utf-8")
        return path

    def analyze(self, component: Any, root: Path, relative: str, content: str) -> AnalysisResult:
        path = self.write(root, relative, content)
        result = component.analyze(path, content, resource_id=RESOURCE_A, relative_path=relative)
        assert isinstance(result, AnalysisResult), f"analyze returned {type(result).__name__}"
        return result

    def test_identity(self, component: Any) -> None:
        assert isinstance(component.name, str) and component.name.strip()
        assert isinstance(component.specificity, int)
        languages = tuple(component.languages)
        assert all(isinstance(lang, str) and lang for lang in languages)

    def test_supports_its_own_language(self, component: Any, tmp_path: Path) -> None:
        relative, content = self.sample_file
        path = self.write(tmp_path, relative, content)
        assert component.supports(path, content.encode("utf-8")[:512]) is True

    def test_does_not_claim_a_foreign_file(self, component: Any, tmp_path: Path) -> None:
        if self.foreign_file is None:
            pytest.skip("this analyzer accepts any file")
        relative, content = self.foreign_file
        path = self.write(tmp_path, relative, content)
        assert not component.supports(path, content[:512])

    def test_analyze_returns_nodes_with_provenance(self, component: Any, tmp_path: Path) -> None:
        relative, content = self.sample_file
        result = self.analyze(component, tmp_path, relative, content)
        assert result.nodes, "no UKO node for the sample file"
        assert not result.errors, result.errors
        line_count = max(1, content.count("\n") + (not content.endswith("\n")))
        uris = [node.uri for node in result.nodes]
        assert len(uris) == len(set(uris)), "two nodes share a URI"
        for node in result.nodes:
            assert isinstance(node, UKONode), type(node).__name__
            assert node.uri and node.uko_type and node.name, node
            assert node.resource_id == RESOURCE_A, f"{node.uri} names resource {node.resource_id}"
            assert node.path == relative, f"{node.uri} names path {node.path!r}"
            assert 1 <= node.start_line <= node.end_line <= line_count, node
            assert all(0 <= depth <= 9 for depth in node.renderings), node.renderings
        for triple in result.triples:
            assert len(triple) == 3 and all(isinstance(x, str) and x for x in triple), triple

    def test_analysis_is_deterministic(self, component: Any, tmp_path: Path) -> None:
        relative, content = self.sample_file
        first = self.analyze(component, tmp_path, relative, content)
        second = self.analyze(component, tmp_path, relative, content)
        assert [n.uri for n in first.nodes] == [n.uri for n in second.nodes]
        assert [n.renderings for n in first.nodes] == [n.renderings for n in second.nodes]

    def test_a_malformed_file_is_reported_not_raised(self, component: Any, tmp_path: Path) -> None:
        if self.malformed_file is None:
            pytest.skip("no malformed_file given")
        relative, content = self.malformed_file
        result = self.analyze(component, tmp_path, relative, content)
        assert result.errors, "a syntax error must be reported in AnalysisResult.errors"


class DetailLevelMapConformance(ComponentConformance):
    """A domain, an optional parent, and named levels mapped to non-negative depths."""

    slot_key = "detail-level-map"

    def test_fields(self, component: Any) -> None:
        assert isinstance(component.domain, str) and component.domain.strip()
        assert component.parent is None or (isinstance(component.parent, str) and component.parent)
        assert component.parent != component.domain, "a map cannot inherit from itself"
        levels = dict(component.levels)
        assert levels, "a map names at least one level"
        for name, depth in levels.items():
            assert isinstance(name, str) and name == name.upper(), (
                f"level {name!r} is not UPPER_CASE"
            )
            assert isinstance(depth, int) and depth >= 0, f"{name} -> {depth}"
