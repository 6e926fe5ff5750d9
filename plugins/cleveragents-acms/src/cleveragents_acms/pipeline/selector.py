"""Stage 1: which strategies run, in what order, with what confidence.

Every strategy is polled with ``can_handle``; strategies that decline (0.0),
raise, or need a backend this assembly lacks are left out, the last along the
spec's fallback degradation path::

    arce -> breadth-depth-navigator -> semantic-embedding -> simple-keyword

A request that names strategies (``preferred_strategies``, the CLI's
``--strategy``) runs exactly those; a named strategy that cannot run hands its
place to the next runnable strategy on that path, and a note says so ("arce
needs vector; falling back to breadth-depth-navigator"). Without named
strategies the path is what the spec calls it, a degradation path: its first
strategy that can run is selected and the later ones stand by in its place
(each one on the path that lacks a backend is reported the same way); every
runnable strategy off the path (temporal-archaeology, plan-decision-context, a
plugin's) is selected beside it. The later strategies search the same channels
the first one fuses (arce's text and vector channels are what simple-keyword
and semantic-embedding search), ranked more crudely, so sharing the budget with
them costs the leading strategy room: on the quality benchmark the four sharing
put the code to change in the context less often at 4k and 32k tokens and rank
the gold file in the top five less often than arce alone. The setting
``share-fallback-path = true`` selects every runnable strategy on the path.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from cleveragents import assembly
from cleveragents_acms.pipeline._common import log, note, setting

if TYPE_CHECKING:
    from cleveragents.models.context import ContextRequest
    from cleveragents.protocols.backends import BackendSet
    from cleveragents.protocols.pipeline import ContextStrategy

__all__ = [
    "FALLBACK_CHAIN",
    "SELECTION_MEMO",
    "ConfidenceWeightedSelector",
    "StrategySelectionEvent",
]

_STAGE = "strategy-selector"
#: Where the assembly's memo keeps the last selection's event.
SELECTION_MEMO = "strategy-selection"

#: Most capable first; each link needs fewer backends than the one before.
FALLBACK_CHAIN: tuple[str, ...] = (
    "arce",
    "breadth-depth-navigator",
    "semantic-embedding",
    "simple-keyword",
)


@dataclass(frozen=True)
class StrategySelectionEvent:
    """What a selection decided, for diagnostics (``context inspect``)."""

    selected: tuple[tuple[str, float], ...]
    #: strategy name -> why it was left out
    excluded: dict[str, str] = field(default_factory=dict)
    notes: tuple[str, ...] = ()


def quality_of(strategy: object) -> float:
    """The strategy's intrinsic ``quality_score`` (0.5 when it declares none)."""
    quality = getattr(getattr(strategy, "capabilities", None), "quality_score", 0.5)
    try:
        return min(1.0, max(0.0, float(quality)))
    except (TypeError, ValueError):
        return 0.5


def required_backends(strategy: object) -> set[str]:
    capabilities = getattr(strategy, "capabilities", None)
    required = getattr(capabilities, "required_backends", None)
    try:
        return set(required()) if callable(required) else set()
    except Exception:
        return set()


class ConfidenceWeightedSelector:
    """Orders runnable strategies by confidence x quality; preferred strategies first.

    ``listeners`` are called with a :class:`StrategySelectionEvent` after each
    selection (the spec's observer for diagnostics); a listener that raises is
    logged and ignored.
    """

    def __init__(
        self,
        *,
        fallback_chain: Sequence[str] = FALLBACK_CHAIN,
        listeners: Sequence[Callable[[StrategySelectionEvent], Any]] = (),
        share_fallback_path: bool | None = None,
    ) -> None:
        self.fallback_chain = tuple(fallback_chain)
        self._listeners = list(listeners)
        self.share_fallback_path = share_fallback_path

    def subscribe(self, listener: Callable[[StrategySelectionEvent], Any]) -> None:
        self._listeners.append(listener)

    def select(
        self,
        strategies: Sequence[ContextStrategy],
        request: ContextRequest,
        backends: BackendSet,
    ) -> list[tuple[ContextStrategy, float]]:
        notes: list[str] = []
        excluded: dict[str, str] = {}
        available = _available(backends)
        runnable: dict[str, tuple[ContextStrategy, float]] = {}
        missing_backends: dict[str, set[str]] = {}
        for strategy in strategies:
            name = str(getattr(strategy, "name", "") or type(strategy).__name__)
            if name in runnable or name in excluded:
                continue  # the first strategy of a name wins
            missing = required_backends(strategy) - available
            if missing:
                missing_backends[name] = missing
                excluded[name] = f"needs {', '.join(sorted(missing))}"
                continue
            try:
                confidence = float(strategy.can_handle(request, backends))
            except Exception as exc:
                excluded[name] = f"can_handle raised {type(exc).__name__}"
                notes.append(f"strategy {name} skipped: can_handle raised {type(exc).__name__}")
                continue
            if not math.isfinite(confidence) or confidence <= 0.0:
                excluded[name] = "declined (confidence 0)"
                continue
            runnable[name] = (strategy, min(confidence, 1.0))

        preferred = self._preferred(request, runnable, missing_backends, excluded, notes)
        if request.preferred_strategies:
            for name in list(runnable):
                if name not in preferred:
                    excluded[name] = "not named by the request"
                    del runnable[name]
            if not runnable:
                notes.append("none of the requested strategies can run")
        else:
            notes.extend(self._degradation_notes(missing_backends, runnable))
            if not setting(_STAGE, "share-fallback-path", self.share_fallback_path):
                self._keep_the_lead(runnable, excluded)
        for name in request.required_backends:
            if name not in available:
                notes.append(f"requested backend {name} is not available")

        def priority(item: tuple[str, tuple[ContextStrategy, float]]) -> tuple[float, float, str]:
            name, (strategy, confidence) = item
            rank = preferred.index(name) if name in preferred else len(preferred)
            return (rank, -confidence * quality_of(strategy), name)

        ordered = sorted(runnable.items(), key=priority)
        selected = [pair for _, pair in ordered]
        for message in notes:
            note(message)
        self._emit(
            StrategySelectionEvent(tuple((n, c) for n, (_, c) in ordered), excluded, tuple(notes))
        )
        return selected

    def _preferred(
        self,
        request: ContextRequest,
        runnable: dict[str, tuple[ContextStrategy, float]],
        missing_backends: dict[str, set[str]],
        excluded: dict[str, str],
        notes: list[str],
    ) -> list[str]:
        """Runnable names in preference order, with fallbacks standing in for blocked ones."""
        preferred: list[str] = []
        for name in request.preferred_strategies:
            if name in runnable:
                stand_in: str | None = name
            elif name in missing_backends:
                stand_in = self._fallback_for(name, runnable)
                needs = ", ".join(sorted(missing_backends[name]))
                if stand_in is not None:
                    notes.append(f"{name} needs {needs}; falling back to {stand_in}")
                else:
                    notes.append(f"{name} needs {needs}; no fallback strategy can run")
            elif name in excluded:
                stand_in = None
                notes.append(f"preferred strategy {name} {excluded[name]}; not used")
            else:
                stand_in = None
                notes.append(f"unknown preferred strategy {name} ignored")
            if stand_in is not None and stand_in not in preferred:
                preferred.append(stand_in)
        return preferred

    def _keep_the_lead(
        self, runnable: dict[str, tuple[ContextStrategy, float]], excluded: dict[str, str]
    ) -> None:
        """Of the fallback path, only its first runnable strategy stays selected."""
        path = [name for name in self.fallback_chain if name in runnable]
        for name in path[1:]:
            excluded[name] = f"stands by for {path[0]} on the fallback path"
            del runnable[name]

    def _fallback_for(
        self, name: str, runnable: dict[str, tuple[ContextStrategy, float]]
    ) -> str | None:
        """The next runnable strategy after ``name`` on the fallback path."""
        chain = self.fallback_chain
        later = chain[chain.index(name) + 1 :] if name in chain else chain
        return next((candidate for candidate in later if candidate in runnable), None)

    def _degradation_notes(
        self,
        missing_backends: dict[str, set[str]],
        runnable: dict[str, tuple[ContextStrategy, float]],
    ) -> list[str]:
        """Notes for strategies on the fallback path that cannot run."""
        notes = []
        for name in self.fallback_chain:
            if name not in missing_backends:
                continue
            needs = ", ".join(sorted(missing_backends[name]))
            stand_in = self._fallback_for(name, runnable)
            if stand_in is not None:
                notes.append(f"{name} needs {needs}; falling back to {stand_in}")
            else:
                notes.append(f"{name} needs {needs}; skipped")
        return notes

    def _emit(self, event: StrategySelectionEvent) -> None:
        services = assembly.current()
        if services is not None:  # for `context inspect`: what was left out, and why
            services.memo[SELECTION_MEMO] = event
        for listener in self._listeners:
            try:
                listener(event)
            except Exception as exc:
                log.warning("strategy selection listener failed", error=repr(exc))


def _available(backends: BackendSet | None) -> set[str]:
    if backends is None:
        return set()
    available = getattr(backends, "available", None)
    if callable(available):
        return set(available())
    return {k for k in ("text", "vector", "graph") if getattr(backends, k, None) is not None}
