"""The service path of a run's verdict: a host that serves from a unit is fixed only when the
unit runs.

What each verification level proves for a unit in the plan's scope (remedy.scope):
  * full (default): the final verification's launch-probe restarted the unit and watched its
    own log until SGLang's readiness line and `GET /health` 200; here the unit must then
    also be `active`. Only then `fixed`. A unit whose launch could not be run or decided is
    not claimed: `applied-restart-pending`, with the unit listed.
  * cheap: nothing is restarted, so nothing about the service is observed: the outcome is
    `applied-restart-pending` (exit 11), listing the units to restart, never `fixed`.

Kept apart from runner.py's final verification of builds and imports (issue 17) on purpose:
the runner calls `settle_services` once its own verification passed.
"""

from __future__ import annotations

from typing import Any

from remedy.model import Facts, Plan
from remedy.scope import LOGIN_SHELL, scoped

PENDING = "applied-restart-pending"


def units_in_scope(plan: Plan) -> list[str]:
    """The units this plan's run must restart and see ready: every unit in scope (a unit
    fixed by a step of another scope, e.g. a shared toolkit layout, still needs its restart),
    or, for a plan made before scopes, the workload's unit when a step touches it."""
    scopes = [s for s in plan.target.scopes if s != LOGIN_SHELL]
    if scopes:
        return list(dict.fromkeys(scopes))
    unit = plan.target.service
    if unit and any(t.kind in ("service", "dropin", "unit") for s in plan.steps for t in s.touches):
        return [unit]
    return []


def facts_for(facts: Facts, scope: str | None) -> Facts:
    """The facts a step or verification of `scope` is judged with (its environment)."""
    return scoped(facts, scope) if scope else facts


def _launch_of(report: Any, unit: str) -> dict[str, Any] | None:
    for v in report.verification:
        if v.get("unit") == unit and v.get("probe") == "launch-probe":
            return v
    return None


async def settle_services(t: Any, plan: Plan, report: Any, mode: str, log: Any) -> None:
    """After a final verification that passed: `fixed` only if every unit in scope was
    restarted, reached readiness and is active now; else `applied-restart-pending`."""
    units = units_in_scope(plan)
    if not units:
        return
    pending: list[str] = []
    why: list[str] = []
    for unit in units:
        v = _launch_of(report, unit) if mode == "full" else None
        if v is None or v.get("ok") is not True:
            pending.append(unit)
            why.append(
                f"{unit}: not restarted (--verify cheap restarts nothing)"
                if mode != "full"
                else f"{unit}: no launch observed ({(v or {}).get('detail') or 'no GPU to launch on'})"
            )
            continue
        r = await t.run(["systemctl", "is-active", "--", unit], timeout=30)
        state = r.text().strip() or f"exit {r.exit_status}"
        v["active"] = state
        if state != "active":
            pending.append(unit)
            why.append(f"{unit}: ready during the launch, but {state} now")
    report.restart_pending = pending
    report.units = units
    if pending:
        report.outcome = PENDING
        report.message = (
            "steps applied; the service is not proven running: restart "
            + ", ".join(pending)
            + " ("
            + "; ".join(why)
            + ")"
        )
        report.hint = "systemctl restart " + " ".join(pending) + " (or run with --verify full)"
        log(f"restart pending: {', '.join(pending)}")
    else:
        report.message = ", ".join(units) + " restarted, active and ready"
        log(report.message)
