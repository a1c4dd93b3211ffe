"""remedy torch-ext-build (runs ON the host with the workload's Python and environment).

A REAL torch.utils.cpp_extension.load_inline CUDA extension build (build + dlopen, no kernel
launch), into the fresh TORCH_EXTENSIONS_DIR the caller sets. ~75 s on 2 cores: torch's
headers dominate. torch computes CUDA_HOME once at import of cpp_extension; with a CPU-only
torch it is None whatever the environment says and every CUDA build fails with a misleading
"CUDA_HOME environment variable is not set", so that case is a skip, not a verdict.

Usage: python torch_ext_build.py [HEADER ...] (TORCH_CUDA_ARCH_LIST from the caller). With
HEADERs (the failing operation's includes, re-run by `remedy run`'s final verification), the
extension is a C++ translation unit that includes exactly those headers, compiled the way
cpp_extension compiles a CUDA extension's C++ (CUDA include dirs, torch's flags). Exit 0 +
"REMEDY-RESULT {json}"; 1 with the error on stderr; 3 + "REMEDY-SKIP" when torch is missing or
CPU-only.
"""

import importlib.util
import json
import os
import re
import sys
import time
import traceback

t0 = time.time()
if importlib.util.find_spec("torch") is None:
    print("REMEDY-SKIP torch is not installed in " + sys.prefix)
    sys.exit(3)
import torch  # noqa: E402

res = {"torch": torch.__version__, "torch_cuda": torch.version.cuda}
if torch.version.cuda is None:
    print(
        f"REMEDY-SKIP torch {torch.__version__} is CPU-only: cpp_extension cannot build CUDA code"
    )
    sys.exit(3)

from torch.utils import cpp_extension as ce  # noqa: E402

res["cuda_home_resolved"] = ce.CUDA_HOME
res["arch_list"] = os.environ.get("TORCH_CUDA_ARCH_LIST")
cuda_src = r"""
#include <torch/extension.h>
#include <cuda_fp16.h>
__global__ void remedy_probe_k(float* p) { p[threadIdx.x] += 1.f; }
void run(torch::Tensor t) { remedy_probe_k<<<1, t.numel()>>>(t.data_ptr<float>()); }
"""
headers = sys.argv[1:]
for h in headers:
    if not re.fullmatch(r"[A-Za-z0-9_+][A-Za-z0-9_.+/-]{0,199}", h) or ".." in h:
        print(f"REMEDY-RESULT {json.dumps({'error': f'not a header name: {h!r}'})}")
        sys.exit(2)
res["headers"] = headers
try:
    if headers:
        cpp = "#include <torch/extension.h>\n" + "".join(f"#include <{h}>\n" for h in headers)
        cpp += "int run() { return 0; }\n"
        ce.load_inline(
            "remedy_probe_ops",
            cpp_sources=cpp,
            functions=["run"],
            with_cuda=True,
            verbose=False,
            is_python_module=True,
        )
    else:
        ce.load_inline(
            "remedy_probe_ext",
            cpp_sources="void run(torch::Tensor t);",
            cuda_sources=cuda_src,
            functions=["run"],
            verbose=False,
            is_python_module=True,
        )
except BaseException as e:  # noqa: BLE001
    traceback.print_exc()
    sys.stderr.write(str(e)[-6000:] + "\n")
    sys.stderr.flush()
    res.update(error=f"{type(e).__name__}: {str(e)[-2000:]}")
    res["seconds"] = round(time.time() - t0, 3)
    print("REMEDY-RESULT " + json.dumps(res, default=str))
    sys.exit(1)
res["seconds"] = round(time.time() - t0, 3)
print("REMEDY-RESULT " + json.dumps(res, default=str))
