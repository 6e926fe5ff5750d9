"""Python source to UKO nodes, with the standard library's :mod:`ast`.

One parse and one walk per file: the module, its classes, functions and
methods (async too), class and module attributes (``self.x`` set in
``__init__`` included), imports, docstrings and signatures, base classes,
calls made by each function, and the callables each test calls. Source text
for signatures and renderings is sliced from the file's lines rather than
rebuilt with :func:`ast.unparse`, which is several times slower.

Node types (``uko-py`` ontology): Module/Package, Class/Protocol/Enum,
Function/AsyncFunction, Method/Property, TestFunction (a ``test*`` function of
a test file, or a ``test*`` method of a class pytest or unittest collects there:
``TestThing``, ``ThingTests(TestCase)``; linked to what it calls by
``uko-code:testsCallable``), Attribute (class level and ``self.x``),
Variable (module level), Import. Names used but defined elsewhere are edge
targets ``symbol:pkg.mod.name``; ``properties["fqname"]`` is each node's own
dotted name, for the indexer to resolve them.
"""

from __future__ import annotations

import ast
import builtins
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

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
    ALIAS,
    CALL_RESULT,
    DEPENDS_ON,
    EXPORT_BINDINGS,
    IMPORT_QUALNAME,
    INHERITED_GUESSES,
    INHERITED_TARGET,
    INHERITS_FROM,
    INSTANCE_OF,
    MODULE_IMPORTS,
    PY_IMPORT,
    PY_REEXPORT,
    PYTHON_SUFFIXES,
    RETURNS,
    SUPER_GUESS,
    SYMBOL,
    UNINDEXED_IMPORTS,
    USES_TYPE,
    NodeFactory,
    collapse,
    dedupe,
    first_line,
    split_lines,
    truncate,
)
from cleveragents_acms.analyzers._python_support import (
    SCOPES,
    TRY_TYPES,
    aliased_class,
    blocks,
    body_returns,
    bytes_slice,
    call_result,
    called_class,
    control_flow,
    docstring_block,
    dotted_name,
    fallback,
    head_line,
    indent_block,
    is_test_file,
    listed_names,
    module_name_for,
    return_class,
    value_class,
    visibility,
)
from cleveragents_acms.analyzers.packages import EXPORTED_AS

__all__ = ["PythonAnalyzer", "module_name_for"]

REFERENCES = "uko:references"
TESTS_CALLABLE = "uko-code:testsCallable"

DECORATED_BY = "uko-py:decoratedBy"

T_MODULE = "uko-py:Module"
T_PACKAGE = "uko-py:Package"
T_CLASS = "uko-py:Class"
T_PROTOCOL = "uko-py:Protocol"
T_ENUM = "uko-py:Enum"
T_FUNCTION = "uko-py:Function"
T_ASYNC_FUNCTION = "uko-py:AsyncFunction"
T_METHOD = "uko-py:Method"
T_PROPERTY = "uko-py:Property"
T_TEST = "uko-py:TestFunction"
T_ATTRIBUTE = "uko-py:Attribute"
T_VARIABLE = "uko-py:Variable"
T_IMPORT = PY_IMPORT

_BUILTINS = frozenset(dir(builtins))
#: What the body walk never descends into: leaves, scalars, contexts.
_NO_CALLS_INSIDE: frozenset[type] = frozenset(
    {
        ast.Constant, ast.Load, ast.Store, ast.Del, ast.Pass, ast.Break, ast.Continue,
        ast.Global, ast.Nonlocal, ast.alias, ast.arg, type(None), str, int, bool, bytes,
    }
)  # fmt: skip
#: AST class -> its ``_fields`` (read once per class, not once per node).
_FIELDS: dict[type, tuple[str, ...]] = {}
#: Statements whose bodies may hold definitions at module or class level.
_BLOCK_TYPES: tuple[type[ast.AST], ...] = (ast.If, ast.With, ast.AsyncWith, *TRY_TYPES)
_INTERFACE_BASES = frozenset({"Protocol", "ABC", "typing.Protocol", "abc.ABC"})
_ENUM_BASES = frozenset({"Enum", "IntEnum", "StrEnum", "Flag", "IntFlag", "ReprEnum"})
_PLAIN_DECORATORS = frozenset({"property", "staticmethod", "classmethod", "abstractmethod"})
#: Functions shorter than this many lines are their own outline.
_SHORT_FUNCTION = 10
_REFERENCE_ONLY = (REFERENCES,)
_DECORATION = (DECORATED_BY, DEPENDS_ON)
_INHERITANCE = (INHERITS_FROM, DEPENDS_ON)
_METACLASS = (DEPENDS_ON,)
_INSTANCE_OF = (USES_TYPE,)
_JSON = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False)
#: Annotations and decorators naming these are not worth an edge (``Any``, ``overload`` …).
_TYPING_SYMBOLS = ("symbol:typing.", "symbol:typing_extensions.", "symbol:collections.abc.")


@dataclass(slots=True)
class _Member:
    """What a container needs from a child to render itself."""

    node: UKONode
    kind: str  # "class" | "function" | "attribute"
    #: One line per member at depth 4 (a class contributes its own depth-4 block).
    brief: str
    #: Signature plus full docstring, body elided (depth 6 of the container).
    stub: str


@dataclass(slots=True)
class _DeferredReturn:
    """An unannotated function whose ``return`` statements give what other functions
    return (``callees``, as written), besides at most one class (``classes``)."""

    node: UKONode
    name: str
    class_qual: str | None
    classes: set[str]
    callees: set[str]
    params: frozenset[str]
    local_imports: dict[str, str]


@dataclass(slots=True)
class _Pending:
    """Calls found in one function, resolved once every local name is known."""

    node: UKONode
    #: (line, column, dotted name) of every call, in walk order.
    calls: list[tuple[int, int, str]]
    class_qual: str | None
    params: frozenset[str]
    local_imports: dict[str, str]
    is_test: bool
    #: Local name -> the class every assignment to it makes (``form = Form(data)``), or
    #: the function every one calls (``client = make_client()``: ``make_client()``).
    local_types: dict[str, str]
    #: ``(name, class, first line, last line)`` of each ``if isinstance(name, Class):``
    #: body that does not bind the name again: there a name of no known class is of
    #: that class (one known already stays: pandas tests ``ABCMultiIndex``, a stand-in).
    narrowed: list[tuple[str, str, int, int]] = field(default_factory=list)

    def types_at(self, line: int) -> dict[str, str]:
        """The local names' classes at ``line``, the innermost ``isinstance`` last."""
        known = self.local_types
        inside = [
            (n, c)
            for n, c, first, last in self.narrowed
            if first <= line <= last and n not in known
        ]
        return {**known, **dict(inside)} if inside else known


@dataclass(slots=True)
class _Scope:
    """A class being built: its node, the names its body defines, ``self.x`` attributes."""

    node: UKONode
    members: dict[str, UKONode] = field(default_factory=dict)
    instance: list[_Member] = field(default_factory=list)
    #: It names a base other than ``object``: a member it lacks may be inherited.
    inherits: bool = False
    #: Attribute name -> the class its value is, as the module names it (``Client`` of
    #: ``self.client = Client()``, ``client: Client`` or ``__init__(self, client:
    #: Client)`` then ``self.client = client``): ``self.client.get()`` is that class's.
    types: dict[str, str] = field(default_factory=dict)
    #: The same, as the other methods say it (``self.factory = RequestFactory()`` in a
    #: test's ``setUp``): where ``types`` has no word on the attribute.
    assigned: dict[str, str] = field(default_factory=dict)
    #: Every attribute a method other than ``__init__`` sets, whatever its value.
    bound: set[str] = field(default_factory=set)
    #: Its bases as written (``Base``, ``mod.Base``; ``""`` for anything else).
    bases: list[str] = field(default_factory=list)


@dataclass(slots=True)
class _Reference:
    """A name a definition uses (base, decorator, annotation), resolved at the end."""

    node: UKONode
    dotted: str
    predicates: tuple[str, ...]
    plain_unknown: bool


class _ModuleBuilder:
    """Builds the nodes of one parsed module."""

    def __init__(self, path: Path | None, content: str, resource_id: str, relative: str) -> None:
        self.content = content
        self.lines = split_lines(content)
        self.relative = relative
        self.factory = NodeFactory(resource_id, relative, "python")
        self.module = module_name_for(path, relative)
        self.is_package = relative.rsplit("/", 1)[-1] in ("__init__.py", "__init__.pyi")
        #: The names a module's literal ``__all__`` lists (its public interface).
        self.public: frozenset[str] = frozenset()
        self.is_test_file = is_test_file(relative)
        self.imports: dict[str, str] = {}
        self.top: dict[str, UKONode] = {}
        self.classes: dict[str, _Scope] = {}
        #: classes of a test file whose ``test*`` methods a runner collects
        self.test_classes: set[str] = set()
        self.pending: list[_Pending] = []
        self.references: list[_Reference] = []
        self.module_deps: list[tuple[str, str]] = []
        #: Member names called through ``self``/``cls`` that a class may inherit.
        self.inherited: set[str] = set()
        #: What import statements import that their nodes are not found by
        #: (``UNINDEXED_IMPORTS``).
        self.unindexed_imports: set[str] = set()
        #: Function node URI -> the class its return annotation names, as written here.
        self.returns: dict[str, str] = {}
        #: Functions returning what others return (``return self.rows()``), settled once
        #: the module is read.
        self.deferred: list[_DeferredReturn] = []
        #: The callees whose calls' classes are being looked for (a cycle ends there).
        self.returning: set[tuple[str, str | None]] = set()

    # -- source slicing -------------------------------------------------------------

    def segment(self, node: ast.AST, limit: int = 200) -> str:
        """Source text of an expression (column offsets are UTF-8 byte offsets)."""
        lines = self.lines
        start, end = node.lineno - 1, node.end_lineno - 1  # type: ignore[attr-defined]
        col, end_col = node.col_offset, node.end_col_offset  # type: ignore[attr-defined]
        if start == end:
            line = lines[start]
            text = line[col:end_col] if line.isascii() else bytes_slice(line, col, end_col)
        else:
            first, last = lines[start], lines[end]
            head = first[col:] if first.isascii() else bytes_slice(first, col, None)
            tail = last[:end_col] if last.isascii() else bytes_slice(last, 0, end_col)
            text = collapse(" ".join([head, *lines[start + 1 : end], tail]))
        return text if len(text) <= limit else truncate(text, limit)

    def fqname(self, qualname: str) -> str:
        """``pkg.mod.Class.method``: the dotted name other modules import this by."""
        return f"{self.module}.{qualname}" if self.module else qualname

    def source(self, start: int, end: int) -> str:
        return "\n".join(self.lines[start - 1 : end])

    def head_line(self, node: ast.AST) -> str:
        return head_line(self.lines, node)

    # -- names -----------------------------------------------------------------------------

    def absolute(self, module: str | None, level: int) -> str:
        """``from ..x import y`` -> the absolute module ``x`` is in."""
        if not level:
            return module or ""
        base = self.module.split(".") if self.module else []
        drop = level - 1 if self.is_package else level
        if drop > len(base):
            return "." * level + (module or "")
        base = base[: len(base) - drop] if drop else base
        return ".".join([*base, module] if module else base)

    def record_import(self, stmt: ast.Import | ast.ImportFrom, table: dict[str, str]) -> list[str]:
        """Add the names ``stmt`` binds to ``table``; return the dotted names it imports."""
        targets: list[str] = []
        if type(stmt) is ast.Import:
            for alias in stmt.names:
                targets.append(alias.name)
                if alias.asname:
                    table[alias.asname] = alias.name
                else:
                    root = alias.name.split(".", 1)[0]
                    table[root] = root
        else:
            base = self.absolute(stmt.module, stmt.level)  # type: ignore[union-attr]
            for alias in stmt.names:
                if alias.name == "*":
                    targets.append(base)
                    continue
                full = f"{base}.{alias.name}" if base else alias.name
                targets.append(full)
                table[alias.asname or alias.name] = full
        return targets

    def resolve(
        self,
        dotted: str,
        class_qual: str | None,
        params: frozenset[str] = frozenset(),
        local_imports: dict[str, str] | None = None,
        *,
        plain_unknown: bool = True,
        local_types: Mapping[str, str] | None = None,
    ) -> str | None:
        """A node URI or ``symbol:dotted.name`` for a name used in this module."""
        if _CALLED in dotted and not dotted.startswith(_SUPER):  # ``make_client().get``
            callee, _, called = dotted.partition(_CALLED)
            if "." in called:
                return None
            return self.returned(callee, called, class_qual, params, local_imports, local_types)
        head, _, rest = dotted.partition(".")
        if local_types and head in local_types:  # ``form.is_valid`` of ``form = Form()``
            if not rest:
                return None
            made = local_types[head]
            if "." in rest:  # ``index.nodes.insert`` of ``index: ProjectIndex``
                if made.endswith(CALL_RESULT) or rest.count(".") > 1:
                    return None
                return self.resolve(f"{made}.{rest}", None, frozenset(), local_imports)
            if made.endswith(CALL_RESULT):
                # ``resampled = frame.resample()``: ``frame`` is a local name too.
                return self.returned(
                    made.removesuffix(CALL_RESULT),
                    rest,
                    class_qual,
                    params,
                    local_imports,
                    local_types,
                )
            return self.resolve(f"{made}.{rest}", None, frozenset(), local_imports)
        if head in ("self", "cls", _SUPER) and class_qual is not None:
            scope = self.classes.get(class_qual)
            if not rest or scope is None:
                return None
            if "." in rest:  # ``self.client.get``: a member of the attribute's class
                attribute, _, called = rest.partition(".")
                kind = (
                    scope.types.get(attribute)
                    or scope.assigned.get(attribute)
                    or self.inherited_type(scope, attribute)
                    if head != _SUPER
                    else None
                )
                if kind is None or called.count(".") > 1:
                    return None
                if kind.endswith(CALL_RESULT):  # ``self.client = make_client()``
                    if "." in called:
                        return None
                    return self.returned(kind.removesuffix(CALL_RESULT), called, class_qual)
                # ``self.client.get`` or ``self.client.session.get``: through its class
                return self.resolve(f"{kind}.{called}", None)
            member = scope.members.get(rest) if head != _SUPER else None
            if member is not None:
                return member.uri
            if not scope.inherits:
                return None
            # Perhaps a base's: the indexer looks along the bases (INHERITED_TARGET).
            self.inherited.add(rest)
            above = SUPER_GUESS if head == _SUPER else ""
            return f"{INHERITED_TARGET}{above}{scope.node.uri}.{rest}"
        if head in params:
            return None
        if local_imports and head in local_imports:
            target = local_imports[head]
            return f"symbol:{target}.{rest}" if rest else f"symbol:{target}"
        node = self.top.get(head)
        if node is not None:
            if not rest:
                return node.uri
            scope = self.classes.get(head)
            member = scope.members.get(rest) if scope else None
            if member is not None:
                return member.uri
            attribute, _, called = rest.partition(".")
            kind = scope.types.get(attribute) if scope and called else None
            if kind is not None and not kind.endswith(CALL_RESULT) and "." not in called:
                return self.resolve(f"{kind}.{called}", None)  # ``Client.session.get``
            return f"symbol:{self.module}.{dotted}" if self.module else f"symbol:{dotted}"
        imported = self.imports.get(head)
        if imported is not None:
            return f"symbol:{imported}.{rest}" if rest else f"symbol:{imported}"
        if head in _BUILTINS or rest or not plain_unknown:
            return None
        return f"symbol:{head}"

    def returned(
        self,
        callee: str,
        member: str,
        class_qual: str | None,
        params: frozenset[str] = frozenset(),
        local_imports: dict[str, str] | None = None,
        local_types: Mapping[str, str] | None = None,
    ) -> str | None:
        """The member ``member`` of what calling ``callee`` gives: of the class the return
        annotation of this module's function names, or, for a callee from elsewhere,
        ``symbol:<callee>().member``, which the indexer settles through the callee's
        ``usesType`` edge (``CALL_RESULT``)."""
        asked = (callee, class_qual)
        if asked in self.returning:  # ``self.rows = self.rows.copy()``: no type
            return None
        self.returning.add(asked)
        try:
            # A plain name neither defined nor imported here (``load()``) says nothing.
            target = self.resolve(
                callee,
                class_qual,
                params,
                local_imports,
                plain_unknown=False,
                local_types=local_types,
            )
        finally:
            self.returning.discard(asked)
        if target is None or target.startswith(INHERITED_TARGET):
            return None
        if target.startswith(SYMBOL):
            return f"{target}{CALL_RESULT}.{member}"
        kind = self.returns.get(target)
        return self.resolve(f"{kind}.{member}", None) if kind is not None else None

    # -- the module -------------------------------------------------------------------------------

    def build(self, tree: ast.Module) -> list[UKONode]:
        lines = self.lines
        doc = ast.get_docstring(tree, clean=True) or ""
        module = self.factory.make(
            T_PACKAGE if self.is_package else T_MODULE,
            self.module or self.relative,
            "",
            1,
            max(1, len(lines) - (1 if lines and lines[-1] == "" else 0)),
            None,
            properties={"kind": "module", "module": self.module},
        )
        if doc:
            module.properties["docstring"] = doc
        self.public = listed_names(tree.body)
        members, imports = self.body(tree.body, module, None, "")
        self.finish_calls()
        if self.inherited:
            module.properties[INHERITED_GUESSES] = "\n".join(sorted(self.inherited))
        if self.unindexed_imports:
            module.properties[UNINDEXED_IMPORTS] = "\n".join(sorted(self.unindexed_imports))
        module.edges.extend(dedupe(self.module_deps))
        self.render_module(module, doc, members, imports)
        return self.factory.nodes

    def render_module(
        self, module: UKONode, doc: str, members: list[_Member], imports: list[UKONode]
    ) -> None:
        title = f"# {self.relative}"
        summary = f'"""{first_line(doc)}"""' if doc else ""
        listing = [title]
        if summary:
            listing.append(summary)
        for kind, label in (
            ("class", "classes"),
            ("function", "functions"),
            ("attribute", "attributes"),
        ):
            names = list(dict.fromkeys(m.node.name for m in members if m.kind == kind))
            if names:
                listing.append(f"{label}: {', '.join(names)}")
        outline = [title]
        if doc:
            outline.append(docstring_block(doc, ""))
        if imports:
            outline.append("\n".join(n.name for n in imports))
        module.renderings = {
            DEPTH_NAME: self.relative,
            DEPTH_MEMBERS: "\n".join(listing),
            DEPTH_SIGNATURES: "\n".join([*listing[:2], *(m.brief for m in members)]),
            DEPTH_OUTLINE: "\n\n".join([*outline, *(m.stub for m in members)]),
            DEPTH_FULL: self.content,
        }

    def body(
        self,
        stmts: list[ast.stmt],
        parent: UKONode,
        scope: _Scope | None,
        prefix: str,
    ) -> tuple[list[_Member], list[UKONode]]:
        """Definitions, attributes and imports of a module or class body."""
        members: list[_Member] = []
        imports: list[UKONode] = []
        names = scope.members if scope is not None else self.top
        class_qual = scope.node.qualname if scope is not None else None
        for stmt in stmts:
            kind = type(stmt)
            if kind is ast.FunctionDef or kind is ast.AsyncFunctionDef:
                member = self.function(stmt, parent, prefix, class_qual)  # type: ignore[arg-type]
                names.setdefault(member.node.name, member.node)
                members.append(member)
            elif kind is ast.ClassDef:
                member = self.klass(stmt, parent, prefix)  # type: ignore[arg-type]
                names.setdefault(member.node.name, member.node)
                members.append(member)
            elif kind is ast.Assign or kind is ast.AnnAssign:
                for member in self.assignment(stmt, parent, prefix):
                    names.setdefault(member.node.name, member.node)
                    members.append(member)
            elif kind is ast.Import or kind is ast.ImportFrom:
                imports.append(self.import_node(stmt, parent))  # type: ignore[arg-type]
            elif isinstance(stmt, _BLOCK_TYPES):
                for block in blocks(stmt):
                    more, more_imports = self.body(block, parent, scope, prefix)
                    members.extend(more)
                    imports.extend(more_imports)
        return members, imports

    def import_node(self, stmt: ast.Import | ast.ImportFrom, parent: UKONode) -> UKONode:
        targets = self.record_import(stmt, self.imports)
        if type(stmt) is ast.ImportFrom:
            base = self.absolute(stmt.module, stmt.level)
            names = ", ".join(a.name + (f" as {a.asname}" if a.asname else "") for a in stmt.names)
            text = f"from {'.' * stmt.level}{stmt.module or ''} import {names}"
            self.module_deps.append((DEPENDS_ON, f"symbol:{base}"))
        else:
            base = stmt.names[0].name
            text = "import " + ", ".join(
                a.name + (f" as {a.asname}" if a.asname else "") for a in stmt.names
            )
            self.module_deps.extend((DEPENDS_ON, f"symbol:{t}") for t in targets)
            self.unindexed_imports.update(a.name for a in stmt.names[1:])  # found by the first
        text = truncate(text, 200)
        properties = {"kind": "import", "module": base}
        reexported = self.reexport(stmt, parent)
        # The names the statement binds in the module: ``pkg.mod.a`` is ``m.a`` to whoever
        # imports it from there. A re-export's (above) are read by every refresh; a plain
        # import's only when a name goes through its module (``NodeStore.imports_from``).
        bound = reexported + [b for b in self.bindings(stmt, parent) if b not in reexported]
        if bound:
            properties[EXPORTED_AS] = self.module
            properties[EXPORT_BINDINGS] = json.dumps(bound)
        return self.factory.make(
            PY_REEXPORT if reexported else T_IMPORT,
            text,
            f"{IMPORT_QUALNAME}{base}",
            stmt.lineno,
            stmt.end_lineno or stmt.lineno,
            parent,
            renderings={
                DEPTH_NAME: text,
                DEPTH_FULL: self.source(stmt.lineno, stmt.end_lineno or stmt.lineno),
            },
            properties=properties,
            edges=[(DEPENDS_ON, f"symbol:{t}") for t in dict.fromkeys(targets)],
        )

    def bindings(self, stmt: ast.Import | ast.ImportFrom, parent: UKONode) -> list[list[str]]:
        """What a module's top-level ``from m import a as b`` binds (``[["b", "m.a"]]``),
        re-exported or not: Django's ``fields/related.py`` imports ``ForeignObjectRel``
        from ``reverse_related.py`` and uses it, and other modules import it from there
        all the same. Not ``import *``, whose names the module does not list."""
        if not (self.module and not parent.qualname) or type(stmt) is not ast.ImportFrom:
            return []
        base = self.absolute(stmt.module, stmt.level)
        if not base or base.startswith(".") or base == "__future__":
            return []
        return [
            [alias.asname or alias.name, f"{base}.{alias.name}"]
            for alias in stmt.names
            if alias.name != "*"
        ]

    def reexport(self, stmt: ast.Import | ast.ImportFrom, parent: UKONode) -> list[list[str]]:
        """What a package's top-level ``from m import a as b`` makes it answer to
        (``[["b", "m.a"]]``; ``["", "m"]`` for ``from m import *``): ``pkg.b`` is
        ``m.a`` to whoever imports it from the package. A package's ``__init__``
        re-exports so by custom. A module's imports are its own business unless it says
        otherwise, as PEP 484 reads a stub and type checkers a typed library: the name is
        in the module's ``__all__`` (``pandas.core.api``, whose ``DataFrame`` is
        ``pandas.DataFrame``), imported ``as`` itself (``from m import a as a``), or
        imported with ``*`` (``astropy.modeling.models``, made of ``import *``); or
        the module never names it but there (:meth:`imported_for_others`)."""
        if not (self.module and not parent.qualname) or type(stmt) is not ast.ImportFrom:
            return []
        base = self.absolute(stmt.module, stmt.level)
        if not base or base.startswith(".") or base == "__future__":  # above the top: unknown
            return []
        return [
            ["", base]
            if alias.name == "*"
            else [alias.asname or alias.name, f"{base}.{alias.name}"]
            for alias in stmt.names
            if self.is_package
            or alias.name == "*"
            or (alias.asname or alias.name) in self.public
            or alias.asname == alias.name
            or self.imported_for_others(alias.asname or alias.name, stmt)
        ]

    def imported_for_others(self, name: str, stmt: ast.ImportFrom) -> bool:
        """Whether the module's text names ``name`` nowhere but in this import: such an
        import is there for the module's importers (astropy's ``modeling/models.py``
        imports ``fix_inputs`` from ``modeling/core.py`` only for its users to import it
        from there). At run time every import is importable;
        the ones the module uses are left out, since most imports are used and a refresh
        reads every re-export. A mention in a comment or a string counts as a use (a
        re-export left out, never a wrong one)."""
        content = self.content
        statement = self.source(stmt.lineno, stmt.end_lineno or stmt.lineno)
        start = content.find(statement)  # imports come first: found at once
        if start < 0:  # lines ended otherwise than by "\n"
            return content.count(name) == statement.count(name)
        # A name used is usually used soon after: a short search, not a whole count.
        end = start + len(statement)
        return content.find(name, end) < 0 and content.find(name, 0, start) < 0

    def assignment(self, stmt: ast.stmt, parent: UKONode, prefix: str) -> list[_Member]:
        is_annotated = type(stmt) is ast.AnnAssign
        targets = [stmt.target] if is_annotated else stmt.targets  # type: ignore[attr-defined]
        names: list[str] = []
        for target in targets:
            if type(target) is ast.Name:
                names.append(target.id)
            elif type(target) is ast.Tuple:
                names.extend(e.id for e in target.elts if type(e) is ast.Name)
        return [self.attribute(name, stmt, parent, prefix) for name in names]

    def attribute(
        self,
        name: str,
        stmt: ast.stmt,
        parent: UKONode,
        prefix: str,
        parameters: Mapping[str, ast.expr] | None = None,
    ) -> _Member:
        """A module variable or a class's attribute; ``parameters`` are the annotations of
        the ``__init__`` that sets it (``self.client = client``)."""
        end = stmt.end_lineno or stmt.lineno
        line = self.head_line(stmt)
        brief = line if end == stmt.lineno else line + " ..."
        in_class = bool(prefix) and prefix[:-1] in self.classes
        properties = {
            "kind": "attribute" if in_class else "variable",
            "signature": brief,
            "fqname": self.fqname(prefix + name),
        }
        if type(stmt) is ast.AnnAssign:
            properties["annotation"] = self.segment(stmt.annotation)  # type: ignore[attr-defined]
        node = self.factory.make(
            T_ATTRIBUTE if in_class else T_VARIABLE,
            name,
            prefix + name,
            stmt.lineno,
            end,
            parent,
            renderings={
                DEPTH_NAME: prefix + name,
                DEPTH_SIGNATURES: brief,
                DEPTH_FULL: self.source(stmt.lineno, end),
            },
            properties=properties,
        )
        value = getattr(stmt, "value", None)
        if not prefix:
            # ``apps = Apps()``: the instance's class, whose members ``apps.get_model`` names.
            made = called_class(value) if value is not None else None
            if made is not None:
                self.refer(node, made, _INSTANCE_OF, plain_unknown=True)
            elif (aliased := aliased_class(value)) is not None:
                # ``Matrix = MutableDenseMatrix``: the class under another name, its members
                # (``Matrix.det``) that class's (or the alias's it names, and so on).
                node.properties[ALIAS] = aliased
                self.refer(node, aliased, _INSTANCE_OF, plain_unknown=True)
        elif in_class:
            made = value_class(stmt, parameters)
            kind = made or _call_result(stmt)
            if kind is not None:
                _note_type(self.classes[prefix[:-1]].types, name, kind)
            if made is not None:
                # ``session: Session``: what ``client.session.get`` elsewhere goes through.
                node.properties[INSTANCE_OF] = made
                self.refer(node, made, _INSTANCE_OF, plain_unknown=False)
        return _Member(node, "attribute", brief, brief)

    # -- classes ---------------------------------------------------------------------------

    def klass(self, cls: ast.ClassDef, parent: UKONode, prefix: str) -> _Member:
        qualname = prefix + cls.name
        start = cls.decorator_list[0].lineno if cls.decorator_list else cls.lineno
        end = cls.end_lineno or cls.lineno
        decorators = [f"@{self.segment(d)}" for d in cls.decorator_list]
        bases = [self.segment(b) for b in cls.bases]
        arguments = bases + [
            f"{k.arg}={self.segment(k.value)}" if k.arg else f"**{self.segment(k.value)}"
            for k in cls.keywords
        ]
        type_params = getattr(cls, "type_params", None)
        generic = f"[{', '.join(self.segment(t) for t in type_params)}]" if type_params else ""
        signature = f"class {cls.name}{generic}" + (
            f"({', '.join(arguments)})" if arguments else ""
        )
        doc = ast.get_docstring(cls, clean=True) or ""
        base_names = [dotted_name(b.value if type(b) is ast.Subscript else b) for b in cls.bases]
        metaclass = [dotted_name(k.value) for k in cls.keywords if k.arg == "metaclass"]
        is_interface = any(b in _INTERFACE_BASES for b in base_names if b) or any(
            m and m.rsplit(".", 1)[-1] == "ABCMeta" for m in metaclass
        )
        is_enum = any(b and b.rsplit(".", 1)[-1] in _ENUM_BASES for b in base_names)
        uko_type = T_PROTOCOL if is_interface else T_ENUM if is_enum else T_CLASS
        if self.is_test_file and _is_test_class(cls.name, base_names):
            self.test_classes.add(qualname)
        properties = {"kind": "class", "signature": signature, "fqname": self.fqname(qualname)}
        if doc:
            properties["docstring"] = doc
        if decorators:
            properties["decorators"] = "\n".join(decorators)
        if bases:
            properties["bases"] = ", ".join(bases)
        node = self.factory.make(
            uko_type,
            cls.name,
            qualname,
            start,
            end,
            parent,
            properties=properties,
        )
        for dotted in base_names:
            if dotted and dotted != "object":
                self.refer(node, dotted, _INHERITANCE, plain_unknown=True)
        for dotted in metaclass:
            if dotted:
                self.refer(node, dotted, _METACLASS, plain_unknown=True)
        self.decorators(node, cls.decorator_list)
        scope = _Scope(
            node,
            inherits=any(b != "object" for b in bases),
            bases=[dotted_name(b) or "" for b in cls.bases],
        )
        self.classes[node.qualname] = scope
        members, _ = self.body(cls.body, node, scope, node.qualname + ".")
        members = [*scope.instance, *members]
        header = "\n".join([*decorators, signature + ":"])
        summary = f'    """{first_line(doc)}"""' if doc else ""
        briefs = [indent_block(m.brief) for m in members]
        brief = (
            "\n".join([header, *([summary] if summary else []), *briefs])
            if (summary or briefs)
            else header + " ..."
        )
        stubs = [indent_block(m.stub) for m in members]
        outline_parts = [header]
        if doc:
            outline_parts.append(docstring_block(doc, "    "))
        outline_parts.extend(stubs)
        if len(outline_parts) == 1:
            outline_parts.append("    ...")
        outline = "\n".join(outline_parts)
        listing = signature
        if members:
            # once per name: overloads, a property's getter and setter share one
            listing += ": " + ", ".join(dict.fromkeys(m.node.name for m in members))
        node.renderings = {
            DEPTH_NAME: node.qualname,
            DEPTH_MEMBERS: listing,
            DEPTH_SIGNATURES: brief,
            DEPTH_OUTLINE: outline,
            DEPTH_FULL: self.source(start, end),
        }
        return _Member(node, "class", brief, outline)

    def refer(
        self, node: UKONode, dotted: str, predicates: tuple[str, ...], *, plain_unknown: bool
    ) -> None:
        self.references.append(_Reference(node, dotted, predicates, plain_unknown))

    def decorators(self, node: UKONode, decorators: list[ast.expr]) -> None:
        """Dependencies on the decorators applied (``@hookimpl`` -> ``cleveragents.hookimpl``)."""
        for decorator in decorators:
            target_expr = decorator.func if type(decorator) is ast.Call else decorator
            dotted = dotted_name(target_expr)  # type: ignore[arg-type]
            if dotted and dotted not in _PLAIN_DECORATORS:
                self.refer(node, dotted, _DECORATION, plain_unknown=False)

    # -- functions -------------------------------------------------------------------------

    def signature(
        self, fn: ast.FunctionDef | ast.AsyncFunctionDef
    ) -> tuple[str, list[dict[str, str]]]:
        args = fn.args
        parts: list[str] = []
        params: list[dict[str, str]] = []
        positional = [*args.posonlyargs, *args.args]
        defaults: list[ast.expr | None] = [None] * (len(positional) - len(args.defaults))
        defaults.extend(args.defaults)
        kinds = ["positional-only"] * len(args.posonlyargs) + ["positional"] * len(args.args)
        for index, arg in enumerate(positional):
            parts.append(self.parameter(arg, defaults[index], "", kinds[index], params))
            if index == len(args.posonlyargs) - 1:
                parts.append("/")
        if args.vararg is not None:
            parts.append(self.parameter(args.vararg, None, "*", "var-positional", params))
        elif args.kwonlyargs:
            parts.append("*")
        for arg, default in zip(args.kwonlyargs, args.kw_defaults, strict=False):
            parts.append(self.parameter(arg, default, "", "keyword-only", params))
        if args.kwarg is not None:
            parts.append(self.parameter(args.kwarg, None, "**", "var-keyword", params))
        returns = f" -> {self.segment(fn.returns)}" if fn.returns is not None else ""
        keyword = "async def" if type(fn) is ast.AsyncFunctionDef else "def"
        return f"{keyword} {fn.name}({', '.join(parts)}){returns}", params

    def parameter(
        self,
        arg: ast.arg,
        default: ast.expr | None,
        star: str,
        kind: str,
        params: list[dict[str, str]],
    ) -> str:
        entry = {"name": arg.arg, "kind": kind}
        text = star + arg.arg
        if arg.annotation is not None:
            annotation = self.segment(arg.annotation)
            entry["annotation"] = annotation
            text += f": {annotation}"
        if default is not None:
            value = self.segment(default, 60)
            entry["default"] = value
            text += f" = {value}" if arg.annotation is not None else f"={value}"
        params.append(entry)
        return text

    def function(
        self,
        fn: ast.FunctionDef | ast.AsyncFunctionDef,
        parent: UKONode,
        prefix: str,
        class_qual: str | None,
    ) -> _Member:
        qualname = prefix + fn.name
        start = fn.decorator_list[0].lineno if fn.decorator_list else fn.lineno
        end = fn.end_lineno or fn.lineno
        decorators = [f"@{self.segment(d)}" for d in fn.decorator_list]
        signature, params = self.signature(fn)
        doc = ast.get_docstring(fn, clean=True) or ""
        is_test = (
            fn.name.startswith("test")
            and self.is_test_file
            and (class_qual is None or class_qual in self.test_classes)
        )
        is_async = type(fn) is ast.AsyncFunctionDef
        if is_test:
            uko_type, kind = T_TEST, "test"
        elif class_qual is not None:
            uko_type, kind = T_METHOD, "method"
            plain = {d[1:] for d in decorators}
            for special in ("property", "staticmethod", "classmethod"):
                if special in plain:
                    kind = special
            if (
                kind == "property"
                or "functools.cached_property" in plain
                or ("cached_property" in plain)
            ):
                uko_type = T_PROPERTY
        else:
            uko_type = T_ASYNC_FUNCTION if is_async else T_FUNCTION
            kind = "function"
        properties = {
            "kind": kind,
            "signature": signature,
            "parameters": _JSON.encode(params),
            "fqname": self.fqname(qualname),
            "visibility": visibility(fn.name),
        }
        if fn.returns is not None:
            properties["return_type"] = self.segment(fn.returns)
        if doc:
            properties["docstring"] = doc
        if decorators:
            properties["decorators"] = "\n".join(decorators)
            if any(d.lstrip("@").rsplit(".", 1)[-1] == "overload" for d in decorators):
                properties["overload"] = "true"  # a typing stub: the implementation follows
        if is_async:
            properties["is_async"] = "true"
        node = self.factory.make(
            uko_type, fn.name, qualname, start, end, parent, properties=properties
        )
        self.decorators(node, fn.decorator_list)
        self.annotations(node, fn)
        self.return_type(node, fn, class_qual)
        header = "\n".join([*decorators, signature + ":"])
        brief = header + " ..."
        stub = header + "\n" + (docstring_block(doc, "    ") if doc else "    ...")
        full = self.source(start, end)
        if end - start < _SHORT_FUNCTION:
            outline = full  # an outline of a few lines is the source itself
        else:
            flow: list[str] = []
            control_flow(fn.body, self.lines, "    ", flow)
            outline_parts = [header]
            if doc:
                outline_parts.append(docstring_block(doc, "    "))
            outline_parts.extend(flow or ["    ..."])
            outline = "\n".join(outline_parts)
        node.renderings = {
            DEPTH_NAME: node.qualname,
            DEPTH_SIGNATURES: header + (f'\n    """{first_line(doc)}"""' if doc else " ..."),
            DEPTH_OUTLINE: outline,
            DEPTH_FULL: full,
        }
        self.scan(fn, node, class_qual, is_test)
        return _Member(node, "function", brief, stub)

    def annotations(self, node: UKONode, fn: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
        """Weak references to the local or imported types a signature mentions."""
        args = fn.args
        stack: list[object] = [
            a.annotation for a in (*args.posonlyargs, *args.args, *args.kwonlyargs)
        ]
        stack.extend(a.annotation for a in (args.vararg, args.kwarg) if a is not None)
        stack.append(fn.returns)
        found: set[str] = set()
        while stack:
            item = stack.pop()
            kind = type(item)
            if kind is ast.Name:
                found.add(item.id)  # type: ignore[attr-defined]
            elif kind is ast.Attribute:
                dotted = dotted_name(item)  # type: ignore[arg-type]
                if dotted is not None:
                    found.add(dotted)
            elif kind is ast.Subscript:
                stack.append(item.value)  # type: ignore[attr-defined]
                stack.append(item.slice)  # type: ignore[attr-defined]
            elif kind is ast.BinOp:
                stack.append(item.left)  # type: ignore[attr-defined]
                stack.append(item.right)  # type: ignore[attr-defined]
            elif kind is ast.Tuple or kind is ast.List:
                stack.extend(item.elts)  # type: ignore[attr-defined]
            elif kind is ast.Constant and type(item.value) is str:  # type: ignore[attr-defined]
                text = item.value.strip()  # type: ignore[attr-defined]
                if text.replace(".", "").isidentifier():
                    found.add(text)
        for dotted in sorted(found):  # the same order in every process
            if dotted not in _BUILTINS:
                self.references.append(_Reference(node, dotted, _REFERENCE_ONLY, False))

    def return_type(
        self, node: UKONode, fn: ast.FunctionDef | ast.AsyncFunctionDef, class_qual: str | None
    ) -> None:
        """The class a function's return annotation names (``-> Client``; ``-> Self``, its
        own class): a ``usesType`` edge, through which the indexer finds the members of
        what calling it gives elsewhere; a property's is its attribute's type here."""
        returned = return_class(fn.returns, class_qual)
        if returned is not None:
            self.note_return(node, fn.name, returned, class_qual)

    def returned_by_body(
        self, node: UKONode, name: str, returned: str, class_qual: str | None
    ) -> None:
        """What an unannotated function's ``return`` statements give (``RETURNS``)."""
        node.properties[RETURNS] = returned
        self.note_return(node, name, returned, class_qual)

    def settle_deferred_returns(self) -> None:
        """The functions that return what other functions of this module return
        (``return self.rows()``): once those say their class, these do, as long as one
        class comes of every ``return``; a function of another module says nothing here."""
        settled = True
        while settled and self.deferred:
            settled = False
            for waiting in list(self.deferred):
                classes = set(waiting.classes)
                for callee in waiting.callees:
                    target = self.resolve(
                        callee,
                        waiting.class_qual,
                        waiting.params,
                        waiting.local_imports,
                        plain_unknown=False,
                    )
                    returned = self.returns.get(target) if target is not None else None
                    if returned is None:
                        break
                    classes.add(returned)
                else:
                    self.deferred.remove(waiting)
                    settled = True
                    if len(classes) == 1:
                        self.returned_by_body(
                            waiting.node, waiting.name, classes.pop(), waiting.class_qual
                        )

    def note_return(self, node: UKONode, name: str, returned: str, class_qual: str | None) -> None:
        """Say that calling ``node`` gives an instance of the class ``returned`` (as
        written here; ``class_qual`` itself when it is the function's own class)."""
        self.returns[node.uri] = returned
        if returned == class_qual:
            node.edges.append((USES_TYPE, self.classes[class_qual].node.uri))
        else:
            self.refer(node, returned, _INSTANCE_OF, plain_unknown=False)
        if node.uko_type == T_PROPERTY and class_qual is not None:
            self.classes[class_qual].types.setdefault(name, returned)

    def scan(
        self,
        fn: ast.FunctionDef | ast.AsyncFunctionDef,
        node: UKONode,
        class_qual: str | None,
        is_test: bool,
    ) -> None:
        """One walk of a function body: calls, nested definitions, local imports, ``self.x``."""
        calls: list[tuple[int, int, str]] = []
        nested: list[ast.AST] = []
        local_imports: dict[str, str] = {}
        modules: set[str] = set()  # what its ``import`` statements name
        instance_attrs: list[tuple[str, ast.stmt]] = []
        # ``self.x = …`` makes attributes in ``__init__``; in the other methods (a test's
        # ``setUp``) it still says what class ``self.x`` is.
        in_init = fn.name == "__init__"
        self_name = fn.args.args[0].arg if class_qual is not None and fn.args.args else ""
        collect_self = bool(self_name) and (in_init or self_name in ("self", "cls"))
        stack: list[object] = list(fn.body)
        pop, push, append = stack.pop, stack.extend, stack.append
        call_type, scopes, skip = ast.Call, SCOPES, _NO_CALLS_INSIDE
        name_type, store, list_type = ast.Name, ast.Store, list
        attribute_type, keyword_type = ast.Attribute, ast.keyword
        fields_of = _FIELDS
        local_names: set[str] = set()
        stores: dict[str, int] = {}  # how many times each local name is bound
        typed: dict[str, list[str]] = {}  # the classes assignments to a local name make
        results: list[ast.expr | None] = []  # what its ``return`` statements give
        narrowed: list[tuple[str, str, int, int]] = []  # ``if isinstance(x, Class):``
        generator = False
        while stack:
            item = pop()
            kind = type(item)
            if kind in skip:
                continue
            if kind is list_type:
                push(item)  # type: ignore[arg-type]
                continue
            if kind is name_type:
                if type(item.ctx) is store:  # type: ignore[attr-defined]
                    local_names.add(item.id)  # type: ignore[attr-defined]
                    stores[item.id] = stores.get(item.id, 0) + 1  # type: ignore[attr-defined]
                continue
            if kind is attribute_type:
                append(item.value)  # type: ignore[attr-defined]
                continue
            if kind is call_type:
                func = item.func  # type: ignore[attr-defined]
                if type(func) is name_type:
                    calls.append((item.lineno, item.col_offset, func.id))  # type: ignore[attr-defined]
                else:
                    dotted = dotted_name(func) if type(func) is attribute_type else None
                    if dotted is None and type(func) is attribute_type and _is_super(func.value):  # type: ignore[attr-defined]
                        dotted = f"{_SUPER}.{func.attr}"  # type: ignore[attr-defined]
                    if dotted is None:
                        if type(func) is attribute_type and type(func.value) is call_type:  # type: ignore[attr-defined]
                            chained = _chained(func)  # type: ignore[arg-type]
                            if chained is not None:
                                calls.append((item.lineno, item.col_offset, chained))  # type: ignore[attr-defined]
                        append(func)
                    else:
                        calls.append((item.lineno, item.col_offset, dotted))  # type: ignore[attr-defined]
                push(item.args)  # type: ignore[attr-defined]
                push(item.keywords)  # type: ignore[attr-defined]
                continue
            if kind is keyword_type:
                append(item.value)  # type: ignore[attr-defined]
                continue
            if kind in scopes:
                nested.append(item)  # type: ignore[arg-type]
                continue
            elif kind is ast.Import or kind is ast.ImportFrom:
                self.unindexed_imports.update(self.record_import(item, local_imports))  # type: ignore[arg-type]
                if kind is ast.Import:
                    modules.update(
                        a.name if a.asname else a.name.partition(".")[0]
                        for a in item.names  # type: ignore[attr-defined]
                    )
                continue
            elif kind is ast.Assign or kind is ast.AnnAssign:
                targets = item.targets if kind is ast.Assign else [item.target]  # type: ignore[attr-defined]
                for target in targets:
                    if type(target) is name_type:
                        made = value_class(item, None) or _call_result(item)  # type: ignore[arg-type]
                        if made is not None:
                            typed.setdefault(target.id, []).append(made)
                    elif (
                        collect_self
                        and type(target) is ast.Attribute
                        and type(target.value) is ast.Name
                        and target.value.id == self_name
                    ):
                        instance_attrs.append((target.attr, item))  # type: ignore[arg-type]
            elif kind is ast.If:
                narrowing = _narrowing(item)  # type: ignore[arg-type]
                if narrowing is not None and narrowing[0] != self_name:  # ``self``: its class
                    narrowed.append(narrowing)
            elif kind is ast.With or kind is ast.AsyncWith:
                for expr, enter, name in _entered(item):  # type: ignore[arg-type]
                    calls.append((expr.lineno, expr.col_offset, enter))
                    if name is not None:
                        typed.setdefault(name, []).append(enter + CALL_RESULT)
            elif kind is ast.Return:
                results.append(item.value)  # type: ignore[attr-defined]
            elif kind is ast.Yield or kind is ast.YieldFrom:
                generator = True
            fields = fields_of.get(kind)
            if fields is None:
                fields = fields_of[kind] = getattr(kind, "_fields", ())
            for name in fields:
                append(getattr(item, name, None))
        args = fn.args
        local_names.update(
            a.arg
            for a in (*args.posonlyargs, *args.args, *args.kwonlyargs, args.vararg, args.kwarg)
            if a is not None
        )
        params = frozenset(local_names)
        # A local name whose every binding makes one class (not a parameter's, not a
        # loop's too): its members are that class's.
        local_types = {
            name: made[0]
            for name, made in typed.items()
            if len(made) == stores.get(name)
            and len(set(made)) == 1
            # ``self = cls.__new__(cls)``: still the method's class
            and not (name in _SELF_NAMES and made[0].endswith(CALL_RESULT))
        }
        for a in (*args.posonlyargs, *args.args, *args.kwonlyargs, args.vararg, args.kwarg):
            if a is not None:
                local_types.pop(a.arg, None)
        local_types.update(self.parameter_types(args, stores, self_name, class_qual))
        if fn.returns is None and results and not generator:
            method = node.properties["kind"]
            read = body_returns(
                results,
                self_name if method in ("method", "property") else "",
                self_name if method == "classmethod" else "",
                class_qual,
                local_types,
            )
            if read is not None and len(read[0]) <= 1 and (read[0] or read[1]):
                classes, callees = read
                if callees:  # ``return self.rows()``: known once every function is read
                    self.deferred.append(
                        _DeferredReturn(
                            node, fn.name, class_qual, classes, callees, params, local_imports
                        )
                    )
                else:
                    self.returned_by_body(node, fn.name, classes.pop(), class_qual)
        plain = sorted(m for m in modules if "." not in m)
        if plain:
            node.properties[MODULE_IMPORTS] = "\n".join(plain)
        self.pending.append(
            _Pending(node, calls, class_qual, params, local_imports, is_test, local_types, narrowed)
        )
        if instance_attrs and class_qual is not None:
            annotated = {
                a.arg: a.annotation
                for a in (*args.posonlyargs, *args.args, *args.kwonlyargs)
                if a.annotation is not None
            }
            if in_init:
                self.instance_attributes(class_qual, instance_attrs, annotated)
            else:
                self.assigned_types(class_qual, instance_attrs, annotated)
        nested.sort(key=lambda n: n.lineno)  # type: ignore[attr-defined]
        for inner in nested:
            if type(inner) is ast.ClassDef:
                self.klass(inner, node, node.qualname + ".")  # type: ignore[arg-type]
            else:
                self.function(inner, node, node.qualname + ".", None)  # type: ignore[arg-type]

    def parameter_types(
        self,
        args: ast.arguments,
        stores: Mapping[str, int],
        self_name: str,
        class_qual: str | None,
    ) -> dict[str, str]:
        """The class of each parameter annotated with one (``client: Client``, ``other:
        Self``) and never bound again in the body: its members are that class's. A
        method's own first parameter is left to the method's class; ``typing``'s names
        (``Any``) and a module variable that is no class under another name (``T =
        TypeVar("T")``) name no members."""
        found = {}
        for a in (*args.posonlyargs, *args.args, *args.kwonlyargs):
            if a.annotation is None or a.arg == self_name or a.arg in stores:
                continue
            kind = return_class(a.annotation, class_qual)
            if kind is None:
                continue
            head, _, rest = kind.partition(".")
            imported = self.imports.get(head)
            if imported is not None and f"{SYMBOL}{imported}.{rest}".startswith(_TYPING_SYMBOLS):
                continue  # ``Any``, ``Mapping``: no class of members
            variable = self.top.get(head) if head not in self.classes else None
            if variable is None or ALIAS in variable.properties:
                found[a.arg] = kind
        return found

    def instance_attributes(
        self,
        class_qual: str,
        found: list[tuple[str, ast.stmt]],
        parameters: Mapping[str, ast.expr],
    ) -> None:
        scope = self.classes[class_qual]
        for name, stmt in found:
            if name in scope.members:
                # ``self.rows = Rows()`` says more than a later ``self.rows.copy()``
                kind = value_class(stmt, parameters)
                if kind is not None and scope.types.get(name, "").endswith(CALL_RESULT):
                    scope.types[name] = kind
                continue
            member = self.attribute(name, stmt, scope.node, class_qual + ".", parameters)
            member.node.properties["kind"] = "instance-attribute"
            scope.members[name] = member.node
            scope.instance.append(member)

    def assigned_types(
        self,
        class_qual: str,
        found: list[tuple[str, ast.stmt]],
        parameters: Mapping[str, ast.expr],
    ) -> None:
        """The classes a method other than ``__init__`` gives attributes
        (``self.factory = RequestFactory()`` in ``setUp``), the first it says each."""
        scope = self.classes[class_qual]
        for name, stmt in found:
            scope.bound.add(name)
            kind = value_class(stmt, parameters) or _call_result(stmt)
            if kind is not None:
                _note_type(scope.assigned, name, kind)

    def inherited_type(self, scope: _Scope, attribute: str) -> str | None:
        """The class a base says ``self.attribute`` is (``self.client = Client()`` in
        ``Base.__init__``), for a class that does not set it itself: looked for along the
        bases (depth first, left to right, as the method resolution order goes for a
        single line of them) while they are this module's classes. A base from elsewhere
        met first may set it too, and one that sets it to what no one says ends the
        search: then nothing is known."""
        if attribute in scope.members or attribute in scope.bound:
            return None
        pending, seen = list(reversed(scope.bases)), set()
        while pending:
            name = pending.pop()
            if name == "object" or name in seen:
                continue
            seen.add(name)
            base = self.classes.get(name) if name in self.top else None
            if base is None:
                return None
            kind = base.types.get(attribute) or base.assigned.get(attribute)
            if kind is not None:
                return kind
            if attribute in base.members or attribute in base.bound:
                return None
            pending.extend(reversed(base.bases))
        return None

    def attribute_read(
        self, dotted: str, pending: _Pending, local_types: dict[str, str]
    ) -> str | None:
        """The attribute of another class a call goes through: ``client.session`` of
        ``client.session.get`` (``client`` a local of a known class), ``self.client.session``
        of ``self.client.session.get``; its node or name."""
        head, _, rest = dotted.partition(".")
        if CALL_RESULT in dotted:
            return None
        if head in _SELF_NAMES and pending.class_qual is not None:
            if rest.count(".") != 2:
                return None
        elif head not in local_types or rest.count(".") != 1:
            return None
        return self.resolve_call(dotted.rpartition(".")[0], pending, local_types)

    def resolve_call(
        self, dotted: str, pending: _Pending, local_types: dict[str, str]
    ) -> str | None:
        """:meth:`resolve` of a name used in ``pending``'s function."""
        return self.resolve(
            dotted,
            pending.class_qual,
            pending.params,
            pending.local_imports,
            local_types=local_types,
        )

    def finish_calls(self) -> None:
        self.settle_deferred_returns()
        for reference in self.references:
            target = self.resolve(reference.dotted, None, plain_unknown=reference.plain_unknown)
            if target is None or target == reference.node.uri:
                continue
            if reference.predicates is not _INHERITANCE and target.startswith(_TYPING_SYMBOLS):
                continue
            reference.node.edges.extend((p, target) for p in reference.predicates)
        for pending in self.pending:
            edges = pending.node.edges
            targets = []
            pending.calls.sort()
            read: list[str] = []  # the attributes chains go through
            for line, _, dotted in pending.calls:
                types = pending.types_at(line)
                target = self.resolve_call(dotted, pending, types)
                if target is not None and target != pending.node.uri:
                    targets.append(target)
                    through = self.attribute_read(dotted, pending, types)
                    if through is not None:
                        read.append(through)
            targets = list(dict.fromkeys(targets))
            edges.extend((DEPENDS_ON, t) for t in targets)
            # The attribute's class says what the call reaches: a refresh follows it.
            edges.extend((REFERENCES, t) for t in dict.fromkeys(read) if t not in targets)
            if pending.is_test:
                edges.extend((TESTS_CALLABLE, t) for t in targets)
            edges.extend((DEPENDS_ON, f"symbol:{t}") for t in pending.local_imports.values())
            pending.node.edges = dedupe(edges)


#: How a call's receiver ``super()`` is written among dotted names (no name has parentheses).
_SUPER = "super()"


def _is_super(node: ast.AST) -> bool:
    """``super()`` or ``super(Class, self)``: the bases of the method's class."""
    return (
        type(node) is ast.Call
        and type(node.func) is ast.Name  # type: ignore[attr-defined]
        and node.func.id == "super"  # type: ignore[attr-defined]
    )


def _note_type(types: dict[str, str], name: str, kind: str) -> None:
    """Note the class an attribute's statement gives (the first one a method says), a
    class over what a call returns (``self.rows = Rows()`` beside ``self.rows =
    self.rows.copy()``, which says nothing by itself)."""
    known = types.get(name)
    if known is None or (known.endswith(CALL_RESULT) and not kind.endswith(CALL_RESULT)):
        types[name] = kind


#: The names a method's instance or class goes by.
_SELF_NAMES = frozenset({"self", "cls"})


#: Between a callee and a member of what it returns (``make_client().get``).
_CALLED = CALL_RESULT + "."


def _chained(func: ast.Attribute) -> str | None:
    """What ``Client(...).get`` (``Client.get``) or ``make_client(...).get``
    (``make_client().get``) names: a member of what the call gives."""
    made = called_class(func.value) or call_result(func.value)
    return f"{made}.{func.attr}" if made is not None else None


def _narrowing(stmt: ast.If) -> tuple[str, str, int, int] | None:
    """``(x, "Client", first, last)`` of ``if isinstance(x, Client):`` over the lines of
    its body, unless the body binds ``x`` again (a class of ``Client``'s capital, not
    a tuple of them)."""
    test = stmt.test
    if not (
        type(test) is ast.Call
        and type(test.func) is ast.Name
        and test.func.id == "isinstance"
        and len(test.args) == 2
        and type(test.args[0]) is ast.Name
    ):
        return None
    name = test.args[0].id
    made = return_class(test.args[1], None)  # read as an annotation: a capital, no tuple
    if made is None:
        return None
    for inner in stmt.body:
        for bound in ast.walk(inner):
            if type(bound) is ast.Name and bound.id == name and type(bound.ctx) is ast.Store:
                return None
    return name, made, stmt.body[0].lineno, stmt.body[-1].end_lineno or stmt.body[-1].lineno


def _entered(stmt: ast.With | ast.AsyncWith) -> list[tuple[ast.expr, str, str | None]]:
    """``(Client(...), "Client.__enter__", "x")`` of ``with Client(...) as x``: the
    statement calls the class's ``__enter__`` (``__aenter__`` in ``async with``), and
    ``x`` is what that returns, most often the instance itself (``return self``)."""
    method = "__aenter__" if type(stmt) is ast.AsyncWith else "__enter__"
    found = []
    for item in stmt.items:
        made = called_class(item.context_expr)
        if made is not None:
            target = item.optional_vars
            name = target.id if type(target) is ast.Name else None  # type: ignore[attr-defined]
            found.append((item.context_expr, f"{made}.{method}", name))
    return found


def _call_result(stmt: ast.stmt) -> str | None:
    """``make_client()`` of ``x = make_client()`` (see ``call_result``); an annotated
    assignment says its type itself."""
    return call_result(stmt.value) if type(stmt) is ast.Assign else None  # type: ignore[attr-defined]


def _is_test_class(name: str, bases: list[str | None]) -> bool:
    """A class whose ``test*`` methods pytest (``TestThing``) or unittest (a ``TestCase``
    subclass: ``ThingTests(SimpleTestCase)``, ``ThingTests(ThingTestBase)``) collects."""
    return "Test" in name or any(b and "Test" in b.rsplit(".", 1)[-1] for b in bases)


class PythonAnalyzer:
    """Python modules, classes, functions, attributes, imports, calls and tests (``ast``)."""

    name = "python"
    languages: tuple[str, ...] = ("python",)
    specificity = 100
    #: 1: a package's re-exports are ``uko-py:ReExport`` nodes with their bindings.
    #: 2: ``self.name()`` a class does not define is guessed inherited (INHERITED_TARGET).
    #: 3: a module variable made by calling a class uses that type (``USES_TYPE``).
    #: 4: a function's own ``import re`` is a module's name (``MODULE_IMPORTS``).
    #: 5: ``self.client.get()`` is the member of the attribute's class, when it is known.
    #: 6: ... also when a method other than ``__init__`` says it (a test's ``setUp``).
    #: 7: ``form.is_valid()`` of a local ``form = Form(data)`` is the member of ``Form``.
    #: 8: a module's ``from m import a`` re-exports ``a`` when ``__all__`` lists it (and
    #: ``from m import *`` all of ``m``); a name a module defines in alternative branches
    #: resolves to all its definitions.
    #: 9: ``self.client.get()`` of an attribute a base class of the module types.
    #: 10: a function's return annotation names a class (``usesType``): ``client.get()`` of
    #: ``client = make_client()`` (or ``self.client = …``) is that class's member.
    #: 11: ... and so is ``make_client().get()`` (``Client().get()``: ``Client.get``).
    #: 12: ... and a function with no return annotation returns the class all its
    #: ``return`` statements give (``return self``, ``return Pipeline(...)``: ``RETURNS``).
    #: 13: a module's ``Matrix = MutableDenseMatrix`` is that class under another name
    #: (``ALIAS``, a ``usesType`` edge): ``Matrix.det`` is its member.
    #: 14: ... and a function returning what another function of the module returns
    #: (``return self.clone()``) returns that class.
    #: 15: a parameter annotated with one class (``client: Client``) gives its members.
    #: 16: ``with Session() as s`` calls ``Session.__enter__`` and binds what it returns.
    #: 17: a class attribute whose statement says its class has a ``usesType`` edge
    #: (``INSTANCE_OF``), and a call through it (``store.session.query()``) reaches the
    #: member of that class, referencing the attribute read.
    #: 18: in the body of ``if isinstance(x, Client):`` ``x`` is a ``Client``.
    #: 19: a module's top-level from-import of a name the module names nowhere else is a
    #: re-export (``uko-py:ReExport``): importers reach the definition through it.
    #: 20: every top-level from-import of a module says what it binds (``EXPORT_BINDINGS``):
    #: a name imported from a module that imports it (and uses it) reaches its definition.
    #: 21: the module node lists what its functions' import statements import.
    #: 22: and the second and later modules of ``import a, b`` (``UNINDEXED_IMPORTS``).
    #: 23: an annotation's class also through ``Union[X, None]``, ``Annotated[X, …]``,
    #: ``ClassVar[X]`` and ``Final[X]``.
    revision = 23
    suffixes = frozenset(PYTHON_SUFFIXES)

    def supports(self, path: Path, head: bytes) -> bool:
        """``.py``/``.pyi``/``.pyw`` files, and scripts whose ``#!`` line names python."""
        if path.suffix.lower() in self.suffixes:
            return True
        if not path.suffix and head.startswith(b"#!"):
            return b"python" in head.split(b"\n", 1)[0]
        return False

    def analyze(
        self, path: Path, content: str, *, resource_id: str, relative_path: str
    ) -> AnalysisResult:
        """Nodes for one Python file; a syntax error yields a line-based best effort."""
        if content.startswith("\ufeff"):
            content = content[1:]
        try:
            tree = ast.parse(content, filename=relative_path)
        except SyntaxError as exc:
            where = f"{relative_path}:{exc.lineno or 0}:{exc.offset or 0}"
            return fallback(
                path, content, resource_id, relative_path, f"{where}: SyntaxError: {exc.msg}"
            )
        except (ValueError, RecursionError, MemoryError) as exc:
            return fallback(
                path,
                content,
                resource_id,
                relative_path,
                f"{relative_path}: cannot parse: {type(exc).__name__}: {exc}",
            )
        builder = _ModuleBuilder(path, content, resource_id, relative_path)
        try:
            return AnalysisResult(nodes=builder.build(tree))
        except RecursionError as exc:
            return fallback(
                path,
                content,
                resource_id,
                relative_path,
                f"{relative_path}: too deeply nested to analyze: {exc}",
            )
