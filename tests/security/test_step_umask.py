"""What a step creates as root is never writable by other users, whatever umask remedy runs
under (permissions, applying).

The attack, for real: root runs `remedy run --local` from a shell whose umask is 000 (a
container's entrypoint, a CI runner, `umask 0` in a root profile). The env step's own
commands (`printf … > tmp; mv -f tmp /etc/profile.d/zz-remedy-NAME.sh`) and the link-layout
step's (`mkdir -p`, `cc -o` the libcuda stub) create files with 0666/0777 & ~umask: a
profile.d file every login shell, root's included, sources, and a directory inside a
root-owned toolkit, both world-writable. `nobody` then appends a command to the profile.d
file (it would run in root's next login shell) and drops a library into the toolkit. Both
writes must fail. The control: the files are still created, readable by everyone (0644 /
0755), and the profile file says what the plan says.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest
from local_apply import apply_locally

from remedy.model import Facts, Step
from remedy.operations import LinkLayout, SetEnv

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="another user's write needs root")
NOBODY = 65534


@pytest.fixture
def umask_000():
    old = os.umask(0)
    try:
        yield
    finally:
        os.umask(old)


def nobody_can_write(path: Path, base: Path) -> bool:
    """Whether uid 65534 can open `path` (a file) for appending or create a file in it (a
    directory); reached from a handle on `base` (pytest's own directories above it are
    private to root, as a host's /etc is not)."""
    code = (
        "import os, sys\n"
        "os.setgid(65534); os.setuid(65534)\n"
        "fd, rel, isdir = int(sys.argv[1]), sys.argv[2], sys.argv[3] == '1'\n"
        "try:\n"
        "    if isdir:\n"
        "        os.close(os.open(rel + '/planted.so', os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o755, dir_fd=fd))\n"
        "    else:\n"
        "        w = os.open(rel, os.O_WRONLY | os.O_APPEND, dir_fd=fd)\n"
        "        os.write(w, b'echo pwned > /tmp/remedy-umask-canary\\n')\n"
        "except OSError:\n"
        "    sys.exit(1)\n"
    )
    fd = os.open(base, os.O_RDONLY | os.O_DIRECTORY)
    try:
        rel = str(path.relative_to(base))
        argv = ["python3", "-c", code, str(fd), rel, "1" if path.is_dir() else "0"]
        return subprocess.run(argv, pass_fds=(fd,), timeout=30).returncode == 0
    finally:
        os.close(fd)


def test_profile_d_file_a_step_writes_is_not_world_writable(tmp_path, monkeypatch, umask_000):
    tmp_path.chmod(0o755)
    profile_d = tmp_path / "profile.d"
    profile_d.mkdir(mode=0o755)
    target = profile_d / "zz-remedy-cuda-home.sh"
    monkeypatch.setattr(SetEnv, "path", lambda self: str(target))
    # a value pam_env cannot hold: profile.d only (this machine's /etc/environment untouched)
    op = SetEnv(scope="profile", name="cuda-home", set={"CUDA_HOME": "/usr/local/cuda 12"})
    step = Step(action="set-cuda-home", title="CUDA_HOME", operation=op, probe="static")
    report = apply_locally(tmp_path, Facts(host="scratch"), [step])
    assert report.outcome == "applied-not-verified", report  # applied; no consumer verified
    assert target.read_text() == op.text()
    assert not nobody_can_write(target, tmp_path), (
        f"{target} is mode {target.stat().st_mode & 0o7777:o}"
    )
    assert target.stat().st_mode & 0o777 == 0o644


@pytest.mark.skipif(not shutil.which("cc"), reason="cc")
def test_toolkit_dirs_a_step_creates_are_not_world_writable(tmp_path, umask_000):
    tmp_path.chmod(0o755)
    prefix = tmp_path / "cuda"
    (prefix / "lib").mkdir(parents=True, mode=0o755)
    (prefix / "lib").chmod(0o755)
    prefix.chmod(0o755)
    op = LinkLayout(prefix=str(prefix), links=[], stub="lib/stubs/libcuda.so")
    step = Step(action="link-x", title="stub", operation=op, probe="static")
    facts = Facts(host="scratch", toolkits=[{"prefix": str(prefix), "kind": "pip-cu12"}])
    report = apply_locally(tmp_path, facts, [step])
    assert report.outcome == "applied-not-verified", report  # applied; no consumer verified
    stubs = prefix / "lib" / "stubs"
    assert (stubs / "libcuda.so").exists()
    assert not nobody_can_write(stubs, tmp_path), (
        f"{stubs} is mode {stubs.stat().st_mode & 0o7777:o}"
    )
    assert not nobody_can_write(stubs / "libcuda.so", tmp_path)
    assert stubs.stat().st_mode & 0o777 == 0o755
