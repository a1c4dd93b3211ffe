"""remedy env-probe (runs ON the host with the workload's Python and environment).

FlashInfer decides its toolkit and its arch list when `flashinfer.jit` is imported: the
compilation context is built at import and its arch normalisation raises
"SM 12.x requires CUDA >= 12.9" when the nvcc it found is too old (flashinfer
compilation_context.py::_normalize_cuda_arch). This runs exactly that code in a fresh
process and reports what it chose, without compiling anything.

`import flashinfer` itself needs a GPU (module-level torch.cuda calls), so like the toolchain
lab's fi_build.py an empty package object stands in for the top-level package and only the
`flashinfer.jit` sub-package is imported. Exit 0 and one "REMEDY-RESULT {json}" line; exit 1
with the traceback on stderr when the gate (or anything before it) raises; exit 3 with
"REMEDY-SKIP <why>" when FlashInfer is not installed in this Python.
"""

import importlib.util
import json
import os
import sys
import time
import traceback
import types

t0 = time.time()
res = {"python": sys.executable, "prefix": sys.prefix}
for var in ("CUDA_HOME", "CUDA_PATH", "FLASHINFER_CUDA_ARCH_LIST", "FLASHINFER_NVCC"):
    res["env_" + var] = os.environ.get(var)

spec = importlib.util.find_spec("flashinfer")
if spec is None or not spec.submodule_search_locations:
    print("REMEDY-SKIP flashinfer is not installed in " + sys.prefix)
    sys.exit(3)
pkg = types.ModuleType("flashinfer")
pkg.__path__ = list(spec.submodule_search_locations)
pkg.__spec__ = spec
sys.modules["flashinfer"] = pkg

stage = "import flashinfer.jit"
try:
    import flashinfer.jit  # noqa: F401  (builds the compilation context: the arch gate)
    from flashinfer.jit import cpp_ext

    try:
        from importlib.metadata import version

        res["flashinfer_version"] = version("flashinfer-python")
    except Exception:  # noqa: BLE001
        res["flashinfer_version"] = None
    stage = "get_cuda_path"
    cuda_home = cpp_ext.get_cuda_path()
    res["cuda_home"] = cuda_home
    res["nvcc"] = os.environ.get("FLASHINFER_NVCC") or os.path.join(cuda_home, "bin", "nvcc")
    stage = "get_cuda_version"
    res["cuda_version"] = str(cpp_ext.get_cuda_version())
    stage = "compilation context"
    from flashinfer.compilation_context import CompilationContext

    ctx = CompilationContext()
    res["archs"] = sorted(f"{ma}.{mi}" for ma, mi in ctx.TARGET_CUDA_ARCHS)
    res["nvcc_arch_flags"] = ctx.get_nvcc_flags_list()
except BaseException as e:  # noqa: BLE001
    traceback.print_exc()
    sys.stderr.flush()
    res.update(stage=stage, error=f"{type(e).__name__}: {e}", seconds=round(time.time() - t0, 3))
    print("REMEDY-RESULT " + json.dumps(res, default=str))
    sys.exit(1)
res["seconds"] = round(time.time() - t0, 3)
print("REMEDY-RESULT " + json.dumps(res, default=str))
