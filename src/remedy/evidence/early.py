"""Start ``remedy diagnose --log FILE``'s scan before the CLI is imported.

Why: Python's imports (typer, rich, pydantic, the models) and the knowledge base cost about a
CPU-second before ``diagnose`` reaches the log; grep starts reading at once. The console
script calls ``start`` first thing: when the command is ``diagnose`` with a ``--log`` that is
a regular file (not a link) big enough for Hyperscan, and this user's cache holds the literal
set and compiled database of the current signatures file, the scan workers (fastscan.Job) are
forked right there and read the log while the rest of remedy is imported.

Nothing here decides a result: the log is opened without following a link, the workers read
that open file, and ``take`` hands the job to ``scan.PendingScan`` only if the file it opened
(after ``reader.open_log``'s checks) is that same file (device, inode, size, mtime) and the
job's literals are exactly
``prefilter.engine_patterns`` of the catalog in use; otherwise the job is ended and the log is
scanned the ordinary way. The cache is read only through ``cachefile.read_private`` (ours,
not writable by others, digest intact) and rewritten whenever the ordinary path compiles.

Stdlib and hyperscan only, so importing this costs nothing measurable.
"""

from __future__ import annotations

import atexit
import contextlib
import marshal
import os
import stat
from typing import Any

# 2: anchors; 3: and fastscan.Engine's tables; 4: and gates; 5: anchors merged less
_TAG = "remedy-scan-engine-5"
_EARLY: tuple[str, tuple[int, int, int, int], Any] | None = None
# the signatures file of a cache whose tables another fastscan.py wrote (``_cached_engine``):
# ``start`` writes the cache again with this one's, after the fork. Without it the tables were
# derived in every start-up (~4-10 ms of the main process) until the signatures changed: only
# a freshly compiled database was ever saved, and the early start's never is
_STALE: list[str] = []


def cache_path() -> str:
    """One cache per remedy install (keyed by its path): two checkouts, or a checkout and a
    wheel, have different signatures and would otherwise rewrite each other's cache."""
    import zlib

    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    here = zlib.crc32(os.path.dirname(os.path.abspath(__file__)).encode())
    return os.path.join(base, "remedy", f"scan-engine-{here:08x}.bin")


def _log_arg(argv: list[str]) -> str | None:
    """The first ``--log``/``-l`` value of ``remedy diagnose ...``, or None."""
    if not argv or argv[0] != "diagnose":
        return None
    for k, a in enumerate(argv[1:], 1):
        if a == "--":
            return None
        if a in ("--log", "-l"):
            return argv[k + 1] if k + 1 < len(argv) else None
        if a.startswith("--log="):
            return a[len("--log=") :]
    return None


def identity(st: os.stat_result) -> tuple[int, int, int, int]:
    return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns)


def _sig_key(path: str) -> tuple[int, int] | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (st.st_mtime_ns, st.st_size)


def start(argv: list[str]) -> None:
    """Fork the scan workers for ``argv``'s log when everything above holds; else nothing."""
    global _EARLY
    path = _log_arg(argv)
    if not path or path == "-":
        return
    from remedy.evidence import fastscan

    try:  # a small log is read the ordinary way: Hyperscan (and its import) is not worth it
        if os.stat(path).st_size < fastscan.MIN_BYTES:
            return
    except OSError:
        return
    hs = fastscan.engine()
    if hs is None:
        return
    from remedy.cachefile import read_private

    body = read_private(cache_path())
    if body is None:
        return
    try:  # not a link, and not a FIFO that would block (open_log's own checks come later)
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError:
        return
    patterns = None
    try:
        st = os.fstat(fd)
        if stat.S_ISREG(st.st_mode) and st.st_size >= fastscan.MIN_BYTES:
            patterns = _cached_engine(hs, body)
    except Exception:  # a stale or foreign cache: the ordinary path
        patterns = None
    if patterns is None:
        os.close(fd)
        return
    from remedy.evidence.reader import MATCH_CAP

    try:
        # owns fd from here; `diagnose` imports and loads its knowledge meanwhile
        job = fastscan.Job(path, patterns, cap=MATCH_CAP, fd=fd, caller_works=True)
    except Exception:
        return
    _EARLY = (os.path.abspath(path), identity(st), job)
    atexit.register(discard)
    if _STALE:  # another fastscan.py wrote the tables: kept as this one derived them
        eng = fastscan._DBS.get(tuple(patterns))
        if eng is not None:
            save(patterns, eng, _STALE[0])


def _cached_engine(hs: Any, body: bytes) -> list[tuple[str, bytes | None]] | None:
    """The cached literal set, its database registered with fastscan; None if stale."""
    from remedy.evidence import fastscan

    tag, version, sig_path, sig_key, patterns, anchors, blob, code_key, tables = marshal.loads(body)
    if tag != _TAG or version != hs.__version__ or _sig_key(sig_path) != tuple(sig_key):
        return None
    _STALE.clear()
    if code_key is None or _sig_key(fastscan.__file__) != tuple(code_key):  # code changed
        tables = None
        _STALE.append(sig_path)
    patterns = [(lit, gate) for lit, gate in patterns]
    key = tuple(patterns)
    if key not in fastscan._DBS:
        db = hs.loadb(blob, hs.HS_MODE_BLOCK)
        db.scratch = hs.Scratch(db)  # a loaded database has none: scan() would fail
        fastscan._DBS[key] = fastscan.Engine(db, patterns, anchors, tables)
    return patterns


def take(path: str, st: os.stat_result, patterns: list[tuple[str, bytes | None]]) -> Any | None:
    """The early job for this very file and literal set, or None (any other job is ended)."""
    global _EARLY
    early, _EARLY = _EARLY, None
    if early is None:
        return None
    epath, ident, job = early
    if epath == os.path.abspath(path) and ident == identity(st) and job.patterns == patterns:
        return job
    job.close()
    return None


def discard() -> None:
    """End an early job nobody took (the command failed before the scan, or exits)."""
    global _EARLY
    early, _EARLY = _EARLY, None
    if early is not None:
        early[2].close()


def save(patterns: list[tuple[str, bytes | None]], eng: Any, sig_path: str) -> None:
    """Record the literal set, its anchors, their compiled database and the tables derived
    from them (``eng``: the fastscan.Engine; the tables are taken only while fastscan.py is
    the same file) for the next ``start``."""
    from remedy.evidence import fastscan

    hs = fastscan.engine()
    key = _sig_key(sig_path)
    if hs is None or key is None:
        return
    with contextlib.suppress(Exception):
        from remedy.cachefile import read_private, write_private

        body = marshal.dumps(
            (
                _TAG,
                hs.__version__,
                sig_path,
                key,
                [list(p) for p in patterns],
                eng.anchors,
                hs.dumpb(eng.db),
                _sig_key(fastscan.__file__),
                eng.tables(),
            )
        )
        if read_private(cache_path()) != body:
            write_private(cache_path(), body)
