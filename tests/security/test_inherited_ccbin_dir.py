"""A step's source build never runs another user's gcc/g++ from a host-compiler DIRECTORY the
inherited environment names (`-ccbin DIR` in NVCC_PREPEND_FLAGS, NVCC_CCBIN=DIR), nor takes
torch's CUDAExtension settings (PYTORCH_NVCC, CUDNN_HOME, CUDA_INC_PATH) from another user's
place (redteam-22).

The attack, for real: as in test_inherited_compiler_env.py, root's own find-links holds the
package only as an sdist, whose build runs the toolkit's nvcc on a .cu file (as torch's
BuildExtension does). nvcc takes `-ccbin DIR` from NVCC_PREPEND_FLAGS (or NVCC_CCBIN) in the
environment `run --local` inherited, and runs DIR/gcc and DIR/g++. `childenv` judged DIR only:
a root-owned directory holding root's links to uid 65534's gcc and g++ passed, and root's pip
build ran them (canary: uid 0). Now DIR/gcc and DIR/g++ are judged too, and the variable is
left out. Control: root's own wrappers in the same directory are run.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from test_inherited_compiler_env import NOBODY, _sdist_links, install_pinned

from remedy.childenv import own_config_env

NVCC = "/usr/local/cuda/bin/nvcc"
needs_nvcc = pytest.mark.skipif(not os.path.exists(NVCC), reason="no CUDA toolkit")

NVCC_SETUP = f"""\
import subprocess
from setuptools import setup
from setuptools.command.build_py import build_py


class CudaBuild(build_py):  # a package's CUDA extension build: the toolkit's nvcc on a .cu
    def run(self):
        subprocess.check_call(["{NVCC}", "-c", "k.cu", "-o", "k.o"])
        super().run()


setup(name="nvidia-cuda-cccl", version="13.0.85", py_modules=["cccl_cuda"],
      cmdclass={{"build_py": CudaBuild}})
"""


def hostcc_dir(tmp_path: Path, owner: int) -> Path:
    """A root-owned directory (755) holding root's links gcc, g++ to `owner`'s wrappers that
    append their uid to tmp_path/canary, then run the real compiler."""
    svc, d = tmp_path / f"svc-{owner}", tmp_path / f"hostcc-{owner}"
    svc.mkdir()
    d.mkdir()
    for n in ("gcc", "g++"):
        (svc / n).write_text(f'#!/bin/sh\nid -u >> {tmp_path / "canary"}\nexec /usr/bin/{n} "$@"\n')
        (svc / n).chmod(0o755)
        os.chown(svc / n, owner, owner)
        (d / n).symlink_to(svc / n)
    os.chown(svc, owner, owner)
    return d


def _apply(tmp_path: Path, monkeypatch, var: str, owner: int) -> Path:
    tmp_path.chmod(0o755)
    d = hostcc_dir(tmp_path, owner)
    files = {"setup.py": NVCC_SETUP, "k.cu": "__global__ void k() {}\n", "cccl_cuda.py": ""}
    links = _sdist_links(tmp_path, files)
    value = {"NVCC_PREPEND_FLAGS": f"-ccbin {d}", "NVCC_CCBIN": str(d)}[var]
    venv = install_pinned(tmp_path, monkeypatch, links, ("PIP_", "NVCC_"), var, value)
    built = venv.glob("lib/python3*/site-packages/nvidia_cuda_cccl-13.0.85.dist-info")
    assert any(built), "the sdist was not built"
    return tmp_path / "canary"


@needs_nvcc
@pytest.mark.parametrize("var", ["NVCC_PREPEND_FLAGS", "NVCC_CCBIN"])
def test_a_ccbin_directory_holding_another_users_compiler_is_left_out(
    tmp_path: Path, monkeypatch, var: str
):
    canary = _apply(tmp_path, monkeypatch, var, NOBODY)
    assert not canary.exists(), f"root's build ran uid 65534's gcc from {var}'s directory"


@needs_nvcc
def test_control_roots_own_ccbin_directory_is_used(tmp_path: Path, monkeypatch):
    canary = _apply(tmp_path, monkeypatch, "NVCC_PREPEND_FLAGS", 0)
    assert canary.exists(), "root's own -ccbin directory was not used"
    assert set(canary.read_text().split()) == {"0"}


def test_the_torch_extension_variables_and_ccbin_forms(tmp_path: Path):
    """PYTORCH_NVCC (a command, as CC), CUDNN_HOME/CUDNN_PATH/CUDA_INC_PATH (places); each
    host-compiler place judged with its gcc and g++. Root's own of each is kept."""
    tmp_path.chmod(0o755)
    theirs = tmp_path / "theirs"
    theirs.mkdir()
    os.chown(theirs, NOBODY, NOBODY)
    t = str(theirs)
    d = hostcc_dir(tmp_path, NOBODY)
    mine = hostcc_dir(tmp_path, 0)
    bad = {
        b"PYTORCH_NVCC": f"ccache {t}/nvcc",
        b"CUDNN_HOME": t,
        b"CUDNN_PATH": f"{t}/cudnn",
        b"CUDA_INC_PATH": t,
        b"CC": str(d),
        b"NVCC_CCBIN": str(d),
        b"CUDAFLAGS": f"-O2 --compiler-bindir={d}",
        b"NVCC_APPEND_FLAGS": f"-ccbin {d}",
    }
    assert own_config_env({k: v.encode() for k, v in bad.items()}) == dict.fromkeys(bad)
    good = {
        b"PYTORCH_NVCC": "ccache /usr/local/cuda/bin/nvcc",
        b"CUDNN_HOME": "/usr/local/cudnn",
        b"CC": str(mine),
        b"NVCC_CCBIN": "/usr/bin/g++",
        b"NVCC_APPEND_FLAGS": f"-ccbin {mine} -I/usr/include",
    }
    assert own_config_env({k: v.encode() for k, v in good.items()}) == {}
