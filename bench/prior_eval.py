#!/usr/bin/env python3
"""Would a symptom-conditioned prior name the cause of an "unknown" log? (issue 17, session 44)

An "unknown" log here: the rules-only diagnosis ranks no hypothesis, yet a non-wrapper
signature fired (a multi-cause line: bare 'no kernel image', 'invalid device function', error
35, 'CUDA driver version is insufficient', ...; field signals withdrew its credit from every
rule, or no rule predicts it). The prior for such a signature S: among the training rows whose
non-wrapper symptoms include S, the class most of them have. It names that class only when
its share (class-null rows counted in the denominator) is >= SHARE, at least MIN rows carry
S, and the class is not a toolchain-changing one where a class-null row shares S. A log with
several such signatures takes the qualifying one with the highest share (then more rows).

Two training populations: "all" (every training row carrying S) and "unk" (only training rows
that the same diagnosis also left unknown with S: the population the prior would speak for).

FROZEN: for each blind round R in 60..78 (rows by file-name prefix,
bench/results/roundR/prefixes.txt) the prior is built ONLY from the corpus of the round's
scoring ref (bench/generalize.py CLEAN_ROUNDS; the round's logs were collected after it), with
the labels that ref's index gave them. Two knowledge variants:

- frozen: the ref's src/knowledge/playbooks (git archive into /tmp/prior48/REF) diagnose both
  the training rows and the round's logs: exactly what a prior shipped at that ref would do;
- current: the working tree's knowledge (tuned on those rounds after scoring: optimistic about
  which logs stay unknown, but the prior still sees no row of round R or later).

Outcomes for a round log left unknown with a recognised symptom: right (the prior's class is
the row's class), wrong (another class: harmless when the class's repairs change no toolchain,
or change one that is also the right class's repair), null-named (a class named for a row
whose cause no rule covers), harmful (bench/generalize.score's test: the named class's repairs
include a toolchain/driver change that is not a repair of the right class; for a null row,
any toolchain change). The prior itself would carry no repair (plan/run never act on it), so
"harmful" counts what a user following its class would be led to.

Also over the whole corpus with leave-one-repository-out (working-tree knowledge): every row
left unknown with a recognised symptom, the prior built from every row of other repositories.

    python bench/prior_eval.py              # prints the tables (bench/results/prior-session44.txt)
    python bench/prior_eval.py --json OUT   # also the per-log outcomes
"""

from __future__ import annotations

import argparse
import functools
import hashlib
import json
import subprocess
import sys
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent))
import generalize as g  # noqa: E402

CACHE = Path("/tmp/prior48")
# blind rounds and the ref that scored them (bench/generalize.py CLEAN_ROUNDS' comments)
ROUND_REFS: dict[int, str] = {
    60: "d3297bae",
    61: "10c6ed84",
    62: "10c6ed84",
    63: "e30b3489",
    64: "6a51da95",
    65: "5b772634",
    66: "5b772634",
    67: "5b772634",
    68: "fc2f8696",
    69: "fc2f8696",
    70: "fc2f8696",
    71: "1424e1d6",
    72: "757144ff",
    73: "757144ff",
    74: "757144ff",
    75: "757144ff",
    76: "b37b75ec",
    77: "b37b75ec",
    78: "814c3f62",
}
SHARES = (0.5, 0.6, 0.7)
MINS = (5, 10)
# "+wr": wrapper signatures ('ninja: build stopped', make's recipe failure) count as keys too,
# so a log whose only symptoms are wrappers gets a prior as well
POPS = ("all", "unk", "all+wr", "unk+wr")

# Runs inside a tree: rules-only diagnosis of every corpus log, with its symptoms.
_RUNNER = r"""
import json, sys
tree, corpus = sys.argv[1], sys.argv[2]
sys.path.insert(0, tree + "/src")
import yaml
from pathlib import Path
from remedy.evidence.catalog import load_catalog
from remedy.evidence import scan_path
from remedy.diagnose import diagnose
from remedy.knowledge.loader import load_knowledge
from remedy.evidence import fields as fieldmod

kb = load_knowledge()
cat = load_catalog(Path(tree) / "knowledge" / "signatures.yaml")
wrappers = {s.id for s in cat.signatures if getattr(s, "wrapper", False)}
signals = fieldmod.load_signals(Path(tree) / "knowledge" / "field-signals.yaml")
rows = yaml.safe_load((Path(corpus) / "index.yaml").read_text())["logs"]
out = {"repairs": {rid: list(cr.rule.repairs) for rid, cr in kb.rules.items()},
       "wrappers": sorted(wrappers), "logs": {}, "actions": {}}
for aid, a in (kb.actions or {}).items():
    act = getattr(a, "action", a)
    effects = [e if isinstance(e, dict) else e.model_dump() for e in (act.effects or [])]
    touches = [getattr(t, "kind", None) for t in (getattr(act, "touches", []) or [])]
    out["actions"][aid] = {"effects": effects, "touches": touches}
for r in rows:
    res = scan_path(str(Path(corpus) / r["file"]), catalog=cat)
    d = diagnose(kb, None, res.symptoms, wrappers=wrappers, signals=signals)
    out["logs"][r["file"]] = {
        "ranked": [h.rule for h in d.hypotheses[:5]],
        "sigs": [[s.signature, s.severity] for s in res.symptoms],
    }
print(json.dumps(out))
"""


def diagnose_tree(ref: str) -> dict[str, Any]:
    """Every corpus log of this checkout, diagnosed rules-only by ``ref``'s tree (cached)."""
    CACHE.mkdir(exist_ok=True)
    key = ref
    if ref == "WORKTREE":  # keyed by the working tree's code and knowledge
        state = g._git("rev-parse", "HEAD") + g._git(
            "diff", "HEAD", "--", "src", "knowledge", "playbooks"
        )
        key += "-" + hashlib.sha256(state.encode()).hexdigest()[:12]
    cache = CACHE / f"diag-{key}.json"
    if cache.exists():
        return json.loads(cache.read_text())
    tree = CACHE / ref
    if not (tree / "src").exists():
        tree.mkdir(parents=True, exist_ok=True)
        g._extract(ref, tree)
    r = subprocess.run(
        [sys.executable, "-c", _RUNNER, str(tree), str(g.CORPUS)],
        capture_output=True,
        text=True,
        timeout=1800,
    )
    if r.returncode != 0:
        raise SystemExit(f"diagnosis with {ref} failed:\n{r.stderr[-3000:]}")
    cache.write_text(r.stdout)
    return json.loads(r.stdout)


def ref_labels(ref: str) -> dict[str, str | None]:
    """file -> class as ``ref``'s corpus index had it."""
    text = g._git("show", f"{ref}:tests/fixtures/corpus/index.yaml")
    return {r["file"]: r.get("class") for r in yaml.safe_load(text)["logs"]}


def specific(run: dict[str, Any], f: str, wrappers: bool = False) -> list[str]:
    """The log's distinct non-wrapper signatures (all, with ``wrappers``), in firing order."""
    wr = set() if wrappers else set(run["wrappers"])
    seen: list[str] = []
    for sig, _sev in run["logs"][f]["sigs"]:
        if sig not in wr and sig not in seen:
            seen.append(sig)
    return seen


def is_unknown(run: dict[str, Any], f: str) -> bool:
    return not run["logs"][f]["ranked"]


class Prior:
    """Per signature: class counts (None = class-null) over a population of training rows."""

    def __init__(self, rows: list[tuple[str, str | None]], run: dict[str, Any], pop: str):
        self.counts: dict[str, Counter] = defaultdict(Counter)
        for f, cls in rows:
            if pop.startswith("unk") and not is_unknown(run, f):
                continue
            for sig in specific(run, f, pop.endswith("+wr")):
                self.counts[sig][cls] += 1

    def pick(self, sig: str, tool_classes: set[str], share: float, min_rows: int):
        c = self.counts.get(sig)
        if not c:
            return None
        n = sum(c.values())
        classed = [(k, v) for k, v in c.items() if k is not None]
        if n < min_rows or not classed:
            return None
        classed.sort(key=lambda kv: (-kv[1], kv[0]))
        top, k = classed[0]
        if len(classed) > 1 and classed[1][1] == k:
            return None  # a tie names nothing
        s = k / n
        if s < share or (c.get(None) and top in tool_classes):
            return None
        return top, s, n


def judge(
    cls: str | None, named: str, run: dict[str, Any], cur: dict[str, Any], tool: set[str]
) -> str:
    if cls is None:
        return "harmful" if set(run["repairs"].get(named, [])) & tool else "null_named"
    if named == cls:
        return "right"
    right = set(cur["repairs"].get(cls, []))
    proposed = set(run["repairs"].get(named, [])) & tool
    return "harmful" if proposed and not (proposed & right) else "wrong"


def tools_of(run: dict[str, Any], cur: dict[str, Any]) -> tuple[set[str], set[str]]:
    tool = g.toolchain_actions(cur["actions"]) | g.toolchain_actions(run["actions"])
    classes = {rid for rid, reps in run["repairs"].items() if set(reps) & tool}
    return tool, classes


def apply_prior(prior: Prior, sigs: list[str], tool_classes: set[str], share: float, min_rows: int):
    best = None
    for sig in sigs:
        p = prior.pick(sig, tool_classes, share, min_rows)
        if p and (best is None or (p[1], p[2]) > (best[1][1], best[1][2])):
            best = (sig, p)
    return best


_ROWS: list[dict[str, Any]] = []


def rows() -> list[dict[str, Any]]:
    """This checkout's corpus index (parsed once: it is large)."""
    if not _ROWS:
        _ROWS.extend(g._rows())
    return _ROWS


@functools.cache
def round_rows(r: int) -> list[dict[str, Any]]:
    pre = tuple(
        x.strip()
        for x in (g.RESULTS / f"round{r}" / "prefixes.txt")
        .read_text()
        .replace("\n", ",")
        .split(",")
        if x.strip()
    )
    return [row for row in rows() if row["file"].split("/")[-1].startswith(pre)]


def empty() -> dict[str, int]:
    return {"right": 0, "wrong": 0, "null_named": 0, "harmful": 0, "silent": 0}


def frozen(variant: str, cur: dict[str, Any]) -> dict[str, Any]:
    """Rounds 60..78, the prior from each scoring ref's corpus only."""
    totals = {(p, s, m): empty() for p in POPS for s in SHARES for m in MINS}
    per_sig: dict[str, dict] = defaultdict(lambda: {k: empty() for k in totals})
    logs: list[dict[str, Any]] = []
    context = Counter()
    for rnd, ref in sorted(ROUND_REFS.items()):
        run = diagnose_tree(ref) if variant == "frozen" else cur
        tool, tool_classes = tools_of(run, cur)
        labels = ref_labels(ref)
        test = round_rows(rnd)
        test_files = {t["file"] for t in test}
        later = {
            t["file"] for rr in ROUND_REFS if rr >= rnd for t in round_rows(rr)
        }  # never train on round R or later
        train = [(f, c) for f, c in labels.items() if f in run["logs"] and f not in later]
        assert not (test_files & {f for f, _ in train})
        priors = {p: Prior(train, run, p) for p in POPS}
        for t in test:
            f, cls = t["file"], t.get("class")
            context["logs"] += 1
            context["classed" if cls else "null"] += 1
            if not is_unknown(run, f):
                continue
            sigs = specific(run, f)
            kind = "classed" if cls else "null"
            context[
                ("unknown_with_symptom_" if sigs else "unknown_no_specific_symptom_") + kind
            ] += 1
            if not specific(run, f, True):
                context["unknown_no_symptom_at_all_" + kind] += 1
                continue
            rec = {"round": rnd, "ref": ref, "file": f, "class": cls, "sigs": sigs, "named": {}}
            for key in totals:
                p, s, m = key
                keys = specific(run, f, p.endswith("+wr"))
                if not keys:
                    continue
                best = apply_prior(priors[p], keys, tool_classes, s, m)
                if best is None:
                    out = "silent"
                    sig_key = keys[0]
                else:
                    sig_key, (named, share, n) = best
                    out = judge(cls, named, run, cur, tool)
                    rec["named"][f"{p}/{s}/{m}"] = [named, round(share, 2), n, out]
                totals[key][out] += 1
                per_sig[sig_key][key][out] += 1
            logs.append(rec)
    return {"totals": totals, "per_sig": per_sig, "logs": logs, "context": context}


def loro(cur: dict[str, Any]) -> dict[str, Any]:
    """Whole corpus, leave-one-repository-out, working-tree knowledge."""
    tool, tool_classes = tools_of(cur, cur)
    corpus = [r for r in rows() if r["file"] in cur["logs"]]
    totals = {(p, s, m): empty() for p in POPS for s in SHARES for m in MINS}
    per_sig: dict[str, dict] = defaultdict(lambda: {k: empty() for k in totals})
    by_repo: dict[str, list] = defaultdict(list)
    for r in corpus:
        by_repo[str(r["thread"]).split("#")[0]].append(r)
    cands = [r for r in corpus if is_unknown(cur, r["file"]) and specific(cur, r["file"], True)]
    priors: dict[tuple[str, str], Prior] = {}
    for r in cands:
        repo = str(r["thread"]).split("#")[0]
        for key in totals:
            p, s, m = key
            sigs = specific(cur, r["file"], p.endswith("+wr"))
            if not sigs:
                continue
            if (repo, p) not in priors:
                train = [
                    (t["file"], t.get("class"))
                    for t in corpus
                    if str(t["thread"]).split("#")[0] != repo
                ]
                priors[(repo, p)] = Prior(train, cur, p)
            best = apply_prior(priors[(repo, p)], sigs, tool_classes, s, m)
            if best is None:
                out, sig_key = "silent", sigs[0]
            else:
                sig_key, (named, _sh, _n) = best
                out = judge(r.get("class"), named, cur, cur, tool)
            totals[key][out] += 1
            per_sig[sig_key][key][out] += 1
    n = Counter("classed" if r.get("class") else "null" for r in cands)
    n_specific = Counter(
        "classed" if r.get("class") else "null" for r in cands if specific(cur, r["file"])
    )
    return {"totals": totals, "per_sig": per_sig, "n": dict(n), "n_specific": dict(n_specific)}


def fmt(c: dict[str, int]) -> str:
    return (
        f"right {c['right']:3}  wrong {c['wrong']:3}  null-named {c['null_named']:3}  "
        f"harmful {c['harmful']:2}  silent {c['silent']:3}  net {c['right'] - c['wrong'] - c['null_named'] - c['harmful']:+d}"
    )


def report(name: str, res: dict[str, Any]) -> list[str]:
    out = [f"== {name}"]
    if "context" in res:
        out.append("  " + ", ".join(f"{k}={v}" for k, v in sorted(res["context"].items())))
    else:
        out.append(
            f"  unknown logs with any symptom: {res['n']}; with a non-wrapper one: {res['n_specific']}"
        )
    for key, c in res["totals"].items():
        p, s, m = key
        out.append(f"  pop={p:3} share>={s} min={m:2}: {fmt(c)}")
    out.append("  per symptom (the signature the prior spoke from, else the log's first):")
    for sig in sorted(
        res["per_sig"], key=lambda k: -sum(res["per_sig"][k][("all+wr", 0.5, 5)].values())
    ):
        d = res["per_sig"][sig]
        n = max(sum(c.values()) for c in d.values())
        out.append(f"    {sig} (logs {n})")
        for key, c in d.items():
            if c["silent"] == n:
                continue
            p, s, m = key
            out.append(f"      pop={p:3} share>={s} min={m:2}: {fmt(c)}")
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--json", help="write the per-log outcomes here")
    args = ap.parse_args()
    cur = diagnose_tree("WORKTREE")
    lines = [
        "# bench/prior_eval.py: a symptom-conditioned prior for 'unknown' logs (session 44)",
        "# outcome counts per (population, share threshold, min rows); net = right - wrong - null-named - harmful",
    ]
    res = {}
    for variant in ("frozen", "current"):
        res[variant] = frozen(variant, cur)
        lines += report(
            f"rounds 60-78, prior from the scoring ref's corpus, knowledge: {variant}", res[variant]
        )
    res["loro"] = loro(cur)
    lines += report("whole corpus, leave-one-repository-out, working-tree knowledge", res["loro"])
    print("\n".join(lines))
    if args.json:
        Path(args.json).write_text(
            json.dumps(
                {"frozen_logs": res["frozen"]["logs"], "current_logs": res["current"]["logs"]},
                indent=1,
            )
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
