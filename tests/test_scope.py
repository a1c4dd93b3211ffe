"""Issue 22 without hosts: which consumers a plan covers (remedy.scope), the plan made per
scope (each environment its own write), what the service path of a run's verdict claims
(executor/services.py), the fleet's exit codes, the identity-file error, the resume hint and
the exported playbook's interpreter. The same on real hosts: tests/test_service_sandbox.py."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from remedy.errors import IdentityFileError, InputError
from remedy.executor.runner import RunReport
from remedy.executor.services import settle_services, units_in_scope
from remedy.fleet.fanout import open_host
from remedy.fleet.inventory import load_inventory
from remedy.fleet.report import HostResult, fleet_exit
from remedy.inputs import get_example, load_facts_file
from remedy.knowledge.loader import load_knowledge
from remedy.model import Facts, Service
from remedy.outcomes import OUTCOME_EXIT, exit_code_for
from remedy.planner.plan import make_plan
from remedy.scope import (
    LOGIN_SHELL,
    choose_scopes,
    consumer_of,
    failing,
    inventory_services,
    with_scopes,
)

REPO = Path(__file__).resolve().parents[1]
UNIT = "sglang-k26.service"


@pytest.fixture(scope="module")
def kb():
    return load_knowledge()


def seed002(service: str | None = None) -> Facts:
    """Seed 002's facts (the unit's PATH finds nvcc 12.8 first; the login shell's too),
    without the unit the example names: nobody said which consumer failed."""
    f = load_facts_file(get_example("seed-sm120-system-cuda128").facts_path)
    f.workload.service = service
    return f


def test_consumer_of_known_launches_and_builds():
    def kind(cmd: str) -> str | None:
        return consumer_of(Service(name="x.service", exec_start=cmd))

    assert kind("/v/bin/python -m sglang.launch_server --model-path m") == "sglang-launch"
    assert kind("/v/bin/python /usr/local/lib/x/sglang_launch_standin.py --port 1") == (
        "sglang-launch"
    )
    assert kind("/v/bin/sglang serve --model-path m") == "sglang-launch"
    assert kind("/v/bin/python -m flashinfer download-cubin") == "jit-build"
    assert kind("/usr/sbin/sshd -D") is None
    assert kind("/usr/bin/python3 -m http.server") is None


def test_no_unit_named_the_failing_consumer_unit_is_the_scope(kb):
    assert choose_scopes(kb, seed002()) == [UNIT]
    # no unit runs a consumer: the server is started by hand, from the login shell
    bare = seed002()
    bare.services = []
    assert choose_scopes(kb, bare) == [LOGIN_SHELL]
    # --service still names one, and only that one; login-shell names the shell
    assert choose_scopes(kb, seed002(), service=UNIT) == [UNIT]
    assert choose_scopes(kb, seed002(), services=[UNIT, LOGIN_SHELL]) == [UNIT, LOGIN_SHELL]
    assert choose_scopes(kb, seed002(), launch="python -m sglang.launch_server") == [LOGIN_SHELL]
    with pytest.raises(InputError, match="no unit 'other.service'"):
        choose_scopes(kb, seed002(), services=["other"])


def test_a_passing_unit_means_nothing_to_do_though_the_shell_would_fail(kb):
    f = seed002()
    cu13 = "/usr/local/cuda-13.0"
    # a host where the unit works (CUDA_HOME at a consistent 13.0 toolkit); the login shell
    # still finds nvcc 12.8 first, but no consumer runs there: the server is the unit
    f.services[0].environment["CUDA_HOME"] = cu13
    f.toolkits.append(
        f.toolkits[0].model_copy(
            update={
                "prefix": cu13,
                "kind": "system",
                "nvcc_release": "13.0",
                "ptxas_release": "13.0",
                "cicc_release": "13.0",
                "cudart_version": 13000,
                "aliases": [],
                "stand_in": None,
            }
        )
    )
    assert failing(kb, f, UNIT) == [] and failing(kb, f, LOGIN_SHELL) != []
    assert choose_scopes(kb, f) == [UNIT]
    assert make_plan(kb, with_scopes(kb, f)).status == "nothing-to-do"


def test_plan_writes_the_units_drop_in_and_restarts_it(kb):
    p = make_plan(kb, with_scopes(kb, seed002()))
    assert p.status == "ok" and p.target.scopes == [UNIT] and p.target.service == UNIT
    assert {s.scope for s in p.steps} == {UNIT}
    assert "service-env-cuda-home" in [s.action for s in p.steps]
    touched = [t.target for s in p.steps for t in s.touches]
    assert any(t.startswith(f"/etc/systemd/system/{UNIT}.d/") for t in touched), touched
    assert not any(t.startswith("/etc/profile.d/") for t in touched), touched
    # the unit is restarted and watched: its launch is its consumers' verification
    assert [(v.scope, v.probe, v.params.get("unit")) for v in p.verification] == [
        (UNIT, "launch-probe", UNIT)
    ]
    assert units_in_scope(p) == [UNIT]
    # a saved plan round-trips with its scopes
    again = type(p).model_validate_json(p.model_dump_json())
    assert again.target.scopes == p.target.scopes and again.steps[0].scope == UNIT


def test_both_named_each_environment_gets_its_own_write(kb):
    p = make_plan(kb, with_scopes(kb, seed002(), services=[UNIT, LOGIN_SHELL]))
    by_scope: dict[str, list[str]] = {}
    for s in p.steps:
        by_scope.setdefault(s.scope, []).append(s.action)
    assert "service-env-cuda-home" in by_scope[UNIT], by_scope
    assert "shell-env-cuda-home" in by_scope[LOGIN_SHELL], by_scope
    # a fix both need comes once (the apt toolkit, in the first scope that needs it)
    actions = [s.action for s in p.steps]
    assert actions.count("apt-install-cuda-toolkit") == 1, actions
    assert {fd.scope for fd in p.findings} == {UNIT, LOGIN_SHELL}
    launches = [v for v in p.verification if v.probe == "launch-probe"]
    builds = [v for v in p.verification if v.probe != "launch-probe"]
    assert [(v.scope, v.params["unit"]) for v in launches] == [(UNIT, UNIT)]
    assert builds and {v.scope for v in builds} == {LOGIN_SHELL}


def test_inventory_services_per_host_or_group(tmp_path):
    inv = tmp_path / "hosts.ini"
    inv.write_text(
        "[b]\ngpu1 remedy_services=sglang-k26\ngpu2\n[b:vars]\nremedy_services=a.service,b\n"
        "[c]\ngpu3 remedy_services='x y.service'\n"
    )
    hosts = load_inventory(inv).hosts
    assert inventory_services(hosts["gpu1"].vars, "gpu1") == ["sglang-k26"]
    assert inventory_services(hosts["gpu2"].vars, "gpu2") == ["a.service", "b"]
    assert inventory_services(hosts["gpu3"].vars, "gpu3") == ["x", "y.service"]
    with pytest.raises(InputError, match="names no unit"):
        inventory_services({"remedy_services": "a;rm -rf /"}, "h")
    with pytest.raises(InputError, match="must be a list"):
        inventory_services({"remedy_services": {"a": 1}}, "h")


# --------------------------------------------------------------------------------------------
# the verdict of the service path
# --------------------------------------------------------------------------------------------


class _Res:
    def __init__(self, out: str, rc: int = 0) -> None:
        self.out, self.exit_status = out, rc

    def text(self) -> str:
        return self.out


class _T:
    """A host whose units are in the given states (systemctl is-active)."""

    def __init__(self, states: dict[str, str]) -> None:
        self.states = states
        self.calls: list[list[str]] = []

    async def run(self, argv: list[str], timeout: float = 0) -> _Res:
        self.calls.append(argv)
        state = self.states.get(argv[-1], "inactive")
        return _Res(state + "\n", 0 if state == "active" else 3)


def _settle(kb, mode: str, verification: list[dict], states: dict[str, str]) -> RunReport:
    p = make_plan(kb, with_scopes(kb, seed002(), services=[UNIT, LOGIN_SHELL]))
    rep = RunReport("r1", "h", "fixed", verify_mode=mode)
    rep.verification = verification
    t = _T(states)
    asyncio.run(settle_services(t, p, rep, mode, lambda _m: None))
    rep.calls = t.calls  # type: ignore[attr-defined]
    return rep


def test_cheap_verification_never_claims_fixed_for_a_service(kb):
    rep = _settle(kb, "cheap", [], {UNIT: "failed"})
    assert rep.outcome == "applied-restart-pending" and rep.exit_code == 11
    assert rep.restart_pending == [UNIT] and f"systemctl restart {UNIT}" in rep.hint
    assert rep.as_dict()["restart_pending"] == [UNIT]
    assert rep.calls == []  # nothing restarted, nothing asked: cheap observes no service


def test_full_verification_fixed_only_when_launched_ready_and_active(kb):
    ready = [{"consumer": "sglang-server", "probe": "launch-probe", "ok": True, "unit": UNIT}]
    rep = _settle(kb, "full", ready, {UNIT: "active"})
    assert rep.outcome == "fixed" and rep.exit_code == 0 and rep.restart_pending == []
    assert rep.calls == [["systemctl", "is-active", "--", UNIT]]
    # ready during the launch but gone since: not fixed
    rep = _settle(kb, "full", ready, {UNIT: "failed"})
    assert rep.outcome == "applied-restart-pending" and "failed now" in rep.message
    # no launch observed (no GPU, no prober): not claimed
    skipped = [{"consumer": "sglang-server", "probe": "launch-probe", "ok": None, "unit": UNIT}]
    rep = _settle(kb, "full", skipped, {UNIT: "active"})
    assert rep.outcome == "applied-restart-pending" and rep.restart_pending == [UNIT]


# --------------------------------------------------------------------------------------------
# fleet reports
# --------------------------------------------------------------------------------------------


def test_skipped_has_its_own_exit_code_and_outcomes_are_one_table():
    from remedy.fleet import report

    assert exit_code_for("skipped") == 13 and report.OUTCOME_EXIT is OUTCOME_EXIT
    assert len({OUTCOME_EXIT[o] for o in ("fixed", "skipped", "applied-restart-pending")}) == 3

    def r(o: str) -> HostResult:
        return HostResult(host=o, outcome=o, exit_code=exit_code_for(o))

    assert fleet_exit([r("fixed"), r("skipped")], stopped=True) == 7
    assert fleet_exit([r("fixed"), r("applied-restart-pending")], stopped=False) == 11
    assert fleet_exit([r("applied-restart-pending"), r("rolled-back")], stopped=False) == 3


def test_a_missing_identity_file_is_its_own_error_naming_the_path(tmp_path):
    key = tmp_path / "nope" / "id_ed25519"
    inv = tmp_path / "hosts.ini"
    inv.write_text(f"gpu1 ansible_host=127.0.9.251 ansible_ssh_private_key_file={key}\n")
    h = load_inventory(inv).hosts["gpu1"]
    with pytest.raises(IdentityFileError) as ei:
        open_host(h)
    assert str(key) in ei.value.message and ei.value.exit_code == 2
    # through the CLI: an error naming the file, never "unreachable" (exit 2, not 4)
    p = subprocess.run(
        [sys.executable, "-m", "remedy", "plan", "--inventory", str(inv), "--json"],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=REPO,
    )
    doc = json.loads(p.stdout)
    (host,) = doc["hosts"]
    assert host["outcome"] == "error" and host["exit_code"] == 2, host
    assert str(key) in host["message"] and "identity file" in host["message"]
    assert p.returncode == 2 and "unreachable" not in p.stdout


def test_resume_hint_names_the_inventory_and_resume_takes_it(tmp_path):
    from remedy.fleet.commands import _hint_with_inventory

    inv = tmp_path / "my hosts.ini"
    hint = "`remedy resume gpu07` finishes it, `remedy resume gpu07 --rollback` undoes it"
    out = _hint_with_inventory(hint, "gpu07", inv)
    assert f"`remedy resume gpu07 --inventory '{inv}'`" in out
    assert f"`remedy resume gpu07 --inventory '{inv}' --rollback`" in out
    # both commands accept it, and resolve the name in the inventory (not in ssh_config)
    inv.write_text("gpu01 ansible_host=127.0.9.252\n")
    for cmd in (["resume", "gpu99"], ["rollback", "gpu99"]):
        p = subprocess.run(
            [sys.executable, "-m", "remedy", *cmd, "--inventory", str(inv)],
            capture_output=True,
            text=True,
            timeout=120,
            cwd=REPO,
        )
        assert p.returncode == 2 and "no host 'gpu99' in" in p.stderr, p.stderr
        assert "Traceback" not in p.stderr


def test_exported_playbook_pins_the_system_python_from_the_facts(kb, tmp_path):
    from remedy.export import export_plan

    p = make_plan(kb, with_scopes(kb, seed002()))
    pys = [py.path for py in p.facts.pythons]
    play = yaml.safe_load(
        export_plan(p, "ansible", verify="cheap", hosts="all")
        .replace("!unsafe ", "")
        .split("\n---\n", 1)[1]
    )[0]
    # the example's facts have no /usr python: Debian's system python3, never discovery
    assert "/usr" not in pys
    assert play["vars"]["ansible_python_interpreter"] == "/usr/bin/python3"
    restart = next(h for h in play["handlers"] if h["name"] == "remedy: restart the service")
    assert restart["ansible.builtin.systemd"] == {"name": UNIT, "state": "restarted"}
    f = seed002()
    f.pythons.append(f.pythons[0].model_copy(update={"path": "/usr/local", "packages": {}}))
    p = make_plan(kb, with_scopes(kb, f))
    text = export_plan(p, "ansible", verify="cheap", hosts="all")
    assert "ansible_python_interpreter: !unsafe '/usr/local/bin/python3'" in text


def test_exported_playbook_waits_for_readiness_and_says_the_outcome(kb):
    from remedy.export import export_plan

    p = make_plan(kb, with_scopes(kb, seed002()))
    play = yaml.safe_load(
        export_plan(p, "ansible", verify="cheap", hosts="all")
        .replace("!unsafe ", "")
        .split("\n---\n", 1)[1]
    )[0]
    main = next(t for t in play["tasks"] if t["name"] == "remedy: apply and verify")["block"]
    wait = next(t for t in main if "ansible.builtin.uri" in t)
    assert wait["ansible.builtin.uri"]["url"] == "http://127.0.0.1:30000/health"
    assert wait["until"] == "remedy_health.status == 200"
    assert play["vars"]["remedy_units"] == [UNIT]
    outcome = next(t for t in play["tasks"] if t["name"] == "remedy: outcome")
    msg = outcome["ansible.builtin.debug"]["msg"]
    assert "'fixed: '" in msg and "'applied-restart-pending: restart '" in msg
