#!/usr/bin/env python3
"""The floor under ``remedy diagnose --log`` on a big log: the scan alone, no knowledge.

Why: issue 18 asks for grep's throughput as a whole process. This child does only what any
remedy process must before it can say anything about a log: start Python, import Hyperscan,
load the compiled literal database from remedy's private cache (written by an ordinary
``remedy diagnose`` run of the same checkout) and read every candidate line the forked scan
workers find. No knowledge, no diagnosis, no output but the count. bench/perf.py times it in
turn with grep and remedy, so ``grep / floor`` bounds what any diagnosis built on this scan
could reach.

    python bench/scan_floor.py LOG        # prints: candidates, and each phase in ms
"""

from __future__ import annotations

import sys
import time


def main(path: str) -> int:
    t0 = time.perf_counter()
    from remedy.cachefile import read_private
    from remedy.evidence import early, fastscan
    from remedy.evidence.reader import MATCH_CAP

    hs = fastscan.engine()
    body = read_private(early.cache_path())
    if hs is None or body is None:
        print(
            "no Hyperscan or no scan-engine cache: run remedy diagnose --log once", file=sys.stderr
        )
        return 2
    t1 = time.perf_counter()
    patterns = early._cached_engine(hs, body)
    if patterns is None:
        print("the scan-engine cache is stale: run remedy diagnose --log once", file=sys.stderr)
        return 2
    job = fastscan.Job(path, patterns, cap=MATCH_CAP)

    class Totals:
        lines = 0
        bytes = 0

    try:
        n = sum(1 for _ in job.candidates(Totals()))
    finally:
        job.close()
    t2 = time.perf_counter()
    print(f"{n} candidates; imports {1e3 * (t1 - t0):.0f} ms, scan {1e3 * (t2 - t1):.0f} ms")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
