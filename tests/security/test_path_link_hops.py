"""A link on the way to a program a step or probe runs by name (redteam-28).

1. `trusted` judges the real path, and SH_PATH_ENTRIES judged each PATH entry's final target:
   root's /usr/local/bin/ninja -> /srv/shared/ninja -> /usr/bin/ninja, where the middle link
   sits in a directory uid 65534 owns (or a group-writable one, or is theirs in a sticky
   one), passed: every real path was root's. uid 65534 then re-points its link (here inside
   the window between the check and the build, as 65534 with setpriv: a race the attacker
   wins at leisure, since the check runs before every plan) and root's pip-install build ran
   its `ninja` (canary `0`). Now every hop is judged (trust.links_trusted walks a path one
   name at a time, following each link; SH_PATH_ENTRIES' links_hops_trusted does it for
   every link of every PATH directory) and the plan is refused. Control: the same chain
   through root's own directory runs root's ninja.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest
from local_apply import needs_private_mounts, pip_pin_under_usr_local_bin
from test_inherited_compiler_env import _sdist_links

NOBODY = 65534
needs_root = pytest.mark.skipif(os.geteuid() != 0, reason="chown to another user needs root")

# the build runs `ninja --version`, as torch's BuildExtension does; just before, uid 65534
# re-points its link in the chain (the attacker's move after remedy's check)
REPOINT_SETUP = """\
import os, subprocess
from setuptools import setup
from setuptools.command.build_py import build_py


class Build(build_py):
    def run(self):
        subprocess.run(["setpriv", "--reuid", "{uid}", "--regid", "{uid}", "--clear-groups",
                        "ln", "-sfn", "{evil}", "{hop}"], check=False)
        subprocess.check_call(["ninja", "--version"], stdout=subprocess.DEVNULL)
        super().run()


setup(name="nvidia-cuda-cccl", version="13.0.85", py_modules=["cccl_tool"],
      cmdclass={{"build_py": Build}})
"""


def _chain(area: Path, outer: Path, hop_owner: int) -> tuple[Path, Path, Path]:
    """area/bin/ninja (root's link, root's dir) -> outer/shared/ninja (a link in a directory
    `hop_owner` owns; outer is a 755 dir uid 65534 can reach, as /srv is) -> /usr/bin/ninja;
    outer/svc/ninja: uid 65534's program writing its uid to area/canary.
    (bin dir, the middle link, the evil program)"""
    bindir, shared, svc = area / "bin", outer / "shared", outer / "svc"
    for d in (bindir, shared, svc):
        d.mkdir(mode=0o755)
    evil = svc / "ninja"
    evil.write_text(f'#!/bin/sh\nid -u >> {area / "canary"}\nexec /usr/bin/ninja "$@"\n')
    evil.chmod(0o755)
    os.chown(evil, NOBODY, NOBODY)
    os.chown(svc, NOBODY, NOBODY)
    hop = shared / "ninja"
    hop.symlink_to("/usr/bin/ninja")
    os.lchown(hop, hop_owner, hop_owner)
    os.chown(shared, hop_owner, hop_owner)
    (bindir / "ninja").symlink_to(hop)
    return bindir, hop, evil


def _build(area: Path, hop_owner: int) -> tuple[str, str | None]:
    needs_private_mounts()
    for tool in ("/usr/bin/ninja", "/usr/bin/setpriv"):
        if not os.path.exists(tool):
            pytest.skip(f"no {tool} here")
    area.chmod(0o755)
    outer = Path(tempfile.mkdtemp(prefix="remedy-rt28-", dir="/tmp"))
    try:
        outer.chmod(0o755)
        return _build_in(area, outer, hop_owner)
    finally:
        shutil.rmtree(outer, ignore_errors=True)


def _build_in(area: Path, outer: Path, hop_owner: int) -> tuple[str, str | None]:
    bindir, hop, evil = _chain(area, outer, hop_owner)
    setup = REPOINT_SETUP.format(uid=hop_owner, evil=evil, hop=hop)
    links = _sdist_links(area, {"setup.py": setup, "cccl_tool.py": ""})
    venv = area / "opt" / "venv"
    subprocess.run(["/usr/bin/python3", "-m", "venv", str(venv)], check=True)
    return pip_pin_under_usr_local_bin(area, bindir, links)


@needs_root
def test_a_link_another_user_can_repoint_on_the_way_to_a_path_program_is_refused(
    tmp_path: Path,
):
    out, ran = _build(tmp_path, NOBODY)
    assert ran is None, f"root's build ran uid 65534's ninja through its re-pointed link: {ran}"
    assert "REFUSED" in out and "shared/ninja" in out and "65534" in out, out


@needs_root
def test_control_the_same_chain_through_roots_own_directory_runs(tmp_path: Path):
    out, ran = _build(tmp_path, 0)
    assert "OUTCOME" in out and "OUTCOME failed" not in out, out
    # root itself re-pointed its own link to uid 65534's program: root's choice, it runs
    assert ran and set(ran.split()) == {"0"}, ran


# what is judged, without a build
def _on_path(d: Path, names: list[str] | None = None) -> str | None:
    import asyncio

    from remedy.transport import LocalTransport
    from remedy.trust import untrusted_on_path

    t = LocalTransport(host="scratch")
    return asyncio.run(untrusted_on_path(t, names or [], str(d), every_entry=names is None))


def _dir(p: Path, owner: int = 0, mode: int = 0o755) -> Path:
    p.mkdir(mode=mode)
    p.chmod(mode)
    os.chown(p, owner, owner)
    return p


@needs_root
@pytest.mark.parametrize("by_name", [False, True], ids=["every-entry", "by-name"])
def test_which_hops_are_judged(tmp_path: Path, by_name: bool):
    """Each form of a hop another user can change, on the way to root's own /usr/bin/ninja:
    refused (every entry of the PATH dir, and the name looked up alone); root's own: kept."""
    tmp_path.chmod(0o755)
    names = ["ninja"] if by_name else None
    forms = {
        # the middle link in a directory uid 65534 owns
        "their-dir": lambda a: _dir(a / "s", NOBODY) / "ninja",
        # in a group-writable directory root owns
        "group-writable": lambda a: _dir(a / "s", 0, 0o775) / "ninja",
        # uid 65534's link in a root sticky directory (theirs to replace)
        "sticky-theirs": lambda a: _dir(a / "s", 0, 0o1777) / "ninja",
        # a directory part: a/d is their link to root's directory holding root's link
        "dir-part": lambda a: a / "d" / "ninja",
    }
    for form, hop_at in forms.items():
        area = _dir(tmp_path / form)
        bindir = _dir(area / "bin")
        hop = hop_at(area)
        if form == "dir-part":
            real = _dir(area / "real")
            (real / "ninja").symlink_to("/usr/bin/ninja")
            theirs = _dir(area / "t", 0, 0o1777)
            (theirs / "d").symlink_to(real)
            os.lchown(theirs / "d", NOBODY, NOBODY)
            (area / "d").symlink_to(theirs / "d")
        else:
            hop.symlink_to("/usr/bin/ninja")
            if form == "sticky-theirs":
                os.lchown(hop, NOBODY, NOBODY)
        (bindir / "ninja").symlink_to(hop)
        why = _on_path(bindir, names)
        assert why and why.startswith("not executed:"), (form, why)
    area = _dir(tmp_path / "mine")
    bindir = _dir(area / "bin")
    mine = _dir(area / "s")
    (mine / "ninja").symlink_to("/usr/bin/ninja")
    (bindir / "ninja").symlink_to("../s/ninja")
    (bindir / "n2").symlink_to(area / "s" / ".." / "s" / "ninja")
    sticky = _dir(area / "st", 0, 0o1777)
    (sticky / "ninja").symlink_to("/usr/bin/ninja")  # root's own link in a sticky dir
    (bindir / "n3").symlink_to(sticky / "ninja")
    assert _on_path(bindir, names) is None
    # a loop runs nothing, but is not followed forever
    (bindir / "loop").symlink_to(bindir / "loop2")
    (bindir / "loop2").symlink_to(bindir / "loop")
    why = _on_path(bindir)
    assert why is None or "loop" in why, why


@needs_root
def test_links_trusted_walks_each_hop(tmp_path: Path):
    """links_trusted itself (the state dir, a write dir, a login value, a python): a chain
    whose middle link another user owns is refused though its real path is root's."""
    tmp_path.chmod(0o755)
    theirs = _dir(tmp_path / "t", 0, 0o1777)
    target = _dir(tmp_path / "real")
    (theirs / "mid").symlink_to(target)
    os.lchown(theirs / "mid", NOBODY, NOBODY)
    (tmp_path / "top").symlink_to(theirs / "mid")
    from remedy.trust import SH_LINKS, SH_TRUST

    def judge(p: Path) -> subprocess.CompletedProcess[str]:
        return subprocess.run(["sh", "-c", SH_TRUST + SH_LINKS + 'links_trusted "$1" || '
                               '{ echo "$WHY"; exit 3; }', "sh", str(p)],
                              capture_output=True, text=True)  # fmt: skip

    r = judge(tmp_path / "top" / "x")
    assert r.returncode == 3 and "mid is a link owned by uid 65534" in r.stdout, r.stdout
    os.lchown(theirs / "mid", 0, 0)
    assert judge(tmp_path / "top" / "x").returncode == 0
    assert judge(tmp_path / "top" / ".." / "real").returncode == 0
