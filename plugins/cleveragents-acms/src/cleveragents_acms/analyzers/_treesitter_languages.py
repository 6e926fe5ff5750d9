"""What each tree-sitter grammar calls its declarations, and how its imports bind names.

One :class:`LanguageSpec` per language: which syntax node types are
containers (classes, interfaces, structs, traits, impls, namespaces), which
are callables, attributes and imports, where their members live, what a doc
comment looks like and which nodes are calls. The engine in
:mod:`cleveragents_acms.analyzers.treesitter` reads only these tables.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

__all__ = ["LANGUAGES", "Declaration", "LanguageSpec"]

Node = Any  # tree_sitter.Node; the module is imported lazily


@dataclass(frozen=True, slots=True)
class Declaration:
    """How one syntax node type becomes a UKO node."""

    uko_type: str
    kind: str  # class interface struct enum trait impl namespace function method field ...
    role: str  # "container" | "callable" | "leaf"
    #: Field holding the members of a container (``body``).
    body: str | None = "body"


@dataclass(frozen=True)
class LanguageSpec:
    """The tables the engine needs for one grammar."""

    name: str
    module_type: str
    declarations: dict[str, Declaration]
    import_type: str
    #: Module-level variables and constants.
    variable_type: str
    #: Callable types inside a container become this declaration instead (methods).
    member_callable: Declaration
    #: Nodes that wrap a declaration (``export_statement``): unwrapped, their text kept.
    wrappers: frozenset[str] = frozenset()
    #: Member lists nested in a container body (``enum_body_declarations``).
    nested_bodies: frozenset[str] = frozenset()
    imports: frozenset[str] = frozenset()
    #: (call node type, field naming the callee)
    calls: tuple[tuple[str, str], ...] = ()
    comment_types: frozenset[str] = frozenset({"comment"})
    #: Prefixes that make a comment a doc comment.
    doc_prefixes: tuple[str, ...] = ("/**",)
    #: Nodes between a doc comment and its declaration (Rust ``#[derive]``).
    decorator_types: frozenset[str] = frozenset()
    #: Callee separators normalised to ``.`` (Rust ``::``).
    path_separator: str = "."
    #: How a doc comment is shown in renderings: prefix for one line.
    doc_render: str = "/** {} */"
    bindings: Callable[[Node, bytes], list[tuple[str, str]]] = field(default=lambda node, src: [])


def _text(node: Node | None, src: bytes) -> str:
    if node is None:
        return ""
    return src[node.start_byte : node.end_byte].decode("utf-8", errors="replace")


def _unquote(text: str) -> str:
    return text.strip().strip("\"'`")


# -- imports: (bound name, dotted target) ------------------------------------------


def _js_bindings(node: Node, src: bytes) -> list[tuple[str, str]]:
    """Targets are ``source\\0member``: the engine resolves relative sources."""
    module = _unquote(_text(node.child_by_field_name("source"), src))
    out: list[tuple[str, str]] = []
    for clause in node.named_children:
        if clause.type != "import_clause":
            continue
        for part in clause.named_children:
            if part.type == "identifier":
                out.append((_text(part, src), f"{module}\0default"))
            elif part.type == "namespace_import":
                names = [c for c in part.named_children if c.type == "identifier"]
                if names:
                    out.append((_text(names[-1], src), module))
            elif part.type == "named_imports":
                for spec in part.named_children:
                    if spec.type != "import_specifier":
                        continue
                    name = _text(spec.child_by_field_name("name"), src)
                    alias = _text(spec.child_by_field_name("alias"), src) or name
                    out.append((alias, f"{module}\0{name}"))
    if not out:
        out.append(("", module))
    return out


def _go_bindings(node: Node, src: bytes) -> list[tuple[str, str]]:
    out = []
    stack = list(node.named_children)
    while stack:
        item = stack.pop(0)
        if item.type == "import_spec_list":
            stack.extend(item.named_children)
        elif item.type == "import_spec":
            path = _unquote(_text(item.child_by_field_name("path"), src))
            alias = _text(item.child_by_field_name("name"), src)
            out.append((alias or path.rsplit("/", 1)[-1], path))
    return out


def _rust_bindings(node: Node, src: bytes) -> list[tuple[str, str]]:
    out: list[tuple[str, str]] = []

    def joined(prefix: str, path: str) -> str:
        if path == "self" and prefix:  # ``use a::b::{self, …}`` brings ``b`` itself
            return prefix
        return f"{prefix}.{path}" if prefix else path

    def walk(tree: Node | None, prefix: str) -> None:
        if tree is None:
            return
        kind = tree.type
        if kind in ("scoped_identifier", "identifier", "crate", "self", "super"):
            full = joined(prefix, _text(tree, src).replace("::", "."))
            out.append((full.rsplit(".", 1)[-1], full))
        elif kind == "use_as_clause":
            path = _text(tree.child_by_field_name("path"), src).replace("::", ".")
            alias = _text(tree.child_by_field_name("alias"), src)
            full = joined(prefix, path)
            out.append((alias or full.rsplit(".", 1)[-1], full))
        elif kind == "scoped_use_list":
            path = _text(tree.child_by_field_name("path"), src).replace("::", ".")
            walk(tree.child_by_field_name("list"), f"{prefix}.{path}" if prefix else path)
        elif kind == "use_list":
            for child in tree.named_children:
                walk(child, prefix)
        elif kind == "use_wildcard":
            path = _text(tree, src).replace("::", ".").rstrip(".*")
            out.append(("", f"{prefix}.{path}" if prefix else path))

    walk(node.child_by_field_name("argument"), "")
    return out


def _java_bindings(node: Node, src: bytes) -> list[tuple[str, str]]:
    names = [c for c in node.named_children if c.type in ("scoped_identifier", "identifier")]
    if not names:
        return []
    path = _text(names[0], src)
    if any(c.type == "asterisk" for c in node.named_children):
        return [("", path)]
    return [(path.rsplit(".", 1)[-1], path)]


# -- the languages --------------------------------------------------------------------

_D = Declaration

_TS_DECLARATIONS = {
    "class_declaration": _D("uko-ts:Class", "class", "container"),
    "abstract_class_declaration": _D("uko-ts:Class", "class", "container"),
    "interface_declaration": _D("uko-ts:Interface", "interface", "container"),
    "enum_declaration": _D("uko-ts:Enum", "enum", "container"),
    "internal_module": _D("uko-ts:Namespace", "namespace", "container"),
    "module": _D("uko-ts:Namespace", "namespace", "container"),
    "type_alias_declaration": _D("uko-ts:TypeAlias", "type", "leaf"),
    "function_declaration": _D("uko-ts:Function", "function", "callable"),
    "generator_function_declaration": _D("uko-ts:Function", "function", "callable"),
    "function_signature": _D("uko-ts:Function", "function", "callable", None),
    "method_definition": _D("uko-ts:Method", "method", "callable"),
    "method_signature": _D("uko-ts:Method", "method", "callable", None),
    "abstract_method_signature": _D("uko-ts:Method", "method", "callable", None),
    "public_field_definition": _D("uko-ts:Property", "field", "leaf"),
    "property_signature": _D("uko-ts:Property", "field", "leaf"),
}

# The ontology's uko-ts classes cover JavaScript modules too.
_JS_DECLARATIONS = {
    "class_declaration": _D("uko-ts:Class", "class", "container"),
    "function_declaration": _D("uko-ts:Function", "function", "callable"),
    "generator_function_declaration": _D("uko-ts:Function", "function", "callable"),
    "method_definition": _D("uko-ts:Method", "method", "callable"),
    "field_definition": _D("uko-ts:Property", "field", "leaf"),
}

_GO_DECLARATIONS = {
    "function_declaration": _D("uko-proc:Procedure", "function", "callable"),
    "method_declaration": _D("uko-oo:Method", "method", "callable"),
    "method_elem": _D("uko-oo:Method", "method", "callable", None),
    "method_spec": _D("uko-oo:Method", "method", "callable", None),
    "field_declaration": _D("uko-oo:Attribute", "field", "leaf"),
}

_RUST_DECLARATIONS = {
    "struct_item": _D("uko-rs:Struct", "struct", "container"),
    "union_item": _D("uko-rs:Struct", "union", "container"),
    "enum_item": _D("uko-rs:Enum", "enum", "container"),
    "trait_item": _D("uko-rs:Trait", "trait", "container"),
    "impl_item": _D("uko-rs:Impl", "impl", "container"),
    "mod_item": _D("uko-rs:Module", "module", "container"),
    "function_item": _D("uko-rs:Function", "function", "callable"),
    "function_signature_item": _D("uko-rs:Function", "function", "callable", None),
    "macro_definition": _D("uko-rs:Macro", "macro", "leaf"),
    "type_item": _D("uko-rs:TypeAlias", "type", "leaf"),
    "const_item": _D("uko-rs:Constant", "const", "leaf"),
    "static_item": _D("uko-rs:Constant", "static", "leaf"),
    "field_declaration": _D("uko-oo:Attribute", "field", "leaf"),
    "enum_variant": _D("uko-oo:Attribute", "variant", "leaf"),
}

_JAVA_DECLARATIONS = {
    "class_declaration": _D("uko-java:Class", "class", "container"),
    "interface_declaration": _D("uko-java:Interface", "interface", "container"),
    "enum_declaration": _D("uko-java:Enum", "enum", "container"),
    "record_declaration": _D("uko-java:Record", "record", "container"),
    "annotation_type_declaration": _D("uko-java:AnnotationType", "annotation", "container"),
    "method_declaration": _D("uko-java:Method", "method", "callable"),
    "constructor_declaration": _D("uko-java:Constructor", "constructor", "callable"),
    "compact_constructor_declaration": _D("uko-java:Constructor", "constructor", "callable"),
    "annotation_type_element_declaration": _D("uko-java:Method", "method", "callable", None),
    "field_declaration": _D("uko-java:Field", "field", "leaf"),
    "constant_declaration": _D("uko-java:Field", "field", "leaf"),
    "enum_constant": _D("uko-java:Field", "constant", "leaf"),
}

TYPESCRIPT = LanguageSpec(
    name="typescript",
    module_type="uko-ts:Module",
    declarations=_TS_DECLARATIONS,
    import_type="uko-ts:Import",
    variable_type="uko-ts:Variable",
    member_callable=_D("uko-ts:Method", "method", "callable"),
    wrappers=frozenset({"export_statement", "ambient_declaration", "expression_statement"}),
    nested_bodies=frozenset({"statement_block"}),  # what ``declare global { … }`` declares
    imports=frozenset({"import_statement"}),
    calls=(("call_expression", "function"), ("new_expression", "constructor")),
    bindings=_js_bindings,
)

JAVASCRIPT = LanguageSpec(
    name="javascript",
    module_type="uko-ts:Module",
    declarations=_JS_DECLARATIONS,
    import_type="uko-ts:Import",
    variable_type="uko-ts:Variable",
    member_callable=_D("uko-ts:Method", "method", "callable"),
    wrappers=frozenset({"export_statement"}),
    imports=frozenset({"import_statement"}),
    calls=(("call_expression", "function"), ("new_expression", "constructor")),
    bindings=_js_bindings,
)

GO = LanguageSpec(
    name="go",
    module_type="uko-code:Module",
    declarations=_GO_DECLARATIONS,
    import_type="uko-code:Import",
    variable_type="uko-proc:GlobalVariable",
    member_callable=_D("uko-oo:Method", "method", "callable"),
    imports=frozenset({"import_declaration"}),
    calls=(("call_expression", "function"),),
    doc_prefixes=("//",),
    doc_render="// {}",
    bindings=_go_bindings,
)

RUST = LanguageSpec(
    name="rust",
    module_type="uko-rs:Module",
    declarations=_RUST_DECLARATIONS,
    import_type="uko-rs:Use",
    variable_type="uko-rs:Constant",
    member_callable=_D("uko-rs:Method", "method", "callable"),
    imports=frozenset({"use_declaration"}),
    calls=(("call_expression", "function"), ("macro_invocation", "macro")),
    comment_types=frozenset({"line_comment", "block_comment"}),
    doc_prefixes=("///", "/**", "//!"),
    decorator_types=frozenset({"attribute_item"}),
    path_separator="::",
    doc_render="/// {}",
    bindings=_rust_bindings,
)

JAVA = LanguageSpec(
    name="java",
    module_type="uko-java:CompilationUnit",
    declarations=_JAVA_DECLARATIONS,
    import_type="uko-java:Import",
    variable_type="uko-java:Field",
    member_callable=_D("uko-java:Method", "method", "callable"),
    nested_bodies=frozenset({"enum_body_declarations"}),
    imports=frozenset({"import_declaration"}),
    calls=(("method_invocation", "name"), ("object_creation_expression", "type")),
    comment_types=frozenset({"block_comment", "line_comment"}),
    bindings=_java_bindings,
)

LANGUAGES: dict[str, LanguageSpec] = {
    spec.name: spec for spec in (TYPESCRIPT, JAVASCRIPT, GO, RUST, JAVA)
}
