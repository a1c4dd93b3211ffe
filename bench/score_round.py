"""Score one held-out round by a frozen ref (the figure a round's note quotes).

    python bench/score_round.py REF fk-,fl-,fm-     # rows whose file name starts so
    python bench/score_round.py REF fk- --train-ref OLD   # learned model from OLD's corpus

The rows must be in this checkout's corpus; REF's code and knowledge diagnose them, with a
learned model trained only on REF's corpus (bench/generalize.py's runner). Prints the JSON of
generalize.score (rows with a class) and generalize.score_no_rule (class-null rows). Only a ref
frozen before the round was collected gives a held-out figure: a later ref's corpus holds the
round's logs, so its rules were tuned on them and its learned model trained on them.
``--train-ref OLD`` trains the learned model on OLD's corpus instead: for a later ref whose
knowledge changes were made blind to the round (their authors never saw its logs), scored with
a model that never saw them either.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import generalize as g  # noqa: E402


def main() -> int:
    args = sys.argv[1:]
    train_ref = None
    if "--train-ref" in args:
        i = args.index("--train-ref")
        if i + 1 >= len(args):
            print(__doc__, file=sys.stderr)
            return 2
        train_ref = args[i + 1]
        del args[i : i + 2]
    if len(args) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    ref, prefixes = args[0], tuple(args[1].split(","))
    rows = [r for r in g._rows() if r["file"].split("/")[-1].startswith(prefixes)]
    if not rows:
        print(f"no corpus row's file name starts with {', '.join(prefixes)}", file=sys.stderr)
        return 2
    current = g.diagnose_with("WORKTREE")
    run = g.diagnose_with(ref, train=g.corpus_files(train_ref or ref))
    classified = [r for r in rows if r.get("class")]
    nulls = [r for r in rows if r.get("class") is None]
    out = {
        "ref": ref,
        "train_ref": train_ref or ref,
        "classified": g.score(classified, run, current),
        "no_rule": g.score_no_rule(nulls, run, current),
    }
    print(json.dumps(out, indent=1))
    c, n = out["classified"], out["no_rule"]
    print(
        f"# {ref} (model from {train_ref or ref}'s corpus): classified n={c['logs']} top1={c['top1']} top3={c['top3']} "
        f"unknown={c['unknown']} harmful={c['harmful']}; no-rule n={n['logs']} "
        f"unknown={n['said_unknown']} named={n['named_a_class']} harmful={n['harmful']}"
    )
    ro = c["rules_only"]
    print(
        f"# rules only (the default; learned hints are opt-in): classified top1={ro['top1']} "
        f"top3={ro['top3']} unknown={ro['unknown']}; no-rule named="
        f"{n['named_a_class'] - n['learned_claims']}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
