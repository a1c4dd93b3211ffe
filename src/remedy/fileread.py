"""Reading a file a user points remedy at (facts, a saved plan, an inventory, knowledge), with
a ceiling: these are kilobytes to a few megabytes, and a wrong path can be endless (/dev/zero
read for ever: found by the command-line fuzz target) or a multi-gigabyte core dump; a FIFO
nobody writes to (or whose writer stalls) would hang a root cron job for ever, so it is waited
on at most FIFO_WAIT_S at a time.

Also the one rule for a link on a path remedy is given to read or write
(`foreign_link`): followed only where nobody but root or this user could have placed it."""

from __future__ import annotations

import errno
import os
import re
import select
import stat
import sys
from typing import TYPE_CHECKING, Any, BinaryIO

if TYPE_CHECKING:  # imported where a path is made: not on the early scan's path (reader.py)
    from pathlib import Path

LIMIT = 16 * 2**20
FIFO_WAIT_S = 60
_CHUNK = 1 << 20


class TooLarge(Exception):
    """More than `limit` bytes: the caller turns it into its own error, naming the file."""

    def __init__(self, limit: int) -> None:
        super().__init__(f"larger than {limit >> 20} MiB")
        self.limit = limit


def read_limited(path: str | Path, limit: int = LIMIT) -> bytes:
    """The bytes of `path` ('-': standard input); OSError as open/read raise it (a FIFO or
    pipe silent for FIFO_WAIT_S: TimeoutError, with strerror); TooLarge past `limit` (at most
    limit + 1 bytes are ever read)."""
    if str(path) == "-":
        data = stdin_binary().read(limit + 1)
    else:
        # O_NONBLOCK: opening a FIFO nobody writes to returns at once instead of hanging
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
        try:
            if stat.S_ISFIFO(os.fstat(fd).st_mode):
                data = _read_fifo(fd, limit + 1)
            else:
                os.set_blocking(fd, True)
                with os.fdopen(fd, "rb", closefd=False) as f:
                    data = f.read(limit + 1)
        finally:
            os.close(fd)
    if len(data) > limit:
        raise TooLarge(limit)
    return data


def stdin_binary() -> BinaryIO:
    """Standard input's bytes; OSError(EBADF) when there is none: started with stdin closed
    (`<&-`), Python sets sys.stdin to None and `.buffer` was an AttributeError traceback."""
    stream = getattr(sys.stdin, "buffer", None)
    if stream is None:
        raise OSError(errno.EBADF, "standard input is closed (nothing to read for '-')")
    return stream


def _read_fifo(fd: int, most: int) -> bytes:
    """Up to `most` bytes of a pipe, waiting at most FIFO_WAIT_S for each next chunk."""
    poller = select.poll()
    poller.register(fd, select.POLLIN)
    parts: list[bytes] = []
    got = 0
    while got < most:
        if not poller.poll(FIFO_WAIT_S * 1000):
            why = "wrote nothing" if not got else "stopped writing"
            raise TimeoutError(
                errno.ETIMEDOUT, f"a FIFO or pipe whose writer {why} for {FIFO_WAIT_S} s"
            )
        try:
            chunk = os.read(fd, min(_CHUNK, most - got))
        except BlockingIOError:
            continue
        if not chunk:  # the writer closed it (poll waits while no writer ever came)
            break
        parts.append(chunk)
        got += len(chunk)
    return b"".join(parts)


def foreign_link(path: str | Path) -> str | None:
    """Why `path` is a link remedy must not follow, or None: it is not a link, or the link
    and the directory holding it are root's or this user's and that directory is not
    writable by others (or is sticky, where only an entry's owner may replace it). A link in
    /tmp owned by another user may point at /etc/shadow (read) or /dev/sda (written)."""
    from pathlib import Path

    p = Path(path)
    try:
        lst = os.lstat(p)
    except OSError:
        return None  # the open reports it
    if not stat.S_ISLNK(lst.st_mode):
        return None
    me = os.geteuid()
    try:
        parent = os.stat(p.parent)
    except OSError as exc:
        return f"its directory cannot be checked ({exc.strerror})"
    owner_ok = lst.st_uid in (0, me) and parent.st_uid in (0, me)
    dir_ok = not parent.st_mode & 0o022 or bool(parent.st_mode & stat.S_ISVTX)
    if owner_ok and dir_ok:
        return None
    return f"it is a link (owner uid {lst.st_uid}) in a directory others can change"


def foreign_link_chain(path: str | Path, hops: int = 40) -> str | None:
    """foreign_link for every link a path's last name leads through (a trusted link to a
    link another user planted is no better than that link). Why not, or None."""
    import posixpath

    p = str(path)
    for _ in range(hops):
        why = foreign_link(p)
        if why:
            return why if p == str(path) else f"it leads to {p}, which {why.removeprefix('it ')}"
        try:
            if not stat.S_ISLNK(os.lstat(p).st_mode):
                return None
            p = posixpath.normpath(posixpath.join(posixpath.dirname(p), os.readlink(p)))
        except OSError:
            return None
    return "it is a chain of more than 40 links"


def _unsafe(path: str, st: os.stat_result, me: int, ancestor: bool) -> str | None:
    if st.st_uid not in (0, me):
        return f"{path} owned by uid {st.st_uid}"
    sticky_root_dir = stat.S_ISDIR(st.st_mode) and st.st_uid == 0 and st.st_mode & stat.S_ISVTX
    if st.st_mode & 0o022 and not (ancestor and sticky_root_dir):
        return f"{path} writable by group or others (mode {st.st_mode & 0o7777:o})"
    return None


_TREES_OK: set[tuple[str, bool]] = set()


def untrusted_tree(path: str | Path, *, walk: bool = True) -> str | None:
    """Why the file or directory tree at `path` is one another user could change, or None.

    For data that decides what root does (a site's knowledge named by $REMEDY_KNOWLEDGE_DIR:
    its rules choose the packages pip installs and the values written into /etc): every link
    on the path as written passes the `foreign_link` rule (remedy.dirfd), every directory
    above its real path is root's or this user's and not writable by others (a root-owned
    sticky one such as /tmp is fine above it), and so is every entry of the tree (a link in
    it: its target). A path that does not exist is None: the reader names it. Checked once
    per process per path. walk False: not the entries of a directory (the place a file is
    about to be created in)."""
    from remedy.dirfd import open_dir

    p = os.path.abspath(path)
    if (p, walk) in _TREES_OK or not os.path.lexists(p):
        return None
    me = os.geteuid()
    fd, why = open_dir(os.path.dirname(p))
    if fd is None:
        return why
    os.close(fd)
    if foreign_link_chain(p):
        return f"{p}: {foreign_link_chain(p)}: not followed"
    real = os.path.realpath(p)
    try:
        cur = real
        while True:
            why = _unsafe(cur, os.stat(cur), me, ancestor=cur != real)
            if why:
                return why
            if cur == "/":
                break
            cur = os.path.dirname(cur)
        if walk and os.path.isdir(real):
            for dp, dns, fns in os.walk(real, onerror=_raise):
                for n in dns + fns:
                    q = os.path.join(dp, n)
                    st = os.lstat(q)
                    if stat.S_ISLNK(st.st_mode):
                        why = _unsafe(q, st, me, ancestor=False) or untrusted_tree(q)
                    else:
                        why = _unsafe(q, st, me, ancestor=False)
                    if why:
                        return why
    except OSError as exc:
        return f"{exc.filename or p} cannot be checked ({exc.strerror or exc})"
    _TREES_OK.add((p, walk))
    return None


def untrusted_parent(path: str | Path) -> str | None:
    """Why another user could rename or replace an entry remedy makes in directory `path`, or
    None: untrusted_tree's rule with `path` itself judged as a directory above the entry (a
    root-owned sticky one such as /tmp is fine: only an entry's owner may rename it there)."""
    from remedy.dirfd import open_dir

    p = os.path.abspath(path)
    fd, why = open_dir(p)
    if fd is None:
        return why
    os.close(fd)
    me = os.geteuid()
    cur = os.path.realpath(p)
    try:
        while True:
            why = _unsafe(cur, os.stat(cur), me, ancestor=True)
            if why:
                return why
            if cur == "/":
                return None
            cur = os.path.dirname(cur)
    except OSError as exc:
        return f"{exc.filename or p} cannot be checked ({exc.strerror or exc})"


def private_tempdir() -> str | None:
    """Where remedy makes a temporary file or directory: `tempfile.gettempdir()` (TMPDIR, as a
    CI runner or batch job passes it on; su and sudo drop it) only when no other user can rename
    what remedy makes in it (untrusted_parent), else /tmp likewise, else None. A TMPDIR
    another user owns let them swap root's 0700 directory for theirs between its creation
    and root's writes into it (tests/security/test_verify_tmpdir.py)."""
    import tempfile

    for d in (tempfile.gettempdir(), "/tmp"):
        if os.path.isdir(d) and untrusted_parent(d) is None:
            return os.path.realpath(d)
    return None


def _raise(exc: OSError) -> None:
    raise exc


def json_loads(data: str | bytes | bytearray) -> Any:
    """json.loads for text remedy does not control (a file named on its command line, a
    host's file or reply, a probe's output): nesting deeper than the parser's recursion
    (RecursionError: 100,000 `[` did it) and a number too long to convert (a ValueError that
    is no JSONDecodeError) are raised as the JSONDecodeError every caller already handles;
    they ended in an internal error (exit 70) instead."""
    import json

    try:
        out = json.loads(data)
    except RecursionError:
        raise json.JSONDecodeError("nested too deeply", "", 0) from None
    except json.JSONDecodeError:
        raise
    except ValueError as exc:
        raise json.JSONDecodeError(str(exc), "", 0) from None
    m = _SURROGATE_ESCAPE.search(data if isinstance(data, str) else bytes(data).decode("latin-1"))
    if m is not None:
        where = _surrogate_at(out)
        if where is not None:
            # `"\ud800"` is valid JSON, but no UTF-8 text holds the character: a facts file
            # or plan carrying one ended in an internal error where it was written out
            doc = data if isinstance(data, str) else bytes(data).decode("utf-8", "replace")
            raise json.JSONDecodeError(
                f"a lone UTF-16 surrogate in {where} (no UTF-8 text can hold one)",
                doc,
                min(m.start(), len(doc)),
            )
    return out


# a JSON escape of a UTF-16 surrogate (a pair is one character after parsing, a lone one stays)
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F][0-9a-fA-F]{2}")
_SURROGATE = re.compile("[\ud800-\udfff]")


def _surrogate_at(value: Any, where: str = "") -> str | None:
    """Where a lone surrogate is in parsed JSON (a key or a string value), or None."""
    if isinstance(value, str):
        return (where or "(top level)") if _SURROGATE.search(value) else None
    if isinstance(value, dict):
        for k, v in value.items():
            here = f"{where}.{k}" if where else str(k)
            if isinstance(k, str) and _SURROGATE.search(k):
                return where or "(top level)"
            found = _surrogate_at(v, here)
            if found:
                return found
    elif isinstance(value, list):
        for i, v in enumerate(value):
            found = _surrogate_at(v, f"{where}[{i}]")
            if found:
                return found
    return None
