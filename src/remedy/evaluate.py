"""Rules × facts → violations. The inner loop of diagnosis and of the planner's simulation."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from jinja2.exceptions import SecurityError

from remedy.errors import KnowledgeError
from remedy.knowledge.expr import call, plain, truthy
from remedy.knowledge.functions import BOUND_READS
from remedy.knowledge.loader import CompiledRule, Knowledge
from remedy.resolve import pick_toolkit, workload_env, workload_python


@dataclass
class Violation:
    rule: str
    subject: str
    consumers: list[str]
    ctx: dict[str, Any]
    hard: bool
    severity: str

    @property
    def key(self) -> tuple[str, str]:
        return (self.rule, self.subject)


@dataclass
class Evaluation:
    violations: list[Violation]
    errors: list[str] = field(default_factory=list)
    picks: dict[str, Any] = field(default_factory=dict)  # consumer -> Pick
    # for incremental evaluation (``evaluate(..., prev=)``): the facts evaluated, the server's
    # environment and Python env, and per (rule, consumer) what _check said (True, False, or
    # None with the error) and the subject of a violation
    facts: dict[str, Any] | None = None
    env: dict[str, str] | None = None
    py: Any = None
    outcomes: dict[tuple[str, str | None], tuple[bool | None, str]] = field(default_factory=dict)

    def keys(self) -> set[tuple[str, str]]:
        return {v.key for v in self.violations}

    def errors_only(self) -> list[Violation]:
        return [v for v in self.violations if v.severity == "error"]


def base_context(kb: Knowledge, facts: dict[str, Any]) -> dict[str, Any]:
    env = workload_env(facts)
    py = workload_python(facts)
    gpus = facts.get("gpus") or []
    ctx: dict[str, Any] = dict(kb.functions.statics())
    ctx.update(kb.functions.bind(facts, env))
    ctx.update(
        env=env,
        py=py,
        pkgs=(py or {}).get("packages") or {},
        gpu=gpus[0] if gpus else None,
        gpus=gpus,
        facts=facts,
        workload=facts.get("workload") or {},
    )
    return ctx


def consumer_context(
    kb: Knowledge, base: dict[str, Any], cid: str, picks: dict[str, Any]
) -> dict[str, Any]:
    comp = kb.components[cid]
    if cid not in picks:
        picks[cid] = pick_toolkit(base["facts"], comp.toolkit_lookup, base["env"])
    pick = picks[cid]
    ctx = dict(base)
    ctx.update(c=kb.functions.components[cid], tk=pick.tk, tk_path=pick.path, how=pick.how)
    return ctx


def _check(rule: CompiledRule, ctx: dict[str, Any], errors: list[str]) -> bool | None:
    """True if violated, False if it holds or does not apply, None if it could not be evaluated."""
    try:
        if not truthy(call(rule.when, ctx)):
            return False
        return not truthy(call(rule.holds, ctx))
    except Exception as exc:  # a rule that cannot be evaluated is reported, never fatal
        errors.append(f"rule {rule.rule.id}: {type(exc).__name__}: {exc}")
        return None


# ctx names that never change with the facts (a consumer's component; the static functions)
_CONSTANT = frozenset({"c"})


def _rule_names(kb: Knowledge) -> dict[str, frozenset[str]]:
    """Per rule, the context names its when/holds/subject expressions read (cached on kb)."""
    hit = _RULE_NAMES.get(id(kb))
    names = hit[1] if hit is not None and hit[0] is kb else None
    if names is None:
        names = {}
        for rid, cr in kb.rules.items():
            used: set[str] = set()
            for expr in (cr.when, cr.holds, cr.subject):
                got = getattr(expr, "remedy_names", None)
                used |= got if got is not None else {"facts"}  # unknown: reads everything
            names[rid] = frozenset(used)
        if len(_RULE_NAMES) > 8:
            _RULE_NAMES.clear()
        _RULE_NAMES[id(kb)] = (kb, names)
    return names


_RULE_NAMES: dict[int, tuple[Knowledge, dict[str, frozenset[str]]]] = {}


_PICK_NAMES = frozenset({"tk", "tk_path", "how"})  # what consumer_context adds per consumer


class _Unchanged:
    """Which context names have the same value in ``facts`` as in the previous evaluation.

    Sound only for states that share unchanged parts by identity and are never changed in
    place (the planner's copy-on-write states): a part that is the same object is unchanged."""

    def __init__(self, kb: Knowledge, prev: Evaluation, facts: dict[str, Any], base: Any) -> None:
        old = prev.facts or {}
        self.changed = {k for k in set(old) | set(facts) if old.get(k) is not facts.get(k)}
        self.env_same = prev.env == base["env"]
        py_old, py_new = prev.py, base["py"]
        self.py_same = py_old is py_new or py_old == py_new
        self.statics = kb.functions.statics()
        self.prev = prev
        self._base: dict[str, bool] = {}
        self._picks: dict[str, bool] = {}

    def same(self, name: str, cid: str | None, picks: dict[str, Any]) -> bool:
        if name in _PICK_NAMES and cid is not None:
            return self.pick_same(cid, picks)
        return self.base_same(name)

    def base_same(self, name: str) -> bool:
        """``name`` of the base context (not a consumer's pick) holds the same value."""
        got = self._base.get(name)
        if got is None:
            got = self._base[name] = self._base_same(name)
        return got

    def _base_same(self, name: str) -> bool:
        if name in _CONSTANT or name in self.statics:
            return True
        reads = BOUND_READS.get(name)
        if reads is not None:  # a function over the snapshot: the facts it reads
            return self.changed.isdisjoint(reads)
        if name == "env":
            return self.env_same
        if name in ("py", "pkgs"):
            return self.py_same
        if name in ("gpu", "gpus"):
            return "gpus" not in self.changed
        if name == "workload":
            return "workload" not in self.changed
        # facts, anything else: only if nothing changed
        return not self.changed and self.env_same

    def pick_same(self, cid: str, picks: dict[str, Any]) -> bool:
        """The consumer picks the same toolkit, path and way as before."""
        got = self._picks.get(cid)
        if got is None:
            a, b = self.prev.picks.get(cid), picks.get(cid)
            got = self._picks[cid] = (
                a is not None
                and b is not None
                and a.tk is b.tk
                and (a.path, a.how) == (b.path, b.how)
            )
        return got


def evaluate(
    kb: Knowledge,
    facts: dict[str, Any],
    rule_ids: set[str] | None = None,
    *,
    prev: Evaluation | None = None,
) -> Evaluation:
    """Every rule over ``facts``. With ``prev`` (an evaluation of a state ``facts`` was derived
    from by copy on write), a rule whose inputs are unchanged keeps its previous outcome: only
    the rules a move touched are evaluated again (the planner judges thousands of moves)."""
    base = base_context(kb, facts)
    wl_consumers = list((facts.get("workload") or {}).get("consumers") or [])
    errors: list[str] = []
    picks: dict[str, Any] = {}
    found: dict[tuple[str, str], Violation] = {}
    outcomes: dict[tuple[str, str | None], tuple[bool | None, str]] = {}
    unchanged = _Unchanged(kb, prev, facts, base) if prev is not None and rule_ids is None else None
    names = _rule_names(kb)
    # per consumer, its context (the same for every rule); per rule and consumer pick, what
    # _check said: consumers that pick the same toolkit share the outcome of a rule that
    # does not read the consumer itself (their contexts differ only in c and the pick)
    cctx: dict[str, dict[str, Any]] = {}
    memo: dict[Any, tuple[bool | None, str, list[str]]] = {}
    for rid, rule in kb.rules.items():
        if rule_ids is not None and rid not in rule_ids:
            continue
        r = rule.rule
        reads = names[rid]
        if r.scope == "consumer":
            contexts = []
            for cid in r.consumers:
                if cid in wl_consumers:
                    if cid not in cctx:
                        cctx[cid] = consumer_context(kb, base, cid, picks)
                    contexts.append((cid, cctx[cid]))
        else:
            contexts = [(None, base)]
        base_same = unchanged is not None and all(
            unchanged.same(n, None, picks) for n in reads if n not in _PICK_NAMES
        )
        by_pick = reads.isdisjoint(_PICK_NAMES)
        for cid, ctx in contexts:
            known = None
            if (
                base_same
                and unchanged is not None
                and (rid, cid) in unchanged.prev.outcomes
                and (
                    by_pick
                    or (
                        unchanged.pick_same(cid, picks)
                        if cid is not None
                        else unchanged.base_same("facts")
                    )
                )
            ):
                known = unchanged.prev.outcomes[(rid, cid)]
            if known is not None:
                status, subject = known
                if status is None:
                    errors.append(subject)
            else:
                mk = None
                if cid is not None and "c" not in reads:
                    pk = picks[cid]
                    mk = (rid, id(pk.tk), pk.path, pk.how)
                hit = memo.get(mk) if mk is not None else None
                if hit is not None:
                    status, subject, errs = hit
                else:
                    errs = []
                    status = _check(rule, ctx, errs)
                    subject = errs[0] if errs else ""
                    if status:
                        try:
                            said = str(plain(call(rule.subject, ctx)) or "")
                        except Exception as exc:  # reported like a failed `when`, finding kept
                            errs.append(f"rule {rid} subject: {type(exc).__name__}: {exc}")
                            said = ""
                        subject = said or cid or rid
                        if not said:  # named after the consumer: its own
                            mk = None
                    if mk is not None:
                        memo[mk] = (status, subject, errs)
                errors.extend(errs)
            outcomes[(rid, cid)] = (status, subject)
            if not status:
                continue
            key = (rid, subject)
            if key in found:
                if cid and cid not in found[key].consumers:
                    found[key].consumers.append(cid)
                continue
            found[key] = Violation(
                rule=rid,
                subject=subject,
                consumers=[cid] if cid else [],
                ctx=ctx,
                hard=r.hard,
                severity=r.severity,
            )
    return Evaluation(
        violations=list(found.values()),
        errors=errors,
        picks=picks,
        facts=facts,
        env=base["env"],
        py=base["py"],
        outcomes=outcomes,
    )


def _refused(template: Any, exc: SecurityError) -> KnowledgeError:
    """A template that reached for Python internals is hostile, not merely wrong: stop."""
    src = getattr(template, "remedy_source", None) or "a knowledge template"
    return KnowledgeError(f"{src}: refused by the template sandbox: {exc}")


def render_raw(template: Any, ctx: dict[str, Any]) -> str:
    """Rendered as is (commands keep their newlines); errors become a visible message, except
    a sandbox refusal, which is a KnowledgeError."""
    try:
        return template.render(**ctx).strip()
    except SecurityError as exc:
        raise _refused(template, exc) from None
    except Exception as exc:
        return f"(could not render: {type(exc).__name__}: {exc})"


def render(template: Any, ctx: dict[str, Any]) -> str:
    try:
        return " ".join(template.render(**ctx).split())
    except SecurityError as exc:
        raise _refused(template, exc) from None
    except Exception as exc:
        return f"(could not render: {type(exc).__name__}: {exc})"
