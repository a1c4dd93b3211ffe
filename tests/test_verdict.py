"""What a plan claims about its log (planner/verdict.py), on real logs: the fatal line each step
addresses, the fatal lines no finding explains (top of the plan, JSON, status, exit 3), and
the failed operation `run` re-runs (rebuilt from the consumer and the fatal lines, never from
the log's command line)."""

from __future__ import annotations

import json
import subprocess
import sys

from remedy.inputs import scan_logs
from remedy.planner.verdict import failed_operation

from conftest import FIXTURES

LOGS = FIXTURES / "logs"


def test_flashinfer_log_rebuilds_the_module_that_failed():
    symptoms, _, _ = scan_logs([str(LOGS / "h200_call_a.log")])
    op = failed_operation(symptoms)
    assert op is not None and op.consumer == "flashinfer-jit"
    assert op.probe == "flashinfer-jit-build" and op.params == {"module": "norm"}
    assert "fatal" in op.first_error or "error" in op.first_error


def test_torch_extension_log_rebuilds_the_unit_with_its_headers():
    symptoms, _, _ = scan_logs([str(LOGS / "verdict" / "torch-ext-nvml-missing.log")])
    op = failed_operation(symptoms)
    assert op is not None and op.probe == "torch-ext-build"
    # the header that included the missing one, relative to its include root
    assert op.params == {"headers": ["c10/cuda/driver_api.h"]}
    assert "nvml.h" in op.first_error


def test_a_log_without_a_failing_build_has_no_operation_to_rerun():
    symptoms, _, _ = scan_logs([str(LOGS / "verdict" / "missing-files" / "dlopen.log")])
    assert symptoms and failed_operation(symptoms) is None


def _plan(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "remedy", "plan", *args],
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_unexplained_fatal_line_is_at_the_top_in_json_and_in_the_status(tmp_path):
    log = LOGS / "verdict" / "torch-ext-cutlass-missing.log"
    r = _plan("--example", "seed-sm120-pip-cu13", "--log", str(log))
    assert r.returncode == 3, r.stderr[-1000:]
    head = r.stdout.split("Findings", 1)[0]
    assert "not explained by this plan:" in head and "cutlass/cutlass.h" in head
    r = _plan("--example", "seed-sm120-pip-cu13", "--log", str(log), "--json")
    plan = json.loads(r.stdout)
    assert plan["status"] == "unexplained"
    assert any("cutlass/cutlass.h" in u for u in plan["unexplained"])
    # the steps still repair the host's own chain; none claims the cutlass line
    assert plan["steps"] and not any("cutlass" in a for s in plan["steps"] for a in s["addresses"])


def test_a_run_that_re_ran_nothing_is_applied_not_verified():
    """No log's operation and no consumer verified (none on the host, or none of its probes
    could run here): `fixed` was claimed on nothing. It is `applied-not-verified` (exit 14),
    which a fleet counts as not fine; one consumer seen passing keeps `fixed`."""
    from types import SimpleNamespace

    from remedy.executor.runner import RunReport
    from remedy.executor.verdict import claim_unverified
    from remedy.fleet.report import HostResult, fleet_exit

    plan = SimpleNamespace(scope_consumers=None)
    none_ran = [{"consumer": "flashinfer-jit", "probe": "-", "ok": None, "detail": "no GPU"}]
    for verification in ([], none_ran):
        rep = RunReport("r1", "h", "fixed", verification=list(verification))
        claim_unverified(plan, rep)
        assert rep.outcome == "applied-not-verified" and rep.exit_code == 14
        assert rep.as_dict()["outcome"] == "applied-not-verified"
    assert "no GPU" in rep.message
    passed = [{**none_ran[0], "ok": True}]
    rep = RunReport("r2", "h", "fixed", verification=passed)
    claim_unverified(plan, rep)
    assert rep.outcome == "fixed" and rep.exit_code == 0
    hosts = [
        HostResult(host="a", outcome="fixed", exit_code=0),
        HostResult(host="b", outcome="applied-not-verified", exit_code=14),
    ]
    assert fleet_exit(hosts, stopped=False) == 14
