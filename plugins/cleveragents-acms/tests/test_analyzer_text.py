"""The generic text analyzer: configuration cut at its keys, everything else in chunks."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest

from cleveragents.models.uko import (
    DEPTH_FULL,
    DEPTH_MEMBERS,
    DEPTH_SIGNATURES,
    AnalysisResult,
    UKONode,
)
from cleveragents_acms.analyzers.text import MAX_CHUNK, GenericTextAnalyzer, chunk_lines

REPO = Path(__file__).resolve().parents[3]
RESOURCE = "01HZZZZZZZZZZZZZZZZZZZZZZZ"


def analyze(relative: str, content: str) -> AnalysisResult:
    result = GenericTextAnalyzer().analyze(
        Path(relative), content, resource_id=RESOURCE, relative_path=relative
    )
    assert result.errors == []
    return result


def children(result: AnalysisResult) -> dict[str, UKONode]:
    return {n.qualname: n for n in result.nodes[1:]}


def test_pyproject_toml_is_cut_at_its_tables() -> None:
    """This plugin's pyproject.toml: one ConfigBlock per table, named after it."""
    relative = "plugins/cleveragents-acms/pyproject.toml"
    content = (REPO / relative).read_text(encoding="utf-8")
    result = analyze(relative, content)
    file_node = result.nodes[0]
    assert file_node.uko_type == "uko-infra:ConfigBlock"
    assert file_node.language == "toml"
    assert file_node.renderings[DEPTH_FULL] == content
    sections = children(result)
    assert {"build-system", "project", "project.entry-points.cleveragents"} <= set(sections)
    project = sections["project"]
    assert project.uko_type == "uko-infra:ConfigBlock"
    assert project.parent == file_node.uri
    assert 'name = "cleveragents-acms"' in project.renderings[DEPTH_FULL]
    assert project.renderings[DEPTH_FULL].startswith("[project]")
    assert "[project]" in file_node.renderings[DEPTH_SIGNATURES]
    assert "project.entry-points.cleveragents" in file_node.renderings[DEPTH_MEMBERS]


def test_yaml_json_ini_and_dockerfile_sections() -> None:
    """Top-level YAML keys, JSON keys, INI sections and Dockerfile stages become blocks."""
    yaml = analyze(
        "deploy/compose.yaml",
        "# services\nversion: '3'\nservices:\n  web:\n    image: nginx\nvolumes:\n  data: {}\n",
    )
    assert list(children(yaml)) == ["top", "version", "services", "volumes"]
    assert children(yaml)["services"].renderings[DEPTH_FULL] == (
        "services:\n  web:\n    image: nginx"
    )
    json_file = analyze("package.json", '{\n  "name": "x",\n  "scripts": {\n    "a": "b"\n  }\n}\n')
    assert list(children(json_file)) == ["name", "scripts", "package"]  # and what "x" is
    ini = analyze("setup.cfg", "[metadata]\nname = x\n\n[options]\nzip_safe = False\n")
    assert list(children(ini)) == ["metadata", "options"]
    docker = analyze(
        "Dockerfile",
        "FROM python:3.11 AS build\nRUN pip install .\n\nFROM debian:12\nCOPY --from=build /a /a\n",
    )
    assert docker.nodes[0].uko_type == "uko-infra:ConfigBlock"
    assert list(children(docker)) == ["build", "debian:12"]


def test_plain_text_is_chunked_and_every_line_is_covered() -> None:
    """Blank-line blocks merge into chunks of at most MAX_CHUNK lines covering every line."""
    paragraphs = [f"Paragraph {n} line one.\nParagraph {n} line two." for n in range(40)]
    long_block = "\n".join(f"row {n}" for n in range(150))
    content = "\n\n".join([*paragraphs, long_block]) + "\n"
    result = analyze("notes/log.txt", content)
    file_node = result.nodes[0]
    assert file_node.uko_type == "uko-doc:Document"
    chunks = result.nodes[1:]
    assert all(c.uko_type == "uko:Atom" and c.parent == file_node.uri for c in chunks)
    lines = content.splitlines()
    covered = set()
    for chunk in chunks:
        assert chunk.end_line - chunk.start_line + 1 <= MAX_CHUNK
        assert chunk.renderings[DEPTH_FULL] == "\n".join(
            lines[chunk.start_line - 1 : chunk.end_line]
        )
        assert chunk.qualname == f"L{chunk.start_line}-{chunk.end_line}"
        covered.update(range(chunk.start_line, chunk.end_line + 1))
    nonblank = {n for n, line in enumerate(lines, start=1) if line.strip()}
    assert nonblank <= covered
    assert chunks[0].name == "Paragraph 0 line one."


def test_chunk_lines_merges_small_blocks_and_splits_large_ones() -> None:
    """Small blocks merge up to the limit; a block longer than the limit is windowed."""
    lines = ["a", "b", "", "c", "", *(["x"] * 130)]
    assert chunk_lines(lines) == [(1, 4), (6, 65), (66, 125), (126, 135)]
    assert chunk_lines([]) == []
    assert chunk_lines(["", "  ", ""]) == []


@pytest.mark.parametrize(
    ("relative", "uko_type"),
    [
        ("scripts/build.sh", "uko-code:Module"),
        ("src/main.c", "uko-code:Module"),
        ("docs/index.rst", "uko-doc:Document"),
        (".env", "uko-infra:ConfigBlock"),
        ("data/blob.unknown", "uko:Container"),
    ],
)
def test_file_types_by_language(relative: str, uko_type: str) -> None:
    """The file node's type follows what the file is: code, prose, configuration or other."""
    result = analyze(relative, textwrap.dedent("line one\nline two\n"))
    assert result.nodes[0].uko_type == uko_type
    assert result.nodes[0].properties["language"]


def test_empty_and_odd_content() -> None:
    """Empty files, a BOM and undecodable characters produce a file node and no error."""
    assert len(analyze("empty.txt", "").nodes) == 1
    result = analyze("odd.txt", "\ufeffcaf\ufffd\r\nsecond\rthird\n")
    assert result.nodes[1].renderings[DEPTH_FULL] == "caf\ufffd\nsecond\nthird"


def test_supports_any_text_but_not_binary() -> None:
    """Anything that looks like text is supported; the analyzer is the least specific."""
    analyzer = GenericTextAnalyzer()
    assert analyzer.specificity == 0
    assert analyzer.supports(Path("x.weird"), b"plain words\n")
    assert analyzer.supports(Path("x.txt"), "latin-1 caf\xe9".encode("latin-1"))
    assert not analyzer.supports(Path("x.bin"), b"\x00\x01\x02binary")


def test_an_npm_manifest_says_what_its_package_name_stands_for() -> None:
    """A ``package.json`` with a name gets an ``uko-ts:Export`` node at its ``name``:
    the package's name as imports write it, dotted, standing for all of its entry
    modules (the manifest's, then their ``src/`` twins and the usual ``index`` files),
    its folder, and each entry's default export. Without a name, or not JSON: none."""
    content = (
        '{\n  "name": "@acme/ui",\n  "types": "./lib/index.d.ts",\n  "main": "lib/index.js"\n}\n'
    )
    result = analyze("packages/ui/package.json", content)
    export = children(result)["package"]
    assert export.uko_type == "uko-ts:Export" and export.start_line == 2
    assert export.properties["exported_as"] == "@acme.ui"
    assert json.loads(export.properties["bindings"]) == [
        ["", "packages.ui.lib.index"],
        ["", "packages.ui.src.index"],
        ["", "packages.ui.index"],
        ["default", "packages.ui.lib.index.default"],
        ["default", "packages.ui.src.index.default"],
        ["default", "packages.ui.index.default"],
        ["", "packages.ui"],
    ]
    assert "name" in children(result)  # the keys are still cut as for any JSON
    # Subpaths of ``exports``, whatever their conditions: each a name of its own.
    exported = (
        '{"name": "kit", "exports": {".": {"types": "./dist/index.d.ts",'
        ' "import": "./dist/index.mjs"}, "./utils": {"import": "./dist/utils.mjs"},'
        ' "./icons/*": "./dist/icons/*.js", "./package.json": "./package.json"}}\n'
    )
    found = {n.qualname: n for n in analyze("kit/package.json", exported).nodes[1:]}
    assert json.loads(found["package"].properties["bindings"])[:2] == [
        ["", "kit.dist.index"],
        ["", "kit.src.index"],
    ]
    assert found["exports.utils"].properties["exported_as"] == "kit.utils"
    assert json.loads(found["exports.utils"].properties["bindings"]) == [
        ["", "kit.dist.utils"],
        ["", "kit.src.utils"],
        ["default", "kit.dist.utils.default"],
        ["default", "kit.src.utils.default"],
    ]
    assert json.loads(found["exports.icons"].properties["bindings"]) == [
        ["", "kit.dist.icons"],
        ["", "kit.src.icons"],
    ]
    for nameless in ('{"private": true}\n', '{"name": "broken",\n'):
        result = analyze("package.json", nameless)
        assert not [n for n in result.nodes if n.uko_type == "uko-ts:Export"]


def test_a_tsconfig_says_what_its_path_aliases_stand_for() -> None:
    """Each path alias of a ``tsconfig.json`` (comments and trailing commas allowed, as
    TypeScript allows them) is an ``uko-ts:Export`` node at its line: ``@/*`` stands for
    all of the folder it maps to (from ``baseUrl``), ``@config`` for one module and its
    default export; a catch-all ``*`` stands for nothing; the ``baseUrl`` is where names
    no module answers are looked for too."""
    content = textwrap.dedent(
        """\
        {
          // the app's aliases
          "compilerOptions": {
            "baseUrl": "./app", /* from here */
            "paths": {
              "@/*": ["./src/*", "generated/*"],
              "@config": ["config/index.ts"],
              "*": ["types/*"],
            },
          },
        }
        """
    )
    result = analyze("web/tsconfig.json", content)
    exports = {n.qualname: n for n in result.nodes if n.uko_type == "uko-ts:Export"}
    assert sorted(exports) == ["baseUrl", "paths.@", "paths.@config"]
    assert exports["baseUrl"].start_line == 4 and exports["baseUrl"].name == "baseUrl"
    assert exports["baseUrl"].properties["exported_as"] == ""
    assert json.loads(exports["baseUrl"].properties["bindings"]) == [["", "web.app"]]
    assert exports["paths.@"].start_line == 6
    assert exports["paths.@"].properties["exported_as"] == "@"
    assert json.loads(exports["paths.@"].properties["bindings"]) == [
        ["", "web.app.src"],
        ["", "web.app.generated"],
    ]
    assert json.loads(exports["paths.@config"].properties["bindings"]) == [
        ["", "web.app.config.index"],
        ["default", "web.app.config.index.default"],
    ]
    assert not [
        n
        for n in analyze("tsconfig.json", '{"compilerOptions": {"strict": true}}').nodes
        if n.uko_type == "uko-ts:Export"
    ]
