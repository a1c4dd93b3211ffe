"""Signatures against recorded real output: the case table, examples, precedence, prefilter."""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import Any

import pytest
import yaml

from remedy.evidence import ScanResult, default_catalog, scan_lines, scan_path
from remedy.evidence.prefilter import literals, reduce_literals
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
    # tune-kb: CMake's unknown CUDA compiler id right above its FATAL_ERROR header
    "cmake-cuda-compiler-id-unknown": "-- The CUDA compiler identification is unknown",
    # tune-kb: near absent: true; the line before is prose, not a traceback frame
    "libcuda-lookup-ldconfig-not-on-path-bare": "Running llm.generate with prefix_pos fails with:",
    # tune-gf: MSVC cl.exe's echo of DeepSpeed's has_function probe program, the line above
    "msvc-feature-probe-link-miss": "test.c",
    # tune-ec: CMake's message(FATAL_ERROR) header right above the project's text
    "cmake-project-cuda-not-found": "CMake Error at cmake/compile_definitions/linux.cmake:64 (message):",
    "flashinfer-arch-list-invalid": '  File "/x/flashinfer/compilation_context.py", line 65, in __init__',
    # tune-eb: Triton 2.0's compile_ptx_to_cubin header over ptxas' log
    "triton-ptx-header-below-target": "RuntimeError: Internal Triton PTX codegen error: ",
    "cuda-api-call-echoed-after-arity-error": "ctx2.cu(4): error: too few arguments in function call",
    "cccl-macro-echoed-under-declaration-error": "zip.hpp(182): error: this declaration has no storage class or type specifier",
    "capture-cuda-error-oom": '  File "/x/torch/cuda/graphs.py", line 647, in capture_end',
    # tune-gc: torch's verbose JIT line before the detector's refusal
    "ninja-impostor-in-torch-jit": "Using /root/.cache/torch_extensions/py311_cu121 as PyTorch extensions root...",
    # tune-v: vLLM's capture progress line before the collective's failure
    "nccl-unhandled-cuda-error-capturing": "Capturing CUDA graphs (mixed prefill-decode, PIECEWISE):",
    # tune-aa: the frame (outside torch/) that imports the compiled extension
    "torch-cuda-lib-missing-under-extension": '  File "/x/vllm/platforms/cuda.py", line 21, in <module>',
    # tune-bd: CMake's generate-step header before the missing CUDA::<lib> target
    "cmake-cuda-library-target-missing": '  Target "solver" links to:',
    # tune-ap: IPython's frame header of the importer (ultratb), no quotes, 'path:line'
    "torch-cuda-lib-missing-under-extension-ipython": "File ~/env/lib/python3.11/site-packages/openmmtorch.py:15",
    # tune-ag: flash-attention's setup.py warning before the build error; numba's libs.test()
    "nvcc-not-found-warning-then-build-error": (
        "<string>:119: UserWarning: causal_conv1d was requested, but nvcc was not found."
    ),
    "numba-cuda-home-lib-not-found": "Finding nvvm from CUDA_HOME",
    # tune-gb: numba's NvvmSupportError above the Windows loader's line
    "numba-nvvm-bare-windows-dll-not-found": (
        "numba.cuda.cudadrv.error.NvvmSupportError: libNVVM cannot be found. Do `conda install cudatoolkit`:"
    ),
    # tune-an: the NVHPC OpenACC runtime's list of the targets in the binary
    "nvhpc-acc-no-code-for-gpu": "Accelerator Fatal Error: This file was compiled: -gpu=cc90",
    # tune-au: an NVENC probe's report, the required API on the line before the driver's
    "nvenc-api-found-below-required": "Required: NVENC API 13.0",
    # tune-dg: XLA's LLVM fatal-error handler line (its reason cut or on the next line)
    "xla-handler-ptx-version-below-target": (
        "E0311 09:12:44.101331    3120 gpu_compiler.cc:1870] LLVM Fatal Error while compiling target binary for module: jit_f"
    ),
    "half-atomic-add-not-declared-for-target": (
        'kernel.cu(25): error: no instance of overloaded function "atomicAdd" matches the argument list'
    ),
    # tune-ge: the innermost frame of Open3D 0.16's torch-version guard (plain and IPython)
    "open3d-torch-guard-crashed": (
        '  File "/x/site-packages/open3d/ml/torch/__init__.py", line 38, in <module>'
    ),
    "open3d-torch-guard-crashed-ipython": "File ~/env/lib/python3.10/site-packages/open3d/ml/torch/__init__.py:38",
    # tune-ie: Triton's libcuda_dirs frame above its ldconfig call's failure
    "libcuda-lookup-ldconfig-failed": (
        '  File "/x/site-packages/triton/backends/nvidia/driver.py", line 25, in libcuda_dirs'
    ),
    # tune-jc: Blender Cycles' own nvcc command for the device's arch, before its failure
    "cycles-runtime-kernel-compile-failed": (
        '"nvcc" -arch=sm_86 --cubin "D:\\blender\\3.4\\scripts\\addons\\cycles\\source\\kernel\\device\\cuda\\kernel.cu"'
        ' -o "C:\\Users\\u\\AppData\\Roaming\\Blender Foundation\\Blender\\3.4\\cache\\kernels\\'
        'cycles_kernel_sm_86_904C389680A13667F33E6AFB16ED8E03.cubin" -m64 --ptxas-options="-v" --use_fast_math -DNVCC'
    ),
    # tune-kd: the setup.py frame line that passes torch's CUDA_HOME to the nvcc-path helper
    "cuda-home-none-joined-in-build": (
        "      _, bare_metal_version = get_cuda_bare_metal_version(CUDA_HOME)"
    ),
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


def test_near_absent_guard_drops_a_line_with_the_context_before_it() -> None:
    """``near: {absent: true}``: the bare line matches alone, not under a traceback frame
    (tune-kb: a FileNotFoundError for 'ldconfig' whose frames name another program)."""
    line = "FileNotFoundError: [Errno 2] No such file or directory: 'ldconfig'"
    sid = "libcuda-lookup-ldconfig-not-on-path-bare"
    assert default_catalog()[sid].near.absent is True
    alone = scan_lines([line], source="example")
    assert sid in [s.signature for s in alone.symptoms]
    framed = [
        "Traceback (most recent call last):",
        '  File "/usr/lib/python3.11/subprocess.py", line 1950, in _execute_child',
        "    raise child_exception_type(errno_num, err_msg, err_filename)",
        line,
    ]
    under = scan_lines(framed, source="example")
    assert sid not in [s.signature for s in under.symptoms]


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
    # tune-h: every compiler's wording of a missing #include (NVRTC 13.0.88 recorded here,
    # clang DiagnosticLexKinds.td err_pp_file_not_found, MSVC C1083) is missing-header ...
    (
        'indexing.cuh(1): catastrophic error: could not open source file "cuda/std/tuple" '
        "(no directories in search list)",
        "missing-header",
        ["cuda-lib-header-missing", "python-h-missing"],
    ),
    ("k.cu:3:10: fatal error: 'cuda/std/tuple' file not found", "missing-header", []),
    (
        'tensor_fill.h(52): catastrophic error: cannot open source file "curand_kernel.h"',
        "cuda-lib-header-missing",
        ["python-h-missing"],
    ),
    (
        "main.c(5): fatal error C1083: Cannot open include file: 'Python.h': No such file or "
        "directory",
        "python-h-missing",
        ["cuda-lib-header-missing"],
    ),
    # tune-h: glibc's and GNU ld's words for a truncated .so (recorded with glibc 2.36 and
    # binutils 2.40), after whichever program printed them ...
    ("OSError: ./tt.so: cannot read file data", "shared-object-truncated", []),
    (
        "./mprog: error while loading shared libraries: /tmp/r/libf.so: file too short",
        "shared-object-truncated",
        ["shared-lib-not-found"],
    ),
    ("/usr/bin/ld: error: t1.so: file too short", "shared-object-truncated", []),
    # ... never a library that is absent, or a linker that finds no -l
    (
        "./mprog: error while loading shared libraries: libcudart.so.12: cannot open shared "
        "object file: No such file or directory",
        "shared-lib-not-found",
        ["shared-object-truncated"],
    ),
    ("/usr/bin/ld: error: cannot find -lcuda", None, ["shared-object-truncated"]),
    # tune-h: gold, lld and MSVC link.exe words for a library the link cannot find ...
    ("/usr/bin/ld.gold: error: cannot find -lcudart_missing", "ld-cannot-find-lib", []),
    ("ld.lld: error: unable to find library -lcudart", "ld-cannot-find-lib", []),
    ("LINK : fatal error LNK1104: cannot open file 'cudart.lib'", "ld-cannot-find-lib", []),
    # ... never the output file link.exe cannot write (a running program, an antivirus lock)
    ("LINK : fatal error LNK1104: cannot open file 'build\\ops.dll'", None, ["ld-cannot-find-lib"]),
    ("LINK : fatal error LNK1104: cannot open file 'main.exe'", None, ["ld-cannot-find-lib"]),
    # tune-h: CMake 4.0.3's refusal of a policy it removed (CMP0000-CMP0065, recorded) ...
    (
        "  Policy CMP0026 may not be set to OLD behavior because this version of CMake",
        "cmake-policy-removed",
        [],
    ),
    # ... never a policy it still supports, nor 3.27-3.31's deprecation warning
    ("  Policy CMP0146 may not be set to OLD behavior because this version of CMake", None, []),
    (
        "  Compatibility with CMake < 3.10 will be removed from a future version of",
        None,
        ["cmake-policy-removed"],
    ),
    ("  The OLD behavior for policy CMP0066 will be removed from a future version", None, []),
    # tune-h: every runtime/driver name of a synchronising op inside capture (libcudart 13.0,
    # cuda.h) ...
    (
        "torch.AcceleratorError: CUDA error: operation would make the legacy stream depend on a "
        "capturing blocking stream",
        "cuda-stream-capture-unsupported",
        [],
    ),
    ("CUresult CUDA_ERROR_STREAM_CAPTURE_IMPLICIT", "cuda-stream-capture-unsupported", []),
    # ... never a cross-stream isolation error (NCCL's or a custom all-reduce's side stream)
    (
        "CUDA error: dependency created on uncaptured work in another stream",
        None,
        ["cuda-stream-capture-unsupported"],
    ),
    ("CUDA_ERROR_STREAM_CAPTURE_ISOLATION", None, ["cuda-stream-capture-unsupported"]),
    # tune-h: CUresult 200 by name or word is a prebuilt module's (driver older than its CUDA);
    # only Triton's own 'Triton Error [CUDA]: ' prefix makes it Triton's cubin
    (
        "RuntimeError: CUDA error: device kernel image is invalid",
        "cuda-invalid-image-code",
        ["triton-invalid-kernel-image"],
    ),
    ("cudaErrorInvalidKernelImage", "cuda-invalid-image-code", ["triton-invalid-kernel-image"]),
    (
        "RuntimeError: Triton Error [CUDA]: device kernel image is invalid",
        "triton-invalid-kernel-image",
        ["cuda-invalid-image-code"],
    ),
    (
        "RuntimeError: Triton Error [CUDA]: out of memory",
        None,
        ["triton-invalid-kernel-image", "cuda-invalid-image-code"],
    ),
    # tune-h, harm guard: error 36 (cudaErrorCallRequiresNewerDriver) is NOT driver-too-old --
    # Warp 1.7.1 prints it on R580, a driver newer than the binary handles (unknown/fh-10, fj-11)
    (
        "Warp CUDA error 36: API call is not supported in the installed CUDA driver (in "
        "function cuda_init, /builds/omniverse/warp/warp/native/warp.cu:277)",
        None,
        ["driver-too-old", "cuda-invalid-image-code"],
    ),
    # tune-h: torch's cuDNN >= 9.11 check for a pre-Turing GPU (torch/backends/cudnn) ...
    (
        "RuntimeError: cuDNN version 91100 is not compatible with devices with SM < 7.5. Please "
        "install a version of PyTorch with a compatible cuDNN version.",
        "torch-cudnn-gpu-below-sm75",
        ["cudnn-version-incompatible"],
    ),
    # ... never torch's compiled-vs-runtime cuDNN check (another cuDNN loaded first)
    (
        "RuntimeError: cuDNN version incompatibility: PyTorch was compiled  against (9, 10, 2) "
        "but found runtime version (9, 1, 0). PyTorch already comes bundled with cuDNN.",
        "cudnn-version-incompatible",
        ["torch-cudnn-gpu-below-sm75"],
    ),
    # tune-h: torch 2.14.1's capability warning header (recorded) ...
    (
        "UserWarning: Found GPU0 Tesla P100-PCIE-16GB which is of compute capability (CC) 6.0.",
        "torch-gpu-arch-unsupported",
        [],
    ),
    # ... never its per-CC list lines, which name what the wheel has, not the GPU
    ("- 7.5 which supports hardware CC >=7.5,<8.0", None, ["torch-gpu-arch-unsupported"]),
    # tune-h: g++'s UTF-8 quotes around the CUDA math function (recorded with g++ 12.2) ...
    (
        "mathcalls.h:206:1: error: declaration of \u2018double sinpi(double)\u2019 has a "
        "different exception specifier",
        "glibc-math-exception-spec",
        [],
    ),
    # ... never another function's exception specifier (the project's own declarations)
    (
        "ex.cpp:2:19: error: declaration of \u2018double floor(double)\u2019 has a different "
        "exception specifier",
        None,
        ["glibc-math-exception-spec"],
    ),
    # ... and never a missing source file, an output file or a compiler-generated file
    (
        "c1xx: fatal error C1083: Cannot open source file: 'k.cpp': No such file or directory",
        None,
        ["missing-header"],
    ),
    (
        "cl : fatal error C1083: Cannot open compiler generated file: '': Invalid argument",
        None,
        ["missing-header"],
    ),
    (
        "error: unable to open output file 'k.o': 'No such file or directory'",
        None,
        ["missing-header"],
    ),
    ("nvcc fatal   : Could not open output file '/tmp/k.o'", None, ["missing-header"]),
    # tune-bb: cl.exe translates all of C1083 but the code and the name (round 51's gdr-7 is
    # Russian, the name unquoted); the header's name is the field in every language ...
    (
        "cuda_utils.c(12): fatal error C1083: \u041d\u0435 \u0443\u0434\u0430\u0435\u0442\u0441\u044f "
        "\u043e\u0442\u043a\u0440\u044b\u0442\u044c \u0444\u0430\u0439\u043b "
        "\u0432\u043a\u043b\u044e\u0447\u0435\u043d\u0438\u0435: Python.h: No such file or directory,",
        "python-h-missing",
        ["cuda-lib-header-missing"],
    ),
    (
        "k.cu(3,10): error C1083: \u65e0\u6cd5\u6253\u5f00\u5305\u62ec\u6587\u4ef6: "
        "\u201ccuda/std/tuple\u201d: No such file or directory",
        "missing-header",
        ["python-h-missing", "cuda-lib-header-missing"],
    ),
    # ... and never a source file, a precompiled header or an object path in another language
    (
        'c1xx: fatal error C1083: Quelldatei kann nicht ge\u00f6ffnet werden: "k.cpp": No such '
        "file or directory",
        None,
        ["missing-header"],
    ),
    (
        "main.cpp(1): fatal error C1083: \u65e0\u6cd5\u6253\u5f00\u9884\u7f16\u8bd1\u5934"
        "\u6587\u4ef6: \u201cDebug\\app.pch\u201d: No such file or directory",
        None,
        ["missing-header"],
    ),
    (
        "k.cpp : fatal error C1083: \u041d\u0435 \u0443\u0434\u0430\u0435\u0442\u0441\u044f "
        "\u043e\u0442\u043a\u0440\u044b\u0442\u044c \u0444\u0430\u0439\u043b: "
        "C:\\b\\k.obj: Permission denied",
        None,
        ["missing-header"],
    ),
]


@pytest.mark.parametrize(("line", "expected", "forbidden"), NEGATIVES)
def test_precedence_and_negatives(line: str, expected: str | None, forbidden: list[str]) -> None:
    ids = [s.signature for s in scan_lines([line]).symptoms]
    if expected is None and not forbidden:
        assert ids == []
    elif expected is not None:
        assert expected in ids
    assert not set(ids) & set(forbidden)


LINKERS = [
    ("ld.lld: error: unable to find library -lcudart", "cudart"),
    ("ld.lld: error: Unable to find library -lcuda", "cuda"),
    ("LINK : fatal error LNK1104: cannot open file 'cudart.lib'", "cudart"),
    ("LINK : fatal error LNK1104: cannot open file 'python311.lib'", "python311"),
]


def test_torch_cuda_mismatch_reads_torch_cuda_with_or_without_the_blank() -> None:
    """torch 2.14.1's CUDA_MISMATCH_MESSAGE joins 'compile' and 'PyTorch' with no blank."""
    for line in (
        "RuntimeError: The detected CUDA version (13.0) mismatches the version that was used to "
        "compilePyTorch (12.8). Please make sure to use the same CUDA versions.",
        "RuntimeError: The detected CUDA version (13.0) mismatches the version that was used to "
        "compile PyTorch (12.8). Please make sure to use the same CUDA versions.",
    ):
        sym = next(
            s for s in scan_lines([line]).symptoms if s.signature == "torch-cuda-version-mismatch"
        )
        assert (sym.fields["nvcc_release"], sym.fields["torch_cuda"]) == ("13.0", "12.8")
    # the minor-version warning is no mismatch of majors
    minor = (
        "The detected CUDA version (12.4) has a minor version mismatch with the version that "
        "was used to compile PyTorch (12.1). Most likely this shouldn't be a problem."
    )
    assert "torch-cuda-version-mismatch" not in {s.signature for s in scan_lines([minor]).symptoms}


@pytest.mark.parametrize(("line", "lib"), LINKERS)
def test_every_linker_names_the_missing_library_as_ld_does(line: str, lib: str) -> None:
    """The field signals on missing_lib (-lcuda: Triton's launcher, -lcudart: the JIT link,
    other CUDA libraries: a package ships them) read the same name from lld and link.exe."""
    sym = next(s for s in scan_lines([line]).symptoms if s.signature == "ld-cannot-find-lib")
    assert sym.fields["missing_lib"] == lib


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


def test_prefilter_keeps_a_literal_whose_cover_was_dropped_in_turn() -> None:
    """tune-ay: step 5 dropped 'NvEncodeAPI ' because its needle holds 'API version', then
    dropped 'API version' because its own needle holds 'quire': the Video Codec SDK's
    'does not support this NvEncodeAPI version' selected no line."""
    needles = {
        "required nvenc API version",
        "does not support this NvEncodeAPI version",
        "quire",
    }
    lits = reduce_literals(needles)
    for n in needles:
        assert any(lit in n for lit in lits), n


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
    # Tune-j adds 'is not found' (CTranslate2's 'Library libcublas.so.12 is not found or cannot be
    # loaded' as an application prints it after its own prefix, with no error word) and the
    # suspicious-line word 'No devices' (nvidia-smi's 'No devices found' / 'No devices were
    # found'); its NVRM, XLA, CUDA.jl and TensorRT needles reuse 'The ', 'GPU ', 'version ',
    # 'CUDA', 'Unsupported ' and 'Error'.
    # Tune-k adds 'CDI configur' (ramalama's 'Device all does not have a CDI configuration' /
    # 'No CDI configuration found for all', no error word) and '(e.g. specif' (the NVIDIA hook's
    # csv-mode refusal of docker --gpus, printed on its own line after 'stderr: Auto-detected
    # mode'); Docker's, Podman's, the CDI library's and nvidia-container-cli's lines reuse
    # 'Error', 'error' and 'failed'.
    # Tune-l adds 'NVRM:' (the kernel module's continuation lines that name the driver branch or
    # module flavour a GPU needs, 'NVRM: installed in this system is not supported by open',
    # hold no other literal); nvml-driver-library-mismatch reuses 'version ' and 'Error'.
    # Tune-n's 'unsupported display' (cuInit's 803 string, quoted by llama.cpp, cupy and
    # torch after prefixes without an error word) derives 'unsupported ', which also holds the
    # needles of 'GNU version!' and 'PTX was comp' (both dropped: 83 -> 82); its other needles
    # reuse 'CUDA', 'Error' and 'failure'.
    # Tune-q adds 'vice driver' (moby's 'could not select device driver "" with capabilities:
    # [[gpu]]' quoted without 'Error response from daemon', no error word: 82 -> 83); Docker's
    # 'AMD CDI spec not found' anchors at 'CDI spec not', merged with 'CDI configur' into 'CDI ';
    # the NVRM GSP / open-module lines quoted without 'NVRM: ' anchor at their 'q' and stay in
    # 'quire'; the kmod guard reuses 'does not match' and Triton's fp8e4nv refusal 'Error'.
    # Tune-r adds eight, for lines worded without an error word: the package resolvers'
    # (libsolv for dnf/yum/zypper, apt) 'vide' ('nothing provides', 'provided by'), 'install'
    # ('cannot install the best candidate', 'but it is not going to be installed', which also
    # drops nothing), 'filtered out' ('is filtered out by modular filtering') and 'unmet depend'
    # (apt's 'The following packages have unmet dependencies:'); the kernel's and the consoles'
    # Xid events 'Xid ' and 'XID '; DKMS's 'Consult /var/lib/dkms/nvidia/<v>/build/make.log'
    # ('kms/nvidia') and kmod's 'Module nvidia ... not found' ('Module nvidi'). The NVML
    # mismatch wordings reuse 'ERROR' and 'version ', NVRM's 'API mismatch' reuses 'NVRM:'.
    # Tune-t adds 'h not found' (the short 'curand.h not found' that build scripts and setup
    # checks print after probing a toolkit's include/, no error word: 91 -> 92); its CMake
    # backtick wordings reuse 'Could ' and 'CUDA', the cuda-bindings lines 'Could ', 'No su'
    # and 'CUDA'.
    # Tune-v adds 'unsatisfied ' (the NVIDIA Go toolkit's csv-mode 'requirements not met:
    # unsatisfied condition: cuda>=X (cuda=Y)', quoted without Docker's wrapper, no error word:
    # 92 -> 93); its NCCL, DKMS, installer, containerd, device-plugin, runtime and XLA needles
    # reuse 'failure', 'error', 'Error', 'ERROR', 'failed', 'install', 'GPU ', 'CUDA' and
    # 'does not match'.
    # Session 30 (lead, after held-out fzi-4): suspicious.WORDS gains 'nable to load' (93 -> 94),
    # a loader's verdict worded without an error word (cuDNN's 'Unable to load any of {...}').
    # Tune-x adds none: Paddle's and TensorFlow's arch-list lines reuse 'The ', ggml's
    # no-device-code line 'CUDA', XLA's tool lookup 'version ' ('suitable version of '), its
    # libdevice lookup 'failure' and 'quire', JAX's outdated-library check 'Error', 'The '
    # and 'version '.
    # Tune-aa adds 'ssert is_' (SGLang's message-less arch gate 'assert is_sm100_supported() or
    # is_sm90_supported()': Python's traceback echoes the source line, which holds no error
    # word, and the 'AssertionError' after it is bare: 94 -> 95); DeepGEMM's 'Unsupported
    # architecture' reuses 'Unsupported ' and 'Failed', FlashInfer's 'Invalid backend' 'Error'.
    # Tune-ab adds '+cu' (torch.__version__'s CUDA tag, '2.6.0+cu126', in app banners with no
    # other literal: 95 -> 96); the GPU-name lines' 'NVIDIA ' replaces 'NVIDIA drive', 'Tesla '
    # and 'GTX 10' are reused,
    # FlashInfer's and TensorRT-LLM's 'Unsupported architecture' reuse 'Unsupported '.
    # Tune-ad adds 'depends on ' (pip's and uv's resolver conflict report names a package's pin
    # on an nvidia-*/cuda-* wheel in a line with no error word: '    torch 2.4.0 depends on
    # nvidia-cuda-nvrtc-cu12==12.1.105') and 'kages in the' (pip's 'Additionally, some packages
    # in these conflicts have no matching distributions', which withdraws that reading): 95 -> 97.
    # together 95 -> 98.
    # Tune-ae adds 'compute type' (CTranslate2's 'Requested float16 compute type, but the
    # target device or backend do not support efficient float16 computation.' is quoted without
    # its ValueError prefix and holds no error word; a needle on 'device' would have merged
    # 'No devices' and 'vice driver' into 'vice', a literal in most GPU log lines): 98 -> 99.
    # Its make, setuptools, TensorRT 7 and TEI needles reuse 'Error', 'Killed', 'failed',
    # 'Unsupported ' and 'Could '.
    # Tune-ag adds 'quested, but' (flash-attention's, causal-conv1d's and mamba's setup.py warn
    # '<pkg> was requested, but nvcc was not found.' as a UserWarning with no error word; it is
    # the near-context of the build error that follows): 99 -> 100. Its NCCL capture refusal
    # reuses 'CUDA', the ptxas future-arch line 'fatal', the build-script frame 'File '.
    # Tune-ah adds 'Skipping imp' (torchao's 'Skipping import of cpp extensions due to
    # incompatible torch version' is a logging warning with no error word) and '=> not found'
    # (ldd's / ntldd's 'libcublas.so.13 => not found' listing holds none either): 100 -> 102.
    # Its NVML init line reuses 'Failed'/'failed', candle's missing kernel 'ERROR' and Docker's
    # unquoted driver name 'vice driver'.
    # Tune-ao adds the suspicious-line words 'NCCL WARN' (NCCL states its errors in WARN lines)
    # and 'was not detected' (the CUDA images' no-driver banner), and 'out of resou' (Triton's
    # OutOfResources message, quoted without its class name); Taichi's driver-call wrapper
    # reuses 'CUDA' and 'Error', the serving-engine frame 'File ', and the wider build-script
    # frame 'File ': 99 -> 102.
    # Tune-an adds 'not supported' (a suspicious-line word: SiftGPU's 'Shader not supported by
    # your hardware!', Reactant's '... not supported with this version of Reactant'), 'vptx-as:
    # ptx' (nvptx-as' 'ptxas returned N exit status'
    # in a GCC offload config.log) and 'There is no ' (Maxine's NVCV_ERR_MODELDEPENDENCIES
    # string); its NVHPC lines reuse 'NVIDIA ' and 'Fatal', its configure line 'error': 99 -> 102.
    # Tune-ap adds 'No package can be installed' and 'nothing provides' (package solvers'
    # verdicts, suspicious-line words) and 'No CUDA' (a library's own no-CUDA lookup). The three
    # session-35 tuners worked at once, each within 102; merged: 99 + 3 + 3 + 3 -> 108.
    # Tune-aq adds 'panicked at' (a suspicious-line word: Rust's panic hook, 'thread 'main'
    # panicked at FILE:LINE:COL:', holds no error word); ptxas' new needle "Value 'sm_" reuses
    # "'sm_" and TGI's 'GPU with CUDA ' reuses 'GPU ': 108 -> 109.
    # Tune-au adds "n't match" (a suspicious-line word: Fabric Manager's "... don't match with
    # driver version ..."), 'Found' (an NVENC API check restated on lines of its own, whose
    # 'NVENC' context literal replaces 'NVENC versio'), 'Open nvidia.' (the open module's
    # Data-Center-only refusal quoted without 'NVRM: ') and 'kernel-devel-' (dnf/yum finding no
    # headers package for the kernel); apt's headers lines reuse 'Unable to lo' and 'install',
    # the C1189 line 'fatal': 109 -> 112.
    # Tune-at (merged after tune-au) adds '"exist"' (Jan's hardware probe, a JSON object with
    # no error word: its 'cuda' entry says whether the CUDA runtime DLLs are on PATH, the
    # context that gives an engine DLL's load failure to the CUDA runtime rule); its other needles reuse "'sm_",
    # 'Error', 'ERROR', 'error', 'failed' and 'Could '; and the suspicious-line word 'NOT
    # AVAILABLE' (a GPU check's verdict in capitals, no error word): 112 -> 114.
    # Tune-av (merged after tune-at) adds 'A100+ GPUs' (xFormers' bf16 reason 'bf16 is only supported on A100+ GPUs',
    # printed indented under '`cutlassF` is not supported because:' with no error word); torch
    # autocast's 'Current CUDA Device does not support bfloat16' reuses 'CUDA', DeepSpeed's
    # 'Type bf16 is not supported' the word 'not supported', cuBLAS's statuses 'error': 114 -> 115.
    # Tune-ay adds 'NvEncodeAPI ' (the Video Codec SDK's NvEncoder 'Current Driver Version does
    # not support this NvEncodeAPI version', thrown in an exception with no error word);
    # FFmpeg's restated check reuses 'quire', its driver requirement 'Nvidia drive', the
    # kernel-module lines 'error', 'ERROR', 'FATAL' and 'version ': 115 -> 116.
    # Tune-be adds 'torch.ops.' (a traceback's source line calling a compiled extension's op,
    # torch-extension-op-call: no error word on it); its check-macro signals reuse signatures
    # that exist: 116 -> 117. Tune-bd adds 'ks to:' (CMake's 'Target "X" links to:' before a
    # missing CUDA::<lib> target, a line with no error word; its other near needles reuse
    # 'The ' and 'not found'): 117 -> 118. Tune-bh adds the suspicious-line word ' err: '
    # (Ollama's GPU discovery 'cudaSetDevice err: 999', a C helper's return code with no error
    # word, above the DEBUG record that relays it): 118 -> 119. Wording-bm adds 'Library not '
    # (macOS dyld's 'Library not loaded: @rpath/libX.dylib', no error word on the line):
    # 119 -> 120. Tune-bq adds 'vcc_wrapper' (CMake's 'Check for working CXX compiler:
    # <kokkos>/bin/nvcc_wrapper - broken', a status line with no error word): 120 -> 121.
    # Tune-bp adds 'cpu' (device="cpu" / --device cpu, the context that tells CTranslate2's
    # CPU-backend compute-type refusal from a GPU's) and 'lib64/python' (a traceback frame of
    # torch under a lib64 site-packages, cut before its 'File '): 121 -> 123. The lead then
    # replaced the bare 'cpu' (cpufreq, cpuset, 'CPU time' lines of every journal) by the
    # quoted and option forms the pattern needs ('"cpu"', "'cpu'", '=cpu', ...): 123 -> 126.
    # Tune-bt adds 'k_root/build' (a conda-forge feedstock's build prefix among XLA's CUDA
    # roots: a strace access() line or a bare list item, neither with an error word): 126 -> 127.
    # Tune-cb adds the suspicious-line words 'llegal instruction', 'Aborted' and 'core dumped'
    # (a shell's report that the process died of SIGILL / SIGABRT / any signal with a core, no
    # error word on the line; 'Killed' was a literal already): 127 -> 130.
    # Tune-ch adds the suspicious-line words 'corrupted ' and 'corruption' (glibc's malloc_printerr
    # verdicts, 'free(): corrupted unsorted chunks', 'double free or corruption (out)', printed
    # before the SIGABRT with no error word; a bare 'corrupt' took '/tmp/x_corrupt/' paths):
    # 129 -> 131.
    # Tune-co (session 43) adds 'in -lcuda' (autoconf's AC_CHECK_LIB 'checking for F in
    # -lcuda|-lcudart... no', a configure line with no error word) and 'Invalid conf' (NCCL's
    # 'Invalid config <attr> attribute value N' family, quoted after torch's 'Last error:'
    # without its 'NCCL WARN' prefix): 131 -> 133.
    # Tune-cp (session 43) adds '/linux-64' (conda's channel subdir in a transaction line that
    # installs a CUDA library from NVIDIA's channel, an info line with no error word): 133 -> 134.
    # It adds the host marks of signature host-is-not-nvidia: 'Darwin', 'macOS', '/Users/', 'rocm'
    # and 'gfx' (macOS kernel/platform/home path, ROCm prefix and tag, AMD targets; info lines
    # with no error word, which withdraw the NVIDIA-toolchain classes on such hosts): 134 -> 139.
    # Tune-cr (session 44) adds 'capability m' (kmcuda's own device check 'compute capability
    # mismatch for device N: wanted X.Y, have A.B', an INFO line with no error word and the only
    # statement of the cause: the ValueError after it names none). Its needle stops before
    # 'device ': a needle ending there reduced to the Hyperscan anchor 'vice', which every
    # 'Service Unavailable' line hits (tests/test_fastscan.py): 139 -> 140.
    # Tune-cx (session 45) gives gpu-model-named the needles of the prefixes its pattern already
    # took ('GeForce ', 'Quadro ': older drivers name GPUs without 'NVIDIA ', an info line with
    # no error word); 'GTX 10' goes (its lines hold 'GeForce '): 140 -> 141.
    # Tune-de (session 46) adds the suspicious-line words 'relocation truncated to fit', 'PLT
    # entry for' and 'be used when making' (GNU ld's relocation verdicts, errors worded without
    # an error word above collect2's wrapper; a bare 'relocation' would take ld's read-only
    # section warnings): 141 -> 144.
    # Tune-df (session 46) adds ' source=' (reduced to 'source='): Ollama's server-log shape
    # (signature ollama-server-log-line, Go slog text with the source's base name, an info line
    # with no error word), the context that tells an 804 in Ollama from an image's compat
    # libcuda: 144 -> 145.
    # Tune-dh (session 46) adds '=outdated_dr' (OBS's NVENC probe obs-nvenc-test printing its
    # verdict 'reason=outdated_driver' as an INI key, one key a line with no error word; the only
    # statement that the driver's NVENC API is older than the build's): 145 -> 146.
    # Tune-ee (session 47) adds the suspicious-line words 'RESOURCE_EXHAUSTED: ', 'INTERNAL: ',
    # 'INVALID_ARGUMENT: ' and 'UNIMPLEMENTED: ': an absl::Status as XLA/JAX/TensorFlow print it
    # ('<CODE>: <message>', absl/status/status.cc Status::ToString), an error statement with no
    # error word (round 94's unknown/hvr-1 showed no suspicious line at all); FAILED_PRECONDITION
    # holds 'FAILED' already, the rarer codes are left out for grep time: 146 -> 150.
    # Tune-ec (session 47) adds 'No rule to m' (GNU make's 'No rule to make target X, needed
    # by Y' for a library file a target links by path, with no error word; ninja's form
    # holds 'error'), '#include' and 'crt/' (the compiler's echo of the #include line it
    # stopped at, ' NN | #include "X"', and a paste's cut tail 'crt/host_defines.h"', where
    # the fatal-error line above it is lost; neither holds an error word): 150 -> 153.
    # Tune-ed (session 47) adds ';  needed by' (glibc's LD_DEBUG=libs 'file=<lib> [0];  needed by
    # <object>' line, signature ld-debug-library-needed-by: a trace with no error word, the only
    # record of which directory the loader took a wheel's CUDA dependency from): 153 -> 154.
    # Tune-fb (session 47) adds 's6-' (s6-overlay's service paths and s6-rc's 'service X:
    # starting' lines, signature container-init-s6-overlay: a container image's PID 1, context
    # with no error word for a TensorRT plugin's 35): 154 -> 155.
    # Tune-gc (session 48) adds 'PyTorch' (the near: context of ninja-impostor-in-torch-jit:
    # torch cpp_extension's verbose 'Using ... as PyTorch extensions root...', no error word;
    # the detector's own 'die: error: ...' line is selected by 'error'): 155 -> 156.
    # Tune-gf (session 48) adds 'test.c' (MSVC cl.exe's echo of the one-line C program
    # DeepSpeed's OpBuilder.has_function compiles, the near guard of
    # msvc-feature-probe-link-miss: the LNK1181 after it is the probe's answer, not a failed
    # build; round 97's null unknown/hzp-1 was named needed-files-provided): 156 -> 157.
    # Tune-ic (session 50) adds 'to be true, but got false' (torch's TORCH_CHECK(cond) with no
    # message, signature torch-check-arch-gate-false: flash-attn 0.x's is_sm80 gate; the C++
    # what() line of c10::Error carries no error word): 157 -> 158.
    # Tune-kc (session 52) widens cuda-runtime-none-loadable's needle 'Error: Failure finding'
    # to 'Failure finding' (literal 'Failure find'): cuda-pathfinder's message on a line of its
    # own when a pasted traceback wraps after 'DynamicLibNotFoundError:' (round 105's ilv-1,
    # Windows '<lib>*.dll'), which carries no other error word: 158 -> 159.
    # Tune-ka (session 52) adds 'NV_EXCLUDE_B' (DKMS's echo of the NVIDIA dkms.conf make command
    # ending '(bad exit status: N)', signature dkms-nvidia-make-bad-exit: the only line of a DKMS
    # failure that names the NVIDIA module, no error word; round 102's ihy-1): 159 -> 160.
    assert len(lits) <= 160, "each literal costs grep time; see prefilter.py"


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
        "/usr/bin/ld: cannot find -ltorch_cuda / -lc10",
        "/usr/bin/ld.gold: error: cannot find -lcudart_missing",
        "ld: cannot find -lgomp: No such file or directory",
        "we cannot find -lfoo anywhere",
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


def test_a_gate_holds_wherever_its_pattern_matches() -> None:
    """``gate:`` is a shortcut, never a filter: every line a gated signature's pattern matches
    (its own and every other signature's examples, the fixture logs, and lines assembled
    from the pieces of the two gates perf-e added) holds a gate match, so skipping the
    pattern where the gate fails changes no result."""
    import random
    import re

    cat = default_catalog()
    gated = [s for s in cat.signatures if s.gate is not None]
    assert {"nvcc-not-located", "shared-object-truncated"} <= {s.id for s in gated}
    lines = [ex for s in cat.signatures for ex in s.examples]
    for log in LOG_FILES:
        lines += (LOGS / log).read_text(encoding="utf-8", errors="replace").splitlines()
    pieces = ["Could not", "couldn't", "cannot", "can't", "unable to", " find ", "FIND ", "nvcc"]
    pieces += ["NVCC", "nvcc ", "\u0131", "No CUDA or HIP available on this system", " ", "x"]
    pieces += ["CUDA_HOME does not exist, unable to compile CUDA op", "Error: ", "OSError", ": "]
    pieces += [" was requested, but nvcc was not found", "Could not find CUDA lib directory"]
    pieces += ["/tmp/a.so", "libx.so.1", "invalid ELF header", "file too short", "ld: error"]
    pieces += ["cannot read file data", "error while loading shared libraries", "Error in dlopen"]
    pieces += ["OSError: /tmp/a.so: ", "ld: error: t1.so: ", "Error in dlopen: x.so.2: "]
    pieces += ["error while loading shared libraries: libf.so.1: ", "İmportError: b.so: "]
    rnd = random.Random(31)
    lines += [
        "".join(rnd.choice(pieces) for _ in range(rnd.randrange(1, 9))) for _ in range(20_000)
    ]
    matched: dict[str, int] = {}
    for s in gated:
        rx, gate = re.compile(s.pattern), re.compile(s.gate or "")
        for line in lines:
            if rx.search(line) is not None:
                matched[s.id] = matched.get(s.id, 0) + 1
                assert gate.search(line) is not None, (s.id, line)
    # control: the assembled lines do match the two patterns, many times
    assert matched["nvcc-not-located"] > 1_000 and matched["shared-object-truncated"] > 500


@pytest.mark.parametrize(
    "benign",
    ["/usr/local/lib/python3.12/site-packages/nvidia/cu13/lib", "nvidia", "python3", "lib64"],
)
def test_no_prefilter_literal_selects_every_line_naming_a_common_path(benign: str) -> None:
    """Anchors of two needles merge into their common prefix (prefilter step 3): 'your nvidia
    driver ...' and 'nvidia-smi: ...' became 'vidia', a Hyperscan hit and a decoded line for
    every line that names a pip CUDA wheel's directory or the driver. No literal may be a
    substring of such everyday words."""
    assert [lit for lit in literals(default_catalog()) if lit in benign] == []
