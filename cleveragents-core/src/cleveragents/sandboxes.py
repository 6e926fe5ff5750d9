"""Sandbox strategies that need nothing but a file system.

``filesystem_copy`` copies the resource into ``$CLEVERAGENTS_HOME/sandboxes``
and works there; the original is touched only by ``commit``. ``none`` writes
straight to the original (for resources with their own safety net) but still
records what changed so ``diff`` and ``rollback`` work within one process.
"""

from __future__ import annotations

import difflib
import shutil
from pathlib import Path

from cleveragents import paths
from cleveragents.errors import NotFoundError, ValidationError
from cleveragents.models.resources import Resource
from cleveragents.models.sandbox import Change, DiffView, SandboxRef

__all__ = ["DirectSandbox", "FilesystemCopySandbox"]


def _inside(root: Path, relative: str) -> Path:
    """``root / relative``, refusing paths that escape ``root``."""
    target = (root / relative).resolve()
    if target != root.resolve() and root.resolve() not in target.parents:
        raise ValidationError(f"path escapes the sandbox: {relative}")
    return target


def _unified_diff(original: Path, changed: Path) -> DiffView:
    changes: list[Change] = []
    chunks: list[str] = []
    names = {
        p.relative_to(root).as_posix()
        for root in (original, changed)
        if root.exists()
        for p in root.rglob("*")
        if p.is_file() and ".git" not in p.relative_to(root).parts
    }
    for name in sorted(names):
        a, b = original / name, changed / name
        old = a.read_bytes() if a.is_file() else None
        new = b.read_bytes() if b.is_file() else None
        if old == new:
            continue
        kind = "added" if old is None else "deleted" if new is None else "modified"
        changes.append(Change(path=name, kind=kind, size_bytes=len(new or b"")))
        old_lines = (old or b"").decode("utf-8", "replace").splitlines(keepends=True)
        new_lines = (new or b"").decode("utf-8", "replace").splitlines(keepends=True)
        chunks.extend(difflib.unified_diff(old_lines, new_lines, f"a/{name}", f"b/{name}"))
    return DiffView(changes=tuple(changes), unified_diff="".join(chunks))


class FilesystemCopySandbox:
    """Full copy of the resource directory; works on any writable file system."""

    name = "filesystem_copy"

    def __init__(self, root: Path | None = None) -> None:
        self._root = root

    @property
    def root(self) -> Path:
        return self._root or paths.home() / "sandboxes"

    def create(self, plan_id: str, resource: Resource) -> SandboxRef:
        source = Path(resource.location or "")
        if not source.is_dir():
            raise NotFoundError(f"resource location is not a directory: {source}")
        target = self.root / paths.project_slug(plan_id) / resource.resource_id
        if target.exists():
            shutil.rmtree(target)
        shutil.copytree(source, target / "work", symlinks=True)
        return SandboxRef(
            plan_id=plan_id,
            resource_id=resource.resource_id,
            strategy=self.name,
            path=str(target / "work"),
            source=str(source),
        )

    def read(self, ref: SandboxRef, path: str) -> bytes:
        return _inside(Path(ref.path), path).read_bytes()

    def write(self, ref: SandboxRef, path: str, content: bytes) -> Change:
        target = _inside(Path(ref.path), path)
        kind = "modified" if (Path(ref.source) / path).exists() else "added"
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(content)
        return Change(path=path, kind=kind, size_bytes=len(content))

    def diff(self, ref: SandboxRef) -> DiffView:
        return _unified_diff(Path(ref.source), Path(ref.path))

    def commit(self, ref: SandboxRef) -> None:
        source = Path(ref.source)
        for change in self.diff(ref).changes:
            target = _inside(source, change.path)
            if change.kind == "deleted":
                target.unlink(missing_ok=True)
            else:
                target.parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(_inside(Path(ref.path), change.path), target)

    def rollback(self, ref: SandboxRef) -> None:
        work = Path(ref.path)
        shutil.rmtree(work)
        shutil.copytree(ref.source, work, symlinks=True)

    def _checkpoint_dir(self, ref: SandboxRef, checkpoint_id: str) -> Path:
        return Path(ref.path).parent / "checkpoints" / paths.project_slug(checkpoint_id)

    def checkpoint(self, ref: SandboxRef, checkpoint_id: str) -> None:
        target = self._checkpoint_dir(ref, checkpoint_id)
        if target.exists():
            shutil.rmtree(target)
        shutil.copytree(ref.path, target, symlinks=True)

    def restore_checkpoint(self, ref: SandboxRef, checkpoint_id: str) -> None:
        saved = self._checkpoint_dir(ref, checkpoint_id)
        if not saved.is_dir():
            raise NotFoundError(f"no checkpoint '{checkpoint_id}' in sandbox of plan {ref.plan_id}")
        shutil.rmtree(ref.path)
        shutil.copytree(saved, ref.path, symlinks=True)

    def cleanup(self, ref: SandboxRef) -> None:
        shutil.rmtree(Path(ref.path).parent, ignore_errors=True)


class DirectSandbox:
    """No isolation: writes go to the original; originals are kept for diff/rollback."""

    name = "none"

    def __init__(self) -> None:
        #: (plan, resource) -> {path: original bytes or None if the file was new}
        self._originals: dict[tuple[str, str], dict[str, bytes | None]] = {}
        self._checkpoints: dict[tuple[str, str, str], dict[str, bytes | None]] = {}

    def create(self, plan_id: str, resource: Resource) -> SandboxRef:
        source = Path(resource.location or "")
        if not source.is_dir():
            raise NotFoundError(f"resource location is not a directory: {source}")
        self._originals[(plan_id, resource.resource_id)] = {}
        return SandboxRef(
            plan_id=plan_id,
            resource_id=resource.resource_id,
            strategy=self.name,
            path=str(source),
            source=str(source),
        )

    def _seen(self, ref: SandboxRef) -> dict[str, bytes | None]:
        return self._originals.setdefault((ref.plan_id, ref.resource_id), {})

    def read(self, ref: SandboxRef, path: str) -> bytes:
        return _inside(Path(ref.path), path).read_bytes()

    def write(self, ref: SandboxRef, path: str, content: bytes) -> Change:
        target = _inside(Path(ref.path), path)
        seen = self._seen(ref)
        if path not in seen:
            seen[path] = target.read_bytes() if target.is_file() else None
        kind = "added" if seen[path] is None else "modified"
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(content)
        return Change(path=path, kind=kind, size_bytes=len(content))

    def diff(self, ref: SandboxRef) -> DiffView:
        changes: list[Change] = []
        chunks: list[str] = []
        for path, old in sorted(self._seen(ref).items()):
            target = _inside(Path(ref.path), path)
            new = target.read_bytes() if target.is_file() else None
            if new == old:
                continue
            kind = "added" if old is None else "deleted" if new is None else "modified"
            changes.append(Change(path=path, kind=kind, size_bytes=len(new or b"")))
            chunks.extend(
                difflib.unified_diff(
                    (old or b"").decode("utf-8", "replace").splitlines(keepends=True),
                    (new or b"").decode("utf-8", "replace").splitlines(keepends=True),
                    f"a/{path}",
                    f"b/{path}",
                )
            )
        return DiffView(changes=tuple(changes), unified_diff="".join(chunks))

    def commit(self, ref: SandboxRef) -> None:
        self._seen(ref).clear()

    def _restore(self, ref: SandboxRef, state: dict[str, bytes | None]) -> None:
        for path in list(self._seen(ref)):
            target = _inside(Path(ref.path), path)
            content = state.get(path, self._seen(ref)[path])
            if content is None:
                target.unlink(missing_ok=True)
            else:
                target.write_bytes(content)

    def rollback(self, ref: SandboxRef) -> None:
        self._restore(ref, self._seen(ref))
        self._seen(ref).clear()

    def checkpoint(self, ref: SandboxRef, checkpoint_id: str) -> None:
        root = Path(ref.path)
        self._checkpoints[(ref.plan_id, ref.resource_id, checkpoint_id)] = {
            path: (_inside(root, path).read_bytes() if _inside(root, path).is_file() else None)
            for path in self._seen(ref)
        }

    def restore_checkpoint(self, ref: SandboxRef, checkpoint_id: str) -> None:
        key = (ref.plan_id, ref.resource_id, checkpoint_id)
        if key not in self._checkpoints:
            raise NotFoundError(f"no checkpoint '{checkpoint_id}' in sandbox of plan {ref.plan_id}")
        self._restore(ref, self._checkpoints[key])

    def cleanup(self, ref: SandboxRef) -> None:
        self._originals.pop((ref.plan_id, ref.resource_id), None)
