"""An installed version from the facts never becomes an argument of root's pip (class 1).

The attack, for real: whoever can write a saved plan (its facts, both digests recomputed, as
in `test_plan_tamper.py`) sets the installed version of a wheel the plan pins to
`13.2.78,--no-index,--find-links=DIR`. The re-derivation passes (the steps pin the
knowledge's versions whatever the host had), and `remedy export --format ansible` put the
facts' version into the rescue's undo task, `pip back to the plan's versions`, as
`nvidia-cuda-nvcc==13.2.78,--no-index,--find-links=DIR`. Ansible's pip module splits every
`name` on commas (`_recover_package_name`), so root's pip got `--no-index` and
`--find-links=DIR` as options, and installed the attacker's wheel (a `.pth`: code in every
later start of that Python, as root) when any later task failed. The undo task is run here by
ansible-playbook on localhost into a root-owned venv. Now a version the facts recorded reaches
the playbook only as a PEP 440 version, else the export is refused by name.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
import yaml

from remedy.errors import RemedyError
from remedy.export import export_plan
from remedy.knowledge.loader import load_knowledge
from remedy.model import Facts, Plan
from remedy.planner.plan import make_plan

REPO = Path(__file__).resolve().parents[2]
PLAYBOOK = Path(sys.executable).parent / "ansible-playbook"
WHEELS = {"nvidia-cuda-nvcc": "13.2.78", "nvidia-nvvm": "13.3.73", "nvidia-cuda-crt": "13.2.78"}
UNDO = "pip back to the plan's versions"


def _plan(env: Path, nvcc_before: str) -> Plan:
    data = yaml.safe_load((REPO / "src/remedy/examples/seed-sm120-pip-cu13/facts.yaml").read_text())
    data = json.loads(json.dumps(data).replace("/root/venv", str(env)))
    data["pythons"][0]["packages"]["nvidia-cuda-nvcc"] = nvcc_before
    data["toolkits"][0]["pip"]["nvidia-cuda-nvcc"] = nvcc_before
    return make_plan(load_knowledge(), Facts.model_validate(data))


def _undo_task(text: str) -> dict:
    class Loader(yaml.SafeLoader):
        pass

    Loader.add_constructor("!unsafe", lambda loader, node: loader.construct_scalar(node))
    play = yaml.load(text, Loader=Loader)[0]  # noqa: S506 - a SafeLoader subclass

    def walk(tasks):
        for t in tasks:
            yield t
            for k in ("block", "rescue", "always"):
                yield from walk(t.get(k) or [])

    return next(t for t in walk(play["tasks"]) if UNDO in str(t.get("name")))


def _wheel(d: Path, name: str, version: str, pth: str | None) -> None:
    dist = f"{name.replace('-', '_')}-{version}"
    files = {
        f"{dist}.dist-info/METADATA": f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n",
        f"{dist}.dist-info/WHEEL": "Wheel-Version: 1.0\nGenerator: x\nRoot-Is-Purelib: true\n"
        "Tag: py3-none-any\n",
    }
    if pth:
        files["zz_canary.pth"] = pth
    files[f"{dist}.dist-info/RECORD"] = (
        "".join(f"{k},,\n" for k in files) + f"{dist}.dist-info/RECORD,,\n"
    )
    with zipfile.ZipFile(d / f"{dist}-py3-none-any.whl", "w") as z:
        for k, v in files.items():
            z.writestr(k, v)


@pytest.mark.skipif(not PLAYBOOK.exists(), reason="ansible-core not installed")
def test_a_facts_version_never_becomes_a_pip_option(tmp_path: Path):
    env, wheels, canary = tmp_path / "venv", tmp_path / "wheels", tmp_path / "canary"
    subprocess.run([sys.executable, "-m", "venv", str(env)], check=True, timeout=300)
    wheels.mkdir()
    for name, version in WHEELS.items():
        pth = f"import os; open({str(canary)!r}, 'w').write('root ran it')\n"
        _wheel(wheels, name, version, pth if name == "nvidia-cuda-nvcc" else None)
    hostile = f"13.2.78,--no-index,--find-links={wheels}"
    plan = _plan(env, hostile)
    try:
        text = export_plan(plan, "ansible")
    except RemedyError as e:  # the fix: refused, named
        assert "nvidia-cuda-nvcc" in str(e) and "not a version" in str(e), str(e)
        return
    task = _undo_task(text)
    task.pop("when", None)
    pb = tmp_path / "undo.yml"
    pb.write_text(yaml.safe_dump([{"hosts": "all", "gather_facts": False, "tasks": [task]}]))
    env_vars = {**os.environ, "ANSIBLE_NOCOLOR": "1", "ANSIBLE_LOCALHOST_WARNING": "0"}
    r = subprocess.run(
        [str(PLAYBOOK), "-i", "localhost,", "-c", "local", str(pb),
         "-e", f"ansible_python_interpreter={sys.executable}"],
        capture_output=True, text=True, timeout=300, cwd=tmp_path, env=env_vars,
    )  # fmt: skip
    site = next(env.glob("lib/python3*/site-packages"))
    subprocess.run([f"{env}/bin/python", "-c", "pass"], timeout=60)  # a later start of it
    assert not (site / "zz_canary.pth").exists() and not canary.exists(), (
        "root's pip took --no-index --find-links from the facts and installed the wheel:\n"
        + (r.stdout + r.stderr)[-2000:]
    )


def test_control_a_real_version_is_the_undo_target(tmp_path: Path):
    task = _undo_task(export_plan(_plan(tmp_path / "venv", "13.2.78"), "ansible"))
    assert "nvidia-cuda-nvcc==13.2.78" in task["ansible.builtin.pip"]["name"]
