"""A long host path written to /etc/environment does not set a second variable.

The attack: uid 65534 makes a toolkit (or venv) whose prefix is ~1 KiB long, the part of the
`CUDA_HOME=...` line from byte 1023 on reading `PATH=/home/nobody/v/...` (a directory named
`PATH=` deep in its tree). pam_env up to 1.3 (Ubuntu 20.04, EL8) reads /etc/environment with
fgets into 1024 bytes and takes the rest of a longer line as a line of its own
(modules/pam_env/pam_env.c, _assemble_line, read at linux-pam 0588831): every SSH session,
root's included, then gets PATH (or LD_PRELOAD, BASH_ENV) from that user. The value has only
characters pam_env_plain allows, so the login-scope fix wrote it. Now a line that does not fit
one 1024-byte read stays out of /etc/environment (the profile.d file still gets it).

The reader below is that pam_env's, for files without backslash continuations (remedy writes
none); the real pam_env of this machine (1.5.2, 8192 bytes) is not the one that splits.
"""

from __future__ import annotations

import io
import subprocess
from pathlib import Path

from remedy.operations import SetEnv

BUF_SIZE = 1024  # pam_env.c <= 1.3
LINE_MAX = BUF_SIZE - 2  # the longest line that, with its newline, is one fgets


def pam_env_13(data: bytes) -> dict[str, str]:
    """The variables pam_env <= 1.3 sets from an env file (_parse_env_file/_assemble_line)."""
    f, env = io.BytesIO(data), {}
    while chunk := f.readline(BUF_SIZE - 1):  # fgets(p, BUF_SIZE, f)
        key = chunk.lstrip(b" \n\t")
        if not key or key.startswith(b"#"):
            continue
        if key.startswith(b"export "):
            key = key[7:]
        key = key.split(b"\n")[0].split(b"#")[0]
        name, eq, value = key.partition(b"=")
        if not eq or not name or not all(c.isalnum() or c == "_" for c in name.decode()):
            continue
        if value[:1] in (b'"', b"'"):
            value = value[1:-1] if value[-1:] == value[:1] else value[1:]
        env[name.decode()] = value.decode()
    return env


def _long_prefix() -> str:
    head = "CUDA_HOME="
    value = "/home/nobody/"
    value += "a" * (BUF_SIZE - 1 - len(head) - len(value) - 1) + "/"
    value += "PATH=/home/nobody/v/lib/python3.11/site-packages/nvidia/cu13"
    assert (head + value)[BUF_SIZE - 1 :].startswith("PATH=")
    return value


def _written(op: SetEnv, tmp: Path) -> bytes:
    env = tmp / "environment"
    env.write_bytes(b"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin\n")
    for cmd in op.commands():
        if "/etc/environment" in cmd:
            cmd = cmd.replace(f"/etc/.environment.remedy-{op.name}.tmp", str(tmp / "env.tmp"))
            subprocess.run(["sh", "-ec", cmd.replace("/etc/environment", str(env))], check=True)
    return env.read_bytes()


def test_a_long_host_path_sets_no_other_variable(tmp_path):
    prefix = _long_prefix()
    op = SetEnv(scope="profile", name="cuda-home", set={"CUDA_HOME": prefix})
    env = pam_env_13(_written(op, tmp_path))
    assert env["PATH"] == "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
    assert set(env) <= {"PATH", "CUDA_HOME"}
    assert "CUDA_HOME" not in env  # not written at all: it would not read back whole
    assert "/etc/environment" not in {t.target for t in op.touches()}
    assert any(prefix in c for c in op.commands())  # the profile.d file still gets it


def test_control_a_line_that_fits_is_written_and_read_back(tmp_path):
    for value in ("/usr/local/cuda-12.8", "/" + "b" * (LINE_MAX - len("CUDA_HOME=/"))):
        op = SetEnv(scope="profile", name="cuda-home", set={"CUDA_HOME": value})
        assert pam_env_13(_written(op, tmp_path))["CUDA_HOME"] == value


def test_the_reader_splits_as_pam_env_does():
    """The model itself: the long line, written as-is, gives the attacker's PATH."""
    prefix = _long_prefix()
    env = pam_env_13(f"CUDA_HOME={prefix}\n".encode())
    assert env["PATH"] == "/home/nobody/v/lib/python3.11/site-packages/nvidia/cu13"
