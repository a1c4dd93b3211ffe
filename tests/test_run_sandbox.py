"""`remedy run` on real sandbox hosts (issue "remedy run"): real sshd, real pip toolchains,
real JIT builds, real systemd; remedy itself always runs as a subprocess (`python -m remedy`),
exactly as a user runs it, and the host's state is read back over SSH after every step.

What the tests prove, in the order of the issue:
  * seed-chain-a: FlashInfer's and SGLang's real JIT builds fail before, `remedy run` fixes the
    chain (exit 0, every step committed with its probe ok, ONE expensive verification per
    consumer), the same builds pass after, `remedy rollback` makes the venv byte-identical.
  * kill -9 at every journal point (start; intent/checkpoint/applied/probed/committed of each
    step; verify) on ONE host: each interrupted run is resumed by a `remedy resume` that is
    itself killed at the next point, so every point is also a crash *during a resume*; at
    each point the host must show exactly the steps the journal committed (plus the one in
    flight); then `resume --rollback` from several points returns the host byte-identical.
  * a dropped SSH connection inside step 1's pip install and an unreachable host during the
    static re-check: a clear exit 4, the lock kept, `remedy resume` finishes.
  * a second concurrent run is refused (exit 5, owner and lock id); a stale plan is refused
    (exit 5) with the fact diff.
  * seed-chain-b (systemd): the fix is a drop-in, daemon-reload, the unit's Environment shows
    CUDA_HOME, the unit restarts once at the final launch probe and reaches readiness;
    rollback removes the drop-in and the unit's environment is as before.

Plans. The main seed-chain-a test runs `remedy run HOST --yes` exactly as a user does (remedy
plans itself). The other tests apply a saved plan (`remedy plan --out`, `run --plan`), keeping
the steps that repair the scenario's staged chain and printing any other (today none; the
knowledge grows, and a step for a rule the sandbox does not stage, e.g. a wheel its offline
index lacks, must not make a crash test fail for an unrelated reason). Crash, lock and
connection tests verify with `--verify cheap` (compile/link probes) to keep time sane; the
main seed-chain-a test and seed-chain-b verify for real (JIT builds, a launch).

Needs root and `scripts/setup-sandbox.sh`; otherwise every test is skipped with the reason.
Hosts are named r<pid>..., torn down by fixture finalizers (and atexit).
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import signal
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest
from sandbox_hosts import (
    CHAIN_A,
    CU13,
    Host,
    SandboxUnavailable,
    chain_plan,
    report_of,
    same,
    snapshot_diff,
)
from sandbox_hosts import doctor as sbx_doctor
from sandbox_hosts import down as _down
from sandbox_hosts import up as _up

PREFIX = f"r{os.getpid() % 100000}"
UNIT = "sglang-k26.service"
DROPIN_DIR = f"/etc/systemd/system/{UNIT}.d"
CUDA_HOME_DROPIN = f"{DROPIN_DIR}/50-remedy-cuda-home.conf"

# the rules each scenario stages (CHAIN_A: sandbox_hosts; seeds 000-003)
EXPENSIVE = {
    "flashinfer-jit-build",
    "sglang-jit-build",
    "torch-ext-build",
    "jit-run-probe",
    "launch-probe",
    "graph-capture",
}
CHAIN_B = {
    "toolkit-links-cudart",
    "cccl-complete",
    "flashinfer-sm12x-gate",
    "toolkit-major-matches-torch",
}

pytestmark = pytest.mark.sandbox


@pytest.fixture(scope="module")
def doctor() -> dict:
    try:
        return sbx_doctor()
    except SandboxUnavailable as exc:
        pytest.skip(str(exc))


# --------------------------------------------------------------------------------------------
# a host, and remedy against it (Host, snapshots, plans: tests/sandbox_hosts.py)
# --------------------------------------------------------------------------------------------


async def _probe(h: Host, probe: str, consumer: str, arch: str = "12.0") -> Any:
    from remedy.facts import collect_facts
    from remedy.probes import run_probe
    from remedy.transport import open_transport

    t = open_transport(h.name, ssh_config=h.cfg, connect_timeout=20.0)
    try:
        facts = await collect_facts(t)
        return await run_probe(probe, t, facts, consumer=consumer, arch=arch, timeout=900)
    finally:
        await t.close()


def probe(h: Host, probe_id: str, consumer: str) -> Any:
    t0 = time.monotonic()
    res = asyncio.run(_probe(h, probe_id, consumer))
    print(
        f"  {probe_id} ({consumer}) on {h.name}: {'ok' if res.ok else 'FAILED'} in "
        f"{time.monotonic() - t0:.0f} s: {res.detail[:200]}"
    )
    return res


def up(scenario: str, suffix: str, *extra: str) -> Host:
    try:
        return _up(scenario, f"{PREFIX}{suffix}", *extra)
    except RuntimeError as exc:
        pytest.fail(str(exc))


def down(h: Host) -> None:
    _down(h)


# --------------------------------------------------------------------------------------------
# seed-chain-a: the whole chain, for real
# --------------------------------------------------------------------------------------------


@pytest.fixture
def host_a(doctor):
    h = up("seed-chain-a", "a")
    yield h
    down(h)


@pytest.mark.slow
def test_seed_chain_a_run_fixes_the_chain_and_rollback_restores_it(host_a, tmp_path):
    h = host_a
    t0 = time.monotonic()
    before = h.snapshot()
    _, freeze_before = h.ssh("/opt/sglang-venv/bin/python -m pip freeze --all")
    # 1. the real consumers fail before
    fi = probe(h, "flashinfer-jit-build", "flashinfer-jit")
    sg = probe(h, "sglang-jit-build", "sglang-jit-kernel")
    assert not fi.ok and not sg.ok, (fi.detail, sg.detail)
    assert "ptxas-unsupported-ptx-version" in {s.signature for s in fi.symptoms}, fi.detail
    # 2. remedy run, exactly as a user runs it (it plans itself; full verification)
    log = tmp_path / "run.log"
    r = h.remedy("run", h.name, "--yes", "--json", "--log", str(log))
    rep = report_of(r)
    print(
        f"remedy run: {rep['outcome']} in {rep['seconds']} s; steps "
        f"{[(s['action'], s['probe'], s['probe_ok']) for s in rep['steps']]}; verification "
        f"{[(v['consumer'], v['probe'], v['ok']) for v in rep['verification']]}"
    )
    assert r.returncode == 0 and rep["outcome"] == "fixed", (rep["message"], r.stderr[-2000:])
    assert [s["action"] for s in rep["steps"]] == [
        "pip-align-cuda-wheels",
        "link-layout-symlinks",
        "pip-install-cccl",
    ]
    assert all(s["outcome"] == "committed" and s["probe_ok"] is True for s in rep["steps"])
    # exactly one expensive verification per consumer, at the end
    consumers = [v["consumer"] for v in rep["verification"]]
    assert len(consumers) == len(set(consumers)) >= 3, consumers
    ran = [v for v in rep["verification"] if v["ok"] is not None]
    assert rep["expensive_verifications"] == len(ran) >= 3, rep["verification"]
    assert {v["consumer"]: v["probe"] for v in ran} == {
        "flashinfer-jit": "flashinfer-jit-build",
        "sglang-jit-kernel": "sglang-jit-build",
        "torch-cpp-extension": "torch-ext-build",
        # the stand-in GPU's nvidia-smi answers, no driver loads: Triton compiles for its arch
        # (LLVM + Triton's ptxas) and does not run it (remedy.probes, since the toolchain work)
        "triton": "triton-compile",
    }
    assert all(v["ok"] for v in ran), ran
    # ... and nothing expensive before it: the steps were proved by compile/link/preprocess
    expensive = [p for p in rep["probes"] if p["probe"] in EXPENSIVE and p["ok"] is not None]
    assert [p["phase"] for p in expensive] == ["verify"] * 3, rep["probes"]
    text = log.read_text()
    assert "step 3/3" in text and "outcome: fixed (exit 0)" in text and '"run_id"' in text
    # 3. the same real builds pass after
    fi = probe(h, "flashinfer-jit-build", "flashinfer-jit")
    sg = probe(h, "sglang-jit-build", "sglang-jit-kernel")
    assert fi.ok and sg.ok, (fi.detail, sg.detail)
    assert h.markers() == {"align": True, "layout": True, "cccl": True}
    # 4. rollback: byte-identical venv toolchain and package set
    r = h.remedy("rollback", h.name, "--yes", "--json")
    assert r.returncode == 0 and report_of(r)["outcome"] == "rolled-back", r.stderr[-2000:]
    after = h.snapshot()
    assert same(before, after), snapshot_diff(before, after)
    _, freeze_after = h.ssh("/opt/sglang-venv/bin/python -m pip freeze --all")
    assert freeze_after == freeze_before
    assert [x["outcome"] for x in h.history()] == ["rolled-back"]
    print(f"seed-chain-a run + rollback: {time.monotonic() - t0:.0f} s")


# --------------------------------------------------------------------------------------------
# one host for the crash points, the dropped connection and the lock
# --------------------------------------------------------------------------------------------


class Shared:
    host: Host
    plan: Path
    initial: dict
    clean: bool = True


@pytest.fixture(scope="module")
def shared(doctor, tmp_path_factory):
    h = up("seed-chain-a", "s")
    s = Shared()
    s.host = h
    s.plan = tmp_path_factory.mktemp("plans") / "chain-a.json"
    chain_plan(h, s.plan, CHAIN_A)
    s.initial = h.snapshot()
    yield s
    down(h)


def back_to_initial(s: Shared) -> None:
    """The host as at the start: whatever the last test left is resumed-rolled back, then
    its snapshot must equal the initial one (checked once between two tests)."""
    if s.clean:
        return
    hist = s.host.history()
    if any(x["outcome"] == "interrupted" for x in hist):
        s.host.remedy("resume", s.host.name, "--rollback", "--json")
    if any(x["outcome"] == "fixed" for x in s.host.history()):
        s.host.remedy("rollback", s.host.name, "--yes", "--json")
    now = s.host.snapshot()
    assert same(s.initial, now), snapshot_diff(s.initial, now)
    s.clean = True


@pytest.fixture
def host_s(shared):
    back_to_initial(shared)
    shared.clean = False
    yield shared
    back_to_initial(shared)


def cheap_run(h: Host, plan: Path) -> tuple[str, ...]:
    """`remedy run` of PLAN on H, confirmed, JSON report, cheap verification."""
    return ("run", h.name, "--plan", str(plan), "--yes", "--json", "--verify", "cheap")


POINTS = (
    ["start"]
    + [
        f"{ev}:{i}"
        for i in range(3)
        for ev in ("intent", "checkpoint", "applied", "probed", "committed")
    ]
    + ["verify"]
)
STEP_MARKER = ["align", "layout", "cccl"]


def expected_markers(point: str) -> dict[str, bool]:
    """What must be on the host after kill -9 right after this journal record: the
    committed steps, plus the step in flight once its commands ran."""
    ev, _, i = point.partition(":")
    if ev == "start":
        return dict.fromkeys(STEP_MARKER, False)
    if ev == "verify":
        return dict.fromkeys(STEP_MARKER, True)
    n = int(i)
    done = n + (1 if ev in ("applied", "probed", "committed") else 0)
    return {m: k < done for k, m in enumerate(STEP_MARKER)}


@pytest.mark.slow
def test_kill_9_at_every_journal_point_then_resume_finishes(host_s):
    """run killed at `start`; each resume killed at the next point; the last resume
    finishes. After every kill: the host shows what the journal says, the run is
    `interrupted` in history and keeps the lock."""
    h, t0 = host_s.host, time.monotonic()
    first = True
    for point in POINTS:
        ts = time.monotonic()
        if first:
            r = h.remedy(*cheap_run(h, host_s.plan), crash=point)
            first = False
        else:
            r = h.remedy("resume", h.name, "--json", crash=point)
        assert r.returncode == -signal.SIGKILL, (point, r.returncode, r.stderr[-2000:])
        last = last_records(h)
        assert len(last) == 1, (point, last)
        ev, _, i = point.partition(":")
        rec = next(iter(last.values()))
        assert (rec["event"], rec["step"]) == (ev, int(i) if i else None), (point, rec)
        assert h.markers() == expected_markers(point), point
        print(f"  kill -9 at {point}: host as the journal says ({time.monotonic() - ts:.0f} s)")
    hist = h.history()
    assert [x["outcome"] for x in hist] == ["interrupted"], hist
    assert (hist[0]["last_event"], hist[0]["last_step"]) == ("verify", None)
    # the lock is still held by the interrupted run: a new run is refused, naming it
    r = h.remedy("run", h.name, "--plan", str(host_s.plan), "--yes", "--json")
    assert r.returncode == 5 and report_of(r)["outcome"] == "refused", r.stderr[-1000:]
    assert hist[0]["run_id"] in r.stderr
    r = h.remedy("resume", h.name, "--json")
    rep = report_of(r)
    assert r.returncode == 0 and rep["outcome"] == "fixed", (rep["message"], r.stderr[-1500:])
    assert rep["verify_mode"] == "cheap" and rep["expensive_verifications"] == 0
    assert h.markers() == dict.fromkeys(STEP_MARKER, True)
    assert [x["outcome"] for x in h.history()] == ["fixed"]
    r = h.remedy("rollback", h.name, "--yes", "--json")
    assert r.returncode == 0 and report_of(r)["outcome"] == "rolled-back"
    now = h.snapshot()
    assert same(host_s.initial, now), snapshot_diff(host_s.initial, now)
    print(f"17 journal points, resumed to fixed, rolled back: {time.monotonic() - t0:.0f} s")


@pytest.mark.slow
@pytest.mark.parametrize("point", ["applied:1"])
def test_kill_9_then_resume_rollback_is_byte_identical(host_s, point):
    h = host_s.host
    r = h.remedy(*cheap_run(h, host_s.plan), crash=point)
    assert r.returncode == -signal.SIGKILL, (point, r.stderr[-1500:])
    assert h.markers() == expected_markers(point)
    r = h.remedy("resume", h.name, "--rollback", "--json")
    assert r.returncode == 0 and report_of(r)["outcome"] == "rolled-back", r.stderr[-1500:]
    now = h.snapshot()
    assert same(host_s.initial, now), (point, snapshot_diff(host_s.initial, now))
    assert [x["outcome"] for x in h.history()][-1] == "rolled-back"


def last_records(h: Host) -> dict[str, dict]:
    """The last journal record of every run on the host, read over SSH."""
    _, out = h.ssh(
        "cd ~/.local/state/remedy/runs 2>/dev/null && for d in */; do "
        'printf \'%s \' "${d%/}"; tail -n 1 "$d/journal.jsonl"; done'
    )
    recs = {}
    for line in out.splitlines():
        rid, _, rest = line.partition(" ")
        if rest.strip():
            recs[rid] = json.loads(rest)
    return recs


def wait_journal(
    h: Host, known: set[str], pattern: str, proc: subprocess.Popen, timeout: float = 300
) -> str:
    """Poll the host's journals until a run not in `known` has a record matching pattern;
    returns that run's id."""
    deadline = time.monotonic() + timeout
    rx = re.compile(pattern)
    while time.monotonic() < deadline:
        _, out = h.ssh(
            "cd ~/.local/state/remedy/runs 2>/dev/null && "
            "for d in */; do printf '%s ' \"${d%/}\"; tr '\\n' ' ' < "
            '"$d/journal.jsonl" 2>/dev/null; echo; done',
            timeout=30,
        )
        for line in out.splitlines():
            rid, _, rest = line.partition(" ")
            if rid and rid not in known and rx.search(rest):
                return rid
        if proc.poll() is not None:
            raise AssertionError(
                f"remedy ended (rc {proc.returncode}) before {pattern}: "
                f"{proc.stderr.read()[-1500:] if proc.stderr else ''}"
            )
        time.sleep(0.3)
    raise AssertionError(f"no journal record {pattern} within {timeout} s")


def known_runs(h: Host) -> set[str]:
    return {x["run_id"] for x in h.history()}


# step 1's pip process ([p] so that pgrep's own shell never matches)
PIP_PROCESS = "^/opt/sglang-venv/bin/[p]ython -m pip install"


@pytest.mark.slow
def test_second_run_refused_then_dropped_connection_mid_pip_then_resume(host_s):
    """While run 1 is inside step 1's pip install: run 2 is refused (exit 5, run 1's id and
    owner); then the host's sshd session processes are killed: run 1 exits 4 with one clear
    line (no traceback, no hang), the lock stays, `remedy resume` stops what is left of the
    pip install, restores step 1 and finishes. The pip process is held (SIGSTOP) while run 2
    is refused, so that a loaded machine cannot let it finish first; it continues at the drop."""
    h = host_s.host
    known = known_runs(h)
    p1 = h.popen(*cheap_run(h, host_s.plan))
    stopped = False
    try:
        rid = wait_journal(h, known, r'"event": "checkpoint", [^}]*"step": 0\b', p1)
        deadline = time.monotonic() + 120
        while h.sbx_exec(f"pkill -STOP -f '{PIP_PROCESS}'").returncode != 0:
            assert p1.poll() is None and time.monotonic() < deadline, "no pip install seen"
            time.sleep(0.05)
        stopped = True
        # a second run while the first holds the lock
        r2 = h.remedy("run", h.name, "--plan", str(host_s.plan), "--yes", "--json", timeout=300)
        rep2 = report_of(r2)
        assert r2.returncode == 5 and rep2["outcome"] == "refused", r2.stderr[-1000:]
        assert rid in rep2["message"] and f"pid {p1.pid}" in rep2["message"], rep2["message"]
        assert f"--break-lock {rid}" in r2.stderr
        # drop the connection: step 1 (pip install) is running now
        _, j = h.ssh(f"cat ~/.local/state/remedy/runs/{rid}/journal.jsonl")
        assert '"event": "applied"' not in j, "pip install already done: too late to drop"
        k = h.sbx_exec("pkill -f '^sshd: root'")
        t_drop = time.monotonic()
        h.sbx_exec(f"pkill -CONT -f '{PIP_PROCESS}'")  # it runs on, its connection gone
        stopped = False
        out, err = p1.communicate(timeout=120)
        print(
            f"  dropped after checkpoint:0; remedy exited {p1.returncode} in "
            f"{time.monotonic() - t_drop:.1f} s: {err.strip().splitlines()[-3:]}"
        )
    finally:
        if stopped:
            h.sbx_exec(f"pkill -CONT -f '{PIP_PROCESS}'")
        if p1.poll() is None:
            p1.kill()
            p1.wait()
    assert k.returncode == 0, k.stderr
    assert p1.returncode == 4, (p1.returncode, err[-2000:])
    assert "Traceback" not in err and err.startswith("remedy: error:"), err[-2000:]
    assert "interrupted" in err and f"remedy resume {h.name}" in err
    rep = json.loads(out)
    assert rep["outcome"] == "interrupted" and rep["run_id"] == rid and rep["exit_code"] == 4
    hist = h.history()
    assert hist[-1]["outcome"] == "interrupted" and hist[-1]["last_step"] == 0
    r = h.remedy("resume", h.name, "--json")
    rep = report_of(r)
    assert r.returncode == 0 and rep["outcome"] == "fixed", (rep["message"], r.stderr[-1500:])
    assert h.markers() == dict.fromkeys(STEP_MARKER, True)
    _, ps = h.ssh("ps -eo args | grep '[p]ip install' || true")
    assert not ps.strip(), ps


@pytest.mark.slow
def test_host_unreachable_during_the_static_recheck_is_exit_4_then_resume(host_s):
    """sshd sessions killed and the listener stopped right after step 2 applied (remedy is
    re-collecting facts): exit 4, a clear message; once sshd answers, resume finishes."""
    h = host_s.host
    known = known_runs(h)
    p1 = h.popen(*cheap_run(h, host_s.plan))
    try:
        wait_journal(h, known, r'"event": "applied", [^}]*"step": 1\b', p1)
        h.sbx_exec("pkill -STOP -f '[l]istener'; pkill -f '^sshd: root'")
        t_drop = time.monotonic()
        out, err = p1.communicate(timeout=180)
        secs = time.monotonic() - t_drop
    finally:
        h.sbx_exec("pkill -CONT -f '[l]istener'")
        if p1.poll() is None:
            p1.kill()
            p1.wait()
    print(
        f"  unreachable after applied:1; remedy exited {p1.returncode} in {secs:.1f} s: "
        f"{err.strip().splitlines()[-3:]}"
    )
    assert p1.returncode == 4 and "Traceback" not in err, err[-2000:]
    assert err.startswith("remedy: error:") and f"remedy resume {h.name}" in err
    assert json.loads(out)["outcome"] == "interrupted"
    r = h.remedy("resume", h.name, "--json")
    rep = report_of(r)
    assert r.returncode == 0 and rep["outcome"] == "fixed", (rep["message"], r.stderr[-1500:])


@pytest.mark.slow
def test_a_proof_that_needs_a_later_step_is_deferred_then_proved(host_s, tmp_path):
    """A plan ordered so that step 1's probe cannot pass yet: the lib64 layout first, proved
    by link-probe, which also compiles a kernel, and ptxas still rejects cicc's PTX until the
    align step. The runner sees that the failure is what ptxas-accepts-cicc-ptx predicts and
    that step 2 repairs it: it defers the proof, runs it again after step 2, and it passes."""
    h = host_s.host
    plan = json.loads(host_s.plan.read_text())
    order = {"link-layout-symlinks": 0, "pip-align-cuda-wheels": 1, "pip-install-cccl": 2}
    plan["steps"].sort(key=lambda st: order[st["action"]])
    reordered = tmp_path / "reordered.json"
    reordered.write_text(json.dumps(plan))
    # a reordered plan is not what remedy plans: `run --plan` refuses it; the fixture driver
    # (saved-plan check off) runs it to exercise the runner's deferred proofs
    r = h.remedy_unverified(*cheap_run(h, reordered))
    rep = report_of(r)
    print(
        f"  deferred: {[(st['action'], st['probe_ok'], st['deferred_to']) for st in rep['steps']]}"
    )
    assert r.returncode == 0 and rep["outcome"] == "fixed", (rep["message"], r.stderr[-1500:])
    first = rep["steps"][0]
    assert first["action"] == "link-layout-symlinks" and first["deferred_to"] == 1
    assert first["probe_ok"] is True and "proved after step 2" in first["detail"]
    assert "ptxas-accepts-cicc-ptx" in first["detail"]
    phases = [(p["phase"], p["probe"], p["ok"]) for p in rep["probes"]][:3]
    assert phases == [
        ("step 1", "link-probe", False),
        ("step 2", "compile-probe", True),
        ("proof of step 1 after step 2", "link-probe", True),
    ], rep["probes"]


@pytest.mark.slow
def test_a_step_that_fails_its_check_rolls_back_every_step_exit_3(host_s, tmp_path):
    """Fault injection in a saved plan: step 3 (install CCCL) does nothing, so its static
    re-check finds cccl-complete still violated: the run restores step 3, then 2 and 1, and
    ends rolled-back (exit 3) naming the finding that was wrong; the host is byte-identical."""
    h = host_s.host
    from runner_fixture_op import FixtureShell

    from remedy.model import Plan

    saved = Plan.model_validate_json(host_s.plan.read_text())
    k = next(i for i, st in enumerate(saved.steps) if "cccl-complete" in st.fixes)
    st = saved.steps[k]
    # the step does nothing (same touches, so the same checkpoint): an edited plan, which
    # `run --plan` refuses; the fixture driver (saved-plan check off) runs it
    saved.steps[k] = st.model_copy(
        update={"operation": FixtureShell(cmds=["true"], paths=st.touches)}
    )
    plan = json.loads(saved.model_dump_json())
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(plan))
    r = h.remedy_unverified(*cheap_run(h, bad))
    rep = report_of(r)
    print(f"  fault in step {k + 1}: exit {r.returncode}: {rep['message'][:200]}")
    assert r.returncode == 3 and rep["outcome"] == "rolled-back", (rep, r.stderr[-1000:])
    assert rep["wrong_finding"] == plan["steps"][k]["fixes"]
    assert "still violated after the step: cccl-complete" in rep["message"]
    assert [st["outcome"] for st in rep["steps"]] == ["rolled-back"] * (k + 1)
    now = h.snapshot()
    assert same(host_s.initial, now), snapshot_diff(host_s.initial, now)
    assert h.history()[-1]["outcome"] == "rolled-back"


@pytest.mark.slow
def test_a_failing_restore_is_needs_attention_exit_6_then_rollback(host_s):
    """A checkpoint that cannot be restored (its manifest moved away on the host) ends the
    rollback `needs-attention` (exit 6, JSON report) instead of an error; with the manifest
    back, `remedy rollback` finishes and the host is byte-identical."""
    h = host_s.host
    known = known_runs(h)
    r = h.remedy(*cheap_run(h, host_s.plan), crash="committed:0")
    assert r.returncode == -signal.SIGKILL, r.stderr[-1500:]
    (rid,) = set(last_records(h)) - known
    cp = f"~/.local/state/remedy/runs/{rid}/cp/0"
    assert h.ssh(f"mv {cp}/manifest.json {cp}/manifest.aside")[0] == 0
    r = h.remedy("resume", h.name, "--rollback", "--json")
    rep = report_of(r)
    print(f"  restore failed: exit {r.returncode}: {rep['message'][:200]}")
    assert r.returncode == 6 and rep["outcome"] == "needs-attention", (rep, r.stderr[-1000:])
    assert "Traceback" not in r.stderr and "steps still applied: [1]" in rep["message"]
    assert h.history()[-1]["outcome"] == "needs-attention"
    assert h.ssh(f"mv {cp}/manifest.aside {cp}/manifest.json")[0] == 0
    r = h.remedy("rollback", h.name, "--yes", "--json")
    assert r.returncode == 0 and report_of(r)["outcome"] == "rolled-back", r.stderr[-1000:]
    now = h.snapshot()
    assert same(host_s.initial, now), snapshot_diff(host_s.initial, now)


def test_nothing_to_do_on_a_healthy_host_is_exit_10(doctor):
    h = up("healthy", "h")
    try:
        r = h.remedy("run", h.name, "--yes", "--json")
        rep = report_of(r)
        assert r.returncode == 10 and rep["outcome"] == "nothing-to-do", (rep, r.stderr[-500:])
        assert h.history() == []  # no lock taken, nothing recorded
    finally:
        down(h)


def test_stale_plan_is_refused_with_the_fact_diff(doctor, tmp_path):
    h = up("seed-chain-a", "p")
    try:
        r = h.remedy("plan", "--host", h.name, "--out", str(tmp_path / "p.json"))
        assert r.returncode == 0, r.stderr[-1000:]
        rc, out = h.ssh(
            "/opt/sglang-venv/bin/python -m pip install --no-deps nvidia-cuda-cccl==13.0.85"
        )
        assert rc == 0, out
        r = h.remedy("run", h.name, "--plan", str(tmp_path / "p.json"), "--yes", "--json")
        rep = report_of(r)
        print(f"  stale plan: exit {r.returncode}: {rep['message']}; diff {rep['diff'][:6]}")
        assert r.returncode == 5 and rep["outcome"] == "refused", r.stderr[-1000:]
        assert "stale" in rep["message"] and "what changed:" in r.stderr
        assert any("cccl" in line for line in rep["diff"]), rep["diff"]
        assert h.history() == []  # refused before taking the lock: nothing recorded
    finally:
        down(h)


# --------------------------------------------------------------------------------------------
# seed-chain-b: systemd
# --------------------------------------------------------------------------------------------


def unit_state(h: Host) -> tuple[str, str]:
    _, env = h.ssh(f"systemctl show -p Environment {UNIT}")
    _, listing = h.ssh(f"ls -la --time-style=+ {DROPIN_DIR} 2>&1; ls /etc/systemd/system")
    return env.strip(), listing


@pytest.fixture
def host_b(doctor):
    if not doctor.get("systemd_tier"):
        pytest.skip(f"sandbox systemd tier not ready: {doctor.get('missing')}")
    h = up("seed-chain-b", "b")
    yield h
    down(h)


@pytest.mark.slow
@pytest.mark.systemd
def test_seed_chain_b_dropin_reload_one_restart_readiness_then_rollback(host_b, tmp_path):
    h = host_b
    env_before, listing_before = unit_state(h)
    assert "CUDA_HOME" not in env_before
    before = h.snapshot(["/etc/systemd/system"])
    plan = chain_plan(
        h, tmp_path / "b.json", CHAIN_B, "--service", UNIT, consumers={"sglang-server"}
    )
    assert [v["probe"] for v in plan["verification"]] == ["launch-probe"]
    from remedy.model import Plan

    steps = Plan.model_validate(plan).steps  # touches are rendered from the operations
    assert any(t.target == CUDA_HOME_DROPIN for s in steps for t in s.touches)
    _, t_start = h.ssh("date +%s")
    r = h.remedy("run", h.name, "--plan", str(tmp_path / "b.json"), "--yes", "--json")
    rep = report_of(r)
    print(
        f"seed-chain-b run: {rep['outcome']} in {rep['seconds']} s: "
        f"{[(s['action'], s['probe_ok']) for s in rep['steps']]}; {rep['verification']}"
    )
    assert r.returncode == 0 and rep["outcome"] == "fixed", (rep["message"], r.stderr[-2000:])
    assert rep["expensive_verifications"] == 1
    assert rep["verification"][0]["probe"] == "launch-probe" and rep["verification"][0]["ok"]
    env_after, _ = unit_state(h)
    assert f"CUDA_HOME={CU13}" in env_after, env_after
    rc, dropin = h.ssh(f"cat {CUDA_HOME_DROPIN}")
    assert rc == 0 and f'Environment="CUDA_HOME={CU13}"' in dropin
    # one start of the unit during the run (the launch probe's restart), and it is ready
    _, starts = h.ssh(
        f"journalctl -u {UNIT} --since @{t_start.strip()} -o cat | grep -c '^Started '"
    )
    assert starts.strip() == "1", starts
    _, jl = h.ssh(f"journalctl -u {UNIT} -o cat | tail -n 200")
    assert "The server is fired up and ready to roll!" in jl
    rc, active = h.ssh(f"systemctl is-active {UNIT}")
    assert active.strip() == "active"
    # rollback: drop-in gone, daemon reloaded, environment and unit dir as before
    r = h.remedy("rollback", h.name, "--yes", "--json")
    assert r.returncode == 0 and report_of(r)["outcome"] == "rolled-back", r.stderr[-1500:]
    env_back, listing_back = unit_state(h)
    assert env_back == env_before
    assert listing_back == listing_before
    after = h.snapshot(["/etc/systemd/system"])
    assert same(before, after), snapshot_diff(before, after)
    # the unit's definition is back; the process started by the launch probe still runs
    # with the environment it was started with until the next restart (not remedy's call)
    _, need = h.ssh(f"systemctl show -p NeedDaemonReload {UNIT}")
    assert need.strip() == "NeedDaemonReload=no"
