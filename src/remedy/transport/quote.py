"""Quoting for every value that reaches a shell on a host.

Why its own module: the executor renders commands from templates with values taken from
facts (paths, versions, environment values). A value with a space, a quote, `$(...)` or a
newline must reach the program as one byte-exact argument and never run. Single quotes are
the only POSIX quoting with no special characters inside, so everything here is built on
them; bytes are supported because paths and environment values need not be UTF-8.
"""

from __future__ import annotations

import os
import re
import shlex
from collections.abc import Mapping, Sequence

Arg = str | bytes | os.PathLike[str]

_ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_SAFE_B = re.compile(rb"^[A-Za-z0-9_@%+=:,./-]+$")


def _as_bytes(value: Arg) -> bytes:
    if isinstance(value, bytes):
        data = value
    else:
        # surrogateescape: a str that came from os.fsdecode of non-UTF-8 bytes round-trips
        data = os.fsencode(value)
    if b"\0" in data:
        raise ValueError(f"a shell argument cannot contain a NUL byte: {data!r}")
    return data


def quote_bytes(value: Arg) -> bytes:
    """Quote one argument for a POSIX shell, as bytes (byte-exact for any value but NUL)."""
    data = _as_bytes(value)
    if data and _SAFE_B.match(data):
        return data
    return b"'" + data.replace(b"'", b"'\"'\"'") + b"'"


def quote(value: Arg) -> str:
    """Quote one argument for a POSIX shell (like shlex.quote, also for paths and bytes).

    Non-UTF-8 bytes come back as surrogate escapes; use quote_bytes() to keep bytes.
    """
    if isinstance(value, str) and "\0" not in value:
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            pass
        else:
            return shlex.quote(value)
    return os.fsdecode(quote_bytes(value))


def join_bytes(argv: Sequence[Arg]) -> bytes:
    """Quote and join an argv into one shell command line, as bytes."""
    if isinstance(argv, (str, bytes)):
        raise TypeError("join_bytes() takes a sequence of arguments, not one string")
    if not argv:
        raise ValueError("empty argv")
    return b" ".join(quote_bytes(a) for a in argv)


def join(argv: Sequence[Arg]) -> str:
    """shlex.join for str, bytes and path arguments."""
    if isinstance(argv, (str, bytes)):
        raise TypeError("join() takes a sequence of arguments, not one string")
    if not argv:
        raise ValueError("empty argv")
    return " ".join(quote(a) for a in argv)


def sh_c(script: str | bytes) -> str | bytes:
    """`sh -c '<script>'`: a script run by /bin/sh whatever the login shell is."""
    if isinstance(script, bytes):
        return b"sh -c " + quote_bytes(script)
    return "sh -c " + quote(script)


def check_env_name(name: str) -> str:
    """An environment variable name, validated (a name is never quoted, so it must be safe)."""
    if not _ENV_NAME.match(name):
        raise ValueError(f"not a valid environment variable name: {name!r}")
    return name


def env_assignments(env: Mapping[str, Arg]) -> list[bytes]:
    """`NAME=value` words for env(1), each quoted."""
    return [quote_bytes(check_env_name(k).encode() + b"=" + _as_bytes(v)) for k, v in env.items()]


def command_line(
    argv_or_script: str | bytes | Sequence[Arg], env: Mapping[str, Arg] | None = None
) -> bytes:
    """The exact bytes a remote login shell receives for a Transport.run() call.

    A sequence is an argv (quoted with join); a str/bytes is a script run by `sh -c`.
    env is applied with env(1) so it works whatever the remote login shell is and whatever
    sshd's AcceptEnv allows.
    """
    if isinstance(argv_or_script, (str, bytes)):
        script = (
            argv_or_script if isinstance(argv_or_script, bytes) else os.fsencode(argv_or_script)
        )
        body = b"sh -c " + quote_bytes(script)
    else:
        body = join_bytes(list(argv_or_script))
    if env:
        return b"env " + b" ".join(env_assignments(env)) + b" " + body
    return body
