"""A pytest plugin: each failure (and each very slow test) is told the moment it happens.

CI keeps only the tail of a run it stops at its time limit, and `pytest -q` names failures
only in its closing summary: a run cut short once showed F and E with no word of why. Loaded
by tests/conftest.py (pytest_plugins); `-p failure_notice` loads it elsewhere."""

from __future__ import annotations

from typing import Any

import pytest

SLOW_NOTICE_S = 240.0
TAIL_LINES = 15
_terminal: list[Any] = []


@pytest.hookimpl(trylast=True)  # after the terminal reporter registers itself
def pytest_configure(config: pytest.Config) -> None:
    _terminal[:] = [config.pluginmanager.get_plugin("terminalreporter")]


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    tr = _terminal[0] if _terminal else None
    if tr is None:
        return
    if report.failed:
        tail = "\n".join(report.longreprtext.splitlines()[-TAIL_LINES:])
        tr.write_line("")
        tr.write_line(f"FAILED NOW ({report.when}, {report.duration:.0f} s): {report.nodeid}")
        tr.write_line(tail)
    elif report.when == "call" and report.duration > SLOW_NOTICE_S:
        tr.write_line("")
        tr.write_line(f"slow ({report.duration:.0f} s): {report.nodeid}")
