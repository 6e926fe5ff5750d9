"""Resolving what a request points at (focus items, mentioned paths and modules) to node URIs.

A focus item may be a node URI, a file path (``pkg/mod.py``, ``pkg/mod.py:120``),
a path and qualified name (``pkg/mod.py#Class.method`` or ``pkg/mod.py::f``),
a dotted module or symbol name (``pkg.mod.Class``) or a plain name
(``_load_one``). Paths written in issues are often absolute or relative to
somewhere else (``/usr/lib/python3/site-packages/pkg/mod.py``), so a path is
tried as every suffix of itself, then found through the text index's path
field.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING
from urllib.parse import quote

from cleveragents_acms.strategies._graph import GraphView, path_of
from cleveragents_acms.strategies._support import safe_search

if TYPE_CHECKING:
    from cleveragents.protocols.backends import BackendSet

__all__ = [
    "is_node_uri",
    "module_paths",
    "path_candidates",
    "resolve_focus",
    "resolve_paths",
    "unresolved_focus",
]

_NODE_BASE = "https://cleveragents.ai/r/"
_ROOTS = ("", "src/", "lib/")
_SUFFIXES = (".py", ".pyi", ".pyx", ".js", ".ts", ".tsx", ".go", ".rs", ".java", ".md")


def path_candidates(path: str, *, min_parts: int = 1) -> list[str]:
    """Repository-relative paths ``path`` may denote, longest first."""
    parts = [p for p in path.replace("\\", "/").split("/") if p and p not in (".", "..")]
    if parts and parts[0].endswith(":"):  # a Windows drive
        parts = parts[1:]
    out: list[str] = []
    for start in range(len(parts)):
        tail = parts[start:]
        if len(tail) < min_parts:
            break
        for root in _ROOTS:
            candidate = root + "/".join(tail)
            if candidate not in out:
                out.append(candidate)
    return out


def module_paths(dotted: str) -> list[str]:
    """Files a dotted module name may live in: ``a.b.c`` -> ``a/b/c.py``, ``a/b/c/__init__.py``."""
    parts = [p for p in dotted.split(".") if p]
    out: list[str] = []
    for end in range(len(parts), 1, -1):
        base = "/".join(parts[:end])
        out.extend([f"{base}.py", f"{base}/__init__.py"])
    return out


def _file_uri(resource: str, path: str) -> str:
    return f"{_NODE_BASE}{resource}/{quote(path, safe='/')}"


def resolve_paths(
    paths: Iterable[str], view: GraphView | None, backends: BackendSet, *, search: bool = True
) -> dict[str, list[str]]:
    """``path -> file node URIs`` in scope; unknown paths map to an empty list."""
    out: dict[str, list[str]] = {}
    for path in dict.fromkeys(paths):
        found: list[str] = []
        candidates = path_candidates(path)
        if view is not None:
            for candidate in candidates:
                hits = view.files_by_path([candidate])[candidate]
                if hits:
                    found = hits
                    break
        elif backends.nodes is not None:
            uris = [_file_uri(r, c) for c in candidates for r in sorted(backends.scope)]
            known = backends.nodes.nodes(uris)
            found = [u for u in uris if u in known][:1]
        if not found and search:
            found = _search_path(path, backends)
        out[path] = found
    return out


def _search_path(path: str, backends: BackendSet) -> list[str]:
    """Files whose path ends with ``path``, found through the text index's path field."""
    clean = "/".join(p for p in path.replace("\\", "/").split("/") if p)
    name = clean.rsplit("/", 1)[-1]
    stem = name.rsplit(".", 1)[0] if "." in name else name
    if not stem:
        return []
    found: list[str] = []
    suffix = "/" + clean if "/" in clean else "/" + name
    for hit in safe_search(backends, stem, 50):
        hit_path = hit.path or path_of(hit.uri)
        if hit_path and ("/" + hit_path).endswith(suffix) and hit.file not in found:
            found.append(hit.file)
    if not found and "/" in clean:
        return _search_path(name, backends)
    return found


def _looks_like_path(item: str) -> bool:
    head = item.split("#", 1)[0].split("::", 1)[0].rsplit(":", 1)[0]
    return "/" in head or head.endswith(_SUFFIXES)


def resolve_focus(
    items: Iterable[str], view: GraphView | None, backends: BackendSet
) -> dict[str, float]:
    """Focus items -> node URIs in scope (weight 1.0 each; ambiguous names share it)."""
    seeds: dict[str, float] = {}
    for raw in items:
        item = raw.strip()
        if not item:
            continue
        for uri, weight in _resolve_one(item, view, backends).items():
            seeds[uri] = max(seeds.get(uri, 0.0), weight)
    return seeds


def unresolved_focus(
    items: Iterable[str], view: GraphView | None, backends: BackendSet
) -> list[str]:
    """The focus items that name nothing in scope (no node, file or symbol)."""
    return [
        item.strip()
        for item in items
        if item.strip() and not _resolve_one(item.strip(), view, backends)
    ]


def is_node_uri(item: str) -> bool:
    """A node URI (or a revision IRI, ``URI@validFrom``), not a path or a name."""
    return "://" in item or item.startswith("urn:")


def _known(uri: str, view: GraphView | None, backends: BackendSet) -> bool:
    if backends.nodes is not None:
        return bool(backends.nodes.nodes([uri]))
    return view is not None and view.exists(uri)


def _resolve_one(item: str, view: GraphView | None, backends: BackendSet) -> dict[str, float]:
    if is_node_uri(item):
        return {item: 1.0} if _known(item, view, backends) else {}
    if _looks_like_path(item):
        path, qualname, line = item, "", None
        if "#" in path:
            path, qualname = path.split("#", 1)
        elif "::" in path:
            path, qualname = path.split("::", 1)
        elif ":" in path and path.rsplit(":", 1)[1].isdigit():
            path, number = path.rsplit(":", 1)
            line = int(number)
        files = resolve_paths([path], view, backends)[path]
        out: dict[str, float] = {}
        for file_uri in files:
            target = f"{file_uri}#{quote(qualname, safe='.')}" if qualname else file_uri
            if line is not None:
                target = _innermost(file_uri, line, view, backends) or file_uri
            if not qualname or _known(target, view, backends):
                out[target] = 1.0
        return out
    names = [item]
    if "." in item:
        names.append(item.rsplit(".", 1)[-1])
    found: list[str] = []
    if view is not None:
        by_name = view.by_name(names, limit=20)
        exact = by_name.get(item, [])
        if exact:
            found = exact
        elif len(names) > 1:
            qualified = item.split(".")
            found = [
                uri for uri in by_name.get(names[1], []) if _dotted_match(uri, qualified)
            ] or _module_files(item, view, backends)
    if not found:
        found = [
            hit.uri
            for hit in safe_search(backends, item, 20)
            if hit.name == names[-1] or hit.qualname == item
        ]
    if not found:
        return {}
    share = 1.0 / max(1, len(found)) ** 0.5
    return dict.fromkeys(found[:10], share)


def _dotted_match(uri: str, parts: list[str]) -> bool:
    """True when a node URI's path and qualified name end with the dotted ``parts``."""
    path = path_of(uri)
    qualname = uri.split("#", 1)[1] if "#" in uri else ""
    module = path.rsplit(".", 1)[0].replace("/", ".") if path else ""
    full = f"{module}.{qualname}" if qualname else module
    return full.endswith(".".join(parts))


def _module_files(dotted: str, view: GraphView, backends: BackendSet) -> list[str]:
    found: list[str] = []
    for candidate in module_paths(dotted):
        found.extend(view.files_by_path([candidate])[candidate])
        if found:
            break
    return found


def _innermost(
    file_uri: str, line: int, view: GraphView | None, backends: BackendSet
) -> str | None:
    """The smallest node of a file whose line range holds ``line``."""
    if view is None or backends.nodes is None:
        return None
    nodes = backends.nodes.nodes(view.descendants(file_uri, levels=4))
    best: tuple[int, str] | None = None
    for uri, node in nodes.items():
        if node.start_line <= line <= node.end_line:
            size = node.end_line - node.start_line
            if best is None or size < best[0]:
                best = (size, uri)
    return best[1] if best else None
