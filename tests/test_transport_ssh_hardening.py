"""SSH hardening that test_transport_ssh.py does not cover: agent forwarding stays off even when
the user's ssh_config asks for it and an agent is running, and a port that accepts TCP but never
sends the SSH banner fails within the connect timeout with a clear error."""

from __future__ import annotations

import asyncio
import os
import shutil
import socket
import subprocess
import threading
import time

import pytest
from local_sshd import LocalSshd, sshd_available

from remedy.errors import HostUnreachable
from remedy.transport import SSHTransport

REASON = sshd_available()


def test_silent_listener_fails_within_the_connect_timeout() -> None:
    """A socket that accepts and never answers the banner (a tarpit, a wedged sshd)."""
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(8)
    port = srv.getsockname()[1]
    held: list[socket.socket] = []
    stop = threading.Event()

    def accept() -> None:
        srv.settimeout(0.2)
        while not stop.is_set():
            try:
                held.append(srv.accept()[0])
            except OSError:
                continue

    th = threading.Thread(target=accept, daemon=True)
    th.start()

    async def go() -> tuple[float, str]:
        t = SSHTransport(f"root@127.0.0.1:{port}", connect_timeout=2, known_hosts=[os.devnull])
        start = time.monotonic()
        try:
            with pytest.raises(HostUnreachable) as ei:
                await t.run("true", timeout=30)
        finally:
            await t.close()
        return time.monotonic() - start, str(ei.value)

    try:
        took, msg = asyncio.run(go())
    finally:
        stop.set()
        th.join()
        for c in held:
            c.close()
        srv.close()
    assert took < 4.5, f"took {took:.1f} s with a 2 s connect timeout"
    assert "2 s" in msg or "timed out" in msg or "no SSH connection" in msg, msg


@pytest.mark.skipif(
    REASON is not None or not shutil.which("ssh-agent"), reason=REASON or "no agent"
)
def test_agent_is_never_forwarded_even_when_asked(tmp_path) -> None:
    server = LocalSshd(tmp_path / "sshd")
    server.prepare()
    server.start()
    agent = subprocess.run(
        ["ssh-agent", "-s", "-a", str(tmp_path / "agent.sock")],
        capture_output=True,
        text=True,
        check=True,
    )
    pid = int(agent.stdout.split("SSH_AGENT_PID=")[1].split(";")[0])
    cfg = tmp_path / "ssh_config"
    cfg.write_text("Host *\n  ForwardAgent yes\n\n" + server.ssh_config.read_text())
    old = os.environ.get("SSH_AUTH_SOCK")
    os.environ["SSH_AUTH_SOCK"] = str(tmp_path / "agent.sock")

    async def go() -> bytes:
        t = SSHTransport(server.alias, ssh_config=str(cfg))
        try:
            return (await t.run("echo ${SSH_AUTH_SOCK-unset}", timeout=10)).stdout
        finally:
            await t.close()

    try:
        out = asyncio.run(go())
    finally:
        if old is None:
            os.environ.pop("SSH_AUTH_SOCK", None)
        else:
            os.environ["SSH_AUTH_SOCK"] = old
        os.kill(pid, 15)
        server.stop()
    assert out == b"unset\n", out
