#!/usr/bin/env python3
"""remedy (plan + run) against a whack-a-mole baseline, on real sandbox hosts.

For each scenario (seed-chain-a: pip cu13 skew, tier ssh; seed-chain-b: systemd unit, tier
systemd) two fresh hosts of the same scenario are started, one after the other (never both at
once, so neither steals the other's CPU):

  remedy    `remedy plan --host N --out p.json` then `remedy run N --plan p.json --yes --json`
            (full verification). Counted: every expensive probe the run ran (real JIT builds,
            launches: step proofs, deferred re-runs and the final verification, from the
            report's `probes`), and the wall time of plan + run.
  baseline  what the seeds did by hand: run the real thing (seed-chain-a: FlashInfer's JIT
            build, then SGLang's jit_kernel build, as a server launch would; seed-chain-b:
            restart the unit and read its log to readiness or death), take the FIRST error the
            log shows, apply the one fix a person applies for it (FIXES below, each from a
            seed), rerun, until green or CAP rounds. Counted: builds/launches run, wall time.

"Green" is the same check for both: seed-chain-a, FlashInfer JIT and SGLang jit_kernel builds
pass; seed-chain-b, the unit reaches readiness (readiness line + GET /health). So that the two
prove the same thing, remedy's final verification is limited to those consumers (the
torch.utils.cpp_extension build remedy also runs by default, ~75-200 s here, is left out and
said so). Steps for rules the scenario does not stage (e.g. sglang's torch pin: torch 2.11.0 is
not in the sandbox's offline index) are left out of remedy's plan and printed.

Usage: bench/bench_run.py [--scenario seed-chain-a|seed-chain-b|all] [--cap N] [--json FILE]
Needs root and scripts/setup-sandbox.sh (see sandbox/README.md). Prints both, and the ratios.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
SBX = REPO / "sandbox" / "sbx"
SITE = "/opt/sglang-venv/lib/python3.11/site-packages"
CU13 = f"{SITE}/nvidia/cu13"
PIP = "/opt/sglang-venv/bin/python -m pip"
FI_CCCL = f"{SITE}/flashinfer/data/cccl/libcudacxx/include"
UNIT = "sglang-k26.service"
UNIT_FILE = f"/etc/systemd/system/{UNIT}"
EXPENSIVE = {
    "flashinfer-jit-build",
    "sglang-jit-build",
    "torch-ext-build",
    "jit-run-probe",
    "launch-probe",
    "graph-capture",
}
SCENARIOS = {
    "seed-chain-a": {
        "rules": {
            "ptxas-accepts-cicc-ptx",
            "nvcc-matches-cudart-headers",
            "toolkit-links-cudart",
            "cccl-complete",
        },
        "consumers": {"flashinfer-jit", "sglang-jit-kernel"},
        "plan_args": [],
    },
    "seed-chain-b": {
        "rules": {
            "toolkit-links-cudart",
            "cccl-complete",
            "flashinfer-sm12x-gate",
            "toolkit-major-matches-torch",
        },
        "consumers": {"sglang-server"},
        "plan_args": ["--service", UNIT],
    },
}


# --------------------------------------------------------------------------------------------
# hosts
# --------------------------------------------------------------------------------------------


@dataclass
class Host:
    name: str
    cfg: str

    def ssh(self, cmd: str, timeout: float = 600) -> tuple[int, str]:
        p = subprocess.run(
            ["ssh", "-F", self.cfg, self.name, cmd], capture_output=True, text=True, timeout=timeout
        )
        return p.returncode, p.stdout + p.stderr

    def remedy(self, *args: str, timeout: float = 3600) -> subprocess.CompletedProcess:
        return subprocess.run(
            [sys.executable, "-m", "remedy", "--ssh-config", self.cfg, *args],
            capture_output=True,
            text=True,
            timeout=timeout,
            cwd=REPO,
        )


def up(scenario: str, name: str) -> Host:
    p = subprocess.run(
        [str(SBX), "up", scenario, "--name", name], capture_output=True, text=True, timeout=300
    )
    if p.returncode != 0:
        sys.exit(f"bench_run: sbx up {scenario} failed: {p.stderr.strip()}")
    rec = json.loads(p.stdout.strip().splitlines()[-1])
    return Host(rec["name"], rec["ssh_config"])


def down(h: Host) -> None:
    subprocess.run([str(SBX), "down", h.name], capture_output=True, timeout=300)


async def _probe(h: Host, probe: str, consumer: str | None, params: dict[str, Any]) -> Any:
    from remedy.facts import collect_facts
    from remedy.probes import run_probe
    from remedy.transport import open_transport

    t = open_transport(h.name, ssh_config=h.cfg, connect_timeout=20.0)
    try:
        facts = await collect_facts(t)
        return await run_probe(
            probe, t, facts, params=params, consumer=consumer, arch="12.0", timeout=900
        )
    finally:
        await t.close()


def real_probe(h: Host, probe: str, consumer: str | None = None, **params: Any) -> Any:
    return asyncio.run(_probe(h, probe, consumer, params))


# --------------------------------------------------------------------------------------------
# remedy
# --------------------------------------------------------------------------------------------


@dataclass
class Result:
    tool: str
    scenario: str
    green: bool
    expensive: int
    seconds: float
    rounds: list[str] = field(default_factory=list)
    note: str = ""


def run_remedy(scenario: str, h: Host, tmp: Path) -> Result:
    spec = SCENARIOS[scenario]
    t0 = time.monotonic()
    plan_file = tmp / f"{h.name}-plan.json"
    sel = ["--rules", ",".join(sorted(spec["rules"])),
           "--consumers", ",".join(sorted(spec["consumers"]))]  # fmt: skip
    r = h.remedy("plan", "--host", h.name, "--out", str(plan_file), "--json", *spec["plan_args"])
    if r.returncode != 0:
        return Result(
            "remedy",
            scenario,
            False,
            0,
            time.monotonic() - t0,
            note=f"remedy plan exited {r.returncode}: {r.stderr[-300:]}",
        )
    full = json.loads(plan_file.read_text())
    left = [s["action"] for s in full["steps"] if not set(s["fixes"]) & spec["rules"]]
    dropped_v = [
        v["consumer"] for v in full["verification"] if v["consumer"] not in spec["consumers"]
    ]
    # the same selection by remedy itself (recorded in the plan, so `run --plan` accepts it)
    r = h.remedy("plan", "--host", h.name, "--out", str(plan_file), "--json",
                 *spec["plan_args"], *sel)  # fmt: skip
    if r.returncode != 0:
        return Result("remedy", scenario, False, 0, time.monotonic() - t0,
                      note=f"remedy plan --rules exited {r.returncode}: {r.stderr[-300:]}")  # fmt: skip
    t_plan = time.monotonic() - t0
    r = h.remedy("run", h.name, "--plan", str(plan_file), "--yes", "--json")
    try:
        rep = json.loads(r.stdout)
    except ValueError:
        return Result(
            "remedy",
            scenario,
            False,
            0,
            time.monotonic() - t0,
            note=f"remedy run exited {r.returncode} without a report: {r.stderr[-500:]}",
        )
    secs = time.monotonic() - t0
    expensive = [
        p for p in rep.get("probes", []) if p["probe"] in EXPENSIVE and p["ok"] is not None
    ]
    rounds = [
        f"step {i + 1} {s['action']}: {s['outcome']} (probe {s['probe']}: "
        f"{'ok' if s['probe_ok'] else s['probe_ok']})"
        for i, s in enumerate(rep["steps"])
    ]
    rounds += [
        f"verify {v['consumer']}: {v['probe']} {'ok' if v['ok'] else v['ok']}"
        for v in rep["verification"]
    ]
    note = (
        f"plan {t_plan:.0f} s, run {rep.get('seconds')} s; steps left out: {left or 'none'}; "
        f"verification left out: {dropped_v or 'none'}; expensive probes: "
        f"{[(p['phase'], p['probe'], p['seconds']) for p in expensive]}"
    )
    return Result(
        "remedy",
        scenario,
        r.returncode == 0 and rep["outcome"] == "fixed",
        len(expensive),
        secs,
        rounds,
        note,
    )


# --------------------------------------------------------------------------------------------
# the whack-a-mole baseline
# --------------------------------------------------------------------------------------------


def _pip_version(h: Host, dist: str) -> str:
    _, out = h.ssh(f"{PIP} show {dist} 2>/dev/null | sed -n 's/^Version: //p'")
    return out.strip()


def fix_ptx(h: Host, m: re.Match) -> str:
    # seeds 000/001: the PTX error -> make the compiler pieces one release; a person aligns
    # the nvvm wheel (cicc) with the nvcc wheel that carries ptxas
    v = _pip_version(h, "nvidia-cuda-nvcc")
    return f"{PIP} install --no-deps nvidia-nvvm=={v}"


def fix_cccl_ctk(h: Host, m: re.Match) -> str:
    # seed 000: "CUDA compiler and CUDA toolkit headers are incompatible" -> upgrade the
    # runtime headers to nvcc's release (pip warns that torch pins another; done anyway)
    v = _pip_version(h, "nvidia-cuda-nvcc")
    rel = ".".join(v.split(".")[:2])
    _, cands = h.ssh("ls /srv/wheels | sed -n 's/^nvidia_cuda_runtime-\\([0-9.]*\\)-.*/\\1/p'")
    pick = next((c for c in cands.split() if c.startswith(rel + ".")), None)
    if pick is None:
        return ""
    return f"{PIP} install --no-deps nvidia-cuda-runtime=={pick}"


def fix_lcudart(h: Host, m: re.Match) -> str:
    # seeds 001/003: ld looks in lib64, the wheel ships lib -> lib64 symlink + libcudart.so
    return (
        f"cd {CU13} && (test -e lib64 || ln -s lib lib64) && "
        "(test -e lib/libcudart.so || ln -s libcudart.so.13 lib/libcudart.so)"
    )


def fix_lcuda(h: Host, m: re.Match) -> str:
    # seed 003: "providing a libcuda.so stub"
    return (
        f"mkdir -p {CU13}/lib/stubs && echo | cc -x c -shared -Wl,-soname,libcuda.so.1 "
        f"-o {CU13}/lib/stubs/libcuda.so -"
    )


def fix_missing_header(h: Host, m: re.Match) -> str:
    # seed 003: symlink only the missing header (nv/target) from FlashInfer's bundled CCCL;
    # then nv/detail/__target_macros -> the nv/detail directory (the seed's next step)
    hdr = m.group(1)
    if hdr.startswith("nv/detail/"):
        return f"mkdir -p {CU13}/include/nv && ln -sfn {FI_CCCL}/nv/detail {CU13}/include/nv/detail"
    d = os.path.dirname(hdr)
    return (
        f"test -e {FI_CCCL}/{hdr} && mkdir -p {CU13}/include/{d} && "
        f"ln -sfn {FI_CCCL}/{hdr} {CU13}/include/{hdr}"
    )


def _unit_env(h: Host, name: str, value: str) -> str:
    # seed 002: sed an Environment= line into the unit after OMP_NUM_THREADS, reload
    return (
        f"sed -i '/^Environment={name}=/d' {UNIT_FILE} && "
        f"sed -i '/^Environment=OMP_NUM_THREADS/a Environment={name}={value}' {UNIT_FILE} && "
        "systemctl daemon-reload"
    )


def fix_sm12x_gate(h: Host, m: re.Match) -> str:
    # seed 002 exactly: CUDA_HOME=/dev/null so FlashInfer falls back to torch.version.cuda
    return _unit_env(h, "CUDA_HOME", "/dev/null")


def fix_dev_null(h: Host, m: re.Match) -> str:
    # seed 002's next step: "CUDA_HOME=/dev/null was too aggressive" -> a real toolkit
    return _unit_env(h, "CUDA_HOME", CU13)


FIXES: list[tuple[str, re.Pattern[str], Any]] = [
    (
        "ptxas rejects cicc's PTX -> align nvvm with nvcc",
        re.compile(r"ptxas.*Unsupported \.version"),
        fix_ptx,
    ),
    (
        "CCCL: compiler and toolkit headers incompatible -> runtime headers to nvcc's release",
        re.compile(r"CUDA compiler and CUDA toolkit headers are incompatible"),
        fix_cccl_ctk,
    ),
    (
        "cannot find -lcudart -> lib64 symlink + libcudart.so",
        re.compile(r"cannot find -lcudart\b"),
        fix_lcudart,
    ),
    ("cannot find -lcuda -> libcuda.so stub", re.compile(r"cannot find -lcuda\b"), fix_lcuda),
    (
        "missing header -> symlink it from FlashInfer's CCCL",
        re.compile(r"fatal error: ([\w./]+): No such file or directory"),
        fix_missing_header,
    ),
    (
        "SM 12.x requires CUDA >= 12.9 -> CUDA_HOME=/dev/null in the unit (seed 002)",
        re.compile(r"SM 12\.x requires CUDA >= 12\.9"),
        fix_sm12x_gate,
    ),
    (
        "/dev/null/bin/nvcc not found -> CUDA_HOME=<pip toolkit> in the unit",
        re.compile(r"/dev/null/bin/nvcc|/dev/null/include"),
        fix_dev_null,
    ),
]


def first_fix(log: str) -> tuple[str, re.Match, Any] | None:
    """The first line of the log that a known fix matches (a person reads top-down)."""
    for line in log.splitlines():
        for what, rx, fn in FIXES:
            m = rx.search(line)
            if m:
                return what, m, fn
    return None


def attempt_a(h: Host) -> tuple[bool, int, str]:
    """A launch's JIT builds in order: FlashInfer's, then SGLang's; stop at the first
    failure. (green, builds run, log of the failing one)"""
    n = 0
    for probe, consumer in (
        ("flashinfer-jit-build", "flashinfer-jit"),
        ("sglang-jit-build", "sglang-jit-kernel"),
    ):
        res = real_probe(h, probe, consumer)
        n += 1
        if not res.ok:
            return False, n, res.output_tail + "\n" + res.detail
    return True, n, ""


def attempt_b(h: Host) -> tuple[bool, int, str]:
    res = real_probe(h, "launch-probe", None, unit=UNIT)
    return res.ok, 1, res.output_tail + "\n" + res.detail


def run_baseline(scenario: str, h: Host, cap: int) -> Result:
    attempt = attempt_a if scenario == "seed-chain-a" else attempt_b
    t0 = time.monotonic()
    builds, rounds = 0, []
    for rnd in range(1, cap + 1):
        ok, n, log = attempt(h)
        builds += n
        if ok:
            rounds.append(f"round {rnd}: green ({n} build/launch)")
            secs = time.monotonic() - t0
            return Result("baseline", scenario, True, builds, secs, rounds, latent(scenario, h))
        hit = first_fix(log)
        if hit is None:
            rounds.append(f"round {rnd}: no known fix for: {log.strip().splitlines()[-1:]}")
            break
        what, m, fn = hit
        cmd = fn(h, m)
        rc, out = h.ssh(cmd) if cmd else (1, "no candidate")
        rounds.append(f"round {rnd}: {m.group(0)[:90]!r} -> {what}: `{cmd[:160]}` rc {rc}")
        if rc != 0:
            rounds.append(f"  fix failed: {out.strip()[-300:]}")
    return Result(
        "baseline",
        scenario,
        False,
        builds,
        time.monotonic() - t0,
        rounds,
        note=f"not green after {len(rounds)} rounds (cap {cap})",
    )


def latent(scenario: str, h: Host) -> str:
    """What the green host still violates (remedy's rules, not timed): whack-a-mole stops at
    the first green build, not at a consistent toolchain."""
    r = h.remedy("plan", "--host", h.name, "--json", *SCENARIOS[scenario]["plan_args"])
    try:
        found = [f["rule"] for f in json.loads(r.stdout)["findings"]]
    except (ValueError, KeyError):
        return f"remedy plan on the green host exited {r.returncode}"
    return f"rules still violated on the green host: {found or 'none'}"


# --------------------------------------------------------------------------------------------


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--scenario", default="all", choices=[*SCENARIOS, "all"])
    ap.add_argument("--cap", type=int, default=12, help="baseline rounds at most")
    ap.add_argument("--json", type=Path, help="write the figures here too")
    args = ap.parse_args()
    if os.geteuid() != 0:
        sys.exit("bench_run: sandbox hosts need root")
    tmp = Path(os.environ.get("TMPDIR", "/tmp")) / f"bench-run-{os.getpid()}"
    tmp.mkdir(parents=True, exist_ok=True)
    results: list[Result] = []
    scenarios = list(SCENARIOS) if args.scenario == "all" else [args.scenario]
    tag = f"br{os.getpid() % 10000}"
    for scn in scenarios:
        for tool in ("remedy", "baseline"):
            h = up(scn, f"{tag}{scn[-1]}{tool[0]}")
            try:
                _, load = h.ssh("cat /proc/loadavg")
                print(f"== {scn} / {tool} on {h.name} (load {load.split()[:3]})", flush=True)
                res = (
                    run_remedy(scn, h, tmp) if tool == "remedy" else run_baseline(scn, h, args.cap)
                )
            finally:
                down(h)
            for line in res.rounds:
                print(f"   {line}")
            if res.note:
                print(f"   note: {res.note}")
            print(
                f"   -> {'GREEN' if res.green else 'not green'}: {res.expensive} expensive "
                f"builds/launches, {res.seconds:.0f} s",
                flush=True,
            )
            results.append(res)
    print("\nscenario       tool       green  expensive  wall s")
    for r in results:
        print(f"{r.scenario:14s} {r.tool:10s} {str(r.green):6s} {r.expensive:9d}  {r.seconds:6.0f}")
    for scn in scenarios:
        rm = next(r for r in results if r.scenario == scn and r.tool == "remedy")
        bl = next(r for r in results if r.scenario == scn and r.tool == "baseline")
        if rm.expensive and rm.seconds:
            print(
                f"{scn}: baseline / remedy = {bl.expensive / rm.expensive:.1f}x expensive "
                f"builds/launches, {bl.seconds / rm.seconds:.1f}x wall time"
                + ("" if bl.green and rm.green else " (not both green: see above)")
            )
    if args.json:
        args.json.write_text(json.dumps([r.__dict__ for r in results], indent=2))
    return 0 if all(r.green for r in results if r.tool == "remedy") else 1


if __name__ == "__main__":
    sys.exit(main())
