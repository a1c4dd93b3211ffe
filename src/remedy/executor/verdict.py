"""The last word of a run: re-run the operation that failed, and say `fixed` only if it passes.

Probes per consumer prove that the repaired links of the chain hold; they do not prove that the
user's build now works. When the plan was made from a log, `Plan.failed_operation` says which
build that log came from (the consumer's own build probe, with the headers its failing unit
included); it is run again after the steps. Still failing: `applied-not-fixed` (exit 12) with
the new first error, the steps left applied, or rolled back when the user asked for that
(`--rollback-if-not-fixed`). A plan whose log had a fatal line no finding explains cannot be
`fixed` without that re-run passing either.

The environment of the re-run: the workload's (the unit's, else the login shell's as remedy
computes it from the profile files) and, for a workload without a unit, ALSO the environment a
new non-interactive `ssh host cmd` session really gets (a new connection: pam_env's
/etc/environment, then the user's shell, which on Debian reads ~/.bashrc down to its
"not interactive, return" guard), whenever the two differ in what a build reads. A log does not
say which of the two its build ran in, so `fixed` needs both to pass: a CUDA_HOME exported in
~/.bashrc below that guard builds in the computed login environment and fails in every
`ssh host cmd`, script and cron job (sandbox/scenarios/cuda-home-bashrc-interactive).

A plan whose run re-ran nothing (no failed operation from a log, and no consumer to verify:
`plan --consumers ""`, no consumer detected on the host, or no probe of one could run here)
proves nothing about the failure: `applied-not-verified` (exit 14), never `fixed`.

A plan with no step (every rule holds, yet the log has a fatal line none explains) re-runs the
failed operation too: still failing -> `no-complete-plan` (exit 3), never `nothing-to-do`.

Kept apart from runner.py so the service path of the final verification (restart + readiness,
`applied-restart-pending`) can grow there without touching this.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from remedy.errors import TransportError
from remedy.model import Facts, Plan
from remedy.model.envdiff import describe, session_differences
from remedy.resolve import workload_env
from remedy.syspath import SESSION_PATH_VAR

if TYPE_CHECKING:
    from remedy.executor.runner import Runner, RunReport


def _first_error(res: Any, detail: str) -> str:
    """The new first error: the first fatal symptom of the re-run, else the probe's detail."""
    for s in getattr(res, "symptoms", None) or []:
        if getattr(s, "severity", "") == "fatal":
            return s.text[:500]
    return detail[:500]


def parse_env0(out: bytes) -> dict[str, str]:
    """`env -0` run through the transport: its PATH is the transport's fixed one, the
    session's own is kept in SESSION_PATH_VAR (remedy.transport.base)."""
    env: dict[str, str] = {}
    for entry in out.decode(errors="replace").split("\0"):
        k, sep, v = entry.partition("=")
        if sep and re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", k):
            env[k] = v
    env.pop("_", None)
    if SESSION_PATH_VAR in env:
        env["PATH"] = env.pop(SESSION_PATH_VAR)
    return env


async def session_env(t: Any) -> tuple[dict[str, str] | None, str]:
    """The environment of a new non-interactive `ssh host cmd` session, read over a new
    connection (None and why when the transport cannot open one, e.g. a local run)."""
    fresh = getattr(t, "fresh", None)
    if fresh is None:
        return None, "no new SSH session can be opened on this transport"
    t2 = fresh()
    try:
        r = await t2.run(["env", "-0"], timeout=60)
        if r.exit_status != 0:
            return None, f"env -0 exited {r.exit_status} in a new session"
        return parse_env0(r.stdout), ""
    except TransportError as exc:
        return None, f"no new session: {exc}"
    finally:
        await t2.close()


async def _rerun(
    runner: Runner, plan: Plan, facts: Facts, report: RunReport
) -> tuple[bool | None, str, Any, str]:
    """The failed operation in the workload's environment, then (no unit, and the two differ
    in what a build reads) in a new `ssh host cmd` session's: the first failure, else ok;
    and where it failed ("" for the workload's environment)."""
    op = plan.failed_operation
    assert op is not None
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
    if not ok or facts.workload.service:
        return ok, detail, res, ""
    sess, why = await session_env(runner.t)
    if sess is None:
        entry["session"] = f"not re-run in a new `ssh host cmd` session: {why}"
        return ok, detail, res, ""
    login = workload_env(facts.model_dump())
    prefixes = [tk.prefix for tk in facts.toolkits]
    diff = session_differences(login, sess, prefixes)
    if not diff:
        entry["session"] = "a new `ssh host cmd` session has the same build environment"
        return ok, detail, res, ""
    where = f"a new non-interactive `ssh host cmd` session ({describe(diff, prefixes)})"
    runner.log(f"re-running it in {where}")
    # the session's own environment, as the user's next `ssh host cmd` gets it
    sfacts = facts.model_copy(update={"shell_env": sess})
    ok2, detail2, res2 = await runner._probe(
        op.probe, sfacts, dict(op.params), consumer=op.consumer
    )
    report.verification.append({**entry, "ok": ok2, "detail": detail2, "environment": where})
    if ok2:
        return ok2, detail2, res2, ""
    return ok2, detail2, res2, where


async def rerun_failed_operation(
    runner: Runner,
    run_id: str,
    plan: Plan,
    facts: Facts | None,
    report: RunReport,
    *,
    applied: bool = True,
) -> bool:
    """Re-run the plan's failed operation after its steps (`applied`), or in place of steps
    when the plan has none. Returns True when the run ended here (not fixed: the report
    says how); False when `fixed` (or `nothing-to-do`) may stand."""
    op = plan.failed_operation
    if op is None:
        if plan.unexplained and report.outcome in ("fixed", "nothing-to-do"):
            # nothing to re-run, and the log's fatal line is explained by no step
            lines = "; ".join(plan.unexplained)
            if not applied:
                report.outcome = "no-complete-plan"
                report.message = (
                    "no step addresses the log's fatal line(s) and the failed operation "
                    f"cannot be re-run to check that it passes now: {lines}; nothing was applied"
                )
                return True
            report.outcome = "applied-not-fixed"
            report.message = (
                "steps applied, but no step addresses the log's fatal line(s) and the failed "
                "operation could not be re-run to check: " + lines
            )
            await runner._journal(run_id, "finished", None, outcome=report.outcome)
            return True
        return False
    assert facts is not None
    runner.phase = "re-run of the failed operation"
    runner.log(f"re-running the operation that failed ({op.consumer}: {op.probe})")
    ok, detail, res, where = await _rerun(runner, plan, facts, report)
    if applied:
        await runner._journal(run_id, "rerun", None, ok=ok, detail=detail[:2000])
    if ok:
        if not applied:
            report.message = (
                f"every rule for the workload holds and the operation that failed ({op.consumer} "
                f"build, {op.probe}) passes now, re-run: {detail[:300]}"
            )
        return False
    first = _first_error(res, detail) if ok is False else detail
    if where:
        first = f"in {where}, though it passes in the login shell's environment: {first}"
    report.verification[-1]["first_error"] = first
    if not applied:
        report.outcome = "no-complete-plan"
        report.message = (
            f"the operation that failed ({op.consumer} build, {op.probe}) "
            + ("still fails" if ok is False else "could not be re-run")
            + f" and no step of the plan addresses it: {first} (the log's was: "
            f"{op.first_error}); nothing was applied"
        )
        if plan.unexplained:
            report.message += "; not explained by this plan: " + "; ".join(plan.unexplained)
        return True
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


UNVERIFIED = "applied-not-verified"


def claim_unverified(plan: Plan, report: RunReport) -> None:
    """A `fixed` that no re-run backs becomes `applied-not-verified`: the steps' own proofs
    show the repaired links hold, not that the user's operation works (issue 17)."""
    if report.outcome != "fixed":
        return
    if any(v.get("ok") is True for v in report.verification):
        return
    why = (
        "the plan selects no consumer to verify (--consumers)"
        if plan.scope_consumers is not None and not plan.scope_consumers
        else "no consumer of the workload was verified"
        if not report.verification
        else "no verification could run here: "
        + "; ".join(f"{v['consumer']}: {v.get('detail') or 'not run'}" for v in report.verification)
    )
    report.outcome = UNVERIFIED
    report.message = (
        f"steps applied, nothing re-run: {why}, and the plan has no failed operation (no "
        "--log); the steps' own probes passed, the failure is not shown gone"
    )
    report.hint = "re-run the operation that failed, or plan with --log/--consumers to verify"
