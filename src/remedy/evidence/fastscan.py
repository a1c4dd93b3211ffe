"""Candidate lines of a regular file through Hyperscan, one process per usable CPU.

Why not grep: the whole-process figure that matters is ``remedy diagnose --log`` against
``grep -E -i 'error|failed|fatal'``, and grep with the ~50 prefilter literals runs 2-3x slower
than grep with those three words (reader.py). Hyperscan (Intel's multi-literal/regex engine,
made for IDS and log pipelines) finds the ~67 anchors that cover the literal set (needles and
error words; ``Engine`` says why anchors) at ~0.4-0.6 ns/byte on one core, and only the lines
that hold a match are ever copied or decoded.

How: one forked worker per usable CPU (at most ``MAX_SEGMENTS``, none for less than
``SEGMENT_MIN_BYTES``; one CPU left to a caller with work of its own below
``CALLER_CPU_BYTES``), each scanning up to ``SLICES`` newline-aligned segments in turn and
writing each one's candidates to a spool file, while the caller goes on with other work
(``Job``: ``remedy diagnose`` loads the knowledge base meanwhile, and ``early`` forks the
workers before the CLI is even imported), then aggregates each segment as soon as it is whole.
A segment is read ``WINDOW`` bytes at a time into one reused buffer (peak memory does not grow
with the log); Hyperscan reports match ends, the line around each is cut out, and newlines
are counted only once, in C, per window. Where a worker's time goes (64 MB of the bench's
journal, one process, min of interleaved runs on a loaded 2-core host; bench/scan_engine.py):
reading ~0.2 ns/byte (kernel copy; mmap'd windows were no faster: page faults and unmaps
cost what the copy saves), Hyperscan over the anchors ~0.4 (the ~210 literals: ~0.6),
newlines ~0.25 (``_newlines``: memchr through ``bytes.replace``; ``bytes.count`` ~0.5), the
~114,000 nvcc command lines per GB (gated ``/bin/nvcc`` hits) ~0.27: ~1.07 ns/byte against
1.27 for the literal database (grep: ~1.0-1.2 for its three words, counting no lines). So the
workers beat grep only by running on more than one core, where the host has one to spare.
(Session 26, same host, min of 7 runs: a worker ~0.74-0.80 ns/byte of that journal, ~0.55-0.59
with its nvcc lines respelled; a lone gated hit's verdict is now remembered per (run, bytes
after it), ``Engine.lone``: the nvcc lines cost ~0.2 ns/byte, ~0.27 before.)
Each worker asks the kernel for its segment ahead of reading it (``AHEAD``) and dies with
its parent (``_die_with``).
Lines longer than ``cap`` keep their first ``cap`` bytes, the rest is skipped unread by the
matcher, exactly as ``reader.python_candidates`` does, so both paths feed the aggregator the
same (line number, bytes) for every line that can match; a line may be a candidate here that is
not there only when a literal lies beyond its cap, and the matcher ignores such a line (it
looks for the same literals in the capped text), so results are identical.

Hyperscan is an optional dependency (``pip install 'remedy[fast]'``): without it, or if a child
fails, the caller falls back to grep or pure Python (``EngineFailed``).
"""

from __future__ import annotations

import contextlib
import os
import re
import signal
import struct
from collections.abc import Iterator
from typing import IO, TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pathlib import Path

WINDOW = 1 << 20
AHEAD = 8 << 20  # bytes each worker asks the kernel to read ahead of it (0: none)
SPARSE_LINE = 48  # mean line length from which _newlines deletes instead of counting
DELETE_MIN = 1 << 16  # ... in spans at least this long
SEGMENT_MIN_BYTES = 48 << 20
MAX_SEGMENTS = 8
# below this, one usable CPU is left to a caller with work of its own (Job says why); 0: never
CALLER_CPU_BYTES = 128 << 20
SLICES = 4  # segments per worker, read in turn (Job says why) ...
SLICE_MIN_BYTES = 32 << 20  # ... none under this
MEMO_MAX = 4096  # gate verdicts remembered ...
MEMO_RUN = 256  # ... for runs up to this long: at most ~1 MB held
MIN_BYTES = 2 << 20  # below this, importing Hyperscan (~30 ms) costs more than it saves

# line number, byte offset of the line's start in the file, length of the line's bytes, number
# of literal ids
_REC = struct.Struct("<QQIH")
_END = 0xFFFFFFFF  # in the length field: the record is the end marker, its number the count
_NOTE = struct.Struct("<I")  # on a worker's pipe: the index of a segment whose spool is whole
_UNSET: Any = object()
_ENGINE: Any = _UNSET
_DBS: dict[tuple[tuple[str, bytes | None], ...], Engine] = {}


class EngineFailed(RuntimeError):
    """Hyperscan is missing or a scan worker failed; use another path."""


def engine() -> Any:
    """The ``hyperscan`` module, or None when it is not installed or does not load."""
    global _ENGINE
    if _ENGINE is _UNSET:
        try:
            import hyperscan
        except Exception:  # ImportError, or a wheel that does not load on this CPU/libc
            _ENGINE = None
        else:
            _ENGINE = hyperscan
    return _ENGINE


class Engine:
    """A compiled database of *anchors* (``anchors_of``) plus, per anchor id, the literal ids
    whose literal contains it, and per literal id the bytes gate that confirms it.

    Why anchors: Hyperscan's time grows with the literal set. The ~210 literals of the catalog
    cost ~0.53-0.73 ns/byte on a journal, the ~67 anchors that cover them (``prefilter``'s
    grep set: every literal contains one) ~0.36-0.55, against ~0.33 for grep's three caseless
    words (interleaved runs, 32 MB of the bench's journal). A line where an anchor hits is
    then checked, in C (``bytes.__contains__``), for the literals holding that anchor: the ids
    reported are exactly those a database of all literals reports for the line, and a line
    holding none of them is not a candidate."""

    def __init__(
        self,
        db: Any,
        patterns: list[tuple[str, bytes | None]],
        anchors: list[str] | None,
        tables: Any = None,
    ) -> None:
        """``anchors``: what ``db`` was compiled from (None: the literals themselves).
        ``tables``: what ``tables()`` gave for these same patterns and anchors (the early
        start's cache, remedy.evidence.early), taken instead of derived again: ~4-10 ms of
        Python (95 anchors x 405 literals) on the way to the fork; None or a table of the
        wrong shape: derived here."""
        self.db = db
        self.gates = gates_of(patterns)
        self.memo: dict[tuple[int, bytes], bool] = {}  # _gated_out's verdicts
        self.full = [lit.encode("utf-8") for lit, _ in patterns]
        self.anchors = anchors
        lits = [lit for lit, _ in patterns]
        names = lits if anchors is None else anchors
        self.lone: list[dict[tuple[int, bytes], tuple[int, ...]]] = [{} for _ in names]
        if tables is not None and _tables_fit(tables, len(names), len(lits)):
            self.expand, self.gated, self.supers, self.tails = tables
            return
        # per anchor id: (literal id, True if the anchor is that literal: no check needed)
        self.expand: list[list[tuple[int, bool]]] = [
            [(i, lit == a) for i, lit in enumerate(lits) if a in lit] for a in names
        ]
        # per anchor id: the gated literal it is, else -1 (its hits are that literal's)
        at = {lit: i for i, lit in enumerate(lits)}
        self.gated = [at[a] if at.get(a, -1) in self.gates else -1 for a in names]
        # per gated anchor: (literal id, bytes from its start to the end of the gated
        # literal's first occurrence in it) of each other literal holding it: such a literal
        # is on the line only where it starts that far before a hit (checked in place)
        self.supers: list[list[tuple[int, int]]] = [
            [
                (i, self.full[i].index(self.full[g]) + len(self.full[g]))
                for i, _ in self.expand[a]
                if i != g
            ]
            if g >= 0
            else []
            for a, g in enumerate(self.gated)
        ]
        # per gated anchor: how many bytes after a hit decide, with the run before it, what a
        # line whose only hit it is holds (the longest part of a holding literal after the
        # gated one), or -1 where they do not (not gated, or a holding literal has a space or
        # tab before the gated one: it reaches beyond the run); and those lines' verdicts
        self.tails: list[int] = [-1] * len(names)
        for a, g in enumerate(self.gated):
            before = [self.full[i][: back - len(self.full[g])] for i, back in self.supers[a]]
            if g >= 0 and not any(b" " in x or b"\t" in x for x in before):
                self.tails[a] = max(
                    (len(self.full[i]) - back for i, back in self.supers[a]), default=0
                )

    def tables(self) -> tuple[Any, ...]:
        """The tables derived from the patterns and anchors (marshal-able), for ``tables=``."""
        return (self.expand, self.gated, self.supers, self.tails)


def _tables_fit(tables: Any, names: int, lits: int) -> bool:
    """``tables`` has the shape ``Engine.tables`` gives for ``names`` anchors over ``lits``
    literals: one entry per anchor in each, literal ids in range."""
    if type(tables) is not tuple or len(tables) != 4:
        return False
    expand, gated, supers, tails = tables
    if not all(type(t) is list and len(t) == names for t in tables):
        return False
    return (
        all(type(g) is int and -1 <= g < lits for g in gated)
        and all(type(t) is int for t in tails)
        and all(
            type(e) is list
            and all(type(x) is tuple and len(x) == 2 and 0 <= x[0] < lits for x in e)
            for e in expand
        )
        and all(
            type(e) is list
            and all(type(x) is tuple and len(x) == 2 and 0 <= x[0] < lits for x in e)
            for e in supers
        )
    )


USE_ANCHORS = True  # tests compare against a database of all the literals


def anchors_of(patterns: list[tuple[str, bytes | None]]) -> list[str] | None:
    """The anchors for ``patterns``: ``prefilter.reduce_literals`` of the ungated literals
    that hold no gated one, the gated literals themselves (their gates need each hit's
    offset, and a line of plain nvcc commands must cost no more than before), and any literal
    no anchor covers. None where anchors cannot stand for the literals (a literal holding a
    newline could span lines)."""
    lits = [lit for lit, _ in patterns]
    if not USE_ANCHORS or any("\n" in lit for lit in lits):
        return None
    from remedy.evidence.prefilter import reduce_literals

    gated = [lit for lit, g in patterns if g is not None]
    anchors = reduce_literals(
        [lit for lit, g in patterns if g is None and not any(x in lit for x in gated)]
    )
    anchors += [x for x in gated if x not in anchors]
    anchors += [lit for lit in lits if not any(a in lit for a in anchors)]
    return anchors


def database(patterns: list[tuple[str, bytes | None]]) -> Engine:
    """A block-mode database of the anchors of ``prefilter.engine_patterns`` literals; a
    match's id is the anchor's index, the ids reported for a line are literal indexes
    (cached)."""
    hs = engine()
    if hs is None:
        raise EngineFailed("hyperscan is not installed")
    key = tuple(patterns)
    eng = _DBS.get(key)
    if eng is None:
        anchors = anchors_of(patterns)
        exprs = [lit for lit, _ in patterns] if anchors is None else anchors
        db = hs.Database(mode=hs.HS_MODE_BLOCK)
        try:
            db.compile(
                expressions=[lit.encode("utf-8") for lit in exprs],
                ids=list(range(len(exprs))),
                flags=0,
                literal=True,
            )
        except Exception as exc:  # hyperscan.error: a pattern it cannot take
            raise EngineFailed(f"hyperscan cannot compile the literals: {exc}") from None
        eng = _DBS[key] = Engine(db, patterns, anchors)
    return eng


def gates_of(patterns: list[tuple[str, bytes | None]]) -> dict[int, re.Pattern[bytes]]:
    """Per literal id, its compiled gate (only the gated ones)."""
    return {i: re.compile(g) for i, (_, g) in enumerate(patterns) if g is not None}


def _gated_out(
    buf: bytearray, start: int, line: list[tuple[int, int]], gates: Any, memo: dict[Any, bool]
) -> bool:
    """True if every hit on the line is a gated literal whose gate matches nowhere in the
    whitespace-free run that ends with it (prefilter._token_gate says why that is enough).
    A gate's verdict depends on the run's bytes only, and runs repeat (a build's nvcc command
    lines share the compiler's path), so verdicts are remembered per (literal, run)."""
    for to, i in line:
        gate = gates.get(i)
        if gate is None:
            return False
        run = max(buf.rfind(b" ", start, to), buf.rfind(b"\t", start, to), start - 1) + 1
        if to - run > MEMO_RUN:  # a long token: not worth holding
            if gate.search(buf, run, to) is not None:
                return False
            continue
        key = (i, bytes(buf[run:to]))
        hit = memo.get(key)
        if hit is None:
            if len(memo) >= MEMO_MAX:
                memo.clear()
            hit = memo[key] = gate.search(buf, run, to) is not None
        if hit:
            return False
    return True


def _lone_ids(buf: bytearray, start: int, t: int, a: int, eng: Engine) -> tuple[int, ...]:
    """The literal ids of a line whose only hit is gated anchor ``a`` ending at ``t``: the
    gated literal and any literal holding it found in place, or none when the gated literal
    is alone and its gate fails (the line is no candidate)."""
    g = eng.gated[a]
    ids = [g]
    for i, back in eng.supers[a]:  # a literal holding it (ungated: else a hit of its own)
        if t - back >= start and buf.startswith(eng.full[i], t - back):
            ids.append(i)
    if len(ids) == 1 and _gated_out(buf, start, [(t, g)], eng.gates, eng.memo):
        return ()
    return tuple(ids)


def _newlines(buf: bytearray, a: int, b: int, sparse: bool) -> int:
    """Newlines in ``buf[a:b]``. ``bytes.count`` is a plain loop over every byte (~0.5-0.7
    ns/byte); ``replace`` finds a single byte with memchr, so deleting the newlines and
    comparing lengths costs ~0.3 ns/byte, the slice's copy included, where lines average
    ``SPARSE_LINE`` bytes or more (journal lines: ~185), and more than counting on short lines
    (4-byte lines: ~4 ns/byte). Same number either way."""
    if not sparse or b - a < DELETE_MIN:
        return buf.count(b"\n", a, b)
    seg = buf[a:b]
    return len(seg) - len(seg.replace(b"\n", b""))


def _window_lines(
    buf: bytearray,
    upto: int,
    base: int,
    eng: Engine,
    hits: list[tuple[int, int]],
    cap: int,
    lines_out: list[int],
    sparse: bool = False,
    at: list[int] | None = None,
) -> Iterator[tuple[int, bytes, tuple[int, ...]]]:
    """Candidates among the complete lines ``buf[:upto]`` (which ends with a newline), numbered
    from ``base`` + 1, with the ids of the literals seen on each; then sets ``lines_out[0]`` to
    ``base`` plus the window's lines. Newlines are counted between candidates, so each byte is
    counted once (``sparse``: lines are long enough for ``_newlines`` to delete, not count).
    ``at``: its first item is set to each candidate's index in ``buf`` before it is yielded."""
    hits.clear()
    eng.db.scan(
        memoryview(buf)[:upto],
        match_event_handler=lambda i, _f, to, _fl, _c: hits.append((to, i)),
    )
    hits.sort()
    counted = 0  # newlines before this offset are in ``base``
    gates, full, expand, gated = eng.gates, eng.full, eng.expand, eng.gated
    tails, lone = eng.tails, eng.lone
    k, n = 0, len(hits)
    while k < n:
        to, a = hits[k]
        start = buf.rfind(b"\n", 0, to) + 1
        line_end = buf.find(b"\n", to - 1)
        first = k
        k += 1
        while k < n and hits[k][0] <= line_end:
            k += 1
        if k - first == 1 and gated[a] >= 0:  # one gated hit: nvcc commands
            tail = tails[a]
            run = max(buf.rfind(b" ", start, to), buf.rfind(b"\t", start, to), start - 1) + 1
            if tail < 0 or to - run > MEMO_RUN:
                found = _lone_ids(buf, start, to, a, eng)
            else:  # build logs repeat the same nvcc: its line's fate is remembered
                key = (to - run, bytes(buf[run : min(to + tail, line_end)]))
                memo = lone[a]
                found = memo.get(key)
                if found is None:
                    if len(memo) >= MEMO_MAX:
                        memo.clear()
                    found = memo[key] = _lone_ids(buf, start, to, a, eng)
            if not found:
                continue
            ids = set(found)
        else:
            line = hits[first:k]
            ids = set()
            for a in {a for _, a in line}:
                for i, exact in expand[a]:
                    if exact or buf.find(full[i], start, line_end) >= 0:
                        ids.add(i)
            if not ids:  # anchors only: no literal of the set is on the line
                continue
            # every gated literal is an anchor of its own, so its hits are all in ``line``
            if (
                gates
                and ids <= gates.keys()
                and _gated_out(
                    buf, start, [(t, gated[a]) for t, a in line if gated[a] >= 0], gates, eng.memo
                )
            ):
                continue
        base += _newlines(buf, counted, start, sparse)
        counted = start
        if at is not None:
            at[0] = start
        yield base + 1, bytes(buf[start : min(line_end, start + cap)]), tuple(ids)
    lines_out[0] = base + _newlines(buf, counted, upto, sparse)


def _will_need(fd: int, offset: int, length: int) -> None:
    """Ask the kernel to read ``length`` bytes at ``offset`` into the page cache now. The
    workers share one open file, hence one readahead state: two segments read at once look
    like random reads to it, and a log not yet cached would then come in small requests."""
    with contextlib.suppress(OSError, AttributeError):  # AttributeError: no posix_fadvise
        os.posix_fadvise(fd, offset, length, os.POSIX_FADV_WILLNEED)


def scan_segment(
    fd: int,
    start: int,
    end: int,
    eng: Engine,
    cap: int,
    lines_out: list[int],
    at: list[int] | None = None,
) -> Iterator[tuple[int, bytes, tuple[int, ...]]]:
    """Candidate lines of bytes [start, end) of ``fd`` (``start`` at a line start), numbered
    from 1 within the segment; appends the segment's line count to ``lines_out`` at the end.
    ``at``: its first item is set to each candidate's byte offset in the file before it is
    yielded (a wrapped line's follower is then read back from there, not from the file's
    start: ``scan._Aggregator.resolve_wraps``)."""
    buf = bytearray(WINDOW + cap + 1)
    view = memoryview(buf)
    hits: list[tuple[int, int]] = []
    now = [0]
    idx = [0] if at is not None else None
    # the file offset of the line that starts ``buf``; from its end on (its first newline),
    # ``buf[:total]`` is the file's bytes up to ``pos`` (only a long line's head is cut short)
    head = start
    pos, have, skipping, lineno, sparse = start, 0, False, 0, False
    advised = start  # WILLNEED asked up to here
    try:
        while pos < end:
            if AHEAD and advised < end and pos >= advised - AHEAD // 2:
                _will_need(fd, advised, min(AHEAD, end - advised))
                advised += AHEAD
            n = os.preadv(fd, [view[have : have + min(WINDOW, end - pos)]], pos)
            if n <= 0:
                break
            pos += n
            if skipping:  # inside the uncapped rest of a long line: drop it up to its newline
                nl = buf.find(b"\n", have, have + n)
                if nl < 0:
                    continue
                rest = have + n - nl
                buf[have : have + rest] = buf[nl : have + n]
                n, skipping = rest, False
            total = have + n
            last = buf.rfind(b"\n", 0, total)
            if last < 0:
                have, skipping = (cap, True) if total > cap else (total, False)
                continue
            lines = _window_lines(buf, last + 1, lineno, eng, hits, cap, now, sparse, idx)
            if at is None or idx is None:
                yield from lines
            else:
                for item in lines:
                    at[0] = head if idx[0] == 0 else pos - total + idx[0]
                    yield item
            sparse = (now[0] - lineno) * SPARSE_LINE <= last + 1  # this window's lines
            lineno = now[0]
            tail = total - last - 1
            keep = min(tail, cap)
            buf[0:keep] = buf[last + 1 : last + 1 + keep]
            have, skipping = keep, tail > cap
            head = pos - tail
        if have:  # the last line has no newline
            buf[have : have + 1] = b"\n"
            for item in _window_lines(buf, have + 1, lineno, eng, hits, cap, now, at=idx):
                if at is not None and idx is not None:
                    at[0] = head if idx[0] == 0 else pos - have + idx[0]
                yield item
            lineno = now[0]
    finally:
        view.release()
    lines_out.append(lineno)


def _keep_freed_memory() -> None:
    """``_newlines`` allocates two ~1 MiB buffers per window; by default glibc hands such
    blocks back to the kernel when freed and faults them in again for the next window (1 GB
    journal: ~200,000 page faults, +0.4 CPU-s). A worker is short-lived: keep them (glibc's
    ``mallopt``; elsewhere nothing changes)."""
    with contextlib.suppress(Exception):
        import ctypes

        libc = ctypes.CDLL(None)
        libc.mallopt(-1, 64 << 20)  # M_TRIM_THRESHOLD
        libc.mallopt(-3, 16 << 20)  # M_MMAP_THRESHOLD


PR_SET_PDEATHSIG = 1  # linux/prctl.h


def _death_signal() -> Any:
    """A callable that makes the calling (forked) process get SIGKILL when its parent dies,
    or None where there is no ``prctl`` (not Linux, no libc through ctypes). Loaded in the
    parent before forking, so each worker only makes the call."""
    try:
        import ctypes

        prctl = ctypes.CDLL(None, use_errno=True).prctl
    except Exception:  # no ctypes, no libc symbol: workers then end only through Job.close
        return None
    prctl.restype = ctypes.c_int
    prctl.argtypes = [ctypes.c_int, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong]

    def arm() -> None:
        prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)

    return arm


def _die_with(parent: int, arm: Any) -> None:
    """In a worker, first thing: a parent killed with SIGKILL runs no ``Job.close``, and a
    worker left reading a 4 GB log would hold a core for seconds after the command is gone.
    The kernel ends it instead (PR_SET_PDEATHSIG); a parent that died before the call has
    already made this process an orphan, so it exits at once."""
    if arm is not None:
        with contextlib.suppress(Exception):
            arm()
    if os.getppid() != parent:
        os._exit(1)


def _child(
    fd: int, parts: list[tuple[int, int, int, int]], eng: Engine, cap: int, notify: int
) -> None:
    """Body of a forked worker: for each of its segments (index, start, end, spool fd) in
    turn, the candidates to the spool, then the END marker and line count; then the segment's
    index on ``notify``, so the caller can aggregate it while this worker reads the next."""
    if sum(end - start for _, start, end, _ in parts) > 8 * WINDOW:
        _keep_freed_memory()
    for k, start, end, spool in parts:
        out = open(spool, "wb", closefd=False, buffering=1 << 20)  # noqa: SIM115 - flushed below
        lines: list[int] = []
        at = [0]
        for ln, raw, ids in scan_segment(fd, start, end, eng, cap, lines, at):
            out.write(_REC.pack(ln, at[0], len(raw), len(ids)))
            out.write(struct.pack(f"<{len(ids)}H", *ids))
            out.write(raw)
        out.write(_REC.pack(lines[0], 0, _END, 0))
        out.flush()
        os.write(notify, _NOTE.pack(k))


def _read_spool(
    f: IO[bytes], offset: int, lines_out: list[int], at: list[int] | None = None
) -> Iterator[tuple[int, bytes, tuple[int, ...]]]:
    """Records of a whole segment's spool, renumbered by ``offset``; appends the segment's
    line count to ``lines_out`` once the END marker is read (``at``: as ``scan_segment``'s)."""
    f.seek(0)
    while True:
        head = f.read(_REC.size)
        if len(head) < _REC.size:
            raise EngineFailed("a scan worker stopped before the end of its segment")
        ln, start, size, nids = _REC.unpack(head)
        if size == _END:
            lines_out.append(ln)
            return
        ids = struct.unpack(f"<{nids}H", f.read(2 * nids))
        if at is not None:
            at[0] = start
        yield offset + ln, f.read(size), ids


class Job:
    """A scan under way: forked workers, each spooling the candidates of its segments, so the
    caller can do other work (load the knowledge base, import the diagnosis) while the log is
    read; ``candidates`` then hands them over in file order. ``close`` ends any worker still
    running (an error or a signal in the caller must not leave them reading).

    Each worker reads several segments in turn (``SLICES``; segment k is worker k mod n's):
    the caller aggregates a segment (prefixes, signatures, suspicious lines: ~40-80 us per
    candidate line) as soon as its worker says it is whole, while the workers read on, so
    only the last segment's candidates are aggregated after the reading ends, not all.

    Where the caller has work of its own meanwhile (``caller_works``), a log under
    ``CALLER_CPU_BYTES`` gets a worker less than there are usable CPUs: that work
    (``remedy diagnose``: ~150 ms of imports and knowledge on one core) is then the longer of
    the two, and a worker competing with it for the last CPU only delays it. On 2 CPUs and
    100 MB of the bench's journal: one worker, ~110 ms of reading, in parallel with the
    caller, instead of two workers and the caller sharing both CPUs (wall 0.90-0.97x of that,
    interleaved runs on a loaded host). A host with more CPUs than the log has segments is
    unchanged; from ``CALLER_CPU_BYTES`` on, the reading is the longer part and every CPU
    reads. (Where: the caller needs P CPU-seconds, the reading W; with a worker per CPU, the
    caller shares its CPU until the workers end, P + W/4 in all on 2 CPUs; with one worker,
    max(P, W): less while W < 4P/3, ~180 ms of reading at ~1.2 ns/byte, ~150 MB.)"""

    def __init__(
        self,
        path: str | Path,
        patterns: list[tuple[str, bytes | None]],
        *,
        cap: int,
        segments: int | None = None,
        slices: int | None = None,
        fd: int | None = None,
        caller_works: bool = False,
    ) -> None:
        """``segments``: workers (default: one per usable CPU, fewer for a small log);
        ``slices``: segments per worker (default: ``SLICES``, one where a segment would be
        under ``SLICE_MIN_BYTES``, and one where ``segments`` is given). ``fd``: the file
        already open (the job owns it from here): the workers then read exactly the file
        the caller checked, whatever ``path`` names by now. ``caller_works``: the caller
        has its own work to do while the log is read (``CALLER_CPU_BYTES``)."""
        from remedy.evidence import reader

        self.patterns = patterns
        self.kids: list[int] = []
        self.notify: list[int] = []  # per worker, the read end of its pipe
        self.spools: list[IO[bytes]] = []
        self.fd = os.open(path, os.O_RDONLY) if fd is None else fd
        try:
            eng = database(patterns)
        except BaseException:
            self.close()
            raise
        try:
            self.size = os.fstat(self.fd).st_size
            cpus = reader.usable_cpus()
            if caller_works and cpus > 1 and self.size < CALLER_CPU_BYTES:
                cpus -= 1  # the caller's own work needs a CPU more than the workers do
            n = segments or max(1, min(MAX_SEGMENTS, cpus, self.size // SEGMENT_MIN_BYTES or 1))
            per = slices or (
                1 if segments else max(1, min(SLICES, self.size // (n * SLICE_MIN_BYTES)))
            )
            bounds = reader._segment_bounds(self.fd, self.size, n * per)
            count = len(bounds) - 1
            n = min(n, count)
            self.spools = [reader.spool_file() for _ in range(count)]
            arm, parent = _death_signal(), os.getpid()
            for w in range(n):
                parts = [
                    (k, bounds[k], bounds[k + 1], self.spools[k].fileno())
                    for k in range(w, count, n)
                ]
                rfd, wfd = os.pipe()
                self.notify.append(rfd)  # closed by close() whatever happens next
                try:
                    pid = os.fork()
                except BaseException:
                    os.close(wfd)
                    raise
                if pid == 0:  # the worker: never return into the caller's code
                    code = 1
                    try:
                        os.close(rfd)
                        _die_with(parent, arm)
                        _child(self.fd, parts, eng, cap, wfd)
                        code = 0
                    finally:
                        os._exit(code)
                os.close(wfd)  # the worker's alone: its end reads as EOF once it is gone
                self.kids.append(pid)
        except BaseException:
            self.close()
            raise

    def _whole(self, k: int) -> None:
        """Wait until segment ``k``'s spool is whole (its worker wrote its index)."""
        rfd = self.notify[k % len(self.notify)]
        note = b""
        while len(note) < _NOTE.size:
            got = os.read(rfd, _NOTE.size - len(note))
            if not got:  # the worker is gone without finishing it
                self._reap(self.kids[k % len(self.kids)])
                raise EngineFailed("a scan worker stopped before the end of its segment")
            note += got
        if _NOTE.unpack(note)[0] != k:
            raise EngineFailed("a scan worker reported its segments out of order")

    def _reap(self, pid: int) -> None:
        """Wait for a worker that has ended (or is ending); a failure is EngineFailed."""
        _, status = os.waitpid(pid, 0)
        self.kids[self.kids.index(pid)] = -1
        code = os.waitstatus_to_exitcode(status)
        if code != 0:
            raise EngineFailed(f"a scan worker failed (exit {code})")

    def candidates(
        self, totals: Any, at: list[int] | None = None
    ) -> Iterator[tuple[int, bytes, frozenset[str]]]:
        """Candidate lines in file order, with file line numbers and the literals seen on
        each; sets ``totals`` once every worker is done. ``at``: its first item is set to
        each line's byte offset in the file before the line is yielded."""
        names: dict[tuple[int, ...], frozenset[str]] = {}
        patterns = self.patterns
        offset = 0
        for k, spool in enumerate(list(self.spools)):
            self._whole(k)
            count: list[int] = []
            for ln, raw, ids in _read_spool(spool, offset, count, at):
                hint = names.get(ids)
                if hint is None:
                    hint = names[ids] = frozenset(patterns[i][0] for i in ids)
                yield ln, raw, hint
            offset += count[0]
        for pid in list(self.kids):
            if pid > 0:
                self._reap(pid)
        totals.lines = offset
        totals.bytes = self.size

    def close(self) -> None:
        for pid in self.kids:
            if pid <= 0:
                continue
            with contextlib.suppress(OSError):
                os.kill(pid, 9)
            with contextlib.suppress(OSError):
                os.waitpid(pid, 0)
        self.kids.clear()
        for rfd in self.notify:
            with contextlib.suppress(OSError):
                os.close(rfd)
        self.notify.clear()
        for s in self.spools:
            s.close()
        self.spools.clear()
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1


def hyperscan_candidates(
    path: str | Path,
    patterns: list[tuple[str, bytes | None]],
    totals: Any,
    *,
    cap: int,
    segments: int | None = None,
    slices: int | None = None,
) -> Iterator[tuple[int, bytes, frozenset[str]]]:
    """Candidate lines of a regular file, in file order, with file line numbers and the
    literals seen on each (a superset of those in its first ``cap`` bytes)."""
    job = Job(path, patterns, cap=cap, segments=segments, slices=slices)
    try:
        yield from job.candidates(totals)
    finally:
        job.close()
