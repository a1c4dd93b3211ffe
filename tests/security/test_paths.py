"""Paths remedy is given to write or read: never written through a link another user could
have planted, never a hang on a FIFO nobody writes to.

The attacks, for real (root makes a link owned by uid 65534 in a sticky, world-writable
directory, as another user of /tmp could): `--out` named at a link to a FIFO (standing in for
`/dev/sda`: a special file is written in place, and was written through the link); a link to a
regular file (replaced, its target untouched); a saved plan, facts file or inventory that is a
FIFO nobody writes to, or whose writer stalls (root's cron job hung for ever).
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from remedy import fileread
from remedy.errors import InputError

REPO = Path(__file__).resolve().parents[2]
needs_root = pytest.mark.skipif(os.geteuid() != 0, reason="a link owned by another user")


def remedy(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "remedy", *args],
        capture_output=True, text=True, timeout=120, cwd=REPO,
    )  # fmt: skip


def _reader(fifo: Path) -> int:
    """Open the FIFO for reading (so a writer does not block) and count what reached it."""
    fd = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)
    return fd


def _got(fd: int) -> bytes:
    try:
        return os.read(fd, 1 << 20)
    except BlockingIOError:
        return b""
    finally:
        os.close(fd)


@needs_root
def test_out_through_a_planted_link_to_a_special_file_is_refused(tmp_path: Path):
    tmp_path.chmod(0o755)
    victim = tmp_path / "disk"  # a FIFO: a special file, written in place like a device
    os.mkfifo(victim)
    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o1777)
    link = shared / "plan.json"
    link.symlink_to(victim)
    os.chown(link, 65534, 65534, follow_symlinks=False)
    fd = _reader(victim)
    r = remedy("plan", "--example", "seed-sm120-pip-cu13", "--out", str(link))
    got = _got(fd)
    assert r.returncode == 2, r.stderr
    assert "is a link (owner uid 65534)" in r.stderr and "nothing was written" in r.stderr
    assert "Traceback" not in r.stderr
    assert got == b"", "the plan was written through the planted link"
    assert link.is_symlink()  # left as it was


@needs_root
def test_control_a_root_owned_link_in_a_private_dir_is_written_through(tmp_path: Path):
    """Like /dev/stdout: root's link in a directory only root can change is followed."""
    tmp_path.chmod(0o755)
    target = tmp_path / "pipe"
    os.mkfifo(target)
    link = tmp_path / "out.json"
    link.symlink_to(target)
    fd = _reader(target)
    r = remedy("plan", "--example", "seed-sm120-pip-cu13", "--out", str(link))
    got = _got(fd)
    assert r.returncode == 0, r.stderr
    assert got.startswith(b"{")


@needs_root
def test_a_planted_link_to_a_regular_file_is_replaced_not_written_through(tmp_path: Path):
    tmp_path.chmod(0o755)
    passwd = tmp_path / "passwd"
    passwd.write_text("root:x:0:0::/root:/bin/sh\n")
    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o1777)
    link = shared / "plan.json"
    link.symlink_to(passwd)
    os.chown(link, 65534, 65534, follow_symlinks=False)
    r = remedy("plan", "--example", "seed-sm120-pip-cu13", "--out", str(link))
    assert r.returncode == 0, r.stderr
    assert passwd.read_text() == "root:x:0:0::/root:/bin/sh\n"
    assert not link.is_symlink() and link.read_text().startswith("{")


@pytest.mark.parametrize("stall", [False, True], ids=["nobody-writes", "writer-stalls"])
def test_a_plan_facts_or_inventory_fifo_is_a_clear_error_not_a_hang(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, stall: bool
):
    from remedy.cli import _read_plan_file
    from remedy.fleet.inventory import load_inventory
    from remedy.inputs import load_facts_file

    monkeypatch.setattr(fileread, "FIFO_WAIT_S", 1)
    for read in (_read_plan_file, load_facts_file, load_inventory):
        fifo = tmp_path / f"{read.__name__}.fifo"
        os.mkfifo(fifo)
        writer = None
        if stall:  # writes a first line, then holds the FIFO open and says nothing more

            def write(fifo: Path = fifo) -> None:
                with open(fifo, "wb", buffering=0) as w:
                    w.write(b'{"host": ')
                    time.sleep(4)

            writer = threading.Thread(target=write, daemon=True)
            writer.start()
        t0 = time.monotonic()
        with pytest.raises(InputError, match="FIFO or pipe whose writer") as ei:
            read(fifo)
        assert time.monotonic() - t0 < 3.5, read
        assert str(fifo) in str(ei.value) or str(fifo) in str(getattr(ei.value, "file", ""))
        if writer:
            writer.join()


def test_a_pipe_with_a_writer_is_still_read(tmp_path: Path):
    """`--facts <(cmd)` and `--plan <(cmd)`: a pipe that is written and closed is read."""
    r = subprocess.run(
        ["bash", "-c", f'{sys.executable} -m remedy diagnose --facts <(cat "$1") --json', "b",
         str(REPO / "src/remedy/examples/seed-sm120-pip-cu13/facts.yaml")],
        capture_output=True, text=True, timeout=120, cwd=REPO,
    )  # fmt: skip
    assert r.returncode in (0, 1), r.stderr
    assert '"findings"' in r.stdout


@needs_root
def test_run_log_through_a_planted_link_is_refused(tmp_path: Path):
    """`run --log /tmp/run.log` appends lines carrying host text (step titles, a pip error
    with `;`): through a link to a file a shell runs at login, that is root code execution."""
    tmp_path.chmod(0o755)
    victim = tmp_path / "profile.sh"  # stands in for /etc/profile.d/x.sh
    victim.write_text("# profile\n")
    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o1777)
    link = shared / "run.log"
    link.symlink_to(victim)
    os.chown(link, 65534, 65534, follow_symlinks=False)
    plan = tmp_path / "plan.json"
    assert remedy("plan", "--example", "seed-sm120-pip-cu13", "--out", str(plan)).returncode == 0
    env_state = str(tmp_path / "state")
    r = subprocess.run(
        [sys.executable, "-m", "remedy", "run", "--local", "--plan", str(plan), "--yes",
         "--log", str(link)],
        capture_output=True, text=True, timeout=120, cwd=REPO,
        env={**os.environ, "XDG_STATE_HOME": env_state},
    )  # fmt: skip
    assert r.returncode == 2, r.stderr
    assert "cannot write the log" in r.stderr and "owner uid 65534" in r.stderr
    assert victim.read_text() == "# profile\n", "the run log was appended through the link"
    # control: a log file of its own is appended to
    own = tmp_path / "own.log"
    r = subprocess.run(
        [sys.executable, "-m", "remedy", "run", "--local", "--plan", str(plan), "--yes",
         "--log", str(own)],
        capture_output=True, text=True, timeout=120, cwd=REPO,
        env={**os.environ, "XDG_STATE_HOME": env_state},
    )  # fmt: skip
    assert r.returncode == 5 and "remedy run localhost" in own.read_text()


def test_out_to_a_stdout_link_writes_the_stream_and_keeps_the_link(tmp_path: Path):
    """`--out /dev/stdout > file` replaced /dev/stdout (a link) by a regular file, for the
    whole machine. Reproduced on a private link to /proc/self/fd/1 (the same kind of link)."""
    link = tmp_path / "stdout"
    link.symlink_to("/proc/self/fd/1")
    out = tmp_path / "captured.txt"
    with open(out, "w") as fh:
        r = subprocess.run(
            [sys.executable, "-m", "remedy", "plan", "--example", "seed-sm120-pip-cu13",
             "--out", str(link)],
            stdout=fh, stderr=subprocess.PIPE, text=True, timeout=120, cwd=REPO,
        )  # fmt: skip
    assert r.returncode == 0, r.stderr
    assert link.is_symlink() and os.readlink(link) == "/proc/self/fd/1"
    text = out.read_text()
    assert '"facts_digest"' in text and "remedy plan" in text  # the JSON and the report


def test_log_from_an_endless_stdin_is_spooled_up_to_the_pipe_cap(tmp_path, monkeypatch):
    """`yes | remedy diagnose --log -` wrote stdin to /tmp without end (2.4 GB in 6 s):
    now at most reader.STREAM_CAP, like any pipe."""
    import io

    from remedy.commands import stdin_to_file
    from remedy.evidence import reader

    class Endless(io.RawIOBase):
        """Endless as far as a 3 MiB cap can tell; ends at 16 MiB so that a remedy without
        the cap fails this test instead of filling the disk."""

        left = 16 << 20

        def readable(self) -> bool:
            return True

        def readinto(self, b) -> int:  # type: ignore[no-untyped-def]
            n = min(len(b), self.left)
            b[:n] = b"y" * n
            self.left -= n
            return n

    class Stdin:
        buffer = io.BufferedReader(Endless())

    monkeypatch.setattr(reader, "STREAM_CAP", 3 << 20)
    monkeypatch.setattr(sys, "stdin", Stdin())
    spooled: list[Path] = []
    try:
        p = stdin_to_file(Path("-"), spooled)
        assert p.stat().st_size == 3 << 20
    finally:
        for s in spooled:
            s.unlink()


@needs_root
def test_a_trusted_link_to_a_planted_link_is_not_followed(tmp_path: Path):
    """Root's own link that leads through a link another user planted is that link."""
    from remedy.commands import open_append, write_out

    tmp_path.chmod(0o755)
    victim = tmp_path / "profile.sh"
    victim.write_text("# profile\n")
    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o1777)
    planted = shared / "x"
    planted.symlink_to(victim)
    os.chown(planted, 65534, 65534, follow_symlinks=False)
    fifo = tmp_path / "disk"
    os.mkfifo(fifo)
    planted2 = shared / "y"
    planted2.symlink_to(fifo)
    os.chown(planted2, 65534, 65534, follow_symlinks=False)
    mine = tmp_path / "priv"
    mine.mkdir()
    (mine / "run.log").symlink_to(planted)
    (mine / "plan.json").symlink_to(planted2)
    with pytest.raises(InputError, match=f"leads to {planted}"):
        open_append(mine / "run.log")
    fd = _reader(fifo)
    with pytest.raises(InputError, match=f"leads to {planted2}"):
        write_out(mine / "plan.json", "{}\n")
    assert _got(fd) == b"" and victim.read_text() == "# profile\n"
