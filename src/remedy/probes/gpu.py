"""driver-probe, jit-run-probe, graph-capture, triton-compile: the rungs that need a GPU.

They run only when the facts have a GPU *and* `nvidia-smi` answers on the host; otherwise the
result is skipped="needs a GPU ..." (never a silent ok). On the host each mode is one fresh
process of scripts/gpu_probe.py (driver API through ctypes, FlashInfer silu_and_mul built cold
and launched, the same op captured in a CUDA graph and replayed, one Triton kernel), modelled
on the device report's fi_jit.py, with caches in a private temp dir. The arch list is the
workload's own (FlashInfer reads the device when it is unset), unless `arch` is passed.
"""

from __future__ import annotations

import time

from remedy.errors import CommandTimeout
from remedy.probes.base import ProbeContext, ProbeResult, output_of, tail
from remedy.probes.jit import _run_script, _verdict

MODES = {
    "driver-probe": "driver",
    "jit-run-probe": "jit-run",
    "graph-capture": "graph",
    "triton-compile": "triton",
}


async def gpu_gate(ctx: ProbeContext) -> ProbeResult | None:
    """None when the probe can run; else a skipped result saying why."""
    secs = round(time.monotonic() - ctx.started, 3)
    if not ctx.facts.gpus:
        why = "needs a GPU: none in the facts"
        return ProbeResult(ctx.probe, False, secs, f"skipped: {why}", "", [], skipped=why)
    from remedy.trust import UNTRUSTED_EXIT, trusted_command

    try:  # found on the host's PATH (root's, which may start with a venv's bin): run if trusted
        r = await ctx.transport.run(trusted_command("nvidia-smi", ["-L"]), timeout=30)
    except CommandTimeout:
        why = "needs a GPU: nvidia-smi -L did not answer within 30 s"
        return ProbeResult(ctx.probe, False, secs, f"skipped: {why}", "", [], skipped=why)
    if r.exit_status == UNTRUSTED_EXIT and r.text().startswith("not executed: "):
        why = r.text().strip().splitlines()[-1]
        return ProbeResult(ctx.probe, False, secs, f"skipped: {why}", "", [], skipped=why)
    if r.exit_status != 0:
        out = output_of(r)
        line = out.strip().splitlines()[-1] if out.strip() else f"exit {r.exit_status}"
        why = f"needs a GPU: nvidia-smi fails on the host ({line[:200]})"
        if ctx.probe == "driver-probe" and r.exit_status != 127:
            # nvidia-smi exists but cannot talk to the driver: that IS the driver probe's verdict
            return ProbeResult(
                ctx.probe, False, secs, f"nvidia-smi -L failed: {line[:300]}", tail(out), []
            )
        return ProbeResult(ctx.probe, False, secs, f"skipped: {why}", tail(out), [], skipped=why)
    return None


async def gpu_probe(ctx: ProbeContext) -> ProbeResult:
    gate = await gpu_gate(ctx)
    if gate is not None:
        return gate
    mode = MODES[ctx.probe]

    def extra(d: str, env: dict[str, str]) -> dict[str, str]:
        out = {"FLASHINFER_WORKSPACE_BASE": f"{d}/flashinfer-ws", "TRITON_CACHE_DIR": f"{d}/triton"}
        # Triton's other dirs, private too (redteam-22): with the workload's
        # TRITON_KERNEL_DUMP=1, root wrote its dumps (add_kernel.ptx, .cubin, .sass...) into
        # the workload's TRITON_DUMP_DIR, through the link another user put there; an override
        # dir supplies the kernels run (TRITON_KERNEL_OVERRIDE); TRITON_HOME is their default
        out["TRITON_DUMP_DIR"] = f"{d}/triton-dump"
        out["TRITON_OVERRIDE_DIR"] = f"{d}/triton-override"
        out["TRITON_HOME"] = f"{d}/triton-home"
        if ctx.arch_arg:
            out["FLASHINFER_CUDA_ARCH_LIST"] = ctx.arch().dotted
        cc = str(ctx.facts.gpus[0].compute_cap or "") if ctx.facts.gpus else ""
        if mode == "triton" and cc.replace(".", "").isdigit():
            out["REMEDY_TRITON_CC"] = cc.replace(".", "")  # compile-only without a driver
        return out

    try:
        rc, out, res, env = await _run_script(ctx, "gpu_probe.py", [mode], extra)
    except CommandTimeout as e:
        from remedy.probes.base import timeout_result

        return timeout_result(ctx, e)
    devices = ", ".join(f"{d['name']} ({d['compute_cap']})" for d in res.get("devices", []))
    details = {
        "driver": f"driver CUDA {res.get('driver_cuda')}; {devices}; context created on device 0",
        "jit-run": f"FlashInfer silu_and_mul built and run on {devices}: first call "
        f"{res.get('first_call_s')} s, max abs error {res.get('max_abs_err')}",
        "graph": f"silu_and_mul captured ({res.get('capture_s')} s) and replayed on {devices}: "
        f"max abs error {res.get('replay_max_abs_err')}",
        "triton": f"Triton {res.get('triton')} kernel compiled and run on {devices} "
        f"({res.get('first_call_s')} s)"
        if res.get("launched") is not False
        else f"Triton {res.get('triton')} kernel compiled for {res.get('compiled_for')} "
        f"({res.get('cubin_bytes')} bytes of cubin, {res.get('first_call_s')} s); not run: "
        "no usable GPU driver here",
    }
    return _verdict(ctx, rc, out, res, details[mode], f"{ctx.probe}")
