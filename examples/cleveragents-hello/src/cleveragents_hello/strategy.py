"""``hello-keyword``: full-text search for the request's words, packed into the budget.

A real (if tiny) ContextStrategy: it asks the text backend, keeps the
resource scope the pipeline hands it, and never returns more tokens than its
budget. Without a text backend it declines (confidence 0.0) and returns
nothing, which is how a strategy degrades when a plugin is missing.
"""

from __future__ import annotations

from typing import Any

from cleveragents.models.context import (
    ContextFragment,
    ContextRequest,
    FragmentProvenance,
    StrategyCapabilities,
)
from cleveragents.protocols.backends import BackendSet

__all__ = ["HelloKeywordStrategy", "estimate_tokens"]


def estimate_tokens(text: str) -> int:
    """About four characters per token, rounded up: cheap and never zero for text."""
    return -(-len(text) // 4)


class HelloKeywordStrategy:
    """Keyword retrieval through whatever text backend is installed."""

    name = "hello-keyword"
    capabilities = StrategyCapabilities(uses_text=True, quality_score=0.2)
    #: How many search hits to consider before packing.
    max_results = 20

    def _query(self, request: ContextRequest) -> str:
        return " ".join([request.query or "", *request.entities]).strip()

    def can_handle(self, request: ContextRequest, backends: BackendSet) -> float:
        if backends.text is None or not self._query(request):
            return 0.0
        return 0.25

    def assemble(
        self,
        request: ContextRequest,
        backends: BackendSet,
        budget: int,
        plan_context: Any,
    ) -> list[ContextFragment]:
        query = self._query(request)
        if backends.text is None or not query or budget <= 0:
            return []
        hits = backends.text.search(query, scope=backends.scope, max_results=self.max_results)
        fragments: list[ContextFragment] = []
        used = 0
        for hit in hits:
            resource_id = hit.metadata.get("resource_id", "")
            tokens = estimate_tokens(hit.content)
            if not resource_id or resource_id not in backends.scope or used + tokens > budget:
                continue
            fragments.append(
                ContextFragment(
                    uko_node=hit.uko_uri,
                    content=hit.content,
                    detail_depth=9,
                    token_count=tokens,
                    relevance_score=min(1.0, max(0.0, hit.score)),
                    provenance=FragmentProvenance(
                        resource_id=resource_id,
                        path=hit.metadata.get("path") or hit.uko_uri,
                        strategy=self.name,
                    ),
                )
            )
            used += tokens
        return fragments
