"""A saved plan's failed operation is re-derived, never run as written.

The attack, for real: `run` re-runs the operation the log came from (`plan.failed_operation`:
a probe id and its params) to say `fixed`, and since toolchain-2 also when the plan has no
step. A saved plan's `failed_operation` was neither in the plan digest nor among the fields
`operations/verify.py` re-derives: whoever could write the file set its probe to
`launch-probe` with `params.command` a shell command, no digest to recompute, and `remedy run
--local --plan FILE --yes` ran it as root (`sh -c`, canary made) on a host where every rule
holds. Now a saved plan whose failed operation (or unexplained lines) differs from what remedy
derives from its own symptoms is refused (exit 5, the fields named) before anything runs;
control: the untampered plan verifies.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from remedy.knowledge.loader import load_knowledge
from remedy.model import Plan
from remedy.operations.verify import verify_saved_plan

REPO = Path(__file__).resolve().parents[2]
LOG = REPO / "tests/fixtures/session/fi-no-nvcc-ssh-cmd.log"


def _remedy(tmp: Path, *args: str) -> subprocess.CompletedProcess[str]:
    # (pytest's own variable changes between the facts and the run: the plan would be stale)
    env = {k: v for k, v in os.environ.items() if k != "PYTEST_CURRENT_TEST"}
    env = {**env, "PYTHONPATH": str(REPO / "src"), "XDG_STATE_HOME": str(tmp / "state"),
           "XDG_CACHE_HOME": str(tmp / "c")}  # fmt: skip
    return subprocess.run([sys.executable, "-m", "remedy", *args], capture_output=True,
                          text=True, env=env, timeout=300, cwd=tmp)  # fmt: skip


@pytest.fixture(scope="module")
def saved(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """(work dir, a plan of THIS host's facts with no step and a failed operation): `run`
    passes its staleness check and goes straight to the re-run."""
    tmp = tmp_path_factory.mktemp("failedop")
    facts = tmp / "facts.json"
    r = _remedy(tmp, "facts", "--local", "--json")
    assert r.returncode == 0, r.stderr
    facts.write_text(r.stdout)
    plan = tmp / "plan.json"
    r = _remedy(tmp, "plan", "--facts", str(facts), "--log", str(LOG),
                "--rules", "driver-supports-cuda", "--out", str(plan))  # fmt: skip
    assert plan.exists(), r.stderr
    d = json.loads(plan.read_text())
    assert d["steps"] == [] and d["failed_operation"]["probe"] == "flashinfer-jit-build"
    return tmp, plan


def test_a_saved_failed_operation_that_runs_a_command_is_refused(saved):
    tmp, plan = saved
    canary = tmp / "canary"
    d = json.loads(plan.read_text())
    d["failed_operation"]["probe"] = "launch-probe"
    d["failed_operation"]["params"] = {"command": f"touch {canary}", "max_s": 20}
    bad = tmp / "bad.json"
    bad.write_text(json.dumps(d))
    r = _remedy(tmp, "run", "--local", "--plan", str(bad), "--yes")
    assert not canary.exists(), "the saved plan's command ran as root"
    assert r.returncode == 5 and "refusing the saved plan" in r.stderr, r.stderr
    assert "failed_operation.probe" in r.stderr


def test_control_the_untampered_plan_verifies(saved):
    _tmp, plan = saved
    verify_saved_plan(Plan.model_validate_json(plan.read_text()), load_knowledge())
