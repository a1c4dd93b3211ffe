"""Message families behind held-out round 17's misses (tune-i), as a table.

Why: a fix written from one miss must cover the upstream message in every wording it is printed
in, and must not claim lines it should not. Each row is a log (real recorded text, or the
upstream format string filled as the emitter fills it, cited in knowledge/signatures.yaml) and
the class log-only diagnosis must rank first, or None where no class may be named (or, for a
negative row, the class that must NOT be ranked at all).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from family_table import check_family

from conftest import diagnosed_log

# (log lines, class ranked first or None for "no class", classes that must not be ranked at all)
CASES: list[tuple[list[str], str | None, list[str]]] = [
    # --- GCC's cv-qualified / typedef wording of a removed cudaDeviceProp member (fo-9) ---
    (
        [
            "/src/cuda_info.cpp:427:43: error: ‘const struct cudaDeviceProp’ has no member"
            " named ‘clockRate’"
        ],
        "toolkit-major-keeps-project-api",
        [],
    ),
    (
        [
            "dev.c:12:9: error: ‘cudaDeviceProp’ {aka ‘struct cudaDeviceProp’} has no member"
            " named ‘kernelExecTimeoutEnabled’"
        ],
        "toolkit-major-keeps-project-api",
        [],
    ),
    (
        [
            "smoke.cpp:34:17: error: ‘volatile struct cudaDeviceProp’ has no member named"
            " ‘computeMode’; did you mean ‘computeMode_’?"
        ],
        "toolkit-major-keeps-project-api",
        [],
    ),
    # a member the table does not list is the project's own: no class
    (
        ["a.cpp:3:5: error: ‘const struct Foo’ has no member named ‘clockRate’"],
        None,
        [],
    ),
    (
        ["a.cpp:3:5: error: ‘const struct cudaDeviceProp’ has no member named ‘totalGlobalMem2’"],
        None,
        [],
    ),
    # --- glibc's 'undefined symbol:' with the symbol wrapped or cut (fn-4) ---
    (
        ["flash_attn_2_cuda.cpython-311-x86_64-linux-gnu.so: undefined symbol:"],
        "extensions-match-torch-abi",
        [],
    ),
    (
        [
            "ImportError: /venv/lib/python3.10/site-packages/vllm/_C.abi3.so: undefined symbol: ",
            "_ZN3c104cuda9SetDeviceEi",
        ],
        "extensions-match-torch-abi",
        [],
    ),
    # the loader's own word, not a line that mentions it in prose
    (["the undefined symbol: check in our CI"], None, []),
    (["libcufile.so.0: undefined symbol: shm_open"], None, ["extensions-match-torch-abi"]),
    # --- a loader that tried every CUDA runtime soname it knows (fn-8, cudnn_frontend_shim.h) ---
    (
        ["RuntimeError: Unable to load any libcudart.so.* library"],
        "runtime-libs-match-cuda-major",
        [],
    ),
    (["Unable to load any libnvrtc.so.* library."], "runtime-libs-match-cuda-major", []),
    # both majors present is another cause; the driver's libcuda is not the runtime
    (
        ["RuntimeError: Multiple libcudart libraries found: libcudart.so.12 and libcudart.so.13"],
        None,
        [],
    ),
    (
        ["RuntimeError: Unable to dlopen libcuda.so.1 : libcuda.so.1: cannot open shared object"],
        None,
        ["runtime-libs-match-cuda-major"],
    ),
    # --- TensorFlow's dso loader gave up on its CUDA libraries (fp-7, gpu_device.cc) ---
    (
        [
            "W0000 00:00:1777802014.562474   11318 gpu_device.cc:2365] Cannot dlopen some GPU"
            " libraries. Please make sure the missing libraries mentioned above are installed"
        ],
        "runtime-libs-match-cuda-major",
        [],
    ),
    (
        [
            "2020-08-24 11:08:28.568827: W tensorflow/stream_executor/platform/default/"
            "dso_loader.cc:59] Could not load dynamic library 'libcudnn.so.7'; dlerror:"
            " libcudnn.so.7: cannot open shared object file: No such file or directory",
            "2020-08-24 11:08:28.568905: W tensorflow/core/common_runtime/gpu/gpu_device.cc:1753]"
            " Cannot dlopen some GPU libraries. Please make sure the missing libraries mentioned"
            " above are installed properly if you would like to use GPU.",
        ],
        "runtime-libs-match-cuda-major",
        [],
    ),
    # XLA's cudart stub (TensorFlow, jaxlib) when its libcudart did not load
    (
        [
            "E0000 00:00:1761686162.245829   20217 cuda_executor.cc:1309] INTERNAL: CUDA Runtime"
            " error: Failed call to cudaGetRuntimeVersion: Error loading CUDA libraries. GPU will"
            " not be used.: Error loading CUDA libraries. GPU will not be used."
        ],
        "runtime-libs-match-cuda-major",
        [],
    ),
    # TensorFlow's dso_loader on Windows names the CUDA library and its major
    (
        [
            "2022-08-13 11:30:05.583930: W tensorflow/stream_executor/platform/default/"
            "dso_loader.cc:64] Could not load dynamic library 'cusolver64_11.dll'; dlerror:"
            " cusolver64_11.dll not found"
        ],
        "runtime-libs-match-cuda-major",
        [],
    ),
    # ... but not the driver's nvcuda.dll, cuDNN, or another program's plugin DLL
    (
        ["Could not load dynamic library 'nvcuda.dll'; dlerror: nvcuda.dll not found"],
        None,
        ["runtime-libs-match-cuda-major"],
    ),
    (
        ["Could not load dynamic library 'cudnn64_8.dll'; dlerror: cudnn64_8.dll not found"],
        None,
        ["runtime-libs-match-cuda-major"],
    ),
    (["Could not load dynamic library 'RenderSystem_GL.dll' (error 126)"], None, []),
    # TF's CPU-build notice is no failure; a failing line elsewhere outranks the warning
    (
        [
            "I0000 00:00:1777215668.929972  450463 cudart_stub.cc:31] Could not find cuda"
            " drivers on your machine, GPU will not be used."
        ],
        None,
        [],
    ),
    (
        [
            "W0000 00:00:1744212707.411665      14 gpu_device.cc:2341] Cannot dlopen some GPU"
            " libraries. Please make sure the missing libraries mentioned above are installed",
            "RuntimeError: CUDA error: no kernel image is available for execution on the device",
        ],
        "package-has-gpu-arch",
        [],
    ),
]


@pytest.mark.parametrize(("lines", "first", "never"), CASES)
def test_family(tmp_path: Path, lines: list[str], first: str | None, never: list[str]) -> None:
    check_family(tmp_path, lines, first, never)


# (log lines, the line the first error is on (1-based) or None for no suspicious line): lines no
# signature matches, in logs no rule explains (tests/test_corpus.py's first-error-line check)
FIRST_LINES: list[tuple[list[str], int | None]] = [
    # EDG's missing-member body quoted without 'file(line): error:' (fo-5), GCC's and clang's
    (['namespace "thrust" has no member "sort_by_key"'], 1),
    (["‘struct Foo’ has no member named ‘bar’"], 1),
    (["no member named 'bar' in 'Foo'"], 1),
    (["‘sort_by_key’ is not a member of ‘thrust’"], 1),
    (["'clockRate': is not a member of 'cudaDeviceProp'"], 1),
    # a kernel's arch guard printed before the trap it leads to (fp-6)
    (["This kernel only supports sm120.", "cudaErrorLaunchFailure: unspecified launch failure"], 1),
    # a real compiler diagnostic still outranks the prose words
    (
        [
            "this build only supports the listed targets",
            'k.cu(3): error: namespace "cub" has no member "Foo"',
        ],
        2,
    ),
    # neither word: nothing to show
    (["the thrust namespace lists sort_by_key", "supports sm120"], None),
]


@pytest.mark.parametrize(("lines", "first"), FIRST_LINES)
def test_first_error_line(tmp_path: Path, lines: list[str], first: int | None) -> None:
    log = tmp_path / "x.log"
    log.write_text("\n".join(lines) + "\n")
    shown = diagnosed_log(log).suspicious
    if first is None:
        assert shown == []
    else:
        assert shown and shown[0].line == first, [(s.line, s.score, s.reason) for s in shown]
