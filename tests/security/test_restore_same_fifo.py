"""A rollback's "is it already the captured file?" check never blocks on a FIFO (redteam-9's
open item: restore's ``_same`` opened the destination by name after an lstat).

The attack, for real: the venv owner swaps a FIFO in for a checkpointed file between the
agent's lstat (a plain file of the captured size and mode) and its open. ``open(name)`` of a
FIFO with no writer blocks forever, so the rollback hung; with a link, it read through the
link. The check must open without following links and without blocking, and compare the
open file with the one it looked at."""

from __future__ import annotations

import io
import os
import stat
import subprocess
import sys
import tarfile
import textwrap
from pathlib import Path

from remedy.executor import agent as agent_mod

AGENT = agent_mod.__file__

# the agent as on a host; the owner's swap is hooked into its lstat of the destination
SCRIPT = textwrap.dedent(
    """
    import importlib.util, io, os, sys, tarfile
    agent_path, dest, how, other = sys.argv[1:5]
    spec = importlib.util.spec_from_file_location("agent", agent_path)
    agent = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(agent)
    data = open(dest, "rb").read()
    st0 = os.lstat(dest)
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tf:
        m = tarfile.TarInfo("x")
        m.size, m.mode, m.uid, m.gid = len(data), st0.st_mode & 0o7777, st0.st_uid, st0.st_gid
        tf.addfile(m, io.BytesIO(data))
    buf.seek(0)
    tf = tarfile.open(fileobj=buf, mode="r")
    m = tf.getmember("x")
    real_lstat = os.lstat
    def swapped(p, *a, **k):
        st = real_lstat(p, *a, **k)
        if os.fspath(p) == dest:
            os.unlink(dest)
            if how == "fifo":
                os.mkfifo(dest, st.st_mode & 0o777)
            else:
                os.symlink(other, dest)
        return st
    agent.os.lstat = swapped
    print("same" if agent._same(tf, m, dest) else "differs")
    """
)


def _run(tmp_path: Path, how: str, other: Path) -> subprocess.CompletedProcess[str]:
    dest = tmp_path / "libfoo.py"
    dest.write_bytes(b"captured bytes\n")
    os.chmod(dest, 0o644)
    return subprocess.run(
        [sys.executable, "-c", SCRIPT, AGENT, str(dest), how, str(other)],
        capture_output=True,
        text=True,
        timeout=20,
    )


def test_a_fifo_swapped_in_after_the_lstat_does_not_block_the_check(tmp_path: Path) -> None:
    r = _run(tmp_path, "fifo", tmp_path / "unused")
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "differs"
    assert stat.S_ISFIFO(os.lstat(tmp_path / "libfoo.py").st_mode)


def test_a_link_swapped_in_after_the_lstat_is_not_read_through(tmp_path: Path) -> None:
    # a file only root reads, with the captured bytes: read through the link it would count
    # as "already restored" and the rollback would leave the owner's link in place
    secret = tmp_path / "secret"
    secret.write_bytes(b"captured bytes\n")
    os.chmod(secret, 0o644)
    r = _run(tmp_path, "link", secret)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "differs"


def test_the_unswapped_file_is_still_recognised(tmp_path: Path) -> None:
    dest = tmp_path / "f"
    dest.write_bytes(b"abc")
    st0 = os.lstat(dest)
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tf:
        m = tarfile.TarInfo("f")
        m.size, m.mode, m.uid, m.gid = 3, st0.st_mode & 0o7777, st0.st_uid, st0.st_gid
        tf.addfile(m, io.BytesIO(b"abc"))
    buf.seek(0)
    with tarfile.open(fileobj=buf, mode="r") as tf:
        m = tf.getmember("f")
        assert agent_mod._same(tf, m, str(dest))
        dest.write_bytes(b"abd")
        assert not agent_mod._same(tf, m, str(dest))
