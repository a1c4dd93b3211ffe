"""Compile one Triton kernel for sm_120 in a sandbox host (no GPU: an explicit target), as a
user's Triton compile runs: Triton's LLVM, then the ptxas Triton picks for the arch
(TRITON_PTXAS_BLACKWELL_PATH, else its bundled ptxas-blackwell). Prints COMPILED on success.
Run as a file (`python triton_compile.py`): @triton.jit needs the function's source file."""

import triton
import triton.language as tl
from triton.backends.compiler import GPUTarget
from triton.compiler import ASTSource


@triton.jit
def add(x, y, out, n, BLOCK: tl.constexpr):  # noqa: ANN001 (Triton)
    i = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = i < n
    tl.store(out + i, tl.load(x + i, mask=m) + tl.load(y + i, mask=m), mask=m)


sig = {"x": "*fp32", "y": "*fp32", "out": "*fp32", "n": "i32"}
k = triton.compile(ASTSource(fn=add, signature=sig, constexprs={"BLOCK": 128}),
                   target=GPUTarget("cuda", 120, 32))  # fmt: skip
print("COMPILED", len(k.asm["cubin"]))
