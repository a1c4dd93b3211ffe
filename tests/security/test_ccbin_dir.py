"""A host compiler named by its DIRECTORY (`-ccbin DIR`) must not run another user's gcc/g++
as root (redteam-22).

nvcc given `-ccbin DIR` (or `--compiler-bindir=DIR`, or NVCC_CCBIN=DIR) runs DIR/gcc and
DIR/g++ (CUDA 13.0's nvcc, traced: no other name in DIR is looked up on Linux). The workload's
environment names it through NVCC_PREPEND_FLAGS/NVCC_APPEND_FLAGS (nvcc's own),
FLASHINFER_EXTRA_CUDAFLAGS, NVCC_CCBIN, or CC (FlashInfer's and torch's `-ccbin $CC`).
remedy checked the directory only: a root-owned directory holding uid 65534's g++, or a
root-made link to it, made root's FlashInfer JIT probe run it. The control (the same directory
holding root's wrappers) shows the canary does appear, so the check is what stops it.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
from test_probe_compiler_env import NOBODY, heavy_venv, own, probe, toolkit

from remedy.trust import env_code_paths

needs_root = pytest.mark.skipif(os.geteuid() != 0, reason="chown to another user needs root")


@pytest.fixture
def venv() -> Path:
    v = heavy_venv()
    if v is None:
        pytest.skip("the sandbox's heavy environment is not built (scripts/setup-sandbox.sh)")
    return v


@pytest.fixture
def area(tmp_path: Path) -> Path:
    tmp_path.chmod(0o755)
    return tmp_path


def hostcc_dir(area: Path, owner: int, *, link: bool = False) -> Path:
    """A root-owned directory (mode 755) holding gcc and g++ that append `NAME uid $(id -u)`
    to area/canary and then run the real compiler. The wrappers are `owner`'s files, or (link)
    root's links to `owner`'s files elsewhere (the way an admin points a bindir at a toolchain)."""
    canary = area / "canary"
    d = area / "hostcc"
    d.mkdir()
    src = area / "svc-tools" if link else d
    src.mkdir(exist_ok=True)
    for n in ("gcc", "g++"):
        f = src / n
        f.write_text(f'#!/bin/sh\necho "{n} uid $(id -u)" >> {canary}\nexec /usr/bin/{n} "$@"\n')
        f.chmod(0o755)
        os.chown(f, owner, owner)
        if link:
            (d / n).symlink_to(f)
    if link:
        own(src, owner)
    return d


# the forms the workload's environment names a host-compiler directory in
FORMS = [
    ("NVCC_PREPEND_FLAGS", "-ccbin {d}"),
    ("NVCC_APPEND_FLAGS", "--compiler-bindir={d}"),
    ("FLASHINFER_EXTRA_CUDAFLAGS", "-ccbin={d}"),
    ("NVCC_CCBIN", "{d}"),
    ("CC", "{d}"),  # FlashInfer's build_cuda_cflags: -ccbin $CC
]


def test_real_nvcc_runs_gcc_and_gxx_from_a_ccbin_directory(tmp_path: Path):
    """What the fix checks, proved on the real nvcc: DIR/gcc (preprocessing, host properties)
    and DIR/g++ (host compile) run; so the check covers exactly those two names."""
    nvcc = f"{toolkit()}/bin/nvcc"
    d = tmp_path / "hc"
    d.mkdir()
    log = tmp_path / "log"
    for n in ("gcc", "g++", "cc", "c++", "clang", "clang++", "cpp"):
        real = f"/usr/bin/{n}" if os.path.exists(f"/usr/bin/{n}") else "/bin/false"
        (d / n).write_text(f'#!/bin/sh\necho {n} >> {log}\nexec {real} "$@"\n')
        (d / n).chmod(0o755)
    (tmp_path / "a.cu").write_text("__global__ void k(){}\nint main(){k<<<1,1>>>();}\n")
    cmd = [nvcc, "-ccbin", str(d), "-Xcompiler", "-fPIC", "-shared", "a.cu", "-o", "a.so"]
    subprocess.run(cmd, cwd=tmp_path, check=True, capture_output=True)
    assert set(log.read_text().split()) == {"gcc", "g++"}


@needs_root
@pytest.mark.slow
@pytest.mark.parametrize(("var", "form"), FORMS)
def test_a_ccbin_directory_holding_another_users_compiler_is_refused(
    area: Path, venv: Path, var: str, form: str
):
    d = hostcc_dir(area, NOBODY, link=var == "NVCC_PREPEND_FLAGS")
    res = probe("flashinfer-jit-build", venv, {var: form.format(d=d)})
    assert not (area / "canary").exists(), (area / "canary").read_text()
    assert not res.ok and res.skipped, res.detail
    assert res.skipped.startswith(f"not executed: {var} holds {area}/"), res.skipped
    assert "owned by nobody (uid 65534)" in res.skipped


@needs_root
@pytest.mark.slow
def test_control_roots_own_ccbin_directory_runs(area: Path, venv: Path):
    d = hostcc_dir(area, 0)
    res = probe("flashinfer-jit-build", venv, {"NVCC_PREPEND_FLAGS": f"-ccbin {d}"})
    assert not res.skipped, res.detail
    ran = (area / "canary").read_text()
    assert "gcc uid 0" in ran, ran  # (the link then fails here: no libcuda)


def test_the_files_a_ccbin_directory_is_judged_by():
    for env in (
        {"NVCC_PREPEND_FLAGS": "-O2 -ccbin /opt/hc"},
        {"NVCC_PREPEND_FLAGS": "--compiler-bindir=/opt/hc"},
        {"NVCC_CCBIN": "/opt/hc"},
        {"CC": "/opt/hc"},
    ):
        (var,) = env
        paths = [p for v, p in env_code_paths(env)[0] if v == var]
        assert {"/opt/hc/gcc", "/opt/hc/g++"} <= set(paths), (env, paths)
    # a bare name is found on PATH, whose dirs (and the step's binaries) are checked
    assert env_code_paths({"NVCC_APPEND_FLAGS": "-ccbin g++"}) == ([], None)


def path_dir(area: Path, owner: int) -> Path:
    """A root-owned PATH dir (mode 755) holding root's links gcc, g++, c++, g++-12 to `owner`'s
    wrappers (as an admin points /usr/local/bin at a toolchain), which note `NAME uid N`."""
    svc, b = area / "svc-tools", area / "bin"
    svc.mkdir()
    b.mkdir()
    for n, real in (("gcc", "gcc"), ("g++", "g++"), ("c++", "c++"), ("g++-12", "g++")):
        f = svc / n
        f.write_text(
            f'#!/bin/sh\necho "{n} uid $(id -u)" >> {area / "canary"}\nexec /usr/bin/{real} "$@"\n'
        )
        f.chmod(0o755)
        (b / n).symlink_to(f)
    own(svc, owner)
    return b


@needs_root
@pytest.mark.slow
@pytest.mark.parametrize("env", [{}, {"CC": "g++-12"}, {"NVCC_PREPEND_FLAGS": "-ccbin g++-12"}])
def test_a_compiler_found_on_path_in_a_root_owned_dir_is_judged(
    area: Path, venv: Path, env: dict[str, str]
):
    """The script probes checked PATH's dirs only: FlashInfer's nvcc ran PATH's gcc and its
    ninja file's `c++` as root (canary `gcc uid 0` x4, `c++ uid 0`), and a bare `CC`/`-ccbin`
    name the same way."""
    b = path_dir(area, NOBODY)
    res = probe("flashinfer-jit-build", venv, {"PATH": f"{venv}/bin:{b}:/usr/bin:/bin", **env})
    assert not (area / "canary").exists(), (area / "canary").read_text()
    assert res.skipped and res.skipped.startswith("not executed: "), res.detail
    assert f"on PATH is {area}/svc-tools/" in res.skipped, res.skipped


@needs_root
@pytest.mark.slow
def test_control_roots_own_compilers_on_path_run(area: Path, venv: Path):
    b = path_dir(area, 0)
    res = probe("flashinfer-jit-build", venv, {"PATH": f"{venv}/bin:{b}:/usr/bin:/bin"})
    assert not res.skipped, res.detail
    ran = (area / "canary").read_text()
    assert "gcc uid 0" in ran and "c++ uid 0" in ran, ran


def test_the_bare_names_the_environment_makes_a_consumer_find():
    from remedy.trust import env_command_names

    env = {
        "CXX": "g++-12",
        "FLASHINFER_NVCC_LAUNCHER": "ccache /opt/x/nvcc",
        "NVCC_APPEND_FLAGS": "-O2 --compiler-bindir=clang++ -ccbin /opt/g",
        "FLASHINFER_EXTRA_CUDAFLAGS": "-B as",  # gcc's prefix: a dir, never a command
    }
    assert env_command_names(env) == ["g++-12", "ccache", "clang++"]
