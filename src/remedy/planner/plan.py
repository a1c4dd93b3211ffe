"""Turn a search result into a Plan: rendered steps with their reasons, probes, predicted fact
changes, the rejected alternatives and why, and the final verification per consumer."""

from __future__ import annotations

import contextlib
import gc
import hashlib
import json
import re
import threading
from collections.abc import Iterator
from typing import Any

from pydantic import ValidationError

from remedy import __version__
from remedy.diagnose import diagnose
from remedy.errors import InputError, PlanError
from remedy.evaluate import base_context, render
from remedy.knowledge.expr import plain
from remedy.knowledge.loader import Knowledge
from remedy.model import Facts, Plan, Rejected, Step, Symptom, Verification
from remedy.model.envdiff import applied as applied_env
from remedy.model.envdiff import describe as describe_env
from remedy.operations import Operation, OperationError, known_packages, parse_operation
from remedy.planner.provider import (
    CRITERIA,
    CRITERIA_TEXT,
    FactsProvider,
    Move,
    StepSpec,
    seal,
)
from remedy.planner.search import Reporter, SearchResult, Verdict, search
from remedy.planner.verdict import attribute, missing_files
from remedy.redact import redact_obj
from remedy.scope import LOGIN_SHELL

_GC_LOCK = threading.Lock()
_GC_HELD: list[tuple[int, ...]] = []  # the threshold before the first of nested/concurrent searches


@contextlib.contextmanager
def fewer_collections(young: int = 50_000) -> Iterator[None]:
    """The search allocates millions of short-lived containers (rule contexts, keys, sets)
    and leaves few cycles: at the default threshold (700 allocations) the cyclic collector
    scanned them over and over (a sixth of the planning time on a host with a thousand
    toolkits). Collect the youngest generation less often while any search runs (searches
    in several threads: the first saves the threshold, the last puts it back)."""
    with _GC_LOCK:
        if not _GC_HELD:
            old = gc.get_threshold()
            gc.set_threshold(max(old[0], young), *old[1:])
            _GC_HELD.append(old)
        else:
            _GC_HELD.append(_GC_HELD[0])
    try:
        yield
    finally:
        with _GC_LOCK:
            old = _GC_HELD.pop()
            if not _GC_HELD:
                gc.set_threshold(*old)


def facts_digest(facts: Facts | dict[str, Any]) -> str:
    data = facts.model_dump() if isinstance(facts, Facts) else facts
    # what the host IS, not when it was read nor what the user wants of it (the workload)
    data = {k: v for k, v in data.items() if k not in ("collected_at", "workload")}
    # redacted before the digest: a plan file is written redacted, and its digest must be
    # over exactly what it shows (redact_obj is idempotent)
    data = redact_obj(json.loads(json.dumps(data, default=str)))
    blob = json.dumps(data, sort_keys=True, default=str).encode()
    return "sha256:" + hashlib.sha256(blob).hexdigest()


def facts_diff(before: Any, after: Any, path: str = "") -> list[str]:
    """Human-readable differences between two fact snapshots (also used for stale plans)."""
    out: list[str] = []
    if before is after:  # a part the planner's states share: nothing to walk
        return out
    if isinstance(before, dict) and isinstance(after, dict):
        for k in sorted(set(before) | set(after), key=str):
            p = f"{path}.{k}" if path else str(k)
            if k not in before:
                out.append(f"+ {p} = {json.dumps(after[k], default=str)}")
            elif k not in after:
                out.append(f"- {p} (was {json.dumps(before[k], default=str)})")
            else:
                out.extend(facts_diff(before[k], after[k], p))
        return out
    if isinstance(before, list) and isinstance(after, list):
        keyed = all(
            isinstance(x, dict) and ("prefix" in x or "path" in x or "name" in x)
            for x in before + after
        )
        if keyed:

            def ident(x: dict[str, Any]) -> str:
                return str(x.get("prefix") or x.get("path") or x.get("name"))

            b = {ident(x): x for x in before}
            a = {ident(x): x for x in after}
            for k in sorted(set(b) | set(a)):
                p = f"{path}[{k}]"
                if k not in b:
                    out.append(f"+ {p}")
                elif k not in a:
                    out.append(f"- {p}")
                else:
                    out.extend(facts_diff(b[k], a[k], p))
            return out
    if before != after:
        out.append(
            f"~ {path}: {json.dumps(before, default=str)} → {json.dumps(after, default=str)}"
        )
    return out


class TraceReporter(Reporter):
    """Keeps a readable trace of the search for `remedy plan --explain`."""

    def __init__(self) -> None:
        self.lines: list[str] = []

    def starting(self, unmet: Any) -> None:
        self.lines.append(
            f"start: {len(unmet)} violated rule(s): " + ", ".join(f"{r}@{s}" for r, s in unmet)
        )

    def expanding(self, depth: int, cost: tuple[int, ...], unmet: Any) -> None:
        self.lines.append(
            f"{'  ' * depth}expand (cost {dict(zip(CRITERIA, cost, strict=True))}): "
            f"{len(unmet)} unmet"
        )

    def adding(self, depth: int, move: Any, cost: tuple[int, ...]) -> None:
        self.lines.append(f"{'  ' * depth}  try {_move_label(move)}")

    def rejecting(self, depth: int, move: Any, verdict: Verdict) -> None:
        breaks = ", ".join((verdict.data or {}).get("breaks", []))
        self.lines.append(f"{'  ' * depth}  reject {_move_label(move)}: {verdict.reason} {breaks}")

    def unfixable(self, goals: Any) -> None:
        for r, s in goals:
            self.lines.append(
                f"unfixable: {r}@{s}: none of the rule's repairs applies and no action's "
                "declared effect makes it hold; left unresolved, not searched for"
            )

    def bounding(self, goal_cost: tuple[int, ...], left: int) -> None:
        self.lines.append(
            f"stop: a plan of cost {dict(zip(CRITERIA, goal_cost, strict=True))} is found and "
            f"none of the {left} state(s) not expanded can lead to a better one"
        )

    def ending(self, result: SearchResult) -> None:
        self.lines.append(
            f"end: {len(result.moves)} move(s), {result.expansions} expansion(s), "
            f"{'solved' if result.solved else 'unsolved'}"
        )


def _move_label(move: Move) -> str:
    return " + ".join(
        f"{s.action}({', '.join(f'{k}={v}' for k, v in s.params)})" for s in move.steps
    )


def _render_step(kb: Knowledge, facts: dict[str, Any], spec: StepSpec) -> dict[str, Any]:
    ca = kb.actions[spec.action]
    ctx = {**base_context(kb, facts), **spec.as_dict()}
    return {"title": render(ca.title, ctx)}


def build_operation(kb: Knowledge, facts: dict[str, Any], spec: StepSpec) -> Operation:
    """The step's typed operation: the action's operation parameters evaluated on the facts
    the step is planned from, validated in form and checked against those facts."""
    ca = kb.actions[spec.action]
    if ca.operation is None:
        raise PlanError(f"action {spec.action!r} has no operation: it cannot be a step")
    name, params = ca.operation
    ctx = {**base_context(kb, facts), **spec.as_dict()}
    values = {k: plain(e(**ctx)) if callable(e) else e for k, e in params.items()}
    try:
        op = parse_operation({"op": name, **values})
        op.check(facts, known_packages(kb))
    except (ValueError, OperationError) as exc:
        why = (
            "; ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in exc.errors())
            if isinstance(exc, ValidationError)
            else str(exc)
        )
        raise InputError(
            f"step {spec.action} ({name}) would use a value remedy refuses to write: {why}",
            hint="the facts hold it (a path, a unit name, a package); nothing was planned",
        ) from None
    return op


def _because(
    kb: Knowledge,
    provider: FactsProvider,
    before: dict[str, Any],
    after: dict[str, Any],
    title: str,
) -> tuple[list[str], list[str]]:
    ev_a = provider.evaluation(after)
    after_keys = ev_a.keys()
    fixed = [v for v in provider.violations(before) if v.key not in after_keys]
    reasons: list[str] = []
    for v in fixed:
        cr = kb.rules[v.rule]
        facts_said = [render(b, v.ctx) for b in cr.because]
        if facts_said:
            chain = "Because " + facts_said[0]
            for f in facts_said[1:]:
                chain += ", and because " + f
            chain += f", so: {title} (then '{cr.rule.title}' holds"
            if v.consumers:
                chain += " for " + ", ".join(v.consumers)
            chain += ")."
            reasons.append(chain)
    return [v.rule for v in fixed], reasons


def _rejected(
    kb: Knowledge, provider: FactsProvider, result: SearchResult, initial: dict[str, Any]
) -> list[Rejected]:
    out: list[Rejected] = []
    seen: set[Any] = set()
    for rej in sorted(result.rejections, key=lambda r: r.depth):
        move: Move = rej.move
        key = provider.move_key(move)
        if key in seen:
            continue
        seen.add(key)
        data = rej.verdict.data or {}
        msgs = []
        for v in data.get("violations", []):
            msgs.append(render(kb.rules[v.rule].message, v.ctx))
        out.append(
            Rejected(
                action=move.main.action,
                params=move.main.as_dict(),
                reason=f"breaks {', '.join(data.get('breaks', [])) or 'another consumer'}: "
                + " | ".join(dict.fromkeys(msgs)),
                breaks=list(data.get("breaks", [])),
                rules=list(dict.fromkeys(v.rule for v in data.get("violations", []))),
            )
        )
    for (aid, _), (params, rule, why) in provider.untrusted.items():
        out.append(Rejected(action=aid, params=params, reason=why, rules=[rule]))
    # Actions that only hide a symptom are never candidates; say so where they would apply.
    for v in provider.violations(initial):
        for aid in kb.rules[v.rule].rule.repairs:
            a = kb.actions[aid].action
            if a.masks and (aid, v.subject) not in seen:
                seen.add((aid, v.subject))
                out.append(
                    Rejected(
                        action=aid,
                        params={"for": v.subject},
                        reason=f"masks the symptom, not a fix: {a.reason}",
                        breaks=[],
                        rules=[v.rule],
                    )
                )
    return out


def _verification(kb: Knowledge, facts: dict[str, Any]) -> list[Verification]:
    has_gpu = bool(facts.get("gpus"))
    out: list[Verification] = []
    consumers = list((facts.get("workload") or {}).get("consumers") or [])
    for cid in consumers:
        probes = [
            p
            for p in kb.probes.values()
            if cid in p.verifies and (has_gpu or not p.gpu) and p.level != "launch"
        ]
        if not probes:
            out.append(
                Verification(
                    consumer=cid,
                    probe="-",
                    detail="needs a GPU host" if not has_gpu else "no probe",
                )
            )
            continue
        ranked = sorted(probes, key=lambda p: -p.seconds)
        out.append(
            Verification(
                consumer=cid,
                probe=ranked[0].id,
                detail=ranked[0].title,
                fallbacks=[p.id for p in ranked[1:] if p.level != "static"],
            )
        )
    wl = facts.get("workload") or {}
    # the server itself: the knowledge's service component, proved by its launch-level probe
    lp = next((p for p in kb.probes.values() if p.level == "launch"), None)
    server = next((c.id for c in kb.components.values() if c.kind == "service"), None)
    if has_gpu and lp and server and (wl.get("service") or wl.get("launch")):
        params = {"unit": wl["service"]} if wl.get("service") else {"command": wl["launch"]}
        out.append(Verification(consumer=server, probe=lp.id, detail=lp.title, params=params))
    return out


def make_plan(
    kb: Knowledge,
    facts: Facts,
    symptoms: list[Symptom] | None = None,
    *,
    wrappers: set[str] | None = None,
    max_expansions: int = 3000,
    rules: list[str] | None = None,
    consumers: list[str] | None = None,
) -> Plan:
    """The plan for the facts' workload; with `workload.scopes` (remedy.scope), one part per
    scope (each unit's drop-in, the login shell's profile.d), chained: a later scope starts
    from the state the earlier ones predict, so a shared fix (a toolkit's layout) comes once.
    rules/consumers: the user's selection, recorded in the plan (and replayed when a saved
    plan is verified): only the steps that repair one of `rules`, only the final verification
    of `consumers`. The plan digest is computed last, over the plan as returned."""
    if facts.workload.scopes:
        from remedy.planner.scoped import make_scoped_plan

        plan = make_scoped_plan(
            kb, facts, symptoms, wrappers=wrappers, max_expansions=max_expansions
        )
        # its facts are the facts given with the scopes' workload, which facts_digest leaves
        # out: make_scoped_plan's facts_digest(facts) is theirs (a big host's facts are
        # not hashed again)
        of_facts = plan.facts_digest
    else:
        plan = plan_one(kb, facts, symptoms, wrappers=wrappers, max_expansions=max_expansions)[0]
        of_facts = plan.facts_digest  # plan_one's facts_digest(plan.facts)
    # which fatal line of the log each step addresses, and which none does (planner/verdict.py)
    attribute(plan)
    # (the login shell's plan only: a unit's environment is the unit's, whatever the session)
    login_only = not facts.workload.service and set(facts.workload.scopes) <= {LOGIN_SHELL}
    if plan.unexplained and facts.session_env and login_only:
        plan = _session_plan(kb, facts, symptoms, plan, wrappers, max_expansions)
    plan = plan.model_copy(update={"knowledge_version": kb.version})
    if rules is not None or consumers is not None:
        plan = plan.model_copy(
            update={
                "steps": [s for s in plan.steps if rules is None or set(s.fixes) & set(rules)],
                "verification": [
                    v for v in plan.verification if consumers is None or v.consumer in consumers
                ],
                "scope_rules": sorted(set(rules)) if rules is not None else None,
                "scope_consumers": sorted(set(consumers)) if consumers is not None else None,
            }
        )
    return plan.model_copy(update={"plan_digest": plan_digest(plan, of_facts=of_facts)})


def _session_plan(
    kb: Knowledge,
    facts: Facts,
    symptoms: list[Symptom] | None,
    plan: Plan,
    wrappers: set[str] | None,
    max_expansions: int,
) -> Plan:
    """A log whose fatal line the login shell's environment does not explain may come from a
    non-interactive `ssh host cmd` session (a build script, CI, cron), whose build variables
    differ (facts.session_env: e.g. CUDA_HOME exported in ~/.bashrc below Debian's "not
    interactive, return" guard). The plan for that session's environment replaces the login
    one when it explains more of the log's fatal lines; it keeps the host's facts (its
    digest), and its steps say why. A login-scope step (/etc/environment + profile.d) then
    reaches both kinds of session; `run` re-runs the failed operation in both."""
    prefixes = [tk.prefix for tk in facts.toolkits]
    env = applied_env(facts.shell_env, facts.session_env)
    # (the session does not read the user's files below the guard: their values are not its)
    pins = {k: f for k, f in facts.shell_env_from.items() if k not in facts.session_env}
    alt = facts.model_copy(update={"shell_env": env, "shell_env_from": pins})
    if facts.workload.scopes:
        from remedy.planner.scoped import make_scoped_plan

        other = make_scoped_plan(
            kb, alt, symptoms, wrappers=wrappers, max_expansions=max_expansions
        )
    else:
        other = plan_one(
            kb, alt, symptoms, wrappers=wrappers, max_expansions=max_expansions, digest=False
        )[0]
    attribute(other)
    if not other.steps or len(other.unexplained) >= len(plan.unexplained):
        return plan
    why = (
        "the log's build ran where a non-interactive `ssh host cmd` session runs it: "
        f"{describe_env(facts.session_env, prefixes)} there, unlike the login shell's "
        'environment (its ~/.bashrc assignments below the "not interactive, return" guard '
        "reach interactive shells only)"
    )
    steps = [s.model_copy(update={"because": [why, *s.because]}) for s in other.steps]
    return other.model_copy(
        update={
            "facts": plan.facts,
            "facts_digest": plan.facts_digest,
            "target": plan.target,
            "steps": steps,
            "trace": [why, *other.trace],
        }
    )


def _names(f: Any, var: str) -> bool:
    """Whether a finding's message or reasons name the variable."""
    pat = re.compile(rf"(?<![A-Za-z0-9_]){re.escape(var)}(?![A-Za-z0-9_])")
    return any(pat.search(t or "") for t in [f.message, *f.because])


_ENV_WORD = re.compile(r"(?<![A-Za-z0-9_])(?:[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+|PATH)(?![A-Za-z0-9_])")


def _mentions_env(f: Any) -> bool:
    """Whether a finding names an environment variable (CUDA_HOME, PATH, ...)."""
    return any(_ENV_WORD.search(t or "") for t in [f.message, *f.because])


def _user_file_note(facts: Facts, findings: list[Any], rule: str, subject: str) -> str:
    """Why an environment write cannot repair a rule: the variable its finding names is set
    outright by a user's own profile file (facts.shell_env_from), read after /etc/environment
    and /etc/profile.d (sandbox/scenarios/cuda-home-bashrc-stale), or, for a unit, by one of
    its EnvironmentFile=s, which override every Environment= line a drop-in adds
    (sandbox/scenarios/service-envfile-cuda-home). "" when none is."""
    f = next((f for f in findings if f.rule == rule and f.subject == subject), None)
    if facts.workload.service:
        svc = next((s for s in facts.services if s.name == facts.workload.service), None)
        if svc is None or f is None:
            return ""
        by_shell = [
            f"{k} is set by {svc.exec_shell_from.get(k, '/etc/profile')}"
            for k in sorted(svc.exec_shell_env)
            if _names(f, k)
        ]
        if by_shell:
            shell = " ".join((svc.exec_start or "").split()[:2])
            return (
                f" ({'; '.join(by_shell)}, which the unit's shell (ExecStart={shell} ...) "
                "reads after systemd's Environment= and EnvironmentFile=, a drop-in's too "
                "(bash(1) INVOCATION, `source`): remedy leaves that file to its owner; change "
                "the value there)"
            )
        unset = [k for k in svc.unset_environment if "=" not in k and _names(f, k)]
        if unset:
            return (
                f" ({', '.join(unset)} removed by the unit's UnsetEnvironment=, which systemd "
                "applies after every Environment= and EnvironmentFile=, a drop-in's too "
                "(systemd.exec(5)): remedy leaves that line to its owner "
                f"(systemctl cat {svc.name}); remove it there)"
            )
        later = [
            f"{k} is set again by {svc.dropin_overrides[k]}"
            for k in sorted(svc.dropin_overrides)
            if k != "*" and _names(f, k)
        ]
        if not later and "*" in svc.dropin_overrides and _mentions_env(f):
            later = [f"remedy's lines are dropped by {svc.dropin_overrides['*']}"]
        if later:
            return (
                f" ({'; '.join(later)}, a drop-in read after remedy's own "
                "(systemd.unit(5): every drop-in in the order of its file name; its "
                "EnvironmentFile= listed after remedy's, read later, wins: systemd.exec(5)): "
                "remedy leaves that file to its owner; change the value there or rename the "
                "drop-in to sort before zz-remedy-*.conf)"
            )
        hits = [k for k in sorted(svc.environment_files_env) if _names(f, k)]
        if not hits:
            return ""
        return (
            f" ({', '.join(hits)} set by the unit's EnvironmentFile= "
            f"({', '.join(svc.environment_files) or '?'}), which overrides every Environment= "
            "line, a drop-in's too (systemd.exec(5)): remedy leaves that file to its owner; "
            "change the value there)"
        )
    if not facts.shell_env_from:
        return ""
    hits = [
        f"{k} is set by {path}"
        for k, path in sorted(facts.shell_env_from.items())
        if f is not None and _names(f, k)
    ]
    if not hits:
        return ""
    return (
        f" ({'; '.join(hits)}, which the login shell reads after /etc/environment and "
        "/etc/profile.d, where remedy writes the login environment: remedy leaves that file "
        "to its owner; change or remove the assignment there)"
    )


def plan_one(
    kb: Knowledge,
    facts: Facts,
    symptoms: list[Symptom] | None = None,
    *,
    wrappers: set[str] | None = None,
    max_expansions: int = 3000,
    digest: bool = True,
) -> tuple[Plan, dict[str, Any]]:
    """One environment's plan, and the facts it predicts after its last step. ``digest``:
    False where the caller digests the facts itself (a scope's part of a plan, whose
    facts_digest is then left empty)."""
    symptoms = symptoms or []
    needs = missing_files(symptoms)
    if needs and not facts.workload.missing_files:
        wl = facts.workload.model_copy(update={"missing_files": needs})
        facts = facts.model_copy(update={"workload": wl})
    initial = seal(facts.model_dump())
    provider = FactsProvider(kb)
    diag = diagnose(kb, facts, symptoms, wrappers=wrappers, evaluation=provider.evaluation(initial))
    # a warning the logs show failing (ninja not found) is repaired when its rule says so
    provider.promoted = frozenset(
        f.rule
        for f in diag.findings
        if f.severity != "error" and kb.rules[f.rule].rule.planned_when_seen
    )
    trace = TraceReporter()
    with fewer_collections():
        result = search(
            provider, initial, reporter=trace, criteria=len(CRITERIA), max_expansions=max_expansions
        )

    steps: list[Step] = []
    state = initial
    for move in result.moves:
        main_title = _render_step(kb, state, move.main)["title"]
        for spec in move.steps:
            after = provider.apply(state, type(move)((spec,), move.fixes, move.subject))
            r = _render_step(kb, state, spec)
            fixes, because = _because(kb, provider, state, after, r["title"])
            ca = kb.actions[spec.action].action
            probe = kb.probes[ca.probe]
            steps.append(
                Step(
                    action=spec.action,
                    title=r["title"],
                    params=spec.as_dict(),
                    operation=build_operation(kb, state, spec),
                    probe=probe.id,
                    probe_detail=probe.title,
                    fixes=fixes,
                    because=because
                    or [
                        f"Because the next step ({main_title}) needs what this "
                        f"step provides, so: {r['title']}."
                    ],
                    risk=ca.risk,
                    cost=ca.cost.model_dump(),
                    facts_after={"changes": facts_diff(state, after)},
                    found_by_effect=move.by_effect and spec is move.main,
                )
            )
            state = after

    errors = [f for f in diag.findings if f.severity == "error" or f.rule in provider.promoted]
    if not errors:
        status = "nothing-to-do"
    elif result.solved:
        status = "ok"
    else:
        status = "partial" if result.moves else "impossible"
    unresolved = [
        f"{r} @ {s}{_user_file_note(facts, diag.findings, r, s)}" for r, s in result.unmet
    ]
    verification = _verification(kb, state) if steps or errors else []
    plan = Plan(
        remedy_version=__version__,
        host=facts.host,
        facts_digest=facts_digest(facts) if digest else "",
        knowledge_version=kb.version,
        facts=facts,
        target=facts.workload,
        findings=diag.findings,
        advice=diag.advice,
        symptoms=symptoms,
        steps=steps,
        rejected=_rejected(kb, provider, result, initial),
        verification=verification,
        criteria=CRITERIA_TEXT,
        cost=dict(zip(CRITERIA, result.cost, strict=True)),
        unresolved=unresolved,
        trace=trace.lines,
        status=status,
        evaluation_errors=list(dict.fromkeys([*diag.evaluation_errors, *provider.errors])),
    )
    return plan, state


# What a saved plan's digest covers: everything the planner derives from the facts and what
# remedy acts on (the steps' operations, the status, the final verification), with the facts
# themselves, the workload and the knowledge version. Findings, rejected alternatives and the
# trace are explanations only.
DIGEST_FIELDS = (
    "host",
    "facts_digest",
    "knowledge_version",
    "target",
    "steps",
    "verification",
    "status",
    "unresolved",
    "scope_rules",
    "scope_consumers",
)


def plan_digest(plan: Plan, *, of_facts: str | None = None) -> str:
    """``of_facts``: facts_digest(plan.facts) when the caller has just computed it (the
    planner, over facts it was given: hashing a big host's facts twice is not free)."""
    data = plan.model_dump(include=set(DIGEST_FIELDS))
    data["facts_digest"] = of_facts or facts_digest(plan.facts)
    # over what the saved file shows: it is written redacted (facts_digest does the same)
    data = redact_obj(json.loads(json.dumps(data, default=str)))
    blob = json.dumps(data, sort_keys=True, default=str).encode()
    return "sha256:" + hashlib.sha256(blob).hexdigest()
