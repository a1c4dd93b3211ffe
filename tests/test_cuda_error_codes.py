"""Every CUDA runtime and driver error code, in every wording a log carries it, as a table.

Why: failure logs often carry only a CUDA error: by number, by enum name or by its message, as
printed by the runtime, the driver, torch, Triton, CuPy, XLA, ONNX Runtime, numba, PyCUDA,
CUDA.jl or a project's own error macro. tests/fixtures/cuda-errors/codes.json holds every
code of CUDA 13.0's cudaError (driver_types.h) and CUresult (cuda.h) with the strings recorded
from libcudart 13.0 and driver 580.159.04 (record.py, README.md). A code whose meaning names
one cause lands on that cause's signature in every wording; every other code names no class in
any wording (a generic error such as an illegal address or out of memory has many causes, and a
class named for it would propose a fix for a failure whose cause lies elsewhere).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from functools import cache
from pathlib import Path

import pytest
import yaml

from remedy.diagnose import diagnose
from remedy.inputs import scan_logs
from remedy.knowledge.loader import load_knowledge

CODES = json.loads((Path(__file__).parent / "fixtures" / "cuda-errors" / "codes.json").read_text())

ROOT = Path(__file__).resolve().parents[1]
CAPTURE = {"cuda-stream-capture-unsupported"}
# code -> the signatures one of which every wording of it must match (the code names one cause)
NAMES_ONE_CAUSE: dict[int, set[str]] = {
    35: {"driver-too-old"},  # cudaErrorInsufficientDriver (runtime only)
    # tune-jc: cudaErrorInvalidSymbol (runtime only), a symbol copy into a module with no image
    13: {"symbol-copy-invalid-device-symbol"},
    98: {"no-kernel-image"},  # cudaErrorInvalidDeviceFunction (runtime only)
    # cudaErrorInvalidKernelImage / CUDA_ERROR_INVALID_IMAGE; Triton's prefix: its own cubin
    200: {"cuda-invalid-image-code", "triton-invalid-kernel-image"},
    209: {"no-kernel-image"},  # cudaErrorNoKernelImageForDevice / CUDA_ERROR_NO_BINARY_FOR_GPU
    218: {"cuda-invalid-ptx"},  # cudaErrorInvalidPtx / CUDA_ERROR_INVALID_PTX
    222: {
        "unsupported-ptx-driver"
    },  # cudaErrorUnsupportedPtxVersion / CUDA_ERROR_UNSUPPORTED_PTX_VERSION
    900: CAPTURE,
    # tune-ca: a fork left unjoined in capture (a side stream of a library in the captured code)
    904: CAPTURE,
    906: CAPTURE,
    907: CAPTURE,
}
# wordings a mapped code is not matched in, and why
NOT_MATCHED = {
    # tune-cm (session 43): (98, "message") is claimed now, as 209's bare string always was
    # (HIP prints both words too; a line naming HIP/ROCm is still left out): programs' own check
    # macros print cudaGetErrorString(98) with no prefix ('GPUassert: %s %s %d', '%s in %s at line
    # %d'), corpus package-has-gpu-arch/gzp-1 and hat-1
    (200, "message"): "the bare string is also 300's (cudaErrorInvalidSource)",
    **{
        (13, k): "tune-jc: 13 is matched by name and string, not by number alone"
        for k in ("macro-expr", "macro-code", "macro-paren", "macro-colon", "pycuda", "cuda-python")
    },
    (200, "pycuda"): "the bare string after a call's name is also 300's",
    (900, "macro-expr"): "capture codes are matched by name and string, not by number alone",
    (907, "macro-expr"): "capture codes are matched by name and string, not by number alone",
    (906, "macro-expr"): "capture codes are matched by name and string, not by number alone",
    (904, "macro-expr"): "capture codes are matched by name and string, not by number alone",
    **{
        (c, k): "capture codes are matched by name and string, not by number alone"
        for c in (900, 904, 906, 907)
        for k in ("macro-code", "macro-paren", "cuda-python")
    },
    (
        906,
        "message",
    ): "906's string is matched only after 'error: ' (a capture-free use is another cause)",
    (906, "macro"): "906's string is matched only after 'error: '",
    **{
        (904, k): "904's string is matched only after 'error: ' (as 906's)"
        for k in ("message", "macro", "ort", "triton", "pycuda")
    },
    # tune-s's harm guard (field signal insufficient-driver-unconfirmed): cudart returns 35
    # with no libcuda at all (recorded, libcudart 13.0), so a bare 35 that states no driver
    # version and names no binary that confirms it proposes no driver upgrade
    # tune-ee (session 47, round 94's null unknown/hvv-1, triton-lang/triton#1323): Triton's 200
    # alone (no frame, no wrapper, no driver line) is a ptxas newer than the driver or a cubin
    # for another GPU (a shared cache): field signal bare-triton-invalid-kernel-image-names-no-
    # driver proposes no driver change
    (200, "triton"): "a bare Triton 200: no frame, no driver line (harm guard)",
    (35, "message"): "a bare 35: no driver version, no confirming binary (harm guard)",
    (35, "macro-code"): "a bare 35: no driver version, no confirming binary (harm guard)",
    (35, "macro-paren"): "a bare 35: no driver version, no confirming binary (harm guard)",
    (35, "ort"): "a bare 35 in ORT's wording: no driver version (harm guard)",
    (35, "cuda-python"): "a bare 35 in cuda-python's wording: no driver version (harm guard)",
    (906, "ort"): "906's string is matched only after 'error: ' (corpus unknown/fn-11 is ORT's)",
    (906, "triton"): "the driver's string for 906 is the runtime's, matched only after 'error: '",
    (906, "pycuda"): "the driver's string for 906 is the runtime's, matched only after 'error: '",
}
# codes other signatures own; this table makes no claim on them
ELSEWHERE = {
    217: "peer access unsupported: custom-allreduce-no-p2p (capture-custom-allreduce)",
    300: "cudaErrorInvalidSource prints 200's string, so its message wordings are 200's",
    803: "cuda-compat (forward compatibility): tune-n's class",
    804: "cuda-compat (forward compatibility): tune-n's class",
    901: "capture invalidated: a wrapper that names no cause",
}


def runtime_wordings(v: int, name: str, msg: str) -> Iterator[tuple[str, str]]:
    """A cudaError_t as the runtime's users print it."""
    yield "name", name
    yield "message", msg
    # CuPy's CUDARuntimeError: '<cudaGetErrorName>: <cudaGetErrorString>'
    yield "cupy", f"cupy_backends.cuda.api.runtime.CUDARuntimeError: {name}: {msg}"
    # torch's c10_cuda_check_implementation: 'CUDA error: <cudaGetErrorString>'
    yield "torch", f"RuntimeError: CUDA error: {msg}"
    # a project's own macro: fprintf(stderr, "CUDA error %d at %s:%d: %s\n", ...)
    yield "macro", f"CUDA error {v} at src/kernels.cu:57: {msg}"
    yield "macro-expr", f"CUDA error {v} at src/kernels.cu:57: cudaLaunchKernel(f, grid, block)"
    yield "macro-code", f"CUDA error code={v} in src/kernels.cu:57"
    yield "macro-paren", f"ExternalError: CUDA error({v}) at src/kernels.cu:57"
    # ONNX Runtime's CudaCall: '%s failure %d: %s ; GPU=%d ; hostname=%s ; expr=%s; %s'
    yield "ort", f"CUDA failure {v}: {msg} ; GPU=0 ; hostname=gpu1 ; expr=cudaGetLastError(); "
    # cuda-python's check idiom over a cudaError_t: raise RuntimeError("Cuda Runtime Error: {}"
    # .format(err)) (NVIDIA/TensorRT samples/python/common_runtime.py check_cuda_err; NeMo's
    # nemo/core/utils/cuda_python_utils.py assert_drv): format() of the IntEnum prints the number
    yield "cuda-python", f"RuntimeError: Cuda Runtime Error: {v}"


def driver_wordings(v: int, name: str, msg: str) -> Iterator[tuple[str, str]]:
    """A CUresult as the driver API's users print it."""
    yield "name", name
    # XLA's ToStatusSlow: 'CUDA error: <detail>: <cuGetErrorName>: <cuGetErrorString>'
    yield (
        "xla",
        f"XlaRuntimeError: INTERNAL: CUDA error: Failed call to cuModuleLoadData: {name}: {msg}",
    )
    # CuPy's CUDADriverError: '<cuGetErrorName>: <cuGetErrorString>'
    yield "cupy", f"cupy_backends.cuda.api.driver.CUDADriverError: {name}: {msg}"
    # Triton's gpuAssert: 'Triton Error [CUDA]: <cuGetErrorString>'
    yield "triton", f"RuntimeError: Triton Error [CUDA]: {msg}"
    # numba's CudaAPIError: '[<code>] Call to <fn> results in <name>'
    yield (
        "numba",
        f"numba.cuda.cudadrv.driver.CudaAPIError: [{v}] Call to cuModuleLoadDataEx results in {name}",
    )
    # PyCUDA: '<fn> failed: <cuGetErrorString>'
    yield "pycuda", f"pycuda._driver.LogicError: cuModuleLoadDataEx failed: {msg}"
    # a project's own macro over cuGetErrorString
    yield "macro", f"CUDA error {v} at src/loader.c:31: {msg}"
    # cuda-python's check idiom over a CUresult: "Cuda Error: {}".format(err) (as above)
    yield "cuda-python", f"RuntimeError: Cuda Error: {v}"


def rows() -> Iterator[tuple[int, str, str]]:
    for c in CODES["runtime"]:
        if c["value"]:
            for form, line in runtime_wordings(
                c["value"], c["cudaGetErrorName"], c["cudaGetErrorString"]
            ):
                yield c["value"], f"runtime-{form}", line
    for c in CODES["driver"]:
        if c["value"] and c["cuGetErrorName"]:
            for form, line in driver_wordings(
                c["value"], c["cuGetErrorName"], c["cuGetErrorString"]
            ):
                yield c["value"], f"driver-{form}", line


ROWS = list(rows())


@cache
def reaching() -> dict[str, set[str]]:
    """signature -> the rules that predict it or that a field signal on it names."""
    out: dict[str, set[str]] = {}
    for compiled in load_knowledge().rules.values():
        for sig in compiled.rule.predicts:
            out.setdefault(sig, set()).add(compiled.rule.id)
    signals = yaml.safe_load((ROOT / "knowledge" / "field-signals.yaml").read_text())["signals"]
    for sig in signals:
        if sig.get("signature") and sig.get("rule"):
            out.setdefault(sig["signature"], set()).add(sig["rule"])
    return out


def test_the_recording_holds_every_code_of_both_enums() -> None:
    """codes.json is CUDA 13.0's: both enums, with strings for each from libcudart and libcuda."""
    assert CODES["cuda_runtime_version"] == 13000
    rt = {c["value"]: c for c in CODES["runtime"]}
    drv = {c["value"]: c for c in CODES["driver"]}
    assert len(rt) >= 130 and len(drv) >= 100
    assert all(c["cudaGetErrorName"] == c["name"] for c in rt.values())
    assert all(c["cuGetErrorName"] == c["name"] for c in drv.values())
    assert rt[209]["cudaGetErrorString"] == drv[209]["cuGetErrorString"]
    assert rt[222]["name"] == "cudaErrorUnsupportedPtxVersion"
    assert drv[222]["name"] == "CUDA_ERROR_UNSUPPORTED_PTX_VERSION"


# the codes ELSEWHERE names are left out, not skipped: this table makes no claim on them
CLAIMED = [r for r in ROWS if r[0] not in ELSEWHERE]


@pytest.mark.parametrize(("code", "form", "line"), CLAIMED, ids=[f"{c}-{f}" for c, f, _ in CLAIMED])
def test_cuda_error_wording(code: int, form: str, line: str, tmp_path: Path) -> None:
    log = tmp_path / "x.log"
    log.write_text(line + "\n")
    symptoms, _, wrappers = scan_logs([log])
    sigs = {s.signature for s in symptoms}
    d = diagnose(load_knowledge(), None, symptoms, wrappers=wrappers)
    ranked = [h.rule for h in d.hypotheses if h.source == "rules"]
    want = NAMES_ONE_CAUSE.get(code)
    kind = form.split("-", 1)[1]
    if want is None or (code, kind) in NOT_MATCHED:
        assert ranked == [], f"{line!r}: code {code} names no single cause, yet ranked {ranked}"
    else:
        assert want & sigs, f"{line!r}: {sorted(sigs)}"
        allowed = set().union(*(reaching().get(s, set()) for s in want & sigs))
        assert ranked and ranked[0] in allowed, (line, ranked)


def test_template_rows_are_the_generators_output() -> None:
    """tests/fixtures/templates/cuda-errors/ and its index rows are gen_templates.py's output, so
    every row carries the strings CUDA returns (and the class the table gives the code)."""
    import importlib.util

    path = ROOT / "tests" / "fixtures" / "cuda-errors" / "gen_templates.py"
    spec = importlib.util.spec_from_file_location("gen_templates", path)
    assert spec and spec.loader
    gen = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(gen)
    tdir = ROOT / "tests" / "fixtures" / "templates"
    on_disk = {p.name: p.read_text() for p in (tdir / "cuda-errors").glob("*.log")}
    assert on_disk == gen.files()
    index = yaml.safe_load((tdir / "index.yaml").read_text())["templates"]
    indexed = {r["file"]: r["class"] for r in index if r["file"].startswith("cuda-errors/")}
    assert indexed == {r["file"]: r["class"] for r in gen.index_rows()}
    # a code the table maps keeps its class in the template rows, and no generic one gets any
    for code, _, _, cls, _ in gen.ROWS:
        assert (cls is None) == (code not in NAMES_ONE_CAUSE), code


@pytest.mark.parametrize(
    "line",
    [
        # ROCm's HIP prints the same string for hipErrorInvalidDeviceFunction: another stack
        "RuntimeError: HIP error: invalid device function",
        # ONNX Runtime's CudaCall for the other libraries: their status numbers are not CUDA's
        "CUBLAS failure 3: CUBLAS_STATUS_NOT_INITIALIZED ; GPU=0 ; hostname=gpu1 ; expr=cublasCreate(&h); ",
        "CUDNN failure 9: CUDNN_STATUS_NOT_SUPPORTED ; GPU=0 ; hostname=gpu1 ; expr=cudnnConvolutionForward(); ",
        # a mapped number inside a longer one, or a version
        "CUDA error 2090 at src/kernels.cu:57",
        "CUDA error 35.1 reported",
        # cuda-python's 'Cuda Error: <CUresult>' over a number the driver enum lacks: 35 and 98
        # are runtime-only (cudaErrorInsufficientDriver, cudaErrorInvalidDeviceFunction)
        "RuntimeError: Cuda Error: 35",
        "RuntimeError: Cuda Error: 98",
        "RuntimeError: Cuda Error: 2090",
    ],
)
def test_numbers_and_strings_of_other_stacks_name_no_cause(line: str, tmp_path: Path) -> None:
    log = tmp_path / "x.log"
    log.write_text(line + "\n")
    symptoms, _, wrappers = scan_logs([log])
    d = diagnose(load_knowledge(), None, symptoms, wrappers=wrappers)
    assert [h.rule for h in d.hypotheses if h.source == "rules"] == [], line
