"""A new rule with a new environment fix is a data change (issue 20).

Two YAML files in a temporary knowledge directory (a copy of the shipped one) add a rule and
the action that repairs it; remedy is pointed there with REMEDY_KNOWLEDGE_DIR /
REMEDY_PLAYBOOKS_DIR and nothing else changes: `plan` proposes the drop-in, `export` turns it
into an Ansible copy task (no per-action Python mapper), and `run` on a real sandbox host with
systemd writes it, daemon-reloads, re-checks the rule on re-collected facts, and rolls it
back when the server's verification still fails on the seed's other faults.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
VAR, VALUE = "CUDA_MODULE_LOADING", "LAZY"
RULE_ID, ACTION_ID = "cuda-module-loading-lazy", "env-cuda-module-loading-lazy"

RULE = f"""\
rules:
  - id: {RULE_ID}
    title: the server loads CUDA modules lazily
    scope: workload
    subject: "'{VAR}'"
    when: "workload.service or workload.launch"
    holds: "env.get('{VAR}') == '{VALUE}'"
    message: "{VAR} is {{{{ env.get('{VAR}') or 'unset' }}}} in the server's environment: every kernel of every loaded library is loaded at start"
    repairs: [{ACTION_ID}]
    source: {{doc: "https://docs.nvidia.com/cuda/cuda-c-programming-guide/index.html#lazy-loading", note: "test data: a rule added as YAML only"}}
"""

ACTION = f"""\
actions:
  - id: {ACTION_ID}
    title: "Set {VAR}={VALUE} for the server"
    repairs: [{RULE_ID}]
    when: "workload.service"
    bind: {{}}
    effects:
      - env: {{{VAR}: "'{VALUE}'"}}
    operation:
      op: env
      scope: "'dropin'"
      unit: "workload.service"
      name: "'cuda-module-loading'"
      set: "{{'{VAR}': '{VALUE}'}}"
    probe: static
    cost: {{steps: 1}}
    risk: low
"""


@pytest.fixture
def kdirs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path]:
    k, p = tmp_path / "knowledge", tmp_path / "playbooks"
    shutil.copytree(ROOT / "knowledge", k)
    shutil.copytree(ROOT / "playbooks", p)
    (k / "rules-module-loading.yaml").write_text(RULE)
    (p / "module-loading.yaml").write_text(ACTION)
    monkeypatch.setenv("REMEDY_KNOWLEDGE_DIR", str(k))
    monkeypatch.setenv("REMEDY_PLAYBOOKS_DIR", str(p))
    return k, p


class _Loader(yaml.SafeLoader):
    """Ansible's !unsafe tag read as the plain string it marks."""


_Loader.add_constructor("!unsafe", lambda loader, node: loader.construct_scalar(node))


def _modules(node: object, name: str):
    """Every use of an Ansible module, however deep in blocks."""
    if isinstance(node, dict):
        if name in node:
            yield node[name]
        for v in node.values():
            yield from _modules(v, name)
    elif isinstance(node, list):
        for v in node:
            yield from _modules(v, name)


def remedy(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "remedy", *args], capture_output=True, text=True, cwd=ROOT
    )


def test_plan_and_export_use_a_rule_added_as_yaml(kdirs, tmp_path):
    assert remedy("check").returncode == 0
    out = tmp_path / "plan.json"
    r = remedy("plan", "--example", "seed-sm120-system-cuda128", "--json")
    assert r.returncode in (0, 3), r.stderr[-2000:]
    plan = json.loads(r.stdout)
    assert RULE_ID in {f["rule"] for f in plan["findings"]}
    step = next(s for s in plan["steps"] if s["action"] == ACTION_ID)
    assert step["operation"]["op"] == "env" and RULE_ID in step["fixes"]
    assert plan["evaluation_errors"] == []
    # export: only the new rule (a selection the plan records), so the playbook is about it
    dropin = "/etc/systemd/system/sglang-k26.service.d/"
    r = remedy(
        "plan", "--example", "seed-sm120-system-cuda128", "--rules", RULE_ID, "--out", str(out)
    )
    assert r.returncode == 0, r.stderr[-2000:]
    assert [s["action"] for s in json.loads(out.read_text())["steps"]] == [ACTION_ID]
    r = remedy("export", str(out))
    assert r.returncode == 0, r.stderr[-2000:]
    copies = list(_modules(yaml.load(r.stdout, Loader=_Loader), "ansible.builtin.copy"))
    assert any(
        c.get("dest", "").startswith(dropin) and f'"{VAR}={VALUE}"' in c.get("content", "")
        for c in copies
    ), copies
    # the same plan without the added knowledge: the action is unknown to export
    os.environ.pop("REMEDY_PLAYBOOKS_DIR")
    os.environ.pop("REMEDY_KNOWLEDGE_DIR")
    assert remedy("export", str(out)).returncode != 0


@pytest.mark.slow
@pytest.mark.systemd
def test_run_uses_a_rule_added_as_yaml_on_a_real_host(kdirs, tmp_path):
    from sandbox_hosts import SandboxUnavailable, doctor, down, up

    try:
        doc = doctor()
    except SandboxUnavailable as e:
        pytest.skip(str(e))
    if not doc.get("systemd_tier"):
        pytest.skip(f"sandbox systemd tier not ready: {doc.get('missing')}")
    unit = "sglang-k26.service"
    h = up("seed-chain-b", "rad")
    try:
        _, before = h.ssh(f"systemctl show -p Environment {unit}")
        assert VAR not in before
        out = tmp_path / "p.json"
        # the sandbox stages other faults (seed-chain-b): this test is about the new rule alone
        # (a selection the plan records), verified cheaply (no launch: restart pending)
        r = h.remedy(
            "plan",
            "--host",
            h.name,
            "--service",
            unit,
            "--rules",
            RULE_ID,
            "--out",
            str(out),
            timeout=600,
        )
        assert r.returncode == 0, r.stderr[-2000:]
        plan = json.loads(out.read_text())
        assert [s["action"] for s in plan["steps"]] == [ACTION_ID], plan["steps"]
        r = h.remedy("run", h.name, "--plan", str(out), "--verify", "cheap", "--yes", "--json")
        rep = json.loads(r.stdout)
        # the step is the new action, applied, and its static re-check passed on facts the
        # executor re-collected from the host (systemd's own view of the unit's environment)
        assert [(s["action"], s["probe_ok"]) for s in rep["steps"]] == [(ACTION_ID, True)], rep
        # seed-chain-b's other staged faults (SM 12.x under CUDA 12.8) still fail the server's
        # cheap verification, so the run rightly does not keep the change: rolled back whole
        assert rep["outcome"] == "rolled-back", json.dumps(rep)[:3000]
        assert "SM 12.x requires CUDA >= 12.9" in rep["message"], rep["message"]
        _, back = h.ssh(f"systemctl show -p Environment {unit}")
        assert back == before
    finally:
        down(h)
