"""RecordingTransport: wraps a transport and keeps every command with its raw result.

Why: fact-collector fixtures are recorded real output (pyinfra-style command + output);
a bug report can carry the same recording, and ScriptedTransport replays it.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from remedy.transport.base import Command, CommandResult, Transport


@dataclass
class Recorded:
    command: Command
    env: Mapping[str, str] | None
    result: CommandResult

    def as_json(self) -> dict[str, Any]:
        cmd = self.command
        if isinstance(cmd, bytes):
            cmd = cmd.decode("utf-8", "surrogateescape")
        elif not isinstance(cmd, str):
            cmd = [
                a.decode("utf-8", "surrogateescape") if isinstance(a, bytes) else str(a)
                for a in cmd
            ]
        return {
            "command": cmd,
            "env": dict(self.env) if self.env else None,
            "exit_status": self.result.exit_status,
            "output": self.result.stdout.decode("utf-8", "replace"),
            "stderr": self.result.stderr.decode("utf-8", "replace"),
        }


@dataclass
class RecordingTransport:
    """Delegates to `inner`; `records` holds every run() in call order."""

    inner: Transport
    records: list[Recorded] = field(default_factory=list)

    @property
    def host(self) -> str:
        return self.inner.host

    async def run(
        self,
        argv_or_script: Command,
        *,
        timeout: float,
        input: bytes | None = None,
        env: Mapping[str, str] | None = None,
    ) -> CommandResult:
        r = await self.inner.run(argv_or_script, timeout=timeout, input=input, env=env)
        self.records.append(Recorded(argv_or_script, env, r))
        return r

    async def put(self, path: str, data: bytes, *, mode: int = 0o600) -> None:
        await self.inner.put(path, data, mode=mode)

    async def get(self, path: str) -> bytes:
        return await self.inner.get(path)

    def stream(self, command: Command, *, timeout: float) -> AsyncIterator[bytes]:
        return self.inner.stream(command, timeout=timeout)

    async def close(self) -> None:
        await self.inner.close()
