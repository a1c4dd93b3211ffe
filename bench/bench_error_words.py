#!/usr/bin/env python3
"""A log whose every line holds an error word: the matcher's cost per candidate line.

Why: 200k lines each holding an error word (`error: step N x`, a journal's ERROR lines) took
`remedy diagnose` ~89 s on a loaded 2-CPU host. Every such line is a prefilter candidate, and
for each the matcher tested every needle of the catalog (~450) three times: in `match`, in
`wrap_candidates` (which also looks for a needle cut at the line's end) and in
`lead_candidates`. The cost was lines x needles, ~230 us a line. Needles are now looked up by
the line's trigrams (`LineMatcher._among`).

Prints, per line shape, the scan's time per line with the index and with every needle tested
(the old loop, put back by patching `_among`), their ratio, and the ratio of the time per
line at N and at N/10 lines (1.0: linear in the log's length).

    python bench/bench_error_words.py [--lines 200000]
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from collections.abc import Callable
from typing import Any

SHAPES: dict[str, Callable[[int], str]] = {
    "error word": lambda i: f"error: step {i} x\n",
    "journal ERROR": lambda i: f"May 25 20:37:37 host python[{i}]: ERROR something failed {i}\n",
    "sglang error": lambda i: f"[2026-01-01 00:00:{i % 60:02d}] worker {i}: error: failed at {i}\n",
    "cuda error": lambda i: f"RuntimeError: CUDA error: an illegal memory access {i}\n",
}


def _scan(path: str, every_needle: bool) -> float:
    """CPU seconds of one Python-path scan of ``path``."""
    from remedy.evidence import matcher
    from remedy.evidence.catalog import default_catalog
    from remedy.evidence.scan import scan_path

    real = matcher.LineMatcher._among
    if every_needle:

        def all_needles(self: Any, text: str, needles: Any, by_tri: Any) -> Any:
            return needles

        matcher.LineMatcher._among = all_needles  # type: ignore[method-assign]
    try:
        cat = default_catalog()
        t = time.process_time()
        scan_path(path, catalog=cat, method="python")
        return time.process_time() - t
    finally:
        matcher.LineMatcher._among = real  # type: ignore[method-assign]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--lines", type=int, default=200_000)
    n = ap.parse_args().lines
    with tempfile.TemporaryDirectory() as d:
        print(f"{'shape':15} {'us/line':>8} {'old us/line':>12} {'old/new':>8} {'N vs N/10':>10}")
        for name, line in SHAPES.items():
            per: dict[int, float] = {}
            for count in (n // 10, n):
                path = os.path.join(d, f"{count}.log")
                with open(path, "w") as f:
                    f.writelines(line(i) for i in range(count))
                per[count] = _scan(path, False) / count
            old = _scan(os.path.join(d, f"{n // 10}.log"), True) / (n // 10)
            print(
                f"{name:15} {per[n] * 1e6:8.1f} {old * 1e6:12.1f} {old / per[n // 10]:8.1f}x"
                f" {per[n] / per[n // 10]:10.2f}"
            )


if __name__ == "__main__":
    main()
