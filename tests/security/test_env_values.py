"""Values remedy takes from its environment are data: one it cannot use is ignored or a clear
error, never an internal error in the middle of a run (which leaves it to resume)."""

from __future__ import annotations

import pytest

from remedy.executor import runner


@pytest.mark.parametrize("spec", ["step-start:x", "step-start:1e3", "step-start:²"])
def test_a_crash_point_that_names_no_step_is_ignored(monkeypatch, spec):
    """REMEDY_CRASH_AT=event:STEP with a STEP that is no step number: `int()` raised
    ValueError inside the runner, after the journal record (an internal error, exit 70)."""
    monkeypatch.setenv("REMEDY_CRASH_AT", spec)
    killed: list[int] = []
    monkeypatch.setattr(runner.os, "kill", lambda pid, sig: killed.append(sig))
    runner._crash_point("step-start", 1)
    assert killed == []


def test_control_a_crash_point_naming_the_step_kills(monkeypatch):
    monkeypatch.setenv("REMEDY_CRASH_AT", "step-start:2")
    killed: list[int] = []
    monkeypatch.setattr(runner.os, "kill", lambda pid, sig: killed.append(sig))
    runner._crash_point("step-start", 1)
    runner._crash_point("step-start", 2)
    assert len(killed) == 1
