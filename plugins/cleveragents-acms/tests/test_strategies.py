"""The built-in strategies on a real index: the kernel's own sources, copied and indexed.

Each strategy must find the code a realistic question is about, stay within
its budget and its scope, honour the request's depth and focus, and the
selector must degrade along the fallback path when backends are missing.
"""

from __future__ import annotations

import dataclasses
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest

import cleveragents
from cleveragents import assembly
from cleveragents.assembly import AssemblyServices
from cleveragents.config import load_config
from cleveragents.models.context import (
    AssembledContext,
    ContextFragment,
    ContextRequest,
    TemporalScope,
)
from cleveragents.models.plans import Decision
from cleveragents.models.uko import DEPTH_FULL, DEPTH_SIGNATURES, UKONode, node_uri
from cleveragents.plugins import PluginHost
from cleveragents.protocols.backends import BackendSet
from cleveragents.storage.database import Database
from cleveragents.testing.memory import InMemoryVectorBackend
from cleveragents_acms.analyzers.python import PythonAnalyzer
from cleveragents_acms.backends.scoped import make_backend_set
from cleveragents_acms.context.nodes import NodeRenderer, NodeStoreSource
from cleveragents_acms.indexing.project_index import ProjectIndex
from cleveragents_acms.indexing.service import RepoIndexingService
from cleveragents_acms.indexing.vectors import choose_embedder
from cleveragents_acms.pipeline.assembly import ContextAssemblyPipeline
from cleveragents_acms.pipeline.selector import ConfidenceWeightedSelector
from cleveragents_acms.pipeline.tokenizers import get_tokenizer
from cleveragents_acms.strategies._anchors import module_paths, path_candidates
from cleveragents_acms.strategies._delivery import (
    Delivery,
    LocalScorer,
    _inside,
    _lines,
    _shown_by_outline,
)
from cleveragents_acms.strategies._evidence import issue_chunks, mentions
from cleveragents_acms.strategies._graph import GraphView
from cleveragents_acms.strategies._support import DEFER_FACTOR
from cleveragents_acms.strategies.arce import ArceStrategy
from cleveragents_acms.strategies.keyword import SimpleKeywordStrategy
from cleveragents_acms.strategies.navigator import BreadthDepthNavigatorStrategy
from cleveragents_acms.strategies.plan_decisions import (
    PlanDecisionContextStrategy,
    publish_plan_context,
)
from cleveragents_acms.strategies.query import analyze, short_form
from cleveragents_acms.strategies.ranking import (
    personalized_pagerank,
    reciprocal_rank_fusion,
)
from cleveragents_acms.strategies.semantic import (
    SemanticEmbeddingStrategy,
    is_lexical,
    set_embedder_provider,
)
from cleveragents_acms.strategies.temporal import TemporalArchaeologyStrategy

CORE_SOURCES = Path(cleveragents.__file__).parent
RESOURCE_A = "01JA0000000000000000000000"
RESOURCE_B = "01JB0000000000000000000000"
CL100K = get_tokenizer("cl100k")
PLUGIN_QUESTION = "why does a plugin that raises at import not crash the host?"
TRACEBACK_QUESTION = """Loading a component fails with an unhelpful error

Traceback (most recent call last):
  File "/home/me/app.py", line 3, in <module>
    registry.strategies["mine"]
  File "/usr/lib/python3.11/site-packages/cleveragents/registry.py", line 101, in resolve
    component = import_reference(str(self.target))
cleveragents.errors.PluginError: plugin 'mine': strategy 'mine' could not be loaded
"""
#: A second resource: it talks about plugins a lot, and must never leak into resource A's scope.
DECOY = '''"""Plugin crash handling for the decoy application."""


def plugin_crash_guard(plugin, host):
    """Keep the host alive when a plugin raises at import: the plugin import crash guard."""
    try:
        return plugin.load(host)
    except ImportError:
        return None
'''


@dataclasses.dataclass
class Corpus:
    index: ProjectIndex
    source: NodeStoreSource

    def backends(
        self, scope: Sequence[str] = (RESOURCE_A,), *, text: bool = True, graph: bool = True
    ) -> BackendSet:
        plain = make_backend_set(
            self.index.text if text else None,
            None,
            self.index.graph if graph else None,
            scope,
        )
        source = NodeStoreSource(self.index.nodes, scope, tokenizer=CL100K)
        return dataclasses.replace(plain, nodes=source)


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Corpus]:
    """The kernel's sources as resource A and a decoy as resource B, in one project."""
    base = tmp_path_factory.mktemp("strategies")
    root = base / "repo"
    shutil.copytree(
        CORE_SOURCES, root / "cleveragents", ignore=shutil.ignore_patterns("__pycache__")
    )
    decoy = base / "decoy"
    decoy.mkdir()
    (decoy / "guard.py").write_text(DECOY)
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("CLEVERAGENTS_HOME", str(base / "home"))
        host = PluginHost.load(env={})
        config = load_config(cwd=base, env={})
        database = Database.for_sqlite_file(base / "home" / "cleveragents.db")
        service = RepoIndexingService(database, host.registry, config, workers=2)
        service.index_resource(RESOURCE_A, root, project="demo")
        service.index_resource(RESOURCE_B, decoy, project="demo")
        index = ProjectIndex.open("demo", host.registry, config, create=False)
        source = NodeStoreSource(index.nodes, {RESOURCE_A}, tokenizer=CL100K)
        yield Corpus(index, source)
        index.close()
        database.dispose()


def run(
    strategy: Any,
    request: ContextRequest,
    backends: BackendSet,
    budget: int = 4000,
    plan_context: object = None,
) -> list[ContextFragment]:
    with assembly.use(AssemblyServices(tokenizer=CL100K)):
        fragments = strategy.assemble(request, backends, budget, plan_context)
    assert sum(f.token_count for f in fragments) <= budget
    assert all(0.0 <= f.relevance_score <= 1.0 for f in fragments)
    return fragments


def uri(path: str, qualname: str = "") -> str:
    return node_uri(RESOURCE_A, path, qualname)


def by_relevance(fragments: list[ContextFragment]) -> list[ContextFragment]:
    return sorted(fragments, key=lambda f: -f.relevance_score)


def files_in_order(fragments: list[ContextFragment]) -> list[str]:
    return list(dict.fromkeys(f.provenance.path for f in by_relevance(fragments)))


LOAD_ONE = uri("cleveragents/plugins.py", "PluginHost._load_one")
RESOLVE = uri("cleveragents/registry.py", "Registration.resolve")
REGISTRY = uri("cleveragents/registry.py")


# -- query analysis and ranking primitives -----------------------------------------------


def test_analysis_keeps_code_and_drops_boilerplate() -> None:
    """Names, dotted names, paths, frames, errors and messages are kept; template words go."""
    analysis = analyze(
        "### Description\nCalling `Registry.resolve` on a PluginHost fails.\n"
        "### Expected behavior\nIt should work.\n" + TRACEBACK_QUESTION
    )
    assert {"Registry.resolve", "PluginHost", "resolve"} <= set(analysis.identifiers)
    assert "cleveragents/registry.py" in analysis.paths
    assert analysis.trace_functions == ["resolve"]
    assert "PluginError" in analysis.errors
    assert any("could not be loaded" in m for m in analysis.messages)
    assert not {"description", "expected", "behavior", "should"} & set(analysis.keywords)
    assert all(len(q.text.split()) <= 28 for q in analysis.text_queries())


def test_prose_words_also_search_the_short_forms_code_uses() -> None:
    """ "environment variable" is ``env`` in code: the short form joins the keywords at half
    the word's salience; a word already there, or without a short form, adds nothing."""
    assert [short_form(w) for w in ("environment", "arguments", "directories", "status")] == [
        "env",
        "args",
        "dirs",
        None,
    ]
    analysis = analyze("Options ignore the environment\nThe env value is read too late.")
    keywords = analysis.keywords
    assert keywords["environment"] == 3.0 and keywords["env"] == 1.0  # in the prose already
    analysis = analyze("Read the default from the environment")
    assert analysis.keywords["env"] == analysis.keywords["environment"] / 2
    assert "env" in analysis.terms()
    assert any("env" in q.text.split() for q in analysis.text_queries())


def test_the_verb_a_task_opens_with_keeps_a_quarter_of_that_salience() -> None:
    """Only the title's opening verb is weighed down; elsewhere the word counts in full."""
    assert analyze("Allow retries on failed connections").keywords["allow"] == 0.75
    assert analyze("Add retries\nWe should add a retry.").keywords["add"] == 1.75
    assert analyze("Retries do not allow a timeout").keywords["allow"] == 3.0
    assert "add_command" in analyze("add_command fails on aliases").identifiers


def test_analysis_ignores_the_environment_report() -> None:
    """Version listings at the end of an issue are not evidence."""
    analysis = analyze(
        "QDP reader fails on lower case commands\n\nDetails here.\n\n"
        "### Versions\nPython 3.10.9 (main, Dec 7 2022)\nnumpy 1.24.1\nscipy 1.10.0\n"
    )
    assert "numpy" not in analysis.keywords and "scipy" not in analysis.keywords
    assert "qdp" in analysis.keywords


def test_analysis_reads_the_question_as_rendered() -> None:
    """CRLF line ends (issues pasted from a browser) and hidden template comments change
    nothing: the version listing still goes, the comment's words are not evidence."""
    question = (
        "QDP reader fails on lower case commands\n\n<!-- Thanks for submitting an issue!\n"
        "Here's a quick checklist -->\nDetails here.\n\n<details>\n\n"
        "aioftp                        0.13.0\nalabaster       0.7.12\n</details>\n"
    )
    for text in (question, question.replace("\n", "\r\n")):
        analysis = analyze(text)
        assert "\r" not in analysis.text and "checklist" not in analysis.text
        assert not {"aioftp", "alabaster", "checklist", "thanks"} & set(analysis.keywords)
        assert analysis.title == "QDP reader fails on lower case commands"
    # an unclosed comment marker (say, in a pasted template) hides nothing
    assert "details" in analyze("Title\n\nThe <!-- marker in base.html breaks details").text


def test_messages_are_read_from_pytest_and_warning_lines() -> None:
    """A message is the question's to quote however it was printed: plain, after pytest's
    ``E``, or in Python's warning format ``path.py:N: Category: message``."""
    analysis = analyze(
        "Figure warns\n\n/tmp/ipykernel_1/4170.py:7: UserWarning: This figure was using "
        "a layout engine\n  plt.subplots_adjust(wspace=0)\ntest_x.py:7: AssertionError\n"
        "E   TypeError: bad operand type for abs\nValueError: shapes do not match\n"
    )
    assert {"UserWarning", "TypeError", "ValueError", "AssertionError"} <= set(analysis.errors)
    assert analysis.messages == [
        "This figure was using a layout engine",
        "bad operand type for abs",
        "shapes do not match",
    ]


def test_the_whole_question_query_leaves_the_environment_out() -> None:
    """The whole-question BM25 reads the question as analysed, not the pip listing."""
    analysis = analyze(
        "Dynamically adding an xfail marker no longer ignores failure\r\n\r\n"
        "## Versions\r\n\r\naioftp                        0.13.0   \r\n"
        "alabaster                     0.7.12\r\n\r\nThe marker is added with add_marker.\r\n"
    )
    words = " ".join(issue_chunks(analysis.text)).split()
    assert {"xfail", "marker", "add_marker"} <= set(words)
    assert not {"aioftp", "alabaster"} & set(words)


def test_paths_as_written_map_to_repository_paths() -> None:
    """An installed path is tried by its suffixes (and src/ or lib/ roots); modules as files."""
    candidates = path_candidates("/usr/lib/python3/site-packages/pkg/sub/mod.py")
    assert candidates.index("pkg/sub/mod.py") < candidates.index("sub/mod.py")
    assert "src/pkg/sub/mod.py" in candidates
    assert module_paths("pkg.sub.mod")[:2] == ["pkg/sub/mod.py", "pkg/sub/mod/__init__.py"]


def test_personalized_pagerank_stays_near_the_focus() -> None:
    """Rank concentrates on the personalised node and its neighbours; the total is 1."""
    edges = {"a": {"b": 1.0}, "b": {"c": 1.0}, "c": {"d": 1.0}, "x": {"y": 1.0}, "y": {"x": 1.0}}
    rank = personalized_pagerank(edges, {"a": 1.0})
    assert rank["a"] > rank["b"] > rank["c"] > rank["d"]
    assert rank.get("x", 0.0) == pytest.approx(0.0) and rank.get("y", 0.0) == pytest.approx(0.0)
    assert sum(rank.values()) == pytest.approx(1.0)
    assert personalized_pagerank(edges, {}) == {}


def test_personalized_pagerank_is_the_same_in_every_process() -> None:
    """Tied ranks come out in one order and sum in one order, whatever the string hashing."""
    script = (
        "from cleveragents_acms.strategies.ranking import personalized_pagerank as p\n"
        "edges = {'hub': {f'leaf{i}': 1.0 for i in range(40)}}\n"
        "edges.update({f'leaf{i}': {'hub': 1.0, f'x{i}': 0.5} for i in range(40)})\n"
        "print(repr(list(p(edges, {'hub': 1.0, 'leaf3': 0.2}).items())))\n"
    )

    def ranks(seed: str) -> str:
        env = {**os.environ, "PYTHONHASHSEED": seed}
        return subprocess.run(
            [sys.executable, "-c", script], env=env, capture_output=True, text=True, check=True
        ).stdout

    first = ranks("1")
    assert "leaf39" in first
    assert ranks("2") == first == ranks("3")


def test_reciprocal_rank_fusion_rewards_agreement() -> None:
    """An item ranked well by two lists beats one ranked first by a single list."""
    fused = reciprocal_rank_fusion([(["a", "b"], 0.5), (["c", "b"], 0.5)], k=10)
    assert max(fused, key=fused.__getitem__) == "b"
    assert reciprocal_rank_fusion([(["a"], 0.0)]) == {}


# -- simple-keyword ------------------------------------------------------------------------


def test_keyword_finds_the_plugin_loader(corpus: Corpus) -> None:
    """Identifier-aware search reaches the plugin host for a plain-English question."""
    fragments = run(
        SimpleKeywordStrategy(), ContextRequest(query=PLUGIN_QUESTION), corpus.backends()
    )
    assert "cleveragents/plugins.py" in files_in_order(fragments)[:3]
    exact = run(
        SimpleKeywordStrategy(),
        ContextRequest(query="what does `_load_one` do?"),
        corpus.backends(),
    )
    assert by_relevance(exact)[0].uko_node == LOAD_ONE
    assert by_relevance(exact)[0].detail_depth == 9


def test_keyword_honours_a_named_depth(corpus: Corpus) -> None:
    """A request naming a level gets nothing deeper than that level."""
    request = ContextRequest(query=PLUGIN_QUESTION, depth="SIGNATURES")
    fragments = run(SimpleKeywordStrategy(), request, corpus.backends())
    assert fragments and all(f.detail_depth <= 4 for f in fragments)


# -- breadth-depth-navigator -------------------------------------------------------------------


def test_navigator_applies_the_depth_gradient_around_a_focus(corpus: Corpus) -> None:
    """The focus in full, its neighbours shallower, each hop recorded as focus_distance."""
    request = ContextRequest(focus=("cleveragents/plugins.py#PluginHost._load_one",), breadth=2)
    fragments = run(BreadthDepthNavigatorStrategy(), request, corpus.backends(), 6000)
    by_node = {f.uko_node: f for f in fragments}
    focus = by_node[LOAD_ONE]
    assert (focus.detail_depth, focus.metadata["focus_distance"]) == (9, "0")
    assert focus.relevance_score == max(f.relevance_score for f in fragments)
    neighbours = [f for f in fragments if f.metadata.get("focus_distance") == "1"]
    assert neighbours and all(f.detail_depth <= 6 for f in neighbours)
    assert uri("cleveragents/plugins.py", "PluginRecord.fail") in by_node
    assert max(int(f.metadata["focus_distance"]) for f in fragments) <= 2


def test_navigator_focus_forms(corpus: Corpus) -> None:
    """A URI, a path with a line, a dotted name and a plain name all resolve."""
    strategy = BreadthDepthNavigatorStrategy()
    for item in (
        LOAD_ONE,
        "cleveragents/plugins.py:200",
        "cleveragents.plugins.PluginHost._load_one",
        "_load_one",
    ):
        fragments = run(strategy, ContextRequest(focus=(item,), breadth=1), corpus.backends())
        assert LOAD_ONE in {f.uko_node for f in fragments if f.metadata["focus_distance"] == "0"}
    unknown = run(strategy, ContextRequest(focus=("no/such/file.py",)), corpus.backends())
    assert unknown == []


def test_navigator_without_focus_seeds_from_the_question(corpus: Corpus) -> None:
    """No focus: the question's text hits and named nodes seed the walk."""
    request = ContextRequest(query="How does Registration.resolve report a broken plugin?")
    fragments = run(BreadthDepthNavigatorStrategy(), request, corpus.backends())
    assert RESOLVE in {f.uko_node for f in by_relevance(fragments)[:5]}
    delivered = {f.uko_node for f in fragments}
    assert any(set(f.metadata.get("depends_on", "").split()) & delivered for f in fragments)


def test_navigator_breadth_is_capped_by_max_hops(corpus: Corpus) -> None:
    """``max-hops`` bounds ``request.breadth``."""
    request = ContextRequest(focus=(LOAD_ONE,), breadth=10, depth=0)
    fragments = run(BreadthDepthNavigatorStrategy(max_hops=1), request, corpus.backends(), 20000)
    assert {f.metadata["focus_distance"] for f in fragments} <= {"0", "1"}


def test_navigator_goes_from_a_go_interface_to_the_types_that_implement_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Go says nowhere that ``Square`` implements ``Shape``: the derived ``implements``
    edge is what leads from the interface to it (no call or import links the files)."""
    root = tmp_path / "go" / "shapes"
    root.mkdir(parents=True)
    (root / "shape.go").write_text(
        "package shapes\n\ntype Shape interface {\n\tArea() float64\n}\n"
    )
    (root / "square.go").write_text(
        "package shapes\n\ntype Square struct{ side float64 }\n\n"
        "func (s Square) Area() float64 { return s.side * s.side }\n"
    )
    monkeypatch.setenv("CLEVERAGENTS_HOME", str(tmp_path / "home"))
    host = PluginHost.load(env={})
    config = load_config(cwd=tmp_path, env={})
    database = Database.for_sqlite_file(tmp_path / "home" / "cleveragents.db")
    try:
        RepoIndexingService(database, host.registry, config, workers=1).index_resource(
            RESOURCE_A, root.parent, project="go"
        )
        index = ProjectIndex.open("go", host.registry, config, create=False)
        try:
            source = NodeStoreSource(index.nodes, {RESOURCE_A}, tokenizer=CL100K)
            backends = Corpus(index, source).backends()
            request = ContextRequest(focus=("shapes/shape.go#Shape",), breadth=1)
            fragments = run(BreadthDepthNavigatorStrategy(), request, backends)
        finally:
            index.close()
    finally:
        database.dispose()
    near = {f.uko_node for f in fragments if f.metadata["focus_distance"] == "1"}
    assert uri("shapes/square.go", "Square") in near


# -- arce ------------------------------------------------------------------------------------


def test_arce_delivers_the_loader_for_the_plugin_question(corpus: Corpus) -> None:
    """The file that must change ranks first and the function in question is there in full."""
    fragments = run(ArceStrategy(), ContextRequest(query=PLUGIN_QUESTION), corpus.backends())
    assert files_in_order(fragments)[0] == "cleveragents/plugins.py"
    loader = {f.uko_node: f for f in fragments}[LOAD_ONE]
    assert loader.detail_depth == 9 and "def _load_one" in loader.content


def test_arce_follows_a_traceback(corpus: Corpus) -> None:
    """Paths and frames of a traceback lead to the failing method."""
    fragments = run(ArceStrategy(), ContextRequest(query=TRACEBACK_QUESTION), corpus.backends())
    assert files_in_order(fragments)[0] == "cleveragents/registry.py"
    full = [f for f in fragments if f.detail_depth == 9 and f.uko_node in (RESOLVE, REGISTRY)]
    assert any("def resolve(self)" in f.content and "import_reference" in f.content for f in full)


def test_arce_is_file_aware(corpus: Corpus) -> None:
    """Fragments of the best file rank above all others and come with focus_distance 0."""
    fragments = run(ArceStrategy(), ContextRequest(query=TRACEBACK_QUESTION), corpus.backends())
    best = files_in_order(fragments)[0]
    top = [f for f in fragments if f.provenance.path == best]
    rest = [f for f in fragments if f.provenance.path != best]
    assert max(f.relevance_score for f in top) > max((f.relevance_score for f in rest), default=0)
    assert {f.metadata["focus_distance"] for f in top} == {"0"}


def test_a_dotted_module_is_mentioned_as_its_own_file(corpus: Corpus) -> None:
    """``a.b.c`` names the file of ``c`` (or of ``b`` when ``c`` is defined in it), not the
    packages on the way, which every module of them would otherwise share."""
    backends = corpus.backends()
    view = GraphView(backends.graph, backends.scope)
    question = "Importing cleveragents.models.context and cleveragents.registry.import_reference"
    found = mentions(ContextRequest(query=question), analyze(question), view, backends)
    assert found == [uri("cleveragents/models/context.py"), REGISTRY]


def python_nodes(folder: Path, name: str, source: str) -> dict[str, UKONode]:
    """The Python analyzer's nodes of ``source`` written as ``folder/name``, by qualified
    name (the module's, ``""``, left out)."""
    (folder / name).write_text(source)
    result = PythonAnalyzer().analyze(
        folder / name, source, resource_id=RESOURCE_A, relative_path=name
    )
    return {n.qualname: n for n in result.nodes if n.qualname}


def test_arce_counts_the_attributes_an_init_sets_as_part_of_it(tmp_path: Path) -> None:
    """``self.x = …`` in ``__init__`` is an attribute node of the class, not of the method:
    once ``__init__`` is delivered in full, its lines are not delivered again as attributes."""
    source = "class Spool:\n    size = 3\n\n    def __init__(self):\n        self.capacity = 1\n"
    by_name = python_nodes(tmp_path, "spool.py", source)
    init, capacity = by_name["Spool.__init__"], by_name["Spool.capacity"]
    assert not capacity.uri.startswith(init.uri)  # the case a member test misses
    assert _inside(capacity, init)
    assert not _inside(by_name["Spool.size"], init) and not _inside(init, init)
    assert _inside(init, by_name["Spool"])


def test_a_class_outline_shows_its_one_line_members(tmp_path: Path) -> None:
    """What arce's delivery relies on to leave out a one-line member beside its class's
    outline: the Python analyzer's signatures rendering shows that line as it is."""
    source = (
        "import enum\n\n\nclass Source(enum.Enum):\n    ENVIRONMENT = enum.auto()\n"
        "    DEFAULT = enum.auto()\n\n    def describe(self):\n        return self.name\n"
    )
    by_name = python_nodes(tmp_path, "source.py", source)
    outline = by_name["Source"]
    shown = [(outline, _lines(outline.rendering(DEPTH_SIGNATURES)))]
    assert _shown_by_outline(by_name["Source.ENVIRONMENT"], shown)
    assert _shown_by_outline(by_name["Source.DEFAULT"], shown)
    assert not _shown_by_outline(by_name["Source.describe"], shown)  # a body is more
    assert not _shown_by_outline(by_name["Source.DEFAULT"], [])


def test_a_typing_overload_is_worth_less_than_its_implementation(tmp_path: Path) -> None:
    """The stubs share the implementation's name, so its score: valued at a fraction of
    it, they come after the code that holds the lines to change."""
    source = (
        "import typing as t\n\n\n@t.overload\ndef lookup(name: str) -> str: ...\n\n\n"
        "@t.overload\ndef lookup(name: int) -> int: ...\n\n\n"
        "def lookup(name):\n    return DEFAULTS[name]\n"
    )
    nodes = python_nodes(tmp_path, "lookup.py", source)
    functions = [n for q, n in nodes.items() if q.startswith("lookup")]
    assert len(functions) == 3
    delivery = object.__new__(Delivery)
    delivery.request = ContextRequest(query="lookup")
    delivery.callable_depth = DEPTH_FULL
    values = [delivery._unit(n, "lookup.py", 1.0).value for n in functions]
    assert values[2] == 1.0  # the implementation
    assert values[0] == values[1] < 0.5  # the two stubs
    assert [n.properties.get("overload") for n in functions] == ["true", "true", None]
    # a stub indexed before the analyzer marked overloads: told by its decorator
    legacy = {k: v for k, v in functions[0].properties.items() if k != "overload"}
    unmarked = dataclasses.replace(functions[0], properties=legacy)
    assert delivery._unit(unmarked, "lookup.py", 1.0).value == values[0]


def test_a_typescript_overload_signature_is_worth_less_than_its_implementation() -> None:
    """TypeScript's overloads are signatures the analyzer marks; an interface's method,
    the only declaration of its name, keeps its whole share."""
    from cleveragents_acms.analyzers.treesitter import TypeScriptAnalyzer

    source = (
        "export function pick(key: string): string;\n"
        "export function pick(key: unknown): unknown {\n  return key;\n}\n"
        "export interface Source {\n  read(size: number): string;\n}\n"
    )
    result = TypeScriptAnalyzer().analyze(
        Path("ops.ts"), source, resource_id="01HZZZZZZZZZZZZZZZZZZZZZZZ", relative_path="ops.ts"
    )
    nodes = {n.qualname: n for n in result.nodes}
    delivery = object.__new__(Delivery)
    delivery.request = ContextRequest(query="pick")
    delivery.callable_depth = DEPTH_FULL
    value = {q: delivery._unit(nodes[q], "ops.ts", 1.0).value for q in ("pick", "pick~2")}
    assert value["pick~2"] == 1.0 and value["pick"] < 0.5
    assert delivery._unit(nodes["Source.read"], "ops.ts", 1.0).value == 1.0


def test_the_function_raising_the_quoted_message_ranks_first_in_its_file() -> None:
    """Within a file, the function whose code holds the message the question quotes
    outranks one that merely uses more of the question's words."""
    question = (
        "Reading a table fails for lower-case commands\n\nThe reader should read the "
        "table and its commands in any case, but reading the table raises\n"
        "ValueError: Unrecognized table line: read serr 1 2"
    )

    def function(name: str, body: str) -> UKONode:
        return UKONode(
            uri=uri("tables.py", name),
            uko_type="uko-py:Function",
            name=name,
            path="tables.py",
            start_line=1,
            end_line=3,
            resource_id=RESOURCE_A,
            qualname=name,
            renderings={9: f"def {name}(lines):\n{body}"},
        )

    raising = function(
        "classify",
        "    if not MATCH.match(line):\n"
        '        raise ValueError(f"Unrecognized table line: {line}")',
    )
    reader = function(
        "load",
        "    table = read_table(lines)  # read the table: lower-case commands\n"
        "    commands = read_commands(table, case=True)  # reader\n    return table, commands",
    )
    other = function("write", "    return dump(lines)")
    scorer = LocalScorer(analyze(question), {n.uri: n for n in (raising, reader, other)})
    assert scorer.score(raising) > scorer.score(reader)


@pytest.mark.parametrize("budget", [1, 30, 500, 3000, 12000])
def test_arce_never_exceeds_its_budget(corpus: Corpus, budget: int) -> None:
    """Every budget is respected, and a tiny one yields nothing rather than too much."""
    fragments = run(
        ArceStrategy(), ContextRequest(query=PLUGIN_QUESTION), corpus.backends(), budget
    )
    if budget >= 3000:
        assert len(fragments) > 2


def with_one_vector(corpus: Corpus, embedder: Any, text: str) -> BackendSet:
    """The corpus's backends plus a vector backend holding ``LOAD_ONE`` embedded as ``text``."""
    vector = InMemoryVectorBackend()
    loader = corpus.source.nodes([LOAD_ONE])[LOAD_ONE]
    metadata = {"resource_id": RESOURCE_A, "path": loader.path}
    vector.index_embedding("demo", LOAD_ONE, embedder.embed([text])[0], metadata)
    return dataclasses.replace(
        corpus.backends(), vector=make_backend_set(None, vector, None, [RESOURCE_A]).vector
    )


def test_arce_uses_the_vector_channel_when_present(corpus: Corpus) -> None:
    """With a vector backend and an embedder, its hits join the fusion."""
    embedder = WordEmbedder()
    backends = with_one_vector(corpus, embedder, "plugin fails crash")
    fragments = run(
        ArceStrategy(embedder=embedder), ContextRequest(query="plugin fails crash"), backends
    )
    assert LOAD_ONE in {f.uko_node for f in fragments}


class CountingSearches:
    """A text backend that counts its searches."""

    def __init__(self, inner: Any) -> None:
        self.inner, self.searches = inner, 0

    def search(self, *args: Any, **kwargs: Any) -> Any:
        self.searches += 1
        return self.inner.search(*args, **kwargs)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)


def test_arce_asked_again_in_one_assembly_reuses_its_retrieval(corpus: Corpus) -> None:
    """The pipeline's refill asks the leader again with more tokens: no new searches,
    more of the same files; another assembly retrieves afresh."""
    text = CountingSearches(corpus.backends().text)
    backends = dataclasses.replace(corpus.backends(), text=text)
    request = ContextRequest(query=PLUGIN_QUESTION)
    arce = ArceStrategy()
    with assembly.use(AssemblyServices(tokenizer=CL100K)):
        small = arce.assemble(request, backends, 2000, None)
        searched = text.searches
        large = arce.assemble(request, backends, 6000, None)
    assert searched > 0 and text.searches == searched
    assert sum(f.token_count for f in large) > sum(f.token_count for f in small)
    assert files_in_order(large)[0] == files_in_order(small)[0] == "cleveragents/plugins.py"
    run(arce, request, backends)
    assert text.searches > searched


def test_arce_looks_at_more_files_when_the_budget_allows(corpus: Corpus) -> None:
    """Eight files at most for small budgets; a large budget also glimpses further ones."""
    request = ContextRequest(query=TRACEBACK_QUESTION)
    small = files_in_order(run(ArceStrategy(), request, corpus.backends(), 8000))
    large = files_in_order(run(ArceStrategy(), request, corpus.backends(), 40000))
    assert len(small) <= 8 < len(large)
    assert large[: len(small) // 2] == small[: len(small) // 2]


# -- semantic-embedding ----------------------------------------------------------------------


class WordEmbedder:
    """A tiny bag-of-words embedder for tests (L2-normalised, 64 dimensions)."""

    name = "words"
    dimension = 64
    preference = 1

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        from cleveragents.testing.conformance.strategies import hashed_embedding

        return [hashed_embedding(text, self.dimension) for text in texts]


class SpellingEmbedder(WordEmbedder):
    """Lexical, like hashing-ngram, and with a nearest neighbour for any text."""

    name = "spelling"
    lexical = True

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        return [[1.0] + [0.0] * (self.dimension - 1) for _ in texts]


def test_arce_says_when_only_a_lexical_embedder_found_anything(corpus: Corpus) -> None:
    """Words the code base does not hold still have a lexical embedder's nearest
    neighbours: arce delivers them with a note saying what they are; a question the text
    index answers gets no such note."""
    embedder = SpellingEmbedder()
    backends = with_one_vector(corpus, embedder, "x")
    notes = {}
    for question in ("zzqqxx wwvvyy", PLUGIN_QUESTION):
        services = AssemblyServices(tokenizer=CL100K)
        with assembly.use(services):
            fragments = ArceStrategy(embedder=embedder).assemble(
                ContextRequest(query=question), backends, 3000, None
            )
        assert fragments
        notes[question] = [n for n in services.notes if "alike in spelling" in n]
    assert len(notes["zzqqxx wwvvyy"]) == 1 and not notes[PLUGIN_QUESTION]


def test_semantic_needs_a_vector_backend_and_an_embedder(corpus: Corpus) -> None:
    """Without either it declines; the provider hook supplies the embedder."""
    request = ContextRequest(query=PLUGIN_QUESTION)
    vector = InMemoryVectorBackend()
    for node in corpus.source.nodes([LOAD_ONE, RESOLVE]).values():
        text = node.rendering(4)
        metadata = {"resource_id": RESOURCE_A, "path": node.path}
        vector.index_embedding("demo", node.uri, WordEmbedder().embed([text])[0], metadata)
    backends = dataclasses.replace(
        corpus.backends(), vector=make_backend_set(None, vector, None, [RESOURCE_A]).vector
    )
    strategy = SemanticEmbeddingStrategy()
    assert strategy.can_handle(request, corpus.backends()) == 0.0
    assert strategy.can_handle(request, backends) == 0.0  # no embedder yet
    embedders = Embedders(words=WordEmbedder())
    set_embedder_provider(lambda: choose_embedder(embedders, None)[1])  # type: ignore[index]
    try:
        assert strategy.can_handle(request, backends) > 0.0
        fragments = run(strategy, ContextRequest(query="load one plugin record"), backends)
        assert {f.uko_node for f in fragments} <= {LOAD_ONE, RESOLVE} and fragments
    finally:
        set_embedder_provider(None)


def test_lexical_embedders_are_recognised() -> None:
    """A lexical embedder declares itself, or is known by its hashing name."""
    assert is_lexical(type("E", (), {"name": "hashing-ngram"})())
    assert is_lexical(type("E", (), {"name": "mine", "lexical": True})())
    assert not is_lexical(WordEmbedder())


class Embedders(dict):  # type: ignore[type-arg]
    """A registry with an ``embedder`` slot holding the given embedders."""

    def __init__(self, **embedders: Any) -> None:
        super().__init__(embedders)
        self.embedders = self

    def get_or_error(self, name: str) -> Any:
        return self[name]


def test_choose_embedder_prefers_the_best_registered() -> None:
    """``auto`` takes the highest preference; a name picks exactly that one."""
    low, high = WordEmbedder(), WordEmbedder()
    high.preference = 50  # type: ignore[misc]
    registry = Embedders(low=low, high=high)
    assert choose_embedder(registry, None) == ("high", high)
    assert choose_embedder(registry, {"index.embedding.provider": "low"}) == ("low", low)
    assert choose_embedder(Embedders(), None) is None


# -- scope and fallback ----------------------------------------------------------------------


@pytest.mark.parametrize(
    "strategy",
    [SimpleKeywordStrategy(), BreadthDepthNavigatorStrategy(), ArceStrategy()],
    ids=lambda s: s.name,
)
def test_strategies_never_leave_their_scope(corpus: Corpus, strategy: Any) -> None:
    """Resource B matches the question best, yet scope A never sees it (and B sees only B)."""
    request = ContextRequest(query="plugin crash guard when a plugin raises at import")
    for scope in ([RESOURCE_A], [RESOURCE_B]):
        fragments = run(strategy, request, corpus.backends(scope))
        assert fragments
        assert {f.provenance.resource_id for f in fragments} == set(scope)


def test_the_selector_falls_back_along_the_chain(corpus: Corpus) -> None:
    """arce -> navigator -> keyword as backends disappear, and the notes say so."""
    strategies = [
        ArceStrategy(),
        BreadthDepthNavigatorStrategy(),
        SemanticEmbeddingStrategy(),
        SimpleKeywordStrategy(),
        TemporalArchaeologyStrategy(),
        PlanDecisionContextStrategy(),
    ]
    request = ContextRequest(query=PLUGIN_QUESTION, preferred_strategies=("arce",))
    selector = ConfidenceWeightedSelector()

    def select(backends: BackendSet) -> tuple[list[str], list[str]]:
        services = AssemblyServices(tokenizer=CL100K)
        with assembly.use(services):
            chosen = selector.select(strategies, request, backends)
        return [s.name for s, _ in chosen], services.notes

    names, _ = select(corpus.backends())
    assert names == ["arce"]  # the request named arce: nothing else is mixed in
    assert "semantic-embedding" not in names  # no vector backend
    names, notes = select(corpus.backends(graph=False))
    assert names == ["simple-keyword"]
    assert any("arce needs graph; falling back to simple-keyword" in n for n in notes)
    names, _ = select(corpus.backends(text=False))
    assert names == ["breadth-depth-navigator"]
    names, _ = select(BackendSet(scope=frozenset({RESOURCE_A})))
    assert names == []


def test_strategies_defer_to_the_preferred_one(corpus: Corpus) -> None:
    """Not the preferred strategy: a quarter of the confidence, fragments ranked below."""
    strategy = SimpleKeywordStrategy()
    plain = ContextRequest(query=PLUGIN_QUESTION)
    deferring = ContextRequest(query=PLUGIN_QUESTION, preferred_strategies=("arce",))
    preferred = ContextRequest(query=PLUGIN_QUESTION, preferred_strategies=("simple-keyword",))
    backends = corpus.backends()
    confidence = strategy.can_handle(plain, backends)
    assert strategy.can_handle(deferring, backends) == pytest.approx(confidence * DEFER_FACTOR)
    assert strategy.can_handle(preferred, backends) == pytest.approx(confidence)
    best = max(f.relevance_score for f in run(strategy, plain, backends))
    deferred = max(f.relevance_score for f in run(strategy, deferring, backends))
    assert deferred == pytest.approx(best * DEFER_FACTOR)


def test_a_full_assembly_with_every_strategy(corpus: Corpus) -> None:
    """Through the ten stages: within budget, arce first, the loader in the context."""
    backends = corpus.backends()
    strategies = [
        ArceStrategy(),
        BreadthDepthNavigatorStrategy(),
        SimpleKeywordStrategy(),
        TemporalArchaeologyStrategy(),
    ]
    pipeline = ContextAssemblyPipeline(
        strategies=strategies,
        tokenizer=CL100K,
        renderer=NodeRenderer(backends.nodes),  # type: ignore[arg-type]
    )
    request = ContextRequest(query=PLUGIN_QUESTION, preferred_strategies=("arce",))
    context: AssembledContext = pipeline.assemble(request, backends, 8000)
    assert context.is_within_budget
    assert context.strategies_used[0] == "arce"
    assert any("def _load_one" in f.content for f in context.fragments)


# -- temporal-archaeology --------------------------------------------------------------------


def test_temporal_declines_current_questions(corpus: Corpus) -> None:
    """A current-scope request without history words is not its business."""
    strategy = TemporalArchaeologyStrategy()
    assert strategy.can_handle(ContextRequest(query=PLUGIN_QUESTION), corpus.backends()) == 0.0
    asked = ContextRequest(query="what changed in the plugin loader?")
    assert strategy.can_handle(asked, corpus.backends()) > 0.0
    recent = ContextRequest(query=PLUGIN_QUESTION, temporal=TemporalScope.RECENT)
    assert strategy.can_handle(recent, corpus.backends()) > 0.0
    assert strategy.can_handle(recent, corpus.backends(graph=False)) == 0.0


def test_temporal_delivers_what_changed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """After an edit and a refresh, the retired version comes back as a diff."""
    monkeypatch.setenv("CLEVERAGENTS_HOME", str(tmp_path / "home"))
    root = tmp_path / "app"
    root.mkdir()
    source = root / "billing.py"
    source.write_text(
        "def total(items):\n    return sum(i.price for i in items)\n\n\ndef gone():\n    return 1\n"
    )
    host = PluginHost.load(env={})
    config = load_config(cwd=tmp_path, env={})
    database = Database.for_sqlite_file(tmp_path / "home" / "cleveragents.db")
    service = RepoIndexingService(database, host.registry, config, workers=1)
    service.index_resource(RESOURCE_A, root, project="shop")
    source.write_text("def total(items):\n    return sum(i.price * i.quantity for i in items)\n")
    service.refresh_index(RESOURCE_A, root)
    index = ProjectIndex.open("shop", host.registry, config, create=False)
    try:
        backends = dataclasses.replace(
            make_backend_set(index.text, None, index.graph, [RESOURCE_A]),
            nodes=NodeStoreSource(index.nodes, [RESOURCE_A], tokenizer=CL100K),
        )
        request = ContextRequest(query="what changed in total?", temporal=TemporalScope.RECENT)
        fragments = run(TemporalArchaeologyStrategy(), request, backends)
        changes = {f.metadata["revision_of"]: f for f in fragments}
        total = changes[node_uri(RESOURCE_A, "billing.py", "total")]
        assert "-    return sum(i.price for i in items)" in total.content
        assert "+    return sum(i.price * i.quantity for i in items)" in total.content
        assert total.metadata["is_current"] == "false" and total.uko_node.startswith(
            node_uri(RESOURCE_A, "billing.py", "total") + "@"
        )
        removed = changes[node_uri(RESOURCE_A, "billing.py", "gone")]
        assert removed.metadata["change"] == "removed" and "def gone" in removed.content
        outside = run(
            TemporalArchaeologyStrategy(),
            request,
            dataclasses.replace(
                backends,
                scope=frozenset({RESOURCE_B}),
                nodes=NodeStoreSource(index.nodes, [RESOURCE_B], tokenizer=CL100K),
            ),
        )
        assert outside == []
    finally:
        index.close()
        database.dispose()


# -- plan-decision-context -------------------------------------------------------------------


@dataclasses.dataclass
class PlanContext:
    plan_id: str
    decisions: list[Any]
    parent: PlanContext | None = None
    parent_context: AssembledContext | None = None


def test_plan_decisions_walk_the_hierarchy() -> None:
    """Own decisions first, ancestors after, superseded ones last; none without a plan."""
    grandparent = PlanContext(
        "plan-root",
        [
            Decision(
                decision_id="d1",
                plan_id="plan-root",
                decision_type="architecture",
                summary="Use async patterns for all auth operations",
            )
        ],
    )
    parent = PlanContext(
        "plan-auth",
        [
            Decision(
                decision_id="d2",
                plan_id="plan-auth",
                decision_type="compat",
                summary="Keep sync callers working",
                superseded_by="d3",
            ),
            {
                "decision_id": "d3",
                "plan_id": "plan-auth",
                "decision_type": "compat",
                "summary": "Offer a sync wrapper for auth callers",
                "rationale": "old clients",
            },
        ],
        parent=grandparent,
    )
    child = PlanContext("plan-token", [], parent=parent)
    strategy = PlanDecisionContextStrategy()
    request = ContextRequest(query="how should the auth token refresh be written?")
    empty = BackendSet(scope=frozenset({RESOURCE_A}))
    assert strategy.can_handle(request, empty) == 0.0
    with publish_plan_context(child):
        assert strategy.can_handle(request, empty) > 0.0
    fragments = run(strategy, request, empty, 1000, child)
    order = [f.uko_node.rsplit(":", 1)[1] for f in by_relevance(fragments)]
    assert order == ["d3", "d1", "d2"]
    assert all(f.uko_node.startswith("urn:cleveragents:decision:") for f in fragments)
    assert (
        "Superseded by decision d3"
        in {f.uko_node: f for f in fragments}["urn:cleveragents:decision:d2"].content
    )
    assert run(strategy, request, empty, 1000, None) == []
    assert sum(f.token_count for f in run(strategy, request, empty, 25, child)) <= 25
