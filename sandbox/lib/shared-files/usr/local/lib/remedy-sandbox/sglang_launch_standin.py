"""STAND-IN for `python -m sglang.launch_server` (remedy sandbox, see sandbox/STAND-INS.md).

The sandbox has no GPU, so a real SGLang launch cannot run. This script performs, for real and in
the order a launch reaches them, the steps of a launch that fail in the seeds:
  1. import FlashInfer's JIT package: its compilation context autodetects the GPU and runs the CUDA
     version gate ("SM 12.x requires CUDA >= 12.9" when the nvcc it finds says 12.8; FlashInfer
     logs it and is left with no target architecture);
  2. build and load SGLang's own JIT kernel (sglang.jit_kernel add_constant: load_jit -> load_inline),
     which a real launch builds before FlashInfer's first JIT module (seed 002's traceback);
  3. build a FlashInfer JIT module (silu_and_mul) with the real ninja/nvcc/c++.
  Exception: when the nvcc SGLang would use is the nvcc 12.8 STAND-IN (it cannot compile; on the seed
  host the real 12.8 compiled SGLang's kernel), step 2 runs after step 3, so FlashInfer's real failure
  is the one reported, as on the seed host.
Then it prints SGLang's readiness line and serves GET /health until stopped. Any failure propagates
as a real traceback (exit 1), so journalctl -u shows what the real code raises.
GPU stand-in, in this process only: torch.cuda reports the GPU that the nvidia-smi stand-in
replays (device_count 1, its compute capability and name), so FlashInfer's and SGLang's own
device autodetection runs as on the seed host. `import flashinfer` itself would also touch the
device (module-level kernels), hence the package stub that imports only flashinfer.jit.
"""

import argparse
import http.server
import importlib
import importlib.util
import os
import shutil
import subprocess
import sys
import time
import types


def log(msg):
    print(f"[{time.strftime('%Y-%m-%d %H:%M:%S')}] {msg}", flush=True)


def fake_gpu():
    """torch.cuda as the seed host's GPU, from the nvidia-smi stand-in (this process only)."""
    import torch

    out = subprocess.run(
        # by absolute path (sbx puts the GPU stand-in there): the GPU stand-in is not part of the
        # chain under test, and service-path-literal breaks the unit's PATH on purpose
        ["/usr/bin/nvidia-smi", "--query-gpu=name,compute_cap", "--format=csv,noheader"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    name, cap = (x.strip() for x in out.splitlines()[0].rsplit(",", 1))
    major, minor = (int(x) for x in cap.split("."))
    torch.cuda.is_available = lambda: True
    torch.cuda.device_count = lambda: 1
    torch.cuda.current_device = lambda: 0
    torch.cuda.get_device_capability = lambda device=None: (major, minor)
    torch.cuda.get_device_name = lambda device=None: name
    log(f"GPU stand-in: {name}, compute capability {major}.{minor}")


def nvcc_is_standin():
    """Is the nvcc that SGLang/tvm-ffi would use (CUDA_HOME, CUDA_PATH, PATH) the 12.8 stand-in?"""
    home = os.environ.get("CUDA_HOME") or os.environ.get("CUDA_PATH")
    nvcc = os.path.join(home, "bin", "nvcc") if home else shutil.which("nvcc")
    try:
        with open(nvcc or "", "rb") as f:
            return b"STAND-IN for nvcc" in f.read(4096)
    except OSError:
        return False


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--host", default="127.0.0.1")
    ap.add_argument("--port", type=int, default=30000)
    args, rest = ap.parse_known_args()
    log(f"remedy sandbox STAND-IN for sglang.launch_server (args: {' '.join(sys.argv[1:])})")
    t0 = time.time()
    fake_gpu()
    spec = importlib.util.find_spec("flashinfer")
    pkg = types.ModuleType("flashinfer")
    pkg.__path__ = list(spec.submodule_search_locations)
    pkg.__spec__ = spec
    sys.modules["flashinfer"] = pkg
    fj = importlib.import_module("flashinfer.jit")
    cpp_ext = importlib.import_module("flashinfer.jit.cpp_ext")
    log(f"flashinfer cuda_home={cpp_ext.get_cuda_path()}")

    def flashinfer_build():
        fj.gen_act_and_mul_module("silu").build_and_load()
        log(f"flashinfer JIT module silu_and_mul ready ({time.time() - t0:.1f}s)")

    def sglang_build():
        from sglang.jit_kernel.add_constant import _jit_add_constant_module

        _jit_add_constant_module(7)
        log(f"sglang jit_kernel add_constant ready ({time.time() - t0:.1f}s)")

    if nvcc_is_standin():
        log("SGLang's nvcc is the nvcc 12.8 stand-in: building FlashInfer's module first")
        flashinfer_build()
        sglang_build()
    else:
        sglang_build()
        flashinfer_build()

    class Health(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            ok = self.path in ("/health", "/health_generate")
            self.send_response(200 if ok else 404)
            self.end_headers()

        def log_message(self, *a):
            pass

    srv = http.server.ThreadingHTTPServer((args.host, args.port), Health)
    log("The server is fired up and ready to roll!")
    srv.serve_forever()


if __name__ == "__main__":
    main()
