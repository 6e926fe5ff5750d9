"""What one answer scores, and how answers add up to a table row.

An answer is the list of delivered fragments (path inside the release, text,
score) for one instance, method and budget. Per answer:

* file-hit: some fragment comes from the gold file;
* edit-hit: the lines of the gold file's fragments, stripped, contain at least
  80 % of the instance's anchors (instances without anchors, or whose gold file
  is not in the release, are left out of edit-hit and coverage);
* coverage: the share of anchors found (same instances as edit-hit);
* file rank: the files of the context in order of first appearance when the
  fragments are sorted by their score, best first (ties keep delivery order);
  hit@k: the gold file is among the first k of them (a gold file not in the
  context is a miss);
* over budget: fragment tokens + preamble tokens > budget, taking the larger of
  what the answer reports and a recount with cl100k.
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass, field
from typing import Any

__all__ = ["Answer", "Row", "reachable_anchors", "score_answer", "summarise"]

EDIT_HIT_SHARE = 0.8


@dataclass
class Answer:
    instance: str
    method: str
    budget: int
    #: (path, text, score) in delivery order
    fragments: list[tuple[str, str, float]] = field(default_factory=list)
    reported_tokens: int = 0
    recounted_tokens: int = 0
    seconds: float = 0.0
    error: str | None = None
    strategies_used: tuple[str, ...] = ()


def file_rank(fragments: list[tuple[str, str, float]], gold: str) -> int | None:
    order = sorted(range(len(fragments)), key=lambda i: -fragments[i][2])
    seen: list[str] = []
    for i in order:
        path = fragments[i][0]
        if path not in seen:
            seen.append(path)
            if path == gold:
                return len(seen)
    return None


def reachable_anchors(gold_text: str, anchors: list[str]) -> int:
    """How many anchors the release's gold file holds at all: with fewer than 80 %, no
    context can be an edit-hit (the release differs from the commit the fix was made on)."""
    lines = {line.strip() for line in gold_text.splitlines()}
    return sum(1 for a in anchors if a in lines)


def score_answer(answer: Answer, gold: str, anchors: list[str] | None) -> dict[str, Any]:
    """Metrics of one answer; ``anchors`` None when the instance is out of edit-hit."""
    gold_lines: set[str] = set()
    for path, text, _ in answer.fragments:
        if path == gold:
            gold_lines.update(line.strip() for line in text.splitlines())
    result: dict[str, Any] = {
        "file_hit": bool(gold_lines) or any(p == gold for p, _, _ in answer.fragments),
        "rank": file_rank(answer.fragments, gold),
        "over_budget": max(answer.reported_tokens, answer.recounted_tokens) > answer.budget,
        "ms": answer.seconds * 1000,
        "error": answer.error,
    }
    if anchors:
        found = sum(1 for a in anchors if a in gold_lines)
        result["coverage"] = found / len(anchors)
        result["edit_hit"] = found >= EDIT_HIT_SHARE * len(anchors)
    return result


def percentile(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


@dataclass
class Row:
    method: str
    budget: int
    instances: int
    edit_instances: int
    file_hit: float
    edit_hit: float
    coverage: float
    hit1: float
    hit5: float
    over_budget: int
    errors: int
    ms_p50: float
    ms_p95: float

    def to_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


def summarise(method: str, budget: int, scores: list[dict[str, Any]]) -> Row:
    def share(values: list[bool]) -> float:
        return 100.0 * sum(values) / len(values) if values else float("nan")

    edit = [s for s in scores if "edit_hit" in s]
    ranks = [s["rank"] for s in scores]
    times = [s["ms"] for s in scores if s["error"] is None]
    return Row(
        method=method,
        budget=budget,
        instances=len(scores),
        edit_instances=len(edit),
        file_hit=share([s["file_hit"] for s in scores]),
        edit_hit=share([s["edit_hit"] for s in edit]),
        coverage=100.0 * statistics.fmean(s["coverage"] for s in edit) if edit else float("nan"),
        hit1=share([r == 1 for r in ranks]),
        hit5=share([r is not None and r <= 5 for r in ranks]),
        over_budget=sum(1 for s in scores if s["over_budget"]),
        errors=sum(1 for s in scores if s["error"]),
        ms_p50=percentile(times, 0.5),
        ms_p95=percentile(times, 0.95),
    )
