"""compile-probe, preprocess-probe, link-probe: the toolkit checked with the consumer's flags.

Why these and not a JIT build: a plain nvcc run with the consumer's include and link flags
proves the same toolkit property in 0.3-4 s instead of 6-75 s, and needs no Python packages.
Each probe compiles tiny sources from scripts/ in a private temp dir on the host, in the
workload's environment (PATH picks the host compiler, CPATH may supply CCCL), with the nvcc
the consumer itself would run. Independent steps run in parallel and every step runs even
when another failed, so one probe reports the whole chain (e.g. F1 *and* F2 at once).
"""

from __future__ import annotations

import json
import posixpath
import shlex
import time
from typing import Any

from remedy.errors import CommandTimeout
from remedy.knowledge.loader import load_knowledge
from remedy.probes.base import (
    HostDir,
    ProbeContext,
    ProbeResult,
    env_argv,
    first_error_line,
    output_of,
    require_trusted,
    result_json,
    symptoms_of,
    tail,
    timeout_result,
    with_private_home,
)

FI_CCCL_SUBDIRS = ("cub", "libcudacxx/include", "thrust")


async def flashinfer_cccl(ctx: ProbeContext, python: str, env: dict[str, str]) -> list[str]:
    """FlashInfer's vendored CCCL include dirs (passed with -I, ahead of the toolkit's), from
    the Python env's facts, else asked of the host's interpreter (find_spec: no import)."""
    want = ctx.params.get("python")
    for py in ctx.facts.pythons:
        if (not want or posixpath.normpath(str(want)) == posixpath.normpath(py.path)) and (
            py.flashinfer_cccl
        ):
            base = py.flashinfer_cccl.removesuffix("/libcudacxx/include")
            return [posixpath.join(base, d) for d in FI_CCCL_SUBDIRS]
    code = (
        "import importlib.util as u; s = u.find_spec('flashinfer'); "
        "print(s.submodule_search_locations[0] if s and s.submodule_search_locations else '')"
    )
    await require_trusted(ctx, pythons=[python], env=env)
    try:
        r = await ctx.transport.run(
            ctx.as_workload(env_argv(env, [python, "-c", code])), timeout=30
        )
    except CommandTimeout:
        return []
    root = r.text().strip().splitlines()[-1] if r.exit_status == 0 and r.text().strip() else ""
    if not root:
        return []
    return [posixpath.join(root, "data", "cccl", d) for d in FI_CCCL_SUBDIRS]


def consumer_cuda_flags(
    consumer: str, prefix: str, env: dict[str, str], fi_cccl: list[str]
) -> tuple[list[str], str]:
    """nvcc flags of one consumer that decide which headers a kernel sees, and a note.

    FlashInfer (cccl: bundled): its CCCL with -I, then -isystem $CUDA_HOME/include, and
    FLASHINFER_EXTRA_CUDAFLAGS from the environment (where -DCCCL_DISABLE_CTK_COMPATIBILITY_CHECK
    would hide F2). tvm-ffi / SGLang jit_kernel: no include flags at all, so CCCL comes only
    from nvcc.profile's -isystem $TOP/include/cccl. torch: -isystem $CUDA_HOME/include.
    """
    kb = load_knowledge()
    comp = kb.components.get(consumer)
    bundled = comp is not None and comp.cccl == "bundled"
    flags: list[str] = []
    note = ""
    if bundled:
        if fi_cccl:
            flags += [f"-I{d}" for d in fi_cccl]
            note = "FlashInfer's vendored CCCL (-I)"
        else:
            note = "FlashInfer not found in the Python env: compiled without its vendored CCCL"
        flags += ["-isystem", posixpath.join(prefix, "include")]
        flags += ["--compiler-options=-fPIC", "--expt-relaxed-constexpr", "-std=c++17"]
        extra = env.get("FLASHINFER_EXTRA_CUDAFLAGS")
        if extra:
            flags += shlex.split(extra)
            note += f"; FLASHINFER_EXTRA_CUDAFLAGS={extra}"
    elif consumer == "torch-cpp-extension":
        flags += ["-isystem", posixpath.join(prefix, "include"), "-Xcompiler", "-fPIC"]
        flags += ["-std=c++17", "--expt-relaxed-constexpr"]
        note = "the toolkit's CCCL (torch's flags)"
    else:
        flags += ["-Xcompiler", "-fPIC", "-std=c++17", "-O2"]
        note = "the toolkit's CCCL (tvm-ffi's flags: no include flags)"
    return flags, note


def link_flags(consumer: str, prefix: str, env: dict[str, str]) -> list[str]:
    """The consumer's link line from knowledge (`link:`), e.g. FlashInfer's
    -shared -L$CUDA_HOME/lib64 -L$CUDA_HOME/lib64/stubs -lcudart -lcuda."""
    kb = load_knowledge()
    comp = kb.components.get(consumer)
    spec = comp.link if comp is not None and comp.link else kb.components["flashinfer-jit"].link
    assert spec is not None
    flags = ["-shared"] + [f"-L{posixpath.join(prefix, d)}" for d in spec.dirs]
    flags += [f"-l{lib}" for lib in spec.libs]
    if comp is not None and comp.cccl == "bundled" and env.get("FLASHINFER_EXTRA_LDFLAGS"):
        flags += shlex.split(env["FLASHINFER_EXTRA_LDFLAGS"])
    return flags


# nvcc runs the host compiler it finds on PATH unless told one (-ccbin): that one runs too
NVCC_HOST_COMPILERS = ("gcc", "g++")
_CCBIN = ("-ccbin", "--compiler-bindir")


def step_binaries(groups: list[list[dict[str, Any]]]) -> list[str]:
    """Every program the steps start: each argv[0] (`c++` from PATH included) and, for an
    nvcc step, the host compiler it calls: its -ccbin, else gcc/g++ on PATH."""
    out: list[str] = []
    for g in groups:
        for st in g:
            argv = [str(a) for a in st.get("argv") or []]
            if not argv:
                continue
            out.append(argv[0])
            if posixpath.basename(argv[0]) != "nvcc":
                continue
            ccbin = [b for a, b in zip(argv, argv[1:], strict=False) if a in _CCBIN] + [
                a.split("=", 1)[1] for a in argv if a.startswith(tuple(f"{c}=" for c in _CCBIN))
            ]
            out += ccbin or list(NVCC_HOST_COMPILERS)
    return list(dict.fromkeys(out))


async def run_steps(
    ctx: ProbeContext,
    hd: HostDir,
    env: dict[str, str],
    python: str,
    groups: list[list[dict[str, Any]]],
) -> tuple[int, str, dict[str, Any]]:
    await require_trusted(
        ctx, step_binaries(groups), pythons=[python], search_path=env.get("PATH", ""), env=env
    )
    plan = hd.join("plan.json")
    if not hd.handed:  # a retry runs the same plan, already there
        await hd.put("plan.json", json.dumps({"groups": groups}).encode(), mode=0o600)
    argv = env_argv(env, ["sh", "-c", 'cd "$1" && shift && exec "$@" 2>&1', "sh", hd.path, python])
    argv += [hd.join("steps.py"), plan]
    await hd.hand_over()
    r = await ctx.transport.run(ctx.as_workload(argv), timeout=ctx.left())
    out = output_of(r)
    return r.exit_status, out, result_json(out)


def steps_detail(res: dict[str, Any], out: str) -> str:
    """ "ptx ok 1.9 s; cccl FAILED: <first error line of that step>"."""
    parts = []
    for st in res.get("steps", []):
        if st["rc"] == 0:
            parts.append(f"{st['name']} ok {st['seconds']:.1f} s")
        else:
            parts.append(f"{st['name']} FAILED ({first_error_line(step_output(out, st['name']))})")
    return "; ".join(parts)


def step_output(out: str, name: str) -> str:
    begin, end = f"REMEDY-STEP {name} BEGIN", f"REMEDY-STEP {name} END"
    keep, lines = False, []
    for ln in out.splitlines():
        if ln == begin:
            keep = True
        elif ln.startswith(end):
            keep = False
        elif keep:
            lines.append(ln)
    return "\n".join(lines)


async def _toolchain_probe(
    ctx: ProbeContext, files: list[str], build: Any, what: str
) -> ProbeResult:
    prefix, how = ctx.toolkit()
    env = await ctx.env()
    python = ctx.python()
    async with HostDir(ctx.transport, ["steps.py", *files], owner=ctx.run_as) as hd:
        env = with_private_home(env, hd.path)
        groups, note = await build(ctx, hd, prefix, env, python)
        # the step runner is plain stdlib Python: the workload's interpreter, else python3
        try:
            rc, out, res = await run_steps(ctx, hd, env, python, groups)
        except CommandTimeout as e:
            return timeout_result(ctx, e)
        if rc != 0 and not res:  # the interpreter itself did not run: retry with python3
            rc, out, res = await run_steps(ctx, hd, env, "python3", groups)
    symptoms = symptoms_of(out, f"{ctx.probe} on {ctx.transport.host}")
    ok = rc == 0 and bool(res.get("steps"))
    detail = f"{what} with {ctx.nvcc(prefix)} ({how}; {note}): {steps_detail(res, out) or first_error_line(out)}"
    return ProbeResult(
        probe=ctx.probe,
        ok=ok,
        seconds=round(time.monotonic() - ctx.started, 3),
        detail=detail,
        output_tail=tail(out),
        symptoms=symptoms,
    )


async def compile_probe(ctx: ProbeContext) -> ProbeResult:
    """Two translation units compiled for the GPU's arch, in parallel: one with no includes
    (cicc -> ptxas: F1, PTX ISA skew) and one with <cuda/std/version> + <cuda_fp16.h> +
    <nv/target> through the consumer's CCCL (F2, the CTK check; F4).

    `nvcc -cubin` rather than `-c`: the device path is the same (the host compiler's
    preprocessor, cicc, ptxas, so a missing or unsupported gcc still shows), minus the host-side
    compile and the fatbinary, which prove nothing here and made `-c` 4x slower (measured:
    3.6 s vs 0.9 s per unit under load). link-probe still builds a real `-c` object.
    """
    arch = ctx.arch()

    async def build(
        ctx: ProbeContext, hd: HostDir, prefix: str, env: dict[str, str], python: str
    ) -> tuple[list[list[dict[str, Any]]], str]:
        fi = await flashinfer_cccl(ctx, python, env) if _bundled(ctx.consumer) else []
        flags, note = consumer_cuda_flags(ctx.consumer, prefix, env, fi)
        nvcc = ctx.nvcc(prefix)
        steps = [
            {
                "name": name,
                "argv": [
                    nvcc,
                    "-cubin",
                    hd.join(src),
                    "-o",
                    hd.join(src + ".cubin"),
                    f"-arch={arch.nvcc}",
                    *flags,
                ],
            }
            for name, src in (("ptx", "probe_ptx.cu"), ("cccl", "probe_cccl.cu"))
        ]
        return [steps], f"{note}; -arch={arch.nvcc}"

    return await _toolchain_probe(ctx, ["probe_ptx.cu", "probe_cccl.cu"], build, "nvcc -cubin")


async def preprocess_probe(ctx: ProbeContext) -> ProbeResult:
    """`nvcc -E` of <cuda_fp16.h> + <nv/target> with tvm-ffi's flags (no include flags, so
    only the toolkit's CCCL counts): F4 in 0.2 s, no ptxas."""
    arch = ctx.arch_or_none()

    async def build(
        ctx: ProbeContext, hd: HostDir, prefix: str, env: dict[str, str], python: str
    ) -> tuple[list[list[dict[str, Any]]], str]:
        fi = await flashinfer_cccl(ctx, python, env) if _bundled(ctx.consumer) else []
        flags, note = consumer_cuda_flags(ctx.consumer, prefix, env, fi)
        argv = [ctx.nvcc(prefix), "-E", hd.join("probe_fp16.cu"), "-o", hd.join("probe_fp16.ii")]
        if arch:
            argv.append(f"-arch={arch.nvcc}")
        return [[{"name": "preprocess", "argv": argv + flags}]], note

    return await _toolchain_probe(ctx, ["probe_fp16.cu"], build, "nvcc -E")


async def link_probe(ctx: ProbeContext) -> ProbeResult:
    """A tiny kernel (nvcc -c) and a host object calling libcudart + libcuda (c++ -c, so the
    link is tested even when nvcc is broken), linked with the consumer's link line through
    `c++` ($CXX) exactly as FlashInfer's ninja rule does: F3 (`cannot find -lcudart`)."""
    arch = ctx.arch()

    async def build(
        ctx: ProbeContext, hd: HostDir, prefix: str, env: dict[str, str], python: str
    ) -> tuple[list[list[dict[str, Any]]], str]:
        fi = await flashinfer_cccl(ctx, python, env) if _bundled(ctx.consumer) else []
        flags, _ = consumer_cuda_flags(ctx.consumer, prefix, env, fi)
        cxx = env.get("CXX") or "c++"
        kobj, hobj = hd.join("probe_link_kernel.o"), hd.join("probe_host.o")
        lflags = link_flags(ctx.consumer, prefix, env)
        groups = [
            [
                {
                    "name": "kernel",
                    "argv": [ctx.nvcc(prefix), "-c", hd.join("probe_ptx.cu"), "-o", kobj,
                             f"-arch={arch.nvcc}", "-Xcompiler", "-fPIC", *flags],
                },
                {
                    "name": "host",
                    "argv": [cxx, "-c", hd.join("probe_host.cpp"), "-o", hobj, "-fPIC",
                             "-isystem", posixpath.join(prefix, "include")],
                },
            ],
            [
                {
                    "name": "link",
                    "argv": [cxx, "@INPUTS@", *lflags, "-o", hd.join("probe.so")],
                    "optional_inputs": [hobj, kobj],
                }
            ],
        ]  # fmt: skip
        return groups, f"link line: {cxx} <objects> {' '.join(lflags)}"

    return await _toolchain_probe(ctx, ["probe_ptx.cu", "probe_host.cpp"], build, "compile + link")


def _bundled(consumer: str) -> bool:
    comp = load_knowledge().components.get(consumer)
    return comp is not None and comp.cccl == "bundled"
