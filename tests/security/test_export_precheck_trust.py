"""The exported playbook's precondition never runs a venv another user owns (class 3).

The attack, for real: a plan (`remedy plan` of a host whose Python env is uid 65534's, e.g.
the service user's venv) pins wheels in that env. `remedy run` refuses it
(`test_apply_trust.py`); `remedy export --format ansible` writes a playbook whose first task,
the precondition script, ran `ENV/bin/python -c …` to read the installed versions, as root and
in check mode too, before any step's own trust task: `ansible-playbook --check` (the preview
that "changes nothing") ran uid 65534's code as root. Now remedy's trust check runs first, as
its own task. Control: the same env owned by root is run by the precondition.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from remedy.export import export_plan
from remedy.knowledge.loader import load_knowledge
from remedy.model import Facts
from remedy.planner.plan import make_plan

REPO = Path(__file__).resolve().parents[2]
PLAYBOOK = Path(sys.executable).parent / "ansible-playbook"

pytestmark = [
    pytest.mark.skipif(os.geteuid() != 0, reason="an env owned by another user"),
    pytest.mark.skipif(not PLAYBOOK.exists(), reason="ansible-core not installed"),
]


def _play(tmp_path: Path, owner: int) -> tuple[subprocess.CompletedProcess[str], Path]:
    tmp_path.chmod(0o755)
    env, canary = tmp_path / "venv", tmp_path / "canary"
    facts_yaml = REPO / "src/remedy/examples/seed-sm120-pip-cu13/facts.yaml"
    data = yaml.safe_load(facts_yaml.read_text())
    facts = Facts.model_validate(json.loads(json.dumps(data).replace("/root/venv", str(env))))
    plan = make_plan(load_knowledge(), facts)
    assert any(s.operation.op == "pip-install" for s in plan.steps)
    (env / "bin").mkdir(parents=True)
    (env / "lib/python3.12/site-packages/nvidia/cu13/lib").mkdir(parents=True)
    for name in ("python", "pip"):
        f = env / "bin" / name
        f.write_text(f'#!/bin/sh\necho "$0 $*" >> {canary}\necho "{{}}"\n')
        f.chmod(0o755)
    for p in (env, *env.rglob("*")):
        os.chown(p, owner, owner)
    pb = tmp_path / "pb.yml"
    pb.write_text(export_plan(plan, "ansible"))
    env_vars = {**os.environ, "ANSIBLE_NOCOLOR": "1", "ANSIBLE_LOCALHOST_WARNING": "0"}
    r = subprocess.run(
        [str(PLAYBOOK), "-i", "localhost,", "-c", "local", "--check", str(pb),
         "-e", f"ansible_python_interpreter={sys.executable}"],
        capture_output=True, text=True, timeout=300, cwd=tmp_path, env=env_vars,
    )  # fmt: skip
    return r, canary


def test_the_precondition_does_not_run_a_venv_another_user_owns(tmp_path: Path):
    r, canary = _play(tmp_path, 65534)
    out = r.stdout + r.stderr
    assert not canary.exists(), "the playbook's --check ran uid 65534's python as root:\n" + (
        canary.read_text()
    )
    assert r.returncode != 0 and "owned by nobody (uid 65534)" in out, out[-3000:]


def test_control_the_precondition_runs_an_env_root_owns(tmp_path: Path):
    _, canary = _play(tmp_path, 0)
    assert canary.exists() and " -c " in canary.read_text(), "the precondition read versions"
