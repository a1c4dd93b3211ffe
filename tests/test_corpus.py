"""Log-only diagnosis on real failure logs (tests/fixtures/corpus/index.yaml, one row per log).

Rows with a class: the class is the top hypothesis, unless the row says expect_top1: false; then
the test is an xfail(strict): if diagnosis improves, the row must be updated, so the table never
claims less (or more) than remedy does. Rows with class null: no cause is named, and the most
suspicious line is the first real error of the log (a strict xfail where the row says
expect_unknown: false, or expect_first_error_line: false: the first error line was labelled by
someone who never ran remedy, and remedy points elsewhere; first_error_line none: the copy holds
no error line, and none may be shown). bench/bench_corpus.py prints top-1/top-3.

Rules only: the learned fallback (remedy.evidence.learned) is trained on these very rows, so it
is never consulted here (diagnose() gets no log_text); its figures on logs it never saw are
bench/learned_eval.py's and bench/generalize.py's, and tests/test_learned.py holds its behaviour.
"""

from __future__ import annotations

import datetime
import re
import subprocess
import sys
from functools import cache
from pathlib import Path
from typing import Any

import pytest
import yaml

from remedy.knowledge.loader import load_knowledge
from remedy.model import Diagnosis

from conftest import diagnosed_log

ROOT = Path(__file__).resolve().parents[1]
CORPUS = ROOT / "tests" / "fixtures" / "corpus"
ROWS: list[dict[str, Any]] = yaml.safe_load((CORPUS / "index.yaml").read_text())["logs"]
THREAD = re.compile(r"^[\w.-]+/[\w.-]+#\d+$")


@cache
def diagnosed(file: str) -> Diagnosis:
    return diagnosed_log(CORPUS / file)


def test_index_covers_every_log_and_cites_a_thread():
    files = {str(p.relative_to(CORPUS)) for p in CORPUS.rglob("*.log")}
    indexed = [r["file"] for r in ROWS]
    assert len(indexed) == len(set(indexed)), "a log is indexed twice"
    assert set(indexed) == files
    kb = load_knowledge()
    for r in ROWS:
        assert THREAD.match(r["thread"]), r
        assert r.get("notes") and r.get("confirm_fact"), r
        assert r["class"] is None or r["class"] in kb.rules, r
        if r["class"] is not None:
            assert r["file"].split("/")[0] == r["class"], "logs live under their class's folder"


def test_corpus_size():
    classified = [r for r in ROWS if r["class"]]
    assert len(classified) >= 118
    assert len({r["class"] for r in classified}) >= 30
    assert len({r["thread"].split("#")[0] for r in classified}) >= 60, "repositories"


def test_dated_rows_have_a_real_date_and_a_unique_thread():
    """Rows added for issue 17 carry the date of the post their log was copied from; the date
    split of bench/generalize.py depends on it."""
    dated = [r for r in ROWS if "date" in r]
    assert len(dated) >= 50
    today = datetime.date.today()
    for r in dated:
        assert isinstance(r["date"], datetime.date), r
        assert datetime.date(2008, 4, 10) <= r["date"] <= today, r  # GitHub opened 2008-04-10
    threads = [r["thread"] for r in dated]
    assert len(threads) == len(set(threads)), "one log per thread among the dated rows"


def _top1_params() -> list[Any]:
    out = []
    for r in ROWS:
        if r["class"] is None:
            continue
        marks = []
        if r.get("expect_top1") is False:
            marks = [pytest.mark.xfail(strict=True, reason=r["notes"])]
        out.append(pytest.param(r, id=r["file"], marks=marks))
    return out


@pytest.mark.parametrize("row", _top1_params())
def test_log_only_diagnosis_ranks_the_right_cause_first(row):
    d = diagnosed(row["file"])
    assert [h.rule for h in d.hypotheses[:1]] == [row["class"]], [
        (h.rule, h.score) for h in d.hypotheses[:4]
    ]
    top = d.hypotheses[0]
    assert top.confirm_with, "the top hypothesis says which fact would confirm it"
    assert all("(could not render" not in c for c in top.confirm_with)


def _unknown_params() -> list[Any]:
    out = []
    for r in ROWS:
        if r["class"] is not None:
            continue
        marks = []
        if r.get("expect_unknown") is False or r.get("expect_first_error_line") is False:
            marks = [pytest.mark.xfail(strict=True, reason=r["notes"])]
        out.append(pytest.param(r, id=r["file"], marks=marks))
    return out


@pytest.mark.parametrize("row", _unknown_params())
def test_unknown_log_names_no_cause_and_points_at_the_first_error(row):
    d = diagnosed(row["file"])
    assert d.hypotheses == []
    if row["first_error_line"] == "none":
        # the copy holds no error line (cut before it): nothing may be shown as one
        assert d.suspicious == [], [(s.line, s.score, s.text[:80]) for s in d.suspicious[:3]]
        return
    assert d.suspicious, "an unknown log still gets its suspicious lines"
    assert d.suspicious[0].line == row["first_error_line"], [
        (s.line, s.score, s.text[:80]) for s in d.suspicious[:3]
    ]


def test_failure_classes_doc_is_generated_from_the_knowledge():
    """docs/failure-classes.md is bench/gen_failure_table.py's output, byte for byte."""
    r = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "gen_failure_table.py"), "--stdout"],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=ROOT,
    )
    assert r.returncode == 0, r.stderr
    assert (ROOT / "docs" / "failure-classes.md").read_text() == r.stdout, (
        "docs/failure-classes.md is stale: run python bench/gen_failure_table.py"
    )
