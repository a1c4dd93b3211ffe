"""Rules × facts → violations. The inner loop of diagnosis and of the planner's simulation."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from jinja2.exceptions import SecurityError

from remedy.errors import KnowledgeError
from remedy.knowledge.expr import plain, truthy
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
        if not truthy(rule.when(**ctx)):
            return False
        return not truthy(rule.holds(**ctx))
    except Exception as exc:  # a rule that cannot be evaluated is reported, never fatal
        errors.append(f"rule {rule.rule.id}: {type(exc).__name__}: {exc}")
        return None


def evaluate(kb: Knowledge, facts: dict[str, Any], rule_ids: set[str] | None = None) -> Evaluation:
    base = base_context(kb, facts)
    wl_consumers = list((facts.get("workload") or {}).get("consumers") or [])
    errors: list[str] = []
    picks: dict[str, Any] = {}
    found: dict[tuple[str, str], Violation] = {}
    for rid, rule in kb.rules.items():
        if rule_ids is not None and rid not in rule_ids:
            continue
        r = rule.rule
        if r.scope == "consumer":
            contexts = [
                (cid, consumer_context(kb, base, cid, picks))
                for cid in r.consumers
                if cid in wl_consumers
            ]
        else:
            contexts = [(None, base)]
        for cid, ctx in contexts:
            if not _check(rule, ctx, errors):
                continue
            try:
                subject = str(plain(rule.subject(**ctx)) or cid or rid)
            except Exception as exc:  # reported like a failed `when`, the finding is kept
                errors.append(f"rule {rid} subject: {type(exc).__name__}: {exc}")
                subject = cid or rid
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
    return Evaluation(violations=list(found.values()), errors=errors, picks=picks)


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
