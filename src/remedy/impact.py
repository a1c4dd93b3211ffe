"""Blast radius of environment changes, before anyone makes them.

For each VAR=VALUE: every consumer the knowledge graph says reads VAR, how it reads it, and the
effect predicted for that class of value (with the error it would print and its upstream
source); the components that ignore VAR; and, when host facts are at hand, a simulation: the
rules each consumer would newly violate and the toolkit each would now pick.
"""

from __future__ import annotations

import copy
import posixpath
from typing import Any

from pydantic import BaseModel, Field

from remedy.errors import InputError
from remedy.evaluate import evaluate, render
from remedy.knowledge.functions import arch_list_valid
from remedy.knowledge.loader import Knowledge
from remedy.model import Facts
from remedy.resolve import pick_toolkit, set_workload_env, toolkit_at, workload_env


class ConsumerImpact(BaseModel):
    component: str
    name: str
    variable: str
    value: str | None
    value_class: str
    how: str
    read_at: str | None = None
    effect: str
    breaks: bool = False
    error: str | None = None
    signature: str | None = None
    source: str
    downstream: list[str] = Field(default_factory=list)


class Unaffected(BaseModel):
    component: str
    variable: str
    why: str


class PickChange(BaseModel):
    component: str
    before: str
    after: str


class SimulatedFinding(BaseModel):
    rule: str
    consumers: list[str]
    message: str
    source: str


class ImpactReport(BaseModel):
    changes: dict[str, str | None]
    consumers: list[ConsumerImpact] = Field(default_factory=list)
    unaffected: list[Unaffected] = Field(default_factory=list)
    simulated: bool = False
    picks: list[PickChange] = Field(default_factory=list)
    new_findings: list[SimulatedFinding] = Field(default_factory=list)
    fixed_findings: list[SimulatedFinding] = Field(default_factory=list)
    breaks: list[str] = Field(default_factory=list)


def _check_name(name: str, text: str) -> None:
    if not name or not name.replace("_", "a").isalnum() or name[0].isdigit():
        raise InputError(
            f"not an environment variable assignment: {text!r}",
            hint="write VAR=VALUE (e.g. CUDA_HOME=/dev/null) to set, --unset VAR to unset",
        )


def parse_assignment(text: str) -> tuple[str, str]:
    """VAR=VALUE sets, VAR= sets empty. A bare VAR is refused rather than read as "unset":
    that guess inverted what `impact CUDA_HOME` and `--set CUDA_HOME` were asked (unset is
    said with --unset VAR)."""
    if "=" not in text:
        name = text.lstrip("-")
        _check_name(name, text)
        raise InputError(
            f"{text!r} has no '=': say what to set it to",
            hint=f"write {name}=VALUE to set it (e.g. {name}=/usr/local/cuda), "
            f"or --unset {name} to unset it",
        )
    name, value = text.split("=", 1)
    _check_name(name, text)
    return name, value


def parse_name(text: str) -> str:
    """The VAR of `--unset VAR` (no value: `--unset VAR=x` is refused, not half-read)."""
    if "=" in text:
        raise InputError(
            f"--unset takes a variable name, not an assignment: {text!r}",
            hint="write --unset VAR, or VAR=VALUE to set it",
        )
    _check_name(text, text)
    return text


def classify(kind: str, value: str | None, facts: dict[str, Any] | None) -> str:
    if value is None or value == "":
        return "unset"
    if kind == "dir":
        if value.startswith("/dev/"):
            return "not_a_directory"
        if facts is not None:
            tk = toolkit_at(facts, value)
            if tk and tk.get("nvcc_release"):
                return "toolkit"
            if tk or any(
                posixpath.normpath(value) == posixpath.join(t["prefix"], "bin")
                for t in facts.get("toolkits", ())
            ):
                return "directory"
            return "nonexistent"
        if posixpath.basename(posixpath.normpath(value)) == "bin":
            return "directory"
        return "toolkit"
    if kind == "file":
        if facts is not None and value.endswith("/nvcc"):
            root = posixpath.dirname(posixpath.dirname(value))
            tk = toolkit_at(facts, root)
            if not (tk and tk.get("nvcc_release")):
                return "missing"
        return "set"
    if kind == "archlist":
        return "set" if arch_list_valid(value) else "malformed"
    return "set"


def analyse(
    kb: Knowledge, changes: dict[str, str | None], facts: Facts | None = None
) -> ImpactReport:
    from remedy.knowledge.graph import build_graph, downstream

    g = build_graph(kb)
    fdict = facts.model_dump() if facts is not None else None
    report = ImpactReport(changes=changes)
    for name, value in changes.items():
        var = kb.variables.get(name)
        if var is None:
            raise InputError(
                f"remedy knows no consumer of {name}",
                hint="known variables: " + ", ".join(sorted(kb.variables)),
            )
        cls = classify(var.kind, value, fdict)
        for edge in var.consumers:
            eff = edge.effects.get(cls) or edge.effects.get("set")
            comp = kb.components[edge.component]
            v = value or ""
            text = eff.effect if eff else "no predicted effect for this kind of value"
            report.consumers.append(
                ConsumerImpact(
                    component=edge.component,
                    name=comp.name,
                    variable=name,
                    value=value,
                    value_class=cls,
                    how=edge.how,
                    read_at=edge.read_at,
                    effect=text.replace("<v>", v),
                    breaks=bool(eff and eff.breaks),
                    error=eff.error.replace("<v>", v) if eff and eff.error else None,
                    signature=eff.signature if eff else None,
                    source=(edge.source or comp.source).short()
                    if (edge.source or comp.source)
                    else "knowledge/variables.yaml",
                    downstream=[
                        n
                        for n in downstream(g, f"env:{name}")
                        if n != edge.component
                        and g.nodes[n].get("type") == "component"
                        and n in downstream(g, edge.component)
                    ],
                )
            )
        for un in var.unaffected:
            report.unaffected.append(Unaffected(component=un.component, variable=name, why=un.why))
    if fdict is not None:
        _simulate(kb, fdict, changes, report)
    report.breaks = sorted(
        {c.component for c in report.consumers if c.breaks}
        | {c for f in report.new_findings for c in f.consumers}
    )
    return report


def _simulate(
    kb: Knowledge, facts: dict[str, Any], changes: dict[str, str | None], report: ImpactReport
) -> None:
    after = copy.deepcopy(facts)
    for name, value in changes.items():
        set_workload_env(after, name, value)
    env_b, env_a = workload_env(facts), workload_env(after)
    for cid in (facts.get("workload") or {}).get("consumers", []):
        comp = kb.components.get(cid)
        if not comp or not comp.toolkit_lookup:
            continue
        pb = pick_toolkit(facts, comp.toolkit_lookup, env_b)
        pa = pick_toolkit(after, comp.toolkit_lookup, env_a)

        def label(p: Any) -> str:
            if not p.path:
                return "no toolkit"
            nv = (p.tk or {}).get("nvcc_release")
            return f"{p.path} via {p.how}" + (f" (nvcc {nv})" if nv else " (no nvcc there)")

        report.picks.append(PickChange(component=cid, before=label(pb), after=label(pa)))
    ev_b, ev_a = evaluate(kb, facts), evaluate(kb, after)
    kb_keys, ka_keys = ev_b.keys(), ev_a.keys()
    for v in ev_a.errors_only():
        if v.key not in kb_keys:
            cr = kb.rules[v.rule]
            report.new_findings.append(
                SimulatedFinding(
                    rule=v.rule,
                    consumers=v.consumers or [cr.rule.breaks_component or "host"],
                    message=render(cr.message, v.ctx),
                    source=cr.rule.source.short(),
                )
            )
    for v in ev_b.errors_only():
        if v.key not in ka_keys:
            cr = kb.rules[v.rule]
            report.fixed_findings.append(
                SimulatedFinding(
                    rule=v.rule,
                    consumers=v.consumers,
                    message=render(cr.message, v.ctx),
                    source=cr.rule.source.short(),
                )
            )
    report.simulated = True
