"""TypeScript, JavaScript, Go, Rust and Java to UKO nodes with tree-sitter.

Grammars come from the per-language wheels (``tree-sitter-typescript``,
``-javascript``, ``-go``, ``-rust``, ``-java``); nothing is downloaded. A
grammar and its parser are built on first use and cached per process (parsers
per thread, as tree-sitter parsers are not thread-safe). One engine reads the
declaration tables of :mod:`._treesitter_languages`: modules, classes,
interfaces, structs, enums, traits, impls and namespaces with their members,
functions and methods with signatures (the text up to the body) and doc
comments (JSDoc and Javadoc ``/** */``, Go ``//`` runs, Rust ``///``),
imports, inheritance and the calls each callable makes.

tree-sitter recovers from syntax errors, so a broken file is still indexed;
the first error position goes to ``AnalysisResult.errors``.
"""

from __future__ import annotations

import bisect
import importlib
import json
import posixpath
import re
import threading
from dataclasses import dataclass, field
from functools import cache, lru_cache
from pathlib import Path
from typing import Any, ClassVar

from cleveragents.models.uko import (
    DEPTH_FULL,
    DEPTH_MEMBERS,
    DEPTH_NAME,
    DEPTH_OUTLINE,
    DEPTH_SIGNATURES,
    AnalysisResult,
    UKONode,
)
from cleveragents_acms.analyzers._common import (
    DEFAULT_EXPORT,
    DEPENDS_ON,
    EXPORT_BINDINGS,
    GUESSED_TARGETS,
    IMPL_FOR,
    IMPLEMENTS,
    IMPLEMENTS_TRAIT,
    INHERITS_FROM,
    JAVA_KEY,
    MACRO_EXPORT,
    MACRO_KEY,
    MODULE_EXPORT,
    ON_DEMAND_IMPORTS,
    PACKAGE_GUESSES,
    PROC_MACRO,
    RUST_CRATE,
    RUST_MACRO,
    SCRIPT_EXPORT,
    SYMBOL,
    NodeFactory,
    collapse,
    dedupe,
    go_import_path,
    go_package_symbol,
    java_package_symbol,
    script_stem,
    truncate,
)
from cleveragents_acms.analyzers._treesitter_languages import (
    LANGUAGES,
    Declaration,
    LanguageSpec,
)

__all__ = [
    "GoAnalyzer",
    "JavaAnalyzer",
    "JavaScriptAnalyzer",
    "RustAnalyzer",
    "TreeSitterAnalyzer",
    "TypeScriptAnalyzer",
    "grammar",
]

Node = Any  # tree_sitter.Node


_SHORT = 10
_GENERIC_ARGS = re.compile(r"<[^<>]*>")
_FUNCTION_VALUES = frozenset(
    {"arrow_function", "function_expression", "function", "generator_function"}
)
_JS_SUFFIXES = frozenset({"js", "mjs", "cjs", "jsx", "ts", "mts", "cts", "tsx"})
#: Which of TypeScript's merged declarations of one name a reference means, by kind.
_MERGE_RANK = {
    "class": 0, "function": 1, "method": 1, "enum": 2, "interface": 3, "namespace": 4,
    "type": 5, "variable": 6,
}  # fmt: skip
_LOCK = threading.Lock()
_PARSERS = threading.local()


@cache
def grammar(name: str) -> Any:
    """The :class:`tree_sitter.Language` for ``typescript``, ``tsx``, ``javascript`` … (cached)."""
    import tree_sitter

    loaders: dict[str, tuple[str, str]] = {
        "typescript": ("tree_sitter_typescript", "language_typescript"),
        "tsx": ("tree_sitter_typescript", "language_tsx"),
        "javascript": ("tree_sitter_javascript", "language"),
        "go": ("tree_sitter_go", "language"),
        "rust": ("tree_sitter_rust", "language"),
        "java": ("tree_sitter_java", "language"),
    }
    if name not in loaders:
        raise ValueError(f"no tree-sitter grammar for {name!r}")
    module_name, function = loaders[name]
    pointer = getattr(importlib.import_module(module_name), function)()
    return tree_sitter.Language(pointer)


def _parser(name: str) -> Any:
    parsers = getattr(_PARSERS, "by_grammar", None)
    if parsers is None:
        parsers = _PARSERS.by_grammar = {}
    parser = parsers.get(name)
    if parser is None:
        import tree_sitter

        with _LOCK:
            language = grammar(name)
        parser = parsers[name] = tree_sitter.Parser(language)
    return parser


#: Variables declared with a named type, by language: ``@name`` and ``@type`` (or, for
#: Java's ``var x = new Foo()``, ``@value``; JavaScript's ``new Foo()`` is its type).
#: Fields (``@field``; TypeScript's constructor parameter properties too) hold for the
#: whole file, a Go or Rust struct's by the struct's name (``@struct``). Rust's ``let x =
#: Type::new()`` names the type as ``@type`` and the function as ``@constructor``.
_TYPED_VARIABLES = {
    "java": """
        (local_variable_declaration type: (_) @type
          declarator: (variable_declarator name: (identifier) @name value: (_)? @value))
        (field_declaration type: (_) @type
          declarator: (variable_declarator name: (identifier) @field))
    """,
    "go": """
        (var_spec name: (identifier) @name type: (_) @type)
        (short_var_declaration left: (expression_list . (identifier) @name .)
          right: (expression_list . [(composite_literal type: (_) @type)
            (unary_expression operand: (composite_literal type: (_) @type))] .))
        (type_spec name: (type_identifier) @struct type: (struct_type (field_declaration_list
          (field_declaration name: (field_identifier) @field type: (_) @type))))
        (short_var_declaration left: (expression_list . (identifier) @name)
          right: (expression_list . (call_expression function: (_) @constructor)))
    """,
    "typescript": """
        (variable_declarator name: (identifier) @name type: (type_annotation (_) @type))
        (variable_declarator name: (identifier) @name
          value: (new_expression constructor: (_) @type))
        (public_field_definition name: (property_identifier) @field
          type: (type_annotation (_) @type))
        (public_field_definition name: (property_identifier) @field
          value: (new_expression constructor: (_) @type))
        (required_parameter (accessibility_modifier) pattern: (identifier) @field
          type: (type_annotation (_) @type))
    """,
    "javascript": """
        (variable_declarator name: (identifier) @name
          value: (new_expression constructor: (_) @type))
        (field_definition property: (property_identifier) @field
          value: (new_expression constructor: (_) @type))
    """,
    "rust": """
        (let_declaration pattern: (identifier) @name type: (_) @type)
        (let_declaration pattern: (identifier) @name
          value: (call_expression function: (scoped_identifier path: (_) @type
            name: (identifier) @constructor)))
        (struct_item name: (type_identifier) @struct body: (field_declaration_list
          (field_declaration name: (field_identifier) @field type: (_) @type)))
    """,
}
#: Go: a function named ``New`` and a type's name makes one (``NewReader`` a ``Reader``,
#: ``bufio.NewReader`` a ``bufio.Reader``), as Go's own packages name them.
_GO_CONSTRUCTOR = re.compile(r"(?:(\w+)\.)?New([A-Z]\w*)")
#: Rust: the associated functions ``let x = Type::f(…)`` takes to make a ``Type``
#: (``Type::parse(…)`` may give anything; these, by custom, give the type itself).
_RUST_CONSTRUCTORS = re.compile(r"new|default|from|(new|with)_\w+")


@cache
def _call_query(name: str, spec_name: str) -> Any:
    """The calls' callees (``@callee``) and the typed variables (one walk of the tree for
    both: 1.4 CPU-s for 1,500 of the JDK's files against 2.2 for two queries)."""
    import tree_sitter

    spec = LANGUAGES[spec_name]
    patterns = " ".join(f"({kind} {field}: (_) @callee)" for kind, field in spec.calls)
    if spec_name == "rust":
        patterns += " (macro_definition) @macro_rules"
    elif spec_name == "java":  # ``Item::name``, ``this::keep``: a call made later
        patterns += " (method_reference) @callee"
    if name in ("tsx", "javascript"):  # ``<Button …/>`` renders (calls) ``Button``
        patterns += "".join(f" ({kind} name: (_) @callee)" for kind in sorted(_JSX_ELEMENTS))
    return tree_sitter.Query(grammar(name), patterns + _TYPED_VARIABLES.get(spec_name, ""))


@dataclass(slots=True)
class _Member:
    node: UKONode
    brief: str
    stub: str


@dataclass(slots=True)
class _Callable:
    start: int
    end: int
    node: UKONode
    owner: str  # qualname of the enclosing type, "" at module level
    receiver: str = ""  # a Go method's receiver variable (``c`` of ``func (c *Command)``)
    #: Its declaration (for its parameters' types, read when a call needs them) ...
    declaration: Any = None
    #: ... and its local variables declared with a named type (``var x = new Foo()``).
    locals: dict[str, str] = field(default_factory=dict)
    #: Both: variable -> type (``cmd *cobra.Command`` -> ``cmd: cobra.Command``), a call
    #: on one being to that type's method; None until a call needs them.
    types: dict[str, str] | None = None


class _FileBuilder:
    def __init__(
        self,
        spec: LanguageSpec,
        grammar_name: str,
        content: str,
        resource_id: str,
        relative: str,
        package_path: str | None = None,
    ) -> None:
        self.spec = spec
        self.grammar_name = grammar_name
        self.content = content
        self.src = content.encode("utf-8", errors="surrogatepass")
        self.lines = [line.rstrip("\r") for line in content.split("\n")]
        self.relative = relative
        self.factory = NodeFactory(resource_id, relative, spec.name)
        if spec.name in ("typescript", "javascript"):  # ``lib/util.d.ts`` answers as ``lib/util``
            stem = script_stem(relative)
        else:
            stem = relative.rsplit(".", 1)[0] if "." in relative.rsplit("/", 1)[-1] else relative
        # A Go package is a folder, named by its import path where a go.mod gives one.
        self.module_prefix = package_path or stem.replace("/", ".")
        self.bindings: dict[str, str] = {}
        self.by_qualname: dict[str, UKONode] = {}
        self.callables: list[_Callable] = []
        self.go_types: set[str] = set()
        self.module_edges: list[tuple[str, str]] = []
        self.imports: list[UKONode] = []
        self.bases: list[tuple[UKONode, str, str]] = []
        #: Java bases by a plain name no import gives, as their package would declare them.
        self.heritage_guesses: set[str] = set()
        #: The packages a Java file imports on demand (``import java.util.*;``), in order.
        self.on_demand: list[str] = []
        #: Java: the classes whose static members it imports on demand (``import static
        #: org.junit.Assert.*;``), in order.
        self.static_on_demand: list[str] = []
        #: Go: a type's container rendering inputs, to add the methods declared later.
        self.go_containers: dict[str, tuple[UKONode, str, str, list[_Member]]] = {}
        self.go_methods: dict[str, list[_Member]] = {}
        #: Go: the types a struct or interface of the file embeds, as written (``Base``,
        #: ``http.Handler``): their fields and methods are promoted to it.
        self.go_embedded: dict[str, list[str]] = {}
        #: Callables declared without a body (TypeScript overload signatures, interface
        #: and trait methods), and the ``(parent, name)`` of those with one.
        self.bodiless: list[UKONode] = []
        self.implemented: set[tuple[str | None, str]] = set()
        #: JavaScript: the declaration ``module.exports = Name`` makes what ``require`` gives.
        self.module_export = ""
        #: JavaScript and TypeScript: the declaration ``export default`` names.
        self.default_export = ""
        #: A class's one base class, by the name the file gives it (``extends Base``).
        self.extends: dict[str, str] = {}
        #: Rust: the file's ``macro_rules!`` by name (macros have a namespace of their
        #: own), once an invocation needs them.
        self.rust_macros: dict[str, UKONode] | None = None
        #: ... and the names of all its ``macro_rules!``, those of function bodies too.
        self.defined_macros: set[str] = set()
        #: The declarations listed in their container so far, by their byte range: one
        #: that declares several names (``int LIMIT = 3, FLOOR = 1;``) is listed once.
        self.listed: set[tuple[int, int]] = set()

    # -- helpers -------------------------------------------------------------------------

    def text(self, node: Node | None) -> str:
        if node is None:
            return ""
        return self.src[node.start_byte : node.end_byte].decode("utf-8", errors="replace")

    def source(self, start: int, end: int) -> str:
        return "\n".join(self.lines[start - 1 : end])

    @staticmethod
    def rows(node: Node) -> tuple[int, int]:
        start, end = node.start_point[0] + 1, node.end_point[0] + 1
        if node.end_point[1] == 0 and end > start:
            end -= 1
        return start, end

    def signature(self, outer: Node, body: Node | None) -> str:
        end = body.start_byte if body is not None else outer.end_byte
        text = self.src[outer.start_byte : end].decode("utf-8", errors="replace")
        # A trailing comma is a Rust ``where`` clause's, before the body.
        text = _fold(text).rstrip("{ ;,").rstrip()
        return truncate(text, 300)

    def terminator(self, node: Node) -> str:
        """The ``;`` or ``,`` that ends ``node`` in the source: its own last byte (a Java
        field, a Rust trait's bodiless ``fn``) or the token right after it (a Rust struct's
        field, a TypeScript interface's member). Go's newlines end nothing shown."""
        last = self.src[node.end_byte - 1 : node.end_byte]
        if last in (b";", b","):
            return last.decode()
        after = node.next_sibling
        if after is not None and not after.is_named and after.type in (";", ","):
            return after.type
        if after is not None and after.type == "enum_body_declarations":
            return ";"  # Java: the last constant of an enum with members
        return ""

    def doc(self, comments: list[Node], anchor: Node) -> str:
        """The doc comment right above ``anchor`` (a contiguous run of comment nodes)."""
        run: list[Node] = []
        row = anchor.start_point[0]
        for comment in reversed(comments):
            if comment.end_point[0] < row - 1:
                break
            run.insert(0, comment)
            row = comment.start_point[0]
        texts = [self.text(c) for c in run]
        prefixes = self.spec.doc_prefixes
        if self.spec.name == "rust":
            texts = [t for t in texts if t.startswith(("///", "/**")) and not t.startswith("////")]
        elif not texts or not texts[-1].startswith(prefixes):
            return ""
        if prefixes == ("/**",):
            texts = texts[-1:]
        return _clean_comment(texts)

    # -- the file ------------------------------------------------------------------------------

    def build(self, tree: Any) -> tuple[list[UKONode], list[str]]:
        root = tree.root_node
        last = len(self.lines) - (1 if self.lines and self.lines[-1] == "" else 0)
        module_type = self.spec.module_type
        if self.spec.name == "rust" and self.relative.rsplit("/", 1)[-1] in ("lib.rs", "main.rs"):
            module_type = RUST_CRATE
        module = self.factory.make(
            module_type, self.relative, "", 1, max(1, last), None,
            properties={"kind": "module", "module": self.module_prefix},
        )  # fmt: skip
        package = next(
            (c for c in root.named_children if c.type in ("package_clause", "package_declaration")),
            None,
        )
        if package is not None:
            package_name = self.text(package.named_children[0]) if package.named_children else ""
            module.properties["package"] = package_name
            if self.spec.name == "java" and package_name:
                self.module_prefix = package_name
        if self.spec.name == "go":
            self.go_types = {
                self.text(spec.child_by_field_name("name"))
                for decl in root.named_children
                if decl.type == "type_declaration"
                for spec in decl.named_children
                if spec.type in ("type_spec", "type_alias")
            }
        module_doc = self.module_doc(root)
        if module_doc:
            module.properties["docstring"] = module_doc
        members = self.members(root.named_children, module, "", None)
        self.mark_exported()
        self.resolve_bases()
        for receiver, methods in self.go_methods.items():
            if receiver in self.go_containers:
                uko, signature, doc, fields = self.go_containers[receiver]
                self.render_container(uko, signature, doc, [*fields, *methods], [])
        self.resolve_calls(root)
        self.mark_overloads()
        module.edges.extend(dedupe(self.module_edges))
        if self.spec.name in ("go", "java"):
            guesses = {
                target[len(SYMBOL) :]
                for node in self.factory.nodes
                for _, target in node.edges
                if target.startswith(GUESSED_TARGETS)
            } | self.heritage_guesses
            if self.on_demand:
                # The indexer looks for each in the packages imported on demand too.
                module.properties[ON_DEMAND_IMPORTS] = "\n".join(self.on_demand)
                own = java_package_symbol(self.module_prefix, "")
                guesses |= {
                    java_package_symbol(package, guess[len(own) :])
                    for guess in guesses
                    if guess.startswith(own)
                    for package in self.on_demand
                }
            module.properties[PACKAGE_GUESSES] = "\n".join(sorted(guesses))
        self.render_module(module, module_doc, members)
        errors = [] if not root.has_error else [self.first_error(root)]
        return self.factory.nodes, errors

    def mark_exported(self) -> None:
        """What ``require`` or a default import gives, as properties that
        :func:`resolve.symbol_keys` reads: with ``module.exports = Layer`` the members of
        ``Layer`` are the module's; with ``export default Layer``, ``Layer`` is the
        module's ``default``."""
        for exported, mark, itself in (
            (self.module_export, MODULE_EXPORT, False),
            (self.default_export, DEFAULT_EXPORT, True),
        ):
            if exported not in self.by_qualname:
                continue
            for node in self.factory.nodes:
                if node.qualname.startswith(f"{exported}.") or (
                    itself and node.qualname == exported
                ):
                    node.properties[mark] = exported

    def module_doc(self, root: Node) -> str:
        children = root.named_children
        if not children or children[0].type not in self.spec.comment_types:
            return ""
        first = self.text(children[0])
        if self.spec.name == "rust":
            run = [self.text(c) for c in children[:50] if self.text(c).startswith("//!")]
            return _clean_comment(run)
        if self.spec.name == "go":
            package = next((c for c in children if c.type == "package_clause"), None)
            if package is not None:
                return self.doc([c for c in children if c.end_byte <= package.start_byte], package)
        return _clean_comment([first]) if first.startswith("/**") and len(children) > 1 else ""

    def first_error(self, root: Node) -> str:
        stack = [root]
        while stack:
            node = stack.pop()
            if node.is_error or node.is_missing:
                row, column = node.start_point
                what = f"missing {node.type}" if node.is_missing else "syntax error"
                return f"{self.relative}:{row + 1}:{column + 1}: {what}"
            if node.has_error:
                stack.extend(reversed(node.children))
        return f"{self.relative}: syntax error"

    def render_module(self, module: UKONode, doc: str, members: list[_Member]) -> None:
        title = f"// {self.relative}"
        head = [title]
        if doc:
            head.append(self.spec.doc_render.format(doc.split("\n", 1)[0]))
        listing = [*head, *(f"{m.node.properties.get('kind', '')} {m.node.name}" for m in members)]
        outline = [title]
        if doc:
            outline.append(_render_doc(doc, self.spec))
        if self.imports:
            outline.append("\n".join(n.name for n in self.imports))
        module.renderings = {
            DEPTH_NAME: self.relative,
            DEPTH_MEMBERS: "\n".join(listing),
            DEPTH_SIGNATURES: "\n".join([*head, *(m.brief for m in members if m.brief)]),
            DEPTH_OUTLINE: "\n\n".join([*outline, *(m.stub for m in members if m.stub)]),
            DEPTH_FULL: self.content,
        }

    # -- declarations ------------------------------------------------------------------------

    def members(
        self, children: list[Node], parent: UKONode, prefix: str, owner: Declaration | None
    ) -> list[_Member]:
        spec = self.spec
        out: list[_Member] = []
        comments: list[Node] = []
        decorators: list[Node] = []
        previous_row = -1
        for child in children:
            kind = child.type
            if kind in spec.comment_types:
                if child.start_point[0] != previous_row:  # not a trailing comment
                    comments.append(child)
                continue
            previous_row = child.end_point[0]
            if kind in spec.decorator_types:
                decorators.append(child)
                continue
            target = self.unwrap(child) if kind in spec.wrappers else child
            anchor = decorators[0] if decorators else child
            doc = self.doc(comments, anchor) if comments else ""
            if target is not None:
                declared = self.declare(target, child, parent, prefix, owner, doc, decorators)
                out.extend(declared)
            elif kind == "export_statement" and owner is None:
                self.export_node(child, parent)
            if kind == "export_statement" and owner is None and _is_default(child):
                value = child.child_by_field_name("value")
                if target is not None and declared:  # ``export default class Layer { … }``
                    self.default_export = declared[0].node.qualname
                elif value is not None and value.type == "identifier":  # ``export default Layer``
                    self.default_export = self.text(value)
            comments, decorators = [], []
        return out

    def unwrap(self, wrapper: Node) -> Node | None:
        inner = wrapper.child_by_field_name("declaration")
        if inner is not None:
            # ``export declare class A``: a TypeScript ambient declaration inside an export.
            return self.unwrap(inner) if inner.type in self.spec.wrappers else inner
        for child in wrapper.named_children:
            if child.type in self.spec.declarations or child.type in (
                "lexical_declaration", "variable_declaration"
            ):  # fmt: skip
                return child
        if wrapper.type == "ambient_declaration":  # ``declare global { … }``: its members
            return next((c for c in wrapper.named_children if c.type == "statement_block"), None)
        # ``Foo.prototype.bar = function …``: not a declaration, but declares one.
        return wrapper if wrapper.type == "expression_statement" else None

    def declare(
        self,
        node: Node,
        outer: Node,
        parent: UKONode,
        prefix: str,
        owner: Declaration | None,
        doc: str,
        decorators: list[Node],
    ) -> list[_Member]:
        spec = self.spec
        kind = node.type
        if kind in spec.imports:
            self.import_node(node, parent)
            return []
        if kind in spec.nested_bodies:
            return self.members(node.named_children, parent, prefix, owner)
        if kind in ("lexical_declaration", "variable_declaration"):
            return self.variables(node, outer, parent, prefix, owner, doc)
        if kind == "expression_statement" and spec.name in ("javascript", "typescript"):
            return self.assigned_function(node, parent, prefix, owner, doc)
        if spec.name == "go" and kind in (
            "type_declaration",
            "const_declaration",
            "var_declaration",
        ):
            return self.go_declaration(node, parent, prefix, doc)
        if spec.name == "rust" and kind == "mod_item" and node.child_by_field_name("body") is None:
            self.rust_mod(node, parent)
            return []
        if spec.name == "rust" and kind == "macro_invocation":
            macro = node.child_by_field_name("macro")
            if macro is not None and self.text(macro).rsplit("::", 1)[-1] == "bitflags":
                return self.bitflags(node, parent, prefix)
            return []
        declaration = spec.declarations.get(kind)
        if declaration is None:
            return []
        if declaration.kind == "function" and owner is not None and owner.kind not in _SCOPES:
            declaration = Declaration(
                spec.member_callable.uko_type, spec.member_callable.kind, "callable",
                declaration.body,
            )  # fmt: skip
        if declaration.role == "leaf" and kind in ("field_declaration", "constant_declaration"):
            return [
                self.leaf(node, outer, parent, prefix, declaration, doc, name)
                for name in self.field_names(node)
            ]
        name = self.name_of(node)
        if not name and declaration.kind != "impl":
            return []
        value = node.child_by_field_name("value") if declaration.kind == "field" else None
        if value is not None and value.type in _FUNCTION_VALUES:  # ``onClick = (e) => { … }``
            return [self.callable(
                value, outer, value.child_by_field_name("body"), parent, prefix,
                spec.member_callable, doc, name, decorators,
            )]  # fmt: skip
        if declaration.role == "container":
            return [self.container(node, outer, parent, prefix, declaration, doc, name, decorators)]
        if declaration.role == "callable":
            body = node.child_by_field_name("body") if declaration.body else None
            return [self.callable(node, outer, body, parent, prefix, declaration, doc, name,
                                  decorators)]  # fmt: skip
        leaf = self.leaf(node, outer, parent, prefix, declaration, doc, name)
        if kind == "macro_definition" and any(
            "macro_export" in self.text(d) for d in decorators
        ):  # ``#[macro_export] macro_rules! m``: ``crate::m`` wherever it is defined
            leaf.node.properties[MACRO_EXPORT] = "true"
        return [leaf]

    def mark_overloads(self) -> None:
        """TypeScript: a signature beside an implementation of the same name in the same
        scope is an overload (``function map(x: string): string;`` then ``function map(x)
        { … }``), marked ``overload``, as the implementation holds the code. An interface's
        method declared alone is not one. Other languages have no such signatures: a Java
        abstract method beside a default one of its name is an overload of its own."""
        if self.spec.name != "typescript":
            return
        for uko in self.bodiless:
            if (uko.parent, uko.name) in self.implemented:
                uko.properties["overload"] = "true"
        self.mark_merged()

    def mark_merged(self) -> None:
        """TypeScript merges declarations of one name in one scope (``declare class
        Model``, ``interface Model``, ``namespace Model`` in a ``.d.ts``; the overloads of
        a declared function): all but the one a reference means are marked ``merged``, so
        the name resolves to that one instead of to none: a class first, then a
        function or method, an enum, an interface, a namespace, a type (``type Line``
        beside ``const Line``), each time the first."""
        merging: dict[tuple[str | None, str], list[UKONode]] = {}
        for uko in self.factory.nodes:
            if uko.properties.get("kind") in _MERGE_RANK and not uko.properties.get("overload"):
                merging.setdefault((uko.parent, uko.name), []).append(uko)
        for group in merging.values():
            if len(group) > 1:
                meant = min(group, key=lambda u: _MERGE_RANK[u.properties["kind"]])
                for uko in group:
                    if uko is not meant:
                        uko.properties["merged"] = "true"

    def name_of(self, node: Node) -> str:
        name_node = node.child_by_field_name("name") or node.child_by_field_name("property")
        if name_node is None and node.type == "impl_item":
            return ""
        if name_node is None:
            for child in node.named_children:
                if child.type in ("identifier", "type_identifier", "property_identifier"):
                    return self.text(child)
            return ""
        return self.text(name_node).strip("\"'")

    def field_names(self, node: Node) -> list[str]:
        names = [self.text(n) for n in node.children_by_field_name("name")]
        for declarator in node.children_by_field_name("declarator"):
            names.append(self.text(declarator.child_by_field_name("name")))
        if not names and self.spec.name == "go":  # an embedded field: named by its type
            names = [self.go_embedded_type(node).rsplit(".", 1)[-1]]
        return [n for n in names if n]

    def qualify(self, prefix: str, name: str) -> str:
        return f"{prefix}{name}"

    def make(
        self,
        declaration: Declaration,
        name: str,
        qualname: str,
        outer: Node,
        parent: UKONode,
        doc: str,
        signature: str,
        rows: tuple[int, int] | None = None,
    ) -> UKONode:
        start, end = rows or self.rows(outer)
        properties = {"kind": declaration.kind, "signature": signature,
                      "fqname": f"{self.module_prefix}.{qualname}"}  # fmt: skip
        if doc:
            properties["docstring"] = doc
        node = self.factory.make(
            declaration.uko_type, name, qualname, start, end, parent, properties=properties
        )
        self.by_qualname.setdefault(qualname, node)
        return node

    def container(
        self,
        node: Node,
        outer: Node,
        parent: UKONode,
        prefix: str,
        declaration: Declaration,
        doc: str,
        name: str,
        decorators: list[Node],
    ) -> _Member:
        body = node.child_by_field_name(declaration.body) if declaration.body else None
        member_prefix = prefix
        qualname = self.qualify(prefix, name)
        if declaration.kind == "impl":
            target = _base_type(self.text(node.child_by_field_name("type")))
            trait = self.text(node.child_by_field_name("trait"))
            name = f"impl {trait} for {target}" if trait else f"impl {target}"
            qualname = f"{prefix}{target}~impl" + (f"~{_base_type(trait)}" if trait else "")
            member_prefix = f"{prefix}{target}."
        else:
            member_prefix = f"{qualname}."
        if body is None and declaration.kind == "struct":
            body = node.child_by_field_name("body")
        outer_for_text = decorators[0] if decorators else outer
        signature = self.signature(outer, body)
        uko = self.make(declaration, name, qualname, outer, parent, doc, signature)
        if decorators:
            uko.properties["decorators"] = "\n".join(self.text(d) for d in decorators)
            uko.start_line = self.rows(outer_for_text)[0]
        self.heritage(uko, node, declaration)
        children = body.named_children if body is not None else []
        members = self.members(children, uko, member_prefix, declaration)
        self.render_container(uko, signature, doc, members, decorators)
        return _Member(uko, uko.renderings[DEPTH_SIGNATURES], uko.renderings[DEPTH_OUTLINE])

    def heritage(self, uko: UKONode, node: Node, declaration: Declaration) -> None:
        """Base classes and implemented interfaces or traits, resolved once all names are known."""
        found: list[tuple[str, Node]] = []
        stack = [c for c in node.named_children if c.type in _HERITAGE]
        while stack:
            item = stack.pop(0)
            relation = _HERITAGE.get(item.type, "")
            for child in item.named_children:
                if child.type in _HERITAGE:
                    stack.append(child)
                elif child.type in ("type_list",):
                    found.extend((relation, c) for c in child.named_children)
                else:
                    found.append((relation, child))
        if declaration.kind == "impl":
            trait = node.child_by_field_name("trait")
            if trait is not None:
                found.append((IMPLEMENTS_TRAIT, trait))
            implemented = node.child_by_field_name("type")
            if implemented is not None:
                found.append((IMPL_FOR, implemented))
        for relation, type_node in found:
            base = _base_type(self.text(type_node))
            if base:
                self.bases.append((uko, relation, base))

    def resolve_bases(self) -> None:
        inherited: dict[str, list[str]] = {}
        for uko, relation, base in self.bases:
            if relation == INHERITS_FROM:
                # A base nested in an enclosing declaration by its qualified name, so
                # ``inherited`` finds its members.
                member = self.scoped(uko.qualname.rpartition(".")[0], base)
                written = member.qualname if member is not None else base
                inherited.setdefault(uko.qualname, []).append(written)
        self.extends = {name: bases[0] for name, bases in inherited.items() if len(bases) == 1}
        go, java = self.spec.name == "go", self.spec.name == "java"
        rust = self.spec.name == "rust"
        for uko, relation, base in self.bases:
            # A Go type of the file's package declared in another of its files: a guess.
            target = (
                self.enclosing_member(uko, base)
                or self.resolve(base, "", keep_unknown=not go)
                or (self.same_package(base) if go else None)
            )
            if target is None and rust and "." in base:
                # A trait or type by its path (``impl ruff_text_size::Ranged for Stmt``),
                # which the indexer follows like a call's (``rust_path``, ``crate_path``).
                head = base.partition(".")[0]
                if head in _RUST_PATH_ROOTS or self.crate_path(base.replace(".", "::")):
                    target = self.rust_path(base)
            if java and target == SYMBOL + base and "." not in base:
                # Not the file's, not imported: of the package first (the indexer looks
                # there before the name alone), which another of its files may declare.
                self.heritage_guesses.add(java_package_symbol(self.module_prefix, base))
            if target is not None and target != uko.uri:
                uko.edges.append((relation, target))
                uko.edges.append((DEPENDS_ON, target))
        for uko, _, _ in self.bases:
            uko.edges = dedupe(uko.edges)

    def derive_macro(self, function: UKONode, name: str, prefix: str, parent: UKONode) -> None:
        """``#[proc_macro_derive(Violation)] fn derive_violation(…)``: the macro
        ``Violation`` (what ``#[derive(Violation)]`` and ``use macros::Violation`` name) is
        a node of its own, in the macro's crate's root, that depends on the function."""
        signature = function.renderings.get(DEPTH_SIGNATURES, function.qualname)
        self.factory.make(
            RUST_MACRO, name, self.qualify(prefix, name), function.start_line,
            function.end_line, parent,
            renderings={DEPTH_NAME: name, DEPTH_SIGNATURES: signature},
            properties={
                "kind": "derive macro",
                "signature": f"#[derive({name})]",
                PROC_MACRO: "derive",
            },
            edges=[(DEPENDS_ON, function.uri)],
        )  # fmt: skip

    def bitflags(self, invocation: Node, parent: UKONode, prefix: str) -> list[_Member]:
        """``bitflags! { pub struct Modules: u32 { const TYPING = 1 << 0; … } }``: the
        structs and flags the ``bitflags`` crate's macro (one of Rust's most used)
        declares, as nodes as if written out, so ``Modules::TYPING`` resolves. Other
        macros' items are not read: it would take expanding them."""
        tree = next((c for c in invocation.children if c.type == "token_tree"), None)
        tokens = tree.children[1:-1] if tree is not None else []
        struct, const = self.spec.declarations["struct_item"], self.spec.declarations["const_item"]
        out: list[_Member] = []
        head = 0  # where the tokens of the next struct (its doc, attributes, ``pub``) start
        for i, token in enumerate(tokens):
            name_token = tokens[i + 1] if i + 1 < len(tokens) else None
            if token.type != "struct" or name_token is None or name_token.type != "identifier":
                continue
            body = next((t for t in tokens[i + 2 :] if t.type == "token_tree"), None)
            if body is None:
                break
            comments = [t for t in tokens[head:i] if t.type in self.spec.comment_types]
            code = [t for t in tokens[head:i] if t.type not in self.spec.comment_types]
            first = next((t for t in code if t.type != "#" and t.type != "token_tree"), token)
            doc = self.doc(comments, code[0] if code else token) if comments else ""
            attributes = [
                f"#{self.text(t)}" for t, before in zip(code[1:], code, strict=False)
                if before.type == "#"
            ]  # fmt: skip
            signature = _fold(self.src[first.start_byte : body.start_byte].decode(errors="replace"))
            name, qualname = self.text(name_token), self.qualify(prefix, self.text(name_token))
            start = (comments[0] if comments else code[0] if code else token).start_point[0] + 1
            uko = self.make(
                struct, name, qualname, token, parent, doc, signature,
                rows=(start, self.rows(body)[1]),
            )  # fmt: skip
            flags = self.bitflags_consts(body, uko, f"{qualname}.", const)
            self.render_container(uko, signature, doc, flags, [])
            if attributes:
                uko.properties["decorators"] = "\n".join(attributes)
            uko.renderings[DEPTH_FULL] = self.source(uko.start_line, uko.end_line)
            listed = f"bitflags! {{ {signature} {{ ... }} }}"  # as the source reads
            shown = [self.spec.doc_render.format(doc.split("\n", 1)[0])] if doc else []
            out.append(_Member(uko, listed, "\n".join([*shown, listed])))
            head = tokens.index(body) + 1
        return out

    def bitflags_consts(
        self, body: Node, struct: UKONode, prefix: str, const: Declaration
    ) -> list[_Member]:
        """The flags of a ``bitflags!`` struct: ``const NAME = value;`` in its body."""
        tokens, out = body.children, []
        comments: list[Node] = []
        for i, token in enumerate(tokens[:-1]):
            if token.type in self.spec.comment_types:
                comments.append(token)
                continue
            if token.type != "const" or tokens[i + 1].type != "identifier":
                continue
            end = next((t for t in tokens[i:] if t.type == ";"), tokens[-1])
            signature = _fold(self.src[token.start_byte : end.start_byte].decode(errors="replace"))
            name = self.text(tokens[i + 1])
            doc = self.doc(comments, token) if comments else ""
            rows = (token.start_point[0] + 1, end.end_point[0] + 1)
            uko = self.make(const, name, prefix + name, token, struct, doc, signature, rows=rows)
            first_doc = [self.spec.doc_render.format(doc.split("\n", 1)[0])] if doc else []
            uko.renderings = {
                DEPTH_NAME: uko.qualname,
                DEPTH_SIGNATURES: "\n".join([*first_doc, signature]),
                DEPTH_FULL: self.source(*rows),
            }
            out.append(_Member(uko, signature + ";", "\n".join([*first_doc, signature + ";"])))
            comments = []
        return out

    def enclosing_member(self, uko: UKONode, name: str) -> str | None:
        """A Java or TypeScript type named in the heading of one nested in others
        (``class Inner extends Base``, both in ``Outer``, or in a namespace): the
        member of the innermost enclosing declaration that declares it (``Outer.Base``)."""
        if self.spec.name not in ("java", "typescript", "javascript"):
            return None
        member = self.scoped(uko.qualname.rpartition(".")[0], name)
        return member.uri if member is not None and member is not uko else None

    def scoped(self, scope: str, dotted: str) -> UKONode | None:
        """The declaration ``dotted`` names from within ``scope`` (a qualified name):
        a member of ``scope``, else of each declaration enclosing it, innermost first.
        A Java constructor is not what its class's name names (``Outer.Outer``)."""
        scopes = scope.split(".") if scope else []
        while scopes:
            member = self.by_qualname.get(".".join([*scopes, dotted]))
            if member is not None and member.properties.get("kind") != "constructor":
                return member
            scopes.pop()
        return None

    def render_container(
        self,
        uko: UKONode,
        signature: str,
        doc: str,
        members: list[_Member],
        decorators: list[Node],
        embedded: tuple[str, ...] = (),
    ) -> None:
        """The container's renderings; ``embedded``: the types a Go interface embeds,
        listed before its methods."""
        head = [self.text(d) for d in decorators]
        if doc:
            head.insert(0, self.spec.doc_render.format(doc.split("\n", 1)[0]))
        if not members and not embedded and uko.end_line - uko.start_line < _SHORT:
            # An enum or empty type: its few lines say more than "{ }".
            whole = self.source(uko.start_line, uko.end_line)
            uko.renderings = {
                DEPTH_NAME: uko.qualname,
                DEPTH_MEMBERS: signature,
                DEPTH_SIGNATURES: whole,
                DEPTH_OUTLINE: whole,
                DEPTH_FULL: whole,
            }
            return
        lines = [_indent(e) for e in embedded]
        brief = "\n".join(
            [*head, signature + " {", *lines, *(_indent(m.brief) for m in members if m.brief), "}"]
        )
        outline_head = [_render_doc(doc, self.spec)] if doc else []
        outline_head.extend(self.text(d) for d in decorators)
        outline = "\n".join(
            [
                *outline_head,
                signature + " {",
                *lines,
                *(_indent(m.stub) for m in members if m.stub),
                "}",
            ]
        )
        names = ", ".join([*embedded, *(m.node.name for m in members)])
        uko.renderings = {
            DEPTH_NAME: uko.qualname,
            DEPTH_MEMBERS: f"{signature}: {names}" if names else signature,
            DEPTH_SIGNATURES: brief,
            DEPTH_OUTLINE: outline,
            DEPTH_FULL: self.source(uko.start_line, uko.end_line),
        }

    def callable(
        self,
        node: Node,
        outer: Node,
        body: Node | None,
        parent: UKONode,
        prefix: str,
        declaration: Declaration,
        doc: str,
        name: str,
        decorators: list[Node],
    ) -> _Member:
        qualname = self.qualify(prefix, name)
        go_receiver = receiver_var = ""
        if self.spec.name == "go" and node.type == "method_declaration":
            receiver = _base_type(self.text(node.child_by_field_name("receiver")).strip("()"))
            words = receiver.split()
            receiver_var = words[0] if len(words) == 2 else ""
            receiver = words[-1].lstrip("*") if receiver else ""
            qualname = f"{receiver}.{name}" if receiver else name
            if receiver in self.go_types and receiver in self.by_qualname:
                parent = self.by_qualname[receiver]
                go_receiver = receiver
        signature = self.signature(outer, body)
        uko = self.make(declaration, name, qualname, outer, parent, doc, signature)
        if decorators:
            uko.properties["decorators"] = "\n".join(self.text(d) for d in decorators)
            uko.start_line = self.rows(decorators[0])[0]
        owner = prefix[:-1] if prefix else ""
        if self.spec.name == "go" and "." in qualname:
            owner = qualname.rsplit(".", 1)[0]
        if body is not None:
            self.callables.append(
                _Callable(body.start_byte, body.end_byte, uko, owner, receiver_var, node)
            )
            self.implemented.add((uko.parent, name))
        else:
            self.bodiless.append(uko)
        head = [self.text(d) for d in decorators]
        first_doc = [self.spec.doc_render.format(doc.split("\n", 1)[0])] if doc else []
        # A bodiless declaration (an interface's method, a trait's ``fn``) keeps its ``;``.
        shown = signature + (" { ... }" if body else self.terminator(outer))
        brief = "\n".join([*first_doc, *head, shown])
        stub = "\n".join([*([_render_doc(doc, self.spec)] if doc else []), *head, shown])
        full = self.source(uko.start_line, uko.end_line)
        uko.renderings = {
            DEPTH_NAME: uko.qualname,
            DEPTH_SIGNATURES: brief,
            DEPTH_OUTLINE: full if uko.end_line - uko.start_line < _SHORT else stub,
            DEPTH_FULL: full,
        }
        proc_macro = _PROC_MACRO.search("\n".join(head)) if self.spec.name == "rust" else None
        if proc_macro:
            # Another crate sees only a proc-macro crate's macros (``resolve._RustPaths``).
            kind, derived = proc_macro.groups()
            uko.properties[PROC_MACRO] = _PROC_MACRO_KINDS[kind]
            if derived:
                self.derive_macro(uko, derived, prefix, parent)
        member = _Member(uko, "\n".join([*head, shown]), stub)
        if go_receiver:
            self.go_methods.setdefault(go_receiver, []).append(member)
        return member

    def leaf(
        self,
        node: Node,
        outer: Node,
        parent: UKONode,
        prefix: str,
        declaration: Declaration,
        doc: str,
        name: str,
    ) -> _Member:
        qualname = self.qualify(prefix, name)
        signature = truncate(_fold(self.text(outer)).rstrip(";,"), 300)
        uko = self.make(declaration, name, qualname, outer, parent, doc, signature)
        first_doc = [self.spec.doc_render.format(doc.split("\n", 1)[0])] if doc else []
        uko.renderings = {
            DEPTH_NAME: uko.qualname,
            DEPTH_SIGNATURES: "\n".join([*first_doc, signature]),
            DEPTH_FULL: self.source(uko.start_line, uko.end_line),
        }
        if (outer.start_byte, outer.end_byte) in self.listed:
            return _Member(uko, "", "")  # its declaration is listed with its first name
        self.listed.add((outer.start_byte, outer.end_byte))
        # Listed in its container, it ends as in the source, so the outline reads as code.
        listed = signature + self.terminator(outer)
        return _Member(uko, listed, "\n".join([*first_doc, listed]))

    # -- language-specific shapes ------------------------------------------------------------

    def variables(
        self,
        node: Node,
        outer: Node,
        parent: UKONode,
        prefix: str,
        owner: Declaration | None,
        doc: str,
    ) -> list[_Member]:
        """``const f = () => …`` is a function; ``const x = require("x")`` an import."""
        out = []
        for declarator in node.named_children:
            if declarator.type != "variable_declarator":
                continue
            name = self.text(declarator.child_by_field_name("name"))
            value = declarator.child_by_field_name("value")
            if value is not None and value.type == "call_expression":
                callee = self.text(value.child_by_field_name("function"))
                if callee == "require":
                    pattern = declarator.child_by_field_name("name")
                    self.import_node(node, parent, required=(name, value), pattern=pattern)
                    continue
            if value is not None and value.type in _FUNCTION_VALUES:
                function = self.function_value(value)
                if function is not None:
                    out.append(self.callable(
                        value, outer, value.child_by_field_name("body"), parent, prefix,
                        function, doc, name, [],
                    ))  # fmt: skip
                continue
            if owner is None or owner.kind == "namespace":
                attribute = Declaration(self.spec.variable_type, "variable", "leaf", None)
                out.append(self.leaf(declarator, outer, parent, prefix, attribute, doc, name))
        return out

    def assigned_function(
        self,
        statement: Node,
        parent: UKONode,
        prefix: str,
        owner: Declaration | None,
        doc: str,
    ) -> list[_Member]:
        """A function assigned to a member at the top level, as CommonJS code declares most
        of its functions: ``Layer.prototype.match = function match(path) { … }`` is the
        method ``Layer.match`` (so ``this.match()`` in another of ``Layer``'s methods, and
        ``match`` on a ``new Layer()``, reach it), ``proto.handle = …`` is ``proto.handle``
        and ``exports.parse = …`` (or ``module.exports.parse``) the module's ``parse``.
        ``module.exports = Layer`` is noted (see :meth:`mark_exported`), and the functions
        of ``module.exports = { … }`` are the module's (:meth:`exported_object`)."""
        if owner is not None and owner.kind not in _SCOPES:
            return []
        expression = statement.named_children[0] if statement.named_children else None
        if expression is None or expression.type != "assignment_expression":
            return []
        value, assigned = expression, []
        while value is not None and value.type == "assignment_expression":  # a = b = function
            assigned.append(value.child_by_field_name("left"))
            value = value.child_by_field_name("right")
        exports = any(self.member_path(left) == ["module", "exports"] for left in assigned)
        if value is not None and value.type == "identifier":
            if exports:
                self.module_export = self.text(value)
            return []
        if value is not None and value.type == "object":
            return self.exported_object(value, parent, prefix) if exports else []
        path = self.member_path(assigned[0])
        if value is None or value.type not in _FUNCTION_VALUES or path is None:
            return []
        if path[:2] == ["module", "exports"]:
            path = path[2:]
        elif path[:1] == ["exports"]:
            path = path[1:]
        path = [part for part in path if part != "prototype"]
        if not path:  # ``module.exports = function …``: the module itself
            return []
        declaration = self.spec.member_callable if len(path) > 1 else self.function_value(value)
        if declaration is None:
            return []
        holder = "".join(f"{part}." for part in path[:-1])
        return [self.callable(
            value, statement, value.child_by_field_name("body"), parent, prefix + holder,
            declaration, doc, path[-1], [],
        )]  # fmt: skip

    def exported_object(self, value: Node, parent: UKONode, prefix: str) -> list[_Member]:
        """``module.exports = { parse: function (s) { … }, format(o) { … } }``: each
        function of the object is the module's (what ``require("./x").parse`` names)."""
        out: list[_Member] = []
        comments: list[Node] = []
        for item in value.named_children:
            if item.type in self.spec.comment_types:
                comments.append(item)
                continue
            doc = self.doc(comments, item) if comments else ""
            comments = []
            if item.type == "method_definition":
                function, key = item, item.child_by_field_name("name")
            elif item.type == "pair":
                function, key = item.child_by_field_name("value"), item.child_by_field_name("key")
            else:
                continue
            if key is None or key.type != "property_identifier" or function is None:
                continue
            declaration = self.function_value(function)
            if declaration is None:
                continue
            out.append(self.callable(
                function, item, function.child_by_field_name("body"), parent, prefix,
                declaration, doc, self.text(key), [],
            ))  # fmt: skip
        return out

    def function_value(self, value: Node) -> Declaration | None:
        """How a function given as a value is declared (``const f = () => …``,
        ``exports.f = function …``, an object's ``format(o) { … }``): an arrow function,
        else a function; None for any other value."""
        if value.type not in _FUNCTION_VALUES and value.type != "method_definition":
            return None
        if value.type == "arrow_function":
            return Declaration("uko-ts:ArrowFunction", "function", "callable")
        return self.spec.declarations.get("function_declaration")

    def member_path(self, node: Node | None) -> list[str] | None:
        """``a.b.c`` as ``["a", "b", "c"]``; None for anything but names and dots
        (``a[b].c``, ``f().c``) or a plain name."""
        parts: list[str] = []
        while node is not None and node.type == "member_expression":
            name = node.child_by_field_name("property")
            if name is None or name.type != "property_identifier":
                return None
            parts.append(self.text(name))
            node = node.child_by_field_name("object")
        if not parts or node is None or node.type != "identifier":
            return None
        parts.append(self.text(node))
        return parts[::-1]

    def go_declaration(self, node: Node, parent: UKONode, prefix: str, doc: str) -> list[_Member]:
        out: list[_Member] = []
        specs = []
        for child in node.named_children:
            if child.type.endswith("_spec_list"):
                specs.extend(child.named_children)
            else:
                specs.append(child)
        for spec_node in specs:
            if spec_node.type in ("type_spec", "type_alias"):
                name = self.text(spec_node.child_by_field_name("name"))
                type_node = spec_node.child_by_field_name("type")
                type_kind = type_node.type if type_node is not None else ""
                outer = node if len(specs) == 1 else spec_node
                if type_kind == "struct_type":
                    declaration = Declaration("uko-proc:Struct", "struct", "container", None)
                    body = next(
                        (c for c in type_node.named_children if c.type == "field_declaration_list"),
                        None,
                    )
                    elements = body.named_children if body is not None else []
                elif type_kind == "interface_type":
                    declaration = Declaration("uko-oo:Interface", "interface", "container", None)
                    body = type_node
                    elements = type_node.named_children
                else:
                    leaf = Declaration("uko-code:TypeDefinition", "type", "leaf", None)
                    out.append(self.leaf(spec_node, outer, parent, prefix, leaf, doc, name))
                    continue
                signature = collapse(self.text(outer).split("{", 1)[0])
                uko = self.make(declaration, name, name, outer, parent, doc, signature)
                children = body.named_children if body is not None else []
                members = self.members(children, uko, f"{name}.", declaration)
                embedded = [e for e in map(self.go_embedded_type, elements) if e]
                if embedded:
                    self.go_embedded[name] = embedded
                    self.bases.extend((uko, INHERITS_FROM, e) for e in embedded)
                # A struct's embedded fields are among its members already.
                listed = tuple(embedded) if type_kind == "interface_type" else ()
                self.render_container(uko, signature, doc, members, [], listed)
                self.go_containers[name] = (uko, signature, doc, members)
                out.append(
                    _Member(uko, uko.renderings[DEPTH_SIGNATURES], uko.renderings[DEPTH_OUTLINE])
                )
            elif spec_node.type in ("const_spec", "var_spec"):
                kind = spec_node.type[:-5]
                attribute = Declaration(self.spec.variable_type, kind, "leaf", None)
                outer = node if len(specs) == 1 else spec_node
                for name_node in spec_node.children_by_field_name("name"):
                    out.append(self.leaf(
                        spec_node, outer, parent, prefix, attribute, doc, self.text(name_node)
                    ))  # fmt: skip
        return out

    def go_embedded_type(self, element: Node) -> str:
        """The type a Go struct field or interface element embeds, as written (``*Base``
        -> ``Base``, ``http.Handler``, ``List[T]`` -> ``List``); "" for a named field, a
        method or a type union (``~int | ~string``)."""
        if element.type == "field_declaration":
            if element.child_by_field_name("name") is not None:
                return ""
            kind = element.child_by_field_name("type")
        elif element.type == "type_elem" and element.named_child_count == 1:
            kind = element.named_children[0]
        else:
            return ""
        if kind is not None and kind.type == "generic_type":
            kind = kind.child_by_field_name("type")
        if kind is None or kind.type not in ("type_identifier", "qualified_type"):
            return ""
        return "".join(self.text(kind).split())

    def go_promoted(self, method: str) -> list[str] | None:
        """A call of ``owner.member`` (``s.member()`` in a method of ``owner``, or on a
        variable of type ``owner``), a struct or interface of this file that embeds other
        types and does not declare ``member``: the method may be promoted from an
        embedded type, or from one those embed while they are this file's.

        Depth by depth, as Go looks: an embedded type of this file that declares
        ``member`` ends the search; one of another file of the package is a guess the
        indexer keeps only if it answers (``symbol:go:<folder>.Base.member``); an
        imported one (``symbol:sync.Mutex.Lock``) only when it is the one type embedded
        at its depth and nothing nearer was guessed, as which type declares ``member`` is
        not known here. ``owner``'s own ``member``, in another file, is guessed first.
        None when ``owner`` embeds nothing this file shows, or declares ``member``."""
        owner, _, member = method.rpartition(".")
        level = self.go_embedded.get(owner)
        if not level or method in self.by_qualname:
            return None
        own = self.same_package(f"{owner}.{member}", method=True)  # always one for Go
        targets = [own] if own else []
        seen = {owner}
        while level:
            found: list[str] = []
            below: list[str] = []
            guesses: list[str | None] = []
            for kind in level:
                if kind in seen:
                    continue
                seen.add(kind)
                local = self.by_qualname.get(f"{kind}.{member}")
                if local is not None:
                    found.append(local.uri)
                elif kind in self.by_qualname:
                    below.extend(self.go_embedded.get(kind, ()))
                elif "." not in kind:
                    guesses.append(self.same_package(f"{kind}.{member}", method=True))
                elif len(level) == 1 and targets == [own]:
                    guesses.append(self.resolve(f"{kind}.{member}", ""))
            targets.extend(g for g in guesses if g)
            if found:
                return [*targets, *found]
            level = below
        return targets

    def rust_mod(self, node: Node, parent: UKONode) -> None:
        name = self.name_of(node)
        base = self.module_prefix.rsplit(".", 1)[0] if "." in self.module_prefix else ""
        target = f"{base}.{name}" if base else name
        self.import_node(node, parent, required=(name, None), target=target)

    # -- imports ------------------------------------------------------------------------------

    def import_node(
        self,
        node: Node,
        parent: UKONode,
        *,
        required: tuple[str, Node | None] | None = None,
        target: str | None = None,
        pattern: Node | None = None,
    ) -> None:
        if required is not None:
            name, call = required
            if target is None:
                arguments = call.child_by_field_name("arguments") if call is not None else None
                first = arguments.named_children[0] if arguments is not None else None
                target = self.module_name(self.text(first).strip("\"'`")) if first else ""
            bindings = [(name, target)]
            if pattern is not None and pattern.type == "object_pattern":
                bindings = self.destructured(pattern, target)
        else:
            bindings = [(b, self.module_name(t)) for b, t in self.spec.bindings(node, self.src)]
        text = truncate(collapse(self.text(node)), 200)
        start, end = self.rows(node)
        targets = [t for _, t in bindings if t]
        for bound, full in bindings:
            if bound and full:
                self.bindings[bound] = full
            elif full and self.spec.name == "java" and "static" not in text.split(" ", 2)[:2]:
                self.on_demand.append(full)  # ``import java.util.*;``
            elif full and self.spec.name == "java":
                self.static_on_demand.append(full)  # ``import static app.Checks.*;``
        module = targets[0] if targets else text
        edges = [(DEPENDS_ON, f"symbol:{t}") for t in dict.fromkeys(targets)]
        self.module_edges.extend(edges)
        properties = {"kind": "import", "module": module}
        if self.spec.name == "rust" and required is None:
            # What the ``use`` makes the module answer to (JSON ``[[name, path], …]``, name
            # "" for a glob): the indexer follows ``crate::a::Name`` to the definition.
            properties["bindings"] = json.dumps([[b, full] for b, full in bindings if full])
        uko = self.factory.make(
            self.spec.import_type, text, f"import.{module}", start, end, parent,
            renderings={DEPTH_NAME: text, DEPTH_FULL: self.source(start, end)},
            properties=properties, edges=edges,
        )  # fmt: skip
        self.imports.append(uko)

    def export_node(self, node: Node, parent: UKONode) -> None:
        """``export … from "./m"`` and ``export { a as b }``: what the module answers to
        besides its own declarations, kept as ``bindings`` (JSON ``[[name, path], …]``,
        name "" for ``export *``), which the indexer follows (``lib.Model`` to
        ``lib.model.Model`` when ``lib/index.ts`` has ``export * from "./model"``)."""
        source = node.child_by_field_name("source")
        module = self.module_name(self.text(source).strip("\"'`")) if source is not None else ""
        bindings: list[tuple[str, str]] = []
        for child in node.named_children:
            if child.type == "namespace_export" and module:  # ``export * as ns from``
                names = [c for c in child.named_children if c.type in ("identifier", "string")]
                if names:
                    bindings.append((self.text(names[-1]).strip("\"'"), module))
            elif child.type == "export_clause":
                for spec in child.named_children:
                    name_node = spec.child_by_field_name("name")
                    if spec.type != "export_specifier" or name_node is None:
                        continue
                    name = self.text(name_node).strip("\"'")
                    alias_node = spec.child_by_field_name("alias")
                    alias = self.text(alias_node).strip("\"'") if alias_node is not None else name
                    if module:
                        bindings.append((alias, f"{module}.{name}"))
                    elif name in self.bindings:  # imported, then exported
                        bindings.append((alias, self.bindings[name]))
                    elif alias != name:  # a declaration of the file, under another name
                        bindings.append((alias, f"{self.module_prefix}.{name}"))
        if module and not any(
            c.type in ("namespace_export", "export_clause") for c in node.named_children
        ):
            bindings.append(("", module))  # ``export * from``
        if not bindings:
            return
        text = truncate(collapse(self.text(node)), 200)
        start, end = self.rows(node)
        edges = [(DEPENDS_ON, f"symbol:{t}") for t in dict.fromkeys(t for _, t in bindings)]
        self.module_edges.extend(edges)
        uko = self.factory.make(
            SCRIPT_EXPORT, text, f"export.{module}" if module else "export", start, end, parent,
            renderings={DEPTH_NAME: text, DEPTH_FULL: self.source(start, end)},
            properties={
                "kind": "export", "module": module or self.module_prefix,
                EXPORT_BINDINGS: json.dumps([[b, t] for b, t in bindings]),
            },
            edges=edges,
        )  # fmt: skip
        self.imports.append(uko)  # listed with the imports in the module's outline

    def destructured(self, pattern: Node, module: str) -> list[tuple[str, str]]:
        """``const { Store, Other: O } = require("./store")``: ``Store`` and ``O`` bound to
        the module's ``Store`` and ``Other``."""
        bindings = []
        for item in pattern.named_children:
            if item.type == "shorthand_property_identifier_pattern":
                name = self.text(item)
                bindings.append((name, f"{module}.{name}"))
            elif item.type == "pair_pattern":
                key, value = item.child_by_field_name("key"), item.child_by_field_name("value")
                if key is not None and value is not None and value.type == "identifier":
                    bindings.append((self.text(value), f"{module}.{self.text(key)}"))
        return bindings or [("", module)]

    def module_name(self, target: str) -> str:
        """Relative JS/TS module paths made dotted from the resource root (``src.util.x``)."""
        if self.spec.name not in ("typescript", "javascript"):
            return target
        module, sep, member = target.partition("\0")
        if "://" in module:  # imported from a URL: keep it whole
            return f"{module}.{member}" if sep and member else module
        if module.startswith("."):
            directory = posixpath.dirname(self.relative)
            module = posixpath.normpath(posixpath.join(directory, module))
            stem, dot, suffix = module.rpartition(".")
            if dot and suffix in _JS_SUFFIXES:
                module = stem
        module = module.replace("/", ".").strip(".")
        return f"{module}.{member}" if sep and member else module

    # -- calls ----------------------------------------------------------------------------------

    def resolve(self, dotted: str, owner: str, *, keep_unknown: bool = False) -> str | None:
        head, _, rest = dotted.partition(".")
        if head in ("this", "self", "Self") and owner:
            member = self.by_qualname.get(f"{owner}.{rest}") if rest else None
            return member.uri if member is not None else None
        if owner and self.spec.name == "java":
            # A class nested in the owner or a class enclosing it (``Base.of()``, ``new
            # Base()``); a method of the owner (an implicit ``this.``), whose outer
            # classes' come after its bases' (``inherited``), which another file declares.
            if head[:1].isupper():
                member = self.scoped(owner, dotted)
            else:
                member = None if rest else self.by_qualname.get(f"{owner}.{head}")
            if member is not None:
                return member.uri
        node = self.by_qualname.get(dotted) or (None if rest else self.by_qualname.get(head))
        if node is not None:
            return node.uri
        if head in self.bindings:
            target = self.bindings[head]
            return f"symbol:{target}.{rest}" if rest else f"symbol:{target}"
        if head in self.by_qualname:
            if self.spec.name == "go":  # a method another file of the package may declare
                return self.same_package(dotted, method=True)
            return f"symbol:{self.module_prefix}.{dotted}"
        return f"symbol:{dotted}" if keep_unknown and not rest else None

    def enclosing(self, starts: list[int], position: int) -> int:
        """The index of the innermost callable (sorted by start, ``starts``) whose body
        holds ``position``; -1 outside every one."""
        index = bisect.bisect_right(starts, position) - 1
        while index >= 0 and self.callables[index].end < position:
            index -= 1
        return index

    def typed_variables(
        self, declared: list[dict[str, list[Node]]], starts: list[int]
    ) -> dict[str, str]:
        """Add the local variables declared with a named type to the callables they are
        declared in (``StringBuilder sb = …``, ``var x = new Foo()``, ``var a Foo``, ``d :=
        &Baz{}``, ``r := bufio.NewReader(f)``, ``let x = Foo::new()``), after their
        parameters; return the file's fields by name (a name declared with two types is
        left out), a Go or Rust struct's as ``Struct.field``."""
        fields: dict[str, str] = {}
        clashing: set[str] = set()
        for captures in declared:
            constructor = captures.get("constructor")
            if constructor and "type" not in captures:  # Go's ``x := pkg.NewFoo()``
                type_name = _go_constructed(self.text(constructor[0]))
                if type_name is None:
                    continue
            else:
                type_node = captures["type"][0]
                value = captures.get("value")
                if (
                    self.text(type_node) == "var"
                    and value
                    and value[0].type == "object_creation_expression"
                ):
                    type_node = value[0].child_by_field_name("type") or type_node
                if constructor and not _RUST_CONSTRUCTORS.fullmatch(self.text(constructor[0])):
                    continue
                type_name = _named_type(self.text(type_node))
                if type_name is None:
                    continue
            if "field" in captures:
                name = self.text(captures["field"][0])
                if "struct" in captures:
                    name = f"{self.text(captures['struct'][0])}.{name}"
                if fields.setdefault(name, type_name) != type_name:
                    clashing.add(name)
                continue
            variable = captures["name"][0]
            index = self.enclosing(starts, variable.start_byte)
            if index >= 0:
                self.callables[index].locals.setdefault(self.text(variable), type_name)
        for struct, embedded in self.go_embedded.items():  # ``s.Base.Name()``
            for kind in embedded:
                fields.setdefault(f"{struct}.{kind.rsplit('.', 1)[-1]}", kind)
        return {name: kind for name, kind in fields.items() if name not in clashing}

    def parameter_types(self, node: Node) -> dict[str, str]:
        """Each parameter declared with a named type -> that type's name (``cmd
        *cobra.Command`` -> ``cobra.Command``, ``List<String> names`` -> ``List``): a call
        on the parameter is to the type's method."""
        parameters = node.child_by_field_name("parameters")
        if parameters is None:
            return {}
        typed: dict[str, str] = {}
        for parameter in parameters.named_children:
            declared = parameter.child_by_field_name("type")
            if declared is None:
                continue
            name = _named_type(self.text(declared).lstrip(":"))
            if name is None:
                continue
            variables = parameter.children_by_field_name("name") or [
                p for p in parameter.children_by_field_name("pattern") if p.type == "identifier"
            ]
            for variable in variables:
                typed[self.text(variable)] = name
        return typed

    def resolve_calls(self, root: Node) -> None:
        # A Rust file of items alone may still invoke macros (``lazy_static! { … }``).
        if not self.spec.calls or not (self.callables or self.spec.name == "rust"):
            return
        import tree_sitter

        cursor = tree_sitter.QueryCursor(_call_query(self.grammar_name, self.spec.name))
        callees: list[Node] = []
        declared: list[dict[str, list[Node]]] = []
        for _, captures in cursor.matches(root):
            callee = captures.get("callee")
            if callee:
                callees.extend(callee)
            elif "macro_rules" in captures:
                self.macro_body(captures["macro_rules"][0])
            else:
                declared.append(captures)
        self.callables.sort(key=lambda c: c.start)
        starts = [c.start for c in self.callables]
        found: dict[int, list[str]] = {}
        for callee in callees:
            index = self.enclosing(starts, callee.start_byte)
            if callee.parent is not None and callee.parent.type == "macro_invocation":
                self.rust_macro(callee.parent, index, found)
                continue
            if index < 0:
                continue
            written = self.text(callee)
            if self.spec.name == "rust" and (
                written.startswith(_RUST_MODULE_PATHS) or self.crate_path(written)
            ):
                self.rust_path_call(index, written)
                continue
            dotted = self.callee_name(callee)
            if dotted:
                found.setdefault(index, []).append(dotted)
        fields: dict[str, str] | None = None  # the file's typed fields, once a call needs them
        for index, names in found.items():
            entry = self.callables[index]
            for dotted in dict.fromkeys(names):
                head, _, rest = dotted.partition(".")
                method = bool(entry.receiver) and head == entry.receiver and "." not in rest
                if method:  # c.Name() in a method of c's type: that type's Name
                    dotted = f"{entry.owner}.{rest}"
                target = self.resolve(dotted, entry.owner)
                if target is None and rest and not method:
                    if fields is None:
                        fields = self.typed_variables(declared, starts)
                    typed = self.typed_call(entry, head, rest, fields)
                    if typed is not None:
                        dotted, method = typed, True
                        target = self.resolve(dotted, entry.owner)
                promoted = self.go_promoted(dotted) if method and self.spec.name == "go" else None
                if promoted is not None:
                    entry.node.edges.extend(
                        (DEPENDS_ON, t) for t in promoted if t != entry.node.uri
                    )
                    continue
                if target is None and entry.owner and not method:
                    target = self.inherited(dotted, entry.owner)
                    if target is not None and dotted[:1].isupper() and target.startswith(SYMBOL):
                        # ``new Helper()`` in a class whose base another file declares: a
                        # class the base declares and passes down, or, far likelier, the
                        # package's own (the guess nothing answers is no edge).
                        guess = self.same_package(dotted)
                        if guess is not None:
                            entry.node.edges.append((DEPENDS_ON, guess))
                if target is None and entry.owner and not method and self.spec.name == "java":
                    # Not the class's nor its bases': an enclosing class's method.
                    outer = self.scoped(entry.owner.rpartition(".")[0], dotted)
                    target = outer.uri if outer is not None else None
                target = target or self.same_package(dotted, method)
                if target is None and self.static_on_demand and "." not in dotted:
                    # ``import static app.Checks.*;``: a plain call nothing else answers
                    # may be any such class's, guessed (``java:app.Checks.require``).
                    entry.node.edges.extend(
                        (DEPENDS_ON, f"{SYMBOL}{JAVA_KEY}{cls}.{dotted}")
                        for cls in self.static_on_demand
                    )
                if target is not None and target != entry.node.uri:
                    entry.node.edges.append((DEPENDS_ON, target))
            entry.node.edges = dedupe(entry.node.edges)

    def rust_macro(self, invocation: Node, index: int, found: dict[int, list[str]]) -> None:
        """A Rust macro invocation in the callable at ``index`` (-1: at the file's top
        level, where the module depends on the macro): an edge to the macro (see
        :meth:`macro_target`), and the calls and macros its arguments make. tree-sitter
        leaves a macro's arguments a flat token tree, so they are read from the tokens."""
        macro = invocation.child_by_field_name("macro")
        tree = invocation.named_children[-1] if invocation.named_children else None
        calls, macros = self.token_calls(tree) if tree is not None else ([], [])
        owner = self.callables[index].node if index >= 0 else None
        edges = owner.edges if owner is not None else self.module_edges
        for name in [self.text(macro), *macros]:
            target = self.macro_target(name)
            if target is not None:
                edges.append((DEPENDS_ON, target))
        if owner is None:
            return
        for call in calls:
            if call.startswith(_RUST_MODULE_PATHS) or self.crate_path(call):
                self.rust_path_call(index, call)
            else:
                found.setdefault(index, []).append(_dotted(call))

    def crate_path(self, written: str) -> bool:
        """A Rust call by a path whose first name, in lower case, nothing in the file
        binds: another crate's (``uv_fs::write_atomic(…)``, no ``use``), which the indexer
        resolves when that crate is in the tree (``resolve._RustPaths``); the standard
        library's and a primitive type's are left to the rules for other calls."""
        head, sep, _ = written.partition("::")
        return (
            bool(sep)
            and head.isidentifier()
            and head.islower()
            and head not in _RUST_STD_CRATES
            and head not in self.bindings
            and head not in self.by_qualname
        )

    def rust_path_call(self, index: int, path: str) -> None:
        target = self.rust_path(path)
        if target is not None:
            self.callables[index].node.edges.append((DEPENDS_ON, target))

    def rust_path(self, path: str) -> str | None:
        """The target of a call by a path from the crate's root or the file's module
        (``crate::a::f()``, ``self::g()``, ``super::h()``), whose module the indexer finds
        (see ``resolve.rust_paths``): ``self::`` is the module here, not the receiver."""
        dotted = _dotted(path)
        return f"symbol:{dotted}" if dotted else None

    def macro_target(self, path: str) -> str | None:
        """What a macro invocation names (``square``, ``crate::square``): the file's
        ``macro_rules!``, a macro the file imports (``use pyo3::intern;``: as a call by
        that name), or ``symbol:macro:<name>``; None for the standard library's and, as
        for a call, another crate's by its path (``serde_json::json``)."""
        dotted = _dotted(path)
        head, _, rest = dotted.partition(".")
        if not dotted:
            return None
        if dotted in self.file_macros():
            return self.file_macros()[dotted].uri
        if dotted in self.defined_macros:  # a function's own, like a local closure
            return None
        if head in self.bindings:
            return self.resolve(dotted, "")
        if rest and head not in _RUST_PATH_ROOTS:
            return None
        name = dotted.rsplit(".", 1)[-1]
        return None if name in _RUST_STD_MACROS else f"symbol:{MACRO_KEY}{name}"

    def file_macros(self) -> dict[str, UKONode]:
        if self.rust_macros is None:
            self.rust_macros = {n.name: n for n in self.factory.nodes if n.uko_type == RUST_MACRO}
        return self.rust_macros

    def macro_body(self, definition: Node) -> None:
        """What a ``macro_rules!`` expands to calls and invokes: edges of the macro's node,
        resolved from the file's names (``$crate::a::f($x)`` as ``crate::a::f``)."""
        name = self.name_of(definition)
        self.defined_macros.add(name)
        macro = self.file_macros().get(name)
        if macro is None:  # one defined in a function's body is no node
            return
        for rule in definition.named_children:
            expansion = rule.child_by_field_name("right") if rule.type == "macro_rule" else None
            if expansion is None:
                continue
            calls, macros = self.token_calls(expansion)
            targets = [
                self.rust_path(call)
                if call.startswith(_RUST_MODULE_PATHS)
                else self.resolve(_dotted(call), "")
                for call in calls
            ]
            targets += [self.macro_target(name) for name in macros]
            macro.edges.extend((DEPENDS_ON, t) for t in targets if t and t != macro.uri)
        macro.edges = dedupe(macro.edges)

    def token_calls(self, tree: Node) -> tuple[list[str], list[str]]:
        """The calls (``parse(x)``, ``a::b(x)``, ``self.m()``, ``x.len()``, as written)
        and macros (``inner!(…)``) in a macro's token tree and the trees nested in it: a
        path of names joined by ``::`` or ``.`` right before a parenthesised tree is a
        call. A member of anything but a path (``a[0].len()``, ``f().g()``) is left
        out."""
        calls: list[str] = []
        macros: list[str] = []
        stack = [tree]
        while stack:
            path: list[str] | None = []  # names and separators; None: a member of
            joined = False  # something not a path; joined: it ends with a separator
            for token in stack.pop().children:
                kind = token.type
                if kind in _PATH_TOKENS or (kind == "metavariable" and token.text == b"$crate"):
                    name = "crate" if kind == "metavariable" else self.text(token)
                    if not joined:
                        path = [name]
                    elif path is not None:
                        path.append(name)
                    joined = False
                elif kind in ("::", "."):
                    if path:
                        path.append(kind)
                    path, joined = (path or None), True
                elif kind == "!" and path and not joined:
                    macros.append("".join(path))
                    path = []
                elif kind == "token_tree":
                    if path and not joined and token.children and token.children[0].type == "(":
                        calls.append("".join(path))
                    stack.append(token)
                    path, joined = [], False
                else:
                    path, joined = [], False
        return calls, macros

    def inherited(self, dotted: str, owner: str) -> str | None:
        """A call on the object itself that its class ``owner`` does not declare
        (``this.m()``, ``super.m()``, Java's bare ``m()``): its base class's ``m``, up a
        chain of the file's classes, then by the name the file knows the base by
        (``symbol:b.Base.m`` for an imported ``Base``); None for a class without one base
        class, or past the file when the base does not declare it either."""
        head, _, member = dotted.partition(".")
        if head not in ("this", "super"):
            if self.spec.name != "java" or member:
                return None
            member = dotted
        if not member or "." in member:
            return None
        seen = {owner}
        base = self.extends.get(owner)
        while base is not None:
            local = self.by_qualname.get(f"{base}.{member}")
            if local is not None:
                return local.uri
            if base not in self.by_qualname:
                name = f"{base}.{member}"
                return self.resolve(name, "") or self.same_package(name)
            if base in seen:
                return None
            seen.add(base)
            base = self.extends.get(base)
        return None

    def typed_call(
        self, entry: _Callable, head: str, rest: str, fields: dict[str, str]
    ) -> str | None:
        """``head.rest`` with the declared type of the variable ``head`` in its place
        (``cmd.Name()``, ``cmd *cobra.Command`` -> ``cobra.Command.Name``; ``names.add()``,
        a field ``List<String> names`` -> ``List.add``; ``this.names.add()``;
        ``c.flags.Parse()``, ``flags *pflag.FlagSet`` a field of ``c``'s struct ->
        ``pflag.FlagSet.Parse``), or None when no declared type says."""
        member, _, called = rest.partition(".")
        if "." in called:
            return None
        if head == "this":
            kind = fields.get(member) if called else None
            return f"{kind}.{called}" if kind else None
        if head == "self" and self.spec.name == "rust":  # a field of the impl's struct
            kind = fields.get(f"{entry.owner}.{member}") if called and entry.owner else None
            return f"{kind}.{called}" if kind else None
        if entry.types is None:
            entry.types = {**entry.locals, **self.parameter_types(entry.declaration)}
        if not called:
            kind = entry.types.get(head) or fields.get(head)
            return f"{kind}.{member}" if kind else None
        holder = entry.owner if entry.receiver and head == entry.receiver else entry.types.get(head)
        kind = fields.get(f"{holder}.{member}") if holder else None
        return f"{kind}.{called}" if kind else None

    def same_package(self, name: str, method: bool = False) -> str | None:
        """A name the file neither defines nor imports, that its package may define in
        another file, for the indexer to resolve (and to drop if none does).

        Go: a plain call is to a function or type of another file of the folder (a Go
        package is a folder; see ``go_package_symbol``), unless a builtin; so is a call of
        a method on the receiver (``method``: ``c.Name()`` as ``Command.Name``), which
        another file may define. Java: a class used without an import (``Helper.run()``,
        ``new Helper()``) is of the same package (``java:<package>.Helper.run``, what
        ``resolve.symbol_keys`` gives its method).
        """
        if self.spec.name == "go" and (method or ("." not in name and name not in _GO_BUILTINS)):
            return f"symbol:{go_package_symbol(self.relative, name)}"
        head = name.split(".", 1)[0]
        if self.spec.name == "java" and head[:1].isupper() and head not in self.bindings:
            return SYMBOL + java_package_symbol(self.module_prefix, name)
        return None

    def callee_name(self, callee: Node) -> str:
        text = self.text(callee)
        if callee.type == "method_reference":  # ``Foo::new`` makes a ``Foo``
            text = text.replace("::", ".").removesuffix(".new")
        parent = callee.parent
        if parent is not None and parent.type in _JSX_ELEMENTS and text[:1].islower():
            return ""  # ``<div>``: an element of the platform, no component
        if self.spec.name == "java" and parent is not None and parent.type == "method_invocation":
            receiver = parent.child_by_field_name("object")
            if receiver is not None:
                text = f"{self.text(receiver)}.{text}"
        return _dotted(text, self.spec.path_separator)


def _dotted(text: str, separator: str = "::") -> str:
    """A callee or path as written, as a dotted name (``a::b<T>`` -> ``a.b``,
    ``x?.f`` -> ``x.f``); "" when it is not a path of names (``f().g``)."""
    if separator != ".":
        text = text.replace(separator, ".")
    while "<" in text and _GENERIC_ARGS.search(text):
        text = _GENERIC_ARGS.sub("", text)
    text = "".join(text.replace("?.", ".").replace("!", "").split())
    return text if all(part.isidentifier() for part in text.split(".")) else ""


#: JSX elements, whose names are the components they render.
_JSX_ELEMENTS = frozenset({"jsx_opening_element", "jsx_self_closing_element"})
#: A Rust procedural macro: ``#[proc_macro_derive(Name, …)]`` (the derived name),
#: ``#[proc_macro_attribute]`` or ``#[proc_macro]`` (the function's name).
_PROC_MACRO = re.compile(
    r"#\[\s*(proc_macro_derive|proc_macro_attribute|proc_macro)\b(?:\s*\(\s*([A-Za-z_]\w*))?"
)
_PROC_MACRO_KINDS = {
    "proc_macro_derive": "derive",
    "proc_macro_attribute": "attribute",
    "proc_macro": "function-like",
}
#: A Rust path from the crate's root or the file's module, not a variable's member.
_RUST_MODULE_PATHS = ("crate::", "self::", "super::")
#: What a Rust path from the crate's root or the file's module starts with.
_RUST_PATH_ROOTS = frozenset({"crate", "self", "super"})
#: The standard library's crates, whose paths (``std::fs::read``) are not a crate of the
#: tree's, and the primitive types (``u16::from``), whose are not a crate's at all.
_RUST_STD_CRATES = frozenset({
    "std", "core", "alloc", "proc_macro", "test", "bool", "char", "str", "f32", "f64", "i8",
    "i16", "i32", "i64", "i128", "isize", "u8", "u16", "u32", "u64", "u128", "usize",
})  # fmt: skip
#: The tokens a Rust path is made of, in a macro's token tree.
_PATH_TOKENS = frozenset({"identifier", "self", "super", "crate"})
#: The standard library's macros: never the crate's.
_RUST_STD_MACROS = frozenset({
    "assert", "assert_eq", "assert_ne", "cfg", "column", "compile_error", "concat", "dbg",
    "debug_assert", "debug_assert_eq", "debug_assert_ne", "env", "eprint", "eprintln",
    "file", "format", "format_args", "include", "include_bytes", "include_str", "line",
    "matches", "module_path", "option_env", "panic", "print", "println", "stringify",
    "thread_local", "todo", "try", "unimplemented", "unreachable", "vec", "write",
    "writeln", "addr_of", "addr_of_mut", "macro_rules",
})  # fmt: skip


#: Go's predeclared functions and conversions: never another file's.
_GO_BUILTINS = frozenset({
    "append", "cap", "clear", "close", "complex", "copy", "delete", "imag", "len", "make",
    "max", "min", "new", "panic", "print", "println", "real", "recover", "bool", "byte",
    "complex64", "complex128", "error", "float32", "float64", "int", "int8", "int16", "int32",
    "int64", "rune", "string", "uint", "uint8", "uint16", "uint32", "uint64", "uintptr", "any",
})  # fmt: skip


#: Containers whose functions stay functions (namespaces, modules), not methods.
_SCOPES = frozenset({"namespace", "module"})

_HERITAGE = {
    "class_heritage": INHERITS_FROM,
    "extends_clause": INHERITS_FROM,
    "implements_clause": IMPLEMENTS,
    "extends_type_clause": INHERITS_FROM,
    "superclass": INHERITS_FROM,
    "super_interfaces": IMPLEMENTS,
    "extends_interfaces": INHERITS_FROM,
}


def _is_default(export: Node) -> bool:
    """``export default …``."""
    return any(child.type == "default" for child in export.children)


def _go_constructed(function: str) -> str | None:
    """The type a Go constructor's name says it makes (``bufio.NewReader`` ->
    ``bufio.Reader``); None for any other function."""
    made = _GO_CONSTRUCTOR.fullmatch(function)
    if made is None:
        return None
    package, kind = made.groups()
    return f"{package}.{kind}" if package else kind


def _named_type(text: str) -> str | None:
    """The type a variable is declared with, if it is a named one whose methods a call on
    the variable reaches (``*cobra.Command`` -> ``cobra.Command``, ``List<String>`` ->
    ``List``); None for a slice, map, function, union … type."""
    name = _base_type(text)
    return name if name and all(p.isidentifier() for p in name.split(".")) else None


@lru_cache(maxsize=1 << 14)
def _base_type(text: str) -> str:
    """``&'a mut Point<T>`` -> ``Point``; ``pkg.Type<X>`` -> ``pkg.Type``."""
    text = text.strip()
    while _GENERIC_ARGS.search(text):
        text = _GENERIC_ARGS.sub("", text)
    text = re.sub(r"^(?:&\s*(?:'\w+\s+)?(?:mut\s+)?|\*|dyn\s+|impl\s+)+", "", text)
    text = text.split("<", 1)[0].replace("::", ".").strip()
    return text


def _clean_comment(texts: list[str]) -> str:
    lines: list[str] = []
    for text in texts:
        text = text.strip()
        if text.startswith("/*"):
            body = text[3:] if text.startswith("/**") else text[2:]
            body = body[:-2] if body.endswith("*/") else body
            for line in body.split("\n"):
                line = line.strip()
                if line.startswith("*"):
                    line = line[1:]
                lines.append(line[1:] if line.startswith(" ") else line)
        else:
            for marker in ("///", "//!", "//"):
                if text.startswith(marker):
                    text = text[len(marker) :]
                    break
            lines.append(text[1:] if text.startswith(" ") else text)
    while lines and not lines[0].strip():
        lines.pop(0)
    while lines and not lines[-1].strip():
        lines.pop()
    return "\n".join(line.rstrip() for line in lines)


def _render_doc(doc: str, spec: LanguageSpec) -> str:
    if spec.doc_render.startswith("/**"):
        if "\n" not in doc:
            return f"/** {doc} */"
        return "/**\n" + "\n".join(f" * {line}".rstrip() for line in doc.split("\n")) + "\n */"
    marker = spec.doc_render.split(" ", 1)[0]
    return "\n".join(f"{marker} {line}".rstrip() for line in doc.split("\n"))


def _indent(text: str) -> str:
    return "    " + text.replace("\n", "\n    ")


_AFTER_OPENING = re.compile(r"([(\[<])[ \t]*\n\s*")
_BEFORE_CLOSING = re.compile(r",?[ \t]*\n\s*([)\]>])")


def _fold(text: str) -> str:
    """A declaration spread over lines, on one line as it would be written there: the
    three lines ``fn build(``, ``    schema: &PyDict,`` and ``) -> R`` are ``fn build(schema:
    &PyDict) -> R``, not ``fn build( schema: &PyDict, ) -> R``. Only what a line break
    leaves (its spaces, and a comma before it that closes a list) goes."""
    if "\n" not in text:
        return collapse(text)
    return collapse(_BEFORE_CLOSING.sub(r"\1", _AFTER_OPENING.sub(r"\1", text)))


class TreeSitterAnalyzer:
    """A tree-sitter grammar plus the declaration tables of one language."""

    name = "tree-sitter"
    languages: tuple[str, ...] = ()
    specificity = 100
    #: Raised when what these analyzers find in the same file changes, so indexes built
    #: before analyse their files again. 2: Go packages by import path, Java overloads,
    #: calls on typed variables, JavaScript's relative ``require``. 3: functions assigned
    #: to members (``Layer.prototype.match = function …``), ``module.exports = Layer``,
    #: ``export default``, inherited methods. 4: ``module.exports = { … }``'s functions.
    #: 5: class fields that hold a function (``onClick = (e) => { … }``) as methods.
    #: 6: Go's embedded types and the methods promoted from them; Rust's macro
    #: invocations, the calls in their arguments and ``crate::``/``self::``/``super::``
    #: paths; Java's method references; components rendered in JSX. 7: none, but Go
    #: files are analysed again for the ``uko-oo:implements`` edges the indexer derives
    #: from their packages (``indexing.go_interfaces``). 8: renderings read as the source:
    #: listed fields and bodiless methods keep their ``;`` or ``,``, a declaration of
    #: several names is listed once, and signatures over several lines fold without the
    #: spaces and trailing commas their line breaks left. 9: TypeScript's ambient
    #: declarations, merged declarations and ``export … from``. 10: a Java base named
    #: without an import is looked for in its package first; a name used in a nested
    #: Java or TypeScript declaration reaches the members of those enclosing it; a
    #: vendored Go package and one of Go's own ``src`` are named by their import paths;
    #: Java's imports on demand; ``new Helper()`` in a subclass guesses the package's too;
    #: Rust's derive macros as nodes, and ``use a::{self as b}``. (A language whose
    #: analysis alone changes bumps its own class's, so no other is analysed again.)
    revision = 10
    suffixes: ClassVar[dict[str, str]] = {}  # file suffix -> grammar name
    spec_name = ""

    def supports(self, path: Path, head: bytes) -> bool:
        """Files with one of this language's suffixes."""
        return path.suffix.lower() in self.suffixes

    def analyze(
        self, path: Path, content: str, *, resource_id: str, relative_path: str
    ) -> AnalysisResult:
        """Nodes for one source file; syntax errors are recorded, not raised."""
        if content.startswith("\ufeff"):
            content = content[1:]
        grammar_name = self.suffixes.get(Path(relative_path).suffix.lower(), self.spec_name)
        spec = LANGUAGES[self.spec_name]
        try:
            package = go_import_path(path, relative_path) if spec.name == "go" else None
            builder = _FileBuilder(spec, grammar_name, content, resource_id, relative_path, package)
            tree = _parser(grammar_name).parse(builder.src)
            nodes, errors = builder.build(tree)
        except Exception as exc:  # a grammar or engine bug must not stop indexing
            from cleveragents_acms.analyzers.text import fall_back_to_text

            return fall_back_to_text(
                path,
                content,
                resource_id=resource_id,
                relative_path=relative_path,
                analyzer=self.name,
                exc=exc,
            )
        return AnalysisResult(nodes=nodes, errors=errors)


class TypeScriptAnalyzer(TreeSitterAnalyzer):
    """TypeScript and TSX: classes, interfaces, enums, type aliases, namespaces, functions."""

    name = "typescript"
    languages = ("typescript",)
    suffixes: ClassVar[dict[str, str]] = {
        ".ts": "typescript", ".mts": "typescript", ".cts": "typescript", ".tsx": "tsx",
    }  # fmt: skip
    spec_name = "typescript"


class JavaScriptAnalyzer(TreeSitterAnalyzer):
    """JavaScript (ES modules and CommonJS, JSX): classes, functions, methods, imports."""

    name = "javascript"
    languages = ("javascript",)
    suffixes: ClassVar[dict[str, str]] = {
        ".js": "javascript", ".mjs": "javascript", ".cjs": "javascript", ".jsx": "javascript",
    }  # fmt: skip
    spec_name = "javascript"


class GoAnalyzer(TreeSitterAnalyzer):
    """Go: structs, interfaces, functions, methods (by receiver), constants, imports."""

    name = "go"
    languages = ("go",)
    suffixes: ClassVar[dict[str, str]] = {".go": "go"}
    spec_name = "go"
    #: 11: a call on what a constructor made (``r := bufio.NewReader(f)``) is the type's.
    revision = 11


class RustAnalyzer(TreeSitterAnalyzer):
    """Rust: structs, enums, traits, impls, functions, macros, modules, ``use`` imports."""

    name = "rust"
    languages = ("rust",)
    suffixes: ClassVar[dict[str, str]] = {".rs": "rust"}
    spec_name = "rust"
    #: 11: ``bitflags!`` structs, proc macros' kinds, ``#[macro_export]`` marked, calls by
    #: another crate's path, calls on ``let x: T`` / ``T::new()`` locals and on fields of
    #: ``self``; what the indexer resolves changed too (members through a glob, a type's
    #: derived methods), which takes analysing the files again. 12: a trait named by its
    #: path (``impl ruff_text_size::Ranged for Stmt``) is an edge; the methods a type's
    #: traits give by default are resolved.
    revision = 12


class JavaAnalyzer(TreeSitterAnalyzer):
    """Java: classes, interfaces, enums, records, methods, constructors, fields, imports."""

    name = "java"
    languages = ("java",)
    suffixes: ClassVar[dict[str, str]] = {".java": "java"}
    spec_name = "java"
    #: 11: a plain call guesses the classes whose static members the file imports on
    #: demand (``import static a.Checks.*;``).
    revision = 11
