"""launch-probe and env-probe against a REAL systemd 252 over SSH (sandbox/sbx, tier systemd).

One sandbox host (scenario `healthy`: /opt/sglang-venv with FlashInfer 0.6.11.post1 and a
consistent cu13 13.0 toolchain) serves the module:
  * launch-probe restarts a unit running the STAND-IN server (tests/fixtures/probes/
    fake_sglang_server.py, replaying real recorded SGLang lines) and follows the journal of the
    new invocation: the old instance's recorded shutdown lines (a child "crashed with exit code
    -15", "SIGQUIT ... one child failed") are written to the same unit's journal during the
    restart and must not count;
  * env-probe re-reads the unit's environment on the host (Environment=, a drop-in, an
    EnvironmentFile) and runs FlashInfer's real gate with the unit's interpreter.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import sandbox_hosts

from remedy.model import Facts, Gpu, Workload
from remedy.probes import ProbeResult, run_probe
from remedy.transport import SSHTransport

pytestmark = pytest.mark.systemd

ROOT = Path(__file__).resolve().parents[1]
SBX = ROOT / "sandbox" / "sbx"
FIX = ROOT / "tests" / "fixtures" / "probes"
CU13 = "/opt/sglang-venv/lib/python3.11/site-packages/nvidia/cu13"
FILES = [
    "fake_sglang_server.py",
    "h200_server1.log",
    "seed003_capture_failure.log",
    "flashinfer_ninja_progress.log",
]


def _why_not() -> str | None:
    if os.geteuid() != 0 or not SBX.exists() or not shutil.which("systemd-nspawn"):
        return "needs root, sandbox/sbx and systemd-nspawn"
    d = subprocess.run([str(SBX), "doctor"], capture_output=True, text=True, check=False)
    try:
        doc = json.loads(d.stdout or "{}")
    except json.JSONDecodeError:
        return "sbx doctor did not answer"
    if not doc.get("systemd_tier") or doc.get("layers", {}).get("healthy") != "ok":
        return (
            "the sandbox's systemd tier / healthy layer is not prepared (scripts/setup-sandbox.sh)"
        )
    return None


UNIT = """\
[Unit]
Description=STAND-IN SGLang server ({mode}) for remedy's launch-probe test
[Service]
Environment=PYTHONUNBUFFERED=1
ExecStart=/usr/bin/python3 /opt/fake-sglang/fake_sglang_server.py --mode {mode} --port {port}
"""

GATE_UNIT = """\
[Unit]
Description=unit whose environment env-probe reads
[Service]
Environment=CUDA_HOME={cu13} "PATH=/opt/sglang-venv/bin:/usr/bin:/bin"
EnvironmentFile=/etc/default/probe-gate
ExecStart=/opt/sglang-venv/bin/python -m sglang.launch_server --port 30000
"""


@pytest.fixture(scope="module")
def host() -> Iterator[str]:
    why = _why_not()
    if why:
        pytest.skip(why)
    name = f"probes{os.getpid() % 100000}"
    info = sandbox_hosts.up("healthy", name, "--tier", "systemd").rec  # tried twice, then fails
    try:

        async def setup() -> None:
            t = SSHTransport(name, ssh_config=info["ssh_config"])
            try:
                await t.run(["mkdir", "-p", "/opt/fake-sglang"], timeout=30)
                for f in FILES:
                    await t.put(f"/opt/fake-sglang/{f}", (FIX / f).read_bytes(), mode=0o644)
                for mode, port in (("ready", 30000), ("fatal", 30001)):
                    unit = UNIT.format(mode=mode, port=port).encode()
                    await t.put(f"/etc/systemd/system/fake-sglang-{mode}.service", unit, mode=0o644)
                await t.put(
                    "/etc/systemd/system/probe-gate.service",
                    GATE_UNIT.format(cu13=CU13).encode(),
                    mode=0o644,
                )
                await t.put(
                    "/etc/default/probe-gate", b"FLASHINFER_CUDA_ARCH_LIST=12.0\n", mode=0o644
                )
                r = await t.run(["systemctl", "daemon-reload"], timeout=60)
                assert r.exit_status == 0, r.stderr
            finally:
                await t.close()

        asyncio.run(setup())
        os.environ["REMEDY_TEST_SSH_CONFIG"] = info["ssh_config"]
        yield name
    finally:
        subprocess.run([str(SBX), "down", name], capture_output=True, timeout=120, check=False)


def probe(host: str, name: str, facts: Facts, **kw: Any) -> ProbeResult:
    async def go() -> ProbeResult:
        t = SSHTransport(host, ssh_config=os.environ["REMEDY_TEST_SSH_CONFIG"])
        try:
            return await run_probe(name, t, facts, **kw)
        finally:
            await t.close()

    return asyncio.run(go())


def sh(host: str, *argv: str) -> str:
    async def go() -> str:
        t = SSHTransport(host, ssh_config=os.environ["REMEDY_TEST_SSH_CONFIG"])
        try:
            return (await t.run(list(argv), timeout=60)).text()
        finally:
            await t.close()

    return asyncio.run(go())


WAIT_READY = (
    "for i in $(seq 300); do journalctl -o cat -u fake-sglang-ready.service"
    " | grep -q 'ready to roll' && exit 0; sleep 0.1; done; exit 1"
)


def test_launch_probe_restarts_the_unit_and_ignores_the_old_instances_shutdown(host: str) -> None:
    sh(host, "systemctl", "start", "fake-sglang-ready.service")
    # the old instance must be up (its SIGTERM handler installed) before the probe restarts it
    sh(host, "sh", "-c", WAIT_READY)
    facts = Facts(workload=Workload(service="fake-sglang-ready.service"))
    r = probe(host, "launch-probe", facts, timeout=60)
    assert r.ok, f"{r.detail}\n{r.output_tail}"
    assert "GET http://127.0.0.1:30000/health = 200" in r.detail
    sigs = {s.signature for s in r.symptoms}
    assert "server-ready" in sigs
    # the old instance did write its shutdown lines to this unit's journal ...
    journal = sh(host, "journalctl", "--no-pager", "-o", "cat", "-u", "fake-sglang-ready.service")
    assert "It usually means one child failed" in journal, journal[-2000:]
    # ... but they belong to the previous invocation, so they were never read
    assert not sigs & {"sglang-child-sigquit", "sglang-child-exit-code", "sglang-sigterm-received"}
    assert sh(host, "systemctl", "is-active", "fake-sglang-ready.service").strip() == "active"


def test_launch_probe_stops_at_the_first_fatal_line_of_the_unit(host: str) -> None:
    facts = Facts(workload=Workload(service="fake-sglang-fatal.service"))
    r = probe(host, "launch-probe", facts, timeout=120)
    assert not r.ok and "capture-cuda-graph-failed" in r.detail
    assert {"capture-cuda-graph-failed", "cccl-nv-detail-missing"} <= {
        s.signature for s in r.symptoms
    }
    assert r.seconds < 30


def _gate_facts() -> Facts:
    return Facts(
        gpus=[Gpu(name="NVIDIA RTX PRO 6000 Blackwell Workstation Edition", compute_cap="12.0")],
        workload=Workload(service="probe-gate.service", python="/opt/sglang-venv"),
    )


def test_env_probe_reads_the_units_environment_and_runs_flashinfers_gate(host: str) -> None:
    r = probe(host, "env-probe", _gate_facts(), timeout=300)
    assert r.ok, f"{r.detail}\n{r.output_tail}"
    assert f"toolkit {CU13}" in r.detail and "CUDA 13.0" in r.detail
    assert (
        "probe-gate.service's environment (systemctl show on the host + 1 EnvironmentFile(s))"
        in r.detail
    )


def test_env_probe_sees_a_drop_in_written_after_the_facts(host: str) -> None:
    """The facts say nothing about CUDA_HOME=/dev/null; the drop-in on the host does."""
    sh(host, "mkdir", "-p", "/etc/systemd/system/probe-gate.service.d")
    sh(
        host,
        "sh",
        "-c",
        "printf '[Service]\\nEnvironment=CUDA_HOME=/dev/null\\n' > /etc/systemd/system/probe-gate.service.d/x.conf && systemctl daemon-reload",
    )
    try:
        r = probe(host, "env-probe", _gate_facts(), timeout=300)
    finally:
        sh(
            host,
            "sh",
            "-c",
            "rm -f /etc/systemd/system/probe-gate.service.d/x.conf && systemctl daemon-reload",
        )
    assert not r.ok and "nvcc-not-a-directory" in {s.signature for s in r.symptoms}, r.output_tail


USER_UNIT = """\
[Unit]
Description=unit with User= whose probes run as that user
[Service]
{user}Environment=CUDA_HOME={cu13} "PATH=/opt/sglang-venv/bin:/usr/bin:/bin"
EnvironmentFile=/etc/default/probe-gate
ExecStart=/opt/svc-venv/bin/python -m sglang.launch_server --port 30002
"""

# the service user's own interpreter: records who runs it, then runs the real venv's Python
SVC_PYTHON = '#!/bin/sh\nid -u > /tmp/probe-svc-uid\nexec /opt/sglang-venv/bin/python "$@"\n'


def _user_unit(host: str, name: str, user: str | None) -> Facts:
    sh(
        host,
        "sh",
        "-c",
        "id probesvc >/dev/null 2>&1 || useradd -r -M -s /usr/sbin/nologin probesvc",
    )
    sh(host, "sh", "-c", "mkdir -p /opt/svc-venv/bin && rm -f /tmp/probe-svc-uid")
    text = USER_UNIT.format(user=f"User={user}\n" if user else "", cu13=CU13)
    sh(host, "sh", "-c", 'printf %s "$1" > /etc/systemd/system/"$2"', "sh", text, name)
    sh(host, "sh", "-c", 'printf %s "$1" > /opt/svc-venv/bin/python', "sh", SVC_PYTHON)
    sh(host, "sh", "-c", "chmod 755 /opt/svc-venv/bin/python && chown -R probesvc: /opt/svc-venv")
    sh(host, "systemctl", "daemon-reload")
    return Facts(
        gpus=[Gpu(name="NVIDIA RTX PRO 6000 Blackwell Workstation Edition", compute_cap="12.0")],
        workload=Workload(service=name, python="/opt/svc-venv"),
    )


def test_env_probe_runs_the_service_users_venv_as_that_user(host: str) -> None:
    """User=probesvc with a venv probesvc owns: root must not run it, probesvc may; the probe
    runs it through setpriv, so the gate is proved with the service's own interpreter."""
    r = probe(host, "env-probe", _user_unit(host, "probe-user.service", "probesvc"), timeout=300)
    assert r.ok, f"{r.detail}\n{r.output_tail}"
    assert "run as its User=probesvc" in r.detail
    uid = sh(host, "id", "-u", "probesvc").strip()
    assert sh(host, "cat", "/tmp/probe-svc-uid").strip() == uid, r.detail  # not 0


def test_env_probe_does_not_run_a_users_venv_for_a_root_unit(host: str) -> None:
    """The same venv behind a unit without User=: the probe would run it as root: skipped."""
    r = probe(host, "env-probe", _user_unit(host, "probe-root.service", None), timeout=300)
    assert not r.ok and r.skipped and "owned by probesvc" in r.skipped, r.detail
    assert sh(host, "sh", "-c", "cat /tmp/probe-svc-uid 2>/dev/null || echo none").strip() == "none"
