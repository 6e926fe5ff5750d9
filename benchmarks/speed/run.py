"""Assembly speed on a 10k-file index, and fusion + finalisation speed for 1,000 fragments.

    .venv/bin/python benchmarks/speed/run.py [--cache DIR] [--strategies ...] [--budget 8000]
        [--queries 60] [--reindex] [--json]

The corpus is the one of ``benchmarks/indexing/run.py`` (Django, SymPy, pandas,
scikit-learn and astropy: 10,647 files indexed; its ``fetch_corpus`` is reused),
indexed once into a benchmark home under the cache (``<cache>/speed-home``,
project ``speed-10k``) as ``cleveragents index PATH`` does. The queries are
real issue texts: the problem statements of the Django and SymPy instances of
``../shared/data/swebench_lite_dev.jsonl`` (speed only; nothing is scored).
Each strategy answers every query once through the Python API after one
warm-up query; wall time per ``assemble`` call, p50 and p95.

Stages 4-10 (fusion and finalisation) are timed by ``benchmarks/pipeline/run.py``
on its 1,000 fragments, reused here so both numbers come from one command.

Goals (issue: ACMS part 2): assembly p50 < 500 ms and p95 < 2 s for keyword,
navigator and arce; stages 4-10 < 100 ms for 1,000 fragments.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import statistics
import sys
import time
from pathlib import Path
from types import ModuleType
from typing import Any

BENCHMARKS = Path(__file__).resolve().parents[1]
DATA = BENCHMARKS.parents[1] / "shared" / "data"
PROJECT = "speed-10k"
GOAL_P50_MS, GOAL_P95_MS, GOAL_STAGES_MS = 500.0, 2000.0, 100.0


def load(name: str, path: Path) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def log(message: str) -> None:
    print(f"[speed] {message}", file=sys.stderr, flush=True)


def queries(limit: int) -> list[str]:
    texts = []
    for line in (DATA / "swebench_lite_dev.jsonl").read_text().splitlines():
        record = json.loads(line)
        if record["pypi_name"].lower() in ("django", "sympy"):
            texts.append(record["problem_statement"])
    return texts[:limit]


def index_corpus(cache: Path, root: Path, reindex: bool) -> dict[str, Any] | None:
    sys.path.insert(0, str(BENCHMARKS / "quality"))
    import corpora

    indexer = corpora.Indexer(cache)
    corpus = corpora.Corpus(PROJECT, "", "", root, "sdist", "")
    return corpora.index_release(indexer, corpus, reindex=reindex)


def time_strategies(
    strategies: list[str], texts: list[str], budget: int, home: Path
) -> dict[str, Any]:
    from cleveragents.models.context import ContextRequest
    from cleveragents_acms.api import open_context

    service = open_context(home)

    def assemble(request: ContextRequest) -> Any:
        # reuse=False: every timed answer is assembled, never served from the service's cache
        return service.run(request, project=PROJECT, budget=budget, reuse=False).context

    results: dict[str, Any] = {}
    for strategy in strategies:
        preferred = () if strategy == "default" else (strategy,)
        try:
            assemble(ContextRequest(query=texts[0], preferred_strategies=preferred))
        except Exception as exc:
            results[strategy] = {"error": f"{type(exc).__name__}: {exc}"[:300]}
            log(f"{strategy}: {results[strategy]['error']}")
            continue
        times = []
        used: set[str] = set()
        for text in texts:
            request = ContextRequest(query=text, preferred_strategies=preferred)
            started = time.perf_counter()
            context = assemble(request)
            times.append((time.perf_counter() - started) * 1000)
            used.update(context.strategies_used)
        p50, p95 = percentile(times, 0.5), percentile(times, 0.95)
        results[strategy] = {
            "queries": len(times),
            "p50_ms": round(p50, 1),
            "p95_ms": round(p95, 1),
            "max_ms": round(max(times), 1),
            "strategies_used": sorted(used),
            "goal_met": p50 < GOAL_P50_MS and p95 < GOAL_P95_MS,
        }
        log(f"{strategy}: p50 {p50:.0f} ms, p95 {p95:.0f} ms over {len(times)} queries")
    close = getattr(service, "close", None)
    if close is not None:
        close()
    return results


def time_stages(fragments: int, budget: int, runs: int) -> dict[str, Any]:
    pipeline = load("bench_pipeline", BENCHMARKS / "pipeline" / "run.py")
    candidates, renderings = pipeline.candidates(fragments)
    renderer = pipeline.Renderer(renderings)
    pipeline.run_stages(candidates, renderer, budget)  # warm up
    runs_ms = [
        pipeline.run_stages(candidates, renderer, budget)["stages 4-10"] * 1000 for _ in range(runs)
    ]
    median = statistics.median(runs_ms)
    return {
        "fragments": fragments,
        "budget": budget,
        "runs": runs,
        "median_ms": round(median, 2),
        "p95_ms": round(percentile(runs_ms, 0.95), 2),
        "goal_met": median < GOAL_STAGES_MS,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cache", type=Path, default=Path.home() / ".cache" / "cleveragents-bench")
    parser.add_argument("--strategies", default="simple-keyword,breadth-depth-navigator,arce")
    parser.add_argument("--budget", type=int, default=8000)
    parser.add_argument("--queries", type=int, default=60)
    parser.add_argument("--fragments", type=int, default=1000)
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--reindex", action="store_true")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    cache = args.cache.expanduser()
    home = cache / "speed-home"
    os.environ["CLEVERAGENTS_HOME"] = str(home)

    indexing = load("bench_indexing", BENCHMARKS / "indexing" / "run.py")
    # The whole corpus, as the indexing benchmark does (no total-size limit).
    os.environ["CLEVERAGENTS_CONTEXT__FILE__MAX_TOTAL_SIZE"] = str(indexing.NO_LIMIT)
    root = indexing.fetch_corpus(cache)
    summary: dict[str, Any] = {
        "corpus": [*indexing.SDISTS, *indexing.WHEELS],
        "corpus_files": sum(1 for p in root.rglob("*") if p.is_file()),
    }
    started = time.perf_counter()
    indexed = index_corpus(cache, root, args.reindex)
    if indexed:
        log(
            f"indexed {indexed['files']} files, {indexed['nodes']} nodes "
            f"in {time.perf_counter() - started:.0f}s"
        )
        summary["index"] = indexed
    texts = queries(args.queries)
    strategies = [s.strip() for s in args.strategies.split(",") if s.strip()]
    summary["budget"] = args.budget
    try:
        summary["assembly"] = time_strategies(strategies, texts, args.budget, home)
    except ImportError as exc:
        summary["assembly"] = {"error": f"the Python API is not available: {exc}"}
    summary["stages_4_10"] = time_stages(args.fragments, args.budget, args.runs)
    if args.json:
        print(json.dumps(summary, indent=2))
        return
    print(
        f"corpus: {summary['corpus_files']} files ({', '.join(summary['corpus'])}), "
        f"budget {args.budget}, {len(texts)} issue-text queries"
    )
    assembly = summary["assembly"]
    if "error" in assembly:
        print(f"  assembly: {assembly['error']}")
    for name, row in assembly.items():
        if not isinstance(row, dict):
            continue
        if "error" in row:
            print(f"  {name:26} error: {row['error']}")
            continue
        verdict = "yes" if row["goal_met"] else "NO"
        print(
            f"  {name:26} p50 {row['p50_ms']:7.1f} ms  p95 {row['p95_ms']:7.1f} ms  "
            f"max {row['max_ms']:7.1f} ms  goal (p50 < 500, p95 < 2000): {verdict}"
        )
    stages = summary["stages_4_10"]
    print(
        f"  stages 4-10, {stages['fragments']} fragments: median {stages['median_ms']:.1f} ms "
        f"(p95 {stages['p95_ms']:.1f}) goal < 100 ms: "
        f"{'yes' if stages['goal_met'] else 'NO'}"
    )


if __name__ == "__main__":
    main()
