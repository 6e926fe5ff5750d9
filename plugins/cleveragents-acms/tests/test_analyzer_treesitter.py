"""The tree-sitter analyzers: TypeScript/TSX, JavaScript, Go, Rust and Java."""

from __future__ import annotations

import json
import sysconfig
import textwrap
from pathlib import Path

import pytest

from cleveragents.models.uko import (
    DEPTH_FULL,
    DEPTH_MEMBERS,
    DEPTH_NAME,
    DEPTH_OUTLINE,
    DEPTH_SIGNATURES,
    AnalysisResult,
    UKONode,
    node_uri,
)
from cleveragents_acms.analyzers.treesitter import (
    GoAnalyzer,
    JavaAnalyzer,
    JavaScriptAnalyzer,
    RustAnalyzer,
    TreeSitterAnalyzer,
    TypeScriptAnalyzer,
    grammar,
)

RESOURCE = "01HZZZZZZZZZZZZZZZZZZZZZZZ"


def analyze(analyzer: TreeSitterAnalyzer, relative: str, source: str) -> AnalysisResult:
    return analyzer.analyze(
        Path(relative), textwrap.dedent(source), resource_id=RESOURCE, relative_path=relative
    )


def nodes_of(analyzer: TreeSitterAnalyzer, relative: str, source: str) -> dict[str, UKONode]:
    result = analyze(analyzer, relative, source)
    assert result.errors == []
    check_tree(result.nodes, relative)
    return {n.qualname: n for n in result.nodes}


def check_tree(nodes: list[UKONode], relative: str) -> None:
    """URIs follow node_uri; parents exist and enclose children (Go methods: their type)."""
    by_uri = {n.uri: n for n in nodes}
    assert len(by_uri) == len(nodes)
    assert nodes[0].qualname == "" and nodes[0].parent is None
    for node in nodes:
        assert node.uri == node_uri(RESOURCE, relative, node.qualname)
        assert 1 <= node.start_line <= node.end_line
        if node.parent is not None:
            parent = by_uri[node.parent]
            if parent.uko_type == "uko-proc:Struct" and node.uko_type == "uko-oo:Method":
                continue  # a Go method belongs to its receiver type, declared elsewhere
            assert parent.start_line <= node.start_line <= node.end_line <= parent.end_line


def uri(relative: str, qualname: str) -> str:
    return node_uri(RESOURCE, relative, qualname)


TYPESCRIPT = """\
import { readFile } from "fs/promises";
import * as path from "node:path";
import Store, { Item as StoreItem } from "../store/index";

/**
 * Greets people.
 * Keeps a count.
 */
@Injectable()
export class Greeter<T extends Named> extends Base implements Speaker {
  private count: number = 0;

  /** Makes a greeter. */
  constructor(private readonly store: Store) {
    super();
  }

  /** Greets `who` politely. */
  async greet(who: T, loud?: boolean): Promise<string> {
    this.count += 1;
    const text = format(who.name);
    return this.shout(text, loud);
  }

  private shout(text: string, loud = false): string {
    return loud ? text.toUpperCase() : text;
  }
}

export interface Speaker {
  /** Say something. */
  greet(who: Named): Promise<string>;
  readonly volume: number;
}

export type Named = { name: string };
export enum Level { Low = 1, High }

export function format(name: string): string {
  return path.basename(name);
}

export const load = async (file: string): Promise<StoreItem> =>
  JSON.parse(await readFile(file, "utf8"));

namespace Internal {
  export function helper(): void {}
}
"""


def test_typescript_declarations_signatures_and_docs() -> None:
    """Classes, interfaces, aliases, enums, functions, arrow functions and namespaces."""
    rel = "src/app/greeter.ts"
    nodes = nodes_of(TypeScriptAnalyzer(), rel, TYPESCRIPT)
    module = nodes[""]
    assert module.uko_type == "uko-ts:Module"
    greeter = nodes["Greeter"]
    assert greeter.uko_type == "uko-ts:Class"
    assert greeter.properties["signature"] == (
        "@Injectable() export class Greeter<T extends Named> extends Base implements Speaker"
    )
    assert greeter.properties["docstring"] == "Greets people.\nKeeps a count."
    assert greeter.start_line == 9  # decorators are part of the range, the doc comment is not
    assert nodes["Greeter.greet"].uko_type == "uko-ts:Method"
    assert nodes["Greeter.greet"].properties["signature"] == (
        "async greet(who: T, loud?: boolean): Promise<string>"
    )
    assert nodes["Greeter.greet"].properties["docstring"] == "Greets `who` politely."
    assert nodes["Greeter.constructor"].properties["docstring"] == "Makes a greeter."
    assert nodes["Greeter.count"].uko_type == "uko-ts:Property"
    assert nodes["Speaker"].uko_type == "uko-ts:Interface"
    assert nodes["Speaker.greet"].properties["docstring"] == "Say something."
    assert nodes["Speaker.volume"].properties["signature"] == "readonly volume: number"
    assert nodes["Named"].uko_type == "uko-ts:TypeAlias"
    assert nodes["Level"].uko_type == "uko-ts:Enum"
    assert "High" in nodes["Level"].renderings[DEPTH_SIGNATURES]
    assert nodes["format"].properties["signature"] == (
        "export function format(name: string): string"
    )
    assert nodes["load"].uko_type == "uko-ts:ArrowFunction"
    assert (
        nodes["load"]
        .properties["signature"]
        .startswith("export const load = async (file: string): Promise<StoreItem> =>")
    )
    assert nodes["Internal"].uko_type == "uko-ts:Namespace"
    assert nodes["Internal.helper"].uko_type == "uko-ts:Function"


def test_typescript_imports_inheritance_and_calls() -> None:
    """Imports bind names; calls resolve to local nodes, members or imported symbols."""
    rel = "src/app/greeter.ts"
    nodes = nodes_of(TypeScriptAnalyzer(), rel, TYPESCRIPT)
    store_import = nodes["import.src.store.index.default"]
    assert store_import.uko_type == "uko-ts:Import"
    assert store_import.edges == [
        ("uko:dependsOn", "symbol:src.store.index.default"),
        ("uko:dependsOn", "symbol:src.store.index.Item"),
    ]
    assert ("uko:dependsOn", "symbol:fs.promises.readFile") in nodes[""].edges
    greeter = nodes["Greeter"]
    assert ("uko-oo:inheritsFrom", "symbol:Base") in greeter.edges
    assert ("uko-oo:implements", uri(rel, "Speaker")) in greeter.edges
    greet = nodes["Greeter.greet"].edges
    assert ("uko:dependsOn", uri(rel, "format")) in greet
    assert ("uko:dependsOn", uri(rel, "Greeter.shout")) in greet
    assert ("uko:dependsOn", "symbol:node:path.basename") in nodes["format"].edges
    assert ("uko:dependsOn", "symbol:fs.promises.readFile") in nodes["load"].edges


def test_typescript_renderings() -> None:
    """Depth 4 lists member signatures; 6 adds docs; 9 is the exact source."""
    nodes = nodes_of(TypeScriptAnalyzer(), "g.ts", TYPESCRIPT)
    greeter = nodes["Greeter"]
    brief = greeter.renderings[DEPTH_SIGNATURES]
    assert brief.splitlines()[0] == "/** Greets people. */"
    assert "    async greet(who: T, loud?: boolean): Promise<string> { ... }" in brief
    assert "/** Greets `who` politely. */" in greeter.renderings[DEPTH_OUTLINE]
    lines = textwrap.dedent(TYPESCRIPT).splitlines()
    assert greeter.renderings[DEPTH_FULL] == "\n".join(
        lines[greeter.start_line - 1 : greeter.end_line]
    )
    assert greeter.renderings[DEPTH_NAME] == "Greeter"
    assert "class Greeter" in nodes[""].renderings[2]


def test_typescript_overload_signatures_are_marked() -> None:
    """Signatures beside an implementation of the same name are overloads; an interface's
    method, declared alone, is not one (the delivery values overloads low)."""
    nodes = nodes_of(
        TypeScriptAnalyzer(),
        "ops.ts",
        """\
        export function pick(key: string): string;
        export function pick(key: number): number;
        export function pick(key: unknown): unknown {
          return key;
        }
        export interface Source {
          read(size: number): string;
        }
        export class Reader {
          open(path: string): void;
          open(path: string, mode?: string): void {}
        }
        """,
    )
    assert [nodes[q].properties.get("overload") for q in ("pick", "pick~2", "pick~3")] == [
        "true",
        "true",
        None,
    ]
    assert nodes["Reader.open"].properties.get("overload") == "true"
    assert "overload" not in nodes["Reader.open~2"].properties
    assert "overload" not in nodes["Source.read"].properties


def test_typescript_declaration_files() -> None:
    """A ``.d.ts`` file declares with ``declare``: its classes, namespaces, functions,
    constants and ``declare global`` members are nodes; its module is what ``import …
    from "./model"`` names (no ``.d``); of the declarations merged under one name, the
    class answers it and the others are marked ``merged``."""
    relative = "lib/model.d.ts"
    nodes = nodes_of(
        TypeScriptAnalyzer(),
        relative,
        """\
        import type * as p from "./properties";
        export declare namespace Model {
            type Attrs = p.AttrsOf<Props>;
            type Props = {};
        }
        export interface Model extends Model.Attrs {
        }
        export declare abstract class Model extends HasProps {
            constructor(attrs?: Partial<Model.Attrs>);
            select(name: string): Model[];
            select(id: number): Model[];
        }
        export declare function build(kind: string): Model;
        export declare const version: string;
        export type Line = { width: number };
        export declare const Line: Line;
        declare global {
            interface Window { bokeh: number }
        }
        declare module "registry" {
            export function register(model: Model): void;
        }
        """,
    )
    assert nodes[""].properties["module"] == "lib.model"
    kinds = {q: (n.uko_type, n.properties.get("merged")) for q, n in nodes.items()}
    assert kinds["Model"] == ("uko-ts:Namespace", "true")
    assert kinds["Model~2"] == ("uko-ts:Interface", "true")
    assert kinds["Model~3"] == ("uko-ts:Class", None)
    assert kinds["Model.select"] == ("uko-ts:Method", None)  # the first of its overloads
    assert kinds["Model.select~2"] == ("uko-ts:Method", "true")
    assert kinds["build"] == ("uko-ts:Function", None)
    assert kinds["version"] == ("uko-ts:Variable", None)
    assert kinds["Line"] == ("uko-ts:TypeAlias", None)
    assert kinds["Line~2"] == ("uko-ts:Variable", "true")
    assert kinds["Window"] == ("uko-ts:Interface", None)
    assert kinds["Window.bokeh"] == ("uko-ts:Property", None)
    assert kinds["registry.register"] == ("uko-ts:Function", None)
    assert nodes["Model~3"].properties["fqname"] == "lib.model.Model"


def test_exports_from_other_modules_are_nodes_with_what_they_give() -> None:
    """``export … from`` (and ``export { a as b }``) is an ``uko-ts:Export`` node: what it
    makes the module answer to, as ``bindings`` (name "" for ``export *``), paths from
    the resource's root, and a dependency on each; listed with the imports."""

    source = """\
        import { Local } from "./local";
        export * from "./model";
        export * as shapes from "../shapes";
        export { make, make as build } from "./factory";
        export type { Kind } from "./kinds";
        export { default as Layer } from "./layer";
        export { Local, inner as outer };
        function inner() {}
        """
    for analyzer, relative in (
        (TypeScriptAnalyzer(), "src/lib/index.ts"),
        (JavaScriptAnalyzer(), "src/lib/index.js"),
    ):
        if relative.endswith(".js"):
            source = source.replace("export type {", "export {")
        result = analyze(analyzer, relative, source)
        exports = [n for n in result.nodes if n.uko_type == "uko-ts:Export"]
        given = [json.loads(n.properties["bindings"]) for n in exports]
        assert given == [
            [["", "src.lib.model"]],
            [["shapes", "src.shapes"]],
            [["make", "src.lib.factory.make"], ["build", "src.lib.factory.make"]],
            [["Kind", "src.lib.kinds.Kind"]],
            [["Layer", "src.lib.layer.default"]],
            [["Local", "src.lib.local.Local"], ["outer", "src.lib.index.inner"]],
        ], relative
        assert exports[2].edges == [("uko:dependsOn", "symbol:src.lib.factory.make")]
        outline = result.nodes[0].renderings[6]
        assert (
            'export * from "./model";' in outline and 'import { Local } from "./local";' in outline
        )


def test_tsx_components() -> None:
    """``.tsx`` files parse with the TSX grammar (JSX inside TypeScript); a component
    rendered in JSX (``<Button …/>``, ``<Icons.Star>``) is a dependency as a call is, an
    element of the platform (``<button>``) none."""
    source = """\
    import React from "react";
    import * as Icons from "./icons";

    /** A button. */
    export function Button({ label }: { label: string }): JSX.Element {
      return <button onClick={() => track(label)}>{label}</button>;
    }

    function track(what: string) {}

    export function Toolbar() {
      return <div><Button label="a" /><Icons.Star>b</Icons.Star></div>;
    }
    """
    rel = "web/Button.tsx"
    nodes = nodes_of(TypeScriptAnalyzer(), rel, source)
    assert nodes["Button"].properties["docstring"] == "A button."
    assert ("uko:dependsOn", uri(rel, "track")) in nodes["Button"].edges
    assert [t for _, t in nodes["Toolbar"].edges] == [
        uri(rel, "Button"),
        "symbol:web.icons.Star",
    ]
    jsx = nodes_of(
        JavaScriptAnalyzer(),
        "web/app.jsx",
        "function App() { return <Toolbar />; }\nfunction Toolbar() { return <p />; }\n",
    )
    assert jsx["App"].edges == [("uko:dependsOn", uri("web/app.jsx", "Toolbar"))]
    assert jsx["Toolbar"].edges == []


def test_javascript_esm_and_commonjs() -> None:
    """ES module imports, ``require`` calls, classes with private fields, arrow functions."""
    source = """\
    const fs = require("fs");
    import { parse } from "./parser.js";

    /**
     * An animal.
     */
    class Animal extends Base {
      #secret = 1;
      /** Speaks. */
      speak() { return parse(this.name); }
      static create() { return new Animal(); }
    }

    const twice = (x) => x * 2;
    module.exports = { Animal, twice };
    """
    rel = "lib/animal.js"
    nodes = nodes_of(JavaScriptAnalyzer(), rel, source)
    assert nodes["import.fs"].edges == [("uko:dependsOn", "symbol:fs")]
    assert nodes["import.lib.parser.parse"].edges == [("uko:dependsOn", "symbol:lib.parser.parse")]
    animal = nodes["Animal"]
    assert animal.properties["docstring"] == "An animal."
    assert ("uko-oo:inheritsFrom", "symbol:Base") in animal.edges
    assert nodes["Animal.speak"].properties["docstring"] == "Speaks."
    assert ("uko:dependsOn", "symbol:lib.parser.parse") in nodes["Animal.speak"].edges
    assert ("uko:dependsOn", uri(rel, "Animal")) in nodes["Animal.create"].edges
    assert nodes["twice"].uko_type == "uko-ts:ArrowFunction"


def test_functions_assigned_to_members_are_declared() -> None:
    """CommonJS code declares most functions by assignment: ``Layer.prototype.match =
    function match(path) { … }`` is the method ``Layer.match`` (reached by ``this.match()``
    and on a ``new Layer()``), ``proto.handle = …`` a method ``proto.handle``, and
    ``exports.parse = …`` the module's ``parse``, as is each function of ``module.exports
    = { … }``; computed members are no name."""
    source = """\
    var pathRegexp = require('path-to-regexp');

    function Layer(path, fn) {
      this.fn = fn;
    }

    /**
     * Whether the layer matches a path.
     */
    Layer.prototype.match = function match(path) {
      return this.decode(path) !== null;
    };

    Layer.prototype.decode = function (path) { return pathRegexp(path); };

    var proto = module.exports = function (options) { return proto; };

    proto.handle = function handle(req, res) {
      var layer = new Layer('/', null);
      return layer.match(req.url);
    };

    exports.parse = (text) => text.trim();
    module.exports.format = function format() {};
    req.get = req.header = function header(name) { return name; };
    table[key] = function () {};
    make().x = function () {};
    """
    rel = "lib/router/layer.js"
    nodes = nodes_of(JavaScriptAnalyzer(), rel, source)
    module = nodes[""].uri
    match = nodes["Layer.match"]
    assert (match.uko_type, match.name, match.parent) == ("uko-ts:Method", "match", module)
    assert match.properties["docstring"] == "Whether the layer matches a path."
    assert (match.start_line, match.end_line) == (10, 12)
    assert match.renderings[DEPTH_FULL].startswith("Layer.prototype.match = function match(path)")
    assert ("uko:dependsOn", uri(rel, "Layer.decode")) in match.edges
    assert nodes["Layer.decode"].edges == [("uko:dependsOn", "symbol:path-to-regexp")]
    handle = nodes["proto.handle"]
    assert handle.uko_type == "uko-ts:Method"
    assert {t for _, t in handle.edges} >= {uri(rel, "Layer"), uri(rel, "Layer.match")}
    assert nodes["parse"].uko_type == "uko-ts:ArrowFunction"
    assert nodes["format"].uko_type == "uko-ts:Function"
    assert nodes["req.get"].uko_type == "uko-ts:Method"
    assert nodes["proto"].uko_type == "uko-ts:Variable"
    assert not {"req.header", "table.key", "x", "make.x", "Layer.prototype.match"} & nodes.keys()
    listing = nodes[""].renderings[DEPTH_MEMBERS]
    assert "method match" in listing and "function parse" in listing
    exported = nodes_of(
        JavaScriptAnalyzer(),
        "lib/text.js",
        """\
        function trim(s) { return s.trim(); }
        module.exports = {
          /** Parses a line. */
          parse: function parse(s) { return trim(s); },
          format(o) { return String(o); },
          quick: (x) => x,
          trim,
          'quoted': function () {},
          limit: 3,
        };
        """,
    )
    assert exported["parse"].properties["docstring"] == "Parses a line."
    assert ("uko:dependsOn", uri("lib/text.js", "trim")) in exported["parse"].edges
    assert exported["format"].uko_type == "uko-ts:Function"
    assert exported["quick"].uko_type == "uko-ts:ArrowFunction"
    assert exported.keys() == {"", "trim", "parse", "format", "quick"}


def test_javascript_shipped_in_installed_packages() -> None:
    """Real ``.js`` files found in site-packages analyze without errors."""
    site = Path(sysconfig.get_paths()["purelib"])
    files = [p for p in sorted(site.glob("*/**/*.js")) if p.stat().st_size < 500_000][:20]
    if not files:
        pytest.skip("no .js file is installed in this environment")
    for path in files:
        relative = str(path.relative_to(site))
        result = JavaScriptAnalyzer().analyze(
            path, path.read_text(encoding="utf-8", errors="replace"),
            resource_id=RESOURCE, relative_path=relative,
        )  # fmt: skip
        check_tree(result.nodes, relative)
        assert result.nodes[0].renderings[DEPTH_FULL]


GO = """\
// Package shapes computes areas.
package shapes

import (
	"fmt"
	m "math"
)

// Shape is anything with an area.
type Shape interface {
	// Area returns the area.
	Area() float64
}

// Circle is round.
type Circle struct {
	R    float64 // radius
	Name string
}

// Area of the circle.
func (c *Circle) Area() float64 {
	return m.Pi * c.R * c.R
}

// Describe prints a shape.
func Describe(s Shape) string {
	return fmt.Sprintf("%.2f", s.Area())
}

// New makes a circle.
func New(r float64) *Circle {
	c := &Circle{R: r}
	Describe(c)
	return c
}

const Max = 10
"""


def test_go_types_functions_methods_and_doc_comments() -> None:
    """Structs, interfaces, receiver methods under their type, ``//`` doc runs, imports."""
    rel = "shapes/shapes.go"
    nodes = nodes_of(GoAnalyzer(), rel, GO)
    module = nodes[""]
    assert module.properties["docstring"] == "Package shapes computes areas."
    assert module.properties["package"] == "shapes"
    assert nodes["Shape"].uko_type == "uko-oo:Interface"
    assert nodes["Shape.Area"].properties["docstring"] == "Area returns the area."
    circle = nodes["Circle"]
    assert circle.uko_type == "uko-proc:Struct"
    assert circle.properties["signature"] == "type Circle struct"
    assert nodes["Circle.R"].uko_type == "uko-oo:Attribute"
    assert "docstring" not in nodes["Circle.Name"].properties  # a trailing comment is not a doc
    area = nodes["Circle.Area"]
    assert area.uko_type == "uko-oo:Method"
    assert area.parent == circle.uri
    assert area.properties["signature"] == "func (c *Circle) Area() float64"
    assert area.properties["docstring"] == "Area of the circle."
    describe = nodes["Describe"]
    assert describe.uko_type == "uko-proc:Procedure"
    assert ("uko:dependsOn", "symbol:fmt.Sprintf") in describe.edges
    assert ("uko:dependsOn", uri(rel, "Describe")) in nodes["New"].edges
    assert nodes["Max"].uko_type == "uko-proc:GlobalVariable"
    assert nodes["import.fmt"].edges == [
        ("uko:dependsOn", "symbol:fmt"),
        ("uko:dependsOn", "symbol:math"),
    ]


def test_a_go_call_to_another_file_of_the_package_is_resolved() -> None:
    """A Go package is a folder: ``ld(...)`` in one file calls the ``ld`` another file of
    the folder defines, not a namesake in another folder, and ``c.Name()`` in a method of
    ``*Command`` calls ``Command.Name`` wherever the package defines it; builtins and
    local closures are no edges."""
    from cleveragents_acms.indexing.resolve import resolve_edges, wanted_names

    caller = nodes_of(
        GoAnalyzer(),
        "cobra/command.go",
        """\
        package cobra

        func (c *Command) SuggestionsFor(name string) []string {
            fn := func() int { return 0 }
            _ = fn()
            return make([]string, ld(name, c.Name(), true)+len(name))
        }
        """,
    )["Command.SuggestionsFor"]
    assert {t for _, t in caller.edges} == {
        "symbol:go:cobra.ld",
        "symbol:go:cobra.fn",
        "symbol:go:cobra.Command.Name",
    }
    here = nodes_of(
        GoAnalyzer(),
        "cobra/cobra.go",
        """\
        package cobra

        func ld(s, t string, i bool) int { return 0 }

        func (c *Command) Name() string { return "" }
        """,
    )
    there = nodes_of(GoAnalyzer(), "doc/util.go", "package doc\n\nfunc ld() int { return 1 }\n")
    assert {"ld", "fn", "Name"} <= wanted_names([caller])
    assert resolve_edges([caller], [*here.values(), there["ld"]]) == 2
    assert sorted(caller.edges) == [
        ("uko:dependsOn", uri("cobra/cobra.go", "Command.Name")),
        ("uko:dependsOn", uri("cobra/cobra.go", "ld")),
    ]


def test_go_embedded_types_are_bases_whose_methods_are_promoted() -> None:
    """A struct's embedded field is named by its type, and the struct inherits from the
    type (``uko-oo:inheritsFrom``, ``uko:dependsOn``), as an interface does from the
    interfaces it embeds, which its renderings list. A call on the receiver that the
    struct does not declare reaches the embedded type's method: this file's at once,
    through the file's embedded types depth by depth; another file's as a guess of the
    package; an imported type's only when it is the one type embedded; on a variable of
    the struct's type too. ``s.Base.Title()`` goes through the embedded field."""
    from cleveragents_acms.indexing.resolve import resolve_edges

    rel = "srv/server.go"
    nodes = nodes_of(
        GoAnalyzer(),
        rel,
        """\
        package srv

        import (
            "io"
            "sync"
        )

        type inner struct{ sync.Mutex }

        func (i *inner) Reset() {}

        func (i *inner) Guard() { i.Lock() }

        type outer struct {
            *inner
        }

        // Server serves.
        type Server struct {
            outer
            Base
            port int
        }

        // ReadCloser reads and closes.
        type ReadCloser interface {
            io.Reader
            Closer
            Flush() error
        }

        func (s *Server) Start() {
            s.Reset()
            s.Name()
            s.Base.Title()
        }

        func Run(srv *Server) { srv.Reset() }
        """,
    )
    assert {"Server.outer", "Server.Base", "Server.port", "outer.inner", "inner.Mutex"} <= set(
        nodes
    )
    inherits = "uko-oo:inheritsFrom"
    server, reader = nodes["Server"], nodes["ReadCloser"]
    assert [t for r, t in server.edges if r == inherits] == [
        uri(rel, "outer"),
        "symbol:go:srv.Base",
    ]
    assert ("uko:dependsOn", uri(rel, "outer")) in server.edges
    assert [t for r, t in reader.edges if r == inherits] == [
        "symbol:io.Reader",
        "symbol:go:srv.Closer",
    ]
    assert nodes["ReadCloser"].renderings[DEPTH_SIGNATURES].split("\n")[1:4] == [
        "type ReadCloser interface {",
        "    io.Reader",
        "    Closer",
    ]
    assert "io.Reader, Closer, Flush" in reader.renderings[2]
    assert [t for _, t in nodes["Server.Start"].edges] == [
        # s.Reset(): Server's own in another file, Base's, or (found) outer's inner's
        "symbol:go:srv.Server.Reset",
        "symbol:go:srv.Base.Reset",
        uri(rel, "inner.Reset"),
        # s.Name(): none of this file's declares it; sync.Mutex is not the one embedded
        "symbol:go:srv.Server.Name",
        "symbol:go:srv.Base.Name",
        "symbol:go:srv.Base.Title",
    ]
    assert [t for _, t in nodes["Run"].edges] == [
        "symbol:go:srv.Server.Reset",
        "symbol:go:srv.Base.Reset",
        uri(rel, "inner.Reset"),
    ]
    assert [t for _, t in nodes["inner.Guard"].edges] == [
        "symbol:go:srv.inner.Lock",
        "symbol:sync.Mutex.Lock",
    ]

    other = "srv/base.go"
    base = nodes_of(
        GoAnalyzer(),
        other,
        """\
        package srv

        type Base struct{ name string }

        func (b *Base) Name() string { return b.name }

        func (b *Base) Title() string { return b.name }

        type Closer interface{ Close() error }
        """,
    )
    resolve_edges(list(nodes.values()), list(base.values()))
    assert [t for r, t in server.edges if r == inherits] == [uri(rel, "outer"), uri(other, "Base")]
    assert [t for r, t in reader.edges if r == inherits] == [
        "symbol:io.Reader",
        uri(other, "Closer"),
    ]
    assert [t for _, t in nodes["Server.Start"].edges] == [
        uri(rel, "inner.Reset"),
        uri(other, "Base.Name"),
        uri(other, "Base.Title"),
    ]


def test_a_call_on_a_typed_variable_is_to_its_type_s_method() -> None:
    """A parameter's, local variable's or field's declared type names what a call on it
    reaches: ``cmd.Name()`` with ``cmd *cobra.Command`` is ``cobra.Command.Name`` of the
    imported package, ``h.Render()`` with ``h *Header`` this package's ``Header.Render``,
    ``d.Render()`` after ``d := &Header{}`` too; Java's ``names.add()`` with
    ``List<String> names`` is ``java.util.List.add``, and so for a local (``var``
    included) and a field (``this.`` or not), and Go's ``h.flags.Reset()`` with a field
    ``flags *cobra.FlagSet`` of ``h``'s struct. Slices, maps, primitives and a field of a
    struct the file does not declare (``h.Date.Format()``) name nothing."""
    go_nodes = nodes_of(
        GoAnalyzer(),
        "doc/man.go",
        """\
        package doc

        import "github.com/spf13/cobra"

        type Header struct {
            Title string
            flags *cobra.FlagSet
        }

        func (h *Header) Render() string { return h.Title }

        func (h *Header) Close() { h.flags.Reset() }

        func Gen(cmd *cobra.Command, h *Header, all []string, seen map[string]bool) string {
            _ = all.Len()
            _ = h.Date.Format()
            d := &Header{}
            var flags cobra.FlagSet
            flags.Parse()
            d.Close()
            return cmd.Name() + h.Render()
        }
        """,
    )
    go = go_nodes["Gen"]
    assert {t for _, t in go.edges} == {
        "symbol:github.com/spf13/cobra.Command.Name",
        "symbol:github.com/spf13/cobra.FlagSet.Parse",
        uri("doc/man.go", "Header.Render"),
        uri("doc/man.go", "Header.Close"),
    }
    closing = go_nodes["Header.Close"]  # a field of the receiver's struct
    assert [t for _, t in closing.edges] == ["symbol:github.com/spf13/cobra.FlagSet.Reset"]
    java = nodes_of(
        JavaAnalyzer(),
        "src/app/Names.java",
        """\
        package app;

        import java.util.List;
        import java.util.Map;

        class Names {
            private Map<String, Integer> counts;
            private Ledger ledger;

            void fill(List<String> names, Helper helper, int count) {
                StringBuilder text = new StringBuilder();
                var parser = new Parser();
                names.add(helper.next());
                counts.put(parser.parse(), count);
                this.ledger.record(text.toString());
                count.hashCode();
            }
        }
        """,
    )["Names.fill"]
    assert {t for _, t in java.edges} == {
        "symbol:java.util.List.add",
        "symbol:java.util.Map.put",
        "symbol:java:app.Helper.next",
        "symbol:java:app.Parser",
        "symbol:java:app.Parser.parse",
        "symbol:java:app.Ledger.record",
        "symbol:java:app.StringBuilder",
        "symbol:java:app.StringBuilder.toString",
    }


def test_typescript_and_javascript_fields_and_locals_name_their_types() -> None:
    """TypeScript: a constructor's parameter property (``private http: HttpClient``), a
    field (typed or ``= new Store()``) and a local (typed or ``new``) name what a call on
    them reaches, ``this.http.get()`` the imported ``HttpClient.get``; JavaScript: what
    ``new`` made, of a class a relative, destructuring ``require`` binds (``const {
    Store, Other: O } = require("./store")``)."""
    ts_node = nodes_of(
        TypeScriptAnalyzer(),
        "src/api.ts",
        """\
        import { HttpClient } from '@angular/common/http';
        import { Store } from './store';

        export class Api {
          private cache: Map<string, number>;
          store = new Store();
          constructor(private http: HttpClient) {}
          load(id: string, other: Store | null) {
            const s: Store = make();
            let t = new Store();
            this.http.get(id);
            this.store.put(id);
            s.keep(1);
            t.drop(2);
            other.skip();
          }
        }
        """,
    )["Api.load"]
    assert {t for _, t in ts_node.edges} >= {
        "symbol:@angular.common.http.HttpClient.get",
        "symbol:src.store.Store.put",
        "symbol:src.store.Store.keep",
        "symbol:src.store.Store.drop",
    }
    assert not any(t.endswith(".skip") for _, t in ts_node.edges)  # a union type
    js_node = nodes_of(
        JavaScriptAnalyzer(),
        "lib/api.js",
        """\
        const { Store, Other: O } = require('./store');

        class Api {
          store = new Store();
          load(id) {
            const t = new Store();
            this.store.put(id);
            t.drop(2);
            O.run();
          }
        }
        """,
    )["Api.load"]
    assert {t for _, t in js_node.edges} == {
        "symbol:lib.store.Store",
        "symbol:lib.store.Store.put",
        "symbol:lib.store.Store.drop",
        "symbol:lib.store.Other.run",
    }


def test_a_call_on_the_object_itself_reaches_an_inherited_method() -> None:
    """``this.m()``, ``super.m()`` and Java's bare ``m()`` that the class does not declare
    are its base class's ``m``: up the file's classes, then by the base's imported name
    (or, in Java, its package's); a class with no base class resolves nothing more."""
    java = nodes_of(
        JavaAnalyzer(),
        "a/B.java",
        """\
        package a;
        import b.Base;
        class Local { void k() {} void g() {} }
        class Mid extends Local { void own() {} }
        class C extends Mid { void g() { k(); own(); this.k(); super.g(); this.none(); } }
        class B extends Base { void g() { f(); this.h(); super.g(); } }
        class D extends Helper { void g() { help(); } }
        class E { void g() { lost(); } }
        """,
    )
    rel = "a/B.java"
    assert java["C.g"].edges == [
        ("uko:dependsOn", uri(rel, "Local.k")),
        ("uko:dependsOn", uri(rel, "Mid.own")),
        ("uko:dependsOn", uri(rel, "Local.g")),
    ]
    assert java["B.g"].edges == [
        ("uko:dependsOn", "symbol:b.Base.f"),
        ("uko:dependsOn", "symbol:b.Base.h"),
        ("uko:dependsOn", "symbol:b.Base.g"),
    ]
    assert java["D.g"].edges == [("uko:dependsOn", "symbol:java:a.Helper.help")]
    assert java["E.g"].edges == []
    ts = nodes_of(
        TypeScriptAnalyzer(),
        "src/b.ts",
        """\
        import { Base } from './base';
        export class B extends Base {
          g() { this.f(); super.g(); }
        }
        """,
    )
    assert ts["B.g"].edges == [
        ("uko:dependsOn", "symbol:src.base.Base.f"),
        ("uko:dependsOn", "symbol:src.base.Base.g"),
    ]


def test_a_class_field_holding_a_function_is_a_method() -> None:
    """``onClick = (e) => { … }`` and ``static make = function () { … }`` in a class are
    its methods (their calls theirs, ``this.go()`` the class's); a field holding a value
    stays a property."""
    for analyzer, rel, typed in (
        (TypeScriptAnalyzer(), "src/a.ts", "private onClick = (e: Event): void =>"),
        (JavaScriptAnalyzer(), "src/a.js", "onClick = (e) =>"),
    ):
        nodes = nodes_of(
            analyzer,
            rel,
            f"""\
            class A {{
              /** Handles a click. */
              {typed} {{ this.go(e); }};
              static make = function () {{ return 1; }};
              count = 0;
              go(e) {{}}
            }}
            """,
        )
        click = nodes["A.onClick"]
        assert (click.uko_type, click.properties["signature"]) == ("uko-ts:Method", typed)
        assert click.properties["docstring"] == "Handles a click."
        assert click.edges == [("uko:dependsOn", uri(rel, "A.go"))]
        assert nodes["A.make"].uko_type == "uko-ts:Method"
        assert nodes["A.count"].uko_type == "uko-ts:Property"


def test_java_overloads_in_an_interface_are_methods_of_their_own() -> None:
    """An interface's abstract ``group()`` and ``group(int)`` beside a default
    ``group(String)`` are three overloads, none of them a mere signature (as a
    TypeScript overload signature is): a call by the name depends on all three."""
    from cleveragents_acms.indexing.resolve import resolve_edges

    found = nodes_of(
        JavaAnalyzer(),
        "src/re/Match.java",
        """\
        package re;

        public interface Match {
            String group();
            String group(int index);
            default String group(String name) { return group(0); }
        }
        """,
    )
    assert not any(n.properties.get("overload") for n in found.values())
    caller = nodes_of(
        JavaAnalyzer(),
        "src/re/Use.java",
        "package re;\n\nclass Use {\n    String run(Match m) { return m.group(1); }\n}\n",
    )["Use.run"]
    assert resolve_edges([caller], found.values()) == 1
    assert sorted(t for _, t in caller.edges) == [
        uri("src/re/Match.java", q) for q in ("Match.group", "Match.group~2", "Match.group~3")
    ]


def test_a_call_to_an_overloaded_function_resolves_to_its_implementation() -> None:
    """TypeScript overload signatures share their implementation's name: a call from
    another file is to the implementation, not left unresolved among them (rxjs's
    ``innerFrom``, called from 128 places)."""
    from cleveragents_acms.indexing.resolve import resolve_edges

    defined = nodes_of(
        TypeScriptAnalyzer(),
        "internal/observable/innerFrom.ts",
        """\
        export function innerFrom(input: string): string[];
        export function innerFrom(input: number): number[];
        export function innerFrom(input: any): any[] {
          return [input];
        }
        """,
    )
    caller = nodes_of(
        TypeScriptAnalyzer(),
        "internal/operators/mergeMap.ts",
        """\
        import { innerFrom } from '../observable/innerFrom';

        export function mergeMap(value: string) {
          return innerFrom(value);
        }
        """,
    )["mergeMap"]
    assert resolve_edges([caller], defined.values()) == 1
    assert caller.edges == [("uko:dependsOn", defined["innerFrom~3"].uri)]
    assert not defined["innerFrom~3"].properties.get("overload")
    assert defined["innerFrom"].properties.get("overload")


def test_a_java_class_of_the_same_package_is_resolved_without_an_import() -> None:
    """``Helper.doIt()`` and ``new Helper()`` need no import when ``Helper`` is of the same
    package: they resolve to it, not to a namesake of another package; ``Math.max``
    (``java.lang``) makes no edge."""
    from cleveragents_acms.indexing.resolve import resolve_edges

    app = "src/main/java/com/x/App.java"
    run = nodes_of(
        JavaAnalyzer(),
        app,
        """\
        package com.x;

        class App {
            void run() {
                Helper.doIt();
                new Helper();
                Math.max(1, 2);
            }
        }
        """,
    )["App.run"]
    assert {t for _, t in run.edges} == {
        "symbol:java:com.x.Helper.doIt",
        "symbol:java:com.x.Helper",
        "symbol:java:com.x.Math.max",
    }
    helper = "package {}; public class Helper {{ static void doIt() {{}} }}\n"
    here = nodes_of(JavaAnalyzer(), "src/main/java/com/x/Helper.java", helper.format("com.x"))
    there = nodes_of(JavaAnalyzer(), "src/main/java/com/y/Helper.java", helper.format("com.y"))
    assert resolve_edges([run], [*here.values(), *there.values()]) == 2
    assert sorted(run.edges) == [
        ("uko:dependsOn", uri("src/main/java/com/x/Helper.java", "Helper")),
        ("uko:dependsOn", uri("src/main/java/com/x/Helper.java", "Helper.doIt")),
    ]


def test_a_java_base_of_the_same_package_wins_over_namesakes_of_others() -> None:
    """``interface B extends D, A`` with no import: ``A`` and ``D`` are of ``B``'s package,
    though other packages declare an ``A`` too (the name alone is ambiguous); the module
    lists the guesses, for a refresh to find ``B`` when its package gains one. A base no
    package of the tree declares (``Exception``) stays the name it is."""
    from cleveragents_acms.analyzers._common import PACKAGE_GUESSES
    from cleveragents_acms.indexing.resolve import resolve_edges

    b = nodes_of(
        JavaAnalyzer(),
        "mro/B.java",
        "package jpype.mro;\ninterface B extends D, A {}\nclass Oops extends Exception {}\n",
    )
    assert b[""].properties[PACKAGE_GUESSES].split("\n") == [
        "java:jpype.mro.A",
        "java:jpype.mro.D",
        "java:jpype.mro.Exception",
    ]
    same = nodes_of(JavaAnalyzer(), "mro/A.java", "package jpype.mro;\ninterface A {}\n")
    other = nodes_of(JavaAnalyzer(), "override/A.java", "package jpype.override;\nclass A {}\n")
    only = nodes_of(JavaAnalyzer(), "mro/D.java", "package jpype.mro;\ninterface D {}\n")
    known = [*same.values(), *other.values(), *only.values()]
    assert resolve_edges(b.values(), known) == 4
    d, a = uri("mro/D.java", "D"), uri("mro/A.java", "A")
    assert [t for _, t in b["B"].edges] == [d, d, a, a]
    assert [t for _, t in b["Oops"].edges] == ["symbol:Exception"] * 2


def test_java_names_its_package_lacks_are_looked_for_in_packages_imported_on_demand() -> None:
    """``import com.y.*;`` and ``import com.z.*;``: ``new Helper()``, ``Helper.run()`` and
    ``extends Base`` that ``com.x`` does not declare are the first of those packages'
    (``com.y.Base`` before ``com.z.Base``, though another package declares a ``Base``
    too); what ``com.x`` declares itself comes first (``Local``), in a class whose base
    another file declares too. The module lists the packages and the guesses they add; a
    static import on demand is not one."""
    from cleveragents_acms.analyzers._common import ON_DEMAND_IMPORTS, PACKAGE_GUESSES
    from cleveragents_acms.indexing.resolve import resolve_edges

    app = nodes_of(
        JavaAnalyzer(),
        "com/x/App.java",
        """\
        package com.x;

        import com.y.*;
        import com.z.*;
        import static java.lang.Math.*;

        class App extends Base {
            void run() { new Helper(); Helper.run(); new Local(); }
        }
        """,
    )
    assert app[""].properties[ON_DEMAND_IMPORTS] == "com.y\ncom.z"
    assert "java:com.z.Helper.run" in app[""].properties[PACKAGE_GUESSES].split("\n")

    def declared(path: str, source: str) -> list[UKONode]:
        return list(nodes_of(JavaAnalyzer(), path, source).values())

    known = [
        *declared("com/y/Base.java", "package com.y;\nclass Base {}\n"),
        *declared("com/z/Base.java", "package com.z;\nclass Base {}\n"),
        *declared("com/z/Helper.java", "package com.z;\nclass Helper { static void run() {} }"),
        *declared("com/w/Local.java", "package com.w;\nclass Local {}\n"),
        *declared("com/x/Local.java", "package com.x;\nclass Local {}\n"),
    ]
    resolve_edges(app.values(), known)
    assert [t for _, t in app["App"].edges] == [uri("com/y/Base.java", "Base")] * 2
    assert {t for _, t in app["App.run"].edges} == {
        uri("com/z/Helper.java", "Helper"),
        uri("com/z/Helper.java", "Helper.run"),
        uri("com/x/Local.java", "Local"),
    }


def test_java_and_typescript_names_reach_the_members_of_enclosing_declarations() -> None:
    """A nested Java class extends, creates and calls a sibling nested in the same outer
    class (``BaseResource``, not declared at the top of the file), and an outer class's
    method without ``this`` (``count()``), though a method its base declares comes first
    (``name()``); ``new Harness()`` in ``Harness`` makes the class, not its constructor. A
    class in a TypeScript namespace extends another of it."""
    java = nodes_of(
        JavaAnalyzer(),
        "org/x/Harness.java",
        """\
        package org.x;

        public class Harness {
            Harness() {}
            static int count() { return 0; }
            static String name() { return ""; }
            static Harness make() { return new Harness(); }
            public static class BaseResource {
                static BaseResource of() { return null; }
                String name() { return "base"; }
            }
            public static class ClassResource extends BaseResource {
                int size() { BaseResource.of(); new BaseResource(); name(); return count(); }
            }
        }
        """,
    )
    base = uri("org/x/Harness.java", "Harness.BaseResource")
    assert [t for _, t in java["Harness.ClassResource"].edges] == [base] * 2
    assert {t for _, t in java["Harness.ClassResource.size"].edges} == {
        uri("org/x/Harness.java", "Harness.BaseResource.of"),
        base,
        uri("org/x/Harness.java", "Harness.BaseResource.name"),
        uri("org/x/Harness.java", "Harness.count"),
    }
    assert [t for _, t in java["Harness.make"].edges] == [uri("org/x/Harness.java", "Harness")]
    ts = nodes_of(
        TypeScriptAnalyzer(),
        "src/shapes.ts",
        "export namespace Shapes {\n"
        "  export class Base {}\n  export class Square extends Base {}\n}\n",
    )
    assert [t for _, t in ts["Shapes.Square"].edges] == [uri("src/shapes.ts", "Shapes.Base")] * 2


def test_a_java_method_reference_is_a_call() -> None:
    """``Item::name``, ``this::keep``, ``Helper::clean`` and ``Item::new`` passed to a
    stream are calls made later: edges as the calls would have."""
    rel = "src/app/Svc.java"
    nodes = nodes_of(
        JavaAnalyzer(),
        rel,
        """\
        package app;

        import java.util.List;

        public class Svc {
            List<String> names(List<Item> items) {
                return items.stream().map(Item::name).filter(this::keep)
                    .map(Helper::clean).map(Item::new).toList();
            }

            boolean keep(String s) { return true; }
        }
        """,
    )
    assert [t for _, t in nodes["Svc.names"].edges] == [
        "symbol:java.util.List.stream",
        "symbol:java:app.Item.name",
        uri(rel, "Svc.keep"),
        "symbol:java:app.Helper.clean",
        "symbol:java:app.Item",
    ]


def test_rust_paths_from_the_crate_root_are_resolved() -> None:
    """``use crate::parser::features::suggestions``, ``mod helpers;`` and calls through
    them name files of the crate: ``src/`` is its root, ``mod.rs`` its folder's module."""
    from cleveragents_acms.indexing.resolve import resolve_edges, wanted_modules

    parser = nodes_of(
        RustAnalyzer(),
        "src/parser/parser.rs",
        """\
        use crate::parser::features::suggestions;
        mod helpers;

        pub fn complain(v: &str) -> Vec<String> {
            suggestions::did_you_mean(v, helpers::names())
        }
        """,
    )
    suggestions = nodes_of(
        RustAnalyzer(),
        "src/parser/features/suggestions.rs",
        "pub fn did_you_mean(v: &str, p: Vec<String>) -> Vec<String> { p }\n",
    )
    helpers = nodes_of(RustAnalyzer(), "src/parser/helpers/mod.rs", "pub fn names() {}\n")
    # What a refresh of parser.rs alone looks up: the modules' files.
    wanted = wanted_modules(parser.values())
    assert {"src/parser/features/suggestions.rs", "src/parser/helpers/mod.rs"} <= wanted
    known = [*suggestions.values(), *helpers.values()]
    assert resolve_edges(parser.values(), known) == 6
    assert parser["complain"].edges == [
        ("uko:dependsOn", uri("src/parser/features/suggestions.rs", "did_you_mean")),
        ("uko:dependsOn", uri("src/parser/helpers/mod.rs", "names")),
    ]
    assert parser[""].edges == [
        ("uko:dependsOn", uri("src/parser/features/suggestions.rs", "")),
        ("uko:dependsOn", uri("src/parser/helpers/mod.rs", "")),
    ]


def test_rust_bitflags_declare_their_structs_and_flags() -> None:
    """``bitflags! { pub struct Modules: u32 { const … } }`` declares the struct and its
    flags as if written out (doc, attributes, renderings), so ``Modules::DATETIME`` in
    another file resolves; the module lists the struct as the source reads."""
    from cleveragents_acms.indexing.resolve import resolve_edges

    flags = nodes_of(
        RustAnalyzer(),
        "src/flags.rs",
        """\
        bitflags! {
            /// Modules a file imports.
            #[derive(Debug, Copy, Clone)]
            pub struct Modules: u32 {
                const COLLECTIONS = 1 << 0;
                /// Dates.
                const DATETIME = 1 << 1;
            }

            pub(crate) struct Small: u8 {
                const X = 1;
            }
        }
        """,
    )
    modules = flags["Modules"]
    assert (modules.uko_type, modules.start_line, modules.end_line) == ("uko-rs:Struct", 2, 8)
    assert modules.properties["signature"] == "pub struct Modules: u32"
    assert modules.properties["docstring"] == "Modules a file imports."
    assert modules.properties["decorators"] == "#[derive(Debug, Copy, Clone)]"
    assert modules.renderings[2] == "pub struct Modules: u32: COLLECTIONS, DATETIME"
    datetime = flags["Modules.DATETIME"]
    assert (datetime.uko_type, datetime.parent, datetime.start_line) == (
        "uko-rs:Constant",
        modules.uri,
        7,
    )
    assert datetime.properties["docstring"] == "Dates."
    assert datetime.renderings[4] == "/// Dates.\nconst DATETIME = 1 << 1"
    assert flags["Small.X"].properties["signature"] == "const X = 1"
    assert "bitflags! { pub(crate) struct Small: u8 { ... } }" in flags[""].renderings[6]
    user = nodes_of(
        RustAnalyzer(),
        "src/lib.rs",
        """\
        mod flags;
        use crate::flags::Modules;

        pub fn dates() -> u32 {
            Modules::bits(Modules::DATETIME)
        }
        """,
    )
    resolve_edges(user.values(), flags.values())
    assert ("uko:dependsOn", uri("src/flags.rs", "Modules")) in user[""].edges


def test_go_calls_on_a_constructors_result_name_the_types_methods() -> None:
    """``r := bufio.NewReader(f)`` makes a ``bufio.Reader`` and ``s, err := NewServer()``
    a ``Server``, as Go names its constructors: calls on them are the types' methods;
    ``errors.New`` names no type."""
    rel = "app/main.go"
    nodes = nodes_of(
        GoAnalyzer(),
        rel,
        """\
        package main

        import "bufio"

        type Server struct{}

        func NewServer() (*Server, error) { return &Server{}, nil }

        func (s *Server) Run() {}

        func main() {
        \tr := bufio.NewReader(nil)
        \tr.ReadString('x')
        \ts, err := NewServer()
        \ts.Run()
        \te := errors.New("x")
        \te.Error()
        }
        """,
    )
    assert nodes["main"].edges == [
        ("uko:dependsOn", "symbol:bufio.NewReader"),
        ("uko:dependsOn", "symbol:bufio.Reader.ReadString"),
        ("uko:dependsOn", uri(rel, "NewServer")),
        ("uko:dependsOn", uri(rel, "Server.Run")),
    ]


def test_rust_calls_on_typed_locals_and_fields_name_the_types_methods() -> None:
    """``let x: T``, ``let x = T::new()`` (a constructor by custom) and a field of the
    impl's struct (``self.model.add()``) give the variable's type, as a parameter's does;
    ``T::parse()`` may give anything, and a standard type's call makes no edge."""
    rel = "src/lib.rs"
    nodes = nodes_of(
        RustAnalyzer(),
        rel,
        """\
        use crate::model::Model;

        pub struct Checker<'a> {
            model: &'a Model,
        }

        impl<'a> Checker<'a> {
            pub fn run(&self, other: &Model) {
                self.model.add("x");
                other.seen();
                let made = Model::with_name("m");
                made.flags();
                let typed: Model = make();
                typed.scope();
                let parsed = Model::parse("x");
                parsed.anything();
                let mut v = Vec::<u8>::new();
                v.push(1);
            }
        }
        """,
    )
    assert nodes["Checker.run"].edges == [
        ("uko:dependsOn", f"symbol:crate.model.Model.{method}")
        for method in ("add", "seen", "with_name", "flags", "scope", "parse")
    ]


def test_rust_derives_give_their_types_the_traits_methods() -> None:
    """``#[derive(…)]``, in a ``cfg_attr`` too and by a path, gives the type the methods
    of the standard library's and serde's traits; others (``Copy``, a crate's own) none."""
    from cleveragents_acms.indexing.resolve import derived_methods

    decorators = (
        "#[derive(Default, Copy, Clone, Eq, PartialEq, Hash)]\n"
        '#[cfg_attr(feature = "serde", derive(serde::Serialize, get_size2::GetSize))]'
    )
    assert derived_methods(decorators) == {
        "default", "clone", "clone_from", "eq", "ne", "hash", "serialize",
    }  # fmt: skip
    assert derived_methods("#[derive(Copy, ViolationMetadata)]") == frozenset()


def test_rust_paths_through_globs_follow_each_path_once(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Modules that glob-import one another (as a tree of vendored crates does, all of
    them ``crate``) branch at every hop: a path is followed once, not once per way to it
    (orjson's sdist had the resolve phase run for six minutes, now about a second)."""
    from cleveragents_acms.indexing import resolve

    count = 8
    files = {
        f"src/m{i}.rs": "".join(f"use crate::m{j}::*;\n" for j in range(count) if j != i)
        + f"pub fn f{i}() {{\n    crate::m{i + 1}::missing();\n    crate::m{i + 1}::deep();\n}}\n"
        for i in range(count - 1)
    }
    files[f"src/m{count - 1}.rs"] = "use crate::leaf::*;\n"
    files["src/leaf.rs"] = "pub fn deep() {}\n"
    nodes = [n for rel, text in files.items() for n in nodes_of(RustAnalyzer(), rel, text).values()]
    follows = 0
    original = resolve._RustPaths._follow

    def counted(self: object, *args: object) -> set[str] | None:
        nonlocal follows
        follows += 1
        if follows > 100_000:
            raise AssertionError("the same paths are followed again and again")
        return original(self, *args)  # type: ignore[arg-type]

    monkeypatch.setattr(resolve._RustPaths, "_follow", counted)
    resolve.resolve_edges(nodes)
    by_name = {n.qualname: n for n in nodes if n.path == "src/m0.rs"}
    # ``deep`` through the globs of ``m1`` … ``m7``; ``missing`` is nowhere.
    assert by_name["f0"].edges == [
        ("uko:dependsOn", "symbol:crate.m1.missing"),
        ("uko:dependsOn", uri("src/leaf.rs", "deep")),
    ]
    assert follows < 10_000


def test_a_rust_path_whose_search_spends_its_steps_is_left_unresolved(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A search through ``use`` declarations and globs has a budget of steps: one that
    spends it leaves the path unresolved at once (a one-file refresh of ruff's tree, its
    modules unread, went on for more than ten minutes), and the same path with the
    budget whole resolves."""
    from cleveragents_acms.indexing import resolve

    files = {
        "src/lib.rs": "pub use crate::a::*;\n\npub fn f() {\n    crate::deep();\n}\n",
        "src/a.rs": "pub use crate::b::*;\n",
        "src/b.rs": "pub use crate::c::*;\n",
        "src/c.rs": "pub fn deep() {}\n",
    }

    def resolved() -> list[tuple[str, str]]:
        nodes = [
            n for rel, text in files.items() for n in nodes_of(RustAnalyzer(), rel, text).values()
        ]
        resolve.resolve_edges(nodes)
        return next(n for n in nodes if n.qualname == "f").edges

    assert resolved() == [("uko:dependsOn", uri("src/c.rs", "deep"))]
    monkeypatch.setattr(resolve, "RUST_SEARCH_STEPS", 2)
    assert resolved() == [("uko:dependsOn", "symbol:crate.deep")]


def test_rust_paths_reach_only_their_own_crate_and_not_the_preludes_names() -> None:
    """In a tree of two crates (vendored dependencies, a workspace), ``crate::error::Error``
    is each crate's own; ``Eq`` is the prelude's, not a crate's enum variant of that name;
    a name of one segment that no ``use`` brings in may be the one node of that name in
    its own crate, never another crate's."""
    from cleveragents_acms.indexing.resolve import resolve_edges

    files = {
        "a/src/error.rs": "pub struct Error;\npub fn make() -> Error { Error }\n",
        "a/src/token.rs": "pub enum Token {\n    Eq,\n    Plus,\n}\npub struct Lexer;\n",
        "b/src/error.rs": "pub struct Error;\npub fn make() -> Error { Error }\n",
        "b/src/util.rs": "pub struct Helper;\n",
        "b/src/lib.rs": """\
            use crate::error::Error;

            pub struct Thing;

            impl Eq for Thing {}

            impl Helper for Thing {}

            impl Lexer for Thing {}

            pub fn fail() -> Error {
                crate::error::make()
            }
            """,
    }
    parsed = {rel: nodes_of(RustAnalyzer(), rel, text) for rel, text in files.items()}
    nodes = [n for found in parsed.values() for n in found.values()]
    resolve_edges(nodes)
    lib = parsed["b/src/lib.rs"]
    assert ("uko:dependsOn", uri("b/src/error.rs", "make")) in lib["fail"].edges
    assert ("uko:dependsOn", uri("b/src/error.rs", "Error")) in lib[""].edges
    targets = {t for n in lib.values() for _, t in n.edges}
    assert not {t for t in targets if "/a/src/" in t}, "a path reached the other crate"
    assert "symbol:Eq" in targets  # the prelude's trait, not a.token's variant
    assert uri("b/src/util.rs", "Helper") in targets  # the one Helper of the crate
    assert "symbol:Lexer" in targets  # only the other crate has one


def test_a_rust_crate_is_named_by_its_folder() -> None:
    """The name other crates write its paths with: the folder above ``src``, a vendored
    crate's version taken off, ``-`` read as ``_``; none for a crate at the root, or one
    whose folder has a standard crate's name (``use core::fmt`` is not ``crates/core``)."""
    from cleveragents_acms.indexing.resolve import rust_crate, rust_crate_name

    assert rust_crate("crates/geo/src/shapes/mod.rs") == "crates/geo/src"
    assert rust_crate("build.rs") is None
    assert rust_crate_name("crates/ruff_python_ast/src") == "ruff_python_ast"
    assert rust_crate_name("include/cargo/gimli-0.34.0/src") == "gimli"
    assert rust_crate_name("vendor/windows-sys-0.59.0/src") == "windows_sys"
    assert rust_crate_name("vendor/foo-bar-1.0.0-beta.1/src") == "foo_bar"
    assert rust_crate_name("src") is None
    assert rust_crate_name("crates/core/src") is None


RUST = """\
//! Geometry for the crate.
use std::collections::HashMap;
use crate::units::{Meters, convert as to_meters};

/// A point in space.
#[derive(Debug, Clone)]
pub struct Point<'a, T: Clone> {
    pub x: i32,
    label: &'a T,
}

/// Things that can be drawn.
pub trait Draw {
    /// Draws it.
    fn draw(&self) -> String;
}

impl<'a, T: Clone> Point<'a, T> {
    /// Makes a point.
    pub fn new(x: i32, label: &'a T) -> Self {
        Point { x, label }
    }

    pub fn shifted(&self) -> Self {
        let p = Self::new(self.x + 1, self.label);
        p.describe();
        p
    }

    fn describe(&self) {}
}

impl<'a, T: Clone> Draw for Point<'a, T> {
    fn draw(&self) -> String {
        let meters = to_meters(self.x);
        format!("{}", meters)
    }
}

pub enum Shape { Dot(Point<'static, u8>), Line }

pub fn origin() -> i32 { helper() }
fn helper() -> i32 { 0 }

mod inner {
    pub fn f() {}
}
mod geometry;
macro_rules! square { ($x:expr) => { $x * $x }; }
pub const MAX: usize = 10;
"""


def test_rust_items_impls_traits_and_docs() -> None:
    """Structs with derives, traits, impl blocks (methods named by type), ``///`` docs."""
    rel = "src/lib.rs"
    nodes = nodes_of(RustAnalyzer(), rel, RUST)
    module = nodes[""]
    assert module.uko_type == "uko-rs:Crate"
    assert module.properties["docstring"] == "Geometry for the crate."
    point = nodes["Point"]
    assert point.uko_type == "uko-rs:Struct"
    assert point.properties["signature"] == "pub struct Point<'a, T: Clone>"
    assert point.properties["docstring"] == "A point in space."
    assert point.properties["decorators"] == "#[derive(Debug, Clone)]"
    assert "#[derive(Debug, Clone)]" in point.renderings[DEPTH_SIGNATURES]
    assert nodes["Point.x"].properties["signature"] == "pub x: i32"
    assert nodes["Draw"].uko_type == "uko-rs:Trait"
    assert nodes["Draw.draw"].uko_type == "uko-rs:Method"
    assert nodes["Draw.draw"].properties["docstring"] == "Draws it."
    inherent = nodes["Point~impl"]
    assert inherent.uko_type == "uko-rs:Impl"
    assert ("uko-rs:implFor", point.uri) in inherent.edges
    new = nodes["Point.new"]
    assert new.parent == inherent.uri
    assert new.properties["signature"] == "pub fn new(x: i32, label: &'a T) -> Self"
    assert new.properties["docstring"] == "Makes a point."
    assert ("uko:dependsOn", new.uri) in nodes["Point.shifted"].edges
    trait_impl = nodes["Point~impl~Draw"]
    assert trait_impl.name == "impl Draw for Point"
    assert ("uko-rs:implementsTrait", nodes["Draw"].uri) in trait_impl.edges
    assert ("uko:dependsOn", "symbol:crate.units.convert") in nodes["Point.draw"].edges
    assert nodes["Shape"].uko_type == "uko-rs:Enum"
    assert {"Shape.Dot", "Shape.Line"} <= set(nodes)
    assert ("uko:dependsOn", uri(rel, "helper")) in nodes["origin"].edges
    assert nodes["inner.f"].uko_type == "uko-rs:Function"
    assert nodes["import.src.geometry"].uko_type == "uko-rs:Use"
    assert nodes["square"].uko_type == "uko-rs:Macro"
    assert nodes["MAX"].uko_type == "uko-rs:Constant"
    use = nodes["import.crate.units.Meters"]
    assert use.edges == [
        ("uko:dependsOn", "symbol:crate.units.Meters"),
        ("uko:dependsOn", "symbol:crate.units.convert"),
    ]


def test_outlines_read_as_the_source() -> None:
    """A container's listing ends fields and bodiless methods as the source does, lists a
    declaration of several names once, and folds a signature written over several lines
    without the spaces and trailing commas its line breaks left."""
    rust = nodes_of(
        RustAnalyzer(),
        "src/v.rs",
        """\
        pub struct Validator {
            fields: Vec<Field>,
            strict: bool,
        }

        pub trait Build {
            fn build<T>(
                schema: &Schema,
                config: Option<&Config>,
            ) -> Result<T>
            where
                T: Clone;
        }

        impl Validator {
            pub fn new(
                fields: Vec<Field>,
            ) -> Self {
                Self { fields, strict: false }
            }
        }
        """,
    )
    assert rust["Validator"].renderings[DEPTH_SIGNATURES].splitlines() == [
        "pub struct Validator {",
        "    fields: Vec<Field>,",
        "    strict: bool,",
        "}",
    ]
    assert rust["Build"].renderings[DEPTH_OUTLINE].splitlines()[1] == (
        "    fn build<T>(schema: &Schema, config: Option<&Config>) -> Result<T> where T: Clone;"
    )
    assert rust["Validator.new"].properties["signature"] == "pub fn new(fields: Vec<Field>) -> Self"
    typescript = nodes_of(
        TypeScriptAnalyzer(),
        "speaker.ts",
        """\
        export interface Speaker {
          greet(who: string): Promise<string>;
          readonly volume: number;
        }
        export class Room {
          private count: number = 0;
        }
        """,
    )
    assert typescript["Speaker"].renderings[DEPTH_SIGNATURES].splitlines()[1:3] == [
        "    greet(who: string): Promise<string>;",
        "    readonly volume: number;",
    ]
    assert "    private count: number = 0;" in typescript["Room"].renderings[DEPTH_OUTLINE]
    java = nodes_of(
        JavaAnalyzer(),
        "Limits.java",
        """\
        interface Finder {
            Object find(long id);
        }
        class Limits {
            static final int LIMIT = 3, FLOOR = 1;
        }
        enum Level {
            LOW,
            HIGH;
            int weight() { return 1; }
        }
        """,
    )
    assert "    Object find(long id);" in java["Finder"].renderings[DEPTH_OUTLINE]
    limits = java["Limits"].renderings[DEPTH_SIGNATURES].splitlines()
    assert limits[1:] == ["    static final int LIMIT = 3, FLOOR = 1;", "}"]
    assert {"Limits.LIMIT", "Limits.FLOOR"} <= set(java)
    assert java["Level"].renderings[DEPTH_OUTLINE].splitlines()[1:4] == [
        "    LOW,",
        "    HIGH;",
        "    int weight() { ... }",
    ]
    go = nodes_of(
        GoAnalyzer(),
        "point.go",
        """\
        package geo

        type Point struct {
            X, Y float64
            Label string
        }

        func Distance(
            a Point,
            b Point,
        ) float64 {
            return 0
        }
        """,
    )
    assert go["Point"].renderings[DEPTH_SIGNATURES].splitlines()[1:3] == [
        "    X, Y float64",
        "    Label string",
    ]
    assert go["Distance"].properties["signature"] == "func Distance(a Point, b Point) float64"


def test_rust_macros_are_dependencies_and_their_arguments_calls() -> None:
    """A macro invocation depends on the macro: this file's ``macro_rules!``, else
    ``symbol:macro:<name>`` (which one macro of the resource answers), none for the
    standard library's; at the top level, the module does. tree-sitter leaves a macro's
    arguments a flat token tree: the calls and macros in it are read from the tokens
    (members of anything but a path left out), and a ``macro_rules!`` depends on what its
    expansions call. A call by a path from the crate's root or the module
    (``crate::``, ``self::``, ``super::``) is named so for the indexer."""
    from cleveragents_acms.indexing.resolve import resolve_edges

    rel = "src/calc.rs"
    nodes = nodes_of(
        RustAnalyzer(),
        rel,
        """\
        use crate::shapes::area;

        macro_rules! twice {
            ($x:expr) => { $crate::shapes::double($x) + local!(1) };
        }

        make_point!(Point);

        pub struct Acc { total: i32 }

        impl Acc {
            pub fn show(&self, items: &[i32]) -> String {
                assert_eq!(self.sum(items), area(2), "{}", items[0].pow(2));
                let v = vec![crate::shapes::area(1), helper(3), Acc::make().total, twice!(2)];
                debug!("{}", self.total.abs());
                format!("{:?} {}", v, inner!(parse(self.total)))
            }

            fn sum(&self, items: &[i32]) -> i32 { items.iter().sum() }

            fn make() -> Acc { Acc { total: 0 } }
        }

        fn helper(x: i32) -> i32 { self::parse(x) + super::up(x) }
        fn parse(x: i32) -> i32 {
            macro_rules! here { () => { 1 }; }
            x + here!()
        }
        """,
    )
    assert {t for _, t in nodes["Acc.show"].edges} == {
        "symbol:crate.shapes.area",  # area(2) through the use, and its full path
        uri(rel, "twice"),
        "symbol:macro:debug",
        "symbol:macro:inner",
        uri(rel, "Acc.sum"),
        uri(rel, "helper"),
        uri(rel, "Acc.make"),
        uri(rel, "parse"),
    }
    assert [t for _, t in nodes["helper"].edges] == ["symbol:self.parse", "symbol:super.up"]
    assert nodes["parse"].edges == []  # a macro of its own body, like a local closure
    assert [t for _, t in nodes["twice"].edges] == [
        "symbol:crate.shapes.double",
        "symbol:macro:local",
    ]
    assert ("uko:dependsOn", "symbol:macro:make_point") in nodes[""].edges

    other = "src/macros.rs"
    macros = nodes_of(
        RustAnalyzer(),
        other,
        "macro_rules! make_point { ($n:ident) => { pub struct $n; }; }\n"
        "macro_rules! debug { ($($t:tt)*) => {}; }\n",
    )
    again = nodes_of(RustAnalyzer(), "src/more.rs", "macro_rules! debug { () => {}; }\n")
    resolve_edges(list(nodes.values()), [*macros.values(), *again.values()])
    assert ("uko:dependsOn", uri(other, "make_point")) in nodes[""].edges
    # Two macros named ``debug``: which one is meant is not known.
    assert ("uko:dependsOn", "symbol:macro:debug") in nodes["Acc.show"].edges


JAVA = """\
package com.example.users;

import java.util.List;
import java.util.Optional;
import static java.lang.Math.max;

/**
 * Finds and stores users.
 */
@Service
public final class UserService extends BaseService implements Finder, AutoCloseable {
    private final List<String> names = List.of();
    public static final int LIMIT = 3, FLOOR = 1;

    /** Makes the service. */
    public UserService(String name) {
        super(name);
    }

    /**
     * Finds a user.
     * @param id the id
     */
    @Override
    public Optional<User> find(long id) throws IOException {
        return Optional.ofNullable(lookup(max(id, FLOOR)));
    }

    private User lookup(long id) { return new User(id); }

    static class User {
        User(long id) {}
    }
}

interface Finder { Optional<?> find(long id) throws IOException; }
enum Level { LOW, HIGH; int weight() { return 1; } }
record Pair(int a, int b) {}
"""


def test_java_classes_members_javadoc_and_calls() -> None:
    """Classes with annotations and Javadoc, constructors, fields, nested types, records."""
    rel = "src/main/java/com/example/users/UserService.java"
    nodes = nodes_of(JavaAnalyzer(), rel, JAVA)
    module = nodes[""]
    assert module.uko_type == "uko-java:CompilationUnit"
    assert module.properties["package"] == "com.example.users"
    service = nodes["UserService"]
    assert service.uko_type == "uko-java:Class"
    assert service.properties["fqname"] == "com.example.users.UserService"
    assert service.properties["docstring"] == "Finds and stores users."
    assert service.properties["signature"] == (
        "@Service public final class UserService extends BaseService "
        "implements Finder, AutoCloseable"
    )
    assert ("uko-oo:inheritsFrom", "symbol:BaseService") in service.edges
    assert ("uko-oo:implements", uri(rel, "Finder")) in service.edges
    assert nodes["UserService.UserService"].uko_type == "uko-java:Constructor"
    find = nodes["UserService.find"]
    assert find.uko_type == "uko-java:Method"
    assert find.properties["signature"] == (
        "@Override public Optional<User> find(long id) throws IOException"
    )
    assert find.properties["docstring"] == "Finds a user.\n@param id the id"
    assert ("uko:dependsOn", uri(rel, "UserService.lookup")) in find.edges
    assert ("uko:dependsOn", "symbol:java.lang.Math.max") in find.edges
    assert ("uko:dependsOn", "symbol:java.util.Optional.ofNullable") in find.edges
    assert ("uko:dependsOn", uri(rel, "UserService.User")) in nodes["UserService.lookup"].edges
    assert nodes["UserService.LIMIT"].uko_type == "uko-java:Field"
    assert {"UserService.FLOOR", "UserService.names"} <= set(nodes)
    assert nodes["UserService.User"].parent == service.uri
    assert nodes["Finder"].uko_type == "uko-java:Interface"
    assert nodes["Level"].uko_type == "uko-java:Enum"
    assert {"Level.LOW", "Level.weight"} <= set(nodes)
    assert nodes["Pair"].uko_type == "uko-java:Record"
    assert nodes["import.java.util.List"].uko_type == "uko-java:Import"


@pytest.mark.parametrize(
    ("analyzer", "relative", "source"),
    [
        (TypeScriptAnalyzer(), "bad.ts", "export class A {\n  method( {\n}\nfunction ok() {}\n"),
        (GoAnalyzer(), "bad.go", "package x\n\nfunc Broken( {\n}\n\nfunc Fine() {}\n"),
        (RustAnalyzer(), "bad.rs", "fn broken( {\n}\n\nfn fine() {}\n"),
        (JavaAnalyzer(), "Bad.java", "class A {\n  void m( {\n  }\n  void ok() {}\n}\n"),
    ],
)
def test_syntax_errors_are_reported_and_the_rest_is_indexed(
    analyzer: TreeSitterAnalyzer, relative: str, source: str
) -> None:
    """tree-sitter recovers: the error position is reported and the file still has nodes."""
    result = analyze(analyzer, relative, source)
    assert len(result.errors) == 1 and result.errors[0].startswith(f"{relative}:")
    assert result.nodes[0].renderings[DEPTH_FULL] == source
    check_tree(result.nodes, relative)


def test_undecodable_and_empty_input() -> None:
    """Replacement characters, empty files and binary-ish text never raise."""
    assert len(analyze(GoAnalyzer(), "empty.go", "").nodes) == 1
    result = analyze(TypeScriptAnalyzer(), "odd.ts", "const s = '\ufffd\x00';\nfunction f() {}\n")
    assert [n.qualname for n in result.nodes] == ["", "s", "f"]


def test_supports_and_grammars_are_cached() -> None:
    """Each analyzer claims its suffixes; a grammar is built once per process."""
    assert TypeScriptAnalyzer().supports(Path("a.tsx"), b"")
    assert TypeScriptAnalyzer().supports(Path("a.mts"), b"")
    assert not TypeScriptAnalyzer().supports(Path("a.js"), b"")
    assert JavaScriptAnalyzer().supports(Path("a.cjs"), b"")
    assert GoAnalyzer().supports(Path("main.go"), b"")
    assert RustAnalyzer().supports(Path("lib.rs"), b"")
    assert JavaAnalyzer().supports(Path("A.java"), b"")
    assert grammar("rust") is grammar("rust")
    with pytest.raises(ValueError, match="no tree-sitter grammar"):
        grammar("cobol")


def test_an_engine_failure_falls_back_to_plain_text(monkeypatch: pytest.MonkeyPatch) -> None:
    """A grammar or engine bug does not stop indexing: the file is indexed as text and the
    failure is recorded for it."""
    from cleveragents_acms.analyzers import treesitter

    def broken(name: str) -> object:
        raise RuntimeError("grammar exploded")

    monkeypatch.setattr(treesitter, "_parser", broken)
    result = analyze(GoAnalyzer(), "main.go", "package main\n\nfunc main() {}\n")
    assert result.errors == ["main.go: go analysis failed: RuntimeError('grammar exploded')"]
    assert result.nodes and result.nodes[0].path == "main.go"
    assert "func main() {}" in result.nodes[0].renderings[DEPTH_FULL]
