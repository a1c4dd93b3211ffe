"""Sandbox hosts for tests and bench scripts: start/stop them, run remedy against them as a
user does (`python -m remedy` subprocesses), read their state back over SSH.

Shared by tests/test_run_sandbox.py, tests/test_soak_sandbox.py, tests/test_faults_sandbox.py
and bench/soak.py, so that "the host as before" means the same digest everywhere.
Hosts started here are torn down at exit (atexit) if their owner forgot.
"""

from __future__ import annotations

import asyncio
import atexit
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from foreground import default_stop_signals

REPO = Path(__file__).resolve().parents[1]
SBX = REPO / "sandbox" / "sbx"
SITE = "/opt/sglang-venv/lib/python3.11/site-packages"
CU13 = f"{SITE}/nvidia/cu13"
STATE = "~/.local/state/remedy"  # the agent's state dir for root (no XDG_STATE_HOME there)
SNAPSHOT_CACHE = "/root/.cache/remedy-test-snapshot.json"

# the rules seed-chain-a stages (sandbox/scenarios/seed-chain-a/scenario.yaml, seeds 000-003)
CHAIN_A = {
    "ptxas-accepts-cicc-ptx",
    "nvcc-matches-cudart-headers",
    "toolkit-links-cudart",
    "cccl-complete",
}

_started: set[str] = set()


def _down_all() -> None:
    for name in list(_started):
        subprocess.run([str(SBX), "down", name], capture_output=True, check=False, timeout=300)
        _started.discard(name)


atexit.register(_down_all)


class SandboxUnavailable(Exception):
    """Why sandbox hosts cannot run here (tests skip with it)."""


def doctor() -> dict:
    """`sbx doctor`, or SandboxUnavailable with the reason."""
    if os.geteuid() != 0:
        raise SandboxUnavailable("sandbox hosts need root (namespaces, overlayfs): not root")
    if not SBX.exists():
        raise SandboxUnavailable(f"{SBX} is missing")
    p = subprocess.run([str(SBX), "doctor"], capture_output=True, text=True, timeout=120)
    try:
        doc = json.loads(p.stdout)
    except ValueError:
        raise SandboxUnavailable(f"sbx doctor failed: {p.stderr.strip()[-300:]}") from None
    if not doc.get("ssh_tier"):
        raise SandboxUnavailable(
            f"sandbox ssh tier not ready (scripts/setup-sandbox.sh): {doc.get('missing')}"
        )
    return doc


class Host:
    """One sandbox host: remedy's CLI against it, SSH, and its state read back."""

    def __init__(self, rec: dict) -> None:
        self.rec = rec
        self.name = rec["name"]
        self.cfg = rec["ssh_config"]

    # remedy, as a user runs it
    def argv(self, *args: str) -> list[str]:
        return [sys.executable, "-m", "remedy", "--ssh-config", self.cfg, *args]

    @staticmethod
    def env(crash: str | None = None) -> dict[str, str]:
        env = dict(os.environ)
        env.pop("REMEDY_CRASH_AT", None)
        if crash:
            env["REMEDY_CRASH_AT"] = crash
        return env

    def remedy(
        self, *args: str, crash: str | None = None, timeout: float = 1200
    ) -> subprocess.CompletedProcess:
        return subprocess.run(
            self.argv(*args),
            capture_output=True,
            text=True,
            env=self.env(crash),
            timeout=timeout,
            cwd=REPO,
        )

    def remedy_unverified(self, *args: str, timeout: float = 1200) -> subprocess.CompletedProcess:
        """remedy through tests/cli_fixture_driver.py: the saved-plan check off and the runner
        fixture operation registered, for fault injection through a hand-edited plan (which
        `remedy run --plan` itself refuses)."""
        driver = str(REPO / "tests" / "cli_fixture_driver.py")
        return subprocess.run(
            [sys.executable, driver, "--ssh-config", self.cfg, *args],
            capture_output=True,
            text=True,
            env=self.env(),
            timeout=timeout,
            cwd=REPO,
        )

    def popen(self, *args: str, new_session: bool = False) -> subprocess.Popen:
        return subprocess.Popen(
            self.argv(*args),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=self.env(),
            cwd=REPO,
            start_new_session=new_session,
            preexec_fn=default_stop_signals,  # whatever this runner ignores (tests/foreground.py)
        )

    def ssh(self, cmd: str, timeout: float = 120, input: str | None = None) -> tuple[int, str]:
        p = subprocess.run(
            ["ssh", "-F", self.cfg, self.name, cmd],
            capture_output=True,
            text=True,
            timeout=timeout,
            input=input,
        )
        return p.returncode, p.stdout + p.stderr

    def sbx_exec(self, cmd: str, timeout: float = 60) -> subprocess.CompletedProcess:
        """A command inside the host's namespaces as its root (mounts made here persist for
        the host's SSH sessions)."""
        return subprocess.run(
            [str(SBX), "exec", self.name, "sh", "-c", cmd],
            capture_output=True,
            text=True,
            timeout=timeout,
        )

    # the host's state
    def snapshot(self, extra: list[str] = ()) -> dict:
        """Agent digest (contents, modes, owners, link targets, directories) of the venv's
        nvidia tree, every nvidia dist-info, /etc/profile.d and `extra` paths."""
        return asyncio.run(_snapshot(self, list(extra)))

    def history(self) -> list[dict]:
        r = self.remedy("history", self.name, "--json", timeout=120)
        assert r.returncode == 0, r.stderr
        return json.loads(r.stdout)

    def lock(self) -> dict | None:
        """remedy's lock on the host (its JSON), None when free."""
        rc, out = self.ssh(f"cat {STATE}/lock.json 2>/dev/null || echo FREE", timeout=60)
        if out.strip() == "FREE":
            return None
        try:
            return json.loads(out)
        except ValueError:
            return {"unreadable": out[-300:]}

    def markers(self) -> dict[str, bool]:
        """Which step of the seed-chain-a fix is visible on the host right now."""
        _, out = self.ssh(
            f"cd {CU13} && printf 'align=%s\\n' \"$(bin/nvcc --version 2>/dev/null | "
            "grep -c 'release 13.0')\"; printf 'layout=%s\\n' \"$(test -L lib64 && "
            'test -e lib/libcudart.so && test -e lib/stubs/libcuda.so && echo 1 || echo 0)"; '
            "printf 'cccl=%s\\n' \"$(test -e include/cccl/nv/target && echo 1 || echo 0)\""
        )
        vals = dict(line.split("=", 1) for line in out.split() if "=" in line)
        return {k: vals.get(k, "0").strip() not in ("0", "") for k in ("align", "layout", "cccl")}


async def _snapshot(h: Host, extra: list[str]) -> dict:
    from remedy.executor.hoststate import HostState
    from remedy.transport import open_transport

    t = open_transport(h.name, ssh_config=h.cfg, connect_timeout=20.0)
    try:
        hs = HostState(t)
        await hs.setup()
        r = await t.run(["sh", "-c", f"ls -d {SITE}/nvidia {SITE}/nvidia_*.dist-info"], timeout=60)
        paths = sorted(r.text().split()) + ["/etc/profile.d", *extra]
        spec = {"paths": paths, "cache": SNAPSHOT_CACHE, "listing": True}
        _, data = await hs.agent("snapshot", input=json.dumps(spec).encode(), timeout=900)
        return data
    finally:
        await t.close()


def same(a: dict, b: dict) -> bool:
    return a["digest"] == b["digest"]


def snapshot_diff(a: dict, b: dict, n: int = 12) -> str:
    la, lb = {tuple(x) for x in a["listing"]}, {tuple(x) for x in b["listing"]}
    gone, new = sorted(la - lb)[:n], sorted(lb - la)[:n]
    return f"only before: {gone}\nonly after: {new}"


# Starts that failed in a row (reset by a start that succeeds). A host that will not start is
# tried once more (a transient failure of one container is not the test's); once two starts in
# a row failed, later ones fail at once with that reason instead of waiting out sbx's limit
# for every remaining test (a CI run once spent its whole time limit that way).
_failed_starts: list[str] = []
FAIL_FAST_AFTER = 2


def _sbx_up(scenario: str, name: str, extra: tuple[str, ...]) -> subprocess.CompletedProcess:
    _started.add(name)
    try:
        p = subprocess.run(
            [str(SBX), "up", scenario, "--name", name, *extra],
            capture_output=True,
            text=True,
            timeout=300,
        )
    except subprocess.TimeoutExpired as exc:
        p = subprocess.CompletedProcess(exc.cmd, 124, "", f"timed out after {exc.timeout} s")
    if p.returncode != 0:
        down(name)
    return p


def up(scenario: str, name: str, *extra: str) -> Host:
    """`sbx up SCENARIO --name NAME`; torn down at exit unless `down` ran first."""
    if len(_failed_starts) >= FAIL_FAST_AFTER:
        raise RuntimeError(
            f"sbx up {scenario} not tried: the last {len(_failed_starts)} starts failed, "
            f"the last with: {_failed_starts[-1]}"
        )
    p = _sbx_up(scenario, name, extra)
    if p.returncode != 0:
        p = _sbx_up(scenario, name, extra)
    if p.returncode != 0:
        _failed_starts.append(f"{scenario}: {p.stderr.strip()[-500:]}")
        raise RuntimeError(f"sbx up {scenario} failed (twice): {p.stderr.strip()[-500:]}")
    _failed_starts.clear()
    return Host(json.loads(p.stdout.strip().splitlines()[-1]))


def down(h: Host | str) -> None:
    name = h if isinstance(h, str) else h.name
    subprocess.run([str(SBX), "down", name], capture_output=True, timeout=300)
    _started.discard(name)


def host_for_test(scenario: str, prefix: str) -> Iterator[Host]:
    """A fixture body: one SCENARIO host named PREFIX+pid, skipped where the sandbox cannot
    run, always torn down (`yield from host_for_test(...)` in a pytest fixture)."""
    import pytest

    try:
        doctor()
    except SandboxUnavailable as exc:
        pytest.skip(str(exc))
    h = up(scenario, f"{prefix}{os.getpid() % 100000}")
    try:
        yield h
    finally:
        down(h)


def report_of(p: subprocess.CompletedProcess) -> dict:
    try:
        return json.loads(p.stdout)
    except ValueError:
        raise AssertionError(
            f"no JSON report (rc {p.returncode}):\nstdout: {p.stdout[-1500:]}"
            f"\nstderr: {p.stderr[-3000:]}"
        ) from None


def chain_plan(
    h: Host,
    out: Path,
    rules: set[str],
    *args: str,
    consumers: set[str] | None = None,
    quiet: bool = False,
) -> dict[str, Any]:
    """The planner's plan for this host (`remedy plan --host --out`), keeping the steps that
    repair the scenario's chain (and, when given, the verification of these consumers): the
    selection is remedy's own (`--rules`, `--consumers`, recorded in the plan), so the saved
    plan is one `run --plan` accepts (an edited plan is refused)."""
    sel = ["--rules", ",".join(sorted(rules))]
    if consumers is not None:
        sel += ["--consumers", ",".join(sorted(consumers))]
    r = h.remedy("plan", "--host", h.name, "--out", str(out), *args, *sel, timeout=600)
    assert r.returncode == 0, r.stderr[-2000:]
    plan = json.loads(out.read_text())
    kept = plan["steps"]
    if not quiet:
        print(
            f"plan for {h.name}: steps {[s['action'] for s in kept]} (only those repairing "
            f"the rules the scenario stages: {sorted(rules)}); verify "
            f"{[(v['consumer'], v['probe']) for v in plan['verification']]}"
        )
    return plan
