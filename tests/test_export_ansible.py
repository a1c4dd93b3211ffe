"""`remedy export --format ansible`: a plan as a playbook that `ansible-playbook` runs.

Unit tests (no host): the YAML is valid for PyYAML and for Ansible (--syntax-check), has the
handlers, maps every step to the modules the mapping table promises, escapes hostile values
(proven by running ansible-playbook --check on localhost with a plan whose paths and titles
carry Jinja: nothing is evaluated), refuses unknown and manual actions by name.

Sandbox test (marked sandbox): on one seed-chain-a host, the exported playbook run by
ansible-playbook: --check --diff leaves the host byte-identical; the real run fixes the chain
(`remedy plan --host` then finds none of the chain's rules); a second run reports changed=0.
With REMEDY_LONG=1 also: a plan whose last step cannot install rolls back (rescue) to
byte-identical (+40 s, kept out of the default run's budget).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
import yaml

from remedy.export import ExportError, export_plan
from remedy.export.ansible import map_step
from remedy.knowledge.loader import load_knowledge
from remedy.model import Facts, Plan
from remedy.operations import BUILTIN, OPERATIONS, Manual, Operation
from remedy.operations.verify import PlanRefused
from remedy.planner.plan import make_plan
from remedy.units.dropin import render_dropin

REPO = Path(__file__).resolve().parents[1]
EXAMPLES = REPO / "src" / "remedy" / "examples"
BIN = Path(sys.executable).parent
PLAYBOOK = shutil.which("ansible-playbook", path=str(BIN)) or shutil.which("ansible-playbook")
needs_ansible = pytest.mark.skipif(
    PLAYBOOK is None, reason="ansible-core not installed (pip install -e .[dev])"
)


class _Loader(yaml.SafeLoader):
    """PyYAML with Ansible's !unsafe tag kept visible (as Tagged)."""


class Tagged(str):
    pass


_Loader.add_constructor("!unsafe", lambda loader, node: Tagged(loader.construct_scalar(node)))


def example_plan(name: str) -> Plan:
    facts = Facts.model_validate(yaml.safe_load((EXAMPLES / name / "facts.yaml").read_text()))
    return make_plan(load_knowledge(), facts)


def load(text: str) -> dict[str, Any]:
    doc = yaml.load(text, Loader=_Loader)  # noqa: S506 - a SafeLoader subclass
    assert isinstance(doc, list) and len(doc) == 1
    return doc[0]


def walk_tasks(tasks: list[dict[str, Any]]):
    for t in tasks:
        yield t
        for key in ("block", "rescue", "always"):
            if key in t:
                yield from walk_tasks(t[key])


def strings(node: Any):
    if isinstance(node, str):
        yield node
    elif isinstance(node, list):
        for x in node:
            yield from strings(x)
    elif isinstance(node, dict):
        for k, v in node.items():
            yield from strings(k)
            yield from strings(v)


# --------------------------------------------------------------------------------------------
# unit tests
# --------------------------------------------------------------------------------------------


def test_pip_plan_maps_every_step_with_handlers_preconditions_and_probes():
    plan = example_plan("seed-sm120-pip-cu13")
    assert [s.action for s in plan.steps] == [
        "pip-align-cuda-wheels",
        "link-layout-symlinks",
        "pip-install-cccl",
    ]
    play = load(export_plan(plan, "ansible"))
    assert play["hosts"] == "all" and play["gather_facts"] is False
    assert play["vars"]["remedy_plan"]["facts_digest"] == plan.facts_digest
    assert [h["name"] for h in play["handlers"]][0] == "remedy: systemd daemon-reload"
    assert play["handlers"][0]["ansible.builtin.systemd"] == {"daemon_reload": True}
    login, login_env, trust, pre, _, assert_, main = play["tasks"]
    assert "ansible.builtin.raw" in login and "remedy_env" in login_env["ansible.builtin.set_fact"]
    assert pre["check_mode"] is False and pre["changed_when"] is False
    # the interpreters the precondition runs are checked before it (as root, in check mode)
    assert trust["check_mode"] is False and "/root/venv/bin/python" in trust[
        "ansible.builtin.command"]["argv"]  # fmt: skip
    assert "remedy_pre.problems | length == 0" in assert_["ansible.builtin.assert"]["that"]
    step_blocks = [t for t in main["block"] if str(t.get("name", "")).startswith("remedy step")]
    assert [b["name"] for b in step_blocks] == [
        f"remedy step {i + 1}: {s.title}" for i, s in enumerate(plan.steps)
    ]
    assert all(b["when"] == f"{i + 1} not in remedy_pre.done" for i, b in enumerate(step_blocks))
    mods = [[k for k in t if k.startswith("ansible.builtin.")] for t in step_blocks[0]["block"]]
    assert ["ansible.builtin.pip"] in mods
    pip = next(
        t["ansible.builtin.pip"] for t in step_blocks[0]["block"] if "ansible.builtin.pip" in t
    )
    wheels = plan.steps[0].touches[0].detail.split()
    assert pip["name"] == wheels and pip["extra_args"] == "--no-deps"
    assert pip["executable"] == "/root/venv/bin/pip"
    links = [t["ansible.builtin.file"] for t in step_blocks[1]["block"]
             if t.get("ansible.builtin.file", {}).get("state") == "link"]  # fmt: skip
    prefix = plan.steps[1].params["prefix"]
    assert {(x["path"], x["src"]) for x in links} == {
        (f"{prefix}/lib64", "lib"),
        (f"{prefix}/lib/libcudart.so", "libcudart.so.13"),
    }
    assert all(x["force"] is False for x in links)
    stub = next(t for t in step_blocks[1]["block"] if "ansible.builtin.shell" in t)
    assert stub["ansible.builtin.shell"]["creates"] == f"{prefix}/lib/stubs/libcuda.so"
    # the rescue undoes each changing task; verification comes after flush_handlers
    assert any(t.get("meta") == "flush_handlers" for t in main["block"])
    verify = next(t for t in main["block"] if "verify" in str(t.get("name")))
    assert verify["when"] == "not ansible_check_mode and remedy_verify | bool"
    probes = [t["name"] for t in verify["block"]]
    assert probes == [f"remedy verify: {s.probe}" for s in plan.steps]
    # undone in reverse: step 3's new package goes, then step 1's pins return to the plan's
    undo_pip = [t["ansible.builtin.pip"] for t in main["rescue"] if "ansible.builtin.pip" in t]
    assert undo_pip == [
        {"name": ["nvidia-cuda-cccl"], "executable": "/root/venv/bin/pip", "state": "absent"},
        {"name": ["nvidia-cuda-nvcc==13.2.78", "nvidia-nvvm==13.3.73", "nvidia-cuda-crt==13.2.78"],
         "executable": "/root/venv/bin/pip", "extra_args": "--no-deps"},
    ]  # fmt: skip
    assert main["rescue"][-1]["ansible.builtin.fail"]


def test_service_plan_writes_the_dropin_remedy_writes_and_notifies_handlers():
    plan = example_plan("seed-sm120-system-cuda128")
    assert [s.action for s in plan.steps] == ["apt-install-cuda-toolkit", "service-env-cuda-home"]
    play = load(export_plan(plan, "ansible"))
    tasks = list(walk_tasks(play["tasks"]))
    apt = next(t["ansible.builtin.apt"] for t in tasks if "ansible.builtin.apt" in t)
    assert apt == {"name": plan.steps[0].touches[0].detail.split(), "state": "present"}
    copy_ = next(t for t in tasks if "ansible.builtin.copy" in t
                 and str(t["ansible.builtin.copy"]["dest"]).endswith(".conf"))  # fmt: skip
    c = copy_["ansible.builtin.copy"]
    assert c["dest"] == "/etc/systemd/system/sglang-k26.service.d/50-remedy-cuda-home.conf"
    assert c["content"] == render_dropin({"CUDA_HOME": "/usr/local/cuda-13.0"}, [])
    assert c["backup"] is True
    assert copy_["notify"] == ["remedy: systemd daemon-reload", "remedy: restart the service"]
    restart = play["handlers"][1]
    assert restart["ansible.builtin.systemd"] == {
        "name": "sglang-k26.service",
        "state": "restarted",
    }
    assert restart["when"] == "remedy_restart | bool"
    rescue = next(t for t in play["tasks"] if "rescue" in t)["rescue"]
    assert any(t.get("ansible.builtin.systemd") == {"daemon_reload": True} for t in rescue)


def test_edited_actions_and_manual_operations_are_refused_by_name():
    plan = example_plan("seed-sm120-pip-cu13")
    bad = plan.model_copy(deep=True)
    bad.steps[1].action = "frobnicate-the-toolkit"
    with pytest.raises(PlanRefused, match=r"field steps\[1\]\.action"):
        export_plan(bad, "ansible")
    # a manual step (a driver upgrade) has no playbook form: refused with its reason
    step = plan.steps[1].model_copy(update={"operation": Manual(text="x", kind="driver")})
    with pytest.raises(ExportError, match="step 2.*not exported: a driver upgrade.*manual"):
        map_step(plan, 1, step, plan.facts.model_dump())
    with pytest.raises(ExportError, match="unknown export format 'chef'"):
        export_plan(plan, "chef")
    # every operation either renders its own tasks or says why a playbook must not automate it
    for name in BUILTIN:
        cls = OPERATIONS[name]
        has_tasks = cls.ansible is not Operation.ansible
        assert has_tasks or cls.not_exported or name == "manual", name
    kb = load_knowledge()
    assert all(ca.operation or ca.action.masks for ca in kb.actions.values())


def test_damaged_plan_is_refused():
    plan = example_plan("seed-sm120-pip-cu13")
    bad = plan.model_copy(deep=True)
    bad.facts.toolkits[0].nvcc_release = "13.0"
    with pytest.raises(PlanRefused, match="facts_digest"):
        export_plan(bad, "ansible")


def test_precondition_script_refuses_a_host_in_neither_state_and_skips_done_steps(tmp_path):
    """The script the playbook runs first, run here on this machine against this venv."""
    from importlib import metadata

    from remedy.export.ansible import PRECHECK

    have = metadata.version("PyYAML")
    (tmp_path / "lib").mkdir()
    (tmp_path / "lib64").write_text("a file where the plan wants a link")
    os.symlink("lib", tmp_path / "done64")
    venv = sys.prefix

    def run(checks: list[dict[str, Any]]) -> dict[str, Any]:
        spec = {"steps": [{"index": 1, "checks": checks}]}
        r = subprocess.run([sys.executable, "-c", PRECHECK, json.dumps(spec)],
                           capture_output=True, text=True, timeout=60)  # fmt: skip
        assert r.returncode == 0, r.stderr
        return json.loads(r.stdout)

    pin = {"name": "PyYAML", "before": "0.0.1", "after": "0.0.2"}
    res = run([{"kind": "packages", "python": venv, "pins": [pin]}])
    assert res["done"] == [] and res["problems"] == [
        f"step 1: PyYAML in {venv} is {have}; the plan was made from 0.0.1 and would install 0.0.2"
    ]
    assert run([{"kind": "packages", "python": venv, "pins": [{**pin, "before": have}]}]) == {
        "problems": [], "done": [],
    }  # fmt: skip
    assert run([{"kind": "packages", "python": venv, "pins": [{**pin, "after": have}]}]) == {
        "problems": [], "done": [1],
    }  # fmt: skip
    res = run([{"kind": "link", "path": str(tmp_path / "lib64"), "target": "lib"}])
    assert res["done"] == [] and "exists and is not a link to lib" in res["problems"][0]
    assert run([{"kind": "link", "path": str(tmp_path / "done64"), "target": "lib"}])["done"] == [1]
    res = run([{"kind": "dir", "path": str(tmp_path / "gone"), "what": "prefix"}])
    assert res["problems"] == [f"step 1: {tmp_path}/gone is not a directory (the plan's prefix)"]


HOSTILE = "{{ lookup('pipe', 'touch PWNED') }}{% raw %}x{% endraw %}"


def hostile_plan(root: Path, host: str = HOSTILE) -> Plan:
    """The plan for a host whose pip toolkit lives under a directory whose name carries Jinja
    (a host's paths are its data) and whose wheels are aligned already: remedy plans the lib64
    layout step only."""
    data = yaml.safe_load((EXAMPLES / "seed-sm120-pip-cu13" / "facts.yaml").read_text())
    tk = data["toolkits"][0]
    wheels = {"nvidia-cuda-nvcc": "13.0.88", "nvidia-nvvm": "13.0.88", "nvidia-cuda-crt": "13.0.88",
              "nvidia-cuda-runtime": "13.0.96", "nvidia-cuda-cccl": "13.0.85"}  # fmt: skip
    tk.update(nvcc_version="13.0.88", nvcc_release="13.0", ptxas_release="13.0",
              cicc_release="13.0", pip=wheels, cccl={"present": True, "nv_target": True,
              "nv_detail": True, "include_dir": "include/cccl"})  # fmt: skip
    data["pythons"][0]["packages"].update(wheels)
    old = tk["prefix"]
    new = str(root / f"cu13 {HOSTILE}")
    facts = Facts.model_validate(json.loads(json.dumps(data).replace(old, new)))
    facts = facts.model_copy(update={"host": host})
    plan = make_plan(load_knowledge(), facts)
    assert [s.action for s in plan.steps] == ["link-layout-symlinks"]
    assert plan.steps[0].params["prefix"] == new
    return plan


def test_hostile_values_are_never_templated_yaml():
    plan = hostile_plan(Path("/srv"))
    play = load(export_plan(plan, "ansible"))
    for s in strings(play):
        if HOSTILE in s or "lookup(" in s:
            assert isinstance(s, Tagged), s  # every string carrying host data is !unsafe
    # and the comments cannot be broken out of
    bad = hostile_plan(Path("/srv"), host="x\n- hosts: all\n  tasks: []")
    assert load(export_plan(bad, "ansible"))["vars"]["remedy_plan"]["host"].startswith("x\n")


def check_run_on_localhost(pb: Path, cwd: Path, **env: str) -> subprocess.CompletedProcess[str]:
    """ansible-playbook --check --diff of pb on localhost (local connection, this python)."""
    env = {**os.environ, "ANSIBLE_NOCOLOR": "1", "ANSIBLE_LOCALHOST_WARNING": "0", **env}
    return subprocess.run(
        [PLAYBOOK, "-i", "localhost,", "-c", "local", "--check", "--diff", str(pb),
         "-e", f"ansible_python_interpreter={sys.executable}"],
        capture_output=True, text=True, timeout=300, cwd=cwd, env=env,
    )  # fmt: skip


@needs_ansible
def test_ansible_runs_the_hostile_playbook_in_check_mode_and_evaluates_nothing(tmp_path):
    """ansible-playbook --check --diff on localhost: the precondition passes (the directory
    exists), every step task runs in check mode with the hostile names and paths, and neither
    the pipe lookup nor anything else was evaluated; nothing was created."""
    plan = hostile_plan(tmp_path)
    prefix = Path(plan.steps[0].params["prefix"])
    (prefix / "lib").mkdir(parents=True)
    (prefix / "lib" / "libcudart.so.13").write_bytes(b"")  # what the links point at
    pb = tmp_path / "pb.yml"
    pb.write_text(export_plan(plan, "ansible"))
    syn = subprocess.run([PLAYBOOK, "--syntax-check", "-i", "localhost,", str(pb)],
                         capture_output=True, text=True, timeout=120)  # fmt: skip
    assert syn.returncode == 0, syn.stdout + syn.stderr
    before = sorted(str(p) for p in tmp_path.rglob("*"))
    r = check_run_on_localhost(pb, tmp_path)
    out = r.stdout + r.stderr
    assert r.returncode == 0, out[-3000:]
    assert "PWNED" in out and "lookup(" in out  # shown literally
    assert not (tmp_path / "PWNED").exists() and not Path("PWNED").exists()
    assert sorted(str(p) for p in tmp_path.rglob("*")) == before
    recap = re.search(r"ok=(\d+)\s+changed=(\d+)\s+unreachable=0\s+failed=0", out)
    assert recap and int(recap.group(2)) >= 3, out[-1500:]  # 2 links + the stub would change


def _cli(args: list[str], monkeypatch: Any, stdin: str = "") -> tuple[int, str, str]:
    import io

    from remedy.cli import main

    out, err = io.StringIO(), io.StringIO()
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(stdin.encode())))
    monkeypatch.setattr(sys, "stdout", out)
    monkeypatch.setattr(sys, "stderr", err)
    with pytest.raises(SystemExit) as e:
        main(args)
    return int(e.value.code or 0), out.getvalue(), err.getvalue()


def test_cli_export_stdin_file_and_errors(tmp_path, monkeypatch):
    plan = example_plan("seed-sm120-pip-cu13")
    src = tmp_path / "plan.json"
    src.write_text(plan.model_dump_json())
    rc, out, err = _cli(["export", "-", "--verify", "full"], monkeypatch, src.read_text())
    assert rc == 0, err
    play = load(out)
    assert play["vars"]["remedy_plan"]["verify"] == "full"
    # full adds the plan's final builds; a GPU-only probe falls back to its build, and says so
    main = next(t for t in play["tasks"] if "rescue" in t)
    names = [t["name"] for t in next(t for t in main["block"] if "verify" in t["name"])["block"]]
    assert "remedy verify: sglang-jit-build (sglang-jit-kernel)" in names
    assert "remedy verify: flashinfer-jit-build (flashinfer-jit)" in names
    notes = play["vars"]["remedy_plan"]["not_verified"]
    assert any(n.startswith("jit-run-probe (flashinfer-jit) not exported") for n in notes), notes
    pb = tmp_path / "pb.yml"
    rc, out, err = _cli(["export", "--format", "ansible", str(src), "--out", str(pb)], monkeypatch)
    assert rc == 0 and out == "" and load(pb.read_text())["tasks"], err
    rc, out, err = _cli(["export", "--format", "salt", str(src)], monkeypatch)
    assert rc == 2 and "unknown export format 'salt'" in err and "Traceback" not in err
    rc, out, err = _cli(["export", "-"], monkeypatch, "{}")
    assert rc == 2 and "not a saved remedy plan" in err
    rc, out, err = _cli(["export", str(tmp_path / "missing.json")], monkeypatch)
    assert rc == 2 and "cannot read" in err


# --------------------------------------------------------------------------------------------
# sandbox: ansible-playbook against a real seed-chain-a host
# --------------------------------------------------------------------------------------------


def _inventory(h: Any, path: Path) -> Path:
    rec = h.rec
    args = (f"-o UserKnownHostsFile={rec['known_hosts']} -o StrictHostKeyChecking=yes "
            "-o IdentitiesOnly=yes -o GlobalKnownHostsFile=/dev/null")  # fmt: skip
    inv = {"all": {"hosts": {h.name: {
        "ansible_host": rec["address"],
        "ansible_port": rec["port"],
        "ansible_user": rec.get("user", "root"),
        "ansible_ssh_private_key_file": rec["identity_file"],
        "ansible_ssh_common_args": args,
        "ansible_python_interpreter": "/usr/bin/python3",
    }}}}  # fmt: skip
    path.write_text(yaml.safe_dump(inv))
    return path


def _play(inv: Path, pb: Path, *extra: str) -> tuple[int, str, dict[str, int], float]:
    env = {**os.environ, "ANSIBLE_NOCOLOR": "1", "ANSIBLE_PIPELINING": "1",
           "ANSIBLE_HOST_KEY_CHECKING": "1"}  # fmt: skip
    t0 = time.monotonic()
    r = subprocess.run([PLAYBOOK, "-i", str(inv), str(pb), *extra], capture_output=True,
                       text=True, timeout=900, env=env)  # fmt: skip
    secs = time.monotonic() - t0
    out = r.stdout + r.stderr
    m = re.search(r"ok=(\d+)\s+changed=(\d+)\s+unreachable=(\d+)\s+failed=(\d+)\s+"
                  r"skipped=(\d+)\s+rescued=(\d+)", out)  # fmt: skip
    keys = ("ok", "changed", "unreachable", "failed", "skipped", "rescued")
    recap = dict(zip(keys, map(int, m.groups()), strict=True)) if m else {}
    return r.returncode, out, recap, secs


def _failing_step_rolls_back(h: Any, sh: Any, inv: Path, tmp_path: Path, before: dict) -> None:
    """Step 3 pins a version the host's index does not have: pip fails, the rescue undoes
    steps 1 and 2 (pip back to the plan's versions, links and stub removed)."""
    # the fault goes into the playbook (a saved plan that was edited is refused by export)
    plan = Plan.model_validate_json((tmp_path / "plan.json").read_text())
    text = export_plan(plan, "ansible")
    assert "nvidia-cuda-cccl==13.0.85" in text
    bad_pb = tmp_path / "bad.yml"
    bad_pb.write_text(text.replace("nvidia-cuda-cccl==13.0.85", "nvidia-cuda-cccl==99.0.0"))
    rc, out, recap, secs = _play(inv, bad_pb)
    print(f"failing step 3: rc {rc} {recap} in {secs:.0f} s")
    assert rc != 0 and recap["rescued"] == 1 and recap["failed"] == 1, out[-3000:]
    assert "what this run changed was undone" in out
    after = h.snapshot()
    assert sh.same(before, after), sh.snapshot_diff(before, after)


@pytest.mark.sandbox
@needs_ansible
def test_sandbox_playbook_check_fix_and_idempotence(tmp_path):
    sys.path.insert(0, str(REPO / "tests"))
    import sandbox_hosts as sh

    try:
        sh.doctor()
    except sh.SandboxUnavailable as e:
        pytest.skip(str(e))
    h = sh.up("seed-chain-a", f"an{os.getpid() % 100000}x")
    try:
        t0 = time.monotonic()
        plan = sh.chain_plan(h, tmp_path / "plan.json", sh.CHAIN_A)
        assert [s["action"] for s in plan["steps"]] == [
            "pip-align-cuda-wheels", "link-layout-symlinks", "pip-install-cccl",
        ]  # fmt: skip
        inv = _inventory(h, tmp_path / "inventory.yml")
        pb = tmp_path / "fix.yml"
        r = subprocess.run([sys.executable, "-m", "remedy", "export", "--format", "ansible",
                            str(tmp_path / "plan.json"), "--out", str(pb)],
                           capture_output=True, text=True, timeout=120)  # fmt: skip
        assert r.returncode == 0, r.stderr
        before = h.snapshot()

        # 1. --check --diff: reports what would change, changes nothing
        rc, out, recap, secs = _play(inv, pb, "--check", "--diff")
        print(f"--check --diff: rc {rc} {recap} in {secs:.0f} s")
        assert rc == 0 and recap["changed"] >= 5 and recap["failed"] == 0, out[-3000:]
        assert "nvidia-nvvm 13.3.73 -> 13.0.88" in out and '"state": "link"' in out
        after = h.snapshot()
        assert sh.same(before, after), sh.snapshot_diff(before, after)

        # 2. (REMEDY_LONG=1, +40 s) a failing last step: the rescue undoes steps 1-2, the
        # host is byte-identical
        if os.environ.get("REMEDY_LONG"):
            _failing_step_rolls_back(h, sh, inv, tmp_path, before)

        # 3. for real: the chain is fixed (remedy's own re-plan finds none of its rules)
        rc, out, recap, secs = _play(inv, pb, "--diff")
        print(f"real run: rc {rc} {recap} in {secs:.0f} s")
        assert rc == 0 and recap["failed"] == 0 and recap["changed"] >= 5, out[-3000:]
        for probe in ("compile-probe", "link-probe", "preprocess-probe"):  # remedy's probes passed
            assert re.search(rf"TASK \[remedy verify: {probe}\] \**\s*ok: ", out), probe
        assert h.markers() == {"align": True, "layout": True, "cccl": True}
        r = h.remedy("plan", "--host", h.name, "--json", timeout=600)
        now = json.loads(r.stdout)
        left = {f["rule"] for f in now["findings"]} & sh.CHAIN_A
        assert left == set(), left
        assert now["status"] == "nothing-to-do", [f["rule"] for f in now["findings"]]

        # 4. again: every step is skipped, nothing changes (the probes passed in 3; they run
        # again unless -e remedy_verify=false, which keeps this within the test budget)
        rc, out, recap, secs = _play(inv, pb, "-e", "remedy_verify=false")
        print(f"second run: rc {rc} {recap} in {secs:.0f} s")
        assert rc == 0 and recap["changed"] == 0 and recap["failed"] == 0, out[-3000:]
        print(f"sandbox export test: {time.monotonic() - t0:.0f} s")
    finally:
        sh.down(h)


@needs_ansible
@pytest.mark.skipif(os.geteuid() != 0, reason="the attack needs root and chown")
def test_the_playbook_runs_no_tool_from_a_path_dir_another_user_owns(tmp_path):
    """Root's PATH starting with uid 65534's bin (stat, readlink, id, sh... writing a canary):
    the play's environment is the system PATH (remedy.transport.base.SYSTEM_PATH), so the
    precondition and trust scripts run the system's tools and the check run still passes."""
    from remedy.transport.base import SYSTEM_PATH

    evil, canary = tmp_path / "evil-bin", tmp_path / "canary"
    evil.mkdir()
    # the tools remedy's task scripts call (Ansible's own connection commands, `mkdir -p
    # ~/.ansible/tmp`, `chmod`, `rm`, run from the controller's PATH before a play's
    # environment applies: that is ansible-playbook's, not the playbook's)
    for t in ("stat", "readlink", "id", "grep", "head", "find", "realpath", "ln", "cat"):
        f = evil / t
        f.write_text(f'#!/bin/sh\necho "{t} $*" >> {canary}\nexit 1\n')
        f.chmod(0o755)
        os.chown(f, 65534, 65534)
    os.chown(evil, 65534, 65534)
    plan = hostile_plan(tmp_path / "h")
    prefix = Path(plan.steps[0].params["prefix"])
    (prefix / "lib").mkdir(parents=True)
    (prefix / "lib" / "libcudart.so.13").write_bytes(b"")
    pb = tmp_path / "pb.yml"
    pb.write_text(export_plan(plan, "ansible"))
    # the system PATH, plus what the first task finds in the login environment
    assert f"{{'PATH': \"{SYSTEM_PATH}\"}}" in load(pb.read_text())["environment"]
    r = check_run_on_localhost(pb, tmp_path, PATH=f"{evil}:{BIN}:{SYSTEM_PATH}")
    out = r.stdout + r.stderr
    assert not canary.exists(), canary.read_text()
    assert r.returncode == 0, out[-3000:]
