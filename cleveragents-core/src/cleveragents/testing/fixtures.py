"""pytest fixtures for testing CleverAgents plugins (loaded automatically as a pytest plugin).

``cleveragents-core`` declares this module as the ``pytest11`` entry point
``cleveragents``, so any test suite in an environment where core is installed
gets these fixtures without a ``conftest.py``:

``cleveragents_home``
    A fresh, empty ``$CLEVERAGENTS_HOME`` for the test (set in the environment).
``plugin_host``
    A :class:`~cleveragents.plugins.PluginHost` loaded from the installed entry
    points, using that home.
``register_plugin``
    ``register_plugin(obj, name="test-plugin")`` adds a plugin object to
    ``plugin_host`` for one test and removes it afterwards.
``run_cli``
    ``run_cli("plugins", "list", "--json")`` runs the installed ``cleveragents``
    command in a subprocess with that home and returns a :class:`CliResult`.
``postgres_server`` (session) and ``postgres_url``
    A private PostgreSQL server started from the machine's PostgreSQL binaries for
    the test session, and a fresh empty database on it per test (its URL); a test
    that asks for them is skipped where PostgreSQL is not installed.

This module is imported by every pytest run in such an environment, so it
imports nothing heavy at module level.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from cleveragents.plugins import PluginHost, PluginRecord

__all__ = [
    "CliResult",
    "cleveragents_home",
    "find_console_script",
    "plugin_host",
    "postgres_server",
    "postgres_url",
    "register_plugin",
    "run_cli",
]


@dataclass(frozen=True)
class CliResult:
    """What one ``cleveragents`` run produced."""

    args: tuple[str, ...]
    exit_code: int
    stdout: str
    stderr: str

    def json(self) -> Any:
        """``stdout`` parsed as JSON; the error names the command and shows its output."""
        try:
            return json.loads(self.stdout)
        except json.JSONDecodeError as exc:
            raise AssertionError(
                f"cleveragents {' '.join(self.args)} did not print JSON ({exc}); "
                f"exit code {self.exit_code}\nstdout:\n{self.stdout}\nstderr:\n{self.stderr}"
            ) from None

    def __str__(self) -> str:
        return (
            f"$ cleveragents {' '.join(self.args)}  (exit {self.exit_code})\n"
            f"--- stdout ---\n{self.stdout}--- stderr ---\n{self.stderr}"
        )


def find_console_script(name: str = "cleveragents", python: str | None = None) -> Path:
    """The console script ``name`` installed beside ``python`` (default: this interpreter)."""
    scripts = Path(python or sys.executable).parent
    for candidate in (scripts / name, scripts / f"{name}.exe"):
        if candidate.is_file():
            return candidate
    found = shutil.which(name, path=str(scripts))
    if found is None:
        raise FileNotFoundError(
            f"no '{name}' console script beside {python or sys.executable}; "
            "is cleveragents-core installed in this environment?"
        )
    return Path(found)


def _run(
    script: Path,
    args: Sequence[str],
    *,
    home: Path,
    env: Mapping[str, str | None] | None,
    input: str | None,
    cwd: Path | None,
    timeout: float,
) -> CliResult:
    environment = dict(os.environ)
    environment["CLEVERAGENTS_HOME"] = str(home)
    environment.setdefault("PYTHONIOENCODING", "utf-8")
    for key, value in (env or {}).items():
        if value is None:
            environment.pop(key, None)
        else:
            environment[key] = value
    completed = subprocess.run(
        [str(script), *args],
        input=input,
        capture_output=True,
        text=True,
        env=environment,
        cwd=cwd,
        timeout=timeout,
        check=False,
    )
    return CliResult(tuple(args), completed.returncode, completed.stdout, completed.stderr)


@pytest.fixture
def cleveragents_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A fresh ``$CLEVERAGENTS_HOME`` (an existing, empty directory) for one test."""
    home = tmp_path / "cleveragents-home"
    home.mkdir()
    monkeypatch.setenv("CLEVERAGENTS_HOME", str(home))
    return home


@pytest.fixture
def plugin_host(cleveragents_home: Path) -> Iterator[PluginHost]:
    """A PluginHost built from the installed entry points, as the CLI builds it.

    Plugin selection follows the environment (``CLEVERAGENTS_PLUGINS`` …), so
    use ``monkeypatch.setenv`` before requesting this fixture to change it.
    """
    from cleveragents.plugins import PluginHost

    host = PluginHost.load()
    yield host
    host.unconfigure()


@pytest.fixture
def register_plugin(plugin_host: PluginHost) -> Iterator[Callable[..., PluginRecord]]:
    """``register_plugin(obj, name="test-plugin")``: add a plugin for this test only.

    ``obj`` is a module, class instance or class with ``@hookimpl`` functions.
    Returns the plugin's :class:`~cleveragents.plugins.PluginRecord`, whose
    ``status`` and ``error`` say whether the host accepted it; the registry is
    rebuilt on its next use, so registration hooks run then.
    """
    added: list[str] = []

    def register(obj: object, name: str = "test-plugin") -> PluginRecord:
        plugin_host.register(obj, name)
        added.append(name)
        return plugin_host.records[name]

    yield register
    for name in reversed(added):
        plugin_host.unregister(name)


@pytest.fixture
def run_cli(cleveragents_home: Path) -> Callable[..., CliResult]:
    """Run the installed ``cleveragents`` command in a subprocess.

    ``run_cli(*args, env=None, input=None, cwd=None, timeout=120)``; ``env``
    adds variables to the test's environment (``None`` as a value removes
    one). The subprocess sees installed plugins only, not ``register_plugin``'s.
    """
    script = find_console_script()

    def run(
        *args: str,
        env: Mapping[str, str | None] | None = None,
        input: str | None = None,
        cwd: Path | None = None,
        timeout: float = 120,
    ) -> CliResult:
        return _run(
            script, args, home=cleveragents_home, env=env, input=input, cwd=cwd, timeout=timeout
        )

    return run


@pytest.fixture(scope="session")
def postgres_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The URL of a PostgreSQL server of this test session's own (skips without one)."""
    from cleveragents.testing.postgres import PostgresUnavailable, start_postgres

    try:
        url, stop = start_postgres(tmp_path_factory.mktemp("postgres"))
    except PostgresUnavailable as exc:
        pytest.skip(f"PostgreSQL unavailable: {exc}")
    try:
        yield url
    finally:
        stop()


@pytest.fixture
def postgres_url(postgres_server: str) -> str:
    """The URL of a fresh, empty database on the session's PostgreSQL server."""
    from cleveragents.models import new_ulid
    from cleveragents.testing.postgres import create_database

    return create_database(postgres_server, f"t_{new_ulid().lower()}")
