"""One failure, every toolchain's wording (issue 17, wording-bm).

Each row is one line as a real tool prints it, the field remedy must read from it, and the class
log-only diagnosis must rank first (None: no class at all, the first error stays unexplained).
Rows of one family carry the same field value in every wording; where the class differs between
wordings, the row's comment says which upstream fact the wording adds (the tool that printed it
is evidence of its own). Every row cites where the wording comes from.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from family_table import rules_ranked

from remedy.evidence.fields import fields_of
from remedy.inputs import scan_logs

GCC = "gcc libcpp/files.cc open_file_failed: '%s: No such file or directory' after 'fatal error: '"
CLANG_H = "llvm/llvm-project clang/include/clang/Basic/DiagnosticLexKinds.td err_pp_file_not_found"
MSVC_H = "learn.microsoft.com/en-us/cpp/error-messages/compiler-errors-1/fatal-error-c1083"
EDG = "EDG front end (nvcc cudafe++, NVRTC): 'catastrophic error: cannot open source file'"
NVRTC = "NVRTC 13.0.88 recorded here (tests/fixtures/templates/cccl/nvrtc-*.log)"
GLIBC = "glibc elf/dl-load.c _dl_map_object: 'cannot open shared object file'"
CTYPES_W = "python/cpython Modules/_ctypes/callproc.c load_library: 'Could not find module'"
WIN126 = "pytorch/pytorch torch/__init__.py _load_dll_libraries: WinError 126 'Error loading'"
DYNLOAD_W = "python/cpython Python/dynload_win.c: 'DLL load failed while importing %s: %s'"
DYLD = "apple-oss-distributions/dyld: 'Library not loaded: <install name>'"
LIBLOADING = "nagisa/rust_libloading src/error.rs Error::DlOpen { desc } (dlerror text)"
JAVA = "openjdk/jdk System.loadLibrary -> UnsatisfiedLinkError with the dlerror text"
GNU_LD = "bminor/binutils-gdb ld/ldfile.c ldfile_open_file: 'cannot find -l%s'"
GOLD = "bminor/binutils-gdb gold/fileread.cc: 'cannot find -l%s' (recorded, binutils 2.40)"
LLD = "llvm/llvm-project lld/ELF/Driver.cpp addLibrary: 'unable to find library -l'"
LLD_LINK = "llvm/llvm-project lld/COFF/Driver.cpp: 'could not open '<path>': <errno text>'"
LD64 = "apple-oss-distributions/ld64 src/ld/Options.cpp findLibrary: 'library not found for -l%s'"
LNK1104 = "learn.microsoft.com/en-us/cpp/error-messages/tool-errors/linker-tools-error-lnk1104"
LNK1181 = "learn.microsoft.com/en-us/cpp/error-messages/tool-errors/linker-tools-error-lnk1181"
NVCC = "nvcc 13.0.88 recorded here: -arch=sm_999 / -gencode arch=compute_999"
PTXAS = "ptxas 13.0.88 recorded here: --gpu-name sm_999"
CLANG_A = "llvm/llvm-project DiagnosticDriverKinds.td err_drv_cuda_bad_gpu_arch"
LLVM = "llc 14.0.6 -mtriple=nvptx64-nvidia-cuda -mcpu=sm_120, recorded here"
NVRTC_A = "NVRTC nvrtcCompileProgram log: 'nvrtc: error: invalid value for --gpu-architecture'"

# (family, line, field, value, first class or None, source)
ROWS: list[tuple[str, str, str, str | None, str | None, str]] = [
    # 1. missing header: a core toolkit header is the toolkit's header set, in every wording
    # where the include path is the toolchain's (gcc, clang, MSVC; EDG with a toolkit includer)
    (
        "header",
        "csrc/ops.cu:3:10: fatal error: cuda_runtime.h: No such file or directory",
        "missing_header",
        "cuda_runtime.h",
        "needed-files-provided",
        GCC,
    ),
    (
        "header",
        "csrc/ops.cu:3:10: fatal error: 'cuda_runtime.h' file not found",
        "missing_header",
        "cuda_runtime.h",
        "needed-files-provided",
        CLANG_H,
    ),
    (
        "header",
        "csrc\\ops.cu(3): fatal error C1083: Cannot open include file: 'cuda_runtime.h': "
        "No such file or directory",
        "missing_header",
        "cuda_runtime.h",
        "needed-files-provided",
        MSVC_H,
    ),
    (
        "header",
        "csrc\\ops.cu(3): fatal error C1083: Datei (Include) kann nicht geöffnet werden: "
        '"cuda_runtime.h": No such file or directory',
        "missing_header",
        "cuda_runtime.h",
        "needed-files-provided",
        MSVC_H + " (de-DE)",
    ),
    # round 54's line: the toolkit's own header, named bare, includes its sibling
    (
        "header",
        'cuda_fp16.h(129): catastrophic error: cannot open source file "vector_types.h"',
        "missing_header",
        "vector_types.h",
        "needed-files-provided",
        EDG,
    ),
    (
        "header",
        "/usr/local/cuda/include/cuda_fp16.h(129): catastrophic error: cannot open source "
        'file "vector_types.h"',
        "missing_header",
        "vector_types.h",
        "needed-files-provided",
        EDG,
    ),
    # NVRTC with the JIT program's own source as includer: its -I list is the program's (tune-h)
    (
        "header",
        'kernel.cu(2): catastrophic error: cannot open source file "cuda_fp16.h"',
        "missing_header",
        "cuda_fp16.h",
        None,
        EDG,
    ),
    (
        "header",
        'kernel.cu(1): catastrophic error: could not open source file "cuda_fp16.h" '
        "(no directories in search list)",
        "missing_header",
        "cuda_fp16.h",
        None,
        NVRTC,
    ),
    # a CUDA library's header: its dev package, in every wording
    (
        "header",
        "csrc/ops.cu:5:10: fatal error: cublas_v2.h: No such file or directory",
        "missing_header",
        "cublas_v2.h",
        "toolkit-has-library-headers",
        GCC,
    ),
    (
        "header",
        "csrc/ops.cu:5:10: fatal error: 'cublas_v2.h' file not found",
        "missing_header",
        "cublas_v2.h",
        "toolkit-has-library-headers",
        CLANG_H,
    ),
    (
        "header",
        "csrc\\ops.cu(5): fatal error C1083: Cannot open include file: 'cublas_v2.h': "
        "No such file or directory",
        "missing_header",
        "cublas_v2.h",
        "toolkit-has-library-headers",
        MSVC_H,
    ),
    (
        "header",
        'csrc/ops.cu(5): catastrophic error: cannot open source file "cublas_v2.h"',
        "missing_header",
        "cublas_v2.h",
        "toolkit-has-library-headers",
        EDG,
    ),
    # Python.h: the interpreter's dev headers, in every wording
    (
        "header",
        "csrc/ops.cpp:3:10: fatal error: Python.h: No such file or directory",
        "missing_header",
        "Python.h",
        "python-headers-present",
        GCC,
    ),
    (
        "header",
        "csrc/ops.cpp:3:10: fatal error: 'Python.h' file not found",
        "missing_header",
        "Python.h",
        "python-headers-present",
        CLANG_H,
    ),
    (
        "header",
        "csrc\\ops.cpp(3): fatal error C1083: Cannot open include file: 'Python.h': "
        "No such file or directory",
        "missing_header",
        "Python.h",
        "python-headers-present",
        MSVC_H,
    ),
    # CMake's check_include_file is a configure probe whose 'not found' is an answer, not a failure
    (
        "header",
        "-- Looking for cuda_runtime.h - not found",
        "missing_header",
        None,
        None,
        'Kitware/CMake Modules/CheckIncludeFile.cmake: message(CHECK_FAIL "not found")',
    ),
    # 2. missing shared library at load: a CUDA library of one major, in every loader's words
    (
        "load",
        "python3: error while loading shared libraries: libcudart.so.12: cannot open shared "
        "object file: No such file or directory",
        "lib_name",
        "cudart",
        "runtime-libs-match-cuda-major",
        GLIBC,
    ),
    (
        "load",
        "OSError: libcudart.so.12: cannot open shared object file: No such file or directory",
        "lib_name",
        "cudart",
        "runtime-libs-match-cuda-major",
        GLIBC + " via ctypes.CDLL",
    ),
    (
        "load",
        "OSError: [WinError 126] The specified module could not be found. Error loading "
        '"C:\\Python311\\Lib\\site-packages\\torch\\lib\\cudart64_12.dll" or one of its '
        "dependencies.",
        "lib_name",
        "cudart",
        "runtime-libs-match-cuda-major",
        WIN126,
    ),
    (
        "load",
        "FileNotFoundError: Could not find module 'C:\\Program Files\\NVIDIA GPU Computing "
        "Toolkit\\CUDA\\v12.4\\bin\\cudart64_12.dll' (or one of its dependencies). Try using the "
        "full path with constructor syntax.",
        "lib_name",
        "cudart",
        None,
        CTYPES_W,
    ),
    (
        "load",
        "FileNotFoundError: Could not find module 'cublasLt64_12.dll' (or one of its "
        "dependencies). Try using the full path with constructor syntax.",
        "lib_name",
        "cublasLt",
        "runtime-libs-match-cuda-major",
        CTYPES_W,
    ),
    (
        "load",
        'called `Result::unwrap()` on an `Err` value: DlOpen { desc: "libcudart.so.12: cannot '
        'open shared object file: No such file or directory" }',
        "lib_name",
        "cudart",
        "runtime-libs-match-cuda-major",
        LIBLOADING,
    ),
    (
        "load",
        'Exception in thread "main" java.lang.UnsatisfiedLinkError: /opt/lib/libjcuda.so: '
        "libcudart.so.12: cannot open shared object file: No such file or directory",
        "lib_name",
        "cudart",
        "runtime-libs-match-cuda-major",
        JAVA,
    ),
    # a full path (above) is the program's choice of directory (corpus unknown/gcx-3): no class
    # no library named: the module that failed is all a Windows import says
    (
        "load",
        "ImportError: DLL load failed while importing _C: The specified module could not be found.",
        "module",
        "_C",
        None,
        DYNLOAD_W,
    ),
    # dyld: CUDA on macOS ended with 10.2 and no provider table knows a dylib: field, no class
    (
        "load",
        "dyld[4127]: Library not loaded: @rpath/libcudart.12.dylib",
        "lib_name",
        "cudart",
        None,
        DYLD,
    ),
    (
        "load",
        "dyld: Library not loaded: @rpath/libcudart.8.0.dylib",
        "lib_name",
        "cudart",
        None,
        DYLD,
    ),
    # the driver's library: which of a container, a driver install or a stub is at fault is
    # not in the line
    (
        "load",
        "RuntimeError: CUDA driver error: libcuda.so.1: cannot open shared object file: No "
        "such file or directory",
        "lib_name",
        "cuda",
        None,
        GLIBC,
    ),
    # 3. missing library at link: -lcudart is the toolkit's link layout, in every linker's words
    (
        "link",
        "/usr/bin/ld: cannot find -lcudart: No such file or directory",
        "missing_lib",
        "cudart",
        "toolkit-links-cudart",
        GNU_LD,
    ),
    (
        "link",
        "/usr/bin/ld.gold: error: cannot find -lcudart",
        "missing_lib",
        "cudart",
        "toolkit-links-cudart",
        GOLD,
    ),
    (
        "link",
        "ld.lld: error: unable to find library -lcudart",
        "missing_lib",
        "cudart",
        "toolkit-links-cudart",
        LLD,
    ),
    (
        "link",
        "ld: library not found for -lcudart",
        "missing_lib",
        "cudart",
        "toolkit-links-cudart",
        LD64,
    ),
    (
        "link",
        "LINK : fatal error LNK1104: cannot open file 'cudart.lib'",
        "missing_lib",
        "cudart",
        "toolkit-links-cudart",
        LNK1104,
    ),
    (
        "link",
        "LINK : fatal error LNK1181: cannot open input file 'cudart.lib'",
        "missing_lib",
        "cudart",
        "toolkit-links-cudart",
        LNK1181,
    ),
    (
        "link",
        "lld-link: error: could not open 'cudart.lib': no such file or directory",
        "missing_lib",
        "cudart",
        "toolkit-links-cudart",
        LLD_LINK,
    ),
    # -lcublas: a library the line alone cannot place, named by no wording
    (
        "link",
        "/usr/bin/ld: cannot find -lcublas: No such file or directory",
        "missing_lib",
        "cublas",
        None,
        GNU_LD,
    ),
    ("link", "ld.lld: error: unable to find library -lcublas", "missing_lib", "cublas", None, LLD),
    ("link", "ld: library not found for -lcublas", "missing_lib", "cublas", None, LD64),
    (
        "link",
        "LINK : fatal error LNK1104: cannot open file 'cublas.lib'",
        "missing_lib",
        "cublas",
        None,
        LNK1104,
    ),
    (
        "link",
        "lld-link: error: could not open 'cublas.lib': no such file or directory",
        "missing_lib",
        "cublas",
        None,
        LLD_LINK,
    ),
    # nvlink opens a host archive it was handed (librt.a, libpthread.a): the file is there, the
    # device linker cannot use it, so it is no missing library (sxyu/volrend#25, gnina/gnina#140)
    (
        "link",
        "nvlink fatal   : Could not open input file '/usr/lib/x86_64-linux-gnu/librt.a'",
        "missing_lib",
        None,
        None,
        "nvlink (closed source); sxyu/volrend#25",
    ),
    # 4. unknown GPU architecture: the arch field in every wording; the class is the tool's
    (
        "arch",
        "nvcc fatal   : Unsupported gpu architecture 'compute_120'",
        "arch_cc",
        "12.0",
        "toolkit-knows-target-archs",
        NVCC,
    ),
    # -arch=sm_XY (one target, usually the device's own) rather than a -gencode list
    (
        "arch",
        "nvcc fatal   : Value 'sm_120' is not defined for option 'gpu-architecture'",
        "arch_cc",
        "12.0",
        "arch-supported-by-toolkit",
        NVCC,
    ),
    # a bare ptxas refusing the SM is most often Triton's (nvcc checks the arch before ptxas)
    (
        "arch",
        "ptxas fatal   : Value 'sm_120' is not defined for option 'gpu-name'",
        "arch_cc",
        "12.0",
        "triton-ptxas-knows-arch",
        PTXAS,
    ),
    (
        "arch",
        "'sm_120' is not a recognized processor for this target (ignoring processor)",
        "arch_cc",
        "12.0",
        "triton-knows-gpu",
        LLVM,
    ),
    # clang's own arch table: the compiler is older than the GPU, a toolkit change would not help
    (
        "arch",
        "clang: error: unsupported CUDA gpu architecture: sm_120",
        "arch_cc",
        "12.0",
        None,
        CLANG_A,
    ),
    (
        "arch",
        "clang++: error: unsupported CUDA gpu architecture: sm_100a",
        "arch_cc",
        "10.0",
        None,
        CLANG_A,
    ),
    # NVRTC's log names no value: no field, the toolkit line's class
    (
        "arch",
        "nvrtc: error: invalid value for --gpu-architecture (-arch)",
        "arch_cc",
        None,
        "arch-supported-by-toolkit",
        NVRTC_A,
    ),
]


def _fields(tmp_path: Path, line: str) -> list[dict[str, str]]:
    log = tmp_path / "f.log"
    log.write_text(line + "\n")
    symptoms, _, _ = scan_logs([log])
    return [fields_of(s) for s in symptoms]


@pytest.mark.parametrize(
    "family,line,field,value,first,source",
    ROWS,
    ids=[f"{r[0]}-{i}" for i, r in enumerate(ROWS)],
)
def test_wording_gives_field_and_class(
    tmp_path: Path, family: str, line: str, field: str, value: str | None, first, source: str
):
    assert source
    got = {f.get(field) for f in _fields(tmp_path, line)} - {None}
    if value is None:
        assert not got, got
    else:
        assert value in got, got
    ranked = rules_ranked(tmp_path, [line])
    if first is None:
        assert ranked == [], ranked
    else:
        assert ranked[:1] == [first], ranked


def test_each_family_reads_one_value_from_several_tools():
    """The table is what it claims: a family's wordings share a field value across tools."""
    by_family: dict[tuple[str, str, str], int] = {}
    for family, _, field, value, _, _source in ROWS:
        if value is not None:
            key = (family, field, value)
            by_family[key] = by_family.get(key, 0) + 1
    assert all(
        by_family.get(k, 0) >= 3
        for k in (
            ("header", "missing_header", "cuda_runtime.h"),
            ("load", "lib_name", "cudart"),
            ("link", "missing_lib", "cudart"),
            ("arch", "arch_cc", "12.0"),
        )
    ), by_family
