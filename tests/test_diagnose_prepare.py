"""remedy.diagnose.prepare_log_only: what `diagnose --log` loads while its scan still reads.

The field signals, the GPU model table and the skew checks are loaded before the scan's
result is awaited (remedy.commands.diagnose_run), so the diagnosis after the last line finds
them ready. It must change nothing the diagnosis says, and a failure while preparing must
reach the user exactly as before: from the diagnosis, not from the preparation.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from remedy import diagnose as dg
from remedy.errors import KnowledgeError
from remedy.evidence import fields, scan_path
from remedy.evidence.catalog import default_catalog

LOG = Path(__file__).resolve().parent / "fixtures" / "logs" / "h200_server1.log"


def _scanned() -> tuple[list, set[str]]:
    symptoms = scan_path(str(LOG)).symptoms
    assert symptoms, "the fixture must hold symptoms for the diagnosis to rank"
    return symptoms, {s.id for s in default_catalog().signatures if s.wrapper}


def test_after_prepare_the_diagnosis_loads_nothing_again_and_says_the_same(kb, monkeypatch):
    symptoms, wrappers = _scanned()
    before = dg.diagnose(kb, None, symptoms, wrappers=wrappers).model_dump_json(indent=2)
    dg._SIGNALS.clear()
    fields._gpu_models.cache_clear()
    loads: list[int] = []
    real = dg._kept_signals
    monkeypatch.setattr(dg, "_kept_signals", lambda *a: loads.append(1) or real(*a))

    dg.prepare_log_only(kb)
    assert loads == [1]
    assert fields._gpu_models.cache_info().currsize == 1  # the table is loaded too

    after = dg.diagnose(kb, None, symptoms, wrappers=wrappers).model_dump_json(indent=2)
    assert loads == [1]  # the diagnosis took the prepared signals
    assert after == before


def test_a_failure_while_preparing_is_raised_by_the_diagnosis(kb, monkeypatch):
    symptoms, wrappers = _scanned()
    dg._SIGNALS.clear()

    def broken(*_a: object) -> list:
        raise KnowledgeError("field-signals.yaml: entry 3: broken")

    monkeypatch.setattr(dg, "_kept_signals", broken)
    dg.prepare_log_only(kb)  # says nothing: the diagnosis meets it again
    with pytest.raises(KnowledgeError, match="entry 3: broken"):
        dg.diagnose(kb, None, symptoms, wrappers=wrappers)
    assert not dg._SIGNALS  # nothing half-loaded kept for a later diagnosis


def test_prepare_imports_the_skew_checks_the_diagnosis_imports(kb, monkeypatch):
    """The diagnosis of any log imports remedy.knowledge.skew (log_versions_of): prepared
    while the scan reads, it is not imported after the last line."""
    import sys

    monkeypatch.delitem(sys.modules, "remedy.knowledge.skew", raising=False)
    dg.prepare_log_only(kb)
    assert "remedy.knowledge.skew" in sys.modules
