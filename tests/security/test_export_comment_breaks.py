"""Host text in the exported playbook's `#` comments stays inside them (class 7, files).

The attack: the playbook's first comment lines name the plan's host and remedy version, with
C0 controls removed. YAML (PyYAML, libyaml: what Ansible reads a playbook with) also ends a
line at U+0085, U+2028 and U+2029, so a host name `gpu01<LS>%TAG ! tag:yaml.org,2002:<LS>#`
(a saved plan's facts, digests recomputed; or a facts file) wrote its own YAML line: a `%TAG`
directive that re-maps the `!unsafe` tag every host value carries, and ansible-playbook
refused the file (it could as well have been any directive or content). Now those characters
become spaces in a comment; the playbook is what the same plan with a plain name gives.
"""

from __future__ import annotations

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
BREAKS = ["\u2028", "\u2029", "\x85"]


class _Loader(yaml.SafeLoader):
    """As Ansible: `!unsafe` is its own tag; any other unknown tag is an error."""


_Loader.add_constructor("!unsafe", lambda loader, node: loader.construct_scalar(node))


def _export(host: str, version: str = "0.1") -> str:
    facts_yaml = REPO / "src/remedy/examples/seed-sm120-pip-cu13/facts.yaml"
    facts = Facts.model_validate(yaml.safe_load(facts_yaml.read_text()))
    plan = make_plan(load_knowledge(), facts.model_copy(update={"host": host}))
    return export_plan(plan.model_copy(update={"remedy_version": version}), "ansible")


@pytest.mark.parametrize("br", BREAKS, ids=["LS", "PS", "NEL"])
def test_a_line_separator_in_the_host_name_writes_no_yaml(br: str):
    host = f"gpu01{br}%TAG ! tag:yaml.org,2002:{br}#"
    text = _export(host, version=f"0.1{br}%TAG !x! tag:x:{br}#")
    doc = yaml.load(text, Loader=_Loader)  # noqa: S506 - a SafeLoader subclass
    assert doc[0]["hosts"] == "all"
    for line in text.split("\n"):
        if line.startswith("# remedy plan for") or line.startswith("# plan facts digest"):
            assert not any(b in line for b in BREAKS), repr(line)


@pytest.mark.skipif(not PLAYBOOK.exists(), reason="ansible-core not installed")
def test_ansible_reads_the_playbook_of_a_hostile_host_name(tmp_path: Path):
    pb = tmp_path / "pb.yml"
    pb.write_text(_export("gpu01\u2028%TAG ! tag:yaml.org,2002:\u2028#"))
    r = subprocess.run([str(PLAYBOOK), "--syntax-check", "-i", "localhost,", str(pb)],
                       capture_output=True, text=True, timeout=120)  # fmt: skip
    assert r.returncode == 0, r.stdout + r.stderr
