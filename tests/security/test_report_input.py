"""`remedy report FILE` draws a saved JSON document: a damaged or hand-made one is a clear
error, never an internal error, and nothing is written.

The attack: fleet reports (`remedy run|plan --inventory --json`) were drawn from the raw
dict: `"hosts": 5`, a host that is a number, or the `facts --inventory --json` document
(whose `groups` is a count) ended `remedy report` in an internal error (exit 70). Now the
document is validated as a FleetReport first (as an impact report already was): exit 2.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
GOOD = {
    "command": "run", "inventory": "inv.ini", "exit_code": 0,
    "hosts": [{"host": "gpu01", "outcome": "fixed", "exit_code": 0, "group": 1}],
    "groups": [{"id": 1, "facts_key": "k", "status": "ok", "hosts": ["gpu01"], "steps": ["a: b"]}],
}  # fmt: skip
BAD = [
    {"hosts": 5, "groups": []},
    {**GOOD, "hosts": [1, 2]},
    {**GOOD, "groups": 3},  # what `remedy facts --inventory --json` writes
    {**GOOD, "hosts": [{"host": None, "outcome": [], "exit_code": "x"}]},
    {**GOOD, "groups": [{"id": "x", "hosts": 5}]},
]


def _report(tmp: Path, doc: object, out: str) -> subprocess.CompletedProcess[str]:
    src = tmp / "fleet.json"
    src.write_text(json.dumps(doc))
    env = {**os.environ, "PYTHONPATH": str(REPO / "src"), "XDG_CACHE_HOME": str(tmp / "c")}
    return subprocess.run([sys.executable, "-m", "remedy", "report", str(src), "--out",
                           str(tmp / out)], capture_output=True, text=True, env=env,
                          timeout=60)  # fmt: skip


@pytest.mark.parametrize("doc", BAD, ids=range(len(BAD)))
def test_a_damaged_fleet_report_is_a_clear_error(tmp_path: Path, doc: object):
    r = _report(tmp_path, doc, "r.html")
    assert r.returncode == 2 and "not a valid fleet report" in r.stderr, r.stderr
    assert not (tmp_path / "r.html").exists()


def test_control_a_fleet_report_is_drawn(tmp_path: Path):
    r = _report(tmp_path, GOOD, "r.html")
    assert r.returncode == 0, r.stderr
    assert "gpu01" in (tmp_path / "r.html").read_text()
