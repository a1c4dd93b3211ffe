"""CUDA graph capture failures that are not toolchain problems never get a toolchain fix."""

from __future__ import annotations

from pathlib import Path

from remedy.diagnose import diagnose
from remedy.evidence import scan_lines
from remedy.inputs import scan_logs
from remedy.model import Facts
from remedy.planner.plan import make_plan

from conftest import base_facts, patched

CORPUS = Path(__file__).resolve().parent / "fixtures" / "corpus"
CAPTURE = {
    "capture-memory-headroom",
    "capture-custom-allreduce",
    "capture-collectives",
    "capture-sync-free",
}
CMD = "/root/venv_sglang211/bin/python -m sglang.launch_server --model-path /models/Kimi-K2.6 "
CAPTURE_PATCH = {
    "gpus.0.name": "NVIDIA GeForce RTX 4090",
    "gpus.1.name": "NVIDIA GeForce RTX 4090",
    "services.0.exec_start": CMD + "--tp 8 --mem-fraction-static 0.99 --port 30000",
}


def test_capture_rules_repair_only_with_flags_or_reports(kb):
    for rid in CAPTURE:
        rule = kb.rules[rid].rule
        assert rule.severity == "warning", rid
        assert rule.repairs, rid
        for aid in rule.repairs:
            a = kb.actions[aid].action
            assert a.effects == [], (rid, aid)  # no toolkit, package, env or driver change
            # a drop-in resetting the unit's ExecStart, or a report (never shell)
            assert (a.operation or {}).get("op") in {"exec-start", "manual"}, (rid, aid)
    # and no other action claims to repair them
    for aid, ca in kb.actions.items():
        if set(ca.action.repairs) & CAPTURE:
            assert aid in {
                "unit-lower-mem-fraction",
                "unit-disable-custom-all-reduce",
                "report-capture-failure",
            }, aid


def test_capture_rules_predict_no_toolchain_signature(kb):
    toolchain_sigs = {
        "ninja-build-failed",
        "ninja-exited-status",
        "ninja-failed-target",
        "ptxas-unsupported-ptx-version",
        "cccl-nv-detail-missing",
        "missing-header",
        "capture-cuda-graph-failed",
    }
    for rid in CAPTURE:
        assert not set(kb.rules[rid].rule.predicts) & toolchain_sigs, rid


def test_planner_proposes_no_toolchain_step_for_capture_findings(kb):
    facts = Facts.model_validate(patched(base_facts("system"), CAPTURE_PATCH))
    plan = make_plan(kb, facts)
    # warning-level without a log showing them: reported as advice, never as a toolchain step
    found = {f.rule for f in [*plan.findings, *plan.advice]}
    assert {"capture-memory-headroom", "capture-custom-allreduce"} <= found
    for step in plan.steps:
        assert not set(step.fixes) & CAPTURE, step
    # the toolchain plan is the one the host needs without the capture findings
    bare = make_plan(kb, Facts.model_validate(base_facts("system")))
    assert [s.action for s in plan.steps] == [s.action for s in bare.steps]
    assert plan.status == bare.status


def test_capture_oom_log_with_facts_is_explained_by_the_memory_finding(kb):
    facts = Facts.model_validate(patched(base_facts("system"), CAPTURE_PATCH))
    symptoms, _, wrappers = scan_logs([CORPUS / "capture-memory-headroom" / "1.log"])
    d = diagnose(kb, facts, symptoms, wrappers=wrappers)
    oom = [i for i, s in enumerate(symptoms) if s.signature == "capture-cuda-oom"]
    assert oom
    mem = next(f for f in d.findings if f.rule == "capture-memory-headroom")
    assert mem.observed and set(oom) <= set(mem.explains)
    for f in d.findings:
        if f.rule not in CAPTURE:
            assert not set(oom) & set(f.explains), f.rule


def _log_only(kb, lines: list[str]) -> list[str]:
    symptoms = scan_lines(lines).symptoms
    return [h.rule for h in diagnose(kb, None, symptoms, wrappers=set()).hypotheses]


NCCL_WRAPPER = [
    "torch.distributed.DistBackendError: NCCL error in: /pytorch/torch/csrc/distributed/c10d/"
    "ProcessGroupNCCL.cpp:3356, unhandled cuda error (run with NCCL_DEBUG=INFO for details), "
    "NCCL version 2.26.2",
    "ncclUnhandledCudaError: Call to CUDA function failed.",
    "Last error:",
]
CAPTURING = "Capturing CUDA graphs (mixed prefill-decode, PIECEWISE):   0%|          | 0/67"


def test_nccl_wrapper_is_a_capture_failure_only_when_its_cuda_error_is(kb):
    """tune-v: NCCL's CUDACHECK turns every failing CUDA call into ncclUnhandledCudaError
    (NVIDIA/nccl src/include/checks.h), so the wrapper names capture-collectives only when its
    'Cuda failure' line is a capture error, or when it comes bare during a capture; the CUDA
    error it carries decides otherwise, inside a capture too."""
    nki = "Cuda failure 'no kernel image is available for execution on the device'"
    oom = "Cuda failure 2 'out of memory'"
    cases = [
        (
            [*NCCL_WRAPPER, "Cuda failure 900 'operation not permitted when stream is capturing'"],
            "capture-collectives",
        ),
        ([CAPTURING, NCCL_WRAPPER[0]], "capture-collectives"),
        ([*NCCL_WRAPPER, oom], None),
        ([*NCCL_WRAPPER, "Cuda failure 999 'unknown error'"], None),
        ([*NCCL_WRAPPER, nki], "package-has-gpu-arch"),
        ([CAPTURING, *NCCL_WRAPPER, nki], "package-has-gpu-arch"),
        # out of memory while capturing is the capture's memory, not a non-capturable NCCL
        ([CAPTURING, *NCCL_WRAPPER, oom], "capture-memory-headroom"),
    ]
    for lines, want in cases:
        ranked = _log_only(kb, lines)
        assert (ranked[:1] or [None]) == [want], (lines[-1], ranked)
