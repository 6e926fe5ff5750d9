"""The builtin/context tools: registered through the tools hook, conformant, and useful."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any, ClassVar

import pytest

from cleveragents.errors import ValidationError
from cleveragents.plugins import PluginHost
from cleveragents.testing.conformance import ToolConformance
from cleveragents_acms.context import tools
from cleveragents_acms.pipeline.tokenizers import get_tokenizer

QUESTION = "How does the plugin host keep a failing plugin from taking the host down?"
NAMES = ("request_context", "query_history", "get_context_budget")


@pytest.fixture
def bound(ctx_service: Any) -> Iterator[Any]:
    tools.bind(ctx_service)
    yield ctx_service
    tools.bind(None)


def test_tools_are_registered_under_builtin_context() -> None:
    """register_tools provides the three tools by their namespaced names."""
    registry = PluginHost.load(env={}).registry
    for name in NAMES:
        tool = registry.tools[f"builtin/context/{name}"]
        assert tool.name == name
        assert registry.tools.registration(f"builtin/context/{name}").plugin == "acms"


def test_request_context_assembles_within_the_budget(bound: Any) -> None:
    result = tools.RequestContextTool().invoke(
        {"query": QUESTION, "project": "demo", "budget": 700}
    )
    cl100k = get_tokenizer("cl100k")
    used = sum(cl100k.count(f["content"]) for f in result["fragments"])
    used += cl100k.count(result["preamble"] or "")
    assert result["fragments"] and used <= 700 == result["budget"]
    assert all(":" in f["location"] for f in result["fragments"])
    assert result["dropped"] and {"uko_node", "path", "reason"} <= set(result["dropped"][0])
    focused = tools.RequestContextTool().invoke(
        {"project": "demo", "focus": [result["dropped"][0]["uko_node"]], "budget": 4000}
    )
    assert result["dropped"][0]["uko_node"] in {f["uko_node"] for f in focused["fragments"]}


def test_query_history_reads_past_assemblies(bound: Any) -> None:
    tools.RequestContextTool().invoke({"query": QUESTION, "project": "demo", "budget": 900})
    tools.RequestContextTool().invoke({"query": "tokenizer count", "project": "demo"})
    history = tools.QueryHistoryTool().invoke({"project": "demo"})["assemblies"]
    assert [h["query"] for h in history] == ["tokenizer count", QUESTION]
    assert history[1]["budget"] == 900 and history[1]["delivered"]
    found = tools.QueryHistoryTool().invoke({"query": "failing plugin", "limit": 5})
    assert [h["query"] for h in found["assemblies"]] == [QUESTION]


def test_get_context_budget(bound: Any) -> None:
    budget = tools.GetContextBudgetTool().invoke({"model": "gpt-4o", "used_tokens": 50_000})
    assert budget["context_window"] == 128_000 and budget["tokenizer"] == "o200k"
    assert budget["budget"] == 128_000 - 4096 - budget["tool_definitions"]
    assert budget["remaining_tokens"] == budget["budget"] - 50_000
    assert budget["refresh_recommended"] is True
    plain = tools.GetContextBudgetTool().invoke({})
    assert (plain["budget"], plain["source"], plain["remaining_tokens"]) == (8000, "default", 8000)


def test_bad_arguments_are_validation_errors(bound: Any) -> None:
    with pytest.raises(ValidationError, match="'project' is required"):
        tools.RequestContextTool().invoke({"query": "x"})
    with pytest.raises(ValidationError, match="empty"):
        tools.RequestContextTool().invoke({"project": "demo"})
    with pytest.raises(ValidationError, match="unknown argument"):
        tools.QueryHistoryTool().invoke({"bogus": 1})
    with pytest.raises(ValidationError, match="'budget' must be an integer >= 1"):
        tools.GetContextBudgetTool().invoke({"budget": 0})


class TestRequestContextConformance(ToolConformance):
    valid_arguments: ClassVar[dict[str, Any]] = {"project": "tiny", "query": "greet", "budget": 300}

    def make_component(self, tmp_path: Path) -> Any:
        from cleveragents_acms.api import assemble

        root = tmp_path / "tiny"
        root.mkdir()
        (root / "hello.py").write_text('def greet(name):\n    return f"hi {name}"\n')
        assemble("greet", path=root, budget=200)  # indexes it as project "tiny"
        return tools.RequestContextTool()


class TestQueryHistoryConformance(ToolConformance):
    valid_arguments: ClassVar[dict[str, Any]] = {"limit": 3}

    def make_component(self) -> Any:
        return tools.QueryHistoryTool()


class TestGetContextBudgetConformance(ToolConformance):
    valid_arguments: ClassVar[dict[str, Any]] = {"model": "claude-sonnet-4", "used_tokens": 10}

    def make_component(self) -> Any:
        return tools.GetContextBudgetTool()
