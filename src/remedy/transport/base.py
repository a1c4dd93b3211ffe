"""The one seam to I/O on a host (httpx's BaseTransport idea).

Everything remedy does on a host goes through `Transport`: collectors, the executor, probes.
Tests swap in `ScriptedTransport`; the real ones are `LocalTransport` and `SSHTransport`.
"""

from __future__ import annotations

import os
import signal
import stat
from collections.abc import AsyncIterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Protocol, runtime_checkable

from remedy.syspath import SESSION_PATH_VAR, SYSTEM_PATH
from remedy.transport.quote import Arg

Command = str | bytes | Sequence[Arg]
"""A script (str/bytes, run by `sh -c`) or an argv (sequence, quoted word by word)."""


def with_session_path(env: Mapping[str, str] | None) -> Mapping[str, str] | None:
    """A caller's env that names PATH: that PATH is the session's for this command too."""
    if env and "PATH" in env:
        return {**env, SESSION_PATH_VAR: env["PATH"]}
    return env


def system_path_env(session_path: str | bytes | None) -> dict[bytes, bytes]:
    """The variables that replace PATH for a command: the fixed PATH, the session's kept."""
    out = {b"PATH": SYSTEM_PATH.encode()}
    if session_path is not None:
        out[SESSION_PATH_VAR.encode()] = (
            session_path if isinstance(session_path, bytes) else os.fsencode(session_path)
        )
    return out


def own_home_env(home: bytes | None) -> dict[bytes, bytes]:
    """HOME for a command remedy runs locally: the inherited one, unless another user owns it
    (or reaches it through a link they planted): `sudo` keeps the invoking user's HOME on
    many systems, and root's `pip install` then read that user's `~/.config/pip/pip.conf`
    (their index, their wheels), `rm -rf "$HOME"/.cache/...` worked in their tree, login
    files were theirs. Then the passwd home of the user remedy runs as, which is what sshd
    gives a login (the SSH transport's commands already have it)."""
    if not home:
        return {}
    import pwd

    from remedy.fileread import foreign_link_chain

    me = os.geteuid()
    try:
        foreign = os.stat(home).st_uid not in (0, me) or bool(foreign_link_chain(os.fsdecode(home)))
    except OSError:
        foreign = _creatable_by_others(os.fsdecode(home), me)
    if not foreign:
        return {}
    try:
        return {b"HOME": os.fsencode(pwd.getpwuid(me).pw_dir)}
    except KeyError:
        return {b"HOME": b"/"}


def _creatable_by_others(path: str, me: int) -> bool:
    """A HOME that does not exist, whose nearest existing directory another user may add a
    name to (theirs, group/world-writable, sticky /tmp too: a new name is anyone's): that
    user could create it, with `.config/pip/pip.conf` in it, between this check and the
    command's start (tests/security/test_missing_home.py). Relative or unreachable: True."""
    from remedy.fileread import foreign_link_chain

    if not path.startswith("/"):
        return True
    cur = os.path.normpath(path)
    while True:
        cur = os.path.dirname(cur)
        try:
            st = os.stat(cur)
        except FileNotFoundError:
            continue
        except OSError:
            return True
        if not stat.S_ISDIR(st.st_mode):
            return False  # under a file: nobody can create it
        return st.st_uid not in (0, me) or bool(st.st_mode & 0o022) or bool(foreign_link_chain(cur))


# inherited variables naming where a command remedy runs reads configuration or code from
# (pip's config files, Python's import path, home and user site, apt's configuration, the
# directories gcc takes `as`/`ld`/`collect2` from before PATH, perl's (dpkg/debconf) include
# path): one another user owns chose root's package index and wheels
# (`XDG_CONFIG_HOME/pip/pip.conf`), or ran its `as` as root (`COMPILER_PATH`, the
# link-layout stub's `cc`), as a HOME `sudo` kept did
# PYTHONPYCACHEPREFIX: where Python takes the bytecode of what it imports (a pyc whose header
# matches the source's mtime and size, which anyone can read: root's `python -m pip` ran uid
# 65534's `json`, tests/security/test_inherited_config_env.py)
_CONFIG_VARS = (b"XDG_CONFIG_HOME", b"PIP_CONFIG_FILE", b"PYTHONUSERBASE", b"PYTHONHOME",
                b"APT_CONFIG", b"GCC_EXEC_PREFIX", b"PYTHONPYCACHEPREFIX")  # fmt: skip
_CONFIG_LISTS = (b"XDG_CONFIG_DIRS", b"PYTHONPATH", b"COMPILER_PATH", b"PERL5LIB", b"PERLLIB")
_CONFIG_SEEN: dict[tuple[bytes, bytes], bytes | None] = {}


def _foreign_place(value: bytes) -> bool:
    """Whether another user could change what is at `value` (its nearest existing ancestor,
    for one not made yet): remedy.fileread.untrusted_tree's rule, the entries not walked."""
    from remedy.fileread import untrusted_tree

    path = os.fsdecode(value)
    if not path.startswith("/"):
        return True  # relative: whatever the working directory holds
    q = os.path.normpath(path)
    while not os.path.lexists(q) and q != "/":
        q = os.path.dirname(q)
    try:
        return untrusted_tree(q, walk=False) is not None
    except OSError:
        return True


def _pip_paths(environ: Mapping[bytes, bytes]) -> list[bytes]:
    """PIP_* variables: pip's options from the environment, any of which may name a local
    place (PIP_FIND_LINKS=DIR of wheels, PIP_CONSTRAINT, PIP_CACHE_DIR, PIP_LOG...)."""
    return [k for k, v in environ.items() if k.startswith(b"PIP_") and k not in _CONFIG_VARS]


def _pip_places(value: bytes) -> list[bytes]:
    """The places a PIP_* value can name, as pip reads them in a step (run from `/`): each
    word; a `file:` URL's path (percent-decoded, `localhost` host); `~`/`~user` expanded
    (pip expands find-links); a relative word from `/`. Only `/` and `file:` words used to
    be looked at: `PIP_FIND_LINKS=tmp/x/wheels` (pip takes an existing relative path from its
    working directory) or `~sglang/wheels` gave root's pip another user's wheels, and
    `file:///home/u%73er/w` was judged by `/home`. A remote URL (`https://…`) is no place."""
    from urllib.parse import unquote, urlsplit

    out = []
    for w in value.split():
        s = os.fsdecode(w)
        try:
            u = urlsplit(s)
        except ValueError:
            u = None
        if u is not None and (u.scheme == "file" or u.scheme.endswith("+file")):
            s = unquote(u.path) if u.netloc in ("", "localhost") else "/"
        elif u is not None and u.scheme and "://" in s:
            continue  # a remote index or link: whoever set root's environment chose it
        out.append(os.fsencode(os.path.join("/", os.path.expanduser(s))))
    return out


def own_config_env(environ: Mapping[bytes, bytes]) -> dict[bytes, bytes | None]:
    """Replacements for inherited variables that name another user's configuration or code
    (None: leave it out): a list keeps its other entries. See _CONFIG_VARS."""
    out: dict[bytes, bytes | None] = {}
    plat = environ.get(b"PYTHONPLATLIBDIR")
    if plat and (b"/" in plat or plat in (b".", b"..")):
        out[b"PYTHONPLATLIBDIR"] = None  # `../../DIR`: Python's standard library from DIR
    for k in (*_CONFIG_VARS, *_CONFIG_LISTS, *_pip_paths(environ)):
        v = environ.get(k)
        if not v:
            continue
        key = (k, v)
        if key not in _CONFIG_SEEN:
            if k.startswith(b"PIP_") and k not in _CONFIG_VARS:
                new = None if any(_foreign_place(p) for p in _pip_places(v)) else v
            elif k in _CONFIG_LISTS:
                parts = v.split(b":")
                kept = [x for x in parts if x and not _foreign_place(x)]
                new = v if kept == parts else (b":".join(kept) or None)
            else:
                new = None if _foreign_place(v) else v
            _CONFIG_SEEN[key] = new
        if _CONFIG_SEEN[key] != v:
            out[k] = _CONFIG_SEEN[key]
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
