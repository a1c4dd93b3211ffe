"""remedy GPU probes (run ON the host, with the workload's Python and environment).

Modes (one per process, so a poisoned CUDA context never leaks into the next probe):
  driver   the driver API directly (ctypes libcuda.so.1): cuInit, every device's name and
           compute capability, a context created and destroyed on device 0. No torch needed.
  jit-run  FlashInfer's real JIT build of silu_and_mul in the fresh FLASHINFER_WORKSPACE_BASE
           the caller sets, then a launch on the GPU compared with torch: catches
           "no kernel image is available" (a wrong arch list builds fine and fails here).
  graph    the same op captured in a torch.cuda.CUDAGraph after warm-up on a side stream,
           replayed on new input and compared (what SGLang's capture does to every op).
  triton   one Triton kernel compiled for this GPU (Triton's own ptxas) and run; with
           REMEDY_TRITON_CC (the GPU's compute capability, 120) and no usable driver: compiled
           for that target only (LLVM + ptxas, what fails when Triton's ptxas is too old),
           nothing launched, and the result says so.

Before any mode: no libcuda.so.1, or CUDA_ERROR_NO_DEVICE, is "REMEDY-SKIP" (exit 3): the host
has no usable GPU here (e.g. a sandbox host whose nvidia-smi is a stand-in). Any other driver
error is a failure (exit 1), reported with its CUDA error name. Success: exit 0 and one
"REMEDY-RESULT {json}" line.
"""

from __future__ import annotations

import contextlib
import ctypes
import json
import os
import sys
import time
import traceback
from typing import Any, NoReturn

T0 = time.time()
MODE = sys.argv[1]
RES: dict = {"mode": MODE}


def done(code: int, **kw: Any) -> NoReturn:
    RES.update(kw)
    RES["seconds"] = round(time.time() - T0, 3)
    print("REMEDY-RESULT " + json.dumps(RES, default=str))
    sys.stdout.flush()
    sys.exit(code)


def cu_error(lib: ctypes.CDLL, rc: int) -> str:
    name = ctypes.c_char_p()
    with contextlib.suppress(Exception):
        lib.cuGetErrorName(rc, ctypes.byref(name))
    return name.value.decode() if name.value else f"CUresult {rc}"


def check_driver(create_context: bool) -> None:
    try:
        lib = ctypes.CDLL("libcuda.so.1")
    except OSError as e:
        print(f"REMEDY-SKIP needs a GPU: libcuda.so.1 cannot be loaded ({e})")
        sys.exit(3)
    rc = lib.cuInit(0)
    if rc == 100:  # CUDA_ERROR_NO_DEVICE
        print("REMEDY-SKIP needs a GPU: the driver reports no CUDA device (CUDA_ERROR_NO_DEVICE)")
        sys.exit(3)
    if rc != 0:
        sys.stderr.write(f"cuInit failed: {cu_error(lib, rc)}\n")
        done(1, error="cuInit: " + cu_error(lib, rc))
    ver = ctypes.c_int()
    lib.cuDriverGetVersion(ctypes.byref(ver))
    count = ctypes.c_int()
    lib.cuDeviceGetCount(ctypes.byref(count))
    devices = []
    for i in range(count.value):
        dev = ctypes.c_int()
        lib.cuDeviceGet(ctypes.byref(dev), i)
        buf = ctypes.create_string_buffer(256)
        lib.cuDeviceGetName(buf, 256, dev)
        ma, mi = ctypes.c_int(), ctypes.c_int()
        lib.cuDeviceGetAttribute(ctypes.byref(ma), 75, dev)  # COMPUTE_CAPABILITY_MAJOR
        lib.cuDeviceGetAttribute(ctypes.byref(mi), 76, dev)  # COMPUTE_CAPABILITY_MINOR
        devices.append({"name": buf.value.decode(), "compute_cap": f"{ma.value}.{mi.value}"})
    RES.update(driver_cuda=ver.value, devices=devices)
    if count.value == 0:
        print("REMEDY-SKIP needs a GPU: the driver reports 0 devices")
        sys.exit(3)
    if create_context:
        dev = ctypes.c_int()
        lib.cuDeviceGet(ctypes.byref(dev), 0)
        ctx = ctypes.c_void_p()
        try:
            rc = lib.cuCtxCreate_v2(ctypes.byref(ctx), 0, dev)
        except AttributeError:
            rc = lib.cuCtxCreate(ctypes.byref(ctx), 0, dev)
        if rc != 0:
            sys.stderr.write(f"cuCtxCreate failed: {cu_error(lib, rc)}\n")
            done(1, error="cuCtxCreate: " + cu_error(lib, rc))
        lib.cuCtxDestroy_v2(ctx)
        RES["context"] = "created on device 0"


def silu_ref(x: Any) -> Any:
    import torch

    d = x.shape[-1] // 2
    return (torch.nn.functional.silu(x[:, :d].float()) * x[:, d:].float()).to(x.dtype)


def mode_jit_run() -> None:
    import flashinfer
    import torch

    RES["flashinfer"] = getattr(flashinfer, "__version__", None)
    x = torch.randn(16, 2 * 1024, device="cuda", dtype=torch.bfloat16)
    t = time.time()
    y = flashinfer.activation.silu_and_mul(x)
    torch.cuda.synchronize()
    RES["first_call_s"] = round(time.time() - t, 3)
    err = (y.float() - silu_ref(x).float()).abs().max().item()
    RES["max_abs_err"] = err
    if not err < 0.05:
        done(1, error=f"silu_and_mul differs from torch by {err}")


def mode_graph() -> None:
    import flashinfer
    import torch

    x = torch.randn(16, 2 * 1024, device="cuda", dtype=torch.bfloat16)
    out = torch.empty(16, 1024, device="cuda", dtype=torch.bfloat16)
    st = torch.cuda.Stream()
    st.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(st):
        for _ in range(3):
            flashinfer.activation.silu_and_mul(x, out=out)
    torch.cuda.current_stream().wait_stream(st)
    torch.cuda.synchronize()
    g = torch.cuda.CUDAGraph()
    t = time.time()
    with torch.cuda.graph(g):
        flashinfer.activation.silu_and_mul(x, out=out)
    torch.cuda.synchronize()
    RES["capture_s"] = round(time.time() - t, 4)
    x.copy_(torch.randn_like(x))
    g.replay()
    torch.cuda.synchronize()
    err = (out.float() - silu_ref(x).float()).abs().max().item()
    RES["replay_max_abs_err"] = err
    if not err < 0.05:
        done(1, error=f"graph replay differs from torch by {err}")


def _add_kernel() -> Any:
    """The one Triton kernel both Triton modes compile (imported here: triton is optional)."""
    import triton
    import triton.language as tl

    @triton.jit
    def add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):  # noqa: ANN001 (Triton)
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        mask = offs < n
        tl.store(
            out_ptr + offs,
            tl.load(x_ptr + offs, mask=mask) + tl.load(y_ptr + offs, mask=mask),
            mask=mask,
        )

    return add_kernel


def mode_triton() -> None:
    import torch
    import triton

    add_kernel = _add_kernel()
    RES["triton"] = triton.__version__
    n = 4096
    x = torch.randn(n, device="cuda")
    y = torch.randn(n, device="cuda")
    out = torch.empty_like(x)
    t = time.time()
    add_kernel[(triton.cdiv(n, 1024),)](x, y, out, n, BLOCK=1024)
    torch.cuda.synchronize()
    RES["first_call_s"] = round(time.time() - t, 3)
    err = (out - (x + y)).abs().max().item()
    RES["max_abs_err"] = err
    if not err < 1e-5:
        done(1, error=f"triton add differs by {err}")


def gpu_usable() -> bool:
    """Whether the driver loads and reports a device (without exiting, unlike check_driver)."""
    try:
        lib = ctypes.CDLL("libcuda.so.1")
    except OSError:
        return False
    count = ctypes.c_int()
    return lib.cuInit(0) == 0 and lib.cuDeviceGetCount(ctypes.byref(count)) == 0 and count.value > 0


def mode_triton_compile(cc: str) -> None:
    """Triton's whole compile for the GPU's arch, given as a target (no driver needed): its
    LLVM (which takes the PTX ISA from the ptxas Triton picked) and that ptxas, as the failing
    compile ran them. Nothing is launched: the result says so."""
    import triton
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource

    add_kernel = _add_kernel()
    RES["triton"] = triton.__version__
    sig = {"x_ptr": "*fp32", "y_ptr": "*fp32", "out_ptr": "*fp32", "n": "i32"}
    src = ASTSource(fn=add_kernel, signature=sig, constexprs={"BLOCK": 1024})
    t = time.time()
    k = triton.compile(src, target=GPUTarget("cuda", int(cc), 32))
    RES.update(first_call_s=round(time.time() - t, 3), cubin_bytes=len(k.asm["cubin"]),
               compiled_for=f"sm_{cc}", launched=False)  # fmt: skip


if __name__ == "__main__":
    for var in ("CUDA_HOME", "FLASHINFER_CUDA_ARCH_LIST", "TRITON_PTXAS_PATH",
                "TRITON_PTXAS_BLACKWELL_PATH"):  # fmt: skip
        RES["env_" + var] = os.environ.get(var)
    CC = os.environ.get("REMEDY_TRITON_CC", "")
    if MODE == "triton" and CC.isdigit() and not gpu_usable():
        # no usable GPU here (a sandbox host, a host whose driver is down): compile for the
        # GPU the facts name, which is the stage a too-old ptxas or Triton fails at
        try:
            mode_triton_compile(CC)
        except ModuleNotFoundError as e:
            print(f"REMEDY-SKIP {e.name} is not installed in {sys.prefix}")
            sys.exit(3)
        except BaseException as e:  # noqa: BLE001
            traceback.print_exc()
            sys.stderr.flush()
            done(1, error=f"{type(e).__name__}: {str(e)[-2000:]}")
        done(0)
    check_driver(create_context=(MODE == "driver"))
    try:
        if MODE == "jit-run":
            mode_jit_run()
        elif MODE == "graph":
            mode_graph()
        elif MODE == "triton":
            mode_triton()
        elif MODE != "driver":
            done(2, error="unknown mode " + MODE)
    except ModuleNotFoundError as e:
        print(f"REMEDY-SKIP {e.name} is not installed in {sys.prefix}")
        sys.exit(3)
    except BaseException as e:  # noqa: BLE001
        traceback.print_exc()
        sys.stderr.flush()
        done(1, error=f"{type(e).__name__}: {str(e)[-2000:]}")
    done(0)
