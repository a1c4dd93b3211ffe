"""remedy.knowledge.logview: a log-only diagnosis reads a plain view of the knowledge (made
from the validated knowledge, kept in its own cache). The view, fresh or read back from the
cache, must diagnose every corpus log exactly as the knowledge base itself does."""

from __future__ import annotations

from pathlib import Path

import pytest

CORPUS = Path(__file__).parent / "fixtures" / "corpus"


def test_the_view_diagnoses_every_corpus_log_as_the_knowledge_does(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from remedy.commands import learned_text
    from remedy.diagnose import diagnose
    from remedy.evidence.suspicious import with_unexplained
    from remedy.inputs import scan_logs
    from remedy.knowledge import logview
    from remedy.knowledge.loader import load_knowledge

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    load_knowledge.cache_clear()
    load_knowledge()  # validated, compiled and kept
    load_knowledge.cache_clear()
    # as a command finds it: read back from its cache, its templates' code still marshalled
    # (a view made from that and kept must render them as the knowledge does)
    kb = load_knowledge()
    load_knowledge.cache_clear()
    fresh = logview.log_view(kb)
    logview.load_log_view()  # made and kept
    monkeypatch.setattr(logview, "log_view", lambda _kb: pytest.fail("not from the cache"))
    cached = logview.load_log_view()
    assert type(cached) is logview.LogView and cached is not fresh
    assert type(next(iter(cached.rules.values())).rule) is logview.Record  # control: plain

    logs = sorted(CORPUS.rglob("*.log"))
    assert len(logs) > 1000  # control: the corpus is there
    scanned = [(p, *scan_logs([p])) for p in logs]

    def dumps(k: object) -> list[str]:
        out = []
        for p, symptoms, suspicious, wrappers in scanned:
            d = diagnose(
                k, None, symptoms, wrappers=wrappers, log_text=lambda p=p: learned_text([p])
            )
            d.suspicious = with_unexplained(suspicious, symptoms, wrappers, d.hypotheses, [str(p)])
            out.append(d.model_dump_json())
        return out

    want = dumps(kb)
    assert sum('"hypotheses":[]' not in w for w in want) > 500  # control: causes were named
    for view in (fresh, cached):
        got = dumps(view)

        assert [str(p) for (p, *_), a, b in zip(scanned, got, want, strict=True) if a != b] == []
