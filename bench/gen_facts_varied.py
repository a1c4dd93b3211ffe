#!/usr/bin/env python3
"""Realistic, varied host facts of any size for planner scaling (issue 18).

``generate(n, shape, seed)`` returns a facts dict (the YAML shape of remedy.model.Facts) built
on the seed-sm120-system-cuda128 example, with n toolkit prefixes of the given shape:

* ``system``:  /usr/local/cuda-X.Y trees of varied releases (11.8 .. 13.2), some without nvcc
  (runtime-only), some with a stale /usr/local/cuda alias, CCCL present or not;
* ``pipvenv``: venvs each with pip CUDA wheels (nvidia-cuda-nvcc / -runtime, cu12 and cu13),
  some wheel trees without nvcc, each venv with torch / flashinfer / sglang / triton;
* ``conda``:   conda prefixes (/opt/conda/envs/NAME) with cuda-nvcc of varied releases;
* ``mixed``:   all of the above in turn, plus services whose CUDA_HOME is stale (points at a
  prefix that is not there) and failing-log files (workload.missing_files).

Deterministic for a given (n, shape, seed).  ``python bench/gen_facts_varied.py N SHAPE`` prints
YAML.
"""

from __future__ import annotations

import random
import sys
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "src" / "remedy" / "examples" / "seed-sm120-system-cuda128" / "facts.yaml"

RELEASES = ["11.8", "12.1", "12.4", "12.6", "12.8", "12.9", "13.0", "13.1", "13.2"]
PATCH = {
    "11.8": "89",
    "12.1": "105",
    "12.4": "131",
    "12.6": "85",
    "12.8": "93",
    "12.9": "86",
    "13.0": "88",
    "13.1": "80",
    "13.2": "78",
}
SHAPES = ("system", "pipvenv", "conda", "mixed")


def _cudart(rel: str) -> int:
    major, minor = rel.split(".")
    return int(major) * 1000 + int(minor) * 10


def _system(i: int, rng: random.Random) -> tuple[dict, dict | None]:
    rel = RELEASES[i % len(RELEASES)]
    prefix = f"/usr/local/cuda-{rel}" if i < len(RELEASES) else f"/opt/cuda/{i:04d}/cuda-{rel}"
    major = rel.split(".")[0]
    tk: dict = {
        "prefix": prefix,
        "kind": "system",
        "cudart_version": _cudart(rel),
        "libs": {"lib64": ["libcudart.so", f"libcudart.so.{major}"]},
        "nvcc_profile_libdir": "lib64",
    }
    if rng.random() < 0.8:  # else runtime-only: no nvcc
        tk.update(
            nvcc_version=f"{rel}.{PATCH[rel]}",
            nvcc_release=rel,
            ptxas_release=rel,
            cicc_release=rel,
        )
    if rng.random() < 0.7:
        tk["cccl"] = {
            "present": True,
            "nv_target": True,
            "nv_detail": rng.random() < 0.8,
            "include_dir": "include/cccl" if major == "13" else None,
        }
    if rng.random() < 0.3:
        tk["libs"]["lib64/stubs"] = ["libcuda.so"]
    return tk, None


def _venv_python(venv: str, rel: str | None, rng: random.Random) -> dict:
    torch_cuda = rel or rng.choice(["12.8", "13.0"])
    packages = {
        "torch": rng.choice(["2.9.1", "2.10.0", "2.11.0"]),
        "triton": rng.choice(["3.5.1", "3.6.0"]),
    }
    if rng.random() < 0.7:
        packages["flashinfer-python"] = rng.choice(["0.5.3", "0.6.11.post1"])
    if rng.random() < 0.6:
        packages["sglang"] = rng.choice(["0.5.6", "0.5.12"])
    py: dict = {
        "path": venv,
        "python": rng.choice(["3.10", "3.11", "3.12"]),
        "torch_cuda": torch_cuda,
        "packages": packages,
    }
    if rng.random() < 0.5:
        py["triton_ptxas"] = {"ptxas": "12.9", "ptxas-blackwell": "13.3"}
    return py


def _pipvenv(i: int, rng: random.Random) -> tuple[dict, dict]:
    venv = f"/srv/venvs/app{i:04d}"
    cu = rng.choice(["cu12", "cu13", "cu13"])
    rel = rng.choice(["12.8", "12.9"]) if cu == "cu12" else rng.choice(["13.0", "13.1", "13.2"])
    major = rel.split(".")[0]
    pyver = "3.12"
    prefix = (
        f"{venv}/lib/python{pyver}/site-packages/nvidia/cu13"
        if cu == "cu13"
        else f"{venv}/lib/python{pyver}/site-packages/nvidia/cuda_nvcc"
    )
    pip = {"nvidia-cuda-runtime": f"{rel}.{PATCH[rel]}"}
    tk: dict = {
        "prefix": prefix,
        "kind": f"pip-{cu}",
        "python": venv,
        "cudart_version": _cudart(rel),
        "libs": {"lib": [f"libcudart.so.{major}", f"libnvrtc.so.{major}"]},
    }
    if rng.random() < 0.7:  # else a runtime-only wheel tree (no nvcc: broken for JIT)
        pip["nvidia-cuda-nvcc"] = f"{rel}.{PATCH[rel]}"
        tk.update(
            nvcc_version=f"{rel}.{PATCH[rel]}",
            nvcc_release=rel,
            ptxas_release=rel,
            cicc_release=rel if rng.random() < 0.9 else None,
            nvcc_profile_libdir="lib",
        )
        tk["cccl"] = {"present": rng.random() < 0.8, "nv_target": True, "nv_detail": True}
    tk["pip"] = pip
    py = _venv_python(venv, rel, rng)
    py["packages"].update(pip)
    return tk, py


def _conda(i: int, rng: random.Random) -> tuple[dict, dict]:
    env = f"/opt/conda/envs/env{i:04d}"
    rel = rng.choice(["12.4", "12.6", "12.8", "13.0"])
    major = rel.split(".")[0]
    tk: dict = {
        "prefix": env,
        "kind": "conda",
        "python": env,
        "cudart_version": _cudart(rel),
        "libs": {"lib": ["libcudart.so", f"libcudart.so.{major}"]},
        "nvcc_profile_libdir": "lib",
    }
    if rng.random() < 0.75:
        tk.update(
            nvcc_version=f"{rel}.{PATCH[rel]}",
            nvcc_release=rel,
            ptxas_release=rel,
            cicc_release=rel,
        )
        tk["cccl"] = {
            "present": True,
            "nv_target": True,
            "nv_detail": True,
            "include_dir": "targets/x86_64-linux/include/cccl",
        }
    return tk, _venv_python(env, rel, rng)


def generate(n: int, shape: str = "mixed", seed: int = 1) -> dict:
    """Facts dict with the example's 2 toolkits + n - 1 generated ones (n >= 1)."""
    if shape not in SHAPES:
        raise ValueError(f"shape must be one of {SHAPES}")
    rng = random.Random(f"{shape}-{n}-{seed}")
    facts = yaml.safe_load(EXAMPLE.read_text())
    makers = {
        "system": [_system],
        "pipvenv": [_pipvenv],
        "conda": [_conda],
        "mixed": [_system, _pipvenv, _conda, _pipvenv],
    }[shape]
    for i in range(1, n):
        tk, py = makers[i % len(makers)](i, rng)
        facts["toolkits"].append(tk)
        if py:
            facts["pythons"].append(py)
        if shape == "mixed" and i % 10 == 0 and py:  # a service on this venv, CUDA_HOME stale
            facts["services"].append(
                {
                    "name": f"worker{i:04d}.service",
                    "environment": {
                        "CUDA_HOME": f"/usr/local/cuda-{rng.choice(['11.7', '12.2'])}",
                        "PATH": "/usr/local/sbin:/usr/local/bin:/usr/bin:/bin",
                    },
                    "exec_start": f"{py['path']}/bin/python -m worker",
                    "python": py["path"],
                }
            )
    if shape == "mixed":
        facts["workload"]["missing_files"] = ["cuda_runtime.h", "libcudart.so.13"]
    return facts


if __name__ == "__main__":
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 10
    shape = sys.argv[2] if len(sys.argv) > 2 else "mixed"
    yaml.safe_dump(generate(n, shape), sys.stdout, sort_keys=False)
