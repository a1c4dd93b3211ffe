"""Terminal rendering with rich: what a person reads before saying yes."""

from __future__ import annotations

from typing import Any

from rich.console import Console, Group
from rich.markup import escape
from rich.panel import Panel
from rich.table import Table
from rich.text import Text

from remedy.model import Diagnosis, Plan, Symptom


def _symptom_line(s: Symptom) -> str:
    where = f"{s.source}:{s.line}"
    return f"[bold]{escape(s.signature)}[/] [dim]{escape(where)}[/]  {escape(s.text[:160])}"


def print_plan(console: Console, plan: Plan, *, explain: bool = False) -> None:
    head = f"[bold]remedy plan[/] — host [cyan]{escape(plan.host)}[/]"
    if plan.target.service:
        head += f", unit [cyan]{escape(plan.target.service)}[/]"
    console.print(head)
    _print_evaluation_errors(console, plan.evaluation_errors)
    if plan.status == "nothing-to-do":
        console.print("[green]Nothing to do:[/] every rule for the target workload holds.")
        _print_advice(console, plan.advice)
        return
    _print_findings(console, plan.findings, plan.symptoms)
    _print_advice(console, plan.advice)
    cost = ", ".join(f"{k} {v}" for k, v in plan.cost.items())
    console.print()
    console.print(
        f"[bold]Plan[/]: {len(plan.steps)} step(s) · cost {cost} · ranked by "
        + escape(" > ".join(plan.criteria))
    )
    for i, s in enumerate(plan.steps, 1):
        body: list[Any] = []
        for b in s.because:
            body.append(Text(b, style="italic"))
        for c in s.commands:
            body.append(Text("$ " + c, style="green"))
        touches = "; ".join(
            f"{t.kind} {t.target}" + (f" ({t.detail})" if t.detail else "") for t in s.touches
        )
        if touches:
            body.append(Text("touches: " + touches, style="dim"))
        body.append(Text(f"probe: {s.probe} — {s.probe_detail}", style="cyan"))
        if explain and s.facts_after.get("changes"):
            body.append(
                Text("predicted facts:\n  " + "\n  ".join(s.facts_after["changes"]), style="dim")
            )
        console.print(
            Panel(
                Group(*body),
                title=f"{i}. {escape(s.title)}",
                title_align="left",
                border_style="blue",
            )
        )
    if plan.rejected:
        console.print("[bold]Rejected alternatives[/]")
        for r in plan.rejected:
            params = " ".join(f"{k}={v}" for k, v in r.params.items())
            console.print(f" [red]✗[/] [bold]{escape(r.action)}[/] [dim]{escape(params)}[/]")
            console.print(f"   {escape(r.reason)}")
    if plan.verification:
        console.print("[bold]Final verification[/] (one expensive probe per consumer):")
        for v in plan.verification:
            console.print(
                f"  • {escape(v.consumer)}: [cyan]{escape(v.probe)}[/] "
                f"[dim]{escape(v.detail or '')}[/]"
            )
    if plan.unresolved:
        console.print("[red bold]Not resolved:[/] " + escape(", ".join(plan.unresolved)))
    if explain and plan.trace:
        console.print("[bold]Search trace[/]")
        for line in plan.trace:
            console.print("  " + escape(line), style="dim")


def _print_findings(console: Console, findings: list[Any], symptoms: list[Symptom]) -> None:
    console.print(f"[bold]Findings[/] ({len(findings)})")
    for f in findings:
        if f.observed:
            seen = f"[red]seen in the logs ({len(f.explains)} line(s))[/]"
        elif f.explains:
            seen = f"[yellow]predicted; {len(f.explains)} generic failure line(s) fit[/]"
        else:
            seen = "[yellow]predicted, not yet seen[/]"
        who = escape(", ".join(f.affects) or f.subject)
        console.print(f" [red]✗[/] [bold]{escape(f.rule)}[/]  [dim]{who}[/]  {seen}")
        console.print(f"   {escape(f.message)}")
        if f.source:
            console.print(f"   [dim]source: {escape(f.source.short())}[/]")
    if symptoms:
        console.print(f"[bold]Symptoms in the logs[/] ({len(symptoms)}):")
        for s in symptoms[:30]:
            console.print("  " + _symptom_line(s))
        if len(symptoms) > 30:
            console.print(f"  … and {len(symptoms) - 30} more")


def _print_advice(console: Console, advice: list[Any]) -> None:
    for f in advice:
        console.print(f" [yellow]![/] advice [bold]{escape(f.rule)}[/]: {escape(f.message)}")


def _print_evaluation_errors(console: Console, errors: list[str]) -> None:
    """A rule that cannot be evaluated is a knowledge bug: its finding may be missing."""
    if not errors:
        return
    console.print(
        f"[red bold]Knowledge errors[/] ({len(errors)}): these could not be evaluated, so "
        "their findings or fixes may be missing (run `remedy check`):"
    )
    for e in errors:
        console.print(f"  [red]![/] {escape(e)}")


def print_diagnosis(console: Console, diag: Diagnosis) -> None:
    _print_evaluation_errors(console, diag.evaluation_errors)
    _print_advice(console, diag.advice)
    if diag.findings:
        _print_findings(console, diag.findings, diag.symptoms)
        for f in diag.findings:
            if f.predicts:
                console.print(
                    f"[yellow]next in the chain if '{escape(f.rule)}' stays:[/] "
                    + escape(", ".join(f.predicts))
                )
    elif diag.host:
        console.print("[green]No finding:[/] every rule holds on these facts.")
        if diag.symptoms:
            for s in diag.symptoms[:30]:
                console.print("  " + _symptom_line(s))
    else:
        if diag.symptoms:
            console.print(f"[bold]Symptoms[/] ({len(diag.symptoms)}):")
            for s in diag.symptoms[:30]:
                console.print("  " + _symptom_line(s))
        if diag.hypotheses:
            t = Table(title="Hypotheses (log only: collect facts to confirm)", title_justify="left")
            t.add_column("#")
            t.add_column("cause")
            t.add_column("score")
            t.add_column("confirm with")
            for i, h in enumerate(diag.hypotheses[:8], 1):
                t.add_row(
                    str(i),
                    escape(f"{h.rule}: {h.message}"),
                    f"{h.score:.2f}",
                    escape("; ".join(h.confirm_with[:2])),
                )
            console.print(t)
        else:
            console.print("[yellow]No known failure matches this log.[/]")
    if diag.unexplained and not diag.findings:
        pass
    if diag.suspicious and not diag.hypotheses and not diag.findings:
        console.print("[bold]Most suspicious lines[/]:")
        for s in diag.suspicious[:10]:
            console.print(f"  [dim]{escape(s.source)}:{s.line}[/] {escape(s.text[:200])}")
    if diag.collect_next:
        console.print("[bold]Collect next[/]: " + escape("; ".join(diag.collect_next[:5])))
