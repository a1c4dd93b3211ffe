"""The last word of a run: re-run the operation that failed, and say `fixed` only if it passes.

Probes per consumer prove that the repaired links of the chain hold; they do not prove that the
user's build now works. When the plan was made from a log, `Plan.failed_operation` says which
build that log came from (the consumer's own build probe, with the headers its failing unit
included); it is run again after the steps. Still failing: `applied-not-fixed` (exit 12) with
the new first error, the steps left applied, or rolled back when the user asked for that
(`--rollback-if-not-fixed`). A plan whose log had a fatal line no finding explains cannot be
`fixed` without that re-run passing either.

Kept apart from runner.py so the service path of the final verification (restart + readiness,
`applied-restart-pending`) can grow there without touching this.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from remedy.model import Facts, Plan

if TYPE_CHECKING:
    from remedy.executor.runner import Runner, RunReport


def _first_error(res: Any, detail: str) -> str:
    """The new first error: the first fatal symptom of the re-run, else the probe's detail."""
    for s in getattr(res, "symptoms", None) or []:
        if getattr(s, "severity", "") == "fatal":
            return s.text[:500]
    return detail[:500]


async def rerun_failed_operation(
    runner: Runner, run_id: str, plan: Plan, facts: Facts, report: RunReport
) -> bool:
    """Re-run the plan's failed operation after its steps. Returns True when the run ended
    here (not fixed: the report says how); False when `fixed` may stand."""
    op = plan.failed_operation
    if op is None:
        if plan.unexplained and report.outcome == "fixed":
            # nothing to re-run, and the log's fatal line is explained by no step
            report.outcome = "applied-not-fixed"
            report.message = (
                "steps applied, but no step addresses the log's fatal line(s) and the failed "
                "operation could not be re-run to check: " + "; ".join(plan.unexplained)
            )
            await runner._journal(run_id, "finished", None, outcome=report.outcome)
            return True
        return False
    runner.phase = "re-run of the failed operation"
    runner.log(f"re-running the operation that failed ({op.consumer}: {op.probe})")
    ok, detail, res = await runner._probe(op.probe, facts, dict(op.params), consumer=op.consumer)
    entry = {
        "consumer": op.consumer,
        "probe": op.probe,
        "ok": ok,
        "detail": detail,
        "failed_operation": True,
        "was": op.first_error,
    }
    report.verification.append(entry)
    await runner._journal(run_id, "rerun", None, ok=ok, detail=detail[:2000])
    if ok:
        return False
    first = _first_error(res, detail) if ok is False else detail
    entry["first_error"] = first
    msg = (
        f"the operation that failed ({op.consumer} build, {op.probe}) "
        + ("still fails" if ok is False else "could not be re-run")
        + f" after the steps: {first} (the log's was: {op.first_error})"
    )
    if plan.unexplained:
        msg += "; not explained by this plan: " + "; ".join(plan.unexplained)
    if getattr(runner, "rollback_if_not_fixed", False):
        runner.rollback_all = True  # the user's choice: nothing of a run that did not fix
        await runner._fail(run_id, plan, report, None, None, "not fixed: " + msg)
        return True
    report.outcome = "applied-not-fixed"
    report.message = msg + "; the steps stay applied (`remedy rollback` undoes them)"
    await runner._journal(run_id, "finished", None, outcome=report.outcome)
    return True
