"""Helpers every analyzer shares: languages, UKO node types, line and text utilities.

Nothing here imports a parser, so the discovery code and the light analyzers
stay cheap to import.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable
from pathlib import Path, PurePath

from cleveragents.models.uko import UKONode, node_uri

__all__ = [
    "ALIAS",
    "CALL_RESULT",
    "CODE_LANGUAGES",
    "CONFIG_LANGUAGES",
    "DEFAULT_EXPORT",
    "DEPENDS_ON",
    "DERIVED_KEY",
    "EXPORT_BINDINGS",
    "GUESSED_KEYS",
    "GUESSED_TARGETS",
    "IMPLEMENTS",
    "IMPLEMENTS_TRAIT",
    "IMPL_FOR",
    "IMPORT_QUALNAME",
    "INHERITED_GUESSES",
    "INHERITED_TARGET",
    "INHERITS_FROM",
    "INSTANCE_OF",
    "JAVA_KEY",
    "MACRO_EXPORT",
    "MACRO_KEY",
    "MODULE_EXPORT",
    "MODULE_IMPORTS",
    "ON_DEMAND_IMPORTS",
    "PACKAGE_GUESSES",
    "PROC_MACRO",
    "PROSE_LANGUAGES",
    "PYTHON_SUFFIXES",
    "PY_IMPORT",
    "PY_REEXPORT",
    "REEXPORT_TYPES",
    "RETURNS",
    "RUST_CRATE",
    "RUST_IMPL",
    "RUST_MACRO",
    "RUST_METHOD",
    "RUST_MODULE",
    "RUST_TRAIT",
    "RUST_USE",
    "SCRIPT_EXPORT",
    "SCRIPT_FILES",
    "SCRIPT_SUFFIXES",
    "SUPER_GUESS",
    "SYMBOL",
    "UNINDEXED_IMPORTS",
    "USES_TYPE",
    "NodeFactory",
    "collapse",
    "first_line",
    "first_sentences",
    "forget_go_modules",
    "go_import_path",
    "imported_module",
    "is_binary",
    "is_python",
    "java_package",
    "java_package_symbol",
    "language_of",
    "script_stem",
    "split_lines",
    "truncate",
]

# -- languages ------------------------------------------------------------------

# fmt: off
_LANGUAGE_BY_SUFFIX: dict[str, str] = {
    ".py": "python", ".pyi": "python", ".pyw": "python", ".ts": "typescript",
    ".mts": "typescript", ".cts": "typescript", ".tsx": "typescript", ".js": "javascript",
    ".mjs": "javascript", ".cjs": "javascript", ".jsx": "javascript", ".go": "go",
    ".rs": "rust", ".java": "java", ".md": "markdown", ".markdown": "markdown",
    ".mdown": "markdown", ".mkd": "markdown", ".mdx": "markdown", ".rst": "restructuredtext",
    ".txt": "text", ".adoc": "asciidoc", ".org": "org", ".tex": "latex", ".yaml": "yaml",
    ".yml": "yaml", ".toml": "toml", ".json": "json", ".jsonc": "json", ".ini": "ini",
    ".cfg": "ini", ".conf": "ini", ".properties": "properties", ".env": "dotenv", ".xml": "xml",
    ".html": "html", ".htm": "html", ".css": "css", ".scss": "css", ".sh": "shell",
    ".bash": "shell", ".zsh": "shell", ".fish": "shell", ".ps1": "powershell", ".sql": "sql",
    ".c": "c", ".h": "c", ".cc": "cpp", ".cpp": "cpp", ".hpp": "cpp", ".cxx": "cpp",
    ".cs": "csharp", ".rb": "ruby", ".php": "php", ".kt": "kotlin", ".kts": "kotlin",
    ".swift": "swift", ".scala": "scala", ".lua": "lua", ".pl": "perl", ".r": "r",
    ".jl": "julia", ".ex": "elixir", ".exs": "elixir", ".erl": "erlang", ".hs": "haskell",
    ".ml": "ocaml", ".clj": "clojure", ".dart": "dart", ".zig": "zig", ".tf": "terraform",
    ".hcl": "terraform", ".proto": "protobuf", ".graphql": "graphql", ".vue": "vue",
    ".svelte": "svelte",
}

_LANGUAGE_BY_NAME: dict[str, str] = {
    "dockerfile": "dockerfile", "containerfile": "dockerfile", "makefile": "make",
    "gnumakefile": "make", "cmakelists.txt": "cmake", "jenkinsfile": "groovy",
    "vagrantfile": "ruby", "gemfile": "ruby", "rakefile": "ruby", "procfile": "yaml",
    ".gitignore": "ignore", ".dockerignore": "ignore", ".editorconfig": "ini",
    ".gitattributes": "ignore", "license": "text", "copying": "text", "readme": "text",
    "changelog": "text", "authors": "text", "notice": "text", "setup.cfg": "ini",
    "tox.ini": "ini", ".bashrc": "shell", ".profile": "shell", ".zshrc": "shell",
}
CONFIG_LANGUAGES = frozenset({
    "yaml", "toml", "json", "ini", "properties", "dotenv", "xml", "dockerfile", "terraform",
    "ignore",
})
PROSE_LANGUAGES = frozenset({
    "text", "restructuredtext", "asciidoc", "org", "latex", "markdown", "html",
})
# fmt: on
CODE_LANGUAGES = frozenset(
    set(_LANGUAGE_BY_SUFFIX.values()) - CONFIG_LANGUAGES - PROSE_LANGUAGES - {"css"}
) | {"make", "cmake", "groovy"}


def language_of(path: str | PurePath) -> str:
    """The language of a file from its name: ``"python"``, ``"yaml"`` … ``"unknown"``."""
    name = PurePath(path).name.lower()
    by_name = _LANGUAGE_BY_NAME.get(name)
    if by_name:
        return by_name
    if name.startswith("dockerfile") or name.endswith(".dockerfile"):
        return "dockerfile"
    dot = name.rfind(".")
    if dot >= 0:
        return _LANGUAGE_BY_SUFFIX.get(name[dot:], "unknown")
    return "unknown"


# -- text helpers ---------------------------------------------------------------------


def split_lines(content: str) -> list[str]:
    """Lines as Python and tree-sitter number them (``\\n``, ``\\r\\n`` or ``\\r`` ends one)."""
    if "\r" in content:
        content = content.replace("\r\n", "\n").replace("\r", "\n")
    return content.split("\n")


def first_line(text: str | None) -> str:
    """The first non-blank line of ``text``, stripped."""
    if not text:
        return ""
    for line in text.split("\n"):
        stripped = line.strip()
        if stripped:
            return stripped
    return ""


def truncate(text: str, limit: int) -> str:
    """``text`` cut to ``limit`` characters, marked with an ellipsis when cut."""
    return text if len(text) <= limit else text[: limit - 3].rstrip() + "..."


def collapse(text: str) -> str:
    """All whitespace runs folded to one space (multi-line signatures on one line)."""
    return " ".join(text.split())


_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9\"'`(\[*_])")


def first_sentences(text: str, count: int = 1, limit: int = 400) -> str:
    """The first ``count`` sentences of prose ``text`` (whitespace folded)."""
    flat = collapse(text)
    parts = _SENTENCE_END.split(flat, maxsplit=count)
    return truncate(" ".join(parts[:count]), limit)


def indent(text: str, prefix: str = "    ") -> str:
    """Every non-empty line of ``text`` prefixed."""
    return "\n".join(prefix + line if line else line for line in text.split("\n"))


# -- content ------------------------------------------------------------------------------

#: Every byte except the control characters text never holds (C0 but whitespace, DEL).
_NOT_CONTROL = bytes(
    b for b in range(256) if not (b < 32 and b not in b"\t\n\r\f\v\b\x1b") and b != 127
)


def is_binary(head: bytes) -> bool:
    """True for content that is not text: NUL bytes, many control bytes, or undecodable noise.

    Text that is not UTF-8 but has few control bytes (latin-1, cp1252) counts as text.
    """
    if not head:
        return False
    if b"\x00" in head:
        return True
    controls = len(head.translate(None, _NOT_CONTROL))  # what is left: the control bytes
    return controls * 20 > len(head)


# -- building nodes ---------------------------------------------------------------------


#: Characters :func:`urllib.parse.quote` never encodes (with ``.`` marked safe).
_URI_SAFE = re.compile(r"[A-Za-z0-9_.~-]+\Z")


class NodeFactory:
    """Makes the nodes of one file: URIs, unique qualified names, provenance fields."""

    __slots__ = ("_base", "_seen", "language", "nodes", "path", "resource_id")

    def __init__(self, resource_id: str, path: str, language: str) -> None:
        self.resource_id = resource_id
        self.path = path
        self.language = language
        self.nodes: list[UKONode] = []
        self._seen: dict[str, int] = {}
        self._base = node_uri(resource_id, path)

    def uri(self, qualname: str) -> str:
        """:func:`~cleveragents.models.uko.node_uri` of ``qualname`` in this file."""
        if not qualname:
            return self._base
        if _URI_SAFE.match(qualname):  # nothing to percent-encode: skip quote()
            return f"{self._base}#{qualname}"
        return node_uri(self.resource_id, self.path, qualname)

    def unique(self, qualname: str) -> str:
        """``qualname``, or ``qualname~2`` … when the file already defines it (redefinitions)."""
        count = self._seen.get(qualname, 0) + 1
        self._seen[qualname] = count
        return qualname if count == 1 else f"{qualname}~{count}"

    def make(
        self,
        uko_type: str,
        name: str,
        qualname: str,
        start_line: int,
        end_line: int,
        parent: UKONode | None,
        *,
        renderings: dict[int, str] | None = None,
        properties: dict[str, str] | None = None,
        edges: list[tuple[str, str]] | None = None,
    ) -> UKONode:
        """A new node (appended to :attr:`nodes`); ``qualname`` is made unique first."""
        qualname = self.unique(qualname) if qualname else qualname
        node = UKONode(
            uri=self.uri(qualname),
            uko_type=uko_type,
            name=name,
            path=self.path,
            start_line=start_line,
            end_line=max(start_line, end_line),
            resource_id=self.resource_id,
            parent=parent.uri if parent is not None else None,
            qualname=qualname,
            language=self.language,
            renderings=renderings if renderings is not None else {},
            edges=edges if edges is not None else [],
            properties=properties if properties is not None else {},
        )
        self.nodes.append(node)
        return node


def dedupe(items: Iterable[tuple[str, str]]) -> list[tuple[str, str]]:
    """Edges without repeats, first occurrence order kept."""
    return list(dict.fromkeys(items))


#: The names the Go and Java analyzers guess a package holds (``go:<folder>.<name>``,
#: ``java:<package>.<Class>``): a Go call to a plain name, a Java class used without an
#: import. Unresolved, it was a local closure or a class from elsewhere (``java.lang``),
#: and is no edge.
#: What a Java declaration answers to within its package (``java:com.x.Helper``).
JAVA_KEY = "java:"
GUESSED_KEYS = ("go:", JAVA_KEY)
#: The files a Python module's names come from (as the Python analyzer takes them).
PYTHON_SUFFIXES = (".py", ".pyi", ".pyw")


def is_python(node: UKONode) -> bool:
    """Whether ``node`` is Python's: a ``.py`` file's, or a script's whose ``#!`` line
    names python (``bin/tm_sympy``), which the Python analyzer takes too."""
    return node.language == "python"


#: The scheme of an edge target no node answers (yet): a name the indexer resolves.
SYMBOL = "symbol:"
#: The edge targets that are such guesses.
GUESSED_TARGETS = tuple(f"{SYMBOL}{key}" for key in GUESSED_KEYS)
#: The module node's property listing (one a line) the names a Go or Java file guesses
#: its package holds (``go:<folder>.<name>``, ``java:<package>.<Class>``; see
#: ``go_package_symbol``). Unanswered guesses are no edge, so when a definition comes,
#: this says which of the package's other files named it.
PACKAGE_GUESSES = "package_guesses"
#: What a Python ``self.name()`` or ``cls.name()`` is when its class does not define
#: ``name`` but has bases: a member it inherits, ``symbol:inherited:<class URI>.<name>``.
#: The indexer looks for it along the class's bases in method resolution order (those of
#: the resource); unanswered (a base from elsewhere has it, or it is set at run time), it
#: is no edge.
INHERITED_TARGET = f"{SYMBOL}inherited:"
#: After a callee's name, what calling it gives (``symbol:pkg.make_client().get``: the
#: member ``get`` of the class ``pkg.make_client``'s return annotation names, through its
#: ``usesType`` edge). Python's ``client = make_client()`` then ``client.get()``.
CALL_RESULT = "()"
#: Before the class URI of such a guess, for ``super().name()``: the bases' member, not
#: the class's own (``symbol:inherited:super:<class URI>.name``).
SUPER_GUESS = "super:"
#: The Python module node's property listing (one a line) the member names its classes'
#: methods call through ``self``/``cls`` and guess they inherit: when a refresh gives a
#: base class one of them, which of its subclasses' files to analyse again.
INHERITED_GUESSES = "inherited_guesses"
#: The Python module node's property listing (one a line) what its import statements
#: import that the node store's index of import statements does not find by the module:
#: those in its functions, which are no nodes (``pkg.new_id`` of ``from pkg import
#: new_id``, ``pkg`` of ``import pkg``), and the second and later modules of ``import a,
#: b`` (its node is found by the first). A refresh after ``pkg`` stops binding ``new_id``
#: finds those importers by this list (``dependents._importing_through``).
UNINDEXED_IMPORTS = "unindexed_imports"
#: A Python function's property listing (one a line) the plain names its own ``import``
#: statements give (``import re`` in its body): modules, which only a module node
#: answers, as for a module's imports (not SymPy's function ``re``).
MODULE_IMPORTS = "module_imports"
#: A Python module variable's property when it is a class under another name, as written
#: (``MutableDenseMatrix`` of ``Matrix = MutableDenseMatrix``); its ``usesType`` edge
#: names that class, or the alias it names in turn. A refresh that changes it analyses
#: the files naming the variable again, as for a variable made by a call.
ALIAS = "alias"
#: A Python function's property with no return annotation: the class every one of its
#: ``return`` statements gives, as written (``return self``, ``return cls(...)``,
#: ``return Pipeline(...)``), which its ``usesType`` edge then names. A refresh that
#: changes it analyses the function's callers again, as for a changed annotation.
RETURNS = "returns"
#: A Python class attribute's property when its statement says its class, as written
#: (``Session`` of ``session: Session``, ``self.session = Session()``, or ``self.client
#: = client`` of an ``__init__`` parameter annotated ``Client``); its ``usesType`` edge
#: names that class, through which ``client.session.get`` elsewhere reaches a member. A
#: refresh that changes it analyses the files naming the attribute again.
INSTANCE_OF = "instance_of"
#: The module node's property listing (one a line) the packages a Java file imports on
#: demand (``import java.util.*;``): a guess of its own package that nothing answers is
#: looked for in each of them, in order (``java:java.util.ArrayList``).
ON_DEMAND_IMPORTS = "on_demand_imports"
#: What a Rust macro answers to besides its names (``macro:square``): macros have a
#: namespace of their own, and ``#[macro_export]`` puts them at the crate's root whatever
#: module defines them, so an invocation (``square!(x)``) names the macro by this alone.
MACRO_KEY = "macro:"
#: The UKO type of a Rust ``macro_rules!`` definition's node.
RUST_MACRO = "uko-rs:Macro"
#: The property of a ``#[macro_export] macro_rules!`` node: the macro is also at its
#: crate's root (``crate::square``, ``other_crate::square``), whatever module defines it.
MACRO_EXPORT = "macro_export"
#: What a Rust type answers to for a method its ``#[derive(…)]`` gives it, which no node
#: declares (``derived:crate.range.TextRange.default``): the type, when nothing else
#: answers the path (see ``resolve._RustPaths``).
DERIVED_KEY = "derived:"
#: The property of a Rust procedural macro's function: its kind (``derive``,
#: ``attribute``, ``function-like``). A crate with one is a proc-macro crate, of which
#: other crates see only the macros.
PROC_MACRO = "proc_macro"
#: The UKO type of a Rust crate's root module's node (``src/lib.rs``, ``src/main.rs``).
RUST_CRATE = "uko-rs:Crate"
#: The UKO type of a Rust ``use`` declaration's node.
RUST_USE = "uko-rs:Use"
#: The UKO type of a Rust ``impl`` block's node, and its edges to the trait it implements
#: and to the type it implements it (or its own methods) for.
RUST_IMPL = "uko-rs:Impl"
IMPLEMENTS_TRAIT = "uko-rs:implementsTrait"
IMPL_FOR = "uko-rs:implFor"
#: The UKO types of a Rust trait's node and of a method's (a trait's or an ``impl``'s).
RUST_TRAIT = "uko-rs:Trait"
RUST_METHOD = "uko-rs:Method"
#: The UKO type of a Rust module's node (a file's, other than a crate's root, or a
#: ``mod name { … }``).
RUST_MODULE = "uko-rs:Module"
#: What a node uses (imports, calls, bases …), resolved or not.
DEPENDS_ON = "uko:dependsOn"
#: A class's (a struct's, an interface's) base or embedded type.
INHERITS_FROM = "uko-oo:inheritsFrom"
#: The type a node's value is of (a Python module variable made by calling a class):
#: a name of a member through it is the type's member.
USES_TYPE = "uko-code:usesType"
#: A type's interface: declared (Java, TypeScript) or derived (Go's, by the indexer).
IMPLEMENTS = "uko-oo:implements"
#: The property of a JavaScript declaration's members when its file says ``module.exports
#: = Layer``: ``Layer``, so ``Layer.match`` also answers for ``<module>.match``, what a
#: call on ``new (require("./layer"))()`` names.
MODULE_EXPORT = "module_export"
#: The property of a JavaScript or TypeScript file's ``export default`` declaration and
#: its members: the declaration's name, so ``Layer`` also answers for
#: ``<module>.default``, what ``import Layer from "./layer"`` names, and ``Layer.match``
#: for ``<module>.default.match``.
DEFAULT_EXPORT = "default_export"
#: The UKO type of a JavaScript or TypeScript ``export … from`` (or ``export { a as b }``).
SCRIPT_EXPORT = "uko-ts:Export"
#: The UKO type of a Python package's ``from m import a`` at the top of its
#: ``__init__``: ``pkg.a`` is ``m.a`` as well, as ``export { a } from "./m"`` makes it.
PY_REEXPORT = "uko-py:ReExport"
#: The UKO type of a Python import statement that re-exports nothing; a module's
#: top-level ``from m import a`` still says what it binds (``EXPORT_BINDINGS``).
PY_IMPORT = "uko-py:Import"
#: What a Python import statement's qualified name starts with: ``import.<module>``,
#: the module it imports from (``import.<module>~2`` for a file's second one).
IMPORT_QUALNAME = "import."


def imported_module(qualname: str) -> str:
    """The module an import statement of this qualified name imports from."""
    return qualname.partition("~")[0].removeprefix(IMPORT_QUALNAME)


#: The node types that make their module answer for names of another: the indexer
#: follows a name through them (``resolve.ReExports``).
REEXPORT_TYPES = (SCRIPT_EXPORT, PY_REEXPORT)
#: Their property: what they make their module answer to, JSON ``[[name, path], …]`` (name
#: "" for ``export * from "./m"`` and ``from m import *``, path then the module).
EXPORT_BINDINGS = "bindings"
#: The files of JavaScript and TypeScript modules.
SCRIPT_SUFFIXES = (".js", ".mjs", ".cjs", ".jsx", ".ts", ".mts", ".cts", ".tsx")
#: ... and the declaration files that answer as such a module, their longer suffixes first.
SCRIPT_FILES = (".d.ts", ".d.mts", ".d.cts", *SCRIPT_SUFFIXES)


def script_stem(path: str) -> str:
    """A JavaScript or TypeScript module's path without its suffix (``lib/model.d.ts``
    and ``lib/model.ts`` -> ``lib/model``); any other path as it is."""
    for suffix in SCRIPT_FILES:
        if path.endswith(suffix):
            return path[: -len(suffix)]
    return path


def go_package_symbol(relative: str, name: str) -> str:
    """What a package-level Go name answers to within its folder (a Go package is a
    folder): ``go:cmd/tool.name``; calls name it, the indexer resolves it."""
    folder = relative.rsplit("/", 1)[0] if "/" in relative else ""
    return f"go:{folder}.{name}"


def java_package_symbol(package: str, name: str) -> str:
    """What a Java type answers to within its package: ``java:com.x.Helper``; a name the
    file neither declares nor imports is first looked for there (``class B extends A``,
    ``new Helper()``), as Java's compiler does before ``java.lang``."""
    return f"{JAVA_KEY}{package}.{name}"


def java_package(node: UKONode) -> str | None:
    """The package of a Java declaration's node, from its fully qualified name."""
    fqname = node.properties.get("fqname", "")
    suffix = f".{node.qualname}"
    return fqname[: -len(suffix)] if node.qualname and fqname.endswith(suffix) else None


def go_import_path(path: Path, relative: str) -> str | None:
    """The import path of the Go package (a folder) a file is in: the ``module`` of the
    nearest ``go.mod`` at or above its folder, within the resource, and the folders below
    it (``github.com/spf13/cobra/doc``); None without a ``go.mod``. What other packages'
    imports name it by (``symbol:github.com/spf13/cobra/doc.GenManTree``). A package
    below a ``vendor`` folder is imported by the path below it
    (``vendor/golang.org/x/net/idna`` is ``golang.org/x/net/idna``), and one of the
    standard library's module (``std``, Go's own ``src``) by its folders alone
    (``net/http``)."""
    folders = relative.split("/")[:-1]
    if "vendor" in folders[:-1]:
        return "/".join(folders[len(folders) - folders[::-1].index("vendor") :])
    directory = path.parent
    for depth in range(len(folders), -1, -1):
        module = _go_module(str(directory))
        if module is not None:
            below = "/".join(folders[depth:])
            if module == "std":
                return below or None
            return f"{module}/{below}" if below else module
        directory = directory.parent
    return None


_GO_MODULE = re.compile(r"^\s*module\s+\"?([^\s\"]+)", re.MULTILINE)


@functools.lru_cache(maxsize=4096)
def _go_module(directory: str) -> str | None:
    """The module path ``directory/go.mod`` declares, if there is one."""
    try:
        text = (Path(directory) / "go.mod").read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None
    found = _GO_MODULE.search(text)
    return found.group(1) if found else None


def forget_go_modules() -> None:
    """Drop what is known of ``go.mod`` files: one may come, go or change between two runs
    of one process (a watch, a service)."""
    _go_module.cache_clear()
