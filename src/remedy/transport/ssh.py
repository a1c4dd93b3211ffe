"""SSHTransport: asyncssh behind the Transport seam.

Choices and why:
- One connection per host, at most 8 channels on it at once (sshd's MaxSessions default is
  10; past it channels fail with "open failed").
- Host keys are strict. An unknown key is refused unless accept_new, which records it the way
  OpenSSH's StrictHostKeyChecking=accept-new does. A changed key is always refused.
- A timed-out command is killed on the host. sshd puts each session in its own process group
  (setsid) but ignores channel close and refuses "signal" requests without privsep, so every
  command first reports its pid on stderr (a marker line the transport removes) and a timeout
  sends `kill -9 -PGID` over a fresh channel.
- env is passed with env(1) in the command line, not as SSH "env" requests, which sshd drops
  unless AcceptEnv allows them.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import os
import re
import shlex
import stat
import time
from collections import deque
from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path, PurePath
from typing import Any

import asyncssh

from remedy.errors import (
    CommandTimeout,
    ConnectionDropped,
    HostKeyRejected,
    HostUnreachable,
    IdentityFileError,
    InputError,
    OutputTooLarge,
    Refused,
    TransportError,
)
from remedy.syspath import BASE_PATH, SH_OWN_PATH, own_path_from
from remedy.transport.base import (
    OUTPUT_CAP,
    SESSION_PATH_VAR,
    STDERR_CAP,
    SYSTEM_PATH,
    Command,
    CommandResult,
    LineSplitter,
    describe,
    signal_number,
    signal_status,
    with_session_path,
)
from remedy.transport.quote import command_line, join, quote_bytes
from remedy.transport.stream import OutputStream

MAX_CHANNELS = 8
"""Channels per connection; below sshd's default MaxSessions 10, leaving room for a kill."""
# set while SSHTransport judges the host's PATH (its own command runs with BASE_PATH)
_JUDGING: contextvars.ContextVar[bool] = contextvars.ContextVar("remedy_judging", default=False)
# ProxyJump hops remedy opens itself (a longer chain is a loop in the config)
MAX_JUMPS = 8
# How long a kill may take. Generous: on a loaded host (CI runs three test processes on two
# cores) sshd can take seconds to deliver the pid line or open the kill's channel, and a kill
# given up leaves the command running after remedy stops. Still bounded: a half-dead
# connection must not hang remedy.
PID_WAIT_S = 5.0
KILL_WAIT_S = 15.0

_PID_MARK = b"\x1eremedy-pid "
_PID_RE = re.compile(rb"\x1eremedy-pid (\d+)\n")


def wrap_remote(line: bytes, *, merge_stderr: bool = False, path: str = SYSTEM_PATH) -> bytes:
    """The command line sent to sshd: report the pid on stderr, then exec the real command.

    The login shell execs sh, so the pid printed is the session leader sshd created with
    setsid(), i.e. the process group of everything the command starts.
    """
    # remedy's own tools from the system PATH, the session's kept as data (base.SYSTEM_PATH);
    # /bin/sh by its path: the login shell would find `sh` on the session's PATH. path: the
    # host's judged one (SSHTransport._own_tools_path: a /usr/local directory holding another
    # user's program is left out, remedy.syspath.SH_OWN_PATH)
    pre = (
        b'if [ -n "${PATH+x}" ]; then '
        + SESSION_PATH_VAR.encode()
        + b"=$PATH; export "
        + SESSION_PATH_VAR.encode()
        + b"; else unset "
        + SESSION_PATH_VAR.encode()
        + b"; fi; PATH="
        + quote_bytes(path.encode())
        + b"; export PATH; "
    )
    pre += b'printf "\\036remedy-pid %s\\n" "$$" >&2; '
    if merge_stderr:
        pre += b"exec 2>&1; "
    pre += b'exec "$@"'
    return b"exec /bin/sh -c " + quote_bytes(pre) + b" sh " + line


@dataclass
class SSHTarget:
    """`[user@]host[:port]` or an ssh_config alias, as typed by the user."""

    host: str
    user: str | None = None
    port: int | None = None

    @classmethod
    def parse(cls, target: str) -> SSHTarget:
        """Errors name the target as typed (`user@` said "not a host: ''"); a port outside
        1-65535 or a host that starts with '-' is bad input (exit 2), not a DNS failure
        reported as "unreachable" (exit 4)."""
        given = target
        if not target or any(c.isspace() for c in target):
            raise InputError(f"not a host: {given!r}")
        user = None
        if "@" in target:
            user, target = target.rsplit("@", 1)
        port: int | None = None
        m = re.fullmatch(r"\[([^\]]+)\](?::([0-9]+))?", target)
        if m:
            host, p = m.group(1), m.group(2)
            port = int(p) if p else None
        elif target.count(":") == 1:
            host, p = target.split(":")
            if not re.fullmatch(r"[0-9]+", p):  # ASCII: `²`.isdigit() is True, int() fails
                raise InputError(f"bad port in {given!r}")
            port = int(p)
        else:
            host = target
        if port is not None and not 1 <= port <= 65535:
            raise InputError(f"bad port in {given!r}: a port is 1-65535")
        if not host or host.startswith("-"):
            raise InputError(
                f"not a host: {given!r}", hint="[user@]host[:port] or an ssh_config alias"
            )
        check_shell_safe(host, "host", given)
        if user:
            check_shell_safe(user, "user", given)
        return cls(host=host, user=user or None, port=port)


# what OpenSSH (9.6, valid_hostname/valid_ruser) refuses in a host or user name: the config's
# ProxyCommand gets them through %h/%r, and `ProxyCommand bash -c 'exec 3<>/dev/tcp/%h/%p…'`
# (or `ssh jump nc %h %p`, a shell on the jump host) ran `$(…)` in a host name as root
_SHELL_CHARS = frozenset("'`\"$\\;&<>|(){}")


def check_shell_safe(name: str, what: str, given: str | None = None) -> None:
    """InputError for a host or user name holding a shell character or starting with '-'."""
    if name.startswith("-") or any(c in _SHELL_CHARS for c in name):
        raise InputError(
            f"not a {what} name: {given if given is not None else name!r}: it holds shell "
            f"characters (a ProxyCommand's %h/%r would pass them to a shell)",
            hint="OpenSSH refuses these too; use the address, or an ssh_config alias",
        )


# --------------------------------------------------------------------------------------------
# Known hosts
# --------------------------------------------------------------------------------------------


_INCLUDE = re.compile(r"^\s*include(?:\s*=\s*|\s+)(.+)$", re.IGNORECASE | re.MULTILINE)


def _include_words(text: str) -> list[str]:
    """The words of every `Include` line, as asyncssh's SSHConfig.parse splits them (shlex
    without comments, `Include=x`, a quoted `"Include"`), and as the old regex read them: a
    line the regex missed (`"Include" FILE`) was included by asyncssh unchecked."""
    out: list[str] = []
    for line in text.splitlines():
        line = line.strip()
        if not line or line[0] == "#":
            continue
        try:
            words = shlex.split(line)
        except ValueError:
            continue  # asyncssh refuses the file: no connection
        args: list[str] = []
        option, allow_equal = "", True
        for i, arg in enumerate(words, 1):  # asyncssh 2.x config.py, SSHConfig.parse
            if arg.startswith("="):
                if len(arg) > 1:
                    args.append(arg[1:])
            elif not allow_equal:
                args.extend(words[i - 1 :])
                break
            elif arg.endswith("="):
                args.append(arg[:-1])
            elif "=" in arg:
                args.extend(arg.split("=", 1))
            else:
                args.append(arg)
            if i == 1 and args:
                option = args.pop(0).lower()
                allow_equal = option in ("host", "match")
        if option == "include":
            out += args
    for m in _INCLUDE.finditer(text):
        try:
            out += shlex.split(m.group(1), comments=True)
        except ValueError:
            out += m.group(1).split()
    return list(dict.fromkeys(out))


def _included_files(word: str, config_path: str) -> list[str]:
    """The files one Include word names: those asyncssh reads (pathlib's glob from the
    anchor, or from ~/.ssh: hidden names and `**` at any depth, which glob.glob skips), and
    those a relative word names beside the including file, or the word itself when nothing
    matches (a file made later is checked then)."""
    import glob
    from pathlib import Path

    out: list[str] = []
    path = Path(word).expanduser()
    base, pattern = (
        (Path(path.anchor), str(Path(*path.parts[1:])))
        if path.anchor
        else (Path("~", ".ssh").expanduser(), word)
    )
    # an unreadable or bad pattern: asyncssh fails the same way (no connection)
    with contextlib.suppress(OSError, ValueError, NotImplementedError):
        out += [str(p) for p in base.glob(pattern) if p.is_file()]
    w = os.path.expanduser(word)
    bases = [w] if os.path.isabs(w) else [
        os.path.join(os.path.dirname(config_path), w), os.path.expanduser(f"~/.ssh/{w}")
    ]  # fmt: skip
    for b in bases:
        out += sorted(glob.glob(b, recursive=True)) or [b]
    return list(dict.fromkeys(out))


def untrusted_config(path: str, depth: int = 0) -> str | None:
    """Why the ssh config at `path` (or a file its `Include` names, at any depth) is one
    another user could change, or None. An ssh config is code (`ProxyCommand`), so it is held
    to remedy.fileread.untrusted_tree: a HOME that `sudo` kept (another user's), a config
    in /tmp, a link another user planted. A missing file is None (ssh skips it)."""
    from remedy.fileread import read_limited, untrusted_tree

    why = untrusted_tree(path)
    if why or not os.path.isfile(path):
        return why
    if depth > 16:
        return f"{path}: Include nested more than 16 deep"
    try:
        text = read_limited(path, 1 << 20).decode("utf-8", "replace")
    except (OSError, ValueError) as exc:
        return f"{path} cannot be read ({exc})"
    for w in _include_words(text):
        for f in _included_files(w, path):
            why = untrusted_config(f, depth + 1)
            if why:
                return why
    return None


def known_hosts_name(host: str, port: int | None) -> str:
    """How OpenSSH writes a host in known_hosts: `host`, or `[host]:port` off port 22."""
    if port and port != 22:
        return f"[{host}]:{port}"
    return host


@dataclass
class KnownHosts:
    """The known_hosts files in force for one host, with line numbers for messages."""

    user_files: list[str]
    global_files: list[str] = field(default_factory=list)
    # file -> why its keys were not taken (another user could change it)
    skipped: dict[str, str] = field(default_factory=dict)

    def entries(self) -> list[tuple[str, int, str]]:
        """(file, line number, line) for every non-comment line of every readable file that
        only root or remedy's user can change: its keys are the hosts root trusts, and an
        inventory (a shared file) names it; a file, a directory above it or a link on its
        path another user owns would let them choose those keys (remedy.fileread.untrusted_tree,
        as for the ssh config). Such a file is left out, and named in ``skipped``."""
        from remedy.fileread import TooLarge, read_limited, untrusted_tree

        out: list[tuple[str, int, str]] = []
        for path in [*self.user_files, *self.global_files]:
            why = untrusted_tree(path, walk=False)
            if why:
                self.skipped[path] = why
                continue
            try:
                if not stat.S_ISREG(os.stat(path).st_mode):
                    continue  # a FIFO or device named as known_hosts: not ours to drain
                # an inventory may name any file (a big log): read up to the file cap
                text = read_limited(path).decode("utf-8", errors="replace")
            except (OSError, TooLarge):
                continue
            for n, line in enumerate(text.splitlines(), 1):
                s = line.strip()
                if s and not s.startswith("#"):
                    out.append((path, n, s))
        return out

    def as_asyncssh(self) -> asyncssh.SSHKnownHosts:
        """All trusted entries as one asyncssh object (never falls back to asyncssh defaults)."""
        good: list[str] = []
        for _path, _n, line in self.entries():
            try:
                asyncssh.import_known_hosts(line)
            except (ValueError, asyncssh.KeyImportError):
                continue
            good.append(line)
        return asyncssh.import_known_hosts("\n".join(good) + "\n" if good else "")

    def matching(self, host: str, addr: str, port: int | None) -> list[tuple[str, int, Any]]:
        """(file, line, key) of the trusted keys recorded for this host."""
        p = port if port and port != 22 else None
        found: list[tuple[str, int, Any]] = []
        for path, n, line in self.entries():
            try:
                kh = asyncssh.import_known_hosts(line)
            except (ValueError, asyncssh.KeyImportError):
                continue
            trusted = kh.match(host, addr, p)[0]
            for key in trusted:
                found.append((path, n, key))
        return found

    def record(self, host: str, port: int | None, key: Any) -> str:
        """Append a key in OpenSSH format to the first user file; returns `file:line`."""
        if not self.user_files:
            raise HostKeyRejected(
                f"cannot record the host key of {host}: no UserKnownHostsFile to write to"
            )
        path = Path(self.user_files[0]).expanduser()
        from remedy.fileread import untrusted_tree

        # root appends here: a link another user planted (a HOME `sudo` kept) would take the
        # line into any file; the file, else the nearest directory that exists, is checked
        near = str(path.absolute())
        while not os.path.lexists(near) and near != "/":
            near = os.path.dirname(near)
        why = untrusted_tree(near, walk=False)
        if why:
            raise HostKeyRejected(
                f"cannot record the host key of {host} in {path}: {why}",
                hint="a known_hosts file only root or you can change (under sudo, `sudo -H`)",
            )
        why = _not_known_hosts(path)
        if why:
            raise HostKeyRejected(
                f"cannot record the host key of {host} in {path}: {why}",
                hint="name an existing known_hosts file (an inventory's remedy_known_hosts or "
                "UserKnownHostsFile), or leave it out: ~/.ssh/known_hosts is made if missing",
            )
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        fields = key.export_public_key("openssh").decode().split()
        line = f"{known_hosts_name(host, port)} {fields[0]} {fields[1]}\n"
        old = path.read_bytes() if path.exists() else b""
        with open(path, "ab") as f:
            if old and not old.endswith(b"\n"):
                f.write(b"\n")
            f.write(line.encode())
            f.flush()
            os.fsync(f.fileno())
        if not old:
            os.chmod(path, 0o600)
        lineno = (old.count(b"\n") + (0 if not old or old.endswith(b"\n") else 1)) + 1
        return f"{path}:{lineno}"


def _not_known_hosts(path: Path) -> str | None:
    """Why root may not append a host key to `path`, or None. An inventory (a shared file)
    names it: only a regular file every line of which is a known_hosts entry or a comment
    takes the line, and only ~/.ssh/known_hosts is created when missing, as ssh does (a new
    /etc/sudoers.d/x holding a key line breaks sudo; /dev/sda opened for append is a disk)."""
    from remedy.fileread import TooLarge, read_limited

    try:
        st = os.stat(path)
    except FileNotFoundError:
        if os.path.abspath(path) == os.path.abspath(os.path.expanduser("~/.ssh/known_hosts")):
            return None
        return "it does not exist (remedy creates only ~/.ssh/known_hosts)"
    except OSError as exc:
        return f"it cannot be checked ({exc.strerror})"
    if not stat.S_ISREG(st.st_mode):
        return "it is not a regular file"
    try:
        text = read_limited(path).decode("utf-8")
    except (OSError, TooLarge, UnicodeDecodeError) as exc:
        return f"it cannot be read as text ({exc})"
    for n, line in enumerate(text.splitlines(), 1):
        if line.strip() and not line.lstrip().startswith("#") and not _known_hosts_entry(line):
            return f"it is not a known_hosts file (line {n})"
    return None


def _known_hosts_entry(line: str) -> bool:
    """`[@marker] hosts keytype base64-key [comment]` whose key blob names that key type
    (SSH wire format: a length-prefixed type string first). asyncssh alone accepts a crontab
    line (an unknown key type is skipped, not refused)."""
    import base64
    import binascii

    f = line.split()
    if f and f[0].startswith("@"):
        f = f[1:]
    if len(f) < 3:
        return False
    try:
        blob = base64.b64decode(f[2], validate=True)
    except (binascii.Error, ValueError):
        return False
    n = int.from_bytes(blob[:4], "big")
    return len(blob) > 4 + n and blob[4 : 4 + n] == f[1].encode()


class _HostKeyPolicy(asyncssh.SSHClient):
    """Called by asyncssh only for a key not already trusted: unknown or changed."""

    def __init__(self, owner: SSHTransport) -> None:
        self._owner = owner

    def validate_host_public_key(self, host: str, addr: str, port: int, key: Any) -> bool:
        o = self._owner
        kh = o._known_hosts
        assert kh is not None
        fp = key.get_fingerprint("sha256")
        name = known_hosts_name(host, port)
        known = kh.matching(host, addr, port)
        if known:
            where = ", ".join(f"{f}:{n}" for f, n, _ in known)
            o._key_problem = (
                f"REMOTE HOST KEY FOR {name} HAS CHANGED ({key.get_algorithm()} {fp}); "
                f"refusing to connect (accept-new never overrides a changed key). "
                f"The recorded key is at {where}. If the host was really reinstalled, remove "
                f"that line (ssh-keygen -R '{name}' -f {known[0][0]}) after checking the new "
                f"fingerprint out of band."
            )
            return False
        if o.accept_new:
            try:
                o.recorded_key = kh.record(host, port, key)
            except (OSError, HostKeyRejected) as exc:
                o._key_problem = f"cannot record the host key of {name}: {exc}"
                return False
            return True
        files = ", ".join(kh.user_files) or "(none)"
        if kh.skipped:  # say why a file that may hold the key was not read
            files += "; not read: " + "; ".join(f"{f} ({w})" for f, w in kh.skipped.items())
        o._key_problem = (
            f"unknown host key for {name} ({key.get_algorithm()} {fp}); not in {files}. "
            f"Check the fingerprint, then trust it with --accept-new (records it in "
            f"known_hosts, like ssh -o StrictHostKeyChecking=accept-new)."
        )
        return False


# AES-GCM first: OpenSSL does it in one call a packet with AES-NI, where asyncssh's
# chacha20-poly1305 (its default first choice) builds two cipher contexts a packet in Python;
# the rest of asyncssh's list follows, so a server without AES-GCM still connects. Compression
# stays off first (asyncssh's default too): fact output is small, zlib only costs CPU on both
# ends. Key exchange is left as asyncssh orders it (post-quantum hybrids first, then
# curve25519): cheap, and not a choice to weaken for speed.
# asyncssh's own default keys (`load_default_keypairs`, used whenever no key is named) are
# `~/.ssh/id_*` of $HOME, read by name with a plain open(): under `sudo` that is the invoking
# user's HOME, and uid 65534's `~/.ssh/id_ed25519` as a FIFO hung root's `remedy facts HOST`
# for ever (SIGTERM too), a link to /dev/zero took all its memory, and any key there would
# be root's identity. OpenSSH takes `~` from the passwd home. So remedy reads them itself:
# only where remedy.fileread.untrusted_tree passes (root's or remedy's user's, as known_hosts
# and the config), a regular file of at most IDENTITY_MAX bytes opened O_NONBLOCK and read
# from that descriptor; a `-cert.pub` the same way; no name is opened by asyncssh.
# The same for the keys a user names (the config's IdentityFile/CertificateFile, an
# inventory's key, IdentitiesOnly's public keys: named_keypairs, named_identities) and the
# `KEY.pub`/`KEY-cert.pub` asyncssh opened beside them; and the agent socket
# (trusted_agent_path). tests/security/test_named_keys.py.
IDENTITY_MAX = 1 << 20  # a private key is a few KB
_DEFAULT_KEY_NAMES = (
    "id_ed25519_sk", "id_ecdsa_sk", "id_ed448", "id_ed25519", "id_ecdsa", "id_rsa", "id_dsa",
)  # fmt: skip


def key_file_problem(path: str) -> str | None:
    """Why remedy will not use the key file at path as root's, or None (also for a path that
    does not exist: the caller says whether that matters)."""
    from remedy.fileread import untrusted_tree

    try:
        if not os.path.lexists(path):
            return None
        why = untrusted_tree(path, walk=False)
        if why:
            return why
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError as exc:
        return exc.strerror or type(exc).__name__
    try:
        st = os.fstat(fd)
    finally:
        os.close(fd)
    if not stat.S_ISREG(st.st_mode):
        return "it is not a regular file"
    if st.st_size > IDENTITY_MAX:
        return f"it is {st.st_size} bytes, not a key"
    return None


def read_key_file(path: str) -> bytes | None:
    """The bytes of a key file remedy may use as root's, or None: trusted, regular, small."""
    from remedy.fileread import untrusted_tree

    try:
        if not os.path.lexists(path) or untrusted_tree(path, walk=False):
            return None
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        return None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or st.st_size > IDENTITY_MAX:
            return None
        chunks, left = [], IDENTITY_MAX + 1
        while left > 0:
            b = os.read(fd, left)
            if not b:
                break
            chunks.append(b)
            left -= len(b)
        data = b"".join(chunks)
        return None if len(data) > IDENTITY_MAX else data
    except OSError:
        return None
    finally:
        os.close(fd)


def _key_item(path: str, passphrase: Any, *, strict: bool) -> Any:
    """One private key file as asyncssh's load_keypairs takes it, read by read_key_file:
    the key, or (key, its `-cert.pub`), or None (missing, or encrypted and no passphrase).
    strict: a file that exists but is refused is an IdentityFileError naming it (a key the
    user named), else skipped (the defaults)."""
    data = read_key_file(path)
    if data is None:
        why = key_file_problem(path) if strict else None
        if why:
            raise IdentityFileError(
                f"the identity file {path} cannot be used: {why}",
                hint="an identity file must be a regular file that only root (or you) can "
                "change, like OpenSSH's own checks; check IdentityFile in the ssh config or "
                "ansible_ssh_private_key_file in the inventory",
            )
        return None
    try:
        key = asyncssh.import_private_key(data, passphrase)
    except (asyncssh.KeyImportError, asyncssh.KeyEncryptionError, ValueError, TypeError):
        return None  # encrypted without a passphrase (as asyncssh: ignored), or no key
    cert_data = read_key_file(path + "-cert.pub")
    cert = None
    if cert_data is not None:
        with contextlib.suppress(asyncssh.KeyImportError, ValueError, TypeError):
            cert = asyncssh.import_certificate(cert_data)
    return (key, cert) if cert is not None else key


def default_keypairs(passphrase: Any = None, certlist: Any = ()) -> list[Any]:
    """asyncssh's load_default_keypairs, each file read by read_key_file (see above)."""
    items = [
        _key_item(os.path.join(os.path.expanduser("~"), ".ssh", n), passphrase, strict=False)
        for n in _DEFAULT_KEY_NAMES
    ]
    items = [i for i in items if i is not None]
    certs = _certificates(certlist)
    return list(_load_keypairs(items, passphrase, certs)) if items else []


def _is_path(x: Any) -> bool:
    return isinstance(x, (str, PurePath))


def _certificates(certlist: Any) -> Any:
    """A CertificateFile list with every named file read by read_key_file (a refused or
    missing one is left out, as asyncssh leaves out a missing one)."""
    if _is_path(certlist) or isinstance(certlist, bytes):
        certlist = [certlist]
    out: list[Any] = []
    for c in certlist or ():
        if _is_path(c):
            data = read_key_file(os.path.expanduser(str(c)))
            if data is not None:
                with contextlib.suppress(asyncssh.KeyImportError, ValueError, TypeError):
                    out.append(asyncssh.import_certificate(data))
        else:
            out.append(c)
    return out


def named_keypairs(
    keylist: Any,
    passphrase: Any = None,
    certlist: Any = (),
    skip_public: bool = False,
    ignore_encrypted: bool = False,
    unsafe_skip_rsa_key_validation: Any = None,
    loop: Any = None,
) -> list[Any]:
    """asyncssh's load_keypairs for the keys a user names (the ssh config's IdentityFile and
    CertificateFile, an inventory's key): asyncssh opens each by name, and `KEY.pub` and
    `KEY-cert.pub` beside it, with a plain open(): a FIFO hung root, /dev/zero took all its
    memory, another user's file became root's identity. Each path is read here by
    read_key_file; a named key that exists and is refused is an error naming it."""
    if _is_path(keylist) or isinstance(keylist, bytes):
        keylist = [keylist]
    items: list[Any] = []
    for k in keylist or ():
        if _is_path(k):
            item = _key_item(os.path.expanduser(str(k)), passphrase, strict=True)
            if item is not None:
                items.append(item)
        else:
            items.append(k)
    certs = _certificates(certlist)
    if not items:
        return []
    return list(
        _load_keypairs(
            items,
            passphrase,
            certs,
            skip_public,
            ignore_encrypted,
            unsafe_skip_rsa_key_validation,
            loop=loop,
        )  # fmt: skip
    )


def _public_data(path: str) -> bytes | None:
    """The public blob a key file names (a certificate, a public key, or the private key's
    own), read by read_key_file; None when there is none."""
    data = read_key_file(path)
    if data is None:
        return None
    for load in (asyncssh.import_certificate, asyncssh.import_public_key):
        with contextlib.suppress(asyncssh.KeyImportError, ValueError, TypeError):
            return bytes(load(data).public_data)
    with contextlib.suppress(
        asyncssh.KeyImportError, asyncssh.KeyEncryptionError, ValueError, TypeError
    ):
        return bytes(asyncssh.import_private_key(data).public_data)
    return None


def named_identities(keylist: Any, skip_private: bool = False) -> list[Any]:
    """asyncssh's load_identities (IdentitiesOnly: which agent keys may be offered), each
    named file read by read_key_file, `KEY.pub` when the key itself is encrypted."""
    if _is_path(keylist) or isinstance(keylist, bytes):
        keylist = [keylist]
    out: list[Any] = []
    for k in keylist or ():
        if _is_path(k):
            p = os.path.expanduser(str(k))
            blob = _public_data(p) or _public_data(p + ".pub")
            if blob is not None:
                out.append(blob)
        elif isinstance(k, bytes):
            out.append(k)
        else:
            out.append(k.public_data)
    return out


def default_identities() -> list[bytes]:
    """asyncssh's load_default_identities (`~/.ssh/id_*.pub`, `-cert.pub`), read by
    read_key_file."""
    out: list[bytes] = []
    for n in _DEFAULT_KEY_NAMES:
        p = os.path.join(os.path.expanduser("~"), ".ssh", n)
        for name in (p + "-cert.pub", p + ".pub"):
            blob = _public_data(name)
            if blob is not None:
                out.append(blob)
    return out


def default_x509_trust() -> dict[str, Any]:
    """asyncssh's X.509 defaults, `~/.ssh/ca-bundle.crt` and the `~/.ssh/crt` hash dir of
    $HOME, as connection options: asyncssh opened the bundle by name with a plain open()
    whenever `os.access` said readable, so under sudo uid 65534's FIFO there hung root's
    `remedy facts HOST` for ever (SIGTERM too), and its certificates would be root's trusted
    CAs. The bundle is read by read_key_file (trusted, regular, at most IDENTITY_MAX), the
    directory used only where untrusted_tree passes it; else neither."""
    from remedy.fileread import untrusted_tree

    ssh_dir = os.path.join(os.path.expanduser("~"), ".ssh")
    crt = os.path.join(ssh_dir, "crt")
    try:
        paths = [crt] if os.path.isdir(crt) and not untrusted_tree(crt) else []
    except OSError:
        paths = []
    return {
        "x509_trusted_certs": read_key_file(os.path.join(ssh_dir, "ca-bundle.crt")),
        "x509_trusted_cert_paths": paths,
    }


def pkcs11_problem(provider: str) -> str | None:
    """Why remedy will not let asyncssh load the ssh config's PKCS11Provider, or None.

    asyncssh hands it to python-pkcs11, which dlopen()s it in remedy's own process: the
    library's constructors run as root before any token is asked, so it is code, held to the
    rule of the keys and the config (remedy.fileread.untrusted_tree). A name without a `/`
    would be searched on the library path, and a missing file could be created by whoever
    can write where it is named: both refused."""
    from remedy.fileread import untrusted_tree

    if not os.path.isabs(provider):
        return "it is not an absolute path (the library search path would choose the file)"
    try:
        if not os.path.lexists(provider):
            return "it does not exist"
        why = untrusted_tree(provider, walk=False)
        if why:
            return why
        st = os.stat(provider)
    except OSError as exc:
        return exc.strerror or type(exc).__name__
    if not stat.S_ISREG(st.st_mode):
        return "it is not a regular file"
    return None


def trusted_agent_path(path: str) -> str | None:
    """The agent socket remedy may use, or None: SSH_AUTH_SOCK (or IdentityAgent) naming a
    socket another user owns, or one under a directory another user can change (a stale
    `/tmp/ssh-XXXX/agent.N` recreated by someone else), would have that user's agent choose
    root's keys and see each signature request (the server, the user) root makes. Owners
    allowed: root, remedy's user, and under sudo the user who ran it (`SUDO_UID`: `sudo -E`
    with one's own forwarded agent); every directory above is theirs and not writable by
    others (a root-owned sticky one above the socket's own directory is fine)."""
    if not path or path.lower() == "none":
        return None
    from remedy.fileread import foreign_link_chain

    p = os.path.abspath(os.path.expanduser(path))
    ok = {0, os.geteuid()}
    sudo_uid = os.environ.get("SUDO_UID", "")
    if os.geteuid() == 0 and sudo_uid.isdigit():
        ok.add(int(sudo_uid))
    try:
        if foreign_link_chain(p):
            return None
        real = os.path.realpath(p)
        st = os.stat(real)
        if not stat.S_ISSOCK(st.st_mode) or st.st_uid not in ok:
            return None
        cur, first = os.path.dirname(real), True
        while True:
            st = os.stat(cur)
            sticky_root = st.st_uid == 0 and st.st_mode & stat.S_ISVTX
            if st.st_uid not in ok or (st.st_mode & 0o022 and (first or not sticky_root)):
                return None
            if cur == "/":
                return p
            cur, first = os.path.dirname(cur), False
    except OSError:
        return None


_load_keypairs = asyncssh.load_keypairs
asyncssh.connection.load_default_keypairs = default_keypairs  # type: ignore[attr-defined]
asyncssh.connection.load_keypairs = named_keypairs  # type: ignore[attr-defined]
asyncssh.connection.load_identities = named_identities  # type: ignore[attr-defined]
asyncssh.connection.load_default_identities = default_identities  # type: ignore[attr-defined]


FAST_CIPHERS = (
    "aes128-gcm@openssh.com",
    "aes256-gcm@openssh.com",
    "chacha20-poly1305@openssh.com",
    "aes128-ctr",
    "aes192-ctr",
    "aes256-ctr",
)


def fast_algorithms(opts: asyncssh.SSHClientConnectionOptions) -> dict[str, Any]:
    """asyncssh.connect arguments for cheaper crypto, only where ssh_config chose nothing:
    a user's Ciphers or Compression line always wins."""
    out: dict[str, Any] = {}
    if not opts.config.get("Ciphers"):
        out["encryption_algs"] = list(FAST_CIPHERS)
    if opts.config.get("Compression") is None:
        out["compression_algs"] = ["none"]
    return out


# --------------------------------------------------------------------------------------------
# Sessions
# --------------------------------------------------------------------------------------------


class _Session(asyncssh.SSHClientSession):  # type: ignore[type-arg]
    """Collects one channel's output; knows whether it ended with a status or was cut off."""

    def __init__(self, *, lines: bool = False) -> None:
        self.out = bytearray()
        self.err = bytearray()
        self.pid: int | None = None
        self.pid_seen = asyncio.Event()
        self.exit_status: int | None = None
        self.exit_signal: str | None = None
        self.closed = asyncio.Event()
        self.lost: Exception | None = None
        self.lines: deque[bytes] | None = deque() if lines else None
        self.overflow: str | None = None
        self.more = asyncio.Event()
        self._splitter = LineSplitter()
        self._errbuf = bytearray()

    def data_received(self, data: bytes, datatype: int | None) -> None:
        if datatype == asyncssh.EXTENDED_DATA_STDERR:
            self._stderr(data)
        elif self.lines is not None:
            self.lines.extend(self._splitter.feed(data))
            self.more.set()
        else:
            self.out += data
            if len(self.out) > OUTPUT_CAP:
                self._overflow(f"stdout past {OUTPUT_CAP >> 20} MiB")

    def _overflow(self, what: str) -> None:
        """Stop keeping output; run() kills the command and raises OutputTooLarge."""
        self.overflow = what
        del self.out[OUTPUT_CAP:]
        del self.err[STDERR_CAP:]
        self.closed.set()

    def _stderr(self, data: bytes) -> None:
        if self.pid is not None:
            self.err += data
            if len(self.err) > STDERR_CAP:
                self._overflow(f"stderr past {STDERR_CAP >> 20} MiB")
            return
        self._errbuf += data
        m = _PID_RE.search(self._errbuf)
        if m:
            self.pid = int(m.group(1))
            self.pid_seen.set()
            self.err += self._errbuf[: m.start()] + self._errbuf[m.end() :]
            self._errbuf.clear()
        elif _PID_MARK[:1] not in self._errbuf and len(self._errbuf) > 4096:
            self.err += self._errbuf
            self._errbuf.clear()

    def exit_status_received(self, status: int) -> None:
        self.exit_status = status

    def exit_signal_received(self, signal: str, core_dumped: bool, msg: str, lang: str) -> None:
        self.exit_signal = signal

    def connection_lost(self, exc: Exception | None) -> None:
        self.lost = exc
        if self.pid is None and self._errbuf:
            self.err += self._errbuf
            self._errbuf.clear()
        if self.lines is not None:
            self.lines.extend(self._splitter.tail())
        self.closed.set()
        self.more.set()

    @property
    def finished(self) -> bool:
        """Ended with an exit status or signal (not cut off)."""
        return self.exit_status is not None or self.exit_signal is not None

    def status(self) -> int:
        if self.exit_status is not None:
            return self.exit_status
        return signal_status(signal_number(self.exit_signal))


# --------------------------------------------------------------------------------------------
# Transport
# --------------------------------------------------------------------------------------------


class SSHTransport:
    """Commands and files on one host over one SSH connection."""

    # a real host: fact collection may run its main batch with the host agent (issue 18)
    facts_agent = True

    def __init__(
        self,
        target: str,
        *,
        ssh_config: str | None = None,
        accept_new: bool = False,
        connect_timeout: float = 10.0,
        max_channels: int = MAX_CHANNELS,
        client_keys: list[str] | None = None,
        known_hosts: list[str] | None = None,
        username: str | None = None,
        port: int | None = None,
    ) -> None:
        t = SSHTarget.parse(target)
        if username:
            check_shell_safe(username, "user")
        self.target = target
        self.host = target
        self._t = t
        self._ssh_config = ssh_config
        self.accept_new = accept_new
        self.connect_timeout = connect_timeout
        self._client_keys = client_keys
        self._known_hosts_override = known_hosts
        self._username = username or t.user
        self._port = port or t.port
        self._sem = asyncio.Semaphore(max_channels)
        self._conn: asyncssh.SSHClientConnection | None = None
        self._conn_lock = asyncio.Lock()
        self._known_hosts: KnownHosts | None = None
        self._key_problem: str | None = None
        self.recorded_key: str | None = None
        self._closed = False
        self._own_path: str | None = None
        self._own_path_lock = asyncio.Lock()

    # -- connection ---------------------------------------------------------------------

    def _options(self) -> asyncssh.SSHClientConnectionOptions:
        path = self._ssh_config or os.path.expanduser("~/.ssh/config")
        # asyncssh looks for the default config again by name: one that was not there when
        # it was checked (another user's ~/.ssh, under sudo) could be there by then, so it
        # is told which file to read, or none (tests/security/test_ssh_config_appears.py)
        there = bool(self._ssh_config) or os.path.lexists(path)
        why = untrusted_config(path)
        if why:
            raise Refused(
                f"refusing ssh config {path}: {why}; its ProxyCommand would run as "
                f"{'root' if os.geteuid() == 0 else 'you'}",
                hint="a config only root or you can change (OpenSSH refuses it too: bad owner "
                "or permissions); under sudo, `sudo -H` gives root its own HOME",
            )
        cfg: Any = [path] if there else None
        kwargs: dict[str, Any] = {"config": cfg, "host": self._t.host, **default_x509_trust()}
        if self._username:
            kwargs["username"] = self._username
        if self._port:
            kwargs["port"] = self._port
        try:
            opts = asyncssh.SSHClientConnectionOptions(**kwargs)
            agent = opts.agent_path
            if agent and trusted_agent_path(agent) is None:
                # SSH_AUTH_SOCK / IdentityAgent of another user: no agent (trusted_agent_path)
                opts = asyncssh.SSHClientConnectionOptions(**kwargs, agent_path=None)
        except (OSError, ValueError) as exc:
            raise InputError(
                f"cannot use ssh config {self._ssh_config or '~/.ssh/config'}: {exc}"
            ) from None
        provider = opts.pkcs11_provider
        why = pkcs11_problem(provider) if provider else None
        if provider and why:
            raise IdentityFileError(
                f"the PKCS11Provider {provider} cannot be used: {why}",
                hint="asyncssh loads that library into remedy's process: name it by an "
                "absolute path to a file only root (or you) can change, like /usr/lib/...",
            )
        return opts

    def _resolve_known_hosts(self, opts: asyncssh.SSHClientConnectionOptions) -> KnownHosts:
        if self._known_hosts_override is not None:
            return KnownHosts([os.path.expanduser(p) for p in self._known_hosts_override])
        configured = opts.known_hosts
        user: list[str] = []
        glob: list[str] = []
        if isinstance(configured, (list, tuple)) and configured:
            cfg_user = opts.config.get("UserKnownHostsFile", ())
            user = [os.path.expanduser(str(p)) for p in cfg_user if str(p).lower() != "none"]
            glob = [os.path.expanduser(str(p)) for p in configured if str(p) not in cfg_user]
        if not user:
            user = [os.path.expanduser("~/.ssh/known_hosts")]
        if not glob:
            glob = ["/etc/ssh/ssh_known_hosts", "/etc/ssh/ssh_known_hosts2"]
        return KnownHosts(user, glob)

    async def _open_jumps(
        self, opts: asyncssh.SSHClientConnectionOptions, depth: int
    ) -> asyncssh.SSHClientConnection | None:
        """The ProxyJump chain the config names for this host, each hop opened by a
        transport of its own (its options, known_hosts, agent and key checks), or None.

        Left to asyncssh, a hop was `asyncssh.connect(hop, config=())`: the default
        `~/.ssh/config` instead of `--ssh-config` (under sudo the invoking user's, never
        checked: its ProxyCommand ran as root), and SSH_AUTH_SOCK and known_hosts as they
        came, past trusted_agent_path and KnownHosts."""
        spec = opts.tunnel
        if not isinstance(spec, str) or spec.strip().lower() in ("", "none"):
            return None
        if depth >= MAX_JUMPS:
            raise InputError(
                f"{self.target}: ProxyJump chains more than {MAX_JUMPS} hops (a loop in the "
                "ssh config?)"
            )
        conn: asyncssh.SSHClientConnection | None = None
        try:
            for hop in spec.split(","):
                t = SSHTransport(
                    hop.strip(),
                    ssh_config=self._ssh_config,
                    accept_new=self.accept_new,
                    connect_timeout=self.connect_timeout,
                )
                new = await t._connect(tunnel=conn, depth=depth + 1)
                if conn is not None:
                    new.set_tunnel(conn)  # closing the last hop closes the chain
                conn = new
        except BaseException:
            if conn is not None:
                conn.close()
            raise
        return conn

    async def _connect(
        self, *, tunnel: asyncssh.SSHClientConnection | None = None, depth: int = 0
    ) -> asyncssh.SSHClientConnection:
        """tunnel: the previous hop of a ProxyJump chain (its caller owns it); without it,
        the config's own ProxyJump for this host is opened here (_open_jumps)."""
        opts = self._options()
        own_jump = await self._open_jumps(opts, depth) if tunnel is None else None
        try:
            conn = await self._connect_via(opts, tunnel or own_jump)
        except BaseException:
            if own_jump is not None:
                own_jump.close()
            raise
        if own_jump is not None:
            conn.set_tunnel(own_jump)
        return conn

    async def _connect_via(
        self,
        opts: asyncssh.SSHClientConnectionOptions,
        tunnel: asyncssh.SSHClientConnection | None,
    ) -> asyncssh.SSHClientConnection:
        self._known_hosts = self._resolve_known_hosts(opts)
        self._key_problem = None
        kwargs: dict[str, Any] = {
            "options": opts,
            "known_hosts": self._known_hosts.as_asyncssh(),
            "client_factory": lambda: _HostKeyPolicy(self),
            "agent_forwarding": False,
            "x11_forwarding": False,
            # never asyncssh's own ProxyJump (_open_jumps): None is a direct connection
            "tunnel": tunnel,
            # only the config _options checked: with none loaded there, asyncssh's connect()
            # would look for ~/.ssh/config again by name
            "config": None,
            "connect_timeout": self.connect_timeout,
            "keepalive_interval": 10,
            "keepalive_count_max": 3,
        }
        if self._client_keys is not None:
            kwargs["client_keys"] = self._client_keys
        kwargs.update(fast_algorithms(opts))
        name = self.target
        last: Exception | None = None
        for attempt in range(3):
            try:
                return await asyncio.wait_for(
                    asyncssh.connect(self._t.host, **kwargs), self.connect_timeout + 1
                )
            except asyncssh.HostKeyNotVerifiable as exc:
                problem = self._key_problem or str(exc)
                hint = "a changed key is never accepted: check it out of band"
                if problem.startswith("unknown host key"):
                    port = f"-p {self._port} " if self._port and self._port != 22 else ""
                    hint = (
                        f"check the fingerprint, then either `ssh-keyscan {port}{shlex.quote(self._t.host)}"
                        " >> ~/.ssh/known_hosts` or run remedy once with --accept-new "
                        "(`remedy --accept-new ...`, records it)"
                    )
                raise HostKeyRejected(f"{name}: {problem}", hint=hint) from None
            except asyncssh.KeyExchangeFailed as exc:
                if self._known_hosts.matching(self._t.host, self._t.host, self._port):
                    raise HostKeyRejected(
                        f"{name}: no host key of a type recorded in known_hosts was offered "
                        f"({exc.reason}); treating it as a changed key"
                    ) from None
                raise TransportError(f"{name}: key exchange failed: {exc.reason}") from None
            except asyncssh.PermissionDenied as exc:
                raise TransportError(
                    f"{name}: authentication failed ({exc.reason})",
                    hint="check User/IdentityFile in the ssh config, or that ssh-agent holds a "
                    "key the host accepts",
                ) from None
            except (asyncio.TimeoutError, TimeoutError):
                raise HostUnreachable(
                    f"{name}: no SSH connection within {self.connect_timeout:g} s"
                ) from None
            except (asyncssh.ConnectionLost, asyncssh.DisconnectError) as exc:
                # sshd's MaxStartups drops handshakes under load: retry a little, then give up
                last = exc
                await asyncio.sleep(0.1 * (attempt + 1))
                continue
            except OSError as exc:
                raise HostUnreachable(f"{name}: cannot connect: {exc.strerror or exc}") from None
            except ValueError as exc:
                raise InputError(f"{name}: {exc}") from None
        raise HostUnreachable(f"{name}: connection dropped during the SSH handshake: {last}")

    async def connection(self) -> asyncssh.SSHClientConnection:
        """The host's one connection, opened on first use and reopened after a drop."""
        if self._closed:
            raise TransportError(f"{self.target}: transport is closed")
        async with self._conn_lock:
            conn = self._conn
            if conn is not None and not conn.is_closed():
                return conn
            self._conn = await self._connect()
            return self._conn

    async def _open(self, line: bytes, session: _Session) -> asyncssh.SSHClientChannel:  # type: ignore[type-arg]
        """Open a channel; retry briefly when sshd refuses one (MaxSessions race)."""
        delay = 0.05
        for attempt in range(8):
            conn = await self.connection()
            try:
                chan, _ = await conn.create_session(lambda: session, line, encoding=None)  # type: ignore[arg-type]
                return chan
            except asyncssh.ChannelOpenError as exc:
                if attempt == 7:
                    raise TransportError(
                        f"{self.target}: sshd refused a channel ({exc.reason}); is MaxSessions "
                        f"below {MAX_CHANNELS}?"
                    ) from None
                await asyncio.sleep(delay)
                delay = min(delay * 2, 0.5)
            except (asyncssh.ConnectionLost, asyncssh.DisconnectError, BrokenPipeError) as exc:
                self._conn = None
                if attempt >= 1:
                    raise ConnectionDropped(f"{self.target}: connection lost: {exc}") from None
        raise AssertionError("unreachable")

    async def _open_within(self, line: bytes, sess: _Session, timeout: float, what: Command) -> Any:
        """_open under the command's own timeout (a dead connection must not hang it)."""
        try:
            return await asyncio.wait_for(self._open(line, sess), timeout)
        except (asyncio.TimeoutError, TimeoutError):
            conn, self._conn = self._conn, None
            if conn is not None:
                conn.abort()
            raise ConnectionDropped(
                f"{self.target}: no channel within {timeout:g} s for {describe(what)!r} "
                f"(connection stalled); dropped it"
            ) from None

    async def _kill(self, pid: int) -> None:
        """Kill the process group of a timed-out command over a fresh channel."""
        script = 'kill -9 -"$1" 2>/dev/null || kill -9 "$1" 2>/dev/null; exit 0'
        line = join(["sh", "-c", script, "sh", str(pid)]).encode()
        sess = _Session()

        async def kill() -> None:
            chan = await self._open(line, sess)
            await sess.closed.wait()
            chan.close()

        # bounded: on a half-dead connection even opening a channel can wait forever
        with contextlib.suppress(Exception):
            await asyncio.wait_for(kill(), KILL_WAIT_S)

    async def _abort(self, chan: Any, sess: _Session) -> None:
        if sess.pid is None and not sess.closed.is_set():
            with contextlib.suppress(asyncio.TimeoutError, TimeoutError):
                await asyncio.wait_for(sess.pid_seen.wait(), PID_WAIT_S)
        chan.close()
        if sess.pid is not None and not sess.finished:
            await self._kill(sess.pid)

    async def _own_tools_path(self) -> str:
        """The PATH this host's commands run with, judged once (remedy.syspath.SH_OWN_PATH,
        run with the distribution's directories only): SYSTEM_PATH less a /usr/local
        directory holding another user's program, BASE_PATH when the judge says nothing."""
        if self._own_path is not None:
            return self._own_path
        if _JUDGING.get():
            return BASE_PATH  # the judge's own command
        async with self._own_path_lock:
            if self._own_path is None:
                token = _JUDGING.set(True)
                try:
                    r = await self.run(["sh", "-c", SH_OWN_PATH], timeout=30)
                finally:
                    _JUDGING.reset(token)
                self._own_path = own_path_from(r.text()) if r.exit_status == 0 else BASE_PATH
        return self._own_path

    # -- Transport API ------------------------------------------------------------------

    async def run(
        self,
        argv_or_script: Command,
        *,
        timeout: float,
        input: bytes | None = None,
        env: Mapping[str, str] | None = None,
    ) -> CommandResult:
        """Run on the host; CommandTimeout (remote process group killed), ConnectionDropped."""
        line = wrap_remote(
            command_line(argv_or_script, with_session_path(env)),
            path=await self._own_tools_path(),
        )
        async with self._sem:
            sess = _Session()
            start = time.monotonic()
            chan = await self._open_within(line, sess, timeout, argv_or_script)
            try:
                if input:
                    chan.write(input)
                chan.write_eof()
                left = max(timeout - (time.monotonic() - start), 0.001)
                await asyncio.wait_for(sess.closed.wait(), left)
            except (asyncio.TimeoutError, TimeoutError):
                await self._abort(chan, sess)
                raise CommandTimeout(
                    f"{self.target}: command ran past its {timeout:g} s timeout and was killed: "
                    f"{describe(argv_or_script)}"
                ) from None
            except BaseException:
                await asyncio.shield(self._abort(chan, sess))
                raise
            if sess.overflow:
                await asyncio.shield(self._abort(chan, sess))
                raise OutputTooLarge(
                    f"{self.target}: {describe(argv_or_script)} printed {sess.overflow}; "
                    "it was killed (remedy keeps a host command's output bounded)"
                )
            if not sess.finished:
                self._conn = None
                raise ConnectionDropped(
                    f"{self.target}: connection lost while running {describe(argv_or_script)!r}"
                    f" ({sess.lost or 'channel closed without an exit status'}); it may still "
                    f"be running on the host"
                )
            return CommandResult(
                sess.status(), bytes(sess.out), bytes(sess.err), time.monotonic() - start
            )

    async def put(self, path: str, data: bytes, *, mode: int = 0o600, timeout: float = 60) -> None:
        """Atomic write on the host: mktemp in the same dir, fsync, rename, fsync the dir."""
        r = await self.run(
            ["sh", "-c", PUT_SCRIPT, "sh", path, f"{mode:o}"], timeout=timeout, input=data
        )
        if r.exit_status != 0:
            raise file_error(path, r.stderr)

    async def get(self, path: str, *, timeout: float = 60) -> bytes:
        # a regular file only (a FIFO would block, a device never end), at most OUTPUT_CAP
        r = await self.run(
            [
                "sh",
                "-c",
                '[ -e "$1" ] || { echo "$1: No such file or directory" >&2; exit 1; }; '
                '[ -d "$1" ] && { echo "$1: Is a directory" >&2; exit 1; }; '
                '[ -f "$1" ] || { echo "$1: not a regular file" >&2; exit 1; }; '
                f'exec head -c {OUTPUT_CAP} -- "$1"',
                "sh",
                path,
            ],
            timeout=timeout,
        )
        if r.exit_status != 0:
            raise file_error(path, r.stderr)
        return r.stdout

    def stream(
        self, command: Command, *, timeout: float, env: Mapping[str, str] | None = None
    ) -> SSHStream:
        """Lines of stdout+stderr as they come; closing the stream kills the command."""
        return SSHStream(self, command, timeout=timeout, env=env)

    def fresh(self) -> SSHTransport:
        """A transport to the same host with the same settings whose first command opens a
        NEW connection: sshd then starts a new session, and PAM's pam_env reads
        /etc/environment again (it does so once per connection, when it opens). What a user's
        next `ssh host cmd` gets, after a run changed the login environment."""
        return SSHTransport(
            self.target,
            ssh_config=self._ssh_config,
            accept_new=self.accept_new,
            connect_timeout=self.connect_timeout,
            client_keys=self._client_keys,
            known_hosts=self._known_hosts_override,
            username=self._username,
            port=self._port,
        )

    async def close(self) -> None:
        self._closed = True
        conn, self._conn = self._conn, None
        if conn is not None:
            conn.close()
            with contextlib.suppress(Exception):
                await asyncio.wait_for(conn.wait_closed(), 5)

    def __repr__(self) -> str:
        return f"SSHTransport({self.target!r})"


class SSHStream(OutputStream):
    """AsyncIterator[bytes] over a remote command's merged output; exit_status when done."""

    _t: SSHTransport

    async def _lines(self) -> AsyncIterator[bytes]:
        t = self._t
        line = wrap_remote(
            command_line(self._command, with_session_path(self._env)),
            merge_stderr=True,
            path=await t._own_tools_path(),
        )
        async with t._sem:
            sess = _Session(lines=True)
            deadline = time.monotonic() + self._timeout
            chan = await t._open_within(line, sess, self._timeout, self._command)
            chan.write_eof()
            assert sess.lines is not None
            try:
                while True:
                    while sess.lines:
                        yield sess.lines.popleft()
                    if sess.closed.is_set():
                        break
                    sess.more.clear()
                    left = deadline - time.monotonic()
                    if left <= 0:
                        raise asyncio.TimeoutError
                    await asyncio.wait_for(sess.more.wait(), left)
            except (asyncio.TimeoutError, TimeoutError):
                await t._abort(chan, sess)
                raise CommandTimeout(
                    f"{t.target}: streamed command ran past its {self._timeout:g} s timeout and "
                    f"was killed: {describe(self._command)}"
                ) from None
            finally:
                if not sess.closed.is_set():
                    await asyncio.shield(t._abort(chan, sess))
            if not sess.finished:
                t._conn = None
                raise ConnectionDropped(
                    f"{t.target}: connection lost while streaming {describe(self._command)!r}"
                )
            self.exit_status = sess.status()


PUT_SCRIPT = """set -e
umask 077
d=$(dirname -- "$1")
t=$(mktemp "$d/.remedy.XXXXXXXX")
trap 'rm -f -- "$t"' EXIT
cat > "$t"
chmod "$2" "$t"
sync -- "$t" 2>/dev/null || sync
mv -fT -- "$t" "$1"  # -T: a link or directory at $1 is replaced, never entered
trap - EXIT
sync -- "$d" 2>/dev/null || true
"""
"""Atomic put with only sh + coreutils: same-dir temp file, fsync, rename, fsync the dir."""


def file_error(path: str, stderr: bytes) -> OSError:
    """Map a failed cat/put on the host to the OSError subclass Python would raise locally."""
    msg = stderr.decode("utf-8", "replace").strip()
    if "No such file" in msg:
        return FileNotFoundError(2, f"No such file or directory: {msg}", path)
    if "Permission denied" in msg:
        return PermissionError(13, f"Permission denied: {msg}", path)
    if "Is a directory" in msg:
        return IsADirectoryError(21, f"Is a directory: {msg}", path)
    return OSError(5, msg or "remote file operation failed", path)
