"""A saved plan is applied or exported only if it is what remedy plans from its own facts.

Anyone who can write the plan file could otherwise choose what root runs. The plan stores
typed operations (never shell), and before `run --plan` or `export` uses one: its knowledge
version must be this remedy's, its facts must match their digest, the planner is run again on
those facts, and every field remedy acts on (steps with their operations, status,
verification, unresolved rules) must come out the same; last, the plan digest must match.
Any difference refuses the plan with the fields that differ. Nothing has run at that point.
"""

from __future__ import annotations

import json
from typing import Any

from remedy.errors import PlanError, StalePlan
from remedy.model import Plan


class PlanRefused(StalePlan):
    """A saved plan that is not what remedy derives from its recorded facts (exit 5)."""

    label = "refused"

    def __init__(self, message: str, diff: list[str] | None = None) -> None:
        super().__init__(message, list(diff or []))
        self.hint = "make the plan again with `remedy plan ... --out FILE`"


def _short(v: Any) -> str:
    s = json.dumps(v, default=str, sort_keys=True)
    return s if len(s) <= 160 else s[:157] + "..."


def field_diff(saved: Any, derived: Any, path: str) -> list[str]:
    """`path: saved → derived` for every leaf that differs (dict keys, list indexes)."""
    if isinstance(saved, dict) and isinstance(derived, dict):
        out: list[str] = []
        for k in sorted(set(saved) | set(derived), key=str):
            p = f"{path}.{k}"
            if k not in derived:
                out.append(f"{p}: in the saved plan ({_short(saved[k])}), not planned")
            elif k not in saved:
                out.append(f"{p}: missing from the saved plan (planned {_short(derived[k])})")
            else:
                out += field_diff(saved[k], derived[k], p)
        return out
    if isinstance(saved, list) and isinstance(derived, list):
        out = []
        for i in range(max(len(saved), len(derived))):
            p = f"{path}[{i}]"
            if i >= len(derived):
                out.append(f"{p}: in the saved plan ({_short(saved[i])}), not planned")
            elif i >= len(saved):
                out.append(f"{p}: missing from the saved plan (planned {_short(derived[i])})")
            else:
                out += field_diff(saved[i], derived[i], p)
        return out
    if saved != derived:
        return [f"{path}: saved {_short(saved)}, planned {_short(derived)}"]
    return []


# the fields a re-derivation must reproduce exactly; failed_operation too: `run` re-runs it as
# a probe (before, after or without steps), and a probe's params can be a command (the launch
# probe's `command`, run by `sh -c` as root): a saved plan's own was taken as written
# (tests/security/test_saved_failed_operation.py)
DERIVED = (
    "host",
    "status",
    "steps",
    "verification",
    "unresolved",
    "failed_operation",
    "unexplained",
)


def verify_saved_plan(plan: Plan, kb: Any) -> None:
    """Raise PlanRefused (naming the fields) unless `plan` is exactly what remedy plans from
    the facts it records, with this knowledge."""
    from remedy.planner.plan import facts_digest, make_plan, plan_digest

    if plan.knowledge_version != kb.version:
        raise PlanRefused(
            "refusing the saved plan: field knowledge_version: it was made with knowledge "
            f"{plan.knowledge_version[:19] or '(none)'}, this remedy has {kb.version[:19]}",
            [f"knowledge_version: saved {plan.knowledge_version!r}, this remedy {kb.version!r}"],
        )
    if facts_digest(plan.facts) != plan.facts_digest:
        raise PlanRefused(
            "refusing the saved plan: field facts (or facts_digest): the facts do not match "
            "the plan's facts_digest (edited or damaged)",
            [f"facts_digest: saved {plan.facts_digest}, of the facts {facts_digest(plan.facts)}"],
        )
    facts = plan.facts.model_copy(update={"workload": plan.target.model_copy(deep=True)})
    try:
        derived = make_plan(
            kb,
            facts,
            list(plan.symptoms),
            rules=plan.scope_rules,
            consumers=plan.scope_consumers,
        )
    except PlanError as exc:
        raise PlanRefused(f"refusing the saved plan: its facts cannot be planned: {exc}") from None
    except Exception as exc:  # noqa: BLE001 - an InputError names what the facts hold
        raise PlanRefused(f"refusing the saved plan: {exc}") from None
    saved_d = plan.model_dump(include=set(DERIVED))
    derived_d = derived.model_dump(include=set(DERIVED))
    diff: list[str] = []
    for f in DERIVED:
        diff += field_diff(saved_d.get(f), derived_d.get(f), f)
    if diff:
        fields = list(dict.fromkeys(d.split(":", 1)[0] for d in diff))
        shown = ", ".join(fields[:6]) + (f" and {len(fields) - 6} more" if len(fields) > 6 else "")
        raise PlanRefused(
            f"refusing the saved plan: field {shown}: not what remedy plans from the plan's "
            "own facts (edited?); nothing was run",
            diff,
        )
    if plan.plan_digest != plan_digest(plan):
        raise PlanRefused(
            "refusing the saved plan: field plan_digest does not match the plan's content "
            "(edited or damaged)",
            [f"plan_digest: saved {plan.plan_digest!r}, of the content {plan_digest(plan)!r}"],
        )
