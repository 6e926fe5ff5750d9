"""The Markdown analyzer on this repository's documents and on tricky markup."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from cleveragents.models.uko import UKONode, node_uri
from cleveragents_acms.analyzers.markdown import MarkdownAnalyzer, slugify

REPO = Path(__file__).resolve().parents[3]
RESOURCE = "01HZZZZZZZZZZZZZZZZZZZZZZZ"
TITLE, TOC, SUMMARY, STRUCTURE, FULL = 0, 1, 4, 6, 9

DOCUMENTS = sorted(
    [*REPO.glob("docs/*.md"), *REPO.glob("README.md"), *REPO.glob("plugins/*/README.md"),
     *REPO.glob("cleveragents-core/README.md")]
)  # fmt: skip


def analyze(text: str, relative: str = "docs/guide.md") -> dict[str, UKONode]:
    result = MarkdownAnalyzer().analyze(
        Path(relative), textwrap.dedent(text), resource_id=RESOURCE, relative_path=relative
    )
    assert result.errors == []
    return {n.qualname: n for n in result.nodes}


@pytest.mark.parametrize("path", DOCUMENTS, ids=lambda p: str(p.relative_to(REPO)))
def test_repository_documents(path: Path) -> None:
    """Every doc of this repository gives a document tree with nested, consistent ranges."""
    relative = str(path.relative_to(REPO))
    text = path.read_text(encoding="utf-8")
    result = MarkdownAnalyzer().analyze(path, text, resource_id=RESOURCE, relative_path=relative)
    assert result.errors == []
    document, *rest = result.nodes
    assert document.uko_type == "uko-doc:Document" and document.qualname == ""
    assert document.uri == node_uri(RESOURCE, relative)
    assert document.renderings[FULL] == text
    by_uri = {n.uri: n for n in result.nodes}
    assert len(by_uri) == len(result.nodes)
    headings = [line for line in text.splitlines() if line.startswith("#")]
    sections = [n for n in rest if n.uko_type in ("uko-doc:Section", "uko-doc:Subsection")]
    assert len(sections) <= len(headings)
    for node in rest:
        parent = by_uri[node.parent or ""]
        assert parent.start_line <= node.start_line <= node.end_line <= parent.end_line
        assert node.uri == node_uri(RESOURCE, relative, node.qualname)


def test_acms_internals_structure() -> None:
    """docs/acms-internals.md: a title section, a subsection per module, code and lists."""
    relative = "docs/acms-internals.md"
    text = (REPO / relative).read_text(encoding="utf-8")
    result = MarkdownAnalyzer().analyze(
        REPO / relative, text, resource_id=RESOURCE, relative_path=relative
    )
    nodes = {n.qualname: n for n in result.nodes}
    document = nodes[""]
    assert document.name == "ACMS internals: how the indexing pieces fit"
    top = nodes["acms-internals-how-the-indexing-pieces-fit"]
    api = nodes["modules-and-their-public-api"]
    analyzers = nodes["analyzers--files-to-uko-nodes"]
    assert top.uko_type == "uko-doc:Section" and top.parent == document.uri
    assert api.uko_type == "uko-doc:Subsection" and api.parent == top.uri
    assert analyzers.parent == api.uri
    assert analyzers.properties["uko-doc:headingLevel"] == "3"
    assert document.renderings[TOC].splitlines() == [
        "# ACMS internals: how the indexing pieces fit",
        "- Modules and their public API",
    ]
    assert "- analyzers/ — files to UKO nodes" in document.renderings[SUMMARY]
    code = [n for n in result.nodes if n.uko_type == "uko-doc:CodeBlock"]
    assert code and code[0].parent == top.uri
    listing = next(n for n in result.nodes if n.parent == analyzers.uri)
    assert listing.uko_type == "uko-doc:ListBlock"
    assert "discover(root" in listing.renderings[STRUCTURE]
    lines = text.splitlines()
    assert analyzers.renderings[FULL] == "\n".join(
        lines[analyzers.start_line - 1 : analyzers.end_line]
    )
    assert analyzers.renderings[FULL].startswith("### `analyzers/`")


DOC = """\
---
title: front matter is not content
---

Guide
=====

An introduction that mentions the Installation Steps and [the API](api.md#calls).
See [below](#usage), [the root](/README.md) and <https://example.org/docs>.

Installation Steps
------------------

1. Download it.
2. Run:

   ```sh
   # not a heading
   make install
   ```

## Usage

> Quoted advice
> over two lines.

| Option | Meaning |
|--------|---------|
| `-v`   | verbose |

![Architecture diagram](img/arch.png)

~~~python
# still code
def f(): ...
~~~

    indented = "code"

## Usage

Second section with the same title, see [the first one](#usage) and `[not](a-link.md)`.

### Deeper ###

Last paragraph. It has two sentences. And a third.
"""


def test_headings_blocks_and_anchors() -> None:
    """Setext and ATX headings nest; fences hide ``#`` lines; duplicate anchors get ``-1``."""
    nodes = analyze(DOC)
    document = nodes[""]
    assert document.name == "Guide"
    guide = nodes["guide"]
    install = nodes["installation-steps"]
    usage, usage_again, deeper = nodes["usage"], nodes["usage-1"], nodes["deeper"]
    assert guide.uko_type == "uko-doc:Section" and guide.start_line == 5
    assert install.parent == guide.uri and install.properties["uko-doc:headingLevel"] == "2"
    assert usage.parent == guide.uri and usage_again.parent == guide.uri
    assert deeper.parent == usage_again.uri and deeper.uko_type == "uko-doc:Subsection"
    assert "not a heading" not in {n.name for n in nodes.values()}
    assert install.end_line == usage.start_line - 2
    kinds = {n.qualname: n.uko_type for n in nodes.values() if n.parent == usage.uri}
    assert kinds == {
        "usage~quote1": "uko-doc:BlockQuote",
        "usage~table1": "uko-doc:Table",
        "usage~figure1": "uko-doc:Figure",
        "usage~code1": "uko-doc:CodeBlock",
        "usage~code2": "uko-doc:CodeBlock",
    }
    assert nodes["usage~code1"].properties["language"] == "python"
    assert nodes["usage~figure1"].name == "Architecture diagram"
    assert nodes["usage~table1"].name == "table: Option, Meaning"
    listing = nodes["installation-steps~list1"]
    assert listing.uko_type == "uko-doc:ListBlock"
    assert "make install" in listing.renderings[STRUCTURE]
    paragraph = nodes["deeper~p1"]
    assert paragraph.renderings[TOC] == "Last paragraph."
    assert paragraph.renderings[SUMMARY] == "Last paragraph. It has two sentences."
    assert paragraph.renderings[STRUCTURE].endswith("And a third.")


def test_links_become_references() -> None:
    """Relative files become ``symbol:path:``; anchors resolve to sections; URLs are kept."""
    nodes = analyze(DOC)
    intro = nodes["guide~p1"]
    assert ("uko:references", "symbol:path:docs/api.md#calls") in intro.edges
    assert ("uko:references", "symbol:path:README.md") in intro.edges
    assert ("uko-doc:crossReferences", nodes["usage"].uri) in intro.edges
    assert intro.properties["links"] == "https://example.org/docs"
    second = nodes["usage-1~p1"]
    assert ("uko:references", nodes["usage"].uri) in second.edges
    assert not any("a-link.md" in target for _, target in second.edges)


def test_paragraphs_naming_another_section_discuss_it() -> None:
    """A paragraph naming a section's heading gets a discussesTopic edge to it."""
    nodes = analyze(DOC)
    assert ("uko-doc:discussesTopic", nodes["installation-steps"].uri) in nodes["guide~p1"].edges


def test_renderings_follow_the_document_depth_map() -> None:
    """Document: title, TOC, summaries with keywords, skeleton, full text."""
    nodes = analyze(DOC)
    document = nodes[""]
    assert document.renderings[TITLE] == "Guide"
    assert document.renderings[TOC].splitlines() == [
        "# Guide",
        "- Installation Steps",
        "- Usage",
        "- Usage",
    ]
    assert "- Installation Steps" in document.renderings[SUMMARY]
    structure = document.renderings[STRUCTURE]
    assert "## Usage" in structure and "### Deeper" in structure
    assert "- Download it." in structure and "Last paragraph." in structure
    assert "It has two sentences" not in structure
    section = nodes["usage-1"]
    assert section.renderings[FULL].startswith("## Usage\n\nSecond section")
    assert section.renderings[FULL].endswith("And a third.")
    assert section.properties["uko-doc:wordCount"] == "26"
    assert "uko-doc:topicKeywords" in document.properties


def test_odd_input_does_not_raise() -> None:
    """Empty files, unclosed fences and lone markers are analyzed without errors."""
    assert list(analyze("")) == [""]
    nodes = analyze("# T\n\n```\nnever closed\n# nope\n")
    assert [n.uko_type for n in nodes.values()] == [
        "uko-doc:Document", "uko-doc:Section", "uko-doc:CodeBlock"
    ]  # fmt: skip
    analyze("#\n\n---\n\n***\n\n- \n\n>\n\n|a|\n|-|\n")


@pytest.mark.parametrize(
    ("heading", "anchor"),
    [
        ("Installation Steps", "installation-steps"),
        ("`analyzers/` — files to UKO nodes", "analyzers--files-to-uko-nodes"),
        ("What's new in 2.0?", "whats-new-in-20"),
        ("[Linked](x.md) title", "linked-title"),
        ("snake_case_name", "snake_case_name"),
    ],
)
def test_slugify_matches_github_anchors(heading: str, anchor: str) -> None:
    """Anchors are the ones GitHub renders for the heading."""
    assert slugify(heading) == anchor


def test_supports() -> None:
    """Markdown files by suffix."""
    analyzer = MarkdownAnalyzer()
    assert analyzer.supports(Path("README.md"), b"")
    assert analyzer.supports(Path("docs/a.markdown"), b"")
    assert not analyzer.supports(Path("a.rst"), b"")


def test_a_parser_failure_falls_back_to_plain_text(monkeypatch: pytest.MonkeyPatch) -> None:
    """A parser bug does not stop indexing: the file is indexed as text, the failure noted."""
    from cleveragents_acms.analyzers import markdown

    def broken(self: object) -> object:
        raise ValueError("odd markup")

    monkeypatch.setattr(markdown._DocumentBuilder, "build", broken)
    text = "# Title\n\nSome text.\n"
    result = MarkdownAnalyzer().analyze(
        Path("README.md"), text, resource_id=RESOURCE, relative_path="README.md"
    )
    assert result.errors == ["README.md: markdown analysis failed: ValueError('odd markup')"]
    assert result.nodes and "Some text." in result.nodes[0].renderings[9]
