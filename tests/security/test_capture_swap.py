"""A checkpoint never copies a file the agent did not look at (class 4, TOCTOU at capture).

The attack, for real, with remedy's host agent (runs as root): a step's checkpoint covers a
file in a tree the venv owner (`nobody`) can write. The agent lstat()s the file (a plain
file of the owner's), then reads its bytes by name. Between the two, the owner swaps in a
link: the file itself becomes a symlink to a root-only secret, or its directory becomes a
symlink to a directory holding a same-named secret. The checkpoint then held the secret's
bytes under the owner's uid and mode, and the rollback (which the owner provokes by making
the step's probe fail) wrote them back into the owner's file: root's secret, readable by
`nobody`.

The race is made deterministic: the "owner" swaps right after the agent's K-th lstat of the
path, for every K (every window between the agent's looks at it). Whatever K, the checkpoint
must hold no byte of the secret, and the rollback must not put any into the owner's tree.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest

from remedy.executor import agent as agent_mod

AGENT = agent_mod.__file__
NOBODY = 65534
SECRET = b"ROOT-ONLY-SECRET-0123456789abcdef-" * 4
pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="another user's tree needs root")

# the agent run as on a host, with the owner's swap hooked into its K-th lstat of the path
DRIVER = r"""
import json, os, sys, importlib.util
agent_path, target, k, how, secret_dir = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4], sys.argv[5]
spec = importlib.util.spec_from_file_location("agent", agent_path)
agent = importlib.util.module_from_spec(spec); spec.loader.exec_module(agent)
real_lstat, seen = os.lstat, [0]

def swap():
    if how == "file":  # the file itself becomes a link to the secret
        os.unlink(target)
        os.symlink(os.path.join(secret_dir, os.path.basename(target)), target)
        os.lchown(target, 65534, 65534)  # the owner's link, as the owner would make it
    else:  # its directory becomes a link to a directory holding a same-named secret
        d = os.path.dirname(target)
        os.rename(d, d + ".moved")
        os.symlink(secret_dir, d)
        os.lchown(d, 65534, 65534)

def lstat(p, *a, **kw):
    st = real_lstat(p, *a, **kw)
    if os.fspath(p) == target:
        seen[0] += 1
        if seen[0] == k:
            swap()
    return st

os.lstat = lstat
agent.main(["agent"] + sys.argv[6:])
"""


def run_agent(
    *args: str, stdin: dict | None = None, hook: tuple = ()
) -> subprocess.CompletedProcess:
    cmd = [sys.executable, "-c", DRIVER, AGENT, *hook, *args] if hook else [
        sys.executable, AGENT, *args]  # fmt: skip
    return subprocess.run(
        cmd,
        input=json.dumps(stdin) if stdin is not None else None,
        capture_output=True,
        text=True,
        timeout=120,
    )


def undo_swap(target: Path, how: str) -> None:
    """The owner puts a plain file back (the step 'changed' it) before provoking rollback."""
    if how == "file":
        if target.is_symlink():
            target.unlink()
    else:
        d = target.parent
        if d.is_symlink():
            d.unlink()
            Path(str(d) + ".moved").rename(d)
    target.write_bytes(b"changed by the step")
    os.chown(target, NOBODY, NOBODY)


@pytest.mark.parametrize("how", ["file", "dir"])
@pytest.mark.parametrize("k", [1, 2, 3, 4, 5])
def test_capture_never_reads_a_file_swapped_in_after_its_lstat(tmp_path: Path, k: int, how: str):
    tmp_path.chmod(0o755)
    secret_dir = tmp_path / "root-only"
    secret_dir.mkdir(mode=0o700)
    secret = secret_dir / "kernel.py"
    secret.write_bytes(SECRET)
    secret.chmod(0o600)
    venv = tmp_path / "venv"
    pkg = venv / "site" / "pkg"
    pkg.mkdir(parents=True)
    target = pkg / "kernel.py"
    target.write_bytes(b"owner's!")  # shorter than the secret: the copy does not run short
    for p in (venv, venv / "site", pkg, target):
        os.chown(p, NOBODY, NOBODY)
    cp = tmp_path / "state" / "cp"

    r = run_agent("capture", str(cp), stdin={"paths": [str(target)]},
                  hook=(str(target), str(k), how, str(secret_dir)))  # fmt: skip
    assert "Traceback" not in r.stderr, r.stderr
    tar = cp / "files.tar"
    if r.returncode == 0:
        with tarfile.open(tar) as tf:
            for m in tf.getmembers():
                if m.isfile():
                    data = tf.extractfile(m).read()
                    assert SECRET[:8] not in data, f"checkpoint holds the secret (K={k}, {how})"
    else:  # refused: said so, as data, and left no half checkpoint behind
        err = json.loads(r.stdout)["error"]
        assert err.startswith("Refused:") and ("changed" in err or "not followed" in err), err
        assert not tar.exists()
        return

    undo_swap(target, how)
    r = run_agent("restore", str(cp))
    assert "Traceback" not in r.stderr, r.stderr
    for dp, _dns, fns in os.walk(venv):
        for n in fns:
            f = Path(dp, n)
            if not f.is_symlink():
                assert SECRET[:8] not in f.read_bytes(), f"{f} got root's secret (K={k}, {how})"
    assert secret.read_bytes() == SECRET


def test_control_an_unswapped_file_is_captured_and_restored(tmp_path: Path):
    tmp_path.chmod(0o755)
    pkg = tmp_path / "venv" / "pkg"
    pkg.mkdir(parents=True)
    target = pkg / "kernel.py"
    target.write_bytes(b"owner's!")
    os.chown(target, NOBODY, NOBODY)
    cp = tmp_path / "cp"
    r = run_agent("capture", str(cp), stdin={"paths": [str(target)]})
    assert r.returncode == 0, r.stdout + r.stderr
    target.write_bytes(b"changed by the step")
    r = run_agent("restore", str(cp))
    assert r.returncode == 0, r.stdout + r.stderr
    assert target.read_bytes() == b"owner's!"
    assert target.stat().st_uid == NOBODY
