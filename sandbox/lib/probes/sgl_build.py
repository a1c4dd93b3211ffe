"""Build and load SGLang's own JIT kernel (sglang 0.5.12 jit_kernel: load_jit -> tvm_ffi load_inline)
for SM120 on a host without a GPU. Adapted from shared/reference/toolchain-lab/sgl_build.py.
Usage (in a host): python - < sgl_build.py ; env: CUDA_HOME, TVM_FFI_CACHE_DIR.
"""

import os
import time

t0 = time.time()
from sglang.jit_kernel import utils as U  # noqa: E402
from sglang.jit_kernel.add_constant import _jit_add_constant_module  # noqa: E402

print("CUDA_HOME =", os.environ.get("CUDA_HOME"))
with U.override_jit_cuda_arch(12, 0, ""):  # no GPU: pretend SM120 (TVM_FFI_CUDA_ARCH_LIST=12.0)
    m = _jit_add_constant_module(7)
print(f"BUILT+LOADED {m} in {time.time() - t0:.1f}s")
