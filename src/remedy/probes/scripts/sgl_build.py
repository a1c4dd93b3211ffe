"""remedy sglang-jit-build (runs ON the host with the workload's Python and environment).

A REAL SGLang jit_kernel build: sglang.jit_kernel.add_constant -> load_jit ->
tvm_ffi.cpp.load_inline (SGLang 0.5.12, apache-tvm-ffi 0.1.9), ~10 s on 2 cores, into the
fresh TVM_FFI_CACHE_DIR the caller sets. It is the consumer that needs the toolkit's own CCCL
(every kernel includes cuda_fp16.h -> nv/target) and links -L$CUDA_HOME/lib64 -lcudart. The
module is dlopen-ed (no kernel launch, no GPU needed).

Usage: python sgl_build.py MAJOR MINOR [SUFFIX] -- the arch is forced with SGLang's own
override_jit_cuda_arch (without a GPU SGLang logs "Cannot detect CUDA architecture.").
Exit 0 + "REMEDY-RESULT {json}"; 1 with the traceback on stderr; 3 + "REMEDY-SKIP" when this
SGLang has no jit_kernel (not installed, or >= 0.5.16 where it moved to sglang/kernels/jit).
"""

import importlib.util
import json
import os
import sys
import time
import traceback

t0 = time.time()
major, minor = int(sys.argv[1]), int(sys.argv[2])
suffix = sys.argv[3] if len(sys.argv) > 3 else ""
res = {"arch": f"{major}.{minor}{suffix}", "CUDA_HOME": os.environ.get("CUDA_HOME")}

try:
    found = importlib.util.find_spec("sglang.jit_kernel.add_constant") is not None
except ModuleNotFoundError:
    found = False
if not found:
    print("REMEDY-SKIP sglang.jit_kernel.add_constant is not importable from " + sys.prefix)
    sys.exit(3)

stage = "import sglang.jit_kernel"
try:
    from sglang.jit_kernel import utils as U
    from sglang.jit_kernel.add_constant import _jit_add_constant_module

    stage = "build"
    with U.override_jit_cuda_arch(major, minor, suffix):
        m = _jit_add_constant_module(7)
    res["module"] = repr(m)
except BaseException as e:  # noqa: BLE001
    traceback.print_exc()
    sys.stderr.flush()
    res.update(stage=stage, error=f"{type(e).__name__}: {str(e)[-2000:]}")
    res["seconds"] = round(time.time() - t0, 3)
    print("REMEDY-RESULT " + json.dumps(res, default=str))
    sys.exit(1)
res["seconds"] = round(time.time() - t0, 3)
print("REMEDY-RESULT " + json.dumps(res, default=str))
