"""What an npm package's ``package.json`` makes importable by the package's name.

In a repository of several packages (a workspace), one package imports another by its
name (``import { Widget } from "@scope/ui"``), not by a relative path: the manifest says
which folder answers to that name and which module of it is the entry. The text
analyzer gives the manifest an ``uko-ts:Export`` node with these bindings, so the
resolver follows the name as it follows ``export * from``.
"""

from __future__ import annotations

import json
import posixpath

__all__ = ["EXPORTED_AS", "package_bindings"]

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


def _stem(path: str) -> str:
    """``./lib/index.d.ts`` -> ``lib/index``."""
    path = posixpath.normpath(path.removeprefix("./"))
    for suffix in _SUFFIXES:
        if path.endswith(suffix):
            return path[: -len(suffix)]
    return path


def _dotted(folder: str, stem: str) -> str:
    return posixpath.normpath(posixpath.join(folder, stem)).replace("/", ".").strip(".")
