"""Triton's own tools named by the workload's environment must not run as another user's
program through the real `triton-compile` probe (redteam-22).

Triton 3.8.0's knobs (`env_nvidia_tool`) read TRITON_PTXAS_PATH (TRITON_PTXAS_BLACKWELL_PATH
for an arch >= 100), TRITON_CUOBJDUMP_PATH and TRITON_NVDISASM_PATH and run `PATH --version`
before their own copy; `triton.compile` then runs that ptxas on the PTX. The probe's compile
needs no driver (gpu_probe.py compiles for the facts' arch when none is usable), so this runs
Triton's whole compile here: the control shows the workload's ptxas is reached as root (the
canary gets `uid 0`), the attack that uid 65534's is refused before anything starts. The
last test pins which tool variables the installed Triton reads.
"""

from __future__ import annotations

import asyncio
import os
import re
from pathlib import Path

import pytest
from test_probe_compiler_env import NOBODY, heavy_venv, own

from remedy.model import Facts, Gpu, PythonEnv
from remedy.probes import run_probe
from remedy.transport.local import LocalTransport
from remedy.trust import CODE_FILE_VARS

needs_root = pytest.mark.skipif(os.geteuid() != 0, reason="chown to another user needs root")


@pytest.fixture
def venv() -> Path:
    v = heavy_venv()
    if v is None or not next((v / "lib").glob("python3.*/site-packages/triton"), None):
        pytest.skip("the sandbox's heavy environment (with Triton) is not built")
    return v


@pytest.fixture
def area(tmp_path: Path) -> Path:
    tmp_path.chmod(0o755)
    return tmp_path


def triton_ptxas(venv: Path) -> Path:
    return next((venv / "lib").glob("python3.*/site-packages/triton/backends/nvidia/bin/ptxas"))


def plant_tool(area: Path, venv: Path, var: str, owner: int) -> str:
    """`owner`'s wrapper that appends `VAR uid $(id -u) ARGS` to area/canary, then runs
    Triton's own ptxas (cuobjdump/nvdisasm: answers --version as a CUDA tool does)."""
    d = area / f"svc-{var}"
    d.mkdir()
    real = triton_ptxas(venv)
    tail = f'exec {real} "$@"' if "PTXAS" in var else 'echo "Cuda compilation tools, release 13.0"'
    (d / "tool").write_text(
        f'#!/bin/sh\necho "{var} uid $(id -u) $1" >> {area / "canary"}\n{tail}\n'
    )
    (d / "tool").chmod(0o755)
    own(d, owner)
    return str(d / "tool")


def fake_smi(area: Path) -> Path:
    """root's nvidia-smi on root's PATH that answers -L (the GPU gate); no driver loads here,
    so the probe compiles for the facts' arch without launching."""
    b = area / "smi"
    b.mkdir()
    (b / "nvidia-smi").write_text("#!/bin/sh\necho 'GPU 0: Fake (UUID: GPU-0)'\n")
    (b / "nvidia-smi").chmod(0o755)
    return b


def triton_compile(area: Path, venv: Path, cc: str, env: dict[str, str]):
    t = LocalTransport("local", env={"PATH": f"{fake_smi(area)}:/usr/bin:/bin"})
    facts = Facts(
        gpus=[Gpu(name="g", compute_cap=cc)],
        pythons=[PythonEnv(path=str(venv), torch_cuda="13.0")],
        shell_env={"PATH": f"{venv}/bin:/usr/bin:/bin", **env},
    )
    return asyncio.run(run_probe("triton-compile", t, facts, timeout=240))


ATTACKS = [
    ("9.0", "TRITON_PTXAS_PATH"),
    ("12.0", "TRITON_PTXAS_BLACKWELL_PATH"),  # get_ptxas: arch >= 100
    ("9.0", "TRITON_CUOBJDUMP_PATH"),
    ("9.0", "TRITON_NVDISASM_PATH"),
]


@needs_root
@pytest.mark.slow
@pytest.mark.parametrize(("cc", "var"), ATTACKS)
def test_a_triton_tool_another_user_owns_is_not_run(area: Path, venv: Path, cc: str, var: str):
    res = triton_compile(area, venv, cc, {var: plant_tool(area, venv, var, NOBODY)})
    assert not (area / "canary").exists(), (area / "canary").read_text()
    assert not res.ok and res.skipped, res.detail
    assert res.skipped == (
        f"not executed: {var} holds {area}/svc-{var}/tool owned by nobody (uid 65534)"
    ), res.skipped


@needs_root
@pytest.mark.slow
@pytest.mark.parametrize(("cc", "var"), ATTACKS[:2])
def test_control_roots_own_ptxas_is_run_by_triton_compile(
    area: Path, venv: Path, cc: str, var: str
):
    res = triton_compile(area, venv, cc, {var: plant_tool(area, venv, var, 0)})
    assert res.ok, res.detail
    assert "not run: no usable GPU driver here" in res.detail, res.detail
    ran = (area / "canary").read_text().splitlines()
    # `--version` (knobs' NvidiaTool.from_path), then the compile itself (`-v ... --gpu-name`)
    assert f"{var} uid 0 --version" in ran, ran
    assert any(r.startswith(f"{var} uid 0 ") and "--version" not in r for r in ran), ran


def test_the_tool_variables_the_installed_triton_reads_are_judged(venv: Path):
    site = next((venv / "lib").glob("python3.*/site-packages"))
    knobs = (site / "triton" / "knobs.py").read_text()
    tools = re.findall(r'env_nvidia_tool\("([a-z-]+)"\)', knobs)
    assert "ptxas" in tools, tools
    names = {f"TRITON_{t.upper().replace('-', '_')}_PATH" for t in tools}
    assert names <= set(CODE_FILE_VARS), sorted(names - set(CODE_FILE_VARS))
