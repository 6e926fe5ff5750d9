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
from typing import Any, NamedTuple

from cleveragents_acms.analyzers._common import script_stem

__all__ = ["EXPORTED_AS", "ScriptName", "is_script_manifest", "script_names"]

#: The property of an ``uko-ts:Export`` node naming the module its bindings are of, when
#: that is not its file's (a manifest's: the package's name, dotted).
EXPORTED_AS = "exported_as"
#: The manifest fields naming the entry module, the likeliest source first.
_ENTRY_FIELDS = ("source", "types", "typings", "module", "main")
#: Folders of build output: their modules are also looked for under ``src/``, as a
#: workspace's source tree has no build output (``lib/index.d.ts`` -> ``src/index``).
_BUILT = ("lib", "dist", "build", "out", "esm", "cjs", "es")


class ScriptName(NamedTuple):
    """A name a manifest makes importable and what it stands for."""

    #: The key in the manifest that gives it (its line is the node's).
    key: str
    #: Its node's qualified name in the manifest (``package``, ``exports.utils``,
    #: ``paths.@``, ``baseUrl``).
    qualname: str
    #: The name as an import writes it, dotted (``@scope.ui``, ``@``; ``""`` for a
    #: ``baseUrl``).
    name: str
    #: ``(name, module)`` pairs, name "" for all of the module (as an ``export *``).
    bindings: list[tuple[str, str]]


def script_names(relative: str, content: str) -> list[ScriptName]:
    """The names the manifest at ``relative`` (:func:`is_script_manifest`) makes
    importable: an npm package's (:func:`package_bindings`), a ``tsconfig.json``'s path
    aliases and ``baseUrl`` (:func:`path_aliases`)."""
    if posixpath.basename(relative) == "package.json":
        return package_bindings(relative, content)
    return path_aliases(relative, content)


def package_bindings(relative: str, content: str) -> list[ScriptName]:
    """The package of the manifest at ``relative``, then each other subpath its
    ``exports`` field names: the name as an import writes it, dotted
    (``@scope.ui``, ``@scope.ui.utils`` for ``"./utils"``), and what it stands for.
    The package stands for its
    entry modules (``exports``'s ``"."``, then the fields ``source``, ``types``,
    ``typings``, ``module``, ``main``), their ``src/`` twins, ``src/index`` and ``index``,
    and its folder (``@scope/ui/widgets`` is ``ui/widgets``); ``default`` is each entry's
    default export. Empty without a name."""
    try:
        manifest = json.loads(content)
    except ValueError:
        return []
    if not isinstance(manifest, dict) or not isinstance(manifest.get("name"), str):
        return []
    package = manifest["name"].strip().replace("/", ".").strip(".")
    if not package:
        return []
    folder = posixpath.dirname(relative)
    subpaths = _subpaths(manifest.get("exports"))
    entries = [*subpaths.pop(".", [])]
    entries += [v for f in _ENTRY_FIELDS if isinstance(v := manifest.get(f), str) and v.strip()]
    own = _standing_for(folder, [*entries, "src/index", "index"])
    if folder:  # ``@scope/ui/widgets``: a module of the folder
        own.append(("", folder.replace("/", ".")))
    found = [ScriptName("name", "package", package, own)]
    for subpath, targets in subpaths.items():
        name = ".".join([package, *(p for p in subpath.removeprefix("./").split("/") if p != "*")])
        name = name.strip(".")
        if "*" in subpath:  # ``"./lib/*": "./dist/lib/*.js"``: a folder
            heads = [
                posixpath.normpath(t.partition("*")[0].removeprefix("./") or ".") for t in targets
            ]
            modules = [_dotted(folder, stem) for head in heads for stem in _twin(head + "/")]
            bindings = [("", module) for module in modules if module]
        else:
            bindings = _standing_for(folder, targets)
        if name == package:  # ``"./*"``: the package's own folders
            own.extend(b for b in dict.fromkeys(bindings) if b not in own)
        elif bindings:
            qualname = f"exports.{name[len(package) + 1 :]}"
            found.append(ScriptName(subpath, qualname, name, list(dict.fromkeys(bindings))))
    return found


def _subpaths(exports: Any) -> dict[str, list[str]]:
    """The paths an ``exports`` field names for each of its subpaths (``"."`` for the
    package), whatever the conditions (``import``, ``require``, ``types`` …)."""
    if isinstance(exports, (str, list)):
        return {".": _export_targets(exports)}
    if not isinstance(exports, dict):
        return {}
    if not any(isinstance(k, str) and k.startswith(".") for k in exports):
        return {".": _export_targets(exports)}  # conditions only: the package's own
    return {k: _export_targets(v) for k, v in exports.items() if k.startswith(".")}


def _export_targets(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, list):
        return [t for v in value for t in _export_targets(v)]
    if isinstance(value, dict):
        return [t for v in value.values() for t in _export_targets(v)]
    return []


def _standing_for(folder: str, paths: list[str]) -> list[tuple[str, str]]:
    """All of each module ``paths`` name (and of its ``src/`` twin), then the default
    export of each."""
    stems = [stem for path in paths for stem in _twin(_stem(path.strip()))]
    modules = [_dotted(folder, stem) for stem in dict.fromkeys(s for s in stems if s)]
    return [("", m) for m in modules] + [("default", f"{m}.default") for m in modules]


def _twin(stem: str) -> tuple[str, ...]:
    """A module of build output and its ``src/`` twin (``lib/index`` and ``src/index``);
    a folder, written with its ``/`` (``dist/``), and its twin likewise (``src``)."""
    head, slash, rest = stem.partition("/")
    if head not in _BUILT or not slash:
        return (stem.rstrip("/") or ".",)
    return stem.rstrip("/"), f"src/{rest}".rstrip("/")


def is_script_manifest(name: str) -> bool:
    """A file name whose file may say what script names stand for (``package.json``,
    ``tsconfig.json``, ``tsconfig.app.json``, ``jsconfig.json``)."""
    return name == "package.json" or (
        name.endswith(".json") and name.startswith(("tsconfig", "jsconfig"))
    )


def path_aliases(relative: str, content: str) -> list[ScriptName]:
    """Each path alias a ``tsconfig.json`` (or ``jsconfig.json``)
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
    aliases: list[ScriptName] = []
    if "baseUrl" in options and _dotted(root, "."):
        aliases.append(ScriptName("baseUrl", "baseUrl", "", [("", _dotted(root, "."))]))
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
            aliases.append(ScriptName(pattern, f"paths.{alias}", alias, bindings))
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
    return script_stem(posixpath.normpath(path.removeprefix("./")))


def _dotted(folder: str, stem: str) -> str:
    return posixpath.normpath(posixpath.join(folder, stem)).replace("/", ".").strip(".")
