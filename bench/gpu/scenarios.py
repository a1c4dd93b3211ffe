#!/usr/bin/env python3
"""remedy on a real GPU: inject a fault, watch a real SGLang launch fail, let remedy read the
real log and the real facts, plan, apply with proofs, and end on a real launch + /generate.

Runs ON the device machine (bench/gpu/call.sh sets it up), as root, local transport (the image
has no sshd and no systemd: the server is started by a command, its environment comes from the
login shell, i.e. /etc/profile.d). Writes everything a CPU test should see under $OUT.

    python3 bench/gpu/scenarios.py a b        # scenarios to run, in order
    python3 bench/gpu/scenarios.py prewarm c d  # FlashInfer sampling pre-built for c and d
Scenarios
  a  CUDA_HOME=/dev/null in the server's environment
  b  FLASHINFER_CUDA_ARCH_LIST=8.0 (builds for an arch the H200 cannot run: "no kernel image")
  c  FLASHINFER_NVCC pointing at a broken compiler (a script that fails)
  d  CUDA_HOME at a pip-layout cu13 prefix with nvcc 13.0 vs runtime headers 13.2 (the wheel),
     no lib64 / libcudart.so / libcuda stub, no CCCL: built here from the image's CUDA 13.0 and
     the carried nvidia-cuda-runtime 13.2.75 wheel (the seeds' nvvm skew needs a 64 MB nvvm
     wheel that does not fit the transfer; it is covered on the CPU sandbox with real wheels)

The final launch (remedy's own launch-probe, as `remedy run` verifies) must answer a greedy and
a top-k/top-p POST /generate. The first non-greedy request JIT-builds FlashInfer's sampling
module (87-106 s cold); the probe waits for it as long as the build makes progress, but one
device call is 600 s, so `prewarm` builds that module beforehand into each scenario's
FLASHINFER_WORKSPACE_BASE with the image's good toolchain (what the device report advises and
an operator does before taking traffic). The failing launches are untouched by it: they die at
the first attention/norm JIT build, long before a request.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
OUT = Path(os.environ.get("OUT", "/tmp/out"))
PY = sys.executable
SCEN_FILE = Path("/etc/profile.d/00-remedy-scenario.sh")
MODEL = Path("/tmp/tiny-llama")
PORT = 30000
COMMON = {  # kept in every environment the server gets (KINDS.md: NVLink multicast stays off)
    "NCCL_NVLS_ENABLE": "0",
    "TORCH_SYMM_MEM_DISABLE_MULTICAST": "1",
    "NVSHMEM_DISABLE_NVLS": "1",
    "PYTHONUNBUFFERED": "1",
}
LAUNCH = (
    f"cd /tmp && exec {PY} -m sglang.launch_server --model-path {MODEL} --load-format dummy "
    "--skip-tokenizer-init --attention-backend flashinfer --sampling-backend flashinfer "
    f"--grammar-backend none --host 127.0.0.1 --port {PORT} --mem-fraction-static 0.15 "
    "--max-total-tokens 32768 --context-length 2048 --cuda-graph-max-bs 8 "
    "--max-running-requests 8 --disable-piecewise-cuda-graph"
)
# FlashInfer's JIT cache per scenario: a failing launch must really build (a warm cache would
# hide a broken compiler), so c and d start cold; b's failing launch builds sm_80 into its own
# arch dir and its final launch reuses a's sm_90a modules.
WORKSPACE = {"a": "/tmp/fiws-a", "b": "/tmp/fiws-a", "c": "/tmp/fiws-c", "d": "/tmp/fiws-d"}
CUVENV = Path("/opt/cuvenv")
BROKEN_NVCC = Path("/opt/broken-nvcc/bin/nvcc")
T0 = time.monotonic()
RESULTS: list[dict] = []


def log(msg: str) -> None:
    print(f"[{time.monotonic() - T0:6.1f}s] {msg}", flush=True)


def sh(cmd: str, timeout: float = 600, check: bool = False) -> subprocess.CompletedProcess:
    r = subprocess.run(["bash", "-c", cmd], capture_output=True, text=True, timeout=timeout)
    if check and r.returncode != 0:
        raise RuntimeError(f"{cmd!r} failed: {r.stderr[-1500:]}")
    return r


def remedy(*args: str, timeout: float = 900) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=f"{ROOT / 'src'}:{os.environ.get('PYTHONPATH', '')}")
    return subprocess.run(
        [PY, "-m", "remedy", *args], capture_output=True, text=True, timeout=timeout, env=env
    )


def set_scenario_env(env: dict[str, str]) -> None:
    """The fault goes where an engineer's shell would pick it up; remedy's fixes go in
    /etc/profile.d/zz-remedy-*.sh, which the login shell sources after this file."""
    lines = ["# remedy GPU scenario (bench/gpu/scenarios.py): the injected environment"]
    for k, v in {**COMMON, **env}.items():
        lines.append(f"export {k}={v!r}" if "'" not in v else f'export {k}="{v}"')
    SCEN_FILE.write_text("\n".join(lines) + "\n")
    for f in Path("/etc/profile.d").glob("remedy-*.sh"):
        f.unlink()  # the previous scenario's fix


def build_broken_nvcc() -> None:
    BROKEN_NVCC.parent.mkdir(parents=True, exist_ok=True)
    BROKEN_NVCC.write_text(
        "#!/bin/sh\n# a broken compiler (remedy GPU scenario c)\n"
        "echo 'nvcc: error while loading shared libraries: libnvvm.so.4: "
        "cannot open shared object file' >&2\nexit 127\n"
    )
    BROKEN_NVCC.chmod(0o755)


NVCC_PROFILE = """
TOP              = $(_HERE_)/..

CICC_PATH        = $(TOP)/nvvm/bin
NVVMIR_LIBRARY_DIR = $(TOP)/nvvm/libdevice

LD_LIBRARY_PATH += $(TOP)/lib:
PATH            += $(CICC_PATH):$(_HERE_):

INCLUDES        +=  "-I$(TOP)/$(_TARGET_DIR_)/include" $(_SPACE_)
SYSTEM_INCLUDES +=  "-isystem" "$(TOP)/$(_TARGET_DIR_)/include/cccl" $(_SPACE_)

LIBRARIES        =+ $(_SPACE_) "-L$(TOP)/$(_TARGET_DIR_)/lib$(_TARGET_SIZE_)/stubs" "-L$(TOP)/$(_TARGET_DIR_)/lib$(_TARGET_SIZE_)"

CUDAFE_FLAGS    +=
PTXAS_FLAGS     +=
"""


def build_pip_prefix() -> Path:
    """A venv whose site-packages/nvidia/cu13 is laid out like the pip wheels: the runtime
    13.2.75 wheel installed by pip, nvcc/ptxas/cicc 13.0 from the image's toolkit."""
    site = next(CUVENV.glob("lib/python3*/site-packages"), None)
    if site is None:
        sh(f"{PY} -m venv --without-pip {CUVENV}", check=True)
        site = next(CUVENV.glob("lib/python3*/site-packages"))
        pip_dir = sh(
            f"{PY} -c 'import os, pip; print(os.path.dirname(os.path.dirname(pip.__file__)))'",
            check=True,
        ).stdout.strip()
        (site / "_pip_from_image.pth").write_text(pip_dir + "\n")
    wheels = Path("/opt/remedy-wheels") if Path("/opt/remedy-wheels").is_dir() else ROOT / ".whl3"
    sh(
        f"{CUVENV}/bin/python -m pip install -q --no-index --no-deps "
        f"{wheels}/nvidia_cuda_runtime-13.2.75-*.whl",
        check=True,
    )
    p = site / "nvidia" / "cu13"
    src = Path("/usr/local/cuda-13.0")
    (p / "bin").mkdir(parents=True, exist_ok=True)
    for b in ("nvcc", "ptxas", "fatbinary", "nvlink", "cudafe++", "bin2c"):
        if (src / "bin" / b).exists():
            shutil.copy2(src / "bin" / b, p / "bin" / b)
    if (src / "bin" / "crt").is_dir():
        shutil.copytree(src / "bin" / "crt", p / "bin" / "crt", dirs_exist_ok=True)
    (p / "bin" / "nvcc.profile").write_text(NVCC_PROFILE)
    shutil.copytree(
        src / "nvvm",
        p / "nvvm",
        dirs_exist_ok=True,
        ignore=shutil.ignore_patterns("lib64", "include"),
    )
    inc = src / "targets" / "x86_64-linux" / "include"
    if not inc.is_dir():
        inc = src / "include"
    skip = {"cccl", "cuda", "cub", "thrust", "nv"}  # the CCCL trees: no nvidia-cuda-cccl here
    for item in inc.iterdir():
        dst = p / "include" / item.name
        if item.name in skip or dst.exists():
            continue  # the runtime wheel's headers stay (CUDART_VERSION 13020)
        if item.is_dir():
            shutil.copytree(item, dst, symlinks=True)
        else:
            shutil.copy2(item, dst)
    return p


SCENARIOS = {
    "a": {"title": "CUDA_HOME=/dev/null", "env": {"CUDA_HOME": "/dev/null"}},
    "b": {
        "title": "FLASHINFER_CUDA_ARCH_LIST=8.0 (an arch the H200 cannot run)",
        "env": {"FLASHINFER_CUDA_ARCH_LIST": "8.0"},
    },
    "c": {
        "title": "FLASHINFER_NVCC=a broken compiler",
        "env": {"FLASHINFER_NVCC": str(BROKEN_NVCC)},
    },
    "d": {
        "title": "CUDA_HOME=pip cu13 prefix, nvcc 13.0 vs runtime headers 13.2, pip layout, no CCCL",
        "env": {},
    },
}


GENERATE = [
    {"input_ids": [1, 450, 4996, 17354, 1701], "sampling_params": {"max_new_tokens": 16, "temperature": 0}},
    {"input_ids": [1, 450, 4996, 17354, 1701],
     "sampling_params": {"max_new_tokens": 16, "temperature": 0.8, "top_k": 20, "top_p": 0.9}},
]  # fmt: skip
PREWARM = """
import os, time, torch
import flashinfer.sampling as s
t = time.time()
probs = torch.softmax(torch.randn(4, 32000, device="cuda"), -1)
s.top_k_top_p_sampling_from_probs(probs, 20, 0.9)
s.top_k_renorm_probs(probs, 20); s.top_p_renorm_probs(probs, 0.9)
torch.cuda.synchronize()
print("prewarm", os.environ["FLASHINFER_WORKSPACE_BASE"], round(time.time() - t, 1), flush=True)
"""


def prewarm(keys: list[str]) -> None:
    """Build FlashInfer's sampling module into each scenario's workspace, in parallel."""
    t = time.monotonic()
    procs = []
    for ws in sorted({WORKSPACE[k] for k in keys}):
        env = dict(os.environ, **COMMON, FLASHINFER_WORKSPACE_BASE=ws,
                   CUDA_HOME="/usr/local/cuda-13.0")  # fmt: skip
        env.pop("FLASHINFER_NVCC", None)
        procs.append(subprocess.Popen([PY, "-c", PREWARM], env=env, stdout=subprocess.PIPE,
                                      stderr=subprocess.STDOUT, text=True))  # fmt: skip
    said = [p.communicate(timeout=400)[0].strip()[-600:] for p in procs]
    res = {"scenario": "prewarm", "workspaces": sorted({WORKSPACE[k] for k in keys}),
           "seconds": round(time.monotonic() - t, 1), "output": said}  # fmt: skip
    log(f"prewarm: {res}")
    RESULTS.append(res)
    (OUT / "results.json").write_text(json.dumps(RESULTS, indent=2))


def launch_probe(tag: str, keep_running: bool = False) -> dict:
    """A real launch through remedy's own launch probe (log-decided, never a fixed sleep)."""
    code = f"""
import asyncio, json, sys
sys.path.insert(0, {str(ROOT / "src")!r})
from remedy.facts import collect_facts
from remedy.probes import run_probe
from remedy.transport import LocalTransport
async def go():
    t = LocalTransport()
    facts = await collect_facts(t)
    r = await run_probe("launch-probe", t, facts, params={{"command": {LAUNCH!r},
                        "keep_running": {keep_running!r}, "extend_s": 180}}, timeout=420)
    print(json.dumps({{"ok": r.ok, "detail": r.detail, "seconds": r.seconds,
                       "symptoms": [s.model_dump() for s in r.symptoms],
                       "tail": r.output_tail}}))
asyncio.run(go())
"""
    t = time.monotonic()
    r = subprocess.run([PY, "-c", code], capture_output=True, text=True, timeout=900)
    try:
        res = json.loads(r.stdout.strip().splitlines()[-1])
    except (ValueError, IndexError):
        res = {
            "ok": False,
            "detail": "probe crashed: " + r.stderr[-2000:],
            "symptoms": [],
            "tail": r.stdout[-4000:],
        }
    res["wall_s"] = round(time.monotonic() - t, 1)
    (OUT / f"{tag}.log").write_text(res.get("tail") or "")
    return res


def stop_server() -> None:
    sh(
        "pkill -TERM -f 'sglang.launch_server' ; sleep 3; pkill -KILL -f 'sglang.launch_server'; "
        "pkill -KILL -f 'sglang::' ; true"
    )


def run_scenario(key: str) -> None:
    sc = SCENARIOS[key]
    res: dict = {"scenario": key, "title": sc["title"], "date": time.strftime("%Y-%m-%d")}
    t0 = time.monotonic()
    log(f"scenario {key}: {sc['title']}")
    env = dict(sc["env"], FLASHINFER_WORKSPACE_BASE=WORKSPACE[key])
    if key == "c":
        build_broken_nvcc()
    if key == "d":
        env["CUDA_HOME"] = str(build_pip_prefix())
    set_scenario_env(env)
    stop_server()
    fail = launch_probe(f"{key}-1-failing-launch")
    res["failing_launch"] = {k: fail.get(k) for k in ("ok", "detail", "wall_s")}
    res["failing_signatures"] = sorted({s["signature"] for s in fail.get("symptoms", [])})
    log(f"  failing launch: ok={fail['ok']} in {fail['wall_s']} s: {fail['detail'][:200]}")
    facts = remedy("facts", "--local", "--json")
    (OUT / f"{key}-facts.json").write_text(facts.stdout)
    fdata = json.loads(facts.stdout)
    fdata["workload"]["consumers"] = ["flashinfer-jit", "sglang-jit-kernel", "cuda-graph-capture"]
    fpath = OUT / f"{key}-facts-workload.json"
    fpath.write_text(json.dumps(fdata))
    diag = remedy(
        "diagnose",
        "--facts",
        str(fpath),
        "--log",
        str(OUT / f"{key}-1-failing-launch.log"),
        "--json",
    )
    (OUT / f"{key}-diagnosis.json").write_text(diag.stdout or diag.stderr)
    plan_path = OUT / f"{key}-plan.json"
    pl = remedy(
        "plan",
        "--facts",
        str(fpath),
        "--log",
        str(OUT / f"{key}-1-failing-launch.log"),
        "--launch",
        LAUNCH,
        "--json",
        "--out",
        str(plan_path),
    )
    try:
        plan = json.loads(pl.stdout)
    except ValueError:
        res["error"] = "plan failed: " + pl.stderr[-1500:]
        RESULTS.append(res)
        log("  " + res["error"])
        return
    res["diagnosis"] = [f["rule"] for f in plan["findings"]]
    res["steps"] = [s["action"] + " " + json.dumps(s["params"]) for s in plan["steps"]]
    res["rejected"] = [
        r["action"] + " " + json.dumps(r["params"]) + " breaks " + ",".join(r["breaks"])
        for r in plan["rejected"]
    ]
    # Device time is short: the final verification is the one real launch (it covers
    # FlashInfer's JIT, SGLang's jit_kernel and CUDA graph capture), kept up for /generate.
    plan["verification"] = [v for v in plan["verification"] if v["probe"] == "launch-probe"] or [
        {"consumer": "sglang-server", "probe": "launch-probe", "params": {"command": LAUNCH}}
    ]
    for v in plan["verification"]:
        v["params"]["generate"] = GENERATE
        v["params"]["extend_s"] = 180
    plan_path.write_text(json.dumps(plan))
    log(f"  plan: {res['diagnosis']} -> {res['steps']}")
    run = remedy(
        "run",
        "--local",
        "--plan",
        str(plan_path),
        "--yes",
        "--json",
        "--log",
        str(OUT / f"{key}-run.log"),
        timeout=1200,
    )
    (OUT / f"{key}-run.json").write_text(run.stdout or run.stderr)
    try:
        rep = json.loads(run.stdout)
    except ValueError:
        rep = {"outcome": "error", "message": run.stderr[-1500:]}
    res["run"] = {
        k: rep.get(k)
        for k in ("outcome", "exit_code", "message", "expensive_verifications", "seconds")
    }
    res["verification"] = rep.get("verification")
    res["generate"] = [
        d for d in json.dumps(rep.get("verification")).split("; ") if "/generate" in d
    ]
    stop_server()
    res["launches_to_green"] = 2  # the failing one and remedy's final verification launch
    res["minutes_to_green"] = round((time.monotonic() - t0) / 60, 1)
    log(f"  run: {res['run']}; generate: {res['generate']}")
    RESULTS.append(res)
    (OUT / "results.json").write_text(json.dumps(RESULTS, indent=2))


def main() -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    if not MODEL.exists():
        shutil.copytree(Path(__file__).parent / "tiny-llama", MODEL)
    budget = float(os.environ.get("GPU_BUDGET_S", "540"))
    keys = sys.argv[1:]
    if keys and keys[0] == "prewarm":
        keys = keys[1:]
        prewarm(keys or ["c", "d"])
        keys = [k for k in keys if k in SCENARIOS and os.environ.get("PREWARM_ONLY") != "1"]
    for key in keys:
        if time.monotonic() - T0 > budget - 150:
            log(f"skipping scenario {key}: {budget - (time.monotonic() - T0):.0f} s left")
            RESULTS.append({"scenario": key, "skipped": "out of device time in this call"})
            continue
        try:
            run_scenario(key)
        except Exception as exc:  # one broken scenario must not lose the others' results
            log(f"scenario {key} crashed: {type(exc).__name__}: {exc}")
            RESULTS.append({"scenario": key, "error": f"{type(exc).__name__}: {exc}"})
            stop_server()
    (OUT / "results.json").write_text(json.dumps(RESULTS, indent=2))


if __name__ == "__main__":
    main()
