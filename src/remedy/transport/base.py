"""The one seam to I/O on a host (httpx's BaseTransport idea).

Everything remedy does on a host goes through `Transport`: collectors, the executor, probes.
Tests swap in `ScriptedTransport`; the real ones are `LocalTransport` and `SSHTransport`.
"""

from __future__ import annotations

import os
import signal
from collections.abc import AsyncIterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Protocol, runtime_checkable

from remedy.childenv import own_config_env, own_home_env  # noqa: F401 (their old home)
from remedy.syspath import (  # noqa: F401 (BASE_PATH, OWN_PATH_FORMS: for facts)
    BASE_PATH,
    OWN_PATH_FORMS,
    SESSION_PATH_VAR,
    SYSTEM_PATH,
    own_tools_path,
)
from remedy.transport.quote import Arg

Command = str | bytes | Sequence[Arg]
"""A script (str/bytes, run by `sh -c`) or an argv (sequence, quoted word by word)."""


def with_session_path(env: Mapping[str, str] | None) -> Mapping[str, str] | None:
    """A caller's env that names PATH: that PATH is the session's for this command too."""
    if env and "PATH" in env:
        return {**env, SESSION_PATH_VAR: env["PATH"]}
    return env


def system_path_env(session_path: str | bytes | None) -> dict[bytes, bytes]:
    """The variables that replace PATH for a command: the fixed PATH (less a /usr/local
    directory holding another user's program: remedy.syspath.own_tools_path), the session's
    kept."""
    out = {b"PATH": own_tools_path().encode()}
    if session_path is not None:
        out[SESSION_PATH_VAR.encode()] = (
            session_path if isinstance(session_path, bytes) else os.fsencode(session_path)
        )
    return out


@dataclass(frozen=True)
class CommandResult:
    """What a finished command left behind. A signal death is reported as 128+N, as sh does."""

    exit_status: int
    stdout: bytes
    stderr: bytes
    duration_s: float

    @property
    def ok(self) -> bool:
        return self.exit_status == 0

    def text(self, errors: str = "replace") -> str:
        """stdout decoded as UTF-8; odd bytes never raise."""
        return self.stdout.decode("utf-8", errors)


@runtime_checkable
class Transport(Protocol):
    """Async access to one host. Implementations never hang: every call has a timeout."""

    host: str

    async def run(
        self,
        argv_or_script: Command,
        *,
        timeout: float,
        input: bytes | None = None,
        env: Mapping[str, str] | None = None,
    ) -> CommandResult: ...

    async def put(self, path: str, data: bytes, *, mode: int = 0o600) -> None: ...

    async def get(self, path: str) -> bytes: ...

    def stream(self, command: Command, *, timeout: float) -> AsyncIterator[bytes]: ...

    async def close(self) -> None: ...


def signal_status(signum: int) -> int:
    """Exit status the shell reports for a process killed by `signum`."""
    return 128 + int(signum)


def signal_number(name: str | None) -> int:
    """`KILL` or `SIGKILL` -> 9; unknown names -> SIGKILL's number (a death is a death)."""
    if not name:
        return int(signal.SIGKILL)
    name = name.upper()
    if not name.startswith("SIG"):
        name = "SIG" + name
    try:
        return int(signal.Signals[name])
    except KeyError:
        return int(signal.SIGKILL)


def describe(command: Command, limit: int = 120) -> str:
    """A short printable form of a command for error messages."""
    if isinstance(command, (str, bytes)):
        text = command if isinstance(command, str) else command.decode("utf-8", "replace")
    else:
        text = " ".join(
            a.decode("utf-8", "replace") if isinstance(a, bytes) else os.fspath(a) for a in command
        )
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


@dataclass
class LineSplitter:
    """Splits a byte stream into lines (keeping the newline); the tail comes out at the end."""

    buf: bytearray = field(default_factory=bytearray)

    def feed(self, data: bytes) -> list[bytes]:
        self.buf.extend(data)
        lines: list[bytes] = []
        while True:
            i = self.buf.find(b"\n")
            if i < 0:
                return lines
            lines.append(bytes(self.buf[: i + 1]))
            del self.buf[: i + 1]

    def tail(self) -> list[bytes]:
        if not self.buf:
            return []
        out = [bytes(self.buf)]
        self.buf.clear()
        return out


# A host command's output is data from the host: what remedy keeps of it is bounded. Fact
# collection prints a few MiB on the largest hosts recorded; a probe's build log less.
OUTPUT_CAP = 64 * 2**20
STDERR_CAP = 16 * 2**20
