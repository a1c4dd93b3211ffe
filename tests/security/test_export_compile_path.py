"""The exported playbook never compiles with another user's `as` (or cc, gcc, c++, g++, ld)
found on the system PATH (redteam-26).

`remedy run` refuses a plan whose steps compile (the link-layout stub's `cc`, a pip-install's
source build, an apt-install's dkms build: Operation.runs_compiler) when the step's PATH finds
one of remedy.trust.STEP_PATH_NAMES that `trusted` refuses (redteam-24). The exported playbook
had no such check. The attack, for real: `ansible-playbook` (local connection) of `remedy
export`'s playbook for a link-layout plan with the stub, on a host whose /usr/local/bin (root's,
755; here, in a private mount namespace) holds uid 65534's `as` (or root's link to it): the
stub task's `cc` ran it as root (canary `as uid 0`). Now the play's first task (`raw`, the
login judgement) also judges what the system PATH finds for those names when a step compiles,
and fails before anything changes. Control: root's own `as` there runs, the play succeeds.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from local_apply import as_canary_dir, under_usr_local_bin

from remedy.export import export_plan
from remedy.knowledge.loader import load_knowledge
from remedy.model import Facts
from remedy.planner.plan import make_plan

REPO = Path(__file__).resolve().parents[2]
PLAYBOOK = Path(sys.executable).parent / "ansible-playbook"
NOBODY = 65534

pytestmark = [
    pytest.mark.skipif(os.geteuid() != 0, reason="a file another user owns"),
    pytest.mark.skipif(
        subprocess.run(["unshare", "-m", "true"], capture_output=True).returncode != 0,
        reason="no private mount namespace here",
    ),
]


def _stub_plan(area: Path):
    """A plan for a pip toolkit under area whose wheels are aligned: the lib64 layout step,
    whose stub `cc` builds (tests/test_export_ansible.py's hostile_plan, without the Jinja)."""
    data = yaml.safe_load((REPO / "src/remedy/examples/seed-sm120-pip-cu13/facts.yaml").read_text())
    tk = data["toolkits"][0]
    wheels = {"nvidia-cuda-nvcc": "13.0.88", "nvidia-nvvm": "13.0.88", "nvidia-cuda-crt": "13.0.88",
              "nvidia-cuda-runtime": "13.0.96", "nvidia-cuda-cccl": "13.0.85"}  # fmt: skip
    tk.update(nvcc_version="13.0.88", nvcc_release="13.0", ptxas_release="13.0",
              cicc_release="13.0", pip=wheels, cccl={"present": True, "nv_target": True,
              "nv_detail": True, "include_dir": "include/cccl"})  # fmt: skip
    data["pythons"][0]["packages"].update(wheels)
    prefix = area / "cu13"
    facts = Facts.model_validate(json.loads(json.dumps(data).replace(tk["prefix"], str(prefix))))
    plan = make_plan(load_knowledge(), facts)
    assert [s.action for s in plan.steps] == ["link-layout-symlinks"]
    assert plan.steps[0].operation.runs_compiler()
    (prefix / "lib").mkdir(parents=True)
    (prefix / "lib" / "libcudart.so.13").write_bytes(b"")
    return plan, prefix


def _in_namespace(bindir: Path, argv: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "ANSIBLE_NOCOLOR": "1", "ANSIBLE_LOCALHOST_WARNING": "0"}
    return under_usr_local_bin(bindir, argv, cwd=cwd, env=env)


@pytest.fixture
def area(tmp_path: Path) -> Path:
    tmp_path.chmod(0o755)
    return tmp_path


def _play(area: Path, owner: int, *, link: bool) -> tuple[str, int, str | None]:
    plan, prefix = _stub_plan(area)
    pb = area / "pb.yml"
    pb.write_text(export_plan(plan, "ansible"))
    bindir = as_canary_dir(area, owner, link=link)
    r = _in_namespace(
        bindir,
        [str(PLAYBOOK), "-i", "localhost,", "-c", "local", str(pb),
         "-e", f"ansible_python_interpreter={sys.executable}",
         "-e", "remedy_verify=false", "-e", "remedy_restart=false"],
        area,
    )  # fmt: skip
    canary = area / "canary"
    built = (prefix / "lib" / "stubs" / "libcuda.so").exists()
    return (
        r.stdout + r.stderr,
        r.returncode,
        (canary.read_text() if canary.exists() else None) or ("" if built else None),
    )


@pytest.mark.skipif(not PLAYBOOK.exists(), reason="ansible-core not installed")
@pytest.mark.parametrize("link", [False, True], ids=["file", "link"])
def test_the_playbook_never_runs_another_users_as_on_path(area: Path, link: bool):
    out, rc, ran = _play(area, NOBODY, link=link)
    assert not ran, f"the playbook's stub task ran uid 65534's `as` as root: {ran}\n{out[-2000:]}"
    assert rc != 0 and "as on PATH is" in out and "uid 65534" in out, out[-3000:]
    assert not (area / "cu13" / "lib64").exists(), "a step ran before the refusal"


@pytest.mark.skipif(not PLAYBOOK.exists(), reason="ansible-core not installed")
def test_control_roots_own_as_on_path_runs_under_the_playbook(area: Path):
    out, rc, ran = _play(area, 0, link=False)
    assert rc == 0, out[-3000:]
    assert ran and "as uid 0" in ran, f"root's own `as` did not run: {ran}\n{out[-2000:]}"


def _raw_script(plan) -> str:
    """The play's first task's script as Ansible hands it to the shell (its free-form
    arguments, split on quote marks and joined again by ansible.parsing.splitter)."""
    from ansible.parsing.splitter import parse_kv

    play = yaml.load(export_plan(plan, "ansible"), Loader=yaml.BaseLoader)[0]
    raw = play["tasks"][0]["ansible.builtin.raw"]
    return parse_kv(raw, check_raw=True)["_raw_params"]


@pytest.mark.parametrize(("owner", "link"), [(NOBODY, False), (NOBODY, True), (0, False)],
                         ids=["nobody-file", "nobody-link", "control-root"])  # fmt: skip
def test_the_judging_task_alone_fails_on_another_users_as(area: Path, owner: int, link: bool):
    """The raw task's script, run as the host's shell would (`sh -c`), in the namespace: it
    exits 3 naming the file for uid 65534's `as` (or root's link to it), and 0 for root's."""
    pytest.importorskip("ansible")
    plan, _ = _stub_plan(area)
    bindir = as_canary_dir(area, owner, link=link)
    r = _in_namespace(bindir, ["/bin/sh", "-c", _raw_script(plan)], area)
    if owner == NOBODY:
        assert r.returncode == 3 and "as on PATH is" in r.stdout + r.stderr, r.stdout + r.stderr
        assert "uid 65534" in r.stdout + r.stderr
    else:
        assert r.returncode == 0, r.stdout + r.stderr
    assert not (area / "canary").exists(), "the judgement ran `as`"


def test_a_plan_that_compiles_nothing_gets_only_the_path_entries_check():
    """Only a plan with a compiling step is judged by the compile's names; every plan by the
    entries of the PATH's directories (a link-layout step's `ln`: redteam-27), as `remedy run`."""
    from remedy.export.ansible import _login_env_tasks

    names = "on_path_trusted cc gcc"
    raw = {c: _login_env_tasks(compiles=c)[0]["ansible.builtin.raw"] for c in (True, False)}
    assert names in raw[True] and names not in raw[False]
    assert all('path_entries_trusted "$@"' in r for r in raw.values())
