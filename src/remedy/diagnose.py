"""Rules × facts × symptoms → findings (with facts) or ranked hypotheses (log only).

With facts, every violated rule is a finding; a finding explains the symptoms whose signature
it predicts, and the predicted signatures not seen yet are the next links of the chain. With
a log alone, several causes stay consistent with what was seen: each is a hypothesis, scored
by how specific its evidence is, with the fact that would confirm it.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from remedy.evaluate import evaluate, render
from remedy.evidence.fields import (
    Signal,
    apply_signals,
    default_signals_path,
    error_lines_after,
    load_signals,
    symptom_views,
    with_stated_driver_fit,
)
from remedy.results import Diagnosis, Hypothesis, Symptom

if TYPE_CHECKING:
    from remedy.evaluate import Evaluation, Violation
    from remedy.evidence.catalog import Catalog
    from remedy.knowledge.loader import Knowledge  # or its log-only view (knowledge.logview)
    from remedy.model import Facts, Finding  # imported on first use (remedy.model)

# Signatures that only say "something failed somewhere else".
WRAPPER_WEIGHT = 0.15
# Informational lines (a path, a version banner): evidence, but weaker than an error.
INFO_WEIGHT = 0.5
# ... and where a failing line (error/fatal, not a wrapper) matched a signature too: an
# informational line then mostly breaks ties instead of outranking what failed (tune-i, round 17).
INFO_BESIDE_FAILURE_WEIGHT = 0.05


def finding_from(kb: Knowledge, v: Violation) -> Finding:
    from remedy.model import Finding

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
    kb: Knowledge,
    symptoms: list[Symptom],
    wrappers: set[str],
    catalog: Catalog | None = None,
    signals: list[Signal] | None = None,
) -> list[Hypothesis]:
    """Rank the rules whose predicted signatures were seen (log-only diagnosis).

    Each (rule, signature) pair counts once, weighted by how specific the signature is: a
    signature only one rule predicts is worth 1, one shared by n rules 1/n, a wrapper
    (WRAPPER_WEIGHT) or an informational line (INFO_WEIGHT; INFO_BESIDE_FAILURE_WEIGHT where a
    failing line matched too, where it mostly breaks ties) less. Field signals
    (knowledge/field-signals.yaml) add evidence that depends on a field of the line (the
    symbol, the missing library, the arch's suffix, the op that raised) and withdraw a line's
    credit from rules its fields rule out. A log that matched only wrappers names no cause.

    Ties are broken by evidence, never by rule id first: more independent lines, then more
    distinct specific signatures, then the smaller change (``changes_facts``: a rule whose
    repairs only report ranks before one whose repairs change the toolkit, driver, packages or
    environment, since the log cannot tell them apart and a wrong change does harm).
    ``confidence`` is the hypothesis's share of all the evidence times its strength
    score/(score+1) (one line unique to the rule alone: 0.5; it grows with
    independent lines and field matches); ``settle_with`` is the fact that would confirm it.
    confirm_with is rendered with the partial facts the symptoms assert, and distinguishes_from
    names, for every close hypothesis that shares evidence, the fact that would tell them apart."""
    if signals is None:
        signals = default_signals(kb)
    views = symptom_views(symptoms)  # the fields signals and version pairs read
    views = with_stated_driver_fit(views, [s.signature for s in symptoms], _driver_judge(kb))
    sig_res = apply_signals(signals, symptoms, views)
    predicted_by: dict[str, list[str]] = defaultdict(list)
    for rid, cr in kb.rules.items():
        for sid in cr.rule.predicts:
            predicted_by[sid].append(rid)
    severity = {s.signature: s.severity for s in symptoms}
    info_weight = (
        INFO_BESIDE_FAILURE_WEIGHT
        if any(s.severity in ("error", "fatal") and s.signature not in wrappers for s in symptoms)
        else INFO_WEIGHT
    )
    score: dict[str, float] = defaultdict(float)
    evidence: dict[str, list[int]] = defaultdict(list)
    specific: dict[str, set[str]] = defaultdict(set)
    counted: set[tuple[str, str]] = set()
    for i, s in enumerate(symptoms):
        rules = [r for r in predicted_by.get(s.signature, ()) if (r, i) not in sig_res.excluded]
        for rid in rules:
            evidence[rid].append(i)
            if (rid, s.signature) in counted:
                continue
            counted.add((rid, s.signature))
            weight = 1.0 / len(rules)
            if s.signature in wrappers:
                weight *= WRAPPER_WEIGHT
            else:
                specific[rid].add(s.signature)
                if severity.get(s.signature) == "info":
                    weight *= info_weight
            score[rid] += weight
    for rid, bonus in sig_res.bonus.items():
        # a weight-0 signal only withdraws a line's credit (its excludes); it is no evidence
        if rid not in kb.rules or not bonus:
            continue
        score[rid] += bonus
        specific[rid].add("signal:" + rid)
        evidence[rid] = sorted(set(evidence[rid]) | sig_res.lines[rid])
    _apply_pairs(
        kb, symptoms, score, evidence, specific, sig_res.matched, views, sig_res.not_theirs
    )
    if not any(specific.values()):
        return []
    ctx = _blank_ctx(kb, partial_facts_of(symptoms, catalog))
    total = sum(score.values()) or 1.0
    hyps = []
    for rid, sc in score.items():
        cr = kb.rules[rid]
        confirm = [render(c, ctx) for c in cr.confirm_with]
        hyps.append(
            Hypothesis(
                rule=rid,
                message=cr.rule.title,
                score=round(sc, 3),
                evidence=evidence[rid],
                confirm_with=confirm,
                # share of the evidence x its strength: one specific line alone is 50%
                confidence=round((sc / total) * (sc / (sc + 1.0)), 3),
                support_lines=len({(symptoms[i].source, symptoms[i].line) for i in evidence[rid]}),
                matched_fields=list(sig_res.matched.get(rid, [])),
                settle_with=confirm[0] if confirm else None,
            )
        )
    hyps.sort(
        key=lambda h: (
            -h.score,
            -h.support_lines,
            -len(specific[h.rule]),
            changes_facts(kb, h.rule),
            h.rule,
        )
    )
    hyps = yield_warning_only(hyps, symptoms, wrappers, set(predicted_by))
    # Say what tells the close ones apart: the confirming fact of each neighbour that is
    # consistent with some of the same lines.
    for h in hyps[:5]:
        for other in hyps[:5]:
            if other.rule != h.rule and set(other.evidence) & set(h.evidence):
                h.distinguishes_from[other.rule] = "; ".join(other.confirm_with[:1]) or "-"
    return hyps


def yield_warning_only(
    hyps: list[Hypothesis],
    symptoms: list[Symptom],
    wrappers: set[str],
    predicted: set[str],
) -> list[Hypothesis]:
    """Hypotheses whose every line is a warning (the run went on after it) yield to a failure
    below them that nothing explains. Why: a warning printed on every run of a stack (XLA's
    driver-older-than-ptxas, tune-ar after round 42's gcn-4; torchao's import-time skip) comes
    before whatever failed later. When that later failure is a line no rule can take (a matched
    error/fatal symptom whose signature no rule predicts, or an error statement the catalog
    does not know at all), the warning's class is dropped, so the report shows the unexplained
    line; beside a hypothesis with failing lines of its own, it ranks after it. A later line of
    a known toolchain shape (a rule predicts it, even if a field withdrew the credit here) may
    be the warning's own consequence and changes nothing; a wrapper (a shell's 'Killed') is a
    failure report, never a warning that the run survived. A log whose only statement is the
    warning keeps it.

    An informational line is judged the same way (tune-av, round 47's unknown/gcz-1): it is
    context (the source line of a traceback frame that calls a compiled op, a version banner,
    a GPU's name), evidence for a class only as the setting of a failure; when the failure
    below it is a line no rule can take (a TypeError from a wrong argument), the context names
    no cause."""

    def not_failing(i: int) -> bool:
        return symptoms[i].severity in ("warning", "info") and symptoms[i].signature not in wrappers

    warn_only = {h.rule for h in hyps if h.evidence and all(not_failing(i) for i in h.evidence)}
    if not warn_only:
        return hyps
    rest = [h for h in hyps if h.rule not in warn_only]
    warned = [i for h in hyps if h.rule in warn_only for i in h.evidence]
    last = max(warned, key=lambda i: (symptoms[i].source, symptoms[i].line))
    src, at = symptoms[last].source, symptoms[last].line
    later = any(
        s.severity in ("error", "fatal")
        and s.signature not in wrappers
        and s.signature not in predicted
        and (s.source != src or s.line > at)
        for s in symptoms
    ) or bool(error_lines_after(src, at, {s.line for s in symptoms if s.source == src}))
    if later:
        return rest
    failing = any(
        symptoms[i].severity in ("error", "fatal") and symptoms[i].signature not in wrappers
        for h in rest
        for i in h.evidence
    )
    if failing:
        return rest + [h for h in hyps if h.rule in warn_only]
    return hyps


def changes_facts(kb: Knowledge, rule: str) -> bool:
    """True when a repair of ``rule`` changes the host (an action with effects: the toolkit,
    the driver, packages, the environment); False when its repairs only report (a manual
    operation with no effects) or it has none. The tie-break of equal log-only evidence."""
    cr = kb.rules.get(rule)
    if cr is None:
        return False
    return any(kb.actions[aid].action.effects for aid in cr.rule.repairs if aid in kb.actions)


def log_versions_of(
    kb: Knowledge, symptoms: list[Symptom], views: list[dict[str, str]] | None = None
) -> dict[str, Any]:
    """The versions a log states, per normalised key (version-pairs.yaml log_fields): fields
    of every symptom, plus the nvcc command under each ninja FAILED: line."""
    from remedy.knowledge.skew import log_versions

    if views is None:
        views = symptom_views(symptoms)
    out = log_versions(views, kb.log_fields, [s.signature for s in symptoms])
    # a target nvcc rejected that the failing command requested through an arch list is the
    # list's, not the GPU's own
    plain, listed = out.get("target-plain"), out.get("target-list")
    if plain and listed and plain.value in listed.value.split():
        del out["target-plain"]
    return out


def _driver_judge(kb: Knowledge) -> Callable[[str, str, str, str], bool | None]:
    """The version-pairs relations driver-min / driver-compat (knowledge/cuda-releases.yaml,
    cuda-tables.yaml compat_drivers) as fields.with_stated_driver_fit reads them: does this
    driver run code built with this CUDA?"""
    from remedy.knowledge.skew import check

    def judge(relation: str, driver: str, kind: str, cuda: str) -> bool | None:
        return check(relation, driver, kind, cuda, "cuda", kb.functions).holds

    return judge


def _apply_pairs(
    kb: Knowledge,
    symptoms: list[Symptom],
    score: dict[str, float],
    evidence: dict[str, list[int]],
    specific: dict[str, set[str]],
    matched: dict[str, list[str]],
    views: list[dict[str, str]] | None = None,
    not_theirs: set[tuple[str, int]] | frozenset[tuple[str, int]] = frozenset(),
) -> None:
    """Version pairs judged from the versions the log states (knowledge/version-pairs.yaml):
    the relation a planner applies to host facts, applied to a log. A violated pair is
    evidence for its rule when a line the rule predicts is present, or when a failing line
    states the versions itself; a pair the log shows agreeing weighs against its rule.

    ``not_theirs`` holds (rule, symptom) pairs a field signal of another rule withdrew (its
    excludes: the line's fields say it is that other rule's). A violated pair read only from
    such lines is no evidence for the withdrawn rule either: the versions come from the very
    line the signal placed elsewhere (tune-by: the .version Triton derived from its own ptxas
    is not a cicc/ptxas pair). A signal that withdraws its own rule's bare-line credit leaves
    the pair alone (extension-cuda-mismatch-major-not-shown: the pair gives it back)."""
    if not kb.pairs or not kb.log_fields:
        return
    from remedy.knowledge.skew import log_pairs

    versions = log_versions_of(kb, symptoms, views)
    by_id = {p.id: p for p in kb.pairs}
    for v in log_pairs(kb.pairs, versions, kb.functions):
        p = by_id[v.pair]
        rid = p.target  # the pair's own rule, or the rule a log-only pair is evidence for
        if rid not in kb.rules:
            continue
        failing = any(symptoms[i].severity in ("error", "fatal") for i in v.lines)
        if v.holds:
            # a failing line that states both versions asserts a conflict the tables may not
            # cover (a minimum, a vendor's own range): never held against its rule
            if rid in score and not failing and p.log_agree_weight:
                score[rid] += p.log_agree_weight
                matched[rid].append(f"pair {p.a.part}/{p.b.part} agrees: {v.why}")
            continue
        if rid not in score and not failing:
            continue
        if all((rid, i) in not_theirs for i in v.lines):
            continue
        score[rid] += p.log_weight
        specific[rid].add("pair:" + p.id)
        evidence[rid] = sorted(set(evidence[rid]) | set(v.lines))
        matched[rid].append(f"pair {p.a.part}/{p.b.part} disagrees: {v.why}")


def default_signals(kb: Knowledge) -> list[Signal]:
    """The knowledge's field signals, checked against its rules and signatures (cached)."""
    from remedy.evidence.catalog import default_catalog

    # keyed by the knowledge object (load_knowledge caches it): no path lookups per diagnosis
    hit = _SIGNALS.get(id(kb))
    if hit is None or hit[0] is not kb:
        _SIGNALS.clear()
        hit = _SIGNALS[id(kb)] = (kb, _kept_signals(kb, default_catalog().ids()))
    return hit[1]


_SIGNALS: dict[int, tuple[Knowledge, list[Signal]]] = {}


def prepare_log_only(kb: Knowledge) -> None:
    """Load now what a log-only diagnosis of any log loads on its first use: the field
    signals checked against ``kb`` (default_signals), the GPU model table of the log's GPU
    names (fields._gpu_models) and the version-skew checks' module (log_versions_of). Each is kept where it is made, so ``diagnose`` finds them
    ready. (The symptoms, hypotheses and diagnosis it makes are plain objects,
    remedy.results: no validator to build.)

    Why: `diagnose --log` calls this while the scan worker still reads the log
    (remedy.commands); what it loads (~5 ms of CPU) was otherwise loaded after the last line
    was read, on the command's critical path. Nothing here depends on the log, and nothing
    is decided here: a failure is left for the diagnosis to raise where and when it always
    has."""
    from remedy.evidence.fields import _gpu_models

    def skew() -> None:  # log_versions_of's module: the one import left after the scan
        import remedy.knowledge.skew  # noqa: F401

    for warm in (lambda: default_signals(kb), _gpu_models, skew):
        try:
            warm()
        except Exception:  # noqa: S112 - the diagnosis meets it again and reports it
            continue


def _kept_signals(kb: Knowledge, signature_ids: list[str]) -> list[Signal]:
    """load_signals of the default file, or what the last run that checked these same bytes
    against the same rules and signatures kept (remedy.knowledge.kbcache)."""
    from remedy.evidence import evcache as kbcache

    path = default_signals_path()
    if not path.is_file():
        return []
    k = kbcache.signals_key(path, list(kb.rules), signature_ids)
    kept = kbcache.load_signals(k) if k is not None else None
    if kept is not None:
        return kept
    sigs = load_signals(path, rules=kb.rules, signatures=signature_ids)
    if k is not None:
        kbcache.save_signals(k, sigs)
    return sigs


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


def learned_hypotheses(
    kb: Knowledge, symptoms: list[Symptom], text: str, catalog: Catalog | None = None
) -> list[Hypothesis]:
    """The learned fallback (remedy.evidence.learned): the classes the log's wording resembles,
    each with its probability and the fact that would settle it, scored 0 (below any rule) and
    marked ``source: learned``. Its repairs are never planned: it is a hint, not a finding."""
    from remedy.evidence.learned import learned_classes

    found = [(rid, p) for rid, p in learned_classes(text) if rid in kb.rules]
    if not found:
        return []
    ctx = _blank_ctx(kb, partial_facts_of(symptoms, catalog))
    out = []
    for rid, p in found:
        cr = kb.rules[rid]
        confirm = [render(c, ctx) for c in cr.confirm_with]
        out.append(
            Hypothesis(
                rule=rid,
                message=cr.rule.title,
                score=0.0,
                confirm_with=confirm,
                confidence=round(p, 3),
                settle_with=confirm[0] if confirm else None,
                source="learned",
                probability=round(p, 3),
            )
        )
    return out


def learned_hint(
    kb: Knowledge, symptoms: list[Symptom], wrappers: set[str], text: str | Callable[[], str]
) -> list[Hypothesis]:
    """For a plan: the learned classes of a log no rule matches (log-only), else none.

    With no model (hints are opt-in, remedy.evidence.learned) the answer is none whatever the
    log says, so the log is not ranked or read again (~10 ms of `plan --example`); ``text``
    may be a callable, called only when a model is loaded."""
    from remedy.evidence.learned import load_model

    if load_model() is None:
        return []
    text = text() if callable(text) else text
    if not text or hypotheses_from_log(kb, symptoms, wrappers):
        return []
    return learned_hypotheses(kb, symptoms, text)


def diagnose(
    kb: Knowledge,
    facts: Facts | None,
    symptoms: list[Symptom],
    *,
    wrappers: set[str] | None = None,
    evaluation: Evaluation | None = None,
    signals: list[Signal] | None = None,
    log_text: str | Callable[[], str] | None = None,
) -> Diagnosis:
    """With facts: findings. With a log alone: ranked rule hypotheses; when no rule matches
    and ``log_text`` is given (a callable is called only then), the learned fallback's
    hypotheses (learned_hypotheses)."""
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
        diag.hypotheses = hypotheses_from_log(kb, symptoms, wrappers or set(), signals=signals)
        if not diag.hypotheses and log_text is not None:
            text = log_text() if callable(log_text) else log_text
            diag.hypotheses = learned_hypotheses(kb, symptoms, text)
        diag.unexplained = [
            i
            for i, s in enumerate(symptoms)
            if s.severity in ("error", "fatal")
            and not any(i in h.evidence for h in diag.hypotheses if h.source == "rules")
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
