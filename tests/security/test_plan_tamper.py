"""Class 1: a saved plan is intent, not shell; an edited one is refused before anything runs.

Table-driven: each row edits one field of a real saved plan (made by `remedy plan --out` from
the seed-sm120-pip-cu13 example relabelled `localhost`), then runs the real CLI:
`remedy run --local --plan BAD --yes --json` and `remedy export BAD`. Each must refuse
(exit 5) with a message naming the field; nothing may execute: the edits that would act point
at a canary prefix in tmp_path (a lib64 link there is the canary), and remedy's state dir gets
no run, no journal and no lock. A valid saved plan still verifies and exports exactly as the
plan made in memory.
"""

from __future__ import annotations

import copy
import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml

from remedy.export.ansible import export_ansible
from remedy.knowledge.loader import load_knowledge
from remedy.model import Facts, Plan
from remedy.operations.verify import PlanRefused, verify_saved_plan
from remedy.planner.plan import facts_digest, make_plan, plan_digest

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "src" / "remedy" / "examples" / "seed-sm120-pip-cu13" / "facts.yaml"
REMEDY = [sys.executable, "-m", "remedy"]


def saved_plan() -> dict[str, Any]:
    data = yaml.safe_load(EXAMPLE.read_text())
    data["host"] = "localhost"
    plan = make_plan(load_knowledge(), Facts.model_validate(data))
    assert plan.status == "ok" and len(plan.steps) == 3
    return json.loads(plan.model_dump_json())


def _redigest(p: dict[str, Any]) -> None:
    """What a careful attacker does after an edit: recompute both digests."""
    m = Plan.model_validate(p)
    p["facts_digest"] = facts_digest(m.facts)
    p["plan_digest"] = plan_digest(m.model_copy(update={"facts_digest": p["facts_digest"]}))


def _canary_layout(canary: Path) -> dict[str, Any]:
    return {
        "op": "link-layout",
        "prefix": str(canary),
        "links": [{"path": "lib64", "target": "lib"}],
    }


def t_params(p, c):
    p["steps"][0]["params"]["release"] = "13.2"


def t_op_param(p, c):
    p["steps"][2]["operation"]["packages"]["nvidia-cuda-cccl"] = "99.0.0"


def t_op_param_redigested(p, c):
    p["steps"][1]["operation"]["prefix"] = str(c)
    _redigest(p)


def t_op_name(p, c):
    p["steps"][0]["operation"] = _canary_layout(c)
    _redigest(p)


def t_op_index(p, c):
    p["steps"][2]["operation"]["extra_index_url"] = "https://flashinfer.ai/whl/cu130"
    _redigest(p)


def t_action(p, c):
    p["steps"][1]["action"] = "upgrade-driver"


def t_added_step(p, c):
    extra = copy.deepcopy(p["steps"][1])
    extra["operation"] = _canary_layout(c)
    p["steps"].append(extra)
    _redigest(p)


def t_status(p, c):
    p["status"] = "partial"


def t_digest(p, c):
    p["plan_digest"] = "sha256:" + "0" * 64


def t_facts(p, c):
    p["facts"]["toolkits"][0]["pip"]["nvidia-nvvm"] = "13.0.88"


def t_facts_redigested(p, c):
    p["facts"]["toolkits"][0]["prefix"] = str(c)
    _redigest(p)


def t_facts_digest(p, c):
    p["facts_digest"] = "sha256:" + "1" * 64


def t_knowledge(p, c):
    p["knowledge_version"] = "sha256:" + "2" * 64


def t_verification(p, c):
    p["verification"] = p["verification"][:1]
    _redigest(p)


# (id, edit, the field the refusal must name)
TAMPERS: list[tuple[str, Callable[[dict, Path], None], str]] = [
    ("step params", t_params, "steps[0].params.release"),
    ("operation param", t_op_param, "steps[2].operation.packages.nvidia-cuda-cccl"),
    ("operation param, digests recomputed", t_op_param_redigested, "steps[1].operation.prefix"),
    ("operation name, digests recomputed", t_op_name, "steps[0].operation.op"),
    ("package index added", t_op_index, "steps[2].operation.extra_index_url"),
    ("action name", t_action, "steps[1].action"),
    ("added step", t_added_step, "steps[3]"),
    ("status", t_status, "status"),
    ("plan digest", t_digest, "plan_digest"),
    ("facts", t_facts, "facts_digest"),
    ("facts, digests recomputed", t_facts_redigested, "steps[0].operation"),
    ("facts digest", t_facts_digest, "facts_digest"),
    ("knowledge version", t_knowledge, "knowledge_version"),
    ("verification, digests recomputed", t_verification, "verification[1]"),
]


@pytest.fixture(scope="module")
def good() -> dict[str, Any]:
    return saved_plan()


def _env(tmp: Path) -> dict[str, str]:
    return {**os.environ, "XDG_STATE_HOME": str(tmp / "state"), "NO_COLOR": "1"}


def _nothing_ran(tmp: Path, canary: Path) -> None:
    assert not (canary / "lib64").is_symlink() and not (canary / "lib64").exists()
    state = tmp / "state" / "remedy"
    assert not (state / "runs").exists() or not any((state / "runs").iterdir())
    assert not (state / "lock.json").exists()


@pytest.mark.parametrize(("name", "edit", "field"), TAMPERS, ids=[t[0] for t in TAMPERS])
def test_tampered_plan_is_refused_naming_the_field_and_nothing_runs(
    tmp_path, good, name, edit, field
):
    canary = tmp_path / "canary-prefix"
    (canary / "lib").mkdir(parents=True)
    bad = copy.deepcopy(good)
    edit(bad, canary)
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(bad))
    env = _env(tmp_path)

    run = subprocess.run(
        [*REMEDY, "run", "--local", "--plan", str(path), "--yes", "--json"],
        capture_output=True, text=True, env=env, timeout=300,
    )  # fmt: skip
    assert run.returncode == 5, (name, run.returncode, run.stderr[-1500:])
    assert "remedy: refused:" in run.stderr and field in run.stderr, (name, run.stderr[-1500:])
    assert json.loads(run.stdout)["outcome"] == "refused"
    assert "Traceback" not in run.stderr
    _nothing_ran(tmp_path, canary)

    exp = subprocess.run(
        [*REMEDY, "export", str(path), "--out", str(tmp_path / "pb.yml")],
        capture_output=True, text=True, env=env, timeout=300,
    )  # fmt: skip
    assert exp.returncode == 5, (name, exp.returncode, exp.stderr[-1500:])
    assert field in exp.stderr and "Traceback" not in exp.stderr, (name, exp.stderr[-1500:])
    assert not (tmp_path / "pb.yml").exists()
    _nothing_ran(tmp_path, canary)


def test_a_valid_saved_plan_verifies_and_exports_exactly_as_made(good):
    import datetime

    plan = Plan.model_validate(good)
    verify_saved_plan(plan, load_knowledge())  # no exception
    again = Plan.model_validate_json(plan.model_dump_json())
    now = datetime.datetime(2026, 1, 1, tzinfo=datetime.timezone.utc)
    assert export_ansible(again, now=now) == export_ansible(plan, now=now)
    # the file holds the operation and its parameters, never shell
    assert "commands" not in good["steps"][0] and "touches" not in good["steps"][0]
    assert good["steps"][0]["operation"]["op"] == "pip-install"


@pytest.mark.parametrize(
    ("edit", "why"),
    [
        (lambda op: op.update(python="/root/venv/../../etc"), "normalised"),
        (lambda op: op.update(packages={"nvidia-cuda-cccl; touch /tmp/x": "1"}), "package"),
        (lambda op: op.update(packages={"torch": "1.0; id"}), "version"),
        (lambda op: op.update(index_url="https://evil.example/simple"), "package index"),
    ],
)
def test_operation_parameters_are_validated_when_a_plan_is_loaded(good, edit, why):
    bad = copy.deepcopy(good)
    edit(bad["steps"][0]["operation"])
    with pytest.raises(ValueError, match=why):
        Plan.model_validate(bad)


def test_paths_cannot_escape_with_dotdot(good):
    """Export's paths come from typed parameters validated as resolved paths: a unit name or
    a link path with `..` is refused when the plan loads, not compared as a string later."""
    from remedy.operations import LinkLayout, SetEnv

    with pytest.raises(ValueError, match="relative path inside"):
        LinkLayout(prefix="/opt/cu13", links=[{"path": "../../etc/cron.d/x", "target": "lib"}])
    with pytest.raises(ValueError, match="not a systemd unit name"):
        SetEnv(scope="dropin", unit="../../../etc/cron.d/x.service", name="x", set={"A": "b"})
    with pytest.raises(ValueError, match="slug"):
        SetEnv(scope="profile", name="../../root/.bashrc", set={"A": "b"})


def test_refusal_is_before_any_connection(good, tmp_path):
    """`run HOST --plan` with an edited plan is refused before SSH is tried: an unreachable
    host name still gives the refusal (exit 5), not 'unreachable' (exit 4)."""
    bad = copy.deepcopy(good)
    t_op_param(bad, tmp_path)
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(bad))
    r = subprocess.run(
        [*REMEDY, "run", "no-such-host.invalid", "--plan", str(path), "--yes"],
        capture_output=True, text=True, env=_env(tmp_path), timeout=300,
    )  # fmt: skip
    assert r.returncode == 5 and "steps[2].operation" in r.stderr, r.stderr[-1000:]


def test_verify_names_the_field_in_process(good):
    bad = copy.deepcopy(good)
    bad["steps"][2]["operation"]["packages"]["nvidia-cuda-cccl"] = "99.0.0"
    with pytest.raises(PlanRefused) as e:
        verify_saved_plan(Plan.model_validate(bad), load_knowledge())
    assert e.value.diff == [
        'steps[2].operation.packages.nvidia-cuda-cccl: saved "99.0.0", planned "13.0.85"'
    ]


@pytest.mark.sandbox
@pytest.mark.slow
def test_over_ssh_a_tampered_plan_changes_nothing_on_the_host(tmp_path):
    """The real path over SSH: a plan made with `remedy plan --host` on a seed-chain-a
    sandbox host, one operation swapped for a link into a canary prefix on that host (both
    digests recomputed): `remedy run HOST --plan` refuses it naming the field; the host has
    no canary link, no run in its history and is byte-identical."""
    sys.path.insert(0, str(ROOT / "tests"))
    import sandbox_hosts as sh

    try:
        sh.doctor()
    except sh.SandboxUnavailable as e:
        pytest.skip(str(e))
    h = sh.up("seed-chain-a", "trust-plan-t")
    try:
        r = h.remedy("plan", "--host", h.name, "--out", str(tmp_path / "p.json"), timeout=600)
        assert r.returncode == 0, r.stderr[-1500:]
        assert h.ssh("mkdir -p /root/canary-prefix/lib")[0] == 0
        before = h.snapshot()
        plan = json.loads((tmp_path / "p.json").read_text())
        t_op_name(plan, Path("/root/canary-prefix"))
        bad = tmp_path / "bad.json"
        bad.write_text(json.dumps(plan))
        r = h.remedy("run", h.name, "--plan", str(bad), "--yes", "--json", timeout=600)
        assert r.returncode == 5 and "steps[0].operation.op" in r.stderr, r.stderr[-1500:]
        rc, out = h.ssh("test -e /root/canary-prefix/lib64 || test -L /root/canary-prefix/lib64")
        assert rc != 0, "the canary link was created"
        assert h.history() == []
        after = h.snapshot()
        assert sh.same(before, after), sh.snapshot_diff(before, after)
    finally:
        sh.down(h)


def test_a_selection_is_recorded_and_replayed_not_trusted():
    """`remedy plan --rules/--consumers` keeps a subset of the steps and verification; the
    selection is part of the plan (and its digest), so the saved subset verifies, while a
    selection widened by hand, or steps dropped without one, are refused."""
    data = yaml.safe_load(EXAMPLE.read_text())
    data["host"] = "localhost"
    kb = load_knowledge()
    plan = make_plan(
        kb, Facts.model_validate(data), rules=["cccl-complete"], consumers=["flashinfer-jit"]
    )
    assert [s.action for s in plan.steps] == ["pip-install-cccl"]
    assert [v.consumer for v in plan.verification] == ["flashinfer-jit"]
    verify_saved_plan(Plan.model_validate_json(plan.model_dump_json()), kb)
    wider = json.loads(plan.model_dump_json())
    wider["scope_rules"] = ["cccl-complete", "toolkit-links-cudart"]
    _redigest(wider)
    with pytest.raises(PlanRefused, match=r"field steps\[0\]"):
        verify_saved_plan(Plan.model_validate(wider), kb)
    dropped = json.loads(plan.model_dump_json())
    dropped["scope_rules"] = None
    _redigest(dropped)
    with pytest.raises(PlanRefused, match="steps"):
        verify_saved_plan(Plan.model_validate(dropped), kb)
