"""The verification ladder: every probe of playbooks/probes.yaml, run for real on a host.

    result = await run_probe("compile-probe", transport, facts, params={"prefix": P})

The executor calls exactly `run_probe`. A probe reproduces what one consumer does on the host
(its toolkit lookup, its flags, the workload's environment and interpreter, the GPU's arch),
in a private temp dir that is removed afterwards, and returns a `ProbeResult` whose symptoms
come from the same signature catalog as every log. Cheapest first (seconds measured on a
2-core machine without GPU, see tests/fixtures/probes/TIMINGS.md):

  static            0      the executor re-evaluates rules; nothing runs on the host
  preprocess-probe  ~0.4   nvcc -E <cuda_fp16.h> <nv/target>, tvm-ffi's flags        F4
  env-probe         ~3     FlashInfer's toolkit/arch gate in the workload's env       F5 F6
  compile-probe     ~3-5   nvcc -c: plain kernel (cicc->ptxas) + CCCL kernel          F1 F2 F4
  link-probe        ~3-5   + c++ link with the consumer's link line                   F3
  flashinfer-jit-build ~8  real FlashInfer JIT build (silu_and_mul)
  sglang-jit-build  ~12    real SGLang jit_kernel build (add_constant via tvm-ffi)
  torch-ext-build   ~75    real torch cpp_extension load_inline (skipped: CPU torch)
  driver-probe, jit-run-probe, graph-capture, triton-compile: need a GPU (else skipped);
                    triton-compile where nvidia-smi answers but no driver loads: compiled
                    for the facts' GPU arch only (LLVM + Triton's ptxas), not run
  launch-probe      minutes: the real server, decided by its log (see probes/launch.py)
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from typing import Any

from remedy.errors import CommandTimeout, TransportError
from remedy.model import Facts
from remedy.probes.base import (
    DEFAULT_CONSUMER,
    Arch,
    ProbeContext,
    ProbeError,
    ProbeResult,
    ProbeUntrusted,
)
from remedy.probes.gpu import MODES as GPU_PROBES
from remedy.probes.gpu import gpu_probe
from remedy.probes.jit import env_probe, flashinfer_jit_build, sglang_jit_build, torch_ext_build
from remedy.probes.launch import launch_probe
from remedy.probes.toolchain import compile_probe, link_probe, preprocess_probe
from remedy.transport.base import Transport

__all__ = ["PROBES", "Arch", "ProbeResult", "run_probe"]


async def static_probe(ctx: ProbeContext) -> ProbeResult:
    """Nothing to run on the host: re-collecting facts and re-evaluating the rules is the
    executor's job (it owns the collectors and the rule engine)."""
    return ProbeResult(
        probe=ctx.probe,
        ok=True,
        seconds=0.0,
        detail="static: no host work; the executor re-collects facts and re-checks the rules",
        output_tail="",
        symptoms=[],
    )


PROBES: dict[str, Callable[[ProbeContext], Awaitable[ProbeResult]]] = {
    "static": static_probe,
    "env-probe": env_probe,
    "compile-probe": compile_probe,
    "preprocess-probe": preprocess_probe,
    "link-probe": link_probe,
    "flashinfer-jit-build": flashinfer_jit_build,
    "sglang-jit-build": sglang_jit_build,
    "torch-ext-build": torch_ext_build,
    **{pid: gpu_probe for pid in GPU_PROBES},
    "launch-probe": launch_probe,
}


async def run_probe(
    probe_id: str,
    transport: Transport,
    facts: Facts,
    *,
    params: dict[str, Any] | None = None,
    consumer: str | None = None,
    arch: str | None = None,
    timeout: float = 600,
) -> ProbeResult:
    """Run one probe of the ladder on the host behind `transport`.

    params: the step's parameters; used: prefix (the toolkit to probe, else the consumer's
    own pick under the workload's environment), python (an interpreter or a venv prefix, else
    the workload's), env (variables applied over the workload's environment), and per probe:
    module (flashinfer-jit-build), unit / command / health_url / extend_s / max_s /
    keep_running (launch-probe). consumer: whose flags and lookup to reproduce (default: the
    probe's natural consumer, flashinfer-jit for most). arch: "12.0" / "sm_120a" (default: the
    first GPU in the facts). timeout: the probe's budget in seconds (for launch-probe a base
    budget, extended while a build progresses).

    Never raises for a host-side failure: set-up errors (no GPU in the facts and no arch, no
    toolkit found, an unknown probe) and transport errors become a failed ProbeResult.
    """
    started = time.monotonic()
    ctx = ProbeContext(
        probe=probe_id,
        transport=transport,
        facts=facts,
        params=dict(params or {}),
        consumer=consumer or DEFAULT_CONSUMER.get(probe_id, "flashinfer-jit"),
        arch_arg=arch,
        timeout=float(timeout),
        started=started,
    )
    fn = PROBES.get(probe_id)
    if fn is None:
        return _failed(ctx, f"unknown probe {probe_id!r} (known: {', '.join(PROBES)})")
    try:
        return await fn(ctx)
    except ProbeUntrusted as e:
        res = _failed(ctx, f"skipped: {e}")
        res.skipped = str(e)
        return res
    except ProbeError as e:
        return _failed(ctx, str(e))
    except CommandTimeout as e:
        return _failed(ctx, f"timed out: {e}")
    except TransportError as e:
        res = _failed(ctx, f"transport error: {e}")
        res.transport_error = str(e)
        return res


def _failed(ctx: ProbeContext, detail: str) -> ProbeResult:
    return ProbeResult(
        probe=ctx.probe,
        ok=False,
        seconds=round(time.monotonic() - ctx.started, 3),
        detail=detail,
        output_tail="",
        symptoms=[],
    )
