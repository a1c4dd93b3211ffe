"""remedy flashinfer-jit-build (runs ON the host with the workload's Python and environment).

A REAL FlashInfer JIT build of one small module (silu_and_mul: one generated .cu plus the
binding, ~6 s on 2 cores) through FlashInfer's own ninja/nvcc/c++ path, into the fresh
FLASHINFER_WORKSPACE_BASE the caller sets. It catches what only a real build does: the exact
nvcc flags, the vendored CCCL, and FlashInfer's link line (-L$CUDA_HOME/lib64 ... -lcudart
-lcuda). Nothing is loaded or run: no GPU is needed (the top-level `flashinfer` package calls
torch.cuda at import, so an empty package object stands in for it, as in the toolchain lab's
fi_build.py).

Usage: python fi_build.py [act|norm|quant]. Exit 0 + "REMEDY-RESULT {json}"; 1 with the
traceback (whose message carries ninja's output) on stderr; 3 + "REMEDY-SKIP" when FlashInfer
is not installed here.
"""

import importlib.util
import json
import os
import sys
import time
import traceback
import types

t0 = time.time()
which = sys.argv[1] if len(sys.argv) > 1 else "act"
res = {"module": which, "workspace": os.environ.get("FLASHINFER_WORKSPACE_BASE")}

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
    import flashinfer.jit as fj
    from flashinfer.jit import cpp_ext

    res["cuda_home"] = cpp_ext.get_cuda_path()
    stage = "generate"
    if which == "act":
        js = fj.gen_act_and_mul_module("silu")
    elif which == "norm":
        js = importlib.import_module("flashinfer.jit.norm").gen_norm_module()
    elif which == "quant":  # includes <cub/cub.cuh>: reaches CCCL's CTK check on 0.6.11
        js = importlib.import_module("flashinfer.jit.quantization").gen_quantization_module()
    else:
        raise SystemExit("unknown module " + which)
    res["name"] = js.name
    stage = "build"
    js.build(verbose=False)
    res["library"] = str(js.jit_library_path)
    res["exists"] = os.path.exists(str(js.jit_library_path))
except BaseException as e:  # noqa: BLE001
    traceback.print_exc()
    sys.stderr.flush()
    res.update(stage=stage, error=f"{type(e).__name__}: {str(e)[-2000:]}")
    res["seconds"] = round(time.time() - t0, 3)
    print("REMEDY-RESULT " + json.dumps(res, default=str))
    sys.exit(1)
res["seconds"] = round(time.time() - t0, 3)
print("REMEDY-RESULT " + json.dumps(res, default=str))
