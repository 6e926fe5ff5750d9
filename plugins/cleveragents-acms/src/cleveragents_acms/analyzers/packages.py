"""What JavaScript and TypeScript manifests make importable by names that are not paths.

In a repository of several packages (a workspace), one package imports another by its
name (``import { Widget } from "@scope/ui"``), not by a relative path: its
``package.json`` says which folder answers to that name and which module of it is the
entry. An application imports its own modules through the path aliases of its
``tsconfig.json`` or ``jsconfig.json`` (``"paths": {"@/*": ["./src/*"]}``, then
``import { Button } from "@/components/button"``). The text analyzer gives such a
manifest an ``uko-ts:Export`` node for each name, with these bindings, so the resolver
follows the name as it follows ``export * from``.
"""

from __future__ import annotations

import json
import posixpath
import re
from typing import Any

__all__ = ["EXPORTED_AS", "is_script_manifest", "package_bindings", "path_aliases"]

#: The property of an ``uko-ts:Export`` node naming the module its bindings are of, when
#: that is not its file's (a manifest's: the package's name, dotted).
EXPORTED_AS = "exported_as"
#: The manifest fields naming the entry module, the likeliest source first.
_ENTRY_FIELDS = ("source", "types", "typings", "module", "main")
#: Folders of build output: their modules are also looked for under ``src/``, as a
#: workspace's source tree has no build output (``lib/index.d.ts`` -> ``src/index``).
_BUILT = ("lib", "dist", "build", "out", "esm", "cjs", "es")
_SUFFIXES = (
    ".d.ts",
    ".d.mts",
    ".d.cts",
    ".ts",
    ".tsx",
    ".mts",
    ".cts",
    ".js",
    ".mjs",
    ".cjs",
    ".jsx",
)


def package_bindings(relative: str, content: str) -> tuple[str, list[tuple[str, str]]] | None:
    """``(package, bindings)`` of the manifest at ``relative``: the package's name as an
    import names it, dotted (``@scope.ui``), and what it stands for as ``(name, module)``
    pairs (name "" for all of the module): the entry modules the manifest's fields name
    and their ``src/`` twins, and the package's folder (``@scope/ui/widgets`` is
    ``ui/widgets``); ``default`` is each entry's default export. None without a name."""
    try:
        manifest = json.loads(content)
    except ValueError:
        return None
    if not isinstance(manifest, dict) or not isinstance(manifest.get("name"), str):
        return None
    name = manifest["name"].strip()
    if not name:
        return None
    folder = posixpath.dirname(relative)
    entries: list[str] = []
    for field in _ENTRY_FIELDS:
        value = manifest.get(field)
        if isinstance(value, str) and value.strip():
            stem = _stem(value.strip())
            entries.append(stem)
            head, _, rest = stem.partition("/")
            if head in _BUILT and rest:
                entries.append(f"src/{rest}")
    entries += ["src/index", "index"]
    modules = [_dotted(folder, stem) for stem in dict.fromkeys(entries)]
    bindings = [("", module) for module in modules]
    if folder:
        bindings.append(("", folder.replace("/", ".")))
    bindings += [("default", f"{module}.default") for module in modules]
    return name.replace("/", ".").strip("."), bindings


def is_script_manifest(name: str) -> bool:
    """A file name whose file may say what script names stand for (``package.json``,
    ``tsconfig.json``, ``tsconfig.app.json``, ``jsconfig.json``)."""
    return name == "package.json" or (
        name.endswith(".json") and name.startswith(("tsconfig", "jsconfig"))
    )


def path_aliases(relative: str, content: str) -> list[tuple[str, list[tuple[str, str]]]]:
    """``(alias, bindings)`` of each path alias a ``tsconfig.json`` (or ``jsconfig.json``)
    at ``relative`` declares in ``compilerOptions.paths``, from its ``baseUrl`` or its
    folder: ``"@/*": ["./src/*"]`` makes ``@`` stand for all of the folder ``src``
    (``@/components/button`` is ``src/components/button``), ``"@config": ["config/index.ts"]``
    for that module. A ``baseUrl`` of its own is the alias ``""``: a name no module
    answers is looked for from it too (``components/button`` is ``src/components/button``
    with ``"baseUrl": "src"``). The file may have comments and trailing commas, as
    TypeScript allows; a catch-all (``"*"``) is left out."""
    try:
        config = json.loads(_without_comments(content))
    except ValueError:
        return []
    options = config.get("compilerOptions") if isinstance(config, dict) else None
    if not isinstance(options, dict):
        return []
    paths: dict[str, Any] = options["paths"] if isinstance(options.get("paths"), dict) else {}
    base = options["baseUrl"] if isinstance(options.get("baseUrl"), str) else "."
    root = posixpath.join(posixpath.dirname(relative), base)
    aliases: list[tuple[str, list[tuple[str, str]]]] = []
    if "baseUrl" in options and _dotted(root, "."):
        aliases.append(("", [("", _dotted(root, "."))]))
    for pattern, targets in paths.items():
        if not isinstance(targets, list) or pattern.strip() in ("*", "/*"):
            continue
        wildcard = pattern.endswith("/*")
        alias = pattern.removesuffix("/*").replace("/", ".").strip(".")
        bindings: list[tuple[str, str]] = []
        for target in targets:
            if not isinstance(target, str) or target.endswith("/*") != wildcard:
                continue
            module = _dotted(root, target[:-2] if wildcard else _stem(target))
            bindings.append(("", module))
            if not wildcard:
                bindings.append(("default", f"{module}.default"))
        if alias and bindings:
            aliases.append((alias, bindings))
    return aliases


def _without_comments(text: str) -> str:
    """JSON with comments (``//``, ``/* */``) and trailing commas made plain JSON,
    strings left as they are."""
    out: list[str] = []
    i, n = 0, len(text)
    while i < n:
        char = text[i]
        if char == '"':
            end = i + 1
            while end < n and text[end] != '"':
                end += 2 if text[end] == "\\" else 1
            out.append(text[i : end + 1])
            i = end + 1
        elif text.startswith("//", i):
            i = text.find("\n", i)
            i = n if i < 0 else i
        elif text.startswith("/*", i):
            i = text.find("*/", i + 2)
            i = n if i < 0 else i + 2
        else:
            out.append(char)
            i += 1
    return re.sub(r",(\s*[}\]])", r"\1", "".join(out))


def _stem(path: str) -> str:
    """``./lib/index.d.ts`` -> ``lib/index``."""
    path = posixpath.normpath(path.removeprefix("./"))
    for suffix in _SUFFIXES:
        if path.endswith(suffix):
            return path[: -len(suffix)]
    return path


def _dotted(folder: str, stem: str) -> str:
    return posixpath.normpath(posixpath.join(folder, stem)).replace("/", ".").strip(".")
