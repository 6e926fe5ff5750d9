"""Options of the faiss vector backend (``index.vector.options``), checked when it opens."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from cleveragents.errors import ConfigurationError

__all__ = ["DEFAULTS", "INDEX_TYPES", "BackendOptions", "parse_options", "positive_int"]

INDEX_TYPES = ("auto", "flat", "hnsw")
#: Every option and its default; anything else is a typo and an error.
DEFAULTS: dict[str, Any] = {
    "embedder": None,
    "dimension": None,
    "index_type": "auto",
    "hnsw_threshold": 250_000,
    "hnsw_m": 32,
    "hnsw_ef_construction": 80,
    "hnsw_ef_search": 96,
    "tombstone_ratio": 0.25,
    "delta_ratio": 0.1,
    "delta_min": 1_024,
    "full_checksum_bytes": 64 << 20,
    "exact_scope_limit": 2_048,
    "verify_checksums": True,
    "commit_on_close": True,
}


@dataclass(frozen=True)
class BackendOptions:
    """The validated options; see the backend's docstring for each."""

    embedder: str | None
    dimension: int | None
    index_type: str
    hnsw_threshold: int
    hnsw_m: int
    hnsw_ef_construction: int
    hnsw_ef_search: int
    tombstone_ratio: float
    delta_ratio: float
    delta_min: int
    full_checksum_bytes: int
    exact_scope_limit: int
    verify_checksums: bool
    commit_on_close: bool


def positive_int(name: str, value: object) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ConfigurationError(f"vector backend option {name} must be a positive integer")
    return value


def parse_options(options: dict[str, Any]) -> BackendOptions:
    """Validate ``options`` against :data:`DEFAULTS`; ConfigurationError names the problem."""
    known = DEFAULTS
    unknown = sorted(set(options) - set(known))
    if unknown:
        raise ConfigurationError(
            f"unknown vector backend option(s) {', '.join(unknown)} "
            f"(valid: {', '.join(sorted(known))})"
        )
    values = {**known, **options}
    if values["index_type"] not in INDEX_TYPES:
        raise ConfigurationError(
            f"index_type must be one of {', '.join(INDEX_TYPES)}, got {values['index_type']!r}"
        )
    if values["dimension"] is not None:
        positive_int("dimension", values["dimension"])
    for name in ("hnsw_threshold", "hnsw_m", "hnsw_ef_construction", "hnsw_ef_search"):
        positive_int(name, values[name])
    if not isinstance(values["exact_scope_limit"], int) or values["exact_scope_limit"] < 0:
        raise ConfigurationError("exact_scope_limit must be a non-negative integer")
    ratio = values["tombstone_ratio"]
    if not isinstance(ratio, (int, float)) or not 0 < ratio <= 1:
        raise ConfigurationError("tombstone_ratio must be in (0, 1]")
    delta_ratio = values["delta_ratio"]
    if isinstance(delta_ratio, bool) or not isinstance(delta_ratio, (int, float)):
        raise ConfigurationError("delta_ratio must be a number in [0, 1]")
    if not 0 <= delta_ratio <= 1:
        raise ConfigurationError("delta_ratio must be a number in [0, 1]")
    for name in ("delta_min", "full_checksum_bytes"):
        value = values[name]
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise ConfigurationError(f"{name} must be a non-negative integer")
    embedder = values["embedder"]
    return BackendOptions(
        embedder=None if embedder in (None, "") else str(embedder),
        dimension=values["dimension"],
        index_type=values["index_type"],
        hnsw_threshold=values["hnsw_threshold"],
        hnsw_m=values["hnsw_m"],
        hnsw_ef_construction=values["hnsw_ef_construction"],
        hnsw_ef_search=values["hnsw_ef_search"],
        tombstone_ratio=float(ratio),
        delta_ratio=float(delta_ratio),
        delta_min=values["delta_min"],
        full_checksum_bytes=values["full_checksum_bytes"],
        exact_scope_limit=values["exact_scope_limit"],
        verify_checksums=bool(values["verify_checksums"]),
        commit_on_close=bool(values["commit_on_close"]),
    )
