"""Benchmark: remedy's log scan against plain grep on a ~1 GB journal-style log.

    python bench/bench_scan.py [--size-mb 1000] [--runs 3] [--dir DIR] [--keep]

Generates a journald-prefixed SGLang/ninja log with real error lines (from
tests/fixtures/logs) sprinkled in, then times, median of N runs each:

* ``grep -E -i 'error|failed|fatal' FILE > /dev/null`` as asked. GNU grep (3.x) notices that
  its output is /dev/null and stops at the first match, so this is not a throughput figure;
* the same grep writing its output to a file (the real cost of reading the whole log);
* ``scan_path(FILE)`` in a fresh Python process (so import and catalog load are included),
  with its peak RSS and that of its largest child (grep / wc).

Prints figures; asserts nothing. Wall time depends on how busy the machine is: CPU seconds are
printed too.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
LOGS = REPO / "tests" / "fixtures" / "logs"

NINJA_CMD = (
    "[{i}/11] /root/venv/lib/python3.12/site-packages/nvidia/cu13/bin/nvcc "
    "--generate-dependencies-with-compile -MF /root/.cache/flashinfer/0.6.11.post1/120f/cached_ops/"
    "batch_decode/csrc_batch_decode.cuda.o.d -ccbin /usr/bin/gcc -DPy_LIMITED_API=0x03090000 "
    "-D_GLIBCXX_USE_CXX11_ABI=1 -I/root/venv/lib/python3.12/site-packages/flashinfer/data/cccl/cub "
    "-isystem /usr/include/python3.12 -isystem /root/venv/lib/python3.12/site-packages/nvidia/cu13/"
    "include --compiler-options=-fPIC --expt-relaxed-constexpr -static-global-template-stub=false "
    "-gencode=arch=compute_120f,code=sm_120f -std=c++17 --threads=1 -use_fast_math -O3 -c "
    "/root/venv/lib/python3.12/site-packages/flashinfer/data/csrc/batch_decode.cu -o "
    "/root/.cache/flashinfer/0.6.11.post1/120f/cached_ops/batch_decode/csrc_batch_decode.cuda.o"
)
MESSAGES = [
    (30, 'INFO:     127.0.0.1:{port} - "GET /health_generate HTTP/1.1" 200 OK'),
    (8, 'INFO:     127.0.0.1:{port} - "POST /generate HTTP/1.1" 200 OK'),
    (3, 'INFO:     127.0.0.1:{port} - "GET /health_generate HTTP/1.1" 503 Service Unavailable'),
    (
        40,
        "Decode batch, #running-req: {n}, #token: {tok}, token usage: 0.{u:02d}, cuda graph: True, "
        "gen throughput (token/s): {tp}.{d:02d}, #queue-req: 0",
    ),
    (
        12,
        "Prefill batch, #new-seq: 1, #new-token: {n}, #cached-token: {tok}, token usage: 0.{u:02d}, "
        "#running-req: {n}, #queue-req: 0, #pending-token: 0, cuda graph: True, input throughput "
        "(token/s): {tp}.{d:02d}",
    ),
    (2, NINJA_CMD),
    (1, "Capture cuda graph bs [1, 2, 4, 8, 16, 24, 32, 40, 48, 56, 64]"),
    (1, "Load weight end. elapsed={d}.{u:02d} s, type=Qwen3ForCausalLM, avail mem=71.{u:02d} GB"),
    (1, "KV Cache is allocated. #tokens: {tok}, K size: 2.{u:02d} GB, V size: 2.{u:02d} GB"),
    (1, "Fail to set RLIMIT_NOFILE: current limit exceeds maximum limit"),
]
NOISE_ERRORS = [  # benign lines with error words, as real logs have
    "[http_server] Error: Request is disconnected from the client side (type 1). Abort request",
    "Failed to get yes/no token IDs dynamically: 'NoneType' object has no attribute 'encode'",
]


def real_error_lines() -> list[str]:
    out: list[str] = []
    for name in (
        "seed003_capture_nv_detail.log",
        "seed000_ninja_collect2.log",
        "lab_f3_link_cudart.log",
        "lab_f4_missing_cccl.log",
        "lab_f1_ptx_isa_skew.log",
    ):
        out += (LOGS / name).read_text().splitlines()
    return out


def generate(path: Path, size: int, seed: int = 1, failures: bool = True) -> tuple[int, int]:
    """Write ~``size`` bytes; returns (bytes, lines). A varied ~8 MB block is built once and
    written repeatedly with fresh timestamps, so generation takes seconds, not minutes.
    ``failures=False``: the same traffic without the real failure lines (bench/perf.py plants
    its own), so no signature matches it."""
    rnd = random.Random(seed)
    weights = [w for w, _ in MESSAGES]
    templates = [t for _, t in MESSAGES]
    errors = real_error_lines() if failures else []
    block: list[str] = []
    nbytes = 0
    i = 0
    while nbytes < 8 << 20:
        i += 1
        if errors and i % 2_000 == 0:  # ~0.05% of lines: every real error line in every block
            msg = errors[(i // 2_000) % len(errors)]
        elif i % 4_000 == 1_000:
            msg = NOISE_ERRORS[(i // 4_000) % len(NOISE_ERRORS)]
        else:
            msg = rnd.choices(templates, weights)[0].format(
                port=30000 + rnd.randrange(30000),
                n=rnd.randrange(1, 64),
                tok=rnd.randrange(100000),
                u=rnd.randrange(100),
                tp=rnd.randrange(50, 900),
                d=rnd.randrange(100),
                i=rnd.randrange(1, 12),
            )
        line = f"[2026-11-29 18:{i // 60 % 60:02d}:{i % 60:02d}] {msg}\n"
        block.append(line)
        nbytes += len(line) + 40
    total = lines = 0
    with path.open("w") as f:
        rep = 0
        while total < size:
            rep += 1
            hh, mm = divmod(rep, 60)
            prefix = (
                f"Nov 29 {hh % 24:02d}:{mm:02d}:{rep % 60:02d} gpu-host python3[{1227 + rep % 4}]: "
            )
            chunk = "".join(prefix + line for line in block)
            f.write(chunk)
            total += len(chunk)
            lines += len(block)
    return total, lines


def timed(cmd: str) -> tuple[float, float]:
    """Wall and CPU seconds of a shell command."""
    before = os.times()
    t0 = time.perf_counter()
    subprocess.run(cmd, shell=True, check=False)
    wall = time.perf_counter() - t0
    after = os.times()
    cpu = (after.children_user - before.children_user) + (
        after.children_system - before.children_system
    )
    return wall, cpu


SCAN_CHILD = """
import json, resource, sys, time
t0 = time.perf_counter()
from remedy.evidence import default_catalog, scan_path
default_catalog()
t_import = time.perf_counter() - t0
me0 = resource.getrusage(resource.RUSAGE_SELF)
t0 = time.perf_counter()
res = scan_path(sys.argv[1])
wall = time.perf_counter() - t0
me = resource.getrusage(resource.RUSAGE_SELF)
kids = resource.getrusage(resource.RUSAGE_CHILDREN)
print(json.dumps({
    "wall": wall, "import": t_import, "method": res.method, "lines": res.lines,
    "bytes": res.bytes, "symptoms": len(res.symptoms), "dropped": sum(res.dropped.values()),
    "ids": res.ids(), "suspicious": len(res.suspicious),
    "rss_mb": me.ru_maxrss / 1024, "child_rss_mb": kids.ru_maxrss / 1024,
    "cpu_self": (me.ru_utime + me.ru_stime) - (me0.ru_utime + me0.ru_stime),
    "cpu_children": kids.ru_utime + kids.ru_stime,
}))
"""


def scan_once(path: Path) -> dict[str, float]:
    env = {
        **os.environ,
        "PYTHONPATH": str(REPO / "src") + os.pathsep + os.environ.get("PYTHONPATH", ""),
    }
    t0 = time.perf_counter()
    out = subprocess.run(
        [sys.executable, "-c", SCAN_CHILD, str(path)],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    data = json.loads(out.stdout)
    data["wall_total"] = time.perf_counter() - t0
    return data


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--size-mb", type=int, default=1000)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument(
        "--dir", type=Path, default=None, help="where to write the log (default: a temp dir)"
    )
    ap.add_argument("--keep", action="store_true", help="keep the generated log")
    args = ap.parse_args()

    workdir = Path(tempfile.mkdtemp(prefix="bench_scan_", dir=args.dir))
    log = workdir / "journal.log"
    try:
        t0 = time.perf_counter()
        nbytes, nlines = generate(log, args.size_mb * 1_000_000)
        mb = nbytes / 1e6
        print(
            f"log      {log}  {mb:.1f} MB, {nlines:,} lines (generated in {time.perf_counter() - t0:.1f} s)"
        )
        print(
            f"machine  {os.cpu_count()} CPUs ({len(os.sched_getaffinity(0))} usable), load average {os.getloadavg()[0]:.2f}, {shutil.which('grep')}"
        )
        subprocess.run(f"cat {log} > /dev/null", shell=True, check=False)  # warm the page cache

        q = "'error|failed|fatal'"
        devnull, to_file, scans = [], [], []
        for _ in range(args.runs):  # interleaved, so load changes hit all three alike
            devnull.append(timed(f"grep -E -i {q} {log} > /dev/null"))
            to_file.append(timed(f"grep -E -i {q} {log} > {workdir / 'grep.out'}"))
            scans.append(scan_once(log))

        def med(xs: list[float]) -> float:
            return statistics.median(xs)

        g0 = med([w for w, _ in devnull])
        gw, gc = med([w for w, _ in to_file]), med([c for _, c in to_file])
        sw = med([s["wall"] for s in scans])
        sc = med([s["cpu_self"] + s["cpu_children"] for s in scans])
        last = scans[-1]
        print()
        print(
            f"grep -E -i {q} FILE > /dev/null : {g0:7.3f} s  (stops at the first match: not a throughput)"
        )
        print(
            f"grep -E -i {q} FILE > OUT       : {gw:7.3f} s  {mb / gw:7.0f} MB/s   cpu {gc:.2f} s"
        )
        print(
            f"scan_path(FILE)                 : {sw:7.3f} s  {mb / sw:7.0f} MB/s   cpu {sc:.2f} s"
            f"  (method {last['method']}; + {med([s['import'] for s in scans]):.2f} s import/catalog)"
        )
        print(f"throughput ratio scan / grep    : {gw / sw:.2f}   (cpu-time ratio {gc / sc:.2f})")
        print(
            f"peak RSS of the scan            : {med([s['rss_mb'] for s in scans]):.0f} MB python, "
            f"{med([s['child_rss_mb'] for s in scans]):.0f} MB largest child (grep/wc)"
        )
        print(
            f"result                          : {last['lines']:,} lines, {last['symptoms']} symptoms kept "
            f"(+{last['dropped']} over the per-signature cap), {last['suspicious']} suspicious"
        )
        print(f"signatures seen                 : {', '.join(last['ids'])}")
        print(
            "runs (wall s) grep>/dev/null:",
            [round(w, 3) for w, _ in devnull],
            "grep>OUT:",
            [round(w, 2) for w, _ in to_file],
            "scan:",
            [round(s["wall"], 2) for s in scans],
        )
    finally:
        if args.keep:
            print(f"kept {log}")
        else:
            shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    main()
