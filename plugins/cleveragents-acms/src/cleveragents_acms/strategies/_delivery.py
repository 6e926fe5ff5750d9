"""ARCE's delivery: the parts of the likeliest files that most likely must change, in budget.

Candidates are (file, unit) pairs valued by the file's probability (a softmax
of the file scores, the best file 1.0) times the unit's share of its file's
evidence:

* the whole file, when it is small enough (at most 70 % of the budget for the
  best file, 30 % for the others): it holds every line that may change;
* each function or method in full; one that cannot fit whole only as an
  outline of glimpse size, else as its signature (a function not delivered
  whole holds none of its lines to change, so its outline must not take the
  room of the next function in full; but where the code is, and how it is
  called, is worth a line). Its share combines its fused search score with a local
  lexical score against every term of the question (:class:`LocalScorer`),
  and a callee inherits 0.7 of its caller's share: a function the question
  points at often fails in what it calls; a function a traceback passes
  through ranks near the top of its file, the innermost frame first; an
  overload (a ``typing.overload`` stub, a TypeScript overload signature) is
  worth 0.3 of its share (the implementation holds the code);
* each class as its outline, valued lower, so the shape of the code around
  the delivered methods is there when it is cheap (a tenth of the budget at
  most: a large class's member list is not worth its bodies): its docstring
  and signatures (the docstring documents the parameters and attributes a
  fix often changes), else its signatures alone, else its member names;
* the imports of the two best files (edits often add one), valued lower still,
  a tenth of the budget at most together.

The best function of the second and third files is raised to just below the
best file's best units: the likeliest file is the wrong one almost half the
time, and one function of each runner-up is a cheap hedge.

Units are taken best first while they fit, one unit at most half the budget
times its file's probability: a less likely file's function must be cheaper
to earn its place, so a small budget is not spent on one large function of a
runner-up file. Nothing inside a unit already delivered in full is repeated
(its members, or nodes within its lines: ``self.x = …`` in ``__init__``), nor
a one-line member that a delivered outline of its class already shows, nor a
near copy of a callable delivered in full (nine in ten of its lines the same,
names and ``async``/``await`` aside: httpx's ``Client.get`` and ``Client.options``,
``AsyncClient.send`` beside ``Client.send``): it is listed among what was left
out, with the callable it repeats, and ``context expand`` renders it.
A tenth of the budget is held back until the best units are in, for one
glimpse (the best unit's signature) of each other likely file: where else to
look. Each file's best delivered unit carries the file's belief (the best
file's 1.0), its other units less, and each fragment has the file's rank as
``focus_distance`` (the best file 0, the second 1 …), so files keep their
order through the pipeline's scorer and in the delivered context.
"""

from __future__ import annotations

import math
import re
from collections import Counter, defaultdict
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from cleveragents.models.context import ContextFragment, ContextRequest
from cleveragents.models.uko import DEPTH_FULL, DEPTH_MEMBERS, DEPTH_OUTLINE, DEPTH_SIGNATURES
from cleveragents_acms.pipeline._common import NEAR_COPIES, is_import
from cleveragents_acms.strategies._anchors import path_candidates
from cleveragents_acms.strategies._graph import DEPENDS_ON
from cleveragents_acms.strategies._support import (
    BudgetFiller,
    depths_from,
    file_of,
    is_callable,
    is_container,
    requested_depth,
)
from cleveragents_acms.strategies.query import QueryAnalysis, parts_of
from cleveragents_acms.strategies.ranking import normalise

if TYPE_CHECKING:
    from cleveragents.models.uko import UKONode
    from cleveragents.protocols.backends import BackendSet
    from cleveragents_acms.strategies._evidence import Evidence
    from cleveragents_acms.strategies._graph import GraphView

__all__ = ["Delivery", "LocalScorer"]

#: Share of the budget a whole file may take: the best file, any other.
_WHOLE_FILE_SHARE = (0.7, 0.3)
#: Share of the budget one function may take.
_UNIT_SHARE = 0.5
#: How sharply belief falls from the best file to the next (softmax temperature).
_FILE_SHARPNESS = 4.0
#: A callee's share is at least this much of its caller's.
_CALLEE_SHARE = 0.7
#: All members are scored in this many of the best files (the others: their search hits).
_MEMBER_FILES = 4
#: Calls are followed in this many of the best files.
_CALL_FILES = 3
#: The imports of the best files are worth this much of their file (edits often add one).
_IMPORT_VALUE = 0.3
_IMPORT_FILES = 2
#: Together, imports take at most this share of the budget (a small budget is for code).
_IMPORT_SHARE = 0.1
#: Share of the budget held back for one glimpse (a signature) of each other likely file.
_MAP_SHARE = 0.1
_MAP_TOKENS = 60
#: The most a glimpse (a signature, a function's outline in place of its text) may take.
_GLIMPSE_TOKENS = 2 * _MAP_TOKENS
#: The most a class's outline may take: a large class's member list is not worth its bodies.
_OUTLINE_SHARE = 0.1
#: The likeliest function of the next files comes right after the best file's best ones.
_RUNNER_UP_FILES = 2
_RUNNER_UP_VALUE = 0.9
#: A traceback frame's function has at least this share of its file, less for outer frames.
_FRAME_FLOOR_STEP = 0.1
_FRAME_FLOOR_MIN = 0.6
#: An overload is a signature with no body (``...`` in Python): the implementation it
#: shares its name (and its score) with holds the lines that change.
_OVERLOAD_VALUE = 0.3
#: A callable whose lines (without its name) are this much the same as those of one
#: delivered in full is left out, and named beside that one; shorter callables than
#: :data:`_COPY_MIN_LINES` are not worth the check.
_COPY_SIMILARITY = 0.9
_COPY_MIN_LINES = 6
#: What tells an async twin from its sync original (``async def``, ``await``, ``Async``).
_ASYNC = re.compile(r"\b(?:async|await)\s+|(?<![A-Za-z])Async(?=[A-Z])")
_OVERLOAD = re.compile(r"@(?:\w+\.)*overload\b")
_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_TOKEN = re.compile(r"[a-z0-9]+")


@dataclass
class _Unit:
    uri: str
    file: str
    value: float
    depth: int
    kind: str  # "file" | "node" | "outline"


class Delivery:
    """File-aware delivery of one assembly's evidence within its budget."""

    def __init__(
        self,
        strategy: str,
        request: ContextRequest,
        backends: BackendSet,
        view: GraphView,
        evidence: Evidence,
        budget: int,
    ) -> None:
        self.strategy = strategy
        self.request = request
        self.backends = backends
        self.view = view
        self.evidence = evidence
        self.budget = budget
        self.filler = BudgetFiller(backends, budget, strategy)
        # strategy actors look broader and shallower, executors narrower and deeper (spec 000)
        broad = "strateg" in (request.purpose or "").lower()
        self.callable_depth = DEPTH_SIGNATURES if broad else DEPTH_FULL

    def run(self, top_files: int) -> list[ContextFragment]:
        files = self.evidence.file_scores()
        ranked = sorted(files, key=lambda f: (-files[f], f))[:top_files]
        if not ranked or files[ranked[0]] <= 0:
            return []
        probability = _probabilities(ranked, files)
        # every member of the likeliest files; of the others, what the search found
        members = self._members(ranked[:_MEMBER_FILES])
        for file_uri in ranked[_MEMBER_FILES:]:
            members[file_uri] = [
                u for u in self.evidence.fused if file_of(u) == file_uri and u != file_uri
            ]
        nodes = self.backends.nodes.nodes(  # type: ignore[union-attr]
            [u for f in ranked for u in members[f]] + ranked
        )
        node_scores = normalise(self.evidence.fused)
        local = LocalScorer(self.evidence.analysis, nodes)
        calls = self._calls([u for f in ranked[:_CALL_FILES] for u in members[f]])
        frames = _frame_floors(self.evidence.analysis)
        units: list[_Unit] = []
        for index, file_uri in enumerate(ranked):
            p = probability[file_uri]
            units.append(_Unit(file_uri, file_uri, p, DEPTH_FULL, "file"))
            shares = self._shares(members[file_uri], nodes, node_scores, local, calls, frames)
            units.extend(
                self._unit(nodes[uri], file_uri, p * share) for uri, share in shares.items()
            )
            if index < _IMPORT_FILES:
                units.extend(
                    _Unit(uri, file_uri, p * _IMPORT_VALUE, DEPTH_FULL, "node")
                    for uri in members[file_uri]
                    if uri in nodes and is_import(nodes[uri].uko_type)
                )
        _hedge(units, ranked)
        return self._take(units, ranked, probability, nodes)

    def _unit(self, node: UKONode, file_uri: str, value: float) -> _Unit:
        """A member of a likely file as a unit; ``value`` is its file's belief x its share."""
        depth = requested_depth(self.request, node.uko_type)
        if is_callable(node.uko_type):
            kind, default = "node", self.callable_depth
            if _is_overload(node):
                value *= _OVERLOAD_VALUE
        elif is_container(node.uko_type):
            value, kind, default = value * 0.6, "outline", DEPTH_OUTLINE
        else:
            value, kind, default = value * 0.5, "node", DEPTH_FULL
        return _Unit(node.uri, file_uri, value, depth or default, kind)

    def _calls(self, uris: list[str]) -> dict[str, list[str]]:
        """``caller -> callees`` among ``uris`` (calls within the best files)."""
        known = set(uris)
        links = self.view.neighbours(uris, predicates=(DEPENDS_ON,), incoming=False)
        return {
            caller: [target for _, target, _ in found if target in known and target != caller]
            for caller, found in links.items()
        }

    def _members(self, files: list[str]) -> dict[str, list[str]]:
        """Every node each file contains (three levels: classes, methods, nested)."""
        members: dict[str, list[str]] = {f: [] for f in files}
        owner = {f: f for f in files}
        frontier = list(files)
        for _ in range(3):
            children = self.view.children(frontier)
            frontier = []
            for parent, found in children.items():
                for child in found:
                    if child not in owner:
                        owner[child] = owner[parent]
                        members[owner[parent]].append(child)
                        frontier.append(child)
            if not frontier:
                break
        return members

    @staticmethod
    def _shares(
        members: list[str],
        nodes: Mapping[str, UKONode],
        node_scores: Mapping[str, float],
        local: LocalScorer,
        calls: Mapping[str, list[str]],
        frames: Mapping[str, list[tuple[frozenset[str], float]]],
    ) -> dict[str, float]:
        """Each member's share of its file's evidence (the best member 1.0); imports left out.

        A function a traceback passes through in this file has at least its
        frame's floor (:func:`_frame_floors`). A function the question points
        at often fails in what it calls, so a callee gets at least
        ``_CALLEE_SHARE`` of its best caller's share (two levels down).
        """
        candidates = [u for u in members if u in nodes and not is_import(nodes[u].uko_type)]
        lexical = normalise({u: local.score(nodes[u]) for u in candidates})
        combined = {
            uri: 0.5 * node_scores.get(uri, 0.0) + 0.5 * lexical.get(uri, 0.0) for uri in candidates
        }
        shares = normalise(combined)
        for uri in candidates:
            node = nodes[uri]
            for paths, floor in frames.get(node.name, ()):
                if is_callable(node.uko_type) and node.path in paths:
                    shares[uri] = max(shares[uri], floor)
        for _ in range(2):
            inherited = dict(shares)
            for caller, callees in calls.items():
                passed = shares.get(caller, 0.0) * _CALLEE_SHARE
                for callee in callees:
                    if callee in inherited and inherited[callee] < passed:
                        inherited[callee] = passed
            shares = inherited
        return shares

    def _take(
        self,
        units: list[_Unit],
        ranked: list[str],
        probability: Mapping[str, float],
        nodes: Mapping[str, UKONode],
    ) -> list[ContextFragment]:
        """Units best first; a small reserve keeps one glimpse of every likely file."""
        rank = {f: i for i, f in enumerate(ranked)}
        units.sort(key=lambda u: (-u.value, rank[u.file], u.uri))
        state = _TakeState()
        reserve = min(int(self.budget * _MAP_SHARE), _MAP_TOKENS * (len(ranked) - 1))
        self._pass(units, rank, probability, nodes, state, keep=reserve)
        self._map(units, rank, probability, nodes, state)
        self._pass(units, rank, probability, nodes, state, keep=0)
        for uri, names in state.copies.items():  # the reader learns they exist, and how
            self.filler.annotate(uri, {NEAR_COPIES: ", ".join(names)})
        fragments = self.filler.fragments
        fragments[:] = _ranked_by_file(fragments, state.delivered, probability)
        return fragments

    def _pass(
        self,
        units: list[_Unit],
        rank: Mapping[str, int],
        probability: Mapping[str, float],
        nodes: Mapping[str, UKONode],
        state: _TakeState,
        *,
        keep: int,
    ) -> None:
        filler = self.filler
        for index, unit in enumerate(units):
            room = filler.remaining - keep
            if room < 10:
                if not keep:  # the last pass: the units not reached are what the budget left out
                    for rest in units[index:]:
                        if rest.file not in state.whole and rest.uri not in filler:
                            filler.left_out(rest.uri, rest.depth, node=nodes.get(rest.uri))
                break
            if unit.file in state.whole or unit.uri in filler or unit.uri in state.copied:
                continue
            metadata = {"focus_distance": str(min(4, rank[unit.file]))}
            relevance = _relevance(probability[unit.file], 1.0)  # set once all are in
            node = nodes.get(unit.uri)
            if unit.kind == "file":
                if unit.uri in state.tried_whole:
                    continue
                state.tried_whole.add(unit.uri)
                share = _WHOLE_FILE_SHARE[0 if rank[unit.file] == 0 else 1]
                added = filler.offer(
                    unit.uri,
                    [DEPTH_FULL],
                    relevance,
                    metadata=metadata,
                    limit=min(room, int(self.budget * share)),
                    node=node,
                )
                if added is not None:
                    state.whole.add(unit.file)
                    state.seen.add(unit.file)
                    state.delivered[added.uko_node] = unit
                continue
            if node is None or any(_inside(node, t) for t in state.full[unit.file]):
                continue
            if _shown_by_outline(node, state.outlines[unit.file]):
                continue
            # what a unit may cost scales with its file's belief (the best file: half the budget)
            limit = min(room, int(self.budget * _UNIT_SHARE * probability[unit.file]))
            if is_import(node.uko_type):
                limit = min(limit, int(self.budget * _IMPORT_SHARE) - state.import_tokens)
            full = unit.kind == "node" and unit.depth >= DEPTH_FULL
            copy = _copy_of(node, state.shapes) if full else None
            if copy is not None:
                original, same, total = copy
                state.copies[original.uri].append(node.qualname or node.name)
                state.copied.add(unit.uri)
                filler.left_out(
                    unit.uri,
                    DEPTH_FULL,
                    node=node,
                    reason=f"a near copy of {original.qualname or original.name}, delivered "
                    f"in full: {same} of its {total} lines the same, names aside",
                )
                continue
            if full:
                # whole, else a glimpse-sized outline (its signature when its docs are long):
                # a long outline would take the room of the next units in full
                added = filler.offer(
                    unit.uri, [unit.depth], relevance, metadata=metadata, limit=limit, node=node
                )
                if added is None:
                    added = filler.offer(
                        unit.uri,
                        [DEPTH_OUTLINE, DEPTH_SIGNATURES],
                        relevance,
                        metadata=metadata,
                        limit=min(limit, _GLIMPSE_TOKENS),
                        node=node,
                    )
            else:
                floor = DEPTH_OUTLINE if unit.kind == "node" else DEPTH_MEMBERS
                if unit.kind == "outline":
                    limit = min(limit, max(_GLIMPSE_TOKENS, int(self.budget * _OUTLINE_SHARE)))
                added = filler.offer(
                    unit.uri,
                    depths_from(unit.depth, floor),
                    relevance,
                    metadata=metadata,
                    limit=limit,
                    node=node,
                )
            if added is not None:
                state.seen.add(unit.file)
                state.delivered[added.uko_node] = unit
                if is_import(node.uko_type):
                    state.import_tokens += added.token_count
                if added.detail_depth >= DEPTH_FULL:
                    state.full[unit.file].append(node)
                    if is_callable(node.uko_type):
                        state.shapes.append((node, _shape(node)))
                elif unit.kind == "outline":
                    lines = _lines(added.content)
                    state.outlines[unit.file].append((node, lines))
                    # one-line members delivered before their class's outline: now repeats
                    for member in state.full[unit.file][:]:
                        if _shown_by_outline(member, [(node, lines)]):
                            filler.withdraw(member.uri)
                            state.full[unit.file].remove(member)
                            state.delivered.pop(member.uri, None)

    def _map(
        self,
        units: list[_Unit],
        rank: Mapping[str, int],
        probability: Mapping[str, float],
        nodes: Mapping[str, UKONode],
        state: _TakeState,
    ) -> None:
        """The best unit of each likely file not yet seen, as its signature: where else to look."""
        best: dict[str, _Unit] = {}
        for unit in units:
            if unit.kind != "file" and unit.file not in state.seen and unit.file not in best:
                best[unit.file] = unit
        for file_uri in sorted(best, key=lambda f: rank[f]):
            unit = best[file_uri]
            metadata = {"focus_distance": str(min(4, rank[file_uri]))}
            added = self.filler.offer(
                unit.uri,
                depths_from(DEPTH_SIGNATURES),
                _relevance(probability[file_uri], 1.0),
                metadata=metadata,
                limit=_GLIMPSE_TOKENS,
                node=nodes.get(unit.uri),
            )
            if added is not None:
                state.seen.add(file_uri)
                state.delivered[added.uko_node] = unit


@dataclass
class _TakeState:
    whole: set[str] = field(default_factory=set)
    tried_whole: set[str] = field(default_factory=set)
    seen: set[str] = field(default_factory=set)
    #: File URI -> its nodes delivered in full.
    full: dict[str, list[UKONode]] = field(default_factory=lambda: defaultdict(list))
    #: File URI -> its containers delivered as outlines, with the outline's lines.
    outlines: dict[str, list[tuple[UKONode, frozenset[str]]]] = field(
        default_factory=lambda: defaultdict(list)
    )
    #: Fragment node URI -> the unit it was delivered for.
    delivered: dict[str, _Unit] = field(default_factory=dict)
    import_tokens: int = 0
    #: Callables delivered in full, with their shapes (:func:`_shape`).
    shapes: list[tuple[UKONode, frozenset[str]]] = field(default_factory=list)
    #: URI of a callable delivered in full -> the names of its near copies left out.
    copies: dict[str, list[str]] = field(default_factory=lambda: defaultdict(list))
    #: The URIs of those near copies (each is judged once).
    copied: set[str] = field(default_factory=set)


def _hedge(units: list[_Unit], ranked: list[str]) -> None:
    """Raise the best function of the runner-up files: the best file is often not the one."""
    for file_uri in ranked[1 : 1 + _RUNNER_UP_FILES]:
        own = [u for u in units if u.file == file_uri and u.kind == "node"]
        if own:
            best = max(own, key=lambda u: u.value)
            best.value = max(best.value, _RUNNER_UP_VALUE)


def _ranked_by_file(
    fragments: list[ContextFragment],
    delivered: Mapping[str, _Unit],
    probability: Mapping[str, float],
) -> list[ContextFragment]:
    """Each fragment's relevance, now that the delivered units are known: the file's
    belief, refined by the unit's value against the best unit delivered from its file.

    A file's best delivered unit carries the file's belief whole, so the files keep
    arce's order when fragments are sorted by relevance: valued against every unit of
    the file, a likelier file whose best units did not fit (an outline delivered in
    their place) fell behind a runner-up's function raised by the hedge.
    """
    best: dict[str, float] = {}
    for fragment in fragments:
        unit = delivered.get(fragment.uko_node)
        if unit is not None:
            best[unit.file] = max(best.get(unit.file, 0.0), unit.value)
    out = []
    for fragment in fragments:
        unit = delivered.get(fragment.uko_node)
        if unit is not None:
            share = unit.value / max(best[unit.file], 1e-9)
            relevance = _relevance(probability[unit.file], share)
            fragment = fragment.model_copy(update={"relevance_score": relevance})
        out.append(fragment)
    return out


def _relevance(p: float, share: float) -> float:
    """Kept within [0.5, 1]: whatever arce delivers was chosen among the likeliest
    files, so it ranks above what a strategy without file evidence found."""
    return 0.5 + 0.5 * p * (0.6 + 0.4 * min(1.0, share))


def _probabilities(ranked: list[str], files: Mapping[str, float]) -> dict[str, float]:
    """Each file's belief relative to the best file's (1.0): a softmax of the scores."""
    best = files[ranked[0]] or 1.0
    return {f: math.exp(_FILE_SHARPNESS * (files[f] / best - 1.0)) for f in ranked}


def _frame_floors(analysis: QueryAnalysis) -> dict[str, list[tuple[frozenset[str], float]]]:
    """Function name -> the repository paths its frame's file may be (:func:`path_candidates`)
    and the frame's floor, the innermost 1.0.

    A traceback is the path to the failure: the fix is most often in its
    innermost frames of the project, less often further out.
    """
    floors: dict[str, list[tuple[frozenset[str], float]]] = defaultdict(list)
    for depth, (path, function) in enumerate(reversed(analysis.trace_frames)):
        floor = max(_FRAME_FLOOR_MIN, 1.0 - _FRAME_FLOOR_STEP * depth)
        floors[function].append((frozenset(path_candidates(path)), floor))
    return floors


def _inside(node: UKONode, container: UKONode) -> bool:
    """``node`` is part of ``container``'s text: a member of it, or within its lines
    (``self.x = …`` in a delivered ``__init__`` is an attribute of the class)."""
    if node.uri.startswith(container.uri + ".") and file_of(node.uri) == file_of(container.uri):
        return True
    return (
        node.path == container.path
        and container.end_line > 0
        and container.start_line <= node.start_line
        and node.end_line <= container.end_line
        and node.uri != container.uri
    )


def _is_overload(node: UKONode) -> bool:
    """Its analyzer marked it ``overload`` (a ``typing.overload`` stub, a TypeScript
    overload signature beside its implementation). Python nodes indexed before the mark
    existed are told by their ``@overload`` decorator."""
    properties = node.properties
    return properties.get("overload") == "true" or bool(
        _OVERLOAD.search(properties.get("decorators", ""))
    )


def _shape(node: UKONode) -> frozenset[str]:
    """A callable's lines without its own name (``get`` and ``options``, which differ only
    in the method they send, have the same shape)."""
    text = _ASYNC.sub("", node.rendering(DEPTH_FULL))
    if node.name:  # as a word of its own: ``GET`` and ``"get"``, not ``get_value``
        name = re.compile(rf"(?<!\w){re.escape(node.name)}(?!\w)", re.I)
        text = name.sub("\x00", text)
    return _lines(text)


def _copy_of(
    node: UKONode, shapes: list[tuple[UKONode, frozenset[str]]]
) -> tuple[UKONode, int, int] | None:
    """The callable delivered in full that ``node`` nearly repeats, with how many of
    ``node``'s distinct lines (without the names) it shares and how many there are; None
    when it repeats none: :data:`_COPY_SIMILARITY` of the lines of both are the same."""
    if not shapes or not is_callable(node.uko_type):
        return None
    lines = node.rendering(DEPTH_FULL).count("\n") + 1
    if lines < _COPY_MIN_LINES:
        return None
    shape: frozenset[str] | None = None
    for other, other_shape in shapes:
        if not 0.8 * len(other_shape) <= lines <= 1.25 * len(other_shape) + 2:
            continue  # (a cheap bound: blank and repeated lines make shapes shorter)
        shape = shape if shape is not None else _shape(node)
        same = len(shape & other_shape)
        if same and same >= _COPY_SIMILARITY * len(shape | other_shape):
            return other, same, len(shape)
    return None


def _lines(text: str) -> frozenset[str]:
    return frozenset(line.strip() for line in text.splitlines() if line.strip())


def _shown_by_outline(node: UKONode, outlines: list[tuple[UKONode, frozenset[str]]]) -> bool:
    """A one-line member (``ENVIRONMENT = enum.auto()``, ``timeout: float = 5.0``) that
    a delivered outline of its container already shows, line for line: delivering it
    again would only repeat that line."""
    if not outlines or is_callable(node.uko_type) or is_container(node.uko_type):
        return False
    text = node.rendering(DEPTH_FULL).strip()
    if not text or "\n" in text:
        return False
    return any(text in lines and _inside(node, outline) for outline, lines in outlines)


class LocalScorer:
    """BM25-like score of a node's text against every term of the question.

    Document frequencies come from the candidate nodes themselves (the members
    of the best files), so a word every function of those files uses counts
    little. A node whose name the question mentions or whose body quotes one of
    the question's messages (the function that raised what the user saw) scores
    half as much again plus a bonus; one a traceback passes through gets a bonus.
    """

    def __init__(self, analysis: QueryAnalysis, nodes: Mapping[str, UKONode]) -> None:
        self.terms = analysis.terms()
        self.names = {n.lower() for n in analysis.names()}
        self.trace = {t.lower() for t in analysis.trace_functions}
        self.messages = [t for m in analysis.messages[:4] for t in _trigrams(m[:80])]
        self._bags: dict[str, Counter[str]] = {}
        frequency: Counter[str] = Counter()
        wanted = set(self.terms)
        for uri, node in nodes.items():
            bag = self._bag(node)
            self._bags[uri] = bag
            frequency.update(wanted.intersection(bag))
        total = max(1, len(nodes))
        self.idf = {
            t: math.log(1 + (total - frequency[t] + 0.5) / (frequency[t] + 0.5)) for t in self.terms
        }
        lengths = [sum(b.values()) for b in self._bags.values()] or [1]
        self.average = max(1.0, sum(lengths) / len(lengths))

    @staticmethod
    def _text(node: UKONode) -> str:
        if is_callable(node.uko_type):
            return node.renderings.get(DEPTH_FULL, "") or node.rendering(DEPTH_FULL)
        return " ".join(
            [node.name, node.properties.get("signature", ""), node.properties.get("docstring", "")]
        )

    def _bag(self, node: UKONode) -> Counter[str]:
        bag: Counter[str] = Counter()
        for word, count in Counter(_WORD.findall(self._text(node))).items():
            for part in parts_of(word):
                if len(part) > 1:
                    bag[part] += count
        return bag

    def score(self, node: UKONode) -> float:
        bag = self._bags.get(node.uri)
        if bag is None:
            bag = self._bags[node.uri] = self._bag(node)
        length = sum(bag.values())
        norm = 1.2 * (0.25 + 0.75 * length / self.average)
        score = 0.0
        for term, weight in self.terms.items():
            tf = bag.get(term, 0)
            if tf:
                score += min(weight, 3.0) * self.idf.get(term, 0.0) * tf * 2.2 / (tf + norm)
        name = node.name.lower()
        if name in self.names or node.qualname.lower() in self.names:
            score = score * 1.5 + 5.0
        if name in self.trace:
            score += 5.0
        if self.messages and is_callable(node.uko_type):
            text = " " + " ".join(_TOKEN.findall(self._text(node).lower())) + " "
            if any(trigram in text for trigram in self.messages):
                score = score * 1.5 + 8.0  # it raises what the user saw: as strong as a name
        return score


def _trigrams(message: str) -> list[str]:
    """Runs of three words of ``message``, space-padded, to find it quoted in code."""
    words = _TOKEN.findall(message.lower())
    return [f" {' '.join(words[i : i + 3])} " for i in range(len(words) - 2)]
