"""What the real H200 runs showed, replayed on CPU (fixtures/gpu, recorded 2026-11-29)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from remedy.diagnose import diagnose
from remedy.evidence import scan_path
from remedy.inputs import scan_logs
from remedy.model import Facts
from remedy.planner.plan import make_plan

GPU = Path(__file__).parent / "fixtures" / "gpu"


def facts(name: str) -> Facts:
    return Facts.model_validate(json.loads((GPU / name).read_text()))


def test_real_capture_failure_is_recognized():
    res = scan_path(str(GPU / "h200-a-cuda-home-devnull-launch.log"))
    sigs = {s.signature for s in res.symptoms}
    assert {"scheduler-exception", "nvcc-not-a-directory", "sglang-child-sigquit"} <= sigs
    nd = next(s for s in res.symptoms if s.signature == "nvcc-not-a-directory")
    assert "/dev/null/bin/nvcc" in nd.text
    # the exception came out of CUDA graph capture
    text = (GPU / "h200-a-cuda-home-devnull-launch.log").read_text()
    assert "Capturing batches" in text and "init_device_graphs" in text


def test_h200_facts_from_the_real_collector():
    f = facts("h200-a-facts.json")
    assert f.gpus[0].name == "NVIDIA H200" and f.gpus[0].compute_cap == "9.0"
    assert f.shell_env["CUDA_HOME"] == "/dev/null"
    tk = next(t for t in f.toolkits if t.prefix == "/usr/local/cuda-13.0")
    assert tk.nvcc_release == "13.0"


def test_real_log_and_facts_diagnose_and_plan_the_fix(kb):
    f = facts("h200-a-facts.json")
    syms = scan_path(str(GPU / "h200-a-cuda-home-devnull-launch.log")).symptoms
    d = diagnose(kb, f, syms)
    cause = next(x for x in d.findings if x.rule == "cuda-home-is-toolkit")
    assert cause.observed
    p = make_plan(kb, f, syms)
    assert [s.action for s in p.steps] == ["shell-env-cuda-home"]
    assert p.steps[0].params["prefix"] == "/usr/local/cuda-13.0"


def test_recorded_runs_reached_readiness_with_one_launch():
    for name in ("h200-a-run.json", "h200-b-run.json"):
        rep = json.loads((GPU / name).read_text())
        assert rep["outcome"] == "fixed" and rep["expensive_verifications"] == 1
        assert rep["verification"][0]["probe"] == "launch-probe"
        assert rep["verification"][0]["ok"] is True


@pytest.mark.parametrize("name", ["h200-b-arch-list-80-launch.log"])
def test_arch_list_80_launch_reached_readiness_on_this_stack(name):
    """Recorded finding: the injected FLASHINFER_CUDA_ARCH_LIST=8.0 did not make the SGLang
    launch fail (warm sm_90a cache used); remedy's rule predicts a failure at FlashInfer's API
    level (the lab recorded 'no kernel image' there), not at this launch."""
    res = scan_path(str(GPU / name))
    assert "server-ready" in {s.signature for s in res.symptoms}
    assert "no-kernel-image" not in {s.signature for s in res.symptoms}


# ---- session 2 (2026-11-29 22:34-22:58 UTC): scenarios c and d, a again with /generate -------
# Each row: the real failing launch's log (the tail the launch probe kept), the facts remedy
# collected on the H200 with the fault in place, and what remedy must make of them.
SCENARIOS = [
    pytest.param(
        "h200-c-flashinfer-nvcc-broken-launch.log",
        "h200-c-facts.json",
        {"compiler-cannot-start", "ninja-failed-target", "ninja-subcommand-failed"},
        {"flashinfer-nvcc-override-consistent": True},
        ["env-unset-flashinfer-nvcc"],
        id="c-broken-FLASHINFER_NVCC",
    ),
    pytest.param(
        "h200-d-pip-prefix-skew-launch.log",
        "h200-d-facts.json",
        {"cccl-ctk-incompatible", "ninja-failed-target"},
        {
            "nvcc-matches-cudart-headers": True,
            "toolkit-links-cudart": False,
            "cccl-complete": False,
        },
        ["pip-align-cuda-wheels", "link-layout-symlinks", "pip-install-cccl"],
        id="d-pip-prefix-skew",
    ),
    pytest.param(
        "h200-a2-cuda-home-devnull-launch.log",
        "h200-a-facts.json",
        {"nvcc-not-a-directory", "scheduler-exception"},
        {"cuda-home-is-toolkit": True},
        ["shell-env-cuda-home"],
        id="a-CUDA_HOME-devnull",
    ),
]


def workload_facts(name: str) -> Facts:
    """The facts as the scenario handed them to remedy: the server's consumers named."""
    data = json.loads((GPU / name).read_text())
    data["workload"]["consumers"] = ["flashinfer-jit", "sglang-jit-kernel", "cuda-graph-capture"]
    return Facts.model_validate(data)


@pytest.mark.parametrize(("log", "facts_file", "sigs", "findings", "steps"), SCENARIOS)
def test_real_h200_failure_is_diagnosed_and_planned(kb, log, facts_file, sigs, findings, steps):
    syms, _, wrappers = scan_logs([GPU / log])  # as `remedy diagnose/plan --log` reads it
    assert sigs <= {s.signature for s in syms}
    f = workload_facts(facts_file)
    d = diagnose(kb, f, syms, wrappers=wrappers)
    got = {x.rule: x.observed for x in d.findings}
    assert {r: got.get(r) for r in findings} == findings, got
    p = make_plan(kb, f, syms, wrappers=wrappers)
    assert [s.action for s in p.steps] == steps
    assert not p.unresolved


def test_broken_compiler_line_names_the_program_and_the_library():
    syms = scan_path(str(GPU / "h200-c-flashinfer-nvcc-broken-launch.log")).symptoms
    s = next(s for s in syms if s.signature == "compiler-cannot-start")
    assert s.fields == {"program": "nvcc", "shared_lib": "libnvvm.so.4"}, s.fields


def test_pip_prefix_wheels_are_aligned_by_the_venv_that_owns_them(kb):
    """CUDA_HOME named the wheel dir of /opt/cuvenv directly: its pip does the aligning."""
    f = workload_facts("h200-d-facts.json")
    tk = next(t for t in f.toolkits if t.prefix.startswith("/opt/cuvenv"))
    assert (tk.python, tk.cudart_version, tk.nvcc_release) == ("/opt/cuvenv", 13020, "13.0")
    p = make_plan(kb, f, scan_path(str(GPU / "h200-d-pip-prefix-skew-launch.log")).symptoms)
    assert p.steps[0].params["python"] == "/opt/cuvenv"
    assert "nvidia-cuda-runtime==13.0.96" in " ".join(p.steps[0].commands)


@pytest.mark.parametrize("name", ["h200-a2-run.json", "h200-c-run.json", "h200-d-run.json"])
def test_recorded_final_launch_served_greedy_and_sampled_generate(name):
    """The final launch answered /generate twice; the second (top-k/top-p) request waited on
    FlashInfer's sampling JIT build (>100 s) instead of being cut off."""
    rep = json.loads((GPU / name).read_text())
    assert rep["outcome"] == "fixed" and rep["exit_code"] == 0
    assert rep["expensive_verifications"] == 1
    assert all(s["outcome"] == "committed" and s["probe_ok"] for s in rep["steps"])
    v = rep["verification"][0]
    assert v["probe"] == "launch-probe" and v["ok"] is True
    m = re.findall(r"#(\d) 200 in ([\d.]+) s \((\d+) output ids\)", v["detail"])
    assert [x[0] for x in m] == ["1", "2"] and all(x[2] == "16" for x in m)
    assert float(m[1][1]) > 90, "the sampled request waited out a real cold build"


@pytest.mark.parametrize(
    ("log", "proofs"),
    [
        ("h200-c-remedy-run.log", ["env-probe", "launch-probe"]),
        (
            "h200-d-remedy-run.log",
            ["compile-probe", "link-probe", "preprocess-probe", "launch-probe"],
        ),
        ("h200-a2-remedy-run.log", ["env-probe", "launch-probe"]),
    ],
)
def test_remedy_run_logs_show_every_proof_ok_in_plan_order(log, proofs):
    """remedy's own run log on the H200: each step's probe, then the one launch, all ok."""
    lines = (GPU / log).read_text().splitlines()
    ran = [
        ln.split("probe ", 1)[1].split()[0] for ln in lines if re.search(r"^\S+ \S+   probe ", ln)
    ]
    assert ran == proofs
    verdicts = [
        m.group(1) for ln in lines if (m := re.search(r"^\S+ \S+ {5}(ok|FAILED|failed):", ln))
    ]
    assert verdicts == ["ok"] * len(proofs)
    assert '"outcome": "fixed"' in lines[-1] or any('"outcome": "fixed"' in ln for ln in lines)
