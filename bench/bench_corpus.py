#!/usr/bin/env python3
"""Log-only diagnosis accuracy on the real-log corpus (tests/fixtures/corpus/index.yaml).

For every classified log: scan it, rank hypotheses with no facts (remedy diagnose --log), and
check whether the right class is first (top-1) or among the first three (top-3). Logs of class
null must name no cause; their check is that the most suspicious line is the first real error.

    python bench/bench_corpus.py            # summary, per class, misses
    python bench/bench_corpus.py --json     # machine-readable
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections import defaultdict
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from remedy.diagnose import diagnose  # noqa: E402
from remedy.evidence.suspicious import with_unexplained  # noqa: E402
from remedy.inputs import scan_logs  # noqa: E402
from remedy.knowledge.loader import load_knowledge  # noqa: E402

CORPUS = ROOT / "tests" / "fixtures" / "corpus"


def run() -> dict:
    kb = load_knowledge()
    rows = yaml.safe_load((CORPUS / "index.yaml").read_text())["logs"]
    results = []
    t0 = time.perf_counter()
    for r in rows:
        symptoms, suspicious, wrappers = scan_logs([CORPUS / r["file"]])
        d = diagnose(kb, None, symptoms, wrappers=wrappers)
        ranks = [h.rule for h in d.hypotheses]
        res = {"file": r["file"], "class": r["class"], "thread": r["thread"], "ranked": ranks[:3]}
        if r["class"] is None:
            shown = with_unexplained(
                suspicious, symptoms, wrappers, d.hypotheses, [str(CORPUS / r["file"])]
            )
            first = r.get("first_error_line")
            # 'none': the copy holds no error line, so none may be shown
            res["ok_unknown"] = not ranks and (
                not shown if first == "none" else bool(shown) and shown[0].line == first
            )
        else:
            res["top1"] = ranks[:1] == [r["class"]]
            res["top3"] = r["class"] in ranks[:3]
            res["rank"] = ranks.index(r["class"]) + 1 if r["class"] in ranks else None
        results.append(res)
    elapsed = time.perf_counter() - t0
    cls = [x for x in results if x["class"]]
    unk = [x for x in results if not x["class"]]
    per_class: dict[str, list[int]] = defaultdict(lambda: [0, 0, 0])
    for x in cls:
        c = per_class[x["class"]]
        c[0] += 1
        c[1] += x["top1"]
        c[2] += x["top3"]
    return {
        "logs": len(cls),
        "classes": len(per_class),
        "top1": sum(x["top1"] for x in cls),
        "top3": sum(x["top3"] for x in cls),
        "unknown_logs": len(unk),
        "unknown_ok": sum(x["ok_unknown"] for x in unk),
        "seconds": round(elapsed, 3),
        "per_class": {
            k: {"logs": v[0], "top1": v[1], "top3": v[2]} for k, v in sorted(per_class.items())
        },
        "misses": [x for x in cls if not x["top1"]],
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    rep = run()
    if args.json:
        print(json.dumps(rep, indent=2))
        return 0
    n = rep["logs"]
    print(
        f"corpus: {n} classified logs, {rep['classes']} classes; "
        f"{rep['unknown_logs']} logs of no known class"
    )
    print(f"top-1: {rep['top1']}/{n} = {rep['top1'] / n:.1%}")
    print(f"top-3: {rep['top3']}/{n} = {rep['top3'] / n:.1%}")
    print(
        f"unknown logs: {rep['unknown_ok']}/{rep['unknown_logs']} name no cause and point at "
        "the first real error"
    )
    print(f"scan + diagnosis of all logs: {rep['seconds']} s")
    print("\nper class (logs, top-1, top-3):")
    for k, v in rep["per_class"].items():
        print(f"  {k:32} {v['logs']:2} {v['top1']:2} {v['top3']:2}")
    if rep["misses"]:
        print("\nnot first:")
        for m in rep["misses"]:
            print(f"  {m['file']:45} rank {m['rank']}  ranked {m['ranked']}  ({m['thread']})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
