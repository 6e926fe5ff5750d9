"""Contracts of the knowledge side: analyzers, vocabularies and detail-level maps."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Protocol, runtime_checkable

if TYPE_CHECKING:
    from cleveragents.models.uko import AnalysisResult

__all__ = ["DetailLevelMapLike", "DetailLevelMapRegistry", "UKOAnalyzer"]


@runtime_checkable
class UKOAnalyzer(Protocol):
    """Turns one file into UKO nodes with renderings at several detail depths.

    ``specificity`` orders competing analyzers: the most specific analyzer that
    ``supports`` a file wins (a Python analyzer beats the generic text one).
    An analyzer may also declare an integer ``revision``, raised when what it finds
    in the same file changes within one release: indexes built before then analyse
    its files again.
    """

    name: str
    languages: tuple[str, ...]
    specificity: int

    def supports(self, path: Path, head: bytes) -> bool:
        """True when this analyzer can read ``path``; ``head`` is its first bytes."""
        ...

    def analyze(
        self, path: Path, content: str, *, resource_id: str, relative_path: str
    ) -> AnalysisResult:
        """Nodes (:class:`cleveragents.models.uko.UKONode`) for one file's ``content``.

        Must not raise on bad input: syntax errors go to ``AnalysisResult.errors``.
        """
        ...


@runtime_checkable
class DetailLevelMapLike(Protocol):
    """Named detail levels of one UKO domain, with optional parent map."""

    domain: str
    parent: str | None
    levels: Mapping[str, int]


@runtime_checkable
class DetailLevelMapRegistry(Protocol):
    """Resolves named levels to depths for a UKO type, walking map inheritance."""

    def depth_of(self, level: str | int, domain: str | None = None) -> int: ...

    def levels_for(self, domain: str) -> Mapping[str, int]: ...

    def depths_for(self, domain: str) -> Iterable[int]: ...
