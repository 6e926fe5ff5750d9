"""Any text file to UKO nodes: a file node and chunks, so that everything is searchable.

The fallback analyzer (lowest specificity). Configuration files (YAML, TOML,
INI, JSON, ``.env``, properties) are cut at their top-level keys or tables
into ``uko-infra:ConfigBlock`` chunks named after the key (``tool.ruff``);
other text is cut at blank lines into chunks of up to ~60 lines. The file
node is a ``uko-infra:ConfigBlock`` for configuration, ``uko-doc:Document``
for prose, ``uko-code:Module`` for source code the specific analyzers do
not cover, else ``uko:Container``.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from cleveragents.models.uko import (
    DEPTH_FULL,
    DEPTH_MEMBERS,
    DEPTH_NAME,
    DEPTH_SIGNATURES,
    AnalysisResult,
    UKONode,
)
from cleveragents_acms.analyzers._common import (
    CODE_LANGUAGES,
    CONFIG_LANGUAGES,
    EXPORT_BINDINGS,
    PROSE_LANGUAGES,
    SCRIPT_EXPORT,
    NodeFactory,
    first_line,
    is_binary,
    language_of,
    split_lines,
    truncate,
)
from cleveragents_acms.analyzers.packages import EXPORTED_AS, is_script_manifest, script_names

__all__ = ["GenericTextAnalyzer", "chunk_lines", "fall_back_to_text"]

#: Chunks grow to at least this many lines when blank-line blocks are small…
MIN_CHUNK = 20
#: …and never beyond this many.
MAX_CHUNK = 60

_INI_SECTION = re.compile(r"^\s*\[\[?\s*([^\]]+?)\s*\]\]?\s*(?:[#;].*)?$")
_YAML_KEY = re.compile(r"""^(?:"([^"]+)"|'([^']+)'|([^\s#:'"-][^:#]*?))\s*:(?:\s|$)""")
_JSON_KEY = re.compile(r'^(\s*)"((?:[^"\\]|\\.)+)"\s*:')
_ENV_KEY = re.compile(r"^\s*(?:export\s+)?([A-Za-z_][\w.-]*)\s*[=:]")
_DOCKER_STAGE = re.compile(r"^\s*FROM\s+(\S+)(?:\s+AS\s+(\S+))?", re.IGNORECASE)


def chunk_lines(lines: list[str]) -> list[tuple[int, int]]:
    """1-based inclusive ranges: blank-line blocks merged up to ``MAX_CHUNK`` lines."""
    blocks: list[tuple[int, int]] = []
    start = None
    for number, line in enumerate(lines, start=1):
        if line.strip():
            if start is None:
                start = number
        elif start is not None:
            blocks.append((start, number - 1))
            start = None
    if start is not None:
        blocks.append((start, len(lines)))
    chunks: list[tuple[int, int]] = []
    for block_start, block_end in blocks:
        while block_end - block_start + 1 > MAX_CHUNK:
            chunks.append((block_start, block_start + MAX_CHUNK - 1))
            block_start += MAX_CHUNK
        if chunks:
            last_start, last_end = chunks[-1]
            merged = block_end - last_start + 1
            if last_end - last_start + 1 < MIN_CHUNK and merged <= MAX_CHUNK:
                chunks[-1] = (last_start, block_end)
                continue
        chunks.append((block_start, block_end))
    return chunks


def _config_sections(language: str, lines: list[str]) -> list[tuple[str, int]]:
    """(key, 1-based first line) of each top-level key or table of a configuration file."""
    starts: list[tuple[str, int]] = []
    if language in ("toml", "ini"):
        for number, line in enumerate(lines, start=1):
            match = _INI_SECTION.match(line)
            if match:
                starts.append((match.group(1).strip().strip("\"'"), number))
    elif language == "yaml":
        for number, line in enumerate(lines, start=1):
            if line and not line[0].isspace() and not line.startswith(("#", "---", "...")):
                match = _YAML_KEY.match(line)
                if match:
                    key = match.group(1) or match.group(2) or match.group(3) or ""
                    starts.append((key.strip(), number))
    elif language == "json":
        keys = [
            (m.group(1), m.group(2), n)
            for n, line in enumerate(lines, start=1)
            if (m := _JSON_KEY.match(line))
        ]
        if keys:
            top = min(len(indent) for indent, _, _ in keys)
            starts = [(key, n) for indent, key, n in keys if len(indent) == top]
    elif language == "dockerfile":
        for number, line in enumerate(lines, start=1):
            match = _DOCKER_STAGE.match(line)
            if match:
                starts.append((match.group(2) or match.group(1), number))
    return starts


class GenericTextAnalyzer:
    """Any text file: a file node plus searchable chunks (configuration cut at its keys)."""

    name = "text"
    languages: tuple[str, ...] = ("text",)
    specificity = 0
    #: Raised when what it finds in the same file changes (indexes analyse its files
    #: again). 1: an npm ``package.json`` says what its package's name stands for, a
    #: ``tsconfig.json`` what its path aliases do.
    revision = 1

    def supports(self, path: Path, head: bytes) -> bool:
        """Every file whose first bytes look like text."""
        return not is_binary(head)

    def analyze(
        self, path: Path, content: str, *, resource_id: str, relative_path: str
    ) -> AnalysisResult:
        """A file node and its chunks."""
        if content.startswith("\ufeff"):
            content = content[1:]
        language = language_of(relative_path)
        lines = split_lines(content)
        if lines and lines[-1] == "" and len(lines) > 1:
            lines = lines[:-1]
        factory = NodeFactory(resource_id, relative_path, language)
        if language in CONFIG_LANGUAGES:
            file_type = "uko-infra:ConfigBlock"
        elif language in PROSE_LANGUAGES:
            file_type = "uko-doc:Document"
        elif language in CODE_LANGUAGES:
            file_type = "uko-code:Module"
        else:
            file_type = "uko:Container"
        file_node = factory.make(
            file_type,
            Path(relative_path).name,
            "",
            1,
            max(1, len(lines)),
            None,
            properties={"kind": "file", "language": language},
        )
        sections = _config_sections(language, lines) if language in CONFIG_LANGUAGES else []
        ranges: list[tuple[str, str, int, int]] = []  # name, qualname, start, end
        if sections:
            head = lines[: sections[0][1] - 1]
            if any(any(c.isalnum() for c in line) for line in head):
                ranges.append(("(top)", "top", 1, sections[0][1] - 1))
            for index, (key, start) in enumerate(sections):
                end = sections[index + 1][1] - 1 if index + 1 < len(sections) else len(lines)
                while end > start and not lines[end - 1].strip():
                    end -= 1
                for part, (s, e) in enumerate(_windows(start, end)):
                    suffix = f"~part{part + 1}" if part else ""
                    ranges.append((key, key + suffix, s, e))
        else:
            for start, end in chunk_lines(lines):
                label = truncate(first_line("\n".join(lines[start - 1 : min(end, start + 3)])), 60)
                ranges.append((label or f"lines {start}-{end}", f"L{start}-{end}", start, end))
        for name, qualname, start, end in ranges:
            text = "\n".join(lines[start - 1 : end])
            factory.make(
                "uko-infra:ConfigBlock" if sections else "uko:Atom",
                name,
                qualname,
                start,
                end,
                file_node,
                renderings={
                    DEPTH_NAME: name,
                    DEPTH_SIGNATURES: "\n".join(lines[start - 1 : min(end, start + 4)]),
                    DEPTH_FULL: text,
                },
                properties={"kind": "section" if sections else "chunk"},
            )
        if is_script_manifest(Path(relative_path).name):
            _script_exports(factory, file_node, relative_path, content, lines)
        members = [n.name for n in factory.nodes[1:]]
        file_node.renderings = {
            DEPTH_NAME: relative_path,
            DEPTH_MEMBERS: "\n".join([relative_path, *members[:200]]),
            DEPTH_SIGNATURES: "\n".join([f"# {relative_path}", *_overview(language, lines)]),
            DEPTH_FULL: content,
        }
        return AnalysisResult(nodes=factory.nodes)


def _script_exports(
    factory: NodeFactory, file_node: UKONode, relative: str, content: str, lines: list[str]
) -> None:
    """A script manifest's ``uko-ts:Export`` nodes, each at its key's line: what an npm
    package's name stands for (``package.json``), what each path alias of a
    ``tsconfig.json`` does (:func:`~cleveragents_acms.analyzers.packages.script_names`)."""
    for key, qualname, name, bindings in script_names(relative, content):
        quoted = f'"{key}"'
        line = next((n for n, text in enumerate(lines, 1) if text.lstrip().startswith(quoted)), 1)
        text = lines[line - 1].strip() if lines else ""
        factory.make(
            SCRIPT_EXPORT, f"{qualname.partition('.')[0]} {name}".strip(), qualname, line,
            line, file_node,
            renderings={DEPTH_NAME: text, DEPTH_FULL: text},
            properties={
                "kind": "export", "module": name, EXPORTED_AS: name,
                EXPORT_BINDINGS: json.dumps([[b, t] for b, t in bindings]),
            },
        )  # fmt: skip


def _windows(start: int, end: int) -> list[tuple[int, int]]:
    return [(s, min(end, s + MAX_CHUNK - 1)) for s in range(start, end + 1, MAX_CHUNK)] or [
        (start, end)
    ]


def _overview(language: str, lines: list[str]) -> list[str]:
    """Configuration: its unindented lines (keys, tables); anything else: its first lines."""
    if language in CONFIG_LANGUAGES:
        top = [
            truncate(line.rstrip(), 160)
            for line in lines
            if line.strip() and not line[0].isspace() and not line.lstrip().startswith(("#", ";"))
        ]
        if top:
            return top[:200]
    return [truncate(line.rstrip(), 160) for line in lines[:30]]


def fall_back_to_text(
    path: Path, content: str, *, resource_id: str, relative_path: str, analyzer: str, exc: Exception
) -> AnalysisResult:
    """The file as plain text, with the error of the analyzer that failed on it: a parser
    or grammar bug must not stop indexing nor leave the file unsearchable."""
    result = GenericTextAnalyzer().analyze(
        path, content, resource_id=resource_id, relative_path=relative_path
    )
    result.errors.append(f"{relative_path}: {analyzer} analysis failed: {exc!r}")
    return result
