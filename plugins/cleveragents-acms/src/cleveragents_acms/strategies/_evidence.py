"""ARCE's evidence: retrieval channels, their fusion, and the ranking of files.

Node level: every focused text query (title, each salient name, prose,
messages, traceback frames) is a ranking; so are the whole question searched
as BM25 (:func:`issue_chunks`; the question as analysed, without hidden comments
and the reporter's environment listing), the mentioned paths and modules, the vector
search and the graph neighbourhood. They are fused by weighted
reciprocal-rank fusion with the spec's channel weights (text 0.4, vector 0.4,
graph 0.2, renormalised over the channels present). An embedder that only
measures word overlap (``lexical = True``, such as ``hashing-ngram``) adds
little to the text channel and much noise, so its vector channel counts a
quarter (:data:`LEXICAL_TRUST`).

File level (a change is made in files): each file's nodes are aggregated (the
best node, then halving contributions), and six more kinds of evidence are
added, each normalised to the best file:

* the whole-question BM25 of the file's best nodes;
* definitions: the file defines names the question mentions (``FilePathField``),
  each name's weight shared among the files that define it;
* path words: salient words of the question are the file's name or folders
  (``sqlmigrate`` -> ``commands/sqlmigrate.py``), rarer path words counting more;
* mentions: the question names the file, its module or a traceback frame in it;
* messages: the file's code holds a message the question quotes (:mod:`._messages`);
* tested: the likeliest test files call into the file (:mod:`._tested`).

The likeliest files are then read whole (:mod:`._file_text`); that reading
counts as much as all the above together.

Test files and non-code files (documentation, data) are weighed down unless
the question is about them: what must change is rarely the test or the prose.
In a documentation project (fewer than a fifth of the candidate files are code)
the prose is what a question is about, and is not weighed down.
"""

from __future__ import annotations

import math
import re
from collections import Counter, defaultdict
from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from cleveragents_acms.strategies._anchors import module_paths, resolve_focus, resolve_paths
from cleveragents_acms.strategies._graph import GraphView, path_of
from cleveragents_acms.strategies._messages import message_sites
from cleveragents_acms.strategies._support import (
    Hit,
    file_of,
    is_test_path,
    safe_search,
)
from cleveragents_acms.strategies.query import STOP_WORDS, QueryAnalysis, TextQuery, parts_of
from cleveragents_acms.strategies.ranking import normalise, reciprocal_rank_fusion

if TYPE_CHECKING:
    from cleveragents.models.context import ContextRequest
    from cleveragents.protocols.backends import BackendSet

__all__ = [
    "CHANNEL_WEIGHTS",
    "FILE_WEIGHTS",
    "LEXICAL_TRUST",
    "Evidence",
    "gather",
    "issue_chunks",
    "raw_scores",
    "search",
]

#: The spec's fusion weights per retrieval channel.
CHANNEL_WEIGHTS: dict[str, float] = {"text": 0.4, "vector": 0.4, "graph": 0.2}
#: Share of the vector channel's weight when its embedder is lexical.
LEXICAL_TRUST = 0.25
#: How file evidence combines (each kind normalised to the best file first).
FILE_WEIGHTS: dict[str, float] = {
    "nodes": 0.3,
    "issue": 0.5,
    "definitions": 0.2,
    "paths": 0.2,
    "mentions": 0.3,
    "messages": 0.3,
    "tested": 0.3,
}
_RRF_K = 30.0
#: Hits per focused query by kind (the title and the prose reach further than one name).
_HITS = {"title": 50, "keywords": 50}
_ISSUE_HITS = 80
#: A name defined in more places than this says little about where to look.
_MAX_DEFINITIONS = 30
#: The whole-question ranking's weight among the text channel's rankings.
_ISSUE_WEIGHT = 1.5
#: A mention ranking's weight among the text channel's rankings.
_MENTION_WEIGHT = 0.5
_TEST_FACTOR = 1 / 3
_PROSE_FACTOR = 1 / 3
#: When fewer of the candidate files than this are code, the project is documentation
#: (a docs folder, a book): prose is what the question is about.
_CODE_MINORITY = 0.2
_CODE_SUFFIXES = (
    ".py", ".pyi", ".pyx", ".js", ".jsx", ".ts", ".tsx", ".go", ".rs", ".java", ".c", ".h",
    ".cc", ".cpp", ".hpp", ".rb", ".php", ".kt", ".scala", ".cs", ".swift", ".m",
)  # fmt: skip
_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_PATH_SPLIT = re.compile(r"[_\W]+")


def raw_scores(hits: Iterable[Hit]) -> dict[str, float]:
    """The BM25 scores behind a text backend's normalised ``raw / (best + 2)`` scores.

    The best hit's score ``s`` gives ``best = 2s / (1 - s)``; every other raw
    score follows. Raw scores of different queries add up like one query's.
    """
    hits = list(hits)
    if not hits:
        return {}
    first = max(h.score for h in hits)
    best = 2 * first / max(1e-9, 1 - first)
    return {h.uri: h.score * (best + 2) for h in hits}


def issue_chunks(text: str, *, words_per_query: int = 28, max_queries: int = 6) -> list[str]:
    """The question's distinct words in order, as queries the text backend takes whole."""
    seen: set[str] = set()
    words: list[str] = []
    for word in _WORD.findall(text):
        key = word.lower()
        if len(key) < 3 or key in STOP_WORDS or key in seen:
            continue
        seen.add(key)
        words.append(word)
    return [
        " ".join(words[i : i + words_per_query]) for i in range(0, len(words), words_per_query)
    ][:max_queries]


def _decayed(scores: Iterable[float]) -> float:
    ordered = sorted((s for s in scores if s > 0), reverse=True)[:6]
    return sum(s * 0.5**i for i, s in enumerate(ordered))


def per_file(scores: Mapping[str, float]) -> dict[str, float]:
    """Node scores aggregated per file: the best, then halving contributions."""
    grouped: dict[str, list[float]] = defaultdict(list)
    for uri, score in scores.items():
        grouped[file_of(uri)].append(score)
    return {f: _decayed(s) for f, s in grouped.items()}


@dataclass
class Evidence:
    """What one assembly has found so far, and its fusion."""

    analysis: QueryAnalysis
    hits: dict[str, Hit] = field(default_factory=dict)
    #: focused text queries: (ranked URIs, weight)
    text_lists: list[tuple[list[str], float]] = field(default_factory=list)
    #: the whole question as BM25: URI -> summed raw score
    issue: dict[str, float] = field(default_factory=dict)
    vector_list: list[str] = field(default_factory=list)
    #: the vector channel's share of its spec weight (lexical embedders repeat the text channel)
    vector_trust: float = 1.0
    #: nodes the question points at (focus items, paths, modules, frames)
    mention_list: list[str] = field(default_factory=list)
    graph_list: list[str] = field(default_factory=list)
    #: node URI -> how strongly the question names it
    definitions: dict[str, float] = field(default_factory=dict)
    #: file URI -> how surely it holds a message the question quotes (0..1)
    message_files: dict[str, float] = field(default_factory=dict)
    #: file URI -> BM25 of the whole file among the likeliest files (:mod:`._file_text`)
    file_text: dict[str, float] = field(default_factory=dict)
    #: file URI -> the likeliest test files' votes for the code they call (:mod:`._tested`)
    tested: dict[str, float] = field(default_factory=dict)
    queried: set[str] = field(default_factory=set)
    fused: dict[str, float] = field(default_factory=dict)

    def found_by_text(self) -> bool:
        """Whether anything but the vector channel found a node: a text query, the whole
        question, a mention, a definition or a quoted message."""
        return bool(
            any(uris for uris, _ in self.text_lists)
            or self.issue
            or self.mention_list
            or self.definitions
            or self.message_files
        )

    def add_hits(self, hits: Iterable[Hit]) -> None:
        for hit in hits:
            known = self.hits.get(hit.uri)
            if known is None or hit.score > known.score:
                self.hits[hit.uri] = hit

    # -- node level ----------------------------------------------------------------------

    def channel_weights(self) -> dict[str, float]:
        present = {
            "text": bool(self.text_lists or self.issue or self.mention_list),
            "vector": bool(self.vector_list),
            "graph": bool(self.graph_list),
        }
        base = dict(CHANNEL_WEIGHTS, vector=CHANNEL_WEIGHTS["vector"] * self.vector_trust)
        total = sum(base[c] for c, ok in present.items() if ok)
        return {c: base[c] / total if ok and total else 0.0 for c, ok in present.items()}

    def fuse(self) -> dict[str, float]:
        weights = self.channel_weights()
        text: list[tuple[list[str], float]] = list(self.text_lists)
        if self.issue:
            text.append((sorted(self.issue, key=lambda u: -self.issue[u]), _ISSUE_WEIGHT))
        if self.mention_list:
            text.append((self.mention_list, _MENTION_WEIGHT))
        text_total = sum(w for _, w in text) or 1.0
        rankings = [(ranking, weights["text"] * w / text_total) for ranking, w in text]
        rankings.append((self.vector_list, weights["vector"]))
        rankings.append((self.graph_list, weights["graph"]))
        self.fused = reciprocal_rank_fusion(rankings, k=_RRF_K)
        return self.fused

    def top(self, count: int) -> list[str]:
        return sorted(self.fused, key=lambda u: -self.fused[u])[:count]

    # -- file level ----------------------------------------------------------------------

    def file_scores(self) -> dict[str, float]:
        """Every candidate file's combined evidence (see the module docstring)."""
        kinds = {
            "nodes": normalise(per_file(self.fused)),
            "issue": normalise(per_file(self.issue)),
            "definitions": normalise(per_file(self.definitions)),
            "paths": normalise(self.path_matches()),
            "mentions": dict.fromkeys((file_of(u) for u in self.mention_list), 1.0),
            "messages": self.message_files,
            "tested": normalise(self.tested),
        }
        files: set[str] = set().union(*kinds.values())
        prose_asked = _prose_asked(files)

        def prior(file_uri: str) -> float:
            return self._prior(file_uri, prose_asked=prose_asked)

        scores = {
            f: prior(f) * sum(FILE_WEIGHTS[k] * kinds[k].get(f, 0.0) for k in kinds) for f in files
        }
        if self.file_text:  # the whole-file reading counts as much as the rest together
            base, text = normalise(scores), normalise(self.file_text)
            scores = {f: base[f] + prior(f) * text.get(f, 0.0) for f in base}
        return scores

    def code_files(self, files: Collection[str]) -> dict[str, bool]:
        """Candidate file URI -> whether it is code a change is made in: not a test (even
        when the question is about tests) nor prose (unless the question is about it)."""
        prose_asked = _prose_asked(files)
        return {
            f: not is_test_path(path_of(f)) and self._prior(f, prose_asked=prose_asked) == 1.0
            for f in files
        }

    def _prior(self, file_uri: str, *, prose_asked: bool = False) -> float:
        """Tests and prose (documentation, examples) rarely change, unless asked about
        (``prose_asked``: the candidates are nearly all prose)."""
        keywords = self.analysis.keywords
        path = path_of(file_uri)
        factor = 1.0
        if is_test_path(path) and not {"test", "tests", "testing"} & keywords.keys():
            factor *= _TEST_FACTOR
        asked = prose_asked or bool({"doc", "docs", "documentation", "docstring"} & keywords.keys())
        if not asked and not _is_code(path):
            factor *= _PROSE_FACTOR
        return factor

    def path_matches(self) -> dict[str, float]:
        """Files whose name or folders are salient words of the question (rare ones count more)."""
        terms: dict[str, float] = {}
        for word, weight in self.analysis.keywords.items():
            key = _singular(word.lower())
            terms[key] = max(terms.get(key, 0.0), weight)
        for name, weight in self.analysis.identifiers.items():
            for part in [name.lower(), *parts_of(name)]:
                key = _singular(part)
                terms[key] = max(terms.get(key, 0.0), weight)
        candidates = {file_of(u) for u in self.hits} | {file_of(u) for u in self.issue}
        words = {f: _path_words(path_of(f)) for f in candidates}
        spread: Counter[str] = Counter()
        for found in words.values():
            spread.update(found)
        out: dict[str, float] = {}
        for file_uri, found in words.items():
            score = sum(
                w * min(terms[t], 4.0) / math.log(2 + spread[t])
                for t, w in found.items()
                if len(t) > 2 and t in terms
            )
            if score > 0:
                out[file_uri] = score
        return out


_EXAMPLE_FOLDERS = frozenset({"doc", "docs", "example", "examples", "demo", "demos", "tutorials"})


def _prose_asked(files: Collection[str]) -> bool:
    """Whether the candidates are nearly all prose: a documentation project, where the
    prose is what a question is about."""
    code = sum(1 for f in files if _is_code(path_of(f)))
    return bool(files) and code < _CODE_MINORITY * len(files)


def _is_code(path: str) -> bool:
    """A source file that is not an example (``docs/conf.py`` and ``examples/`` are prose)."""
    return path.endswith(_CODE_SUFFIXES) and not _is_example(path)


def _is_example(path: str) -> bool:
    """Code that documents rather than implements: ``docs/conf.py``, ``examples/plot.py``."""
    return any(part in _EXAMPLE_FOLDERS for part in path.lower().split("/")[:-1])


def _singular(word: str) -> str:
    """``plugins`` -> ``plugin``, ``formsets`` -> ``formset`` (``class``, ``status`` stay)."""
    if len(word) > 4 and word.endswith("s") and not word.endswith(("ss", "us", "is")):
        return word[:-1]
    return word


def _path_words(path: str) -> dict[str, float]:
    """Words of a path: the file's stem and its parts (1.0), folder names (0.5)."""
    parts = path.lower().split("/")
    stem = parts[-1].rsplit(".", 1)[0]
    words = {_singular(p): 1.0 for p in _PATH_SPLIT.split(stem) if p}
    words[_singular(stem)] = 1.0
    for folder in parts[:-1]:
        words.setdefault(_singular(folder), 0.5)
    return words


# -- gathering the text and graph evidence of a question ---------------------------------


def gather(
    request: ContextRequest,
    backends: BackendSet,
    view: GraphView | None,
    evidence: Evidence,
    *,
    hits_per_query: int = 25,
    max_queries: int | None = None,
) -> Evidence:
    """Focused queries, the whole question, mentions and definitions, fused."""
    analysis = evidence.analysis
    for query in analysis.text_queries()[:max_queries]:
        search(backends, evidence, query, hits_per_query)
    for chunk in issue_chunks(analysis.text):
        hits = safe_search(backends, chunk, _ISSUE_HITS)
        evidence.add_hits(hits)
        for uri, score in raw_scores(hits).items():
            evidence.issue[uri] = evidence.issue.get(uri, 0.0) + score
    evidence.mention_list = mentions(request, analysis, view, backends)
    evidence.message_files = message_sites(backends, analysis)
    if view is not None:
        evidence.definitions = definitions(view, analysis)
    evidence.fuse()
    return evidence


def search(backends: BackendSet, evidence: Evidence, query: TextQuery, limit: int) -> None:
    """Run one focused query (once) and record its ranking."""
    key = query.text.lower()
    if key in evidence.queried:
        return
    evidence.queried.add(key)
    hits = safe_search(backends, query.text, _HITS.get(query.kind, limit))
    if hits:
        evidence.add_hits(hits)
        evidence.text_lists.append(([h.uri for h in hits], query.weight))


def mentions(
    request: ContextRequest,
    analysis: QueryAnalysis,
    view: GraphView | None,
    backends: BackendSet,
) -> list[str]:
    """Nodes the question points at: focus items, mentioned files and modules."""
    found: list[str] = []
    if request.focus:
        found.extend(resolve_focus(request.focus, view, backends))
    for files in resolve_paths(analysis.paths[:12], view, backends, search=False).values():
        found.extend(files[:1])
    for module in analysis.modules[:4]:
        # the most specific file the name can be (``a.b.c``: the module ``c``, else ``b``
        # when ``c`` is a name defined in it), not every package on the way
        for candidate in module_paths(module)[:4]:
            files = resolve_paths([candidate], view, backends, search=False)[candidate]
            if files:
                found.append(files[0])
                break
    return list(dict.fromkeys(found))


def definitions(view: GraphView, analysis: QueryAnalysis) -> dict[str, float]:
    """Nodes named exactly as the question's names, each name's weight shared by them."""
    salience: dict[str, float] = {}
    for name, weight in analysis.identifiers.most_common(20):
        salience[name] = max(salience.get(name, 0.0), weight)
        simple = name.rsplit(".", 1)[-1]
        if simple != name:
            salience[simple] = max(salience.get(simple, 0.0), 0.7 * weight)
    for function in analysis.trace_functions:
        salience[function] = max(salience.get(function, 0.0), 2.0)
    for name in analysis.own_classes:  # the reporter's classes, not the project's
        salience.pop(name, None)
    found = view.by_name(list(salience), limit=_MAX_DEFINITIONS + 1)
    scores: dict[str, float] = {}
    for name, uris in found.items():
        if not uris or len(uris) > _MAX_DEFINITIONS:
            continue
        share = min(salience[name], 4.0) / math.sqrt(len(uris))
        for uri in uris:
            scores[uri] = scores.get(uri, 0.0) + share
    return scores
