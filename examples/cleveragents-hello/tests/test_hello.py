"""hello proves its strategy with core's conformance suite, and its CLI as a user would."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from cleveragents.testing.conformance import ContextStrategyConformance
from cleveragents.testing.fixtures import CliResult

pytest.importorskip(
    "cleveragents_hello", reason="cleveragents-hello is not installed in this environment"
)
from cleveragents_hello.strategy import HelloKeywordStrategy


class TestHelloKeywordStrategy(ContextStrategyConformance):
    def make_component(self) -> HelloKeywordStrategy:
        return HelloKeywordStrategy()


def test_the_strategy_is_registered_lazily(plugin_host: Any) -> None:
    """The registry holds the import string until the strategy is first used."""
    registration = plugin_host.registry.strategies.registration("hello-keyword")
    assert registration.plugin == "hello"
    assert registration.target == "cleveragents_hello.strategy:HelloKeywordStrategy"
    assert not registration.is_resolved
    assert isinstance(plugin_host.registry.strategies["hello-keyword"], HelloKeywordStrategy)


def test_plugins_list_shows_what_hello_provides(run_cli: Callable[..., CliResult]) -> None:
    """``plugins list --json`` names the distribution and both components."""
    result = run_cli("plugins", "list", "--json")
    assert result.exit_code == 0, result
    hello = {entry["name"]: entry for entry in result.json()}["hello"]
    assert hello["distribution"] == "cleveragents-hello"
    assert hello["status"] == "loaded"
    assert hello["provides"] == {"strategy": ["hello-keyword"], "command": ["hello"]}


@pytest.mark.parametrize(("args", "greeting"), [((), "Hello, World!"), (("Ada",), "Hello, Ada!")])
def test_hello_command(
    run_cli: Callable[..., CliResult], args: tuple[str, ...], greeting: str
) -> None:
    """``cleveragents hello [NAME]`` greets NAME, World by default."""
    result = run_cli("hello", *args)
    assert (result.exit_code, result.stdout.strip()) == (0, greeting), result
