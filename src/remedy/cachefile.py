"""remedy's own caches (compiled templates, parsed knowledge) are read only when they are ours.

Both caches hold what remedy then acts on: compiled template code it executes, parsed
knowledge whose actions become commands. A cache file another user could write (a shared
XDG_CACHE_HOME, `sudo` keeping HOME, a group-writable ~/.cache) would command remedy as root,
and a damaged one must be rebuilt, never crash a command. So a cache is loaded only if the
file and its directory are owned by this user and not writable by group or others, opened
without following a link, and its body matches the sha256 stored with it.
"""

from __future__ import annotations

import os
import stat

from remedy.dirfd import NOFOLLOW

try:  # the builtin sha256: importing hashlib loads OpenSSL (~3 ms of a 25 ms `remedy --help`)
    from _sha256 import sha256  # CPython <= 3.11
except ImportError:  # pragma: no cover - depends on the interpreter
    try:
        from _sha2 import sha256  # CPython >= 3.12
    except ImportError:
        from hashlib import sha256

MAGIC = b"remedy-cache-1\n"


def _digest(body: bytes) -> bytes:
    """sha256 of a cache body: OpenSSL's (hashlib, several times faster on ~1 MB of parsed
    knowledge and template code) once it is loaded or the body is large, else the builtin;
    the same digest either way."""
    import sys

    hashlib = sys.modules.get("hashlib")
    if hashlib is None and len(body) > 1 << 18:
        import hashlib
    return (hashlib.sha256 if hashlib is not None else sha256)(body).digest()


def _open_dir(d: str, create: bool) -> int | None:
    """A handle on the cache directory d, reached without following a link another user
    could have placed (XDG_CACHE_HOME or ~/.cache pointing somewhere, or a swap after a check:
    remedy.dirfd); d must be ours and private. create: missing directories are made 0700.
    Everything after goes through the handle, so nothing checked is swapped afterwards."""
    from remedy.dirfd import open_dir

    fd, _why = open_dir(d, create=create, last_link=False)
    if fd is None:
        return None
    try:
        st = os.fstat(fd)
    except OSError:
        st = None
    if st is None or st.st_uid != os.geteuid() or st.st_mode & 0o022:
        os.close(fd)
        return None
    return fd


def read_private(path: str) -> bytes | None:
    """The cache's body, or None when it is missing, not ours, loose or damaged."""
    dfd = _open_dir(os.path.dirname(path), create=False)
    if dfd is None:
        return None
    try:
        fd = os.open(os.path.basename(path), os.O_RDONLY | NOFOLLOW, dir_fd=dfd)
    except OSError:
        return None
    finally:
        os.close(dfd)
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or st.st_uid != os.geteuid() or st.st_mode & 0o022:
            return None
        with os.fdopen(os.dup(fd), "rb") as f:
            blob = f.read()
    except OSError:
        return None
    finally:
        os.close(fd)
    n = len(MAGIC)
    head, digest, body = blob[:n], blob[n : n + 32], blob[n + 32 :]
    if head != MAGIC or _digest(body) != digest:
        return None
    return body


def write_private(path: str, body: bytes) -> bool:
    """Atomically write the cache (dir 0700, file 0600) through the directory's handle;
    False (nothing written) when its directory is someone else's, writable by others or
    reached through a link another user could have placed, or on any OSError."""
    import contextlib

    # base/remedy/file, base being $XDG_CACHE_HOME or ~/.cache: at most base and remedy/
    # are made; a home that does not exist is not (HOME=/nonexistent, nobody's, made
    # /nonexistent/.cache/remedy when root ran remedy with it): no cache then
    if not os.path.isdir(os.path.dirname(os.path.dirname(os.path.dirname(path)))):
        return False
    dfd = _open_dir(os.path.dirname(path), create=True)
    if dfd is None:
        return False
    name = os.path.basename(path)
    tmp = f".cache-{os.getpid()}-{os.urandom(6).hex()}"
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | NOFOLLOW, 0o600, dir_fd=dfd)
        try:
            with os.fdopen(fd, "wb") as f:
                f.write(MAGIC + _digest(body) + body)
            os.replace(tmp, name, src_dir_fd=dfd, dst_dir_fd=dfd)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp, dir_fd=dfd)
            raise
        return True
    except OSError:
        return False
    finally:
        os.close(dfd)


def read_keys(path: str) -> list[str]:
    """The keys a private record of "already checked" digests holds; a missing, foreign or
    damaged record holds none, so the check runs again and the record is rewritten."""
    import marshal

    body = read_private(path)
    if body is None:
        return []
    try:
        data = marshal.loads(body)
    except Exception:  # a damaged record is rewritten, never a failure
        return []
    return [k for k in data if isinstance(k, str)] if isinstance(data, list) else []


def remember_key(path: str, key: str, keep: int) -> None:
    """Add ``key`` to the record, keeping the ``keep`` most recent (one per checkout or
    knowledge version in use)."""
    import marshal

    keys = [k for k in read_keys(path) if k != key][-(keep - 1) :] + [key]
    write_private(path, marshal.dumps(keys))
