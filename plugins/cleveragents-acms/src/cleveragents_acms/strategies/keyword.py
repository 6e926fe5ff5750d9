"""Strategy ``simple-keyword``: identifier-aware full-text search, the universal fallback.

The question is reduced to what can be searched for (:mod:`.query`): names,
dotted names, file names, error names, the words of messages and the salient
prose words, without stop words and issue boilerplate. The text backend's
best hits become fragments: the best few callables in full, other nodes as
signatures, unless the request names a depth. Quality 0.3 (spec 001).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from cleveragents.models.context import ContextFragment, ContextRequest, StrategyCapabilities
from cleveragents_acms.strategies._support import (
    Hit,
    defers,
    fill_in_rank_order,
    query_of,
    safe_search,
)
from cleveragents_acms.strategies.query import MAX_QUERY_WORDS, QueryAnalysis, analyze

if TYPE_CHECKING:
    from cleveragents.protocols.backends import BackendSet

__all__ = ["SimpleKeywordStrategy", "keyword_query"]

#: Imports, attributes and variables match names well but explain little: weighed down.
_MINOR_TYPES = frozenset({"Import", "Export", "ReExport", "Attribute", "Variable"})
_MINOR_WEIGHT = 0.5


def _is_minor(uko_type: str) -> bool:
    return uko_type.rsplit(":", 1)[-1] in _MINOR_TYPES


def keyword_query(analysis: QueryAnalysis) -> str:
    """One query of at most 28 words: names first, then error names, messages and prose."""
    words: list[str] = []
    words.extend(analysis.top_identifiers(10))
    for path in analysis.paths[:3]:
        words.append(path.rsplit("/", 1)[-1].rsplit(".", 1)[0])
    words.extend(analysis.errors[:2])
    for message in analysis.messages[:1]:
        words.extend(message.split()[:6])
    words.extend(analysis.top_keywords(14))
    unique = list(dict.fromkeys(w for w in words if w))
    return " ".join(unique[:MAX_QUERY_WORDS])


@defers
class SimpleKeywordStrategy:
    """Full-text search over the indexed nodes (spec 000, "simple-keyword")."""

    name = "simple-keyword"
    capabilities = StrategyCapabilities(uses_text=True, quality_score=0.3, uko_levels=("uko",))

    def __init__(self, *, max_hits: int = 40) -> None:
        self.max_hits = max_hits

    def can_handle(self, request: ContextRequest, backends: BackendSet) -> float:
        if backends.text is None:
            return 0.0
        analysis = analyze(query_of(request), *request.focus)
        if analysis.is_empty:
            return 0.0
        return 0.7 if analysis.identifiers else 0.5

    def assemble(
        self,
        request: ContextRequest,
        backends: BackendSet,
        budget: int,
        plan_context: object,
    ) -> list[ContextFragment]:
        if budget <= 0 or backends.text is None:
            return []
        analysis = analyze(query_of(request), *request.focus)
        if analysis.is_empty:
            return []
        hits: dict[str, Hit] = {}
        for query in (keyword_query(analysis), analysis.title):
            for hit in safe_search(backends, query, self.max_hits):
                if hit.uri not in hits or hit.score > hits[hit.uri].score:
                    hits[hit.uri] = hit
        for hit in hits.values():
            if _is_minor(hit.uko_type):
                hit.score *= _MINOR_WEIGHT
        ranked = sorted(hits.values(), key=lambda h: -h.score)
        return fill_in_rank_order(request, backends, budget, self.name, ranked)
