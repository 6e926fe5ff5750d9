"""Stage 3: runs the allocated strategies in parallel, each with a timeout and a circuit breaker.

A strategy that raises, returns something other than a list of
ContextFragments, or overruns ``timeout-seconds`` is left out of this
assembly with a note; the others are unaffected. After
``circuit-breaker-threshold`` consecutive failures a strategy is not called
again (for the same plan, or process-wide without a plan id) until
``cooldown_seconds`` have passed; then one trial call decides whether it
closes again.

Python cannot stop a thread: a strategy that overran its timeout is
abandoned, its result ignored, and its worker thread finishes in the
background (the interpreter waits for it at exit).
"""

from __future__ import annotations

import contextvars
import threading
import time
from collections.abc import Callable
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from cleveragents.models.context import ContextFragment
from cleveragents_acms.pipeline._common import log, note, plan_attr, setting
from cleveragents_acms.pipeline.selector import quality_of

if TYPE_CHECKING:
    from cleveragents.models.context import ContextRequest
    from cleveragents.protocols.backends import BackendSet
    from cleveragents.protocols.pipeline import ContextStrategy

__all__ = ["ParallelStrategyExecutor"]

_STAGE = "strategy-executor"


@dataclass
class _Breaker:
    failures: int = 0
    opened_at: float | None = None


class ParallelStrategyExecutor:
    """Concurrent strategy execution with per-strategy timeouts and circuit breaking."""

    def __init__(
        self,
        *,
        max_workers: int | None = None,
        timeout_seconds: float | None = None,
        circuit_breaker_threshold: int | None = None,
        cooldown_seconds: float = 60.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.max_workers = max_workers
        self.timeout_seconds = timeout_seconds
        self.circuit_breaker_threshold = circuit_breaker_threshold
        self.cooldown_seconds = cooldown_seconds
        self._clock = clock
        self._lock = threading.Lock()
        self._breakers: dict[tuple[str, str], _Breaker] = {}

    # -- circuit breaker -------------------------------------------------------------

    def is_open(self, strategy_name: str, plan_id: str | None = None) -> bool:
        """True while ``strategy_name`` is disabled for ``plan_id`` (None: the process)."""
        with self._lock:
            breaker = self._breakers.get((plan_id or "", strategy_name))
            if breaker is None or breaker.opened_at is None:
                return False
            if self._clock() - breaker.opened_at >= self.cooldown_seconds:
                breaker.opened_at = None  # half-open: the next call is a trial
                breaker.failures = max(0, self._threshold() - 1)
                return False
            return True

    def _record(self, key: tuple[str, str], ok: bool) -> None:
        with self._lock:
            breaker = self._breakers.setdefault(key, _Breaker())
            if ok:
                breaker.failures, breaker.opened_at = 0, None
                return
            breaker.failures += 1
            if breaker.failures >= self._threshold() and breaker.opened_at is None:
                breaker.opened_at = self._clock()

    def _threshold(self) -> int:
        return max(
            1, int(setting(_STAGE, "circuit-breaker-threshold", self.circuit_breaker_threshold))
        )

    # -- execution -----------------------------------------------------------------------

    def execute(
        self,
        allocations: list[tuple[ContextStrategy, float, int]],
        request: ContextRequest,
        backends: BackendSet,
        plan_context: object,
    ) -> list[ContextFragment]:
        plan_id = plan_attr(plan_context, "plan_id")
        plan_key = str(plan_id) if plan_id else ""
        runs: list[tuple[str, ContextStrategy, int]] = []
        for strategy, _confidence, budget in allocations:
            name = str(getattr(strategy, "name", "") or type(strategy).__name__)
            if self.is_open(name, plan_key):
                note(f"strategy {name} skipped: circuit open after repeated failures")
                continue
            runs.append((name, strategy, int(budget)))
        if not runs:
            return []

        timeout = float(setting(_STAGE, "timeout-seconds", self.timeout_seconds))
        workers = max(1, min(int(setting(_STAGE, "max-workers", self.max_workers)), len(runs)))
        started: dict[int, float] = {}
        results: dict[int, list[ContextFragment]] = {}

        def call(index: int, strategy: ContextStrategy, budget: int) -> Any:
            started[index] = self._clock()
            return strategy.assemble(request, backends, budget, plan_context)

        pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="cleveragents-strategy")
        try:
            futures: dict[Future[Any], int] = {
                # each call runs in a copy of this context, so it sees the running assembly
                pool.submit(contextvars.copy_context().run, call, i, strategy, budget): i
                for i, (_, strategy, budget) in enumerate(runs)
            }
            pending = set(futures)
            while pending:
                poll = self._poll(started, timeout, pending, futures)
                done, pending = wait(pending, timeout=poll, return_when=FIRST_COMPLETED)
                for future in done:
                    index = futures[future]
                    name, strategy, _ = runs[index]
                    fragments = self._collect(name, strategy, future)
                    self._record((plan_key, name), fragments is not None)
                    if fragments is not None:
                        results[index] = fragments
                now = self._clock()
                for future in list(pending):
                    index = futures[future]
                    begun = started.get(index)
                    if begun is not None and now - begun >= timeout:
                        pending.discard(future)
                        future.cancel()
                        name = runs[index][0]
                        self._record((plan_key, name), False)
                        note(f"strategy {name} timed out after {timeout:g}s; abandoned")
        finally:
            pool.shutdown(wait=False, cancel_futures=True)
        return [fragment for index in sorted(results) for fragment in results[index]]

    def _poll(
        self,
        started: dict[int, float],
        timeout: float,
        pending: set[Future[Any]],
        futures: dict[Future[Any], int],
    ) -> float:
        """Seconds until the earliest running strategy times out (short while some queue)."""
        now = self._clock()
        waits = [timeout - (now - started[futures[f]]) for f in pending if futures[f] in started]
        if len(waits) < len(pending):
            waits.append(0.05)  # a queued strategy starts soon; look again then
        return max(0.001, min(waits)) if waits else 0.05

    def _collect(
        self, name: str, strategy: ContextStrategy, future: Future[Any]
    ) -> list[ContextFragment] | None:
        """The strategy's fragments, tagged with its name; ``None`` when it failed."""
        try:
            result = future.result()
        except Exception as exc:
            log.warning("strategy failed", strategy=name, error=f"{type(exc).__name__}: {exc}")
            note(f"strategy {name} failed: {type(exc).__name__}: {exc}")
            return None
        if not isinstance(result, (list, tuple)) or not all(
            isinstance(item, ContextFragment) for item in result
        ):
            kind = type(result).__name__
            if isinstance(result, (list, tuple)):
                kind = f"{kind} holding non-fragments"
            note(f"strategy {name} returned {kind}, not a list of fragments; ignored")
            return None
        quality = f"{quality_of(strategy):.4g}"
        return [_tagged(fragment, name, quality) for fragment in result]


def _tagged(fragment: ContextFragment, name: str, quality: str) -> ContextFragment:
    """The fragment with its producing strategy and that strategy's quality recorded."""
    update: dict[str, Any] = {}
    if not fragment.provenance.strategy:
        update["provenance"] = fragment.provenance.model_copy(update={"strategy": name})
    if "strategy_quality" not in fragment.metadata and len(fragment.metadata) < 64:
        update["metadata"] = {**fragment.metadata, "strategy_quality": quality}
    return fragment.model_copy(update=update) if update else fragment
