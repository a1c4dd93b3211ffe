"""Apply shows, then asks: what `run` and `rollback` will change, and a person's yes.

Why its own module: every command that changes a host goes through here, so a saved plan,
a fresh plan and a rollback are shown the same way and none of them is applied without
`--yes` or an answer at a terminal. With no terminal and no --yes nothing is applied and the
command says why (exit 5, refused).
"""

from __future__ import annotations

import sys
from typing import Any

from rich.console import Console

from remedy.errors import Refused
from remedy.model import Plan


def _show(con: Console, text: str) -> None:
    con.print(text, markup=False, highlight=False, soft_wrap=True)


def show_rollback(con: Console, host: str, target: dict[str, Any]) -> None:
    """The steps of the run a rollback restores, newest first, with what each touched."""
    _show(con, f"rollback of run {target['run_id']} on {host} ({target['outcome']}): "
               f"{len(target['steps'])} step(s) restored from their checkpoints, newest first")  # fmt: skip
    for i, title, touches in sorted(target["steps"], reverse=True):
        _show(con, f"  {i + 1}. {title}")
        for t in touches:
            _show(con, f"       restore {t.kind} {t.target}")


def ask(question: str, *, yes: bool, what: str) -> bool:
    """True with --yes or a yes at a terminal; Refused when there is no terminal to ask on."""
    if yes:
        return True
    if not sys.stdin.isatty():
        raise Refused(
            f"refusing to {what} without confirmation: no terminal to ask on; nothing was changed",
            hint="pass --yes for unattended runs",
        )
    import typer

    from remedy.interrupts import prompting
    from remedy.redact import redact_text
    from remedy.report.safe import strip_controls

    # typer's prompt writes the question itself, not through the console: a run id is a
    # directory name on the host (a hostile host's `runs` reply), its escapes would be raw
    with prompting():
        return bool(typer.confirm(strip_controls(redact_text(question), newlines=False)))


def show_plan(plan: Plan, *, json_: bool, yes: bool, console: Console) -> None:
    """The plan a run will apply: on stdout, or (with --json, when it asks) on stderr."""
    from remedy.report.terminal import print_plan

    if json_ and yes:
        return  # unattended JSON: the report lists the steps; stdout stays one document
    print_plan(console, plan)
