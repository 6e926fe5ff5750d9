"""How many tokens a context may use, and when a changed budget calls for a new assembly.

The default budget for a model (spec 001, "Budget Enforcement")::

    budget = model_context_window - response_reserve (4096) - tool_definitions
             - skeleton_allocation

``tool_definitions`` is the exact size of the tool definitions an agent sends
with each call (the registered tools); ``skeleton_allocation`` is the share
its parent plan's skeleton takes (``context.budget.skeleton-ratio``) when
there is a parent context: the pipeline is handed ``budget +
skeleton_allocation`` and carves the skeleton out of it. An explicit budget
is the ceiling of everything, skeleton included. Without a model and without
an explicit budget the budget is :data:`DEFAULT_BUDGET`.

:class:`AdaptiveAssembler` implements progressive refinement (spec 000): it
keeps the last assembly per project and request and assembles again only when
the budget moved by more than ``context.budget.refresh-threshold`` (default
30%), when the cached context no longer fits, or when the index changed.
"""

from __future__ import annotations

import hashlib
import json
import threading
from collections import OrderedDict
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass
from typing import Any

from cleveragents.errors import ValidationError
from cleveragents.models.context import AssembledContext, ContextBudget, ContextRequest

__all__ = [
    "CONTEXT_WINDOWS",
    "DEFAULT_BUDGET",
    "RESPONSE_RESERVE",
    "AdaptiveAssembler",
    "BudgetBreakdown",
    "context_window",
    "tool_definition_tokens",
]

DEFAULT_BUDGET = 8000
RESPONSE_RESERVE = 4096

#: Context windows (tokens) of common models, matched by longest prefix of the model name.
CONTEXT_WINDOWS: dict[str, int] = {
    "gpt-4o": 128_000,
    "gpt-4o-mini": 128_000,
    "chatgpt-4o": 128_000,
    "gpt-4.1": 1_047_576,
    "gpt-4.1-mini": 1_047_576,
    "gpt-4.1-nano": 1_047_576,
    "gpt-4-turbo": 128_000,
    "gpt-4-32k": 32_768,
    "gpt-4": 8_192,
    "gpt-3.5-turbo": 16_385,
    "gpt-5": 400_000,
    "o1": 200_000,
    "o1-mini": 128_000,
    "o3": 200_000,
    "o3-mini": 200_000,
    "o4-mini": 200_000,
    "claude-3-haiku": 200_000,
    "claude-3-sonnet": 200_000,
    "claude-3-opus": 200_000,
    "claude-3-5-haiku": 200_000,
    "claude-3-5-sonnet": 200_000,
    "claude-3-7-sonnet": 200_000,
    "claude-sonnet-4": 200_000,
    "claude-opus-4": 200_000,
    "claude-haiku-4": 200_000,
    "gemini-1.5-flash": 1_048_576,
    "gemini-1.5-pro": 2_097_152,
    "gemini-2.0-flash": 1_048_576,
    "gemini-2.5-flash": 1_048_576,
    "gemini-2.5-pro": 1_048_576,
    "llama-3.1": 128_000,
    "llama-3.3": 128_000,
    "mistral-large": 128_000,
    "codestral": 256_000,
    "deepseek-chat": 64_000,
    "deepseek-coder": 128_000,
    "qwen2.5-coder": 32_768,
}


def context_window(model: str) -> int | None:
    """The context window of ``model`` (provider prefixes ignored), ``None`` when unknown."""
    name = model.strip().lower().rsplit("/", 1)[-1]
    best = max((p for p in CONTEXT_WINDOWS if name.startswith(p)), key=len, default=None)
    return CONTEXT_WINDOWS[best] if best else None


def tool_definition_tokens(tools: Mapping[str, Any], count: Callable[[str], int]) -> int:
    """Tokens of the tool definitions (name, description, JSON Schema) sent with each call."""
    total = 0
    for name, tool in tools.items():
        definition = {
            "name": name,
            "description": getattr(tool, "description", ""),
            "input_schema": dict(getattr(tool, "input_schema", {}) or {}),
        }
        total += count(json.dumps(definition, sort_keys=True, default=str))
    return total


@dataclass(frozen=True)
class BudgetBreakdown:
    """Where a context budget comes from (``get_context_budget`` returns this)."""

    budget: int
    source: str  # "explicit" | "model" | "default"
    model: str | None = None
    context_window: int | None = None
    response_reserve: int = 0
    tool_definitions: int = 0
    skeleton_allocation: int = 0
    soft_cap: int | None = None

    @property
    def assembly_budget(self) -> int:
        """What the pipeline gets: the budget plus the parent skeleton it carves out of it."""
        return self.budget + self.skeleton_allocation

    def to_dict(self) -> dict[str, Any]:
        return {**asdict(self), "assembly_budget": self.assembly_budget}

    @classmethod
    def explicit(cls, budget: int, model: str | None = None) -> BudgetBreakdown:
        if isinstance(budget, bool) or not isinstance(budget, int) or budget <= 0:
            raise ValidationError(f"budget must be a positive number of tokens, got {budget!r}")
        return cls(budget=budget, source="explicit", model=model)

    @classmethod
    def for_model(
        cls,
        model: str,
        *,
        tool_definitions: int = 0,
        skeleton_ratio: float = 0.0,
        soft_cap: int | None = None,
    ) -> BudgetBreakdown | None:
        """The spec's formula for ``model``; ``None`` when its window is unknown."""
        window = context_window(model)
        if window is None:
            return None
        room = window - RESPONSE_RESERVE - tool_definitions
        skeleton = int(room * max(0.0, min(1.0, skeleton_ratio)))
        budget = room - skeleton
        if soft_cap is not None:
            budget = min(budget, soft_cap)
        if budget <= 0:
            raise ValidationError(
                f"model {model} leaves no room for context ({window} tokens minus "
                f"{RESPONSE_RESERVE} reserved for the response and {tool_definitions} of tools)"
            )
        return cls(
            budget=budget,
            source="model",
            model=model,
            context_window=window,
            response_reserve=RESPONSE_RESERVE,
            tool_definitions=tool_definitions,
            skeleton_allocation=skeleton,
            soft_cap=soft_cap,
        )


def request_key(project: str, request: ContextRequest, *extra: object) -> str:
    """A stable key for "the same request": everything but the token limit."""
    data = request.model_dump(mode="json", exclude={"max_tokens"})
    raw = json.dumps([project, data, [str(e) for e in extra]], sort_keys=True)
    return hashlib.sha256(raw.encode()).hexdigest()


@dataclass
class _Cached:
    budget: int
    stamp: str
    context: AssembledContext


class AdaptiveAssembler:
    """Re-assembles only when the budget changed by more than ``threshold`` (a fraction).

    :param assemble: ``assemble(budget) -> AssembledContext`` for one key.
    :param threshold: ``context.budget.refresh-threshold``.
    """

    def __init__(self, threshold: float = 0.30, *, capacity: int = 64) -> None:
        if not 0.0 <= threshold <= 1.0:
            raise ValidationError(f"refresh threshold must be between 0 and 1, got {threshold}")
        self.threshold = threshold
        self.capacity = capacity
        self._cache: OrderedDict[str, _Cached] = OrderedDict()
        self._lock = threading.Lock()
        self.reassemblies = 0
        self.reuses = 0

    def needs_refresh(self, key: str, budget: int, stamp: str = "") -> bool:
        with self._lock:
            cached = self._cache.get(key)
        if cached is None or cached.stamp != stamp:
            return True
        used = cached.context.total_tokens + cached.context.preamble_tokens
        if used > budget:
            return True  # never deliver more than the new budget allows
        return abs(budget - cached.budget) / max(1, cached.budget) > self.threshold

    def assemble(
        self,
        key: str,
        budget: int,
        build: Callable[[int], AssembledContext],
        *,
        stamp: str = "",
    ) -> tuple[AssembledContext, bool]:
        """The context for ``key`` at ``budget`` and whether it was assembled anew."""
        if not self.needs_refresh(key, budget, stamp):
            with self._lock:
                cached = self._cache[key]
                self._cache.move_to_end(key)
                self.reuses += 1
            context = cached.context
            new_budget = ContextBudget(max_tokens=budget, reserved_tokens=0)
            used = context.total_tokens
            return (
                context.model_copy(update={"budget": new_budget, "budget_used": used / budget}),
                False,
            )
        context = build(budget)
        with self._lock:
            self._cache[key] = _Cached(budget, stamp, context)
            self._cache.move_to_end(key)
            while len(self._cache) > self.capacity:
                self._cache.popitem(last=False)
            self.reassemblies += 1
        return context, True

    def forget(self, key: str | None = None) -> None:
        with self._lock:
            if key is None:
                self._cache.clear()
            else:
                self._cache.pop(key, None)
