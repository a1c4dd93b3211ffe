"""Probes against REAL CUDA toolchains, on this machine (LocalTransport, no GPU).

Two pip toolchain prefixes, built with `pip install --no-deps --target` from the versions of
the sandbox scenarios (sandbox/scenarios/*/scenario.yaml; nvidia-cuda-runtime from the heavy
environment's lock), cached across sessions under $REMEDY_PROBE_CACHE (default
~/.cache/remedy-tests/probe-prefixes; never the temp dir, which tests leave as they found it):
  * broken  = seed-chain-a: nvcc 13.2.78 + nvvm 13.3.73 + crt 13.2.78 + runtime 13.0.96, no
              CCCL, pip's lib layout (no lib64)            -> F1 F2 F3 F4
  * healthy = healthy: 13.0.88 + cccl 13.0.85 + runtime 13.0.96, lib64/libcudart.so/stub fixed
Wheels come from the sandbox's cache (sandbox/cache/wheels) when it has them, else they are
downloaded once into $REMEDY_PROBE_CACHE/wheels.

The Python side (FlashInfer 0.6.11.post1, SGLang 0.5.12, apache-tvm-ffi 0.1.9, torch) is the
sandbox's shared heavy environment (sandbox/cache/venv-<digest of heavy.lock>, built by
scripts/setup-sandbox.sh); tests needing it skip, saying so, when it is not built.
"""

from __future__ import annotations

import asyncio
import fcntl
import hashlib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from remedy.model import Facts, Gpu, PythonEnv
from remedy.probes import ProbeResult, run_probe
from remedy.transport import LocalTransport

ROOT = Path(__file__).resolve().parents[1]
SANDBOX = ROOT / "sandbox"
CACHE = Path(
    os.environ.get("REMEDY_PROBE_CACHE")
    or Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    / "remedy-tests"
    / "probe-prefixes"
)

DEFAULTS = {
    "seed-chain-a": (
        ["nvidia-cuda-nvcc==13.2.78", "nvidia-nvvm==13.3.73", "nvidia-cuda-crt==13.2.78"],
        False,
    ),
    "healthy": (
        [
            "nvidia-cuda-nvcc==13.0.88",
            "nvidia-nvvm==13.0.88",
            "nvidia-cuda-crt==13.0.88",
            "nvidia-cuda-cccl==13.0.85",
        ],
        True,
    ),
}


def digest(data: bytes) -> str:
    h = hashlib.sha256()
    h.update(data)
    h.update(b"\0")
    return h.hexdigest()[:12]


def heavy_venv() -> Path | None:
    """The sandbox's shared heavy environment (the path sandbox/sbx computes), if built."""
    lock = SANDBOX / "requirements" / "heavy.lock"
    if not lock.is_file():
        return None
    v = SANDBOX / "cache" / f"venv-{digest(lock.read_bytes())}"
    return v if (v / "bin" / "python").exists() else None


def runtime_pin() -> str:
    lock = SANDBOX / "requirements" / "heavy.lock"
    if lock.is_file():
        for ln in lock.read_text().splitlines():
            if ln.startswith("nvidia-cuda-runtime=="):
                return ln.strip()
    return "nvidia-cuda-runtime==13.0.96"


def scenario_toolchain(name: str) -> tuple[list[str], bool]:
    f = SANDBOX / "scenarios" / name / "scenario.yaml"
    if f.is_file():
        pe = (yaml.safe_load(f.read_text()) or {}).get("python_env") or {}
        if pe.get("toolchain"):
            return list(pe["toolchain"]), bool(pe.get("layout_fix"))
    return DEFAULTS[name]


def _pip(*args: str) -> None:
    env = dict(os.environ, PIP_DISABLE_PIP_VERSION_CHECK="1", PIP_CONFIG_FILE="/dev/null")
    subprocess.run(
        [sys.executable, "-m", "pip", "-q", *args], check=True, env=env, stdin=subprocess.DEVNULL
    )


def build_prefix(name: str) -> Path:
    """site-packages/nvidia/cu13 of a `pip install --target` tree for one scenario, cached."""
    specs, layout_fix = scenario_toolchain(name)
    specs = [*specs, runtime_pin()]
    key = digest(json.dumps([sorted(specs), layout_fix]).encode())
    dest = CACHE / f"{name}-{key}"
    prefix = dest / "nvidia" / "cu13"
    CACHE.mkdir(parents=True, exist_ok=True)
    with open(CACHE / ".lock", "w") as lk:
        fcntl.flock(lk, fcntl.LOCK_EX)
        if (prefix / "bin" / "nvcc").exists():
            return prefix
        wheels = SANDBOX / "cache" / "wheels"
        tmp = dest.with_name(dest.name + ".tmp")
        shutil.rmtree(tmp, ignore_errors=True)
        try:
            _pip(
                "install",
                "--no-deps",
                "--no-index",
                "--find-links",
                str(wheels),
                "--target",
                str(tmp),
                *specs,
            )
        except (subprocess.CalledProcessError, FileNotFoundError):
            shutil.rmtree(tmp, ignore_errors=True)
            own = CACHE / "wheels"
            _pip("download", "--no-deps", "-d", str(own), *specs)
            _pip(
                "install",
                "--no-deps",
                "--no-index",
                "--find-links",
                str(own),
                "--target",
                str(tmp),
                *specs,
            )
        p = tmp / "nvidia" / "cu13"
        if layout_fix:  # shared/reference/toolchain-lab/fix_pip_cuda_layout.sh
            (p / "lib64").symlink_to("lib")
            (p / "lib" / "libcudart.so").symlink_to("libcudart.so.13")
            (p / "lib" / "stubs").mkdir()
            # STAND-IN: no wheel ships the driver's link stub; an empty DSO with its SONAME
            # is what the toolchain lab and the sandbox use for build-only checks.
            subprocess.run(
                [
                    "gcc",
                    "-x",
                    "c",
                    "-shared",
                    "-Wl,-soname,libcuda.so.1",
                    "-o",
                    str(p / "lib" / "stubs" / "libcuda.so"),
                    "/dev/null",
                ],
                check=True,
            )
        tmp.rename(dest)
    return prefix


@pytest.fixture(scope="session")
def broken() -> Path:
    return build_prefix("seed-chain-a")


@pytest.fixture(scope="session")
def healthy() -> Path:
    return build_prefix("healthy")


@pytest.fixture(scope="session")
def venv() -> Path:
    v = heavy_venv()
    if v is None:
        pytest.skip("the sandbox's heavy environment is not built (scripts/setup-sandbox.sh)")
    return v


def facts_for(prefix: Path | str, venv: Path | None) -> Facts:
    """This machine as a host: an SM120 GPU in the facts (none is here), the toolkit chosen by
    CUDA_HOME in the login environment, the heavy venv as the workload's Python."""
    pythons = []
    path = "/usr/bin:/bin"
    if venv is not None:
        site = next((venv / "lib").glob("python3.*/site-packages"))
        pythons = [
            PythonEnv(
                path=str(venv),
                packages={"flashinfer-python": "0.6.11.post1", "sglang": "0.5.12"},
                torch_cuda="13.0",
                flashinfer_cccl=str(
                    site / "flashinfer" / "data" / "cccl" / "libcudacxx" / "include"
                ),
            )
        ]
        path = f"{venv}/bin:{path}"
    return Facts(
        gpus=[Gpu(name="NVIDIA RTX PRO 6000 Blackwell Workstation Edition", compute_cap="12.0")],
        pythons=pythons,
        shell_env={"PATH": path, "CUDA_HOME": str(prefix), "HOME": "/root"},
    )


def probe(name: str, prefix: Path | str, venv: Path | None = None, **kw: Any) -> ProbeResult:
    return asyncio.run(run_probe(name, LocalTransport(), facts_for(prefix, venv), **kw))


def sigs(r: ProbeResult) -> set[str]:
    return {s.signature for s in r.symptoms}


# ---- cheap probes: broken prefix fails with the field's symptoms, healthy passes ---------------


def test_compile_probe_on_the_broken_prefix(broken: Path) -> None:
    v = heavy_venv()
    r = probe("compile-probe", broken, v)
    assert not r.ok, r.detail
    assert sigs(r) & {"ptxas-unsupported-ptx-version", "cccl-ctk-incompatible"}, r.output_tail
    # both TUs ran: the PTX skew (F1) does not hide the CCCL check (F2), and vice versa
    assert "ptxas-unsupported-ptx-version" in sigs(r)
    if v is not None:  # FlashInfer's vendored CCCL (-I) reaches the CTK check
        assert "cccl-ctk-incompatible" in sigs(r) and "vendored CCCL" in r.detail


def test_compile_probe_with_a_toolkit_consumer_sees_the_missing_cccl(broken: Path) -> None:
    r = probe("compile-probe", broken, consumer="tvm-ffi")
    assert not r.ok and "ptxas-unsupported-ptx-version" in sigs(r)
    assert sigs(r) & {"cccl-nv-target-missing", "missing-header"}, r.output_tail


def test_preprocess_probe_on_the_broken_prefix(broken: Path) -> None:
    r = probe("preprocess-probe", broken)
    assert not r.ok and "cccl-nv-target-missing" in sigs(r), r.output_tail
    assert "cuda_fp16.h" in r.detail


def test_link_probe_on_the_broken_prefix(broken: Path) -> None:
    r = probe("link-probe", broken, heavy_venv())
    assert not r.ok and "ld-cannot-find-lib" in sigs(r), r.output_tail
    libs = {s.fields.get("missing_lib") for s in r.symptoms if s.signature == "ld-cannot-find-lib"}
    assert "cudart" in libs
    assert "-L" + str(broken) + "/lib64/stubs -lcudart -lcuda" in r.detail


@pytest.mark.parametrize("name", ["compile-probe", "preprocess-probe", "link-probe"])
def test_cheap_probes_pass_on_the_healthy_prefix(healthy: Path, name: str) -> None:
    r = probe(name, healthy, heavy_venv())
    assert r.ok, f"{r.detail}\n{r.output_tail}"
    assert not [s for s in r.symptoms if s.severity == "fatal"]


def test_params_prefix_overrides_the_consumers_pick(broken: Path, healthy: Path) -> None:
    """The step's subject is probed even when CUDA_HOME still names the other toolkit."""
    facts = facts_for(broken, None)
    r = asyncio.run(
        run_probe("preprocess-probe", LocalTransport(), facts, params={"prefix": str(healthy)})
    )
    assert r.ok and str(healthy) in r.detail and "params prefix" in r.detail


# ---- env-probe: FlashInfer's own gate (heavy venv) ------------------------------------------


def test_env_probe_passes_with_the_cu13_toolkit(healthy: Path, venv: Path) -> None:
    r = probe("env-probe", healthy, venv)
    assert r.ok, r.detail
    assert "CUDA 13.0" in r.detail and "compute_120f" in r.detail


def test_env_probe_shows_the_sm12x_gate_with_a_cuda_128_nvcc(venv: Path, tmp_path: Path) -> None:
    """F5. STAND-IN: no registry ships a real nvcc 12.x, so the prefix's bin/nvcc prints the
    genuine CUDA 12.8.93 --version banner (toolchain lab make_nvcc_shim.sh); FlashInfer's gate
    reads only that banner, so the gate that fires is the real one."""
    shim = tmp_path / "cuda-12.8"
    (shim / "bin").mkdir(parents=True)
    (shim / "bin" / "nvcc").write_text(
        "#!/bin/sh\n"
        'case "$*" in *--version*)\n'
        'echo "nvcc: NVIDIA (R) Cuda compiler driver"\n'
        'echo "Cuda compilation tools, release 12.8, V12.8.93"; exit 0;;\n'
        "esac\nexit 1\n"
    )
    (shim / "bin" / "nvcc").chmod(0o755)
    r = probe("env-probe", shim, venv)
    assert not r.ok and "flashinfer-sm12x-needs-cuda129" in sigs(r), r.output_tail
    assert "SM 12.x requires CUDA >= 12.9" in r.detail


def test_env_probe_shows_cuda_home_dev_null(venv: Path, healthy: Path) -> None:
    """F6: the 'make FlashInfer fall back' workaround fails at FlashInfer's gate."""
    r = probe("env-probe", healthy, venv, params={"env": {"CUDA_HOME": "/dev/null"}})
    assert not r.ok and "nvcc-not-a-directory" in sigs(r), r.output_tail


# ---- real JIT builds (slow) -------------------------------------------------------------------


@pytest.mark.slow
def test_flashinfer_jit_build_passes_on_the_healthy_prefix(healthy: Path, venv: Path) -> None:
    r = probe("flashinfer-jit-build", healthy, venv)
    assert r.ok, f"{r.detail}\n{r.output_tail}"
    assert "built silu_and_mul" in r.detail


@pytest.mark.slow
def test_flashinfer_jit_build_fails_on_the_broken_prefix(broken: Path, venv: Path) -> None:
    r = probe("flashinfer-jit-build", broken, venv)
    assert not r.ok
    assert "ptxas-unsupported-ptx-version" in sigs(r) and "ninja-build-failed" in sigs(r), (
        r.output_tail
    )


@pytest.mark.slow
def test_sglang_jit_build_passes_on_the_healthy_prefix(healthy: Path, venv: Path) -> None:
    r = probe("sglang-jit-build", healthy, venv)
    assert r.ok, f"{r.detail}\n{r.output_tail}"


@pytest.mark.slow
def test_sglang_jit_build_fails_on_the_broken_prefix(broken: Path, venv: Path) -> None:
    r = probe("sglang-jit-build", broken, venv)
    assert not r.ok and "cccl-nv-target-missing" in sigs(r), r.output_tail
    assert "nv/target" in r.detail


@pytest.mark.slow
@pytest.mark.skipif(
    not os.environ.get("REMEDY_PROBES_TORCH_EXT"),
    reason="75 s idle, 460+ s on this shared 2-core machine: set REMEDY_PROBES_TORCH_EXT=1",
)
def test_torch_ext_build_passes_on_the_healthy_prefix(healthy: Path, venv: Path) -> None:
    r = probe("torch-ext-build", healthy, venv, timeout=1800)
    assert r.ok, f"{r.detail}\n{r.output_tail}"
