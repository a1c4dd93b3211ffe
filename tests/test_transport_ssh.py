"""SSHTransport against a real OpenSSH server on 127.0.0.1, started by the tests.

Needs /usr/sbin/sshd (apt-get install -y openssh-server) and root; skips with the reason
otherwise. The server runs with Debian's default limits (MaxSessions 10, MaxStartups
10:30:100) so the channel cap is tested against a real refusal.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import signal
import subprocess
import time
from pathlib import Path

import asyncssh
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from local_sshd import LocalSshd, free_port, keygen, sshd_available

from remedy.errors import (
    CommandTimeout,
    ConnectionDropped,
    HostKeyRejected,
    HostUnreachable,
)
from remedy.transport import SSHTransport, open_transport
from remedy.transport.local import LocalTransport

REASON = sshd_available()
if REASON:
    print(f"\nSKIP test_transport_ssh: {REASON}")
pytestmark = pytest.mark.skipif(REASON is not None, reason=REASON or "")


@pytest.fixture(scope="module")
def sshd(tmp_path_factory: pytest.TempPathFactory):
    server = LocalSshd(tmp_path_factory.mktemp("sshd"))
    server.prepare()
    server.start()
    yield server
    server.stop()


def run(coro):
    return asyncio.run(coro)


def transport(sshd: LocalSshd, **kw) -> SSHTransport:
    return SSHTransport(sshd.alias, ssh_config=str(sshd.ssh_config), **kw)


def other_config(sshd: LocalSshd, tmp: Path, known_hosts: str) -> Path:
    """A copy of the server's ssh_config whose UserKnownHostsFile is `known_hosts`."""
    kh = tmp / "kh"
    kh.write_text(known_hosts)
    cfg = tmp / "ssh_config"
    cfg.write_text(sshd.ssh_config.read_text().replace(str(sshd.known_hosts), str(kh)))
    return cfg


def procs_matching(text: str) -> list[str]:
    out = subprocess.run(["ps", "-eo", "pid,args"], capture_output=True, text=True).stdout
    return [ln for ln in out.splitlines() if text in ln and "ps -eo" not in ln]


# ---- basics -----------------------------------------------------------------------------


def test_run_argv_script_env_input(sshd: LocalSshd) -> None:
    async def go():
        t = transport(sshd)
        try:
            r1 = await t.run(["printf", "%s|", "a b", "c'd", "$(e)"], timeout=10)
            r2 = await t.run("echo out; echo err >&2; exit 3", timeout=10)
            r3 = await t.run(
                'cat; printf %s "$X"', timeout=10, input=b"in\x00put", env={"X": "y z"}
            )
            r4 = await t.run("echo ${SSH_AUTH_SOCK-unset}", timeout=10)
            return r1, r2, r3, r4
        finally:
            await t.close()

    r1, r2, r3, r4 = run(go())
    assert (r1.exit_status, r1.stdout) == (0, b"a b|c'd|$(e)|")
    assert (r2.exit_status, r2.stdout, r2.stderr) == (3, b"out\n", b"err\n")
    assert r3.stdout == b"in\x00puty z"
    assert r4.stdout == b"unset\n"  # no agent forwarding
    assert r1.duration_s > 0


def test_ssh_config_alias_is_honoured(sshd: LocalSshd) -> None:
    """HostName/Port/User/IdentityFile/UserKnownHostsFile all come from the config file."""
    t = open_transport(
        sshd.alias,
        local=False,
        ssh_config=str(sshd.ssh_config),
        accept_new=False,
        connect_timeout=5,
    )
    assert isinstance(t, SSHTransport)

    async def go():
        try:
            return await t.run(["id", "-un"], timeout=10)
        finally:
            await t.close()

    assert run(go()).stdout == b"root\n"


def test_aes_gcm_and_no_compression_unless_the_config_says_otherwise(
    sshd: LocalSshd, tmp_path: Path
) -> None:
    """The negotiated cipher is AES-GCM (cheaper than asyncssh's chacha20 default), no
    compression; a Ciphers/Compression line in the user's ssh_config still decides."""
    mine = tmp_path / "ssh_config"
    mine.write_text(
        sshd.ssh_config.read_text().replace(
            f"Host {sshd.alias}\n", f"Host {sshd.alias}\n  Ciphers aes256-ctr\n  Compression yes\n"
        )
    )

    async def go(cfg: Path):
        t = SSHTransport(sshd.alias, ssh_config=str(cfg))
        try:
            conn = await t.connection()
            r = await t.run(["true"], timeout=10)
            assert r.exit_status == 0
            return conn.get_extra_info("send_cipher"), conn.get_extra_info("send_compression")
        finally:
            await t.close()

    assert run(go(sshd.ssh_config)) == ("aes128-gcm@openssh.com", "none")
    assert run(go(mine)) == ("aes256-ctr", "zlib@openssh.com")


def test_put_get_atomic(sshd: LocalSshd, tmp_path: Path) -> None:
    target = tmp_path / "sub dir" / "f'ile"
    target.parent.mkdir()
    data = bytes(range(256)) * 100

    async def go():
        t = transport(sshd)
        try:
            await t.put(str(target), b"old")
            await t.put(str(target), data, mode=0o640)
            got = await t.get(str(target))
            with pytest.raises(FileNotFoundError):
                await t.get(str(tmp_path / "nope"))
            with pytest.raises(FileNotFoundError):
                await t.put(str(tmp_path / "no-dir" / "x"), b"x")
            return got
        finally:
            await t.close()

    assert run(go()) == data
    assert target.read_bytes() == data
    assert target.stat().st_mode & 0o777 == 0o640
    assert [p.name for p in target.parent.iterdir()] == ["f'ile"]  # no temp file left


def test_stream_yields_lines_as_they_come(sshd: LocalSshd) -> None:
    async def go():
        t = transport(sshd)
        try:
            s = t.stream("echo first; sleep 1; echo second; echo err >&2", timeout=10)
            start = time.monotonic()
            got = []
            async for line in s:
                got.append((line, time.monotonic() - start))
            return got, s.exit_status
        finally:
            await t.close()

    got, status = run(go())
    assert [g[0] for g in got] == [b"first\n", b"second\n", b"err\n"]
    assert got[0][1] < 0.8 < got[1][1]  # the first line came before the command ended
    assert status == 0


def test_stream_close_kills_remote(sshd: LocalSshd) -> None:
    mark = "41.2718"

    async def go():
        t = transport(sshd)
        try:
            s = t.stream(f"echo go; sleep {mark}; echo never", timeout=30)
            async for line in s:
                assert line == b"go\n"
                break
            await s.aclose()
        finally:
            await t.close()

    run(go())
    time.sleep(0.2)
    assert procs_matching(f"sleep {mark}") == []


# ---- host keys --------------------------------------------------------------------------


def test_unknown_host_refused_with_hint(sshd: LocalSshd, tmp_path: Path) -> None:
    cfg = other_config(sshd, tmp_path, "")

    async def go():
        t = SSHTransport(sshd.alias, ssh_config=str(cfg))
        try:
            await t.run("true", timeout=5)
        finally:
            await t.close()

    with pytest.raises(HostKeyRejected) as ei:
        run(go())
    msg = str(ei.value)
    assert "unknown host key" in msg and "--accept-new" in msg and "SHA256:" in msg
    assert (tmp_path / "kh").read_text() == ""


def test_accept_new_records_then_strict_works(sshd: LocalSshd, tmp_path: Path) -> None:
    cfg = other_config(sshd, tmp_path, "# comment, no newline at end")

    async def go(accept: bool):
        t = SSHTransport(sshd.alias, ssh_config=str(cfg), accept_new=accept)
        try:
            return (await t.run("echo ok", timeout=5)).stdout, t.recorded_key
        finally:
            await t.close()

    out, where = run(go(True))
    assert out == b"ok\n"
    lines = (tmp_path / "kh").read_text().splitlines()
    assert lines == ["# comment, no newline at end", sshd.known_hosts_line().strip()]
    assert where == f"{tmp_path / 'kh'}:2"
    assert run(go(False))[0] == b"ok\n"  # now known: strict mode accepts it
    assert len((tmp_path / "kh").read_text().splitlines()) == 2  # not recorded twice


def test_changed_key_refused_even_with_accept_new(sshd: LocalSshd, tmp_path: Path) -> None:
    keygen(tmp_path / "other")
    pub = (tmp_path / "other.pub").read_text().split()
    cfg = other_config(sshd, tmp_path, f"# first\n[{sshd.addr}]:{sshd.port} {pub[0]} {pub[1]}\n")

    async def go():
        t = SSHTransport(sshd.alias, ssh_config=str(cfg), accept_new=True)
        try:
            await t.run("true", timeout=5)
        finally:
            await t.close()

    with pytest.raises(HostKeyRejected) as ei:
        run(go())
    msg = str(ei.value)
    assert "HAS CHANGED" in msg and "accept-new never overrides" in msg
    assert f"{tmp_path / 'kh'}:2" in msg  # names the known_hosts line
    assert len((tmp_path / "kh").read_text().splitlines()) == 2  # nothing recorded


# ---- failures: timeouts, drops, unreachable ---------------------------------------------


def test_timeout_kills_the_remote_process_group(sshd: LocalSshd) -> None:
    mark = "37.1931"

    async def go():
        t = transport(sshd)
        try:
            start = time.monotonic()
            with pytest.raises(CommandTimeout) as ei:
                # the sleep is a grandchild of the session: closing the channel would not
                # kill it, sshd refuses signal requests, so the transport kills the group
                await t.run(f"sleep {mark}; echo never", timeout=0.5)
            elapsed = time.monotonic() - start
            left = (
                await t.run(["sh", "-c", f"ps -eo args | grep -c '^slee[p] {mark}'"], timeout=5)
            ).stdout
            return elapsed, str(ei.value), left
        finally:
            await t.close()

    elapsed, msg, left = run(go())
    assert elapsed < 2.5
    assert "timeout" in msg and "killed" in msg
    assert left.strip() == b"0"
    assert procs_matching(f"sleep {mark}") == []


def test_cancel_kills_the_remote_process_group(sshd: LocalSshd) -> None:
    """What a signal to remedy does (remedy.interrupts cancels the work): the command it was
    running on the host is killed there, not left running after remedy stops."""
    mark = "41.7717"

    async def go():
        t = transport(sshd)
        try:
            task = asyncio.ensure_future(t.run(f"sleep {mark}; echo never", timeout=60))
            for _ in range(400):  # 20 s: a loaded 2-core machine can be slow to start a session
                if procs_matching(f"sleep {mark}"):
                    break
                await asyncio.sleep(0.05)
            assert procs_matching(f"sleep {mark}"), "the command never started"
            task.cancel()
            with pytest.raises(asyncio.CancelledError):
                await task
            count = b""
            for _ in range(50):  # the kill is asynchronous on the host: give it up to ~5 s
                count = (
                    await t.run(["sh", "-c", f"ps -eo args | grep -c '^slee[p] {mark}'"], timeout=5)
                ).stdout
                if count.strip() == b"0":
                    break
                await asyncio.sleep(0.1)
            return count
        finally:
            await t.close()

    assert run(go()).strip() == b"0"
    assert procs_matching(f"sleep {mark}") == []


def test_connection_dropped_mid_command(sshd: LocalSshd) -> None:
    mark = "43.5557"

    async def go():
        t = transport(sshd)
        try:
            assert (await t.run("true", timeout=5)).exit_status == 0
            before = set(sshd.session_pids())
            task = asyncio.ensure_future(t.run(f"sleep {mark}; echo x", timeout=30))
            for _ in range(100):
                await asyncio.sleep(0.05)
                if procs_matching(f"sleep {mark}"):
                    break
            for pid in before:  # the per-connection sshd: the TCP connection dies with it
                os.kill(pid, 9)
            start = time.monotonic()
            with pytest.raises(ConnectionDropped) as ei:
                await asyncio.wait_for(task, 10)
            took = time.monotonic() - start
            again = await t.run("echo again", timeout=10)  # reconnects
            return took, str(ei.value), again.stdout
        finally:
            await t.close()
            subprocess.run(["pkill", "-f", f"sleep {mark}"], check=False)

    took, msg, again = run(go())
    assert took < 2
    assert "connection lost" in msg
    assert again == b"again\n"


def test_stalled_connection_never_hangs(sshd: LocalSshd) -> None:
    """The per-connection sshd is SIGSTOPped: TCP stays up, nothing answers. Bounded anyway."""

    async def go():
        t = transport(sshd)
        try:
            assert (await t.run("true", timeout=5)).exit_status == 0
            pids = sshd.session_pids()
            for pid in pids:
                os.kill(pid, signal.SIGSTOP)
            start = time.monotonic()
            try:
                with pytest.raises((ConnectionDropped, CommandTimeout)):
                    await t.run("echo hi", timeout=1)
                return time.monotonic() - start
            finally:
                for pid in pids:
                    os.kill(pid, signal.SIGCONT)
                    os.kill(pid, signal.SIGKILL)
        finally:
            await t.close()

    assert run(go()) < 8  # 1 s timeout + at most the bounded kill attempt


def test_unreachable_port_is_fast() -> None:
    port = free_port()

    async def go():
        t = SSHTransport(f"root@127.0.0.1:{port}", connect_timeout=3, known_hosts=[os.devnull])
        start = time.monotonic()
        with pytest.raises(HostUnreachable) as ei:
            await t.run("true", timeout=5)
        return time.monotonic() - start, str(ei.value)

    took, msg = run(go())
    assert took < 1.0
    assert "cannot connect" in msg


def test_unresolvable_name_is_unreachable() -> None:
    async def go():
        t = SSHTransport("root@no-such-host.invalid", connect_timeout=3, known_hosts=[os.devnull])
        start = time.monotonic()
        with pytest.raises(HostUnreachable):
            await t.run("true", timeout=5)
        return time.monotonic() - start

    assert run(go()) < 5


# ---- concurrency --------------------------------------------------------------------------


def test_50_concurrent_commands_respect_the_channel_cap(sshd: LocalSshd) -> None:
    """sshd's default MaxSessions 10 refuses an 11th channel; the cap of 8 never hits it."""

    async def go():
        t = transport(sshd)
        try:
            start = time.monotonic()
            rs = await asyncio.gather(
                *[t.run(f"sleep 0.2; echo {i}", timeout=30) for i in range(50)]
            )
            return rs, time.monotonic() - start
        finally:
            await t.close()

    rs, took = run(go())
    assert [r.stdout for r in rs] == [f"{i}\n".encode() for i in range(50)]
    assert all(r.exit_status == 0 for r in rs)
    assert took >= 50 / 8 * 0.2 * 0.9  # at most 8 at a time


def test_control_uncapped_channels_are_refused_by_this_sshd(sshd: LocalSshd) -> None:
    """Sanity check of the fixture: without a cap, the same burst fails (MaxSessions 10)."""

    async def go():
        async with asyncssh.connect(
            sshd.addr,
            port=sshd.port,
            username="root",
            client_keys=[str(sshd.client_key)],
            known_hosts=str(sshd.known_hosts),
        ) as conn:
            rs = await asyncio.gather(
                *[conn.run("sleep 0.3") for _ in range(30)], return_exceptions=True
            )
        return sum(isinstance(r, asyncssh.ChannelOpenError) for r in rs)

    assert run(go()) > 0


# ---- quoting: values reach the program byte-exact and never run ---------------------------

CANARY = Path("/tmp/remedy-quote-canary")
NASTY = [
    "a b",
    "'",
    '"',
    "$(touch /tmp/remedy-quote-canary)",
    "`touch /tmp/remedy-quote-canary`",
    "; touch /tmp/remedy-quote-canary",
    "a\nb",
    "\\",
    "$HOME",
    "*",
    "-n",
    "",
    "'\"'\"'",
]


@pytest.fixture(scope="module")
def ssh_and_local(sshd: LocalSshd):
    loop = asyncio.new_event_loop()
    t = transport(sshd)
    yield loop, t, LocalTransport()
    loop.run_until_complete(t.close())
    loop.close()


@settings(
    derandomize=True,
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(
    value=st.one_of(
        st.binary(max_size=40).filter(lambda b: b"\0" not in b),
        st.text(
            alphabet=st.sampled_from(list(" '\"$`;\\\n\t|&<>(){}*?!#~=%") + ["é", "a"]), max_size=30
        ),
        st.sampled_from(NASTY),
    )
)
@example(value=b"\xff\xfe non-utf8 \x80")
@example(value="$(touch /tmp/remedy-quote-canary)")
def test_argv_values_arrive_byte_exact_and_never_execute(ssh_and_local, value) -> None:
    loop, ssh, local = ssh_and_local
    CANARY.unlink(missing_ok=True)
    want = value if isinstance(value, bytes) else value.encode()
    for t in (ssh, local):
        r = loop.run_until_complete(t.run(["printf", "%s", value], timeout=10))
        assert (r.exit_status, r.stdout) == (0, want), t
        r = loop.run_until_complete(t.run('printf %s "$V"', timeout=10, env={"V": value}))
        assert r.stdout == want, t
    assert not CANARY.exists()


def test_sshd_binary_is_the_real_one() -> None:
    assert shutil.which("ssh-keygen")
    assert os.access("/usr/sbin/sshd", os.X_OK)
