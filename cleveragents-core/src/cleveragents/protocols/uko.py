"""Contracts of the knowledge side: analyzers, vocabularies and detail-level maps."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

__all__ = ["AnalysisResult", "DetailLevelMapLike", "DetailLevelMapRegistry", "UKOAnalyzer"]


@runtime_checkable
class AnalysisResult(Protocol):
    """What an analyzer returns for one file: UKO nodes, triples and errors."""

    nodes: list[Any]
    triples: list[tuple[str, str, str]]
    errors: list[str]


@runtime_checkable
class UKOAnalyzer(Protocol):
    """Turns one file into UKO nodes with renderings at several detail depths.

    ``specificity`` orders competing analyzers: the most specific analyzer that
    ``supports`` a file wins (a Python analyzer beats the generic text one).
    """

    name: str
    languages: tuple[str, ...]
    specificity: int

    def supports(self, path: Path, head: bytes) -> bool:
        """True when this analyzer can read ``path``; ``head`` is its first bytes."""
        ...

    def analyze(
        self, path: Path, content: str, *, resource_ulid: str, relative_path: str
    ) -> AnalysisResult: ...


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
