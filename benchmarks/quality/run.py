"""Context quality on real issues: does the assembled context hold the code that must change?

    .venv/bin/python benchmarks/quality/run.py [--limit N] [--instances ID,...]
        [--budgets 4000,8000,16000,32000] [--strategies default,simple-keyword,...]
        [--baselines bm25-files,bm25-chunks,bm25-grouped] [--cache DIR] [--reindex]
        [--json] [--markdown]

For each SWE-bench Lite dev instance (``../shared/data``), the PyPI release the
instance names is fetched with pip, unpacked and indexed once (see
``corpora.py``; everything is cached under ``--cache``), then the issue text is
the query of one assembly per strategy and budget through the Python API
(``cleveragents_acms.api.open_context().run(ContextRequest(query=...,
preferred_strategies=(strategy,)), project=..., budget=..., reuse=False)``, the
path of ``assemble`` without the service's cache; ``default`` sets no
preference). Three BM25 baselines (``baselines.py``) answer the same
queries at the same budgets. The metrics are defined in ``metrics.py``.

Nothing here is tuned to an instance or a project: the data is for measuring.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import baselines
import corpora
from corpora import log
from metrics import EDIT_HIT_SHARE, Answer, reachable_anchors, score_answer, summarise
from report import goal, nan_to_none, render_markdown, write_readme

DATA = Path(__file__).resolve().parents[3] / "shared" / "data"
DEFAULT_STRATEGIES = "default,simple-keyword,breadth-depth-navigator,arce"
BASELINES = ("bm25-files", "bm25-chunks", "bm25-grouped")


@dataclass
class Instance:
    instance_id: str
    corpus: str
    pypi_name: str
    version: str
    query: str
    gold_file: str
    anchors: list[str]
    usable: bool


def load_instances(data: Path) -> list[Instance]:
    anchors = {}
    for line in (data / "swebench_lite_dev_anchors.jsonl").read_text().splitlines():
        if line.strip():
            record = json.loads(line)
            anchors[record["instance_id"]] = record
    instances = []
    for line in (data / "swebench_lite_dev.jsonl").read_text().splitlines():
        if not line.strip():
            continue
        record = json.loads(line)
        extra = anchors[record["instance_id"]]
        instances.append(
            Instance(
                record["instance_id"],
                extra["corpus"],
                record["pypi_name"],
                record["version"],
                record["problem_statement"],
                extra["gold_file"],
                list(extra["anchors"]),
                bool(extra["usable"]),
            )
        )
    return instances


# -- the system under test -------------------------------------------------------------


class ApiAssembler:
    """Assemblies through the Python API, one long-lived ContextService."""

    def __init__(self, home: Path) -> None:
        from cleveragents.models.context import ContextRequest
        from cleveragents_acms.api import open_context

        self._request = ContextRequest
        self.service = open_context(home)
        self.available = self._strategy_names()

    def _strategy_names(self) -> set[str] | None:
        registry = getattr(self.service, "registry", None)
        if registry is None:
            return None
        try:
            return set(registry.strategies)
        except Exception:
            return None

    def assemble(self, query: str, project: str, budget: int, strategy: str) -> Any:
        preferred = () if strategy == "default" else (strategy,)
        request = self._request(query=query, preferred_strategies=preferred)
        run = getattr(self.service, "run", None)
        if run is not None:  # reuse=False: every measured answer is assembled, never cached
            return run(request, project=project, budget=budget, reuse=False).context
        return self.service.assemble(request, project=project, budget=budget)

    def close(self) -> None:
        close = getattr(self.service, "close", None)
        if close is not None:
            close()


def api_answer(
    assembler: ApiAssembler,
    instance: Instance,
    strategy: str,
    budget: int,
    count: Callable[[str], int],
) -> Answer:
    answer = Answer(instance.instance_id, strategy, budget)
    started = time.perf_counter()
    try:
        context = assembler.assemble(instance.query, instance.corpus, budget, strategy)
    except Exception as exc:
        answer.seconds = time.perf_counter() - started
        answer.error = f"{type(exc).__name__}: {exc}"[:300]
        return answer
    answer.seconds = time.perf_counter() - started
    answer.fragments = [
        (f.provenance.path, f.content, f.relevance_score) for f in context.fragments
    ]
    answer.reported_tokens = context.total_tokens + context.preamble_tokens
    answer.recounted_tokens = sum(count(f.content) for f in context.fragments) + (
        count(context.preamble) if context.preamble else 0
    )
    answer.strategies_used = tuple(context.strategies_used)
    return answer


# -- the baselines ---------------------------------------------------------------------


class BaselineSet:
    """BM25 indexes of one release (built lazily, in memory)."""

    def __init__(
        self, corpus: corpora.Corpus, indexer: corpora.Indexer, count: Callable[[str], int]
    ) -> None:
        self.corpus = corpus
        self.indexer = indexer
        self.count = count
        self._files: baselines.BM25 | None = None
        self._chunks: baselines.BM25 | None = None
        self.build_seconds: dict[str, float] = {}

    def _timed_build(self, name: str, units: Callable[[], list[baselines.Unit]]) -> baselines.BM25:
        started = time.perf_counter()
        index = baselines.BM25(units())
        self.build_seconds[name] = round(time.perf_counter() - started, 1)
        return index

    def files(self) -> baselines.BM25:
        if self._files is None:
            self._files = self._timed_build("files", lambda: baselines.file_units(self.corpus.root))
        return self._files

    def chunks(self) -> baselines.BM25:
        if self._chunks is None:
            self._chunks = self._timed_build("chunks", self._chunk_units)
        return self._chunks

    def _chunk_units(self) -> list[baselines.Unit]:
        return baselines.chunk_units(self.indexer.current_nodes(self.corpus))

    def answer(self, method: str, instance: Instance, budget: int) -> Answer:
        answer = Answer(instance.instance_id, method, budget)
        try:
            index = self.files() if method == "bm25-files" else self.chunks()
            started = time.perf_counter()
            ranking = index.rank(instance.query)
            pack = baselines.pack_grouped if method == "bm25-grouped" else baselines.pack_ranked
            packed = pack(index.units, ranking, budget, self.count)
            answer.seconds = time.perf_counter() - started
        except Exception as exc:
            answer.error = f"{type(exc).__name__}: {exc}"[:300]
            return answer
        answer.fragments = [(u.path, u.text, s) for u, s in packed]
        answer.reported_tokens = answer.recounted_tokens = sum(u.tokens for u, _ in packed)
        return answer


# -- the run ---------------------------------------------------------------------------


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--limit", type=int, default=None, help="only the first N instances")
    parser.add_argument("--instances", default="", help="comma-separated instance ids")
    parser.add_argument("--budgets", default="4000,8000,16000,32000")
    parser.add_argument(
        "--strategies",
        default=DEFAULT_STRATEGIES,
        help="strategies through the API ('default' = no preference); '' for none",
    )
    parser.add_argument("--baselines", default=",".join(BASELINES))
    parser.add_argument(
        "--cache", type=Path, default=Path.home() / ".cache" / "cleveragents-bench" / "quality"
    )
    parser.add_argument("--data", type=Path, default=DATA)
    parser.add_argument(
        "--from-raw",
        type=Path,
        default=None,
        help="only print the table of an earlier run's results/run-*.jsonl",
    )
    parser.add_argument("--reindex", action="store_true", help="index every release again")
    parser.add_argument("--json", action="store_true", help="print the summary as JSON")
    parser.add_argument(
        "--markdown",
        action="store_true",
        help="print the table and write it into benchmarks/quality/README.md",
    )
    return parser.parse_args(argv)


def split(value: str) -> list[str]:
    return [v.strip() for v in value.split(",") if v.strip()]


def select(instances: list[Instance], args: argparse.Namespace) -> list[Instance]:
    wanted = split(args.instances)
    if wanted:
        known = {i.instance_id for i in instances}
        unknown = [w for w in wanted if w not in known]
        if unknown:
            raise SystemExit(f"unknown instance id(s): {', '.join(unknown)}")
        instances = [i for i in instances if i.instance_id in wanted]
    if args.limit is not None:
        instances = instances[: args.limit]
    return instances


def release_files(root: Path) -> list[str]:
    return [p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file()]


def from_raw(path: Path, args: argparse.Namespace) -> None:
    """The table of a finished or interrupted run, from its ``results/run-*.jsonl``."""
    scores: dict[tuple[str, int], list[dict[str, Any]]] = {}
    used: dict[str, Counter[str]] = {}
    instances: set[str] = set()
    for line in path.read_text().splitlines():
        record = json.loads(line)
        instances.add(record["instance"])
        scores.setdefault((record["method"], record["budget"]), []).append(record)
        if record["method"] not in BASELINES and not record.get("error"):
            used.setdefault(record["method"], Counter())[
                " + ".join(record.get("strategies_used") or ()) or "(none)"
            ] += 1
    methods = list(dict.fromkeys(m for m, _ in scores))
    budgets = sorted({b for _, b in scores})
    summary = {
        "instances": len(instances),
        "measured": len(instances),
        "skipped_releases": [],
        "unmapped_gold_files": [],
        "releases": {},
        "notes": [f"summarised from {path}"],
        "strategies_used": {m: dict(c.most_common()) for m, c in used.items()},
        "raw": str(path),
    }
    baseline_names = [m for m in methods if m in BASELINES]
    strategies = [m for m in methods if m not in BASELINES]
    publish(summary, scores, baseline_names, strategies, budgets, args)


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    budgets = [int(b) for b in split(args.budgets)]
    strategies = split(args.strategies)
    baseline_names = split(args.baselines)
    unknown = [b for b in baseline_names if b not in BASELINES]
    if unknown:
        raise SystemExit(f"unknown baseline(s) {unknown}; valid: {', '.join(BASELINES)}")
    if args.from_raw:
        from_raw(args.from_raw, args)
        return
    cache = args.cache.expanduser()
    cache.mkdir(parents=True, exist_ok=True)
    home = cache / "home"
    os.environ["CLEVERAGENTS_HOME"] = str(home)

    from cleveragents_acms.pipeline.tokenizers import get_tokenizer

    count = get_tokenizer("cl100k").count
    instances = select(load_instances(args.data), args)
    by_corpus: dict[str, list[Instance]] = {}
    for instance in instances:
        by_corpus.setdefault(instance.corpus, []).append(instance)
    log(
        f"{len(instances)} instances over {len(by_corpus)} releases; budgets {budgets}; "
        f"strategies {strategies}; baselines {baseline_names}"
    )

    assembler: ApiAssembler | None = None
    notes: list[str] = []
    if strategies:
        try:
            assembler = ApiAssembler(home)
        except Exception as exc:
            notes.append(
                f"the Python API is not usable ({type(exc).__name__}: {exc}); "
                "strategies were not measured"
            )
            log(notes[-1])
            strategies = []
    if assembler is not None and assembler.available is not None:
        missing = [s for s in strategies if s != "default" and s not in assembler.available]
        for name in missing:
            notes.append(f"strategy {name} is not registered: not measured")
        strategies = [s for s in strategies if s not in missing]

    indexer = corpora.Indexer(cache)
    scores: dict[tuple[str, int], list[dict[str, Any]]] = {}
    used: dict[str, Counter[str]] = {}
    skipped: list[dict[str, str]] = []
    releases: dict[str, dict[str, Any]] = {}
    unmapped: list[str] = []
    #: anchored instances whose release file lacks the anchors: never an edit-hit
    out_of_reach: list[str] = []
    raw_path = cache / "results" / time.strftime("run-%Y%m%d-%H%M%S.jsonl")
    raw_path.parent.mkdir(parents=True, exist_ok=True)
    raw = raw_path.open("w")
    done = 0
    for corpus_name, group in by_corpus.items():
        first = group[0]
        try:
            corpus = corpora.fetch_release(cache, corpus_name, first.pypi_name, first.version)
            indexed = corpora.index_release(indexer, corpus, reindex=args.reindex)
            if indexed and "vectors_added" in indexed:
                log(f"{corpus_name}: embedded {indexed['vectors_added']} nodes")
            elif indexed:
                log(
                    f"{corpus_name}: indexed {indexed['files']} files, {indexed['nodes']} nodes "
                    f"in {indexed['seconds']}s"
                )
        except Exception as exc:
            message = f"{type(exc).__name__}: {exc}"[:400]
            log(f"{corpus_name}: SKIPPED ({message})")
            skipped.append({"corpus": corpus_name, "instances": len(group), "reason": message})
            continue
        releases[corpus_name] = {
            "archive": corpus.archive,
            "kind": corpus.kind,
            "notes": list(corpus.notes),
        }
        files = release_files(corpus.root)
        base = BaselineSet(corpus, indexer, count)
        if assembler is not None:  # open the stores each strategy uses before timing
            for strategy in strategies:
                try:
                    assembler.assemble(group[0].query, corpus_name, budgets[0], strategy)
                except Exception:  # the timed answers report any error
                    pass
        for instance in group:
            done += 1
            gold = corpora.map_gold_path(instance.gold_file, files)
            if gold is None:
                unmapped.append(instance.instance_id)
                log(
                    f"[{done}/{len(instances)}] {instance.instance_id}: gold file "
                    f"{instance.gold_file} not in {corpus.archive}; left out"
                )
                continue
            anchors = instance.anchors if instance.usable and instance.anchors else None
            if anchors:
                text = (corpus.root / gold).read_text(encoding="utf-8", errors="replace")
                held = reachable_anchors(text, anchors)
                if held < EDIT_HIT_SHARE * len(anchors):
                    out_of_reach.append(f"{instance.instance_id} ({held} of {len(anchors)})")
            started = time.perf_counter()
            for method in [*baseline_names, *strategies]:
                for budget in budgets:
                    if method in BASELINES:
                        answer = base.answer(method, instance, budget)
                    else:
                        answer = api_answer(assembler, instance, method, budget, count)  # type: ignore[arg-type]
                    result = score_answer(answer, gold, anchors)
                    scores.setdefault((method, budget), []).append(result)
                    if method not in BASELINES and answer.error is None:
                        used.setdefault(method, Counter())[
                            " + ".join(answer.strategies_used) or "(none)"
                        ] += 1
                    raw.write(
                        json.dumps(
                            {
                                "instance": instance.instance_id,
                                "method": method,
                                "budget": budget,
                                "gold": gold,
                                "files": list(dict.fromkeys(p for p, _, _ in answer.fragments)),
                                "tokens": max(answer.reported_tokens, answer.recounted_tokens),
                                "strategies_used": answer.strategies_used,
                                **result,
                            }
                        )
                        + "\n"
                    )
            raw.flush()
            log(
                f"[{done}/{len(instances)}] {instance.instance_id} ({corpus_name}) "
                f"{time.perf_counter() - started:.1f}s"
            )
        if base.build_seconds:
            releases[corpus_name]["bm25_build_s"] = base.build_seconds
    raw.close()
    if assembler is not None:
        assembler.close()

    summary = {
        "instances": len(instances),
        "measured": len(instances) - sum(s["instances"] for s in skipped) - len(unmapped),
        "skipped_releases": skipped,
        "unmapped_gold_files": unmapped,
        "edit_hit_out_of_reach": out_of_reach,
        "releases": releases,
        "notes": notes,
        "strategies_used": {m: dict(c.most_common()) for m, c in used.items()},
        "raw": str(raw_path),
    }
    publish(summary, scores, baseline_names, strategies, budgets, args)


def publish(
    summary: dict[str, Any],
    scores: dict[tuple[str, int], list[dict[str, Any]]],
    baseline_names: list[str],
    strategies: list[str],
    budgets: list[int],
    args: argparse.Namespace,
) -> None:
    methods = [*baseline_names, *strategies]
    rows = [summarise(m, b, scores.get((m, b), [])) for m in methods for b in budgets]
    summary["edit_hit_instances"] = rows[0].edit_instances if rows else 0
    summary["rows"] = [r.to_dict() for r in rows]
    summary["goal"] = goal(rows, strategies, budgets, baseline_names)
    if args.json:
        print(json.dumps(summary, indent=2, default=nan_to_none))
        return
    text = render_markdown(summary, rows, budgets, baseline_names)
    print(text)
    if args.markdown:
        write_readme(text)


if __name__ == "__main__":
    main()
