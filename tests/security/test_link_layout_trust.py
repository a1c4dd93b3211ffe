"""A step never writes, as root, into a tree another user can change (class 3/4, applying).

The attack, for real: `link-layout` gives a pip wheel's toolkit (in a service user's venv,
owned by uid 65534 here) its lib64 layout: `ln -s` and `cc -shared -o PREFIX/lib/stubs/
libcuda.so`, run as root. The venv's owner plants `lib/stubs/libcuda.so` as a dangling link
to a file that does not exist yet (a stand-in for /etc/sudoers.d/x): `test -e` says no, and
GNU ld writes its output through the link. The run must be refused before anything changes
and the canary must not appear; the exported playbook checks the same before the step.
The control: the same prefix owned by root is written (the stub appears).
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
    os.geteuid() != 0 or not shutil.which("cc"), reason="a tree another user owns; cc"
)
NOBODY = 65534


def prefix_of(tmp_path: Path, owner: int) -> tuple[Path, Path]:
    tmp_path.chmod(0o755)
    canary = tmp_path / "etc" / "sudoers-x"
    canary.parent.mkdir()
    prefix = tmp_path / "venv" / "nvidia" / "cuda_runtime"
    (prefix / "lib" / "stubs").mkdir(parents=True)
    (prefix / "lib" / "libcudart.so.12").write_text("")
    (prefix / "lib" / "stubs" / "libcuda.so").symlink_to(canary)  # dangling
    for dp, dns, fns in os.walk(tmp_path / "venv"):
        for n in [dp, *(os.path.join(dp, x) for x in dns + fns)]:
            os.chown(n, owner, owner, follow_symlinks=False)
    return prefix, canary


def step(prefix: Path) -> Step:
    op = LinkLayout(
        prefix=str(prefix),
        links=[{"path": "lib64", "target": "lib"},
               {"path": "lib/libcudart.so", "target": "libcudart.so.12"}],
        stub="lib/stubs/libcuda.so",
    )  # fmt: skip
    return Step(action="link-x", title="layout", operation=op, probe="static")


def run(tmp_path: Path, prefix: Path):
    facts = Facts(host="scratch", toolkits=[{"prefix": str(prefix), "kind": "pip-cu12"}])
    return apply_locally(tmp_path, facts, [step(prefix)])


def test_root_does_not_write_into_a_prefix_another_user_owns(tmp_path: Path):
    prefix, canary = prefix_of(tmp_path, NOBODY)
    try:
        run(tmp_path, prefix)
    except Refused as e:
        refused = str(e)
    else:
        refused = ""
    assert not canary.exists(), "root's cc wrote through the planted link"
    assert "a step would write in a directory another user can change" in refused
    assert "owned by nobody (uid 65534)" in refused
    assert not (prefix / "lib64").exists()  # nothing was changed


def test_control_a_prefix_root_owns_is_written(tmp_path: Path):
    prefix, _canary = prefix_of(tmp_path, 0)
    (prefix / "lib" / "stubs" / "libcuda.so").unlink()  # root's own tree: no planted link
    run(tmp_path, prefix)
    assert (prefix / "lib64").is_symlink() and (prefix / "lib" / "stubs" / "libcuda.so").exists()


def test_the_playbook_check_refuses_the_same_tree(tmp_path: Path):
    from remedy.trust import write_check_argv

    prefix, canary = prefix_of(tmp_path, NOBODY)
    argv = write_check_argv(step(prefix).operation.writes_under())
    assert argv is not None
    r = subprocess.run(argv, capture_output=True, text=True)
    assert r.returncode == 3 and "owned by nobody" in r.stdout, (r.returncode, r.stdout)
    for dp, dns, fns in os.walk(tmp_path / "venv"):
        for n in [dp, *(os.path.join(dp, x) for x in dns + fns)]:
            os.chown(n, 0, 0, follow_symlinks=False)
    assert subprocess.run(argv).returncode == 0
    assert not canary.exists()
