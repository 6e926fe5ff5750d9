"""Fixtures for the context tests: a real code base indexed once, a probe strategy, the CLI.

The probe strategy (``probe-keyword``) stands in for any retrieval strategy:
it searches the text backend and turns every hit into a full-source fragment
through the NodeSource, ignoring its allotment, so the packer has to fall back
and drop, which is what the budget tests need. In-process tests register it
with ``host.register``; the installed ``cleveragents`` command finds it as an
entry point of a small distribution on ``PYTHONPATH``.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

import cleveragents

CORE_SOURCES = Path(cleveragents.__file__).parent
CLI = str(Path(sys.executable).with_name("cleveragents"))

PROBE_STRATEGY = '''
from cleveragents.models.context import StrategyCapabilities


class KeywordProbe:
    """Text search hits as full-source fragments (ignores its allotment on purpose)."""

    name = "probe-keyword"
    capabilities = StrategyCapabilities(uses_text=True, quality_score=0.5)

    def can_handle(self, request, backends):
        return 0.8 if backends.text is not None and backends.nodes is not None else 0.0

    def assemble(self, request, backends, budget, plan_context):
        terms = request.query or " ".join(request.focus)
        out = []
        for uri in request.focus:
            fragment = backends.nodes.fragment(uri, 9, relevance=1.0, strategy=self.name)
            if fragment is not None:
                out.append(fragment)
        for hit in backends.text.search(terms, max_results=25):
            fragment = backends.nodes.fragment(
                hit.uko_uri, 9, relevance=min(1.0, hit.score), strategy=self.name
            )
            if fragment is not None:
                out.append(fragment)
        return out
'''

PROBE_PLUGIN = """
from cleveragents import hookimpl


@hookimpl
def register_context_strategies(register):
    register("probe-keyword", "context_probe_strategy:KeywordProbe")


@hookimpl
def register_fragment_scorers(register):
    register("raising", "context_probe_strategy:RaisingScorer")


@hookimpl
def register_tokenizers(register):
    register("words", "context_probe_strategy:WordTokenizer")
    register("broken-words", "context_probe_strategy:BrokenTokenizer")
"""

RAISING_SCORER = '''

class RaisingScorer:
    """A custom stage that always fails."""

    def score(self, fragments, plan_context):
        raise RuntimeError("scorer exploded")
'''


PROBE_TOKENIZERS = '''

class WordTokenizer:
    """Counts whitespace-separated words, for the models it claims (``probe-…``)."""

    name = "words"
    models = ("probe-",)
    loaded = 0

    def __init__(self):
        type(self).loaded += 1
        self._ids = {}
        self._words = []

    def count(self, text):
        return len(text.split())

    def encode(self, text):
        ids = []
        for word in text.split():
            if word not in self._ids:
                self._ids[word] = len(self._words)
                self._words.append(word)
            ids.append(self._ids[word])
        return ids

    def decode(self, tokens):
        return " ".join(self._words[t] for t in tokens)


class BrokenTokenizer(WordTokenizer):
    """Claims ``broken-…`` models, then fails to load."""

    name = "broken-words"
    models = ("broken-",)

    def __init__(self):
        raise RuntimeError("vocabulary missing")
'''


def _write_probe(root: Path) -> None:
    (root / "context_probe_strategy.py").write_text(
        PROBE_STRATEGY + RAISING_SCORER + PROBE_TOKENIZERS
    )
    (root / "context_probe_plugin.py").write_text(PROBE_PLUGIN)
    dist = root / "context_probe-0.1.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: context-probe\nVersion: 0.1\n")
    (dist / "entry_points.txt").write_text("[cleveragents]\ncontext-probe = context_probe_plugin\n")


@pytest.fixture(scope="session")
def ctx_probe_path(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder holding the probe plugin as an installed distribution (for PYTHONPATH)."""
    root = tmp_path_factory.mktemp("probe")
    _write_probe(root)
    return root


def probe_classes(probe_path: Path) -> dict[str, Any]:
    namespace: dict[str, Any] = {}
    exec(
        compile((probe_path / "context_probe_strategy.py").read_text(), "probe", "exec"), namespace
    )
    return namespace


def cli_env(home: Path, probe_path: Path | None, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("CLEVERAGENTS_")}
    env["CLEVERAGENTS_HOME"] = str(home)
    if probe_path is not None:
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(probe_path), env.get("PYTHONPATH")]))
        env["CLEVERAGENTS_CONTEXT__STRATEGIES__ENABLED"] = '["probe-keyword"]'
    env.update(extra)
    return env


def run_cli(
    env: dict[str, str], *args: str, check: bool = True, cwd: Path | None = None
) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(
        [CLI, *args], env=env, capture_output=True, text=True, timeout=300, cwd=cwd
    )
    if check:
        assert done.returncode == 0, f"{args}: {done.stderr}"
    return done


def make_corpus(root: Path) -> Path:
    """A copy of the kernel's sources plus a README: a real, mid-sized code base."""
    shutil.copytree(
        CORE_SOURCES, root / "cleveragents", ignore=shutil.ignore_patterns("__pycache__")
    )
    (root / "README.md").write_text(
        "# Demo\n\n## Plugins\n\nA failing plugin is recorded and skipped.\n"
    )
    return root


@pytest.fixture(scope="session")
def ctx_template(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """(home, corpus): the corpus indexed once into project ``demo`` by the installed CLI."""
    base = tmp_path_factory.mktemp("context-template")
    corpus = make_corpus(base / "repo")
    home = base / "home"
    run_cli(cli_env(home, None), "index", str(corpus), "--project", "demo")
    return home, corpus


@pytest.fixture
def ctx_home(
    tmp_path: Path, ctx_template: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch
) -> Path:
    """A private copy of the indexed home, set as ``$CLEVERAGENTS_HOME``."""
    home = tmp_path / "home"
    shutil.copytree(ctx_template[0], home)
    monkeypatch.setenv("CLEVERAGENTS_HOME", str(home))
    return home


@pytest.fixture
def ctx_corpus(ctx_template: tuple[Path, Path]) -> Path:
    """The indexed corpus (read-only: tests that edit files index their own)."""
    return ctx_template[1]


@pytest.fixture
def ctx_cli(
    ctx_home: Path, ctx_probe_path: Path
) -> Callable[..., subprocess.CompletedProcess[str]]:
    """Run the installed ``cleveragents`` on the private home with the probe installed."""
    env = cli_env(ctx_home, ctx_probe_path)

    def run(
        *args: str, check: bool = True, cwd: Path | None = None, **extra: str
    ) -> subprocess.CompletedProcess[str]:
        return run_cli({**env, **extra}, *args, check=check, cwd=cwd)

    return run


@pytest.fixture
def ctx_service(
    ctx_home: Path, tmp_path: Path, ctx_probe_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Iterator[Any]:
    """A ContextService over the private home, the probe registered with ``host.register``."""
    from cleveragents import hookimpl
    from cleveragents.config import load_config
    from cleveragents.plugins import PluginHost
    from cleveragents.storage.database import Database
    from cleveragents_acms.context.service import ContextService

    classes = probe_classes(ctx_probe_path)

    class Probe:
        @hookimpl
        def register_context_strategies(self, register: Any) -> None:
            register("probe-keyword", classes["KeywordProbe"]())

        @hookimpl
        def register_fragment_scorers(self, register: Any) -> None:
            register("raising", classes["RaisingScorer"]())

        @hookimpl
        def register_tokenizers(self, register: Any) -> None:
            # by reference, as an installed plugin does: loaded when first used
            register("words", "context_probe_strategy:WordTokenizer")
            register("broken-words", "context_probe_strategy:BrokenTokenizer")

    monkeypatch.syspath_prepend(str(ctx_probe_path))
    host = PluginHost.load(env={"CLEVERAGENTS_DISABLE_PLUGINS": "context-probe"})
    host.register(Probe(), "probe")
    config = load_config(
        cwd=tmp_path, env={}, overrides={"context.strategies.enabled": ["probe-keyword"]}
    )
    database = Database.from_config(config)
    yield ContextService(database, host.registry, config)
    database.dispose()
