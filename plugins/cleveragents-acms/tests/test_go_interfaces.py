"""Go's implicit interfaces: the ``uko-oo:implements`` edges derived from a package."""

from __future__ import annotations

import textwrap
from pathlib import Path

from cleveragents.models.uko import UKONode, node_uri
from cleveragents_acms.analyzers.treesitter import GoAnalyzer
from cleveragents_acms.indexing.go_interfaces import (
    _signature,
    add_implementations,
    package_facts,
)
from cleveragents_acms.indexing.resolve import resolve_edges

RESOURCE = "01HZZZZZZZZZZZZZZZZZZZZZZZ"
IMPLEMENTS = "uko-oo:implements"

SHAPE = """\
    package shapes

    import "io"

    type Shape interface {
        Area() float64
        Perimeter() float64
    }

    // Solid embeds Shape, declared above.
    type Solid interface {
        Shape
        Volume() float64
    }

    type Named interface {
        io.Reader
        Name() string
    }

    type Number interface {
        ~int | ~float64
    }

    type Empty interface{}
"""

SQUARE = """\
    package shapes

    import "sync"

    type Square struct {
        Side float64
    }

    func (s Square) Area() float64 { return s.Side * s.Side }

    type Cube struct {
        Square
    }

    func (c Cube) Volume() float64 { return c.Side * c.Area() }

    type Celsius float64

    func (c Celsius) Area() float64 { return 0 }

    type Locked struct {
        sync.Mutex
    }
"""

# Square's second method, in another file; a generic type's methods.
EXTRA = """\
    package shapes

    func (s *Square) Perimeter() float64 { return 4 * s.Side }

    type Box[T any] struct{ items []T }

    func (b Box[T]) Area() float64 { return 0 }

    func (b *Box[T]) Perimeter() float64 { return 0 }

    func (l Locked) Name() string { return "" }

    func (l Locked) Read(p []byte) (int, error) { return 0, nil }
"""


def analysed(files: dict[str, str]) -> list[UKONode]:
    analyzer = GoAnalyzer()
    nodes: list[UKONode] = []
    for relative, source in files.items():
        result = analyzer.analyze(
            Path(relative),
            textwrap.dedent(source),
            resource_id=RESOURCE,
            relative_path=relative,
        )
        assert result.errors == []
        nodes.extend(result.nodes)
    resolve_edges(nodes)
    return nodes


def implementations(nodes: list[UKONode]) -> dict[str, list[str]]:
    return {
        n.qualname: sorted(t.rpartition("#")[2] for p, t in n.edges if p == IMPLEMENTS)
        for n in nodes
        if any(p == IMPLEMENTS for p, _ in n.edges)
    }


def test_a_type_implements_the_interfaces_of_its_package_whose_methods_it_has() -> None:
    """Methods declared in other files count, and those promoted from the package's
    embedded types; interfaces embed interfaces. Left out: an interface embedding an
    imported one (its methods are unknown), an empty one and a constraint."""
    files = {"shapes/shape.go": SHAPE, "shapes/square.go": SQUARE, "shapes/extra.go": EXTRA}
    nodes = analysed(files)
    assert add_implementations(nodes) == 4
    assert implementations(nodes) == {
        "Square": ["Shape"],
        "Cube": ["Shape", "Solid"],  # Square's two methods, promoted, and its own Volume
        "Box": ["Shape"],  # ``Box[T]`` receivers are Box's methods
    }
    edges = {t for n in nodes for p, t in n.edges if p == IMPLEMENTS}
    assert node_uri(RESOURCE, "shapes/shape.go", "Solid") in edges


def test_each_file_s_types_get_their_edges_from_the_package_s_other_files() -> None:
    """What a refresh does: the run holds one file, the package's other files come from
    the store; the edges are those the whole package gives. Types of another folder are
    another package."""
    files = {"shapes/shape.go": SHAPE, "shapes/square.go": SQUARE, "shapes/extra.go": EXTRA}
    whole = analysed(files)
    add_implementations(whole)
    run = analysed({"shapes/square.go": SQUARE})
    stored = [n for n in analysed(files) if n.path != "shapes/square.go"]
    add_implementations(run, stored)
    assert implementations(run) == {"Square": ["Shape"], "Cube": ["Shape", "Solid"]}
    elsewhere = analysed({"other/square.go": SQUARE.replace("shapes", "other")})
    assert add_implementations(elsewhere, stored) == 0


def test_types_declared_twice_for_two_platforms_each_implement_both_declarations() -> None:
    """Build constraints give a package one declaration of a name per platform: each
    type declaration gets the edges, to each declaration of the interface."""
    unix = "package p\n\ntype Handle struct{}\n\nfunc (h Handle) Close() error { return nil }\n"
    closer = "package p\n\ntype Closer interface {\n\tClose() error\n}\n"
    nodes = analysed(
        {
            "p/handle_unix.go": unix,
            "p/handle_windows.go": unix,
            "p/closer_unix.go": closer,
            "p/closer_windows.go": closer,
        }
    )
    assert add_implementations(nodes) == 4
    targets = {
        n.path: sorted(t for p, t in n.edges if p == IMPLEMENTS)
        for n in nodes
        if n.qualname == "Handle"
    }
    wanted = [node_uri(RESOURCE, f"p/closer_{os}.go", "Closer") for os in ("unix", "windows")]
    assert targets == {"p/handle_unix.go": wanted, "p/handle_windows.go": wanted}


def test_package_facts_compare_stored_and_new_nodes_alike() -> None:
    """A file's declarations as the analyzer gives them and as they are stored (their
    embeddings resolved) are equal facts; a method more, or an embedding less, is not."""
    tall = "package shapes\n\ntype Tall struct {\n\tSquare\n\tShape\n}\n"  # of other files
    files = {"shapes/shape.go": SHAPE, "shapes/square.go": SQUARE, "shapes/tall.go": tall}
    raw = [
        n
        for relative, source in files.items()
        for n in GoAnalyzer()
        .analyze(
            Path(relative), textwrap.dedent(source), resource_id=RESOURCE, relative_path=relative
        )
        .nodes
    ]
    resolved = analysed(files)
    assert package_facts(raw) == package_facts(resolved)
    facts = package_facts(raw)["shapes"]
    assert {("shapes", "embeds", "Cube", "Square"), ("shapes", "embeds", "Tall", "Shape")} <= facts
    tall_edges = [t for n in raw if n.qualname == "Tall" for p, t in n.edges if "inherits" in p]
    assert tall_edges == ["symbol:go:shapes.Square", "symbol:go:shapes.Shape"]  # not resolved
    more = analysed(
        {
            **files,
            "shapes/square.go": SQUARE + "\nfunc (s Square) Perimeter() float64 { return 0 }\n",
        }
    )
    assert package_facts(more) != package_facts(resolved)
    less = analysed(
        {**files, "shapes/square.go": SQUARE.replace("    Square\n", "    sq Square\n")}
    )
    assert package_facts(less) != package_facts(resolved)


def test_test_inputs_and_external_test_packages_are_packages_of_their_own() -> None:
    """The go tool leaves out ``testdata`` (each file a program of its own, many declaring
    the same names); a folder's ``p_test`` files are another package than its ``p``."""
    closer = "package p\n\ntype Closer interface {\n\tClose() error\n}\n"
    handle = (
        "package {}\n\ntype Handle struct{{}}\n\nfunc (h Handle) Close() error {{ return nil }}\n"
    )
    nodes = analysed(
        {
            "p/closer.go": closer,
            "p/handle_test.go": handle.format("p_test"),
            "p/testdata/a.go": closer + handle.format("p")[len("package p") :],
        }
    )
    assert add_implementations(nodes) == 0
    same = analysed({"p/closer.go": closer, "p/handle.go": handle.format("p")})
    assert add_implementations(same) == 1


def test_a_method_of_the_name_with_other_parameters_or_results_does_not_count() -> None:
    """Signatures are compared by their types as written (parameter names and spacing
    aside, ``a, b int`` as two ``int``): ``match(path string)`` is not
    ``match(data []byte, n int) string``."""
    sig = (
        "package p\n\ntype sig interface {\n\tmatch(data []byte, n int) string\n"
        "\tRead(p []byte) (n int, err error)\n}\n"
    )
    types = (
        "package p\n\ntype Mux struct{}\n\n"
        "func (m *Mux) match(path string) (h int, pattern string) { return 0, path }\n\n"
        "func (m *Mux) Read(p []byte) (int, error) { return 0, nil }\n\n"
        "type exact struct{}\n\n"
        'func (e exact) match(b []byte, firstNonWS int) string { return "" }\n\n'
        "func (e exact) Read(buf []byte) (count int, failure error) { return 0, nil }\n\n"
        "type grouped struct{}\n\n"
        'func (g grouped) match(data []byte, n int) string { return "" }\n\n'
        "func (g grouped) Read(p []byte) (n int, err error) { return 0, nil }\n"
    )
    nodes = analysed({"p/sig.go": sig, "p/types.go": types})
    assert add_implementations(nodes) == 2
    assert implementations(nodes) == {"exact": ["sig"], "grouped": ["sig"]}


def test_signatures_as_read() -> None:
    def method(signature: str, name: str) -> UKONode:
        return UKONode(
            uri="u", uko_type="uko-oo:Method", name=name, path="p/a.go", start_line=1,
            end_line=1, resource_id=RESOURCE, properties={"signature": signature},
        )  # fmt: skip

    cases = {
        ("func (s *S) Read(p []byte) (n int, err error)", "Read"): "([]byte)(int,error)",
        ("Read(p []byte) (int, error)", "Read"): "([]byte)(int,error)",
        ("func (b Box[T]) Map(f func(a, b T) T, xs ...T) []T", "Map"): "(func(a,bT)T,...T)([]T)",
        ("Less(i, j int) bool", "Less"): "(int,int)(bool)",
        ("Do(ch chan<- int, m map[string]int)", "Do"): "(chan<-int,map[string]int)()",
        ("Close()", "Close"): "()()",
        ("Wait(chan int)", "Wait"): "(chanint)()",
        ("Broken(a b c", "Broken"): None,
        ("Other()", "Close"): None,
    }
    for (signature, name), wanted in cases.items():
        assert _signature(method(signature, name)) == wanted, signature
