"""The pytest fixtures of ``cleveragents.testing`` behave as documented for plugin authors."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any, ClassVar

import pytest

from cleveragents import hookimpl
from cleveragents.hookspecs import Register
from cleveragents.testing.fixtures import CliResult, find_console_script

pytest_plugins = ["pytester"]


class EchoTool:
    name = "test/echo"
    description = "Echo."
    input_schema: ClassVar[dict[str, Any]] = {"type": "object", "properties": {}}

    def invoke(self, arguments: Any) -> Any:
        return arguments


class ToolPlugin:
    @hookimpl
    def register_tools(self, register: Register) -> None:
        register("test/echo", EchoTool())


class FailingPlugin:
    @hookimpl
    def register_tools(self, register: Register) -> None:
        raise RuntimeError("cannot register")


def test_cleveragents_home_is_a_fresh_directory_in_the_environment(cleveragents_home: Path) -> None:
    """The fixture creates an empty directory and points CLEVERAGENTS_HOME at it."""
    assert cleveragents_home.is_dir()
    assert list(cleveragents_home.iterdir()) == []
    assert os.environ["CLEVERAGENTS_HOME"] == str(cleveragents_home)


def test_plugin_host_loads_the_builtin_plugins(plugin_host: Any) -> None:
    """plugin_host is built as the CLI builds it, core's own plugins included."""
    assert plugin_host.records["core-sandboxes"].status == "loaded"
    assert {"filesystem_copy", "none"} <= set(plugin_host.registry.sandboxes)


def test_register_plugin_adds_a_plugin_for_the_test(plugin_host: Any, register_plugin: Any) -> None:
    """A registered object's hooks run when the registry is next built."""
    record = register_plugin(ToolPlugin(), name="tools")
    assert (record.status, record.hooks) == ("loaded", ["register_tools"])
    assert isinstance(plugin_host.registry.tools["test/echo"], EchoTool)
    assert plugin_host.provides("tools") == {"tool": ["test/echo"]}


def test_register_plugin_reports_a_failing_hook(plugin_host: Any, register_plugin: Any) -> None:
    """A plugin whose hook raises is recorded as failed; the others still register."""
    register_plugin(ToolPlugin(), name="tools")
    failing = register_plugin(FailingPlugin(), name="failing")
    assert "test/echo" in plugin_host.registry.tools
    assert failing.status == "error"
    assert "cannot register" in (failing.error or "")


def test_register_plugin_unregisters_after_the_test(pytester: pytest.Pytester) -> None:
    """The plugin is gone from the host once the test that registered it ends."""
    pytester.makepyfile(
        """
        from cleveragents import hookimpl

        HOSTS = []

        class Plugin:
            @hookimpl
            def register_tools(self, register):
                pass

        def test_register(plugin_host, register_plugin):
            register_plugin(Plugin(), name="temporary")
            HOSTS.append(plugin_host)
            assert "temporary" in plugin_host.records

        def test_gone_afterwards():
            assert "temporary" not in HOSTS[0].records
            assert not HOSTS[0].pm.has_plugin("temporary")
        """
    )
    pytester.runpytest("-p", "no:cacheprovider").assert_outcomes(passed=2)


def test_run_cli_runs_the_installed_command(
    run_cli: Callable[..., CliResult], cleveragents_home: Path
) -> None:
    """run_cli uses the console script beside sys.executable and the temporary home."""
    result = run_cli("init")
    assert result.exit_code == 0, result
    assert (cleveragents_home / "config.toml").is_file()
    listing = run_cli("plugins", "list", "--json")
    assert "core-commands" in {entry["name"] for entry in listing.json()}


def test_run_cli_reports_failures_and_environment(run_cli: Callable[..., CliResult]) -> None:
    """Exit codes and stderr come back; env adds variables for one run."""
    unknown = run_cli("-p", "nope", "plugins", "list")
    assert unknown.exit_code != 0
    assert "nope" in unknown.stderr
    disabled = run_cli(
        "plugins", "list", "--json", env={"CLEVERAGENTS_DISABLE_PLUGINS": "core-sandboxes"}
    )
    status = {entry["name"]: entry["status"] for entry in disabled.json()}
    assert status["core-sandboxes"] == "disabled"


def test_cli_result_json_explains_non_json_output() -> None:
    """``.json()`` on text output fails with the command and both streams."""
    result = CliResult(("plugins", "list"), 0, "NAME  STATUS\n", "")
    with pytest.raises(AssertionError, match="cleveragents plugins list did not print JSON"):
        result.json()


def test_find_console_script_names_a_missing_script(tmp_path: Path) -> None:
    """Looking beside an interpreter without core installed is a clear error."""
    with pytest.raises(FileNotFoundError, match="is cleveragents-core installed"):
        find_console_script(python=str(tmp_path / "bin" / "python"))
