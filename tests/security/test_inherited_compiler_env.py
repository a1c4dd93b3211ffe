"""A pip-install step's source build never runs a compiler another user can change that the
inherited environment names (CC, LDSHARED, CFLAGS's `-B DIR`...).

The attack, for real: root's package index and wheels are its own (PIP_FIND_LINKS naming a
root-owned directory, PIP_NO_INDEX: root's choice, kept), but the package has no wheel there,
only its sdist with a C extension (no wheel for this platform or Python is the common case), so
root's pip builds it with setuptools, which takes the compiler from the environment
(distutils `customize_compiler`: CC, LDSHARED, CFLAGS...). The environment `remedy run
--local` was started with (`sudo -E`, `env_keep`, a CI runner's) has CC naming uid 65534's
`gcc` (or LDSHARED its linker, or CFLAGS `-B` its directory, where gcc takes `as`): the
local transport passed it on and root's pip ran that program as root (the canary: a file it
writes, holding its uid, 0). Now such a variable is left out of the environment of every
command remedy runs locally. Control: root's own compiler wrapper named by CC is run.
"""

from __future__ import annotations

import glob
import os
import shutil
import subprocess
import tarfile
from pathlib import Path

import pytest
from local_apply import apply_locally

from remedy.childenv import own_config_env
from remedy.model import Facts, Step
from remedy.operations import PipInstall

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="a compiler another user owns")
NOBODY = 65534
SDIST = "nvidia_cuda_cccl-13.0.85"
# a setuptools that builds a wheel by itself (>= 70.1), or an older one with `wheel`: pip's
# isolated build installs them from root's own find-links (no network in tests)
WHEEL_DIRS = ["/opt/pypi/files", "/usr/share/python-wheels",
              "/root/.pyenv/versions/*/lib/python3*/test/wheeldata"]  # fmt: skip


def _build_wheels() -> list[str]:
    found = [w for d in WHEEL_DIRS for pat in ("setuptools-*.whl", "wheel-0*.whl")
             for w in glob.glob(os.path.join(d, pat))]  # fmt: skip
    if not any(os.path.basename(w).startswith("setuptools-") for w in found):
        pytest.skip("no setuptools wheel on this machine for pip's isolated build")
    return found


def _links(tmp_path: Path) -> Path:
    """Root's own find-links dir: the package as an sdist with a C extension, setuptools."""
    setup = (
        "from setuptools import Extension, setup\n"
        "setup(name='nvidia-cuda-cccl', version='13.0.85',\n"
        "      ext_modules=[Extension('cccl_probe', ['probe.c'])])\n"
    )
    return _sdist_links(tmp_path, {"setup.py": setup})


def _sdist_links(tmp_path: Path, files: dict[str, str]) -> Path:
    """Root's own find-links dir holding the package as an sdist of `files` (plus its probe.c,
    PKG-INFO and pyproject.toml) and the wheels its build needs."""
    links, src = tmp_path / "links", tmp_path / "src" / SDIST
    src.mkdir(parents=True)
    links.mkdir()
    for name, text in files.items():
        (src / name).write_text(text)
    (src / "probe.c").write_text("int cccl_probe_x;\n")
    (src / "PKG-INFO").write_text(
        "Metadata-Version: 2.1\nName: nvidia-cuda-cccl\nVersion: 13.0.85\n"
    )
    (src / "pyproject.toml").write_text(
        '[build-system]\nrequires = ["setuptools"]\nbuild-backend = "setuptools.build_meta"\n'
    )
    with tarfile.open(links / f"{SDIST}.tar.gz", "w:gz") as t:
        t.add(src, arcname=SDIST)
    for w in _build_wheels():
        shutil.copy(w, links)
    return links


def _tools(d: Path, canary: Path, owner: int) -> Path:
    """`gcc` and `as` that write the canary (their uid), then do the real work."""
    d.mkdir()
    for name, real in (("gcc", "/usr/bin/gcc"), ("as", "/usr/bin/as")):
        (d / name).write_text(f'#!/bin/sh\nid -u >> {canary}\nexec {real} "$@"\n')
        (d / name).chmod(0o755)
        os.chown(d / name, owner, owner)
    os.chown(d, owner, owner)
    return d


def install_pinned(
    tmp_path: Path, monkeypatch, links: Path, clear: tuple[str, ...], var: str, value: str
) -> Path:
    """Root's pip-install step pinning nvidia-cuda-cccl from root's own find-links only (no
    index), into a fresh venv, applied locally with ``var=value`` inherited and the other
    variables starting with ``clear`` left out of the test's environment; the venv."""
    venv = tmp_path / "opt" / "venv"
    subprocess.run(["/usr/bin/python3", "-m", "venv", str(venv)], check=True)
    for k in [k for k in os.environ if k.startswith(clear)]:
        monkeypatch.delenv(k)
    monkeypatch.setenv("PIP_NO_INDEX", "1")
    monkeypatch.setenv("PIP_FIND_LINKS", str(links))
    monkeypatch.setenv("PIP_CONFIG_FILE", "/dev/null")
    monkeypatch.setenv("PIP_DISABLE_PIP_VERSION_CHECK", "1")
    monkeypatch.setenv(var, value)
    facts = Facts(host="scratch", pythons=[{"path": str(venv), "python": "3.11"}])
    step = Step(action="pip-x", title="pin a package",
                operation=PipInstall(python=str(venv), packages={"nvidia-cuda-cccl": "13.0.85"},
                                     no_deps=True),
                probe="static")  # fmt: skip
    apply_locally(tmp_path, facts, [step])
    return venv


def _apply(tmp_path: Path, monkeypatch, var: str, owner: int) -> Path:
    tmp_path.chmod(0o755)
    canary = tmp_path / "canary"
    tools = _tools(tmp_path / f"tools-{owner}", canary, owner)
    for k in ("CC", "CXX", "LDSHARED", "CFLAGS", "LDFLAGS", "CPPFLAGS"):
        monkeypatch.delenv(k, raising=False)
    value = {
        "CC": f"{tools}/gcc",
        "LDSHARED": f"{tools}/gcc -shared",
        "CFLAGS": f"-O2 -B{tools}/",
    }[var]
    venv = install_pinned(tmp_path, monkeypatch, _links(tmp_path), ("PIP_",), var, value)
    assert any(venv.glob("lib/python3*/site-packages/cccl_probe*.so")), "the sdist was not built"
    return canary


@pytest.mark.parametrize("var", ["CC", "LDSHARED", "CFLAGS"])
def test_a_compiler_another_user_owns_named_by_the_environment_is_not_run(
    tmp_path: Path, monkeypatch, var: str
):
    canary = _apply(tmp_path, monkeypatch, var, NOBODY)
    assert not canary.exists(), f"root's pip build ran uid 65534's program that {var} names"


def test_control_roots_own_compiler_named_by_cc_is_run(tmp_path: Path, monkeypatch):
    canary = _apply(tmp_path, monkeypatch, "CC", 0)
    assert canary.exists(), "root's own CC was not used"
    assert set(canary.read_text().split()) == {"0"}


def test_the_forms_of_a_compiler_variable(tmp_path: Path) -> None:
    """Which values are left out: any word (program or option piece) naming another user's
    place, a relative path, an option that runs/loads/writes; kept: root's own, bare names."""
    tmp_path.chmod(0o755)
    theirs = tmp_path / "theirs"
    theirs.mkdir()
    os.chown(theirs, NOBODY, NOBODY)
    t = str(theirs)
    out = {
        b"CC": f"ccache {t}/gcc",
        b"CXX": "g++ -std=c++17",
        b"CUDAHOSTCXX": f"{t}/g++",
        b"NVCC_CCBIN": "bin/gcc",
        b"LDFLAGS": "-Wl,-rpath,/usr/lib -L/usr/lib",
        b"CXXFLAGS": f"-O2 -Wl,-rpath,{t}",
        b"CPPFLAGS": "-fplugin=/usr/lib/x.so",
        b"NVCC_PREPEND_FLAGS": "-ccbin /usr/bin/gcc",
        b"NVCC_APPEND_FLAGS": f"-ccbin {t}",
        b"CFLAGS": "-O2 '-I/usr/include",
    }
    env = {k: v.encode() for k, v in out.items()}
    judged = own_config_env(env)
    assert judged == {
        b"CC": None,
        b"CUDAHOSTCXX": None,
        b"NVCC_CCBIN": None,
        b"CXXFLAGS": None,
        b"CPPFLAGS": None,
        b"NVCC_APPEND_FLAGS": None,
        b"CFLAGS": None,
    }


def _over_ssh(tmp_path: Path, var: str, owner: int) -> Path:
    """The same build as a step over SSH, whose login environment (here the loopback sshd's
    key `environment=` options, as /etc/environment through pam_env) names the compiler."""
    from test_remote_pip_cache import pin_cccl_over_ssh

    tmp_path.chmod(0o755)
    canary = tmp_path / "canary"
    tools = _tools(tmp_path / f"tools-{owner}", canary, owner)
    links = _links(tmp_path)
    value = {"CC": f"{tools}/gcc", "CFLAGS": f"-O2 -B{tools}/"}[var]
    venv = pin_cccl_over_ssh(tmp_path, links, {var: value})
    assert any(venv.glob("lib/python3*/site-packages/cccl_probe*.so")), "the sdist was not built"
    return canary


def _sshd_reason() -> str | None:
    from local_sshd import sshd_available

    return sshd_available()


@pytest.mark.skipif(_sshd_reason() is not None, reason="no sshd")
@pytest.mark.parametrize("var", ["CC", "CFLAGS"])
def test_a_login_compiler_another_user_owns_is_not_run_over_ssh(tmp_path: Path, var: str):
    canary = _over_ssh(tmp_path, var, NOBODY)
    assert not canary.exists(), f"root's pip build ran uid 65534's program the login {var} names"


@pytest.mark.skipif(_sshd_reason() is not None, reason="no sshd")
def test_control_a_login_cc_root_owns_is_run_over_ssh(tmp_path: Path):
    canary = _over_ssh(tmp_path, "CC", 0)
    assert canary.exists(), "root's own login CC was left out"
    assert set(canary.read_text().split()) == {"0"}


def test_what_the_host_side_scrub_leaves_out_of_compiler_variables(tmp_path: Path):
    """The step guard alone, under `env -i` + a login environment: the values
    test_the_forms_of_a_compiler_variable judges locally, judged the same on the host."""
    from login_env import kept_by_guard as after
    from login_env import places

    theirs, mine, sticky = (p := places(tmp_path)).theirs, p.mine, p.sticky
    out = {
        "CC": f"ccache {theirs}/gcc",
        "CUDAHOSTCXX": f"{sticky}/link/g++",
        "NVCC_CCBIN": "bin/gcc",
        "CXX": f"'{mine}/g++'",
        "CXXFLAGS": f"-O2 -Wl,-rpath,{theirs}",
        "CPPFLAGS": f"-fplugin={mine}/x.so",
        "NVCC_APPEND_FLAGS": f"-ccbin {theirs}",
        "LDFLAGS": f"-B{theirs}/",
        "CFLAGS": "-I./inc",
        "CMAKE_CXX_COMPILER_LAUNCHER": f"{theirs}/ccache",
        "CMAKE_TOOLCHAIN_FILE": f"{sticky}/link/tc.cmake",
        "CMAKE_PREFIX_PATH": f"{mine}:{theirs}",
    }
    assert after(**out) == {}
    kept = {
        "CC": "gcc",
        "CXX": f"ccache {mine}/g++ -std=c++17",
        "LDFLAGS": f"-Wl,-rpath,{mine} -L{mine}",
        "NVCC_PREPEND_FLAGS": f"-ccbin {mine}",
        "CFLAGS": "-O2 -g",
        "CMAKE_C_COMPILER_LAUNCHER": "ccache",
        "CMAKE_TOOLCHAIN_FILE": f"{mine}/tc.cmake",
        "CMAKE_PREFIX_PATH": f"{mine}:/usr/local",
    }
    assert after(**kept) == kept


CMAKE_SETUP = """\
import os, subprocess
from setuptools import setup
from setuptools.command.build_py import build_py


class CMakeBuild(build_py):  # a package's CMake build, as scikit-build-core runs it
    def run(self):
        out = os.path.abspath("cmake-build")
        subprocess.check_call(["cmake", "-S", ".", "-B", out])
        subprocess.check_call(["cmake", "--build", out])
        super().run()


setup(name="nvidia-cuda-cccl", version="13.0.85", py_modules=["cccl_cmake"],
      cmdclass={"build_py": CMakeBuild})
"""
CMAKE_LISTS = """\
cmake_minimum_required(VERSION 3.18)
project(cccl_probe C)
find_package(CcclExtras QUIET)
add_library(cccl_probe SHARED probe.c)
"""


def _cmake_links(tmp_path: Path) -> Path:
    """Root's own find-links dir: the package as an sdist built through CMake."""
    files = {"setup.py": CMAKE_SETUP, "CMakeLists.txt": CMAKE_LISTS, "cccl_cmake.py": ""}
    return _sdist_links(tmp_path, files)


def _cmake_places(d: Path, canary: Path, owner: int) -> dict[str, str]:
    """A launcher, a toolchain file and a package config of `owner`'s, each writing the
    canary (its uid) when CMake runs or loads it: the value of each variable naming one."""
    cfg = d / "lib" / "cmake" / "CcclExtras"
    cfg.mkdir(parents=True)
    run = f'execute_process(COMMAND sh -c "id -u >> {canary}")\n'
    (d / "launch").write_text(f'#!/bin/sh\nid -u >> {canary}\nexec "$@"\n')
    (d / "launch").chmod(0o755)
    (d / "toolchain.cmake").write_text(run)
    (cfg / "CcclExtrasConfig.cmake").write_text(run + "set(CcclExtras_FOUND TRUE)\n")
    for dp, dns, fns in os.walk(d):
        for n in [dp, *(os.path.join(dp, x) for x in dns + fns)]:
            os.chown(n, owner, owner)
    return {
        "CMAKE_C_COMPILER_LAUNCHER": str(d / "launch"),
        "CMAKE_TOOLCHAIN_FILE": str(d / "toolchain.cmake"),
        "CMAKE_PREFIX_PATH": f"/usr/local:{d}",
    }


def _cmake_apply(tmp_path: Path, monkeypatch, var: str, owner: int) -> Path:
    if not shutil.which("cmake"):
        pytest.skip("no cmake")
    tmp_path.chmod(0o755)
    canary = tmp_path / "canary"
    value = _cmake_places(tmp_path / f"cmake-{owner}", canary, owner)[var]
    links = _cmake_links(tmp_path)
    venv = install_pinned(tmp_path, monkeypatch, links, ("PIP_", "CMAKE_"), var, value)
    built = venv.glob("lib/python3*/site-packages/nvidia_cuda_cccl-13.0.85.dist-info")
    assert any(built), "the sdist was not built"
    return canary


@pytest.mark.parametrize(
    "var", ["CMAKE_C_COMPILER_LAUNCHER", "CMAKE_TOOLCHAIN_FILE", "CMAKE_PREFIX_PATH"]
)
def test_cmake_code_another_user_owns_named_by_the_environment_is_not_run(
    tmp_path: Path, monkeypatch, var: str
):
    canary = _cmake_apply(tmp_path, monkeypatch, var, NOBODY)
    assert not canary.exists(), f"root's CMake build ran uid 65534's code that {var} names"


@pytest.mark.parametrize("var", ["CMAKE_C_COMPILER_LAUNCHER", "CMAKE_PREFIX_PATH"])
def test_control_roots_own_cmake_launcher_and_prefix_are_used(tmp_path: Path, monkeypatch, var):
    canary = _cmake_apply(tmp_path, monkeypatch, var, 0)
    assert canary.exists(), f"root's own {var} was left out"
    assert set(canary.read_text().split()) == {"0"}
