"""Shared pieces of Ansible tasks: how an operation becomes playbook tasks (apply, undo,
precondition checks). Every string that comes from a plan or a host is tagged `!unsafe` so
Ansible never templates `{{ }}` or `{% %}` in it."""

from __future__ import annotations

import posixpath
import re
from dataclasses import dataclass, field
from typing import Any

from remedy.errors import InputError


class ExportError(InputError):
    """The plan cannot be expressed as a playbook (an operation with no Ansible form, …)."""


class Unsafe(str):
    """A string from the plan or the host: Ansible must never template it."""


def _style(data: str, multiline: str | None) -> str | None:
    """A string holding a character the playbook's file_safe writes as an escape (C1, bidi,
    zero-width, tag characters) is double-quoted: only there does YAML read `\\u202e` back
    as the character (plain, single-quoted and block scalars took it as six characters of
    text, and the playbook named another path than the plan's)."""
    from remedy.textchars import needs_escape

    if needs_escape(data):
        return '"'
    return multiline if "\n" in data else None


def _unsafe_repr(dumper: Any, data: Unsafe) -> Any:
    return dumper.represent_scalar("!unsafe", str(data), style=_style(data, "|"))


def _str_repr(dumper: Any, data: str) -> Any:
    if _style(data, None) == '"':
        return dumper.represent_scalar("tag:yaml.org,2002:str", data, style='"')
    return dumper.represent_str(data)


_DUMPER: list[type] = []


def __getattr__(name: str) -> Any:
    """`Dumper` (the YAML dumper of playbooks, `!unsafe` strings, no aliases) is made when
    first asked for: yaml (~13 ms) is imported by the export, not by every plan."""
    if name != "Dumper":
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    if not _DUMPER:
        import yaml

        dumper = type("Dumper", (yaml.SafeDumper,), {"__module__": __name__})
        dumper.add_representer(Unsafe, _unsafe_repr)
        dumper.add_representer(str, _str_repr)
        dumper.ignore_aliases = lambda self, data: True  # type: ignore[method-assign]
        _DUMPER.append(dumper)
    return _DUMPER[0]


def U(value: Any) -> Any:  # noqa: N802 - reads as a tag at the call sites
    """Tag every string inside `value` as unsafe."""
    if isinstance(value, str):
        return Unsafe(value)
    if isinstance(value, list):
        return [U(v) for v in value]
    if isinstance(value, dict):
        return {k: U(v) for k, v in value.items()}
    return value


@dataclass
class Mapped:
    """One step as tasks: what applies it, what undoes what it changed, what the precondition
    script checks (the step's before- and after-state)."""

    apply: list[dict[str, Any]] = field(default_factory=list)
    undo: list[dict[str, Any]] = field(default_factory=list)
    checks: list[dict[str, Any]] = field(default_factory=list)
    reloads: bool = False  # changes a unit: daemon-reload (and the restart handler)


@dataclass
class Ctx:
    """Where a step sits: its index and action (task names), the service the plan targets,
    and the plan's facts as predicted before this step (pip's before-versions)."""

    index: int  # 0-based
    action: str
    facts: dict[str, Any]
    service: str | None = None

    def reg(self, j: int) -> str:
        return f"remedy_s{self.index + 1}_t{j}"

    def name(self, what: str) -> Unsafe:
        return Unsafe(f"remedy step {self.index + 1} ({self.action}): {what}")

    def where(self) -> str:
        return f"step {self.index + 1} ({self.action})"


def changed(reg: str) -> str:
    return f"{reg} is defined and {reg} is changed"


def python_env(facts: dict[str, Any], path: str) -> dict[str, Any] | None:
    norm = posixpath.normpath(path)
    return next(
        (p for p in facts.get("pythons", []) if posixpath.normpath(p["path"]) == norm), None
    )


def norm_pkg(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def file_task(ctx: Ctx, j: int, path: str, content: str, mode: str, notify: bool) -> Mapped:
    """`copy content=` with a backup, and its undo (restore the backup or remove the file)."""
    m = Mapped(reloads=notify)
    reg = ctx.reg(j)
    d = posixpath.dirname(path)
    m.apply.append({
        "name": ctx.name(f"directory {d}"),
        "ansible.builtin.file": {"path": U(d), "state": "directory", "mode": "0755"},
        "register": ctx.reg(j) + "_dir",
    })  # fmt: skip
    task: dict[str, Any] = {
        "name": ctx.name(f"write {path}"),
        "ansible.builtin.copy": {"dest": U(path), "content": U(content), "mode": mode,
                                 "backup": True},
        "register": reg,
    }  # fmt: skip
    if notify:
        task["notify"] = ["remedy: systemd daemon-reload", "remedy: restart the service"]
    m.apply.append(task)
    m.undo += [
        {
            "name": ctx.name(f"restore {path} from its backup"),
            "ansible.builtin.copy": {"src": "{{ " + reg + ".backup_file }}", "dest": U(path),
                                     "remote_src": True, "mode": "preserve"},
            "when": f"{changed(reg)} and {reg}.backup_file is defined",
        },
        {
            "name": ctx.name(f"remove {path} (this run created it)"),
            "ansible.builtin.file": {"path": U(path), "state": "absent"},
            "when": f"{changed(reg)} and {reg}.backup_file is not defined",
        },
        {
            "name": ctx.name(f"remove {d} (this run created it)"),
            "ansible.builtin.file": {"path": U(d), "state": "absent"},
            "when": changed(reg + "_dir"),
        },
    ]  # fmt: skip
    m.checks.append({"kind": "file", "path": path, "content": content})
    return m
