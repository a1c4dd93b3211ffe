"""`remedy knowledge list|show RULE`: the knowledge base as a reference a person reads.

For each rule: what it matches (the condition, the log signatures it predicts), why it
matters (the facts it rests on), the fix (the actions that repair it, with their cost and
probe), how to confirm it by hand, and the upstream source. Read from knowledge/ and
playbooks/ as loaded and validated; nothing here is a second copy of the knowledge.
"""

from __future__ import annotations

import json
import sys
from typing import Annotated, Any

import typer

from remedy.errors import InputError

knowledge_app = typer.Typer(
    no_args_is_help=True,
    rich_markup_mode=None,
    help="The rules remedy knows: what each matches, why, the fix, the source.\n\n"
    "Example: remedy knowledge show cccl-complete",
)


def _source(src: Any) -> str:
    if src is None:
        return ""
    text = src.short() if hasattr(src, "short") else str(src)
    return text if text else json.dumps(src.model_dump(exclude_none=True))


def rule_doc(kb: Any, rule_id: str) -> dict[str, Any]:
    """Everything a person needs about one rule, as data (the --json of `show`)."""
    if rule_id not in kb.rules:
        near = [r for r in kb.rules if rule_id.lower() in r.lower()]
        raise InputError(
            f"no rule {rule_id!r}",
            hint=("did you mean: " + ", ".join(near[:5]))
            if near
            else "list them with `remedy knowledge list`",
        )
    cr = kb.rules[rule_id]
    r = cr.rule
    fixes = []
    for aid in r.repairs:
        a = kb.actions[aid].action if aid in kb.actions else None
        if a is None:
            continue
        fixes.append(
            {
                "action": aid,
                "title": a.title,
                "commands": list(a.commands),
                "probe": a.probe,
                "risk": a.risk,
                "masks": bool(a.masks),
                "reason": a.reason or "",
            }
        )
    return {
        "id": r.id,
        "title": r.title,
        "severity": r.severity,
        "hard": r.hard,
        "scope": r.scope,
        "consumers": list(r.consumers),
        "matches": {"when": r.when, "violated_unless": r.holds, "subject": r.subject},
        "message": r.message,
        "because": list(r.because),
        "predicts_signatures": list(r.predicts),
        "fix": fixes,
        "breaks_component": r.breaks_component,
        "confirm_with": list(r.confirm_with),
        "source": _source(r.source),
        "defined_at": _where(cr),
    }


def _where(cr: Any) -> str:
    """file:line of the rule, from the data dir's parent (knowledge/rules.yaml:68)."""
    from pathlib import Path

    f = getattr(cr, "file", None)
    if not f:
        return ""
    p = Path(f)
    return f"{p.parent.name}/{p.name}:{cr.line}"


@knowledge_app.command("list")
def list_rules(
    json_: Annotated[bool, typer.Option("--json", help="Machine-readable JSON.")] = False,
) -> None:
    """Every rule: id, severity, what it checks, the actions that repair it.

    \b
    Example: remedy knowledge list
    """
    from remedy.knowledge.loader import load_knowledge

    kb = load_knowledge()
    rows = [
        {
            "id": rid,
            "severity": cr.rule.severity,
            "title": cr.rule.title,
            "repairs": list(cr.rule.repairs),
        }
        for rid, cr in sorted(kb.rules.items())
    ]
    if json_:
        sys.stdout.write(json.dumps(rows, indent=2) + "\n")
        return
    from remedy.report.console import terminal_console
    from remedy.report.wrap import Prose, whole

    con = terminal_console(sys.stdout)
    con.print(f"{len(rows)} rules (details: remedy knowledge show RULE)", style="bold")
    for r in rows:
        con.print(whole(f"{r['id']}  [{r['severity']}]", "bold cyan"), soft_wrap=True)
        con.print(Prose(r["title"], 2), soft_wrap=True)
        fix = ", ".join(r["repairs"]) or "none known: needs a person"
        con.print(Prose(f"fix: {fix}", 2, "dim"), soft_wrap=True)


@knowledge_app.command("show")
def show_rule(
    rule: Annotated[str, typer.Argument(metavar="RULE", help="A rule id (see `list`).")],
    json_: Annotated[bool, typer.Option("--json", help="Machine-readable JSON.")] = False,
) -> None:
    """One rule in full: what it matches, why, the fix, how to confirm, the source.

    \b
    Example: remedy knowledge show ptxas-accepts-cicc-ptx
    """
    from remedy.knowledge.loader import load_knowledge

    d = rule_doc(load_knowledge(), rule)
    if json_:
        sys.stdout.write(json.dumps(d, indent=2) + "\n")
        return
    from remedy.report.console import terminal_console
    from remedy.report.wrap import Prose, whole

    con = terminal_console(sys.stdout)

    def head(text: str) -> None:
        con.print(text, style="bold", highlight=False, markup=False)

    con.print(whole(f"{d['id']} — {d['title']}", "bold cyan"), soft_wrap=True)
    con.print(
        Prose(
            f"severity {d['severity']}"
            + (" · hard (a candidate fix that violates it is rejected)" if d["hard"] else "")
            + f" · evaluated per {d['scope']}"
            + (f" ({', '.join(d['consumers'])})" if d["consumers"] else ""),
            2,
            "dim",
        ),
        soft_wrap=True,
    )
    head("WHAT IT MATCHES")
    con.print(whole(f"when:  {d['matches']['when']}", indent=2), soft_wrap=True)
    con.print(whole(f"holds: {d['matches']['violated_unless']}", indent=2), soft_wrap=True)
    if d["predicts_signatures"]:
        con.print(
            Prose("log signatures it predicts: " + ", ".join(d["predicts_signatures"]), 2),
            soft_wrap=True,
        )
    head("WHY")
    con.print(Prose(f"message: {d['message']}", 2), soft_wrap=True)
    for b in d["because"]:
        con.print(Prose(f"because: {b}", 2), soft_wrap=True)
    if d["breaks_component"]:
        con.print(Prose(f"when it fails, {d['breaks_component']} breaks", 2), soft_wrap=True)
    head("THE FIX")
    if not d["fix"]:
        con.print(Prose("no action repairs it automatically: it needs a person", 2))
    for f in d["fix"]:
        kind = " (masks the symptom: never chosen)" if f["masks"] else ""
        con.print(whole(f"{f['action']}: {f['title']}{kind}", "bold", 2), soft_wrap=True)
        for c in f["commands"]:
            con.print(whole(f"$ {c}", "green", 4), soft_wrap=True)
        con.print(Prose(f"probe: {f['probe']} · risk {f['risk']}", 4, "dim"), soft_wrap=True)
        if f["reason"]:
            con.print(Prose(f["reason"], 4, "dim"), soft_wrap=True)
    if d["confirm_with"]:
        head("CONFIRM BY HAND")
        for c in d["confirm_with"]:
            con.print(whole(c, indent=2), soft_wrap=True)
    head("SOURCE")
    con.print(whole(d["source"], indent=2), soft_wrap=True)
    if d["defined_at"]:
        con.print(whole(f"defined at {d['defined_at']}", "dim", 2), soft_wrap=True)
