#!/usr/bin/env python3
"""Which host facts the corpus logs PRINT beside their error (tune-ce, session 42, issue 17).

Why: most flagged misses (`expect_top1: false` / `expect_unknown: false` in
tests/fixtures/corpus/index.yaml) fail on a line that is word for word a line ranked right under
another class; what separates them is a host fact (driver vs the build's CUDA, the GPU, the
wheel's +cuXYZ tag, a container). This counts, per fact kind, the rows whose .log prints such a
fact at all: over every row, over the flagged rows, and per flagged class, and lists the flagged
rows that print one. The flagged count is the ceiling of any rule that reads printed facts.
Text only (regexes below, the shapes upstream prints them); no diagnosis is run.

    python bench/printed_facts.py [--list]
"""

from __future__ import annotations

import argparse
import re
from collections import Counter, defaultdict
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
CORPUS = ROOT / "tests" / "fixtures" / "corpus"

# fact kind -> the shape upstream prints it in (nvidia-smi, torch/utils/collect_env.py,
# torch.__version__, pip, nvcc --version, Warp's banner, NCCL's INFO lines, docker)
FACTS: dict[str, re.Pattern[str]] = {
    "nvidia-smi header (driver + CUDA)": re.compile(
        r"Driver Version:\s*\d+\.\d+.*CUDA Version:\s*\d+\.\d+"
    ),
    "collect_env driver": re.compile(r"Nvidia driver version:\s*\d+"),
    "collect_env torch/CUDA build": re.compile(
        r"PyTorch version:\s*\S+|CUDA used to build PyTorch:|CUDA runtime version:"
    ),
    "collect_env GPU": re.compile(r"GPU models and configuration:|^GPU \d+: NVIDIA", re.M),
    "torch +cuXYZ tag": re.compile(
        r"\b(?:torch|pytorch)\b[^\n]{0,20}?\d+\.\d+(?:\.\d+)?(?:\.dev\d+)?\+cu\d{2,3}", re.I
    ),
    "any +cuXYZ / +cudaX.Y tag": re.compile(r"\d\+cu(?:da)?\d+(?:\.\d+)?\b"),
    "torch.version.cuda print": re.compile(r"torch\.version\.cuda|torch\.__version__"),
    "pip nvidia-*-cuXX wheel": re.compile(r"nvidia-[a-z-]+-cu1[1-3]\b"),
    "nvcc --version release": re.compile(r"release \d+\.\d+, V\d"),
    "Warp banner (toolkit + driver)": re.compile(r"CUDA Toolkit \d+\.\d+, Driver \d+\.\d+"),
    "NCCL cudaDriverVersion": re.compile(r"cudaDriverVersion \d+"),
    "docker --gpus / CUDA image tag": re.compile(
        r"--gpus|nvidia/cuda:\d+\.\d+|lmsysorg/sglang:|vllm/vllm-openai"
    ),
    "driver version (any wording)": re.compile(r"driver(?: version)?[:\s]+\d{3}\.\d+", re.I),
    "compute capability / sm_XY": re.compile(
        r"compute capability\s*\(?\s*\d+[.,]\s*\d+|capability\s*=?\s*\(\d+,\s*\d+\)"
        r"|\bsm_?\d{2,3}[a-z]?\b",
        re.I,
    ),
    "GPU model": re.compile(
        r"NVIDIA (?:GeForce |RTX |Tesla |A\d|H\d|L\d|B\d)|Tesla [KPVTM]\d+|GeForce (?:GTX|RTX)",
        re.I,
    ),
    "LD_LIBRARY_PATH": re.compile(r"LD_LIBRARY_PATH"),
}
# kinds that state a version pair's side (driver, a build's CUDA): the ones a driver/build rule
# can read; GPU names and sm_XY are counted separately (most sm_XY are the error line itself)
VERSION_KINDS = [
    k for k in FACTS if k not in ("compute capability / sm_XY", "GPU model", "LD_LIBRARY_PATH")
]


def flagged(row: dict) -> bool:
    return row.get("expect_top1") is False or row.get("expect_unknown") is False


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--list", action="store_true", help="list the flagged rows that print one")
    args = ap.parse_args()
    rows = yaml.safe_load((CORPUS / "index.yaml").read_text())["logs"]
    every: Counter[str] = Counter()
    flag: Counter[str] = Counter()
    per_class: dict[str, Counter[str]] = defaultdict(Counter)
    n_all = n_flag = any_all = any_flag = ver_all = ver_flag = 0
    listed: list[tuple[str, str, list[str]]] = []
    for row in rows:
        path = CORPUS / row["file"]
        if not path.is_file():
            continue
        text = path.read_text(errors="replace")
        hits = [k for k, rx in FACTS.items() if rx.search(text)]
        n_all += 1
        every.update(hits)
        any_all += bool(hits)
        ver_all += any(k in VERSION_KINDS for k in hits)
        if not flagged(row):
            continue
        n_flag += 1
        cls = str(row.get("class"))
        per_class[cls]["rows"] += 1
        flag.update(hits)
        per_class[cls].update(hits)
        any_flag += bool(hits)
        ver_flag += any(k in VERSION_KINDS for k in hits)
        if hits:
            listed.append((row["file"], cls, hits))
    print(f"rows {n_all}, flagged {n_flag}")
    print(f"rows printing any fact: {any_all} all, {any_flag} flagged")
    print(f"rows printing a driver/build-CUDA fact: {ver_all} all, {ver_flag} flagged")
    print(f"\n{'fact kind':38s} {'all':>5s} {'flagged':>8s}")
    for k in FACTS:
        print(f"{k:38s} {every[k]:5d} {flag[k]:8d}")
    print("\nflagged rows per class (rows, and the fact kinds printed):")
    for cls, c in sorted(per_class.items(), key=lambda kv: (-kv[1]["rows"], kv[0])):
        kinds = ", ".join(f"{k} {v}" for k, v in c.items() if k != "rows")
        print(f"  {cls:40s} {c['rows']:3d}  {kinds}")
    if args.list:
        print("\nflagged rows that print a fact:")
        for file, cls, hits in listed:
            print(f"  {file:55s} {cls:30s} {'; '.join(hits)}")


if __name__ == "__main__":
    main()
