"""What each plan phase may see of a project, and the project's context settings (spec 001).

A :class:`ProjectContextPolicy` holds up to four :class:`ContextView`\\ s, one per
phase of the chain ``default -> strategize -> execute -> apply``; a phase
resolves to the first view explicitly set walking up that chain, so setting
only ``default`` governs every phase. A view filters resources (by name, ULID
or pattern) and file paths (globs), exclusions always beating inclusions, and
caps file size and total context size. The policy also carries the project's
ACMS settings (tier capacities, preferred strategies, default breadth and
depth, skeleton ratio, temporal scope, auto-refresh, pipeline overrides).

Policies are stored as JSON in the ``context_policies`` table
(:class:`PolicyStore`). :class:`ContextBudgetEnforcer` applies a view's size
limits to an assembled context.
"""

from __future__ import annotations

import fnmatch
import json
from collections.abc import Callable, Iterable, Mapping
from datetime import UTC, datetime
from functools import lru_cache
from typing import Any

import pathspec
from pydantic import BaseModel, ConfigDict, Field, field_validator
from sqlalchemy import delete, insert, select, update

from cleveragents.errors import ValidationError
from cleveragents.models.context import AssembledContext, ContextFragment, DroppedFragment
from cleveragents_acms.context.tables import context_policies, ensure_tables

__all__ = [
    "PHASES",
    "ContextBudgetEnforcer",
    "ContextSettings",
    "ContextView",
    "PolicyStore",
    "ProjectContextPolicy",
]

#: The view chain: each phase inherits from the one before it.
PHASES: tuple[str, ...] = ("default", "strategize", "execute", "apply")
TEMPORAL_SCOPES = ("current", "recent", "all")


def _clean_patterns(values: Iterable[str]) -> tuple[str, ...]:
    out = []
    for value in values:
        text = str(value).strip()
        if not text:
            raise ValueError("patterns must not be empty")
        out.append(text)
    return tuple(dict.fromkeys(out))


@lru_cache(maxsize=512)
def _spec(pattern: str) -> pathspec.PathSpec:
    return pathspec.GitIgnoreSpec.from_lines([pattern])


def _path_matches(path: str, pattern: str) -> bool:
    """Match as ``.gitignore`` does: ``*.md`` at any depth, ``tests/`` a folder anywhere."""
    return _spec(pattern).match_file(path.removeprefix("./"))


class ContextView(BaseModel):
    """Which resources and paths one phase sees, and how large the context may be."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    include_resources: tuple[str, ...] = ()
    exclude_resources: tuple[str, ...] = ()
    include_paths: tuple[str, ...] = ()
    exclude_paths: tuple[str, ...] = ()
    max_file_size: int | None = None
    max_total_size: int | None = None

    @field_validator("include_resources", "exclude_resources", "include_paths", "exclude_paths")
    @classmethod
    def _patterns(cls, value: Iterable[str]) -> tuple[str, ...]:
        return _clean_patterns(value)

    @field_validator("max_file_size", "max_total_size")
    @classmethod
    def _positive(cls, value: int | None) -> int | None:
        if value is not None and (isinstance(value, bool) or value <= 0):
            raise ValueError("must be a positive number of bytes")
        return value

    @property
    def is_empty(self) -> bool:
        """True when the view filters nothing and limits nothing."""
        return self == ContextView()

    def allows_resource(self, name: str | None, resource_id: str) -> bool:
        """Exclusions beat inclusions; an empty inclusion list includes everything."""
        keys = [k for k in (name, resource_id) if k]

        def hit(patterns: tuple[str, ...]) -> bool:
            return any(fnmatch.fnmatchcase(k, p) for p in patterns for k in keys)

        if hit(self.exclude_resources):
            return False
        return not self.include_resources or hit(self.include_resources)

    def allows_path(self, path: str) -> bool:
        """Exclusions beat inclusions; an empty inclusion list includes every path."""
        if any(_path_matches(path, p) for p in self.exclude_paths):
            return False
        return not self.include_paths or any(_path_matches(path, p) for p in self.include_paths)

    def allows_file_size(self, size: int | None) -> bool:
        return self.max_file_size is None or size is None or size <= self.max_file_size


class ContextSettings(BaseModel):
    """A project's ACMS settings; ``None`` means "use the configuration"."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    hot_max_tokens: int | None = Field(default=None, gt=0)
    warm_max_decisions: int | None = Field(default=None, gt=0)
    cold_max_decisions: int | None = Field(default=None, gt=0)
    strategies: tuple[str, ...] = ()
    default_breadth: int | None = Field(default=None, ge=0)
    default_depth: int | str | None = None
    skeleton_ratio: float | None = Field(default=None, ge=0.0, le=1.0)
    temporal_scope: str | None = None
    auto_refresh: bool = True
    #: Project-level pipeline overrides: slot -> component name.
    pipeline: dict[str, str] = Field(default_factory=dict)

    @field_validator("temporal_scope")
    @classmethod
    def _temporal(cls, value: str | None) -> str | None:
        if value is not None and value not in TEMPORAL_SCOPES:
            raise ValueError(f"must be one of {', '.join(TEMPORAL_SCOPES)}")
        return value

    @field_validator("default_depth")
    @classmethod
    def _depth(cls, value: int | str | None) -> int | str | None:
        if isinstance(value, str) and value.strip().isdigit():
            return int(value.strip())
        if isinstance(value, int) and value < 0:
            raise ValueError("must be >= 0 or a named level")
        return value


class ProjectContextPolicy(BaseModel):
    """Views per phase plus settings, for one project."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    project_name: str
    #: Only the views explicitly set; the others are inherited.
    views: dict[str, ContextView] = Field(default_factory=dict)
    settings: ContextSettings = Field(default_factory=ContextSettings)

    @field_validator("views")
    @classmethod
    def _known_phases(cls, value: dict[str, ContextView]) -> dict[str, ContextView]:
        unknown = sorted(set(value) - set(PHASES))
        if unknown:
            raise ValueError(f"unknown view(s) {', '.join(unknown)} (views: {', '.join(PHASES)})")
        return value

    def resolve_view(self, phase: str = "default") -> ContextView:
        """The first explicitly set view from ``phase`` back up to ``default`` (else empty)."""
        index = _phase_index(phase)
        for name in reversed(PHASES[: index + 1]):
            if name in self.views:
                return self.views[name]
        return ContextView()

    def view_source(self, phase: str) -> str | None:
        """The phase whose view ``phase`` resolves to (``None``: no view set, all allowed)."""
        index = _phase_index(phase)
        return next((n for n in reversed(PHASES[: index + 1]) if n in self.views), None)

    def with_view(self, phase: str, view: ContextView | None) -> ProjectContextPolicy:
        """A copy with ``phase``'s view set (or cleared with ``None``)."""
        _phase_index(phase)
        views = dict(self.views)
        if view is None:
            views.pop(phase, None)
        else:
            views[phase] = view
        return self.model_copy(update={"views": views})

    def with_settings(self, **changes: Any) -> ProjectContextPolicy:
        data = {**self.settings.model_dump(), **changes}
        return self.model_copy(update={"settings": ContextSettings.model_validate(data)})


def _phase_index(phase: str) -> int:
    if phase not in PHASES:
        raise ValidationError(f"unknown view '{phase}' (views: {', '.join(PHASES)})")
    return PHASES.index(phase)


def _now() -> str:
    return datetime.now(UTC).isoformat()


class PolicyStore:
    """Reads and writes project policies in the ``context_policies`` table."""

    def __init__(self, database: Any) -> None:
        self.database = database
        ensure_tables(database)

    def get(self, project: str) -> ProjectContextPolicy:
        """The stored policy, or an empty one (everything visible, configuration defaults)."""
        with self.database.engine.connect() as conn:
            raw = conn.execute(
                select(context_policies.c.policy).where(context_policies.c.project_name == project)
            ).scalar()
        if raw is None:
            return ProjectContextPolicy(project_name=project)
        return ProjectContextPolicy.model_validate({**json.loads(raw), "project_name": project})

    def save(self, policy: ProjectContextPolicy) -> None:
        payload = policy.model_dump_json(exclude={"project_name"})
        with self.database.engine.begin() as conn:
            exists = conn.execute(
                select(context_policies.c.project_name).where(
                    context_policies.c.project_name == policy.project_name
                )
            ).first()
            values = {"policy": payload, "updated_at": _now()}
            if exists:
                conn.execute(
                    update(context_policies)
                    .where(context_policies.c.project_name == policy.project_name)
                    .values(**values)
                )
            else:
                conn.execute(
                    insert(context_policies).values(project_name=policy.project_name, **values)
                )

    def delete(self, project: str) -> None:
        with self.database.engine.begin() as conn:
            conn.execute(delete(context_policies).where(context_policies.c.project_name == project))


class ContextBudgetEnforcer:
    """Applies a view's ``max_file_size`` and ``max_total_size`` to an assembled context.

    A fragment from a file larger than ``max_file_size`` is left out; when the
    fragments' text together exceeds ``max_total_size`` bytes, the least
    relevant are left out until it fits. Everything left out is listed in
    ``dropped`` with the reason, and a note says what the limit did.

    :param file_size: the size in bytes of a fragment's source file (``None``
        when unknown, which passes the file-size check).
    """

    def __init__(self, file_size: Callable[[ContextFragment], int | None] | None = None) -> None:
        self.file_size = file_size or (lambda _fragment: None)

    def enforce(self, context: AssembledContext, view: ContextView) -> AssembledContext:
        if view.max_file_size is None and view.max_total_size is None:
            return context
        kept = list(context.fragments)
        dropped: list[DroppedFragment] = []
        notes: list[str] = []
        if view.max_file_size is not None:
            too_big = [f for f in kept if not view.allows_file_size(self.file_size(f))]
            if too_big:
                kept = [f for f in kept if f not in too_big]
                reason = f"source file larger than max_file_size ({view.max_file_size} bytes)"
                dropped.extend(DroppedFragment.of(f, reason) for f in too_big)
                notes.append(f"{len(too_big)} fragment(s) left out: {reason}")
        if view.max_total_size is not None:
            total = sum(_size(f) for f in kept)
            if total > view.max_total_size:
                by_relevance = sorted(kept, key=lambda f: (f.relevance_score, -_size(f)))
                cut: list[ContextFragment] = []
                for fragment in by_relevance:
                    if total <= view.max_total_size:
                        break
                    cut.append(fragment)
                    total -= _size(fragment)
                kept = [f for f in kept if f not in cut]
                reason = f"context larger than max_total_size ({view.max_total_size} bytes)"
                dropped.extend(DroppedFragment.of(f, reason) for f in cut)
                notes.append(f"{len(cut)} fragment(s) left out: {reason}")
        if not dropped:
            return context
        return _rebuilt(context, kept, dropped, notes)


def _size(fragment: ContextFragment) -> int:
    return len(fragment.content.encode("utf-8"))


def _rebuilt(
    context: AssembledContext,
    fragments: list[ContextFragment],
    dropped: list[DroppedFragment],
    notes: list[str],
) -> AssembledContext:
    """``context`` with only ``fragments``, its totals and provenance recomputed."""
    kept_nodes = {f.uko_node for f in fragments}
    total = sum(f.token_count for f in fragments)
    available = context.budget.available_tokens
    return context.model_copy(
        update={
            "fragments": tuple(fragments),
            "total_tokens": total,
            "budget_used": total / available if available else 0.0,
            "context_hash": AssembledContext.hash_fragments(fragments),
            "provenance_map": {k: v for k, v in context.provenance_map.items() if k in kept_nodes},
            "dropped": (*context.dropped, *dropped),
            "notes": tuple(dict.fromkeys((*context.notes, *notes))),
        }
    )


def rebuild_context(
    context: AssembledContext,
    fragments: list[ContextFragment],
    dropped: Iterable[DroppedFragment] = (),
    notes: Iterable[str] = (),
) -> AssembledContext:
    """Public form of the rebuild used after post-assembly checks (freshness, policy)."""
    return _rebuilt(context, fragments, list(dropped), list(notes))


def views_payload(policy: ProjectContextPolicy) -> dict[str, Mapping[str, Any]]:
    """Every phase's effective view and where it comes from, for ``show`` and ``--json``."""
    return {
        phase: {
            "set": phase in policy.views,
            "inherits_from": policy.view_source(phase),
            **policy.resolve_view(phase).model_dump(mode="json"),
        }
        for phase in PHASES
    }
