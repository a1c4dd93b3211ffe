"""An inventory's numbers that Python cannot take are a clear error, never an internal one.

The attacks, for real, through `remedy plan --inventory` (exit 2, the file and line named):
a host range whose end has 22 digits (`len(range(...))` overflowed a C ssize_t before the
100,000-host cap was checked), `ansible_port=1e309` / `.inf` (int(inf): OverflowError), and
Unicode digits (`h:²`, `h[²:³]`: `str.isdigit()` accepts them, `int()` does not). They
ended in `remedy: internal error` (exit 70).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize(
    "text",
    [
        "[g]\nh[01:1000000000000000000000]\n",
        "[g]\nh ansible_port=1e309\n",
        "all:\n  hosts:\n    h:\n      ansible_port: .inf\n",
        "[g]\nh:\u00b2\n",
        "[g]\nh[\u00b2:\u00b3]\n",
    ],
)
def test_numbers_python_cannot_take_are_a_clear_error(tmp_path: Path, text: str):
    inv = tmp_path / ("inv.yaml" if text.startswith("all:") else "inv.ini")
    inv.write_text(text)
    env = {**os.environ, "PYTHONPATH": str(REPO / "src"), "XDG_STATE_HOME": str(tmp_path / "s")}
    r = subprocess.run(
        [sys.executable, "-m", "remedy", "plan", "--inventory", str(inv), "--json"],
        capture_output=True, text=True, env=env, timeout=120, cwd=tmp_path,
    )  # fmt: skip
    assert r.returncode == 2, (r.returncode, r.stderr[-600:])
    assert "internal error" not in r.stderr and "Traceback" not in r.stderr, r.stderr
    assert str(inv) in r.stderr or "host h" in r.stderr or "bad port" in r.stderr, r.stderr


@pytest.mark.parametrize("cols", ["\u00b2", "\u0661\u0662", "-1", "1e9"])
def test_a_columns_value_python_cannot_take_is_no_crash(tmp_path: Path, cols: str):
    """COLUMNS from the environment: `²` passed str.isdigit() and int() raised (exit 70)."""
    env = {**os.environ, "PYTHONPATH": str(REPO / "src"), "COLUMNS": cols}
    r = subprocess.run(
        [sys.executable, "-m", "remedy", "plan", "--example", "seed-sm120-pip-cu13"],
        capture_output=True, text=True, env=env, timeout=120, cwd=tmp_path,
    )  # fmt: skip
    assert r.returncode == 0 and "internal error" not in r.stderr, (r.returncode, r.stderr[-600:])
