"""Start-up cost of the CLI against the bare interpreter, measured in the same run.

    .venv/bin/python benchmarks/startup/run.py [--runs 20]

Reports the median wall time of `python -c pass`, `cleveragents --help` and
`cleveragents plugins list` (with every plugin of this repository installed),
each as a ratio to the bare interpreter and as seconds above it.
Goal (issue: kernel): less than 0.3 s above the bare interpreter.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def measure(cmd: list[str], runs: int, env: dict[str, str]) -> float:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run(
            cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True
        )
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--json", action="store_true", help="print JSON")
    args = parser.parse_args()
    cli = str(Path(sys.executable).with_name("cleveragents"))
    with tempfile.TemporaryDirectory() as home:
        env = {**os.environ, "CLEVERAGENTS_HOME": home}
        cases = {
            "python -c pass": [sys.executable, "-c", "pass"],
            "cleveragents --help": [cli, "--help"],
            "cleveragents plugins list": [cli, "plugins", "list"],
        }
        for cmd in cases.values():  # warm the file-system cache
            subprocess.run(cmd, env=env, stdout=subprocess.DEVNULL, check=True)
        results = {name: measure(cmd, args.runs, env) for name, cmd in cases.items()}
    base = results["python -c pass"]
    rows = [
        {
            "command": name,
            "median_s": round(t, 4),
            "ratio": round(t / base, 2),
            "above_python_s": round(t - base, 4),
            "goal_met": t - base < 0.3,
        }
        for name, t in results.items()
    ]
    if args.json:
        print(json.dumps(rows, indent=2))
        return
    print(f"{'command':30} {'median s':>9} {'x python':>9} {'+s':>8}  goal <0.3s")
    for r in rows:
        print(
            f"{r['command']:30} {r['median_s']:9.3f} {r['ratio']:9.2f} "
            f"{r['above_python_s']:8.3f}  {'yes' if r['goal_met'] else 'NO'}"
        )


if __name__ == "__main__":
    main()
