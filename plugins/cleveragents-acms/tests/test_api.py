"""The Python API: one call from a folder and a question to an AssembledContext."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from cleveragents.errors import NotFoundError, ValidationError
from cleveragents.models.context import ContextRequest
from cleveragents_acms import api
from cleveragents_acms.pipeline.tokenizers import get_tokenizer


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, ctx_probe_path: Path) -> Path:
    """A fresh home with the probe plugin installed and enabled (as a user's environment)."""
    monkeypatch.syspath_prepend(str(ctx_probe_path))
    monkeypatch.setenv("CLEVERAGENTS_CONTEXT__STRATEGIES__ENABLED", '["probe-keyword"]')
    monkeypatch.setenv("CLEVERAGENTS_HOME", str(tmp_path / "home"))
    return tmp_path / "home"


@pytest.fixture
def library(tmp_path: Path) -> Path:
    """A small package: the kernel's plugin host and registry."""
    root = tmp_path / "my-lib"
    (root / "lib").mkdir(parents=True)
    for name in ("plugins.py", "registry.py", "errors.py"):
        source = Path(__file__).resolve().parents[3] / "cleveragents-core/src/cleveragents" / name
        shutil.copy(source, root / "lib" / name)
    return root


def test_one_call_from_a_path_and_a_question(home: Path, library: Path) -> None:
    """Indexes the folder (project named after it) and returns a budgeted context."""
    context = api.assemble("how is a failing plugin skipped", path=library, budget=1500)
    cl100k = get_tokenizer("cl100k")
    used = sum(cl100k.count(f.content) for f in context.fragments) + cl100k.count(
        context.preamble or ""
    )
    assert context.fragments and used <= 1500
    assert {f.provenance.path for f in context.fragments} <= {
        "lib/plugins.py",
        "lib/registry.py",
        "lib/errors.py",
    }
    service = api.open_context()
    assert service.history.last("my-lib") is not None  # project defaults to the folder name
    (library / "lib" / "extra.py").write_text("def skip_failing_plugin():\n    return True\n")
    again = api.assemble("skip_failing_plugin", path=library, budget=1500)
    assert any(f.provenance.path == "lib/extra.py" for f in again.fragments)  # re-indexed
    by_name = api.assemble("registry resolve", project="my-lib", budget=800, model="gpt-4o")
    assert by_name.budget.available_tokens == 800


def test_open_context_gives_the_service(home: Path, library: Path, tmp_path: Path) -> None:
    """open_context(home) serves repeated assemblies and expand()."""
    service = api.open_context(home)
    assert api.open_context() is service
    api.assemble("plugin host", path=library, project="lib", budget=600)
    context = service.assemble(ContextRequest(query="plugin host"), project="lib", budget=600)
    dropped = context.dropped[0]
    assert service.expand(dropped.uko_node, project="lib").provenance.path == dropped.path


def test_a_home_deleted_under_the_api_is_made_again(home: Path, library: Path) -> None:
    """A home removed while the process runs is opened afresh on the next call, with
    its tables, instead of through the handle of the deleted database."""
    api.assemble("plugin host", path=library, project="lib", budget=600)
    before = api.open_context()
    shutil.rmtree(home)
    context = api.assemble("plugin host", path=library, project="lib", budget=600)
    assert context.fragments
    assert (home / "cleveragents.db").exists()
    after = api.open_context()
    assert after is not before
    assert after.history.last("lib") is not None


def test_api_errors(home: Path, library: Path) -> None:
    with pytest.raises(ValidationError, match="empty"):
        api.assemble("   ", path=library)
    with pytest.raises(ValidationError, match="budget"):
        api.assemble("x", path=library, budget=0)
    with pytest.raises(ValidationError, match=r"give path= .* or project="):
        api.assemble("x")
    with pytest.raises(NotFoundError, match="project 'nowhere' not found"):
        api.assemble("x", project="nowhere")
    with pytest.raises(ValidationError, match="path does not exist"):
        api.assemble("x", path=library / "missing")


def test_named_strategies_run_alone(home: Path, library: Path) -> None:
    """strategies= runs exactly those, although probe-keyword is enabled."""
    named = api.assemble(
        "how is a failing plugin skipped", path=library, budget=1500, strategies=["simple-keyword"]
    )
    assert named.strategies_used == ("simple-keyword",) and named.fragments
    assert {f.provenance.strategy for f in named.fragments} == {"simple-keyword"}
    default = api.assemble("how is a failing plugin skipped", project="my-lib", budget=1500)
    assert default.strategies_used == ("probe-keyword",)
    with pytest.raises(NotFoundError, match="unknown strategy 'nope'"):
        api.assemble("x", project="my-lib", strategies=["nope"])


def test_by_default_arce_leads_and_the_fallback_path_stands_by(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, library: Path
) -> None:
    """With the built-in strategies only: arce runs, the later strategies of the fallback
    path stand by for it, and the recorded assembly says why; sharing is a setting."""
    monkeypatch.delenv("CLEVERAGENTS_CONTEXT__STRATEGIES__ENABLED", raising=False)
    monkeypatch.setenv("CLEVERAGENTS_HOME", str(tmp_path / "plain"))
    context = api.assemble("how is a failing plugin skipped", path=library, budget=2000)
    assert context.strategies_used == ("arce",) and context.fragments
    report = api.open_context().history.last("my-lib")
    assert report is not None
    standing_by = "stands by for arce on the fallback path"
    assert report.not_selected["breadth-depth-navigator"] == standing_by
    assert report.not_selected["simple-keyword"] == standing_by

    monkeypatch.setenv("CLEVERAGENTS_HOME", str(tmp_path / "sharing"))
    setting = "CLEVERAGENTS_CONTEXT__PIPELINE__STRATEGY_SELECTOR__SHARE_FALLBACK_PATH"
    monkeypatch.setenv(setting, "true")
    shared = api.assemble("how is a failing plugin skipped", path=library, budget=4000)
    assert shared.strategies_used[0] == "arce" and len(shared.strategies_used) > 1
