"""A step's compiler never keeps its intermediate files in a TMPDIR another user owns.

The attack, for real: the environment `remedy run --local` inherited (a CI runner's, a batch
job's; su and sudo drop TMPDIR, root's own profile or pam_env does not) names a TMPDIR uid
65534 owns. The link-layout step's `cc` (root) creates `ccXXXXXX.s` there (O_EXCL), then starts
cc1, which opens that name again to write the assembly (O_TRUNC, following a link). Right after
gcc created the name (the test holds gcc's open with a fanotify permission event, where a
watcher of its own directory usually wins unaided), uid 65534 (setpriv) renames a link to a
root-owned file (a stand-in for /etc/shadow) over it: root's cc1 wrote its assembly into that
file. Now a TMPDIR (TEMP, TMP) another user can change is left out of the environment of every
command remedy runs locally (`remedy.childenv`): gcc and pip use /tmp, where only an entry's
owner may rename it. Control: root's own TMPDIR is used (the same swap, by root, lands).
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import re
import select
import shutil
import struct
import subprocess
import tempfile
import threading
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

pytestmark = [
    pytest.mark.skipif(os.geteuid() != 0, reason="a TMPDIR another user owns"),
    pytest.mark.skipif(not shutil.which("cc") or not shutil.which("setpriv"), reason="no cc"),
]
NOBODY = 65534
VICTIM = "root's file\n"
_EVENT = struct.Struct("IBBHQii")  # struct fanotify_event_metadata
_FAN_CLASS_CONTENT, _FAN_OPEN_PERM, _FAN_ON_CHILD, _FAN_ALLOW = 0x4, 0x10000, 0x08000000, 1


@contextlib.contextmanager
def _held_opens(d: Path, on_new_asm) -> Iterator[None]:
    """Every open of a file in `d` waits (fanotify) until on_new_asm(path) has run for each
    first open of a `cc*.s` name there (gcc's O_EXCL create): the moment a watcher races for."""
    libc = ctypes.CDLL(None, use_errno=True)
    libc.fanotify_mark.argtypes = [ctypes.c_int, ctypes.c_uint, ctypes.c_uint64, ctypes.c_int,
                                   ctypes.c_char_p]  # fmt: skip
    fan = libc.fanotify_init(_FAN_CLASS_CONTENT, os.O_RDONLY)
    if fan < 0 or libc.fanotify_mark(fan, 1, _FAN_OPEN_PERM | _FAN_ON_CHILD, -100,
                                     os.fsencode(d)) < 0:  # fmt: skip
        pytest.skip(f"no fanotify here (errno {ctypes.get_errno()})")
    stop, seen = threading.Event(), set()

    def serve() -> None:
        while not stop.is_set():
            if not select.select([fan], [], [], 0.1)[0]:
                continue
            buf = os.read(fan, 4096)
            for i in range(0, len(buf), _EVENT.size):
                _len, _v, _r, _ml, _mask, fd, _pid = _EVENT.unpack_from(buf, i)
                try:
                    path = os.readlink(f"/proc/self/fd/{fd}")
                    name = os.path.basename(path)
                    if re.fullmatch(r"cc\w{6}\.s", name) and name not in seen:
                        seen.add(name)
                        on_new_asm(path)
                finally:
                    os.write(fan, struct.pack("iI", fd, _FAN_ALLOW))
                    os.close(fd)

    t = threading.Thread(target=serve, daemon=True)
    t.start()
    try:
        yield
    finally:
        stop.set()
        t.join(5)
        os.close(fan)


def _victim_tmpdir_and_swap(
    tmp_path: Path, owner: int, prefix: str
) -> tuple[Path, Path, Callable[[str], None]]:
    """Root's 0600 file, a TMPDIR in /tmp that `owner` owns (uid 65534 must reach it; the
    test's own tree is root's 0700), and the owner's move: a link to root's file renamed over
    a name the compiler has just created."""
    tmp_path.chmod(0o755)
    victim = tmp_path / "shadow"
    victim.write_text(VICTIM)
    victim.chmod(0o600)
    tmpdir = Path(tempfile.mkdtemp(prefix=prefix, dir="/tmp"))
    os.chown(tmpdir, owner, owner)
    who = [f"--reuid={owner}", f"--regid={owner}", "--clear-groups"]

    def swap(path: str) -> None:
        subprocess.run(["setpriv", *who, "sh", "-c", 'ln -s -- "$1" "$2.new" && mv -f -- '
                        '"$2.new" "$2"', "sh", str(victim), path], check=True)  # fmt: skip

    return victim, tmpdir, swap


def _run(tmp_path: Path, monkeypatch, owner: int) -> Path:
    from local_apply import apply_locally
    from test_inherited_config_env import _stub_step

    from remedy.model import Facts

    victim, tmpdir, swap = _victim_tmpdir_and_swap(tmp_path, owner, "remedy-jobtmp-")
    prefix = tmp_path / "cuda"
    (prefix / "lib").mkdir(parents=True)

    monkeypatch.setenv("TMPDIR", str(tmpdir))  # this process is started: its children
    facts = Facts(host="scratch", toolkits=[{"prefix": str(prefix), "kind": "system"}])
    try:
        with _held_opens(tmpdir, swap), contextlib.suppress(Exception):
            apply_locally(tmp_path, facts, [_stub_step(prefix)])  # what was written counts
    finally:
        shutil.rmtree(tmpdir, ignore_errors=True)
    return victim


def test_a_tmpdir_another_user_owns_gets_no_compiler_file_of_roots(tmp_path: Path, monkeypatch):
    victim = _run(tmp_path, monkeypatch, NOBODY)
    assert victim.read_text() == VICTIM, (
        "root's cc1 wrote through uid 65534's link into root's file"
    )


def test_control_roots_own_tmpdir_is_used(tmp_path: Path, monkeypatch):
    victim = _run(tmp_path, monkeypatch, 0)
    assert victim.read_text() != VICTIM, "root's own TMPDIR was not used by the step's cc"


@pytest.mark.parametrize("owner", [NOBODY, 0], ids=["nobody", "control-root"])
def test_a_probes_tmpdir_another_user_owns_gets_no_compiler_file(tmp_path: Path, owner: int):
    """The workload's environment (a unit's EnvironmentFile=, the service user's) names a
    TMPDIR uid 65534 owns: root's `c++` under link-probe kept its `ccXXXXXX.s` there, and the
    same swap made root's cc1 write into root's file. Now the probe is skipped, named;
    control: root's own TMPDIR is used (the swap, by root, lands)."""
    import asyncio

    from test_exec_trust import fake_prefix

    from remedy.model import Facts, Gpu
    from remedy.probes import run_probe
    from remedy.transport.local import LocalTransport

    victim, tmpdir, swap = _victim_tmpdir_and_swap(tmp_path, owner, "remedy-svctmp-")
    prefix = tmp_path / "cuda-evil"
    fake_prefix(tmp_path, tmp_path / "canary-nvcc")

    env = {"PATH": "/usr/bin:/bin", "TMPDIR": str(tmpdir)}
    facts = Facts(gpus=[Gpu(name="g", compute_cap="12.0")], shell_env=env)
    try:
        with _held_opens(tmpdir, swap):
            res = asyncio.run(run_probe("link-probe", LocalTransport("local"), facts,
                                        params={"prefix": str(prefix)}, timeout=60))  # fmt: skip
    finally:
        shutil.rmtree(tmpdir, ignore_errors=True)
    if owner == NOBODY:
        assert victim.read_text() == VICTIM, "root's cc1 wrote through uid 65534's link"
        assert res.skipped and res.skipped.startswith(f"not executed: TMPDIR holds {tmpdir}")
    else:
        assert victim.read_text() != VICTIM, "root's own TMPDIR was not the compiler's"
