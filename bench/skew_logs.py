#!/usr/bin/env python3
"""Log-only diagnosis of the real tool output recorded in tests/fixtures/skew (record.sh: nvcc
and ptxas 13.0, ninja, gcc-12), with the knowledge of two refs, as a ratio to the baseline ref.

Why: the corpus (bench/generalize.py) holds few logs that state two versions; these recorded
builds each fail on one version pair, in the shapes the consumers print them. They were written
alongside the pair model, so this is a regression check, not a held-out figure.

    python bench/skew_logs.py --base main --ref HEAD
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from generalize import _extract  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
LOGS = ROOT / "tests" / "fixtures" / "skew"
EXPECT = {
    "ninja-unknown-target.log": "toolkit-knows-target-archs",  # arch list (9.0a, 13.0)
    "nvcc-removed-arch.log": "arch-supported-by-toolkit",  # one plain target, removed in 13.0
    "nvcc-unknown-arch.log": "arch-supported-by-toolkit",
    "ptxas-newer-ptx.log": "ptxas-accepts-cicc-ptx",
    "ninja-cxx-dialect.log": "cxx-dialect-meets-toolkit",
}
_RUN = r"""
import json, sys
sys.path.insert(0, sys.argv[1] + "/src")
from remedy.evidence import scan_path
from remedy.diagnose import diagnose
from remedy.knowledge.loader import load_knowledge
from remedy.evidence.catalog import load_catalog
from pathlib import Path
kb = load_knowledge()
cat = load_catalog(Path(sys.argv[1]) / "knowledge" / "signatures.yaml")
wr = {s.id for s in cat.signatures if getattr(s, "wrapper", False)}
out = {}
for f in sys.argv[2:]:
    res = scan_path(f, catalog=cat)
    out[Path(f).name] = [h.rule for h in diagnose(kb, None, res.symptoms, wrappers=wr).hypotheses[:3]]
print(json.dumps(out))
"""


def ranked(ref: str) -> dict[str, list[str]]:
    with tempfile.TemporaryDirectory(prefix="remedy-skew-") as tmp:
        _extract(ref, Path(tmp))
        files = [str(LOGS / n) for n in EXPECT]
        r = subprocess.run(
            [sys.executable, "-c", _RUN, tmp, *files], capture_output=True, text=True, timeout=300
        )
        if r.returncode != 0:
            raise SystemExit(f"{ref}: {r.stderr[-2000:]}")
        return json.loads(r.stdout)


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--base", default="main")
    ap.add_argument("--ref", default="HEAD")
    args = ap.parse_args()
    top1 = {}
    for ref in (args.base, args.ref):
        got = ranked(ref)
        top1[ref] = sum(got[n][:1] == [c] for n, c in EXPECT.items())
        print(f"{ref}: top-1 {top1[ref]}/{len(EXPECT)}")
        for n, c in EXPECT.items():
            print(f"  {'ok  ' if got[n][:1] == [c] else 'MISS'} {n}: {got[n][:2]} (want {c})")
    base = top1[args.base] or 1
    print(f"{args.ref} top-1 vs {args.base}: {top1[args.ref] / base:.2f}x")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
