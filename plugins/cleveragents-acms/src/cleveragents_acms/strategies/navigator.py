"""Strategy ``breadth-depth-navigator``: from focus nodes outwards through the UKO graph.

1. **Focus.** The request's focus items (URIs, paths, ``path:line``, names;
   see :mod:`._anchors`); without any, the best nodes of the likeliest files
   by the question's text evidence (:func:`._evidence.gather`), or, without a
   text backend, the nodes its names denote and the files it mentions.
2. **Breadth.** ``request.breadth`` hops (at most
   ``context.strategies.breadth-depth-navigator.max-hops``) over ``dependsOn``,
   ``contains``, ``references``, ``inheritsFrom``, ``implements``, ``testsCallable`` links in
   both directions. Each hop expands only its ``beam`` best-connected new
   nodes, so a hub (a base class every model inherits) cannot flood the
   neighbourhood; the whole neighbourhood is capped at ``max_nodes``.
3. **Rank.** Personalised PageRank over that local subgraph, the random walk
   jumping back to the focus nodes and to nodes whose names the question
   mentions, as aider's repository map ranks files for a chat. Links followed
   against their direction count half.
4. **Depth gradient.** Focus nodes at the requested depth (default: full
   source), each hop one rung shallower on 9 -> 6 -> 4 -> 2 -> 0; a node that
   does not fit the budget falls further down the ladder. A node inside one
   already delivered in full is not repeated.

Everything is computed per call (strategies are shared between assemblies),
so the caches live exactly as long as one assembly. Quality 0.85.
"""

from __future__ import annotations

from collections import defaultdict
from typing import TYPE_CHECKING

from cleveragents.models.context import ContextFragment, ContextRequest, StrategyCapabilities
from cleveragents.models.uko import DEPTH_FULL
from cleveragents_acms.strategies._anchors import module_paths, resolve_focus, resolve_paths
from cleveragents_acms.strategies._evidence import Evidence, gather
from cleveragents_acms.strategies._file_text import read_likeliest
from cleveragents_acms.strategies._graph import DEPENDS_ON, GRAPH_EDGES, GraphView
from cleveragents_acms.strategies._support import (
    BudgetFiller,
    Hit,
    defers,
    depths_from,
    file_of,
    query_of,
    requested_depth,
    shallower,
    strategy_setting,
)
from cleveragents_acms.strategies.query import QueryAnalysis, analyze
from cleveragents_acms.strategies.ranking import normalise, personalized_pagerank

if TYPE_CHECKING:
    from cleveragents.protocols.backends import BackendSet

__all__ = ["BreadthDepthNavigatorStrategy", "Neighbourhood", "expand_neighbourhood"]

#: Links followed against their direction weigh this much of the forward link.
_REVERSE = 0.5
#: Below this many tokens left, stop trying to add fragments.
_MIN_ROOM = 10


class Neighbourhood:
    """The local subgraph around some seed nodes: hop distances and weighted links."""

    def __init__(self) -> None:
        self.distance: dict[str, int] = {}
        self.edges: dict[str, dict[str, float]] = defaultdict(dict)
        self.depends_on: dict[str, set[str]] = defaultdict(set)

    def link(self, source: str, target: str, weight: float) -> None:
        if source != target:
            self.edges[source][target] = self.edges[source].get(target, 0.0) + weight


def expand_neighbourhood(
    view: GraphView,
    seeds: dict[str, float],
    hops: int,
    *,
    beam: int = 60,
    max_nodes: int = 1500,
) -> Neighbourhood:
    """Breadth-first expansion of ``seeds`` over the UKO links, ``beam`` nodes per hop."""
    hood = Neighbourhood()
    for seed in seeds:
        hood.distance[seed] = 0
    frontier = list(seeds)
    for hop in range(1, hops + 1):
        if not frontier or len(hood.distance) >= max_nodes:
            break
        links = view.neighbours(frontier)
        support: dict[str, float] = defaultdict(float)
        for source, found in links.items():
            for predicate, other, outgoing in found:
                weight = GRAPH_EDGES.get(predicate, 0.3)
                if outgoing:
                    hood.link(source, other, weight)
                    hood.link(other, source, weight * _REVERSE)
                    if predicate == DEPENDS_ON:
                        hood.depends_on[source].add(other)
                else:
                    hood.link(other, source, weight)
                    hood.link(source, other, weight * _REVERSE)
                    if predicate == DEPENDS_ON:
                        hood.depends_on[other].add(source)
                if other not in hood.distance:
                    support[other] += weight
        room = max_nodes - len(hood.distance)
        chosen = sorted(support, key=lambda n: (-support[n], n))[: min(beam, room)]
        for node in chosen:
            hood.distance[node] = hop
        frontier = chosen
    # links among known nodes only: the rest were never admitted
    for source in list(hood.edges):
        if source not in hood.distance:
            del hood.edges[source]
            continue
        hood.edges[source] = {t: w for t, w in hood.edges[source].items() if t in hood.distance}
    return hood


def _simple_name(uri: str) -> str:
    """The name a node URI ends in: ``…/m.py#Cls.meth`` -> ``meth``, ``…/pkg/m.py`` -> ``m``."""
    if "#" in uri:
        return uri.rsplit("#", 1)[1].rsplit(".", 1)[-1]
    name = uri.rsplit("/", 1)[-1]
    return name.rsplit(".", 1)[0]


def _inside(uri: str, container: str) -> bool:
    """True when ``uri`` is ``container`` or lies within it (by file and qualified name)."""
    if uri == container:
        return True
    if "#" not in container:
        return file_of(uri) == container
    return uri.startswith(container + ".") and file_of(uri) == file_of(container)


def query_seeds(
    request: ContextRequest,
    analysis: QueryAnalysis,
    view: GraphView,
    backends: BackendSet,
    *,
    limit: int = 8,
    hits: dict[str, Hit] | None = None,
) -> dict[str, float]:
    """Seed nodes for a question without focus.

    With a text backend: the best nodes of the likeliest files by the same
    text and graph evidence arce gathers (focused queries, the whole question,
    mentions, definitions, the likeliest files read whole; see :mod:`._evidence`).
    Without one: the nodes the question's names and words denote, and the
    files it mentions. Hits are recorded in ``hits`` (to render them without a
    node source).
    """
    if backends.text is not None:
        evidence = gather(request, backends, view, Evidence(analysis), max_queries=4)
        read_likeliest(backends, evidence)
        if hits is not None:
            hits.update(evidence.hits)
        return _best_of_best_files(evidence, limit)
    seeds: dict[str, float] = {}

    def add(uri: str, weight: float) -> None:
        seeds[uri] = max(seeds.get(uri, 0.0), weight)

    names = analysis.top_identifiers(6)
    simple = {n.rsplit(".", 1)[-1] for n in names}
    words = [w for w in analysis.top_keywords(4) if w not in simple]
    found = view.by_name([*names, *sorted(simple), *words], limit=8)
    for name, matches in found.items():
        # an exact qualified name is strong evidence, a bare name less, a prose word little
        weight = 1.0 if name in names else 0.6 if name in simple else 0.3
        for uri in matches:
            add(uri, weight / max(1, len(matches)) ** 0.5)
    mentioned = list(analysis.paths[:6])
    for module in analysis.modules[:3]:
        mentioned.extend(module_paths(module)[:2])
    for files in resolve_paths(mentioned, view, backends, search=False).values():
        for uri in files[:1]:
            add(uri, 0.9)
    ranked = sorted(seeds, key=lambda u: -seeds[u])[: limit * 2]
    return {uri: seeds[uri] for uri in ranked}


def _best_of_best_files(evidence: Evidence, limit: int, files: int = 3) -> dict[str, float]:
    """The best nodes of the best files, weighted by both (the best seed 1.0)."""
    file_scores = normalise(evidence.file_scores())
    top_files = sorted(file_scores, key=lambda f: -file_scores[f])[:files]
    fused = normalise(evidence.fused)
    seeds: dict[str, float] = {}
    per_file = max(1, limit // max(1, len(top_files)))
    for file_uri in top_files:
        members = sorted((u for u in fused if file_of(u) == file_uri), key=lambda u: -fused[u])[
            :per_file
        ]
        for uri in members:
            seeds[uri] = file_scores[file_uri] * (0.5 + 0.5 * fused[uri])
    return normalise(seeds)


@defers
class BreadthDepthNavigatorStrategy:
    """Graph traversal from focus nodes with a depth gradient (spec 000, the primary strategy)."""

    name = "breadth-depth-navigator"
    capabilities = StrategyCapabilities(
        uses_graph=True,
        quality_score=0.85,
        supports_depth_breadth=True,
        uko_levels=("uko", "uko-code"),
    )

    def __init__(
        self,
        *,
        max_hops: int | None = None,
        beam: int = 60,
        max_nodes: int = 1500,
        seeds: int = 8,
    ) -> None:
        self.max_hops = max_hops
        self.beam = beam
        self.max_nodes = max_nodes
        self.seeds = seeds

    def can_handle(self, request: ContextRequest, backends: BackendSet) -> float:
        if backends.graph is None:
            return 0.0
        if request.focus:
            return 0.9
        analysis = analyze(query_of(request))
        if analysis.is_empty:
            return 0.0
        if backends.text is not None:
            return 0.6
        return 0.4 if analysis.identifiers or analysis.paths else 0.3

    def assemble(
        self,
        request: ContextRequest,
        backends: BackendSet,
        budget: int,
        plan_context: object,
    ) -> list[ContextFragment]:
        if budget <= 0 or backends.graph is None:
            return []
        view = GraphView(backends.graph, backends.scope)
        analysis = analyze(query_of(request))
        seeds = resolve_focus(request.focus, view, backends) if request.focus else {}
        hits: dict[str, Hit] = {}
        if not seeds and not analysis.is_empty:
            seeds = query_seeds(request, analysis, view, backends, limit=self.seeds, hits=hits)
        if not seeds:
            return []
        hops = min(
            int(request.breadth), int(strategy_setting(self.name, "max-hops", self.max_hops))
        )
        hood = expand_neighbourhood(
            view, seeds, max(0, hops), beam=self.beam, max_nodes=self.max_nodes
        )
        personal = dict(seeds)
        mentioned = {n.lower() for n in analysis.names()}
        if mentioned:
            for uri in hood.distance:
                if _simple_name(uri).lower() in mentioned:
                    personal[uri] = personal.get(uri, 0.0) + 0.5
        # the walk's rank, below what the seeds themselves are worth: a focus stays first
        rank = {
            u: 0.9 * r for u, r in normalise(personalized_pagerank(hood.edges, personal)).items()
        }
        for seed, weight in seeds.items():
            rank[seed] = max(rank.get(seed, 0.0), min(1.0, weight))
        ordered = sorted(hood.distance, key=lambda u: (-rank.get(u, 0.0), hood.distance[u], u))
        return self._fill(request, backends, budget, ordered, rank, hood, hits)

    def _fill(
        self,
        request: ContextRequest,
        backends: BackendSet,
        budget: int,
        ordered: list[str],
        rank: dict[str, float],
        hood: Neighbourhood,
        hits: dict[str, Hit],
    ) -> list[ContextFragment]:
        filler = BudgetFiller(backends, budget, self.name)
        named = "depth" in request.model_fields_set and isinstance(request.depth, str)
        types = _types(backends, ordered[:400]) if named else {}
        full: list[str] = []
        for uri in ordered:
            if filler.remaining < _MIN_ROOM:
                break
            if any(_inside(uri, container) for container in full):
                continue
            hop = hood.distance[uri]
            base = requested_depth(request, types.get(uri))
            if base is None:
                base = DEPTH_FULL
            depth = shallower(base, hop) if request.depth_gradient else base
            metadata = {"focus_distance": str(hop)}
            added = filler.offer(
                uri, depths_from(depth), rank.get(uri, 0.0), hit=hits.get(uri), metadata=metadata
            )
            if added is not None and added.detail_depth >= DEPTH_FULL:
                full.append(uri)
        delivered = {f.uko_node for f in filler.fragments}
        out: list[ContextFragment] = []
        for fragment in filler.fragments:
            needs = sorted(hood.depends_on.get(fragment.uko_node, set()) & delivered)
            if needs:
                metadata = {**fragment.metadata, "depends_on": " ".join(needs[:20])}
                fragment = fragment.model_copy(update={"metadata": metadata})
            out.append(fragment)
        return out


def _types(backends: BackendSet, uris: list[str]) -> dict[str, str]:
    """``uri -> uko_type`` of nodes the node source knows (for named depth levels)."""
    if backends.nodes is None or not uris:
        return {}
    try:
        return {uri: node.uko_type for uri, node in backends.nodes.nodes(uris).items()}
    except (ValueError, KeyError):
        return {}
