"""Fusion and finalisation speed: pipeline stages 4-10 over 1,000 fragments.

    .venv/bin/python benchmarks/pipeline/run.py [--fragments 1000] [--budget 8000] [--runs 15]

Builds a deterministic candidate set like the strategies hand over (code
fragments of 20-200 tokens, a third of the nodes found at two depths, a tenth
found twice), then times deduplicate -> resolve -> score -> pack (with depth
fallback through a renderer) -> order -> preamble -> skeleton inside a running
assembly with the real cl100k tokenizer. The peer, measured in the same run, is
counting the tokens of every candidate once: the least work any budget-exact
pipeline must do. A whole assembly (all ten stages through the mediator, one
stub strategy handing over the 1,000 fragments) is timed beside them.
Goal: stages 4-10 under 100 ms for 1,000 fragments.
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import time

from cleveragents import assembly
from cleveragents.assembly import AssemblyServices
from cleveragents.models.context import ContextFragment, FragmentProvenance
from cleveragents.testing.factories import StubStrategy, make_assembled_context, make_request
from cleveragents_acms.pipeline.assembly import ContextAssemblyPipeline
from cleveragents_acms.pipeline.config import default_pipeline_config
from cleveragents_acms.pipeline.tokenizers import get_tokenizer

BASE = "https://cleveragents.ai/r/01J0000000000000000000000A"


def source(rng: random.Random, name: str, lines: int) -> str:
    body = "\n".join(
        f"    result_{i} = transform_{rng.randrange(99)}(payload, option={rng.randrange(999)})"
        for i in range(lines)
    )
    return f'def {name}(payload, option=None):\n    """Process {name}."""\n{body}\n'


def candidates(
    count: int, seed: int = 7
) -> tuple[list[ContextFragment], dict[tuple[str, int], ContextFragment]]:
    """``count`` fragments and the renderings a renderer would return per (node, depth)."""
    rng = random.Random(seed)
    tokenizer = get_tokenizer("cl100k")
    fragments: list[ContextFragment] = []
    renderings: dict[tuple[str, int], ContextFragment] = {}
    node = 0
    while len(fragments) < count:
        qualname = f"C{node // 5}.m{node}" if node % 5 else f"C{node // 5}"
        path = f"pkg/mod_{node // 25}.py"
        uri = f"{BASE}/{path}#{qualname}"
        full = source(rng, qualname.replace(".", "_"), rng.randint(3, 25))
        provenance = FragmentProvenance(
            resource_id="01J0000000000000000000000A",
            path=path,
            start_line=1 + 40 * (node % 25),
            end_line=30 + 40 * (node % 25),
            strategy=rng.choice(["simple-keyword", "bdn"]),
        )
        for depth, text in (
            (9, full),
            (4, full.split("\n", 2)[0] + "\n" + full.split("\n")[1]),
            (0, full.split("(", 1)[0]),
        ):
            renderings[(uri, depth)] = ContextFragment(
                uko_node=uri,
                content=text,
                detail_depth=depth,
                token_count=tokenizer.count(text),
                provenance=provenance,
            )
        relevance = round(rng.random(), 3)
        fragments.append(renderings[(uri, 9)].model_copy(update={"relevance_score": relevance}))
        if node % 3 == 0:
            fragments.append(renderings[(uri, 4)].model_copy(update={"relevance_score": relevance}))
        if node % 10 == 0:
            fragments.append(fragments[-1].model_copy(update={"relevance_score": relevance / 2}))
        node += 1
    return fragments[:count], renderings


class Renderer:
    def __init__(self, renderings: dict[tuple[str, int], ContextFragment]) -> None:
        self.renderings = renderings

    def render(self, fragment: ContextFragment, depth: int) -> ContextFragment | None:
        return self.renderings.get((fragment.uko_node, depth))


def run_stages(
    fragments: list[ContextFragment], renderer: Renderer, budget: int
) -> dict[str, float]:
    config = default_pipeline_config()
    tokenizer = get_tokenizer("cl100k")
    services = AssemblyServices(tokenizer=tokenizer, renderer=renderer, settings=config.settings)
    times: dict[str, float] = {}

    def timed(name: str, call, *args):
        start = time.perf_counter()
        result = call(*args)
        times[name] = time.perf_counter() - start
        return result

    with assembly.use(services):
        deduped = timed("4 deduplicate", config.fragment_deduplicator.deduplicate, fragments)
        resolved = timed("5 resolve depth", config.detail_depth_resolver.resolve, deduped, budget)
        scored = timed(
            "6 score", config.fragment_scorer.score, resolved, {"focus": [fragments[0].uko_node]}
        )
        packed = timed("7 pack", config.budget_packer.pack, scored, budget, None)
        ordered = timed("8 order", config.fragment_orderer.order, packed)
        used = sum(f.token_count for f in ordered) / budget
        timed(
            "9 preamble",
            config.preamble_generator.generate,
            ordered,
            ["simple-keyword", "bdn"],
            used,
            200,
        )
        parent = make_assembled_context(resolved[:300])
        timed(
            "10 skeleton",
            config.skeleton_compressor.compress,
            parent,
            [fragments[0].uko_node],
            int(budget * 0.15),
        )
    times["stages 4-10"] = sum(times.values())
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--fragments", type=int, default=1000)
    parser.add_argument("--budget", type=int, default=8000)
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    fragments, renderings = candidates(args.fragments)
    renderer = Renderer(renderings)
    tokenizer = get_tokenizer("cl100k")
    run_stages(fragments, renderer, args.budget)  # warm up
    runs = [run_stages(fragments, renderer, args.budget) for _ in range(args.runs)]
    medians = {name: statistics.median(r[name] for r in runs) for name in runs[0]}
    peer = []
    for _ in range(args.runs):
        start = time.perf_counter()
        for f in fragments:
            tokenizer.count(f.content)
        peer.append(time.perf_counter() - start)
    peer_s = statistics.median(peer)
    whole = []
    strategy = StubStrategy("simple-keyword", 0.9, fragments=fragments)
    for _ in range(args.runs):
        pipeline = ContextAssemblyPipeline(None, [strategy], tokenizer=tokenizer, renderer=renderer)
        start = time.perf_counter()
        pipeline.assemble(make_request(), None, args.budget)
        whole.append(time.perf_counter() - start)
    whole_s = statistics.median(whole)
    total = medians["stages 4-10"]
    summary = {
        "fragments": len(fragments),
        "candidate_tokens": sum(f.token_count for f in fragments),
        "budget": args.budget,
        "stages_ms": {k: round(v * 1000, 2) for k, v in medians.items()},
        "peer_count_all_tokens_ms": round(peer_s * 1000, 2),
        "ratio_to_peer": round(total / peer_s, 2),
        "whole_assembly_ms": round(whole_s * 1000, 2),
        "goal_met": total < 0.1,
    }
    if args.json:
        print(json.dumps(summary, indent=2))
        return
    print(
        f"{len(fragments)} fragments, {summary['candidate_tokens']} candidate tokens, "
        f"budget {args.budget}, median of {args.runs}"
    )
    for name, ms in summary["stages_ms"].items():
        print(f"  {name:16} {ms:8.2f} ms")
    print(
        f"  peer: count every candidate's tokens once: "
        f"{summary['peer_count_all_tokens_ms']:.2f} ms "
        f"(stages 4-10 = {summary['ratio_to_peer']}x)"
    )
    print(
        "  whole assembly (stages 1-10, recounting every fragment): "
        f"{summary['whole_assembly_ms']:.2f} ms"
    )
    print(f"  goal < 100 ms: {'yes' if summary['goal_met'] else 'NO'}")


if __name__ == "__main__":
    main()
