"""The documentation and the test suite keep up with the hooks.

As datasette does: adding a hookspec without a ``### name`` section in
``docs/hooks.md``, or without any test that mentions it, fails here.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from cleveragents import PROJECT_NAME, hookspecs

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
TEST_DIRS = (ROOT / "tests", ROOT / "cleveragents-core" / "tests")
THIS_FILE = Path(__file__).resolve()


def _hook_names() -> list[str]:
    return sorted(
        name for name in dir(hookspecs) if hasattr(getattr(hookspecs, name), f"{PROJECT_NAME}_spec")
    )


HOOKS = _hook_names()


def _documented_hooks() -> set[str]:
    text = (DOCS / "hooks.md").read_text(encoding="utf-8")
    return set(re.findall(r"^### (\w+)\s*$", text, flags=re.MULTILINE))


def _test_sources() -> str:
    return "\n".join(
        path.read_text(encoding="utf-8")
        for folder in TEST_DIRS
        for path in sorted(folder.rglob("*.py"))
        if path.resolve() != THIS_FILE
    )


def test_hooks_are_collected() -> None:
    """The hookspec module is read correctly (guards the tests below against vacuity)."""
    assert len(HOOKS) >= 25
    assert {"register_commands", "register_context_strategies", "cleveragents_configure"} <= set(
        HOOKS
    )


@pytest.mark.parametrize("hook", HOOKS)
def test_hook_is_documented(hook: str) -> None:
    """Every hookspec has a ``### name`` section in docs/hooks.md."""
    assert hook in _documented_hooks(), f"add a '### {hook}' section to docs/hooks.md"


def test_documented_hooks_exist() -> None:
    """docs/hooks.md documents no hook that does not exist (renamed or removed)."""
    assert _documented_hooks() <= set(HOOKS)


@pytest.mark.parametrize("hook", HOOKS)
def test_hook_has_a_test(hook: str) -> None:
    """Every hookspec is named by at least one test under tests/ or cleveragents-core/tests/."""
    assert re.search(rf"\b{hook}\b", _test_sources()), f"no test mentions the hook {hook}"


@pytest.mark.parametrize("page", ["plugins.md", "hooks.md", "testing-kit.md"])
def test_plugin_author_pages_exist(page: str) -> None:
    assert (DOCS / page).read_text(encoding="utf-8").startswith("# ")


def test_every_conformance_suite_is_documented() -> None:
    """docs/testing-kit.md names every conformance suite the kit exports."""
    from cleveragents.testing.conformance import SUITES_BY_SLOT

    text = (DOCS / "testing-kit.md").read_text(encoding="utf-8")
    missing = [suite.__name__ for suite in SUITES_BY_SLOT.values() if suite.__name__ not in text]
    assert not missing, f"undocumented suites: {missing}"


def test_relative_links_resolve() -> None:
    """Links between the pages and to the examples point at files that exist."""
    broken = []
    for page in DOCS.glob("*.md"):
        for target in re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", page.read_text(encoding="utf-8")):
            if "://" not in target and not (page.parent / target).exists():
                broken.append(f"{page.name}: {target}")
    assert not broken, broken
