"""The plugin host: loading, isolation of failures, selection, the typo guard and events."""

from __future__ import annotations

import sys
import textwrap
from importlib.metadata import EntryPoint
from pathlib import Path
from types import ModuleType
from typing import Any

import click
import pytest

from cleveragents import hookimpl
from cleveragents.errors import PluginError, ValidationError
from cleveragents.models.context import StrategyCapabilities
from cleveragents.plugins import PluginHost, PluginSelection


class KeywordStrategy:
    """A minimal strategy that satisfies ContextStrategy."""

    name = "kw"
    capabilities = StrategyCapabilities(uses_text=True, quality_score=0.3)

    def can_handle(self, request: Any, backends: Any) -> float:
        return 0.5

    def assemble(self, request: Any, backends: Any, budget: int, plan_context: Any) -> list[Any]:
        return []


class StrategyPlugin:
    @hookimpl
    def register_context_strategies(self, register: Any) -> None:
        register("kw", KeywordStrategy())


def _module(name: str, source: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    """Write an importable module into ``tmp_path`` and return its name."""
    (tmp_path / f"{name}.py").write_text(textwrap.dedent(source))
    monkeypatch.syspath_prepend(str(tmp_path))
    sys.modules.pop(name, None)
    return name


def _host(
    *eps: EntryPoint,
    options: tuple[str, ...] = (),
    env: dict[str, str] | None = None,
    strict: bool = False,
) -> PluginHost:
    return PluginHost.load(options, strict=strict, env=env or {}, entry_points=list(eps))


def test_builtin_plugins_register_through_public_hooks() -> None:
    """Core's own sandboxes arrive through register_sandbox_strategies like any plugin's."""
    host = _host()
    assert host.records["core-sandboxes"].status == "loaded"
    assert host.records["core-sandboxes"].distribution == "cleveragents-core"
    assert set(host.registry.sandboxes) == {"filesystem_copy", "none"}
    assert host.provides("core-sandboxes") == {"sandbox": ["filesystem_copy", "none"]}


def test_registered_plugin_is_listed_with_its_slots() -> None:
    """A plugin object's registrations show up in the registry and in describe()."""
    host = _host()
    host.register(StrategyPlugin(), "strategies")
    assert host.registry.strategies["kw"].name == "kw"
    entry = next(e for e in host.describe() if e["name"] == "strategies")
    assert entry["provides"] == {"strategy": ["kw"]}
    assert entry["hooks"] == ["register_context_strategies"]


def test_import_failure_is_recorded_and_others_load(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A plugin that raises at import is marked as error; the host keeps working."""
    bad = _module(
        "ca_bad_import", "raise RuntimeError('broken on purpose')\n", tmp_path, monkeypatch
    )
    good = _module(
        "ca_good",
        """
        from cleveragents import hookimpl
        @hookimpl
        def register_tools(register):
            register("echo", "ca_good:Echo")
        class Echo:
            name = "echo"
            description = "Echo arguments"
            input_schema = {"type": "object"}
            def invoke(self, arguments):
                return dict(arguments)
        """,
        tmp_path,
        monkeypatch,
    )
    host = _host(EntryPoint("bad", bad, "cleveragents"), EntryPoint("good", good, "cleveragents"))
    assert host.records["bad"].status == "error"
    assert "RuntimeError: broken on purpose" in (host.records["bad"].error or "")
    assert host.records["good"].status == "loaded"
    assert host.registry.tools["echo"].invoke({"a": 1}) == {"a": 1}


def test_strict_plugins_makes_a_failure_fatal(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With strict=True the first failing plugin raises PluginError naming it."""
    bad = _module("ca_bad_strict", "import no_such_module_xyz\n", tmp_path, monkeypatch)
    with pytest.raises(PluginError, match="plugin 'bad'"):
        _host(EntryPoint("bad", bad, "cleveragents"), strict=True)


def test_hook_that_raises_is_skipped_with_all_its_registrations() -> None:
    """A registration hook raising drops everything that plugin registered."""

    class HalfBroken:
        @hookimpl
        def register_context_strategies(self, register: Any) -> None:
            register("half", KeywordStrategy())
            raise ValueError("second registration failed")

    host = _host()
    host.register(HalfBroken(), "half")
    host.register(StrategyPlugin(), "fine")
    assert "half" not in host.registry.strategies
    assert "kw" in host.registry.strategies
    assert host.records["half"].status == "error"
    assert "ValueError: second registration failed" in (host.records["half"].error or "")


def test_protocol_violation_names_the_plugin() -> None:
    """An eager component lacking Protocol members makes its plugin fail, naming both."""

    class NotAStrategy:
        name = "bogus"

    class Bad:
        @hookimpl
        def register_context_strategies(self, register: Any) -> None:
            register("bogus", NotAStrategy())

    host = _host()
    host.register(Bad(), "bad-strategies")
    host.registry  # noqa: B018
    error = host.records["bad-strategies"].error or ""
    assert "plugin 'bad-strategies'" in error
    assert "ContextStrategy" in error and "can_handle" in error


def test_lazy_reference_is_checked_on_first_use(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A "module:attr" registration is imported lazily and validated when resolved."""
    mod = _module("ca_lazy", "class Half:\n    name = 'x'\n", tmp_path, monkeypatch)

    class Lazy:
        @hookimpl
        def register_embedders(self, register: Any) -> None:
            register("half", f"{mod}:Half")

    host = _host()
    host.register(Lazy(), "lazy")
    assert mod not in sys.modules, "lazy references must not be imported to list plugins"
    assert host.provides("lazy") == {"embedder": ["half"]}
    with pytest.raises(PluginError, match=r"plugin 'lazy': embedder 'half'.*Embedder"):
        host.registry.embedders["half"]
    failures = host.registry.validate_all()
    assert [(r.plugin, r.name) for r, _ in failures] == [("lazy", "half")]


def test_duplicate_names_in_a_slot_name_both_plugins() -> None:
    """Two plugins registering the same strategy name: the second fails, naming the first."""
    host = _host()
    host.register(StrategyPlugin(), "first")
    host.register(StrategyPlugin(), "second")
    host.registry  # noqa: B018
    assert host.records["first"].status == "loaded"
    error = host.records["second"].error or ""
    assert "'first'" in error and "'second'" in error and "strategy 'kw'" in error


def test_unknown_hook_is_reported_with_a_suggestion() -> None:
    """A typo in a hook name becomes a warning (and an error under strict)."""

    class Typo:
        @hookimpl
        def register_context_strategy(self, register: Any) -> None:  # missing "ies"
            pass

    host = _host()
    host.register(Typo(), "typo")
    (warning,) = host.records["typo"].warnings
    assert "unknown hook 'register_context_strategy'" in warning
    assert "did you mean 'register_context_strategies'" in warning
    strict = _host(strict=True)
    with pytest.raises(PluginError, match="unknown hook"):
        strict.register(Typo(), "typo")


def test_pluggy_signature_validation_failure_is_isolated() -> None:
    """A hookimpl asking for an argument the spec does not offer is rejected, not fatal."""

    class WrongArgs:
        @hookimpl
        def register_tools(self, register: Any, nonsense: Any) -> None:
            pass

    host = _host()
    host.register(WrongArgs(), "wrong")
    assert host.records["wrong"].status == "error"
    assert "nonsense" in (host.records["wrong"].error or "")


def test_selection_follows_pytest_conventions(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Autoload off loads only allow-listed plugins; no:NAME and the env deny-list skip."""
    names = [_module(f"ca_sel_{n}", "", tmp_path, monkeypatch) for n in ("a", "b")]
    eps = [EntryPoint(n[-1], n, "cleveragents") for n in names]
    off = {"CLEVERAGENTS_DISABLE_PLUGIN_AUTOLOAD": "1"}
    host = _host(*eps, env={**off, "CLEVERAGENTS_PLUGINS": "a"})
    assert (host.records["a"].status, host.records["b"].status) == ("loaded", "disabled")
    host = _host(*eps, options=("b",), env=off)
    assert (host.records["a"].status, host.records["b"].status) == ("disabled", "loaded")
    host = _host(*eps, options=("no:a",))
    assert (host.records["a"].status, host.records["b"].status) == ("disabled", "loaded")
    host = _host(*eps, env={"CLEVERAGENTS_DISABLE_PLUGINS": "a,b"})
    assert host.records["a"].status == host.records["b"].status == "disabled"
    assert PluginSelection.from_env(["x", "no:y"], env={}).explicit == ["x", "y"]


def test_unknown_plugin_in_p_option_is_a_validation_error() -> None:
    """-p with a name nobody installed fails fast, listing what is installed."""
    with pytest.raises(ValidationError, match=r"unknown plugin 'nope'.*core-sandboxes"):
        _host(options=("nope",))


def test_commands_are_attributed_and_clashes_rejected() -> None:
    """register_commands additions are recorded per plugin; a clash fails the later plugin."""

    def make(command_name: str) -> object:
        class Commands:
            @hookimpl
            def register_commands(self, cli: click.Group) -> None:
                cli.add_command(click.Command(command_name, callback=lambda: None))

        return Commands()

    host = _host(options=("no:core-commands",))
    host.register(make("hello"), "hello")
    host.register(make("hello"), "hello-again")
    cli = click.Group("root")
    host.add_commands(cli)
    assert host.provides("hello") == {"command": ["hello"]}
    assert host.records["hello-again"].status == "error"
    assert "'hello'" in (host.records["hello-again"].error or "")

    class Raising:
        @hookimpl
        def register_commands(self, cli: click.Group) -> None:
            cli.add_command(click.Command("half", callback=lambda: None))
            raise RuntimeError("boom")

    host.register(Raising(), "raising")
    host.add_commands(cli)
    assert "half" not in cli.commands
    assert host.records["raising"].status == "error"


def test_call_event_isolates_each_plugin() -> None:
    """An event hook that raises in one plugin still reaches the others."""
    seen: list[str] = []

    class Ok:
        @hookimpl
        def cleveragents_plan_phase_changed(self, plan_id: str, new_phase: str) -> None:
            seen.append(f"{plan_id}:{new_phase}")

    class Boom:
        @hookimpl
        def cleveragents_plan_phase_changed(self, plan_id: str) -> None:
            raise RuntimeError("listener failed")

    host = _host()
    host.register(Boom(), "boom")
    host.register(Ok(), "ok")
    failures = host.call_event(
        "cleveragents_plan_phase_changed", plan_id="P1", old_phase=None, new_phase="execute"
    )
    assert seen == ["P1:execute"]
    assert [(name, str(exc)) for name, exc in failures] == [("boom", "listener failed")]


def test_configure_runs_once_and_unconfigure_after() -> None:
    """cleveragents_configure is called once; unconfigure is called at shutdown."""
    calls: list[str] = []

    class Lifecycle:
        @hookimpl
        def cleveragents_configure(self, config: Any) -> None:
            calls.append(f"configure:{config}")

        @hookimpl
        def cleveragents_unconfigure(self, config: Any) -> None:
            calls.append("unconfigure")

    host = _host()
    host.register(Lifecycle(), "life")
    host.configure("cfg")
    host.configure("cfg")
    host.unconfigure()
    assert calls == ["configure:cfg", "unconfigure"]


def test_resource_events_reach_plugins() -> None:
    """cleveragents_resource_added/removed/indexed are delivered with their arguments."""
    events: list[tuple[str, Any]] = []

    class Indexer:
        @hookimpl
        def cleveragents_resource_added(self, resource: Any, project: str | None) -> None:
            events.append(("added", (resource, project)))

        @hookimpl
        def cleveragents_resource_removed(self, resource: Any) -> None:
            events.append(("removed", resource))

        @hookimpl
        def cleveragents_resource_indexed(self, resource: Any, stats: dict[str, Any]) -> None:
            events.append(("indexed", stats["files"]))

    host = _host()
    host.register(Indexer(), "indexer")
    assert not host.call_event("cleveragents_resource_added", resource="R", project="p", app=None)
    assert not host.call_event("cleveragents_resource_indexed", resource="R", stats={"files": 3})
    assert not host.call_event("cleveragents_resource_removed", resource="R", app=None)
    assert events == [("added", ("R", "p")), ("indexed", 3), ("removed", "R")]


def test_module_plugins_are_supported(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A plain module with hookimpl functions is a plugin; its file is its location."""
    name = _module(
        "ca_module_plugin",
        """
        from cleveragents import hookimpl
        @hookimpl
        def register_lsp_servers(register):
            class Pyright:
                name = "pyright"
                languages = ("python",)
                command = ("pyright-langserver", "--stdio")
            register("pyright", Pyright())
        """,
        tmp_path,
        monkeypatch,
    )
    host = _host(EntryPoint("mod", name, "cleveragents"))
    assert host.registry["lsp-server"]["pyright"].languages == ("python",)
    assert host.records["mod"].location == str((tmp_path / f"{name}.py").resolve())
    assert isinstance(sys.modules[name], ModuleType)


def test_specname_implementations_are_called() -> None:
    """A hookimpl renamed with specname= registers like one named after the hook."""

    class Renamed:
        @hookimpl(specname="register_context_strategies")
        def my_strategies(self, register: Any) -> None:
            register("kw", KeywordStrategy())

    host = _host()
    host.register(Renamed(), "renamed")
    assert host.records["renamed"].hooks == ["register_context_strategies"]
    assert host.records["renamed"].warnings == []
    assert "kw" in host.registry.strategies
