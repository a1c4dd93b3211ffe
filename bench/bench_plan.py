#!/usr/bin/env python3
"""Prints: `remedy plan --example …` wall time, `remedy --help` start-up, in-process planning.

Each figure is a median over several runs, next to a baseline measured in the same run
(`python -c pass` for process start-up), so the ratio is comparable across machines.
Targets (issue 2): plan < 1 s, start-up < 0.3 s.
"""

from __future__ import annotations

import statistics
import subprocess
import sys
import time
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]


def wall(cmd: list[str], n: int) -> float:
    times = []
    for _ in range(n):
        t = time.perf_counter()
        subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
        times.append(time.perf_counter() - t)
    return statistics.median(times)


def main() -> None:
    py = sys.executable
    base = wall([py, "-c", "pass"], 10)
    helps = wall([py, "-m", "remedy", "--help"], 10)
    print(f"python -c pass (baseline)              {base * 1000:7.1f} ms")
    print(
        f"remedy --help                          {helps * 1000:7.1f} ms  "
        f"({helps / base:.1f}x baseline; target < 300 ms)"
    )
    for ex in ("seed-sm120-pip-cu13", "seed-sm120-system-cuda128"):
        t = wall([py, "-m", "remedy", "plan", "--example", ex, "--json"], 7)
        print(
            f"remedy plan --example {ex:26s} {t * 1000:7.1f} ms  "
            f"({t / base:.1f}x baseline; target < 1000 ms)"
        )
    sys.path.insert(0, str(ROOT / "src"))
    from remedy.knowledge.loader import load_knowledge
    from remedy.model import Facts
    from remedy.planner.plan import make_plan

    t = time.perf_counter()
    kb = load_knowledge()
    load = time.perf_counter() - t
    print(f"load + compile knowledge (in-process)  {load * 1000:7.1f} ms")
    for ex in ("seed-sm120-pip-cu13", "seed-sm120-system-cuda128"):
        facts = Facts.model_validate(
            yaml.safe_load((ROOT / "src/remedy/examples" / ex / "facts.yaml").read_text())
        )
        times = []
        for _ in range(20):
            t = time.perf_counter()
            make_plan(kb, facts)
            times.append(time.perf_counter() - t)
        print(f"make_plan {ex:28s} (in-process) {statistics.median(times) * 1000:7.1f} ms")


if __name__ == "__main__":
    main()
