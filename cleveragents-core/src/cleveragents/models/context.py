"""Context Request Protocol and assembled-context models (spec 001, "Data Models").

These are the types every strategy, pipeline stage and consumer speaks, so they
live in core. Frozen where the spec says so; ULIDs and UTC datetimes throughout.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from enum import StrEnum
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from cleveragents.models.ids import new_ulid, utcnow

__all__ = [
    "UNIVERSAL_LEVELS",
    "AssembledContext",
    "ContextBudget",
    "ContextFragment",
    "ContextRequest",
    "DetailLevelMap",
    "DroppedFragment",
    "FragmentProvenance",
    "ScoredFragment",
    "StrategyCapabilities",
    "TemporalScope",
]

_FROZEN = ConfigDict(frozen=True, extra="forbid")


class TemporalScope(StrEnum):
    """Which revisions of the knowledge graph a request may see."""

    CURRENT = "current"
    RECENT = "recent"
    ALL = "all"


class FragmentProvenance(BaseModel):
    """Where a fragment came from: resource, file, line range and who found it."""

    model_config = _FROZEN

    resource_id: str
    path: str
    start_line: int | None = Field(default=None, ge=1)
    end_line: int | None = Field(default=None, ge=1)
    strategy: str = ""
    #: Content hash of the source file when it was indexed (freshness checks).
    source_hash: str | None = None
    indexed_at: datetime | None = None

    @model_validator(mode="after")
    def _ordered_range(self) -> FragmentProvenance:
        if self.start_line and self.end_line and self.end_line < self.start_line:
            raise ValueError("end_line must not precede start_line")
        return self

    @property
    def location(self) -> str:
        """``path:start-end`` as printed by ``context assemble``."""
        if self.start_line is None:
            return self.path
        return f"{self.path}:{self.start_line}-{self.end_line or self.start_line}"


class ContextFragment(BaseModel):
    """The atomic unit of context: one UKO node rendered at one detail depth."""

    model_config = _FROZEN

    fragment_id: str = Field(default_factory=new_ulid)
    uko_node: str = Field(min_length=1)
    content: str = Field(max_length=1_000_000)
    detail_depth: int = Field(default=0, ge=0, le=9)
    token_count: int = Field(ge=0)
    relevance_score: float = Field(default=0.5, ge=0.0, le=1.0)
    provenance: FragmentProvenance
    tier: str = "warm"
    metadata: dict[str, str] = Field(default_factory=dict)
    created_at: datetime = Field(default_factory=utcnow)

    @field_validator("tier")
    @classmethod
    def _known_tier(cls, value: str) -> str:
        if value not in ("hot", "warm", "cold"):
            raise ValueError("tier must be 'hot', 'warm' or 'cold'")
        return value

    @field_validator("metadata")
    @classmethod
    def _bounded_metadata(cls, value: dict[str, str]) -> dict[str, str]:
        if len(value) > 64:
            raise ValueError("metadata holds at most 64 entries")
        return value

    @property
    def content_hash(self) -> str:
        return hashlib.sha256(self.content.encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class ScoredFragment:
    """A fragment with the FragmentScorer's composite score and its breakdown."""

    fragment: ContextFragment
    composite_score: float
    score_components: Mapping[str, float] = field(default_factory=dict)


class ContextBudget(BaseModel):
    """Token budget: ``available_tokens = max_tokens - reserved_tokens``."""

    model_config = _FROZEN

    max_tokens: int = Field(default=4096, ge=1)
    reserved_tokens: int = Field(default=512, ge=0)

    @model_validator(mode="after")
    def _reserve_below_max(self) -> ContextBudget:
        if self.reserved_tokens >= self.max_tokens:
            raise ValueError("reserved_tokens must be less than max_tokens")
        return self

    @property
    def available_tokens(self) -> int:
        return self.max_tokens - self.reserved_tokens


class StrategyCapabilities(BaseModel):
    """What a strategy needs and how good it is (spec 001, StrategyCapabilities)."""

    model_config = _FROZEN

    uses_text: bool = False
    uses_vector: bool = False
    uses_graph: bool = False
    uses_temporal: bool = False
    quality_score: float = Field(default=0.5, ge=0.0, le=1.0)
    supports_depth_breadth: bool = False
    supports_plan_hierarchy: bool = False
    uko_levels: tuple[str, ...] = ()
    resource_types: tuple[str, ...] = ("*",)

    def required_backends(self) -> set[str]:
        return {
            k
            for k, used in (
                ("text", self.uses_text),
                ("vector", self.uses_vector),
                ("graph", self.uses_graph),
            )
            if used
        }


class ContextRequest(BaseModel):
    """What an actor asks for (Context Request Protocol)."""

    model_config = _FROZEN

    query: str | None = None
    entities: tuple[str, ...] = ()
    uko_types: tuple[str, ...] = ()
    focus: tuple[str, ...] = ()
    breadth: int = Field(default=2, ge=0)
    depth: int | str = 3
    depth_gradient: bool = True
    temporal: TemporalScope = TemporalScope.CURRENT
    max_tokens: int | None = Field(default=None, ge=0)
    preferred_strategies: tuple[str, ...] = ()
    required_backends: tuple[str, ...] = ()
    priority: float = Field(default=0.5, ge=0.0, le=1.0)
    purpose: str = ""

    @field_validator("depth")
    @classmethod
    def _depth_range(cls, value: int | str) -> int | str:
        if isinstance(value, int) and value < 0:
            raise ValueError("depth must be a non-negative integer or a named level")
        if isinstance(value, str) and not value.strip():
            raise ValueError("depth name must not be empty")
        return value

    @property
    def is_empty(self) -> bool:
        """True when there is nothing to search for: no query, entities or focus."""
        return not ((self.query or "").strip() or self.entities or self.focus)


class DroppedFragment(BaseModel):
    """A candidate the budget left out or downgraded, so an agent can ask for it."""

    model_config = _FROZEN

    uko_node: str
    path: str
    detail_depth: int
    delivered_depth: int | None = None  # None: dropped entirely
    reason: str

    @classmethod
    def of(
        cls, fragment: ContextFragment, reason: str, delivered_depth: int | None = None
    ) -> DroppedFragment:
        """The record of ``fragment`` left out (or delivered at ``delivered_depth``)."""
        return cls(
            uko_node=fragment.uko_node,
            path=fragment.provenance.path,
            detail_depth=fragment.detail_depth,
            delivered_depth=delivered_depth,
            reason=reason,
        )


class AssembledContext(BaseModel):
    """The fused, budget-respecting context delivered to an actor."""

    model_config = _FROZEN

    payload_id: str = Field(default_factory=new_ulid)
    plan_id: str | None = None
    fragments: tuple[ContextFragment, ...] = ()
    total_tokens: int = Field(default=0, ge=0)
    budget: ContextBudget = Field(default_factory=ContextBudget)
    budget_used: float = Field(default=0.0, ge=0.0)
    strategies_used: tuple[str, ...] = ()
    context_hash: str = ""
    preamble: str | None = None
    preamble_tokens: int = Field(default=0, ge=0)
    provenance_map: dict[str, Any] = Field(default_factory=dict)
    dropped: tuple[DroppedFragment, ...] = ()
    notes: tuple[str, ...] = ()
    assembled_at: datetime = Field(default_factory=utcnow)

    @property
    def is_within_budget(self) -> bool:
        return self.total_tokens + self.preamble_tokens <= self.budget.available_tokens

    @property
    def remaining_tokens(self) -> int:
        return max(0, self.budget.available_tokens - self.total_tokens - self.preamble_tokens)

    @staticmethod
    def hash_fragments(fragments: tuple[ContextFragment, ...] | list[ContextFragment]) -> str:
        digest = hashlib.sha256()
        for fragment in fragments:
            digest.update(fragment.uko_node.encode())
            digest.update(b"\0")
            digest.update(fragment.content.encode())
            digest.update(b"\0")
        return digest.hexdigest()


#: Built-in named levels of the universal layer (uko:).
UNIVERSAL_LEVELS: dict[str, int] = {"MODULE_LISTING": 0, "SIGNATURES": 4, "FULL_SOURCE": 9}


class DetailLevelMap(BaseModel):
    """Named detail levels -> depths for one UKO domain, inheriting from a parent map."""

    model_config = _FROZEN

    domain: str = Field(min_length=1)
    parent: str | None = None
    levels: dict[str, int] = Field(default_factory=dict)

    @field_validator("levels")
    @classmethod
    def _depths_in_range(cls, value: dict[str, int]) -> dict[str, int]:
        # Level insertion shifts depths past 9 (uko-py's FULL_SOURCE is 12); renderings
        # stay at 0-9 and a deeper named level resolves to the richest rendering.
        bad = {k: v for k, v in value.items() if v < 0}
        if bad:
            raise ValueError(f"depths must be non-negative: {bad}")
        return value
