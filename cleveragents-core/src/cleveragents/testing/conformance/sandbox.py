"""Conformance suite for sandbox strategies (slot ``sandbox``, spec 000 "Sandbox Isolation")."""

from __future__ import annotations

from pathlib import Path
from typing import Any, ClassVar

import pytest

from cleveragents.errors import CleverAgentsError
from cleveragents.models.resources import Resource
from cleveragents.models.sandbox import Change, DiffView, SandboxRef
from cleveragents.testing.conformance._base import INVALID_ARGUMENT, ComponentConformance

__all__ = ["SandboxStrategyConformance"]

#: The files every test starts from, relative to the resource root.
SOURCE_FILES: dict[str, bytes] = {
    "README.md": b"# Sample\n\nA resource for sandbox tests.\n",
    "src/app.py": b"def main():\n    return 1\n",
    "docs/guide.txt": b"line one\nline two\n",
}

_MISSING = (OSError, CleverAgentsError, LookupError)


class SandboxStrategyConformance(ComponentConformance):
    """Round trips of every SandboxStrategy method on a temporary directory.

    Set :attr:`isolated` to ``False`` for a strategy that writes straight to
    the original (like ``none``): the suite then checks that ``rollback`` and
    ``restore_checkpoint`` put the original back instead of checking that it
    is untouched. Override :meth:`prepare_source` when the strategy needs more
    than a directory (``git init`` and a commit for a worktree strategy) and
    :meth:`make_resource` for another resource type.
    """

    slot_key = "sandbox"
    #: False when writes land in the original before commit.
    isolated: ClassVar[bool] = True
    plan_id: ClassVar[str] = "01J00000000000000000000PLN"

    def prepare_source(self, source: Path) -> None:
        """Turn the populated ``source`` directory into what the strategy needs."""

    def make_resource(self, source: Path) -> Resource:
        return Resource(
            name="sandbox-conformance",
            resource_type_name="filesystem/directory",
            location=str(source),
        )

    # -- fixtures -------------------------------------------------------------------

    @pytest.fixture
    def source(self, tmp_path: Path) -> Path:
        root = tmp_path / "source"
        for relative, content in SOURCE_FILES.items():
            (root / relative).parent.mkdir(parents=True, exist_ok=True)
            (root / relative).write_bytes(content)
        self.prepare_source(root)
        return root

    @pytest.fixture
    def resource(self, source: Path) -> Resource:
        return self.make_resource(source)

    @pytest.fixture
    def sandbox(self, component: Any, resource: Resource) -> Any:
        """``(strategy, ref)`` of a freshly created sandbox, cleaned up afterwards."""
        ref = component.create(self.plan_id, resource)
        yield component, ref
        try:
            component.cleanup(ref)
        except Exception:
            pass

    # -- tests ----------------------------------------------------------------------

    def test_create_returns_a_ref_for_the_plan_and_resource(
        self, sandbox: tuple[Any, SandboxRef], resource: Resource
    ) -> None:
        _, ref = sandbox
        assert isinstance(ref, SandboxRef)
        assert ref.plan_id == self.plan_id
        assert ref.resource_id == resource.resource_id
        assert ref.strategy, "SandboxRef.strategy must name the strategy"
        assert Path(ref.path).is_dir()

    def test_read_returns_the_original_content(self, sandbox: tuple[Any, SandboxRef]) -> None:
        strategy, ref = sandbox
        for relative, content in SOURCE_FILES.items():
            assert strategy.read(ref, relative) == content

    def test_read_of_a_missing_file_raises(self, sandbox: tuple[Any, SandboxRef]) -> None:
        strategy, ref = sandbox
        with pytest.raises(_MISSING):
            strategy.read(ref, "no/such/file.txt")

    def test_write_then_read_round_trips(self, sandbox: tuple[Any, SandboxRef]) -> None:
        strategy, ref = sandbox
        change = strategy.write(ref, "src/app.py", b"def main():\n    return 2\n")
        assert isinstance(change, Change)
        assert (change.path, change.kind) == ("src/app.py", "modified")
        assert strategy.read(ref, "src/app.py") == b"def main():\n    return 2\n"

    def test_write_of_a_new_file_is_an_addition(self, sandbox: tuple[Any, SandboxRef]) -> None:
        strategy, ref = sandbox
        change = strategy.write(ref, "new/dir/notes.txt", b"fresh\n")
        assert (change.path, change.kind) == ("new/dir/notes.txt", "added")
        assert strategy.read(ref, "new/dir/notes.txt") == b"fresh\n"

    def test_binary_content_round_trips(self, sandbox: tuple[Any, SandboxRef]) -> None:
        strategy, ref = sandbox
        blob = bytes(range(256)) * 4
        strategy.write(ref, "data.bin", blob)
        assert strategy.read(ref, "data.bin") == blob

    def test_original_is_untouched_before_commit(
        self, sandbox: tuple[Any, SandboxRef], source: Path
    ) -> None:
        if not self.isolated:
            pytest.skip("this strategy writes to the original by design")
        strategy, ref = sandbox
        strategy.write(ref, "README.md", b"changed\n")
        strategy.write(ref, "added.txt", b"new\n")
        assert (source / "README.md").read_bytes() == SOURCE_FILES["README.md"]
        assert not (source / "added.txt").exists()

    def test_diff_is_empty_before_any_write(self, sandbox: tuple[Any, SandboxRef]) -> None:
        strategy, ref = sandbox
        view = strategy.diff(ref)
        assert isinstance(view, DiffView)
        assert view.changes == ()

    def test_diff_lists_every_change(self, sandbox: tuple[Any, SandboxRef]) -> None:
        strategy, ref = sandbox
        strategy.write(ref, "src/app.py", b"def main():\n    return 42\n")
        strategy.write(ref, "added.txt", b"brand new\n")
        view = strategy.diff(ref)
        kinds = {change.path: change.kind for change in view.changes}
        assert kinds == {"src/app.py": "modified", "added.txt": "added"}
        assert "return 42" in view.unified_diff
        assert "brand new" in view.unified_diff

    def test_commit_applies_the_changes_to_the_original(
        self, sandbox: tuple[Any, SandboxRef], source: Path
    ) -> None:
        strategy, ref = sandbox
        strategy.write(ref, "src/app.py", b"committed\n")
        strategy.write(ref, "added.txt", b"added\n")
        strategy.commit(ref)
        assert (source / "src/app.py").read_bytes() == b"committed\n"
        assert (source / "added.txt").read_bytes() == b"added\n"
        assert (source / "README.md").read_bytes() == SOURCE_FILES["README.md"]
        assert strategy.diff(ref).changes == ()

    def test_rollback_discards_uncommitted_changes(
        self, sandbox: tuple[Any, SandboxRef], source: Path
    ) -> None:
        strategy, ref = sandbox
        strategy.write(ref, "src/app.py", b"discard me\n")
        strategy.write(ref, "added.txt", b"discard me too\n")
        strategy.rollback(ref)
        assert strategy.read(ref, "src/app.py") == SOURCE_FILES["src/app.py"]
        assert strategy.diff(ref).changes == ()
        assert (source / "src/app.py").read_bytes() == SOURCE_FILES["src/app.py"]
        assert not (source / "added.txt").exists()
        with pytest.raises(_MISSING):
            strategy.read(ref, "added.txt")

    def test_restore_checkpoint_returns_to_the_checkpointed_state(
        self, sandbox: tuple[Any, SandboxRef]
    ) -> None:
        strategy, ref = sandbox
        strategy.write(ref, "src/app.py", b"version 1\n")
        strategy.checkpoint(ref, "cp-1")
        strategy.write(ref, "src/app.py", b"version 2\n")
        strategy.write(ref, "after-checkpoint.txt", b"later\n")
        strategy.restore_checkpoint(ref, "cp-1")
        assert strategy.read(ref, "src/app.py") == b"version 1\n"
        with pytest.raises(_MISSING):
            strategy.read(ref, "after-checkpoint.txt")
        assert {c.path for c in strategy.diff(ref).changes} == {"src/app.py"}

    def test_restore_of_an_unknown_checkpoint_raises(self, sandbox: tuple[Any, SandboxRef]) -> None:
        strategy, ref = sandbox
        with pytest.raises((CleverAgentsError, LookupError, ValueError)):
            strategy.restore_checkpoint(ref, "never-made")

    @pytest.mark.parametrize("escape", ["../outside.txt", "src/../../outside.txt", "/etc/passwd"])
    def test_paths_outside_the_sandbox_are_refused(
        self, sandbox: tuple[Any, SandboxRef], tmp_path: Path, escape: str
    ) -> None:
        strategy, ref = sandbox
        with pytest.raises((*INVALID_ARGUMENT, PermissionError)):
            strategy.read(ref, escape)
        outside = tmp_path / "outside.txt"
        with pytest.raises((*INVALID_ARGUMENT, PermissionError)):
            strategy.write(ref, escape if escape != "/etc/passwd" else str(outside), b"x")
        assert not outside.exists()
        assert not (Path(ref.path).parent / "outside.txt").exists()

    def test_two_plans_do_not_see_each_other(self, component: Any, resource: Resource) -> None:
        if not self.isolated:
            pytest.skip("this strategy shares the original between plans by design")
        first = component.create("01J00000000000000000000PL1", resource)
        second = component.create("01J00000000000000000000PL2", resource)
        try:
            component.write(first, "README.md", b"only in the first plan\n")
            assert component.read(second, "README.md") == SOURCE_FILES["README.md"]
            assert component.diff(second).changes == ()
        finally:
            component.cleanup(first)
            component.cleanup(second)

    def test_cleanup_keeps_the_original(
        self, component: Any, resource: Resource, source: Path
    ) -> None:
        ref = component.create(self.plan_id, resource)
        component.write(ref, "scratch.txt", b"temporary\n")
        component.commit(ref)
        component.cleanup(ref)
        for relative, content in SOURCE_FILES.items():
            assert (source / relative).read_bytes() == content
        assert (source / "scratch.txt").read_bytes() == b"temporary\n"
        if self.isolated and Path(ref.path).resolve() != source.resolve():
            assert not Path(ref.path).exists(), "cleanup must remove the sandbox's working copy"
