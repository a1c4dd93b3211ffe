"""Self-contained HTML reports: the chain drawn as inline SVG, the details as tables.

No script, no font, no stylesheet from anywhere: the file opens offline and the page's own
Content-Security-Policy forbids any fetch. The SVG is laid out here (layers left to right,
rows ordered by the barycentre of their neighbours to cut crossings), from the same
`ChainGraph` the Mermaid block of the markdown report is written from. Every string from a
plan, a host or a log is escaped (`html.escape`), never interpreted.
"""

from __future__ import annotations

import textwrap
from html import escape
from typing import Any

from remedy.report.chain import ChainGraph, Node

COL_W = 250  # a node's width
GAP_X = 90  # between layers
LINE_H = 15
PAD = 8
GAP_Y = 14
CHARS = 31  # characters per label line at 12px monospace in a 250px box
MAX_LINES = 4

FILL = {"bad": "#fde2e1", "ok": "#dff3e4", "warn": "#fff1cc", "info": "#e8eefc"}
STROKE = {"bad": "#c0392b", "ok": "#2e8b57", "warn": "#b7791f", "info": "#4a6fb5"}


def _lines(label: str) -> list[str]:
    lines = textwrap.wrap(label, CHARS, break_long_words=True, break_on_hyphens=False) or [""]
    if len(lines) > MAX_LINES:
        lines = lines[:MAX_LINES]
        lines[-1] = lines[-1][: CHARS - 1] + "…"  # the whole label is in the tooltip and tables
    return lines


def _order(g: ChainGraph) -> list[list[Node]]:
    """Nodes per layer, ordered by the mean row of their neighbours (a few sweeps)."""
    layers: list[list[Node]] = [[] for _ in g.layers]
    for n in g.nodes:
        layers[n.layer].append(n)
    nbrs: dict[str, list[str]] = {n.id: [] for n in g.nodes}
    for e in g.edges:
        if e.src in nbrs and e.dst in nbrs:
            nbrs[e.src].append(e.dst)
            nbrs[e.dst].append(e.src)
    for _ in range(4):
        pos = {n.id: i for layer in layers for i, n in enumerate(layer)}
        for layer in layers:
            keyed = []
            for i, n in enumerate(layer):
                near = [pos[m] for m in nbrs[n.id] if m in pos]
                keyed.append((sum(near) / len(near) if near else i, i, n))
            layer[:] = [n for _, _, n in sorted(keyed, key=lambda k: (k[0], k[1]))]
    return layers


def chain_svg(g: ChainGraph) -> str:
    """The graph as an SVG element (layered layout, bezier edges, tooltips)."""
    layers = _order(g)
    boxes: dict[str, tuple[float, float, float, float]] = {}
    heights = []
    for layer in layers:
        heights.append(sum(len(_lines(n.label)) * LINE_H + 2 * PAD + GAP_Y for n in layer))
    height = max([*heights, 60]) + 40
    width = len(layers) * (COL_W + GAP_X) - GAP_X + 40
    out: list[str] = []
    for li, layer in enumerate(layers):
        x = 20 + li * (COL_W + GAP_X)
        y = 40 + (height - 40 - heights[li]) / 2
        for n in layer:
            h = len(_lines(n.label)) * LINE_H + 2 * PAD
            boxes[n.id] = (x, y, COL_W, h)
            y += h + GAP_Y
    out.append(
        f'<svg xmlns="http://www.w3.org/2000/svg" role="img" class="chain" '
        f'width="{width}" height="{height}" viewBox="0 0 {width} {height}" '
        f'aria-label="{escape(g.title)}">'
    )
    out.append(
        '<defs><marker id="arrow" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="7" '
        'markerHeight="7" orient="auto-start-reverse"><path d="M0,0 L10,5 L0,10 z" '
        'fill="#777"/></marker></defs>'
    )
    for li, name in enumerate(g.layers):
        x = 20 + li * (COL_W + GAP_X) + COL_W / 2
        out.append(
            f'<text x="{x:.0f}" y="22" text-anchor="middle" class="layer">{escape(name)}</text>'
        )
    for e in g.edges:
        if e.src not in boxes or e.dst not in boxes:
            continue
        sx, sy, sw, sh = boxes[e.src]
        dx, dy, _, dh = boxes[e.dst]
        x1, y1, x2, y2 = sx + sw, sy + sh / 2, dx, dy + dh / 2
        c1 = c2 = (x1 + x2) / 2
        if dx <= sx:  # same or earlier layer: out of the right side and back into it
            x2 = dx + COL_W
            c1 = c2 = max(x1, x2) + GAP_X / 2
        out.append(
            f'<path class="edge" d="M{x1:.1f},{y1:.1f} C{c1:.1f},{y1:.1f} {c2:.1f},{y2:.1f} '
            f'{x2:.1f},{y2:.1f}" marker-end="url(#arrow)"><title>{escape(e.label)}</title></path>'
        )
    for layer in layers:
        for n in layer:
            x, y, w, h = boxes[n.id]
            tip = n.label + (f"\n{n.detail}" if n.detail else "")
            out.append(f'<g class="node {n.status}" data-id="{escape(n.id)}">')
            out.append(f"<title>{escape(tip)}</title>")
            out.append(
                f'<rect x="{x:.0f}" y="{y:.0f}" width="{w}" height="{h}" rx="6" '
                f'fill="{FILL[n.status]}" stroke="{STROKE[n.status]}"/>'
            )
            for k, line in enumerate(_lines(n.label)):
                out.append(
                    f'<text x="{x + PAD:.0f}" y="{y + PAD + (k + 1) * LINE_H - 3:.0f}">'
                    f"{escape(line)}</text>"
                )
            out.append("</g>")
    out.append("</svg>")
    return "\n".join(out)


_CSS = """
body{font:14px/1.45 system-ui,-apple-system,Segoe UI,Roboto,sans-serif;margin:24px;color:#1d2330}
h1{font-size:20px;margin:0 0 4px} h2{font-size:16px;margin:24px 0 8px}
.meta{color:#555;margin-bottom:16px}
.scroll{overflow-x:auto;border:1px solid #dde;border-radius:8px;padding:8px;background:#fbfcff}
svg.chain text{font:12px ui-monospace,SFMono-Regular,Menlo,monospace;fill:#1d2330}
svg.chain text.layer{font:bold 13px system-ui,sans-serif;fill:#445}
svg.chain path.edge{fill:none;stroke:#888;stroke-width:1.4}
table{border-collapse:collapse;width:100%;margin:4px 0 12px}
th,td{border:1px solid #dde;padding:4px 8px;text-align:left;vertical-align:top}
th{background:#f0f3fa} code,pre{font:12px ui-monospace,Menlo,monospace}
pre{white-space:pre-wrap;word-break:break-all;background:#f6f8fa;padding:6px;margin:4px 0}
.bad{color:#a12a1f}.ok{color:#21703f}.legend span{display:inline-block;padding:1px 8px;
margin-right:6px;border-radius:4px;border:1px solid}
"""


def _table(headers: list[str], rows: list[list[str]], cls: str = "") -> str:
    """Rows of already-escaped HTML cells."""
    if not rows:
        return "<p><em>none</em></p>"
    head = "".join(f"<th>{escape(h)}</th>" for h in headers)
    body = "".join("<tr>" + "".join(f"<td>{c}</td>" for c in r) + "</tr>" for r in rows)
    return f'<table class="{cls}"><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>'


def _page(title: str, meta: str, g: ChainGraph, sections: list[str]) -> str:
    legend = "".join(
        f'<span style="background:{FILL[k]};border-color:{STROKE[k]}">{escape(v)}</span>'
        for k, v in (("bad", "failing / breaks"), ("warn", "fixed by a step"), ("ok", "fix / fine"))
    )
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        '<meta http-equiv="Content-Security-Policy" content="default-src \'none\'; '
        "style-src 'unsafe-inline'; img-src data:\">"
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{escape(title)}</title><style>{_CSS}</style></head><body>"
        f'<h1>{escape(title)}</h1><div class="meta">{meta}</div>'
        f'<div class="legend">{legend}</div>'
        f'<h2>{escape(" → ".join(g.layers))}</h2><div class="scroll">{chain_svg(g)}</div>'
        + "".join(sections)
        + "</body></html>\n"
    )


def _e(s: Any) -> str:
    return escape(str(s))


def plan_html(plan: Any) -> str:
    """A plan (`remedy plan --report x.html`): the failure chain and every detail."""
    from remedy.report.chain import plan_chain

    g = plan_chain(plan)
    meta = (
        f"status <b>{_e(plan.status)}</b> · {len(plan.findings)} finding(s) · "
        f"{len(plan.steps)} step(s) · facts {_e(plan.facts_digest[:19])} · "
        f"remedy {_e(plan.remedy_version)}"
    )
    sections = [
        "<h2>Findings</h2>"
        + _table(
            ["rule", "affects", "message", "source"],
            [
                [
                    f"<code>{_e(f.rule)}</code>",
                    _e(", ".join(f.affects) or f.subject),
                    _e(f.message),
                    _e(f.source.short()) if f.source else "",
                ]
                for f in plan.findings
            ],
            "findings",
        ),
        "<h2>Steps</h2>"
        + _table(
            ["#", "step", "commands", "probe"],
            [
                [
                    str(i),
                    f"<b>{_e(s.title)}</b><br>" + "<br>".join(_e(b) for b in s.because),
                    "".join(f"<pre>$ {_e(c)}</pre>" for c in s.commands),
                    f"<code>{_e(s.probe)}</code> {_e(s.probe_detail or '')}",
                ]
                for i, s in enumerate(plan.steps, 1)
            ],
            "steps",
        ),
        "<h2>Rejected alternatives</h2>"
        + _table(
            ["action", "parameters", "why not"],
            [
                [
                    f"<code>{_e(r.action)}</code>",
                    _e(" ".join(f"{k}={v}" for k, v in r.params.items())),
                    _e(r.reason),
                ]
                for r in plan.rejected
            ],
        ),
        "<h2>Final verification</h2>"
        + _table(
            ["consumer", "probe", "what it does"],
            [
                [_e(v.consumer), f"<code>{_e(v.probe)}</code>", _e(v.detail or "")]
                for v in plan.verification
            ],
        ),
        "<h2>Log lines</h2>"
        + _table(
            ["where", "signature", "line"],
            [
                [_e(f"{s.source}:{s.line}"), f"<code>{_e(s.signature)}</code>", _e(s.text)]
                for s in plan.symptoms
            ],
        ),
    ]
    if plan.unresolved:
        sections.insert(
            0,
            '<h2 class="bad">Not resolved</h2><ul>'
            + "".join(f"<li>{_e(u)}</li>" for u in plan.unresolved)
            + "</ul>",
        )
    return _page(f"remedy plan — {plan.host}", meta, g, sections)


def impact_html(rep: Any, title: str = "remedy impact") -> str:
    """An impact report: the blast radius and each consumer's predicted failure."""
    from remedy.report.chain import impact_chain

    g = impact_chain(rep, title)
    changes = ", ".join(
        f"{k}={v}" if v is not None else f"unset {k}" for k, v in rep.changes.items()
    )
    meta = f"change <code>{_e(changes)}</code> · breaks: <b>{_e(', '.join(rep.breaks) or 'nothing')}</b>"
    sections = [
        "<h2>Consumers</h2>"
        + _table(
            ["consumer", "variable", "how it reads it", "predicted effect", "error", "source"],
            [
                [
                    ("<b class=bad>BREAKS</b> " if c.breaks else "") + _e(c.name),
                    f"<code>{_e(c.variable)}</code>",
                    _e(c.how),
                    _e(c.effect)
                    + ("<br>then: " + _e(", ".join(c.downstream)) if c.downstream else ""),
                    f"<pre>{_e(c.error)}</pre>" if c.error else "",
                    _e(c.source),
                ]
                for c in rep.consumers
            ],
            "consumers",
        ),
        "<h2>Unaffected</h2>"
        + _table(["component", "why"], [[_e(u.component), _e(u.why)] for u in rep.unaffected]),
    ]
    if rep.simulated:
        sections.append(
            "<h2>On this host</h2>"
            + _table(
                ["component", "picks now", "would pick"],
                [[_e(p.component), _e(p.before), _e(p.after)] for p in rep.picks],
            )
        )
    return _page(title, meta, g, sections)


def fleet_html(report: dict[str, Any]) -> str:
    """A fleet report (`--inventory --json`): groups, hosts and outcomes."""
    from remedy.report.chain import fleet_chain

    g = fleet_chain(report)
    counts = ", ".join(f"{k} {v}" for k, v in (report.get("counts") or {}).items())
    meta = (
        f"exit <b>{_e(report.get('exit_code'))}</b> · {_e(counts)} · "
        f"{_e(report.get('seconds', 0))} s"
        + (f" · stopped: {_e(report.get('stop_reason'))}" if report.get("stopped") else "")
    )
    sections = [
        "<h2>Plan groups</h2>"
        + _table(
            ["group", "status", "hosts", "steps"],
            [
                [
                    _e(grp.get("id")),
                    _e(grp.get("status")),
                    _e(", ".join(grp.get("hosts") or [])),
                    "<br>".join(_e(s) for s in grp.get("steps") or []),
                ]
                for grp in report.get("groups") or []
            ],
            "groups",
        ),
        "<h2>Hosts</h2>"
        + _table(
            ["host", "outcome", "exit", "group", "batch", "seconds", "message"],
            [
                [
                    _e(h.get("host")),
                    _e(h.get("outcome")),
                    _e(h.get("exit_code")),
                    _e(h.get("group")),
                    _e(h.get("batch")),
                    _e(h.get("seconds")),
                    _e(h.get("message") or ""),
                ]
                for h in report.get("hosts") or []
            ],
            "hosts",
        ),
    ]
    return _page(g.title, meta, g, sections)
