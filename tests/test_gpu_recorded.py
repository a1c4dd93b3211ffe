"""What the real H200 runs showed, replayed on CPU (fixtures/gpu, recorded 2026-11-29)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from remedy.diagnose import diagnose
from remedy.evidence import scan_path
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
