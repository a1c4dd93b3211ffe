"""The streaming reader: prefixes, processes, bad input, bounded memory, grep == Python."""

from __future__ import annotations

import gzip
import io
import os
import sys
import threading
import tracemalloc
from pathlib import Path

import pytest
from readback import WAITING_BODIES, count_read_back, waiting_log

from remedy.errors import InputError, LogReadError
from remedy.evidence import (
    ScanResult,
    default_catalog,
    fastscan,
    load_catalog,
    reader,
    scan_lines,
    scan_path,
)
from remedy.evidence.prefilter import literal_bytes
from remedy.evidence.prefix import strip_prefixes
from remedy.evidence.scan import _Aggregator, _scan_stream

from conftest import diagnosed_log

LOGS = Path(__file__).parent / "fixtures" / "logs"
NINJA_BLOCK = [
    "[1/2] /usr/local/cuda/bin/nvcc -c /x/k.cu -o /x/k.cuda.o",
    "FAILED: [code=2] /root/.cache/flashinfer/0.6.11.post1/90a/cached_ops/norm/k.cuda.o ",
    '/x/k.cu(12): error: identifier "__nv_fp8x4_e4m3" is undefined',
    '/x/k.cu(40): error: expected a ";"',
    '2 errors detected in the compilation of "/x/k.cu".',
    "ninja: build stopped: subcommand failed.",
    "RuntimeError: Ninja build failed. Ninja output:",
    "[2026-05-18 21:14:31] Received sigquit from a child process. It usually means the child failed.",
]


def same(a: ScanResult, b: ScanResult) -> bool:
    return a.model_dump(exclude={"method"}) == b.model_dump(exclude={"method"})


# --- prefixes and processes -----------------------------------------------------------------


@pytest.mark.parametrize(
    ("line", "text", "process"),
    [
        (
            'May 25 20:37:37 dflash-train python[73647]:   File "/x.py", line 1, in f',
            '  File "/x.py", line 1, in f',
            "python[73647]",
        ),
        (
            "2026-05-25T20:37:37+0000 host python[1]: ninja: build stopped: subcommand failed.",
            "ninja: build stopped: subcommand failed.",
            "python[1]",
        ),
        ("[2026-05-18 21:14:31] Received sigquit", "Received sigquit", None),
        (
            "[2026-11-29 18:15:55 TP0] Scheduler hit an exception:",
            "Scheduler hit an exception:",
            "TP0",
        ),
        (
            "Nov 29 18:15:55 gpu sglang[9]: [2026-11-29 18:15:55 DP0 TP1] x",
            "x",
            "sglang[9] DP0 TP1",
        ),
        ("plain line", "plain line", None),
    ],
)
def test_strip_prefixes(line: str, text: str, process: str | None) -> None:
    assert strip_prefixes(line) == (text, process)


def test_journald_fixture_keeps_process_and_line_numbers() -> None:
    res = scan_path(LOGS / "seed002_journal_load_jit.log")
    (sym,) = res.symptoms
    assert (sym.line, sym.process, sym.signature) == (
        3,
        "python[73647]",
        "traceback-sglang-load-jit",
    )
    assert sym.text.startswith('  File "/root/venv_sglang211/')  # journald prefix stripped
    assert res.lines == 6


def test_near_context_is_per_process() -> None:
    frame = '  File "/v/lib/python3.12/site-packages/flashinfer/compilation_context.py", line 65'
    err = "ValueError: not enough values to unpack (expected 2, got 1)"
    lines = [
        f"May 25 20:37:37 h python[1]: {frame}",
        f"May 25 20:37:37 h python[2]: {err}",  # other process: no context
        f"May 25 20:37:37 h python[1]: {err}",  # same process: matches
    ]
    res = scan_lines(lines)
    assert [(s.line, s.process) for s in res.of("flashinfer-arch-list-invalid")] == [
        (3, "python[1]")
    ]
    far = [frame] + ["filler"] * 40 + [err]
    assert not scan_lines(far).of("flashinfer-arch-list-invalid")  # 41 lines away
    assert scan_lines(far[1:]).of("flashinfer-arch-list-invalid") == []
    assert scan_lines([frame] + ["x"] * 39 + [err]).of("flashinfer-arch-list-invalid")


def test_interleaved_processes_keep_their_own_ninja_block() -> None:
    lines = [
        "May 1 00:00:00 h a[1]: FAILED: [code=1] k.cuda.o ",
        "May 1 00:00:00 h b[2]: some tool error: unrelated warning turned error",
        "May 1 00:00:00 h a[1]: k.cu:3:1: error: expected declaration",
    ]
    res = scan_lines(lines)
    top = res.suspicious[0]
    assert top.line == 3 and "first diagnostic inside a ninja failure block" in top.reason
    other = next(s for s in res.suspicious if s.line == 2)
    assert "ninja" not in other.reason


# --- truncation, encodings, odd bytes -------------------------------------------------------


def test_truncated_lines_match(tmp_path: Path) -> None:
    p = tmp_path / "t.log"
    p.write_bytes(b"collect2: er...\nRuntimeError: Ninja build fai")  # cut, no final newline
    res = scan_path(p)
    assert res.ids() == ["collect2-ld-failed"]
    assert res.lines == 2
    assert [s.line for s in res.suspicious] == [2]  # cut before "failed", still says "Error"


def test_invalid_utf8_is_replaced(tmp_path: Path) -> None:
    p = tmp_path / "u.log"
    p.write_bytes(b"\xff\xfe caf\xe9 \n/usr/bin/ld: cannot find -lcud\xe9rt: No such file\n")
    res = scan_path(p)
    (sym,) = res.symptoms
    assert sym.signature == "ld-cannot-find-lib" and "\ufffd" in sym.text
    assert same(res, scan_path(p, method="grep"))


def test_crlf_line_endings(tmp_path: Path) -> None:
    p = tmp_path / "crlf.log"
    p.write_bytes(
        b"ok\r\nninja: build stopped: subcommand failed.\r\nThe server is fired up and ready to roll!\r\n"
    )
    res = scan_path(p)
    assert [(s.line, s.signature) for s in res.symptoms] == [
        (2, "ninja-subcommand-failed"),
        (3, "server-ready"),
    ]
    assert not res.symptoms[0].text.endswith("\r")


def test_carriage_returns_inside_a_line_do_not_split_it(tmp_path: Path) -> None:
    p = tmp_path / "tqdm.log"
    p.write_bytes(
        b"Capturing 0%\rCapturing 25%\rCapturing 50%\nRuntimeError: ninja exited with status 2\n"
    )
    res = scan_path(p)
    assert [(s.line, s.signature) for s in res.symptoms] == [(2, "ninja-exited-status")]
    assert res.lines == 2


# --- bad input ------------------------------------------------------------------------------


def test_binary_file_is_a_clear_error(tmp_path: Path) -> None:
    p = tmp_path / "core.bin"
    p.write_bytes(b"\x7fELF\x02\x01\x01\x00" + bytes(range(256)) * 10)
    with pytest.raises(
        LogReadError, match=r"core\.bin does not look like a text log: it contains NUL"
    ):
        scan_path(p)


def test_compressed_file_says_so(tmp_path: Path) -> None:
    p = tmp_path / "server.log.gz"
    p.write_bytes(gzip.compress(b"error\n" * 100))
    with pytest.raises(LogReadError, match="compressed"):
        scan_path(p)


def test_mostly_control_bytes_is_binary(tmp_path: Path) -> None:
    p = tmp_path / "ctl.dat"
    p.write_bytes(bytes([1, 2, 3, 4, 5, 6, 7, 8, 65]) * 1000)
    with pytest.raises(LogReadError, match="not text"):
        scan_path(p)


def test_empty_file(tmp_path: Path) -> None:
    p = tmp_path / "empty.log"
    p.write_bytes(b"")
    with pytest.raises(InputError, match=r"empty\.log is empty: nothing to scan"):
        scan_path(p)
    with pytest.raises(InputError, match="is empty"):
        scan_lines([])


def test_missing_file_names_it_and_the_reason(tmp_path: Path) -> None:
    p = tmp_path / "nope.log"
    with pytest.raises(LogReadError, match=r"nope\.log: No such file or directory"):
        scan_path(p)


def test_directory_is_refused(tmp_path: Path) -> None:
    with pytest.raises(LogReadError, match="is a directory"):
        scan_path(tmp_path)


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads everything")
def test_unreadable_file(tmp_path: Path) -> None:
    p = tmp_path / "secret.log"
    p.write_text("error\n")
    p.chmod(0)
    with pytest.raises(LogReadError, match="Permission denied"):
        scan_path(p)


def test_stdin(monkeypatch: pytest.MonkeyPatch) -> None:
    data = (LOGS / "seed003_capture_nv_detail.log").read_bytes()
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(data)))
    res = scan_path("-")
    assert (res.source, res.method) == ("<stdin>", "grep")
    ref = scan_path(LOGS / "seed003_capture_nv_detail.log")
    assert res.model_dump(exclude={"source", "method"}) == ref.model_dump(
        exclude={"source", "method"}
    ) | {"symptoms": [s | {"source": "<stdin>"} for s in ref.model_dump()["symptoms"]]}


def _stream_bytes() -> bytes:
    parts = [p.read_bytes() for p in sorted(LOGS.glob("*.log"))]
    long_line = b"RuntimeError: Ninja build failed " + b"z" * (3 << 20) + b" collect2: er...\n"
    return b"".join(parts[:8]) + long_line + b"".join(parts[8:]) + b"cannot find -lcuda"


def test_stream_through_grep_equals_python(tmp_path: Path) -> None:
    """stdin/pipes go through one grep fed by a thread that caps giant lines."""
    data = _stream_bytes()
    p = tmp_path / "s.log"
    p.write_bytes(data)
    ref = scan_path(p, method="python")
    for method in ("grep", "python"):
        res = _scan_stream(io.BytesIO(data), str(p), default_catalog(), method)  # type: ignore[arg-type]
        assert res.method == method
        assert same(res, ref), method


def test_fifo_is_read_once_as_a_stream(tmp_path: Path) -> None:
    data = (LOGS / "lab_f6_cuda_home_devnull.log").read_bytes()
    fifo = tmp_path / "pipe.log"
    os.mkfifo(fifo)

    def writer() -> None:
        with open(fifo, "wb") as f:
            f.write(data)

    t = threading.Thread(target=writer)
    t.start()
    res = scan_path(fifo)
    t.join()
    assert res.method == "grep" and res.lines == 6
    assert [s.signature for s in res.symptoms] == [
        s.signature for s in scan_path(LOGS / "lab_f6_cuda_home_devnull.log").symptoms
    ]


def test_scan_lines_accepts_bytes_str_and_multiline_items() -> None:
    a = scan_lines([b"ok\n", "collect2: error: ld returned 1 exit status\n"])
    b = scan_lines(["ok\ncollect2: error: ld returned 1 exit status\n"])
    assert same(a, b) and a.symptoms[0].line == 2 and a.lines == 2


# --- caps and ranking -----------------------------------------------------------------------


def test_symptoms_per_signature_are_capped() -> None:
    res = scan_lines(["ninja: build stopped: subcommand failed."] * 120)
    assert len(res.of("ninja-subcommand-failed")) == 50
    assert res.dropped == {"ninja-subcommand-failed": 70}
    assert res.of("ninja-subcommand-failed")[-1].line == 50


def test_suspicious_keeps_top_20() -> None:
    res = scan_lines([f"some error number {i}" for i in range(100)])
    assert len(res.suspicious) == 20
    assert [s.line for s in res.suspicious] == list(range(1, 21))  # equal scores: earliest first


def test_suspicious_top_20_of_mixed_scores_in_any_order() -> None:
    """Lines of several scores, shuffled: the 20 kept are the best by score, then earliest,
    whatever order they came in (a line is only made when it enters the top 20)."""
    import random

    from remedy.evidence.suspicious import base_score

    kinds = [
        "some error number {i}",
        "fatal: thing {i} went away",
        "ValueError: bad value {i}",
        "k{i}.cu:12: error: expected a ';'",
        "Traceback {i} (most recent call last):",
    ]
    rnd = random.Random(5)
    lines = [rnd.choice(kinds).format(i=i) for i in range(300)]
    res = scan_lines(lines)
    scored = sorted((-base_score(t)[0], n) for n, t in enumerate(lines, 1))
    assert [(s.line, s.score) for s in res.suspicious] == [(n, -sc) for sc, n in scored[:20]]


def test_ipython_traceback_header_does_not_outrank_the_exception_line() -> None:
    """Jupyter prints 'NameError    Traceback (most recent call last)' before the frames; the
    error is stated on the 'NameError: message' line after them (IPython ultratb)."""
    from remedy.evidence.suspicious import base_score

    head = "NVRTCError                                Traceback (most recent call last)"
    assert base_score(head) == (1.0, "traceback header")
    assert base_score("NVRTCError: NVRTC_ERROR_COMPILATION (6)")[0] == 6.0
    # a Python exception whose message merely mentions a traceback keeps its score
    assert base_score("RuntimeError: Traceback (most recent call last) was lost")[0] == 6.0
    res = scan_lines(
        [
            "-" * 20,
            head,
            "--> 685 nvrtc.compileProgram(self.ptr, options)",
            "",
            "NVRTCError: NVRTC_ERROR_COMPILATION (6)",
        ]
    )
    assert res.suspicious[0].line == 5


def test_first_compiler_error_in_ninja_block_ranks_first() -> None:
    res = scan_lines(NINJA_BLOCK)
    assert res.suspicious[0].line == 3
    assert "first diagnostic inside a ninja failure block" in res.suspicious[0].reason
    assert res.ids() == [
        "ninja-failed-target",
        # the undefined identifier's shape (tune-f); the symbol is in no removal table, so it
        # names no cause and the line stays the first suspicious one (signature suspicious: true)
        "cuda-api-not-in-toolkit",
        "ninja-subcommand-failed",
        "ninja-build-failed",
        "sglang-child-sigquit",
    ]


def test_ranking_without_wrapper_signatures(tmp_path: Path) -> None:
    """With a catalog that knows none of the wrappers, the compiler error still wins."""
    cat_file = tmp_path / "sigs.yaml"
    cat_file.write_text(
        "signatures:\n"
        "- id: only-ready\n  title: t\n  pattern: 'fired up'\n  needles: ['fired up']\n"
        "  severity: info\n  stage: ready\n  component: sglang-server\n"
        "  examples: ['fired up']\n  source: {doc: test}\n"
    )
    res = scan_lines(NINJA_BLOCK, catalog=load_catalog(cat_file))
    ranked = [s.line for s in res.suspicious]
    assert ranked[0] == 3
    for wrapper in (6, 7, 8):  # build stopped, Ninja build failed, sigquit
        assert ranked.index(wrapper) > ranked.index(3)
        assert ranked.index(wrapper) > ranked.index(4)


# --- grep path == Python path ---------------------------------------------------------------


@pytest.mark.parametrize("name", sorted(p.name for p in LOGS.glob("*.log")))
def test_grep_and_python_paths_agree_on_fixtures(name: str) -> None:
    a = scan_path(LOGS / name, method="python")
    b = scan_path(LOGS / name, method="grep")
    assert (a.method, b.method) == ("python", "grep")
    assert same(a, b)


def test_grep_segments_agree(tmp_path: Path) -> None:
    p = tmp_path / "all.log"
    with p.open("wb") as f:
        for _ in range(3):
            for log in sorted(LOGS.glob("*.log")):
                f.write(log.read_bytes())
    ref = scan_path(p, method="python")
    cat = default_catalog()

    for segs in (1, 2, 5):
        agg = _Aggregator(cat, str(p))
        tot = reader.Totals()
        for ln, raw in reader.grep_candidates(p, literal_bytes(cat), tot, segments=segs):
            agg.feed(ln, raw)
        assert same(agg.result(tot.lines, tot.bytes, "grep"), ref), segs


def test_auto_falls_back_without_grep(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    p = tmp_path / "big.log"
    p.write_bytes((b"x" * 99 + b"\n") * 50_000 + b"cannot find -lcudart\n")  # 5 MB
    monkeypatch.setattr(reader, "find_grep", lambda: None)
    monkeypatch.setattr(fastscan, "_ENGINE", None)  # no Hyperscan either (test_fastscan.py)
    res = scan_path(p)
    assert res.method == "python" and res.ids() == ["ld-cannot-find-lib"]
    assert res.symptoms[0].line == 50_001


def test_failing_grep_falls_back(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    p = tmp_path / "big.log"
    p.write_bytes((b"y" * 99 + b"\n") * 50_000 + b"ninja: build stopped: subcommand failed.\n")
    monkeypatch.setattr(reader, "find_grep", lambda: "/bin/false")
    monkeypatch.setattr(fastscan, "_ENGINE", None)
    res = scan_path(p)
    assert res.method == "python" and res.ids() == ["ninja-subcommand-failed"]
    with pytest.raises(reader.GrepFailed):
        scan_path(p, method="grep")


# --- memory ---------------------------------------------------------------------------------


def _journal(path: Path, size: int) -> Path:
    """Journal-style log of ``size`` bytes with real error lines every 5,000 lines."""
    pre = b"Nov 29 18:13:51 gpu-host python3[1227]: [2026-11-29 18:13:51] "
    normal = [
        pre + b'INFO:     127.0.0.1:54202 - "GET /health_generate HTTP/1.1" 200 OK\n',
        pre + b"Decode batch, #running-req: 8, #token: 1234, token usage: 0.04, cuda graph: True\n",
        pre + b"Prefill batch, #new-seq: 1, #new-token: 5, #cached-token: 0, token usage: 0.00\n",
    ]
    errors = [
        pre + line
        for line in (LOGS / "seed003_capture_nv_detail.log").read_bytes().splitlines(True)
    ]
    block = b"".join(normal * 1666 + errors)
    with path.open("wb") as f:
        while f.tell() < size:
            f.write(block)
    return path


@pytest.fixture(scope="module")
def big_log(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _journal(tmp_path_factory.mktemp("big") / "journal.log", 50_000_000)


def scan_traced(path: Path, method: str) -> tuple[ScanResult, int]:
    tracemalloc.start()
    try:
        res = scan_path(path, method=method)  # type: ignore[arg-type]
        return res, tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_50mb_log_with_bounded_memory(big_log: Path) -> None:
    res, peak = scan_traced(big_log, "grep")
    assert peak < 64 << 20, f"peak {peak / 2**20:.1f} MiB"
    assert res.method == "grep"
    assert res.bytes == big_log.stat().st_size
    assert res.lines == big_log.read_bytes().count(b"\n")
    assert len(res.of("cccl-nv-detail-missing")) == 50 and res.dropped["cccl-nv-detail-missing"] > 0


def test_python_path_bounded_and_equal_to_grep(tmp_path: Path) -> None:
    """The pure-Python path (~40 MB/s) on a smaller log: same result, same memory bound."""
    log = _journal(tmp_path / "j.log", 12_000_000)
    res, peak = scan_traced(log, "python")
    assert peak < 64 << 20, f"peak {peak / 2**20:.1f} MiB"
    assert res.method == "python"
    assert same(res, scan_path(log, method="grep"))


def test_single_very_long_line(tmp_path: Path) -> None:
    """A 24 MB line: matched on its first MATCH_CAP bytes, never held whole in memory."""
    p = tmp_path / "long.log"
    head = b"RuntimeError: Ninja build failed. Ninja output: "
    tail = b" collect2: error: ld returned 1 exit status"  # beyond the cap: not seen
    with p.open("wb") as f:
        f.write(head)
        for _ in range(24):
            f.write(b"a" * (1 << 20))
        f.write(tail + b"\nThe server is fired up and ready to roll!\n")
    for method in ("python", "grep"):
        tracemalloc.start()
        try:
            res = scan_path(p, method=method)  # type: ignore[arg-type]
            _, peak = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
        assert peak < 16 << 20, (method, peak)
        assert [(s.line, s.signature) for s in res.symptoms] == [
            (1, "ninja-build-failed"),
            (2, "server-ready"),
        ]
        assert len(res.symptoms[0].text) <= 2000
        assert res.lines == 2


# -- which line states the error (remedy.evidence.suspicious; tune-g, round 16's first-line misses)


def _shown(lines: list[str], tmp: Path) -> list[tuple[int, str]]:
    """The suspicious lines remedy diagnose --log shows for a log no rule explains."""
    log = tmp / "t.log"
    log.write_text("\n".join(lines) + "\n")
    d = diagnosed_log(log)
    assert d.hypotheses == [], [h.rule for h in d.hypotheses]
    return [(s.line, s.reason) for s in d.suspicious]


@pytest.mark.parametrize(
    ("lines", "first"),
    [
        # logging's exc_info: the logged message, then the traceback ending in the same text
        (
            [
                "mylib load error: Configured binary not found at /opt/x/libfoo_cuda129.so",
                "Traceback (most recent call last):",
                '  File "/opt/x/load.py", line 7, in <module>',
                "RuntimeError: Configured binary not found at /opt/x/libfoo_cuda129.so",
            ],
            1,
        ),
        # a heading that only announces the error is not the error
        (["Error:", "ImportError: /lib64/libstdc++.so.6: version `GLIBCXX_3.4.30' not found"], 2),
        # GNU ld's undefined reference (no 'error' word) before distutils' spawn wrapper
        (
            [
                "/usr/bin/ld: k.o:(.text+0x1c): undefined reference to `foo(int)'",
                "collect2: error: ld returned 1 exit status",
                "error: command '/usr/bin/g++' failed with exit code 1",
            ],
            1,
        ),
        # a short exception message does not promote an earlier line that happens to hold it
        (["warning: value error in config", "ValueError: bad value"], 2),
    ],
)
def test_the_line_that_states_the_error_comes_first(
    lines: list[str], first: int, tmp_path: Path
) -> None:
    shown = _shown(lines, tmp_path)
    assert shown and shown[0][0] == first, shown


def test_an_ld_warning_undefined_reference_is_no_diagnostic() -> None:
    from remedy.evidence.suspicious import is_diagnostic

    assert is_diagnostic("/usr/bin/ld: a.o: undefined reference to `f'")
    assert not is_diagnostic("/usr/bin/ld: a.o: warning: undefined reference to `f'")


def _diagnosed_lines(tmp_path: Path, lines: list[str]):  # noqa: ANN202 - a Diagnosis
    """A log diagnosed as `remedy diagnose --log` does (tests/conftest.py diagnosed_log)."""
    p = tmp_path / "t.log"
    p.write_text("\n".join(lines) + "\n")
    return diagnosed_log(p)


def test_a_hardware_verdict_without_an_error_word_ranks_before_its_echo(tmp_path: Path) -> None:
    """SiftGPU's 'Shader not supported by your hardware!' states the failure; its
    'ERROR: SiftGPU not fully supported' after it only repeats it (round 41's unknown/gck-9)."""
    from remedy.evidence.suspicious import is_error_looking

    assert is_error_looking("Shader not supported by your hardware!")
    d = _diagnosed_lines(
        tmp_path,
        [
            "Exhaustive feature matching",
            "Shader not supported by your hardware!",
            "ERROR: SiftGPU not fully supported",
        ],
    )
    assert d.suspicious[0].line == 2


def test_a_lone_wrapper_is_the_first_error_line_when_nothing_else_is(tmp_path: Path) -> None:
    """A shell's bare 'Killed' (the OOM killer ending a TensorRT build) is the only failure
    statement of the log (round 41's unknown/gcj-10); beside a real error line it stays out."""
    d = _diagnosed_lines(
        tmp_path,
        ["$ python3 onnx_to_tensorrt.py -m yolov4-416", "[TensorRT] VERBOSE: done", "Killed"],
    )
    assert [s.line for s in d.suspicious] == [3]
    d = _diagnosed_lines(tmp_path, ["NameError: name 'engine_path' is not defined", "Killed"])
    assert [s.line for s in d.suspicious] == [1]


# --- byte offsets of candidate lines (the read-back of a waiting line's neighbour) ---------


def _offsets_log(tmp_path: Path) -> tuple[Path, bytes, list[int]]:
    """Candidate and plain lines, empty lines, lines longer than the cap, a last line without
    a newline; and each line's start."""
    import random

    rng = random.Random(37)
    parts = []
    for i in range(3000):
        k = rng.random()
        if k < 0.01:
            parts.append(b"CUDA error: " + b"x" * rng.randrange(600, 9000) + b" failed")
        elif k < 0.05:
            parts.append(b"")
        elif k < 0.3:
            parts.append(b"%d RuntimeError: CUDA error: no kernel image" % i)
        else:
            parts.append(b"%d worker heartbeat ok" % i)
    data = b"\n".join(parts) + b"\nImportError: libnuma.so.1: cannot open shared object file"
    p = tmp_path / "x.log"
    p.write_bytes(data)
    return p, data, [0] + [i + 1 for i, c in enumerate(data) if c == 10]


def test_grep_candidates_give_each_line_s_byte_offset(tmp_path: Path) -> None:
    """grep_candidates sets each candidate's offset in the file (grep -b) as the Hyperscan
    path does, over 1-3 segments (piped ones and the last, read by grep from the file at its
    start), lines longer than the cap and a last line without a newline. main: no offsets
    at all (the neighbour of a waiting line was read from line 1)."""
    p, data, starts = _offsets_log(tmp_path)
    cat = default_catalog()
    for segs in (1, 2, 3):
        at = [-1]
        got = []
        for ln, raw in reader.grep_candidates(
            p, literal_bytes(cat), reader.Totals(), segments=segs, cap=512, at=at
        ):
            got.append((ln, at[0]))
            assert data[at[0] : at[0] + len(raw)] == raw
        assert len(got) > 700
        assert all(off == starts[ln - 1] for ln, off in got), segs
        assert got[-1][0] == len(starts)


def test_python_candidates_give_each_line_s_byte_offset(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The same offsets from the Python reader, across 4 KiB chunks (main: none)."""
    monkeypatch.setattr(reader, "CHUNK", 4096)
    p, data, starts = _offsets_log(tmp_path)
    at = [-1]
    got = []
    with p.open("rb") as f:
        for ln, raw in reader.python_candidates(
            f, literal_bytes(default_catalog()), reader.Totals(), cap=512, at=at
        ):
            got.append((ln, at[0]))
            assert data[at[0] : at[0] + len(raw)] == raw
    assert len(got) > 700
    assert all(off == starts[ln - 1] for ln, off in got)
    assert got[-1][0] == len(starts)


@pytest.mark.parametrize("method", ["grep", "python"])
def test_a_waiting_line_is_read_back_from_its_neighbour_without_hyperscan(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, method: str
) -> None:
    """A traceback frame waiting for its follower, and a dlerror tail waiting for the line
    before it, near the end of a long log whose neighbour is no candidate line: the grep and
    the Python path read that neighbour from the waiting line's offset, as the Hyperscan path
    does (main: every line from the file's start, ~7.6 MB here for one line), and find the
    symptom at the same line."""
    p = tmp_path / "x.log"
    read = count_read_back(monkeypatch)
    for body in WAITING_BODIES:
        p.write_bytes(waiting_log(body))
        read.clear()
        res = scan_path(p, method=method)  # type: ignore[arg-type]
        assert res.method == method
        assert [s.line for s in res.symptoms][:1] == [300_001], body
        assert 0 < sum(read) <= 512 * 1024, body


def test_grep_is_asked_for_offsets_only_where_it_gives_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """grep_candidates runs grep with -b where the grep passed its self-test with -b (main:
    never); a grep that refuses -b is run without it and gives the same symptoms (the
    neighbour then read from line 1, as before)."""
    grep = reader.find_grep()
    assert grep is not None
    args = tmp_path / "args"
    filler = b"".join(b"%d worker heartbeat ok\n" % i for i in range(300_000))
    p = tmp_path / "x.log"
    p.write_bytes(filler + b"loading libnuma.so.1:\ncannot open shared object file: x\n")
    want = [(s.signature, s.line) for s in scan_path(p, method="python").symptoms]
    assert want and want[0][1] == 300_001
    for refuses in (False, True):
        fake = tmp_path / f"grep{int(refuses)}"
        refuse = 'for a in "$@"; do [ "$a" = -b ] && exit 2; done\n' if refuses else ""
        fake.write_text(f'#!/bin/sh\necho "$@" >> {args}\n{refuse}exec {grep} "$@"\n')
        fake.chmod(0o755)
        monkeypatch.setattr(reader, "find_grep", lambda f=fake: str(f))
        args.write_text("")
        got = scan_path(p, method="grep")
        assert got.method == "grep"
        assert [(s.signature, s.line) for s in got.symptoms] == want
        scans = [a.split() for a in args.read_text().splitlines() if "heartbeat" not in a]
        big = [a for a in scans if "x\\.y|FAIL" not in a]  # not the self-tests
        assert big and all(("-b" in a) != refuses for a in big), (refuses, big)


def test_grep_offsets_counted_from_the_file_start_are_told_apart(tmp_path: Path) -> None:
    """A grep that counts -b offsets from the file's start (not from where it began reading)
    still gives each line's true offset; a segment whose first line reads the same at both
    places is not guessed: its offsets are unknown (-1), never a neighbour's (main: no
    offsets from grep at all)."""
    lines = [b"a ok", b"b CUDA error: x", b"c ok", b"d CUDA error: y", b"e CUDA error: y"]
    data = b"\n".join(lines) + b"\n"
    p = tmp_path / "x.log"
    p.write_bytes(data)
    starts = [0] + [i + 1 for i, c in enumerate(data) if c == 10][:-1]
    seg = starts[2]  # a segment from line 3 on
    with p.open("rb") as f:
        fd = f.fileno()
        for absolute in (False, True):
            out = b"".join(
                b"%d:%d:%s\n" % (n - 2, starts[n - 1] - (0 if absolute else seg), lines[n - 1])
                for n in (4, 5)
            )
            at = [-1]
            got = [
                (ln, at[0]) for ln, _ in reader._grep_lines_at(io.BytesIO(out), 2, 512, fd, seg, at)
            ]
            assert got == [(4, starts[3]), (5, starts[4])], absolute
        # line 4 at offset 0 of a segment starting at line 4: relative 0 is line 4, and
        # absolute 0 is line 1 ("a ok"): told apart; a file whose two places hold the
        # same line is not
        same = b"d CUDA error: y\n" * 3
        p.write_bytes(same)
        out = b"1:%d:d CUDA error: y\n" % 16
        at = [-1]
        got = [at[0] for _ in reader._grep_lines_at(io.BytesIO(out), 1, 512, fd, 16, at)]
        assert got == [-1]


@pytest.mark.parametrize(
    "assertion",
    [
        # DeepGEMM DG_DEVICE_ASSERT / DeepEP EP_DEVICE_ASSERT: printf, then trap
        "Assertion failed: deep_gemm/impls/smxx_layout.cuh:131, condition: (v & 0x807fffffu) == 0",
        # CUDA's device-side __assertfail (glibc's __assert_fail wording, block/thread added)
        "/src/Indexing.cu:1236: indexSelectSmallIndex: block: [0,0,0], thread: [3,0,0] "
        "Assertion `srcIndex < srcSelectDimSize` failed.",
        # the UCRT's assert on Windows
        "Assertion failed: n < cap, file C:\\src\\kernel.cpp, line 42",
    ],
)
def test_a_failed_assertion_outranks_the_launch_failure_after_it(assertion: str) -> None:
    """An assert prints its condition, then traps or aborts: the exception that reports the
    trap ('CUDA_ERROR_LAUNCH_FAILED', 'device-side assert triggered') comes after it and only
    says the kernel died; the first error is the assertion (tune-bb, round 51's gdq-2)."""
    res = scan_lines(
        [
            assertion,
            "tvm.error.InternalError: CUDA driver error (jit_kernels/x.hpp:72): 719 "
            "(CUDA_ERROR_LAUNCH_FAILED)",
            "RuntimeError: CUDA error: device-side assert triggered",
        ]
    )
    assert res.suspicious[0].line == 1, [(s.line, s.score) for s in res.suspicious]


def test_an_assertion_word_in_an_exception_message_is_not_an_assertion() -> None:
    """Only the assert machinery's own wording counts: a message that mentions an assertion
    is scored as the line it is."""
    from remedy.evidence.suspicious import base_score

    assert base_score("warning: the assertion failed count is 3")[1] != "failed assertion"
    assert base_score("  passing Assertion failedover to the backup host")[1] != "failed assertion"
