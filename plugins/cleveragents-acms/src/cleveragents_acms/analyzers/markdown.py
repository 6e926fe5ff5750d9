"""Markdown documents to UKO nodes with a line-based block parser (no markdown library).

The parser knows what changes a document's structure: ATX and setext
headings, fenced and indented code (a ``#`` inside a fence is not a heading),
lists, block quotes, tables, front matter, HTML comments. Sections nest by
heading level; their qualified name is the anchor GitHub would give the
heading, so ``[see](#installation)`` and ``other.md#installation`` land on
them. Links become ``uko:references`` edges (files as ``symbol:path:…``),
and a paragraph that names another section's heading gets a
``uko-doc:discussesTopic`` edge to it (spec 000, "Semantic Inference for
Documents").

Renderings follow the uko-doc DetailLevelMap's order at the depths every
analyzer renders (0-9): 0 title, 1 table of contents, 4 headings with
summaries, 6 structural detail, 9 full content; a block's full text is its
depth 6 and 9. (The map's own numbering runs past 9 after level insertion;
named levels resolve to the richest rendering at or below them.)
"""

from __future__ import annotations

import json
import posixpath
import re
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import unquote

from cleveragents.models.uko import AnalysisResult, UKONode
from cleveragents_acms.analyzers._common import (
    NodeFactory,
    collapse,
    dedupe,
    first_line,
    first_sentences,
    split_lines,
    truncate,
)

__all__ = ["MarkdownAnalyzer", "slugify"]

TITLE, TOC, SUMMARY, STRUCTURE, FULL = 0, 1, 4, 6, 9

REFERENCES = "uko:references"
CROSS_REFERENCES = "uko-doc:crossReferences"
DISCUSSES = "uko-doc:discussesTopic"
HEADING_LEVEL = "uko-doc:headingLevel"
HEADING_TEXT = "uko-doc:headingText"
WORD_COUNT = "uko-doc:wordCount"
TOPIC_KEYWORDS = "uko-doc:topicKeywords"

_FENCE = re.compile(r"^( {0,3})(`{3,}|~{3,})\s*([^`]*)$")
_ATX = re.compile(r"^ {0,3}(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$")
_SETEXT = re.compile(r"^ {0,3}(=+|-+)[ \t]*$")
_THEMATIC = re.compile(r"^ {0,3}([-*_])(?:[ \t]*\1){2,}[ \t]*$")
_LIST_ITEM = re.compile(r"^ {0,3}(?:[-*+]|\d{1,9}[.)])(?:[ \t]+|$)")
_QUOTE = re.compile(r"^ {0,3}>")
_TABLE_RULE = re.compile(r"^ {0,3}\|?[ \t]*:?-+:?[ \t]*(?:\|[ \t]*:?-+:?[ \t]*)*\|?[ \t]*$")
_IMAGE_ONLY = re.compile(r"^\s*!\[([^\]]*)\]\(([^)]*)\)\s*$")
_LINK = re.compile(r"!?\[((?:[^\[\]]|\[[^\]]*\])*)\]\(\s*<?([^)\s>]*)>?(?:\s+[\"'(][^)]*)?\)")
_REF_DEF = re.compile(r"^ {0,3}\[([^\]]+)\]:\s*<?(\S+?)>?(?:\s+.*)?$", re.MULTILINE)
_AUTOLINK = re.compile(r"<((?:https?|ftp|mailto):[^>\s]+)>|(?<![(<\[])\bhttps?://[^\s)>\]]+")
_CODE_SPAN = re.compile(r"(`+)(?:(?!\1).)+?\1")
_SLUG_DROP = re.compile(r"[^\w\- ]")
_TOPIC_WORD = re.compile(r"\w+")
_MAX_TOPICS = 20
_WORD = re.compile(r"[A-Za-z][A-Za-z0-9_-]{3,}")
# fmt: off
_STOPWORDS = frozenset({
    "this", "that", "with", "from", "have", "will", "your", "when", "which", "their", "there",
    "these", "those", "into", "about", "than", "then", "them", "they", "were", "been", "being",
    "also", "more", "most", "such", "only", "other", "some", "what", "each", "does", "should",
    "could", "would", "must", "very", "here", "where", "while", "after", "before", "under",
    "over", "using", "used", "uses", "make", "makes", "like", "just", "same", "every", "both",
    "between", "through", "without", "within",
})
# fmt: on


def slugify(heading: str) -> str:
    """The anchor GitHub gives a heading: lower case, punctuation dropped, spaces to ``-``."""
    text = _LINK.sub(lambda m: m.group(1), heading)
    text = text.replace("`", "").strip().lower()
    return _SLUG_DROP.sub("", text).replace(" ", "-")


def _plain(text: str) -> str:
    """Inline markup reduced to its words (links to their text, code spans kept)."""
    text = _LINK.sub(lambda m: m.group(1), text)
    return text.replace("**", "").replace("__", "").replace("`", "")


@dataclass(slots=True)
class _Block:
    kind: str  # heading paragraph code list quote table figure
    start: int  # 1-based
    end: int
    text: str
    level: int = 0
    info: str = ""


@dataclass(slots=True)
class _Section:
    node: UKONode
    level: int
    title: str
    blocks: list[tuple[_Block, UKONode]] = field(default_factory=list)
    children: list[_Section] = field(default_factory=list)


def _blocks(lines: list[str]) -> list[_Block]:
    """Split a document into blocks (front matter and comments are dropped)."""
    blocks: list[_Block] = []
    n = len(lines)
    i = 0
    if lines and lines[0].strip() in ("---", "+++"):
        marker = lines[0].strip()
        for j in range(1, min(n, 400)):
            if lines[j].strip() in (marker, "..."):
                i = j + 1
                break
    while i < n:
        line = lines[i]
        if not line.strip():
            i += 1
            continue
        fence = _FENCE.match(line)
        if fence:
            end = _fence_end(lines, i, fence.group(2))
            info = fence.group(3).strip().strip("{}").lstrip(".").split(" ")[0]
            blocks.append(_Block("code", i + 1, end + 1, "\n".join(lines[i : end + 1]), info=info))
            i = end + 1
            continue
        heading = _ATX.match(line)
        if heading:
            text = (heading.group(2) or "").strip()
            blocks.append(_Block("heading", i + 1, i + 1, text, level=len(heading.group(1))))
            i += 1
            continue
        if line.lstrip().startswith("<!--"):
            j = i
            while j < n and "-->" not in lines[j]:
                j += 1
            i = j + 1
            continue
        if _THEMATIC.match(line):
            i += 1
            continue
        if _QUOTE.match(line):
            j = _until_blank(lines, i)
            blocks.append(_Block("quote", i + 1, j, "\n".join(lines[i:j])))
            i = j
            continue
        if _LIST_ITEM.match(line):
            j = _list_end(lines, i)
            blocks.append(_Block("list", i + 1, j, "\n".join(lines[i:j])))
            i = j
            continue
        if "|" in line and i + 1 < n and _TABLE_RULE.match(lines[i + 1]) and "-" in lines[i + 1]:
            j = i + 2
            while j < n and lines[j].strip() and "|" in lines[j]:
                j += 1
            blocks.append(_Block("table", i + 1, j, "\n".join(lines[i:j])))
            i = j
            continue
        if line.startswith(("    ", "\t")):
            j = i + 1
            while j < n and (not lines[j].strip() or lines[j].startswith(("    ", "\t"))):
                j += 1
            while j > i + 1 and not lines[j - 1].strip():
                j -= 1
            blocks.append(_Block("code", i + 1, j, "\n".join(lines[i:j])))
            i = j
            continue
        j = i + 1
        setext = 0
        while j < n:
            following = lines[j]
            if not following.strip():
                break
            underline = _SETEXT.match(following)
            if underline:
                setext = 1 if underline.group(1)[0] == "=" else 2
                break
            if (
                _ATX.match(following)
                or _FENCE.match(following)
                or _QUOTE.match(following)
                or _THEMATIC.match(following)
                or (_LIST_ITEM.match(following) and following.strip()[0] in "-*+1")
            ):
                break
            j += 1
        text = "\n".join(lines[i:j])
        if setext:
            blocks.append(_Block("heading", i + 1, j + 1, collapse(text), level=setext))
            i = j + 1
            continue
        image = _IMAGE_ONLY.match(text)
        blocks.append(_Block("figure" if image else "paragraph", i + 1, j, text))
        i = j
    return blocks


def _fence_end(lines: list[str], start: int, marker: str) -> int:
    closing = re.compile(rf"^ {{0,3}}{re.escape(marker[0])}{{{len(marker)},}}[ \t]*$")
    for j in range(start + 1, len(lines)):
        if closing.match(lines[j]):
            return j
    return len(lines) - 1


def _until_blank(lines: list[str], start: int) -> int:
    j = start + 1
    while j < len(lines) and lines[j].strip() and not _ATX.match(lines[j]):
        j += 1
    return j


def _list_end(lines: list[str], start: int) -> int:
    """End (exclusive) of a list: items, their indented continuations and nested fences."""
    n = len(lines)
    j = start + 1
    while j < n:
        line = lines[j]
        fence = _FENCE.match(line.lstrip()) if line.lstrip().startswith(("```", "~~~")) else None
        if fence:
            marker = fence.group(2)
            j += 1
            while j < n and not lines[j].lstrip().startswith(marker):
                j += 1
            j += 1
            continue
        if not line.strip():
            k = j + 1
            while k < n and not lines[k].strip():
                k += 1
            if k < n and (lines[k].startswith((" ", "\t")) or _LIST_ITEM.match(lines[k])):
                j = k
                continue
            break
        if _ATX.match(line) or _THEMATIC.match(line):
            break
        j += 1
    return min(j, n)


class _DocumentBuilder:
    def __init__(self, content: str, resource_id: str, relative: str) -> None:
        self.content = content
        self.lines = split_lines(content)
        self.relative = relative
        self.directory = posixpath.dirname(relative)
        self.factory = NodeFactory(resource_id, relative, "markdown")
        self.anchors: dict[str, UKONode] = {}
        self.sections: list[_Section] = []
        #: Links are resolved once every anchor of the document is known.
        self.pending_links: list[tuple[UKONode, str]] = []

    def build(self) -> list[UKONode]:
        blocks = _blocks(self.lines)
        headings = [b for b in blocks if b.kind == "heading"]
        title = _plain(headings[0].text) if headings and headings[0].level == 1 else ""
        title = title or Path(self.relative).stem
        last = len(self.lines) - (1 if self.lines and self.lines[-1] == "" else 0)
        document = self.factory.make(
            "uko-doc:Document",
            title,
            "",
            1,
            max(1, last),
            None,
            properties={"title": title, "kind": "document"},
        )
        root = _Section(document, 0, title)
        stack = [root]
        counters: dict[str, int] = {}
        for block in blocks:
            if block.kind == "heading":
                while stack[-1].level >= block.level:
                    stack.pop()
                stack.append(self.section(block, stack[-1]))
                continue
            owner = stack[-1]
            kind_key = {"paragraph": "p"}.get(block.kind, block.kind)
            prefix = owner.node.qualname
            counters[prefix + kind_key] = number = counters.get(prefix + kind_key, 0) + 1
            qualname = f"{prefix}~{kind_key}{number}" if prefix else f"~{kind_key}{number}"
            owner.blocks.append((block, self.block(block, owner.node, qualname)))
        for node, text in self.pending_links:
            node.edges.extend(self.links(text))
        self.close(root, max(1, last))
        self.render(root)
        self.discusses(root)
        return self.factory.nodes

    def section(self, block: _Block, parent: _Section) -> _Section:
        title = _plain(block.text) or f"section at line {block.start}"
        anchor = slugify(block.text) or f"section-{block.start}"
        unique = anchor
        count = 0
        while unique in self.anchors:
            count += 1
            unique = f"{anchor}-{count}"
        node = self.factory.make(
            "uko-doc:Section" if parent.level == 0 else "uko-doc:Subsection",
            title,
            unique,
            block.start,
            block.end,
            parent.node,
            properties={
                "title": title,
                HEADING_LEVEL: str(block.level),
                HEADING_TEXT: block.text,
                "anchor": unique,
            },
        )
        self.pending_links.append((node, block.text))
        self.anchors[unique] = node
        section = _Section(node, block.level, title)
        parent.children.append(section)
        self.sections.append(section)
        return section

    def block(self, block: _Block, parent: UKONode, qualname: str) -> UKONode:
        text = block.text
        kind = block.kind
        if kind == "code":
            fenced = text.lstrip().startswith(("`", "~"))
            body = "\n".join(text.split("\n")[1:-1]) if fenced else text
            opening = truncate(first_line(body), 60)
            name = f"code block ({block.info})" if block.info else "code block"
            name += f": {opening}" if opening else ""
            renderings = {
                TITLE: name,
                TOC: truncate(collapse(body[:200]), 120),
                SUMMARY: "\n".join(body.split("\n")[:5]),
                STRUCTURE: text,
            }
            node = self.factory.make(
                "uko-doc:CodeBlock",
                name,
                qualname,
                block.start,
                block.end,
                parent,
                renderings=renderings,
                properties={"language": block.info, "kind": "code"},
            )
            return node
        plain = _plain(text)
        if kind == "figure":
            match = _IMAGE_ONLY.match(text)
            caption = match.group(1) if match else plain
            name = caption or "figure"
            renderings = {TITLE: name, STRUCTURE: text}
            uko_type = "uko-doc:Figure"
        elif kind == "table":
            header = text.split("\n", 1)[0]
            cells = [c.strip() for c in header.strip().strip("|").split("|")]
            name = "table: " + ", ".join(c for c in cells if c)
            renderings = {
                TITLE: truncate(name, 120),
                SUMMARY: "\n".join(text.split("\n")[:5]),
                STRUCTURE: text,
            }
            uko_type = "uko-doc:Table"
        elif kind == "list":
            items = [
                _LIST_ITEM.sub("", ln, count=1).strip()
                for ln in text.split("\n")
                if _LIST_ITEM.match(ln)
            ]
            name = truncate(_plain(items[0]) if items else plain, 80)
            renderings = {
                TITLE: name,
                TOC: truncate(items[0] if items else "", 200),
                SUMMARY: "\n".join("- " + truncate(i, 160) for i in items[:40]),
                STRUCTURE: text,
            }
            uko_type = "uko-doc:ListBlock"
        else:
            name = truncate(collapse(plain), 80)
            renderings = {
                TITLE: name,
                TOC: first_sentences(plain, 1),
                SUMMARY: first_sentences(plain, 2),
                STRUCTURE: text,
            }
            uko_type = "uko-doc:BlockQuote" if kind == "quote" else "uko-doc:Paragraph"
        node = self.factory.make(
            uko_type,
            name,
            qualname,
            block.start,
            block.end,
            parent,
            renderings=renderings,
            properties={"kind": kind, WORD_COUNT: str(len(plain.split()))},
        )
        self.pending_links.append((node, text))
        externals = self.external_links(text)
        if externals:
            node.properties["links"] = "\n".join(externals)
        return node

    # -- links ----------------------------------------------------------------------

    def targets(self, text: str) -> list[str]:
        text = _CODE_SPAN.sub(" ", text)
        found = [m.group(2) for m in _LINK.finditer(text)]
        found.extend(m.group(2) for m in _REF_DEF.finditer(text))
        return found

    def links(self, text: str) -> list[tuple[str, str]]:
        """``uko:references`` edges for links to anchors and files of this resource."""
        edges: list[tuple[str, str]] = []
        for raw in self.targets(text):
            target = unquote(raw.strip())
            if not target or "://" in target or target.startswith(("mailto:", "tel:", "data:")):
                continue
            path, _, anchor = target.partition("#")
            path = path.split("?", 1)[0]
            if not path:
                if anchor:
                    section = self.anchors.get(anchor)
                    uri = section.uri if section else f"symbol:path:{self.relative}#{anchor}"
                    edges.append((REFERENCES, uri))
                    edges.append((CROSS_REFERENCES, uri))
                continue
            if path.startswith("/"):
                resolved = posixpath.normpath(path.lstrip("/"))
            else:
                resolved = posixpath.normpath(posixpath.join(self.directory, path))
            if resolved.startswith("..") or resolved == ".":
                continue
            symbol = f"symbol:path:{resolved}" + (f"#{anchor}" if anchor else "")
            edges.append((REFERENCES, symbol))
        return dedupe(edges)

    def external_links(self, text: str) -> list[str]:
        text = _CODE_SPAN.sub(" ", text)
        found = [t for t in self.targets(text) if "://" in t or t.startswith("mailto:")]
        found.extend(m.group(1) or m.group(0) for m in _AUTOLINK.finditer(text))
        return list(dict.fromkeys(found))

    # -- structure and renderings ---------------------------------------------------------

    def close(self, section: _Section, end: int) -> None:
        """Give every section the line range up to its next sibling or ancestor."""
        children = section.children
        for index, child in enumerate(children):
            child_end = (
                children[index + 1].node.start_line - 1 if index + 1 < len(children) else end
            )
            while child_end > child.node.start_line and not self.lines[child_end - 1].strip():
                child_end -= 1
            child.node.end_line = max(child.node.start_line, child_end)
            self.close(child, child.node.end_line)

    def render(self, section: _Section) -> None:
        for child in section.children:
            self.render(child)
        node = section.node
        is_document = section.level == 0
        # A document whose only top-level heading is its title: describe what is under it.
        lead = section
        if is_document and len(section.children) == 1 and section.children[0].level == 1:
            lead = section.children[0]
        heading = "#" * max(1, section.level) + " " + section.title
        paragraphs = [b for b, _ in (*section.blocks, *lead.blocks) if b.kind == "paragraph"]
        abstract = first_sentences(_plain(paragraphs[0].text), 1) if paragraphs else ""
        summary = [heading]
        keywords = self.keywords(section)
        if keywords:
            node.properties[TOPIC_KEYWORDS] = json.dumps(keywords)
            summary.append("keywords: " + ", ".join(keywords))
        if abstract:
            summary.append(abstract)
        if not is_document:
            count = sum(1 for b, _ in section.blocks if b.kind == "paragraph")
            summary.append(f"({count} paragraphs, {len(section.children)} subsections)")
        summary.extend(self.summaries(lead))
        skeleton = self.skeleton(section)
        if is_document and lead is section:
            skeleton.insert(0, heading)
        node.renderings = {
            TITLE: section.title,
            TOC: "\n".join([heading, *(f"- {c.title}" for c in lead.children)]),
            SUMMARY: "\n".join(summary),
            STRUCTURE: "\n\n".join(skeleton),
            FULL: self.content
            if is_document
            else "\n".join(self.lines[node.start_line - 1 : node.end_line]),
        }
        node.properties[WORD_COUNT] = str(len(node.renderings[FULL].split()))

    def summaries(self, section: _Section) -> list[str]:
        """Every heading below ``section`` with a one-sentence abstract."""
        out = []
        for child in section.children:
            paragraphs = [b for b, _ in child.blocks if b.kind == "paragraph"]
            line = "  " * (child.level - section.level - 1) + f"- {child.title}"
            if paragraphs:
                line += ": " + first_sentences(_plain(paragraphs[0].text), 1, 200)
            out.append(line)
            out.extend(self.summaries(child))
        return out

    def skeleton(self, section: _Section) -> list[str]:
        """Headings, first sentences, list heads and captions: the document's structure."""
        out = ["#" * section.level + " " + section.title] if section.level else []
        for block, node in section.blocks:
            if block.kind in ("paragraph", "quote"):
                out.append(first_sentences(_plain(block.text), 1))
            elif block.kind == "list":
                out.append(node.renderings.get(SUMMARY, ""))
            elif block.kind == "code":
                count = block.end - block.start - 1
                out.append(f"```{block.info}\n... ({max(count, 1)} lines)\n```")
            else:
                out.append(node.renderings[TITLE])
        for child in section.children:
            out.extend(self.skeleton(child))
        return out

    def keywords(self, section: _Section, count: int = 6) -> list[str]:
        """The most frequent content words of a section and its subsections."""
        words: Counter[str] = Counter()
        blocks: list[_Block] = []
        pending = [section]
        while pending and len(blocks) < 300:
            current = pending.pop()
            blocks.extend(b for b, _ in current.blocks)
            pending.extend(current.children)
        for block in blocks:
            if block.kind in ("paragraph", "list", "quote", "table"):
                words.update(
                    w.lower()
                    for w in _WORD.findall(_plain(block.text))
                    if w.lower() not in _STOPWORDS
                )
        words.update({w.lower(): 2 for w in _WORD.findall(section.title)})
        return [w for w, c in words.most_common(count) if c > 1]

    def discusses(self, root: _Section) -> None:
        """``uko-doc:discussesTopic`` from a block to a section whose heading it names."""
        by_first_word: dict[str, list[tuple[str, UKONode]]] = {}
        for section in self.sections:
            title = section.title.lower()
            words = _TOPIC_WORD.findall(title)
            if len(title) >= 8 and (len(words) > 1 or len(title) >= 12):
                by_first_word.setdefault(words[0], []).append((title, section.node))
        if not by_first_word:
            return
        parents = {s.node.uri: s.node.parent for s in self.sections}
        for section in [root, *self.sections]:
            own = {section.node.uri}
            ancestor = section.node.parent
            while ancestor is not None:
                own.add(ancestor)
                ancestor = parents.get(ancestor)
            for block, node in section.blocks:
                if block.kind not in ("paragraph", "list", "quote"):
                    continue
                text = _plain(block.text).lower()
                found: dict[str, None] = {}
                for word in set(_TOPIC_WORD.findall(text)) & by_first_word.keys():
                    for title, target in by_first_word[word]:
                        if target.uri not in own and title in text:
                            found[target.uri] = None
                node.edges.extend((DISCUSSES, uri) for uri in list(found)[:_MAX_TOPICS])


class MarkdownAnalyzer:
    """Markdown documents: sections, paragraphs, lists, code blocks, tables and links."""

    name = "markdown"
    languages: tuple[str, ...] = ("markdown",)
    specificity = 100
    suffixes = frozenset({".md", ".markdown", ".mdown", ".mkd", ".mdx"})

    def supports(self, path: Path, head: bytes) -> bool:
        """Files with a markdown suffix."""
        return path.suffix.lower() in self.suffixes

    def analyze(
        self, path: Path, content: str, *, resource_id: str, relative_path: str
    ) -> AnalysisResult:
        """Nodes for one markdown file; never raises on odd markup."""
        if content.startswith("\ufeff"):
            content = content[1:]
        try:
            nodes = _DocumentBuilder(content, resource_id, relative_path).build()
        except Exception as exc:  # a parser bug must not stop indexing
            from cleveragents_acms.analyzers.text import fall_back_to_text

            return fall_back_to_text(
                path,
                content,
                resource_id=resource_id,
                relative_path=relative_path,
                analyzer="markdown",
                exc=exc,
            )
        return AnalysisResult(nodes=nodes)
