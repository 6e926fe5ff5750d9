"""What a pipeline stage may need beyond its Protocol arguments, for the assembly in progress.

The ten stage Protocols keep the spec's signatures. Some stages also need
services of the running assembly: the tokenizer that counts the budget, a
renderer that re-renders a fragment at a shallower depth (depth fallback), the
configuration of the scope in effect. The pipeline publishes them here for the
duration of one assembly; a stage reads :func:`current` (``None`` outside an
assembly, so stages stay usable on their own with sensible defaults).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

if TYPE_CHECKING:
    from cleveragents.models.context import ContextFragment, DroppedFragment
    from cleveragents.protocols.text import Tokenizer

__all__ = ["AssemblyServices", "FragmentRenderer", "current", "use"]


@runtime_checkable
class FragmentRenderer(Protocol):
    """Re-renders a fragment's UKO node at another depth, with its token count."""

    def render(self, fragment: ContextFragment, depth: int) -> ContextFragment | None:
        """The node at ``depth`` (``None`` if it has no rendering there)."""
        ...


@dataclass(frozen=True)
class AssemblyServices:
    """Services of one assembly; stages must not keep references after it ends."""

    tokenizer: Tokenizer | None = None
    renderer: FragmentRenderer | None = None
    #: Settings of each stage, already resolved through the scope chain
    #: (``settings["budget-packer"]["min-fragment-tokens"]``).
    settings: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    #: Notes stages add for the preamble and ``context inspect`` (fallbacks, errors).
    notes: list[str] = field(default_factory=list)
    #: Fragments the budget packer left out or re-rendered shallower, for ``dropped``.
    dropped: list[DroppedFragment] = field(default_factory=list)
    #: Nodes each strategy wanted but could not fit in its share of the budget (at the
    #: depth recorded), by strategy name, best first (:meth:`leave_out`). Strategies fill
    #: their share themselves, so the packer rarely has anything to drop: these are what
    #: the budget left out. The pipeline lists in ``dropped`` the ones the final context
    #: does not hold at that depth, strategy by strategy in the order they were ranked.
    left_out: dict[str, list[DroppedFragment]] = field(default_factory=dict)
    #: What a stage worked out that a later call in the same assembly may reuse (a
    #: strategy asked again for a larger budget keeps its retrieval), by the stage's key.
    memo: dict[Any, Any] = field(default_factory=dict)

    def setting(self, stage: str, key: str, default: Any) -> Any:
        return self.settings.get(stage, {}).get(key, default)

    def leave_out(self, strategy: str, fragment: DroppedFragment) -> None:
        """Record that ``strategy`` wanted ``fragment`` but could not fit it (thread-safe:
        strategies run in parallel, each appending to its own list)."""
        self.left_out.setdefault(strategy, []).append(fragment)

    def count(self, text: str) -> int:
        """Tokens in ``text`` by the assembly's tokenizer (4 chars/token without one)."""
        if self.tokenizer is None:
            return (len(text) + 3) // 4
        return self.tokenizer.count(text)


_CURRENT: ContextVar[AssemblyServices | None] = ContextVar("cleveragents_assembly", default=None)


def current() -> AssemblyServices | None:
    """The services of the assembly running in this context, if any."""
    return _CURRENT.get()


@contextmanager
def use(services: AssemblyServices) -> Iterator[AssemblyServices]:
    """Publish ``services`` for the duration of one assembly."""
    token = _CURRENT.set(services)
    try:
        yield services
    finally:
        _CURRENT.reset(token)
