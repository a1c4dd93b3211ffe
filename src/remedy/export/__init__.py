"""Plans in other tools' formats: `remedy export --format ansible plan.json`.

A fleet that already runs Ansible/AWX takes remedy's plan as a playbook instead of
`remedy run`; see export/ansible.py for what the playbook does and what it does not.
"""

from __future__ import annotations

from remedy.export.ansible import ExportError, export_ansible
from remedy.model import Plan

FORMATS = ("ansible",)


def export_plan(plan: Plan, fmt: str, *, verify: str = "cheap", hosts: str = "all") -> str:
    """The plan as text in `fmt`; ExportError for an unknown format or an unmappable step."""
    if fmt != "ansible":
        raise ExportError(f"unknown export format {fmt!r}", hint="known: " + ", ".join(FORMATS))
    return export_ansible(plan, verify=verify, hosts=hosts)


__all__ = ["FORMATS", "ExportError", "export_plan"]
