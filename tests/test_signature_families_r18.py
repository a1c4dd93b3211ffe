"""Message families behind held-out round 18's misses (tune-j), as a table.

Why: a fix written from one miss must cover the upstream message in every wording it is printed
in, and must not claim lines it should not. Each row is a log (real recorded text, or the
upstream format string filled as the emitter fills it, cited in knowledge/signatures.yaml and
knowledge/cuda-api-changes.yaml) and the class log-only diagnosis must rank first, or None where
no class may be named, and the classes that must NOT be ranked at all.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from family_table import check_family

from conftest import diagnosed_log

DRIVER = ["driver-supports-cuda", "driver-supports-build-cuda", "driver-runs-ptx"]

# (log lines, class ranked first or None for "no class", classes that must not be ranked at all)
CASES: list[tuple[list[str], str | None, list[str]]] = [
    # --- the cudaThread* family and other deprecated runtime calls CUDA 13.0 removed (fq-5);
    # recorded with g++ 12.2, gcc 12.2 (C) and nvcc 13.0.88 against the CUDA 13.0.88 headers
    (
        [
            "evaluator.cpp:4:3: error: ‘cudaThreadSynchronize’ was not declared in this scope;"
            " did you mean ‘cudaStreamSynchronize’?"
        ],
        "toolkit-major-keeps-project-api",
        [],
    ),
    (
        [
            "evaluator.cpp:6:3: error: ‘cudaThreadSetLimit’ was not declared in this scope;"
            " did you mean ‘cudaDeviceSetLimit’?"
        ],
        "toolkit-major-keeps-project-api",
        [],
    ),
    (
        ['t.cu(4): error: identifier "cudaThreadExit" is undefined'],
        "toolkit-major-keeps-project-api",
        [],
    ),
    (
        ['t.cu(9): error: identifier "cudaSetDoubleForDevice" is undefined'],
        "toolkit-major-keeps-project-api",
        [],
    ),
    (
        ['m.cu(2): error: identifier "cudaLaunchCooperativeKernelMultiDevice" is undefined'],
        "toolkit-major-keeps-project-api",
        [],
    ),
    (
        [
            "c.c:3:3: error: implicit declaration of function ‘cudaThreadSynchronize’; did you"
            " mean ‘cudaStreamSynchronize’? [-Werror=implicit-function-declaration]"
        ],
        "toolkit-major-keeps-project-api",
        [],
    ),
    # GCC inside a template that is never instantiated (recorded, g++ 12.2)
    (
        [
            "tpl.cpp:2:35: error: there are no arguments to ‘cudaThreadSynchronize’ that depend on"
            " a template parameter, so a declaration of ‘cudaThreadSynchronize’ must be available"
            " [-fpermissive]"
        ],
        "toolkit-major-keeps-project-api",
        [],
    ),
    (
        [
            "tpl.cpp:2:35: error: there are no arguments to ‘my_helper’ that depend on a template"
            " parameter, so a declaration of ‘my_helper’ must be available [-fpermissive]"
        ],
        None,
        [],
    ),
    # MSVC C3861 and clang's wording of the same missing name
    (
        ["evaluator.cpp(4): error C3861: 'cudaThreadGetCacheConfig': identifier not found"],
        "toolkit-major-keeps-project-api",
        [],
    ),
    (
        ["k.cpp:4:3: error: use of undeclared identifier 'cudaThreadSetCacheConfig'"],
        "toolkit-major-keeps-project-api",
        [],
    ),
    # a name the table does not list is the project's own: no class
    (["a.cpp(4): error C3861: 'cudaThreadHelper': identifier not found"], None, []),
    (
        [
            "a.c:3:3: error: implicit declaration of function ‘my_sync’ [-Werror=implicit-function-declaration]"
        ],
        None,
        [],
    ),
    # gcc's warning (not an error) for the same call: the link error that follows says it
    (
        [
            "c.c:3:3: warning: implicit declaration of function ‘cudaThreadSynchronize’; did you"
            " mean ‘cudaStreamSynchronize’? [-Wimplicit-function-declaration]"
        ],
        None,
        ["toolkit-major-keeps-project-api"],
    ),
    # an object built against CUDA 12 headers linked with CUDA 13's libcudart (recorded, g++ 12.2)
    (
        [
            "/usr/bin/ld: old.o: in function `main':",
            "old.cpp:(.text+0x5): undefined reference to `cudaThreadSynchronize'",
            "collect2: error: ld returned 1 exit status",
        ],
        "toolkit-major-keeps-project-api",
        DRIVER,
    ),
    # a link error for a current API, a signature-changed one (its C symbol is unchanged) or a
    # mangled CCCL name is not this class
    (
        ["old.cpp:(.text+0x5): undefined reference to `cudaStreamSynchronize'"],
        None,
        ["toolkit-major-keeps-project-api"],
    ),
    (
        ["a.cpp:(.text+0x9): undefined reference to `cudaMemAdvise'"],
        None,
        ["toolkit-major-keeps-project-api"],
    ),
    (
        ["k.o:(.text+0x9): undefined reference to `cub::Sum::operator()(int, int)'"],
        None,
        ["toolkit-major-keeps-project-api"],
    ),
    # cudaThreadExchangeStreamCaptureMode is current API: not in the table
    (['k.cu(3): error: identifier "cudaThreadExchangeStreamCaptureMode" is undefined'], None, []),
    # --- CUDA 13's include/cccl layout seen by a host compiler (fq-8) ---
    (
        [
            "h.cpp:1:10: fatal error: thrust/count.h: No such file or directory",
            "    1 | #include <thrust/count.h>",
            "compilation terminated.",
        ],
        "cccl-complete",
        [],
    ),
    # GCC's line quoted without its ': No such file or directory' tail (a build summary)
    (["  .../cuda_utils/thrust_utils.hpp:19: fatal error: thrust/count.h"], "cccl-complete", []),
    (["  .../filter.hpp:22:   fatal error: cuda/std/optional"], "cccl-complete", []),
    (["src/a.cpp:3: fatal error: cub/cub.cuh"], "cccl-complete", []),
    # the same cut wording for a non-CCCL header names no CCCL cause
    (["src/a.cpp:3: fatal error: boost/optional.hpp"], None, ["cccl-complete"]),
    # fatal errors that are not a missing header stay unclaimed
    (["x.cpp:1:1: fatal error: too many errors emitted, stopping now"], None, ["cccl-complete"]),
    (["cc1plus: fatal error: killed signal terminated program cc1plus"], None, ["cccl-complete"]),
    (
        ["lto1: fatal error: bytecode stream generated with LTO version 6.0"],
        None,
        ["cccl-complete"],
    ),
    # --- XLA's 'ptxas too old' (fr-1): the toolkit-vs-arch class, never a driver step ---
    (
        [
            "jaxlib.xla_extension.XlaRuntimeError: UNIMPLEMENTED: /home/u/envs/af3/lib/python3.11/"
            "site-packages/nvidia/cuda_nvcc/bin/ptxas ptxas too old. Falling back to the driver to"
            " compile."
        ],
        "arch-supported-by-toolkit",
        DRIVER,
    ),
    (
        [
            "jax.errors.JaxRuntimeError: UNIMPLEMENTED: /usr/local/cuda/bin/ptxas ptxas too old."
            " Falling back to the driver to compile."
        ],
        "arch-supported-by-toolkit",
        DRIVER,
    ),
    (
        [
            "RuntimeError: /usr/local/cuda/bin/ptxas ptxas too old. Falling back to the driver to compile."
        ],
        "arch-supported-by-toolkit",
        DRIVER,
    ),
    # XLA's subprocess compiler quoting ptxas' own verdict (its InternalError format string,
    # subprocess_compilation.cc / TensorFlow's asm_compiler.cc): XLA's ptxas, not Triton's
    (
        [
            "2020-11-10 10:00:00.000000: E tensorflow/stream_executor/gpu/asm_compiler.cc:63]"
            " Internal: ptxas exited with non-zero error code 65280, output: ptxas fatal   :"
            " Value 'sm_86' is not defined for option 'gpu-name'"
        ],
        "arch-supported-by-toolkit",
        ["triton-ptxas-knows-arch", *DRIVER],
    ),
    # the bare ptxas line stays Triton's (tune-c's bare-ptxas-gpu-name-is-triton)
    (
        ["ptxas fatal   : Value 'sm_120a' is not defined for option 'gpu-name'"],
        "triton-ptxas-knows-arch",
        DRIVER,
    ),
    # LogPtxasTooOld's warning alone (XLA went on with the driver's JIT): info, same class
    (
        [
            "2023-12-08 15:24:09.030037: W external/xla/xla/stream_executor/gpu/asm_compiler.cc:231]"
            " Falling back to the CUDA driver for PTX compilation; ptxas does not support CC 8.9",
            "2023-12-08 15:24:09.030055: W external/xla/xla/stream_executor/gpu/asm_compiler.cc:234]"
            " Used ptxas at ptxas",
        ],
        "arch-supported-by-toolkit",
        DRIVER,
    ),
    # beside a real failure the warning does not outrank it (the kernel-image line's own class,
    # as tests/test_corpus.py has it for such lines, stays first)
    (
        [
            "W external/xla/xla/stream_executor/gpu/asm_compiler.cc:231] Falling back to the CUDA"
            " driver for PTX compilation; ptxas does not support CC 12.0",
            "RuntimeError: CUDA error: no kernel image is available for execution on the device",
        ],
        "package-has-gpu-arch",
        [],
    ),
    # --- CTranslate2's cuBLAS/NCCL loader (fr-9): src/cuda/cublas_stub.cc, nccl_stub.cc ---
    (
        [
            "Transcription failed for part_000_split_001.wav: Library libcublas.so.12 is not found"
            " or cannot be loaded"
        ],
        "runtime-libs-match-cuda-major",
        DRIVER,
    ),
    (
        ["RuntimeError: Library libcublas.so.12 is not found or cannot be loaded"],
        "runtime-libs-match-cuda-major",
        DRIVER,
    ),
    # the Windows name: CUBLAS_LIBNAME "cublas64_" major ".dll"
    (
        ["RuntimeError: Library cublas64_12.dll is not found or cannot be loaded"],
        "runtime-libs-match-cuda-major",
        DRIVER,
    ),
    (
        [
            "Failed to initialize Whisper model: Library libnccl.so.2 is not found or cannot be loaded"
        ],
        "runtime-libs-match-cuda-major",
        [],
    ),
    # the same sentence for a library outside the CUDA stack (CTranslate2's mpi_stub.cc), or a
    # model file: no CUDA runtime cause
    (
        ["ERROR: Library libmpi.so.40 is not found or cannot be loaded"],
        None,
        ["runtime-libs-match-cuda-major"],
    ),
    (
        ["Model file model.bin is not found or cannot be loaded"],
        None,
        ["runtime-libs-match-cuda-major"],
    ),
    # --- TensorRT's verdict on the GPU's SM (fr-11) ---
    (
        ["Target GPU SM 87 is not supported by this TensorRT release."],
        "package-has-gpu-arch",
        DRIVER,
    ),
    (
        [
            "Target GPU SM 87 is not supported by this TensorRT release.",
            "(in checkCurrentSMEnabled at optimizer/common/builderHelpers.cpp:707)",
        ],
        "package-has-gpu-arch",
        DRIVER,
    ),
    (
        [
            "[E] Error[9]: IBuilder::buildSerializedNetwork: Error Code 9: API Usage Error (Target"
            " GPU SM 120 is not supported by this TensorRT release.)"
        ],
        "package-has-gpu-arch",
        DRIVER,
    ),
    # the kernel library's hex wording (0x809 = 8.9, 0x601 = 6.1, 0xc00 = 12.0)
    (
        [
            "[caskBuilderUtils.cpp::trtSmToCaskCCV::548] Error Code 1: Internal Error"
            " (Unsupported SM: 0x809)"
        ],
        "package-has-gpu-arch",
        DRIVER,
    ),
    (["Error Code 1: Internal Error (Unsupported SM: 0xc00)"], "package-has-gpu-arch", DRIVER),
    # other 'Unsupported' lines are not TensorRT's SM verdict
    (["Unsupported SMB dialect: 0x311"], None, ["package-has-gpu-arch"]),
    (["error: Unsupported SM version 0x"], None, ["package-has-gpu-arch"]),
    # --- the NVRM and CUDA.jl lines (fq-10, fr-5, fr-12, fr-13) ---
    # (tune-l: the API mismatch names driver-module-matches-libraries, never a CUDA-vs-driver class)
    (
        ["NVRM: API mismatch: the client has the version 570.148.08, but"],
        "driver-module-matches-libraries",
        DRIVER,
    ),
    (["NVRM: The NVIDIA GPU 0000:03:00.0 (PCI ID: 10de:1bb3)"], None, DRIVER),
    (
        [
            "┌ Warning: Your NVIDIA B200 GPU (compute capability 10.0) is not fully supported by CUDA 12.8.0."
        ],
        None,
        ["arch-supported-by-toolkit"],
    ),
]


@pytest.mark.parametrize(("lines", "first", "never"), CASES)
def test_family(tmp_path: Path, lines: list[str], first: str | None, never: list[str]) -> None:
    check_family(tmp_path, lines, first, never)


# (log lines, the line the first error is on (1-based) or None for no suspicious line): lines no
# signature matches, in logs no rule explains (tests/test_corpus.py's first-error-line check)
FIRST_LINES: list[tuple[list[str], int | None]] = [
    # CUDA.jl's capability warning (fq-10; CUDACore/lib/cudadrv/state.jl), both version forms
    (
        [
            "julia> CUDA.capability(CUDA.device())",
            "┌ Warning: Your NVIDIA B200 GPU (compute capability 10.0) is not fully supported by"
            " CUDA 12.8.0.",
            "│ Some functionality may be broken.",
        ],
        2,
    ),
    (
        [
            "julia> using CUDA",
            "┌ Warning: Your NVIDIA GeForce RTX 5090 GPU (compute capability 12.0) is not fully"
            " supported by CUDA 12.6.",
        ],
        2,
    ),
    (["┌ Error: Your Tesla K20m GPU (compute capability 3.5) is not supported by CUDA.jl."], 1),
    # (tune-l: NVRM's API mismatch and the open-module / legacy-branch lines now name classes,
    # driver-module-matches-libraries and driver-branch-drives-gpu: tests/test_driver_install_classes.py)
    # nvidia-smi's own verdict comes first when it is printed first
    (
        [
            "$ nvidia-smi",
            "No devices were found",
            "[   87.358035] NVRM: The NVIDIA GPU 0000:03:00.0 (PCI ID: 10de:1bb3)",
        ],
        2,
    ),
    # NVRM's ordinary lines are not failures
    (
        [
            "[    6.252567] NVRM: loading NVIDIA UNIX x86_64 Kernel Module  570.148.06",
            "[    6.860482] NVRM: GPU at 0000:01:00.0 has software scheduler ENABLED",
            "The NVIDIA GPU driver version is 570.148.06",
        ],
        None,
    ),
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
