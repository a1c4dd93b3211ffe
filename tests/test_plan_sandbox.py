"""`remedy plan --host` on real sandbox hosts: the seed chain from real facts, nothing on a
healthy host (issue "Hosts", what it must show 2)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
import sandbox_hosts
from test_facts_sandbox import DOCTOR, SBX

SEED_CHAIN = {
    "ptxas-accepts-cicc-ptx",
    "nvcc-matches-cudart-headers",
    "toolkit-links-cudart",
    "cccl-complete",
}


def _up(scenario: str, name: str) -> dict:
    if not DOCTOR.get("ssh_tier"):
        pytest.skip(f"sandbox ssh tier not ready: {DOCTOR.get('missing')}")
    return sandbox_hosts.up(scenario, name).rec  # a start that fails twice fails the test


def _plan(rec: dict) -> dict:
    r = subprocess.run(
        [
            sys.executable,
            "-m",
            "remedy",
            "--ssh-config",
            rec["ssh_config"],
            "plan",
            "--host",
            rec["name"],
            "--json",
        ],
        capture_output=True,
        timeout=300,
    )
    assert r.returncode in (0, 3), r.stderr.decode()[-2000:]
    return json.loads(r.stdout)


@pytest.mark.sandbox
def test_plan_host_seed_chain_a_equals_the_builtin_example():
    name = f"pa{os.getpid() % 100000}"
    rec = _up("seed-chain-a", name)
    try:
        host = _plan(rec)
    finally:
        subprocess.run([str(SBX), "down", name], capture_output=True, timeout=300)
    ex = json.loads(
        subprocess.run(
            [sys.executable, "-m", "remedy", "plan", "--example", "seed-sm120-pip-cu13", "--json"],
            capture_output=True,
            timeout=300,
        ).stdout
    )
    host_rules = {f["rule"] for f in host["findings"]}
    assert host_rules >= SEED_CHAIN
    assert {f["rule"] for f in ex["findings"]} >= SEED_CHAIN
    # the same fix chain: same actions in the same order, same parameters but the paths
    assert [s["action"] for s in host["steps"]] == [s["action"] for s in ex["steps"]]
    assert [s["params"].get("release") for s in host["steps"]] == [
        s["params"].get("release") for s in ex["steps"]
    ]
    assert host["status"] == "ok"


@pytest.mark.sandbox
def test_plan_host_healthy_has_no_finding():
    name = f"ph{os.getpid() % 100000}"
    rec = _up("healthy", name)
    try:
        host = _plan(rec)
    finally:
        subprocess.run([str(SBX), "down", name], capture_output=True, timeout=300)
    assert host["findings"] == [], [f["rule"] + ": " + f["message"] for f in host["findings"]]
    assert host["status"] == "nothing-to-do" and host["steps"] == []
