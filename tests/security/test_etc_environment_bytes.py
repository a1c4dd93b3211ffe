"""The login scope's /etc/environment rewrite keeps every line it does not own, byte for byte.

The attack (or accident): /etc/environment holds a NUL byte or a line in Latin-1 (a comment
with an umlaut). The rewrite filtered the old file with `grep -Ev`, which calls such a file
binary and prints nothing for a NUL (and drops the non-UTF-8 line in a UTF-8 locale); `|| true`
then let the rename put a file holding only remedy's line in place: PATH, proxies, LANG, every
other variable of every SSH session gone. A grep that cannot read the file (exit 2) was also
swallowed by `|| true`, with the same result. Now grep runs with `-a` in the C locale and only
its "no line selected" status (1) is accepted; any other failure stops before the rename.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest

from remedy.operations import SetEnv

CU = "/usr/local/cuda-12.8"


def _on_copy(op: SetEnv, tmp: Path, data: bytes) -> subprocess.CompletedProcess[bytes]:
    """Run the op's /etc/environment command against tmp/environment (a copy)."""
    env = tmp / "environment"
    env.write_bytes(data)
    cmd = op.commands()[-1]
    cmd = cmd.replace(f"/etc/.environment.remedy-{op.name}.tmp", str(tmp / "env.tmp"))
    cmd = cmd.replace("/etc/environment", str(env))
    return subprocess.run(
        ["sh", "-c", cmd], capture_output=True, env={**os.environ, "LC_ALL": "C.UTF-8"}
    )


@pytest.mark.parametrize(
    "odd",
    [b"BLOB=a\x00b\n", b"# Gr\xfc\xdfe aus M\xfcnchen\n", b"X=\xff\xfe\n"],
    ids=["nul", "latin1-comment", "non-utf8-value"],
)
def test_lines_remedy_does_not_own_survive(tmp_path, odd):
    before = b"PATH=/usr/local/sbin:/usr/bin:/bin\n" + odd + b"CUDA_HOME=/stale\nLANG=C.UTF-8\n"
    op = SetEnv(scope="profile", name="cuda-home", set={"CUDA_HOME": CU})
    r = _on_copy(op, tmp_path, before)
    assert r.returncode == 0, r.stderr
    after = (tmp_path / "environment").read_bytes()
    assert after == (
        b"PATH=/usr/local/sbin:/usr/bin:/bin\n"
        + odd
        + b"LANG=C.UTF-8\n"
        + f"CUDA_HOME={CU}\n".encode()
    )


@pytest.mark.skipif(
    os.geteuid() != 0 or shutil.which("setpriv") is None,
    reason="a grep that cannot read the file needs another user (root reads everything)",
)
def test_a_file_grep_cannot_read_is_not_replaced():
    """A file the rewrite cannot read (now `cp -p` fails first; before, grep's exit 2 was
    swallowed) is not replaced: run as nobody in a dir it may write."""
    d = Path(tempfile.mkdtemp(prefix="rt5-env-", dir="/tmp"))  # pytest's tmp is root-only
    try:
        d.chmod(0o777)
        before = b"PATH=/usr/bin:/bin\nHTTPS_PROXY=http://proxy:3128\n"
        op = SetEnv(scope="profile", name="cuda-home", set={"CUDA_HOME": CU})
        env = d / "environment"
        env.write_bytes(before)
        os.chown(env, 65534, 65534)
        env.chmod(0o200)  # nobody may write the tmp and rename, not read the file
        r = _on_copy_keep(op, d, 65534)
        assert b"Permission denied" in r.stderr  # the read failed, not the shell
        assert r.returncode != 0
        env.chmod(0o644)
        assert env.read_bytes() == before
    finally:
        shutil.rmtree(d)


def _on_copy_keep(op: SetEnv, tmp: Path, user: int) -> subprocess.CompletedProcess[bytes]:
    env = tmp / "environment"
    cmd = op.commands()[-1]
    cmd = cmd.replace(f"/etc/.environment.remedy-{op.name}.tmp", str(tmp / "env.tmp"))
    cmd = cmd.replace("/etc/environment", str(env))
    argv = ["setpriv", f"--reuid={user}", f"--regid={user}", "--clear-groups", "sh", "-c", cmd]
    return subprocess.run(argv, capture_output=True)
