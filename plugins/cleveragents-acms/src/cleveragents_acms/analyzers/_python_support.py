"""Python analysis helpers that need no analyzer state: names, slicing, outlines, fallback."""

from __future__ import annotations

import ast
import os
import re
from collections.abc import Mapping, Sequence
from functools import lru_cache
from pathlib import Path

from cleveragents.models.uko import (
    DEPTH_FULL,
    DEPTH_MEMBERS,
    DEPTH_NAME,
    DEPTH_SIGNATURES,
    AnalysisResult,
    UKONode,
)
from cleveragents_acms.analyzers._common import CALL_RESULT, NodeFactory, split_lines, truncate

__all__ = [
    "aliased_class",
    "annotated_class",
    "blocks",
    "body_returns",
    "bytes_slice",
    "call_result",
    "called_class",
    "control_flow",
    "docstring_block",
    "dotted_name",
    "fallback",
    "forget_packages",
    "head_line",
    "indent_block",
    "is_test_file",
    "listed_names",
    "module_name_for",
    "return_class",
    "value_class",
    "visibility",
]

T_MODULE = "uko-py:Module"
T_CLASS = "uko-py:Class"
T_FUNCTION = "uko-py:Function"
T_METHOD = "uko-py:Method"

TRY_TYPES: tuple[type[ast.AST], ...] = tuple(
    t for t in (ast.Try, getattr(ast, "TryStar", None)) if t is not None
)
SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
_DEF_LINE = re.compile(r"^([ \t]*)(?:async[ \t]+)?(def|class)[ \t]+([A-Za-z_]\w*)")
_OUTLINE_LINES = 300
_EXITS = (ast.Return, ast.Raise)
_YIELDS = (ast.Yield, ast.YieldFrom)


def is_test_file(relative_path: str) -> bool:
    name = relative_path.rsplit("/", 1)[-1]
    return name.startswith("test_") or name.endswith("_test.py")


@lru_cache(maxsize=4096)
def _is_package_dir(directory: str) -> bool:
    return os.path.isfile(os.path.join(directory, "__init__.py"))


def forget_packages() -> None:
    """Drop what is known of which folders are packages: an ``__init__.py`` may come or
    go between two runs of one process (a watch, a service), and the next run's module
    names must follow it."""
    _is_package_dir.cache_clear()


def module_name_for(path: Path | None, relative_path: str) -> str:
    """The dotted module name of a file: ``src/pkg/mod.py`` -> ``pkg.mod``.

    Below a ``src`` folder the path decides; otherwise the enclosing packages
    (folders with ``__init__.py``) when the file exists, else the longest tail
    of identifier-like path parts.
    """
    parts = relative_path.split("/")
    stem = parts[-1].rsplit(".", 1)[0]
    parts = [*parts[:-1], stem] if stem != "__init__" else parts[:-1]
    if "src" in parts[:-1]:
        parts = parts[len(parts) - parts[::-1].index("src") :]
    elif path is not None and os.path.isfile(path):
        directory = os.path.dirname(os.path.abspath(path))
        packages: list[str] = []
        # A package's ``__init__`` is named by its folders alone (``parts`` has no stem).
        folders = len(parts) - (1 if stem != "__init__" else 0)
        while _is_package_dir(directory) and len(packages) < folders:
            packages.append(os.path.basename(directory))
            directory = os.path.dirname(directory)
        keep = len(packages) + (1 if stem != "__init__" else 0)
        parts = parts[len(parts) - keep :] if keep else parts[-1:]
    tail: list[str] = []
    for part in reversed(parts):
        if not part.isidentifier():
            break
        tail.append(part)
    return ".".join(reversed(tail)) or stem


def dotted_name(node: ast.AST) -> str | None:
    """``a.b.c`` for a Name/Attribute chain, else None."""
    attrs: list[str] = []
    while type(node) is ast.Attribute:
        attrs.append(node.attr)  # type: ignore[attr-defined]
        node = node.value  # type: ignore[attr-defined]
    if type(node) is ast.Name:
        attrs.append(node.id)  # type: ignore[attr-defined]
        return ".".join(reversed(attrs))
    return None


def listed_names(body: list[ast.stmt]) -> frozenset[str]:
    """The names a module's ``__all__`` lists where its top level writes them out:
    ``__all__ = [...]`` (annotated or not), ``__all__ += [...]``, ``__all__.extend([...])``
    and ``__all__.append("x")``. Names it computes (``__all__ = a.__all__ + ...``) are
    not read: only what the text says for certain."""
    names: set[str] = set()
    for stmt in body:  # once per module: plain isinstance, which mypy narrows
        if isinstance(stmt, ast.Assign):
            if any(isinstance(t, ast.Name) and t.id == "__all__" for t in stmt.targets):
                names.update(_strings(stmt.value))
        elif isinstance(stmt, (ast.AnnAssign, ast.AugAssign)):
            target = stmt.target
            if isinstance(target, ast.Name) and target.id == "__all__" and stmt.value:
                names.update(_strings(stmt.value))
        elif isinstance(stmt, ast.Expr) and isinstance(call := stmt.value, ast.Call):
            func = call.func
            if (
                isinstance(func, ast.Attribute)
                and func.attr in ("extend", "append")
                and isinstance(func.value, ast.Name)
                and func.value.id == "__all__"
                and len(call.args) == 1
            ):
                arg = call.args[0]
                names.update(_strings(arg) if func.attr == "extend" else _literals([arg]))
    return frozenset(names)


def _strings(value: ast.expr) -> list[str]:
    """The string literals of a list or tuple display (nothing for anything else)."""
    if not isinstance(value, (ast.List, ast.Tuple)):
        return []
    return _literals(value.elts)


def _literals(values: list[ast.expr]) -> list[str]:
    return [e.value for e in values if isinstance(e, ast.Constant) and isinstance(e.value, str)]


def value_class(stmt: ast.stmt, parameters: Mapping[str, ast.expr] | None) -> str | None:
    """The class an attribute's value is, as written (``Client``, ``http.Client``): of
    ``Client(...)``, of an annotation ``Client``, ``Optional[Client]``, ``Client | None``
    or ``"Client"``, or of the annotated ``__init__`` parameter it is set to. A name
    without a capital (``int``, ``list[str]``) is no class worth following."""
    annotation = getattr(stmt, "annotation", None)
    value = getattr(stmt, "value", None)
    if annotation is None and type(value) is ast.Name and parameters:
        annotation = parameters.get(value.id)
    if annotation is not None:
        return _a_class(annotated_class(annotation))
    return called_class(value) if value is not None else None


def call_result(value: ast.expr | None) -> str | None:
    """``make_client()`` of ``make_client(...)`` or ``await make_client(...)``: a call of
    what is no class by its capital (those :func:`called_class` gives), marked so; a
    method of a new instance (``Series(...).resample(...)``) is ``Series.resample()``."""
    if type(value) is ast.Await:
        value = value.value  # type: ignore[attr-defined]
    if type(value) is not ast.Call:
        return None
    func = value.func  # type: ignore[attr-defined]
    callee = dotted_name(func)
    if callee is None and type(func) is ast.Attribute:
        made = called_class(func.value)  # ``Series(...).resample(...)``: ``Series.resample``
        callee = f"{made}.{func.attr}" if made is not None else None
    if callee is None or _a_class(callee) is not None:
        return None
    return callee + CALL_RESULT


def return_class(annotation: ast.expr | None, class_name: str | None) -> str | None:
    """The class a function's return annotation names, as written (see
    :func:`annotated_class`); ``Self`` in a class is ``class_name``."""
    if annotation is None:
        return None
    named = annotated_class(annotation)
    if named in _SELF:
        return class_name
    return _a_class(named)


def body_returns(
    results: Sequence[ast.expr | None],
    self_name: str,
    cls_name: str,
    class_qual: str | None,
    local_types: Mapping[str, str],
) -> tuple[set[str], set[str]] | None:
    """What the values of an unannotated function's ``return`` statements are, read as
    :func:`return_class` reads an annotation: ``(classes, callees)``, the classes as
    written and the callees whose results they are (``return self.rows()``,
    ``return make()``, or a local name made so; what those return is known once the
    module is read). ``class_qual`` for a method's ``return self`` (``self_name``),
    ``return type(self)(...)`` or ``return self.__class__(...)``, or a class method's
    ``return cls(...)`` (``cls_name``), also through a local name; ``Client`` for
    ``return Client(...)`` or a local name every binding of which makes one
    (``local_types``). A bare ``return`` or ``return None`` says nothing (an optional
    result); None when a value is none of these."""
    classes: set[str] = set()
    callees: set[str] = set()
    for value in results:
        if value is None or (type(value) is ast.Constant and value.value is None):
            continue
        kind: str | None
        if type(value) is ast.Name:
            kind = class_qual if value.id == self_name else local_types.get(value.id)
            if kind == f"{cls_name}{CALL_RESULT}":  # ``made = cls(...)``
                kind = class_qual
        elif type(value) is ast.Call and _makes_own(value.func, self_name, cls_name):
            kind = class_qual
        else:
            kind = called_class(value) or call_result(value)
        if kind is None:
            return None
        if kind.endswith(CALL_RESULT):
            callees.add(kind[: -len(CALL_RESULT)])
        else:
            classes.add(kind)
    return classes, callees


def _makes_own(func: ast.expr, self_name: str, cls_name: str) -> bool:
    """Whether calling ``func`` makes an instance of the method's own class: ``cls``,
    ``type(self)`` or ``self.__class__``."""
    if type(func) is ast.Name:
        return bool(cls_name) and func.id == cls_name
    if not self_name:
        return False
    if type(func) is ast.Attribute:
        return (
            func.attr == "__class__" and type(func.value) is ast.Name and func.value.id == self_name
        )
    return (
        type(func) is ast.Call
        and type(func.func) is ast.Name
        and func.func.id == "type"
        and len(func.args) == 1
        and type(func.args[0]) is ast.Name
        and func.args[0].id == self_name
    )


#: How ``typing.Self`` is written in an annotation.
_SELF = frozenset({"Self", "typing.Self", "typing_extensions.Self", "t.Self"})


def aliased_class(value: ast.expr | None) -> str | None:
    """``MutableDenseMatrix`` of ``Matrix = MutableDenseMatrix`` (``pkg.Client`` of
    ``Client = pkg.Client``): a name a capital says is a class's, as written."""
    if type(value) is not ast.Name and type(value) is not ast.Attribute:
        return None
    return _a_class(dotted_name(value))  # type: ignore[arg-type]


def called_class(value: ast.expr) -> str | None:
    """``Client`` of ``Client(...)``: the name called, when it is a class's by its capital."""
    return _a_class(dotted_name(value.func)) if type(value) is ast.Call else None  # type: ignore[attr-defined]


def _a_class(name: str | None) -> str | None:
    return name if name and name.rpartition(".")[2][:1].isupper() else None


def annotated_class(annotation: ast.expr) -> str | None:
    """``Client`` of ``Client``, ``Optional[Client]``, ``Client | None``, ``Union[Client,
    None]``, ``"Client"``, and of those in ``Annotated[…, metadata]``, ``ClassVar[…]`` or
    ``Final[…]`` (FastAPI's ``db: Annotated[Session, Depends(get_db)]``)."""
    for _ in range(3):  # ``ClassVar[Optional[Client]]``: a few wrappers deep
        if type(annotation) is ast.Constant and type(annotation.value) is str:
            try:
                annotation = ast.parse(annotation.value, mode="eval").body
            except (SyntaxError, ValueError):  # not an expression, or a NUL in it
                return None
        if type(annotation) is not ast.Subscript:
            break
        wrapper = _typing_name(annotation.value)
        inner = annotation.slice
        if wrapper in _WRAPPERS:
            annotation = inner
        elif wrapper == "Annotated" and type(inner) is ast.Tuple and inner.elts:
            annotation = inner.elts[0]
        elif wrapper == "Union" and type(inner) is ast.Tuple:
            kept = [e for e in inner.elts if not _is_none(e)]
            if len(kept) != 1:
                return None
            annotation = kept[0]
        else:
            break
    if type(annotation) is ast.BinOp and type(annotation.op) is ast.BitOr:
        kept = [side for side in (annotation.left, annotation.right) if not _is_none(side)]
        if len(kept) != 1:
            return None
        annotation = kept[0]
    if type(annotation) is ast.Name or type(annotation) is ast.Attribute:
        return dotted_name(annotation)
    return None


def _is_none(node: ast.expr) -> bool:
    return type(node) is ast.Constant and node.value is None


def _typing_name(node: ast.expr) -> str | None:
    """``Optional`` of ``Optional``, ``typing.Optional``, ``t.Optional`` or
    ``typing_extensions.Optional``: the typing form a subscript names."""
    name = dotted_name(node)
    if name is None:
        return None
    module, _, last = name.rpartition(".")
    return last if module in _TYPING_MODULES else None


#: The modules typing's forms are written through (``typing.Optional``, ``t.Optional``).
_TYPING_MODULES = frozenset({"", "typing", "t", "typing_extensions"})
#: Typing forms whose one argument is the class: ``Optional[Client]``, ``ClassVar[Client]``.
_WRAPPERS = frozenset({"Optional", "ClassVar", "Final"})


def visibility(name: str) -> str:
    if name.startswith("__") and name.endswith("__"):
        return "public"
    return "private" if name.startswith("_") else "public"


def bytes_slice(line: str, start: int, end: int | None) -> str:
    return line.encode("utf-8")[start:end].decode("utf-8", errors="replace")


def blocks(stmt: ast.stmt) -> list[list[ast.stmt]]:
    """The statement lists inside an ``if``/``try``/``with`` at module or class level."""
    kind = type(stmt)
    if kind is ast.If:
        return [stmt.body, stmt.orelse]  # type: ignore[attr-defined]
    if kind in (ast.With, ast.AsyncWith):
        return [stmt.body]  # type: ignore[attr-defined]
    return [
        stmt.body,  # type: ignore[attr-defined]
        *(h.body for h in stmt.handlers),  # type: ignore[attr-defined]
        stmt.orelse,  # type: ignore[attr-defined]
        stmt.finalbody,  # type: ignore[attr-defined]
    ]


def indent_block(text: str, prefix: str = "    ") -> str:
    return prefix + text.replace("\n", "\n" + prefix)


def docstring_block(doc: str, pad: str) -> str:
    text = doc.replace('"""', '\\"\\"\\"')
    if "\n" not in text:
        return f'{pad}"""{text}"""'
    body = "\n".join(pad + line if line else "" for line in text.split("\n"))
    return f'{pad}"""{body[len(pad) :]}\n{pad}"""'


def head_line(lines: list[str], node: ast.AST) -> str:
    """The first source line of a statement, stripped and shortened."""
    return truncate(lines[node.lineno - 1].strip(), 160)  # type: ignore[attr-defined]


def control_flow(body: list[ast.stmt], lines: list[str], pad: str, out: list[str]) -> None:
    """Control-flow outline of ``body``: branch and loop headers, returns and raises."""
    for stmt in body:
        if len(out) >= _OUTLINE_LINES:
            if out[-1] != pad + "...":
                out.append(pad + "...")
            return
        kind = type(stmt)
        if kind is ast.If:
            out.append(pad + head_line(lines, stmt))
            _block(stmt.body, lines, pad, out)  # type: ignore[attr-defined]
            orelse = stmt.orelse  # type: ignore[attr-defined]
            while orelse:
                first = orelse[0]
                if (
                    len(orelse) == 1
                    and type(first) is ast.If
                    and lines[first.lineno - 1].lstrip().startswith("elif")
                ):
                    out.append(pad + head_line(lines, first))
                    _block(first.body, lines, pad, out)
                    orelse = first.orelse
                else:
                    out.append(pad + "else:")
                    _block(orelse, lines, pad, out)
                    break
        elif kind in (ast.For, ast.AsyncFor, ast.While):
            out.append(pad + head_line(lines, stmt))
            _block(stmt.body, lines, pad, out)  # type: ignore[attr-defined]
            if stmt.orelse:  # type: ignore[attr-defined]
                out.append(pad + "else:")
                _block(stmt.orelse, lines, pad, out)  # type: ignore[attr-defined]
        elif kind in (ast.With, ast.AsyncWith):
            out.append(pad + head_line(lines, stmt))
            _block(stmt.body, lines, pad, out)  # type: ignore[attr-defined]
        elif kind in TRY_TYPES:
            out.append(pad + "try:")
            _block(stmt.body, lines, pad, out)  # type: ignore[attr-defined]
            for handler in stmt.handlers:  # type: ignore[attr-defined]
                out.append(pad + head_line(lines, handler))
                _block(handler.body, lines, pad, out)
            if stmt.orelse:  # type: ignore[attr-defined]
                out.append(pad + "else:")
                _block(stmt.orelse, lines, pad, out)  # type: ignore[attr-defined]
            if stmt.finalbody:  # type: ignore[attr-defined]
                out.append(pad + "finally:")
                _block(stmt.finalbody, lines, pad, out)  # type: ignore[attr-defined]
        elif kind is ast.Match:
            out.append(pad + head_line(lines, stmt))
            for case in stmt.cases:  # type: ignore[attr-defined]
                out.append(pad + "    " + head_line(lines, case.pattern))
                _block(case.body, lines, pad + "    ", out)
        elif kind in _EXITS or (kind is ast.Expr and type(stmt.value) in _YIELDS):  # type: ignore[attr-defined]
            more = " ..." if (stmt.end_lineno or stmt.lineno) > stmt.lineno else ""
            out.append(pad + head_line(lines, stmt) + more)
        elif kind in SCOPES:
            out.append(pad + head_line(lines, stmt) + " ...")


def _block(body: list[ast.stmt], lines: list[str], pad: str, out: list[str]) -> None:
    before = len(out)
    control_flow(body, lines, pad + "    ", out)
    if len(out) == before:
        out.append(pad + "    ...")


def fallback(
    path: Path | None, content: str, resource_id: str, relative: str, error: str
) -> AnalysisResult:
    """A module node with the full source plus ``def``/``class`` lines found by indentation."""
    lines = split_lines(content)
    factory = NodeFactory(resource_id, relative, "python")
    module = factory.make(
        T_MODULE,
        module_name_for(path, relative) or relative,
        "",
        1,
        max(1, len(lines)),
        None,
        properties={"kind": "module", "parse_error": error},
    )
    stack: list[tuple[int, UKONode, bool]] = []  # (indent, node, is_class)
    found: list[UKONode] = []
    for number, line in enumerate(lines, start=1):
        stripped = line.strip()
        if not stripped or stripped.startswith("#"):
            continue
        width = len(line) - len(line.lstrip())
        while stack and width <= stack[-1][0]:
            _close(stack.pop()[1], lines, number)
        match = _DEF_LINE.match(line)
        if match is None:
            continue
        is_class = match.group(2) == "class"
        parent_node = stack[-1][1] if stack else module
        in_class = bool(stack) and stack[-1][2]
        prefix = parent_node.qualname + "." if parent_node.qualname else ""
        uko_type = T_CLASS if is_class else (T_METHOD if in_class else T_FUNCTION)
        node = factory.make(
            uko_type,
            match.group(3),
            prefix + match.group(3),
            number,
            len(lines),
            parent_node,
            properties={"kind": "class" if is_class else "function", "signature": stripped},
        )
        node.renderings = {DEPTH_NAME: node.qualname, DEPTH_SIGNATURES: truncate(stripped, 200)}
        found.append(node)
        stack.append((width, node, is_class))
    while stack:
        _close(stack.pop()[1], lines, len(lines) + 1)
    for node in found:
        node.renderings[DEPTH_FULL] = "\n".join(lines[node.start_line - 1 : node.end_line])
    module.renderings = {
        DEPTH_NAME: relative,
        DEPTH_MEMBERS: "\n".join([f"# {relative}", *(n.qualname for n in found)]),
        DEPTH_SIGNATURES: "\n".join(
            [f"# {relative}", *(n.renderings[DEPTH_SIGNATURES] for n in found)]
        ),
        DEPTH_FULL: content,
    }
    return AnalysisResult(nodes=factory.nodes, errors=[error])


def _close(node: UKONode, lines: list[str], next_line: int) -> None:
    """End ``node`` before ``next_line``, dropping trailing blank lines."""
    end = next_line - 1
    while end > node.start_line and not lines[end - 1].strip():
        end -= 1
    node.end_line = max(node.start_line, end)
