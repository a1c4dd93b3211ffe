"""Candidate lines of a regular file through Hyperscan, one process per usable CPU.

Why not grep: the whole-process figure that matters is ``remedy diagnose --log`` against
``grep -E -i 'error|failed|fatal'``, and grep with the ~50 prefilter literals runs 2-3x slower
than grep with those three words (reader.py). Hyperscan (Intel's multi-literal/regex engine,
made for IDS and log pipelines) finds the ~67 anchors that cover the literal set (needles and
error words; ``Engine`` says why anchors) at ~0.4-0.6 ns/byte on one core, and only the lines
that hold a match are ever copied or decoded.

How: one forked worker per usable CPU (at most ``MAX_SEGMENTS``, none for less than
``SEGMENT_MIN_BYTES``; one CPU left to a caller with work of its own below
``CALLER_CPU_BYTES``), taking newline-aligned segments (``SLICES`` per worker) from one queue
in turn and writing each one's candidates to a spool file, while the caller goes on with other
work (``Job``: ``remedy diagnose`` loads the knowledge base meanwhile, and ``early`` forks the
workers before the CLI is even imported), then aggregates each segment as soon as it is whole,
and scans those still queued itself rather than wait for them.
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
with its nvcc lines respelled. Session 38: the gate of ``/bin/nvcc`` is in the database, so a
plain nvcc command line is no hit at all (``Engine``): a worker ~0.69 ns/byte against the
previous 0.79, 128 MB of the bench's 1 GB journal, bench/scan_engine.py, same run.)
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
    """A compiled database of *anchors* (``anchors_of``) and of each gated literal's gate
    (``gate_exprs``), with per expression id either the literal ids whose literal contains
    the anchor, or the gated literal whose gate it stands for and whether a hit of it passes
    that gate for sure.

    Why anchors: Hyperscan's time grows with the literal set. The ~210 literals of the catalog
    cost ~0.53-0.73 ns/byte on a journal, the ~67 anchors that cover them (``prefilter``'s
    grep set: every literal contains one) ~0.36-0.55, against ~0.33 for grep's three caseless
    words (interleaved runs, 32 MB of the bench's journal). A line where an anchor hits is
    then checked, in C (``bytes.__contains__``), for the literals holding that anchor: the ids
    reported are exactly those a database of all literals reports for the line, and a line
    holding none of them is not a candidate.

    Why gates in the database: a gated literal (``/bin/nvcc``) that Hyperscan reported at
    every occurrence cost a Python callback and a gate check per line holding it: on the
    bench's build journal (~114,000 nvcc command lines per GB, none passing the gate) ~0.15
    of the worker's ~0.75 ns/byte. Its gate's alternatives with their repeats bounded at
    ``GATE_BOUND`` hit only where the gate matches (a line holding one is kept), and the one
    expression ``gate_exprs`` adds for longer runs hits only before a needle with more than
    ``GATE_BOUND`` non-space bytes before it (its gate then checked in Python, as before):
    Hyperscan over both ~0.01 ns/byte more than over the literal, and a plain nvcc line costs
    no callback. A gated literal elsewhere on a line is found with ``bytes.find``."""

    def __init__(
        self,
        db: Any,
        patterns: list[tuple[str, bytes | None]],
        anchors: list[str] | None,
        tables: Any = None,
    ) -> None:
        """``anchors``: the anchors ``db`` was compiled from (None: the ungated literals
        themselves), before the gates' expressions. ``tables``: what ``tables()`` gave for
        these same patterns and anchors (the early start's cache, remedy.evidence.early),
        taken instead of derived again: ~4-10 ms of Python (95 anchors x 405 literals) on the
        way to the fork; None or a table of the wrong shape: derived here."""
        self.db = db
        self.gates = gates_of(patterns)
        self.gated_ids = sorted(self.gates)  # literal ids with a gate
        self.gated_set = frozenset(self.gates)
        self.memo: dict[tuple[int, bytes], bool] = {}  # _gated_out's verdicts
        self.full = [lit.encode("utf-8") for lit, _ in patterns]
        self.anchors = anchors
        names = _names(patterns, anchors)
        if tables is not None and _tables_fit(tables, len(names), len(patterns), self.gated_set):
            self.expand, self.gated, self.sure = tables
            return
        lits = [lit for lit, _ in patterns]
        # per expression id: (literal id, True if the anchor is that literal: no check needed)
        self.expand: list[list[tuple[int, bool]]] = [
            [(i, lit == a) for i, lit in enumerate(lits) if a in lit and i not in self.gates]
            for a in names
        ]
        # per expression id: the gated literal whose gate it stands for (-1: an anchor), and
        # whether its hit passes that gate (False: the gate is checked in Python)
        self.gated: list[int] = [-1] * len(names)
        self.sure: list[bool] = [False] * len(names)
        for g, (_, sure) in _gate_entries(patterns):
            self.expand.append([])
            self.gated.append(g)
            self.sure.append(sure)

    def tables(self) -> tuple[Any, ...]:
        """The tables derived from the patterns and anchors (marshal-able), for ``tables=``."""
        return (self.expand, self.gated, self.sure)


def _names(patterns: list[tuple[str, bytes | None]], anchors: list[str] | None) -> list[str]:
    """The literals compiled as such: ``anchors``, or (None) every ungated literal."""
    return [lit for lit, g in patterns if g is None] if anchors is None else anchors


def _tables_fit(tables: Any, names: int, lits: int, gated: frozenset[int]) -> bool:
    """``tables`` has the shape ``Engine.tables`` gives for ``names`` anchors over ``lits``
    literals: one entry per expression in each, the anchors' first, literal ids in range,
    the gate expressions' each for a gated literal."""
    if type(tables) is not tuple or len(tables) != 3:
        return False
    expand, which, sure = tables
    if not all(type(t) is list and len(t) == len(expand) >= names for t in tables):
        return False
    return (
        all(type(s) is bool for s in sure)
        and all(type(g) is int and g == -1 for g in which[:names])
        and all(type(g) is int and g in gated for g in which[names:])
        and all(e == [] for e in expand[names:])
        and all(
            type(e) is list
            and all(type(x) is tuple and len(x) == 2 and 0 <= x[0] < lits for x in e)
            for e in expand
        )
    )


USE_ANCHORS = True  # tests compare against a database of all the literals
# anchors merged into a common prefix only where it is at least this long (``anchors_of``)
MERGE_MIN = 6
GATE_BOUND = 64  # repeats of a gate bounded at this in its sure expressions (Engine says why)


def anchors_of(patterns: list[tuple[str, bytes | None]]) -> list[str] | None:
    """The anchors for the ungated literals: ``prefilter.reduce_literals`` of those that hold
    no gated literal, those that do as themselves (an anchor inside the gated literal would
    hit on every line holding it: its gate's expressions stand for it), and any literal no
    anchor covers. None where anchors cannot stand for the literals (a literal holding a
    newline could span lines).

    Unlike grep's set, anchors sharing their first bytes are merged only into a prefix of at
    least ``MERGE_MIN`` bytes: a shorter one is a fragment of common words, and every line it
    hits is a callback and a look for the literals holding it. Merged, the needles "device
    cpu", "could not select device driver", ... became "vice ", which hits every "503 Service
    Unavailable" line of a server's access log (the bench's 100 MB journal: 16,464 hits, 184
    candidates; a worker ~115 ms CPU, ~73 ms with the anchors apart, ~15 more of them, same
    candidates: the literals decide, not the anchors)."""
    lits = [lit for lit, g in patterns if g is None]
    if not USE_ANCHORS or any("\n" in lit for lit, _ in patterns):
        return None
    from remedy.evidence.prefilter import reduce_literals

    gated = [lit for lit, g in patterns if g is not None]
    anchors = reduce_literals(
        [lit for lit in lits if not any(x in lit for x in gated)], merge_min=MERGE_MIN
    )
    anchors += [lit for lit in lits if any(x in lit for x in gated) and lit not in anchors]
    anchors += [lit for lit in lits if not any(a in lit for a in anchors)]
    return anchors


def _hs_bytes(data: bytes) -> str:
    """``data`` as a Hyperscan expression matching exactly those bytes."""
    return "".join(chr(b) if chr(b).isalnum() and b < 128 else f"\\x{b:02x}" for b in data)


_SPACE = b" \t\n\r\x0b\x0c"  # \s of a bytes regex (re module)


def _class_bytes(items: list[tuple[Any, Any]]) -> bytes | None:
    """The bytes a bytes regex's character class (``re._parser`` items) matches, or None for
    a form not handled here."""
    import re._constants as c

    cats = {
        c.CATEGORY_SPACE: lambda b: b in _SPACE,
        c.CATEGORY_NOT_SPACE: lambda b: b not in _SPACE,
        c.CATEGORY_DIGIT: lambda b: 48 <= b <= 57,
        c.CATEGORY_NOT_DIGIT: lambda b: not 48 <= b <= 57,
        c.CATEGORY_WORD: lambda b: b < 128 and (chr(b).isalnum() or b == 95),
        c.CATEGORY_NOT_WORD: lambda b: not (b < 128 and (chr(b).isalnum() or b == 95)),
    }
    negate = bool(items) and items[0][0] is c.NEGATE
    tests = []
    for op, av in items[1:] if negate else items:
        if op is c.LITERAL and 0 <= av < 256:
            tests.append(lambda b, v=av: b == v)
        elif op is c.RANGE:
            tests.append(lambda b, lo=av[0], hi=av[1]: lo <= b <= hi)
        elif op is c.CATEGORY and av in cats:
            tests.append(cats[av])
        else:
            return None
    return bytes(b for b in range(256) if any(t(b) for t in tests) != negate)


def _hs_class(members: bytes) -> str:
    """A Hyperscan class of exactly ``members`` (sorted, not empty)."""
    out, k = [], 0
    while k < len(members):
        j = k
        while j + 1 < len(members) and members[j + 1] == members[j] + 1:
            j += 1
        lo, hi = members[k], members[j]
        out.append(f"\\x{lo:02x}" if lo == hi else f"\\x{lo:02x}-\\x{hi:02x}")
        k = j + 1
    return "[" + "".join(out) + "]"


def gate_exprs(needle: str, gate: bytes) -> list[tuple[str, bool]]:
    """Hyperscan expressions standing for ``gate`` (a bytes regex every match of which ends
    with ``needle`` and holds no whitespace: ``prefilter._token_gate``), each with True where
    its hit passes the gate for sure: each alternative with its repeats bounded at
    ``GATE_BOUND``, and, False, ``needle`` after ``GATE_BOUND`` non-space bytes (a gate match
    none of the bounded ones has on the line repeats more than that, so that one hits at its
    end: the gate is checked there). A gate of another form: ``needle`` itself, False (every
    occurrence checked in Python)."""
    import re._constants as c
    import re._parser as sre_parse

    plain = [(_hs_bytes(needle.encode("utf-8")), False)]
    try:
        tree = sre_parse.parse(gate)
    except Exception:  # re.error, or bytes that are no pattern: not for us
        return plain
    if tree.state.flags or tree.state.groups != 1:
        return plain

    def alts(sub: Any) -> list[list[tuple[Any, Any]]] | None:
        items = list(sub)
        if len(items) == 1 and items[0][0] is c.BRANCH:
            out: list[list[tuple[Any, Any]]] = []
            for branch in items[0][1][1]:
                got = alts(branch)
                if got is None:
                    return None
                out += got
            return out
        return [items]

    tail = needle.encode("utf-8")
    found = alts(tree)
    if not found or any(b in _SPACE for b in tail):
        return plain
    exprs: list[tuple[str, bool]] = []
    for items in found:
        if len(items) < len(tail) or items[-len(tail) :] != [(c.LITERAL, b) for b in tail]:
            return plain
        parts: list[str] = []
        for k, (op, av) in enumerate(items):
            if op is c.LITERAL and 0 <= av < 256 and av not in _SPACE:
                parts.append(_hs_bytes(bytes([av])))
            elif op in (c.MAX_REPEAT, c.MIN_REPEAT):
                lo, hi, body = av
                body = list(body)
                if len(body) != 1 or body[0][0] is not c.IN:
                    return plain
                members = _class_bytes(body[0][1])
                if not members or any(b in _SPACE for b in members):
                    return plain
                if lo > GATE_BOUND:  # only the check below can stand for it
                    parts = []
                    break
                top = GATE_BOUND if hi is c.MAXREPEAT else min(hi, GATE_BOUND)
                if lo == 0 and k == 1 and items[0][0] is c.LITERAL and len(members) > 1:
                    # after the one byte an alternative starts with, the repeat need not
                    # hold that byte: a match from its last occurrence is one too, with a
                    # shorter repeat (Hyperscan: ~0.04 ns/byte less on a journal)
                    members = bytes(b for b in members if b != items[0][1])
                parts.append(f"{_hs_class(members)}{{{lo},{top}}}")
            else:
                return plain
        if parts:
            exprs.append(("".join(parts), True))
    exprs.append((f"[^\\x09-\\x0d\\x20]{{{GATE_BOUND}}}{_hs_bytes(tail)}", False))
    return exprs


def _gate_entries(patterns: list[tuple[str, bytes | None]]) -> list[tuple[int, tuple[str, bool]]]:
    """Per gated literal id, its ``gate_exprs``, in literal order."""
    return [
        (i, e) for i, (lit, g) in enumerate(patterns) if g is not None for e in gate_exprs(lit, g)
    ]


def database(patterns: list[tuple[str, bytes | None]]) -> Engine:
    """A block-mode database of the anchors of ``prefilter.engine_patterns`` literals and of
    their gates' expressions; a match's id indexes ``Engine``'s tables, the ids reported for
    a line are literal indexes (cached)."""
    hs = engine()
    if hs is None:
        raise EngineFailed("hyperscan is not installed")
    key = tuple(patterns)
    eng = _DBS.get(key)
    if eng is None:
        anchors = anchors_of(patterns)
        exprs = [_hs_bytes(a.encode("utf-8")) for a in _names(patterns, anchors)]
        exprs += [e for _, (e, _) in _gate_entries(patterns)]
        db = hs.Database(mode=hs.HS_MODE_BLOCK)
        try:
            db.compile(
                expressions=[e.encode("ascii") for e in exprs],
                ids=list(range(len(exprs))),
                flags=0,
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
    gates, full, expand, gated, sure = eng.gates, eng.full, eng.expand, eng.gated, eng.sure
    gated_ids, gated_set = eng.gated_ids, eng.gated_set
    k, n = 0, len(hits)
    while k < n:
        to = hits[k][0]
        start = buf.rfind(b"\n", 0, to) + 1
        line_end = buf.find(b"\n", to - 1)
        first = k
        k += 1
        while k < n and hits[k][0] <= line_end:
            k += 1
        ids: set[int] = set()
        passed = False  # a gate matched on the line, for sure
        check: list[tuple[int, int]] = []  # (hit, gated literal) whose gate Python checks
        # the literals holding an anchor are looked for in one copy of the line (``bytes.find``
        # without bounds to parse; ``lit in line`` is slower: it first tries ``lit`` as an
        # int), each once per line: an anchor such as "Error" stands for ~80 literals, and the
        # same anchor twice on a line was expanded twice (100 MB of the bench's planted
        # journal: ~15,000 bounded ``buf.find`` calls for its 184 candidate lines, ~4 ms)
        line = bytes(buf[start:line_end])
        seen: set[int] = set()
        for t, a in hits[first:k]:
            g = gated[a]
            if g >= 0:
                if sure[a]:
                    passed = True
                else:
                    check.append((t, g))
                continue
            if a in seen:
                continue
            seen.add(a)
            for i, exact in expand[a]:
                if i not in ids and (exact or line.find(full[i]) >= 0):
                    ids.add(i)
        for g in gated_ids:  # a gated literal anywhere on the line: Hyperscan reports none
            if line.find(full[g]) >= 0:
                ids.add(g)
        if not ids:  # anchors only: no literal of the set is on the line
            continue
        if (
            not passed
            and ids <= gated_set
            and (not check or _gated_out(buf, start, check, gates, eng.memo))
        ):
            continue  # only gated literals, no gate matching: the matcher would drop it
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


def _spool_segment(
    fd: int, k: int, start: int, end: int, spool: int, eng: Engine, cap: int, notify: int
) -> None:
    """Segment ``k`` (bytes [start, end)) scanned into its spool, then the END marker and its
    line count, then ``k`` on ``notify``: the caller can aggregate it from here on."""
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


def _take(queue: int) -> int | None:
    """The next segment index from the job's queue, or None once it is empty. Every index
    was written before any worker was forked, and the write end closed: a read returns one
    whole index (pipe writes under PIPE_BUF are atomic, each 4 bytes) or end of file, and each
    index goes to exactly one reader."""
    got = os.read(queue, _NOTE.size)
    return _NOTE.unpack(got)[0] if len(got) == _NOTE.size else None


def _child(
    fd: int,
    queue: int,
    parts: list[tuple[int, int, int]],
    eng: Engine,
    cap: int,
    notify: int,
) -> None:
    """Body of a forked worker: segments taken from ``queue`` in turn (``parts[k]``: start,
    end, spool fd of segment k), each spooled and announced (``_spool_segment``), until the
    queue is empty."""
    if sum(end - start for start, end, _ in parts) > 8 * WINDOW:
        _keep_freed_memory()
    while (k := _take(queue)) is not None:
        start, end, spool = parts[k]
        _spool_segment(fd, k, start, end, spool, eng, cap, notify)


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
    """A scan under way: forked workers, each spooling the candidates of the segments it
    takes, so the caller can do other work (load the knowledge base, import the diagnosis)
    while the log is read; ``candidates`` then hands them over in file order. ``close`` ends
    any worker still running (an error or a signal in the caller must not leave them reading).

    The log is cut into several segments per worker (``SLICES``), put in file order on a
    queue (a pipe, filled before the fork) that the workers take them from in turn: the
    caller aggregates a segment (prefixes, signatures, suspicious lines: ~40-80 us per
    candidate line) as soon as it is whole, while the workers read on, so only the last
    segment's candidates are aggregated after the reading ends, not all. And a caller whose
    own work is done before the reading (``candidates`` asks for a segment not yet whole)
    takes the segments still queued and scans them itself, from the same descriptor, instead
    of waiting: at 100 MB on 2 CPUs, `diagnose`'s own work after the fork was ~30 ms against
    the worker's ~75 ms of reading, and it waited ~40 ms for it (perf-session42.txt, perf-48).

    Where the caller has work of its own meanwhile (``caller_works``), a log under
    ``CALLER_CPU_BYTES`` gets a worker less than there are usable CPUs: that work is done
    first on the CPU left to it, and the caller then reads on that CPU itself (above); a
    worker competing with it for the last CPU only delays it. On 2 CPUs and 100 MB of the
    bench's journal: one worker, in parallel with the caller, instead of two workers and the
    caller sharing both CPUs (wall 0.90-0.97x of that, interleaved runs on a loaded host). A
    host with more CPUs than the log has segments is unchanged; from ``CALLER_CPU_BYTES`` on,
    the reading is the longer part and every CPU reads."""

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
        self.spools: list[IO[bytes]] = []
        self.queue = -1  # the read end of the segment queue (``_take``)
        self.notify = -1  # the read end of the workers' pipe: each whole segment's index
        self.parts: list[tuple[int, int, int]] = []
        self.fd = os.open(path, os.O_RDONLY) if fd is None else fd
        try:
            self.eng = database(patterns)
        except BaseException:
            self.close()
            raise
        self.cap = cap
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
            self.parts = [(bounds[k], bounds[k + 1], self.spools[k].fileno()) for k in range(count)]
            self.queue, qw = os.pipe()
            try:
                os.write(qw, b"".join(_NOTE.pack(k) for k in range(count)))  # <= 32 x 4 bytes
            finally:
                os.close(qw)  # empty queue: end of file, for the workers and the caller
            self.notify, nw = os.pipe()
            try:
                arm, parent = _death_signal(), os.getpid()
                for _ in range(n):
                    pid = os.fork()
                    if pid == 0:  # the worker: never return into the caller's code
                        code = 1
                        try:
                            os.close(self.notify)
                            _die_with(parent, arm)
                            _child(self.fd, self.queue, self.parts, self.eng, cap, nw)
                            code = 0
                        finally:
                            os._exit(code)
                    self.kids.append(pid)
            finally:
                os.close(nw)  # the workers' alone: it reads as EOF once all are gone
        except BaseException:
            self.close()
            raise

    def _note(self, wait: bool) -> int | None:
        """The index of the next segment a worker says is whole; None if none is yet (or no
        worker is left) and not ``wait``. All workers gone with a segment still due while
        waiting: EngineFailed."""
        os.set_blocking(self.notify, wait)
        note = b""
        while len(note) < _NOTE.size:
            try:
                got = os.read(self.notify, _NOTE.size - len(note))
            except BlockingIOError:
                if note:  # a note is written whole (4 bytes, one write): not seen here
                    os.set_blocking(self.notify, True)
                    continue
                return None
            if not got and not wait:  # every worker is gone: the caller scans what is left
                return None
            if not got:  # every worker is gone, one without finishing its segment
                for pid in list(self.kids):
                    if pid > 0:
                        self._reap(pid)
                raise EngineFailed("a scan worker stopped before the end of its segment")
            note += got
        k = _NOTE.unpack(note)[0]
        if not 0 <= k < len(self.spools):
            raise EngineFailed("a scan worker reported a segment it was not given")
        return k

    def _scan_here(self, k: int) -> tuple[list[tuple[int, int, bytes, tuple[int, ...]]], int]:
        """Segment ``k`` scanned in this process: its candidates (line number within the
        segment, offset, bytes, ids) and its line count. A failure is EngineFailed, as a
        worker's is (the scan falls back to another path)."""
        start, end, _ = self.parts[k]
        lines: list[int] = []
        at = [0]
        try:
            got = [
                (ln, at[0], raw, ids)
                for ln, raw, ids in scan_segment(self.fd, start, end, self.eng, self.cap, lines, at)
            ]
        except Exception as exc:  # a read error, hyperscan.error: what ends a worker
            raise EngineFailed(f"the scan of a queued segment failed: {exc}") from None
        return got, lines[0]

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
        each line's byte offset in the file before the line is yielded. A segment not yet
        whole when it is due: the caller scans the next one still queued meanwhile."""
        names: dict[tuple[int, ...], frozenset[str]] = {}
        patterns = self.patterns
        offset = 0
        whole: set[int] = set()
        mine: dict[int, tuple[list[tuple[int, int, bytes, tuple[int, ...]]], int]] = {}
        for k, spool in enumerate(list(self.spools)):
            while k not in whole and k not in mine:
                j = self._note(wait=False) if self.queue >= 0 else None
                if j is None and self.queue >= 0:
                    j = _take(self.queue)
                    if j is None:  # all taken: from here on the workers' notes are waited for
                        os.close(self.queue)
                        self.queue = -1
                    else:
                        mine[j] = self._scan_here(j)
                    continue
                whole.add(self._note(wait=True) if j is None else j)
            if k in mine:
                got, count = mine.pop(k)
                for ln, start, raw, ids in got:
                    hint = names.get(ids)
                    if hint is None:
                        hint = names[ids] = frozenset(patterns[i][0] for i in ids)
                    if at is not None:
                        at[0] = start
                    yield offset + ln, raw, hint
                offset += count
                continue
            counted: list[int] = []
            for ln, raw, ids in _read_spool(spool, offset, counted, at):
                hint = names.get(ids)
                if hint is None:
                    hint = names[ids] = frozenset(patterns[i][0] for i in ids)
                yield ln, raw, hint
            offset += counted[0]
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
        for end in (self.queue, self.notify):
            if end >= 0:
                with contextlib.suppress(OSError):
                    os.close(end)
        self.queue = self.notify = -1
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
