"""The result table: markdown for the README, the goal verdict, the README update."""

from __future__ import annotations

import math
import shlex
import sys
import time
from pathlib import Path
from typing import Any

from corpora import log
from metrics import EDIT_HIT_SHARE, Row

#: Edit-hit of the baselines on the dev split as the issue quotes them (4k/8k/16k/32k).
ISSUE_BASELINES = {
    "bm25-files": (5, 19, 46, 42),
    "bm25-chunks": (35, 42, 49, 65),
    "bm25-grouped": (46, 47, 60, 72),
}
GOAL_MARGIN = 15.0
GOAL_HIT5 = 85.0
README = Path(__file__).resolve().parent / "README.md"
MARK_START, MARK_END = "<!-- quality-results:start -->", "<!-- quality-results:end -->"


def goal(
    rows: list[Row], strategies: list[str], budgets: list[int], baseline_names: list[str]
) -> dict[str, Any]:
    table = {(r.method, r.budget): r for r in rows}
    best = {
        b: max(
            (
                table[(n, b)].edit_hit
                for n in baseline_names
                if not math.isnan(table[(n, b)].edit_hit)
            ),
            default=0.0,
        )
        for b in budgets
    }
    verdicts = {}
    for strategy in strategies:
        ok_edit = all(table[(strategy, b)].edit_hit >= best[b] + GOAL_MARGIN for b in budgets)
        ok_hit5 = all(table[(strategy, b)].hit5 >= GOAL_HIT5 for b in budgets)
        ok_budget = all(table[(strategy, b)].over_budget == 0 for b in budgets)
        verdicts[strategy] = {
            "edit_hit_margin": ok_edit,
            "hit5": ok_hit5,
            "never_over_budget": ok_budget,
            "met": ok_edit and ok_hit5 and ok_budget,
        }
    return {
        "best_baseline_edit_hit": best,
        "margin": GOAL_MARGIN,
        "hit5": GOAL_HIT5,
        "strategies": verdicts,
    }


def nan_to_none(value: Any) -> Any:
    return None if isinstance(value, float) and math.isnan(value) else str(value)


def _pct(value: float) -> str:
    return "–" if math.isnan(value) else f"{value:.0f}"


def render_markdown(
    summary: dict[str, Any],
    rows: list[Row],
    budgets: list[int],
    baseline_names: list[str],
) -> str:
    command = shlex.join(
        [
            "python",
            "benchmarks/quality/run.py",
            *(a for a in sys.argv[1:] if a not in ("--markdown", "--json")),
        ]
    )
    lines = [
        f"Measured {time.strftime('%Y-%m-%d')} with `{command.strip()}`: "
        f"{summary['measured']} of {summary['instances']} instances "
        f"({summary['edit_hit_instances']} with anchors count for edit-hit and coverage).",
        "",
        "| method | budget | file-hit % | edit-hit % | coverage % | hit@1 % | hit@5 % "
        "| over budget | errors | ms p50 | ms p95 |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for r in rows:
        lines.append(
            f"| {r.method} | {r.budget} | {_pct(r.file_hit)} | {_pct(r.edit_hit)} | "
            f"{_pct(r.coverage)} | {_pct(r.hit1)} | {_pct(r.hit5)} | {r.over_budget} | "
            f"{r.errors} | {_ms(r.ms_p50)} | {_ms(r.ms_p95)} |"
        )
    table = {(r.method, r.budget): r for r in rows}
    reference = [n for n in baseline_names if n in ISSUE_BASELINES]
    if reference and budgets == [4000, 8000, 16000, 32000]:
        lines += [
            "",
            "Baseline edit-hit %, this run vs the issue's dev-split numbers (4k / 8k / 16k / 32k):",
            "",
        ]
        for name in reference:
            ours = " / ".join(_pct(table[(name, b)].edit_hit) for b in budgets)
            theirs = " / ".join(str(v) for v in ISSUE_BASELINES[name])
            lines.append(f"- {name}: {ours} (issue: {theirs})")
    verdict = summary["goal"]
    best = " / ".join(_pct(verdict["best_baseline_edit_hit"][b]) for b in budgets)
    lines += [
        "",
        f"Goal: edit-hit >= best baseline + {GOAL_MARGIN:.0f} points at every budget "
        f"(best baseline: {best}), file hit@5 >= {GOAL_HIT5:.0f} % at every budget, "
        "0 over budget.",
    ]
    for strategy, v in verdict["strategies"].items():
        state = "met" if v["met"] else "not met"
        detail = ", ".join(k for k in ("edit_hit_margin", "hit5", "never_over_budget") if not v[k])
        lines.append(f"- {strategy}: {state}" + (f" (fails: {detail})" if detail else ""))
    for item in summary["skipped_releases"]:
        lines.append(
            f"- skipped {item['corpus']} ({item['instances']} instances): {item['reason']}"
        )
    if summary["unmapped_gold_files"]:
        lines.append(
            f"- gold file missing from the release, left out: "
            f"{', '.join(summary['unmapped_gold_files'])}"
        )
    if summary.get("edit_hit_out_of_reach"):
        lines.append(
            "- edit-hit out of reach (the release's gold file holds fewer than "
            f"{EDIT_HIT_SHARE * 100:.0f} % of the anchors): "
            + ", ".join(summary["edit_hit_out_of_reach"])
        )
    lines += [f"- {note}" for note in summary["notes"]]
    if summary["strategies_used"]:
        lines += [
            "",
            "Strategies the assembly used (share of answers), per requested strategy:",
            "",
        ]
        for method, counts in summary["strategies_used"].items():
            total = sum(counts.values())
            shown = "; ".join(f"{k} {100 * v / total:.0f} %" for k, v in list(counts.items())[:3])
            lines.append(f"- {method}: {shown}")
    return "\n".join(lines)


def _ms(value: float) -> str:
    if math.isnan(value):
        return "–"
    return f"{value:.1f}" if value < 10 else f"{value:.0f}"


def write_readme(text: str) -> None:
    content = README.read_text() if README.exists() else ""
    if MARK_START in content and MARK_END in content:
        head, rest = content.split(MARK_START, 1)
        _, tail = rest.split(MARK_END, 1)
        content = f"{head}{MARK_START}\n{text}\n{MARK_END}{tail}"
    else:
        content = f"{content.rstrip()}\n\n{MARK_START}\n{text}\n{MARK_END}\n"
    README.write_text(content)
    log(f"table written into {README}")
