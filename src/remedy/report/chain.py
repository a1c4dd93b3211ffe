"""The chains remedy reasons along, as layered graphs a report can draw.

A plan's failure chain: log lines → symptoms (signatures) → findings (rules) → steps →
probes. An impact's blast radius: the change → consumers → what they take down. A fleet
run: the plan group's steps → the group → hosts → outcomes. Built from remedy's own JSON
models only, so a saved plan or fleet report draws the same as a fresh one.
"""

from __future__ import annotations

from pathlib import PurePosixPath
from typing import Any, Literal

from pydantic import BaseModel, Field

from remedy.impact import ImpactReport
from remedy.model import Plan

Status = Literal["bad", "ok", "warn", "info"]


class Node(BaseModel):
    id: str
    layer: int
    label: str  # what the box says
    detail: str = ""  # what a tooltip and the tables below say
    status: Status = "info"


class Edge(BaseModel):
    src: str
    dst: str
    label: str = ""


class ChainGraph(BaseModel):
    title: str
    kind: Literal["plan", "impact", "fleet"]
    layers: list[str]  # layer names, left to right
    nodes: list[Node] = Field(default_factory=list)
    edges: list[Edge] = Field(default_factory=list)

    def add(self, node: Node) -> str:
        if not any(n.id == node.id for n in self.nodes):
            self.nodes.append(node)
        return node.id

    def link(self, src: str, dst: str, label: str = "") -> None:
        if src != dst and not any(e.src == src and e.dst == dst for e in self.edges):
            self.edges.append(Edge(src=src, dst=dst, label=label))


def plan_chain(plan: Plan) -> ChainGraph:
    """log lines → symptoms → findings → steps → probes (and the final verifications)."""
    g = ChainGraph(
        title=f"remedy plan — host {plan.host} ({plan.status})",
        kind="plan",
        layers=["log lines", "symptoms", "findings", "steps", "probes"],
    )
    sig_ids: list[str] = []
    for s in plan.symptoms:
        line = g.add(
            Node(
                id=f"line:{s.source}:{s.line}",
                layer=0,
                label=f"{PurePosixPath(s.source).name}:{s.line}",
                detail=f"{s.source}:{s.line}: {s.text}",
                status="bad",
            )
        )
        sig = g.add(Node(id=f"sig:{s.signature}", layer=1, label=s.signature, status="bad"))
        g.link(line, sig)
        sig_ids.append(sig)
    unresolved = {u.split(" @ ", 1)[0] for u in plan.unresolved}
    finding_ids: dict[str, list[str]] = {}
    for i, f in enumerate(plan.findings):
        fid = g.add(
            Node(
                id=f"finding:{i}:{f.rule}",
                layer=2,
                label=f.rule,
                detail=f"{f.message} (affects: {', '.join(f.affects) or f.subject})",
                status="bad" if f.rule in unresolved else "warn",
            )
        )
        finding_ids.setdefault(f.rule, []).append(fid)
        for idx in f.explains:
            if 0 <= idx < len(sig_ids):
                g.link(sig_ids[idx], fid)
    for i, st in enumerate(plan.steps, 1):
        sid = g.add(
            Node(
                id=f"step:{i}",
                layer=3,
                label=f"{i}. {st.title}",
                detail="\n".join(st.commands),
                status="ok",
            )
        )
        for rule in st.fixes:
            for fid in finding_ids.get(rule, []):
                g.link(fid, sid)
        pid = g.add(
            Node(
                id=f"probe:{i}:{st.probe}",
                layer=4,
                label=st.probe,
                detail=st.probe_detail or "",
                status="ok",
            )
        )
        g.link(sid, pid)
    last = f"step:{len(plan.steps)}" if plan.steps else None
    for v in plan.verification:
        vid = g.add(
            Node(
                id=f"verify:{v.consumer}",
                layer=4,
                label=f"final: {v.consumer} ({v.probe})",
                detail=v.detail or "",
                status="ok",
            )
        )
        if last:
            g.link(last, vid, "then")
    return g


def impact_chain(rep: ImpactReport, title: str = "") -> ChainGraph:
    """change → consumers → what they take down (downstream), per variable."""
    g = ChainGraph(
        title=title or "remedy impact — blast radius",
        kind="impact",
        layers=["change", "consumers", "what breaks next"],
    )
    for var, value in rep.changes.items():
        cid = g.add(
            Node(
                id=f"change:{var}",
                layer=0,
                label=f"{var}={value}" if value is not None else f"unset {var}",
                status="bad" if any(c.breaks for c in rep.consumers if c.variable == var) else "ok",
            )
        )
        for c in rep.consumers:
            if c.variable != var:
                continue
            nid = g.add(
                Node(
                    id=f"consumer:{c.component}",
                    layer=1,
                    label=c.name,
                    detail=c.effect + (f" — {c.error}" if c.error else ""),
                    status="bad" if c.breaks else "ok",
                )
            )
            g.link(cid, nid, "BREAKS" if c.breaks else "")
        consumers = {c.component for c in rep.consumers if c.variable == var}
        for c in rep.consumers:
            if c.variable != var:
                continue
            for d in c.downstream:
                if d in consumers:  # another consumer of the change: one node, not two
                    g.link(f"consumer:{c.component}", f"consumer:{d}")
                    continue
                did = g.add(
                    Node(id=f"down:{d}", layer=2, label=d, status="bad" if c.breaks else "warn")
                )
                g.link(f"consumer:{c.component}", did)
        for u in rep.unaffected:
            if u.variable == var:
                uid = g.add(
                    Node(
                        id=f"consumer:{u.component}",
                        layer=1,
                        label=f"{u.component} (unaffected)",
                        detail=u.why,
                        status="ok",
                    )
                )
                g.link(cid, uid)
    return g


def fleet_chain(report: dict[str, Any]) -> ChainGraph:
    """A fleet report (`remedy run|plan --inventory --json`): steps → plan group → hosts →
    outcomes."""
    g = ChainGraph(
        title=f"remedy {report.get('command', 'run')} --inventory {report.get('inventory', '')}"
        f" (exit {report.get('exit_code', '?')})",
        kind="fleet",
        layers=["steps", "plan groups", "hosts", "outcomes"],
    )
    for grp in report.get("groups") or []:
        gid = g.add(
            Node(
                id=f"group:{grp['id']}",
                layer=1,
                label=f"plan group {grp['id']}: {len(grp.get('hosts') or [])} host(s), "
                f"{grp.get('status', '?')}",
                detail="; ".join(grp.get("unresolved") or []),
                status="ok" if grp.get("status") in ("ok", "nothing-to-do") else "bad",
            )
        )
        for j, step in enumerate(grp.get("steps") or [], 1):
            sid = g.add(Node(id=f"step:{grp['id']}:{j}", layer=0, label=f"{j}. {step}"))
            g.link(sid, gid)
    for h in report.get("hosts") or []:
        outcome = str(h.get("outcome", "?"))
        good = outcome in ("fixed", "nothing-to-do", "skipped")
        hid = g.add(
            Node(
                id=f"host:{h['host']}",
                layer=2,
                label=str(h["host"]),
                detail=str(h.get("message") or ""),
                status="ok" if good else "bad",
            )
        )
        if h.get("group") is not None:
            g.link(f"group:{h['group']}", hid)
        oid = g.add(
            Node(
                id=f"outcome:{outcome}",
                layer=3,
                label=f"{outcome} (exit {h.get('exit_code', '?')})",
                status="ok" if good else "bad",
            )
        )
        g.link(hid, oid)
    return g
