"""Apply shows, then asks; a plan that is not `ok` is never applied.

- `run --plan` (a valid saved plan): with no terminal and no --yes, nothing is applied and it
  says why (exit 5, refused); at a terminal (a real pty) the steps are shown before the
  question, and "n" applies nothing;
- `rollback` shows what it will restore and asks the same way; --yes rolls back (exit 0);
- the runner never applies a plan whose status is not `ok`, whatever its steps say (a canary
  step that must not run).
"""

from __future__ import annotations

import asyncio
import json
import os
import pty
import select
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

from remedy.errors import PlanError
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


def _valid_plan(tmp: Path) -> Path:
    data = yaml.safe_load(EXAMPLE.read_text())
    data["host"] = "localhost"
    plan = make_plan(load_knowledge(), Facts.model_validate(data))
    p = tmp / "plan.json"
    p.write_text(plan.model_dump_json())
    return p


def _no_run(tmp: Path) -> None:
    runs = tmp / "state" / "remedy" / "runs"
    assert not runs.exists() or not any(runs.iterdir())
    assert not (tmp / "state" / "remedy" / "lock.json").exists()


def test_run_without_yes_and_without_a_terminal_applies_nothing(tmp_path):
    plan = _valid_plan(tmp_path)
    r = subprocess.run(
        [*REMEDY, "run", "--local", "--plan", str(plan)],
        capture_output=True, text=True, env=_env(tmp_path), stdin=subprocess.DEVNULL, timeout=300,
    )  # fmt: skip
    assert r.returncode == 5, (r.returncode, r.stderr[-1500:])
    assert "no terminal to ask on" in r.stderr and "--yes" in r.stderr
    assert "remedy plan" in r.stdout and "Align the CUDA wheels" in r.stdout  # shown first
    _no_run(tmp_path)


def _pty_run(argv: list[str], env: dict[str, str], answer: bytes) -> tuple[int, str]:
    """argv on a real terminal: wait for the question, answer, collect everything."""
    pid, fd = pty.fork()
    if pid == 0:  # pragma: no cover - the child
        os.execvpe(argv[0], argv, env)
    out = b""
    deadline = time.monotonic() + 240
    answered = False
    while time.monotonic() < deadline:
        r, _, _ = select.select([fd], [], [], 1.0)
        if r:
            try:
                chunk = os.read(fd, 65536)
            except OSError:
                break
            if not chunk:
                break
            out += chunk
            if not answered and b"[y/N]" in out:
                os.write(fd, answer)
                answered = True
    _, status = os.waitpid(pid, 0)
    os.close(fd)
    return os.waitstatus_to_exitcode(status), out.decode(errors="replace")


def test_run_at_a_terminal_shows_the_steps_then_asks_and_no_applies_nothing(tmp_path):
    plan = _valid_plan(tmp_path)
    rc, out = _pty_run([*REMEDY, "run", "--local", "--plan", str(plan)], _env(tmp_path), b"n\n")
    q = out.index("Apply these 3 step(s) to localhost?")
    shown = out[:q]
    for what in ("Align the CUDA wheels", "pip install", "lib64", "nvidia-cuda-cccl"):
        assert what in shown, (what, shown[-2000:])
    assert rc == 5 and "not confirmed" in out, (rc, out[-1500:])
    _no_run(tmp_path)


class _Ok:
    ok, detail, symptoms, skipped = True, "ok", [], None


def _runner() -> Runner:
    async def collect(_t):
        return Facts(host="localhost")

    async def prober(*_a, **_k):
        return _Ok()

    return Runner(LocalTransport(host="localhost"), collect=collect, prober=prober)


def _canary_plan(canary: Path, status: str) -> Plan:
    facts = Facts(host="localhost")
    step = Step(
        action="touch",
        title="create the canary",
        probe="static",
        operation=FixtureShell(
            cmds=[f"printf x > {quote(str(canary))}"],
            paths=[Touch(kind="file", target=str(canary))],
        ),
    )
    return Plan(
        remedy_version="t", host="localhost", facts_digest=facts_digest(facts), facts=facts,
        target=facts.workload, steps=[step], status=status,
    )  # fmt: skip


@pytest.mark.parametrize("status", ["partial", "impossible", "nothing-to-do"])
def test_a_plan_that_is_not_ok_is_never_applied(tmp_path, monkeypatch, status):
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    canary = tmp_path / "CANARY"
    plan = _canary_plan(canary, status)
    if status == "nothing-to-do":
        with pytest.raises(PlanError, match="only a complete plan .* is applied; nothing was run"):
            asyncio.run(_runner().run(plan))
    else:
        rep = asyncio.run(_runner().run(plan))
        assert rep.outcome == "no-complete-plan" and rep.exit_code == 3
        assert "nothing was applied" in rep.message
    assert not canary.exists()
    _no_run(tmp_path)


def test_rollback_shows_what_it_restores_asks_and_yes_exits_0(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    made = tmp_path / "made.txt"
    rep = asyncio.run(_runner().run(_canary_plan(made, "ok")))
    # (a fixture plan verifies no consumer: applied, not verified; exit 14)
    assert rep.outcome == "applied-not-verified" and made.exists()
    env = _env(tmp_path)
    r = subprocess.run(
        [*FIXTURE_CLI, "rollback", "--local", rep.run_id],
        capture_output=True, text=True, env=env, stdin=subprocess.DEVNULL, timeout=300,
    )  # fmt: skip
    assert r.returncode == 5 and "no terminal to ask on" in r.stderr, (r.returncode, r.stderr)
    assert f"rollback of run {rep.run_id}" in r.stdout and f"restore file {made}" in r.stdout
    assert made.exists()  # nothing restored
    r = subprocess.run(
        [*FIXTURE_CLI, "rollback", "--local", rep.run_id, "--yes", "--json"],
        capture_output=True, text=True, env=env, timeout=300,
    )  # fmt: skip
    assert r.returncode == 0 and json.loads(r.stdout)["outcome"] == "rolled-back", r.stderr
    assert not made.exists()
