"""env-probe and the real JIT builds (FlashInfer, SGLang jit_kernel, torch cpp_extension).

Why real builds: the consumers' own Python code decides the toolkit (CUDA_HOME, CUDA_PATH,
`which nvcc`), the arch, the flags and the link line; only running that code proves a fix for
them. Each runs in a fresh process, in the workload's environment (`env -i` + the unit's or
shell's variables), with the workload's interpreter, with its caches in a fresh private dir,
so nothing from an earlier build (or the real server's cache) can make it pass.
"""

from __future__ import annotations

import time
from typing import Any

from remedy.errors import CommandTimeout
from remedy.knowledge.providers import safe_name
from remedy.probes.base import (
    HostDir,
    ProbeContext,
    ProbeResult,
    env_argv,
    first_error_line,
    output_of,
    require_trusted,
    result_json,
    skip_reason,
    symptoms_of,
    tail,
    timeout_result,
    with_private_home,
)
from remedy.trust import JIT_PATH_NAMES, env_command_names


async def _run_script(
    ctx: ProbeContext,
    name: str,
    args: list[str],
    extra_env: Any,
) -> tuple[int, str, dict[str, Any], dict[str, str]]:
    """Run scripts/<name> with the workload's Python in a private dir; returns (rc, output,
    REMEDY-RESULT, the environment used). extra_env(hostdir_path, env) -> vars to set."""
    env = await ctx.env()
    python = ctx.python()
    await require_trusted(ctx, pythons=[python])
    async with HostDir(ctx.transport, [name], owner=ctx.run_as) as hd:
        env = with_private_home(env, hd.path)
        if ctx.params.get("prefix"):
            env["CUDA_HOME"] = str(ctx.params["prefix"])
        env.update(extra_env(hd.path, env))
        # the compilers the consumer finds on PATH by name, as run_steps checks its steps'
        names = [*JIT_PATH_NAMES, *env_command_names(env)]
        await require_trusted(ctx, names, [python], search_path=env.get("PATH", ""), env=env)
        argv = env_argv(env, ["sh", "-c", 'cd "$1" && shift && exec "$@" 2>&1', "sh", hd.path])
        argv += [python, hd.join(name), *args]
        await hd.hand_over()
        r = await ctx.transport.run(ctx.as_workload(argv), timeout=ctx.left())
        out = output_of(r)
    return r.exit_status, out, result_json(out), env


def arch_env(
    ctx: ProbeContext, var: str, env: dict[str, str], *, required: bool = True
) -> dict[str, str]:
    """An arch list variable: the explicit `arch` argument wins; else what the workload's
    environment already says (that is what the server uses); else the first GPU in the facts;
    else a build has nothing to build for: "no GPU in the facts: pass arch" (env-probe, which
    only reports the choice, runs anyway and says FlashInfer chose no arch)."""
    if ctx.arch_arg:
        return {var: ctx.arch().dotted}
    if env.get(var):
        return {}
    if required:
        return {var: ctx.arch().dotted}
    arch = ctx.arch_or_none()
    return {var: arch.dotted} if arch else {}


def _verdict(
    ctx: ProbeContext, rc: int, out: str, res: dict[str, Any], ok_detail: str, what: str
) -> ProbeResult:
    secs = round(time.monotonic() - ctx.started, 3)
    why = skip_reason(out)
    if rc == 3 and why:
        return ProbeResult(ctx.probe, False, secs, f"skipped: {why}", tail(out), [], skipped=why)
    symptoms = symptoms_of(out, f"{ctx.probe} on {ctx.transport.host}")
    if rc == 0:
        return ProbeResult(ctx.probe, True, secs, ok_detail, tail(out), symptoms)
    err = first_error_line(out) or res.get("error")
    stage = f" at {res['stage']}" if res.get("stage") else ""
    return ProbeResult(
        ctx.probe, False, secs, f"{what} failed{stage}: {err}"[:1500], tail(out), symptoms
    )


async def env_probe(ctx: ProbeContext) -> ProbeResult:
    """FlashInfer's toolkit and arch decision in the workload's environment, in a fresh
    process: get_cuda_path(), nvcc --version, the arch list it normalises (and the
    "SM 12.x requires CUDA >= 12.9" gate), without compiling. ~2 s, mostly importing torch."""
    try:
        rc, out, res, env = await _run_script(
            ctx,
            "fi_gate.py",
            [],
            lambda d, env: arch_env(ctx, "FLASHINFER_CUDA_ARCH_LIST", env, required=False),
        )
    except CommandTimeout as e:
        return timeout_result(ctx, e)
    where = ctx.env_note or "the workload's environment"
    ok_detail = (
        f"FlashInfer {res.get('flashinfer_version')} in {where}: toolkit {res.get('cuda_home')} "
        f"(nvcc {res.get('nvcc')}, CUDA {res.get('cuda_version')}), "
        f"FLASHINFER_CUDA_ARCH_LIST={env.get('FLASHINFER_CUDA_ARCH_LIST')!r} -> "
        f"{' '.join(res.get('nvcc_arch_flags') or []) or 'no arch'}"
    )
    r = _verdict(ctx, rc, out, res, ok_detail, f"FlashInfer's toolkit/arch gate in {where}")
    if rc == 0 and not res.get("nvcc_arch_flags"):
        r.ok = False
        r.detail = ok_detail + ": FlashInfer would build for no arch (no GPU seen, no arch list)"
    return r


async def flashinfer_jit_build(ctx: ProbeContext) -> ProbeResult:
    """A real FlashInfer JIT build of silu_and_mul (~6 s on 2 cores) in a fresh
    FLASHINFER_WORKSPACE_BASE: FlashInfer's own ninja file, nvcc flags, vendored CCCL and link
    line (-L$CUDA_HOME/lib64 -L$CUDA_HOME/lib64/stubs -lcudart -lcuda). No GPU needed."""
    module = str(ctx.params.get("module") or "act")

    def extra(d: str, env: dict[str, str]) -> dict[str, str]:
        out = {"FLASHINFER_WORKSPACE_BASE": f"{d}/flashinfer-ws"}
        out.update(arch_env(ctx, "FLASHINFER_CUDA_ARCH_LIST", env))
        return out

    try:
        rc, out, res, env = await _run_script(ctx, "fi_build.py", [module], extra)
    except CommandTimeout as e:
        return timeout_result(ctx, e)
    ok_detail = (
        f"built {res.get('name')} with toolkit {res.get('cuda_home')} for "
        f"FLASHINFER_CUDA_ARCH_LIST={env.get('FLASHINFER_CUDA_ARCH_LIST')!r} in {res.get('seconds')} s"
    )
    return _verdict(ctx, rc, out, res, ok_detail, "FlashInfer JIT build")


async def sglang_jit_build(ctx: ProbeContext) -> ProbeResult:
    """A real SGLang jit_kernel build (add_constant through tvm-ffi load_inline, ~10 s) in a
    fresh TVM_FFI_CACHE_DIR, for the GPU's arch (SGLang's override_jit_cuda_arch)."""
    arch = ctx.arch()
    try:
        rc, out, res, env = await _run_script(
            ctx,
            "sgl_build.py",
            [str(arch.major), str(arch.minor), arch.suffix],
            lambda d, env: {"TVM_FFI_CACHE_DIR": f"{d}/tvm-ffi-cache"},
        )
    except CommandTimeout as e:
        return timeout_result(ctx, e)
    ok_detail = (
        f"built and loaded SGLang's add_constant for {arch.dotted} with CUDA_HOME="
        f"{env.get('CUDA_HOME')!r} in {res.get('seconds')} s"
    )
    return _verdict(ctx, rc, out, res, ok_detail, "SGLang jit_kernel build")


async def torch_ext_build(ctx: ProbeContext) -> ProbeResult:
    """A real torch.utils.cpp_extension.load_inline CUDA build (~75 s on 2 cores) in a fresh
    TORCH_EXTENSIONS_DIR; skipped with the reason when torch is CPU-only (its CUDA_HOME is then
    None whatever the environment says)."""
    py = next((p for p in ctx.facts.pythons if ctx.python().startswith(p.path + "/")), None)
    if (
        py is not None
        and py.packages.get("torch")
        and py.torch_cuda is None
        and "+cpu" in py.packages["torch"]
    ):
        why = f"torch {py.packages['torch']} in {py.path} is CPU-only (facts)"
        return ProbeResult(ctx.probe, False, 0.0, f"skipped: {why}", "", [], skipped=why)

    def extra(d: str, env: dict[str, str]) -> dict[str, str]:
        out = {"TORCH_EXTENSIONS_DIR": f"{d}/torch-ext"}
        out.update(arch_env(ctx, "TORCH_CUDA_ARCH_LIST", env))
        return out

    # the failing operation's headers (FailedOperation.params), validated again by the script
    headers = [h for h in ctx.params.get("headers") or () if safe_name(h)]
    try:
        rc, out, res, env = await _run_script(ctx, "torch_ext_build.py", headers, extra)
    except CommandTimeout as e:
        return timeout_result(ctx, e)
    what = (
        f"a load_inline C++ unit including {', '.join(headers)}"
        if headers
        else "a load_inline CUDA extension"
    )
    ok_detail = (
        f"built and loaded {what} with torch {res.get('torch')} "
        f"(CUDA {res.get('torch_cuda')}, CUDA_HOME {res.get('cuda_home_resolved')}) in {res.get('seconds')} s"
    )
    return _verdict(ctx, rc, out, res, ok_detail, "torch cpp_extension build")
