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
from remedy.trust import CODE_DIR_VARS, CODE_FILE_VARS, COMMAND_VARS

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


@needs_root
@pytest.mark.slow
def test_a_dump_dir_another_user_owns_gets_no_file_from_root(area: Path, venv: Path):
    """TRITON_KERNEL_DUMP=1 with the workload's TRITON_DUMP_DIR in uid 65534's directory: Triton
    makes DIR/<cache key>/ and writes add_kernel.{ttir,ttgir,llir,ptx,cubin,sass} there as root.
    uid 65534 made DIR a link to a root-only directory (the key is the same for the same
    kernel: a link at DIR/<key> put the six files straight into the target). Before, root's
    probe wrote them there; now the probe's dump dir is its own private one."""
    svc = area / "svc"
    svc.mkdir()
    target = area / "root-only"
    target.mkdir(mode=0o700)
    (svc / "dump").symlink_to(target)
    own(svc, NOBODY)
    os.lchown(svc / "dump", NOBODY, NOBODY)
    env = {"TRITON_KERNEL_DUMP": "1", "TRITON_DUMP_DIR": f"{svc}/dump", "TRITON_HOME": str(svc)}
    res = triton_compile(area, venv, "9.0", env)
    assert res.ok, res.detail  # the dump itself still works, in the probe's own directory
    assert [str(p.relative_to(target)) for p in target.rglob("*")] == []


@needs_root
@pytest.mark.slow
def test_control_the_dump_runs_cuobjdump_named_by_the_workload(area: Path, venv: Path):
    """TRITON_CUOBJDUMP_PATH is reached through triton-compile too (the dump's .sass:
    triton/tools/disasm.py runs `cuobjdump -sass`; nvdisasm is named by no code path here)."""
    var = "TRITON_CUOBJDUMP_PATH"
    env = {"TRITON_KERNEL_DUMP": "1", var: plant_tool(area, venv, var, 0)}
    triton_compile(area, venv, "9.0", env)
    assert f"{var} uid 0 --version" in (area / "canary").read_text().splitlines()


# Triton 3.8.0's knobs, each judged by remedy.trust, set by the probe to its own private
# directory, or harmless (a switch, a number, an arch, a name of the kernels' GPU code)
PROBE_SETS = {"TRITON_CACHE_DIR", "TRITON_DUMP_DIR", "TRITON_OVERRIDE_DIR", "TRITON_HOME"}
HARMLESS_PREFIXES = ("AMDGCN_", "TRITON_HIP_", "TRITON_PROFILE_", "TRITON_ROCPROFILER_")
# not judged, and why (docs/SECURITY.md "not covered"): a cache manager or remote backend class
# is imported from the checked sys.path; the Redis one fetches what it caches from the host
# the workload names (only a probe that launches, with redis installed, loads a launcher so)
LEFT = {"TRITON_CACHE_MANAGER", "TRITON_REMOTE_CACHE_BACKEND", "TRITON_REDIS_HOST",
        "TRITON_REDIS_PORT", "TRITON_REDIS_KEY_FORMAT"}  # fmt: skip
# a file LLVM links into the GPU code (bitcode), and the PTX/MIR swaps: GPU code, not host code
GPU_CODE = {"TRITON_LIBDEVICE_PATH", "TRITON_SWAP_MIR", "TRITON_DUMP_MIR", "USE_IR_LOC"}


def test_the_variables_the_installed_triton_reads_are_all_classified(venv: Path):
    site = next((venv / "lib").glob("python3.*/site-packages"))
    knobs = (site / "triton" / "knobs.py").read_text()
    tools = re.findall(r'env_nvidia_tool\("([a-z-]+)"\)', knobs)
    assert "ptxas" in tools, tools
    names = {f"TRITON_{t.upper().replace('-', '_')}_PATH" for t in tools}
    assert names <= set(CODE_FILE_VARS), sorted(names - set(CODE_FILE_VARS))
    read = {name: kind for kind, name in re.findall(r'(env_[a-z_]+)\("([A-Z][A-Z0-9_]*)"', knobs)}
    assert {"TRITON_LIBCUDA_PATH", "TRITON_DUMP_DIR", "TRITON_CACHE_MANAGER"} <= set(read)
    judged = {*CODE_DIR_VARS, *CODE_FILE_VARS, *COMMAND_VARS}
    unknown = {
        n: k
        for n, k in read.items()
        if n not in judged | PROBE_SETS | LEFT | GPU_CODE
        and k not in ("env_bool", "env_opt_bool", "env_int")
        and not n.startswith(HARMLESS_PREFIXES)
        and n
        not in (
            "PTXAS_OPTIONS",
            "TRITON_F32_DEFAULT",
            "TRITON_MOCK_PTX_VERSION",
            "TRITON_OVERRIDE_ARCH",
            "TRITON_INSTRUMENTATION_MODE",
        )  # fmt: skip
    }
    assert not unknown, f"classify these (a program, a code dir, or harmless): {unknown}"
