#!/usr/bin/env python3
"""Simulated frozen evaluation of the learned fallback (src/remedy/evidence/learned.py).

Why: the model is trained on the corpus, so its figures on the corpus say nothing; and choosing
its parameters while looking at held-out logs would make the held-out figure a tuning figure.

Method:

- ``--select``: parameters and the probability threshold are chosen ONLY on rows that are not
  held-out rounds 12/13 (files ``*/fa-*`` .. ``*/ff-*``): (a) 5-fold cross-validation grouped by
  repository over those rows (a fold's repositories are absent from its training set); (b) a
  frozen simulation of rounds 1-11: each round's logs are diagnosed by the rules frozen before
  it (bench/generalize.py CLEAN_ROUNDS) and, where those said "unknown", by a model trained on
  the corpus rows present at that round's ref (``git show REF:tests/fixtures/corpus``). The
  threshold kept is the lowest whose learned claims on (b) and (a) are right more often than
  wrong (a learned hint that is wrong half the time is noise).
- ``--final`` (run once, with the parameters in learned.PARAMS): round 12 = rules at 926b04f +
  a model trained on the rows present at 926b04f; round 13 = rules at 03c75cb + a model trained
  on the rows present at 03c75cb. Printed: top-1/top-3/unknown/harmful/learned-top-wrong/
  no-rule claims for rules alone, rules + learned fallback, and the model alone; then
  leave-one-repository-out at HEAD (rules at HEAD, the model retrained without the log's
  repository, the fallback used where the rules say unknown).

- ``--gate``: the claim gate's parameters (learned.is_distinctive; see gate()), chosen by
  leave-one-repository-out at HEAD over every corpus row (bench/generalize.py's held-out
  round figures are not consulted).
- ``--gate-generic``: words common to many labels (learned.PARAMS gate_max_labels,
  gate_pseudo_rows): main's gate and each variant, same LORO; ``--gate-check``: main's gate and
  learned.PARAMS's through remedy's own train/learned_classes (the same figures, or a bug).

    python bench/learned_eval.py --select            # parameter choice (no round 12/13 row)
    python bench/learned_eval.py --gate --save learned-gate
    python bench/learned_eval.py --gate-generic --gate-check --save learned-gate-session33
    python bench/learned_eval.py --final --save learned-final
"""

from __future__ import annotations

import argparse
import io
import json
import random
import re
import subprocess
import sys
import tarfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT / "bench"))

import generalize as gen  # noqa: E402

from remedy.evidence import learned  # noqa: E402

HELD = re.compile(r"/f[a-f]-")  # held-out rounds 12 (fa-fc) and 13 (fd-ff)
FINAL_ROUNDS = [
    ("round 12", "926b04f", re.compile(r"/f[a-c]-")),
    ("round 13", "03c75cb", re.compile(r"/f[d-f]-")),
]
RESULTS = ROOT / "bench" / "results"


def corpus_at(ref: str) -> list[dict[str, Any]]:
    """The corpus rows of ``ref`` (its index, its log texts); HEAD's working tree for WORKTREE."""
    if ref == "WORKTREE":
        base = gen.CORPUS
        rows = yaml.safe_load((base / "index.yaml").read_text())["logs"]
        texts = {r["file"]: (base / r["file"]).read_text(errors="replace") for r in rows}
    else:
        blob = subprocess.run(
            ["git", "archive", ref, "tests/fixtures/corpus"],
            cwd=ROOT,
            capture_output=True,
            check=True,
        ).stdout
        texts, rows = {}, []
        with tarfile.open(fileobj=io.BytesIO(blob)) as t:
            files = {m.name: m for m in t.getmembers() if m.isfile()}
            prefix = "tests/fixtures/corpus/"
            rows = yaml.safe_load(t.extractfile(files[prefix + "index.yaml"]).read())["logs"]
            for r in rows:
                texts[r["file"]] = (
                    t.extractfile(files[prefix + r["file"]])
                    .read()
                    .decode("utf-8", errors="replace")
                )
    for r in rows:
        r["text"] = texts[r["file"]]
        r["label"] = r.get("class") or learned.NONE
        r["repo"] = r["thread"].split("#")[0]
    return rows


def fit(rows: list[dict[str, Any]], params: dict[str, Any] | None = None) -> learned.Model:
    """The model as remedy would load it (through its JSON form: rounded weights)."""
    m = learned.train([r["text"] for r in rows], [r["label"] for r in rows], params)
    return learned.Model.from_json(json.loads(json.dumps(m.to_json())))


def grouped_oof(rows: list[dict[str, Any]], params: dict[str, Any], k: int = 5) -> dict:
    """Out-of-fold probabilities, folds grouped by repository (seeded)."""
    repos = sorted({r["repo"] for r in rows})
    random.Random(0).shuffle(repos)
    fold = {rp: i % k for i, rp in enumerate(repos)}
    out = {}
    for f in range(k):
        m = fit([r for r in rows if fold[r["repo"]] != f], params)
        for r in rows:
            if fold[r["repo"]] == f:
                out[r["file"]] = m.probabilities(r["text"])
    return out


def best(p: dict[str, float]) -> tuple[str, float]:
    """The most probable known class (never NONE) and its probability."""
    c = max((c for c in p if c != learned.NONE), key=lambda c: (p[c], c))
    return c, p[c]


def learned_ranked(p: dict[str, float], threshold: float) -> list[str]:
    """Classes the fallback would name, most probable first (none if NONE wins)."""
    ranked = sorted((c for c in p if p[c] >= threshold), key=lambda c: (-p[c], c))
    if ranked[:1] == [learned.NONE]:
        return []
    return [c for c in ranked if c != learned.NONE][:3]


def claims(rows: list[dict[str, Any]], probs: dict, threshold: float) -> tuple[int, int, int]:
    """(right, wrong, claims on class-null rows) of the fallback's first class."""
    right = wrong = null = 0
    for r in rows:
        ranked = learned_ranked(probs[r["file"]], threshold)
        if not ranked:
            continue
        if r.get("class") is None:
            null += 1
        elif ranked[0] == r["class"]:
            right += 1
        else:
            wrong += 1
    return right, wrong, null


THRESHOLDS = [0.0, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8]
GRID: list[dict[str, Any]] = [
    {"kind": "nb", "alpha": alpha, "temperature": t}
    for alpha in (0.01, 0.1, 0.3)
    for t in (1.0, 2.0)
] + [
    {"kind": "lr", "C": 100.0, "epochs": 80, "min_df": 2},
    {"kind": "lr", "C": 1000.0, "epochs": 80, "min_df": 2},
]
# a wrong hint (or a class claimed for a log whose cause has no rule) costs twice what a right
# one gains: the choice keeps hints right at least two times in three
WRONG_COST = 2


def utility(right: int, wrong: int, null: int) -> int:
    return right - WRONG_COST * (wrong + null)


def clean_round_runs() -> dict[str, dict[str, Any]]:
    """Rounds 1-11 of generalize.CLEAN_ROUNDS: file -> (knowledge ref, corpus ref, ranked)."""
    rows = gen._rows()
    owner: dict[str, int] = {}
    for i, (_, cref) in enumerate(gen.CLEAN_ROUNDS):
        for r in [*gen.unseen(rows, cref), *gen.unseen(rows, cref, no_rule=True)]:
            owner[r["file"]] = i
    out: dict[str, dict[str, Any]] = {}
    for i, (ref, cref) in enumerate(gen.CLEAN_ROUNDS):
        mine = [r for r in rows if owner.get(r["file"]) == i and not HELD.search(r["file"])]
        if not mine:
            continue
        run = _diagnosed(ref)
        for r in mine:
            out[r["file"]] = {"ref": ref, "corpus_ref": cref, "ranked": run["logs"][r["file"]]}
    return out


_CACHE: dict[str, Any] = {}


def _diagnosed(ref: str, loro: bool = False) -> dict[str, Any]:
    """gen.diagnose_with, once per (ref, loro) per process (and per --cache directory)."""
    key = f"{ref}-{int(loro)}"
    if key not in _CACHE:
        f = Path(_CACHE_DIR, f"{key}.json") if _CACHE_DIR and ref != "WORKTREE" else None
        if f and f.is_file():
            _CACHE[key] = json.loads(f.read_text())
        else:
            _CACHE[key] = gen.diagnose_with(ref, loro=loro)
            if f:
                f.write_text(json.dumps(_CACHE[key]))
    return _CACHE[key]


_CACHE_DIR: str | None = None


def select() -> dict[str, Any]:
    head = [r for r in corpus_at("WORKTREE") if not HELD.search(r["file"])]
    runs = clean_round_runs()
    unknown = [r for r in head if r["file"] in runs and not runs[r["file"]]["ranked"]]
    corpora: dict[str, list[dict[str, Any]]] = {}
    report: dict[str, Any] = {
        "rows": len(head),
        "classified": sum(1 for r in head if r.get("class")),
        "rounds_1_11_rules_unknown": len(unknown),
        "configs": [],
    }
    for params in GRID:
        oof = grouped_oof(head, params)
        cl = [r for r in head if r.get("class")]
        top1 = sum(best(oof[r["file"]])[0] == r["class"] for r in cl)
        # frozen simulation: the model trained on the corpus of the round's ref
        sim: dict[str, dict[str, float]] = {}
        for cref in sorted({runs[r["file"]]["corpus_ref"] for r in unknown}):
            if cref not in corpora:
                corpora[cref] = corpus_at(cref)
            m = fit(corpora[cref], params)
            for r in unknown:
                if runs[r["file"]]["corpus_ref"] == cref:
                    sim[r["file"]] = m.probabilities(r["text"])
        by_t = {}
        for t in THRESHOLDS:
            by_t[t] = {"cv": claims(head, oof, t), "frozen_unknown": claims(unknown, sim, t)}
        report["configs"].append(
            {"params": params, "cv_top1": top1, "cv_classified": len(cl), "thresholds": by_t}
        )
    scored = [
        (utility(*v["cv"]) + utility(*v["frozen_unknown"]), -t, i)
        for i, c in enumerate(report["configs"])
        for t, v in c["thresholds"].items()
    ]
    u, t, i = max(scored)
    report["chosen"] = {**report["configs"][i]["params"], "threshold": -t, "utility": u}
    return report


def _counts(rows, ranked_of, current, run_repairs, learned_of=None):
    """top-1/top-3/unknown/harmful/learned-top-wrong over classified rows, no-rule claims."""
    tool = gen.toolchain_actions(current["actions"])
    s = {"logs": 0, "top1": 0, "top3": 0, "unknown": 0, "harmful": 0, "learned_top_wrong": 0}
    nulls = {"logs": 0, "said_unknown": 0, "rule_claims": 0, "learned_claims": 0}
    for r in rows:
        ranked, src = ranked_of(r)
        if r.get("class") is None:
            nulls["logs"] += 1
            if not ranked:
                nulls["said_unknown"] += 1
            elif src == "learned":
                nulls["learned_claims"] += 1
            else:
                nulls["rule_claims"] += 1
            continue
        s["logs"] += 1
        if not ranked:
            s["unknown"] += 1
        if ranked[:1] == [r["class"]]:
            s["top1"] += 1
        elif ranked:
            if src == "learned":
                s["learned_top_wrong"] += 1
            else:
                right = set(current["repairs"].get(r["class"], []))
                proposed = set(run_repairs.get(ranked[0], [])) & tool
                if proposed and not (proposed & right):
                    s["harmful"] += 1
        if r["class"] in ranked[:3]:
            s["top3"] += 1
    return s, nulls


def _fmt(name: str, s: dict[str, int], nulls: dict[str, int]) -> str:
    n = s["logs"] or 1
    return (
        f"  {name:34} n={s['logs']:3} top-1 {s['top1']:3} ({s['top1'] / n:.1%})  "
        f"top-3 {s['top3']:3} ({s['top3'] / n:.1%})  unknown {s['unknown']:2}  harmful "
        f"{s['harmful']}  learned-top-wrong {s['learned_top_wrong']:2} | class-null "
        f"n={nulls['logs']}: unknown {nulls['said_unknown']}, rule claims "
        f"{nulls['rule_claims']}, learned claims {nulls['learned_claims']}"
    )


def final() -> dict[str, Any]:
    threshold = float(learned.PARAMS["threshold"])
    current = gen.diagnose_with("WORKTREE")
    rows_now = corpus_at("WORKTREE")
    out: dict[str, Any] = {"params": learned.PARAMS, "rounds": [], "lines": []}
    total: dict[str, list] = {"rules": [], "combined": [], "model": []}
    for name, ref, pat in FINAL_ROUNDS:
        mine = [r for r in rows_now if pat.search(r["file"])]
        train_rows = corpus_at(ref)
        assert not any(HELD.search(r["file"]) and pat.search(r["file"]) for r in train_rows)
        m = fit(train_rows)
        run = _diagnosed(ref)
        probs = {r["file"]: m.probabilities(r["text"]) for r in mine}
        views = _views(run, probs, threshold)
        out["lines"].append(
            f"{name}: rules at {ref}, model trained on {len(train_rows)} rows present at {ref}"
        )
        for key, fn in views.items():
            s, nulls = _counts(mine, fn, current, run["repairs"])
            total[key].append((s, nulls))
            out["lines"].append(_fmt(key, s, nulls))
            out["rounds"].append({"round": name, "view": key, **s, "no_rule": nulls})
    out["lines"].append("rounds 12 + 13:")
    for key, parts in total.items():
        s = {k: sum(p[0][k] for p in parts) for k in parts[0][0]}
        nulls = {k: sum(p[1][k] for p in parts) for k in parts[0][1]}
        out["lines"].append(_fmt(key, s, nulls))
        out[f"total_{key}"] = {**s, "no_rule": nulls}
    base = out["total_rules"]["top1"] or 1
    out["lines"].append(
        f"  top-1 vs rules alone (same run): rules + fallback "
        f"{out['total_combined']['top1'] / base:.2f}x, model alone "
        f"{out['total_model']['top1'] / base:.2f}x"
    )
    # LORO at HEAD: rules at HEAD (LORO knowledge), the model retrained without the repository
    loro = gen.diagnose_with("WORKTREE", loro=True)
    probs = {}
    for repo in sorted({r["repo"] for r in rows_now}):
        m = fit([r for r in rows_now if r["repo"] != repo])
        for r in rows_now:
            if r["repo"] == repo:
                probs[r["file"]] = m.probabilities(r["text"])
    out["lines"].append(f"leave-one-repository-out at HEAD ({len(rows_now)} rows):")
    for key, fn in _views(loro, probs, threshold).items():
        s, nulls = _counts(rows_now, fn, current, loro["repairs"])
        out["lines"].append(_fmt(key, s, nulls))
        out[f"loro_{key}"] = {**s, "no_rule": nulls}
    return out


def _views(run: dict[str, Any], probs: dict, threshold: float) -> dict[str, Any]:
    def rules(r):
        return run["logs"][r["file"]], "rules"

    def combined(r):
        ranked = run["logs"][r["file"]]
        if ranked:
            return ranked, "rules"
        return learned_ranked(probs[r["file"]], threshold), "learned"

    def model(r):
        return learned_ranked(probs[r["file"]], 0.0), "learned"

    return {"rules": rules, "combined": combined, "model": model}


def ties() -> list[str]:
    """Would the model help to break ties between rule hypotheses of equal evidence? Measured
    on rows that are not rounds 12/13 only: HEAD's rules, out-of-fold model probabilities
    (grouped CV), each row whose first rule hypotheses tie on (score, lines) re-ordered by the
    model; counted: unchanged, fixed (now right), broken (was right)."""
    from remedy.diagnose import diagnose
    from remedy.inputs import scan_logs
    from remedy.knowledge.loader import load_knowledge

    kb = load_knowledge()
    rows = [r for r in corpus_at("WORKTREE") if not HELD.search(r["file"])]
    oof = grouped_oof(rows, learned.PARAMS)
    n = same = fixed = broken = 0
    for r in rows:
        if not r.get("class"):
            continue
        symptoms, _, wrappers = scan_logs([gen.CORPUS / r["file"]])
        hs = diagnose(kb, None, symptoms, wrappers=wrappers).hypotheses
        group = [h for h in hs if (h.score, h.support_lines) == (hs[0].score, hs[0].support_lines)]
        if len(group) < 2:
            continue
        n += 1
        p = oof[r["file"]]
        new = max(group, key=lambda h: (p.get(h.rule, 0.0), h.rule == hs[0].rule)).rule
        same += new == hs[0].rule
        fixed += new != hs[0].rule and new == r["class"]
        broken += new != hs[0].rule and hs[0].rule == r["class"]
    return [
        f"ties at the top of HEAD's rule hypotheses on {len(rows)} rows not in rounds 12/13: "
        f"{n}; re-ordered by the model: unchanged {same}, fixed {fixed}, broken {broken}"
    ]


GATES: list[dict[str, Any]] = [{"share": None}] + [
    {"share": share, "ratio": ratio, "vs_none": vs_none, "mode": mode}
    for share in (0.1, 0.2, 0.3, 0.5)
    for ratio in (2.0, 3.0, 5.0)
    for vs_none in (True, False)
    for mode in ("each", "top")
]


def _loro_folds(
    rows: list[dict[str, Any]],
    toks: dict[str, list[str]],
    n_all: dict[str, int],
    p0: dict[str, Any],
) -> Iterator[tuple[list[dict[str, Any]], learned.Model, dict[str, int]]]:
    """Leave-one-repository-out folds: per repository, its rows, a model trained (through its
    JSON form, as committed) on every other repository's rows, and those rows' label counts."""
    for repo in sorted({r["repo"] for r in rows}):
        mine = [r for r in rows if r["repo"] == repo]
        train_rows = [r for r in rows if r["repo"] != repo]
        m = learned.train(
            [],
            [r["label"] for r in train_rows],
            p0,
            tokenized=[toks[r["file"]] for r in train_rows],
        )
        m = learned.Model.from_json(json.loads(json.dumps(m.to_json())))
        n = dict(n_all)
        for r in mine:
            n[r["label"]] -= 1
        yield mine, m, n


def gate() -> dict[str, Any]:
    """The claim gate (learned.is_distinctive) chosen by leave-one-repository-out at HEAD: for
    each repository, a model trained without it (learned.PARAMS, its threshold) and the
    per-label row counts of the same training rows; each of the repository's rows gets the
    fallback's classes, then each gate variant keeps a class only when the row has a token
    distinctive of it (mode "each": every named class is gated; "top": abstain unless the first
    is supported; vs_none False: the no-class rows are left out of "any other label").
    Counted (right, wrong, claims on class-null rows) of the first class kept, on the rows
    HEAD's LORO rules leave without a hypothesis (where the fallback is consulted) and on all
    rows (the model alone: more rows, same question). Chosen: the variant of highest
    right - WRONG_COST x (wrong + null) summed over both; ties: the simpler (fewer gates)."""
    rows = corpus_at("WORKTREE")
    loro = _diagnosed("WORKTREE", loro=True)
    unknown = {r["file"] for r in rows if not loro["logs"][r["file"]]}
    toks = {r["file"]: learned.tokens(r["text"]) for r in rows}
    df_all, n_all = learned.class_doc_freq(
        [toks[r["file"]] for r in rows], [r["label"] for r in rows]
    )
    threshold = float(learned.PARAMS["threshold"])
    p0 = {**learned.PARAMS, "gate_share": None}
    tally = {i: {"unknown": [0, 0, 0], "all": [0, 0, 0]} for i in range(len(GATES))}
    for mine, m, n in _loro_folds(rows, toks, n_all, p0):
        mine_sets = [(o["label"], set(toks[o["file"]])) for o in mine]
        cache: dict[tuple, dict[str, int]] = {}
        for r in mine:
            present = set(toks[r["file"]])
            named = learned.ranked(m.proba_tokens(toks[r["file"]]), threshold)
            named = [c for c, _ in named]

            def counts(t: str, vs_none: bool, mine_sets: list) -> dict[str, int]:
                d = dict(df_all.get(t, {}))
                for lab, st in mine_sets:
                    if t in st:
                        d[lab] -= 1
                if not vs_none:
                    d.pop(learned.NONE, None)
                return {k: v for k, v in d.items() if v > 0}

            for i, g in enumerate(GATES):
                if g["share"] is None:
                    kept = named
                else:
                    ok = []
                    for c in named:
                        sup = False
                        for t in present:
                            key = (t, g["vs_none"])
                            if key not in cache:
                                cache[key] = counts(t, g["vs_none"], mine_sets)
                            if c in cache[key] and learned.is_distinctive(
                                cache[key], c, n, g["share"], g["ratio"]
                            ):
                                sup = True
                                break
                        ok.append(sup)
                    if g["mode"] == "top":
                        kept = named if ok[:1] == [True] else []
                    else:
                        kept = [c for c, k in zip(named, ok, strict=True) if k]
                for part in ("unknown", "all"):
                    if part == "unknown" and r["file"] not in unknown:
                        continue
                    if not kept:
                        continue
                    t3 = tally[i][part]
                    if r.get("class") is None:
                        t3[2] += 1
                    elif kept[0] == r["class"]:
                        t3[0] += 1
                    else:
                        t3[1] += 1
    out = {"rows": len(rows), "rules_unknown": len(unknown), "variants": []}
    for i, g in enumerate(GATES):
        u = utility(*tally[i]["unknown"]) + utility(*tally[i]["all"])
        out["variants"].append({**g, **tally[i], "utility": u})
    out["chosen"] = max(out["variants"], key=lambda v: (v["utility"], v["share"] is None))
    return out


def _generic_variants() -> list[tuple[str, Any]]:
    """The gate variants --gate-generic compares: (name, extra test) where the extra test
    (by_label, label, n) -> bool must also hold for a token to be distinctive (by_label and n:
    the training rows' counts; n has only the labels present in training)."""
    out: list[tuple[str, Any]] = [("main (share 0.1, ratio 2, boilerplate)", None)]
    share, ratio = float(learned.PARAMS["gate_share"]), float(learned.PARAMS["gate_ratio"])
    most, pseudo_n = learned.PARAMS.get("gate_max_labels"), learned.PARAMS.get("gate_pseudo_rows")
    out.append(
        (
            f"learned.PARAMS (max_labels {most}, pseudo_rows {pseudo_n})",
            lambda b, lab, n: learned.is_distinctive(
                b, lab, n, share, ratio, most, float(pseudo_n or 0)
            ),
        )
    )

    def pseudo(b, lab, n, m):
        return all(b[lab] * n[o] >= 2.0 * c * (n[lab] + m) for o, c in b.items() if o != lab)

    for f in (0.05, 0.08, 0.1, 0.11, 0.12, 0.125, 0.13, 0.14, 0.15, 0.2, 0.3, 0.4):
        # max_df by label: in the rows of at most this share of the training labels
        out.append((f"max_labels {f}", lambda b, lab, n, f=f: len(b) <= f * len(n)))
    for k in (4, 5, 6, 7, 8, 10, 12):
        out.append((f"max_labels_abs {k}", lambda b, lab, n, k=k: len(b) <= k))
    for m in (1, 2, 3, 5, 10, 20):
        # m pseudo-rows without the token added to the class: a class of 1-2 rows no longer
        # has share 1.0 of whatever words its one log has
        out.append((f"pseudo_rows {m}", lambda b, lab, n, m=m: pseudo(b, lab, n, m)))
    for k in (2, 3):
        out.append((f"min_rows {k}", lambda b, lab, n, k=k: b[lab] >= k))
    for r in (3.0, 10.0):
        # ratio also against all other rows pooled
        out.append(
            (
                f"pooled_ratio {r}",
                lambda b, lab, n, r=r: (
                    b[lab] * (sum(n.values()) - n[lab]) >= r * (sum(b.values()) - b[lab]) * n[lab]
                ),
            )
        )
    for f in (0.125, 0.15):
        for m in (5, 10):
            out.append(
                (
                    f"max_labels {f} + pseudo_rows {m}",
                    lambda b, lab, n, f=f, m=m: len(b) <= f * len(n) and pseudo(b, lab, n, m),
                )
            )
    for k in (6, 7, 8):
        for m in (3, 5, 10):
            out.append(
                (
                    f"max_labels_abs {k} + pseudo_rows {m}",
                    lambda b, lab, n, k=k, m=m: len(b) <= k and pseudo(b, lab, n, m),
                )
            )
    return out


def gate_generic() -> dict[str, Any]:
    """Words common to many labels' rows (learned-gate, session 33): leave-one-repository-out at
    HEAD over every corpus row, as gate() but with learned.PARAMS's gate (share, ratio, the
    tools' fixed texts and bare versions excluded, mode "top" as learned_classes) and each
    variant of _generic_variants as a further condition on a distinctive token. Counted (right,
    wrong, claims on class-null rows) of the first class kept, on the rows HEAD's LORO rules
    leave without a hypothesis and on all rows (the model alone)."""
    rows = corpus_at("WORKTREE")
    loro = _diagnosed("WORKTREE", loro=True)
    unknown = {r["file"] for r in rows if not loro["logs"][r["file"]]}
    toks = {r["file"]: learned.tokens(r["text"]) for r in rows}
    df_all, n_all = learned.class_doc_freq(
        [toks[r["file"]] for r in rows], [r["label"] for r in rows]
    )
    skip = learned.boilerplate_tokens() if learned.PARAMS.get("gate_boilerplate") else frozenset()
    share, ratio = 0.1, 2.0  # main's gate (54857ac); each variant adds a condition to it
    threshold = float(learned.PARAMS["threshold"])
    p0 = {**learned.PARAMS, "gate_share": None}
    variants = _generic_variants()
    tally = [{"unknown": [0, 0, 0], "all": [0, 0, 0]} for _ in variants]
    for mine, m, n in _loro_folds(rows, toks, n_all, p0):
        n = {k: v for k, v in n.items() if v > 0}
        mine_sets = [(o["label"], set(toks[o["file"]])) for o in mine]
        for r in mine:
            named = learned.ranked(m.proba_tokens(toks[r["file"]]), threshold)
            if not named:
                continue
            c = named[0][0]
            cands = []  # the row's tokens distinctive of c under main's gate: (by_label)
            for t in set(toks[r["file"]]):
                if t in skip or learned._VERSION_SHAPE.fullmatch(t):
                    continue
                d = dict(df_all[t])
                for lab, st in mine_sets:
                    if t in st:
                        d[lab] -= 1
                d = {k: v for k, v in d.items() if v > 0}
                if c in d and learned.is_distinctive(d, c, n, share, ratio):
                    cands.append(d)
            for i, (_, extra) in enumerate(variants):
                if not any(extra is None or extra(d, c, n) for d in cands):
                    continue
                for part in ("unknown", "all"):
                    if part == "unknown" and r["file"] not in unknown:
                        continue
                    t3 = tally[i][part]
                    t3[2 if r.get("class") is None else 0 if c == r["class"] else 1] += 1
    out = {"rows": len(rows), "rules_unknown": len(unknown), "variants": []}
    for (name, _), t in zip(variants, tally, strict=True):
        u = utility(*t["unknown"]) + utility(*t["all"])
        out["variants"].append({"name": name, **t, "utility": u})
    out["chosen"] = max(out["variants"], key=lambda v: v["utility"])
    return out


def gate_check() -> list[str]:
    """--gate-generic's figures for main's gate and learned.PARAMS's through remedy's own code
    path: per repository learned.train on the other repositories' rows (through the JSON
    form) and learned.learned_classes on each of its rows; (right, wrong, null-named) of the
    first class on all rows (the model alone)."""
    rows = corpus_at("WORKTREE")
    lines = ["code-path check (learned.train + learned_classes per held-out repository):"]
    for name, extra in (
        ("main's gate", {"gate_max_labels": None, "gate_pseudo_rows": 0}),
        ("learned.PARAMS", {}),
    ):
        t3 = [0, 0, 0]
        for repo in sorted({r["repo"] for r in rows}):
            m = fit([r for r in rows if r["repo"] != repo], {**learned.PARAMS, **extra})
            for r in rows:
                if r["repo"] != repo:
                    continue
                got = learned.learned_classes(r["text"], m)
                if got:
                    c = got[0][0]
                    t3[2 if r.get("class") is None else 0 if c == r["class"] else 1] += 1
        lines.append(f"  {name:16} all rows {tuple(t3)}  utility {utility(*t3)}")
    return lines


def cost(repeat: int = 15) -> list[str]:
    """What the fallback adds to `remedy diagnose --log` on a log no rule matches (issue 18):
    in-process load + predict, and the command's wall time with and without the model
    ($REMEDY_LEARNED_MODEL at a missing file = rules only), medians, same run."""
    import os
    import statistics
    import time

    log = ROOT / "tests" / "fixtures" / "corpus" / "toolkit-knows-target-archs" / "fe-3.log"
    big = ROOT / "tests" / "fixtures" / "corpus" / "index.yaml"  # > MAX_BYTES: the bound
    path = learned.default_model_path()
    lines = []
    for name, f in (("corpus log", log), (f"{learned.MAX_BYTES >> 10} KiB cap", big)):
        ts = []
        for _ in range(repeat):
            learned._LOADED.clear()
            t = time.perf_counter()
            m = learned.load_model(path)
            learned.learned_classes(learned.read_log_text([f]), m)
            ts.append(time.perf_counter() - t)
        lines.append(f"load + read + predict, {name}: median {statistics.median(ts) * 1e3:.1f} ms")
    walls = {}
    for label, model in (("rules only", "/nonexistent/model.json"), ("with model", str(path))):
        env = {**os.environ, learned.ENV_MODEL: model}
        ts = []
        for _ in range(repeat):
            t = time.perf_counter()
            subprocess.run(
                [sys.executable, "-m", "remedy", "diagnose", "--log", str(log), "--json"],
                env=env,
                capture_output=True,
                check=True,
            )
            ts.append(time.perf_counter() - t)
        walls[label] = statistics.median(ts)
    base = walls["rules only"]
    for label, w in walls.items():
        lines.append(
            f"remedy diagnose --log (no rule matches): {label} {w * 1e3:.0f} ms "
            f"({w / base:.2f}x rules only)"
        )
    return lines


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--select", action="store_true")
    ap.add_argument("--final", action="store_true")
    ap.add_argument("--cost", action="store_true", help="time load + predict and diagnose --log")
    ap.add_argument("--ties", action="store_true", help="would the model break rule ties well?")
    ap.add_argument("--gate", action="store_true", help="choose the claim gate (LORO at HEAD)")
    ap.add_argument("--gate-generic", action="store_true", help="words common to many labels")
    ap.add_argument("--gate-check", action="store_true", help="--gate-generic via remedy's code")
    ap.add_argument("--grid", help="JSON list of parameter sets to compare (default: GRID)")
    ap.add_argument("--cache", help="a directory to keep frozen refs' diagnoses between runs")
    ap.add_argument("--save", help="also write bench/results/NAME.txt and NAME.json")
    args = ap.parse_args()
    global _CACHE_DIR, GRID
    _CACHE_DIR = args.cache
    if args.grid:
        GRID = json.loads(args.grid)
    lines: list[str] = []
    rep: dict[str, Any] = {}
    if args.select:
        rep = select()
        lines.append(
            f"selection on {rep['rows']} rows that are not rounds 12/13 "
            f"({rep['classified']} classified); rounds 1-11 rows the frozen rules left unknown: "
            f"{rep['rounds_1_11_rules_unknown']}"
        )
        for c in rep["configs"]:
            lines.append(
                f"{json.dumps(c['params'])}: grouped-CV top-1 {c['cv_top1']}/{c['cv_classified']}"
            )
            for t, v in c["thresholds"].items():
                cv, fz = v["cv"], v["frozen_unknown"]
                lines.append(
                    f"    p>={t:.1f}: CV right {cv[0]:3} wrong {cv[1]:3} null-claims {cv[2]:2}"
                    f" | frozen rounds 1-11, rules unknown: right {fz[0]:2} wrong {fz[1]:2}"
                )
        lines.append(
            f"chosen (max of right - {WRONG_COST} x (wrong + null claims) over CV + frozen "
            f"rounds 1-11): {json.dumps(rep['chosen'])}"
        )
    if args.gate:
        rep = gate()
        lines.append(
            f"claim gate, leave-one-repository-out at HEAD: {rep['rows']} rows, "
            f"{rep['rules_unknown']} with no LORO rule hypothesis; (right, wrong, null-named)"
        )
        for v in rep["variants"]:
            name = (
                "no gate"
                if v["share"] is None
                else f"share>={v['share']} ratio>={v['ratio']} vs_none={v['vs_none']} {v['mode']}"
            )
            lines.append(
                f"  {name:44} rules-unknown {tuple(v['unknown'])}  all rows {tuple(v['all'])}"
                f"  utility {v['utility']}"
            )
        lines.append(f"chosen: {json.dumps(rep['chosen'])}")
    if args.gate_generic:
        rep = gate_generic()
        lines.append(
            f"claim gate vs words common to many labels, leave-one-repository-out at HEAD: "
            f"{rep['rows']} rows, {rep['rules_unknown']} with no LORO rule hypothesis; "
            f"(right, wrong, null-named) of the first class after the gate"
        )
        for v in rep["variants"]:
            lines.append(
                f"  {v['name']:40} rules-unknown {tuple(v['unknown'])}  all rows "
                f"{tuple(v['all'])}  utility {v['utility']}"
            )
        lines.append(f"best: {json.dumps(rep['chosen'])}")
    if args.gate_check:
        lines += gate_check()
    if args.final:
        rep = final()
        lines += rep["lines"]
    if args.ties:
        lines += ties()
    if args.cost:
        lines += cost()
    print("\n".join(lines))
    if args.save:
        RESULTS.mkdir(parents=True, exist_ok=True)
        (RESULTS / f"{args.save}.txt").write_text("\n".join(lines) + "\n")
        (RESULTS / f"{args.save}.json").write_text(json.dumps(rep, indent=2, default=str) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
