"""The configuration chain: precedence, sources, TOML errors, and safe, comment-keeping writes."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
import tempfile
import tomllib
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cleveragents.config import (
    DEFAULTS,
    PIPELINE_SLOTS,
    Config,
    env_var_name,
    load_config,
    parse_value,
    toml_value,
)
from cleveragents.errors import ConfigurationError, ValidationError

KEY = "context.budget.skeleton-ratio"


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A fresh ``$CLEVERAGENTS_HOME``."""
    path = tmp_path / "home"
    monkeypatch.setenv("CLEVERAGENTS_HOME", str(path))
    return path


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A project folder (a git checkout) with a ``.cleveragents/`` folder."""
    path = tmp_path / "repo"
    (path / ".git").mkdir(parents=True)
    (path / ".cleveragents").mkdir()
    return path


def _write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def _load(cwd: Path, **kwargs: Any) -> Config:
    kwargs.setdefault("env", {})
    return load_config(cwd=cwd, **kwargs)


# -- defaults --------------------------------------------------------------------


def test_defaults_follow_the_spec(home: Path, tmp_path: Path) -> None:
    """The built-in defaults carry the specification's keys and values."""
    config = _load(tmp_path)
    assert config.get("context.hot.max-tokens") == 16000
    assert config.get("context.budget.refresh-threshold") == 0.30
    assert config.get("context.budget.min-useful-budget") == 500
    assert config.get(KEY) == 0.15
    assert config.get("context.file.max-size") == 1_048_576
    assert config.get("context.file.max-total-size") == 52_428_800
    assert config.get("context.query.min-relevance") == 0.3
    assert config.get("context.strategies.enabled") == [
        "arce",
        "simple-keyword",
        "semantic-embedding",
        "breadth-depth-navigator",
    ]
    assert config.get("context.pipeline.strategy-executor.timeout-seconds") == 30
    assert config.get("context.pipeline.budget-packer.depth-fallback-steps") == [9, 4, 2, 0]
    assert config.get("context.fusion.preamble-max-tokens") == 200
    assert config.get("core.database-url") is None
    assert config.get("core.log.level") == "warning"
    assert config.get("sandbox.strategy") == "filesystem_copy"
    assert config.get("plugins.strict") is False
    assert config.source("core.database-url") == "default"
    assert "core.database-url" in config


def test_pipeline_table_lists_all_ten_components(home: Path, tmp_path: Path) -> None:
    """``get("context.pipeline")`` is a table; each slot's component is also a plain key."""
    config = _load(tmp_path)
    assert len(PIPELINE_SLOTS) == 10
    for slot, component in PIPELINE_SLOTS.items():
        assert config.get(f"context.pipeline.{slot}") == component
        assert component.startswith("builtin:")
    table = config.get("context.pipeline")
    assert table["strategy-selector"] == {
        "component": "builtin:ConfidenceWeightedSelector",
        "share-fallback-path": False,
    }
    assert table["fragment-scorer"] == {
        "component": "builtin:WeightedCompositeScorer",
        "relevance-weight": 0.4,
        "hierarchy-weight": 0.3,
        "quality-weight": 0.2,
        "recency-weight": 0.1,
    }
    assert config.section("context.pipeline.strategy-executor") == {
        "circuit-breaker-threshold": 3,
        "max-workers": 4,
        "timeout-seconds": 30,
    }


def test_unknown_key_returns_the_default(home: Path, tmp_path: Path) -> None:
    """Unknown keys give the caller's default and report no source."""
    config = _load(tmp_path)
    assert config.get("context.nothing-here", 7) == 7
    assert config.source("context.nothing-here") == "unset"
    assert "context.nothing-here" not in config


# -- the chain -------------------------------------------------------------------


def test_precedence_cli_env_project_global_default(home: Path, project: Path) -> None:
    """CLI overrides beat env, env beats the project file, which beats the global file."""
    global_file = _write(home / "config.toml", "[context.budget]\nskeleton-ratio = 0.1\n")
    project_file = _write(
        project / ".cleveragents/config.toml", "context.budget.skeleton-ratio = 0.2\n"
    )
    env = {env_var_name(KEY): "0.3"}

    config = _load(project, env=env, overrides={KEY: 0.4})
    assert (config.get(KEY), config.source(KEY)) == (0.4, "cli")
    config = _load(project, env=env)
    assert (config.get(KEY), config.source(KEY)) == (
        0.3,
        "env:CLEVERAGENTS_CONTEXT__BUDGET__SKELETON_RATIO",
    )
    config = _load(project)
    assert (config.get(KEY), config.source(KEY)) == (0.2, f"project:{project_file}")
    project_file.unlink()
    config = _load(project)
    assert (config.get(KEY), config.source(KEY)) == (0.1, f"global:{global_file}")
    global_file.unlink()
    config = _load(project)
    assert (config.get(KEY), config.source(KEY)) == (0.15, "default")


def test_items_lists_every_key_with_its_source(home: Path, project: Path) -> None:
    """``items()`` is flat, sorted, and names each value's origin."""
    _write(home / "config.toml", "[core.log]\nlevel = 'info'\n")
    _write(project / ".cleveragents/config.toml", "[index.text]\nbackend = 'sqlite-fts5'\n")
    config = _load(project, overrides={"plugins.strict": True})
    items = {key: (value, source) for key, value, source in config.items()}
    assert [key for key, _, _ in config.items()] == sorted(items)
    assert items["core.log.level"] == ("info", f"global:{home / 'config.toml'}")
    assert items["index.text.backend"][1].startswith("project:")
    assert items["plugins.strict"] == (True, "cli")
    assert items["context.hot.max-tokens"] == (16000, "default")
    assert set(DEFAULTS) <= set(items)


def test_table_source_is_the_most_specific(home: Path, tmp_path: Path) -> None:
    """A table's source is the highest-precedence source among its keys."""
    config = _load(tmp_path, env={"CLEVERAGENTS_CONTEXT__HOT__MAX_TOKENS": "100"})
    assert config.source("context.hot") == "env:CLEVERAGENTS_CONTEXT__HOT__MAX_TOKENS"
    assert config.source("context.cold") == "default"


@pytest.mark.parametrize(
    ("key", "name"),
    [
        ("context.budget.skeleton-ratio", "CLEVERAGENTS_CONTEXT__BUDGET__SKELETON_RATIO"),
        ("core.database-url", "CLEVERAGENTS_CORE__DATABASE_URL"),
        (
            "context.pipeline.strategy-executor.timeout-seconds",
            "CLEVERAGENTS_CONTEXT__PIPELINE__STRATEGY_EXECUTOR__TIMEOUT_SECONDS",
        ),
    ],
)
def test_env_var_names(key: str, name: str) -> None:
    """Keys map to ``CLEVERAGENTS_`` + upper case with ``.`` → ``__`` and ``-`` → ``_``."""
    assert env_var_name(key) == name


@pytest.mark.parametrize(
    ("key", "raw", "expected"),
    [
        ("context.hot.max-tokens", "9000", 9000),
        (KEY, "0.25", 0.25),
        ("plugins.strict", "true", True),
        ("context.pipeline.budget-packer.depth-fallback-steps", "[4, 0]", [4, 0]),
        ("core.database-url", "postgresql://u@h/db", "postgresql://u@h/db"),
        (
            "context.pipeline.fragment-scorer",
            "my_ext.scorers:DomainAwareScorer",
            "my_ext.scorers:DomainAwareScorer",
        ),
        ("index.text.backend", "42", "42"),  # a string setting stays a string
    ],
)
def test_env_values_are_typed(
    home: Path, tmp_path: Path, key: str, raw: str, expected: Any
) -> None:
    """Environment values are read as TOML when they are TOML, else as text."""
    config = _load(tmp_path, env={env_var_name(key): raw})
    assert config.get(key) == expected
    assert type(config.get(key)) is type(expected)


def test_env_var_for_unknown_key_and_unrelated_vars(home: Path, tmp_path: Path) -> None:
    """New keys come from ``__`` variables; ``CLEVERAGENTS_HOME`` and friends are not keys."""
    env = {
        "CLEVERAGENTS_PLUGIN__MY_PLUGIN__RETRIES": "2",
        "CLEVERAGENTS_HOME": "/elsewhere",
        "CLEVERAGENTS_PLUGINS": "a,b",
        "CLEVERAGENTS___BROKEN": "1",
    }
    config = _load(tmp_path, env=env)
    assert config.get("plugin.my-plugin.retries") == 2
    assert all(not key.startswith(("home", "plugins.a")) for key, _, _ in config.items())


def test_env_var_matches_a_key_with_underscores_from_a_file(home: Path, tmp_path: Path) -> None:
    """A variable finds a file's key even when the key itself uses ``_``."""
    _write(home / "config.toml", "[index.text.custom_options]\nindex_prefix = 'a'\n")
    env = {"CLEVERAGENTS_INDEX__TEXT__CUSTOM_OPTIONS__INDEX_PREFIX": "b"}
    assert _load(tmp_path, env=env).get("index.text.custom_options.index_prefix") == "b"


def test_wrong_type_in_env_is_a_configuration_error(home: Path, tmp_path: Path) -> None:
    """A badly typed variable is reported by name."""
    with pytest.raises(ConfigurationError, match="CLEVERAGENTS_CONTEXT__HOT__MAX_TOKENS"):
        _load(tmp_path, env={"CLEVERAGENTS_CONTEXT__HOT__MAX_TOKENS": "lots"})


def test_cli_overrides_skip_none_and_accept_tables(home: Path, tmp_path: Path) -> None:
    """Unset flags (``None``) do not override; nested dicts become dotted keys."""
    config = _load(
        tmp_path, overrides={"core.log.level": None, "context": {"hot": {"max-tokens": 5}}}
    )
    assert config.get("core.log.level") == "warning"
    assert config.get("context.hot.max-tokens") == 5


def test_keys_are_found_in_snake_case(home: Path, tmp_path: Path) -> None:
    """``skeleton_ratio`` finds ``skeleton-ratio``."""
    assert _load(tmp_path).get("context.budget.skeleton_ratio") == 0.15


# -- finding files ---------------------------------------------------------------


def test_project_file_is_found_from_a_subfolder(home: Path, project: Path) -> None:
    """The project file is found by walking up from the working directory."""
    project_file = _write(project / ".cleveragents/config.toml", "[core.log]\nlevel = 'error'\n")
    sub = project / "src" / "pkg"
    sub.mkdir(parents=True)
    config = _load(sub)
    assert config.project_path == project_file
    assert config.get("core.log.level") == "error"


def test_global_folder_is_never_the_project(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With the data folder at ``~/.cleveragents``, walking up from ``~`` does not read it twice."""
    user_home = tmp_path / "user"
    monkeypatch.setenv("CLEVERAGENTS_HOME", str(user_home / ".cleveragents"))
    _write(user_home / ".cleveragents/config.toml", "[core.log]\nlevel = 'error'\n")
    work = user_home / "work"
    work.mkdir()
    config = _load(work)
    assert config.project_path != config.global_path
    assert config.source("core.log.level").startswith("global:")


def test_project_config_variable(home: Path, tmp_path: Path) -> None:
    """``CLEVERAGENTS_PROJECT_CONFIG`` names the project file directly."""
    elsewhere = _write(tmp_path / "conf" / "ca.toml", "[sandbox]\nstrategy = 'none'\n")
    config = _load(tmp_path, env={"CLEVERAGENTS_PROJECT_CONFIG": str(elsewhere)})
    assert config.project_path == elsewhere
    assert config.source("sandbox.strategy") == f"project:{elsewhere}"


def test_project_path_defaults_to_the_repository_root(home: Path, tmp_path: Path) -> None:
    """Without a project file, ``--project`` writes at the git root (or the cwd)."""
    repo = tmp_path / "r"
    (repo / ".git").mkdir(parents=True)
    (repo / "a" / "b").mkdir(parents=True)
    assert _load(repo / "a" / "b").project_path == repo / ".cleveragents" / "config.toml"
    plain = tmp_path / "plain"
    plain.mkdir()
    assert _load(plain).project_path == plain / ".cleveragents" / "config.toml"


# -- invalid files ---------------------------------------------------------------


def test_malformed_toml_names_file_and_line(home: Path, tmp_path: Path) -> None:
    """A syntax error is a ConfigurationError naming the file, line and column."""
    path = _write(home / "config.toml", "[core]\nlog.level = 'info'\nbroken = = 3\n")
    with pytest.raises(ConfigurationError) as caught:
        _load(tmp_path)
    message = caught.value.message
    assert message.startswith(f"invalid TOML in {path} at line 3, column ")
    assert caught.value.details["line"] == 3
    assert caught.value.code == 525


def test_malformed_project_file_is_named(home: Path, project: Path) -> None:
    """The project file is named when it is the broken one."""
    path = _write(project / ".cleveragents/config.toml", "[context\n")
    with pytest.raises(ConfigurationError, match=f"invalid TOML in {path} at line 1"):
        _load(project)


def test_wrong_type_in_file_names_file_and_key(home: Path, tmp_path: Path) -> None:
    """A known key with a wrong type is reported with the file it came from."""
    path = _write(home / "config.toml", "[context.budget]\nskeleton-ratio = 'big'\n")
    with pytest.raises(ConfigurationError, match=f"{KEY} in {path}: expects a number"):
        _load(tmp_path)


def test_non_utf8_file_is_a_configuration_error(home: Path, tmp_path: Path) -> None:
    """Binary garbage is reported, not a UnicodeDecodeError."""
    (home).mkdir()
    (home / "config.toml").write_bytes(b"\xff\xfe[core]")
    with pytest.raises(ConfigurationError, match="not UTF-8"):
        _load(tmp_path)


# -- writing ---------------------------------------------------------------------


def test_set_creates_a_private_global_file(home: Path, tmp_path: Path) -> None:
    """The first ``set`` creates the folder and a 0600 file."""
    config = _load(tmp_path)
    old, new = config.set(KEY, "0.2")
    assert (old, new) == (0.15, 0.2)
    assert config.get(KEY) == 0.2
    assert config.source(KEY) == f"global:{home / 'config.toml'}"
    assert stat.S_IMODE((home / "config.toml").stat().st_mode) == 0o600
    assert tomllib.loads((home / "config.toml").read_text())["context"]["budget"] == {
        "skeleton-ratio": 0.2
    }
    assert _load(tmp_path).get(KEY) == 0.2
    assert [p.name for p in home.iterdir()] == ["config.toml"]  # no temp files left


def test_set_preserves_comments_and_layout(home: Path, tmp_path: Path) -> None:
    """Comments, order and untouched values survive a ``set``."""
    original = (
        "# my settings\n"
        "[core.log]\n"
        "level = 'info'  # noisy for now\n"
        "\n"
        "# budgets\n"
        "[context.budget]\n"
        "skeleton-ratio = 0.1  # tuned by hand\n"
        "min-useful-budget = 400\n"
    )
    _write(home / "config.toml", original)
    _load(tmp_path).set(KEY, "0.25")
    assert (home / "config.toml").read_text() == original.replace("0.1  #", "0.25  #")


def test_set_project_writes_the_project_file(home: Path, project: Path) -> None:
    """``scope="project"`` writes the project's file and leaves the global one alone."""
    config = _load(project)
    config.set(
        "context.pipeline.fragment-scorer", "my_ext.scorers:DomainAwareScorer", scope="project"
    )
    path = project / ".cleveragents" / "config.toml"
    assert tomllib.loads(path.read_text()) == {
        "context": {"pipeline": {"fragment-scorer": "my_ext.scorers:DomainAwareScorer"}}
    }
    assert not (home / "config.toml").exists()
    assert _load(project).source("context.pipeline.fragment-scorer") == f"project:{path}"


def test_set_parses_toml_values(home: Path, tmp_path: Path) -> None:
    """String values are read as TOML when they can be."""
    config = _load(tmp_path)
    config.set("context.pipeline.budget-packer.depth-fallback-steps", "[9, 4]")
    config.set("plugins.strict", "true")
    config.set("context.hot.max-tokens", "8000")
    config.set("plugin.demo.greeting", "hello world")
    reloaded = _load(tmp_path)
    assert reloaded.get("context.pipeline.budget-packer.depth-fallback-steps") == [9, 4]
    assert reloaded.get("plugins.strict") is True
    assert reloaded.get("context.hot.max-tokens") == 8000
    assert reloaded.get("plugin.demo.greeting") == "hello world"


def test_component_and_its_settings_share_a_name(home: Path, tmp_path: Path) -> None:
    """A slot's component and its settings can both be set; the file stays valid TOML."""
    config = _load(tmp_path)
    config.set("context.pipeline.fragment-scorer", "my.mod:Scorer")
    config.set("context.pipeline.fragment-scorer.relevance-weight", "0.5")
    config.set("context.pipeline.strategy-executor.max-workers", "2")
    config.set("context.pipeline.strategy-executor", "my.mod:Executor")
    reloaded = _load(tmp_path)
    assert reloaded.get("context.pipeline.fragment-scorer") == "my.mod:Scorer"
    assert reloaded.get("context.pipeline.fragment-scorer.relevance-weight") == 0.5
    assert reloaded.get("context.pipeline.strategy-executor") == "my.mod:Executor"
    assert reloaded.get("context.pipeline.strategy-executor.max-workers") == 2
    data = tomllib.loads((home / "config.toml").read_text())
    assert data["context"]["pipeline"]["fragment-scorer"]["component"] == "my.mod:Scorer"


def test_unset_removes_the_key_and_empty_tables(home: Path, tmp_path: Path) -> None:
    """``unset`` returns the file's old value and drops tables it leaves empty."""
    _write(
        home / "config.toml", "# keep me\n[core.log]\nlevel = 'info'\n\n[plugins]\nstrict = true\n"
    )
    config = _load(tmp_path)
    assert config.unset("core.log.level") == "info"
    assert config.get("core.log.level") == "warning"
    assert config.unset("core.log.level") is None
    text = (home / "config.toml").read_text()
    assert "# keep me" in text and "[core.log]" not in text
    assert tomllib.loads(text) == {"plugins": {"strict": True}}


@pytest.mark.parametrize(
    ("key", "value", "message"),
    [
        ("foo.bar", "1", "unknown configuration key 'foo.bar' (known sections: context, core"),
        ("nosection", "1", "unknown configuration key"),
        ("context.budget.skeleton-ration", "0.2", "did you mean context.budget.skeleton-ratio"),
        ("context.pipeline", "x", "'context.pipeline' is a section"),
        (KEY, "abc", "expects a number, got 'abc'"),
        (KEY, "1.5", "must be between 0 and 1"),
        ("context.hot.max-tokens", "-1", "must not be negative"),
        ("context.hot.max-tokens", "1.5", "expects an integer"),
        ("plugins.strict", "yes", "expects true or false"),
        ("core.log.level", "loud", "must be one of debug, info, warning, error, critical"),
    ],
)
def test_set_rejects_bad_keys_and_values(
    home: Path, tmp_path: Path, key: str, value: str, message: str
) -> None:
    """Bad keys and values are ValidationErrors and nothing is written."""
    config = _load(tmp_path)
    with pytest.raises(ValidationError) as caught:
        config.set(key, value)
    assert message in caught.value.message
    assert not (home / "config.toml").exists()


def test_set_accepts_new_keys_under_known_sections(home: Path, tmp_path: Path) -> None:
    """Third-party settings and provider keys may be new."""
    config = _load(tmp_path)
    config.set("provider.openai.api-key", "sk-abcdefghijklmnopqrstuvwxyz")
    config.set("plugin.acme.endpoint", "https://acme.example/api")
    assert _load(tmp_path).get("provider.openai") == {"api-key": "sk-abcdefghijklmnopqrstuvwxyz"}


def test_set_refuses_to_turn_a_value_into_a_table(home: Path, tmp_path: Path) -> None:
    """``a.b = 1`` cannot gain a child ``a.b.c`` (outside pipeline slots)."""
    config = _load(tmp_path)
    config.set("plugin.acme", "1")
    with pytest.raises(ValidationError, match="is a value, not a table"):
        config.set("plugin.acme.endpoint", "x")
    assert _load(tmp_path).get("plugin.acme") == 1


def test_set_writes_through_a_symlink(home: Path, tmp_path: Path) -> None:
    """A symlinked config (dotfiles) stays a symlink; its target is updated."""
    target = _write(tmp_path / "dotfiles" / "cleveragents.toml", "[core.log]\nlevel = 'info'\n")
    home.mkdir()
    (home / "config.toml").symlink_to(target)
    _load(tmp_path).set("core.log.level", "error")
    assert (home / "config.toml").is_symlink()
    assert tomllib.loads(target.read_text()) == {"core": {"log": {"level": "error"}}}


def test_set_on_a_malformed_file_changes_nothing(home: Path, tmp_path: Path) -> None:
    """A file that became invalid after loading is not overwritten."""
    config = _load(tmp_path)
    broken = "[core\n"
    _write(home / "config.toml", broken)
    with pytest.raises(ConfigurationError, match="invalid TOML"):
        config.set(KEY, "0.2")
    assert (home / "config.toml").read_text() == broken


def test_overridden_by_reports_higher_layers(home: Path, tmp_path: Path) -> None:
    """A value written to a file may be hidden by env or CLI; ``overridden_by`` says so."""
    config = _load(tmp_path, env={env_var_name(KEY): "0.3"})
    config.set(KEY, "0.2")
    assert config.get(KEY) == 0.3
    assert config.overridden_by(KEY, "global") == "env:CLEVERAGENTS_CONTEXT__BUDGET__SKELETON_RATIO"
    assert config.overridden_by("core.log.level", "global") is None


def test_reading_is_cheap(home: Path, tmp_path: Path) -> None:
    """Loading the configuration imports neither tomlkit nor anything heavy."""
    _write(home / "config.toml", "[core.log]\nlevel = 'info'\n")
    code = (
        "import sys; from cleveragents.config import load_config; "
        "assert load_config().get('core.log.level') == 'info'; "
        "print([m for m in ('tomlkit', 'structlog', 'click', 'pydantic', 'sqlalchemy') "
        "if m in sys.modules])"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=tmp_path
    ).stdout
    assert out.strip() == "[]"


# -- properties ------------------------------------------------------------------


@contextmanager
def _isolated_home() -> Iterator[Path]:
    previous = os.environ.get("CLEVERAGENTS_HOME")
    with tempfile.TemporaryDirectory() as folder:
        os.environ["CLEVERAGENTS_HOME"] = str(Path(folder) / "home")
        try:
            yield Path(folder)
        finally:
            if previous is None:
                os.environ.pop("CLEVERAGENTS_HOME", None)
            else:
                os.environ["CLEVERAGENTS_HOME"] = previous


toml_values = st.one_of(
    st.booleans(),
    st.integers(min_value=-(2**63), max_value=2**63 - 1),
    st.floats(allow_nan=False),
    st.text(max_size=30),
    st.lists(st.integers(min_value=-1000, max_value=1000), max_size=5),
)


@settings(max_examples=60, deadline=None)
@given(
    name=st.text(alphabet="abcdefghijklmnopqrstuvwxyz0123456789-_", min_size=1, max_size=12),
    value=toml_values,
)
def test_set_then_load_round_trips(name: str, value: Any) -> None:
    """Whatever is set (as a value or as its TOML text) is what the next load reads."""
    with _isolated_home() as folder:
        config = load_config(cwd=folder, env={})
        key = f"plugin.prop.{name}"
        # a str is read as TOML; quoted, it stays the very same str
        config.set(key, toml_value(value) if isinstance(value, str) else value)
        assert load_config(cwd=folder, env={}).get(key) == value
        config.set(key, toml_value(value))
        assert load_config(cwd=folder, env={}).get(key) == value


@given(value=toml_values)
def test_parse_value_inverts_toml_value(value: Any) -> None:
    """``parse_value(toml_value(v)) == v``: values print as the TOML they are read from."""
    assert parse_value(toml_value(value)) == value
