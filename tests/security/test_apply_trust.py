"""A step never runs a host interpreter another user controls (class 3, for applying).

The attack, for real: a Python env owned by uid 65534 (a service user's venv) whose
`bin/python` creates a canary when run. A plan step `pip-install` into that env ran
`ENV/bin/python -m pip install …` as root: the env's owner (its python, any `.pth` in its
site-packages) had root. Probes already refused such an env; the runner now refuses the run
before it changes anything. Control: the same env owned by root is run.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from local_apply import apply_locally

from remedy.errors import Refused
from remedy.model import Facts, Step
from remedy.operations import PipInstall

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="an env owned by another user")


def _env(tmp_path: Path, owner: int) -> tuple[Path, Path]:
    tmp_path.chmod(0o755)
    env = tmp_path / "opt" / "venv"
    canary = tmp_path / "canary"
    bindir = env / "bin"
    bindir.mkdir(parents=True)
    (env / "lib" / "python3.12" / "site-packages").mkdir(parents=True)
    py = bindir / "python"
    py.write_text(f"#!/bin/sh\ntouch {canary}\nexit 0\n")
    py.chmod(0o755)
    for p in (
        env,
        bindir,
        py,
        env / "lib",
        env / "lib/python3.12",
        env / "lib/python3.12/site-packages",
    ):
        os.chown(p, owner, owner)
    return env, canary


def _run(tmp_path: Path, env: Path):
    facts = Facts(host="scratch", pythons=[{"path": str(env), "python": "3.12"}])
    step = Step(
        action="pip-x",
        title="pin a wheel",
        operation=PipInstall(python=str(env), packages={"nvidia-cuda-cccl": "13.0.85"}),
        probe="static",
    )
    return apply_locally(tmp_path, facts, [step])


def test_pip_into_an_env_another_user_owns_is_refused(tmp_path: Path):
    env, canary = _env(tmp_path, 65534)
    with pytest.raises(Refused, match=r"owned by nobody \(uid 65534\).*nothing was changed"):
        _run(tmp_path, env)
    assert not canary.exists(), "the env's python ran as root"
    state = tmp_path / "state" / "remedy"
    assert not (state / "lock.json").exists() and not list(state.rglob("journal.jsonl"))


def test_control_an_env_root_owns_is_run(tmp_path: Path):
    env, canary = _env(tmp_path, 0)
    _run(tmp_path, env)
    assert canary.exists(), "the step ran the env's python"


def test_the_exported_playbook_checks_the_interpreter_before_pip(tmp_path: Path):
    """The playbook's pip task runs ENV/bin/pip as root too: a task before it runs the same
    check (remedy.trust.trust_argv); run here for real on an env uid 65534 owns (refused,
    no canary) and on root's (passes)."""
    import subprocess
    import sys

    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from test_export_ansible import example_plan, load, walk_tasks

    from remedy.export.ansible import export_ansible
    from remedy.trust import trust_argv

    plan = example_plan("seed-sm120-pip-cu13")
    play = load(export_ansible(plan, verify="cheap"))
    blocks = [
        t["block"]
        for t in walk_tasks(play["tasks"])
        if "block" in t and str(t.get("name", "")).startswith("remedy step")
    ]
    pip_steps = [s for s in plan.steps if s.operation.op == "pip-install"]
    assert pip_steps
    for block in blocks:
        names = [str(t.get("name")) for t in block]
        pips = [k for k, t in enumerate(block) if "ansible.builtin.pip" in t]
        if not pips:
            continue
        k = next(k for k, n in enumerate(names) if "only an interpreter" in n)
        assert k < pips[0], names
        argv = [str(a) for a in block[k]["ansible.builtin.command"]["argv"]]
        py = pip_steps[0].operation.python + "/bin/python"
        assert argv == trust_argv([], [py]), "the task runs remedy's own trust check"
    # the check, for real
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    env, canary = _env(tmp_path / "a", 65534)
    r = subprocess.run(trust_argv([], [f"{env}/bin/python"]), capture_output=True, text=True)
    assert r.returncode == 3 and "owned by nobody" in r.stdout, (r.returncode, r.stdout)
    assert not canary.exists()
    env, _ = _env(tmp_path / "b", 0)
    assert subprocess.run(trust_argv([], [f"{env}/bin/python"])).returncode == 0
