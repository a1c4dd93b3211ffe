"""One scan worker's CPU per byte, Hyperscan over the ~67 anchors against a database of all
~210 literals (fastscan.USE_ANCHORS), measured in the same run, interleaved.

    python bench/scan_engine.py LOG [--mb 64] [--rounds 9] [--vs-src OTHER/src]

LOG: any log, e.g. the journal bench/perf.py generates (keep one with ``--dir`` and a copy).
Prints, for the first ``--mb`` MB of it: Hyperscan alone over a cached buffer (1 MiB windows,
the callback appending hits as the worker's does), and ``fastscan.scan_segment`` whole (read,
Hyperscan, newlines, gates), each as ns/byte of process CPU (min and median of the rounds:
on a shared host the min is the figure least disturbed) and as a ratio to the literal
database. Asserts that both give the same candidates (line, bytes, literals). ``--vs-src``:
also the worker of another checkout's fastscan.py (e.g. main, ``git archive main src``), in
the same rounds, with the same assertion.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "src"))

from remedy.evidence import default_catalog, fastscan, prefilter, reader  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("log", type=Path)
    ap.add_argument("--mb", type=int, default=64)
    ap.add_argument("--rounds", type=int, default=9)
    ap.add_argument("--vs-src", type=Path, help="another checkout's src: its worker too")
    args = ap.parse_args()
    pats = prefilter.engine_patterns(default_catalog())
    engines = {}
    for anchors in (False, True):
        fastscan.USE_ANCHORS = anchors
        fastscan._DBS.clear()
        engines[anchors] = fastscan.database(pats)
    other = None
    if args.vs_src:
        import importlib.util

        where = args.vs_src / "remedy" / "evidence" / "fastscan.py"
        spec = importlib.util.spec_from_file_location("other_fastscan", where)
        assert spec is not None and spec.loader is not None
        other = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(other)
        other_eng = other.database(pats)
    fd = os.open(args.log, os.O_RDONLY)
    size = os.fstat(fd).st_size
    n = min(size, args.mb << 20)
    n += os.pread(fd, 1 << 16, n).find(b"\n") + 1 if n < size else 0
    data = bytearray(os.pread(fd, n, 0))

    def hs_only(eng: fastscan.Engine) -> None:
        hits: list[tuple[int, int]] = []
        view = memoryview(data)
        for a in range(0, len(data), 1 << 20):
            eng.db.scan(
                view[a : a + (1 << 20)],
                match_event_handler=lambda i, _f, to, _fl, _c: hits.append((to, i)),
            )

    def worker(eng: fastscan.Engine) -> list[tuple[int, bytes, tuple[int, ...]]]:
        got = fastscan.scan_segment(fd, 0, len(data), eng, reader.MATCH_CAP, [])
        return [(ln, raw, tuple(sorted(ids))) for ln, raw, ids in got]

    times: dict[tuple[str, bool], list[float]] = {}
    outs: dict[bool, object] = {}
    for _ in range(args.rounds):
        for anchors, eng in engines.items():
            for what, fn in (("hyperscan", hs_only), ("worker", worker)):
                c0 = time.process_time()
                out = fn(eng)
                times.setdefault((what, anchors), []).append(
                    (time.process_time() - c0) / len(data) * 1e9
                )
                if what == "worker":
                    outs[anchors] = out
        if other is not None:
            c0 = time.process_time()
            got = other.scan_segment(fd, 0, len(data), other_eng, reader.MATCH_CAP, [])
            out = [(ln, raw, tuple(sorted(ids))) for ln, raw, ids in got]
            times.setdefault(("other", False), []).append(
                (time.process_time() - c0) / len(data) * 1e9
            )
            assert out == outs[True], f"{args.vs_src} gave other candidates"
    assert outs[True] == outs[False], "anchors and literals gave different candidates"
    print(
        f"scan_engine: {len(data) / 1e6:.0f} MB of {args.log}, {args.rounds} rounds,"
        f" {len(pats)} literals, {len(engines[True].anchors or [])} anchors,"
        f" load {' '.join(f'{x:.2f}' for x in os.getloadavg())}"
    )
    for what in ("hyperscan", "worker"):
        base = min(times[(what, False)])
        for anchors in (False, True):
            v = sorted(times[(what, anchors)])
            name = "anchors" if anchors else "literals"
            print(
                f"  {what:9s} {name:8s} min {v[0]:.3f} ns/B  median {v[len(v) // 2]:.3f}"
                f"  (min vs literals {v[0] / base:.2f}x)"
            )
    if other is not None:
        v = sorted(times[("other", False)])
        mine = sorted(times[("worker", True)])
        print(
            f"  worker    {str(args.vs_src)}: min {v[0]:.3f} ns/B  median {v[len(v) // 2]:.3f};"
            f" this checkout vs it: min {mine[0] / v[0]:.2f}x,"
            f" median {mine[len(mine) // 2] / v[len(v) // 2]:.2f}x"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
