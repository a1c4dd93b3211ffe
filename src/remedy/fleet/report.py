"""The fleet's outcome: one record per host, the summary table, the JSON document, the exit code.

Fleet exit codes (`remedy run --inventory`), worst first — the first that applies wins:

    6  a host needs attention (its rollback failed: look at it first)
    128+N  a signal N stopped the rollout (130 Ctrl-C, 143 SIGTERM): hosts in flight at the
       first signal finished, unless a second one stopped them too (`interrupted`, lock kept)
    7  the rollout stopped: the canary failed or the error budget was spent
    3  a host failed and was rolled back, or its plan group has no complete plan
    12 a host's steps were applied but its original failure remains
    2  a host could not be handled for a reason of input (a bad host variable, …)
    5  a host was refused (held lock, stale plan)
    8  a host's key is unknown or changed
    4  a host was unreachable (at fact collection or mid-run)
    11 a host's steps were applied, its units still to restart (--verify cheap)
    14 a host's steps were applied, nothing re-run to verify them (no log, no consumer)
    13 a host was skipped (only when the rollout stopped, which 7 says first)
    0  every host is fixed or had nothing to do
    10 no host had anything to do

They keep the single-host meanings of `remedy run` (errors.py, executor/runner.py); 7 is the
fleet's own. `remedy plan --inventory`: 3 if a group has no complete plan, else 4 if a host was
unreachable, else 0. `remedy facts --inventory`: 4 if a host was unreachable, else 0.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from pydantic import BaseModel, Field

from remedy.outcomes import EXIT_STOPPED
from remedy.outcomes import OUTCOME_EXIT as RUN_EXIT

_PRECEDENCE = (6, 7, 3, 12, 2, 5, 8, 4, 11, 14, 13)

OUTCOME_EXIT = RUN_EXIT  # one table (remedy.outcomes); `skipped` is 13, never 0


class HostResult(BaseModel):
    host: str
    address: str | None = None
    outcome: str
    exit_code: int
    group: int | None = None  # plan group id (hosts with the same facts share one plan)
    batch: int | None = None  # 0 = canary when there is one
    run_id: str | None = None
    message: str = ""
    hint: str = ""
    seconds: float = 0.0
    steps: list[dict[str, Any]] = Field(default_factory=list)
    units: list[str] = Field(default_factory=list)  # units in scope (remedy.scope)
    restart_pending: list[str] = Field(default_factory=list)  # of those, not seen ready


class GroupSummary(BaseModel):
    id: int
    facts_key: str
    status: str  # the plan's: ok | nothing-to-do | partial | impossible
    hosts: list[str]
    steps: list[str]  # action: title
    unresolved: list[str] = Field(default_factory=list)


class FleetReport(BaseModel):
    command: str
    inventory: str
    limit: str | None = None
    exit_code: int = 0
    stopped: bool = False
    stop_reason: str = ""
    policy: dict[str, Any] = Field(default_factory=dict)
    counts: dict[str, int] = Field(default_factory=dict)
    seconds: float = 0.0
    groups: list[GroupSummary] = Field(default_factory=list)
    hosts: list[HostResult] = Field(default_factory=list)


def fleet_exit(results: list[HostResult], *, stopped: bool, signal: int | None = None) -> int:
    codes = {r.exit_code for r in results}
    if signal is not None and 6 not in codes:
        return 128 + signal
    if stopped:
        codes.add(EXIT_STOPPED)
    for c in _PRECEDENCE:
        if c in codes:
            return c
    if results and all(r.outcome == "nothing-to-do" for r in results):
        return 10
    return 0


def counts(results: list[HostResult]) -> dict[str, int]:
    return dict(Counter(r.outcome for r in results).most_common())


_COLOUR = {
    "fixed": "green",
    "nothing-to-do": "green",
    "skipped": "dim",
    "rolled-back": "yellow",
    "applied-not-fixed": "bold yellow",
    "applied-not-verified": "yellow",
    "unreachable": "red",
    "interrupted": "red",
    "needs-attention": "bold red",
}


def print_summary(console: Any, rep: FleetReport) -> None:
    """The table at the end of a fleet run: one row per host, then the counts and the exit."""
    from rich.markup import escape
    from rich.table import Table

    cols = ("host", "plan", "batch", "outcome", "exit", "steps", "time")
    rows: list[list[str]] = []
    for r in rep.hosts:
        done = sum(1 for s in r.steps if s.get("outcome") == "committed")
        batch = "-" if r.batch is None else str(r.batch)
        if r.batch == 0 and rep.policy.get("canary"):
            batch = "canary"
        rows.append(
            [
                r.host,
                "-" if r.group is None else str(r.group),
                batch,
                r.outcome,
                str(r.exit_code),
                f"{done}/{len(r.steps)}" if r.steps else "-",
                f"{r.seconds:.1f}s" if r.seconds else "-",
            ]
        )
    # the message gets what the other columns leave of the terminal (rich would squeeze them)
    widths = [max([len(c)] + [len(row[i]) for row in rows]) for i, c in enumerate(cols)]
    room = max(12, console.width - sum(widths) - 3 * (len(cols) + 1) - 1)
    t = Table(
        title=f"remedy {rep.command} — {len(rep.hosts)} host(s) of {rep.inventory}",
        title_justify="left",
    )
    for c, w in zip(cols, widths, strict=True):
        t.add_column(c, no_wrap=True, min_width=w)
    t.add_column("message", no_wrap=True, overflow="ellipsis", max_width=room)
    for r, row in zip(rep.hosts, rows, strict=True):
        colour = _COLOUR.get(r.outcome, "red")
        row = [escape(x) for x in row]
        row[3] = f"[{colour}]{row[3]}[/]"
        t.add_row(*row, escape(r.message.splitlines()[0][:300] if r.message else ""))
    console.print(t)
    for r in rep.hosts:  # the table cuts messages; what went wrong is worth a full line
        if r.outcome not in ("fixed", "nothing-to-do", "skipped") and r.message:
            console.print(f"  [bold]{escape(r.host)}[/]: {escape(r.message)}", highlight=False)
            if r.hint:
                console.print(f"    hint: {escape(r.hint)}", highlight=False)
    console.print(
        ", ".join(f"{n} {o}" for o, n in rep.counts.items())
        + f" — exit {rep.exit_code} ({exit_meaning(rep.exit_code)})",
        highlight=False,
    )
    if rep.stopped:
        console.print(f"[red bold]stopped:[/] {escape(rep.stop_reason)}")


def exit_meaning(code: int) -> str:
    return {
        0: "every host fixed or fine",
        10: "nothing to do",
        3: "a host failed and was rolled back / no complete plan",
        2: "bad input for a host",
        5: "a host refused",
        4: "a host unreachable",
        6: "a host needs attention",
        7: "rollout stopped",
        8: "a host key unknown or changed",
        11: "applied, units still to restart",
        12: "applied, original failure remains",
        13: "hosts skipped",
    }.get(code, "?")
