"""How arce's delivery spends a small budget: whole functions of the likeliest file first."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from types import SimpleNamespace
from typing import Any

from cleveragents.models.uko import DEPTH_FULL, DEPTH_MEMBERS, DEPTH_OUTLINE, DEPTH_SIGNATURES
from cleveragents.testing.factories import make_fragment
from cleveragents_acms.strategies._delivery import Delivery, _frame_floors, _Unit
from cleveragents_acms.strategies._support import BudgetFiller
from cleveragents_acms.strategies.query import analyze

BEST = "r/best.py"
OTHER = "r/other.py"


class _Filler:
    """Takes a unit at the first of the offered depths whose size fits (as BudgetFiller)."""

    def __init__(
        self,
        budget: int,
        sizes: Mapping[str, Mapping[int, int]],
        texts: Mapping[str, str] | None = None,
    ) -> None:
        self.budget = budget
        self.sizes = sizes
        self.texts = texts or {}
        self.fragments: list[Any] = []
        self.reasons: dict[str, str] = {}  # left out: URI -> why

    @property
    def remaining(self) -> int:
        return self.budget - sum(f.token_count for f in self.fragments)

    def __contains__(self, uri: object) -> bool:
        return any(f.uko_node == uri for f in self.fragments)

    def offer(
        self,
        uri: str,
        depths: Sequence[int],
        relevance: float,
        *,
        metadata: Mapping[str, str] | None = None,
        limit: int | None = None,
        node: Any = None,
    ) -> Any:
        room = self.remaining if limit is None else min(self.remaining, limit)
        for depth in depths:
            tokens = self.sizes.get(uri, {}).get(depth)
            if tokens is not None and tokens <= room:
                fragment = _Fragment(
                    uko_node=uri,
                    detail_depth=depth,
                    token_count=tokens,
                    relevance_score=relevance,
                    content=self.texts.get(uri, ""),
                    metadata={},
                )
                self.fragments.append(fragment)
                return fragment
        return None

    def annotate(self, uri: str, metadata: Mapping[str, str]) -> None:
        for fragment in self.fragments:
            if fragment.uko_node == uri:
                fragment.metadata = {**fragment.metadata, **metadata}

    def left_out(self, uri: str, depth: int, *, node: Any = None, reason: str = "") -> None:
        self.reasons[uri] = reason

    def withdraw(self, uri: str) -> None:
        self.fragments[:] = [f for f in self.fragments if f.uko_node != uri]


class _Fragment(SimpleNamespace):
    def model_copy(self, *, update: Mapping[str, Any]) -> _Fragment:
        return _Fragment(**{**vars(self), **update})


_TYPES = {"outline": "uko-oo:Class", "node": "uko-func:Function", "file": "uko-code:Module"}


def _fragments(
    budget: int,
    units: list[_Unit],
    probability: dict[str, float],
    sizes: Mapping[str, Mapping[int, int]],
    *,
    texts: Mapping[str, str] | None = None,
    types: Mapping[str, str] | None = None,
    filler: _Filler | None = None,
) -> list[Any]:
    """What ``_take`` delivers; ``texts`` are the fragments' contents (and a node's full
    text), ``types`` a unit's UKO type when its kind does not say it."""
    delivery = object.__new__(Delivery)
    delivery.budget = budget
    delivery.filler = filler or _Filler(budget, sizes, texts)
    known_texts, known_types = texts or {}, types or {}
    # no line ranges: containment is by URI alone here
    nodes = {
        u.uri: SimpleNamespace(
            uri=u.uri,
            name=u.uri.rsplit("#", 1)[-1].rsplit(".", 1)[-1],
            qualname=u.uri.rsplit("#", 1)[-1],
            path=u.file,
            start_line=0,
            end_line=0,
            uko_type=known_types.get(u.uri, _TYPES[u.kind]),
            rendering=lambda depth, uri=u.uri: known_texts.get(uri, ""),
        )
        for u in units
    }
    return delivery._take(units, list(probability), probability, nodes)  # type: ignore[arg-type]


def _deliver(
    budget: int,
    units: list[_Unit],
    probability: dict[str, float],
    sizes: Mapping[str, Mapping[int, int]],
) -> dict[str, int]:
    return {f.uko_node: f.detail_depth for f in _fragments(budget, units, probability, sizes)}


def _function(file: str, name: str, value: float) -> _Unit:
    return _Unit(f"{file}#{name}", file, value, DEPTH_FULL, "node")


def test_a_runner_up_file_may_not_spend_half_a_small_budget_on_one_function() -> None:
    """What one unit may cost scales with its file's probability."""
    units = [
        _function(BEST, "parse", 1.0),
        _function(OTHER, "convert", 0.9),  # the runner-up's hedge
        _function(BEST, "read", 0.5),
    ]
    sizes = {
        f"{BEST}#parse": {DEPTH_FULL: 1500, DEPTH_OUTLINE: 100},
        f"{OTHER}#convert": {DEPTH_FULL: 1000, DEPTH_OUTLINE: 60, DEPTH_SIGNATURES: 20},
        f"{BEST}#read": {DEPTH_FULL: 1400, DEPTH_OUTLINE: 100},
    }
    delivered = _deliver(4000, units, {BEST: 1.0, OTHER: 0.3}, sizes)
    assert delivered[f"{BEST}#parse"] == DEPTH_FULL
    assert delivered[f"{BEST}#read"] == DEPTH_FULL  # the best file's second function, whole
    assert delivered[f"{OTHER}#convert"] < DEPTH_FULL  # the runner-up: still in sight, cheaply
    # with a budget large enough, the runner-up's function comes whole as well
    delivered = _deliver(16000, units, {BEST: 1.0, OTHER: 0.3}, sizes)
    assert set(delivered.values()) == {DEPTH_FULL}


def test_files_keep_their_order_when_fragments_are_sorted_by_relevance() -> None:
    """A file's best delivered unit carries the file's belief whole: a likelier file whose
    best function did not fit (only a weaker one did) still ranks above a less likely
    file's function, however high that function's share of its own file."""
    third = "r/third.py"
    units = [
        _function(BEST, "parse", 1.0),
        _function(OTHER, "huge", 0.5),  # too big: only the small one below comes
        _function(third, "convert", 0.4),  # all of its file's evidence
        _function(OTHER, "small", 0.01),
    ]
    sizes = {
        f"{BEST}#parse": {DEPTH_FULL: 500},
        f"{OTHER}#huge": {DEPTH_FULL: 5000},
        f"{OTHER}#small": {DEPTH_FULL: 50},
        f"{third}#convert": {DEPTH_FULL: 100},
    }
    probability = {BEST: 1.0, OTHER: 0.5, third: 0.4}
    relevance = {f.uko_node: f.relevance_score for f in _fragments(4000, units, probability, sizes)}
    assert f"{OTHER}#huge" not in relevance
    order = sorted(relevance, key=lambda uri: -relevance[uri])
    assert [uri.split("#")[0] for uri in order] == [BEST, OTHER, third]
    assert relevance[f"{BEST}#parse"] == 1.0
    assert 0.5 < relevance[f"{third}#convert"] < relevance[f"{OTHER}#small"] < 1.0


def test_a_function_too_long_to_fit_whole_gets_only_a_short_outline() -> None:
    units = [
        _function(BEST, "huge", 1.0),
        _function(BEST, "long_outline", 0.9),
        _function(BEST, "next", 0.8),
    ]
    sizes = {
        f"{BEST}#huge": {DEPTH_FULL: 9000, DEPTH_OUTLINE: 80},
        f"{BEST}#long_outline": {DEPTH_FULL: 9000, DEPTH_OUTLINE: 1500},
        f"{BEST}#next": {DEPTH_FULL: 1800, DEPTH_OUTLINE: 100},
    }
    delivered = _deliver(4000, units, {BEST: 1.0}, sizes)
    assert delivered[f"{BEST}#huge"] == DEPTH_OUTLINE  # a short outline is a cheap glimpse
    assert f"{BEST}#long_outline" not in delivered  # a long one would crowd out ...
    assert delivered[f"{BEST}#next"] == DEPTH_FULL  # ... the next function in full


def test_a_large_class_outline_does_not_take_a_small_budget() -> None:
    """A class's member list costs a tenth of the budget at most: bodies are worth more."""
    units = [
        _Unit(f"{BEST}#Printer", BEST, 0.9, DEPTH_SIGNATURES, "outline"),
        _function(BEST, "print_vector", 0.8),
    ]
    sizes = {
        f"{BEST}#Printer": {DEPTH_SIGNATURES: 1600, DEPTH_MEMBERS: 1400},
        f"{BEST}#print_vector": {DEPTH_FULL: 1000, DEPTH_OUTLINE: 100},
    }
    delivered = _deliver(4000, units, {BEST: 1.0}, sizes)
    assert delivered == {f"{BEST}#print_vector": DEPTH_FULL}
    # with room to spare, the outline comes too
    delivered = _deliver(32000, units, {BEST: 1.0}, sizes)
    assert delivered[f"{BEST}#Printer"] == DEPTH_SIGNATURES


def test_a_one_line_member_is_not_repeated_beside_its_class_outline() -> None:
    """An enum member or attribute is one line that its class's outline already shows:
    delivered before the outline, it is taken back out; after it, it is not offered."""
    cls = f"{BEST}#Source"
    units = [
        _Unit(f"{cls}.ENVIRONMENT", BEST, 0.95, DEPTH_FULL, "node"),  # before the outline
        _Unit(cls, BEST, 0.9, DEPTH_SIGNATURES, "outline"),
        _Unit(f"{cls}.DEFAULT", BEST, 0.5, DEPTH_FULL, "node"),  # after it
        _Unit(f"{cls}.hidden", BEST, 0.4, DEPTH_FULL, "node"),  # not in the outline
    ]
    texts = {
        cls: "class Source(enum.Enum):\n    ENVIRONMENT = enum.auto()\n    DEFAULT = enum.auto()",
        f"{cls}.ENVIRONMENT": "    ENVIRONMENT = enum.auto()",
        f"{cls}.DEFAULT": "    DEFAULT = enum.auto()",
        f"{cls}.hidden": "    hidden: bool = False",
    }
    sizes = {uri: {DEPTH_FULL: 10, DEPTH_SIGNATURES: 30} for uri in texts}
    member = "uko-py:EnumMember"
    types = {f"{cls}.{name}": member for name in ("ENVIRONMENT", "DEFAULT", "hidden")}
    fragments = _fragments(4000, units, {BEST: 1.0}, sizes, texts=texts, types=types)
    assert [f.uko_node for f in fragments] == [cls, f"{cls}.hidden"]


PYTEST_TRACEBACK = """Rewrite fails when the first expression is a number

```
/usr/lib/python3.8/site-packages/_pytest/assertion/rewrite.py:413: in rewrite_asserts
    AssertionRewriter(module_path, config, source).run(mod)
/usr/lib/python3.8/site-packages/_pytest/assertion/rewrite.py:695: in run
    if self.is_rewrite_disabled(doc):
/usr/lib/python3.8/site-packages/_pytest/assertion/rewrite.py:760: in is_rewrite_disabled
    return "PYTEST_DONT_REWRITE" in docstring
E   TypeError: argument of type 'int' is not iterable
```
"""


def test_pytest_style_frames_are_read_like_python_ones() -> None:
    """``path.py:695: in run`` is a frame: its file is a path, its function a trace function."""
    analysis = analyze(PYTEST_TRACEBACK)
    assert analysis.trace_functions == ["rewrite_asserts", "run", "is_rewrite_disabled"]
    assert "_pytest/assertion/rewrite.py" in analysis.paths
    assert analysis.trace_frames[-1] == ("_pytest/assertion/rewrite.py", "is_rewrite_disabled")


IPYTHON_TRACEBACK = """Adding points fails in a notebook

```
~/.venv/lib/python3.6/site-packages/sympy/geometry/point.py in __add__(self, other)
    219         try:
--> 220             s, o = Point._normalize_dimension(self, Point(other, evaluate=False))
/usr/lib/python2.7/site-packages/mpl_toolkits/mplot3d/art3d.pyc in get_facecolors(self)
--> 636         return self._facecolors2d
File ~/.venv/lib/python3.11/site-packages/sympy/core/add.py:412, in Add.flatten(cls, seq)
[c:\\py\\seaborn\\axisgrid.py](file:///C:/py/site-packages/seaborn/axisgrid.py) in map_diag(self)
TypeError: unsupported operand
```
"""


def test_ipython_style_frames_are_read_like_python_ones() -> None:
    """Notebook tracebacks (classic, Python 2's ``.pyc``, IPython 8's ``File …:N, in``, VS
    Code's linked paths) are frames: their files are paths, their functions trace functions
    (a method by its name)."""
    analysis = analyze(IPYTHON_TRACEBACK)
    assert analysis.trace_functions == ["__add__", "get_facecolors", "flatten", "map_diag"]
    assert analysis.trace_frames[1] == ("mpl_toolkits/mplot3d/art3d.py", "get_facecolors")
    assert analysis.trace_frames[2] == ("sympy/core/add.py", "flatten")
    assert analysis.trace_frames[3] == ("seaborn/axisgrid.py", "map_diag")
    assert "sympy/geometry/point.py" in analysis.paths
    # prose naming a file and a line is not a frame
    assert analyze("At query.py in 745 line there is a snippet").trace_frames == []


class _Scores:
    def __init__(self, scores: Mapping[str, float]) -> None:
        self.scores = scores

    def score(self, node: Any) -> float:
        return self.scores[node.uri]


def test_the_functions_a_traceback_passes_through_get_a_high_share() -> None:
    """Frames in the file rank near its best member, the innermost highest; others keep theirs."""
    path = "src/_pytest/assertion/rewrite.py"
    names = ("helper", "run", "is_rewrite_disabled", "rewrite_asserts")
    nodes = {
        f"{path}#{n}": SimpleNamespace(uri=f"{path}#{n}", name=n, path=path, uko_type="uko:Method")
        for n in names
    }
    lexical = _Scores(dict(zip(nodes, (1.0, 0.1, 0.1, 0.1), strict=True)))
    frames = _frame_floors(analyze(PYTEST_TRACEBACK))
    shares = Delivery._shares(list(nodes), nodes, {}, lexical, {}, frames)  # type: ignore[arg-type]
    assert shares[f"{path}#helper"] == 1.0
    assert shares[f"{path}#is_rewrite_disabled"] == 1.0  # innermost frame
    assert shares[f"{path}#run"] == 0.9 > shares[f"{path}#rewrite_asserts"] >= 0.6
    # a function of the same name in another file is not a frame
    other = SimpleNamespace(uri="x.py#run", name="run", path="x.py", uko_type="uko:Method")
    shares = Delivery._shares(
        ["x.py#run", f"{path}#helper"],
        {"x.py#run": other, f"{path}#helper": nodes[f"{path}#helper"]},
        {},
        _Scores({"x.py#run": 0.1, f"{path}#helper": 1.0}),
        {},
        frames,
    )  # type: ignore[arg-type]
    assert shares["x.py#run"] == 0.1


def test_a_class_comes_with_its_docstring_when_the_outline_share_allows() -> None:
    """A class's outline is its docstring and signatures when that fits a tenth of the
    budget, else its signatures alone."""
    cls = f"{BEST}#Ridge"
    units = [_Unit(cls, BEST, 0.9, DEPTH_OUTLINE, "outline")]
    sizes = {cls: {DEPTH_OUTLINE: 900, DEPTH_SIGNATURES: 200, DEPTH_MEMBERS: 40}}
    assert _deliver(4000, units, {BEST: 1.0}, sizes) == {cls: DEPTH_SIGNATURES}
    assert _deliver(16000, units, {BEST: 1.0}, sizes) == {cls: DEPTH_OUTLINE}


def test_a_withdrawn_fragment_gives_its_tokens_back() -> None:
    """BudgetFiller.withdraw: the fragment leaves, its tokens are free again, and the same
    node may be offered anew; withdrawing what is not there changes nothing."""
    filler = BudgetFiller(None, 100, "arce")  # type: ignore[arg-type]
    member = make_fragment("uko://r/a.py#Source.DEFAULT", "DEFAULT = 1", token_count=30)
    other = make_fragment("uko://r/a.py#describe", "def describe(): ...", token_count=50)
    assert filler.add(member, 0.9) is not None and filler.add(other, 0.8) is not None
    assert filler.remaining == 20
    filler.withdraw(member.uko_node)
    assert [f.uko_node for f in filler.fragments] == [other.uko_node]
    assert filler.remaining == 50 and member.uko_node not in filler
    filler.withdraw(member.uko_node)
    assert filler.remaining == 50
    assert filler.add(member, 0.9) is not None and filler.remaining == 20


def test_a_near_copy_of_a_function_delivered_in_full_is_left_out_with_the_reason() -> None:
    """Nine in ten lines the same, names and ``async``/``await`` aside: left out, naming the
    function it repeats. One line in eight different is a different function."""

    def method(name: str, verb: str, *, twin: bool = False, changed: str = "") -> str:
        wait = "await " if twin else ""
        return (
            f"{'async ' if twin else ''}def {name}(self, url, params=None):\n"
            f'    """Send a {name.upper()} request."""\n'
            f"    return {wait}self.request(\n"
            f'        "{verb}",\n        url,\n        params=params,\n'
            f"        {changed or 'follow_redirects=True,'}\n    )\n"
        )

    texts = {
        f"{BEST}#Client.get": method("get", "GET"),
        f"{BEST}#Client.head": method("head", "HEAD"),
        f"{BEST}#AsyncClient.get": method("get", "GET", twin=True),
        f"{BEST}#Client.post": method("post", "POST", changed="follow_redirects=False,"),
    }
    units = [_function(BEST, name.split("#")[1], 1.0 - i / 10) for i, name in enumerate(texts)]
    sizes = {u: {DEPTH_FULL: 50, DEPTH_SIGNATURES: 10} for u in texts}
    filler = _Filler(1000, sizes, texts)
    delivered = _fragments(1000, units, {BEST: 1.0}, sizes, texts=texts, filler=filler)
    assert {f.uko_node.split("#")[1] for f in delivered} == {"Client.get", "Client.post"}
    get = next(f for f in delivered if f.uko_node.endswith("#Client.get"))
    assert get.metadata == {"near_copies": "Client.head, AsyncClient.get"}
    assert filler.reasons == {
        f"{BEST}#Client.head": "a near copy of Client.get, delivered in full: "
        "8 of its 8 lines the same, names aside",
        f"{BEST}#AsyncClient.get": "a near copy of Client.get, delivered in full: "
        "8 of its 8 lines the same, names aside",
    }
