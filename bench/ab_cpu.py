#!/usr/bin/env python3
"""Start-up A/B of two remedy source trees: CPU time from wait4 (microseconds; bench/perf.py's
/usr/bin/time reports 10 ms steps, too coarse for a ~20 ms change), runs alternated A B B A ...
so both sides see the same load. Prints medians and the A/B ratios with the load average.

    python bench/ab_cpu.py --a src --b /tmp/base/src --runs 30 -- diagnose --log FILE --json
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time


def run(src: str, args: list[str]) -> tuple[float, float]:
    """(wall s, CPU s) of one `python -m remedy ARGS` with ``src`` first on the path."""
    env = {**os.environ, "PYTHONPATH": src}
    t = time.perf_counter()
    p = subprocess.Popen(
        [sys.executable, "-m", "remedy", *args],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env=env,
    )
    _, _, ru = os.wait4(p.pid, 0)
    return time.perf_counter() - t, ru.ru_utime + ru.ru_stime


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--a", required=True, help="the source tree measured (PYTHONPATH)")
    ap.add_argument("--b", required=True, help="the baseline source tree")
    ap.add_argument("--runs", type=int, default=20)
    ap.add_argument("args", nargs="+", help="remedy's arguments (after --)")
    o = ap.parse_args()
    sides = {"A": o.a, "B": o.b}
    for src in sides.values():  # bytecode and remedy's caches written, unmeasured
        run(src, o.args)
        run(src, o.args)
    res: dict[str, list[tuple[float, float]]] = {k: [] for k in sides}
    for i in range(o.runs):
        order = list(sides) if i % 2 == 0 else list(reversed(sides))
        for k in order:
            res[k].append(run(sides[k], o.args))
    med = {
        k: (statistics.median(w for w, _ in v), statistics.median(c for _, c in v))
        for k, v in res.items()
    }
    for k, (w, c) in med.items():
        print(f"{k} {sides[k]}: wall {w * 1000:.1f} ms  cpu {c * 1000:.1f} ms")
    print(
        f"A/B: wall {med['A'][0] / med['B'][0]:.3f}  cpu {med['A'][1] / med['B'][1]:.3f}"
        f"  ({o.runs} runs each; load {' '.join(f'{x:.2f}' for x in os.getloadavg())})"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
