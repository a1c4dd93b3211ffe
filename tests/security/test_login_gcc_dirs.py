"""Over SSH, a step's gcc never takes its programs from a place the login environment names
whose tree holds another user's file; a local step's gcc never runs another user's `as`/`ld`
found on the step's PATH (redteam-24).

1. Over SSH a step starts in the host's login environment (/etc/environment through pam_env;
   here a loopback sshd's key `environment=` options), judged on the host by
   remedy.trust.SH_LOGIN_SCRUB. It judged `COMPILER_PATH`, a `-B DIR` in CFLAGS-like and
   CC-like variables and `GCC_EXEC_PREFIX` by the place only: a root-owned directory (755)
   holding root's links to uid 65534's `cc1`, `as`, `collect2`, `ld` passed, and the
   link-layout stub's `cc` (COMPILER_PATH, GCC_EXEC_PREFIX) and a pip-install step's source
   build (CFLAGS `-B DIR/`) ran them as root (canaries `cc1 uid 0`, `as` writing `0`). Now
   the scrub judges every entry of such a tree (trust.SH_GCC_TREE, as the probes do), leaves
   out a `-B` naming a relative place or a prefix of names, and leaves GCC_EXEC_PREFIX out
   whatever it names (as the local scrub does). Control: root's own tree is used.
2. A step's PATH (the fixed system PATH; here, in a private mount namespace, a root-owned
   /usr/local/bin holding uid 65534's `as`): gcc 12 finds `as` and `ld` on PATH, so the
   link-layout stub's `cc` ran uid 65534's `as` as root. Now a plan whose steps compile is
   refused before anything changes when the step's PATH finds a compiler driver, `as` or
   `ld` that `trusted` refuses (trust.STEP_PATH_NAMES). Control: root's own `as` there runs.
"""

from __future__ import annotations

import os
import textwrap
from pathlib import Path

import pytest
from local_apply import as_canary_dir, needs_private_mounts, python_under_usr_local_bin
from local_sshd import sshd_available
from test_gcc_prefix_files import NOBODY, _stub_step, gcc_dir

from remedy.model import Facts

SSHD_REASON = sshd_available()
needs_root = pytest.mark.skipif(os.geteuid() != 0, reason="chown to another user needs root")
needs_sshd = pytest.mark.skipif(SSHD_REASON is not None, reason=SSHD_REASON or "")


@pytest.fixture
def area(tmp_path: Path) -> Path:
    tmp_path.chmod(0o755)
    return tmp_path


def _stub_over_ssh(area: Path, login: dict[str, str]) -> str | None:
    """The link-layout stub step (`cc` from the system PATH) over a loopback sshd whose
    sessions get `login`; what the canary says, if anything ran."""
    from test_remote_pip_cache import _apply_over_ssh

    prefix = area / "cuda"
    (prefix / "lib").mkdir(parents=True)
    facts = Facts(host="scratch", toolkits=[{"prefix": str(prefix), "kind": "system"}])
    login = {"XDG_STATE_HOME": str(area / "state"), **login}
    _apply_over_ssh(area, facts, _stub_step(prefix), login)
    canary = area / "canary"
    if canary.exists():
        return canary.read_text()
    assert (prefix / "lib" / "stubs" / "libcuda.so").exists(), "the stub was not built"
    return None


LOGIN_FORMS = [
    ("COMPILER_PATH", "/usr/local/nothing:{d}"),
    ("GCC_EXEC_PREFIX", "{d}/"),
]


@needs_root
@needs_sshd
@pytest.mark.parametrize(("var", "form"), LOGIN_FORMS, ids=[f[0] for f in LOGIN_FORMS])
def test_a_login_gcc_directory_holding_another_users_program_runs_nothing(
    area: Path, var: str, form: str
):
    d = gcc_dir(area, NOBODY, link=True)
    ran = _stub_over_ssh(area, {var: form.format(d=d)})
    assert ran is None, f"root's cc ran uid 65534's program from the login {var}: {ran}"


@needs_root
@needs_sshd
def test_control_a_login_compiler_path_root_owns_is_used(area: Path):
    d = gcc_dir(area, 0, link=True)
    ran = _stub_over_ssh(area, {"COMPILER_PATH": str(d)})
    assert ran and "cc1 uid 0" in ran, f"root's own COMPILER_PATH was left out: {ran}"


@needs_root
@needs_sshd
def test_a_login_cflags_b_dir_holding_another_users_as_runs_nothing(tmp_path: Path):
    """A pip-install step's sdist build over SSH (setuptools takes CFLAGS): `-B DIR/`
    naming a root-owned DIR holding uid 65534's `as`."""
    from test_inherited_compiler_env import _links, _tools
    from test_remote_pip_cache import pin_cccl_over_ssh

    tmp_path.chmod(0o755)
    canary = tmp_path / "canary"
    tools = _tools(tmp_path / "tools", canary, NOBODY)
    os.chown(tools, 0, 0)  # root's directory, uid 65534's `gcc` and `as` in it
    links = _links(tmp_path)
    venv = pin_cccl_over_ssh(tmp_path, links, {"CFLAGS": f"-O2 -B{tools}/"})
    assert any(venv.glob("lib/python3*/site-packages/cccl_probe*.so")), "the sdist was not built"
    assert not canary.exists(), f"root's build ran uid 65534's `as` (-B): {canary.read_text()}"


def test_what_the_login_scrub_judges_of_gcc_places(tmp_path: Path):
    """The guard alone (env -i + a login environment): a COMPILER_PATH entry or `-B` place
    whose tree holds another user's file (or root's link to it), a relative `-B`, a `-B`
    prefix of names, any GCC_EXEC_PREFIX: left out; root's own trees kept."""
    from login_env import kept_by_guard as after

    tmp_path.chmod(0o755)
    theirs = gcc_dir(tmp_path / "t", NOBODY, link=True) if _mk(tmp_path / "t") else None
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "as").symlink_to("/usr/bin/as")
    out = {
        "COMPILER_PATH": f"{mine}:{theirs}",
        "CFLAGS": f"-O2 -B{theirs}",
        "LDFLAGS": f"-B {theirs}/",
        "NVCC_APPEND_FLAGS": f"-Xcompiler=-B{theirs},-O2",
        "CC": f"gcc -B {theirs}",
        "CXX": "g++ -B tools/",
        "CXXFLAGS": f"-B{mine}/x-",
        "GCC_EXEC_PREFIX": f"{mine}/",
    }
    assert after(**out) == {}
    kept = {
        "COMPILER_PATH": f"{mine}:/usr/local/nothing",
        "CFLAGS": f"-O2 -B{mine}",
        "LDFLAGS": f"-B {mine}/ -L{mine}",
        "CC": f"gcc -B {mine}/",
    }
    assert after(**kept) == kept


def _mk(d: Path) -> bool:
    d.mkdir(mode=0o755)
    return True


# attack 2: the step's PATH. A private mount namespace puts the test's root-owned dir at
# /usr/local/bin (the system PATH's first dir holding programs) for this process only
_NS_APPLY = textwrap.dedent(
    """
    import sys
    sys.path[:0] = sys.argv[1].split(":")
    from pathlib import Path
    from local_apply import apply_locally
    from test_gcc_prefix_files import _stub_step
    from remedy.model import Facts
    area = Path(sys.argv[2])
    prefix = area / "cuda"
    facts = Facts(host="scratch", toolkits=[{"prefix": str(prefix), "kind": "system"}])
    try:
        r = apply_locally(area, facts, [_stub_step(prefix)])
        print("OUTCOME", r.outcome)
    except Exception as e:
        print("REFUSED", type(e).__name__, e)
    """
)


def _stub_with_path_dir(area: Path, owner: int, *, link: bool) -> tuple[str, str | None]:
    """The link-layout stub applied by `remedy run --local`'s runner with /usr/local/bin
    (root's, 755) holding `as` (`owner`'s file, or root's link to it) that appends
    `as uid $(id -u)` to the canary, then runs the real one; (stdout, canary)."""
    needs_private_mounts()
    (area / "cuda" / "lib").mkdir(parents=True)
    bindir = as_canary_dir(area, owner, link=link)
    canary = area / "canary"
    r = python_under_usr_local_bin(bindir, _NS_APPLY, str(area))
    assert "OUTCOME" in r.stdout or "REFUSED" in r.stdout, r.stdout + r.stderr
    return r.stdout, (canary.read_text() if canary.exists() else None)


@needs_root
@pytest.mark.parametrize("link", [False, True], ids=["file", "link"])
def test_an_as_another_user_owns_on_a_steps_path_is_not_run(area: Path, link: bool):
    out, ran = _stub_with_path_dir(area, NOBODY, link=link)
    assert ran is None, f"root's step ran uid 65534's `as` from /usr/local/bin: {ran}"
    assert "REFUSED" in out and "as on PATH is" in out and "uid 65534" in out, out


@needs_root
def test_control_roots_own_as_on_a_steps_path_runs(area: Path):
    out, ran = _stub_with_path_dir(area, 0, link=False)
    assert "OUTCOME" in out and "OUTCOME failed" not in out, out
    assert ran and "as uid 0" in ran, f"root's own `as` did not run: {ran}"


@needs_root
def test_a_local_cc_naming_a_gcc_directory_is_judged_by_what_it_holds(tmp_path: Path):
    """The local scrub (run --local) judges `CC="gcc -B DIR"` as CFLAGS' `-B`: by the tree."""
    from remedy.childenv import _CONFIG_SEEN, own_config_env

    _CONFIG_SEEN.clear()
    tmp_path.chmod(0o755)
    theirs = gcc_dir(tmp_path, NOBODY, link=True)
    mine = tmp_path / "mine"
    mine.mkdir()
    assert own_config_env({b"CC": f"gcc -B {theirs}".encode()}) == {b"CC": None}
    assert own_config_env({b"CXX": f"g++ -B {mine}/".encode()}) == {}
