"""A step never writes, as root, through a link another user planted on the path as written.

The attack, for real: the facts recorded a pip wheel's toolkit at
`SHARED/venv/nvidia/cuda_runtime`, where `SHARED/venv` is uid 65534's link (in a sticky,
world-writable directory, as in /tmp) to a root-owned tree standing in for /usr/lib. The
write check looked at the *real* path only (root's tree: trusted), so `link-layout`'s
`ln -s` and `cc -shared -o .../libcuda.so` ran as root in the directory the link's owner
chose, and the owner can re-point the link between the check and the step. The canary: the
root-owned tree stays exactly as it was. The control: root's own link in root's private
directory is followed and the layout written.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest
from local_apply import apply_locally

from remedy.errors import Refused
from remedy.model import Facts, Step
from remedy.operations import LinkLayout

pytestmark = pytest.mark.skipif(
    os.geteuid() != 0 or not shutil.which("cc"), reason="links another user owns; cc"
)
NOBODY = 65534


def _root_tree(tmp_path: Path) -> Path:
    """Root's tree (a stand-in for /usr/lib): 0755, one file; the canary is any change."""
    tmp_path.chmod(0o755)
    usr = tmp_path / "usr-lib"
    prefix = usr / "nvidia" / "cuda_runtime"
    (prefix / "lib" / "stubs").mkdir(parents=True)
    (prefix / "lib" / "libcudart.so.12").write_text("")
    return usr


def _listing(root: Path) -> list[str]:
    return sorted(str(p.relative_to(root)) for p in root.rglob("*"))


def _step(prefix: str) -> Step:
    op = LinkLayout(
        prefix=prefix,
        links=[{"path": "lib64", "target": "lib"}],
        stub="lib/stubs/libcuda.so",
    )
    return Step(action="link-x", title="layout", operation=op, probe="static")


def _run(tmp_path: Path, prefix: str) -> str:
    facts = Facts(host="scratch", toolkits=[{"prefix": prefix, "kind": "pip-cu12"}])
    try:
        apply_locally(tmp_path, facts, [_step(prefix)])
    except Refused as e:
        return str(e)
    return ""


def _planted_link(tmp_path: Path, target: Path) -> Path:
    """uid 65534's link to root's tree, in a sticky world-writable dir (as /tmp is)."""
    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o1777)
    link = shared / "venv"
    link.symlink_to(target)
    os.chown(link, NOBODY, NOBODY, follow_symlinks=False)
    return link


def test_a_prefix_reached_through_a_planted_link_is_not_written(tmp_path: Path):
    usr = _root_tree(tmp_path)
    before = _listing(usr)
    link = _planted_link(tmp_path, usr)
    refused = _run(tmp_path, f"{link}/nvidia/cuda_runtime")
    assert _listing(usr) == before, "root wrote through uid 65534's link"
    assert "is a link owned by uid 65534: not followed" in refused, refused


def test_control_roots_own_link_in_roots_dir_is_followed(tmp_path: Path):
    usr = _root_tree(tmp_path)
    private = tmp_path / "private"
    private.mkdir(mode=0o700)
    link = private / "venv"
    link.symlink_to(usr)
    assert _run(tmp_path, f"{link}/nvidia/cuda_runtime") == ""
    prefix = usr / "nvidia" / "cuda_runtime"
    assert (prefix / "lib64").is_symlink() and (prefix / "lib" / "stubs" / "libcuda.so").exists()


def test_the_playbook_check_refuses_the_planted_link(tmp_path: Path):
    from remedy.trust import write_check_argv

    usr = _root_tree(tmp_path)
    link = _planted_link(tmp_path, usr)
    argv = write_check_argv(_step(f"{link}/nvidia/cuda_runtime").operation.writes_under())
    assert argv is not None
    r = subprocess.run(argv, capture_output=True, text=True)
    assert r.returncode == 3 and "owned by uid 65534" in r.stdout, (r.returncode, r.stdout)
