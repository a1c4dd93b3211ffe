"""The knowledge graph (networkx): components, variables, rules, actions and signatures.

Edges point the way failure travels: a variable → the consumers that read it; a component →
the components that depend on it; a rule → the consumers it constrains and the signatures its
violation prints; an action → the rules it repairs. So the blast radius of a change to a
variable is its descendants.
"""

from __future__ import annotations

import json
from typing import Any

import networkx as nx

from remedy.knowledge.loader import Knowledge


def build_graph(kb: Knowledge) -> nx.MultiDiGraph:
    g = nx.MultiDiGraph(name="remedy knowledge graph")
    for c in kb.components.values():
        g.add_node(
            c.id,
            type="component",
            kind=c.kind,
            label=c.name,
            source=c.source.short() if c.source else "",
        )
    for c in kb.components.values():
        for dep in c.depends_on:
            # failure of `dep` propagates to `c`
            g.add_edge(dep, c.id, type="feeds")
    for v in kb.variables.values():
        vid = f"env:{v.name}"
        g.add_node(vid, type="variable", kind=v.kind, label=v.name)
        for edge in v.consumers:
            g.add_edge(
                vid,
                edge.component,
                type="read_by",
                how=edge.how,
                read_at=edge.read_at or "",
                source=edge.source.short() if edge.source else "",
            )
        for un in v.unaffected:
            g.add_edge(vid, un.component, type="ignored_by", why=un.why)
    for sid in sorted(kb.signature_ids):
        g.add_node(f"sig:{sid}", type="signature", label=sid)
    for rid, cr in kb.rules.items():
        r = cr.rule
        node = f"rule:{rid}"
        g.add_node(node, type="rule", label=r.title, hard=r.hard, source=r.source.short())
        for cid in r.consumers:
            g.add_edge(node, cid, type="constrains")
        for sid in r.predicts:
            g.add_edge(node, f"sig:{sid}", type="predicts")
    for aid, ca in kb.actions.items():
        a = ca.action
        node = f"action:{aid}"
        g.add_node(node, type="action", label=aid, risk=a.risk, probe=a.probe)
        for rid in a.repairs:
            g.add_edge(node, f"rule:{rid}", type="repairs")
    return g


def downstream(g: nx.MultiDiGraph, node: str) -> list[str]:
    """Components a change at `node` can reach through read_by/feeds edges."""
    seen: list[str] = []
    stack = [node]
    while stack:
        n = stack.pop()
        for _, m, data in g.out_edges(n, data=True):
            if data.get("type") in ("read_by", "feeds") and m not in seen:
                seen.append(m)
                stack.append(m)
    return seen


def to_dot(g: nx.MultiDiGraph) -> str:
    shapes = {
        "component": "box",
        "variable": "ellipse",
        "rule": "diamond",
        "action": "note",
        "signature": "plaintext",
    }

    def q(s: Any) -> str:
        return '"' + str(s).replace("\\", "\\\\").replace('"', '\\"') + '"'

    lines = ["digraph remedy {", "  rankdir=LR;"]
    for n, d in g.nodes(data=True):
        lines.append(
            f"  {q(n)} [shape={shapes.get(d.get('type'), 'box')}, label={q(d.get('label', n))}];"
        )
    for a, b, d in g.edges(data=True):
        lines.append(f"  {q(a)} -> {q(b)} [label={q(d.get('type', ''))}];")
    lines.append("}")
    return "\n".join(lines) + "\n"


def to_graphml(g: nx.MultiDiGraph) -> str:
    clean = nx.MultiDiGraph()
    for n, d in g.nodes(data=True):
        clean.add_node(n, **{k: str(v) for k, v in d.items()})
    for a, b, d in g.edges(data=True):
        clean.add_edge(a, b, **{k: str(v) for k, v in d.items()})
    return "\n".join(nx.generate_graphml(clean)) + "\n"


def to_json(g: nx.MultiDiGraph) -> str:
    return json.dumps(nx.node_link_data(g, edges="edges"), indent=2, default=str) + "\n"
