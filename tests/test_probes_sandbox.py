"""The cheap probes over SSH against real sandbox hosts, with facts from the real collectors.

sandbox/sbx (tier ssh) hosts: `seed-chain-a` (the seeds' pip skew: nvcc 13.2 + cicc 13.3,
runtime 13.0, no CCCL, pip lib layout) and `healthy` (consistent 13.0 + CCCL + lib64 fix), each
with /opt/sglang-venv (FlashInfer 0.6.11.post1). Facts come from remedy.facts.collect, so this
is the path the executor takes: collect, then run_probe with those facts and no params.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
import sandbox_hosts

from remedy.facts.collect import collect_facts
from remedy.probes import ProbeResult, run_probe
from remedy.transport import SSHTransport

pytestmark = pytest.mark.sandbox

SBX = Path(__file__).resolve().parents[1] / "sandbox" / "sbx"
CHEAP = ["preprocess-probe", "compile-probe", "link-probe", "env-probe"]


def _why_not() -> str | None:
    if os.geteuid() != 0 or not SBX.exists():
        return "needs root and sandbox/sbx"
    d = subprocess.run([str(SBX), "doctor"], capture_output=True, text=True, check=False)
    try:
        doc = json.loads(d.stdout or "{}")
    except json.JSONDecodeError:
        return "sbx doctor did not answer"
    layers = doc.get("layers", {})
    if (
        not doc.get("ssh_tier")
        or layers.get("healthy") != "ok"
        or layers.get("seed-chain-a") != "ok"
    ):
        return "the sandbox's ssh tier / layers are not prepared (scripts/setup-sandbox.sh)"
    return None


def ladder(scenario: str) -> Iterator[dict[str, ProbeResult]]:
    why = _why_not()
    if why:
        pytest.skip(why)
    name = f"pr{scenario[:6]}{os.getpid() % 10000}"
    info = sandbox_hosts.up(scenario, name).rec  # tried twice before it fails the test

    async def go() -> dict[str, ProbeResult]:
        t = SSHTransport(name, ssh_config=info["ssh_config"])
        try:
            facts = await collect_facts(t, timeout=60)
            return {p: await run_probe(p, t, facts) for p in CHEAP}
        finally:
            await t.close()

    try:
        yield asyncio.run(go())
    finally:
        subprocess.run([str(SBX), "down", name], capture_output=True, timeout=120, check=False)


@pytest.fixture(scope="module")
def seed_chain_a() -> Iterator[dict[str, ProbeResult]]:
    yield from ladder("seed-chain-a")


@pytest.fixture(scope="module")
def healthy() -> Iterator[dict[str, ProbeResult]]:
    yield from ladder("healthy")


def sigs(r: ProbeResult) -> set[str]:
    return {s.signature for s in r.symptoms}


def test_the_seed_chain_shows_every_link_at_once(seed_chain_a: dict[str, ProbeResult]) -> None:
    r = seed_chain_a
    assert not r["preprocess-probe"].ok and "cccl-nv-target-missing" in sigs(r["preprocess-probe"])
    assert not r["compile-probe"].ok
    assert {"ptxas-unsupported-ptx-version", "cccl-ctk-incompatible"} <= sigs(r["compile-probe"])
    assert not r["link-probe"].ok and "ld-cannot-find-lib" in sigs(r["link-probe"])
    # nvcc 13.2 passes FlashInfer's SM 12.x gate: env-probe is not what this host needs
    assert r["env-probe"].ok and "CUDA 13.2" in r["env-probe"].detail


def test_the_healthy_host_passes_the_cheap_ladder(healthy: dict[str, ProbeResult]) -> None:
    for name, r in healthy.items():
        assert r.ok, f"{name}: {r.detail}\n{r.output_tail}"
