"""Terminal rendering with rich: what a person reads before saying yes."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from rich.console import Console
from rich.markup import escape
from rich.text import Text

from remedy.report.wrap import Prose, whole

if TYPE_CHECKING:
    from remedy.model import Plan
    from remedy.results import Diagnosis, Symptom


def _evidence_cell(h: Any) -> str:
    """Lines and field matches behind a hypothesis (why it ranks where it does)."""
    lines = getattr(h, "support_lines", 0)
    out = f"{lines} line{'s' if lines != 1 else ''}"
    fields = getattr(h, "matched_fields", [])
    if fields:
        out += "; " + ", ".join(fields[:2])
    return out


def _symptom_line(s: Symptom) -> str:
    where = f"{s.source}:{s.line}"
    return f"[bold]{escape(s.signature)}[/] [dim]{escape(where)}[/]  {escape(s.text[:160])}"


def print_plan(console: Console, plan: Plan, *, explain: bool = False) -> None:
    head = f"[bold]remedy plan[/] — host [cyan]{escape(plan.host)}[/]"
    if plan.target.service:
        head += f", unit [cyan]{escape(plan.target.service)}[/]"
    console.print(head)
    _print_evaluation_errors(console, plan.evaluation_errors)
    if plan.unexplained:
        console.print(
            "[bold red]not explained by this plan:[/] "
            + "; ".join(escape(u[:200]) for u in plan.unexplained)
            + " [red](no finding explains this fatal line: applying the plan will not fix it)[/]"
        )
    if plan.learned:
        print_learned(console, plan.learned)
    if plan.status == "nothing-to-do":
        console.print("[green]Nothing to do:[/] every rule for the target workload holds.")
        _print_advice(console, plan.advice)
        return
    _print_findings(console, plan.findings, plan.symptoms)
    _print_advice(console, plan.advice)
    cost = ", ".join(f"{k} {v}" for k, v in plan.cost.items())
    console.print()
    console.print(
        Prose.markup(
            f"[bold]Plan[/]: {len(plan.steps)} step(s) · cost {cost} · ranked by "
            + escape(" > ".join(plan.criteria))
        ),
        soft_wrap=True,
    )
    if not plan.steps and plan.status in ("partial", "impossible"):
        _print_no_fix(console, plan)
    for i, s in enumerate(plan.steps, 1):
        # the title and every command, path and value whole (issue 19: a panel border cut
        # titles at 80 columns): printed unwrapped, the terminal folds them, a copy is whole
        console.print()
        console.print(whole(f"{i}. {s.title}", "bold blue"), soft_wrap=True)
        for a in s.addresses:
            console.print(whole("addresses: " + a, "bold", 3), soft_wrap=True)
        if s.found_by_effect:
            console.print(
                whole("found by its declared effect (no rule lists it as a repair)", "dim", 3)
            )
        for b in s.because:
            console.print(Prose(b, 3, "italic"), soft_wrap=True)
        for c in s.commands:
            console.print(whole("$ " + c, "green", 3), soft_wrap=True)
        for t in s.touches:
            console.print(
                whole(
                    f"touches: {t.kind} {t.target}" + (f" ({t.detail})" if t.detail else ""),
                    "dim",
                    3,
                ),
                soft_wrap=True,
            )
        console.print(Prose(f"probe: {s.probe} — {s.probe_detail}", 3, "cyan"), soft_wrap=True)
        if explain and s.facts_after.get("changes"):
            console.print(whole("predicted facts:", "dim", 3))
            for ch in s.facts_after["changes"]:
                console.print(whole(ch, "dim", 5), soft_wrap=True)
    rejected = _relevant_rejected(plan)
    if rejected:
        console.print("[bold]Rejected alternatives[/]")
        for r in rejected:
            params = " ".join(f"{k}={v}" for k, v in r.params.items())
            console.print(whole(f"✗ {r.action} {params}", "", 1), soft_wrap=True)
            console.print(Prose(r.reason, 3), soft_wrap=True)
    if plan.verification:
        console.print("[bold]Final verification[/] (one expensive probe per consumer):")
        for v in plan.verification:
            # the detail wrapped under its bullet (rich's own wrap left it at column 0)
            console.print(
                whole(f"• {v.consumer}: ", "", 2) + Text(v.probe, style="cyan"), soft_wrap=True
            )
            if v.detail:
                console.print(Prose(v.detail, 4, "dim"), soft_wrap=True)
    if plan.unresolved:
        console.print("[red bold]Not resolved:[/] " + escape(", ".join(plan.unresolved)))
    if explain and plan.trace:
        console.print("[bold]Search trace[/]")
        for line in plan.trace:
            text = line.lstrip(" ")  # wrapped at the line's own depth in the trace
            console.print(Prose(text, 2 + len(line) - len(text), "dim"), soft_wrap=True)


def _unresolved_rules(plan: Plan) -> set[str]:
    return {u.split(" @ ", 1)[0] for u in plan.unresolved}


def _relevant_rejected(plan: Plan) -> list[Any]:
    """With steps, every rejected alternative (they explain the choice). Without a complete
    plan, only those that would have repaired what is left: a rejected move for another
    finding explains nothing about why there is no fix."""
    if plan.steps or plan.status not in ("partial", "impossible"):
        return list(plan.rejected)
    left = _unresolved_rules(plan)
    from remedy.knowledge.loader import load_knowledge

    kb = load_knowledge()
    repairs = {a for r in left if r in kb.rules for a in kb.rules[r].rule.repairs}
    return [r for r in plan.rejected if r.action in repairs]


def _print_no_fix(console: Console, plan: Plan) -> None:
    """Why there are 0 steps: per finding left, no known repair or every repair rejected."""
    from remedy.knowledge.loader import load_knowledge

    kb = load_knowledge()
    console.print(
        "[red bold]No fix found[/]: remedy knows no sequence of actions that makes every "
        "rule hold without breaking another consumer."
    )
    rejected = {r.action for r in plan.rejected}
    for u in plan.unresolved:
        rule = u.split(" @ ", 1)[0]
        repairs = list(kb.rules[rule].rule.repairs) if rule in kb.rules else []
        if not repairs:
            why = "no action in playbooks/ repairs this rule: it needs a person"
        elif all(a in rejected for a in repairs):
            why = "every action that repairs it was rejected (below: what each would break)"
        else:
            why = "the actions that repair it (" + ", ".join(repairs) + ") do not apply here"
        console.print(whole(f"• {u}", "bold", 2), soft_wrap=True)
        console.print(Prose(why, 4), soft_wrap=True)
        f = next((f for f in plan.findings if f.rule == rule), None)
        if f is not None and f.confirm_with:
            console.print(
                Prose("check by hand: " + "; ".join(f.confirm_with), 4, "dim"), soft_wrap=True
            )


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
        console.print(
            Prose.markup(f"[red]✗[/] [bold]{escape(f.rule)}[/]  [dim]{who}[/]  {seen}", 1),
            soft_wrap=True,
        )
        console.print(Prose(f.message, 3), soft_wrap=True)
        if f.source:
            console.print(whole(f"source: {f.source.short()}", "dim", 3), soft_wrap=True)
    if symptoms:
        console.print(f"[bold]Symptoms in the logs[/] ({len(symptoms)}):")
        for s in symptoms[:30]:
            _print_symptom(console, s)
        if len(symptoms) > 30:
            console.print(f"  … and {len(symptoms) - 30} more")


def _print_symptom(console: Console, s: Symptom) -> None:
    """The signature and file:line whole (a user opens that line), the log text wrapped."""
    console.print(whole(f"{s.signature} {s.source}:{s.line}", "bold", 2), soft_wrap=True)
    console.print(Prose(s.text[:240], 4), soft_wrap=True)


def _print_hypotheses(console: Console, hypotheses: list[Any]) -> None:
    """One block per cause, wrapped like the plan's findings: a table at 80 columns cut the
    rule names and the commands to confirm each ('test -f $CUDA_HOME/includ…')."""
    console.print("[bold]Hypotheses[/] (log only: collect facts to confirm)")
    for i, h in enumerate(hypotheses, 1):
        learned = h.source == "learned"
        score = "learned" if learned else f"score {h.score:.2f}"
        evidence = "wording like the corpus's logs of this class" if learned else _evidence_cell(h)
        console.print(whole(f"{i}. {h.rule}", "bold", 1), soft_wrap=True)
        console.print(Prose(f"{score} · {h.confidence:.0%} · {evidence}", 4, "dim"), soft_wrap=True)
        console.print(Prose(h.message, 4), soft_wrap=True)
        if h.confirm_with:
            console.print(
                Prose("confirm with: " + "; ".join(h.confirm_with), 4, "dim"), soft_wrap=True
            )


def _print_advice(console: Console, advice: list[Any]) -> None:
    for f in advice:
        console.print(
            Prose.markup(f" [yellow]![/] advice [bold]{escape(f.rule)}[/]: {escape(f.message)}"),
            soft_wrap=True,
        )


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


def print_learned(console: Console, learned: list[Any]) -> None:
    """A learned hypothesis is a hint: say so, with its probability and what would settle it."""
    top = learned[0]
    console.print(
        f"[yellow]No rule matches this log.[/] Its wording resembles [bold]{escape(top.rule)}"
        f"[/] ({top.probability or 0:.0%}, source: learned from the corpus); no repair is "
        "planned from a learned class."
    )
    for h in learned:
        if h.settle_with:
            console.print(f"  to settle {escape(h.rule)}: {escape(h.settle_with)}")


def print_diagnosis(console: Console, diag: Diagnosis) -> None:
    _print_evaluation_errors(console, diag.evaluation_errors)
    _print_advice(console, diag.advice)
    if diag.findings:
        _print_findings(console, diag.findings, diag.symptoms)
        said: set[tuple[str, ...]] = set()
        for f in diag.findings:  # one line per rule: its findings per consumer predict alike
            key = (f.rule, *f.predicts)
            if f.predicts and key not in said:
                said.add(key)
                console.print(
                    Prose.markup(
                        f"[yellow]next in the chain if '{escape(f.rule)}' stays:[/] "
                        + escape(", ".join(f.predicts))
                    ),
                    soft_wrap=True,
                )
    elif diag.host:
        console.print("[green]No finding:[/] every rule holds on these facts.")
        if diag.symptoms:
            for s in diag.symptoms[:30]:
                _print_symptom(console, s)
    else:
        if diag.symptoms:
            console.print(f"[bold]Symptoms[/] ({len(diag.symptoms)}):")
            for s in diag.symptoms[:30]:
                _print_symptom(console, s)
        if diag.hypotheses:
            _print_hypotheses(console, diag.hypotheses[:8])
            top = diag.hypotheses[0]
            if top.source == "learned":
                print_learned(console, diag.hypotheses)
            elif top.settle_with:
                console.print(
                    Prose.markup(
                        f"[bold]Would settle it[/] ({top.confidence:.0%} on {escape(top.rule)}): "
                        + escape(top.settle_with)
                    ),
                    soft_wrap=True,
                )
        else:
            console.print("[yellow]No known failure matches this log.[/]")
    if diag.unexplained and not diag.findings:
        pass
    ruled = [h for h in diag.hypotheses if h.source == "rules"]
    if diag.suspicious and not ruled and not diag.findings:
        console.print("[bold]Most suspicious lines[/]:")
        for s in diag.suspicious[:10]:
            console.print(f"  [dim]{escape(s.source)}:{s.line}[/] {escape(s.text[:200])}")
    if diag.collect_next:
        console.print(
            Prose.markup("[bold]Collect next[/]: " + escape("; ".join(diag.collect_next[:5]))),
            soft_wrap=True,
        )
