"""Stage 9: the preamble that tells the reader what the context holds, why and from where.

Built section by section (the spec's Builder): a summary line, the
strategies used, the resources, and a compact structure map of the files
with the symbols included from each. The whole preamble is measured with the
assembly's tokenizer and never exceeds ``max_tokens``: sections are added in
that order while they fit, a file whose symbols do not fit is named alone, long
lists are cut with "… N more", a list none of whose items fit is left out, and a
preamble that cannot even hold its summary is not produced (``None``).
``context.fusion.preamble-enabled = false`` disables it (``None``).
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field
from urllib.parse import unquote

from cleveragents.models.context import ContextFragment
from cleveragents_acms.pipeline._common import NEAR_COPIES, count_tokens, is_import, setting

__all__ = ["PreambleBuilder", "ProvenancePreambleGenerator"]

_STAGE = "preamble-generator"
_MAX_SYMBOLS_PER_FILE = 8
#: ``exhaustMap~2``: the analyzers' suffix for a name defined again (overloads, redefinitions).
_REDEFINED = re.compile(r"~\d+$")
#: ``L120-164``: a chunk of text (prose, or code no analyzer reads), named by its lines.
_CHUNK = re.compile(r"L\d+-\d+")


@dataclass
class PreambleBuilder:
    """Adds lines while the preamble stays within ``max_tokens`` (counted for real)."""

    max_tokens: int
    lines: list[str] = field(default_factory=list)

    def fits(self, *extra: str) -> bool:
        return count_tokens("\n".join([*self.lines, *extra])) <= self.max_tokens

    def add(self, line: str) -> bool:
        """Append ``line`` if it fits; report whether it did."""
        if self.fits(line):
            self.lines.append(line)
            return True
        return False

    def add_list(self, heading: str, items: list[str], short: list[str] | None = None) -> None:
        """``heading`` and as many ``items`` as fit, then "… N more" when some do not.

        An item that does not fit is tried in its ``short`` form (the same position of
        that list); a heading none of whose items fit is left out.
        """
        if not items or not self.add(heading):
            return
        start = len(self.lines)
        for shown, item in enumerate(items):
            rest = len(items) - shown - 1
            more = [f"  … {rest} more"] if rest else []
            chosen = next(
                (c for c in (item, short[shown] if short else None) if c and self.fits(c, *more)),
                None,
            )
            if chosen is None:
                if len(self.lines) == start:  # not one item: the heading says nothing
                    self.lines.pop()
                    return
                self.add(f"  … {len(items) - shown} more")
                return
            self.lines.append(chosen)

    def build(self) -> str | None:
        return "\n".join(self.lines) if self.lines else None


class ProvenancePreambleGenerator:
    """Summary, strategies, resources and a structure map, within ``max_tokens``."""

    def __init__(self, *, enabled: bool | None = None) -> None:
        self.enabled = enabled

    def generate(
        self,
        fragments: list[ContextFragment],
        strategies_used: list[str],
        budget_used: float,
        max_tokens: int,
    ) -> str | None:
        if not setting(_STAGE, "preamble-enabled", self.enabled) or max_tokens <= 0:
            return None
        builder = PreambleBuilder(int(max_tokens))
        files: dict[tuple[str, str], list[ContextFragment]] = {}
        for fragment in fragments:
            key = (fragment.provenance.resource_id, fragment.provenance.path)
            files.setdefault(key, []).append(fragment)
        resources = Counter(f.provenance.resource_id for f in fragments)
        tokens = sum(f.token_count for f in fragments)
        summary = (
            f"Context: {_count(len(fragments), 'fragment')}, {tokens} tokens "
            f"({budget_used:.0%} of budget) from {_count(len(files), 'file')} in "
            f"{_count(len(resources), 'resource')}."
        )
        if not builder.add(summary) and not builder.add(
            f"Context: {_count(len(fragments), 'fragment')}."
        ):
            return None
        if strategies_used:
            builder.add_list("Strategies:", [f"  - {name}" for name in strategies_used])
        if len(resources) > 1:
            builder.add_list(
                "Resources:",
                [f"  - {rid}: {count} fragments" for rid, count in resources.most_common()],
            )
        builder.add_list(
            "Structure:",
            [_file_line(path, group) for (_, path), group in files.items()],
            [_file_line(path, group, symbols=False) for (_, path), group in files.items()],
        )
        return builder.build()


def _count(number: int, noun: str) -> str:
    if number == 1:
        return f"1 {noun}"
    return f"{number} {noun[:-1] + 'ies' if noun.endswith('y') else noun + 's'}"


def _file_line(path: str, group: list[ContextFragment], *, symbols: bool = True) -> str:
    """``  - app.py (d9): Config, Config.load, main, 3 imports`` — the symbols included from
    one file; its import statements and its text chunks (``L120-164``, whose lines each
    fragment's header gives) are counted, not named, and a name defined several times
    (``map``, ``map~2``: overloads) is named once. Without ``symbols``: ``  - app.py (d9)``."""
    depths = "/".join(str(d) for d in sorted({f.detail_depth for f in group}, reverse=True))
    if not symbols:
        return f"  - {path or '?'} (d{depths})"
    names: list[str] = []
    suffixes: dict[str, str] = {}  # name -> "(+3 near copies)"
    imports = chunks = 0
    for fragment in group:
        if is_import(fragment.metadata.get("uko_type", "")):
            imports += 1
            continue
        _, sep, qualname = fragment.uko_node.partition("#")
        name = _REDEFINED.sub("", unquote(qualname))
        if _CHUNK.fullmatch(name):
            chunks += 1
        elif sep and name and name not in names:
            names.append(name)
            copies = fragment.metadata.get(NEAR_COPIES)
            if copies:
                suffixes[name] = f" (+{_count(copies.count(',') + 1, 'near copy')})"
    listed = [name + suffixes.get(name, "") for name in names[:_MAX_SYMBOLS_PER_FILE]]
    if len(names) > _MAX_SYMBOLS_PER_FILE:
        listed.append(f"+{len(names) - _MAX_SYMBOLS_PER_FILE}")
    if chunks:
        listed.append(_count(chunks, "passage"))
    if imports:
        listed.append(_count(imports, "import"))
    shown = ", ".join(listed)
    return f"  - {path or '?'} (d{depths})" + (f": {shown}" if shown else "")
