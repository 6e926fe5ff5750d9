"""Context entries a user adds by hand (``context add``): a node, a file range, or a note."""

from __future__ import annotations

import re
from pathlib import Path
from typing import TYPE_CHECKING

from cleveragents.errors import ValidationError
from cleveragents.models.context import ContextFragment, FragmentProvenance
from cleveragents.models.ids import new_ulid
from cleveragents.models.uko import node_uri
from cleveragents.redaction import redact_text
from cleveragents_acms.context.tiers import TieredFragment

if TYPE_CHECKING:
    from cleveragents_acms.context.service import ContextService

__all__ = ["make_entry"]

_RANGE = re.compile(r"^(?P<path>.+?):(?P<start>\d+)(?:-(?P<end>\d+))?$")
_NOTE_BASE = "urn:cleveragents:note:"


def make_entry(
    service: ContextService,
    project: str,
    target: str | None,
    *,
    text: str | None = None,
    tier: str = "warm",
    depth: int | str = 9,
    relevance: float = 0.5,
    cwd: Path | None = None,
) -> TieredFragment:
    """A tier entry for ``target`` or ``text``.

    ``target`` is a node URI, a file (``PATH`` or ``PATH:START-END``, from the working
    directory or from a root of the project's resources), or what ``context expand``
    resolves: ``PATH#QUALNAME``, ``PATH:LINE`` of an indexed file, a name.
    """
    if (target is None) == (text is None):
        raise ValidationError("give either a node URI or file (TARGET) or --text, not both")
    if text is not None or target is None:
        fragment = _note(text or "", relevance)
    else:
        from cleveragents_acms.strategies._anchors import is_node_uri

        here = cwd or Path.cwd()
        file = None if is_node_uri(target) else _file(service, project, target, here, relevance)
        fragment = file or service.expand(target, project=project, depth=depth).model_copy(
            update={"relevance_score": relevance}
        )
    return TieredFragment.from_fragment(fragment, project, tier)


def _count(text: str) -> int:
    from cleveragents_acms.pipeline.tokenizers import get_tokenizer

    return get_tokenizer("cl100k").count(text)


def _note(text: str, relevance: float) -> ContextFragment:
    content = redact_text(text.strip())
    if not content:
        raise ValidationError("--text must not be empty")
    return ContextFragment(
        uko_node=f"{_NOTE_BASE}{new_ulid()}",
        content=content,
        detail_depth=9,
        token_count=_count(content),
        relevance_score=relevance,
        provenance=FragmentProvenance(resource_id="", path="note", strategy="manual"),
        metadata={"uko_type": "uko:Annotation", "kind": "note"},
    )


def _file(
    service: ContextService, project: str, target: str, cwd: Path, relevance: float
) -> ContextFragment | None:
    """The file (or lines of it) ``target`` names; ``None`` when no such file exists."""
    from cleveragents.storage.repositories import ResourceRepository

    start = end = None
    match = _RANGE.match(target)
    raw = target
    if match and not (cwd / Path(target).expanduser()).exists():
        raw, start = match["path"], int(match["start"])
        end = int(match["end"] or start)
    with service.database.session(write=False) as session:
        resources = ResourceRepository(session).all(project=project)
    roots = [cwd, *(Path(r.location) for r in resources if r.location)]
    candidates = ((root / Path(raw).expanduser()).resolve() for root in roots)
    path = next((c for c in candidates if c.is_file()), None)
    if path is None:
        return None
    if start is not None and (end is None or end < start or start < 1):
        raise ValidationError(f"bad line range in {target!r}: use PATH:START-END")
    owner = next(
        (
            r
            for r in resources
            if r.location and (Path(r.location) == path or Path(r.location) in path.parents)
        ),
        None,
    )
    if owner is None:
        raise ValidationError(f"{path} is not inside a resource of project '{project}'")
    relative = path.relative_to(Path(owner.location or "")).as_posix()
    try:
        lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError as exc:
        raise ValidationError(f"cannot read {path}: {exc.strerror or exc}") from exc
    first = start or 1
    last = min(end or len(lines), len(lines))
    if first > max(1, len(lines)):
        raise ValidationError(f"{relative} has only {len(lines)} lines")
    content = redact_text("\n".join(lines[first - 1 : last]))
    if not content.strip():
        raise ValidationError(f"{relative}:{first}-{last} is empty")
    suffix = f"#L{first}-{last}" if start is not None else ""
    return ContextFragment(
        uko_node=node_uri(owner.resource_id, relative) + suffix,
        content=content,
        detail_depth=9,
        token_count=_count(content),
        relevance_score=relevance,
        provenance=FragmentProvenance(
            resource_id=owner.resource_id,
            path=relative,
            start_line=first,
            end_line=max(first, last),
            strategy="manual",
        ),
        metadata={"kind": "file"},
    )
