"""Class 8: wrong target, false report.

- `rollback --local RUN_ID` rolls back exactly that run (it used to read RUN_ID as a host label
  and roll back the newest run);
- `facts HOST --local` no longer labels this machine's facts as HOST, and a plan made for
  one host is refused by the staleness check of a run on another (nothing runs);
- `run --plan` on an impossible 0-step plan says `no-complete-plan` (exit 3), never "nothing
  to do: every rule holds".
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from remedy.errors import StalePlan
from remedy.executor.runner import Runner
from remedy.knowledge.loader import load_knowledge
from remedy.model import Facts, Plan, Step, Touch
from remedy.planner.plan import facts_digest, make_plan
from remedy.transport import LocalTransport
from remedy.transport.quote import quote

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from runner_fixture_op import FixtureShell  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "src" / "remedy" / "examples" / "seed-sm120-pip-cu13" / "facts.yaml"
REMEDY = [sys.executable, "-m", "remedy"]
FIXTURE_CLI = [sys.executable, str(ROOT / "tests" / "cli_fixture_driver.py")]


def _env(tmp: Path) -> dict[str, str]:
    return {**os.environ, "XDG_STATE_HOME": str(tmp / "state"), "NO_COLOR": "1"}


def _touch_plan(host: str, path: Path) -> Plan:
    """A one-step plan (runner fixture) that creates `path`."""
    facts = Facts(host=host)
    step = Step(
        action="touch",
        title=f"create {path.name}",
        probe="static",
        operation=FixtureShell(
            cmds=[f"printf x > {quote(str(path))}"], paths=[Touch(kind="file", target=str(path))]
        ),
    )
    return Plan(
        remedy_version="t",
        host=host,
        facts_digest=facts_digest(facts),
        facts=facts,
        target=facts.workload,
        steps=[step],
    )


class _Ok:
    ok, detail, symptoms, skipped = True, "ok", [], None


def _runner(host: str) -> Runner:
    async def collect(_t):
        return Facts(host=host)

    async def prober(*_a, **_k):
        return _Ok()

    return Runner(LocalTransport(host=host), collect=collect, prober=prober)


def test_rollback_local_run_id_rolls_back_exactly_that_run(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    a, b = tmp_path / "a.txt", tmp_path / "b.txt"
    rep_a = asyncio.run(_runner("localhost").run(_touch_plan("localhost", a)))
    rep_b = asyncio.run(_runner("localhost").run(_touch_plan("localhost", b)))
    # (fixture plans verify no consumer: applied, not verified)
    assert rep_a.outcome == rep_b.outcome == "applied-not-verified"
    assert a.exists() and b.exists()
    # the real CLI; through the fixture driver only because the runs' saved plans hold the
    # runner fixture operation, which the driver registers
    r = subprocess.run(
        [*FIXTURE_CLI, "rollback", "--local", rep_a.run_id, "--yes", "--json"],
        capture_output=True, text=True, env=_env(tmp_path), timeout=300,
    )  # fmt: skip
    rep = json.loads(r.stdout)
    assert r.returncode == 0 and rep["outcome"] == "rolled-back", (r.returncode, r.stderr)
    assert rep["run_id"] == rep_a.run_id  # the run named, not the newest
    assert not a.exists() and b.exists()


@pytest.mark.parametrize("cmd", ["facts", "run", "rollback", "history"])
def test_host_and_local_together_are_refused(tmp_path, cmd):
    args = [cmd, "gpu01", "--local"] + (["x", "--yes"] if cmd == "rollback" else [])
    r = subprocess.run(
        [*REMEDY, *args], capture_output=True, text=True, env=_env(tmp_path), timeout=300
    )
    assert r.returncode == 2 and "give a HOST or --local, not both" in r.stderr, r.stderr
    assert not (tmp_path / "state" / "remedy" / "runs").exists()


def test_a_plan_for_one_host_fails_the_staleness_check_of_another(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    canary = tmp_path / "CANARY"
    plan = _touch_plan("localhost", canary)
    with pytest.raises(StalePlan, match="made for 'localhost', not for 'gpu01'"):
        asyncio.run(_runner("gpu01").run(plan))
    assert not canary.exists()


def test_run_plan_on_an_impossible_zero_step_plan_is_no_complete_plan(tmp_path):
    data = yaml.safe_load(EXAMPLE.read_text())
    data.update(host="localhost", toolkits=[])
    data["shell_env"].pop("CUDA_HOME")
    data["pythons"][0]["torch_cuda"] = "11.8"  # no toolkit and no CUDA 11.8 wheel: no fix
    plan = make_plan(load_knowledge(), Facts.model_validate(data))
    assert plan.status == "impossible" and plan.steps == []
    path = tmp_path / "impossible.json"
    path.write_text(plan.model_dump_json())
    r = subprocess.run(
        [*REMEDY, "run", "--local", "--plan", str(path), "--yes", "--json"],
        capture_output=True, text=True, env=_env(tmp_path), timeout=300,
    )  # fmt: skip
    rep = json.loads(r.stdout)
    assert r.returncode == 3 and rep["outcome"] == "no-complete-plan", (r.returncode, rep)
    assert "nothing to do" not in (rep["message"] + r.stderr).lower()
    assert "every rule" not in rep["message"] and "impossible" in rep["message"]
