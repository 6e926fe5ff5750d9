"""A read-only view of the context tiers, held to the resources of some projects.

:meth:`ContextTierService.get_scoped_view` returns one for a plan's projects
(spec 001, ``get_scoped_view(project_names) -> ScopedBackendView``). Like the
scoped views of the index backends (:mod:`cleveragents_acms.backends.scoped`),
it can only be narrowed: a caller's ``scope`` is intersected with the view's,
and an entry of another project is invisible, even by its id. Entries made
from text (a decision, a note) belong to their project only.

The view answers full-text queries (``search``, the TextBackend Protocol's
signature) by word overlap with the entries' content, ranked hot before warm
before cold at equal overlap, so a strategy can read tier entries as it reads
the text index.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import TYPE_CHECKING

from cleveragents.protocols.backends import TextResult
from cleveragents_acms.backends._validation import require_scope

if TYPE_CHECKING:
    from cleveragents_acms.context.tiers import ContextTierService, TieredFragment

__all__ = ["ScopedTierView"]

_WORD = re.compile(r"[a-z0-9_]{2,}")
_TIER_WEIGHT = {"hot": 1.0, "warm": 0.9, "cold": 0.8}


def _words(text: str) -> set[str]:
    return set(_WORD.findall(text.lower()))


class ScopedTierView:
    """The tier entries of ``projects`` whose resources lie in ``scope``."""

    def __init__(
        self,
        tiers: ContextTierService,
        projects: Iterable[str],
        scope: Iterable[str],
    ) -> None:
        self._tiers = tiers
        self.projects: tuple[str, ...] = tuple(dict.fromkeys(projects))
        self.scope: frozenset[str] = frozenset(scope)

    def __repr__(self) -> str:
        return f"ScopedTierView(projects={list(self.projects)!r}, resources={len(self.scope)})"

    def _visible(self, entry: TieredFragment, scope: frozenset[str]) -> bool:
        if entry.project_name not in self.projects:
            return False
        resource = entry.provenance.resource_id
        return not resource or resource in scope

    def _narrow(self, scope: object) -> frozenset[str]:
        return self.scope if scope is None else self.scope & require_scope(scope)

    def entries(
        self, tiers: Iterable[str] = ("hot", "warm", "cold"), *, scope: object = None
    ) -> list[TieredFragment]:
        """The visible entries of these tiers, hot first, then most recently used."""
        narrowed = self._narrow(scope)
        if not self.projects:
            return []
        found = self._tiers.entries(self.projects, tiers)
        return [e for e in found if self._visible(e, narrowed)]

    def get(self, fragment_id: str) -> TieredFragment | None:
        """The entry with this id, if the view can see it (not counted as a tier access)."""
        entry = self._tiers.find(fragment_id)
        if entry is None or not self._visible(entry, self.scope):
            return None
        return entry

    def search(
        self, query: str, *, scope: frozenset[str] | None = None, max_results: int = 20
    ) -> list[TextResult]:
        """Entries sharing words with ``query``, best first (score in (0, 1])."""
        wanted = _words(query)
        if not wanted or max_results <= 0:
            return []
        results: list[TextResult] = []
        for entry in self.entries(scope=scope):
            shared = wanted & _words(entry.content)
            if not shared:
                continue
            score = len(shared) / len(wanted) * _TIER_WEIGHT.get(entry.tier, 0.8)
            metadata = {
                "fragment_id": entry.fragment_id,
                "tier": entry.tier,
                "project": entry.project_name,
                "resource_id": entry.provenance.resource_id or "",
                "path": entry.provenance.path or "",
            }
            results.append(TextResult(entry.uko_node, entry.content, round(score, 6), metadata))
        results.sort(key=lambda r: -r.score)
        return results[:max_results]
