"""Build (not run) one FlashInfer JIT module on a host without a GPU: the real ninja/nvcc/c++ path.

Adapted from shared/reference/toolchain-lab/fi_build.py. `import flashinfer` needs a GPU (module-level
torch.cuda calls), so an empty package object stands in for `flashinfer` and only `flashinfer.jit` is
imported. Usage (in a host): python - [act|quant|norm] < fi_build.py
Env: CUDA_HOME, FLASHINFER_CUDA_ARCH_LIST (12.0 in the sandbox scenarios), FLASHINFER_WORKSPACE_BASE.
"""

import importlib
import importlib.util
import sys
import time
import types

spec = importlib.util.find_spec("flashinfer")
pkg = types.ModuleType("flashinfer")
pkg.__path__ = list(spec.submodule_search_locations)
pkg.__spec__ = spec
sys.modules["flashinfer"] = pkg

which = sys.argv[1] if len(sys.argv) > 1 else "act"
t0 = time.time()
fj = importlib.import_module("flashinfer.jit")
cpp_ext = importlib.import_module("flashinfer.jit.cpp_ext")
print("cuda_home =", cpp_ext.get_cuda_path())
print("cuda_version =", cpp_ext.get_cuda_version())
gens = {
    "act": lambda: fj.gen_act_and_mul_module("silu"),
    # quantization.cuh includes <cub/cub.cuh>: it reaches CCCL's compiler-vs-CTK check
    "quant": lambda: importlib.import_module(
        "flashinfer.jit.quantization"
    ).gen_quantization_module(),
    "norm": lambda: importlib.import_module("flashinfer.jit.norm").gen_norm_module(),
}
js = gens[which]()
print("module =", js.name)
js.build(verbose=False)
print(f"BUILT {js.jit_library_path} in {time.time() - t0:.1f}s")
