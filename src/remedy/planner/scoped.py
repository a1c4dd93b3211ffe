"""One plan over several scopes (remedy.scope): a part per environment, chained.

Each scope is planned with the planner as it is (the workload's environment is that unit's,
or the login shell's), from the state the scopes before it predict: a fix both need (a
toolkit's lib64 layout, aligned wheels) is planned once, in the first scope that needs it,
and each environment gets its own write (the unit's drop-in, the shell's profile.d). Steps,
findings and verifications carry their scope, so the runner proves each step in the
environment it was planned for and restarts and watches every unit in scope.
"""

from __future__ import annotations

from typing import Any

from remedy import __version__
from remedy.knowledge.loader import Knowledge
from remedy.model import Facts, Finding, Plan, Step, Symptom, Verification
from remedy.planner.plan import _verification, facts_digest, plan_one
from remedy.planner.provider import CRITERIA, CRITERIA_TEXT
from remedy.scope import LOGIN_SHELL, scoped, scoped_dict


def make_scoped_plan(
    kb: Knowledge,
    facts: Facts,
    symptoms: list[Symptom] | None = None,
    *,
    wrappers: set[str] | None = None,
    max_expansions: int = 3000,
) -> Plan:
    scopes = list(dict.fromkeys(facts.workload.scopes))
    symptoms = symptoms or []
    state: dict[str, Any] = facts.model_dump()
    steps: list[Step] = []
    findings: list[Finding] = []
    advice: list[Finding] = []
    rejected: list[Any] = []
    unresolved: list[str] = []
    trace: list[str] = []
    errors: list[str] = []  # knowledge that could not be evaluated, in any scope
    cost = dict.fromkeys(CRITERIA, 0)
    statuses: list[str] = []
    ends: dict[str, dict[str, Any]] = {}
    seen: set[tuple[str, str, str]] = set()
    for sc in scopes:
        part_facts = Facts.model_validate(scoped_dict(state, sc))
        part, after = plan_one(
            kb, part_facts, symptoms, wrappers=wrappers, max_expansions=max_expansions, digest=False
        )
        statuses.append(part.status)
        for st in part.steps:
            steps.append(st.model_copy(update={"scope": sc}))
        for f in part.findings:
            if (f.rule, f.subject, sc) not in seen:
                seen.add((f.rule, f.subject, sc))
                findings.append(f.model_copy(update={"scope": sc}))
        for f in part.advice:
            if all((a.rule, a.subject) != (f.rule, f.subject) for a in advice):
                advice.append(f.model_copy(update={"scope": sc}))
        rejected.extend(r for r in part.rejected if r not in rejected)
        errors.extend(e for e in part.evaluation_errors if e not in errors)
        unresolved.extend(f"{u} (in {sc})" for u in part.unresolved)
        trace.append(f"scope {sc}:")
        trace.extend(f"  {line}" for line in part.trace)
        for k, v in part.cost.items():
            cost[k] = cost.get(k, 0) + v
        ends[sc] = after
        state = after
    if any(s in ("partial", "impossible") for s in statuses):
        status = "partial" if steps else "impossible"
    elif all(s == "nothing-to-do" for s in statuses):
        status = "nothing-to-do"
    else:
        status = "ok"
    target = facts.workload.model_copy(deep=True)
    units = [s for s in scopes if s != LOGIN_SHELL]
    target.service = units[0] if units and LOGIN_SHELL not in scopes else None
    if LOGIN_SHELL in scopes and units:
        target.service = None
    target.scopes = scopes
    verification = (
        [] if status == "nothing-to-do" else _scoped_verification(kb, scopes, state, ends)
    )
    return Plan(
        remedy_version=__version__,
        host=facts.host,
        facts_digest=facts_digest(facts),
        facts=scoped(facts, target.service).model_copy(update={"workload": target}),
        target=target,
        findings=findings,
        advice=advice,
        symptoms=symptoms,
        steps=steps,
        rejected=rejected,
        verification=verification,
        criteria=CRITERIA_TEXT,
        cost=cost,
        unresolved=unresolved,
        trace=trace,
        status=status,  # type: ignore[arg-type]
        evaluation_errors=errors,
    )


def _scoped_verification(
    kb: Knowledge, scopes: list[str], final: dict[str, Any], ends: dict[str, dict[str, Any]]
) -> list[Verification]:
    """Per scope, the operation that failed, run again in its own environment: for the login
    shell, each consumer's own build (its expensive probe); for a unit, its launch: restarted
    and watched until ready (the server builds its JIT kernels at start-up under the unit's
    environment). A unit with no launch probe (no GPU in the facts) gets the consumers'
    builds in its environment instead, and the run will not claim it fixed."""
    out: list[Verification] = []
    for sc in scopes:
        vs = _verification(kb, scoped_dict(final, sc))
        launches = [v for v in vs if v.probe == "launch-probe"]
        if sc != LOGIN_SHELL and launches:
            vs = launches
        out.extend(v.model_copy(update={"scope": sc}) for v in vs)
    return out
