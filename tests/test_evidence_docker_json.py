"""Docker json-file logs: a real corpus log re-wrapped the way Docker's json-file driver
stores it gets the same diagnosis, symptoms and line numbers as the plain log.

The wrapping follows moby daemon/logger/jsonfilelog/jsonlog/jsonlogbytes.go (MarshalJSONBuf,
ffjsonWriteJSONBytesAsString): one record per line the container wrote, "log" first, '"' and
'\\' backslashed, newline kept as \\n, every other control byte and '<', '>', '&' as \\u00XX.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from docker_json_log import moby_escape

from remedy.diagnose import diagnose
from remedy.evidence import fastscan, scan_path
from remedy.evidence.prefilter import docker_json_escaped
from remedy.evidence.prefix import strip_prefixes, unwrap_docker_json
from remedy.inputs import scan_logs
from remedy.knowledge.loader import load_knowledge

CORPUS = Path(__file__).parent / "fixtures" / "corpus"
# quoted needles: libcudart's 'cannot open shared object file' under a traceback whose frames
# ('File "...", line N') a near: guard reads; flashinfer's setup.py frame; torch's capability
# warning beside 'no kernel image'; signatures anchored at the message's start or end (without
# the unwrapping these two name no cause: 144 of the 895 corpus logs re-wrapped so diagnosed
# differently, 0 with it)
LOGS = [
    "toolkit-major-matches-torch/1.log",
    "container-driver-satisfies-image/1.log",
    "runtime-libs-match-cuda-major/1.log",
    "torch-arch-list-covers-gpu/1.log",
    "wheel-has-gpu-arch/fzm-4.log",
    "package-has-gpu-arch/1.log",
]


def _record(line: str, stream: str = "stderr") -> str:
    return f'{{"log":"{moby_escape(line)}","stream":"{stream}","time":"2026-12-03T22:00:00.123456789Z"}}'


def _wrap(src: Path, dst: Path, pad: int = 0) -> None:
    lines = src.read_text(encoding="utf-8", errors="replace").splitlines()
    with dst.open("w", encoding="utf-8") as f:
        for i in range(pad):
            f.write(_record(f"INFO 12-03 22:00:00 step {i} ok\n", "stdout") + "\n")
        for line in lines:
            f.write(_record(line + "\n") + "\n")


def _summary(path: Path) -> tuple[list[str], list[tuple[str, int]]]:
    symptoms, _suspicious, wrappers = scan_logs([path])
    d = diagnose(load_knowledge(), None, symptoms, wrappers=wrappers)
    return [h.rule for h in d.hypotheses][:3], sorted((s.signature, s.line) for s in symptoms)


def test_unwrap_docker_json_record() -> None:
    rec = _record('  File "/x/y.py", line 3, in <module>\n')
    assert '\\"' in rec and "\\u003c" in rec
    assert unwrap_docker_json(rec) == '  File "/x/y.py", line 3, in <module>'
    text, process = strip_prefixes(_record("[2026-11-29 18:15:55 TP0] RuntimeError: x\n"))
    assert (text, process) == ("RuntimeError: x", "TP0")


@pytest.mark.parametrize(
    "line",
    [
        'RuntimeError: {"log": "not docker"}',  # not at the start
        '{"log":"cut record',  # not valid JSON: kept as it is
        '{"log":1,"stream":"stderr"}',  # "log" not a string
        '{"log":"x"' + ',"a":' + "[" * 100_000 + "]" * 100_000 + "}",  # nested past the parser
        '{"level":"error","msg":"CUDA error"}',  # another JSON logger's record
    ],
)
def test_other_lines_are_left_alone(line: str) -> None:
    assert unwrap_docker_json(line) == line


def test_escaped_literal_selects_the_record() -> None:
    assert docker_json_escaped(b'File "') == b'File \\"'
    assert docker_json_escaped(b"in <module>") == b"in \\u003cmodule\\u003e"
    assert docker_json_escaped(b"no kernel image") is None


@pytest.mark.parametrize("name", LOGS)
def test_wrapped_corpus_log_diagnosed_as_plain(name: str, tmp_path: Path) -> None:
    src = CORPUS / name
    dst = tmp_path / "ctr-json.log"
    _wrap(src, dst)
    plain = _summary(src)
    assert plain[0], "the plain log names a cause"
    assert _summary(dst) == plain


@pytest.mark.parametrize("method", ["python", "grep"])
def test_wrapped_log_same_through_each_engine(method: str, tmp_path: Path) -> None:
    src = CORPUS / LOGS[0]
    dst = tmp_path / "ctr-json.log"
    _wrap(src, dst)
    want = sorted((s.signature, s.line) for s in scan_path(src, method="python").symptoms)
    got = sorted((s.signature, s.line) for s in scan_path(dst, method=method).symptoms)
    assert got == want


def test_large_wrapped_log_skips_the_hint_engine(tmp_path: Path) -> None:
    """A json-file log past the Hyperscan threshold: the engine's hint names needles as seen
    in the raw record (escaped), so the log goes through grep/Python and still matches."""
    src = CORPUS / LOGS[0]
    dst = tmp_path / "ctr-json.log"
    pad = fastscan.MIN_BYTES // 80 + 10
    _wrap(src, dst, pad=pad)
    assert dst.stat().st_size >= fastscan.MIN_BYTES
    want = sorted((s.signature, s.line + pad) for s in scan_path(src, method="python").symptoms)
    got = sorted((s.signature, s.line) for s in scan_path(dst).symptoms)
    assert got == want
