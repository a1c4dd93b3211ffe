"""The one shape of a command's streamed output, for every transport.

Why one module: LocalStream and SSHStream were written twice; only how lines are produced
differs (a local subprocess, an SSH channel). A subclass implements `_lines()`; iterating,
`async with`, `aclose()` (which kills the command) and `exit_status` live here.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping
from typing import Any

from remedy.transport.base import Command


class OutputStream:
    """AsyncIterator[bytes] over a command's merged stdout+stderr; exit_status when done."""

    def __init__(
        self,
        transport: Any,
        command: Command,
        *,
        timeout: float,
        env: Mapping[str, str] | None,
    ) -> None:
        self._t = transport
        self._command = command
        self._timeout = timeout
        self._env = env
        self._gen: AsyncIterator[bytes] | None = None
        self.exit_status: int | None = None

    def __aiter__(self) -> OutputStream:
        return self

    async def __aenter__(self) -> OutputStream:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    async def __anext__(self) -> bytes:
        if self._gen is None:
            self._gen = self._lines()
        return await self._gen.__anext__()

    async def aclose(self) -> None:
        if self._gen is not None:
            await self._gen.aclose()  # type: ignore[attr-defined]

    def _lines(self) -> AsyncIterator[bytes]:
        raise NotImplementedError
