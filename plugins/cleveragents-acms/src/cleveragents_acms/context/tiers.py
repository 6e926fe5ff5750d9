"""Hot, warm and cold context tiers with per-role visibility (spec 001, "Storage Tiers").

* **hot**: in memory, bounded by tokens (``context.hot.max-tokens``, or the
  project's ``hot_max_tokens``); written through to the database so it
  survives the process and other processes see it;
* **warm**: rows of ``context_tier_entries`` in the core database, bounded by
  count (``context.warm.max-decisions``) and age (``context.warm.retention-hours``);
* **cold**: gzip-compressed JSON files under ``$CLEVERAGENTS_HOME/contexts/cold/``
  (the table keeps only their index), bounded by count
  (``context.cold.max-decisions``) and age (``context.cold.retention-days``).

A tier over its capacity pushes its least recently used entries one tier
down (the cold tier evicts them). Strategists see every tier, executors hot
and warm, reviewers hot only; every read is restricted to the projects asked
for. Hits and misses are counted per tier for :meth:`ContextTierService.get_metrics`.
"""

from __future__ import annotations

import gzip
import json
import threading
from collections import Counter
from collections.abc import Callable, Iterable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, ConfigDict, Field
from sqlalchemy import delete, func, insert, select, update

from cleveragents import paths
from cleveragents.errors import (
    BudgetExceededError,
    BusinessRuleViolation,
    NotFoundError,
    ValidationError,
)
from cleveragents.models.context import ContextFragment
from cleveragents_acms.context.tables import context_tier_entries, ensure_tables

if TYPE_CHECKING:
    from cleveragents_acms.context.tier_view import ScopedTierView

__all__ = [
    "ROLE_TIERS",
    "TIERS",
    "ActorContextView",
    "ActorRole",
    "ContextTier",
    "ContextTierService",
    "TierBudget",
    "TierMetrics",
    "TieredFragment",
]

ContextTier = Literal["hot", "warm", "cold"]
ActorRole = Literal["strategist", "executor", "reviewer"]
TIERS: tuple[str, ...] = ("hot", "warm", "cold")
ROLE_TIERS: dict[str, tuple[str, ...]] = {
    "strategist": ("hot", "warm", "cold"),
    "executor": ("hot", "warm"),
    "reviewer": ("hot",),
}
_T = context_tier_entries.c


def _now() -> datetime:
    return datetime.now(UTC)


class TieredFragment(ContextFragment):
    """A fragment placed in a tier, with the access tracking LRU eviction needs."""

    project_name: str = Field(min_length=1)
    tier_since: datetime = Field(default_factory=_now)
    last_accessed: datetime = Field(default_factory=_now)
    access_count: int = Field(default=0, ge=0)

    @classmethod
    def from_fragment(
        cls, fragment: ContextFragment, project_name: str, tier: str = "warm"
    ) -> TieredFragment:
        return cls(**{**fragment.model_dump(), "tier": tier, "project_name": project_name})

    def as_fragment(self) -> ContextFragment:
        """The plain fragment (for assembly and output)."""
        return ContextFragment(**self.model_dump(include=set(ContextFragment.model_fields)))


class TierBudget(BaseModel):
    """Capacity of each tier for one project."""

    model_config = ConfigDict(frozen=True)

    hot_max_tokens: int = Field(default=16000, gt=0)
    warm_max_decisions: int = Field(default=100, gt=0)
    cold_max_decisions: int = Field(default=500, gt=0)
    warm_retention_hours: float = Field(default=24, ge=0)
    cold_retention_days: float = Field(default=90, ge=0)

    @classmethod
    def from_config(cls, config: Any, **overrides: int | None) -> TierBudget:
        def get(key: str, default: Any) -> Any:
            return config.get(key, default) if config is not None else default

        values = {
            "hot_max_tokens": get("context.hot.max-tokens", 16000),
            "warm_max_decisions": get("context.warm.max-decisions", 100),
            "cold_max_decisions": get("context.cold.max-decisions", 500),
            "warm_retention_hours": get("context.warm.retention-hours", 24),
            "cold_retention_days": get("context.cold.retention-days", 90),
        }
        values.update({k: v for k, v in overrides.items() if v is not None})
        return cls(**values)


class ActorContextView(BaseModel):
    """What one actor may see: its role's tiers, in its projects."""

    model_config = ConfigDict(frozen=True)

    role: ActorRole
    project_names: tuple[str, ...]

    @property
    def tiers(self) -> tuple[str, ...]:
        return ROLE_TIERS[self.role]


class TierMetrics(BaseModel):
    """Hits and misses since the service started, and what each tier holds now."""

    model_config = ConfigDict(frozen=True)

    hits: dict[str, int] = Field(default_factory=dict)
    misses: int = 0
    populations: dict[str, int] = Field(default_factory=dict)
    tokens: dict[str, int] = Field(default_factory=dict)
    promotions: int = 0
    demotions: int = 0
    evictions: int = 0

    @property
    def hit_rate(self) -> float:
        total = sum(self.hits.values()) + self.misses
        return sum(self.hits.values()) / total if total else 0.0


class ContextTierService:
    """Stores fragments in tiers, moves them between tiers and answers who sees what.

    :param database: the core database (``context_tier_entries``).
    :param config: the configuration chain (tier capacities); ``None``: built-in defaults.
    :param budget_for: project -> its TierBudget (the project's policy); default: from config.
    :param cold_dir: where cold files go (default ``$CLEVERAGENTS_HOME/contexts/cold``).
    """

    def __init__(
        self,
        database: Any,
        config: Any = None,
        *,
        budget_for: Callable[[str], TierBudget] | None = None,
        cold_dir: Path | None = None,
    ) -> None:
        self.database = database
        self.config = config
        ensure_tables(database)
        self._budget_for = budget_for
        self.cold_dir = cold_dir or paths.home() / "contexts" / "cold"
        self._hot: dict[str, TieredFragment] = {}
        self._hot_loaded = False
        self._lock = threading.RLock()
        self._hits: Counter[str] = Counter()
        self._misses = 0
        self._moves: Counter[str] = Counter()

    def budget(self, project: str) -> TierBudget:
        if self._budget_for is not None:
            return self._budget_for(project)
        return TierBudget.from_config(self.config)

    # -- storing and reading ---------------------------------------------------------

    def store(self, fragment: TieredFragment) -> None:
        """Place ``fragment`` in its tier (replacing an entry with the same id)."""
        tier = fragment.tier
        budget = self.budget(fragment.project_name)
        if tier == "hot" and fragment.token_count > budget.hot_max_tokens:
            raise BudgetExceededError(
                f"a fragment of {fragment.token_count} tokens does not fit the hot tier "
                f"of project '{fragment.project_name}' ({budget.hot_max_tokens} tokens); "
                "store it in the warm tier"
            )
        now = _now()
        entry = fragment.model_copy(update={"tier_since": now, "last_accessed": now})
        with self._lock:
            self._delete_rows([entry.fragment_id])
            self._write(entry)
            self._enforce_capacity(entry.project_name, tier)

    def get(self, fragment_id: str) -> TieredFragment | None:
        """The entry (any tier), marked as used; ``None`` (a miss) when unknown."""
        with self._lock:
            self._load_hot()
            entry = self._hot.get(fragment_id)
            if entry is None:
                entry = self._read(fragment_id)
            if entry is None:
                self._misses += 1
                return None
            self._hits[entry.tier] += 1
            touched = entry.model_copy(
                update={"last_accessed": _now(), "access_count": entry.access_count + 1}
            )
            self._touch(touched)
            return touched

    def find(self, fragment_id: str) -> TieredFragment | None:
        """Like :meth:`get` without counting or touching (for listings)."""
        with self._lock:
            self._load_hot()
            return self._hot.get(fragment_id) or self._read(fragment_id)

    def entries(
        self, project_names: Iterable[str] | None = None, tiers: Iterable[str] = TIERS
    ) -> list[TieredFragment]:
        """Entries of these projects (all when ``None``) in these tiers; hot first, then recent."""
        tiers = tuple(tiers)
        for tier in tiers:
            _check_tier(tier)
        query = select(context_tier_entries).where(_T.tier.in_(tiers))
        if project_names is not None:
            query = query.where(_T.project_name.in_(list(project_names)))
        with self.database.engine.connect() as conn:
            rows = list(conn.execute(query).mappings())
        out = [self._from_row(row) for row in rows]
        entries = [e for e in out if e is not None]
        entries.sort(key=lambda e: (TIERS.index(e.tier), -e.last_accessed.timestamp()))
        return entries

    def get_for_actor(self, role: str, project_names: list[str]) -> list[TieredFragment]:
        """What an actor of ``role`` (strategist, executor, reviewer) sees in ``project_names``."""
        if role not in ROLE_TIERS:
            raise ValidationError(f"unknown role '{role}' (roles: {', '.join(ROLE_TIERS)})")
        if not project_names:
            return []
        return self.entries(project_names, ROLE_TIERS[role])

    def get_scoped_view(self, project_names: list[str]) -> ScopedTierView:
        """A read-only view of these projects' entries, held to their resources.

        :raises NotFoundError: a project does not exist.
        """
        from cleveragents.storage.repositories import ProjectRepository, ResourceRepository
        from cleveragents_acms.context.tier_view import ScopedTierView

        names = list(dict.fromkeys(project_names))
        scope: set[str] = set()
        with self.database.session(write=False) as session:
            projects = ProjectRepository(session)
            resources = ResourceRepository(session)
            for name in names:
                projects.get(name)
                for resource in resources.all(project=name):
                    scope.add(resource.resource_id)
                    scope.update(r.resource_id for r in resources.descendants(resource.resource_id))
        return ScopedTierView(self, names, scope)

    # -- moving between tiers --------------------------------------------------------------

    def promote(self, fragment_id: str) -> TieredFragment:
        """cold -> warm or warm -> hot."""
        with self._lock:
            entry = self._require(fragment_id)
            if entry.tier == "hot":
                raise BusinessRuleViolation(f"context entry {fragment_id} is already hot")
            target = TIERS[TIERS.index(entry.tier) - 1]
            budget = self.budget(entry.project_name)
            if target == "hot" and entry.token_count > budget.hot_max_tokens:
                raise BudgetExceededError(
                    f"context entry {fragment_id} ({entry.token_count} tokens) does not fit "
                    f"the hot tier ({budget.hot_max_tokens} tokens)"
                )
            moved = self._move(entry, target)
            self._moves["promotions"] += 1
            self._enforce_capacity(entry.project_name, target, keep=fragment_id)
            return moved

    def demote(self, fragment_id: str, *, summarize: bool = False) -> TieredFragment:
        """hot -> warm or warm -> cold; ``summarize`` keeps only the entry's first lines."""
        with self._lock:
            entry = self._require(fragment_id)
            if entry.tier == "cold":
                raise BusinessRuleViolation(f"context entry {fragment_id} is already cold")
            if summarize:
                entry = _summarized(entry)
            moved = self._move(entry, TIERS[TIERS.index(entry.tier) + 1])
            self._moves["demotions"] += 1
            self._enforce_capacity(entry.project_name, moved.tier)
            return moved

    def evict_lru(self, tier: str, count: int, *, project: str | None = None) -> int:
        """Remove the ``count`` least recently used entries of ``tier``; how many went."""
        _check_tier(tier)
        if isinstance(count, bool) or not isinstance(count, int) or count < 0:
            raise ValidationError(f"count must be a non-negative integer, got {count!r}")
        if count == 0:
            return 0
        with self._lock:
            query = select(_T.fragment_id).where(_T.tier == tier)
            if project is not None:
                query = query.where(_T.project_name == project)
            query = query.order_by(_T.last_accessed, _T.fragment_id).limit(count)
            with self.database.engine.connect() as conn:
                victims = [row[0] for row in conn.execute(query)]
            self._delete_rows(victims)
            self._moves["evictions"] += len(victims)
            return len(victims)

    def clear(self, project: str, tier: str | None = None) -> int:
        """Remove every entry of ``project`` (in ``tier`` only, when given)."""
        tiers = (tier,) if tier else TIERS
        with self._lock:
            ids = [e.fragment_id for e in self.entries([project], tiers)]
            self._delete_rows(ids)
            return len(ids)

    def apply_retention(self, now: datetime | None = None) -> dict[str, int]:
        """Warm entries past their retention go cold; cold ones past theirs are removed."""
        now = now or _now()
        moved = removed = 0
        with self._lock:
            for entry in self.entries(None, ("warm", "cold")):
                budget = self.budget(entry.project_name)
                age = now - entry.tier_since
                if entry.tier == "warm" and age > timedelta(hours=budget.warm_retention_hours):
                    self._move(entry, "cold")
                    moved += 1
                elif entry.tier == "cold" and age > timedelta(days=budget.cold_retention_days):
                    self._delete_rows([entry.fragment_id])
                    removed += 1
        return {"demoted": moved, "removed": removed}

    # -- metrics ------------------------------------------------------------------------

    def get_metrics(self, project: str | None = None) -> TierMetrics:
        query = select(_T.tier, func.count(), func.coalesce(func.sum(_T.token_count), 0)).group_by(
            _T.tier
        )
        if project is not None:
            query = query.where(_T.project_name == project)
        with self.database.engine.connect() as conn:
            rows = list(conn.execute(query))
        populations = dict.fromkeys(TIERS, 0)
        tokens = dict.fromkeys(TIERS, 0)
        for tier, count, total in rows:
            populations[tier] = int(count)
            tokens[tier] = int(total)
        return TierMetrics(
            hits={tier: self._hits[tier] for tier in TIERS},
            misses=self._misses,
            populations=populations,
            tokens=tokens,
            promotions=self._moves["promotions"],
            demotions=self._moves["demotions"],
            evictions=self._moves["evictions"],
        )

    # -- storage ------------------------------------------------------------------------

    def _load_hot(self) -> None:
        if self._hot_loaded:
            return
        with self.database.engine.connect() as conn:
            rows = list(conn.execute(select(context_tier_entries).where(_T.tier == "hot")))
        for row in rows:
            entry = self._from_row(row._mapping)
            if entry is not None:
                self._hot[entry.fragment_id] = entry
        self._hot_loaded = True

    def _require(self, fragment_id: str) -> TieredFragment:
        entry = self.find(fragment_id)
        if entry is None:
            raise NotFoundError(f"context entry '{fragment_id}' not found")
        return entry

    def _read(self, fragment_id: str) -> TieredFragment | None:
        with self.database.engine.connect() as conn:
            row = (
                conn.execute(select(context_tier_entries).where(_T.fragment_id == fragment_id))
                .mappings()
                .first()
            )
        return self._from_row(row) if row is not None else None

    def _from_row(self, row: Any) -> TieredFragment | None:
        if row["fragment"] is not None:
            data = json.loads(row["fragment"])
        else:
            path = self.cold_dir / str(row["archive_path"] or "")
            try:
                data = json.loads(gzip.decompress(path.read_bytes()))
            except (OSError, ValueError):
                return None  # archive lost: the row is removed by the next clear/evict
        data.update(
            tier=row["tier"],
            last_accessed=row["last_accessed"],
            access_count=row["access_count"],
            tier_since=row["tier_since"],
        )
        return TieredFragment.model_validate(data)

    def _write(self, entry: TieredFragment) -> None:
        payload = entry.model_dump_json()
        archive = None
        if entry.tier == "cold":
            archive = self._archive(entry, payload)
        values = {
            "fragment_id": entry.fragment_id,
            "project_name": entry.project_name,
            "tier": entry.tier,
            "uko_node": entry.uko_node,
            "token_count": entry.token_count,
            "fragment": None if entry.tier == "cold" else payload,
            "archive_path": archive,
            "created_at": entry.created_at.isoformat(),
            "tier_since": entry.tier_since.isoformat(),
            "last_accessed": entry.last_accessed.isoformat(),
            "access_count": entry.access_count,
        }
        with self.database.engine.begin() as conn:
            conn.execute(insert(context_tier_entries).values(**values))
        if entry.tier == "hot":
            self._hot[entry.fragment_id] = entry

    def _archive(self, entry: TieredFragment, payload: str) -> str:
        relative = f"{paths.project_slug(entry.project_name)}/{entry.fragment_id}.json.gz"
        target = self.cold_dir / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        partial = target.with_suffix(".part")
        partial.write_bytes(gzip.compress(payload.encode("utf-8")))
        partial.replace(target)
        return relative

    def _touch(self, entry: TieredFragment) -> None:
        with self.database.engine.begin() as conn:
            conn.execute(
                update(context_tier_entries)
                .where(_T.fragment_id == entry.fragment_id)
                .values(
                    last_accessed=entry.last_accessed.isoformat(), access_count=entry.access_count
                )
            )
        if entry.tier == "hot":
            self._hot[entry.fragment_id] = entry

    def _move(self, entry: TieredFragment, tier: str) -> TieredFragment:
        moved = entry.model_copy(update={"tier": tier, "tier_since": _now()})
        self._delete_rows([entry.fragment_id])
        self._write(moved)
        return moved

    def _delete_rows(self, fragment_ids: list[str]) -> None:
        if not fragment_ids:
            return
        with self.database.engine.begin() as conn:
            archives = [
                row[0]
                for row in conn.execute(
                    select(_T.archive_path).where(
                        _T.fragment_id.in_(fragment_ids), _T.archive_path.is_not(None)
                    )
                )
            ]
            conn.execute(delete(context_tier_entries).where(_T.fragment_id.in_(fragment_ids)))
        for fragment_id in fragment_ids:
            self._hot.pop(fragment_id, None)
        for relative in archives:
            (self.cold_dir / relative).unlink(missing_ok=True)

    def _enforce_capacity(self, project: str, tier: str, *, keep: str | None = None) -> None:
        """Push least recently used entries down until each tier from ``tier`` fits."""
        budget = self.budget(project)
        for current in TIERS[TIERS.index(tier) :]:
            entries = sorted(
                self.entries([project], (current,)),
                key=lambda e: (e.fragment_id == keep, e.last_accessed, e.fragment_id),
            )
            if current == "hot":
                over = sum(e.token_count for e in entries) - budget.hot_max_tokens
                victims = []
                for entry in entries:
                    if over <= 0:
                        break
                    victims.append(entry)
                    over -= entry.token_count
            else:
                limit = (
                    budget.warm_max_decisions if current == "warm" else budget.cold_max_decisions
                )
                victims = entries[: max(0, len(entries) - limit)]
            if not victims:
                break
            if current == "cold":
                self._delete_rows([v.fragment_id for v in victims])
                self._moves["evictions"] += len(victims)
            else:
                for victim in victims:
                    self._move(victim, TIERS[TIERS.index(current) + 1])
                    self._moves["demotions"] += 1


def _check_tier(tier: str) -> None:
    if tier not in TIERS:
        raise ValidationError(f"unknown tier '{tier}' (tiers: {', '.join(TIERS)})")


def _summarized(entry: TieredFragment, max_lines: int = 3) -> TieredFragment:
    lines = [line for line in entry.content.splitlines() if line.strip()][:max_lines]
    content = "\n".join(lines)
    if content == entry.content:
        return entry
    from cleveragents_acms.pipeline.tokenizers import get_tokenizer

    metadata = (
        {**entry.metadata, "summarized": "true"} if len(entry.metadata) < 64 else entry.metadata
    )
    return entry.model_copy(
        update={
            "content": content,
            "token_count": get_tokenizer("cl100k").count(content),
            "detail_depth": min(entry.detail_depth, 2),
            "metadata": metadata,
        }
    )
