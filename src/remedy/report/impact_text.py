"""`remedy impact` on a terminal, at any width, with nothing cut.

A table squeezed into 80 columns cut paths with "…" and the drop-in diff panel cropped its
lines: what a user must read or copy (a path, a value, an error, a diff line) is printed as
one line here, never cropped or folded (the terminal wraps it; a copy gives it whole). Prose
(how a consumer reads a variable, the predicted effect) wraps at words.
"""

from __future__ import annotations

from rich.console import Console, RenderableType
from rich.markup import escape
from rich.text import Text

from remedy.impact import ImpactReport
from remedy.report.wrap import Prose, whole

__all__ = ["consumer_parts", "print_impact", "prose", "simulation_parts", "whole"]


def prose(markup: str, indent: int) -> RenderableType:
    """Text that wraps at words (never inside one), indented."""
    return Prose.markup(markup, indent)


def consumer_parts(rep: ImpactReport, var: str, *, sources: bool = True) -> list[RenderableType]:
    """One variable's consumers: name and value whole, the rest wrapped."""
    value = rep.changes.get(var)
    rows = [c for c in rep.consumers if c.variable == var]
    parts: list[RenderableType] = [
        whole(
            f"{var}={value if value is not None else '(unset)'} — {len(rows)} consumer(s)", "bold"
        )
    ]
    for c in rows:
        mark = "[red bold]BREAKS[/]" if c.breaks else "[green]ok[/]"
        parts.append(prose(f"{mark} [bold]{escape(c.name)}[/] [dim]({escape(c.component)})[/]", 2))
        parts.append(prose(f"[dim]reads it:[/] {escape(c.how)}", 4))
        parts.append(prose(f"[dim]effect:[/] {escape(c.effect)}", 4))
        if c.error:
            parts.append(whole(f"error: {c.error}", "red", 4))
        if c.downstream:
            parts.append(prose("[dim]then:[/] " + escape(", ".join(c.downstream)), 4))
        if sources and c.source:
            parts.append(whole(f"source: {c.source}", "dim", 4))
    for u in [u for u in rep.unaffected if u.variable == var]:
        parts.append(prose(f"[green]unaffected[/] {escape(u.component)}: {escape(u.why)}", 2))
    return parts


def simulation_parts(rep: ImpactReport, title: str = "On this host") -> list[RenderableType]:
    if not rep.simulated:
        return []
    parts: list[RenderableType] = [Text(title + ":", style="bold")]
    for p in rep.picks:
        parts.append(whole(f"{p.component}: {p.before} → {p.after}", indent=2))
    for f in rep.new_findings:
        parts.append(
            prose(
                f"[red]new[/] {escape(f.rule)} ({escape(', '.join(f.consumers))}): "
                f"{escape(f.message)}",
                2,
            )
        )
    for f in rep.fixed_findings:
        parts.append(prose(f"[green]fixed[/] {escape(f.rule)}: {escape(f.message)}", 2))
    return parts


def print_impact(console: Console, rep: ImpactReport) -> None:
    """What `remedy impact VAR=VALUE` prints without --json."""
    for var in rep.changes:
        for part in consumer_parts(rep, var):
            console.print(part, soft_wrap=True)
    for part in simulation_parts(rep):
        console.print(part, soft_wrap=True)
    if rep.breaks:
        console.print(whole("Breaks: " + ", ".join(rep.breaks), "red bold"), soft_wrap=True)
    else:
        console.print("[green]No consumer is predicted to break.[/]")
