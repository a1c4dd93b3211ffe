#!/usr/bin/env python3
"""Randomized crash soak of `remedy run` on real seed-chain-a sandbox hosts (tier ssh).

Beyond the enumerated kill points of tests/test_run_sandbox.py: every iteration starts
`remedy run --plan P --verify cheap --yes` on a host in the broken baseline state and injects
ONE fault at a random time (seeded):

  kill   kill -9 of remedy's process group (remedy is started in its own session)
  drop   the host's SSH connections cut: `pkill -f '^sshd: root'` inside the host (`sbx exec`)
         kills sshd's per-connection processes (`sshd: root@notty`, `sshd: root [priv]`);
         the listener stays, so the host answers the next connection
  both   drop, then kill -9 a random 0-0.5 s later
  term   SIGTERM to remedy's process group (a service stop, a CI job's timeout)
  int    SIGINT to it (Ctrl-C): remedy must stop the step where it stands, report the run
         interrupted (exit 128+N, a JSON report) and keep the lock (src/remedy/interrupts.py)

then recovers with a random choice: `remedy resume` (itself hit by a second random fault in a
third of the cases, then recovered again), `remedy resume --rollback` or `remedy rollback`;
and checks the invariant on the host:

  * the host is fully applied (the agent's digest of the venv's nvidia tree, every nvidia
    dist-info and /etc/profile.d equals the digest after a clean run) or byte-identical to
    before (equals the fresh host's digest), and it is the one the newest run's outcome says
  * no run is left interrupted, remedy's lock is free, no step process (pip) still runs
  * the final recovery exits 0, 3 or 10 with a report and no traceback

Reset between iterations: the host is recreated (`sbx down` + `sbx up`, ~1-3 s) rather than
rolled back (`remedy rollback`, ~8 s measured on this machine), and the agent's digest cache
of the shared read-only layers is pushed into the new host so its digest costs ~1 s, not ~11 s.
The verification is cut to one consumer (`--consumers`), so that random times fall on the
steps about as often as on the final probes.

    bench/soak.py --runs 40 --seed 7 --json        # final line: the JSON summary
    bench/soak.py --runs 4 --hosts 2               # two hosts in parallel
    bench/soak.py --runs 500 --minutes 20 --hosts 2 --json   # as many as fit in 20 min
    bench/soak.py --runs 10 --during 'pip install' --window 8  # faults inside pip installs

Human progress goes to stderr; with --json the last stdout line is
{"runs", "faults_injected", "faults_survived", "violations", "by_kind", "seconds", ...}.
Needs root and scripts/setup-sandbox.sh (exit 2 with the reason otherwise).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import random
import re
import shlex
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from sandbox_hosts import (  # noqa: E402
    CHAIN_A,
    SNAPSHOT_CACHE,
    STATE,
    Host,
    SandboxUnavailable,
    chain_plan,
    doctor,
    down,
    snapshot_diff,
    up,
)

FAULTS = ("kill", "drop", "both", "term", "int")
SIGNALS = {"term": signal.SIGTERM, "int": signal.SIGINT}
RECOVERIES = ("resume", "resume", "resume-rollback", "rollback")  # resume twice as often
# a run that finished: fixed (0), rolled back (3), nothing to do (10), or applied without a
# consumer to verify (14: the plan keeps no verification, `--consumers ""`)
FINISHED_EXIT = (0, 3, 10, 14)
APPLIED = ("fixed", "applied-not-verified")

RECOVERY_ARGS = {
    "resume": ("resume",),
    "resume-rollback": ("resume", "--rollback"),
    "rollback": ("rollback", "--yes"),
}
DROP = "pkill -f '^sshd: root'"


@dataclass
class Reference:
    """What a host looks like before and after a clean run, and how long a run takes."""

    plan: Path
    before: dict[str, Any]
    fixed: dict[str, Any]
    run_seconds: float
    cache: str  # the agent's snapshot digest cache (JSON text)


@dataclass
class Fault:
    kind: str
    at: float  # seconds after the command started
    command: str  # run | resume
    hit: bool = False  # the command was still running when the fault came
    phase: str = ""  # the host's last journal record after it
    exit: int | None = None
    outcome: str = ""  # remedy's report, when it wrote one
    message: str = ""


@dataclass
class RunResult:
    index: int
    faults: list[Fault] = field(default_factory=list)
    recovery: list[str] = field(default_factory=list)
    state: str = ""  # before | fixed | other
    problems: list[str] = field(default_factory=list)
    seconds: float = 0.0


def log(msg: str) -> None:
    sys.stderr.write(msg + "\n")
    sys.stderr.flush()


def last_phase(h: Host) -> str:
    """The newest run's last journal record on the host: `event:step`, `event`, or `none`."""
    _, out = h.ssh(
        f"cd {STATE}/runs 2>/dev/null && ls -t | head -n 1 | "
        'while read d; do tail -n 1 "$d/journal.jsonl" 2>/dev/null; done',
        timeout=60,
    )
    try:
        rec = json.loads(out.strip().splitlines()[-1])
    except (ValueError, IndexError):
        return "none"
    return rec["event"] + (f":{rec['step']}" if rec.get("step") is not None else "")


def push_cache(h: Host, cache: str) -> None:
    d = os.path.dirname(SNAPSHOT_CACHE)
    rc, out = h.ssh(f"mkdir -p {d} && cat > {SNAPSHOT_CACHE}", input=cache, timeout=60)
    if rc != 0:
        raise RuntimeError(f"cannot push the digest cache to {h.name}: {out[-300:]}")


def reference(name: str, workdir: Path, consumers: set[str]) -> tuple[Host, Reference]:
    """A fresh host, its plan, its digest before and after one clean run."""
    h = up("seed-chain-a", name)
    plan = workdir / f"{name}.plan.json"
    p = chain_plan(h, plan, CHAIN_A, consumers=consumers, quiet=True)
    before = h.snapshot()
    t0 = time.monotonic()
    r = h.remedy("run", h.name, "--plan", str(plan), "--yes", "--json", "--verify", "cheap")
    secs = time.monotonic() - t0
    # with no consumer to verify, a clean run re-runs nothing: applied-not-verified (14)
    if r.returncode != (0 if consumers else 14):
        raise RuntimeError(f"the reference run failed (exit {r.returncode}): {r.stderr[-1500:]}")
    fixed = h.snapshot()
    _, cache = h.ssh(f"cat {SNAPSHOT_CACHE}", timeout=60)
    log(
        f"[{name}] reference: plan {[s['action'] for s in p['steps']]}, verify "
        f"{[v['consumer'] for v in p['verification']]}; clean run {secs:.1f} s; digest "
        f"before {before['digest'][:12]}, fixed {fixed['digest'][:12]}"
    )
    return h, Reference(plan, before, fixed, secs, cache)


def inject(h: Host, proc: subprocess.Popen, kind: str, rng: random.Random) -> None:
    if kind in ("drop", "both"):
        h.sbx_exec(DROP)
    if kind == "both":
        time.sleep(rng.uniform(0.0, 0.5))
    if kind in ("kill", "both"):
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
    if kind in SIGNALS:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, SIGNALS[kind])


def wait_for_process(h: Host, proc: subprocess.Popen, pattern: str, limit: float) -> float | None:
    """Seconds until a process whose command line matches `pattern` runs on the host (polled
    inside its namespaces, not over SSH), or None if remedy ended or `limit` passed first."""
    t0 = time.monotonic()
    # the probe's own processes (its `sh -c`, the shell's forks before exec) hold the pattern
    # in their command lines: `[p]ip install` matches pip but not the probe's own text
    i = 1 if pattern.startswith("^") else 0
    if i < len(pattern) and pattern[i].isalnum():
        pattern = f"{pattern[:i]}[{pattern[i]}]{pattern[i + 1 :]}"
    probe = f"pgrep -f {shlex.quote(pattern)} >/dev/null"
    while time.monotonic() - t0 < limit and proc.poll() is None:
        if h.sbx_exec(probe, timeout=30).returncode == 0:
            return time.monotonic() - t0
        time.sleep(0.05)
    return None


def died_starting(err: str) -> bool:
    """A KeyboardInterrupt in Python's own start-up or in the console script's first import:
    no frame of remedy's (its entry module notes signals from its first line on)."""
    lines = [x for x in err.strip().splitlines() if x.strip()]
    if not lines or lines[-1].strip() != "KeyboardInterrupt":
        return False
    frames = re.findall(r'File "([^"]+)"', err)
    return not any(
        "/remedy/" in f and not f.endswith(("/remedy/__init__.py", "/remedy/entry.py"))
        for f in frames
    )


def faulted(
    h: Host,
    args: tuple[str, ...],
    kind: str,
    delay: float,
    rng: random.Random,
    command: str,
    during: str | None = None,
) -> Fault:
    """Start remedy with args, inject `kind` after `delay` seconds if it still runs, wait for
    it; the fault carries whether it hit, remedy's exit and the journal phase reached. With
    `during`, `delay` counts from when a host process matching that pattern appears."""
    f = Fault(kind, round(delay, 2), command)
    phase_before = last_phase(h) if kind in SIGNALS else ""
    proc = h.popen(*args, new_session=True)
    try:
        try:
            if during:
                # never seen (remedy ended first, or 300 s passed): the fault comes at once
                seen = wait_for_process(h, proc, during, limit=300)
                delay = delay if seen is not None else 0.0
                f.at = round(delay + (seen or 0.0), 2)
            proc.wait(timeout=delay)
        except subprocess.TimeoutExpired:
            f.hit = True
            inject(h, proc, kind, rng)
        out, err = proc.communicate(timeout=300)
    finally:
        if proc.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    f.exit = proc.returncode
    f.phase = last_phase(h)
    with contextlib.suppress(ValueError):
        rep = json.loads(out)
        f.outcome, f.message = rep.get("outcome", ""), rep.get("message", "")[:1500]
    if (
        f.hit
        and kind in SIGNALS
        and proc.returncode in (-int(SIGNALS[kind]), 1)
        and died_starting(err or "")
        and f.phase == phase_before
    ):
        # the signal came while Python itself started, before remedy's entry point
        f.outcome = "killed while Python started"
        return f
    if "Traceback" in (err or ""):
        f.phase += " (TRACEBACK)"
        raise AssertionError(f"{command} after a {kind}: traceback: {err[-1500:]}")
    if not f.hit and proc.returncode not in FINISHED_EXIT:
        raise AssertionError(
            f"{command} ended {proc.returncode} before the fault: {f.outcome}: {f.message} "
            f"{err[-800:]}"
        )
    if f.hit and kind in ("drop",) and proc.returncode not in (4, 0, 3, 5, 6, 10):
        raise AssertionError(f"{command} after a drop exited {proc.returncode}: {err[-800:]}")
    if f.hit and kind in SIGNALS:
        n = int(SIGNALS[kind])
        if proc.returncode == 128 + n:
            if f.outcome != "interrupted":
                raise AssertionError(f"{command} stopped by {kind} without a report: {out[-300:]}")
        elif proc.returncode == -n:
            # the signal came before remedy's handlers (while Python imported it): allowed
            # only if nothing of the command reached the host's journal
            if f.phase != phase_before:
                raise AssertionError(
                    f"{command} died of {kind} silently after changing the host "
                    f"(journal {phase_before} -> {f.phase})"
                )
            f.outcome = "killed before its handlers"
        elif proc.returncode not in FINISHED_EXIT:  # finished before the signal was handled
            raise AssertionError(f"{command} after {kind} exited {proc.returncode}: {err[-800:]}")
    return f


def check(h: Host, ref: Reference) -> tuple[str, list[str]]:
    """The invariant: (before | fixed | other, problems)."""
    problems: list[str] = []
    hist = h.history()
    left = [r["run_id"] for r in hist if r["outcome"] == "interrupted"]
    if left:
        problems.append(f"runs left interrupted: {left}")
    bad = [(r["run_id"], r["outcome"]) for r in hist if r["outcome"] == "needs-attention"]
    if bad:
        problems.append(f"runs that need attention: {bad}")
    lock = h.lock()
    if lock:
        problems.append(f"lock still held: {lock}")
    _, ps = h.ssh("ps -eo pid,args | grep -E '[p]ip install|[c]c -x c' || true", timeout=60)
    if ps.strip():
        problems.append(f"step processes still running: {ps.strip()[:300]}")
    snap = h.snapshot()
    state = (
        "fixed"
        if snap["digest"] == ref.fixed["digest"]
        else "before"
        if snap["digest"] == ref.before["digest"]
        else "other"
    )
    finished = [r for r in hist if r["outcome"] in (*APPLIED, "rolled-back")]
    expect = "fixed" if finished and finished[-1]["outcome"] in APPLIED else "before"
    if state == "other":
        problems.append(
            "host neither fully applied nor byte-identical to before; vs before:\n"
            + snapshot_diff(ref.before, snap)
            + "\nvs fixed:\n"
            + snapshot_diff(ref.fixed, snap)
        )
    elif state != expect:
        problems.append(
            f"host is {state} but the newest run's outcome says {expect}: "
            f"{[(r['run_id'], r['outcome']) for r in hist]}"
        )
    return state, problems


def one_run(
    h: Host,
    ref: Reference,
    rng: random.Random,
    index: int,
    during: tuple[str, float] | None = None,
) -> RunResult:
    """One iteration on a host in the baseline state (see the module docstring). With
    `during` (pattern, window), the first fault lands 0-window s after a matching host
    process appears (see --during)."""
    res = RunResult(index)
    t0 = time.monotonic()
    run_args = ("run", h.name, "--plan", str(ref.plan), "--yes", "--json", "--verify", "cheap")
    try:
        kind = rng.choice(FAULTS)
        if during:
            delay = rng.uniform(0.0, during[1])
            res.faults.append(faulted(h, run_args, kind, delay, rng, "run", during[0]))
        else:
            delay = rng.uniform(0.3, ref.run_seconds)
            res.faults.append(faulted(h, run_args, kind, delay, rng, "run"))
        rec = rng.choice(RECOVERIES)
        if rec == "resume" and rng.random() < 1 / 3:
            # the resume is hit too, at a random time within what is left of a run
            kind2 = rng.choice(FAULTS)
            delay2 = rng.uniform(0.3, max(1.0, ref.run_seconds - delay + 3))
            res.faults.append(
                faulted(h, ("resume", h.name, "--json"), kind2, delay2, rng, "resume")
            )
            res.recovery.append("resume (faulted)")
            rec = rng.choice(RECOVERIES)
        res.recovery.append(rec)
        r = h.remedy(*RECOVERY_ARGS[rec], h.name, "--json", timeout=600)
        if r.returncode not in FINISHED_EXIT or "Traceback" in r.stderr:
            rep: dict[str, Any] = {}
            with contextlib.suppress(ValueError):
                rep = json.loads(r.stdout)
            res.problems.append(
                f"final `{' '.join(RECOVERY_ARGS[rec])}` exited {r.returncode}: "
                f"{rep.get('outcome', '')}: {str(rep.get('message', ''))[:1200]} "
                f"{r.stderr.strip()[-1200:]}"
            )
        else:
            try:
                json.loads(r.stdout)
            except ValueError:
                res.problems.append(f"final `{rec}` printed no JSON report: {r.stdout[-300:]}")
        res.state, problems = check(h, ref)
        res.problems += problems
    except (AssertionError, RuntimeError, subprocess.TimeoutExpired) as exc:
        res.problems.append(f"{type(exc).__name__}: {exc}")
    res.seconds = time.monotonic() - t0
    return res


def describe(res: RunResult) -> str:
    fs = ", ".join(
        f"{f.command}: {f.kind} at {f.at:.1f} s "
        + (
            f"-> exit {f.exit} {f.outcome}, phase {f.phase}"
            if f.hit
            else f"(missed: exit {f.exit} {f.outcome})"
        )
        + (f" [{f.message[:300]}]" if f.hit and f.message else "")
        for f in res.faults
    )
    verdict = "OK" if not res.problems else "VIOLATION: " + res.problems[0][:400]
    return (
        f"run {res.index + 1}: {fs}; then {' -> '.join(res.recovery)}; host {res.state}; "
        f"{verdict} ({res.seconds:.0f} s)"
    )


class Soak:
    """`runs` iterations over `hosts` reused host names (one thread each)."""

    def __init__(
        self,
        runs: int,
        seed: int,
        hosts: int = 1,
        consumers: set[str] | None = None,
        prefix: str | None = None,
        minutes: float | None = None,
        during: tuple[str, float] | None = None,
    ) -> None:
        self.during = during
        self.runs, self.seed, self.hosts = runs, seed, max(1, min(hosts, runs))
        self.deadline = time.monotonic() + minutes * 60 if minutes else None
        self.consumers = consumers if consumers is not None else {"flashinfer-jit"}
        self.prefix = prefix or f"sk{os.getpid() % 100000}w"
        self.results: list[RunResult] = []
        self.errors: list[str] = []
        self._lock = threading.Lock()

    def worker(self, k: int, workdir: Path) -> None:
        name = f"{self.prefix}{k}"
        rng = random.Random(f"{self.seed}:{k}")
        try:
            h, ref = reference(name, workdir, self.consumers)
            try:
                for i in range(k, self.runs, self.hosts):
                    if self.deadline and time.monotonic() > self.deadline:
                        break
                    # back to the broken baseline: a new host (the reference run fixed it)
                    down(h)
                    h = up("seed-chain-a", name)
                    push_cache(h, ref.cache)
                    res = one_run(h, ref, rng, i, self.during)
                    with self._lock:
                        self.results.append(res)
                    log(f"[{name}] {describe(res)}")
            finally:
                down(h)
        except Exception as exc:  # a host that cannot start: reported, not a violation
            with self._lock:
                self.errors.append(f"{name}: {type(exc).__name__}: {exc}")
            log(f"[{name}] error: {exc}")

    def run(self) -> dict[str, Any]:
        t0 = time.monotonic()
        with tempfile.TemporaryDirectory(prefix="remedy-soak-") as wd:
            threads = [
                threading.Thread(target=self.worker, args=(k, Path(wd)), daemon=True)
                for k in range(self.hosts)
            ]
            for t in threads:
                t.start()
            for t in threads:
                while t.is_alive():  # a timed join keeps Ctrl-C working (hosts go at exit)
                    t.join(timeout=1.0)
        return self.summary(time.monotonic() - t0)

    def summary(self, seconds: float) -> dict[str, Any]:
        results = sorted(self.results, key=lambda r: r.index)
        hit = [(r, f) for r in results for f in r.faults if f.hit]
        survived = [f for r, f in hit if not r.problems]
        by_phase = Counter(f"{f.command} {f.phase.split(' ')[0]}" for _, f in hit)
        return {
            "runs": len(results),
            "faults_injected": len(hit),
            "faults_survived": len(survived),
            "violations": [
                {
                    "run": r.index + 1,
                    "faults": [f.__dict__ for f in r.faults],
                    "recovery": r.recovery,
                    "state": r.state,
                    "problems": r.problems,
                }
                for r in results
                if r.problems
            ],
            "by_kind": dict(Counter(f.kind for _, f in hit)),
            "survived_by_kind": dict(Counter(f.kind for r, f in hit if not r.problems)),
            "by_phase": dict(sorted(by_phase.items())),
            "missed": sum(1 for r in results for f in r.faults if not f.hit),
            "final_state": dict(Counter(r.state for r in results)),
            "errors": self.errors,
            "seed": self.seed,
            "hosts": self.hosts,
            "seconds": round(seconds, 1),
        }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=10)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--hosts", type=int, default=1, help="hosts in parallel (one thread each)")
    ap.add_argument(
        "--consumers",
        default="flashinfer-jit",
        help="comma-separated consumers whose (cheap) verification the plan keeps",
    )
    ap.add_argument(
        "--minutes", type=float, default=None, help="start no new run after this many minutes"
    )
    ap.add_argument(
        "--frozen",
        action="store_true",
        help="run remedy from a copy of HEAD's src/, knowledge/ and playbooks/ (git archive), "
        "so edits others make to the checkout meanwhile cannot change what is measured",
    )
    ap.add_argument(
        "--during",
        metavar="PATTERN",
        help="aim the run's fault inside a host process: it lands 0..--window s after a "
        "process whose command line matches PATTERN (pgrep -f) appears, e.g. 'pip install'",
    )
    ap.add_argument("--window", type=float, default=10.0, help="see --during (seconds)")
    ap.add_argument("--json", action="store_true", help="the summary as one JSON line")
    a = ap.parse_args(argv)
    if a.frozen:
        frozen = Path(tempfile.mkdtemp(prefix="remedy-soak-head-"))
        repo = Path(__file__).resolve().parents[1]
        arch = subprocess.run(
            ["git", "-C", str(repo), "archive", "HEAD", "src", "knowledge", "playbooks"],
            capture_output=True,
            check=True,
        ).stdout
        subprocess.run(["tar", "-x", "-C", str(frozen)], input=arch, check=True)
        os.environ["PYTHONPATH"] = str(frozen / "src")
        sys.path.insert(0, str(frozen / "src"))
        head = subprocess.run(
            ["git", "-C", str(repo), "rev-parse", "--short", "HEAD"], capture_output=True, text=True
        ).stdout.strip()
        log(f"soak: remedy from HEAD {head}, frozen in {frozen}")
    try:
        doctor()
    except SandboxUnavailable as exc:
        log(f"soak: {exc}")
        return 2
    consumers = {c for c in a.consumers.split(",") if c}
    soak = Soak(
        a.runs,
        a.seed,
        a.hosts,
        consumers,
        minutes=a.minutes,
        during=(a.during, a.window) if a.during else None,
    )
    s = soak.run()
    log(
        f"soak: {s['runs']} runs, {s['faults_injected']} faults injected {s['by_kind']}, "
        f"{s['faults_survived']} survived, {len(s['violations'])} violations, "
        f"{s['seconds']:.0f} s"
    )
    for v in s["violations"]:
        log(f"  violation in run {v['run']}: {v['problems']}")
    if a.json:
        print(json.dumps(s))
    return 1 if s["violations"] or s["errors"] else 0


if __name__ == "__main__":
    sys.exit(main())
