"""LocalTransport: the same seam on this machine, with asyncio subprocesses.

Each command runs in its own session (process group) so a timeout kills the whole tree,
not just the shell: a `sh -c 'a; b'` that times out must not leave `a` running.
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import os
import signal
import stat
import tempfile
import time
from collections.abc import AsyncIterator, Mapping

from remedy.childenv import scrubbed_environ
from remedy.errors import CommandTimeout, OutputTooLarge
from remedy.transport.base import (
    OUTPUT_CAP,
    SESSION_PATH_VAR,
    STDERR_CAP,
    Command,
    CommandResult,
    LineSplitter,
    describe,
    own_home_env,
    signal_status,
    system_path_env,
    with_session_path,
)
from remedy.transport.quote import check_env_name
from remedy.transport.stream import OutputStream


def _argv(command: Command) -> list[str | bytes]:
    if isinstance(command, (str, bytes)):
        return ["/bin/sh", "-c", command]
    argv = [a if isinstance(a, (str, bytes)) else os.fspath(a) for a in command]
    if not argv:
        raise ValueError("empty argv")
    for a in argv:
        if (b"\0" if isinstance(a, bytes) else "\0") in a:
            raise ValueError(f"an argument cannot contain a NUL byte: {a!r}")
    return argv


def _status(returncode: int | None) -> int:
    if returncode is None:
        return signal_status(signal.SIGKILL)
    return signal_status(-returncode) if returncode < 0 else returncode


def _kill_group(proc: asyncio.subprocess.Process) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)
    with contextlib.suppress(ProcessLookupError):
        proc.kill()


def _release(proc: asyncio.subprocess.Process) -> None:
    """Close a killed process's transport now, while its event loop is open. Left to the
    garbage collector, asyncio's transport __del__ runs after the loop closed and raises
    'Event loop is closed' from wherever the collection happens (it once did so inside
    ast.parse, which CPython 3.11 turns into a SystemError). asyncio.subprocess.Process has no
    public close; its transport's close() is idempotent."""
    transport = getattr(proc, "_transport", None)
    if transport is not None:
        with contextlib.suppress(Exception):
            transport.close()


async def _reap(proc: asyncio.subprocess.Process) -> None:
    """Kill the group, wait for it briefly, and close its transport while the loop is open: a
    command cut for its output stops being read, so asyncio never closes that transport itself."""
    _kill_group(proc)
    with contextlib.suppress(Exception):
        await asyncio.wait_for(proc.wait(), 5)
    _release(proc)


class LocalTransport:
    """Run commands on this machine; the reference implementation of Transport."""

    def __init__(self, host: str = "localhost", *, env: Mapping[str, str] | None = None) -> None:
        """env: variables set for every command (tests use it for a clean HOME/SHELL/PATH)."""
        self.host = host
        self.env = dict(env or {})

    async def _spawn(
        self,
        command: Command,
        *,
        stdin: int | None,
        env: Mapping[str, str] | None,
        merge_stderr: bool = False,
    ) -> asyncio.subprocess.Process | CommandResult:
        argv = _argv(command)
        # never a HOME `sudo` kept, nor another user's pip.conf or libraries (remedy.childenv)
        full_env = scrubbed_environ(os.environb, own_home_env)
        full_env.pop(SESSION_PATH_VAR.encode(), None)
        # remedy's own tools from the system PATH, the session's kept as data (base.SYSTEM_PATH)
        full_env.update(system_path_env(os.environb.get(b"PATH")))
        for k, v in (with_session_path({**self.env, **(env or {})}) or {}).items():
            full_env[os.fsencode(check_env_name(k))] = v if isinstance(v, bytes) else os.fsencode(v)
        try:
            return await asyncio.create_subprocess_exec(
                *argv,
                stdin=stdin,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.STDOUT if merge_stderr else asyncio.subprocess.PIPE,
                env=full_env,
                start_new_session=True,
            )
        except FileNotFoundError:
            name = os.fsdecode(argv[0])
            return CommandResult(127, b"", f"sh: 1: {name}: not found\n".encode(), 0.0)
        except PermissionError:
            name = os.fsdecode(argv[0])
            return CommandResult(126, b"", f"sh: 1: {name}: Permission denied\n".encode(), 0.0)

    async def run(
        self,
        argv_or_script: Command,
        *,
        timeout: float,
        input: bytes | None = None,
        env: Mapping[str, str] | None = None,
    ) -> CommandResult:
        """Run and wait; past `timeout` the process group is SIGKILLed and CommandTimeout raised."""
        start = time.monotonic()
        proc = await self._spawn(
            argv_or_script,
            stdin=asyncio.subprocess.PIPE if input is not None else asyncio.subprocess.DEVNULL,
            env=env,
        )
        if isinstance(proc, CommandResult):
            return proc
        try:
            out, err = await asyncio.wait_for(_communicate_capped(proc, input), timeout)
        except OutputTooLarge as exc:
            await _reap(proc)
            raise OutputTooLarge(
                f"{self.host}: {describe(argv_or_script)} printed {exc}; it was killed "
                "(remedy keeps a host command's output bounded)"
            ) from None
        except (asyncio.TimeoutError, TimeoutError):
            await _reap(proc)
            raise CommandTimeout(
                f"{self.host}: command ran past its {timeout:g} s timeout and was killed: "
                f"{describe(argv_or_script)}"
            ) from None
        except BaseException:
            _kill_group(proc)
            _release(proc)
            raise
        return CommandResult(_status(proc.returncode), out, err, time.monotonic() - start)

    async def put(self, path: str, data: bytes, *, mode: int = 0o600) -> None:
        """Atomic write: temp file in the same dir, fsync, rename, fsync the dir."""
        await asyncio.to_thread(_atomic_write, path, data, mode)

    async def get(self, path: str) -> bytes:
        return await asyncio.to_thread(_read, path)

    def stream(
        self, command: Command, *, timeout: float, env: Mapping[str, str] | None = None
    ) -> LocalStream:
        """Lines of stdout+stderr as they come; closing the stream kills the command."""
        return LocalStream(self, command, timeout=timeout, env=env)

    async def close(self) -> None:
        return None

    def __repr__(self) -> str:
        return f"LocalTransport(host={self.host!r})"


class LocalStream(OutputStream):
    """AsyncIterator[bytes] over a local command's merged output; exit_status when done."""

    _t: LocalTransport

    async def _lines(self) -> AsyncIterator[bytes]:
        deadline = time.monotonic() + self._timeout
        proc = await self._t._spawn(
            self._command, stdin=asyncio.subprocess.DEVNULL, env=self._env, merge_stderr=True
        )
        if isinstance(proc, CommandResult):
            self.exit_status = proc.exit_status
            if proc.stderr:
                yield proc.stderr
            return
        assert proc.stdout is not None
        splitter = LineSplitter()
        try:
            while True:
                left = deadline - time.monotonic()
                if left <= 0:
                    raise asyncio.TimeoutError
                chunk = await asyncio.wait_for(proc.stdout.read(65536), left)
                if not chunk:
                    break
                for line in splitter.feed(chunk):
                    yield line
            for line in splitter.tail():
                yield line
            left = max(deadline - time.monotonic(), 0.001)
            await asyncio.wait_for(proc.wait(), left)
            self.exit_status = _status(proc.returncode)
        except (asyncio.TimeoutError, TimeoutError):
            _kill_group(proc)
            raise CommandTimeout(
                f"{self._t.host}: streamed command ran past its {self._timeout:g} s timeout "
                f"and was killed: {describe(self._command)}"
            ) from None
        finally:
            if proc.returncode is None:
                _kill_group(proc)
                try:
                    with contextlib.suppress(Exception):
                        await asyncio.wait_for(proc.wait(), 5)
                finally:
                    _release(proc)


def _atomic_write(path: str, data: bytes, mode: int) -> None:
    directory = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(dir=directory, prefix=".remedy.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fchmod(f.fileno(), mode)
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise
    dfd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(dfd)
    finally:
        os.close(dfd)


def _read(path: str) -> bytes:
    """A regular file's bytes, at most OUTPUT_CAP: a FIFO would block, a device never end."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    with os.fdopen(fd, "rb") as f:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise OSError(errno.EINVAL, "not a regular file", path)
        data = f.read(OUTPUT_CAP + 1)
    if len(data) > OUTPUT_CAP:
        raise OSError(errno.EFBIG, f"larger than {OUTPUT_CAP >> 20} MiB", path)
    return data


async def _communicate_capped(
    proc: asyncio.subprocess.Process, input: bytes | None
) -> tuple[bytes, bytes]:
    """proc.communicate(), but OutputTooLarge once stdout or stderr passes its cap."""

    async def feed() -> None:
        if proc.stdin is None:
            return
        with contextlib.suppress(BrokenPipeError, ConnectionResetError):
            if input:
                proc.stdin.write(input)
                await proc.stdin.drain()
            proc.stdin.close()

    async def drain(stream: asyncio.StreamReader | None, cap: int, name: str) -> bytes:
        buf = bytearray()
        if stream is None:
            return b""
        while True:
            chunk = await stream.read(1 << 16)
            if not chunk:
                return bytes(buf)
            buf += chunk
            if len(buf) > cap:
                raise OutputTooLarge(f"{name} past {cap >> 20} MiB")

    _, out, err = await asyncio.gather(
        feed(), drain(proc.stdout, OUTPUT_CAP, "stdout"), drain(proc.stderr, STDERR_CAP, "stderr")
    )
    await proc.wait()
    return out, err
