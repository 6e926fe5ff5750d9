"""Strategy ``semantic-embedding``: the question's embedding against the vector backend.

Needs a vector backend and the embedder that filled it. Which embedder is a
matter of the running installation (``index.embedding.provider``; ``auto`` =
the registered embedder with the highest ``preference``), and a strategy is
built without arguments by the registry, so the embedder is found by
:func:`_embedder`, in this order:

1. the strategy's own ``embedder`` attribute (``SemanticEmbeddingStrategy(embedder=…)``);
2. the embedder the vector backend was built with (``backends.vector.embedder``, set by
   the context service for each assembly);
3. the provider installed with :func:`set_embedder_provider` (a callable
   returning the embedder, for hosts that pass bare vector backends; the
   installation's choice is
   :func:`cleveragents_acms.indexing.vectors.choose_embedder`).

Without an embedder the strategy declines (``can_handle`` 0). Quality 0.6.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from cleveragents.errors import CleverAgentsError
from cleveragents.models.context import ContextFragment, ContextRequest, StrategyCapabilities
from cleveragents_acms.strategies._support import (
    Hit,
    defers,
    fill_in_rank_order,
    hit_from_result,
    log,
    query_of,
)
from cleveragents_acms.strategies.query import analyze

if TYPE_CHECKING:
    from cleveragents.protocols.backends import BackendSet
    from cleveragents.protocols.text import Embedder

__all__ = [
    "SemanticEmbeddingStrategy",
    "embed_query",
    "embedding_text",
    "is_lexical",
    "set_embedder_provider",
]

EmbedderProvider = Callable[[], "Embedder | None"]

_provider: list[EmbedderProvider] = []
_lock = threading.Lock()


def set_embedder_provider(provider: EmbedderProvider | None) -> None:
    """Install (or with ``None`` remove) the process-wide embedder lookup."""
    with _lock:
        _provider.clear()
        if provider is not None:
            _provider.append(provider)


def _embedder(strategy: object, backends: BackendSet | None = None) -> Embedder | None:
    """The embedder the strategy uses (see the module docstring for the lookup order)."""
    own = getattr(strategy, "embedder", None)
    if own is not None:
        return own  # type: ignore[no-any-return]
    paired = getattr(backends.vector, "embedder", None) if backends is not None else None
    if paired is not None:
        return paired  # type: ignore[no-any-return]
    with _lock:
        provider = _provider[0] if _provider else None
    if provider is None:
        return None
    try:
        return provider()
    except Exception as exc:  # a broken provider must not break assembly
        log.warning("embedder provider failed", error=f"{type(exc).__name__}: {exc}")
        return None


def is_lexical(embedder: object) -> bool:
    """True for embedders that only measure word overlap (``lexical = True``; ``hashing-*``)."""
    declared = getattr(embedder, "lexical", None)
    if declared is not None:
        return bool(declared)
    return str(getattr(embedder, "name", "")).startswith("hashing")


def embedding_text(request: ContextRequest, limit: int = 2000) -> str:
    """What to embed for a request: title, names and salient words before the prose."""
    text = query_of(request)
    analysis = analyze(text, *request.focus)
    head = " ".join(
        [analysis.title, *analysis.top_identifiers(12), *analysis.top_keywords(20)]
    ).strip()
    return f"{head}\n{text}"[:limit] if head else text[:limit]


def embed_query(embedder: Any, text: str) -> list[float] | None:
    """The embedding of ``text`` (``None`` when the embedder fails)."""
    try:
        vectors = embedder.embed([text])
    except Exception as exc:
        log.warning("embedding the query failed", error=f"{type(exc).__name__}: {exc}")
        return None
    if not vectors:
        return None
    return [float(x) for x in vectors[0]]


def vector_hits(backends: BackendSet, embedding: list[float], top_k: int) -> list[Hit]:
    """Vector hits (none when the backend refuses the query, e.g. a dimension mismatch)."""
    if backends.vector is None:
        return []
    try:
        results = backends.vector.similarity_search(embedding, scope=backends.scope, top_k=top_k)
    except (CleverAgentsError, ValueError, TypeError) as exc:
        log.warning("vector search failed", error=f"{type(exc).__name__}: {exc}")
        return []
    return [hit_from_result(r) for r in results]


@defers
class SemanticEmbeddingStrategy:
    """Nearest nodes to the question's embedding (spec 000, "semantic-embedding")."""

    name = "semantic-embedding"
    capabilities = StrategyCapabilities(uses_vector=True, quality_score=0.6, uko_levels=("uko",))

    def __init__(self, *, embedder: Embedder | None = None, top_k: int = 40) -> None:
        self.embedder = embedder
        self.top_k = top_k

    def can_handle(self, request: ContextRequest, backends: BackendSet) -> float:
        if backends.vector is None or not query_of(request).strip():
            return 0.0
        embedder = _embedder(self, backends)
        if embedder is None:
            return 0.0
        # a lexical embedder finds what the text search finds: less to add
        return 0.3 if is_lexical(embedder) else 0.6

    def assemble(
        self,
        request: ContextRequest,
        backends: BackendSet,
        budget: int,
        plan_context: object,
    ) -> list[ContextFragment]:
        if budget <= 0 or backends.vector is None or not query_of(request).strip():
            return []
        embedder = _embedder(self, backends)
        if embedder is None:
            return []
        embedding = embed_query(embedder, embedding_text(request))
        if embedding is None:
            return []
        hits = vector_hits(backends, embedding, self.top_k)
        return fill_in_rank_order(request, backends, budget, self.name, hits)
