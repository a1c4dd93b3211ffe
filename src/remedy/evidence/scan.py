"""Turn a log into symptoms: the public entry points ``scan_path`` and ``scan_lines``.

The scan is split so that one decision is made in one place: ``reader`` finds candidate lines
(grep or Python), ``prefix`` strips collector prefixes, ``matcher`` applies the catalog, and
this module aggregates with bounded memory (at most ``MAX_PER_SIGNATURE`` symptoms kept per
signature, the rest counted; the ``TOP_SUSPICIOUS`` best unmatched error lines kept in a heap).
"""

from __future__ import annotations

import heapq
import os
import re
import sys
from collections.abc import Iterable
from pathlib import Path
from typing import BinaryIO, Literal

from remedy.errors import InputError, LogReadError
from remedy.evidence import early, fastscan, prefilter, reader
from remedy.evidence.catalog import Catalog, default_catalog, default_catalog_path
from remedy.evidence.matcher import LineMatcher, Match
from remedy.evidence.prefix import DOCKER_JSON_START, strip_prefixes
from remedy.evidence.suspicious import WORDS, base_score, is_command_echo, is_diagnostic
from remedy.results import SuspiciousLine, Symptom, _Plain

TEXT_CAP = 2000  # characters of a line kept in Symptom.text / SuspiciousLine.text
MAX_PER_SIGNATURE = 50
TOP_SUSPICIOUS = 20
# lines per log that may be the first half of a message hard-wrapped at a word boundary (logs
# copied from threads and terminals): each is matched once more joined to the line after it
WRAP_MAX = 64
# a quote bar a chat client or terminal UI draws at the start of each line of a quoted block
# ('> ' Markdown, '│'/'┃' box drawing, '▎'/'▍'/'▏' left block bars): copied with the text, it
# sits between the two halves of a wrapped message (tune-aq, round 43's gco-7: 'ptxas fatal:
# Value 'sm_103a' is not ' / '  ▎ defined for option 'gpu-name''); dropped from the follower
_QUOTE_BAR = re.compile(r"^[ \t]*(?:[>\u2502\u2503\u2551\u258c\u258d\u258e\u258f][ \t]*)+")

_BLOCK_OPEN = "ninja-failed-target"
_BLOCK_CLOSE = frozenset(
    {
        "ninja-subcommand-failed",
        "ninja-build-failed",
        "ninja-exited-status",
        "torch-extension-build-failed",
    }
)


class ScanResult(_Plain):
    """What one log says: matched symptoms, suspicious unmatched lines, and how much was read."""

    _FIELDS = ("source", "lines", "bytes", "symptoms", "suspicious", "dropped", "method")

    def __init__(
        self,
        *,
        source: str,
        lines: int = 0,
        bytes: int = 0,  # noqa: A002 - the field's name
        symptoms: list[Symptom] | None = None,
        suspicious: list[SuspiciousLine] | None = None,
        dropped: dict[str, int] | None = None,
        method: Literal["hyperscan", "grep", "python"] = "python",
    ) -> None:
        self.source = source
        self.lines = lines
        self.bytes = bytes
        self.symptoms = list(symptoms) if symptoms else []
        self.suspicious = list(suspicious) if suspicious else []
        # symptoms beyond MAX_PER_SIGNATURE per signature: signature id -> how many not kept
        self.dropped = dict(dropped) if dropped else {}
        self.method = method

    def ids(self) -> list[str]:
        """Signature ids seen, in order of first appearance."""
        return list(dict.fromkeys(s.signature for s in self.symptoms))

    def of(self, signature: str) -> list[Symptom]:
        return [s for s in self.symptoms if s.signature == signature]


def _excerpt(text: str, at: int) -> str:
    if len(text) <= TEXT_CAP:
        return text
    start = max(0, min(at - TEXT_CAP // 4, len(text) - TEXT_CAP))
    out = text[start : start + TEXT_CAP]
    if start > 0:
        out = "…" + out[1:]
    if start + TEXT_CAP < len(text):
        out = out[:-1] + "…"
    return out


class _Aggregator:
    """Feeds lines to the matcher and keeps the bounded result."""

    def __init__(self, catalog: Catalog, source: str) -> None:
        self.catalog = catalog
        self.source = source
        self.matcher = LineMatcher(catalog)
        self.symptoms: list[Symptom] = []
        self.kept: dict[str, int] = {}
        self.dropped: dict[str, int] = {}
        self.heap: list[tuple[float, int, SuspiciousLine]] = []
        # per process: inside a ninja failure block? first diagnostic still to come?
        self.block: dict[str | None, bool] = {}
        # line number -> (text, process, signature indexes): an unmatched line that holds a
        # specific needle and ends mid-sentence, waiting for the line after it
        self.wraps: dict[int, tuple[str, str | None, list[int]]] = {}
        self.wrap_budget = WRAP_MAX
        self.out_of_order = False
        # the line before an unmatched line that STARTS with a specific needle (a message wrapped
        # at the space after its subject: 'libfoo.so.1:' then 'cannot open shared object file'):
        # line number before -> (follower text, process, signature indexes)
        self.leads: dict[int, tuple[str, str | None, list[int]]] = {}
        self.prev: tuple[int, str, str | None] | None = None
        # the byte offset of each waiting line (wraps) and of each lead's follower, where the
        # scan told it (``feed``'s ``start``): resolve_wraps reads their neighbours from there
        self.starts: dict[int, int] = {}
        self.start = -1  # the line being fed's offset, -1: not known

    def feed(
        self, lineno: int, raw: bytes | str, hint: frozenset[str] | None = None, start: int = -1
    ) -> None:
        """One candidate line; ``hint``: the literals an engine saw in it (see LineMatcher);
        ``start``: its byte offset in the file, where the scan knows it (-1: not known)."""
        self.start = start
        if isinstance(raw, bytes):
            text = raw.decode("utf-8", "replace")
        else:
            text = raw
        if text.endswith("\r"):
            text = text[:-1]
        text, process = strip_prefixes(text)
        if self.wraps:
            waiting = self.wraps.pop(lineno - 1, None)
            if waiting is not None:
                self._join(lineno - 1, waiting, text, process)
        prev, self.prev = self.prev, (lineno, text, process)
        matches = self.matcher.match(lineno, text, process, hint)
        if matches:
            self._record(lineno, text, process, matches)
            # a shape that is evidence only for symbols in a table stays a first-error candidate,
            # and a wrap candidate: the line may be the first half of a message a specific
            # signature knows ('libX.so.9: cannot open shared obje' / 'ct file: ...')
            if all(m.sig.suspicious for m in matches):
                if self._has_word(text, hint):
                    self._suspicious(lineno, text, process)
                self._queue_wrap(lineno, text, process, {m.sig.id for m in matches})
            return
        if self._has_word(text, hint):
            self._suspicious(lineno, text, process)
        if self.wrap_budget > 0:
            self._queue_wrap(lineno, text, process)
            leads = self.matcher.lead_candidates(text) if lineno > 1 else []
            if leads:
                self.wrap_budget -= 1
                if prev is not None and prev[0] == lineno - 1:
                    before = len(self.symptoms)
                    self._join(lineno - 1, (prev[1], prev[2], leads), text, process, glue=False)
                    self.out_of_order |= len(self.symptoms) > before
                else:
                    self.leads[lineno - 1] = (text, process, leads)
                    if self.start >= 0:
                        self.starts[lineno] = self.start

    def _queue_wrap(
        self,
        lineno: int,
        text: str,
        process: str | None,
        matched: frozenset[str] | set[str] = frozenset(),
    ) -> None:
        """Keeps the line to be joined to its follower where a signature (not one it already
        matched) may have been cut by a wrap."""
        if self.wrap_budget <= 0:
            return
        idxs = [
            i for i in self.matcher.wrap_candidates(text) if self.matcher.sig_id(i) not in matched
        ]
        if idxs:
            self.wrap_budget -= 1
            self.wraps[lineno] = (text, process, idxs)
            if self.start >= 0:
                self.starts[lineno] = self.start

    @staticmethod
    def _has_word(text: str, hint: frozenset[str] | None) -> bool:
        return any(w in text for w in WORDS if hint is None or w in hint)

    def _join(
        self,
        lineno: int,
        waiting: tuple[str, str | None, list[int]],
        follower: str,
        process: str | None,
        glue: bool = True,
    ) -> None:
        """Second pass for a line that matched nothing alone: match it joined to the line after
        it (same process only). A symptom found so keeps the first line's number."""
        text, proc, idxs = waiting
        if proc != process or not follower.strip():
            return
        first, rest = text.rstrip(), _QUOTE_BAR.sub("", follower).strip()
        sep = " "
        matches = self.matcher.match_joined(first, rest, idxs)
        # a terminal copy hard-wrapped at its column cuts inside a word ('No such file o' /
        # 'r directory'): joined with no space, tried only where the word runs across the cut
        # (the first line ends, and the next starts, with a letter or digit) and the one-space
        # join matched nothing
        if not matches and glue and first[-1:].isalnum() and rest[:1].isalnum():
            sep = ""
            matches = self.matcher.match_joined(first, rest, idxs, sep)
        if not matches:
            return
        joined = first + sep + rest
        self._record(lineno, joined, proc, matches)
        if any(k[2].line == lineno for k in self.heap):  # now explained: not suspicious
            self.heap = [k for k in self.heap if k[2].line != lineno]
            heapq.heapify(self.heap)

    def resolve_wraps(self, fd: int) -> None:
        """Joins the lines still waiting for a follower that was not a candidate line, read
        back from the regular file open as ``fd`` (bounded by WRAP_MAX): each from its
        neighbour's byte offset where the scan gave it (``feed``'s ``start``), the others in
        one pass from the file's start up to the last one. (From the start only, a traceback
        frame near the end of a 1 GB journal cost ~0.7 s: every line before it split in
        Python, for one line.)"""
        if not self.wraps and not self.leads:
            return
        got: dict[int, bytes | None] = {}
        for n in self.wraps:
            if n in self.starts:
                got[n + 1] = reader.line_after(fd, self.starts[n], reader.MATCH_CAP)
        for n in self.leads:
            if n not in got and n + 1 in self.starts:
                got[n] = reader.line_before(fd, self.starts[n + 1], reader.MATCH_CAP)
        want = {n + 1 for n in self.wraps} | set(self.leads)
        got.update(reader.lines_at(fd, want - got.keys(), reader.MATCH_CAP))
        for n in sorted(got):
            raw = got[n]
            if raw is None:  # past the file's end: no follower
                continue
            text = raw.decode("utf-8", "replace")
            if text.endswith("\r"):
                text = text[:-1]
            line, process = strip_prefixes(text)
            before = len(self.symptoms)
            waiting = self.wraps.pop(n - 1, None)
            if waiting is not None:
                self._join(n - 1, waiting, line, process)
            lead = self.leads.pop(n, None)
            if lead is not None:
                follower, proc, idxs = lead
                self._join(n, (line, process, idxs), follower, proc, glue=False)
            self.out_of_order |= len(self.symptoms) > before
        self.wraps.clear()
        self.leads.clear()
        self.starts.clear()

    def _record(self, lineno: int, text: str, process: str | None, matches: list[Match]) -> None:
        for mt in matches:
            sig = mt.sig
            if sig.id == _BLOCK_OPEN:
                self.block[process] = True
            elif sig.id in _BLOCK_CLOSE:
                self.block.pop(process, None)
            n = self.kept.get(sig.id, 0)
            if n >= MAX_PER_SIGNATURE:
                self.dropped[sig.id] = self.dropped.get(sig.id, 0) + 1
                continue
            self.kept[sig.id] = n + 1
            self.symptoms.append(
                Symptom(
                    signature=sig.id,
                    line=lineno,
                    text=_excerpt(text, mt.start),
                    source=self.source,
                    fields=mt.fields,
                    process=process,
                    stage=sig.stage,
                    component=sig.component,
                    severity=sig.severity,
                )
            )

    def _suspicious(self, lineno: int, text: str, process: str | None) -> None:
        score, why = base_score(text)
        state = self.block.get(process)
        if state is not None and not is_command_echo(text):
            if state and is_diagnostic(text):
                score += 6.0
                why += "; first diagnostic inside a ninja failure block"
                self.block[process] = False
            else:
                score += 2.0
                why += "; inside a ninja failure block"
        # min-heap on (score, -line): the weakest, then latest, line is evicted first; a line
        # that would be evicted at once is not made (a journal's benign error lines: most)
        full = len(self.heap) >= TOP_SUSPICIOUS
        if full and (score, -lineno) <= self.heap[0][:2]:
            return
        item = SuspiciousLine(
            line=lineno, text=_excerpt(text, 0), source=self.source, score=score, reason=why
        )
        key = (score, -lineno, item)
        if full:
            heapq.heapreplace(self.heap, key)  # type: ignore[misc]
        else:
            heapq.heappush(self.heap, key)  # type: ignore[misc]

    def result(
        self, lines: int, nbytes: int, method: Literal["hyperscan", "grep", "python"]
    ) -> ScanResult:
        sus = sorted((k[2] for k in self.heap), key=lambda s: (-s.score, s.line))
        sus = _without_cut_traceback_headers(sus, self.symptoms)
        if self.out_of_order:
            self.symptoms.sort(key=lambda s: s.line)
        return ScanResult(
            source=self.source,
            lines=lines,
            bytes=nbytes,
            symptoms=self.symptoms,
            suspicious=sus,
            dropped=self.dropped,
            method=method,
        )


def _without_cut_traceback_headers(
    sus: list[SuspiciousLine], symptoms: list[Symptom]
) -> list[SuspiciousLine]:
    """The suspicious lines less a traceback header that nothing follows.

    Why: 'Traceback (most recent call last):' only announces frames; the statement of the
    failure is the exception line CPython prints after them (traceback.print_exception). A copy
    cut inside the frames (round 43's unknown/gcp-2: a Ray traceback that breaks off before its
    UnicodeDecodeError) holds no error line, and pointing at the header would claim one. A
    header with any later suspicious line or matched symptom is kept (it may still rank); a
    symptom of severity info (a context line: a traceback frame, a banner) states no failure
    and keeps no header (tune-gd)."""
    stated = [s.line for s in symptoms if s.severity != "info"]
    last = max([s.line for s in sus] + stated, default=0)
    return [s for s in sus if not (s.reason.startswith("traceback header") and s.line >= last)]


def _docker_json_log(f: BinaryIO) -> bool:
    """Whether the regular file ``f`` starts with a record of Docker's json-file driver."""
    try:
        head = os.pread(f.fileno(), 64, 0)
    except OSError:
        return False
    return DOCKER_JSON_START.match(head) is not None


def _resolve(catalog: Catalog | None) -> Catalog:
    return catalog if catalog is not None else default_catalog()


def scan_lines(
    lines: Iterable[str | bytes], source: str = "<stdin>", catalog: Catalog | None = None
) -> ScanResult:
    """Scan lines already in hand (a probe's output, a test). Items may end in a newline; an
    item holding several lines is split so numbering follows the original text."""
    cat = _resolve(catalog)
    agg = _Aggregator(cat, source)
    n = 0
    nbytes = 0
    cap = reader.MATCH_CAP
    for item in lines:
        if isinstance(item, bytes):
            nbytes += len(item)
            parts_b = item.split(b"\n")
            if item.endswith(b"\n"):
                parts_b.pop()
            for part in parts_b:
                n += 1
                agg.feed(n, part[:cap])
        else:
            nbytes += len(item.encode("utf-8", "surrogateescape"))
            parts_s = item.split("\n")
            if item.endswith("\n"):
                parts_s.pop()
            for part in parts_s:
                n += 1
                agg.feed(n, part[:cap])
    if n == 0:
        raise InputError(f"{source} is empty: nothing to scan")
    return agg.result(n, nbytes, "python")


def scan_path(
    path: str | Path,
    catalog: Catalog | None = None,
    *,
    method: Literal["auto", "hyperscan", "grep", "python"] = "auto",
) -> ScanResult:
    """Scan a log file ("-" reads stdin) with bounded memory.

    ``method="auto"``: regular files of at least ``fastscan.MIN_BYTES`` go through Hyperscan
    when it is installed (``fastscan``), else those of at least ``reader.GREP_MIN_BYTES``
    through the parallel grep prefilter; smaller ones through Python, which is faster than
    starting either. Stdin and pipes go through one grep fed by a thread. If the chosen engine
    fails on a regular file the scan runs in Python; every path gives the same result.
    """
    with PendingScan(path, catalog, method=method) as pending:
        return pending.result()


class PendingScan:
    """``scan_path`` in two halves: the constructor opens the log and, where Hyperscan is
    used, starts its workers; ``result`` waits for them and aggregates. In between the caller
    is free to do other work (``remedy diagnose`` loads the knowledge base while the log is
    read, so that on a 2-core host the start-up cost hides behind the scan). Use as a context
    manager, or call ``close``: it ends workers still running."""

    def __init__(
        self,
        path: str | Path,
        catalog: Catalog | None = None,
        *,
        method: Literal["auto", "hyperscan", "grep", "python"] = "auto",
        caller_works: bool = False,
    ) -> None:
        """``caller_works``: the caller does work of its own before ``result``
        (fastscan.Job)."""
        self.caller_works = caller_works
        self.cat = _resolve(catalog)
        self.path = path
        self.method = method
        self.source = str(path)
        self.job: fastscan.Job | None = None
        self.f: BinaryIO | None = None
        self.size = -1
        if str(path) == "-":
            return  # stdin is read in ``result``
        self.f, self.size, self.stream = reader.open_log(path)
        try:
            # Hyperscan tells the matcher which needles a line holds (its hint); inside a
            # Docker json-file record a needle with '"', '<' ... is escaped, so such a log
            # goes through grep or Python, which select lines by the escaped literals too
            use_hs = (
                self.size >= 0
                and not _docker_json_log(self.f)
                and (
                    method == "hyperscan"
                    or (
                        method == "auto"
                        and self.size >= fastscan.MIN_BYTES
                        and fastscan.engine() is not None
                    )
                )
            )
            if use_hs:
                try:
                    self.job = self._start_job(path)
                except fastscan.EngineFailed:
                    if method == "hyperscan":
                        raise
                except OSError as exc:
                    raise LogReadError(
                        f"cannot read log {self.source}: {exc.strerror or exc}"
                    ) from None
        except BaseException:
            self.close()
            raise

    def _start_job(self, path: str | Path) -> fastscan.Job:
        """The workers ``early.start`` forked for this file, or new ones; a freshly compiled
        literal database is cached for the next process's early start."""
        patterns = prefilter.engine_patterns(self.cat)
        assert self.f is not None
        job = early.take(str(path), os.fstat(self.f.fileno()), patterns)
        if job is not None:
            return job
        fresh = tuple(patterns) not in fastscan._DBS
        job = fastscan.Job(
            path,
            patterns,
            cap=reader.MATCH_CAP,
            fd=os.dup(self.f.fileno()),
            caller_works=self.caller_works,
        )
        if fresh and self.cat is default_catalog():
            early.save(patterns, fastscan.database(patterns), str(default_catalog_path()))
        return job

    def __enter__(self) -> PendingScan:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()

    def close(self) -> None:
        early.discard()
        if self.job is not None:
            self.job.close()
            self.job = None
        if self.f is not None:
            self.f.close()
            self.f = None

    def result(self) -> ScanResult:
        """The scan's result (waits for the workers); falls back as ``scan_path`` says."""
        cat, method, source, path = self.cat, self.method, self.source, self.path
        if self.f is None:  # stdin
            head = sys.stdin.buffer.read(reader.SNIFF)
            if not head:
                raise InputError("<stdin> is empty: nothing to scan")
            why = reader.binary_reason(head)
            if why:
                raise LogReadError(f"<stdin> does not look like a text log: {why}")
            return _scan_stream(
                reader.SniffedStream(head, sys.stdin.buffer), "<stdin>", cat, method
            )
        f, size = self.f, self.size
        if size < 0:  # a FIFO or device: it can be read only once
            return _scan_stream(self.stream, source, cat, method)
        if self.job is not None:
            agg = _Aggregator(cat, source)
            totals = reader.Totals()
            try:
                at = [-1]
                for lineno, raw, hint in self.job.candidates(totals, at):
                    agg.feed(lineno, raw, hint, at[0])
                agg.resolve_wraps(f.fileno())
                return agg.result(totals.lines, totals.bytes, "hyperscan")
            except fastscan.EngineFailed:
                if method == "hyperscan":
                    raise
            except OSError as exc:
                raise LogReadError(f"cannot read log {source}: {exc.strerror or exc}") from None
            finally:
                self.job.close()
                self.job = None
        literals = prefilter.literal_bytes(cat)
        use_grep = method == "grep" or (
            method == "auto" and size >= reader.GREP_MIN_BYTES and reader.usable_grep()
        )
        if use_grep:
            agg = _Aggregator(cat, source)
            totals = reader.Totals()
            try:
                at = [-1]
                for lineno, raw in reader.grep_candidates(
                    path, literals, totals, fd=f.fileno(), at=at
                ):
                    agg.feed(lineno, raw, start=at[0])
                agg.resolve_wraps(f.fileno())
                return agg.result(totals.lines, totals.bytes, "grep")
            except reader.GrepFailed:
                if method == "grep":
                    raise
            except OSError as exc:
                raise LogReadError(f"cannot read log {source}: {exc.strerror or exc}") from None
        f.seek(0)
        return _scan_stream(f, source, cat, "python", f.fileno())


def _scan_stream(
    stream: reader.SniffedStream | reader.IO[bytes],
    source: str,
    cat: Catalog,
    method: Literal["auto", "hyperscan", "grep", "python"],
    fd: int | None = None,
) -> ScanResult:
    """Scan a stream in one pass: through grep when usable, else in Python. ``fd``: the
    regular file behind it, read back for wrapped lines (a pipe cannot be: there a wrapped
    line is joined only to a follower that is itself a candidate line)."""
    literals = prefilter.literal_bytes(cat)
    agg = _Aggregator(cat, source)
    totals = reader.Totals()
    used: Literal["grep", "python"] = "python"
    try:
        if method == "grep" or (method == "auto" and reader.usable_grep()):
            used = "grep"
            try:
                for lineno, raw in reader.grep_stream_candidates(stream, literals, totals):
                    agg.feed(lineno, raw)
            except reader.GrepFailed as exc:  # the stream is consumed: no second pass
                raise LogReadError(
                    f"cannot scan {source}: {exc}",
                    hint="save the log to a file and scan the file",
                ) from None
        else:
            at = [-1]
            for lineno, raw in reader.python_candidates(stream, literals, totals, at=at):
                agg.feed(lineno, raw, start=at[0])
    except OSError as exc:
        raise LogReadError(f"cannot read log {source}: {exc.strerror or exc}") from None
    if totals.lines == 0:
        raise InputError(f"{source} is empty: nothing to scan")
    if fd is not None:
        try:
            agg.resolve_wraps(fd)
        except OSError as exc:
            raise LogReadError(f"cannot read log {source}: {exc.strerror or exc}") from None
    return agg.result(totals.lines, totals.bytes, used)
