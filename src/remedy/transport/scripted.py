"""ScriptedTransport: a Transport whose answers come from a handler (httpx's MockTransport).

Unit tests of collectors, the executor and probes use it to replay recorded outputs and
to inject failures (a handler may raise CommandTimeout or ConnectionDropped).
"""

from __future__ import annotations

import inspect
import os
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from dataclasses import dataclass, field

from remedy.transport.base import Command, CommandResult, LineSplitter
from remedy.transport.quote import command_line


@dataclass(frozen=True)
class ScriptedCall:
    """One call as the handler sees it: the script or argv, and the exact remote line."""

    command: Command
    line: bytes  # what SSHTransport would send (before its pid wrapper)
    timeout: float
    input: bytes | None = None
    env: Mapping[str, str] | None = None

    @property
    def script(self) -> str | None:
        """The script text when the call was a script, else None."""
        c = self.command
        if isinstance(c, bytes):
            return c.decode("utf-8", "surrogateescape")
        return c if isinstance(c, str) else None

    @property
    def argv(self) -> list[str] | None:
        c = self.command
        if isinstance(c, (str, bytes)):
            return None
        return [
            a.decode("utf-8", "surrogateescape") if isinstance(a, bytes) else os.fspath(a)
            for a in c
        ]

    @property
    def text(self) -> str:
        return self.line.decode("utf-8", "surrogateescape")


HandlerResult = CommandResult | bytes | str | int
Handler = Callable[[ScriptedCall], HandlerResult | Awaitable[HandlerResult]]


def _result(value: HandlerResult) -> CommandResult:
    if isinstance(value, CommandResult):
        return value
    if isinstance(value, int):
        return CommandResult(value, b"", b"", 0.0)
    data = value.encode() if isinstance(value, str) else value
    return CommandResult(0, data, b"", 0.0)


@dataclass
class ScriptedTransport:
    """Answers run/stream with handler(call); put/get use an in-memory file dict."""

    handler: Handler
    host: str = "scripted"
    files: dict[str, bytes] = field(default_factory=dict)
    modes: dict[str, int] = field(default_factory=dict)
    calls: list[ScriptedCall] = field(default_factory=list)
    closed: bool = False

    async def run(
        self,
        argv_or_script: Command,
        *,
        timeout: float,
        input: bytes | None = None,
        env: Mapping[str, str] | None = None,
    ) -> CommandResult:
        call = ScriptedCall(argv_or_script, command_line(argv_or_script, env), timeout, input, env)
        self.calls.append(call)
        value = self.handler(call)
        if inspect.isawaitable(value):
            value = await value
        return _result(value)  # type: ignore[arg-type]

    async def put(self, path: str, data: bytes, *, mode: int = 0o600) -> None:
        self.files[path] = bytes(data)
        self.modes[path] = mode

    async def get(self, path: str) -> bytes:
        try:
            return self.files[path]
        except KeyError:
            raise FileNotFoundError(2, "No such file or directory", path) from None

    def stream(self, command: Command, *, timeout: float) -> AsyncIterator[bytes]:
        return self._stream(command, timeout)

    async def _stream(self, command: Command, timeout: float) -> AsyncIterator[bytes]:
        r = await self.run(command, timeout=timeout)
        s = LineSplitter()
        for line in s.feed(r.stdout + r.stderr) + s.tail():
            yield line

    async def close(self) -> None:
        self.closed = True
