"""Third-party plugins as a user meets them: built as wheels, installed in a fresh virtualenv.

Once per session: build wheels of ``cleveragents-core`` and of the two example
plugins (``examples/cleveragents-hello`` and ``examples/cleveragents-broken``),
create a plain virtualenv (no system or development site-packages), install the
three wheels there (core's dependencies come from the configured package
index), then drive the installed ``cleveragents`` command.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path

import pytest

from cleveragents.testing.fixtures import CliResult, find_console_script

ROOT = Path(__file__).resolve().parents[1]
CORE = ROOT / "cleveragents-core"
HELLO = ROOT / "examples" / "cleveragents-hello"
BROKEN = ROOT / "examples" / "cleveragents-broken"
#: PEP 639 ``license = "…"`` strings need setuptools 77.
SETUPTOOLS_FOR_BUILD = "setuptools>=77"
_NOT_SOURCES = shutil.ignore_patterns(
    "build", "dist", "*.egg-info", "__pycache__", ".pytest_cache", "tests"
)


@dataclass(frozen=True)
class FreshEnv:
    python: Path
    script: Path
    home: Path

    def run(self, *args: str, env: Mapping[str, str] | None = None) -> CliResult:
        """``cleveragents ARGS`` in the fresh environment, outside any outer plugin selection."""
        environment = {
            key: value
            for key, value in os.environ.items()
            if not key.startswith("CLEVERAGENTS_") and key not in ("PYTHONPATH", "VIRTUAL_ENV")
        }
        environment.update({"CLEVERAGENTS_HOME": str(self.home), **(env or {})})
        completed = subprocess.run(
            [str(self.script), *args],
            capture_output=True,
            text=True,
            env=environment,
            timeout=120,
            check=False,
        )
        return CliResult(args, completed.returncode, completed.stdout, completed.stderr)

    def plugins(self, *options: str, env: Mapping[str, str] | None = None) -> dict[str, dict]:
        result = self.run(*options, "plugins", "list", "--json", env=env)
        assert result.exit_code == 0, result
        return {entry["name"]: entry for entry in result.json()}


def _pip(*args: str, python: Path | None = None) -> None:
    """Run the development environment's pip, optionally against another interpreter."""
    target = ["--python", str(python)] if python else []
    command = [sys.executable, "-m", "pip", "--disable-pip-version-check", *target, *args]
    completed = subprocess.run(command, capture_output=True, text=True, check=False)
    if completed.returncode != 0:
        pytest.fail(f"$ {' '.join(command)}\n{completed.stdout}\n{completed.stderr}", pytrace=False)


def _setuptools_can_build() -> bool:
    try:
        major = int(metadata.version("setuptools").split(".")[0])
    except (metadata.PackageNotFoundError, ValueError):
        return False
    return major >= 77


@pytest.fixture(scope="session")
def fresh_env(tmp_path_factory: pytest.TempPathFactory) -> FreshEnv:
    """A plain virtualenv with the wheels of core, hello and broken installed."""
    root = tmp_path_factory.mktemp("third-party")
    venv = root / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    python = venv / ("Scripts/python.exe" if os.name == "nt" else "bin/python")

    # Build without isolation, so pip never fetches a build backend: with this
    # environment's setuptools when it is recent enough, else with one
    # installed (once) into the fresh environment.
    builder = None
    if not _setuptools_can_build():
        _pip("install", "--quiet", SETUPTOOLS_FOR_BUILD, python=python)
        builder = python
    # Build from copies: an in-tree build leaves build/ and *.egg-info behind, and a
    # stale build/ can smuggle deleted files into later wheels.
    sources = [
        shutil.copytree(tree, root / "src" / tree.name, ignore=_NOT_SOURCES)
        for tree in (CORE, HELLO, BROKEN)
    ]
    wheels = root / "wheels"
    _pip(
        "wheel",
        "--quiet",
        "--no-deps",
        "--no-build-isolation",
        "--wheel-dir",
        str(wheels),
        *map(str, sources),
        python=builder,
    )
    built = sorted(wheels.glob("*.whl"))
    assert len(built) == 3, built
    _pip("install", "--quiet", "--find-links", str(wheels), *map(str, built), python=python)

    home = root / "home"
    home.mkdir()
    return FreshEnv(python, find_console_script("cleveragents", python=str(python)), home)


def test_the_environment_is_isolated(fresh_env: FreshEnv) -> None:
    """Core comes from the wheel, not from the development checkout."""
    completed = subprocess.run(
        [str(fresh_env.python), "-c", "import cleveragents; print(cleveragents.__file__)"],
        capture_output=True,
        text=True,
        check=True,
        env={"PATH": os.environ.get("PATH", "")},
    )
    assert str(CORE) not in completed.stdout
    assert str(fresh_env.python.parents[1]) in completed.stdout


def test_hello_is_listed_with_distribution_version_and_components(fresh_env: FreshEnv) -> None:
    """``plugins list --json`` shows what the hello distribution provides."""
    hello = fresh_env.plugins()["hello"]
    assert hello["distribution"] == "cleveragents-hello"
    assert hello["version"] == "0.1.0"
    assert hello["status"] == "loaded"
    assert hello["builtin"] is False
    assert hello["provides"] == {"strategy": ["hello-keyword"], "command": ["hello"]}


def test_hello_command_works_beside_a_broken_plugin(fresh_env: FreshEnv) -> None:
    """A broken plugin in the same environment does not stop hello's command."""
    result = fresh_env.run("hello", "World")
    assert (result.exit_code, result.stdout) == (0, "Hello, World!\n"), result


def test_a_broken_plugin_is_reported_not_fatal(fresh_env: FreshEnv) -> None:
    """The broken plugin is listed with its error, and the listing still succeeds."""
    plugins = fresh_env.plugins()
    broken = plugins["broken"]
    assert broken["status"] == "error"
    assert broken["distribution"] == "cleveragents-broken"
    assert "this plugin is broken on purpose" in broken["error"]
    assert broken["provides"] == {}
    assert plugins["hello"]["status"] == "loaded"


def test_strict_plugins_turns_the_failure_into_a_one_line_error(fresh_env: FreshEnv) -> None:
    """``--strict-plugins`` exits non-zero with one line naming the plugin, no traceback."""
    result = fresh_env.run("--strict-plugins", "plugins", "list")
    assert result.exit_code != 0, result
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result
    assert "broken" in lines[0] and "Traceback" not in result.stderr


def test_disabled_autoload_loads_only_the_named_plugins(fresh_env: FreshEnv) -> None:
    """With autoload off, ``-p hello`` loads hello; broken is disabled, not failed."""
    plugins = fresh_env.plugins("-p", "hello", env={"CLEVERAGENTS_DISABLE_PLUGIN_AUTOLOAD": "1"})
    assert plugins["hello"]["status"] == "loaded"
    assert plugins["broken"]["status"] == "disabled"
    assert plugins["broken"]["error"] is None
    assert plugins["core-commands"]["status"] == "loaded"


def test_disabled_autoload_with_the_environment_allow_list(fresh_env: FreshEnv) -> None:
    """``CLEVERAGENTS_PLUGINS`` is the environment's spelling of ``-p``."""
    plugins = fresh_env.plugins(
        env={"CLEVERAGENTS_DISABLE_PLUGIN_AUTOLOAD": "1", "CLEVERAGENTS_PLUGINS": "hello"}
    )
    assert (plugins["hello"]["status"], plugins["broken"]["status"]) == ("loaded", "disabled")


def test_no_prefix_disables_a_plugin(fresh_env: FreshEnv) -> None:
    """``-p no:hello`` disables hello and removes its command."""
    assert fresh_env.plugins("-p", "no:hello")["hello"]["status"] == "disabled"
    result = fresh_env.run("-p", "no:hello", "hello")
    assert result.exit_code != 0
    assert "No such command 'hello'" in result.stderr


def test_disable_plugins_variable_skips_the_broken_plugin(fresh_env: FreshEnv) -> None:
    """``CLEVERAGENTS_DISABLE_PLUGINS=broken`` makes even a strict run pass."""
    result = fresh_env.run(
        "--strict-plugins", "plugins", "list", env={"CLEVERAGENTS_DISABLE_PLUGINS": "broken"}
    )
    assert result.exit_code == 0, result


def test_an_unknown_plugin_name_is_a_one_line_error(fresh_env: FreshEnv) -> None:
    """``-p nope`` names the problem on one line and exits non-zero."""
    result = fresh_env.run("-p", "nope", "plugins", "list")
    assert result.exit_code != 0
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result
    assert "nope" in lines[0]


def test_plugins_check_and_show_report_the_broken_plugin(fresh_env: FreshEnv) -> None:
    """``plugins check`` fails because of broken; ``plugins show hello`` lists its components."""
    check = fresh_env.run("plugins", "check", "--json")
    assert check.exit_code == 1, check
    assert [f["plugin"] for f in check.json()["failures"]] == ["broken"]
    show = fresh_env.run("plugins", "show", "hello", "--json")
    assert show.exit_code == 0, show
    components = {(c["slot"], c["name"]): c["target"] for c in show.json()["components"]}
    assert components == {
        ("strategy", "hello-keyword"): "cleveragents_hello.strategy:HelloKeywordStrategy"
    }


def test_hellos_own_tests_pass_where_it_is_installed(fresh_env: FreshEnv) -> None:
    """The example's test suite (the conformance suite included) passes against the wheels."""
    _pip("install", "--quiet", "pytest", python=fresh_env.python)
    environment = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith(("CLEVERAGENTS_", "PYTEST_")) and key != "PYTHONPATH"
    }
    completed = subprocess.run(
        [
            str(fresh_env.python),
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            "--rootdir",
            str(HELLO),
            "-c",
            str(HELLO / "pyproject.toml"),
            str(HELLO / "tests"),
        ],
        capture_output=True,
        text=True,
        env=environment,
        cwd=HELLO,
        timeout=300,
        check=False,
    )
    assert completed.returncode == 0, completed.stdout + completed.stderr
    assert " passed" in completed.stdout and " failed" not in completed.stdout
