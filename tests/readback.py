"""A long log with one line waiting for its neighbour near the end, and a counter of the
bytes the scan reads back for it: shared by the Hyperscan, grep and Python path tests."""

from __future__ import annotations

import os

import pytest

from remedy.evidence.scan import _Aggregator

FILLER = b"".join(b"%d worker heartbeat ok\n" % i for i in range(300_000))  # ~7.6 MB
# a traceback frame waits for its follower, a dlerror tail for the line before it
WAITING_BODIES = (
    b'  File "/tmp/siteC/sglang/srt/entrypoints/http_server.py", line 365, in lifespan\n'
    b"    await foo()\n",
    b"loading libnuma.so.1:\ncannot open shared object file: No such file or directory\n",
)


def waiting_log(body: bytes) -> bytes:
    """The body's first line is line 300,001, with no candidate line beside it."""
    return FILLER + body + FILLER[:1000]


def count_read_back(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Patches the read-back so each os.pread it makes appends its size to the list."""
    real, resolve = os.pread, _Aggregator.resolve_wraps
    read: list[int] = []

    def counting(fd: int, n: int, off: int) -> bytes:
        read.append(n)
        return real(fd, n, off)

    def measured(self: _Aggregator, fd: int) -> None:
        monkeypatch.setattr(os, "pread", counting)
        try:
            resolve(self, fd)
        finally:
            monkeypatch.setattr(os, "pread", real)

    monkeypatch.setattr(_Aggregator, "resolve_wraps", measured)
    return read
