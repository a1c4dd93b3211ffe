#!/usr/bin/env python3
"""Issue 18's figures, each as a ratio to a baseline measured in the same run, with peak RSS.

    python bench/perf.py                         # everything (4 GB scan skipped if /tmp is short)
    python bench/perf.py --only scan --sizes 100,1000
    python bench/perf.py --src /path/to/other/src  # measure another checkout's code, same load

* scan: ``remedy diagnose --log FILE --json`` as a whole process against
  ``grep -E -i 'error|failed|fatal' FILE > OUT`` (to a file: GNU grep stops at the first match
  when its output is /dev/null), run in turn (A B A B ...); the figure is grep's wall time over
  remedy's (>= 1.0: remedy reads the log at least as fast as grep). The log is journal-style
  (bench_scan.py's generator, whose background carries no signature) with real failure lines
  from tests/fixtures/logs planted at known line numbers: every planted line must come back as
  a symptom at its line; the symptom list's digest is printed so two checkouts can be compared.
* plan: ``make_plan`` on the seed-sm120-system-cuda128 facts grown to N (toolkit prefix + venv)
  pairs (a build host: venvs with pip CUDA wheels whose nvcc releases vary, so each is a CUDA_HOME
  candidate), or N services, or N consumers, or N toolkits of bench/gen_facts_varied.py's shapes
  (gen-system, gen-pipvenv, gen-conda, gen-mixed; "+log": with lab_f3_link_cudart.log's
  symptoms, the shape that was quadratic); each N in a fresh process; figure
  time(1000) / time(100).
* start-up: ``remedy --help`` and ``remedy plan --example seed-sm120-pip-cu13 --json`` against
  ``python -c pass``.
* fleet: inventory parse + ``--limit`` selection at 1,000 and 10,000 hosts (ratio per host);
  a simulated 1,000-host rollout on a fake transport whose per-host latencies are the ones
  recorded from real sandbox SSH hosts (bench/results/host-latencies.json).

Prints figures; asserts nothing except that planted lines are found (a wrong scan is not a
fast scan). Generated logs live in a temp dir under --dir (default /tmp) and are deleted.
"""

from __future__ import annotations

import argparse
import hashlib
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

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))

from bench_scan import generate  # noqa: E402

LOGS = ROOT / "tests" / "fixtures" / "logs"
EXAMPLE = ROOT / "src" / "remedy" / "examples" / "seed-sm120-system-cuda128" / "facts.yaml"
LATENCIES = ROOT / "bench" / "results" / "host-latencies.json"


def run_measured(cmd: list[str], env: dict[str, str], out: str | int) -> tuple[float, float, int]:
    """(wall s, cpu s, peak RSS KiB) of one run. Through /usr/bin/time when present: a child
    forked from this (large) Python process would report this process's RSS as its peak."""
    timer = shutil.which("time") or "/usr/bin/time"
    stats = tempfile.NamedTemporaryFile(prefix="perf-time-", delete=False)
    stats.close()
    use_time = os.path.exists(timer)
    full = [timer, "-o", stats.name, "-f", "%U %S %M", *cmd] if use_time else cmd
    t0 = time.perf_counter()
    with open(out, "wb") if isinstance(out, str) else open(os.devnull, "wb") as sink:
        proc = subprocess.Popen(full, stdout=sink, stderr=subprocess.DEVNULL, env=env)
        _, status, ru = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t0
    proc.returncode = os.waitstatus_to_exitcode(status)
    cpu, rss = ru.ru_utime + ru.ru_stime, ru.ru_maxrss
    if use_time:
        try:
            u, s_, m = Path(stats.name).read_text().split()[-3:]
            cpu, rss = float(u) + float(s_), int(m)
        except (ValueError, OSError):
            pass
    os.unlink(stats.name)
    return wall, cpu, rss


def med(xs: list[float]) -> float:
    return statistics.median(xs)


# ---------------------------------------------------------------------------------------------
# scan
# ---------------------------------------------------------------------------------------------


# the background's benign "Request is disconnected" lines match this one (info) signature
BACKGROUND_SIGNATURES = {"sglang-client-disconnected"}


def failure_lines(src: Path) -> list[str]:
    """Corpus lines that alone make a symptom (so each planted line must be found by itself)."""
    code = (
        "import json,sys\nfrom remedy.evidence import scan_lines\nout=[]\n"
        f"BACKGROUND = {sorted(BACKGROUND_SIGNATURES)!r}\nBACKGROUND = set(BACKGROUND)\n"
        "for l in json.load(sys.stdin):\n"
        "    try: r=scan_lines([l])\n    except Exception: continue\n"
        "    ids = {s.signature for s in r.symptoms}\n"
        "    if ids and not ids & BACKGROUND: out.append(l)\n"
        "print(json.dumps(out))"
    )
    lines: list[str] = []
    for p in sorted(LOGS.glob("*.log")):
        for ln in p.read_text(errors="replace").splitlines():
            if ln.strip() and ln not in lines:
                lines.append(ln)
    env = {**os.environ, "PYTHONPATH": str(src)}
    res = subprocess.run(
        [sys.executable, "-c", code],
        input=json.dumps(lines),
        capture_output=True,
        text=True,
        env=env,
        check=True,
    )
    return json.loads(res.stdout)


def plant(path: Path, size: int, lines: list[str], per_sig_cap: int = 40) -> list[int]:
    """Generate a ~``size``-byte log whose background has no signature, then insert the
    failure lines, evenly spread; returns their 1-based line numbers."""
    tmp = path.with_suffix(".bg")
    generate(tmp, size, failures=False)
    total = sum(1 for _ in tmp.open("rb"))
    k = min(len(lines), per_sig_cap)
    picks = lines[:k]
    at = {total * (i + 1) // (k + 1): ln for i, ln in enumerate(picks)}
    planted: list[int] = []
    with tmp.open("rb") as src, path.open("wb") as dst:
        for n, raw in enumerate(src, 1):
            dst.write(raw)
            if n in at:
                dst.write(b"Nov 29 12:00:00 gpu-host python3[1227]: " + at[n].encode() + b"\n")
                planted.append(n + len(planted) + 1)
    tmp.unlink()
    return planted


def scan_bench(args: argparse.Namespace, env: dict[str, str], work: Path) -> None:
    lines = failure_lines(Path(env["PYTHONPATH"]))
    print(f"scan: {len(lines)} corpus failure lines that each make a symptom alone")
    sides = [("remedy", env)]
    # the scan alone, no knowledge (bench/scan_floor.py): what any diagnosis built on it can reach
    floor = [sys.executable, str(ROOT / "bench" / "scan_floor.py")]
    if args.vs_src:  # the other checkout, in turn with this one and grep, same log, same load
        sides.append(("other", {**env, "PYTHONPATH": str(args.vs_src.resolve())}))
    free = shutil.disk_usage(work).free
    for mb in args.sizes:
        if mb * 1_000_000 * 2.2 > free:
            print(f"scan {mb} MB: SKIPPED ({free / 1e9:.1f} GB free in {work})")
            continue
        log = work / f"journal-{mb}.log"
        t0 = time.perf_counter()
        planted = plant(log, mb * 1_000_000, lines)
        size = log.stat().st_size
        gen = time.perf_counter() - t0
        subprocess.run(["cat", str(log)], stdout=subprocess.DEVNULL, check=False)
        grep_cmd = ["grep", "-E", "-i", "error|failed|fatal", str(log)]
        rem_cmd = [sys.executable, "-m", "remedy", "diagnose", "--log", str(log), "--json"]
        runs = args.runs if mb < 4000 else max(1, args.runs - 1)
        g: list[tuple[float, float, int]] = []
        r: dict[str, list[tuple[float, float, int]]] = {k: [] for k, _ in sides}
        ratios: dict[str, list[float]] = {k: [] for k, _ in sides}
        cpu_ratios: dict[str, list[float]] = {k: [] for k, _ in sides}
        fl: list[tuple[float, float, int]] = []
        for _ in range(runs):
            gw = run_measured(grep_cmd, env, str(work / "grep.out"))
            g.append(gw)
            for label, e in sides:
                rw = run_measured(rem_cmd, e, str(work / f"{label}.json"))
                r[label].append(rw)
                ratios[label].append(gw[0] / rw[0])
                cpu_ratios[label].append(gw[1] / max(rw[1], 1e-9))
            fl.append(run_measured([*floor, str(log)], env, str(work / "floor.out")))
        gm = med([x[0] for x in g])
        print(
            f"scan {size / 1e6:6.0f} MB: grep -E -i 'error|failed|fatal' {gm:6.2f} s"
            f" ({size / 1e6 / gm:5.0f} MB/s, cpu {med([x[1] for x in g]):5.2f} s,"
            f" RSS {med([x[2] for x in g]) / 1024:3.0f} MiB); generated in {gen:.0f} s"
        )
        fm = med([x[0] for x in fl])
        print(
            f"  {'floor: the scan alone, no knowledge':38s} {fm:6.2f} s ({size / 1e6 / fm:5.0f} MB/s,"
            f" cpu {med([x[1] for x in fl]):5.2f} s, peak RSS {max(x[2] for x in fl) / 1024:3.0f}"
            f" MiB): throughput vs grep {med([g[i][0] / fl[i][0] for i in range(len(fl))]):.2f}x"
            f" ({(work / 'floor.out').read_text().strip()})"
        )
        for label, _ in sides:
            rs = r[label]
            rm = med([x[0] for x in rs])
            data = json.loads((work / f"{label}.json").read_text())
            syms = [(s["signature"], s["line"]) for s in data["symptoms"]]
            found = {ln for _, ln in syms}
            missing = [ln for ln in planted if ln not in found]
            digest = hashlib.sha256(json.dumps(syms).encode()).hexdigest()[:12]
            name = "remedy diagnose --log" if label == "remedy" else f"  same, {args.vs_src}"
            print(
                f"  {name:38s} {rm:6.2f} s ({size / 1e6 / rm:5.0f} MB/s, cpu"
                f" {med([x[1] for x in rs]):5.2f} s, peak RSS {max(x[2] for x in rs) / 1024:3.0f}"
                f" MiB): throughput vs grep {med(ratios[label]):.2f}x"
                f" (runs {', '.join(f'{x:.2f}' for x in ratios[label])})"
            )
            print(
                f"  {'':38s} cpu-seconds vs grep {med(cpu_ratios[label]):.2f}x (what the wall"
                " ratio tends to on a loaded host: its scheduler shares CPU per session)"
            )
            print(
                f"  {'':38s} planted {len(planted)}, found {len(planted) - len(missing)}"
                f"{' MISSING ' + str(missing[:5]) if missing else ''}; {len(syms)} symptoms,"
                f" digest {digest}"
            )
        log.unlink()
        for f in work.glob("*.json"):
            f.unlink()
        (work / "grep.out").unlink(missing_ok=True)
        (work / "floor.out").unlink(missing_ok=True)


# ---------------------------------------------------------------------------------------------
# planner scaling
# ---------------------------------------------------------------------------------------------

PLAN_CHILD = r"""
import json, resource, sys, time, copy
import yaml
n, kind, example = int(sys.argv[1]), sys.argv[2], sys.argv[3]
from remedy.knowledge.loader import load_knowledge
from remedy.model import Facts
from remedy.planner.plan import make_plan
kb = load_knowledge()
facts = yaml.safe_load(open(example))
tk0, py0 = facts["toolkits"][0], facts["pythons"][0]
for i in range(1, n):
    if kind == "buildhost":  # venvs with pip CUDA wheels (nvcc of varied releases): CUDA_HOME candidates
        venv = f"/opt/envs/build{i:04d}"
        rel = ("13.0", "13.1", "13.2")[i % 3]
        facts["toolkits"].append({
            "prefix": f"{venv}/lib/python3.12/site-packages/nvidia/cu13", "kind": "pip-cu13",
            "python": venv, "nvcc_version": rel + ".88", "nvcc_release": rel,
            "ptxas_release": rel, "cicc_release": rel, "cudart_version": 13000,
            "cccl": {"present": True, "nv_target": True, "nv_detail": True},
            "libs": {"lib": ["libcudart.so.13", "libnvrtc.so.13"]}, "nvcc_profile_libdir": "lib",
            "pip": {"nvidia-cuda-nvcc": rel + ".88", "nvidia-cuda-runtime": "13.0.96"}})
        facts["pythons"].append({"path": venv, "python": "3.12", "torch_cuda": "13.0",
            "packages": {"torch": "2.11.0", "nvidia-cuda-nvcc": rel + ".88",
                         "nvidia-cuda-runtime": "13.0.96"}})
    if kind in ("toolkits", "all"):
        venv = f"/opt/envs/build{i:04d}"
        tk = copy.deepcopy(tk0)
        tk["prefix"] = tk0["prefix"].replace("/root/venv", venv)
        tk["python"] = venv
        facts["toolkits"].append(tk)
        py = copy.deepcopy(py0)
        py["path"] = venv
        facts["pythons"].append(py)
    if kind in ("services", "all"):
        facts.setdefault("services", []).append({
            "name": f"worker{i:04d}.service",
            "environment": {"CUDA_HOME": "/usr/local/cuda", "PATH": "/usr/bin:/bin"},
            "exec_start": f"/opt/envs/build{i:04d}/bin/python -m worker",
            "python": f"/opt/envs/build{i:04d}",
        })
    if kind in ("consumers", "all"):
        facts.setdefault("workload", {}).setdefault("consumers", [
            "flashinfer-jit", "sglang-jit-kernel", "torch-cpp-extension", "triton",
            "cuda-graph-capture"])
        facts["workload"]["consumers"].append(f"extra-consumer-{i:04d}")
symptoms, wrappers = [], set()
if kind.startswith("gen-"):  # bench/gen_facts_varied.py: gen-SHAPE or gen-SHAPE+log (lab_f3's)
    sys.path.insert(0, sys.argv[4])
    from gen_facts_varied import generate
    shape, _, log = kind[4:].partition("+")
    facts = generate(n, shape)
    if log:
        from remedy.inputs import scan_logs
        symptoms, _, wrappers = scan_logs([sys.argv[5]])
f = Facts.model_validate(facts)
t, c = time.perf_counter(), time.process_time()
plan = make_plan(kb, f, symptoms, wrappers=wrappers)
wall, cpu = time.perf_counter() - t, time.process_time() - c
print(json.dumps({"wall": wall, "cpu": cpu, "rss_kib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss,
                  "steps": [s.action for s in plan.steps], "status": plan.status}))
"""


def plan_bench(args: argparse.Namespace, env: dict[str, str]) -> None:
    for kind in args.plan_kinds:
        res: dict[int, dict] = {}
        for n in args.plan_sizes:
            try:
                out = subprocess.run(
                    [
                        sys.executable,
                        "-c",
                        PLAN_CHILD,
                        str(n),
                        kind,
                        str(EXAMPLE),
                        str(ROOT / "bench"),
                        str(LOGS / "lab_f3_link_cudart.log"),
                    ],
                    capture_output=True,
                    text=True,
                    env=env,
                    timeout=args.plan_timeout,
                    check=True,
                )
                res[n] = json.loads(out.stdout.strip().splitlines()[-1])
            except subprocess.TimeoutExpired:
                res[n] = {"wall": float("inf"), "rss_kib": 0, "steps": ["timeout"]}
            except subprocess.CalledProcessError as exc:
                res[n] = {"wall": float("nan"), "rss_kib": 0, "steps": [exc.stderr[-300:]]}
            r = res[n]
            print(
                f"plan {kind:16s} N={n:5d}: {r['wall']:8.2f} s (CPU {r.get('cpu', 0):7.2f} s)  RSS {r['rss_kib'] / 1024:6.0f} MiB"
                f"  {r.get('status', '')} steps {','.join(r['steps'])[:90]}"
            )
        ns = sorted(res)
        if len(ns) >= 2:
            a, b = ns[-2], ns[-1]
            print(
                f"plan {kind:16s} time({b})/time({a}) = {res[b]['wall'] / res[a]['wall']:.1f}"
                f" (CPU {res[b].get('cpu', 0) / max(res[a].get('cpu', 0), 1e-9):.1f};"
                f" linear: {b / a:.0f})"
            )


# ---------------------------------------------------------------------------------------------
# start-up
# ---------------------------------------------------------------------------------------------


def startup_bench(args: argparse.Namespace, env: dict[str, str]) -> None:
    """Each command in turn (A B A B ...), after one unmeasured run of each (Python's bytecode
    and remedy's caches written); with --vs-src the other checkout's run in the same turns."""
    py = sys.executable
    small_log = str(LOGS / "lab_f1_ptx_isa_skew.log")
    remedy_cmds = {
        "remedy --help": ["--help"],
        "remedy plan --example seed-sm120-pip-cu13 --json": [
            "plan",
            "--example",
            "seed-sm120-pip-cu13",
            "--json",
        ],
        # the fixed cost of `diagnose --log` (a 5 KB log: imports, knowledge, ranking, output)
        "remedy diagnose --log lab_f1_ptx_isa_skew.log --json": [
            "diagnose",
            "--log",
            small_log,
            "--json",
        ],
    }
    sides = [("", env)]
    if args.vs_src:
        sides.append((" [vs-src]", {**env, "PYTHONPATH": str(args.vs_src.resolve())}))
    cmds: dict[str, tuple[list[str], dict[str, str]]] = {
        "python -c pass": ([py, "-c", "pass"], env)
    }
    for k, words in remedy_cmds.items():
        for tag, side_env in sides:
            cmds[k + tag] = ([py, "-m", "remedy", *words], side_env)
    for c, e in cmds.values():
        run_measured(c, e, os.devnull)
    times: dict[str, list[tuple[float, float, int]]] = {k: [] for k in cmds}
    for _ in range(args.startup_runs):
        for k, (c, e) in cmds.items():
            times[k].append(run_measured(c, e, os.devnull))
    base = med([t[0] for t in times["python -c pass"]])
    for k, ts in times.items():
        w = med([t[0] for t in ts])
        other = k.endswith("[vs-src]") and times.get(k[: -len(" [vs-src]")])
        vs = ""
        if other:
            mine = med([t[1] for t in other])
            vs = f"  (this src: cpu {mine / med([t[1] for t in ts]):.2f}x of vs-src)"
        print(
            f"start-up {k:62s} {w * 1000:7.0f} ms  ({w / base:5.1f}x python -c pass)"
            f"  cpu {med([t[1] for t in ts]) * 1000:5.0f} ms  RSS {med([t[2] for t in ts]) / 1024:4.0f} MiB{vs}"
        )


# ---------------------------------------------------------------------------------------------
# fleet
# ---------------------------------------------------------------------------------------------

INV_CHILD = r"""
import json, resource, sys, time
n = int(sys.argv[1])
from remedy.fleet.inventory import parse_inventory
lines = []
for g in range(max(1, n // 100)):
    lines.append(f"[rack{g:03d}]")
    for i in range(100):
        h = g * 100 + i
        if h < n:
            lines.append(f"gpu{h:05d} ansible_host=10.{h // 65536}.{h // 256 % 256}.{h % 256}")
lines.append("[gpus:children]")
lines += [f"rack{g:03d}" for g in range(max(1, n // 100))]
text = "\n".join(lines) + "\n"
t_parse = t_sel = float("inf")
for _ in range(3):  # best of 3: the machine is shared
    t = time.perf_counter()
    inv = parse_inventory(text, "bench.ini")
    t_parse = min(t_parse, time.perf_counter() - t)
    t = time.perf_counter()
    sel = inv.select("gpus:!rack000:&gpus")
    t_sel = min(t_sel, time.perf_counter() - t)
print(json.dumps({"parse": t_parse, "select": t_sel, "hosts": len(inv.hosts), "selected": len(sel),
                  "rss_kib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss}))
"""

ROLLOUT_CHILD = r"""
import asyncio, json, random, resource, sys, time
n, lat_file = int(sys.argv[1]), sys.argv[2]
from remedy.fleet.rollout import RolloutPolicy, parse_size, rollout
rec = json.load(open(lat_file))
lat = rec.get("one_host_seconds") or rec["seconds"]
SCALE = 100  # simulated seconds per real second: a 1,000-host rollout in seconds
lat = [x / SCALE for x in lat]
rnd = random.Random(7)
fail = set(rnd.sample(range(n), n // 100))  # 1% of hosts fail
class R:
    def __init__(self, outcome): self.outcome = outcome
async def apply(host, batch):
    i = int(host[4:])
    await asyncio.sleep(lat[i % len(lat)])
    return R("applied-not-fixed" if i in fail else "fixed")
hosts = [f"host{i:05d}" for i in range(n)]
out = {}
for budget in ("2%", "5"):
    pol = RolloutPolicy(canary=1, batch_size=parse_size("10%", "--batch-size"),
                        max_errors=parse_size(budget, "--max-errors"), forks=100)
    t = time.perf_counter()
    res = asyncio.run(rollout(hosts, apply, pol))
    out[budget] = {"wall": (time.perf_counter() - t) * SCALE, "batches": len(res.batches),
                   "started": len(res.results), "errors": len(res.errors),
                   "skipped": len(res.skipped), "allowed": res.allowed_errors,
                   "stopped": res.stop_reason,
                   "batches_run": len({res.batch_of[h] for h in res.results})}
out["serial_sum"] = sum(lat[i % len(lat)] for i in range(n)) * SCALE
out["lat"] = [x * SCALE for x in lat]
out["rss_kib"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
print(json.dumps(out))
"""


def fleet_bench(args: argparse.Namespace, env: dict[str, str]) -> None:
    res = {}
    for n in (1_000, 10_000):
        out = subprocess.run(
            [sys.executable, "-c", INV_CHILD, str(n)],
            capture_output=True,
            text=True,
            env=env,
            timeout=600,
            check=True,
        )
        res[n] = json.loads(out.stdout)
        r = res[n]
        print(
            f"inventory {n:6d} hosts: parse {r['parse']:7.3f} s, select {r['select']:7.3f} s"
            f" ({r['selected']} selected), RSS {r['rss_kib'] / 1024:4.0f} MiB"
        )
    a, b = res[1_000], res[10_000]
    print(
        f"inventory time(10,000)/time(1,000): parse {b['parse'] / a['parse']:.1f},"
        f" select {b['select'] / max(a['select'], 1e-9):.1f} (linear: 10)"
    )
    if not LATENCIES.exists():
        print(f"rollout: SKIPPED ({LATENCIES} missing: run bench/bench_facts.py --record)")
        return
    out = subprocess.run(
        [sys.executable, "-c", ROLLOUT_CHILD, "1000", str(LATENCIES)],
        capture_output=True,
        text=True,
        env=env,
        timeout=600,
        check=True,
    )
    r = json.loads(out.stdout)
    print(
        f"rollout: fake transport, each host sleeps a recorded per-host latency"
        f" ({', '.join(f'{x:.2f}' for x in r['lat'])} s: one sandbox host over real SSH),"
        f" time scaled 1/100 and reported unscaled"
    )
    for budget in ("2%", "5"):
        x = r[budget]
        print(
            f"rollout 1,000 hosts (1% fail, canary 1, batches 10%, forks 100, --max-errors {budget}):"
            f" {x['wall']:.1f} s (simulated) vs {r['serial_sum']:.0f} s one by one;"
            f" {x['batches']} batches, {x['batches_run']} run, started {x['started']},"
            f" failed {x['errors']} (allowed {x['allowed']}), skipped {x['skipped']}: {x['stopped']}"
        )


def bytecode(src: Path) -> None:
    """Write the bytecode of a measured tree, as ``pip install`` does for an installed
    package. Why: the sessions' shells set PYTHONDONTWRITEBYTECODE=1, so a fresh checkout
    never got any and each measured run compiled remedy's ~40 modules from source (~0.15
    CPU-s of every ``remedy diagnose``: session 35's 100 MB figure); Python reads bytecode
    that exists whatever that variable says."""
    subprocess.run(
        [sys.executable, "-m", "compileall", "-q", str(src)],
        stdout=subprocess.DEVNULL,
        check=True,
    )


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--src", type=Path, default=ROOT / "src", help="the remedy source to measure")
    ap.add_argument(
        "--vs-src",
        type=Path,
        help="scan and start-up: also time this checkout's src, in turn (same log, same load)",
    )
    ap.add_argument("--only", action="append", choices=["scan", "plan", "startup", "fleet"])
    ap.add_argument("--sizes", default="100,1000,4000", help="scan log sizes in MB")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--plan-sizes", default="10,100,1000")
    ap.add_argument(
        "--plan-kinds",
        default="buildhost,services,consumers,gen-mixed,gen-system+log,gen-pipvenv+log",
        help="gen-SHAPE[+log]: bench/gen_facts_varied.py's SHAPE (system, pipvenv, conda, "
        "mixed), +log: planned with lab_f3_link_cudart.log's symptoms",
    )
    ap.add_argument("--plan-timeout", type=int, default=300)
    ap.add_argument("--startup-runs", type=int, default=9)
    ap.add_argument("--dir", type=Path, default=Path("/tmp"))
    args = ap.parse_args()
    args.sizes = [int(x) for x in args.sizes.split(",") if x]
    args.plan_sizes = [int(x) for x in args.plan_sizes.split(",") if x]
    args.plan_kinds = [x for x in args.plan_kinds.split(",") if x]
    env = {**os.environ, "PYTHONPATH": str(args.src.resolve())}
    git = subprocess.run(
        ["git", "-C", str(args.src), "rev-parse", "--short", "HEAD"],
        capture_output=True,
        text=True,
        check=False,
    ).stdout.strip()
    print(
        f"perf: src {args.src} ({git or 'not a git checkout'}), {os.cpu_count()} CPUs, load "
        f"{' '.join(Path('/proc/loadavg').read_text().split()[:3])}, "
        f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}"
    )
    for tree in (args.src, args.vs_src):
        if tree is not None:
            bytecode(tree)
    print(
        "bytecode: written for each measured src before timing (compileall), as pip install"
        " writes it: with PYTHONDONTWRITEBYTECODE=1 (the sessions' shells) and no bytecode,"
        " every run compiled remedy's own modules (perf-session36.txt)"
    )
    only = set(args.only or ["scan", "plan", "startup", "fleet"])
    if args.dir:
        Path(args.dir).mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix="remedy-perf-", dir=args.dir))
    random.seed(1)
    try:
        if "startup" in only:
            startup_bench(args, env)
        if "fleet" in only:
            fleet_bench(args, env)
        if "plan" in only:
            plan_bench(args, env)
        if "scan" in only:
            scan_bench(args, env, work)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print(f"perf: done, load {' '.join(Path('/proc/loadavg').read_text().split()[:3])}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
