"""A login-scope env value never names a tree another user controls (class 3, root's env).

The attack, for real: a `shell-env-cuda-home` step writes `CUDA_HOME=<prefix>` (and PATH
entries) into /etc/environment and /etc/profile.d, which root's own later sessions read. With
<prefix> a venv's toolkit another user owns (…/site-packages/nvidia/cu13), root's next CUDA
build ran that user's nvcc. The runner now refuses such a step before anything is written
(exit 5, like the other refusals); a root-owned prefix is accepted. A unit's drop-in is the
unit's own user's business and is not checked here.
"""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

import pytest

from remedy.errors import Refused
from remedy.executor.runner import Runner
from remedy.model import Facts, Plan, Step
from remedy.operations import SetEnv
from remedy.planner.plan import facts_digest
from remedy.transport import LocalTransport

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="a tree owned by another user")


def _toolkit(root: Path, owner: int, mode: int = 0o755) -> Path:
    """A fake toolkit ROOT/cu13 with bin/nvcc, every part of it owned by `owner`."""
    root.mkdir(parents=True, exist_ok=True)
    prefix = root / "cu13"
    (prefix / "bin").mkdir(parents=True)
    nvcc = prefix / "bin" / "nvcc"
    nvcc.write_text("#!/bin/sh\nexit 0\n")
    nvcc.chmod(0o755)
    for p in (prefix, prefix / "bin", nvcc):
        os.chown(p, owner, owner)
    prefix.chmod(mode)
    return prefix


def _check(tmp_path: Path, values: dict[str, str], unit: str | None = None) -> None:
    """The runner's pre-apply check (what `run` does before its first write), alone: a
    full apply of an accepted step would write this machine's real /etc."""
    tmp_path.chmod(0o755)
    facts = Facts(host="scratch")
    op = SetEnv(scope="dropin" if unit else "profile", unit=unit, name="cuda-home", set=values)
    step = Step(action="shell-env-cuda-home", title="set CUDA_HOME", operation=op,
                probe="static")  # fmt: skip
    plan = Plan(remedy_version="t", host="scratch", facts_digest=facts_digest(facts),
                facts=facts, target=facts.workload, steps=[step])  # fmt: skip
    t = LocalTransport(host="scratch", env={"XDG_STATE_HOME": str(tmp_path / "state")})

    async def unused(*_a, **_k):
        raise AssertionError("the check collects and probes nothing")

    asyncio.run(Runner(t, collect=unused, prober=unused)._check_executables(plan, 0))


def test_cuda_home_in_a_tree_another_user_owns_is_refused(tmp_path: Path):
    prefix = _toolkit(tmp_path / "venv", 65534)
    with pytest.raises(Refused, match=r"owned by nobody \(uid 65534\).*nothing was changed"):
        _check(tmp_path, {"CUDA_HOME": str(prefix)})


def test_a_path_entry_in_such_a_tree_is_refused(tmp_path: Path):
    prefix = _toolkit(tmp_path / "venv", 65534)
    path = f"/usr/local/sbin:/usr/bin:{prefix}/bin:/bin"
    with pytest.raises(Refused, match=r"owned by nobody"):
        _check(tmp_path, {"PATH": path})


def test_a_group_writable_directory_above_the_prefix_is_refused(tmp_path: Path):
    prefix = _toolkit(tmp_path / "shared", 0)
    (tmp_path / "shared").chmod(0o775)
    with pytest.raises(Refused, match=r"writable by group or others"):
        _check(tmp_path, {"CUDA_HOME": str(prefix)})


def test_a_link_to_such_a_tree_is_refused(tmp_path: Path):
    prefix = _toolkit(tmp_path / "venv", 65534)
    (tmp_path / "opt").mkdir()
    (tmp_path / "opt" / "cuda").symlink_to(prefix)
    with pytest.raises(Refused, match=r"owned by nobody"):
        _check(tmp_path, {"CUDA_HOME": str(tmp_path / "opt" / "cuda")})


def test_a_link_another_user_owns_is_refused(tmp_path: Path):
    """The link itself, in a sticky /tmp-like dir, could be re-pointed after the check."""
    prefix = _toolkit(tmp_path / "opt", 0)
    (tmp_path / "tmp").mkdir()
    (tmp_path / "tmp").chmod(0o1777)
    link = tmp_path / "tmp" / "cuda"
    link.symlink_to(prefix)
    os.lchown(link, 65534, 65534)
    with pytest.raises(Refused, match=r"link owned by uid 65534"):
        _check(tmp_path, {"CUDA_HOME": str(link)})


def test_a_missing_prefix_under_such_a_tree_is_refused(tmp_path: Path):
    """Its owner could create it after the check."""
    (tmp_path / "home").mkdir()
    os.chown(tmp_path / "home", 65534, 65534)
    with pytest.raises(Refused, match=r"owned by nobody"):
        _check(tmp_path, {"CUDA_HOME": str(tmp_path / "home" / "cuda-13.0")})


def test_control_a_root_owned_prefix_is_accepted(tmp_path: Path):
    prefix = _toolkit(tmp_path / "opt", 0)
    _check(tmp_path, {"CUDA_HOME": str(prefix), "PATH": f"{prefix}/bin:/usr/bin:/bin"})
    _check(tmp_path, {"CUDA_HOME": str(tmp_path / "opt" / "cuda-not-yet")})
    _check(tmp_path, {"CUDA_HOME": "/dev/null"})  # the bound "no toolkit" value (0666)


def test_control_a_unit_drop_in_is_not_checked(tmp_path: Path):
    """Service scope: a unit running as User=bob may use bob's toolkit (out of scope)."""
    prefix = _toolkit(tmp_path / "venv", 65534)
    _check(tmp_path, {"CUDA_HOME": str(prefix)}, unit="vllm.service")


# -- plan time: the planner does not offer such a prefix ------------------------------------

GPU = Path(__file__).resolve().parents[1] / "fixtures" / "gpu"
RECORDED = "/usr/local/cuda-13.0"  # the recorded H200 host's toolkit: CUDA_HOME=/dev/null there


def _plan_with_toolkit_at(tmp_path: Path, owner: int):
    """The recorded H200 facts (plan: shell-env-cuda-home prefix=/usr/local/cuda-13.0), with
    that toolkit moved to a real tree `owner` owns, its note from the real collector."""
    import json

    from remedy.evidence import scan_path
    from remedy.facts.collect import library
    from remedy.facts.sections import split_sections
    from remedy.facts.toolkits import build_toolkits, tk_call
    from remedy.knowledge.loader import load_knowledge
    from remedy.planner.plan import make_plan

    tmp_path.chmod(0o755)
    prefix = _toolkit(tmp_path / "venv", owner)
    (prefix / "version.json").write_text(json.dumps({"cuda_nvcc": {"version": "13.0.88"}}))
    token = "@@login-env@@"
    script = library(token) + tk_call(str(prefix), "", "", "test") + "m end\n"
    r = asyncio.run(LocalTransport("local").run(script, timeout=30))
    real = build_toolkits(split_sections(r.stdout.decode(), token))[0]
    data = json.loads((GPU / "h200-a-facts.json").read_text())
    tk = next(t for t in data["toolkits"] if t["prefix"] == RECORDED)
    tk.update(prefix=str(prefix), aliases=[], note=real.note)
    syms = scan_path(str(GPU / "h200-a-cuda-home-devnull-launch.log")).symptoms
    return prefix, make_plan(load_knowledge(), Facts.model_validate(data), syms)


def test_plan_does_not_offer_a_prefix_another_user_owns(tmp_path: Path):
    prefix, plan = _plan_with_toolkit_at(tmp_path, 65534)
    assert not [
        s for s in plan.steps if s.action == "shell-env-cuda-home"
        and s.params.get("prefix") == str(prefix)
    ], [(s.action, s.params) for s in plan.steps]  # fmt: skip
    rej = [r for r in plan.rejected if r.params.get("prefix") == str(prefix)]
    assert rej and rej[0].action == "shell-env-cuda-home", plan.rejected
    assert str(prefix) in rej[0].reason and "owned by nobody (uid 65534)" in rej[0].reason


def test_control_plan_offers_a_root_owned_prefix(tmp_path: Path):
    prefix, plan = _plan_with_toolkit_at(tmp_path, 0)
    assert [(s.action, s.params.get("prefix")) for s in plan.steps] == [
        ("shell-env-cuda-home", str(prefix))
    ]
