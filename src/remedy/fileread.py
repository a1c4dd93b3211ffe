"""Reading a file a user points remedy at (facts, a saved plan, an inventory, knowledge), with
a ceiling: these are kilobytes to a few megabytes, and a wrong path can be endless (/dev/zero
read for ever: found by the command-line fuzz target) or a multi-gigabyte core dump."""

from __future__ import annotations

import sys
from pathlib import Path

LIMIT = 16 * 2**20


class TooLarge(Exception):
    """More than `limit` bytes: the caller turns it into its own error, naming the file."""

    def __init__(self, limit: int) -> None:
        super().__init__(f"larger than {limit >> 20} MiB")
        self.limit = limit


def read_limited(path: str | Path, limit: int = LIMIT) -> bytes:
    """The bytes of `path` ('-': standard input); OSError as open/read raise it; TooLarge past
    `limit` (at most limit + 1 bytes are ever read)."""
    if str(path) == "-":
        data = sys.stdin.buffer.read(limit + 1)
    else:
        with open(path, "rb") as f:
            data = f.read(limit + 1)
    if len(data) > limit:
        raise TooLarge(limit)
    return data
