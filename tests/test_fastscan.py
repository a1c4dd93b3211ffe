"""The Hyperscan scan path (evidence/fastscan.py) gives exactly the symptoms of the pure-Python
fallback: on the whole log corpus and on hostile inputs (binary bytes, invalid UTF-8, a 10 MB
line, lines across window and segment boundaries), and it falls back when the engine is gone."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from remedy.errors import LogReadError
from remedy.evidence import default_catalog, fastscan, prefilter, reader
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
    """All corpus logs in one file, read in 4 KiB windows by 1, 2 and 5 processes: every
    window and segment boundary falls somewhere inside real lines."""
    p = tmp_path / "corpus.log"
    p.write_bytes(b"".join(f.read_bytes() for f in CORPUS * 3))
    ref = scan_path(p, method="python")
    assert ref.symptoms, "the corpus has symptoms"
    monkeypatch.setattr(fastscan, "WINDOW", 4096)
    cat = default_catalog()
    for segs in (1, 2, 5):
        agg = _Aggregator(cat, str(p))
        tot = reader.Totals()
        for ln, raw, hint in fastscan.hyperscan_candidates(
            p, prefilter.engine_patterns(cat), tot, cap=reader.MATCH_CAP, segments=segs
        ):
            agg.feed(ln, raw, hint)
        agg.resolve_wraps(p)
        assert same(agg.result(tot.lines, tot.bytes, "hyperscan"), ref), segs


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
    (a complete sentence), nor for a needle cut mid-word."""
    cases = [
        b"May 25 20:37:37 h python[1]: CUDA error: no kernel image is available for\n"
        b"May 25 20:37:37 h python[2]: execution on the device\n",
        b"CUDA error: no kernel image is available for.\nexecution on the device\n",
        b"CUDA error: no kernel image is avail\nable for execution on the device\n",
    ]
    p = tmp_path / "same.log"
    p.write_bytes(cases[0].replace(b"python[2]", b"python[1]"))
    assert scan_path(p, method="python").ids() == ["no-kernel-image"]
    for body in cases:
        p = tmp_path / "x.log"
        p.write_bytes(body)
        for m in ("hyperscan", "python"):
            r = scan_path(p, method=m)
            assert "no-kernel-image" not in r.ids(), (body, m)
