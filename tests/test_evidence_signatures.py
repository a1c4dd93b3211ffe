"""Signatures against recorded real output: the case table, examples, precedence, prefilter."""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import Any

import pytest
import yaml

from remedy.evidence import ScanResult, default_catalog, scan_lines, scan_path
from remedy.evidence.prefilter import literals
from remedy.evidence.prefix import strip_prefixes
from remedy.evidence.suspicious import WORDS
from remedy.model import Symptom

FIXTURES = Path(__file__).parent / "fixtures"
LOGS = FIXTURES / "logs"
CASES: list[dict[str, Any]] = yaml.safe_load((FIXTURES / "signature_cases.yaml").read_text())[
    "cases"
]
LOG_FILES = sorted(p.name for p in LOGS.glob("*.log"))

REQUIRED_IDS = [
    "ninja-build-failed",
    "ninja-exited-status",
    "ninja-subcommand-failed",
    "ninja-failed-target",
    "ptxas-unsupported-ptx-version",
    "ptxas-unknown-gpu-name",
    "ptxas-aborted",
    "cccl-ctk-incompatible",
    "ld-cannot-find-lib",
    "collect2-ld-failed",
    "cccl-nv-target-missing",
    "cccl-nv-detail-missing",
    "missing-header",
    "flashinfer-sm12x-needs-cuda129",
    "flashinfer-sm120-needs-cuda128",
    "capture-cuda-graph-failed",
    "cuda-graph-hint",
    "sglang-child-sigquit",
    "sglang-child-exit-code",
    "scheduler-exception",
    "nvcc-not-found-shell",
    "nvcc-not-a-directory",
    "include-not-a-directory",
    "torch-cuda-home-not-set",
    "torch-nvcc-not-found",
    "torch-cuda-version-mismatch",
    "tvm-ffi-no-cuda",
    "flashinfer-no-nvcc",
    "no-kernel-image",
    "flashinfer-arch-list-invalid",
    "traceback-flashinfer-jit",
    "traceback-sglang-load-jit",
    "traceback-load-inline",
    "cuda-stream-capture-unsupported",
    "cuda-stream-capture-invalidated",
    "server-ready",
    "warmup-failed",
    "ninja-missing",
    "build-oom-killed",
    "triton-libcuda-not-found",
    "triton-ptxas-failed",
    "triton-cannot-find-ptxas",
    "unsupported-ptx-driver",
    "driver-too-old",
    "flashinfer-cubin-version-mismatch",
    "undefined-symbol",
    "shared-lib-not-found",
    "nvcc-unsupported-gcc",
    "torch-arch-unknown",
    "cannot-detect-cuda-arch",
    "flashinfer-requires-sm75",
]


@cache
def scanned(name: str, method: str) -> ScanResult:
    return scan_path(LOGS / name, method=method)  # type: ignore[arg-type]


def at(res: ScanResult, line: int, sig: str | None = None) -> list[Symptom]:
    return [s for s in res.symptoms if s.line == line and (sig is None or s.signature == sig)]


def test_catalog_has_every_required_id() -> None:
    ids = set(default_catalog().ids())
    missing = [i for i in REQUIRED_IDS if i not in ids]
    assert not missing


def test_every_signature_cites_a_source() -> None:
    for sig in default_catalog().signatures:
        src = sig.source
        assert src.repo or src.doc or src.thread, sig.id
        if src.repo and not src.repo.startswith("NVIDIA/cuda"):
            assert src.path, f"{sig.id}: repo without path"


def _example_params() -> list[Any]:
    return [
        pytest.param(sig.id, ex, id=f"{sig.id}-{i}")
        for sig in default_catalog().signatures
        for i, ex in enumerate(sig.examples)
    ]


# the line a `near:` guard looks for, per signature, as it precedes the example in a real log
NEAR_CONTEXT = {
    "flashinfer-arch-list-invalid": '  File "/x/flashinfer/compilation_context.py", line 65, in __init__',
    "cuda-api-call-echoed-after-arity-error": "ctx2.cu(4): error: too few arguments in function call",
}


@pytest.mark.parametrize(("sig_id", "example"), _example_params())
def test_example_is_reported_by_a_full_scan(sig_id: str, example: str) -> None:
    """The loader proves each example matches its regex; this proves the whole pipeline
    (prefix stripping, needle gating, near, supersedes) reports it."""
    sig = default_catalog()[sig_id]
    lines = [example]
    if sig.near is not None:  # give the guard its context, as in the real log
        lines = [NEAR_CONTEXT[sig_id], example]
    res = scan_lines(lines, source="example")
    assert sig_id in [s.signature for s in res.symptoms if s.line == len(lines)]


def _case_id(c: dict[str, Any]) -> str:
    return f"{c['file']}:{c['line']}:{c['signature']}"


@pytest.mark.parametrize("method", ["python", "grep"])
@pytest.mark.parametrize("case", CASES, ids=_case_id)
def test_case(case: dict[str, Any], method: str) -> None:
    res = scanned(case["file"], method)
    if case["signature"] is None:
        assert at(res, case["line"]) == [], "an unknown error line must stay unmatched"
        text = (LOGS / case["file"]).read_bytes().split(b"\n")[case["line"] - 1]
        assert any(w in text.decode("utf-8", "replace") for w in WORDS)
        return
    found = at(res, case["line"], case["signature"])
    assert len(found) == 1, f"expected {case['signature']} at line {case['line']}"
    sym = found[0]
    assert sym.fields == (case.get("fields") or {})
    if "process" in case:
        assert sym.process == case["process"]
    sig = default_catalog()[case["signature"]]
    assert (sym.stage, sym.component, sym.severity) == (sig.stage, sig.component, sig.severity)


@pytest.mark.parametrize("name", LOG_FILES)
def test_case_table_is_complete(name: str) -> None:
    """Every symptom, and every error-looking unmatched line, of every fixture is in the table."""
    res = scanned(name, "python")
    table = {(c["line"], c["signature"]) for c in CASES if c["file"] == name}
    got = {(s.line, s.signature) for s in res.symptoms}
    matched_lines = {s.line for s in res.symptoms}
    for i, raw in enumerate((LOGS / name).read_bytes().split(b"\n"), 1):
        text, _ = strip_prefixes(raw.decode("utf-8", "replace").rstrip("\r"))
        if i not in matched_lines and any(w in text for w in WORDS):
            got.add((i, None))
    assert got == table


def test_suspicious_lines_come_from_the_null_rows() -> None:
    for name in LOG_FILES:
        res = scanned(name, "python")
        nulls = {c["line"] for c in CASES if c["file"] == name and c["signature"] is None}
        assert {s.line for s in res.suspicious} <= nulls


# --- precedence and must-not-match ---------------------------------------------------------

NEGATIVES = [
    # (line, expected signature or None, signatures that must NOT be reported on it)
    (
        "/root/venv/lib/python3.12/site-packages/nvidia/cu13/bin/../include/nv/target:243:10: "
        "fatal error: nv/detail/__target_macros: No such file or directory",
        "cccl-nv-detail-missing",
        ["missing-header", "cccl-nv-target-missing"],
    ),
    (
        "k.cu:2:10: fatal error: nv/target: No such file or directory",
        "cccl-nv-target-missing",
        ["missing-header", "cccl-nv-detail-missing"],
    ),
    (
        "x.cu:3:10: fatal error: cuda_runtime.h: No such file or directory",
        "missing-header",
        ["cccl-nv-target-missing", "cccl-nv-detail-missing"],
    ),
    (
        "RuntimeError: SM 12.x requires CUDA >= 12.9",
        "flashinfer-sm12x-needs-cuda129",
        ["flashinfer-sm120-needs-cuda128"],
    ),
    # generic ValueError without a compilation_context.py frame nearby
    ("ValueError: not enough values to unpack (expected 2, got 1)", None, []),
    ("Killed", "process-killed", ["build-oom-killed"]),
    ("ninja: build stopped: interrupted by user.", None, ["ninja-subcommand-failed"]),
    ("collect2: error: ld returned 1 exit status", "collect2-ld-failed", []),
    (
        "[2026-11-29 18:15:55] Capture cuda graph begin. This can take up to several minutes.",
        None,
        ["capture-cuda-graph-failed"],
    ),
    (
        "FAILED: [code=137] /root/.cache/flashinfer/0.6.11.post1/120f/cached_ops/sampling/s.cuda.o",
        "ninja-failed-target",
        [],
    ),
    ("nvcc error   : 'cicc' died due to signal 9 (Kill signal)", "build-oom-killed", []),
    ("RuntimeError: ninja exited with status 137", "ninja-exited-status", []),
    (
        "Unsupported .version 9.2; current version is '9.0'",
        "ptxas-unsupported-ptx-version",
        ["unsupported-ptx-driver"],
    ),
    ("Received sigquit from a child process.", "sglang-child-sigquit", []),  # cut short
]


@pytest.mark.parametrize(("line", "expected", "forbidden"), NEGATIVES)
def test_precedence_and_negatives(line: str, expected: str | None, forbidden: list[str]) -> None:
    ids = [s.signature for s in scan_lines([line]).symptoms]
    if expected is None and not forbidden:
        assert ids == []
    elif expected is not None:
        assert expected in ids
    assert not set(ids) & set(forbidden)


def test_oom_exit_code_137_also_flagged_on_failed_edge() -> None:
    res = scan_lines(
        ["FAILED: [code=137] /root/.cache/flashinfer/0.6.11.post1/90a/cached_ops/x/a.o"]
    )
    ids = [s.signature for s in res.symptoms]
    assert ids == ["ninja-failed-target", "build-oom-killed"]
    assert res.symptoms[0].fields["jit_module"] == "x"
    assert res.symptoms[0].fields["exit_code"] == "137"


def test_capture_failure_also_reports_the_inner_error() -> None:
    res = scan_lines(["Exception: Capture cuda graph failed: Ninja build failed. Ninja output:"])
    assert [s.signature for s in res.symptoms] == [
        "capture-cuda-graph-failed",
        "ninja-build-failed",
    ]
    assert res.symptoms[0].fields["inner"] == "Ninja build failed. Ninja output:"


def test_truncated_collect2_forms() -> None:
    for cut in ["collect2: er...", "collect2: e", "collect2: error", "collect2: error: ld retu…"]:
        assert "collect2-ld-failed" in scan_lines([cut]).ids(), cut
    assert "collect2-ld-failed" not in scan_lines(["collect2: note: something else"]).ids()


def test_partial_facts_rename_fields() -> None:
    cat = default_catalog()
    res = scanned("lab_f1_ptx_isa_skew.log", "python")
    assert cat.partial_facts(res.symptoms[0]) == {
        "emitted_ptx_isa": "9.2",
        "ptxas_ptx_isa": "9.0",
        "arch": "120",
    }
    res = scanned("seed000_ninja_collect2.log", "python")
    assert cat.partial_facts(res.of("ninja-failed-target")[0]) == {
        "jit_cache_dir": "/root/.cache/flashinfer/0.6.11.post1/120f/cached_ops",
        "flashinfer_version": "0.6.11.post1",
        "jit_arch": "120f",
    }
    res = scanned("seed002_journal_load_jit.log", "python")
    assert cat.partial_facts(res.symptoms[0]) == {"python_prefix": "/root/venv_sglang211"}


# --- prefilter superset ---------------------------------------------------------------------


def test_prefilter_literals_cover_every_needle_and_stay_small() -> None:
    cat = default_catalog()
    lits = literals(cat)
    for sig in cat.signatures:
        for n in [*sig.needles, *sig.near_needles]:
            assert any(lit in n for lit in lits), (sig.id, n)
    # 48 before issue 17; its CMake, Triton-LLVM and flash-attn-op signatures add one each;
    # class-breadth adds 6 (torch's 'this GPU', xFormers' capability, CUDA forward
    # compatibility, nvvm's cicc, pre-Turing GPU names 'Tesla '/'GTX 10'); its other needles
    # hold an error word or an existing literal. The version banners of the per-pair skew
    # model add 'Cuda compila' (nvcc --version) and 'Nvidia drive' (torch collect_env).
    # Round-12 tuning adds 'find nvcc' (a build helper's own nvcc lookup, lower case too) and
    # 'Python.h in' (torch Inductor's warning holds no error word), and five suspicious-line
    # words for failures worded without an error word (evidence/suspicious.py WORDS); and
    # "'sm_" (torch.cuda.get_arch_list()'s repr; the other new arch needles hold 'Error' or
    # 'The '). Tune-d adds 'Loaded runti' (XLA's cuDNN check, worded without an error word; its
    # other new needles reuse 'version ', 'Error', 'fatal', 'failed' and 'CUDA') and 'vcc: ' (a
    # shell's or make's 'nvcc: not found' / 'command not found' holds no error word). Tune-e
    # adds 'quire' (CCCL's 'Thrust requires at least C++17' quoted without its '#error') and
    # 'C++ compiler' (Meson's host compiler line, an info line with no error word).
    # Tune-f adds 'no known co' (clang's note naming the CUDA 13 parameter type; the other
    # needles of cuda-api-not-in-toolkit are error words) and '_v4(' (the source line EDG echoes
    # under 'too few arguments in function call', calling CUDA 13's cuCtxCreate_v4) and
    # 'arguments in' (that guard's own needle: with 'error' the near pattern ran on every error
    # line, +1 s on a 100k-line log of compile errors).
    # Tune-i adds 'Unable to lo' (cudnn-frontend's 'Unable to load any libcudart.so.* library'
    # is quoted without its RuntimeError prefix and holds no error word), and two suspicious-line
    # words: 'no member' and 'not a member' (EDG/GCC/clang/MSVC's missing-member diagnostics
    # quoted without 'error:') and 'only supports' (a kernel's arch guard printed before it traps).
    assert len(lits) <= 78, "each literal costs grep time; see prefilter.py"


def test_prefilter_selects_every_example_and_matched_fixture_line() -> None:
    lits = literals(default_catalog())
    for sig in default_catalog().signatures:
        for ex in sig.examples:
            assert any(lit in ex for lit in lits), (sig.id, ex)
    for c in CASES:
        text = (LOGS / c["file"]).read_bytes().split(b"\n")[c["line"] - 1].decode()
        assert any(lit in text for lit in lits), _case_id(c)


def test_a_log_no_rule_explains_shows_its_matched_error_line_first() -> None:
    """fg-3: the ImportError's 'undefined symbol: cudaLibraryGetKernel' (line 6) matches a
    signature whose torch-ABI credit a field signal withdraws; with no cause named, it is the
    line to show, ahead of the Traceback header the scan scored (with_unexplained)."""
    from remedy.diagnose import diagnose
    from remedy.evidence.suspicious import with_unexplained
    from remedy.inputs import scan_logs
    from remedy.knowledge.loader import load_knowledge

    path = Path(__file__).resolve().parent / "fixtures" / "corpus" / "unknown" / "fg-3.log"
    symptoms, suspicious, wrappers = scan_logs([path])
    d = diagnose(load_knowledge(), None, symptoms, wrappers=wrappers)
    assert d.hypotheses == [] and suspicious[0].line == 1
    shown = with_unexplained(suspicious, symptoms, wrappers, d.hypotheses)
    assert shown[0].line == 6 and "undefined-symbol" in shown[0].reason
    # with a rule's cause the lines are not re-ranked (the report shows the cause)
    cause = diagnose(
        load_knowledge(),
        None,
        scan_lines(['k.cu(5): error: namespace "cub" has no member "Max"']).symptoms,
    ).hypotheses
    assert with_unexplained(suspicious, symptoms, wrappers, cause) == suspicious


def test_diagnostic_prefilter_skips_only_lines_the_pattern_cannot_match() -> None:
    """is_diagnostic searches ``_DIAG`` only where the line holds one of ``_DIAG_WORDS``
    (a lowercase 'error', ld's 'undefined reference'): every top-level branch requires one, and on every corpus line (and case
    variants of the diagnostic shapes) the answer is the unfiltered search's."""
    import re._constants as c
    import re._parser as sre_parse

    from remedy.evidence import suspicious

    tree = list(sre_parse.parse(suspicious._DIAG.pattern))
    assert len(tree) == 1 and tree[0][0] is c.BRANCH
    for branch in tree[0][1][1]:
        text = "".join(chr(av) if op is c.LITERAL else "\0" for op, av in _flat(list(branch)))
        assert any(w in text for w in suspicious._DIAG_WORDS), branch
    lines = [
        ln
        for p in sorted((Path(__file__).parent / "fixtures" / "logs").glob("*.log"))
        for ln in p.read_text(errors="replace").splitlines()
    ]
    lines += ["a.cu:12: error: x", "a.cu:12: Error: x", "a.cu(3): ERROR x", "error: x"]
    lines += [
        "/usr/bin/ld: a.o: undefined reference to `f'",
        "ld: warning: undefined reference to `g'",
    ]
    for ln in lines:
        text = strip_prefixes(ln)[0]
        want = suspicious._DIAG.search(text) is not None and not suspicious.is_command_echo(text)
        assert suspicious.is_diagnostic(text) == want, text


def _flat(items: list[tuple[Any, Any]]) -> list[tuple[Any, Any]]:
    """The parse tree's items in order, groups opened up (their literals are the branch's)."""
    import re._constants as c

    out: list[tuple[Any, Any]] = []
    for op, av in items:
        if op is c.SUBPATTERN:
            out += _flat(list(av[-1]))
        else:
            out.append((op, av))
    return out
