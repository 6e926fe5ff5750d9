"""Every analyzer honours the kernel's ``analyzer`` slot, loads lazily and speaks the ontology."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

from cleveragents.plugins import PluginHost
from cleveragents.protocols import UKOAnalyzer
from cleveragents.registry import protocol_violations
from cleveragents.slots import SLOTS_BY_KEY
from cleveragents_acms.analyzers.files import choose_analyzer, discover, read_text
from cleveragents_acms.ontology.loader import UKOLoader

REPO = Path(__file__).resolve().parents[3]
RESOURCE = "01HZZZZZZZZZZZZZZZZZZZZZZZ"
NAMES = ["python", "markdown", "typescript", "javascript", "go", "rust", "java", "text"]

SAMPLES = {
    "pkg/mod.py": "import os\n\nclass A(B):\n    x = 1\n\n    @property\n    def f(self):\n"
    "        return os.getcwd()\n\nasync def g():\n    pass\n",
    "tests/test_mod.py": "from pkg.mod import A\n\ndef test_a():\n    A()\n",
    "pkg/__init__.py": "from .mod import A\n",
    "docs/guide.md": "# Guide\n\nSee [api](api.md).\n\n## Part\n\n- item\n\n```py\nx\n```\n\n"
    "| a |\n|---|\n\n> q\n\n![fig](f.png)\n",
    "web/app.ts": "import { x } from './x';\nexport class A extends B implements C {\n"
    "  p = 1;\n  m() { x(); }\n}\ninterface C { n(): void; q: number }\n"
    "type T = string;\nenum E { A }\nexport const f = () => 1;\nlet v = 2;\n"
    "namespace N { export function g() {} }\n",
    "web/app.js": "const fs = require('fs');\nclass A { #p = 1; m() {} }\nfunction f() {}\n",
    "cmd/main.go": 'package main\n\nimport "fmt"\n\ntype S struct { A int }\n'
    "type I interface { M() }\ntype N int\nfunc (s *S) M() { fmt.Println() }\n"
    "func F() {}\nvar V = 1\n",
    "src/lib.rs": "use std::fmt;\n#[derive(Debug)]\nstruct S { a: i32 }\nenum E { A }\n"
    "trait T { fn t(&self); }\nimpl T for S { fn t(&self) {} }\nfn f() {}\n"
    "macro_rules! m { () => {} }\ntype A = i32;\nconst C: i32 = 1;\nmod inner { fn g() {} }\n"
    "mod other;\n",
    "src/util/mod.rs": "pub fn h() {}\n",
    "A.java": "package p;\nimport java.util.List;\n@Deprecated\nclass A extends B implements C {\n"
    "  int f;\n  A() {}\n  void m() { n(); }\n  void n() {}\n}\ninterface C {}\n"
    "enum E { X }\nrecord R(int a) {}\n@interface Ann {}\n",
    "pyproject.toml": "[project]\nname = 'x'\n",
    "Dockerfile": "FROM python:3.11\nRUN true\n",
    "notes.txt": "hello\n\nworld\n",
    "run.sh": "#!/bin/sh\necho hi\n",
    "blob.unknown": "data\n",
}


@pytest.fixture(scope="module")
def analyzers() -> dict[str, Any]:
    """The analyzers as the kernel loads them from the installed entry points."""
    host = PluginHost.load(env={"CLEVERAGENTS_DISABLE_PLUGIN_AUTOLOAD": ""})
    view = host.registry.analyzers
    assert [name for name in NAMES if name not in view] == []
    return {name: view[name] for name in NAMES}


@pytest.mark.parametrize("name", NAMES)
def test_analyzer_satisfies_the_slot_protocol(analyzers: dict[str, Any], name: str) -> None:
    """Each registered analyzer conforms to UKOAnalyzer and is named as registered."""
    analyzer = analyzers[name]
    assert protocol_violations(analyzer, SLOTS_BY_KEY["analyzer"]) == []
    assert isinstance(analyzer, UKOAnalyzer)
    assert analyzer.name == name
    assert analyzer.languages and all(isinstance(x, str) for x in analyzer.languages)
    assert isinstance(analyzer.specificity, int)


def test_listing_plugins_does_not_import_parsers() -> None:
    """Loading the plugin and resolving every analyzer imports no tree-sitter grammar."""
    code = textwrap.dedent(
        """\
        import sys
        from cleveragents.plugins import PluginHost
        host = PluginHost.load(env={})
        view = host.registry.analyzers
        for name in view:
            view[name]
        print(sorted(m for m in sys.modules if m.startswith("tree_sitter")))
        """
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


@pytest.mark.parametrize(
    ("relative", "head", "expected"),
    [
        ("a/b.py", b"", "python"),
        ("bin/tool", b"#!/usr/bin/env python3\n", "python"),
        ("README.md", b"", "markdown"),
        ("ui/App.tsx", b"", "typescript"),
        ("lib/x.mjs", b"", "javascript"),
        ("main.go", b"", "go"),
        ("src/lib.rs", b"", "rust"),
        ("A.java", b"", "java"),
        ("config.yaml", b"a: 1\n", "text"),
        ("Dockerfile", b"FROM x\n", "text"),
        ("blob.bin", b"\x00\x01", None),
    ],
)
def test_the_most_specific_analyzer_is_chosen(
    analyzers: dict[str, Any], relative: str, head: bytes, expected: str | None
) -> None:
    """choose_analyzer over the registered analyzers picks the language's own analyzer."""
    chosen = choose_analyzer(list(analyzers.values()), Path(relative), head)
    assert (chosen.name if chosen else None) == expected


def test_every_node_type_and_predicate_is_in_the_ontology(analyzers: dict[str, Any]) -> None:
    """Node types are UKO classes and edge predicates UKO properties of the built-in ontology."""
    ontology = UKOLoader()
    values = list(analyzers.values())
    seen_types: set[str] = set()
    for relative, content in SAMPLES.items():
        analyzer = choose_analyzer(values, Path(relative), content.encode()[:8192])
        assert analyzer is not None, relative
        result = analyzer.analyze(
            Path(relative), content, resource_id=RESOURCE, relative_path=relative
        )
        assert result.errors == [], (relative, result.errors)
        for node in result.nodes:
            seen_types.add(node.uko_type)
            assert node.uko_type in ontology, (relative, node.uko_type)
            assert ontology.term(node.uko_type).is_class
            for predicate, target in node.edges:
                assert predicate in ontology, (relative, predicate)
                assert target.startswith(("symbol:", "https://cleveragents.ai/r/")), target
            for key in node.properties:
                if ":" in key:
                    assert key in ontology, key
    assert len(seen_types) >= 40


def test_this_plugin_indexes_end_to_end(analyzers: dict[str, Any]) -> None:
    """Discover this distribution, pick an analyzer per file and analyze it without errors."""
    root = REPO / "plugins" / "cleveragents-acms"
    discovery = discover(root)
    assert any(f.relative == "src/cleveragents_acms/analyzers/python.py" for f in discovery.files)
    values = list(analyzers.values())
    total = 0
    for source in discovery.files:
        with source.path.open("rb") as handle:
            head = handle.read(8192)
        analyzer = choose_analyzer(values, source.path, head)
        assert analyzer is not None, source.relative
        text, read_errors = read_text(source.path)
        result = analyzer.analyze(
            source.path, text, resource_id=RESOURCE, relative_path=source.relative
        )
        assert read_errors == [] and result.errors == [], (source.relative, result.errors)
        assert result.nodes and result.nodes[0].path == source.relative
        total += len(result.nodes)
    assert total > 1000
