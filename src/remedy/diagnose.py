"""Rules × facts × symptoms → findings (with facts) or ranked hypotheses (log only).

With facts, every violated rule is a finding; a finding explains the symptoms whose signature
it predicts, and the predicted signatures not seen yet are the next links of the chain. With
a log alone, several causes stay consistent with what was seen: each is a hypothesis, scored
by how specific its evidence is, with the fact that would confirm it.
"""

from __future__ import annotations

import re
from collections import defaultdict
from typing import TYPE_CHECKING, Any

from remedy.evaluate import Evaluation, Violation, evaluate, render
from remedy.knowledge.loader import Knowledge
from remedy.model import Diagnosis, Facts, Finding, Hypothesis, Symptom

if TYPE_CHECKING:
    from remedy.evidence.catalog import Catalog

# Signatures that only say "something failed somewhere else".
WRAPPER_WEIGHT = 0.15
# Informational lines (a path, a version banner): evidence, but weaker than an error.
INFO_WEIGHT = 0.5


def finding_from(kb: Knowledge, v: Violation) -> Finding:
    cr = kb.rules[v.rule]
    r = cr.rule
    return Finding(
        rule=r.id,
        message=render(cr.message, v.ctx),
        subject=v.subject,
        consumer=v.consumers[0] if v.consumers else None,
        affects=list(v.consumers),
        toolkit=(v.ctx.get("tk") or {}).get("prefix") if v.ctx.get("tk") else None,
        severity=r.severity,
        because=[render(b, v.ctx) for b in cr.because],
        predicts=list(r.predicts),
        source=r.source,
        confirm_with=[render(c, v.ctx) for c in cr.confirm_with],
    )


def link_symptoms(
    findings: list[Finding], symptoms: list[Symptom], wrappers: set[str] | None = None
) -> list[int]:
    """Fill explains/observed/predicts; return indexes of error symptoms nobody explains.

    A finding counts as observed only through a specific signature: wrapper lines ("Ninja
    build failed", sigquit) are consistent with many causes and prove none of them."""
    wrappers = wrappers or set()
    explained: set[int] = set()
    for f in findings:
        predicted = set(f.predicts)
        f.explains = [i for i, s in enumerate(symptoms) if s.signature in predicted]
        seen = {symptoms[i].signature for i in f.explains}
        f.observed = any(symptoms[i].signature not in wrappers for i in f.explains)
        f.predicts = [sid for sid in f.predicts if sid not in seen]
        explained.update(f.explains)
    return [
        i for i, s in enumerate(symptoms) if i not in explained and s.severity in ("error", "fatal")
    ]


def hypotheses_from_log(
    kb: Knowledge, symptoms: list[Symptom], wrappers: set[str], catalog: Catalog | None = None
) -> list[Hypothesis]:
    """Rank the rules whose predicted signatures were seen (log-only diagnosis).

    Each (rule, signature) pair counts once, weighted by how specific the signature is: a
    signature only one rule predicts is worth 1, one shared by n rules 1/n, a wrapper
    (WRAPPER_WEIGHT) or an informational line (INFO_WEIGHT) less. A log that matched only
    wrappers names no cause: no hypothesis is returned, so the caller says so and shows the
    suspicious lines. Ties go to the rule with more distinct specific signatures, then by id.

    confirm_with is rendered with the partial facts the symptoms assert (the CUDA_HOME seen in
    a path, the GPU arch, the shared object), and distinguishes_from names, for every close
    hypothesis that shares evidence, the fact that would tell the two apart."""
    predicted_by: dict[str, list[str]] = defaultdict(list)
    for rid, cr in kb.rules.items():
        for sid in cr.rule.predicts:
            predicted_by[sid].append(rid)
    severity = {s.signature: s.severity for s in symptoms}
    score: dict[str, float] = defaultdict(float)
    evidence: dict[str, list[int]] = defaultdict(list)
    specific: dict[str, set[str]] = defaultdict(set)
    counted: set[tuple[str, str]] = set()
    for i, s in enumerate(symptoms):
        for rid in predicted_by.get(s.signature, ()):
            evidence[rid].append(i)
            if (rid, s.signature) in counted:
                continue
            counted.add((rid, s.signature))
            weight = 1.0 / len(predicted_by[s.signature])
            if s.signature in wrappers:
                weight *= WRAPPER_WEIGHT
            else:
                specific[rid].add(s.signature)
                if severity.get(s.signature) == "info":
                    weight *= INFO_WEIGHT
            score[rid] += weight
    if not any(specific.values()):
        return []
    ctx = _blank_ctx(kb, partial_facts_of(symptoms, catalog))
    hyps = []
    for rid, sc in score.items():
        cr = kb.rules[rid]
        hyps.append(
            Hypothesis(
                rule=rid,
                message=cr.rule.title,
                score=round(sc, 3),
                evidence=evidence[rid],
                confirm_with=[render(c, ctx) for c in cr.confirm_with],
            )
        )
    hyps.sort(key=lambda h: (-h.score, -len(specific[h.rule]), h.rule))
    # Say what tells the close ones apart: the confirming fact of each neighbour that is
    # consistent with some of the same lines.
    for h in hyps[:5]:
        for other in hyps[:5]:
            if other.rule != h.rule and set(other.evidence) & set(h.evidence):
                h.distinguishes_from[other.rule] = "; ".join(other.confirm_with[:1]) or "-"
    return hyps


def partial_facts_of(symptoms: list[Symptom], catalog: Catalog | None = None) -> dict[str, str]:
    """The partial facts the symptoms assert (first value of each key wins)."""
    if catalog is None:
        from remedy.evidence.catalog import default_catalog

        catalog = default_catalog()
    out: dict[str, str] = {}
    for s in symptoms:
        for k, v in catalog.partial_facts(s).items():
            out.setdefault(k, v)
    return out


_SM = re.compile(r"(?:sm_|compute_)(\d+?)(\d)[af]?$")


def _blank_ctx(kb: Knowledge, partial: dict[str, str] | None = None) -> dict[str, Any]:
    """A render context without facts; what the log asserts fills the few slots it can (the
    CUDA_HOME a path shows, the GPU arch ptxas or torch named)."""
    partial = partial or {}
    ctx: dict[str, Any] = dict(kb.functions.statics())
    ctx.update(kb.functions.bind({}, {}))
    cuda_home = partial.get("cuda_home") or partial.get("toolkit_prefix")
    env = {"CUDA_HOME": cuda_home} if partial.get("cuda_home") else {}
    gpu = None
    m = _SM.match(partial.get("arch", ""))
    if m:
        gpu = {"compute_cap": f"{m.group(1)}.{m.group(2)}", "name": partial["arch"]}
    ctx.update(
        env=env,
        tk=None,
        tk_path=cuda_home or "$CUDA_HOME",
        how="CUDA_HOME",
        c={},
        gpu=gpu,
        py=None,
        pkgs={},
        facts={},
        workload={},
        partial=partial,
    )
    return ctx


def diagnose(
    kb: Knowledge,
    facts: Facts | None,
    symptoms: list[Symptom],
    *,
    wrappers: set[str] | None = None,
    evaluation: Evaluation | None = None,
) -> Diagnosis:
    diag = Diagnosis(host=facts.host if facts else None, symptoms=symptoms)
    if facts is not None:
        ev = evaluation or evaluate(kb, facts.model_dump())
        diag.evaluation_errors = list(dict.fromkeys(ev.errors))
        found = [finding_from(kb, v) for v in ev.violations]
        diag.unexplained = link_symptoms(found, symptoms, wrappers)
        # a warning-level rule is advice unless the logs show what it warns about
        diag.findings = [f for f in found if f.severity == "error" or f.observed]
        diag.advice = [f for f in found if f.severity != "error" and not f.observed]
    else:
        diag.hypotheses = hypotheses_from_log(kb, symptoms, wrappers or set())
        diag.unexplained = [
            i
            for i, s in enumerate(symptoms)
            if s.severity in ("error", "fatal")
            and not any(i in h.evidence for h in diag.hypotheses)
        ]
        for h in diag.hypotheses[:3]:
            for c in h.confirm_with:
                if c not in diag.collect_next:
                    diag.collect_next.append(c)
        # what the log asserts about the host, under fact names first (catalog `facts:`),
        # then every other extracted field
        diag.partial_facts.update(partial_facts_of(symptoms))
        for s in symptoms:
            for k, val in s.fields.items():
                diag.partial_facts.setdefault(k, val)
    return diag
