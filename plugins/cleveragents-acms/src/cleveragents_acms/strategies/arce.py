"""Strategy ``arce``: Analyze, Retrieve, Contextualize, Execute (spec 000, quality 0.95).

**Analyze.** The question is split into evidence (:mod:`.query`): names,
dotted names, paths and traceback frames, error names and messages, code in
backticks and fences, salient prose. Each kind becomes a short focused text
query; paths, modules, frames and focus items are resolved to nodes; the
names are looked up as definitions in the graph.

**Retrieve.** The focused queries, the whole question as BM25 (its words in
a few backend-sized chunks whose raw scores add up), the vector search (when
a vector backend and an embedder are present) and the graph neighbourhood of
the best nodes (ranked by PageRank personalised to them and to the named
nodes) are fused by weighted reciprocal-rank fusion with the spec's weights
text 0.4 / vector 0.4 / graph 0.2, renormalised over the channels present;
a lexical embedder's vector channel counts a quarter, as it mostly repeats
the text channel (:mod:`._evidence`). Up to ``context.strategies.arce.max-rounds`` rounds
refine the result: names in the signatures and docstrings of the best nodes
that share words with the question become new queries, until the best files
and nodes stop changing.

**Contextualize.** Changes are made in files: node evidence is aggregated per
file and combined with definitions, path words, mentions, quoted messages and
the votes of the likeliest test files for the code they call (:mod:`._tested`);
the likeliest files are then read whole and scored against the whole question
(:meth:`._evidence.Evidence.file_scores`, :mod:`._file_text`).

**Execute.** The budget goes to the parts of the likeliest files that most
likely must change (:mod:`._delivery`): whole small files, the best-matching
functions and methods in full, their classes' outlines; eight files at most,
one more per 2,000 tokens beyond 16,000 (a large budget can afford a glimpse of
further candidates). Asked again within one assembly (the pipeline gives the
leading strategy what the others left unused), the retrieval is reused and
only the delivery runs. Following the spec's
actor-type patterns, a request whose ``purpose`` is strategizing gets
signatures (broader, shallower) instead of full bodies.

The vector channel is used when present, not required: ``capabilities``
declares text and graph, so the selector's fallback path applies when either
is missing. Without a node source the fused hits are delivered as the
backends returned them.
"""

from __future__ import annotations

import re
from collections import Counter
from typing import TYPE_CHECKING, Any

from cleveragents import assembly
from cleveragents.models.context import ContextFragment, ContextRequest, StrategyCapabilities
from cleveragents.models.uko import DEPTH_FULL
from cleveragents_acms.pipeline._common import note
from cleveragents_acms.strategies._delivery import Delivery
from cleveragents_acms.strategies._evidence import LEXICAL_TRUST, Evidence, gather, search
from cleveragents_acms.strategies._file_text import read_likeliest
from cleveragents_acms.strategies._graph import GraphView
from cleveragents_acms.strategies._support import (
    BudgetFiller,
    defers,
    depths_from,
    file_of,
    query_of,
    requested_depth,
    strategy_setting,
)
from cleveragents_acms.strategies._tested import tested_code
from cleveragents_acms.strategies.navigator import expand_neighbourhood
from cleveragents_acms.strategies.query import TextQuery, analyze, parts_of
from cleveragents_acms.strategies.ranking import normalise, personalized_pagerank
from cleveragents_acms.strategies.semantic import (
    _embedder,
    embed_query,
    embedding_text,
    is_lexical,
    vector_hits,
)

if TYPE_CHECKING:
    from cleveragents.protocols.backends import BackendSet
    from cleveragents_acms.strategies.query import QueryAnalysis

__all__ = ["ArceStrategy"]

_GRAPH_SEEDS = 10
_VECTOR_HITS = 80
_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


@defers
class ArceStrategy:
    """Multi-modal, file-aware retrieval with fusion and refinement (spec 000, "arce")."""

    name = "arce"
    capabilities = StrategyCapabilities(
        uses_text=True,
        uses_graph=True,
        quality_score=0.95,
        supports_depth_breadth=True,
        uko_levels=("uko", "uko-code", "uko-oo", "uko-py"),
    )

    def __init__(
        self,
        *,
        max_rounds: int | None = None,
        hits_per_query: int = 25,
        top_files: int = 8,
        embedder: Any = None,
    ) -> None:
        self.max_rounds = max_rounds
        self.hits_per_query = hits_per_query
        self.top_files = top_files
        #: Embedder for the vector channel (else the lookup of :mod:`.semantic`).
        self.embedder = embedder

    # -- ContextStrategy -----------------------------------------------------------------

    def can_handle(self, request: ContextRequest, backends: BackendSet) -> float:
        if backends.text is None or backends.graph is None:
            return 0.0
        analysis = analyze(query_of(request), *request.focus)
        if analysis.is_empty and not request.focus:
            return 0.0
        return 0.9 if backends.vector is not None else 0.85

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
        if analysis.is_empty and not request.focus:
            return []
        view = GraphView(backends.graph, backends.scope) if backends.graph is not None else None
        evidence = self._evidence(request, backends, view, analysis)
        if not evidence.fused:
            return []
        if evidence.vector_trust < 1.0 and not evidence.found_by_text():
            # A lexical embedder always has nearest neighbours, even for words the code
            # base does not hold: say so, or its look-alikes pass for an answer.
            note(
                "arce: no indexed text holds the question's words; its fragments are only "
                "alike in spelling (the lexical embedder's nearest neighbours)"
            )
        if backends.nodes is None or view is None:
            return self._deliver_hits(request, backends, budget, evidence)
        return Delivery(self.name, request, backends, view, evidence, budget).run(
            max(self.top_files, budget // 2000)
        )

    # -- Analyze + Retrieve ----------------------------------------------------------------

    def _evidence(
        self,
        request: ContextRequest,
        backends: BackendSet,
        view: GraphView | None,
        analysis: QueryAnalysis,
    ) -> Evidence:
        """The request's evidence; asked again in the same assembly (for a larger budget),
        the retrieval already done is reused."""
        services = assembly.current()
        key = (self.name, id(self))
        if services is not None:
            known = services.memo.get(key)
            if known is not None and known[0] is request and known[1] is backends:
                return known[2]
        evidence = Evidence(analysis)
        self._retrieve(request, backends, view, evidence)
        if evidence.fused and backends.nodes is not None and view is not None:
            files = evidence.file_scores()
            evidence.tested = tested_code(view, files, is_code=evidence.code_files(files))
            read_likeliest(backends, evidence)
        if services is not None:
            services.memo[key] = (request, backends, evidence)
        return evidence

    def _retrieve(
        self,
        request: ContextRequest,
        backends: BackendSet,
        view: GraphView | None,
        evidence: Evidence,
    ) -> None:
        gather(request, backends, view, evidence, hits_per_query=self.hits_per_query)
        self._vector(request, backends, evidence)
        evidence.fuse()
        rounds = max(1, int(strategy_setting(self.name, "max-rounds", self.max_rounds) or 1))
        previous: tuple[frozenset[str], frozenset[str]] | None = None
        for round_number in range(1, rounds + 1):
            if view is not None:
                evidence.graph_list = self._graph_channel(view, evidence)
                evidence.fuse()
            current = _signature(evidence)
            if current == previous or round_number == rounds:
                break
            previous = current
            new_queries = self._refinements(backends, evidence)
            if not new_queries:
                break
            for query in new_queries:
                search(backends, evidence, query, self.hits_per_query)
            evidence.fuse()

    def _vector(self, request: ContextRequest, backends: BackendSet, evidence: Evidence) -> None:
        if backends.vector is None:
            return
        embedder = _embedder(self, backends)
        if embedder is None:
            return
        embedding = embed_query(embedder, embedding_text(request))
        if embedding is None:
            return
        hits = vector_hits(backends, embedding, _VECTOR_HITS)
        for hit in hits:
            evidence.hits.setdefault(hit.uri, hit)
        evidence.vector_list = [h.uri for h in hits]
        evidence.vector_trust = LEXICAL_TRUST if is_lexical(embedder) else 1.0

    def _graph_channel(self, view: GraphView, evidence: Evidence) -> list[str]:
        """The neighbourhood of the best nodes, ranked by PageRank personalised to them."""
        seeds = {uri: evidence.fused[uri] for uri in evidence.top(_GRAPH_SEEDS)}
        if not seeds:
            return []
        hood = expand_neighbourhood(view, seeds, 1, beam=80, max_nodes=400)
        personal = dict(seeds)
        best = max(seeds.values())
        for uri, weight in normalise(evidence.definitions).items():
            if uri in hood.distance:
                personal[uri] = personal.get(uri, 0.0) + best * 0.5 * weight
        rank = personalized_pagerank(hood.edges, personal)
        return sorted(rank, key=lambda u: (-rank[u], u))[:60]

    def _refinements(self, backends: BackendSet, evidence: Evidence) -> list[TextQuery]:
        """Names in the best nodes' signatures and docstrings that share words with the question."""
        top = evidence.top(5)
        if backends.nodes is None or not top:
            return []
        question = {p for name in evidence.analysis.names() for p in parts_of(name)}
        question |= set(evidence.analysis.keywords)
        counts: Counter[str] = Counter()
        for node in backends.nodes.nodes(top).values():
            text = " ".join(
                [node.properties.get("signature", ""), node.properties.get("docstring", "")]
            )
            for word in dict.fromkeys(_WORD.findall(text)):  # in order: ties stay stable
                parts = parts_of(word)
                if (
                    len(word) > 3
                    and len(parts) > 1
                    and word.lower() not in evidence.queried
                    and question.intersection(parts)
                ):
                    counts[word] += 1
        return [TextQuery("refinement", word, 0.4) for word, _ in counts.most_common(3)]

    # -- delivery without a node source ---------------------------------------------------

    def _deliver_hits(
        self, request: ContextRequest, backends: BackendSet, budget: int, evidence: Evidence
    ) -> list[ContextFragment]:
        scores = normalise(evidence.fused)
        filler = BudgetFiller(backends, budget, self.name)
        for uri in evidence.top(len(scores)):
            hit = evidence.hits.get(uri)
            if hit is None or filler.remaining <= 0:
                continue
            depth = requested_depth(request, hit.uko_type) or DEPTH_FULL
            filler.offer(uri, depths_from(depth), scores[uri], hit=hit)
        return filler.fragments


def _signature(evidence: Evidence) -> tuple[frozenset[str], frozenset[str]]:
    """What "the result stabilised" compares: the best five files and ten nodes."""
    top = evidence.top(40)
    files = list(dict.fromkeys(file_of(u) for u in top))[:5]
    return frozenset(files), frozenset(top[:10])
