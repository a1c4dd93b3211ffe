"""Class 9: input without bounds is capped or refused with a clear error.

The attacks, for real: a host command that prints for ever (locally and over SSH on a sandbox
host), a log that is a FIFO nobody writes to, a FIFO that never ends, a device, a log that is
a link planted in a directory others can write (pointing at a file the operator must not see
in a report), an inventory range of 10^11 hosts, and a YAML inventory whose nested aliases
expand exponentially ("billion laughs").
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from remedy.errors import LogReadError, OutputTooLarge
from remedy.evidence import reader
from remedy.transport.base import OUTPUT_CAP
from remedy.transport.local import LocalTransport

REPO = Path(__file__).resolve().parents[2]


def remedy(*args: str, timeout: float = 120) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "remedy", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        cwd=REPO,
    )


def test_endless_command_output_is_cut_and_killed():
    t0 = time.monotonic()
    with pytest.raises(OutputTooLarge, match="MiB"):
        asyncio.run(LocalTransport("local").run("yes remedy", timeout=120))
    assert time.monotonic() - t0 < 60


def test_fifo_log_nobody_writes_to_is_refused_not_a_hang(tmp_path: Path, monkeypatch):
    fifo = tmp_path / "log.fifo"
    os.mkfifo(fifo)
    monkeypatch.setattr(reader, "FIFO_WAIT_S", 1)
    t0 = time.monotonic()
    with pytest.raises(LogReadError, match="nobody wrote"):
        reader.open_log(fifo)
    assert time.monotonic() - t0 < 10


def test_endless_fifo_log_is_read_up_to_its_cap(tmp_path: Path, monkeypatch):
    fifo = tmp_path / "endless.fifo"
    os.mkfifo(fifo)
    monkeypatch.setattr(reader, "STREAM_CAP", 1 << 20)
    stop = threading.Event()

    def writer() -> None:
        with open(fifo, "wb", buffering=0) as f:  # nothing left to flush at close
            line = b"ptxas fatal   : Unsupported .version 9.3; current version is '9.2'\n"
            while not stop.is_set():
                try:
                    f.write(line * 100)
                except BrokenPipeError:
                    return

    th = threading.Thread(target=writer, daemon=True)
    th.start()
    f, size, stream = reader.open_log(fifo)
    try:
        total = 0
        while chunk := stream.read(1 << 16):
            total += len(chunk)
        assert size == -1 and total <= (1 << 20) + reader.SNIFF
    finally:
        stop.set()
        f.close()
        th.join(5)


def test_device_log_is_refused():
    r = remedy("diagnose", "--log", "/dev/null")
    assert r.returncode == 2 and "device" in r.stderr


@pytest.mark.skipif(os.geteuid() != 0, reason="a link owned by another user needs root")
def test_log_link_planted_by_another_user_is_refused(tmp_path: Path):
    tmp_path.chmod(0o755)
    secret = tmp_path / "shadow"
    secret.write_text("root:$6$PLANTEDhashMustNotShow:19000:0:99999:7:::\nptxas fatal : x\n")
    logs = tmp_path / "logs"
    logs.mkdir()
    logs.chmod(0o1777)  # like /tmp or a shared log dir
    link = logs / "server.log"
    link.symlink_to(secret)
    os.chown(link, 65534, 65534, follow_symlinks=False)
    r = remedy("diagnose", "--log", str(link))
    assert r.returncode == 2 and "link" in r.stderr, r.stderr
    assert "PLANTED" not in r.stdout + r.stderr


def test_inventory_with_a_huge_range_is_refused(tmp_path: Path):
    inv = tmp_path / "hosts.ini"
    inv.write_text("[gpu]\ngpu[0:99999999999]\n")
    t0 = time.monotonic()
    r = remedy("facts", "--inventory", str(inv))
    assert r.returncode == 2 and "more than 100,000 hosts" in r.stderr
    assert time.monotonic() - t0 < 60


def test_inventory_with_nested_aliases_is_refused(tmp_path: Path):
    lines = ["a0: &a0 [x, x, x, x, x, x, x, x, x, x]"]
    for i in range(1, 12):
        lines.append(f"a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * 10) + "]")
    lines += ["all:", "  hosts:", "    h1:", "  vars:", "    bomb: *a11"]
    inv = tmp_path / "hosts.yaml"
    inv.write_text("\n".join(lines) + "\n")
    t0 = time.monotonic()
    r = remedy("facts", "--inventory", str(inv))
    assert r.returncode == 2 and "aliases expand" in r.stderr, r.stderr
    assert time.monotonic() - t0 < 60


# ---- over SSH, on a sandbox host ----------------------------------------------------------


@pytest.fixture
def host():
    from sandbox_hosts import host_for_test

    yield from host_for_test("healthy", "thu")


async def _endless_over_ssh(h) -> tuple[str, str, str]:
    from remedy.transport import open_transport

    t = open_transport(h.name, ssh_config=h.cfg, connect_timeout=20.0)
    try:
        try:
            await t.run("yes remedy", timeout=300)
            err = ""
        except OutputTooLarge as exc:
            err = str(exc)
        after = (await t.run("pgrep -x yes || echo none", timeout=30)).text()
        try:
            await t.get("/dev/zero")
            get_err = ""
        except OSError as exc:
            get_err = str(exc)
        return err, after, get_err
    finally:
        await t.close()


@pytest.mark.sandbox
def test_endless_output_over_ssh_is_cut_and_the_command_killed(host):
    err, after, get_err = asyncio.run(_endless_over_ssh(host))
    assert f"past {OUTPUT_CAP >> 20} MiB" in err
    assert after.strip() == "none", "the endless command still runs on the host"
    assert "not a regular file" in get_err
