"""Class 3: the consumers' own JIT code, run by a probe as root, must not run another user's
compiler named by the workload's environment (redteam-21).

The real builds the probes re-run (torch 2.14.1's cpp_extension, tvm-ffi 0.1.9's build_ninja
under SGLang's jit_kernel, FlashInfer 0.6.11.post1's cpp_ext) take their compiler from the
environment: `CXX` (torch also runs it for its ABI check), `-ccbin $CC` for nvcc,
`PYTORCH_NVCC`, `FLASHINFER_NVCC`, `FLASHINFER_*_LAUNCHER`; FlashInfer dlopens
`$CUDA_LIB_PATH/libcudart.so.12` at import. A unit's Environment=/EnvironmentFile= (or the
login shell the facts recorded) naming uid 65534's program made root run it: every probe
below left the canary before `trust.COMMAND_VARS`. The control (root's own wrapper) shows the
canary does appear, so the owner check is what stops it. The last test pins which variables
the installed consumers read, so a new one is noticed.
"""

from __future__ import annotations

import asyncio
import hashlib
import os
import re
import subprocess
from pathlib import Path

import pytest

from remedy.model import Facts, Gpu, PythonEnv
from remedy.probes import run_probe
from remedy.transport.local import LocalTransport
from remedy.trust import CODE_DIR_VARS, CODE_FILE_VARS, COMMAND_VARS, FLAG_VARS, env_code_paths

NOBODY = 65534
SANDBOX = Path(__file__).resolve().parents[2] / "sandbox"
needs_root = pytest.mark.skipif(os.geteuid() != 0, reason="chown to another user needs root")


def heavy_venv() -> Path | None:
    """The sandbox's heavy environment (torch cu130, FlashInfer, tvm-ffi, SGLang), if built
    (the path sandbox/sbx computes, as tests/test_probes_real.py does)."""
    lock = SANDBOX / "requirements" / "heavy.lock"
    if not lock.is_file():
        return None
    h = hashlib.sha256(lock.read_bytes() + b"\0").hexdigest()[:12]
    v = SANDBOX / "cache" / f"venv-{h}"
    return v if (v / "bin" / "python").exists() else None


@pytest.fixture
def venv() -> Path:
    v = heavy_venv()
    if v is None:
        pytest.skip("the sandbox's heavy environment is not built (scripts/setup-sandbox.sh)")
    return v


@pytest.fixture
def area(tmp_path: Path) -> Path:
    tmp_path.chmod(0o755)  # a trusted parent: only what the test makes below it varies
    return tmp_path


def toolkit() -> str:
    for p in ("/usr/local/cuda", "/usr/local/cuda-13.0"):
        if os.path.exists(f"{p}/bin/nvcc"):
            return p
    pytest.skip("no CUDA toolkit in /usr/local/cuda: the builds cannot reach the compiler")


def own(path: Path, uid: int) -> None:
    for dp, _dns, fns in os.walk(path):
        os.chown(dp, uid, uid)
        for n in fns:
            os.chown(os.path.join(dp, n), uid, uid)


def plant(area: Path, var: str, owner: int, *, then: str = "run") -> str:
    """The value of `var` naming code uid `owner` wrote, which appends to area/canary when it
    runs (or is loaded); a compiler then runs the real one, or fails (`then="fail"`)."""
    canary = area / "canary"
    d = area / f"svc-{var}"
    if var == "CUDA_LIB_PATH":
        d.mkdir()
        (d / "c.c").write_text(
            "#include <stdio.h>\n__attribute__((constructor)) static void f(void) {"
            f' FILE *c = fopen("{canary}", "a"); if (c) {{ fputs("cudart\\n", c); fclose(c); }} }}\n'
        )
        cmd = ["cc", "-shared", "-fPIC", "-o", str(d / "libcudart.so.12"), str(d / "c.c")]
        subprocess.run(cmd, check=True)
        own(d, owner)
        return str(d)
    if var == "CUDA_HOME":  # a toolkit whose nvcc notes it ran, then fails
        (d / "bin").mkdir(parents=True)
        (d / "bin" / "nvcc").write_text(
            f'#!/bin/sh\necho "nvcc uid $(id -u)" >> {canary}\nexit 1\n'
        )
        (d / "bin" / "nvcc").chmod(0o755)
        own(d, owner)
        return str(d)
    d.mkdir()
    real = {"CC": "/usr/bin/gcc", "CXX": "/usr/bin/c++", "FLASHINFER_NVCC": "nvcc"}[var]
    tail = f'exec {real} "$@"' if then == "run" else "exit 1"
    (d / "tool").write_text(f'#!/bin/sh\necho "{var} uid $(id -u)" >> {canary}\n{tail}\n')
    (d / "tool").chmod(0o755)
    own(d, owner)
    return str(d / "tool")


def probe(name: str, venv: Path, env: dict[str, str], timeout: int = 120):
    """A real JIT probe of this machine's toolkit with the heavy venv as the workload's Python,
    in the login environment env (as facts recorded it; no unit: the probe runs as root)."""
    prefix = toolkit()
    facts = Facts(
        gpus=[Gpu(name="g", compute_cap="12.0")],
        pythons=[PythonEnv(path=str(venv), torch_cuda="13.0")],
        shell_env={"PATH": f"{venv}/bin:/usr/bin:/bin", "CUDA_HOME": prefix, **env},
    )
    return asyncio.run(run_probe(name, LocalTransport(), facts, timeout=timeout))


ATTACKS = [
    ("torch-ext-build", "CXX"),  # get_cxx_compiler(): the ABI check, then ninja's cxx
    ("flashinfer-jit-build", "CC"),  # build_cuda_cflags: -ccbin $CC, run by nvcc
    ("sglang-jit-build", "CXX"),  # tvm-ffi build_ninja: cxx = $CXX (the link)
    ("flashinfer-jit-build", "CUDA_LIB_PATH"),  # flashinfer.jit: CDLL(libcudart.so.12)
    ("flashinfer-jit-build", "CUDA_HOME"),  # get_cuda_path(): $CUDA_HOME/bin/nvcc
]


@needs_root
@pytest.mark.slow
@pytest.mark.parametrize(("name", "var"), ATTACKS)
def test_a_compiler_another_user_owns_is_not_run_by_the_real_jit_build(
    area: Path, venv: Path, name: str, var: str
):
    value = plant(area, var, NOBODY)
    res = probe(name, venv, {var: value})
    assert not (area / "canary").exists(), f"{name} as root ran {var}'s program"
    assert not res.ok and res.skipped, res.detail
    assert res.skipped.startswith(f"not executed: {var} holds {area}/svc-{var}"), res.skipped
    assert "owned by nobody (uid 65534)" in res.skipped


@needs_root
@pytest.mark.slow
def test_control_roots_own_compiler_and_cudart_are_run(area: Path, venv: Path):
    """The same attack owned by root: FlashInfer loads the library at import and nvcc runs
    `-ccbin $CC` (which then fails, so the build stops there)."""
    env = {
        "CC": plant(area, "CC", 0, then="fail"),
        "CUDA_LIB_PATH": plant(area, "CUDA_LIB_PATH", 0),
    }
    res = probe("flashinfer-jit-build", venv, env)
    assert not res.skipped, res.detail
    ran = (area / "canary").read_text()
    assert "cudart" in ran and "CC uid 0" in ran, ran


def test_the_forms_of_a_compiler_command_variable():
    def why(**env: str) -> str | None:
        return env_code_paths(env)[1]

    assert env_code_paths({"CXX": "/opt/gcc/bin/g++"}) == ([("CXX", "/opt/gcc/bin/g++")], None)
    assert env_code_paths({"CXX": "g++", "CC": "  "}) == ([], None)  # found on the checked PATH
    pairs, w = env_code_paths({"FLASHINFER_NVCC_LAUNCHER": "ccache /opt/cc/bin/nvcc -B/opt/b"})
    assert w is None and pairs == [
        ("FLASHINFER_NVCC_LAUNCHER", "/opt/cc/bin/nvcc"),
        ("FLASHINFER_NVCC_LAUNCHER", "/opt/b"),
    ]
    # tvm-ffi and FlashInfer put the value in a ninja file unquoted: /bin/sh reads it
    for v in ("c++;touch /x", "c++ `id`", "c++ $(id)", "$cuda_home/bin/nvcc", "c++\nid", "'c++'"):
        assert (why(CXX=v) or "").startswith("not executed: CXX holds shell syntax"), v
    assert why(CC="bin/gcc") == "not executed: CC holds a relative path 'bin/gcc'"
    assert "-wrapper" in (why(PYTORCH_NVCC="nvcc -Xcompiler -wrapper,/x") or "")
    assert "'-o'" in (why(CXX="g++ -o /etc/x") or "")
    assert env_code_paths({"CUDA_LIB_PATH": "/usr/lib/x:/opt/l"})[0] == [
        ("CUDA_LIB_PATH", "/usr/lib/x"),
        ("CUDA_LIB_PATH", "/opt/l"),
    ]


# What the installed consumers read from the environment, each judged by remedy.trust or
# named here as harmless (an arch list, a job count, a switch; the caches a probe sets to a
# fresh private dir itself).
# A new name fails this test until it is put on one side.
CONSUMER_FILES = (
    "torch/utils/cpp_extension.py",
    "tvm_ffi/cpp/extension.py",
    "flashinfer/jit/*.py",
    "sglang/jit_kernel/utils.py",
)
HARMLESS = {
    "ROCM_HOME", "ROCM_PATH", "WINDOWS_CUDA_HOME", "MAX_JOBS",
    "TORCH_CUDA_ARCH_LIST", "TORCH_XPU_ARCH_LIST", "PYTORCH_ROCM_ARCH", "TVM_FFI_CUDA_ARCH_LIST",
    "TVM_FFI_ROCM_ARCH_LIST", "TVM_FFI_GPU_BACKEND", "TORCH_NO_COMPILER_WRAPPER",
    "TORCH_DONT_CHECK_COMPILER_ABI", "TORCH_EXTENSION_SKIP_NVCC_GEN_DEPENDENCIES",
    "TORCH_EXTENSIONS_DIR", "TVM_FFI_CACHE_DIR", "FLASHINFER_WORKSPACE_BASE",
    "FLASHINFER_LOGGING_LEVEL", "FLASHINFER_DISABLE_JIT", "FLASHINFER_JIT_VERBOSE",
    "FLASHINFER_JIT_DEBUG", "FLASHINFER_JIT_LINEINFO", "FLASHINFER_NVCC_THREADS", "FLASHINFER_DISABLE_VERSION_CHECK",
    "VCToolsInstallDir", "VSCMD_ARG_TGT_ARCH", "DISTUTILS_USE_SDK", "ProgramFiles(x86)", "PATH",
}  # fmt: skip
# read, not judged, and why: cubins are GPU code (loaded by the driver, not run on the host);
# the repository URL is fetched only with FlashInfer's downloader, which no probe calls
NOT_HOST_CODE = {"FLASHINFER_CUBIN_DIR", "FLASHINFER_CUBINS_REPOSITORY",
                 "FLASHINFER_CUBIN_CHECKSUM_DISABLED", "FLASHINFER_NO_DOWNLOAD"}  # fmt: skip
_READ = re.compile(r"""(?:environ\.get|getenv|environ\[|in os\.environ)\(?\s*["']([^"']+)["']""")
_READ2 = re.compile(
    r"""(?:["']([A-Z][A-Z0-9_]+)["']\s+in\s+os\.environ"""
    # FlashInfer's parse_env_flags("NAME") and `env_var_name = "NAME"`
    r"""|(?:parse_env_flags\(|env_var_name\s*=\s*)\s*["']([A-Z][A-Z0-9_]+)["'])"""
)


def test_the_variables_the_jit_consumers_read_are_all_classified(venv: Path):
    site = next((venv / "lib").glob("python3.*/site-packages"))
    read: dict[str, str] = {}
    for pat in CONSUMER_FILES:
        for f in sorted(site.glob(pat)):
            text = f.read_text(errors="replace")
            for m in [*_READ.finditer(text), *_READ2.finditer(text)]:
                name = next(g for g in m.groups() if g)
                read.setdefault(name, str(f.relative_to(site)))
    judged = {*CODE_DIR_VARS, *CODE_FILE_VARS, *COMMAND_VARS, *FLAG_VARS}
    # parse_env_flags(NAME) in flashinfer/jit/cpp_ext.py reads these by a variable
    read.pop("env_var_name", None)
    want = {
        "CXX",
        "CC",
        "PYTORCH_NVCC",
        "FLASHINFER_NVCC",
        "CUDA_LIB_PATH",
        "FLASHINFER_EXTRA_CFLAGS",
    }
    assert want <= set(read), sorted(read)
    unknown = {v: f for v, f in read.items() if v not in judged | HARMLESS | NOT_HOST_CODE}
    assert not unknown, f"classify these (a program, a code dir, or harmless): {unknown}"
    assert "CUDAHOSTCXX" not in read  # CMake's: no consumer here reads it


@needs_root
def test_a_device_named_as_a_toolkit_is_judged_by_its_directory(area: Path):
    """`CUDA_HOME=/dev/null` (seed 002's workaround) holds no code: the probe runs and shows
    the real failure (tests/test_probes_real.py's F6); a missing toolkit in a directory another
    user owns is refused, as any missing path is."""
    from remedy.trust import untrusted_env

    t = LocalTransport("local")
    assert asyncio.run(untrusted_env(t, {"CUDA_HOME": "/dev/null"})) is None
    (area / "svc").mkdir()
    os.chown(area / "svc", NOBODY, NOBODY)
    why = asyncio.run(untrusted_env(t, {"CUDA_PATH": f"{area}/svc/cuda"}))
    assert why == f"not executed: CUDA_PATH holds {area}/svc owned by nobody (uid 65534)", why
