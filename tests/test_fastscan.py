"""The Hyperscan scan path (evidence/fastscan.py) gives exactly the symptoms of the pure-Python
fallback: on the whole log corpus and on hostile inputs (binary bytes, invalid UTF-8, a 10 MB
line, lines across window and segment boundaries), and it falls back when the engine is gone."""

from __future__ import annotations

import contextlib
import io
import os
import random
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from readback import WAITING_BODIES, count_read_back, waiting_log

from remedy.errors import LogReadError
from remedy.evidence import default_catalog, early, fastscan, prefilter, reader
from remedy.evidence.scan import ScanResult, _Aggregator, scan_lines, scan_path

pytest.importorskip("hyperscan")

LOGS = Path(__file__).parent / "fixtures" / "logs"
CORPUS = sorted(LOGS.glob("*.log"))


def same(a: ScanResult, b: ScanResult) -> bool:
    return a.model_dump(exclude={"method"}) == b.model_dump(exclude={"method"})


def both(p: Path) -> tuple[ScanResult, ScanResult]:
    fast = scan_path(p, method="hyperscan")
    slow = scan_path(p, method="python")
    assert (fast.method, slow.method) == ("hyperscan", "python")
    return fast, slow


@pytest.mark.parametrize("log", CORPUS, ids=lambda p: p.name)
def test_corpus_log_same_symptoms(log: Path) -> None:
    fast, slow = both(log)
    assert same(fast, slow)


def test_whole_corpus_concatenated_in_small_windows_and_segments(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """All corpus logs in one file, read in 4 KiB windows by 1, 2 and 5 processes, and by
    1 and 2 reading 4 and 3 segments each in turn: every window and segment boundary falls
    somewhere inside real lines."""
    p = tmp_path / "corpus.log"
    p.write_bytes(b"".join(f.read_bytes() for f in CORPUS * 3))
    ref = scan_path(p, method="python")
    assert ref.symptoms, "the corpus has symptoms"
    monkeypatch.setattr(fastscan, "WINDOW", 4096)
    cat = default_catalog()
    for segs, slices in ((1, 1), (2, 1), (5, 1), (1, 4), (2, 3)):
        agg = _Aggregator(cat, str(p))
        tot = reader.Totals()
        for ln, raw, hint in fastscan.hyperscan_candidates(
            p,
            prefilter.engine_patterns(cat),
            tot,
            cap=reader.MATCH_CAP,
            segments=segs,
            slices=slices,
        ):
            agg.feed(ln, raw, hint)
        with p.open("rb") as f:
            agg.resolve_wraps(f.fileno())
        assert same(agg.result(tot.lines, tot.bytes, "hyperscan"), ref), (segs, slices)
        # and with each line's offset, as PendingScan feeds it (waiting lines read back from
        # their neighbours)
        agg = _Aggregator(cat, str(p))
        tot = reader.Totals()
        job = fastscan.Job(
            p, prefilter.engine_patterns(cat), cap=reader.MATCH_CAP, segments=segs, slices=slices
        )
        at = [-1]
        try:
            for ln, raw, hint in job.candidates(tot, at):
                agg.feed(ln, raw, hint, at[0])
        finally:
            job.close()
        with p.open("rb") as f:
            agg.resolve_wraps(f.fileno())
        assert same(agg.result(tot.lines, tot.bytes, "hyperscan"), ref), (segs, slices)


def test_workers_read_slices_in_turn_by_default(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A log big enough: SLICES segments per worker, taken from one queue in turn; a
    small one: one segment per worker."""
    monkeypatch.setattr(reader, "usable_cpus", lambda: 2)
    monkeypatch.setattr(fastscan, "SEGMENT_MIN_BYTES", 1 << 10)
    monkeypatch.setattr(fastscan, "CALLER_CPU_BYTES", 0)  # every CPU reads
    pats = prefilter.engine_patterns(default_catalog())
    big = tmp_path / "corpus.log"
    big.write_bytes(b"".join(f.read_bytes() for f in CORPUS))
    size = big.stat().st_size
    for slice_min, want in ((size // 16, 2 * fastscan.SLICES), (size, 2)):
        monkeypatch.setattr(fastscan, "SLICE_MIN_BYTES", slice_min)
        job = fastscan.Job(big, pats, cap=reader.MATCH_CAP)
        try:
            assert (len(job.kids), len(job.spools)) == (2, want)
            got = list(job.candidates(reader.Totals()))
        finally:
            job.close()
        assert got == list(
            fastscan.hyperscan_candidates(big, pats, reader.Totals(), cap=reader.MATCH_CAP)
        )


@pytest.mark.parametrize("cpus", [1, 2, 4])
def test_a_log_under_caller_cpu_bytes_leaves_the_caller_a_cpu(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, cpus: int
) -> None:
    """A caller with work of its own (diagnose) gets, under CALLER_CPU_BYTES, a worker less
    than the usable CPUs (never none); from it on, or a caller that only waits, one per CPU;
    the candidates are the same either way."""
    monkeypatch.setattr(reader, "usable_cpus", lambda: cpus)
    monkeypatch.setattr(fastscan, "SEGMENT_MIN_BYTES", 1 << 10)
    pats = prefilter.engine_patterns(default_catalog())
    big = tmp_path / "corpus.log"
    big.write_bytes(b"".join(f.read_bytes() for f in CORPUS))
    size = big.stat().st_size
    got = []
    for limit, works, want in (
        (size + 1, True, max(1, cpus - 1)),
        (size + 1, False, cpus),
        (size, True, cpus),
    ):
        monkeypatch.setattr(fastscan, "CALLER_CPU_BYTES", limit)
        job = fastscan.Job(big, pats, cap=reader.MATCH_CAP, caller_works=works)
        try:
            assert len(job.kids) == want
            got.append(list(job.candidates(reader.Totals())))
        finally:
            job.close()
    assert got[0] and got[0] == got[1] == got[2]


def test_diagnose_leaves_itself_a_cpu_and_plan_does_not(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, cache_home: Path
) -> None:
    """`diagnose` loads its knowledge while the log is read (caller_works), whether its
    workers start early or in the command; `scan_logs` (plan's --log) waits for the scan at
    once."""
    from remedy import commands, inputs

    monkeypatch.setattr(reader, "usable_cpus", lambda: 2)
    monkeypatch.setattr(fastscan, "SEGMENT_MIN_BYTES", 1 << 10)
    p = tmp_path / "corpus.log"
    p.write_bytes(b"".join(f.read_bytes() for f in CORPUS) * 4)
    monkeypatch.setattr(fastscan, "MIN_BYTES", 1 << 10)
    seen: list[bool] = []
    real = fastscan.Job.__init__

    def spy(self: fastscan.Job, *a: object, caller_works: bool = False, **k: object) -> None:
        seen.append(caller_works)
        real(self, *a, caller_works=caller_works, **k)  # type: ignore[arg-type]

    monkeypatch.setattr(fastscan.Job, "__init__", spy)
    inputs.scan_logs([p])  # also caches the engine for the early start
    assert seen == [False]
    with contextlib.redirect_stdout(io.StringIO()):
        commands.diagnose_run(None, None, None, [p], json_=True)
    assert seen == [False, True]
    early.start(["diagnose", "--log", str(p)])
    try:
        assert early._EARLY is not None and seen == [False, True, True]
    finally:
        early.discard()


def test_the_caller_scans_the_segments_still_queued(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A caller that asks for a segment not yet whole takes the segments still queued and
    scans them itself: with workers that take none, every segment is the caller's; with
    workers that took all before it asked, none is. The candidates, their offsets and the
    line count are the same either way, and the same as the Python path's result."""
    cat = default_catalog()
    pats = prefilter.engine_patterns(cat)
    p = tmp_path / "corpus.log"
    p.write_bytes(b"".join(f.read_bytes() for f in CORPUS))
    ref = scan_path(p, method="python")
    scanned: list[int] = []
    real_here = fastscan.Job._scan_here

    def spy(self: fastscan.Job, k: int) -> Any:
        scanned.append(k)
        return real_here(self, k)

    monkeypatch.setattr(fastscan.Job, "_scan_here", spy)
    real_child = fastscan._child
    got = []
    for idle in (True, False):
        monkeypatch.setattr(fastscan, "_child", (lambda *_a: None) if idle else real_child)
        scanned.clear()
        job = fastscan.Job(p, pats, cap=reader.MATCH_CAP, segments=2, slices=3)
        agg, tot, at = _Aggregator(cat, str(p)), reader.Totals(), [-1]
        try:
            if not idle:  # every segment whole before the caller asks
                for pid in job.kids:
                    os.waitpid(pid, 0)
                job.kids = [-1 for _ in job.kids]
            rows = []
            for ln, raw, hint in job.candidates(tot, at):
                rows.append((ln, at[0], raw, hint))
                agg.feed(ln, raw, hint, at[0])
        finally:
            job.close()
        assert scanned == ([0, 1, 2, 3, 4, 5] if idle else [])
        with p.open("rb") as f:
            agg.resolve_wraps(f.fileno())
        assert same(agg.result(tot.lines, tot.bytes, "hyperscan"), ref)
        got.append((rows, tot.lines))
    assert got[0] == got[1] and got[0][0]


def test_worker_that_stops_after_a_slice_falls_back(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A worker that spools its first segment and then dies: the caller has aggregated that
    one, finds the next missing, and the scan falls back to Python, with the same result."""
    p = tmp_path / "big.log"
    p.write_bytes(
        (b"w" * 99 + b"\n") * 20_000
        + b"ninja: build stopped: subcommand failed.\n"
        + (b"w" * 99 + b"\n") * 20_000
    )
    ref = scan_path(p, method="python")

    def first_only(
        fd: int, queue: int, parts: list[tuple[int, int, int]], eng: Any, cap: int, note: int
    ) -> None:
        k = fastscan._take(queue)
        assert k is not None
        fastscan._spool_segment(fd, k, *parts[k], eng, cap, note)
        os._exit(3)

    monkeypatch.setattr(fastscan, "_child", first_only)
    pats = prefilter.engine_patterns(default_catalog())
    job = fastscan.Job(p, pats, cap=reader.MATCH_CAP, segments=2, slices=2)
    try:
        with pytest.raises(fastscan.EngineFailed, match="scan worker"):
            list(job.candidates(reader.Totals()))
    finally:
        job.close()
    monkeypatch.setattr(fastscan, "SEGMENT_MIN_BYTES", 1 << 20)
    monkeypatch.setattr(fastscan, "SLICE_MIN_BYTES", 1 << 19)
    monkeypatch.setattr(reader, "usable_cpus", lambda: 2)
    res = scan_path(p)
    assert res.method != "hyperscan" and same(res, ref)


@pytest.mark.parametrize("sparse_line", [1, 48, 10**9])  # always delete / adaptive / count
def test_newline_counting_either_way_gives_the_python_paths_lines(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, sparse_line: int
) -> None:
    """``_newlines`` deletes newlines (memchr) or counts them (a loop); the corpus, read in
    4 KiB windows by 1 and 3 workers, numbers every line the same either way."""
    p = tmp_path / "corpus.log"
    p.write_bytes(b"".join(f.read_bytes() for f in CORPUS * 2) + b"\n" * 5000 + b"x" * 30)
    ref = scan_path(p, method="python")
    monkeypatch.setattr(fastscan, "WINDOW", 4096)
    monkeypatch.setattr(fastscan, "DELETE_MIN", 0)
    monkeypatch.setattr(fastscan, "SPARSE_LINE", sparse_line)
    cat = default_catalog()
    for segs in (1, 3):
        agg = _Aggregator(cat, str(p))
        tot = reader.Totals()
        for ln, raw, hint in fastscan.hyperscan_candidates(
            p, prefilter.engine_patterns(cat), tot, cap=reader.MATCH_CAP, segments=segs
        ):
            agg.feed(ln, raw, hint)
        with p.open("rb") as f:
            agg.resolve_wraps(f.fileno())
        assert same(agg.result(tot.lines, tot.bytes, "hyperscan"), ref), segs
        assert tot.lines == ref.lines


def test_newlines_deleted_or_counted_agree_on_any_bytes(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(fastscan, "DELETE_MIN", 0)
    rnd = random.Random(3)
    for _ in range(300):
        buf = bytearray(rnd.choice(b"\nab\x00\xff") for _ in range(rnd.randrange(0, 300)))
        a = rnd.randrange(0, len(buf) + 1)
        b = rnd.randrange(a, len(buf) + 1)
        want = bytes(buf[a:b]).count(b"\n")
        for sparse in (False, True):
            assert fastscan._newlines(buf, a, b, sparse) == want


def _hostile(rnd: random.Random, corpus_lines: list[bytes]) -> bytes:
    out = []
    for _ in range(4000):
        r = rnd.random()
        if r < 0.3:
            out.append(rnd.choice(corpus_lines))
        elif r < 0.5:  # control bytes, escape sequences, bytes that are not UTF-8
            out.append(bytes(rnd.choice(b"\x01\x1b\x7f\x80\xc3\xff\xfe\t\r ab") for _ in range(60)))
        elif r < 0.6:  # a corpus line cut in the middle of a UTF-8 sequence, or with junk
            ln = rnd.choice(corpus_lines)
            out.append(ln[: rnd.randrange(len(ln) + 1)] + b"\xe2\x80" + ln)
        elif r < 0.65:  # nvcc paths: the gated needle, with and without a gate match
            out.append(
                rnd.choice(
                    [
                        b"[1/11] /opt/venv/nvidia/cu13/bin/nvcc -c a.cu -o a.o 18:00:01",
                        b"[1/11] :/usr/local/cuda-12.8/bin/nvcc --generate-dependencies",
                        b"/bin/sh: 1: :/usr/local/cuda/bin/nvcc: not found",
                        b"x=/usr/local/cuda/bin/bin/nvcc\t:y /bin/nvcc",
                        b"a\x0b:b/bin/nvcc \xa0:/bin/nvcc",
                    ]
                )
            )
        else:
            out.append(b"INFO: 127.0.0.1:4242 - GET /health 200 OK")
    return b"\n".join(out) + rnd.choice([b"\n", b"", b"\r\n"])


@pytest.mark.parametrize("seed", range(4))
def test_hostile_bytes_same_symptoms(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, seed: int
) -> None:
    rnd = random.Random(seed)
    corpus_lines = [ln for f in CORPUS for ln in f.read_bytes().splitlines() if ln]
    p = tmp_path / "hostile.log"
    data = _hostile(rnd, corpus_lines)
    p.write_bytes(data)
    monkeypatch.setattr(fastscan, "WINDOW", 1 << 12)
    fast, slow = both(p)
    assert same(fast, slow)
    assert fast.lines == data.count(b"\n") + (0 if data.endswith(b"\n") else 1)


def test_nul_bytes_after_the_sniffed_head(tmp_path: Path) -> None:
    """Binary after the first 64 KiB (the sniff window) is scanned, the same way, by both."""
    p = tmp_path / "bin.log"
    p.write_bytes(
        (b"x" * 99 + b"\n") * 700
        + bytes(range(256)) * 64
        + b"\x00cannot find -lcudart\x00\ncollect2: error: ld returned 1 exit status\n"
    )
    fast, slow = both(p)
    assert same(fast, slow)
    assert "ld-cannot-find-lib" in fast.ids()


def test_binary_file_refused_alike(tmp_path: Path) -> None:
    p = tmp_path / "core"
    p.write_bytes(b"\x7fELF\x00\x00" * 1000)
    for method in ("hyperscan", "python"):
        with pytest.raises(LogReadError, match="NUL"):
            scan_path(p, method=method)  # type: ignore[arg-type]


def test_ten_megabyte_single_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A 10 MB line (over two windows) with needles before and beyond the match cap."""
    p = tmp_path / "long.log"
    head = b"RuntimeError: Ninja build failed. Ninja output: "
    p.write_bytes(
        b"first line\n"
        + head
        + b"b" * (10 << 20)
        + b" collect2: error: ld returned 1 exit status\nThe server is fired up and ready to roll!"
    )
    monkeypatch.setattr(fastscan, "WINDOW", 1 << 20)
    fast, slow = both(p)
    assert same(fast, slow)
    assert [(s.line, s.signature) for s in fast.symptoms] == [
        (2, "ninja-build-failed"),
        (3, "server-ready"),
    ]
    assert fast.lines == 3


def test_gate_drops_plain_nvcc_lines_and_keeps_malformed_ones(tmp_path: Path) -> None:
    p = tmp_path / "ninja.log"
    plain = b"[1/11] /root/venv/lib/python3.12/site-packages/nvidia/cu13/bin/nvcc -c k.cu\n"
    bad = b"[2/11] :/usr/local/cuda-12.8/bin/nvcc --generate-dependencies-with-compile\n"
    p.write_bytes(plain * 100 + bad + plain)
    cat = default_catalog()
    tot = reader.Totals()
    got = list(
        fastscan.hyperscan_candidates(p, prefilter.engine_patterns(cat), tot, cap=reader.MATCH_CAP)
    )
    assert [ln for ln, _, _ in got] == [101]  # the 101 plain lines never reach the matcher
    fast, slow = both(p)
    assert same(fast, slow)
    assert [(s.line, s.signature) for s in fast.symptoms] == [(101, "nvcc-path-malformed")]


def test_token_gate_accepts_only_safe_gates() -> None:
    ok = prefilter._token_gate
    assert ok("/bin/bin/nvcc|:[^\\s'\"]*/bin/nvcc", "/bin/nvcc")
    assert not ok("(?:^|\\s):x/bin/nvcc", "/bin/nvcc")  # an anchor
    assert not ok(":[^'\"]*/bin/nvcc", "/bin/nvcc")  # a class that lets whitespace in
    assert not ok(":\\S*/bin/nvcc", "/bin/nvcc")  # \S: narrower on bytes than on str
    assert not ok("/bin/nvcc -c", "/bin/nvcc")  # does not end with the needle
    assert not ok("/bin/nvcc(", "/bin/nvcc")  # not a regex


def test_auto_uses_the_engine_and_falls_back_without_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    p = tmp_path / "big.log"
    p.write_bytes((b"z" * 99 + b"\n") * 40_000 + b"cannot find -lcudart\n")  # 4 MB
    res = scan_path(p)
    assert res.method == "hyperscan" and res.ids() == ["ld-cannot-find-lib"]
    monkeypatch.setattr(fastscan, "_ENGINE", None)  # as when hyperscan is not installed
    fallback = scan_path(p)
    assert fallback.method in ("grep", "python")
    assert same(res, fallback)
    with pytest.raises(fastscan.EngineFailed):
        scan_path(p, method="hyperscan")


def test_failing_worker_falls_back(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    p = tmp_path / "big.log"
    p.write_bytes((b"w" * 99 + b"\n") * 40_000 + b"ninja: build stopped: subcommand failed.\n")
    ref = scan_path(p, method="python")

    def broken(*_a: object, **_k: object) -> None:
        raise RuntimeError("worker crashed")

    monkeypatch.setattr(fastscan, "_child", broken)
    monkeypatch.setattr(fastscan, "SEGMENT_MIN_BYTES", 1 << 20)
    monkeypatch.setattr(reader, "usable_cpus", lambda: 2)
    res = scan_path(p)
    assert res.method != "hyperscan" and same(res, ref)


def test_a_failing_scan_in_the_caller_falls_back(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The caller's own scan of a queued segment fails as a worker's does: EngineFailed, and
    the scan falls back to another path with the same result (not an internal error)."""
    p = tmp_path / "big.log"
    p.write_bytes((b"w" * 99 + b"\n") * 40_000 + b"ninja: build stopped: subcommand failed.\n")
    ref = scan_path(p, method="python")

    def broken(*_a: object, **_k: object) -> Iterator[Any]:
        raise RuntimeError("scan failed")
        yield  # pragma: no cover - a generator, as scan_segment is

    monkeypatch.setattr(fastscan, "_child", lambda *_a: None)  # workers take nothing
    monkeypatch.setattr(fastscan, "scan_segment", broken)
    monkeypatch.setattr(fastscan, "SEGMENT_MIN_BYTES", 1 << 20)
    monkeypatch.setattr(reader, "usable_cpus", lambda: 2)
    job = fastscan.Job(p, prefilter.engine_patterns(default_catalog()), cap=reader.MATCH_CAP)
    try:
        with pytest.raises(fastscan.EngineFailed, match="queued segment"):
            list(job.candidates(reader.Totals()))
    finally:
        job.close()
    res = scan_path(p)
    assert res.method != "hyperscan" and same(res, ref)


# --- early start (remedy.evidence.early): the scan forked before the CLI's imports -------------


def _big_log(p: Path, tail: bytes = b"cannot find -lcudart\n") -> Path:
    p.write_bytes((b"y" * 99 + b"\n") * 30_000 + tail)  # 3 MB: over fastscan.MIN_BYTES
    return p


@pytest.fixture
def cache_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    home = tmp_path / "cache"
    home.mkdir(mode=0o700)
    monkeypatch.setenv("XDG_CACHE_HOME", str(home))
    fastscan._DBS.clear()  # as in a new process: the first scan compiles, then caches
    yield home
    early.discard()


def test_log_arg_is_read_only_from_diagnose() -> None:
    assert early._log_arg(["diagnose", "--log", "a.log", "--json"]) == "a.log"
    assert early._log_arg(["diagnose", "--json", "-l", "b.log"]) == "b.log"
    assert early._log_arg(["diagnose", "--log=c.log"]) == "c.log"
    assert early._log_arg(["plan", "--log", "a.log"]) is None
    assert early._log_arg(["run", "host", "--log", "run.log"]) is None  # run's own log file
    assert early._log_arg(["diagnose", "--", "--log", "x"]) is None
    assert early._log_arg(["diagnose", "--log"]) is None
    assert early._log_arg([]) is None


def test_early_job_is_taken_and_gives_the_same_symptoms(
    tmp_path: Path, cache_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    p = _big_log(tmp_path / "big.log", b"".join(f.read_bytes() for f in CORPUS[:20]))
    ref = scan_path(p, method="python")
    assert scan_path(p).method == "hyperscan"
    assert (Path(early.cache_path())).is_file()
    fastscan._DBS.clear()  # the next process: the database comes from the cache
    early.start(["diagnose", "--log", str(p), "--json"])
    assert early._EARLY is not None, "the early scan started"
    started: list[object] = []
    monkeypatch.setattr(fastscan, "Job", lambda *a, **k: started.append(a))
    res = scan_path(p)
    assert started == [], "the early workers were used, no new ones"
    assert early._EARLY is None
    assert res.method == "hyperscan" and same(res, ref)


def test_early_job_is_dropped_when_the_file_changed(tmp_path: Path, cache_home: Path) -> None:
    p = _big_log(tmp_path / "big.log")
    scan_path(p)  # writes the cache
    early.start(["diagnose", "--log", str(p)])
    assert early._EARLY is not None
    with p.open("ab") as f:  # after the early start: the early job read the old file
        f.write(b"ninja: build stopped: subcommand failed.\n")
    res = scan_path(p)
    assert early._EARLY is None
    assert same(res, scan_path(p, method="python"))
    assert "ninja-subcommand-failed" in res.ids()


def test_no_early_start_on_a_link_a_small_file_or_a_foreign_cache(
    tmp_path: Path, cache_home: Path
) -> None:
    p = _big_log(tmp_path / "big.log")
    scan_path(p)  # writes the cache
    link = tmp_path / "link.log"
    link.symlink_to(p)
    early.start(["diagnose", "--log", str(link)])
    assert early._EARLY is None  # links go the ordinary way (open_log's link checks)
    small = tmp_path / "small.log"
    small.write_bytes(b"cannot find -lcudart\n")
    early.start(["diagnose", "--log", str(small)])
    assert early._EARLY is None
    cache = Path(early.cache_path())
    cache.chmod(0o666)  # writable by others: not ours to trust
    early.start(["diagnose", "--log", str(p)])
    assert early._EARLY is None
    cache.chmod(0o600)
    cache.write_bytes(cache.read_bytes()[:-10])  # damaged: its digest no longer matches
    early.start(["diagnose", "--log", str(p)])
    assert early._EARLY is None
    assert same(scan_path(p), scan_path(p, method="python"))


def test_diagnose_cli_output_same_with_and_without_early_start(
    tmp_path: Path, cache_home: Path
) -> None:
    """The whole command, twice in fresh processes (the second starts early), and with the
    engine's cache gone: identical JSON."""
    import os
    import subprocess
    import sys

    p = _big_log(tmp_path / "big.log", b"".join(f.read_bytes() for f in CORPUS[:20]))
    env = {**os.environ, "XDG_CACHE_HOME": str(cache_home)}
    cmd = [sys.executable, "-m", "remedy", "diagnose", "--log", str(p), "--json"]
    outs = [subprocess.run(cmd, capture_output=True, env=env, timeout=300) for _ in range(2)]
    assert (Path(early.cache_path())).is_file()
    assert outs[0].returncode == outs[1].returncode
    assert outs[0].stdout == outs[1].stdout and b'"symptoms"' in outs[0].stdout


def test_gate_verdicts_remembered_per_run_match_the_python_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The same nvcc runs again and again (remembered), many distinct ones (the memo is
    cleared when full) and tokens longer than MEMO_RUN (checked, not remembered): the gate
    keeps exactly the malformed lines, as the Python path does."""
    monkeypatch.setattr(fastscan, "MEMO_MAX", 3)
    monkeypatch.setattr(fastscan, "MEMO_RUN", 40)
    rnd = random.Random(7)
    lines, bad = [], []
    for n in range(1, 3001):
        deep = "/d" * rnd.choice([1, 2, 30])  # 30: a run over MEMO_RUN bytes
        venv = f"/opt/v{rnd.randrange(8)}{deep}"
        if rnd.random() < 0.05:
            lines.append(f"[{n}/3000] :{venv}/bin/nvcc -c k.cu")  # the malformed form
            bad.append(n)
        else:
            lines.append(f"[{n}/3000] {venv}/bin/nvcc -c k.cu -o k.o")
    p = tmp_path / "ninja.log"
    p.write_text("\n".join(lines) + "\n")
    fastscan._DBS.clear()  # a fresh memo for this test's limits
    fast, slow = both(p)
    assert same(fast, slow)
    assert [s.line for s in fast.symptoms if s.signature == "nvcc-path-malformed"] == bad[:50]


def test_lines_with_gated_literals_are_candidates_exactly_where_the_gate_matches(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Lines holding a gated literal: alone, with literals holding it before (``/usr/bin/nvcc``)
    and after (``/bin/nvcc-x``) it, with an ungated literal; runs before it under and over
    ``GATE_BOUND`` (its gate then checked in Python, verdicts remembered, a memo cleared when
    full) and over MEMO_RUN. Each candidate's literals are exactly those on the line, and a
    line holding only the gated literal is a candidate exactly where its gate matches."""
    monkeypatch.setattr(fastscan, "MEMO_MAX", 5)
    monkeypatch.setattr(fastscan, "MEMO_RUN", 100)
    assert fastscan.GATE_BOUND < 80  # the runs of 87 bytes below are over it
    gate = rb"(?:/bin/bin/nvcc|:[^\s'\"]*/bin/nvcc)"
    pats: list[tuple[str, bytes | None]] = [
        ("/bin/nvcc", gate),
        ("/bin/nvcc-x", None),
        ("/usr/bin/nvcc", None),
        ("error", None),
    ]
    forms = [
        "{p}/bin/nvcc -c k.cu",
        "{p}/bin/nvcc-x -c k.cu",
        "{p}/bin/nvcc-",
        "{p}/bin/nvcc",
        "/usr/bin/nvcc -c",
        "x/usr/bin/nvcc-x",
        "usr/bin/nvcc-x",
        ":{p}/bin/nvcc -c",
        ":{p}/bin/nvcc-x",
        "\t{p}/bin/nvcc-\t",
        "{p}/bin/nvcc error",
    ]
    rnd = random.Random(11)
    lines = []
    for n in range(1, 4001):
        # runs of 57 bytes, 87 (over GATE_BOUND) and 127 (and over MEMO_RUN) before the needle
        deep = "/d" * rnd.choice([0, 1, 25, 40, 60])
        prefix = rnd.choice(["/usr/local/cuda", f"/opt/v{rnd.randrange(4)}{deep}", ""])
        lines.append(f"[{n}] " + rnd.choice(forms).format(p=prefix))
    p = tmp_path / "ninja.log"
    p.write_text("\n".join(lines) + "\n")
    fastscan._DBS.clear()
    eng = fastscan.database(pats)
    got = _segment_candidates(p, eng)
    assert eng.memo, "runs over GATE_BOUND: checked in Python, verdicts remembered"
    want = _gated_candidates(lines, pats, gate)
    assert got == want
    fastscan._DBS.clear()


def test_needle_across_a_window_and_a_segment_boundary(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A failure line whose needle straddles the 4 KiB window edge, and one that starts right
    at the second segment's first byte: both found, at their lines, as in Python."""
    needle = b"cannot find -lcudart"
    filler = b"z" * 63 + b"\n"  # 64-byte lines
    head = filler * 63 + b"x" * 54  # the needle's first 10 bytes end the first window
    body = head + needle + b"\n" + filler * 200
    p = tmp_path / "edge.log"
    p.write_bytes(body + needle + b"\n" + filler * 50)
    assert body.index(needle) < 4096 < body.index(needle) + len(needle)
    monkeypatch.setattr(fastscan, "WINDOW", 4096)
    monkeypatch.setattr(reader, "_segment_bounds", lambda _fd, size, _n: [0, len(body), size])
    cat = default_catalog()
    got = list(
        fastscan.hyperscan_candidates(
            p, prefilter.engine_patterns(cat), reader.Totals(), cap=reader.MATCH_CAP
        )
    )
    assert [ln for ln, _, _ in got] == [64, 265]
    fast = scan_path(p, method="hyperscan")
    assert same(fast, scan_path(p, method="python"))
    assert [(s.line, s.signature) for s in fast.symptoms] == [
        (64, "ld-cannot-find-lib"),
        (265, "ld-cannot-find-lib"),
    ]


def _gone(pid: int) -> bool:
    import os

    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    return False


def test_a_failing_diagnose_leaves_no_scan_worker_behind(
    tmp_path: Path, cache_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Workers started early, still reading (here: a worker that would take a minute), are
    ended and reaped when the command fails before it takes their result."""
    import time

    from typer.testing import CliRunner

    from remedy.cli import app

    p = _big_log(tmp_path / "big.log")
    scan_path(p)  # the engine cache, as a previous run leaves it
    monkeypatch.setattr(fastscan, "_child", lambda *_a: time.sleep(60))
    early.start(["diagnose", "--log", str(p)])
    assert early._EARLY is not None
    pids = list(early._EARLY[2].kids)
    assert pids and not any(_gone(pid) for pid in pids)
    res = CliRunner().invoke(app, ["diagnose", "--log", str(p), "--facts", str(tmp_path / "x")])
    assert "cannot read facts file" in str(res.exception)  # main() makes it exit 2
    assert all(_gone(pid) for pid in pids)
    assert early._EARLY is None


def _ended(pid: int) -> bool:
    """Gone, or a zombie waiting for whoever adopted it: either way no longer reading."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] in ("Z", "X")
    except FileNotFoundError:
        return True


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs Linux /proc")
def test_workers_die_when_their_parent_is_killed(tmp_path: Path) -> None:
    """A parent killed with SIGKILL runs no cleanup: its workers (here: ones that would read
    for a minute) must not outlive it (PR_SET_PDEATHSIG)."""
    import signal
    import subprocess
    import sys
    import time

    p = _big_log(tmp_path / "big.log")
    code = (
        "import sys, time\n"
        "from remedy.evidence import default_catalog, fastscan, prefilter, reader\n"
        "fastscan._child = lambda *_a: time.sleep(60)\n"
        "job = fastscan.Job(sys.argv[1], prefilter.engine_patterns(default_catalog()),"
        " cap=reader.MATCH_CAP, segments=2)\n"
        "print(*job.kids, flush=True)\n"
        "time.sleep(60)\n"
    )
    proc = subprocess.Popen([sys.executable, "-c", code, str(p)], stdout=subprocess.PIPE, text=True)
    pids: list[int] = []
    try:
        assert proc.stdout is not None
        pids = [int(x) for x in proc.stdout.readline().split()]
        assert len(pids) == 2
        assert not any(_ended(pid) for pid in pids)
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=10)
        deadline = time.monotonic() + 10
        while not all(_ended(pid) for pid in pids) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert all(_ended(pid) for pid in pids)
    finally:
        proc.kill()
        proc.wait()
        for pid in pids:  # only if the assertion failed: do not leave them sleeping
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)


def test_a_worker_whose_parent_is_already_gone_exits(monkeypatch: pytest.MonkeyPatch) -> None:
    """The parent died between fork and prctl: the worker is an orphan and must not start."""
    exits: list[int] = []

    def fake_exit(code: int) -> None:
        exits.append(code)

    monkeypatch.setattr(os, "_exit", fake_exit)
    armed: list[bool] = []
    fastscan._die_with(os.getpid() + 1_000_000, lambda: armed.append(True))
    assert armed == [True] and exits == [1]
    fastscan._die_with(os.getppid(), None)  # our parent is alive: nothing happens
    assert exits == [1]


def test_an_early_job_nobody_takes_is_ended(tmp_path: Path, cache_home: Path) -> None:
    p = _big_log(tmp_path / "big.log")
    scan_path(p)
    early.start(["diagnose", "--log", str(p)])
    assert early._EARLY is not None
    pids = list(early._EARLY[2].kids)
    early.discard()  # what the exit handler does
    assert all(_gone(pid) for pid in pids)


def test_early_workers_read_the_file_they_opened_not_what_the_name_later_is(
    tmp_path: Path, cache_home: Path
) -> None:
    """The name swapped for another file after the early start (a planted swap): the early
    job read the first file, so it is not taken; the result is the new file's, as Python's."""
    p = _big_log(tmp_path / "big.log")
    scan_path(p)  # the engine cache
    early.start(["diagnose", "--log", str(p)])
    assert early._EARLY is not None
    other = _big_log(tmp_path / "other.log", b"ninja: build stopped: subcommand failed.\n")
    other.replace(p)  # same name, same size, another inode
    res = scan_path(p)
    assert early._EARLY is None
    assert res.ids() == ["ninja-subcommand-failed"]
    assert same(res, scan_path(p, method="python"))


def test_the_console_script_starts_the_scan_only_for_diagnose(
    tmp_path: Path, cache_home: Path
) -> None:
    """remedy.entry forks the early workers for `diagnose --log FILE` (in a child process:
    importing remedy.entry installs its signal handlers), and for no other command."""
    import os
    import subprocess
    import sys

    p = _big_log(tmp_path / "big.log")
    scan_path(p)  # the engine cache
    code = (
        "import sys; sys.argv = ['remedy', *sys.argv[1:]]\n"
        "import remedy.entry as e; e._start_scan()\n"
        "from remedy.evidence import early; print(early._EARLY is not None)\n"
    )
    env = {**os.environ, "XDG_CACHE_HOME": str(cache_home)}
    for argv, want in [
        (["diagnose", "--log", str(p)], b"True"),
        (["plan", "--log", str(p)], b"False"),
        (["diagnose", "--log", str(tmp_path / "missing.log")], b"False"),
    ]:
        out = subprocess.run(
            [sys.executable, "-c", code, *argv], env=env, capture_output=True, timeout=60
        )
        assert out.stdout.strip() == want, (argv, out.stderr)


# Real copies of messages hard-wrapped at a word boundary (round-12 held-out logs, a GitHub
# thread's quoted block): line 1 holds the start of the signature, line 2 its end.
WRAPPED = [
    (
        b"RuntimeError: Error transcribing file: CUDA error: no kernel image is available for\n"
        b"execution on the device\n",
        "no-kernel-image",
    ),
    (
        b"mathcalls.h: error: exception specification is incompatible with that of\n"
        b'previous function "cospi" (declared in crt/math_functions.h)\n',
        "glibc-math-exception-spec",
    ),
    # wrapped at the space after its subject: the needle STARTS line 2 (round 37's gbg-2)
    (
        b"ImportError: libnuma.so.1:\ncannot open shared object file: No such file or directory\n",
        "shared-lib-not-found",
    ),
]


@pytest.mark.parametrize("body,sig", WRAPPED, ids=[w[1] for w in WRAPPED])
def test_wrapped_line_matches_on_every_path_at_its_first_line(
    tmp_path: Path, body: bytes, sig: str
) -> None:
    """The second pass joins an unmatched line to the next one; every read path (Hyperscan,
    grep, Python, lines in hand) finds the symptom at the first line, where a reader looks, and
    the line is no longer listed as unexplained. Placed at the start, in the middle of a log
    larger than a Hyperscan window, and as the last lines of a file without a final newline."""
    filler = b"".join(b"%d worker heartbeat ok\n" % i for i in range(200_000))  # ~5 MB
    for before, after in ((b"", b""), (filler, filler), (filler, b"")):
        p = tmp_path / "wrapped.log"
        data = before + body + after
        p.write_bytes(data if after else data.rstrip(b"\n"))
        first = before.count(b"\n") + 1
        got = {m: scan_path(p, method=m) for m in ("hyperscan", "grep", "python")}
        lines = scan_lines(p.read_bytes().split(b"\n"))
        for m, r in got.items():
            assert [(s.line, s.signature) for s in r.symptoms] == [(first, sig)], m
            assert first not in {x.line for x in r.suspicious}, m
            assert same(r, got["python"]), m
        assert [(s.line, s.signature) for s in lines.symptoms] == [(first, sig)]


def test_wrap_join_stays_in_one_process_and_needs_a_word_boundary(tmp_path: Path) -> None:
    """No join across two processes' prefixed lines, nor after a line that ends in punctuation
    (a complete sentence). A needle cut mid-word (a terminal's hard wrap at a fixed column) is
    joined without a space, on every scan path (tune-ai, fzo-10's "o / r directory")."""
    cases = [
        b"May 25 20:37:37 h python[1]: CUDA error: no kernel image is available for\n"
        b"May 25 20:37:37 h python[2]: execution on the device\n",
        b"CUDA error: no kernel image is available for.\nexecution on the device\n",
    ]
    p = tmp_path / "same.log"
    p.write_bytes(cases[0].replace(b"python[2]", b"python[1]"))
    assert scan_path(p, method="python").ids() == ["no-kernel-image"]
    p = tmp_path / "midword.log"
    p.write_bytes(b"CUDA error: no kernel image is avail\nable for execution on the device\n")
    for m in ("hyperscan", "grep", "python"):
        assert scan_path(p, method=m).ids() == ["no-kernel-image"], m
    for body in cases:
        p = tmp_path / "x.log"
        p.write_bytes(body)
        for m in ("hyperscan", "python"):
            r = scan_path(p, method=m)
            assert "no-kernel-image" not in r.ids(), (body, m)


def test_lead_join_needs_the_subject_on_the_line_before(tmp_path: Path) -> None:
    """A line that starts with a needle is joined after the line before it only where the
    match starts on that line (a soname ending it), in the same process: a dlerror tail after
    a line that names no library, or after another process's line, stays unmatched."""
    cases = [
        b"OSError: could not load the plugin library\n"
        b"cannot open shared object file: No such file or directory\n",
        b"May 25 20:37:37 h python[1]: ImportError: libnuma.so.1:\n"
        b"May 25 20:37:37 h python[2]: cannot open shared object file: No such file or directory\n",
    ]
    for body in cases:
        p = tmp_path / "x.log"
        p.write_bytes(body)
        for m in ("hyperscan", "grep", "python"):
            assert "shared-lib-not-found" not in scan_path(p, method=m).ids(), (body, m)
        assert "shared-lib-not-found" not in scan_lines(body.split(b"\n")).ids()


def _candidates(p: Path, anchors: bool, monkeypatch: pytest.MonkeyPatch) -> list[tuple]:
    """What the workers hand the aggregator (line number, bytes, literal names), read in 4 KiB
    windows by 3 processes, with the anchor database or one of all the literals."""
    monkeypatch.setattr(fastscan, "USE_ANCHORS", anchors)
    monkeypatch.setattr(fastscan, "_DBS", {})
    monkeypatch.setattr(fastscan, "WINDOW", 4096)
    cat = default_catalog()
    eng = fastscan.database(prefilter.engine_patterns(cat))
    assert (eng.anchors is not None) == anchors
    return list(
        fastscan.hyperscan_candidates(
            p, prefilter.engine_patterns(cat), reader.Totals(), cap=reader.MATCH_CAP, segments=3
        )
    )


@pytest.mark.parametrize("seed", range(3))
def test_anchor_database_reports_what_all_the_literals_report(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, seed: int
) -> None:
    """Hyperscan runs over ~67 anchors, not the ~210 literals; each line's literal ids are then
    recovered. On the corpus, hostile bytes and nvcc lines where the gated ``/bin/nvcc`` is
    alone, repeated, inside ``/usr/bin/nvcc`` or ``/bin/nvcc: ``, or next to an anchor that
    stands for nothing on the line: the same lines, bytes and literals as the full database."""
    rnd = random.Random(seed)
    corpus_lines = [ln for f in CORPUS for ln in f.read_bytes().splitlines() if ln]
    nvcc = [
        b"[3/11] /opt/v/nvidia/cu13/bin/nvcc -c a.cu -o a.o",
        b"[3/11] /opt/v/bin/nvcc /opt/w/bin/nvcc -c a.cu",
        b"sh: 1: /usr/bin/nvcc: not found",
        b"/usr/bin/nvcc",
        b"/bin/nvcc: ",
        b"x:/bin/nvcc: No such file /usr/local/cuda/bin/nvcc",
        b"The /bin/nvcc CUDA version ",
        b"CUDA_HOME=/usr/local/cuda /bin/nvcc --version",
    ]
    lines = corpus_lines + nvcc * 30 + [_hostile(rnd, corpus_lines)]
    rnd.shuffle(lines)
    p = tmp_path / "mixed.log"
    p.write_bytes(b"\n".join(lines) + b"\n")
    got = _candidates(p, True, monkeypatch)
    want = _candidates(p, False, monkeypatch)
    assert got == want
    assert sum(b"nvcc" in raw for _, raw, _ in got) >= 30  # nvcc lines that must stay


def test_every_ungated_literal_holds_an_anchor_and_no_anchor_is_in_a_gated_one() -> None:
    """Anchors stand for the ungated literals; a gated literal has its gate's expressions
    instead, and no anchor inside it (that anchor would hit on every line holding it)."""
    pats = prefilter.engine_patterns(default_catalog())
    anchors = fastscan.anchors_of(pats)
    assert anchors is not None and len(anchors) < len(pats) / 2
    assert all(any(a in lit for a in anchors) for lit, gate in pats if gate is None)
    assert [lit for lit, gate in pats if gate is not None] == ["/bin/nvcc"]
    assert not any(a in "/bin/nvcc" for a in anchors)
    # a literal with a newline could span lines: then the literals themselves are compiled
    assert fastscan.anchors_of([*pats, ("a\nb", None)]) is None


def test_anchors_are_not_merged_into_a_short_common_word_fragment() -> None:
    """grep's set merges anchors into their common prefix ("device cpu", "device driver" ->
    "vice "); Hyperscan's keeps a prefix under MERGE_MIN apart: "vice " would hit every
    "503 Service Unavailable" line, each a callback and a look for the literals holding it."""
    needles = ["could not select device driver", "device cpu", "empty device edits"]
    assert "vice " in prefilter.reduce_literals(needles)  # grep's set: merged
    split = prefilter.reduce_literals(needles, merge_min=fastscan.MERGE_MIN)
    assert all(len(a) >= fastscan.MERGE_MIN for a in split if a not in prefilter.WORDS)
    assert all(any(a in n for a in split) for n in needles)
    eng = fastscan.database(prefilter.engine_patterns(default_catalog()))
    hits: list[int] = []
    line = b'[2026-11-29 18:59:57] INFO:     127.0.0.1:56707 - "GET /health_generate HTTP/1.1" 503 '
    for text in (line + b"Service Unavailable\n", b"took the advice of the service desk\n"):
        eng.db.scan(text, match_event_handler=lambda i, *_: hits.append(i))
    assert hits == []


def test_each_worker_asks_for_its_segment_ahead_of_reading_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two workers share one open file (one kernel readahead state), so each asks for its own
    segment ahead of where it reads (POSIX_FADV_WILLNEED), the whole segment and no more; the
    candidates are the same as without asking."""
    p = tmp_path / "corpus.log"
    p.write_bytes(b"".join(f.read_bytes() for f in CORPUS))
    size = p.stat().st_size
    cat = default_catalog()
    eng = fastscan.database(prefilter.engine_patterns(cat))
    monkeypatch.setattr(fastscan, "WINDOW", 4096)
    asked: list[tuple[int, int, int]] = []
    real = os.posix_fadvise

    def record(fd: int, off: int, length: int, advice: int) -> None:
        asked.append((off, length, advice))
        real(fd, off, length, advice)

    fd = os.open(p, os.O_RDONLY)
    try:
        bounds = reader._segment_bounds(fd, size, 2)
        runs = {}
        for ahead in (0, 3 * 4096):
            monkeypatch.setattr(fastscan, "AHEAD", ahead)
            monkeypatch.setattr(os, "posix_fadvise", record)
            asked.clear()
            out = []
            for a, b in zip(bounds, bounds[1:], strict=False):
                before = len(asked)
                out.append(list(fastscan.scan_segment(fd, a, b, eng, reader.MATCH_CAP, [])))
                mine = asked[before:]
                if ahead:
                    assert {adv for _, _, adv in mine} == {os.POSIX_FADV_WILLNEED}
                    assert mine[0][0] == a and sum(n for _, n, _ in mine) == b - a
                    assert all(x[0] + x[1] == y[0] for x, y in zip(mine, mine[1:], strict=False))
                else:
                    assert mine == []
            runs[ahead] = out
        assert runs[0] == runs[3 * 4096] and any(runs[0])
    finally:
        os.close(fd)


def test_the_early_cache_holds_the_engines_tables(
    tmp_path: Path, cache_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The early start takes fastscan.Engine's tables from its cache (not derived again on
    the way to the fork) exactly as derived; a table of the wrong shape, or a cache written by
    another fastscan.py, is derived again."""
    p = _big_log(tmp_path / "big.log")
    scan_path(p)  # writes the cache
    (patterns,) = list(fastscan._DBS)
    derived = fastscan._DBS[patterns]
    fastscan._DBS.clear()
    early.start(["diagnose", "--log", str(p)])
    early.discard()
    taken = fastscan._DBS[patterns]
    assert taken is not derived and taken.tables() == derived.tables()
    assert (taken.expand, taken.gated, taken.sure) == (derived.expand, derived.gated, derived.sure)
    lits = [lit for lit, _ in patterns]
    names = len(derived.anchors or lits)
    bad = (derived.expand, derived.gated[:-1], derived.sure)
    gated = derived.gated_set
    assert not fastscan._tables_fit(bad, names, len(lits), gated)
    assert not fastscan._tables_fit(None, names, len(lits), gated)
    assert not fastscan._tables_fit(
        (derived.expand, [-1] * len(derived.gated), derived.sure), names, len(lits), gated
    )
    assert fastscan._tables_fit(derived.tables(), names, len(lits), gated)
    again = fastscan.Engine(derived.db, list(patterns), derived.anchors, bad)
    assert again.tables() == derived.tables()  # the bad table ignored, derived again
    # a cache written by another fastscan.py: its tables are not taken (derived instead)
    from remedy.cachefile import read_private

    body = read_private(early.cache_path())
    assert body is not None
    seen: list[object] = []

    def spy(*a: object) -> object:
        seen.append(a[3])
        return derived

    monkeypatch.setattr(fastscan, "Engine", spy)
    real = early._sig_key
    for other in (False, True):
        if other:
            monkeypatch.setattr(
                early, "_sig_key", lambda f: (1, 2) if f == fastscan.__file__ else real(f)
            )
        fastscan._DBS.clear()
        assert early._cached_engine(fastscan.engine(), body) == list(patterns)
    assert seen[0] == derived.tables() and seen[1] is None


def test_tables_of_another_fastscan_are_written_again_by_the_early_start(
    tmp_path: Path, cache_home: Path
) -> None:
    """A cache whose tables another fastscan.py wrote (remedy upgraded in place, the
    signatures unchanged) is written again, with this one's, by the first early start that
    derived them: the next start takes them (main: derived at every start-up, ~4-10 ms of
    the main process, as only a freshly compiled database was ever saved)."""
    import marshal

    from remedy.cachefile import read_private, write_private

    p = _big_log(tmp_path / "big.log")
    scan_path(p)  # writes the cache
    body = read_private(early.cache_path())
    assert body is not None
    fields = list(marshal.loads(body))
    mine = fields[7]
    assert mine is not None and fields[8] is not None
    fields[7] = [0, 0]  # as another fastscan.py wrote it
    write_private(early.cache_path(), marshal.dumps(tuple(fields)))
    fastscan._DBS.clear()
    early.start(["diagnose", "--log", str(p)])
    try:
        assert early._EARLY is not None  # control: it started
    finally:
        early.discard()
    again = read_private(early.cache_path())
    assert again is not None
    got = marshal.loads(again)
    assert list(got[7]) == list(mine) and got[8] == fields[8]
    fastscan._DBS.clear()
    early.start(["diagnose", "--log", str(p)])
    early.discard()
    assert not early._STALE  # the next start takes the tables


def test_each_candidate_comes_with_its_byte_offset(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Job.candidates gives each line's offset in the file (resolve_wraps reads a waiting
    line's neighbour from there): right across 4 KiB windows, 1-3 workers and segments, a
    line longer than the cap (its head kept, its rest skipped), empty lines and a last line
    without a newline."""
    monkeypatch.setattr(fastscan, "WINDOW", 4096)
    rng = random.Random(36)
    cap = 512
    parts = []
    for i in range(3000):
        k = rng.random()
        if k < 0.01:
            parts.append(b"CUDA error: " + b"x" * rng.randrange(cap, 3 * 4096) + b" failed")
        elif k < 0.05:
            parts.append(b"")
        elif k < 0.3:
            parts.append(b"%d RuntimeError: CUDA error: no kernel image" % i)
        else:
            parts.append(b"%d worker heartbeat ok" % i)
    data = b"\n".join(parts) + b"\nImportError: libnuma.so.1: cannot open shared object file"
    p = tmp_path / "x.log"
    p.write_bytes(data)
    starts = [0] + [i + 1 for i, c in enumerate(data) if c == 10]
    pats = prefilter.engine_patterns(default_catalog())
    for segs, slices in ((1, 1), (2, 1), (3, 2)):
        job = fastscan.Job(p, pats, cap=cap, segments=segs, slices=slices)
        at = [-1]
        got = []
        try:
            for ln, raw, _ in job.candidates(reader.Totals(), at):
                got.append((ln, at[0]))
                assert data[at[0] : at[0] + len(raw)] == raw
        finally:
            job.close()
        assert len(got) > 700
        assert all(off == starts[ln - 1] for ln, off in got), (segs, slices)
        assert got[-1][0] == len(starts)


def test_line_after_and_before_read_what_lines_at_reads(tmp_path: Path) -> None:
    """The neighbours of a line read from its offset are lines_at's: empty lines, lines longer
    than the cap, the first and the last line (with and without a final newline)."""
    rng = random.Random(7)
    cap = 64
    parts = [b"x" * rng.choice((0, 0, 3, 63, 64, 65, 200, 3000)) for _ in range(300)]
    for tail in (b"", b"\n"):
        p = tmp_path / "x.log"
        data = b"\n".join(parts) + tail
        p.write_bytes(data)
        starts = [0] + [i + 1 for i, c in enumerate(data) if c == 10 and i + 1 < len(data)]
        with p.open("rb") as f:
            fd = f.fileno()
            every = reader.lines_at(fd, range(1, len(starts) + 2), cap)
            assert len(every) == len(starts)
            for n, off in enumerate(starts, 1):
                assert reader.line_after(fd, off, cap) == every.get(n + 1), n
                assert reader.line_before(fd, off, cap) == every.get(n - 1), n


def test_a_waiting_line_near_the_end_is_read_back_from_its_neighbour(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A traceback frame (a line waiting for its follower) or a dlerror tail (waiting for the
    line before it) near the end of a long log whose neighbour is no candidate line: the
    Hyperscan path reads that neighbour back from the waiting line's offset, not every line
    from the file's start (perf-session35: a 1 GB journal's one planted frame line made
    ``diagnose`` ~0.7 s slower), and finds what the Python path finds."""
    p = tmp_path / "x.log"
    for body in WAITING_BODIES:
        p.write_bytes(waiting_log(body))
        with monkeypatch.context() as m:
            read = count_read_back(m)
            fast = scan_path(p, method="hyperscan")
        slow = scan_path(p, method="python")
        assert fast.symptoms and same(fast, slow)
        assert fast.symptoms[0].line == 300_001
        assert 0 < sum(read) <= 512 * 1024, body  # main: every byte before the line


def test_plain_nvcc_command_lines_cost_no_hyperscan_hit(tmp_path: Path) -> None:
    """A build journal's nvcc command lines (``/bin/nvcc`` with no gate match) were each a
    Hyperscan hit, a Python callback and a gate check (~0.15 of a worker's ~0.75 ns/byte on
    the bench's journal): the gate's expressions in the database hit none of them, and hit
    the malformed forms the signature is for."""
    cat = default_catalog()
    fastscan._DBS.clear()
    eng = fastscan.database(prefilter.engine_patterns(cat))
    plain = [
        b"[6/11] /root/venv/lib/python3.12/site-packages/nvidia/cu13/bin/nvcc -c a.cu -o a.o",
        b"/usr/local/cuda-12.4/bin/nvcc --version",
        b"'/opt/cuda/bin/nvcc' -ccbin /usr/bin/gcc",
    ]
    bad = [b"PATH=:/usr/local/cuda/bin/nvcc", b"/usr/local/cuda/bin/bin/nvcc -c"]
    for line, want in [(x, 0) for x in plain] + [(x, 1) for x in bad]:
        hits: list[int] = []
        eng.db.scan(line + b"\n", match_event_handler=lambda i, *_, h=hits: h.append(i))
        assert len(hits) == want, line
        assert all(eng.gated[i] >= 0 and eng.sure[i] for i in hits)
    fastscan._DBS.clear()


GATES = [
    rb":[^\s'\"]*/bin/nvcc|/bin/bin/nvcc",  # the catalog's form
    rb"=[^\s]{3,}/bin/nvcc",  # a repeat with a floor after a literal
    rb"x[^\s]{70,}/bin/nvcc",  # a floor over GATE_BOUND: only the check stands for it
    rb"[^\s/]+:[^\s\d]{0,5}/bin/nvcc",  # a leading repeat, a class with a category
    rb"[a-c]/bin/nvcc",  # a form gate_exprs leaves to Python: every occurrence checked
]


@pytest.mark.parametrize("gate", GATES)
def test_any_token_gate_in_the_database_keeps_exactly_the_lines_it_matches(
    tmp_path: Path, gate: bytes
) -> None:
    """Gates of other forms than the catalog's, on random tokens with runs under and over
    ``GATE_BOUND``: a line holding only the gated literal is a candidate exactly where the
    gate matches on it, every other line with its literals exactly."""
    pats: list[tuple[str, bytes | None]] = [("/bin/nvcc", gate), ("error", None)]
    rnd = random.Random(len(gate))
    pieces = ["/bin/nvcc", "/bin/bin/nvcc", ":", "=", "x", "ab", "/d" * 20, "/d" * 45, "1"]
    pieces += ["'", "/usr", "error", "c"]
    lines = []
    for _ in range(3000):
        words = ["".join(rnd.choice(pieces) for _ in range(rnd.randrange(1, 6))) for _ in "ab"]
        lines.append(rnd.choice([" ", "\t"]).join(words))
    p = tmp_path / "g.log"
    p.write_text("\n".join(lines) + "\n")
    fastscan._DBS.clear()
    eng = fastscan.database(pats)
    got = _segment_candidates(p, eng)
    fastscan._DBS.clear()
    want = _gated_candidates(lines, pats, gate)
    assert got == want
    assert sum(ids == {0} for _, ids in got.values()) > 5  # kept by the gate alone


def _segment_candidates(p: Path, eng: object) -> dict[int, tuple[bytes, set[int]]]:
    """Each candidate line of the whole file through one scan_segment: its raw bytes and the
    literal ids it holds."""
    fd = os.open(p, os.O_RDONLY)
    try:
        return {
            ln: (raw, set(ids))
            for ln, raw, ids in fastscan.scan_segment(fd, 0, p.stat().st_size, eng, 4096, [])
        }
    finally:
        os.close(fd)


def _gated_candidates(
    lines: list[str], pats: list[tuple[str, bytes | None]], gate: bytes
) -> dict[int, tuple[bytes, set[int]]]:
    """What the scan must keep, computed in Python: each line with the literals it holds,
    less a line that holds only the gated literal (id 0) where the gate does not match."""
    want = {}
    for n, line in enumerate(lines, 1):
        ids = {i for i, (lit, _) in enumerate(pats) if lit in line}
        if ids == {0} and re.search(gate, line.encode()) is None:
            continue
        if ids:
            want[n] = (line.encode(), ids)
    return want
