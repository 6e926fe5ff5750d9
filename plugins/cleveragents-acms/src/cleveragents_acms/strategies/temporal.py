"""Strategy ``temporal-archaeology``: how the code in question looked before, and what changed.

Re-indexing never deletes: a changed or removed node is retired with its
validity interval and its successor links to it (spec 000, "Revision-Aware
RDF"). For a request whose temporal scope is ``recent`` or ``all``, or whose
question asks about history ("what changed", "regression", "previously" …),
this strategy finds the area in question (focus items, else the best text
hits and their files' members), reads the retired versions of those nodes
and delivers each as a fragment: a unified diff against the version that
replaced it, or the old text of a node that is gone. ``recent`` keeps the
versions retired within ``context.strategies.temporal-archaeology.recent-hours``
(default: ``context.warm.retention-hours``).

Old renderings come from the node source's history
(``backends.nodes.history(uri)``, or its node store's); a source without
history gives what the graph knows (each revision's validity and location).
Fragments are ``<uri>@<validFrom>`` (the revision IRI), with ``is_current``
false and ``valid_from``/``valid_until`` set so the scorer can weigh their
age. Quality 0.5.
"""

from __future__ import annotations

import difflib
import re
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any

from cleveragents.config import DEFAULTS
from cleveragents.models.context import (
    ContextFragment,
    ContextRequest,
    FragmentProvenance,
    StrategyCapabilities,
    TemporalScope,
)
from cleveragents.models.ids import parse_instant
from cleveragents.models.uko import DEPTH_FULL
from cleveragents_acms.pipeline._common import count_tokens
from cleveragents_acms.strategies._anchors import resolve_focus
from cleveragents_acms.strategies._graph import GraphView, path_of, resource_of
from cleveragents_acms.strategies._support import (
    clamp,
    defers,
    file_of,
    log,
    query_of,
    safe_search,
    strategy_setting,
)
from cleveragents_acms.strategies.query import analyze

if TYPE_CHECKING:
    from cleveragents.protocols.backends import BackendSet

__all__ = ["HISTORY_WORDS", "TemporalArchaeologyStrategy", "asks_about_history"]

#: Words that make a question about the past.
HISTORY_WORDS = frozenset(
    {
        "history",
        "historical",
        "changed",
        "changes",
        "changelog",
        "previous",
        "previously",
        "earlier",
        "regression",
        "regressed",
        "renamed",
        "removed",
        "deleted",
        "revision",
        "revisions",
        "archaeology",
        "evolution",
        "evolved",
        "diff",
    }
)
_PHRASES = ("what changed", "last time", "used to", "no longer")
_WORD = re.compile(r"[a-z]+")
_MAX_CANDIDATES = 300
_MAX_DIFF_LINES = 200


def asks_about_history(text: str) -> bool:
    lower = text.lower()
    return bool(HISTORY_WORDS & set(_WORD.findall(lower))) or any(p in lower for p in _PHRASES)


def _parse(stamp: object) -> datetime | None:
    if isinstance(stamp, datetime):
        return stamp if stamp.tzinfo else stamp.replace(tzinfo=UTC)
    return parse_instant(str(stamp)) if stamp else None


@defers
class TemporalArchaeologyStrategy:
    """Retired node versions and their diffs (spec 000, "temporal-archaeology")."""

    name = "temporal-archaeology"
    capabilities = StrategyCapabilities(
        uses_graph=True, uses_temporal=True, quality_score=0.5, uko_levels=("uko",)
    )

    def __init__(self, *, recent_hours: float | None = None, max_hits: int = 15) -> None:
        self.recent_hours = recent_hours
        self.max_hits = max_hits

    def can_handle(self, request: ContextRequest, backends: BackendSet) -> float:
        if backends.graph is None or request.is_empty:
            return 0.0
        if request.temporal is TemporalScope.ALL:
            return 0.8
        if request.temporal is TemporalScope.RECENT:
            return 0.7
        return 0.4 if asks_about_history(query_of(request)) else 0.0

    def assemble(
        self,
        request: ContextRequest,
        backends: BackendSet,
        budget: int,
        plan_context: object,
    ) -> list[ContextFragment]:
        if budget <= 0 or backends.graph is None or request.is_empty:
            return []
        view = GraphView(backends.graph, backends.scope)
        area = self._area(request, backends, view)
        if not area:
            return []
        cutoff = self._cutoff(request)
        changes: list[tuple[float, ContextFragment]] = []
        for uri, weight in area.items():
            for fragment in self._versions(uri, backends, view, cutoff):
                age = _age_days(fragment.metadata.get("valid_until"))
                priority = weight * (0.5 ** (age / 30.0) if age is not None else 0.5)
                changes.append((priority, fragment))
        changes.sort(key=lambda item: -item[0])
        best = changes[0][0] if changes else 1.0
        out: list[ContextFragment] = []
        used = 0
        seen: set[str] = set()
        for priority, fragment in changes:
            if fragment.uko_node in seen or used + fragment.token_count > budget:
                continue
            seen.add(fragment.uko_node)
            out.append(fragment.model_copy(update={"relevance_score": clamp(priority / best)}))
            used += fragment.token_count
        return out

    # -- where to dig ----------------------------------------------------------------------

    def _area(
        self, request: ContextRequest, backends: BackendSet, view: GraphView
    ) -> dict[str, float]:
        """Nodes whose history matters, with how much: focus, else text hits and their files."""
        area: dict[str, float] = {}
        if request.focus:
            area.update(resolve_focus(request.focus, view, backends))
        if not area:
            analysis = analyze(query_of(request))
            for query in analysis.text_queries()[:3]:
                for hit in safe_search(backends, query.text, self.max_hits):
                    area[hit.uri] = max(area.get(hit.uri, 0.0), hit.score * query.weight)
        for uri, weight in list(area.items()):
            file_uri = file_of(uri)
            area.setdefault(file_uri, weight * 0.8)
        for file_uri in [u for u in area if "#" not in u][:5]:
            for member in view.descendants(file_uri, levels=2)[:100]:
                area.setdefault(member, area[file_uri] * 0.6)
            for gone in view.former_children(file_uri)[:50]:
                area.setdefault(gone, area[file_uri] * 0.7)
            if len(area) >= _MAX_CANDIDATES:
                break
        return dict(sorted(area.items(), key=lambda kv: -kv[1])[:_MAX_CANDIDATES])

    def _cutoff(self, request: ContextRequest) -> datetime | None:
        if request.temporal is not TemporalScope.RECENT:
            return None
        hours = strategy_setting(self.name, "recent-hours", self.recent_hours)
        if hours is None:
            hours = DEFAULTS.get("context.warm.retention-hours", 24)
        return datetime.now(UTC) - timedelta(hours=float(hours))

    # -- what it was ------------------------------------------------------------------------

    def _versions(
        self, uri: str, backends: BackendSet, view: GraphView, cutoff: datetime | None
    ) -> list[ContextFragment]:
        history = _history(backends, uri)
        if history is None:
            return self._graph_versions(uri, view, cutoff, backends.scope)
        versions = [v for v in history if _resource(v) in backends.scope]
        out: list[ContextFragment] = []
        for index, version in enumerate(versions):
            if getattr(version, "is_current", False):
                continue
            until = _parse(getattr(version, "valid_until", None))
            if cutoff is not None and (until is None or until < cutoff):
                continue
            successor = versions[index + 1] if index + 1 < len(versions) else None
            fragment = self._diff_fragment(uri, version, successor)
            if fragment is not None:
                out.append(fragment)
        return out

    def _diff_fragment(self, uri: str, old: Any, new: Any | None) -> ContextFragment | None:
        node = old.node
        before = node.rendering(DEPTH_FULL)
        valid_from = str(getattr(old, "valid_from", "") or "")
        valid_until = str(getattr(old, "valid_until", "") or "")
        label = node.qualname or node.path
        if new is not None:
            after = new.node.rendering(DEPTH_FULL)
            if before == after:
                return None
            diff = list(
                difflib.unified_diff(
                    before.splitlines(),
                    after.splitlines(),
                    f"{node.path} (until {valid_until})",
                    f"{new.node.path} (from {getattr(new, 'valid_from', '')})",
                    lineterm="",
                )
            )
            body = "\n".join(diff[:_MAX_DIFF_LINES])
            change = "modified"
        else:
            body = before
            change = "removed"
        header = f"# {change}: {label} in {node.path}, valid {valid_from} .. {valid_until}"
        content = f"{header}\n{body}"
        start = max(1, node.start_line)
        return ContextFragment(
            uko_node=f"{uri}@{valid_from}",
            content=content,
            detail_depth=DEPTH_FULL,
            token_count=count_tokens(content),
            provenance=FragmentProvenance(
                resource_id=node.resource_id,
                path=node.path,
                start_line=start,
                end_line=max(start, node.end_line),
                strategy=self.name,
            ),
            tier="cold",
            metadata={
                "is_current": "false",
                "valid_from": valid_from,
                "valid_until": valid_until,
                "revision_of": uri,
                "change": change,
                "uko_type": node.uko_type,
            },
        )

    def _graph_versions(
        self, uri: str, view: GraphView, cutoff: datetime | None, scope: frozenset[str]
    ) -> list[ContextFragment]:
        """Without stored renderings: what the graph records about each earlier version."""
        resource = resource_of(uri)
        if resource and resource not in scope:
            return []
        out: list[ContextFragment] = []
        for revision in view.revisions(uri):
            facts = view.facts(revision)
            until = _parse(facts.get("validUntil"))
            if cutoff is not None and (until is None or until < cutoff):
                continue
            name = facts.get("qualifiedName") or facts.get("name") or uri
            path = facts.get("sourcePath") or path_of(uri) or "?"
            content = (
                f"# earlier version of {name} in {path}: lines {facts.get('sourceRange', '?')}, "
                f"valid {facts.get('validFrom', '?')} .. {facts.get('validUntil', '?')}"
            )
            out.append(
                ContextFragment(
                    uko_node=revision,
                    content=content,
                    detail_depth=0,
                    token_count=count_tokens(content),
                    provenance=FragmentProvenance(
                        resource_id=resource or next(iter(scope), "unknown"),
                        path=path,
                        strategy=self.name,
                    ),
                    tier="cold",
                    metadata={
                        "is_current": "false",
                        "valid_from": facts.get("validFrom", ""),
                        "valid_until": facts.get("validUntil", ""),
                        "revision_of": uri,
                    },
                )
            )
        return out


def _history(backends: BackendSet, uri: str) -> list[Any] | None:
    """Stored versions of ``uri`` oldest first, from the node source (``None``: no history)."""
    source = backends.nodes
    reader = getattr(source, "history", None)
    if reader is None:
        reader = getattr(getattr(source, "store", None), "history", None)
    if reader is None:
        return None
    try:
        return list(reader(uri))
    except Exception as exc:  # a history reader is optional; never fail the assembly
        log.debug("node history unavailable", uri=uri, error=str(exc)[:120])
        return None


def _resource(version: Any) -> str:
    node = getattr(version, "node", None)
    return str(getattr(node, "resource_id", "") or "")


def _age_days(stamp: str | None) -> float | None:
    parsed = _parse(stamp)
    if parsed is None:
        return None
    return max(0.0, (datetime.now(UTC) - parsed).total_seconds() / 86400)
