#!/usr/bin/env python3
"""Breadth: top-1 on the message-template table, for the knowledge of any commit.

Why: bench/generalize.py scores the logs users happened to post; this scores every shape the
upstream code of remedy's consumers prints for a class (tests/fixtures/templates: real output
recorded on this machine, or lines built from the upstream template each row cites). A ref's
``src/``, ``knowledge/`` and ``playbooks/`` are extracted as in generalize.py and diagnose the
table of the working tree, so the figure for main is what main's knowledge says about shapes
written after it.

    python bench/breadth.py --ref main --ref HEAD        # ratio of each ref to the first
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent))
from generalize import _extract, _git  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
TEMPLATES = ROOT / "tests" / "fixtures" / "templates"
RESULTS = ROOT / "bench" / "results"

_RUNNER = r"""
import json, sys
from pathlib import Path
tree, table = sys.argv[1], sys.argv[2]
sys.path.insert(0, tree + "/src")
import yaml
from remedy.diagnose import diagnose
from remedy.inputs import scan_logs
from remedy.knowledge.loader import load_knowledge
kb = load_knowledge()
out = {}
for r in yaml.safe_load((Path(table) / "index.yaml").read_text())["templates"]:
    sy, _su, wr = scan_logs([Path(table) / r["file"]])
    d = diagnose(kb, None, sy, wrappers=wr)
    out[r["file"]] = [h.rule for h in d.hypotheses[:3]]
print(json.dumps(out))
"""


def ranked_with(ref: str) -> dict[str, list[str]]:
    with tempfile.TemporaryDirectory(prefix="remedy-breadth-") as tmp:
        _extract(ref, Path(tmp))
        r = subprocess.run(
            [sys.executable, "-c", _RUNNER, tmp, str(TEMPLATES)],
            capture_output=True,
            text=True,
            timeout=600,
        )
        if r.returncode != 0:
            raise SystemExit(f"diagnosis with {ref} failed:\n{r.stderr[-3000:]}")
        return json.loads(r.stdout)


def score(rows: list[dict], ranked: dict[str, list[str]]) -> dict:
    top1 = top3 = unknown = 0
    misses = []
    for r in rows:
        got = ranked[r["file"]]
        unknown += not got
        ok = got[:1] == [r["class"]] if r["class"] else not got
        top1 += ok
        top3 += (r["class"] in got) if r["class"] else not got
        if not ok:
            misses.append({"file": r["file"], "class": r["class"], "ranked": got})
    n = len(rows)
    return {
        "rows": n,
        "top1": top1,
        "top3": top3,
        "unknown": unknown,
        "misses": misses,
        "top1_rate": round(top1 / n, 3),
        "top3_rate": round(top3 / n, 3),
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument(
        "--ref", action="append", help="git refs (WORKTREE = files); default main, WORKTREE"
    )
    ap.add_argument("--save", help="write the JSON report to bench/results/NAME.json")
    args = ap.parse_args()
    refs = args.ref or ["main", "WORKTREE"]
    rows = yaml.safe_load((TEMPLATES / "index.yaml").read_text())["templates"]
    rep = {"table": str(TEMPLATES.relative_to(ROOT)), "runs": []}
    for ref in refs:
        sc = score(rows, ranked_with(ref))
        commit = _git("rev-parse", "--short", ref) if ref != "WORKTREE" else "worktree"
        rep["runs"].append({"ref": ref, "commit": commit, **sc})
    batches = sorted({r["batch"] for r in rows if r.get("batch")})
    for run, ref in zip(rep["runs"], refs, strict=True):
        ranked = ranked_with(ref) if batches else {}
        run["batches"] = {
            b: score([r for r in rows if r.get("batch") == b], ranked) for b in batches
        }
    base = rep["runs"][0]
    print(
        f"template table: {len(rows)} shapes, "
        f"{sum(r['origin'] == 'recorded' for r in rows)} recorded here"
    )
    for run in rep["runs"]:
        ratio = run["top1"] / base["top1"] if base["top1"] else float("nan")
        print(
            f"  {run['ref']:10} ({run['commit']})  top-1 {run['top1']:3}/{run['rows']} "
            f"({run['top1_rate']:.1%})  top-3 {run['top3_rate']:.1%}  no cause {run['unknown']:2}"
            f"  x{ratio:.2f} vs {base['ref']}"
        )
    for b in batches:
        print(f"batch {b} (written after a commit, scored before any change for it):")
        for run in rep["runs"]:
            sc = run["batches"][b]
            print(f"  {run['ref']:10} ({run['commit']})  top-1 {sc['top1']}/{sc['rows']}")
    if args.save:
        RESULTS.mkdir(parents=True, exist_ok=True)
        (RESULTS / f"{args.save}.json").write_text(json.dumps(rep, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
