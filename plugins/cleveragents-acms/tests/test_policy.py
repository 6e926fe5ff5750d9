"""ProjectContextPolicy, ContextView and ContextBudgetEnforcer (spec 001 "Policy" criteria)."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import ValidationError as PydanticError

from cleveragents.models.context import AssembledContext, ContextBudget
from cleveragents.storage.database import Database
from cleveragents.testing.factories import make_fragment
from cleveragents_acms.context.policy import (
    ContextBudgetEnforcer,
    ContextSettings,
    ContextView,
    PolicyStore,
    ProjectContextPolicy,
)

RID = "01J0000000000000000000000A"


def test_each_phase_resolves_to_the_nearest_view_set_above_it() -> None:
    """default -> strategize -> execute -> apply; unset phases inherit."""
    default = ContextView(exclude_paths=("docs/",))
    execute = ContextView(include_paths=("src/",))
    policy = ProjectContextPolicy(project_name="p", views={"default": default, "execute": execute})
    assert policy.resolve_view("default") == default
    assert policy.resolve_view("strategize") == default
    assert policy.resolve_view("execute") == execute
    assert policy.resolve_view("apply") == execute
    assert [policy.view_source(p) for p in ("default", "strategize", "execute", "apply")] == [
        "default",
        "default",
        "execute",
        "execute",
    ]
    assert policy.with_view("execute", None).resolve_view("apply") == default


def test_an_empty_policy_includes_everything() -> None:
    """No views: every resource, every path, no size limit."""
    view = ProjectContextPolicy(project_name="p").resolve_view("apply")
    assert view.is_empty
    assert view.allows_resource("anything", RID)
    assert view.allows_path("deep/down/file.py")
    assert view.allows_file_size(10**9)


def test_exclusions_beat_inclusions() -> None:
    """A resource or path both included and excluded is excluded."""
    view = ContextView(
        include_resources=("api-*",),
        exclude_resources=("api-legacy",),
        include_paths=("src/**",),
        exclude_paths=("src/generated/", "*.min.js"),
    )
    assert view.allows_resource("api-service", RID)
    assert not view.allows_resource("api-legacy", RID)
    assert not view.allows_resource("frontend", RID)
    assert view.allows_resource(None, RID) is False
    assert ContextView(include_resources=(RID,)).allows_resource(None, RID)
    assert view.allows_path("src/app/main.py")
    assert not view.allows_path("src/generated/models.py")
    assert not view.allows_path("src/ui/bundle.min.js")
    assert not view.allows_path("README.md")
    assert ContextView(exclude_paths=("tests/",)).allows_path("pkg/tests/test_x.py") is False


@pytest.mark.parametrize("field", ["max_file_size", "max_total_size"])
@pytest.mark.parametrize("value", [0, -1])
def test_sizes_must_be_positive(field: str, value: int) -> None:
    """Zero or negative size limits are rejected."""
    with pytest.raises(PydanticError, match="positive number of bytes"):
        ContextView(**{field: value})


def test_unknown_phases_and_settings_are_rejected() -> None:
    with pytest.raises(PydanticError, match="unknown view"):
        ProjectContextPolicy(project_name="p", views={"deploy": ContextView()})
    with pytest.raises(PydanticError):
        ContextSettings(skeleton_ratio=1.5)
    with pytest.raises(PydanticError):
        ContextSettings(temporal_scope="yesterday")
    assert ContextSettings(default_depth="4").default_depth == 4


def test_policies_persist_per_project(tmp_path: Path) -> None:
    """Saved policies come back unchanged; other projects keep the empty default."""
    database = Database.for_sqlite_file(tmp_path / "db.sqlite")
    store = PolicyStore(database)
    policy = (
        ProjectContextPolicy(project_name="api")
        .with_view("strategize", ContextView(exclude_paths=("vendor/",), max_file_size=5000))
        .with_settings(hot_max_tokens=4000, strategies=("arce",), pipeline={"budget-packer": "x"})
    )
    store.save(policy)
    store.save(policy.with_settings(default_breadth=1))  # update in place
    again = PolicyStore(database).get("api")
    assert again.views == policy.views
    assert again.settings.default_breadth == 1 and again.settings.hot_max_tokens == 4000
    assert again.settings.pipeline == {"budget-packer": "x"}
    assert PolicyStore(database).get("other") == ProjectContextPolicy(project_name="other")
    store.delete("api")
    assert store.get("api").views == {}
    database.dispose()


def _context(*sizes: int) -> AssembledContext:
    fragments = tuple(
        make_fragment(
            f"uko://r/f{i}.py#f",
            "x" * size,
            token_count=size // 4,
            relevance=0.9 - i / 10,
            path=f"f{i}.py",
        )
        for i, size in enumerate(sizes)
    )
    total = sum(f.token_count for f in fragments)
    return AssembledContext(
        fragments=fragments,
        total_tokens=total,
        budget=ContextBudget(max_tokens=10_000, reserved_tokens=0),
        context_hash=AssembledContext.hash_fragments(fragments),
        provenance_map={f.uko_node: {} for f in fragments},
    )


def test_enforcer_applies_file_and_total_size() -> None:
    """Files over max_file_size go; then the least relevant go until max_total_size holds."""
    context = _context(400, 300, 200, 100)
    sizes = {"f0.py": 50_000, "f1.py": 900, "f2.py": 800, "f3.py": 700}
    enforcer = ContextBudgetEnforcer(lambda f: sizes[f.provenance.path])
    limited = enforcer.enforce(context, ContextView(max_file_size=10_000, max_total_size=450))
    assert [f.provenance.path for f in limited.fragments] == ["f1.py"]
    reasons = {d.path: d.reason for d in limited.dropped}
    assert "max_file_size" in reasons["f0.py"]
    assert "max_total_size" in reasons["f3.py"] and "max_total_size" in reasons["f2.py"]
    assert limited.total_tokens == 75 and set(limited.provenance_map) == {"uko://r/f1.py#f"}
    assert enforcer.enforce(context, ContextView()) is context
