"""LocalTransport, ScriptedTransport and the quoting helpers (no sshd needed)."""

from __future__ import annotations

import asyncio
import os
import shlex
import subprocess
import time
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from remedy.errors import CommandTimeout, ConnectionDropped
from remedy.transport import (
    CommandResult,
    LocalTransport,
    ScriptedTransport,
    Transport,
    open_transport,
    quote,
)
from remedy.transport.ssh import SSHTarget, wrap_remote


def run(coro):
    return asyncio.run(coro)


def test_protocol_is_satisfied() -> None:
    assert isinstance(LocalTransport(), Transport)
    assert isinstance(ScriptedTransport(lambda c: b""), Transport)
    assert isinstance(open_transport("h", local=True), LocalTransport)


def test_local_run_put_get(tmp_path: Path) -> None:
    t = LocalTransport(env={"REMEDY_BASE": "base"})

    async def go():
        a = await t.run(["printf", "%s", "a b"], timeout=5)
        b = await t.run("echo $REMEDY_BASE $X; exit 4", timeout=5, env={"X": "x"})
        c = await t.run(["no-such-program-xyz"], timeout=5)
        await t.put(str(tmp_path / "f"), b"\x00data", mode=0o604)
        d = await t.get(str(tmp_path / "f"))
        with pytest.raises(FileNotFoundError):
            await t.get(str(tmp_path / "missing"))
        return a, b, c, d

    a, b, c, d = run(go())
    assert a.stdout == b"a b"
    assert (b.exit_status, b.stdout) == (4, b"base x\n")
    assert c.exit_status == 127 and b"not found" in c.stderr
    assert d == b"\x00data"
    assert (tmp_path / "f").stat().st_mode & 0o777 == 0o604
    assert sorted(p.name for p in tmp_path.iterdir()) == ["f"]


def test_local_timeout_kills_the_whole_group() -> None:
    mark = "29.8123"

    async def go():
        start = time.monotonic()
        with pytest.raises(CommandTimeout):
            await LocalTransport().run(f"sleep {mark}; echo never", timeout=0.3)
        return time.monotonic() - start

    assert run(go()) < 2
    time.sleep(0.1)
    ps = subprocess.run(["ps", "-eo", "args"], capture_output=True, text=True).stdout
    assert f"sleep {mark}" not in ps


def test_local_stream_and_timeout() -> None:
    async def go():
        s = LocalTransport().stream("echo a; echo b >&2; printf tail", timeout=5)
        lines = [x async for x in s]
        s2 = LocalTransport().stream("echo x; sleep 5", timeout=0.5)
        got = []
        with pytest.raises(CommandTimeout):
            async for x in s2:
                got.append(x)
        return lines, s.exit_status, got

    lines, status, got = run(go())
    assert lines == [b"a\n", b"b\n", b"tail"]
    assert status == 0
    assert got == [b"x\n"]


def test_scripted_transport_replays_and_records() -> None:
    def handler(call):
        if call.argv == ["uname", "-r"]:
            return "6.1.0\n"
        if call.script and "boom" in call.script:
            raise ConnectionDropped("scripted drop")
        return CommandResult(1, b"", b"nope\n", 0.0)

    t = ScriptedTransport(handler, host="h1")

    async def go():
        a = await t.run(["uname", "-r"], timeout=1)
        b = await t.run("other", timeout=1, env={"A": "b c"})
        with pytest.raises(ConnectionDropped):
            await t.run("boom", timeout=1)
        await t.put("/etc/x", b"1", mode=0o644)
        lines = [x async for x in t.stream(["uname", "-r"], timeout=1)]
        return a, b, await t.get("/etc/x"), lines

    a, b, x, lines = run(go())
    assert a.stdout == b"6.1.0\n" and b.exit_status == 1 and x == b"1"
    assert lines == [b"6.1.0\n"]
    assert t.calls[1].text == "env 'A=b c' sh -c other"
    assert t.modes["/etc/x"] == 0o644


def test_quote_helpers() -> None:
    assert quote.quote("a b") == "'a b'"
    assert quote.quote("plain/path-1.0") == "plain/path-1.0"
    assert quote.quote(b"\xff'") == os.fsdecode(b"'\xff'\"'\"''")
    assert quote.join(["ls", "-l", "a b"]) == "ls -l 'a b'"
    assert quote.sh_c("echo $HOME") == "sh -c 'echo $HOME'"
    assert quote.command_line(["printf", "%s", "x y"]) == b"printf %s 'x y'"
    assert quote.command_line("a; b", {"K": "v v"}) == b"env 'K=v v' sh -c 'a; b'"
    with pytest.raises(ValueError):
        quote.quote("nul\0byte")
    with pytest.raises(ValueError):
        quote.command_line("x", {"BAD NAME": "v"})
    with pytest.raises(TypeError):
        quote.join("not-a-list")


@settings(derandomize=True, max_examples=200, deadline=None)
@given(st.text(max_size=40).filter(lambda s: "\0" not in s))
def test_quote_agrees_with_shlex_for_text(s: str) -> None:
    try:
        s.encode("utf-8")
    except UnicodeEncodeError:
        return
    assert shlex.split(quote.quote(s)) == [s]


def test_wrap_remote_reports_pid_then_execs() -> None:
    line = wrap_remote(quote.command_line(["printf", "%s", "x"]))
    r = subprocess.run(["sh", "-c", line], capture_output=True)
    assert r.stdout == b"x"
    assert r.stderr.startswith(b"\x1eremedy-pid ")


@pytest.mark.parametrize(
    "text,host,user,port",
    [
        ("gpu-1", "gpu-1", None, None),
        ("root@10.0.0.2:2222", "10.0.0.2", "root", 2222),
        ("me@[::1]:22", "::1", "me", 22),
        ("alias.example", "alias.example", None, None),
    ],
)
def test_ssh_target_parse(text: str, host: str, user: str | None, port: int | None) -> None:
    t = SSHTarget.parse(text)
    assert (t.host, t.user, t.port) == (host, user, port)


@pytest.mark.parametrize(
    "text,says",
    [
        ("user@", "not a host: 'user@'"),
        ("host:99999", "bad port in 'host:99999': a port is 1-65535"),
        ("host:0", "bad port in 'host:0'"),
        ("-oProxyCommand=x", "not a host: '-oProxyCommand=x'"),
        ("me@-x", "not a host: 'me@-x'"),
    ],
)
def test_ssh_target_refuses_what_is_no_host(text: str, says: str) -> None:
    """`--host user@` said "not a host: ''"; `host:99999` and `-oProxyCommand=x` went to DNS
    and came back as "unreachable" (exit 4) instead of bad input (exit 2)."""
    from remedy.errors import InputError

    with pytest.raises(InputError) as exc:
        SSHTarget.parse(text)
    assert str(exc.value).startswith(says) and exc.value.exit_code == 2
