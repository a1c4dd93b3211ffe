"""What a step runs besides gcc: a program its build finds on the step's PATH by a name
remedy did not list, and nvcc's host-compiler DIRECTORY in the login environment over SSH
(redteam-27).

1. A step's PATH (the fixed system PATH; here, in a private mount namespace, a root-owned
   /usr/local/bin holding root's link to uid 65534's program). The runner judged only the
   names of trust.STEP_PATH_NAMES (cc, gcc, c++, g++, as, ld) there. A pip-install step's
   source build runs more: setuptools on Debian's Python takes `x86_64-linux-gnu-gcc` (its
   sysconfig CC and LDSHARED), a build runs `ninja`, `cmake`, `make` (dkms too), and each ran
   uid 65534's program as root (canary `0`). Now every entry of every directory on the
   step's PATH is judged (trust.SH_PATH_ENTRIES) before a plan whose steps compile runs, and
   the plan is refused. Control: root's own program in the same place runs. Not only a
   compile: a link-layout step's `ln` ran uid 65534's too, so every plan with steps is judged.
2. Over SSH, the login scrub (trust.SH_LOGIN_SCRUB) judged a host-compiler directory
   (`-ccbin DIR` in NVCC_PREPEND_FLAGS, NVCC_CCBIN=DIR, CC=DIR, CUDAHOSTCXX=DIR,
   `--compiler-bindir=DIR` in CUDAFLAGS) by DIR only: a root-owned DIR holding root's links
   to uid 65534's gcc and g++ was kept, and a pip-install step's build running nvcc ran them
   as root (canary `0`). Locally `childenv` already judged DIR/gcc and DIR/g++ (redteam-22);
   now the scrub does too. Control: root's own DIR is kept and used.
"""

from __future__ import annotations

import os
import subprocess
import textwrap
from pathlib import Path

import pytest
from local_apply import (
    needs_private_mounts,
    pip_pin_under_usr_local_bin,
    python_under_usr_local_bin,
)
from local_sshd import sshd_available
from test_inherited_compiler_env import _sdist_links

NOBODY = 65534
SSHD_REASON = sshd_available()
needs_root = pytest.mark.skipif(os.geteuid() != 0, reason="chown to another user needs root")
needs_sshd = pytest.mark.skipif(SSHD_REASON is not None, reason=SSHD_REASON or "")

# a build that runs NAME by name, as build tooling does (`ninja --version`: torch's
# BuildExtension; `cmake --version`: a setup.py driving CMake; `make`: dkms, Makefile builds)
TOOL_SETUP = """\
import subprocess
from setuptools import setup
from setuptools.command.build_py import build_py


class Build(build_py):
    def run(self):
        subprocess.check_call(["{name}", "--version"], stdout=subprocess.DEVNULL)
        super().run()


setup(name="nvidia-cuda-cccl", version="13.0.85", py_modules=["cccl_tool"],
      cmdclass={{"build_py": Build}})
"""
# setuptools' own compiler on Debian's Python (sysconfig CC, LDSHARED): a C extension
EXT_SETUP = (
    "from setuptools import Extension, setup\n"
    "setup(name='nvidia-cuda-cccl', version='13.0.85',\n"
    "      ext_modules=[Extension('cccl_probe', ['probe.c'])])\n"
)
TOOLS = ["x86_64-linux-gnu-gcc", "ninja", "cmake", "make"]


def _tool_in_path_dir(area: Path, name: str, owner: int) -> Path:
    """A root-owned dir (755) holding root's link `name` to `owner`'s wrapper that appends its
    uid to area/canary, then runs the real /usr/bin/NAME."""
    bindir, svc = area / "bin", area / "svc"
    bindir.mkdir(mode=0o755)
    svc.mkdir(mode=0o755)
    f = svc / name
    f.write_text(f'#!/bin/sh\nid -u >> {area / "canary"}\nexec /usr/bin/{name} "$@"\n')
    f.chmod(0o755)
    os.chown(f, owner, owner)
    os.chown(svc, owner, owner)
    (bindir / name).symlink_to(f)
    return bindir


def _build_with_path_dir(area: Path, name: str, owner: int) -> tuple[str, str | None]:
    """Root's pip-install step (source build) applied by the local runner with /usr/local/bin
    holding root's link `name` to `owner`'s program; (stdout, canary)."""
    needs_private_mounts()
    if not os.path.exists(f"/usr/bin/{name}"):
        pytest.skip(f"no /usr/bin/{name} here")
    area.chmod(0o755)
    bindir = _tool_in_path_dir(area, name, owner)
    setup = EXT_SETUP if name.endswith("-gcc") else TOOL_SETUP.format(name=name)
    links = _sdist_links(area, {"setup.py": setup, "cccl_tool.py": ""})
    venv = area / "opt" / "venv"
    subprocess.run(["/usr/bin/python3", "-m", "venv", str(venv)], check=True)
    return pip_pin_under_usr_local_bin(area, bindir, links)


@needs_root
@pytest.mark.parametrize("name", TOOLS)
def test_a_program_another_user_owns_on_a_steps_path_is_not_run(tmp_path: Path, name: str):
    out, ran = _build_with_path_dir(tmp_path, name, NOBODY)
    assert ran is None, f"root's source build ran uid 65534's {name} from /usr/local/bin: {ran}"
    assert "REFUSED" in out and f"{name} on PATH is" in out and "uid 65534" in out, out


@needs_root
@pytest.mark.parametrize("name", ["x86_64-linux-gnu-gcc", "ninja"])
def test_control_roots_own_program_on_a_steps_path_runs(tmp_path: Path, name: str):
    out, ran = _build_with_path_dir(tmp_path, name, 0)
    assert "OUTCOME" in out and "OUTCOME failed" not in out, out
    assert ran and set(ran.split()) == {"0"}, f"root's own {name} did not run: {ran}"


_NS_LINKS = textwrap.dedent(
    """
    import sys
    sys.path[:0] = sys.argv[1].split(":")
    from pathlib import Path
    from local_apply import apply_locally
    from remedy.model import Facts, Step
    from remedy.operations import Link, LinkLayout
    area = Path(sys.argv[2])
    prefix = area / "cuda"
    facts = Facts(host="scratch", toolkits=[{"prefix": str(prefix), "kind": "system"}])
    step = Step(action="layout-x", title="a link in the toolkit",
                operation=LinkLayout(prefix=str(prefix), links=[Link(path="lib64", target="lib")]),
                probe="static")
    try:
        r = apply_locally(area, facts, [step])
        print("OUTCOME", r.outcome, r.message)
    except Exception as e:
        print("REFUSED", type(e).__name__, e)
    """
)


@needs_root
@pytest.mark.parametrize("owner", [NOBODY, 0], ids=["theirs", "control-root"])
def test_a_step_that_compiles_nothing_runs_no_program_another_user_owns(tmp_path: Path, owner: int):
    """A link-layout step with no stub (no compile) runs `ln` from the system PATH: root's
    link there to uid 65534's `ln` ran it as root (canary `0`). Control: root's own runs."""
    needs_private_mounts()
    tmp_path.chmod(0o755)
    (tmp_path / "cuda" / "lib").mkdir(parents=True)
    bindir = _tool_in_path_dir(tmp_path, "ln", owner)
    r = python_under_usr_local_bin(bindir, _NS_LINKS, str(tmp_path))
    canary = tmp_path / "canary"
    ran = canary.read_text() if canary.exists() else None
    if owner == NOBODY:
        assert ran is None, f"root's link-layout step ran uid 65534's `ln`: {ran}"
        assert "REFUSED" in r.stdout and "ln on PATH is" in r.stdout, r.stdout + r.stderr
    else:
        assert "OUTCOME" in r.stdout and "OUTCOME failed" not in r.stdout, r.stdout + r.stderr
        assert ran and set(ran.split()) == {"0"}, r.stdout


# attack 2: over SSH, nvcc's host-compiler directory in the login environment
def _nvcc_build_over_ssh(tmp_path: Path, var: str, owner: int) -> Path:
    from test_inherited_ccbin_dir import NVCC_SETUP, hostcc_dir
    from test_remote_pip_cache import pin_cccl_over_ssh

    if not os.path.exists("/usr/local/cuda/bin/nvcc"):
        pytest.skip("no CUDA toolkit")
    tmp_path.chmod(0o755)
    d = hostcc_dir(tmp_path, owner)
    files = {"setup.py": NVCC_SETUP, "k.cu": "__global__ void k() {}\n", "cccl_cuda.py": ""}
    links = _sdist_links(tmp_path, files)
    value = {"NVCC_PREPEND_FLAGS": f"-ccbin {d}", "NVCC_CCBIN": str(d)}[var]
    venv = pin_cccl_over_ssh(tmp_path, links, {var: value})
    built = venv.glob("lib/python3*/site-packages/nvidia_cuda_cccl-13.0.85.dist-info")
    assert any(built), "the sdist was not built"
    return tmp_path / "canary"


@needs_root
@needs_sshd
@pytest.mark.parametrize("var", ["NVCC_PREPEND_FLAGS", "NVCC_CCBIN"])
def test_a_login_ccbin_directory_holding_another_users_compiler_runs_nothing(
    tmp_path: Path, var: str
):
    canary = _nvcc_build_over_ssh(tmp_path, var, NOBODY)
    assert not canary.exists(), f"root's build ran uid 65534's gcc from the login {var}"


@needs_root
@needs_sshd
def test_control_a_login_ccbin_directory_root_owns_is_used(tmp_path: Path):
    canary = _nvcc_build_over_ssh(tmp_path, "NVCC_PREPEND_FLAGS", 0)
    assert canary.exists(), "root's own -ccbin directory was not used"
    assert set(canary.read_text().split()) == {"0"}


# what is judged, without a build
def _on_path(d: Path, as_uid: int | None = None) -> str | None:
    import asyncio

    from remedy.transport import LocalTransport
    from remedy.trust import untrusted_on_path

    t = LocalTransport(host="scratch")
    return asyncio.run(untrusted_on_path(t, [], str(d), as_uid=as_uid, every_entry=True))


def _svc(area: Path, owner: int) -> Path:
    svc = area / f"svc-{owner}"
    svc.mkdir(mode=0o755, exist_ok=True)
    os.chown(svc, owner, owner)
    return svc


def _prog(d: Path, name: str, owner: int, mode: int = 0o755) -> Path:
    f = d / name
    f.write_text("#!/bin/sh\n")
    f.chmod(mode)
    os.chown(f, owner, owner)
    return f


@needs_root
def test_what_every_entry_of_a_path_directory_is_judged_by(tmp_path: Path):
    """Any name a build may run (clang, ld.gold, a triplet gcc, make): another user's file, root's
    link to it, root's file in their directory, a link leading nowhere into their directory,
    a file anyone may write: refused, the name said. Root's own files and links, a link to
    a directory (/usr/bin/X11 -> .), a link leading nowhere in root's place: judged fine."""
    tmp_path.chmod(0o755)
    theirs = _svc(tmp_path, NOBODY)
    forms = {
        "clang": lambda d: _prog(d, "clang", NOBODY),
        "ld.gold": lambda d: (d / "ld.gold").symlink_to(_prog(theirs, "ld.gold", NOBODY)),
        "x86_64-linux-gnu-gcc": lambda d: (d / "x86_64-linux-gnu-gcc").symlink_to(
            _prog(theirs, "gcc-x", 0)
        ),
        "make": lambda d: (d / "make").symlink_to(theirs / "not-yet"),
        "cmake": lambda d: _prog(d, "cmake", 0, 0o777),
    }
    for name, plant in forms.items():
        d = tmp_path / f"bin-{name}"
        d.mkdir(mode=0o755)
        plant(d)
        why = _on_path(d)
        assert why and why.startswith("not executed:"), (name, why)
        assert f"{name} on PATH is" in why or "a link on PATH" in why, (name, why)
    mine = tmp_path / "mine"
    mine.mkdir(mode=0o755)
    _prog(mine, "ninja", 0)
    (mine / "gcc").symlink_to("/usr/bin/gcc")
    (mine / "X11").symlink_to(".")
    (mine / "gone").symlink_to(mine / "not-yet")
    (mine / "sub").mkdir()
    assert _on_path(mine) is None
    # a probe run as the unit's user: that user's own program hands it nothing
    d = tmp_path / "bin-as"
    d.mkdir(mode=0o755)
    (d / "clang").symlink_to(_prog(theirs, "clang", NOBODY))
    assert _on_path(d, as_uid=NOBODY) is None
    assert "uid 65534" in (_on_path(d) or "")


@needs_root
def test_the_playbook_judges_every_entry_of_the_steps_path(tmp_path: Path):
    """The exported playbook's judging task (trust.step_path_judgement) on the steps' PATH."""
    from remedy.trust import SH_TRUST, step_path_judgement

    tmp_path.chmod(0o755)
    d = tmp_path / "bin"
    d.mkdir(mode=0o755)
    (d / "ninja").symlink_to(_prog(_svc(tmp_path, NOBODY), "ninja", NOBODY))
    script = SH_TRUST + step_path_judgement()
    r = subprocess.run(["sh", "-c", script], env={"PATH": f"{d}:/usr/bin:/bin"},
                       capture_output=True, text=True)  # fmt: skip
    assert r.returncode == 3 and "ninja on PATH is" in r.stdout, r.stdout + r.stderr
    r = subprocess.run(["sh", "-c", script], env={"PATH": "/usr/bin:/bin"},
                       capture_output=True, text=True)  # fmt: skip
    assert r.returncode == 0, r.stdout + r.stderr


@needs_root
def test_what_the_login_scrub_judges_of_a_host_compiler_directory(tmp_path: Path):
    """Each form naming a host-compiler DIRECTORY (nvcc runs DIR/gcc, DIR/g++) whose gcc or
    g++ is root's link to uid 65534's: left out; root's own kept."""
    from login_env import kept_by_guard
    from test_inherited_ccbin_dir import hostcc_dir

    tmp_path.chmod(0o755)
    d, m = hostcc_dir(tmp_path, NOBODY), hostcc_dir(tmp_path, 0)
    forms = {
        "NVCC_PREPEND_FLAGS": "-ccbin {}",
        "NVCC_APPEND_FLAGS": "-O2 --compiler-bindir={}",
        "CUDAFLAGS": "-ccbin={}",
        "NVCC_CCBIN": "{}",
        "CC": "{}",
        "CUDAHOSTCXX": "{}",
        "CXXFLAGS": "-I{}",
    }
    assert kept_by_guard(**{k: v.format(d) for k, v in forms.items()}) == {}
    kept = {k: v.format(m) for k, v in forms.items()}
    assert kept_by_guard(**kept) == kept
