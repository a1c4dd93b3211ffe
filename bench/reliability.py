#!/usr/bin/env python3
"""Reliability and security figures in one table: bench/RELIABILITY.md.

    bench/reliability.py                      # long fuzz profile (10,000 cases per target)
    bench/reliability.py --cases 2000         # shorter
    bench/reliability.py --soak-runs 20       # crash-safety soak size (bench/soak.py)
    bench/reliability.py --pip-soak-runs 10   # + runs whose fault lands inside a pip install
    bench/reliability.py --no-sandbox         # skip what needs sandbox hosts

What it runs, each as its own pytest (or script) subprocess:
  * tests/test_fuzz.py under REMEDY_FUZZ=long, in a process limited by RLIMIT_AS (a runaway
    allocation is a MemoryError, i.e. a failure); cases per target come from the tests
    themselves (REMEDY_FUZZ_COUNTS);
  * tests/test_injection.py: hostile values through plan -> commands -> a real shell, the
    Jinja2 sandbox escapes, YAML python tags (attempts = cases, blocked = cases that passed);
  * tests/test_secrets_sandbox.py: artefacts scanned and hits for planted secrets;
  * bench/soak.py --json --runs N (crash-safety soak; again with --during aimed inside the
    steps' pip installs) and tests/test_faults_sandbox.py, when
    those exist (they belong to another part of the issue).
"""

from __future__ import annotations

import argparse
import contextlib
import datetime as dt
import json
import os
import platform
import resource
import shlex
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ET
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PY = sys.executable
MEM_LIMIT = 4 * 2**30


def _limit_memory() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (MEM_LIMIT, MEM_LIMIT))


def pytest(
    paths: list[str], env: dict[str, str], *, limit_memory: bool = False, timeout: float = 3600
) -> tuple[dict[str, str], float, str]:
    """Run pytest; returns {test id: passed|failed|skipped}, seconds and the output tail."""
    with tempfile.TemporaryDirectory() as td:
        xml = Path(td) / "junit.xml"
        t0 = time.monotonic()
        p = subprocess.run(
            [PY, "-m", "pytest", "-q", "-p", "no:cacheprovider", f"--junitxml={xml}", *paths],
            cwd=ROOT,
            env={**os.environ, **env},
            capture_output=True,
            text=True,
            timeout=timeout,
            preexec_fn=_limit_memory if limit_memory else None,
        )
        took = time.monotonic() - t0
        results: dict[str, str] = {}
        if xml.exists():
            for tc in ET.parse(xml).getroot().iter("testcase"):
                kids = {c.tag for c in tc}
                state = (
                    "failed"
                    if kids & {"failure", "error"}
                    else "skipped"
                    if "skipped" in kids
                    else "passed"
                )
                results[tc.get("name", "?")] = state
    return results, took, (p.stdout + p.stderr)[-3000:]


def head() -> str:
    """The commit the checkout is at now: each figure says which code it measured."""
    p = subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True
    )
    dirty = subprocess.run(
        ["git", "status", "--porcelain", "--untracked-files=no"],
        cwd=ROOT,
        capture_output=True,
        text=True,
    ).stdout.strip()
    return (p.stdout.strip() or "unknown") + ("+dirty" if dirty else "")


def count(results: dict[str, str], prefix: str) -> tuple[int, int]:
    sel = [s for n, s in results.items() if n.startswith(prefix) and s != "skipped"]
    return len(sel), sum(s == "passed" for s in sel)


PIP_INSTALL = "^/opt/sglang-venv/bin/python -m pip install"


def run_soak(soak: Path, label: str, extra: list[str], notes: list[str]) -> tuple[str, str, str]:
    """One bench/soak.py run -> a table row (its violations and fault kinds go to notes)."""
    t0 = time.monotonic()
    p = subprocess.run(
        [PY, str(soak), "--json", *extra],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=4 * 3600,
    )
    last = (p.stdout.strip().splitlines() or ["{}"])[-1]
    try:
        s = json.loads(last)
    except ValueError:
        notes.append(f"{label}: output\n\n```\n{(p.stdout + p.stderr)[-2000:]}\n```")
        return (label, "no JSON summary", f"exit {p.returncode}")
    kinds = ", ".join(f"{k}: {v}" for k, v in (s.get("by_kind") or {}).items())
    if kinds:
        notes.append(f"{label}: faults by kind: {kinds}; final states {s.get('final_state')}")
    for v in s.get("violations") or []:
        notes.append(f"{label}: VIOLATION in run {v['run']}: {'; '.join(v['problems'])[:1500]}")
    return (
        label,
        f"{s.get('runs')} runs, {s.get('faults_injected')} faults injected",
        f"{s.get('faults_survived')} survived ({time.monotonic() - t0:.0f} s)",
    )


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cases", type=int, default=10_000, help="fuzz cases per target")
    ap.add_argument("--soak-runs", type=int, default=20, help="soak runs at random times")
    ap.add_argument(
        "--pip-soak-runs", type=int, default=10, help="soak runs with the fault inside pip"
    )
    ap.add_argument("--no-sandbox", action="store_true")
    ap.add_argument("--out", type=Path, default=ROOT / "bench" / "RELIABILITY.md")
    args = ap.parse_args()
    command = "bench/reliability.py " + " ".join(shlex.quote(a) for a in sys.argv[1:])
    rows: list[tuple[str, str, str]] = []
    notes: list[str] = []
    t_all = time.monotonic()

    commits: dict[str, str] = {}

    # 1. fuzzing
    commits["fuzz"] = head()
    with tempfile.TemporaryDirectory() as td:
        counts_file = Path(td) / "counts.json"
        res, took, tail = pytest(
            ["tests/test_fuzz.py"],
            {
                "REMEDY_FUZZ": "long",
                "REMEDY_FUZZ_CASES": str(args.cases),
                "REMEDY_FUZZ_COUNTS": str(counts_file),
            },
            limit_memory=True,
            timeout=6 * 3600,
        )
        counts = json.loads(counts_file.read_text()) if counts_file.exists() else {}
    failed = [n for n, s in res.items() if s == "failed"]
    print(f"fuzz: {sum(counts.values())} cases in {took:.0f} s, failed: {failed}", file=sys.stderr)
    if failed:
        notes.append(f"fuzz failures: {', '.join(failed)}\n\n```\n{tail}\n```")
    for target, n in sorted(counts.items()):
        rows.append(
            (
                f"fuzz `{target}`",
                f"{n:,} cases",
                "no crash, hang or memory blow-up" if not failed else "see failures below",
            )
        )
    rows.append(
        (
            "fuzz, all targets",
            f"{sum(counts.values()):,} cases in {took:.0f} s",
            f"{len(res) - len(failed)}/{len(res)} fuzz tests passed",
        )
    )

    # 2. injection, sandbox escapes, YAML tags
    commits["injection"] = head()
    res, took, tail = pytest(["tests/test_injection.py"], {})
    for label, prefix in (
        ("hostile facts paths -> plan -> real shell", "test_hostile_python_and_toolkit"),
        ("hostile service name/env -> plan -> real shell", "test_hostile_service_name"),
        ("hostile CLI arguments (impact --set/--unit)", "test_cli_impact_with_hostile"),
        ("Jinja2 sandbox escapes (templates)", "test_template_escapes_are_blocked"),
        ("Jinja2 sandbox escapes (expressions)", "test_expression_escapes_are_blocked"),
        ("YAML python tags", "test_yaml_python_tags"),
    ):
        n, ok = count(res, prefix)
        rows.append((label, f"{n} attempts", f"{ok} blocked"))
    print(f"injection: {len(res)} cases in {took:.0f} s", file=sys.stderr)
    if any(s == "failed" for s in res.values()):
        notes.append(f"injection failures:\n\n```\n{tail}\n```")

    # 3. secret scan (sandbox)
    if not args.no_sandbox:
        commits["secrets"] = head()
        with tempfile.TemporaryDirectory() as td:
            out = Path(td) / "scan.json"
            res, took, tail = pytest(
                ["tests/test_secrets_sandbox.py"], {"REMEDY_SECRET_SCAN_OUT": str(out)}
            )
            scan = json.loads(out.read_text()) if out.exists() else None
        state = next(iter(res.values()), "not run")
        rows.append(
            (
                "planted secrets, real sandbox run",
                f"{scan['artefacts']} artefacts scanned" if scan else "not measured",
                f"{scan['hits']} hits ({state}, {took:.0f} s)" if scan else state,
            )
        )
        if state == "failed":
            notes.append(f"secret scan:\n\n```\n{tail}\n```")

    # 4. the crash-safety soak (random times, then aimed inside the steps' pip installs,
    #    where a half-done install is hardest to undo) and the fault tests
    soak = ROOT / "bench" / "soak.py"
    if soak.exists() and not args.no_sandbox:
        commits["soak"] = head()
        for label, extra in (
            ("crash-safety soak, random times (bench/soak.py)", ["--runs", str(args.soak_runs)]),
            (
                "crash-safety soak, faults inside pip installs (bench/soak.py --during)",
                ["--runs", str(args.pip_soak_runs), "--during", PIP_INSTALL, "--window", "6"],
            ),
        ):
            if extra[1] == "0":
                continue
            rows.append(run_soak(soak, label, extra, notes))
    else:
        notes.append("bench/soak.py not run (absent, or --no-sandbox)")
    faults = ROOT / "tests" / "test_faults_sandbox.py"
    if faults.exists() and not args.no_sandbox:
        commits["faults"] = head()
        res, took, _ = pytest([str(faults.relative_to(ROOT))], {})
        n = sum(s != "skipped" for s in res.values())
        ok = sum(s == "passed" for s in res.values())
        rows.append(
            (
                "disk / partial-state faults (tests/test_faults_sandbox.py)",
                f"{n} tests",
                f"{ok} passed ({took:.0f} s)",
            )
        )
    else:
        notes.append("tests/test_faults_sandbox.py not run (absent, or --no-sandbox)")

    cpu = ""
    with contextlib.suppress(OSError, StopIteration):
        cpu = next(
            ln.split(":", 1)[1].strip()
            for ln in Path("/proc/cpuinfo").read_text().splitlines()
            if ln.startswith("model name")
        )
    lines = [
        "# Reliability and security",
        "",
        f"Generated {dt.datetime.now(dt.timezone.utc):%Y-%m-%d %H:%M} UTC by `{command}` "
        f"in {time.monotonic() - t_all:.0f} s on {platform.node()} ({os.cpu_count()} CPUs "
        f"{cpu}, Python {platform.python_version()}, {platform.system()} {platform.release()}).",
        "",
        "Code measured (commit per part): "
        + ", ".join(f"{k} `{v}`" for k, v in commits.items())
        + ".",
        "",
        "| what | attempts | result |",
        "|---|---|---|",
        *[f"| {a} | {b} | {c} |" for a, b, c in rows],
        "",
        "Fuzz cases: mutated recorded inputs (tests/fixtures: logs, corpus, facts, units, the "
        "knowledge and playbooks) and random bytes; each case is bounded in time (SIGALRM) and "
        f"memory (tracemalloc peak, sampled; the process runs under RLIMIT_AS {MEM_LIMIT >> 30} "
        "GiB). `cli.argv` (random command lines of the read-only commands, each case a whole "
        "in-process `remedy` command) runs a fifth of the cases of the parser targets.",
        "",
        "Soak fault kinds: kill (kill -9 of remedy), drop (the host's SSH connections cut), both, "
        "term (SIGTERM) and int (SIGINT): after a signal remedy must report the run interrupted "
        "(exit 128+N) and keep the lock; after every fault the recovery must leave the host "
        "fully applied or byte-identical to before.",
        "",
        *[f"- {n}" for n in notes],
        "",
    ]
    args.out.write_text("\n".join(lines))
    print(args.out.read_text())
    return 0


if __name__ == "__main__":
    sys.exit(main())
