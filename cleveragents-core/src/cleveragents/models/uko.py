"""UKO nodes as analyzers produce them: the currency between analyzers and indexers.

A repository of 10k files yields hundreds of thousands of nodes, so these are
slotted dataclasses, not pydantic models. They live in core because analyzers
from any plugin produce them and any indexer consumes them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from urllib.parse import quote

__all__ = [
    "DEPTH_FULL",
    "DEPTH_MEMBERS",
    "DEPTH_NAME",
    "DEPTH_OUTLINE",
    "DEPTH_SIGNATURES",
    "AnalysisResult",
    "UKONode",
    "node_uri",
]

#: The depths analyzers render (spec 001 "Detail depths"; DetailLevelMaps name them).
DEPTH_NAME, DEPTH_MEMBERS, DEPTH_SIGNATURES, DEPTH_OUTLINE, DEPTH_FULL = 0, 2, 4, 6, 9

_BASE = "https://cleveragents.ai/r/"


def node_uri(resource_id: str, path: str, qualname: str = "") -> str:
    """Stable URI of a node: resource ULID, file path and qualified name.

    The same symbol in the same file keeps its URI across re-indexing, which is
    what lets revisions link to their predecessors.
    """
    uri = f"{_BASE}{resource_id}/{quote(path, safe='/')}"
    return f"{uri}#{quote(qualname, safe='.')}" if qualname else uri


@dataclass(slots=True)
class UKONode:
    """One information unit: a module, class, function, section, paragraph …"""

    uri: str
    #: CURIE of its most specific UKO class, e.g. ``uko-py:Function``.
    uko_type: str
    name: str
    #: Path relative to the resource root, with forward slashes.
    path: str
    #: 1-based inclusive line range in the source file.
    start_line: int
    end_line: int
    resource_id: str
    parent: str | None = None
    qualname: str = ""
    language: str = ""
    #: depth -> rendered text; analyzers fill the depths their domain defines.
    renderings: dict[int, str] = field(default_factory=dict)
    #: (predicate CURIE, target) where target is a node URI or ``symbol:dotted.name``
    #: to be resolved by the indexer (imports, base classes, calls).
    edges: list[tuple[str, str]] = field(default_factory=list)
    #: Extra literal properties (``docstring``, ``signature``, ``decorators`` …).
    properties: dict[str, str] = field(default_factory=dict)

    def rendering(self, depth: int) -> str:
        """The richest rendering at or below ``depth`` (depth fallback)."""
        for d in sorted(self.renderings, reverse=True):
            if d <= depth:
                return self.renderings[d]
        return self.name


@dataclass(slots=True)
class AnalysisResult:
    """What an analyzer returns for one file: its nodes, extra triples and errors.

    An analyzer that meets a syntax error indexes what it can and records the
    error here instead of raising.
    """

    nodes: list[UKONode] = field(default_factory=list)
    triples: list[tuple[str, str, str]] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
