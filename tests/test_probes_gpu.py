"""The GPU rungs of the ladder on a real GPU (they skip here: this machine has none).

Run on the lent H200 (see tests/fixtures/probes/TIMINGS.md for the command and the figures):
the host is this machine itself (LocalTransport), the workload is the login shell with its
Python, and the facts' GPU is what nvidia-smi reports.
"""

from __future__ import annotations

import asyncio
import importlib.util
import os
import shutil
import subprocess
import sys
from typing import Any

import pytest

from remedy.model import Facts, Gpu, PythonEnv
from remedy.probes import ProbeResult, run_probe
from remedy.transport import LocalTransport


def _gpus() -> list[Gpu]:
    if not shutil.which("nvidia-smi"):
        return []
    try:
        out = subprocess.run(
            [
                "nvidia-smi",
                "--query-gpu=index,name,compute_cap,driver_version",
                "--format=csv,noheader",
            ],
            capture_output=True,
            text=True,
            timeout=30,
        )
    except (OSError, subprocess.TimeoutExpired):
        return []
    if out.returncode != 0:
        return []
    gpus = []
    for line in out.stdout.splitlines():
        parts = [p.strip() for p in line.split(",")]
        if len(parts) == 4 and parts[2][:1].isdigit():
            gpus.append(
                Gpu(index=int(parts[0]), name=parts[1], compute_cap=parts[2], driver=parts[3])
            )
    return gpus


GPUS = _gpus()
HAS_FI = importlib.util.find_spec("flashinfer") is not None
pytestmark = pytest.mark.skipif(not GPUS, reason="needs a GPU (nvidia-smi reports none here)")


def facts() -> Facts:
    return Facts(
        gpus=GPUS,
        pythons=[PythonEnv(path=sys.prefix, packages={"flashinfer-python": "?"} if HAS_FI else {})],
        shell_env=dict(os.environ),
    )


def probe(name: str, **kw: Any) -> ProbeResult:
    return asyncio.run(
        run_probe(name, LocalTransport(), facts(), params={"python": sys.executable}, **kw)
    )


def test_driver_probe() -> None:
    r = probe("driver-probe")
    assert r.ok, f"{r.detail}\n{r.output_tail}"
    assert GPUS[0].name in r.detail and "context created" in r.detail


@pytest.mark.skipif(not HAS_FI, reason="flashinfer is not installed in this Python")
@pytest.mark.parametrize("name", ["jit-run-probe", "graph-capture"])
def test_flashinfer_on_the_gpu(name: str) -> None:
    r = probe(name)
    assert r.ok, f"{r.detail}\n{r.output_tail}"


@pytest.mark.skipif(not HAS_FI, reason="flashinfer is not installed in this Python")
def test_jit_run_probe_catches_a_wrong_arch_list() -> None:
    """FLASHINFER_CUDA_ARCH_LIST=8.0 builds fine and fails at the first launch."""
    r = probe("jit-run-probe", arch="8.0")
    assert not r.ok
    assert "no-kernel-image" in {s.signature for s in r.symptoms}, r.output_tail


def test_triton_compile() -> None:
    if importlib.util.find_spec("triton") is None:
        pytest.skip("triton is not installed in this Python")
    r = probe("triton-compile")
    assert r.ok, f"{r.detail}\n{r.output_tail}"
