"""Named detail levels per UKO domain (DetailLevelMaps) and their resolution to depths.

A map names integer detail depths for one domain (``uko-code``, ``uko-py`` …)
and may extend a parent map (spec 000, "Ontology Hierarchy"):

* **Layer 0** (``uko``, the root) names the universal depths: MODULE_LISTING 0,
  SIGNATURES 4, FULL_SOURCE 9.
* **A domain map** (its parent is the root) *assigns* its own names to depths.
  The root's names stay resolvable beside them: a lookup that the domain cannot
  answer walks up to ``uko`` (``SIGNATURES`` is 4 for a document too).
* **Any deeper map** (paradigm, language, a plugin's vocabulary) *extends* its
  parent. A new name declared at a depth the parent already names is
  **inserted** there: the parent's level at that depth and every later one
  shift up by one, keeping the numbering consecutive. A new name at an unnamed
  depth fills the gap. Declared depths are the level's place in the child's
  own map, processed from shallow to deep, so a language that inserts two
  levels states each at its final depth. An inherited name may be restated at
  its (shifted) depth but not moved.

The built-in maps follow the spec's tables. Where the spec's illustrative
tables disagree with its insertion rule, the rule wins: ``uko-oo`` inserts
CLASS_HIERARCHY at 3, so its SIGNATURES is 5 and FULL_SOURCE 10 ("9+" in the
spec), and ``uko-py`` inserts DECORATED_SIGNATURES, TYPE_STUBS and WITH_TESTS
between the levels the spec names.

A raw integer depth is always used as is (no upper bound: depth semantics are
per domain). An unknown name raises :class:`~cleveragents.errors.ValidationError`
listing the valid names of the domain.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from cleveragents.errors import CleverAgentsError, NotFoundError, ValidationError
from cleveragents.models.context import UNIVERSAL_LEVELS, DetailLevelMap
from cleveragents.protocols import DetailLevelMapLike

if TYPE_CHECKING:
    from cleveragents_acms.ontology.loader import UKOLoader

__all__ = [
    "BUILTIN_MAPS",
    "ROOT_DOMAIN",
    "DetailLevelMapRegistry",
    "domain_of",
]

ROOT_DOMAIN = "uko"


def _map(domain: str, parent: str | None, levels: dict[str, int]) -> DetailLevelMap:
    # The kernel model caps depths at 9, but the spec sets no upper bound (documents
    # reach 10, data catalogues 11, Python's WITH_TESTS 13); the registry validates
    # what it registers itself, so the built-ins skip the model's range check.
    return DetailLevelMap.model_construct(domain=domain, parent=parent, levels=levels)


#: The built-in maps, root first. See the module docstring for how they combine.
BUILTIN_MAPS: tuple[DetailLevelMap, ...] = (
    _map(ROOT_DOMAIN, None, dict(UNIVERSAL_LEVELS)),
    _map(
        "uko-code",
        ROOT_DOMAIN,
        {
            "MODULE_LISTING": 0,
            "MEMBER_LISTING": 2,
            "MEMBER_SUMMARY": 3,
            "SIGNATURES": 4,
            "SIGNATURES_WITH_DOCS": 5,
            "STRUCTURAL_OUTLINE": 6,
            "KEY_LOGIC": 7,
            "NEAR_COMPLETE": 8,
            "FULL_SOURCE": 9,
        },
    ),
    # OO inserts the class hierarchy before the member summaries.
    _map("uko-oo", "uko-code", {"CLASS_HIERARCHY": 3}),
    # Functional and procedural code render the uko-code levels with paradigm content.
    _map("uko-func", "uko-code", {}),
    _map("uko-proc", "uko-code", {}),
    # Python, on top of uko-oo: decorators after SIGNATURES_WITH_DOCS, .pyi stubs after
    # KEY_LOGIC, tests after FULL_SOURCE.
    _map("uko-py", "uko-oo", {"DECORATED_SIGNATURES": 7, "TYPE_STUBS": 10, "WITH_TESTS": 13}),
    _map(
        "uko-doc",
        ROOT_DOMAIN,
        {
            "TITLE_ONLY": 0,
            "TABLE_OF_CONTENTS_L1": 1,
            "FULL_TOC": 3,
            "TOC_WITH_SUMMARIES": 4,
            "STRUCTURAL_DETAIL": 8,
            "FULL_CONTENT": 10,
        },
    ),
    _map(
        "uko-data",
        ROOT_DOMAIN,
        {
            "SCHEMA_LISTING": 0,
            "TABLE_LISTING": 1,
            "TYPED_COLUMNS": 3,
            "RELATIONSHIPS": 5,
            "DDL": 7,
            "FULL_CATALOG": 11,
        },
    ),
    # The spec gives no table for infrastructure; these follow its generic depth
    # semantics (0 what exists, 2 relationships, 4 structure, 9 everything).
    _map(
        "uko-infra",
        ROOT_DOMAIN,
        {
            "SERVICE_LISTING": 0,
            "SERVICE_TOPOLOGY": 2,
            "CONFIG_KEYS": 4,
            "RESOLVED_CONFIG": 6,
            "FULL_CONFIG": 9,
        },
    ),
)

#: Languages without a map of their own fall back to their paradigm (spec 000, Layer 3).
_FALLBACK_PARENTS: dict[str, str] = {
    "uko-ts": "uko-oo",
    "uko-java": "uko-oo",
    "uko-rs": "uko-code",
}


def _key(name: str) -> str:
    return name.strip().upper().replace("-", "_").replace(" ", "_")


@dataclass(frozen=True, slots=True)
class _Level:
    name: str
    depth: int
    origin: str  # the domain whose map declared it
    universal: bool = False  # a root level seen from a domain that did not restate it


class _Effective:
    """The resolved levels of one domain, shallowest first."""

    def __init__(self, domain: str, chain: list[str], levels: list[_Level]) -> None:
        self.domain = domain
        self.chain = chain
        self.levels = sorted(levels, key=lambda lv: (lv.depth, lv.universal))
        self.by_key: dict[str, _Level] = {}
        for level in self.levels:
            self.by_key.setdefault(_key(level.name), level)

    def mapping(self) -> dict[str, int]:
        return {level.name: level.depth for level in self.levels}


class DetailLevelMapRegistry:
    """Resolves named detail levels to depths per UKO domain, walking map inheritance.

    Satisfies :class:`cleveragents.protocols.DetailLevelMapRegistry`. Built with
    the built-in maps; :meth:`register` adds (or replaces) maps, and
    :meth:`from_registry` adds those of the kernel's ``detail-level-map`` slot.

    :param loader: used by :meth:`domain_of` to walk a node type's ancestors.
    """

    def __init__(
        self,
        maps: Iterable[DetailLevelMapLike | DetailLevelMap] = (),
        *,
        builtins: bool = True,
        loader: UKOLoader | None = None,
    ) -> None:
        self.loader = loader
        #: Maps skipped by :meth:`from_registry` (plugin, message).
        self.errors: list[tuple[str, str]] = []
        self._maps: dict[str, DetailLevelMap] = {}
        self._effective: dict[str, _Effective] = {}
        for level_map in BUILTIN_MAPS if builtins else ():
            self.register(level_map)
        for extra in maps:
            self.register(extra)

    @classmethod
    def from_registry(
        cls, registry: Any, *, loader: UKOLoader | None = None, strict: bool = False
    ) -> DetailLevelMapRegistry:
        """The built-in maps plus every map registered in the ``detail-level-map`` slot.

        A map that cannot be loaded or is invalid is skipped and recorded in
        :attr:`errors` (plugin name and message); ``strict=True`` raises instead.
        """
        levels = cls(loader=loader)
        view = registry["detail-level-map"]
        for name in view:
            plugin = view.registration(name).plugin if hasattr(view, "registration") else "?"
            try:
                levels.register(view[name])
            except CleverAgentsError as exc:
                if strict:
                    raise
                levels.errors.append((plugin, f"detail-level-map '{name}': {exc.message}"))
        return levels

    # -- building ---------------------------------------------------------------

    def register(self, level_map: DetailLevelMapLike | DetailLevelMap) -> None:
        """Add a map, replacing any earlier map of the same domain.

        :raises ValidationError: empty domain, or a level that is not a
            non-negative integer.
        """
        domain = getattr(level_map, "domain", None)
        if not isinstance(domain, str) or not domain.strip().rstrip(":"):
            raise ValidationError(f"a DetailLevelMap needs a domain, got {domain!r}")
        domain = domain.strip().rstrip(":")
        parent = getattr(level_map, "parent", None)
        if parent is not None and (not isinstance(parent, str) or not parent.strip()):
            raise ValidationError(f"DetailLevelMap '{domain}': invalid parent {parent!r}")
        levels = getattr(level_map, "levels", None)
        if not isinstance(levels, Mapping):
            raise ValidationError(f"DetailLevelMap '{domain}': levels must be a mapping")
        bad = {
            name: depth
            for name, depth in levels.items()
            if not isinstance(name, str)
            or not name.strip()
            or isinstance(depth, bool)
            or not isinstance(depth, int)
            or depth < 0
        }
        if bad:
            raise ValidationError(
                f"DetailLevelMap '{domain}': levels need a name and a depth >= 0, got {bad}"
            )
        parent = parent.strip().rstrip(":") if parent is not None else None
        self._maps[domain] = _map(domain, parent, dict(levels))
        self._effective.clear()

    def _parent(self, domain: str) -> str | None:
        # A parentless map other than the universal one extends the universal one.
        parent = self._maps[domain].parent
        if parent is None and domain != ROOT_DOMAIN and ROOT_DOMAIN in self._maps:
            return ROOT_DOMAIN
        return parent

    def domains(self) -> list[str]:
        """Every domain with a map of its own."""
        return sorted(self._maps)

    def __contains__(self, domain: object) -> bool:
        return isinstance(domain, str) and domain.rstrip(":") in self._maps

    def map_for(self, domain: str) -> DetailLevelMap:
        """The map registered for ``domain`` itself (no inheritance)."""
        try:
            return self._maps[domain.rstrip(":")]
        except KeyError:
            raise NotFoundError(f"no DetailLevelMap for domain '{domain}'") from None

    # -- resolving ----------------------------------------------------------------

    def _domain(self, domain: str | None) -> str:
        if domain is None:
            return ROOT_DOMAIN
        if not isinstance(domain, str) or not domain.strip():
            raise ValidationError(f"invalid UKO domain {domain!r}")
        domain = domain.strip()
        prefix, sep, local = domain.partition(":")
        if sep and local:  # a node type such as uko-py:Function
            return self.domain_of(domain)
        prefix = prefix.rstrip(":")
        if prefix in self._maps:
            return prefix
        while prefix in _FALLBACK_PARENTS and prefix not in self._maps:
            prefix = _FALLBACK_PARENTS[prefix]
        return prefix if prefix in self._maps else ROOT_DOMAIN

    def chain(self, domain: str | None = None) -> list[str]:
        """The domains a lookup walks, most specific first: ``[uko-py, uko-oo, uko-code, uko]``."""
        return list(self._resolve(self._domain(domain)).chain)

    def _resolve(self, domain: str) -> _Effective:
        cached = self._effective.get(domain)
        if cached is not None:
            return cached
        chain: list[str] = []
        current: str | None = domain
        while current is not None:
            if current in chain:
                raise ValidationError(
                    f"DetailLevelMap inheritance loops: {' -> '.join([*chain, current])}"
                )
            if current not in self._maps:
                raise ValidationError(
                    f"DetailLevelMap '{chain[-1]}' extends '{current}', which has no map "
                    f"(known: {', '.join(sorted(self._maps))})"
                )
            chain.append(current)
            current = self._parent(current)
        levels: list[_Level] = []
        for index, name in enumerate(reversed(chain)):
            level_map = self._maps[name]
            if index == 0:
                levels = [_Level(n, d, name) for n, d in level_map.levels.items()]
            elif index == 1:
                levels = self._assign(name, level_map.levels, levels)
            else:
                levels = self._insert(name, level_map.levels, levels)
        effective = _Effective(domain, chain, levels)
        self._effective[domain] = effective
        return effective

    @staticmethod
    def _assign(domain: str, declared: Mapping[str, int], root: list[_Level]) -> list[_Level]:
        """A domain map under the root: its own names, the root's stay as fallbacks."""
        keys = {_key(n) for n in declared}
        own = [_Level(n, d, domain) for n, d in declared.items()]
        universal = [
            _Level(lv.name, lv.depth, lv.origin, universal=True)
            for lv in root
            if _key(lv.name) not in keys
        ]
        return own + universal

    @staticmethod
    def _insert(domain: str, declared: Mapping[str, int], inherited: list[_Level]) -> list[_Level]:
        """An extending map: new names at a named depth shift that level and later ones."""
        levels = list(inherited)
        for name, depth in sorted(declared.items(), key=lambda item: item[1]):
            key = _key(name)
            known = next((lv for lv in levels if _key(lv.name) == key), None)
            if known is not None and not known.universal:
                if known.depth != depth:
                    raise ValidationError(
                        f"DetailLevelMap '{domain}': level {name} is inherited from "
                        f"'{known.origin}' at depth {known.depth}; a child map inserts new "
                        f"levels but cannot move inherited ones"
                    )
                continue
            if known is not None:  # a universal name becomes one of this lineage's levels
                levels.remove(known)
            occupied = any(
                lv.depth == depth and not lv.universal and lv.origin != domain for lv in levels
            )
            if occupied:
                levels = [
                    _Level(lv.name, lv.depth + 1, lv.origin)
                    if not lv.universal and lv.origin != domain and lv.depth >= depth
                    else lv
                    for lv in levels
                ]
            levels.append(_Level(name, depth, domain))
        return levels

    def levels_for(self, domain: str) -> Mapping[str, int]:
        """Named level -> depth for ``domain`` (or a node type), inherited ones included."""
        return self._resolve(self._domain(domain)).mapping()

    def depths_for(self, domain: str) -> list[int]:
        """The named depths of ``domain``, ascending."""
        return sorted({level.depth for level in self._resolve(self._domain(domain)).levels})

    def depth_of(self, level: str | int, domain: str | None = None) -> int:
        """The depth of a named level in ``domain`` (default ``uko``); integers pass through.

        Names are case-insensitive (``"full-source"`` works); digit strings are depths.
        :raises ValidationError: unknown name (the message lists the valid ones) or
            a negative or non-integer depth.
        """
        if isinstance(level, bool) or not isinstance(level, (int, str)):
            raise ValidationError(f"a detail level is a name or an integer depth, got {level!r}")
        if isinstance(level, str) and level.strip().isdigit():
            level = int(level.strip())
        if isinstance(level, int):
            if level < 0:
                raise ValidationError(f"detail depth must be >= 0, got {level}")
            return level
        effective = self._resolve(self._domain(domain))
        found = effective.by_key.get(_key(level))
        if found is None:
            valid = ", ".join(lv.name for lv in effective.levels)
            raise ValidationError(
                f"unknown detail level '{level}' for {effective.domain} (valid: {valid})",
                details={"level": level, "domain": effective.domain, "valid": valid.split(", ")},
            )
        return found.depth

    def name_of(self, depth: int, domain: str | None = None) -> str | None:
        """The most specific name of ``depth`` in ``domain``; ``None`` when unnamed."""
        if isinstance(depth, bool) or not isinstance(depth, int) or depth < 0:
            raise ValidationError(f"detail depth must be an integer >= 0, got {depth!r}")
        effective = self._resolve(self._domain(domain))
        rank = {name: index for index, name in enumerate(effective.chain)}
        named = [lv for lv in effective.levels if lv.depth == depth]
        if not named:
            return None
        return min(named, key=lambda lv: (lv.universal, rank.get(lv.origin, len(rank)))).name

    def domain_of(self, uko_type: str, loader: UKOLoader | None = None) -> str:
        """The most specific domain with a map for a node type (``uko-py:Function`` -> ``uko-py``).

        Walks the type's ancestors breadth first (with a loader) and takes the first
        whose prefix has a map; otherwise falls back by prefix, then to ``uko``.
        """
        loader = loader or self.loader
        candidates: list[str] = [uko_type]
        if loader is not None and uko_type in loader:
            candidates = loader.resolve_inheritance(uko_type)
        for candidate in candidates:
            prefix = candidate.partition(":")[0] if ":" in candidate else candidate
            if prefix in self._maps:
                return prefix
        prefix = uko_type.partition(":")[0]
        while prefix in _FALLBACK_PARENTS and prefix not in self._maps:
            prefix = _FALLBACK_PARENTS[prefix]
        return prefix if prefix in self._maps else ROOT_DOMAIN


def domain_of(
    uko_type: str,
    loader: UKOLoader | None = None,
    registry: DetailLevelMapRegistry | None = None,
) -> str:
    """The domain whose map applies to nodes of ``uko_type`` (built-in maps by default)."""
    return (registry or _default_registry()).domain_of(uko_type, loader)


_DEFAULT: list[DetailLevelMapRegistry] = []


def _default_registry() -> DetailLevelMapRegistry:
    if not _DEFAULT:
        _DEFAULT.append(DetailLevelMapRegistry())
    return _DEFAULT[0]
