"""What the stages share: settings of the running assembly, token counting, notes, node URIs."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from cleveragents import assembly
from cleveragents.config import DEFAULTS
from cleveragents.log import get_logger

__all__ = [
    "NEAR_COPIES",
    "STAGE_SETTINGS",
    "ancestors",
    "containment_depth",
    "count_tokens",
    "default_setting",
    "file_of",
    "focus_distance",
    "is_import",
    "note",
    "parent_of",
    "plan_attr",
    "setting",
    "tokenizer_truncate",
    "type_name",
]

log = get_logger("cleveragents_acms.pipeline")

#: (stage, setting) -> configuration key, for settings kept outside ``context.pipeline.<stage>``.
STAGE_SETTINGS: dict[tuple[str, str], str] = {
    ("budget-allocator", "min-useful-budget"): "context.budget.min-useful-budget",
    ("fragment-deduplicator", "dedup-strategy"): "context.fusion.dedup-strategy",
    ("fragment-orderer", "ordering"): "context.fusion.ordering",
    ("preamble-generator", "preamble-enabled"): "context.fusion.preamble-enabled",
    ("preamble-generator", "preamble-max-tokens"): "context.fusion.preamble-max-tokens",
    ("skeleton-compressor", "skeleton-ratio"): "context.budget.skeleton-ratio",
}


def default_setting(stage: str, key: str) -> Any:
    """The built-in default of a stage setting."""
    config_key = STAGE_SETTINGS.get((stage, key), f"context.pipeline.{stage}.{key}")
    return DEFAULTS.get(config_key)


def setting(stage: str, key: str, explicit: Any = None) -> Any:
    """``explicit`` when given, else the running assembly's setting, else the built-in default."""
    if explicit is not None:
        return explicit
    services = assembly.current()
    if services is not None:
        value = services.setting(stage, key, None)
        if value is not None:
            return value
    return default_setting(stage, key)


def count_tokens(text: str) -> int:
    """Tokens of ``text`` as the running assembly counts them; cl100k outside an assembly."""
    services = assembly.current()
    if services is not None:
        return services.count(text)
    from cleveragents_acms.pipeline.tokenizers import get_tokenizer

    return get_tokenizer("cl100k").count(text)


def tokenizer_truncate(text: str, max_tokens: int) -> str:
    """The longest prefix of ``text`` within ``max_tokens``, cut at a line or word if possible."""
    if max_tokens <= 0:
        return ""
    if count_tokens(text) <= max_tokens:
        return text
    low, high = 0, len(text)
    while low < high:  # the longest prefix that fits, by bisection on characters
        middle = (low + high + 1) // 2
        if count_tokens(text[:middle]) <= max_tokens:
            low = middle
        else:
            high = middle - 1
    prefix = text[:low]
    for separator in ("\n", " "):
        cut = prefix.rfind(separator)
        if cut > len(prefix) // 2:
            return prefix[:cut].rstrip()
    return prefix


def note(message: str) -> None:
    """Record ``message`` in the running assembly's notes (and the log)."""
    log.info("context assembly", note=message)
    services = assembly.current()
    if services is not None and message not in services.notes:
        services.notes.append(message)


def plan_attr(plan_context: object, name: str) -> Any:
    """``name`` of a plan context that is an object, a mapping or holds a ``plan``."""
    if plan_context is None:
        return None
    if isinstance(plan_context, Mapping):
        value = plan_context.get(name)
    else:
        value = getattr(plan_context, name, None)
    if value is None and name == "plan_id":
        plan = plan_attr(plan_context, "plan")
        value = getattr(plan, "plan_id", None) if plan is not None else None
    return value


# -- node URIs: ``<base>/<resource>/<path>#<qualname>`` -------------------------------


#: Local names of the node types of import statements (``uko-py:Import``, ``uko-rs:Use`` …;
#: ``uko-ts:Export`` for ``export … from`` and ``uko-py:ReExport`` for a package's ``from
#: m import a``, which import as they export).
IMPORT_TYPES = frozenset({"Import", "Use", "Export", "ReExport"})

#: Fragment metadata: the names of the near copies of this callable (delivered in full)
#: that a strategy left out, comma-separated; the preamble and the CLI name them.
NEAR_COPIES = "near_copies"


def type_name(uko_type: str) -> str:
    """A node type's local name, whatever its vocabulary: ``uko-py:Import`` -> ``Import``."""
    return uko_type.rsplit(":", 1)[-1].rsplit("#", 1)[-1]


def is_import(uko_type: str) -> bool:
    """True for the node type of an import statement, in any language's vocabulary."""
    return type_name(uko_type) in IMPORT_TYPES


def file_of(uri: str) -> str:
    """The URI of the file a node belongs to (the node itself for a file node)."""
    return uri.split("#", 1)[0]


def parent_of(uri: str) -> str | None:
    """The URI of the node that contains ``uri`` by its qualified name, if any."""
    base, sep, qualname = uri.partition("#")
    if not sep:
        return None
    if "." in qualname:
        return f"{base}#{qualname.rsplit('.', 1)[0]}"
    return base


def ancestors(uri: str) -> list[str]:
    """The nodes that contain ``uri``, nearest first, up to its file; none for a revision
    IRI (``<uri>@<validFrom>``: an old version is not inside the current nodes)."""
    if "@" in uri.partition("#")[2] or "#" not in uri:
        return []
    found = []
    parent = parent_of(uri)
    while parent is not None:
        found.append(parent)
        parent = parent_of(parent)
    return found


def containment_depth(uri: str) -> int:
    """0 for a file node, 1 for a top-level symbol, 2 for a method …"""
    _, sep, qualname = uri.partition("#")
    return qualname.count(".") + 1 if sep and qualname else 0


def focus_distance(uri: str, resource_id: str, focus: tuple[str, ...] | list[str]) -> int | None:
    """Hops from ``uri`` to the nearest focus node by containment; ``None`` without focus.

    0: the node itself; 1: its parent or child; 2: the same file (or a further
    ancestor or descendant); 3: the same resource; 4: elsewhere.
    """
    if not focus:
        return None
    best = 4
    node_file = file_of(uri)
    for target in focus:
        if uri == target:
            return 0
        if parent_of(uri) == target or parent_of(target) == uri:
            best = min(best, 1)
        elif node_file == file_of(target):
            best = min(best, 2)
        elif resource_id and f"/{resource_id}/" in target:
            best = min(best, 3)
    return best
