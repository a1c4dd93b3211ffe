"""The chain as a Mermaid flowchart for markdown reports (GitHub, GitLab and most wikis draw
it). Labels are quoted and their markup characters written as Mermaid entities, so text
from a host or a log stays text."""

from __future__ import annotations

from remedy.report.chain import ChainGraph
from remedy.report.safe import strip_controls

_ENTITIES = {
    "&": "#amp;",
    '"': "#quot;",
    "<": "#lt;",
    ">": "#gt;",
    "`": "#96;",
    "#": "#35;",
    "[": "#91;",
    "]": "#93;",
    "{": "#123;",
    "}": "#125;",
    "|": "#124;",
    "\n": " ",
}
_CLASS = {"bad": "bad", "ok": "ok", "warn": "warn", "info": "info"}


def _label(text: str) -> str:
    return "".join(_ENTITIES.get(c, c) for c in strip_controls(text))


def chain_mermaid(g: ChainGraph) -> str:
    """`flowchart LR` with one subgraph per layer; node ids are n0, n1, … (never data)."""
    ids = {n.id: f"n{i}" for i, n in enumerate(g.nodes)}
    out = ["```mermaid", "flowchart LR"]
    for li, name in enumerate(g.layers):
        members = [n for n in g.nodes if n.layer == li]
        if not members:
            continue
        out.append(f'  subgraph L{li}["{_label(name)}"]')
        for n in members:
            out.append(f'    {ids[n.id]}["{_label(n.label)}"]:::{_CLASS[n.status]}')
        out.append("  end")
    for e in g.edges:
        if e.src in ids and e.dst in ids:
            arrow = f' -- "{_label(e.label)}" --> ' if e.label else " --> "
            out.append(f"  {ids[e.src]}{arrow}{ids[e.dst]}")
    out += [
        "  classDef bad fill:#fde2e1,stroke:#c0392b",
        "  classDef ok fill:#dff3e4,stroke:#2e8b57",
        "  classDef warn fill:#fff1cc,stroke:#b7791f",
        "  classDef info fill:#e8eefc,stroke:#4a6fb5",
        "```",
    ]
    return "\n".join(out) + "\n"
