"""scripts/test's shards (tests/shards.py): every test of a selection runs in exactly one shard,
whole files stay together, and the split follows the recorded seconds. Checked on a small suite
of its own, run by real pytest processes with the plugin loaded."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from shards import assign, parse

HERE = Path(__file__).parent


def test_heaviest_files_are_spread_and_every_file_has_one_shard():
    weights = {"a.py": 100.0, "b.py": 90.0, "c.py": 10.0, "d.py": 5.0}
    got = assign(["d.py", "c.py", "b.py", "a.py", "new.py"], weights, 2)
    assert set(got) == {"a.py", "b.py", "c.py", "d.py", "new.py"}
    assert got["a.py"] != got["b.py"]  # the two heavy ones apart
    load = {k: sum(weights.get(f, 20.0) for f, s in got.items() if s == k) for k in (1, 2)}
    assert abs(load[1] - load[2]) <= 20.0, load


def test_a_bad_spec_is_a_usage_error():
    assert parse("rest:2/2") == ("rest", 2, 2)
    for bad in ("rest", "rest:3/2", "rest:0/2", "rest:1/2;rm -rf /", ":1/2"):
        with pytest.raises(pytest.UsageError):
            parse(bad)


def _suite(tmp: Path) -> None:
    for i in range(5):
        body = "".join(f"def test_{i}_{j}():\n    pass\n\n" for j in range(i + 1))
        (tmp / f"test_m{i}.py").write_text(body)


def _run(tmp: Path, spec: str | None, times: Path) -> tuple[set[str], dict]:
    env = {k: v for k, v in os.environ.items() if k not in ("REMEDY_SHARD", "REMEDY_FILE_TIMES")}
    env["PYTHONPATH"] = f"{HERE}{os.pathsep}{env.get('PYTHONPATH', '')}"
    env["REMEDY_FILE_TIMES"] = str(times)
    if spec:
        env["REMEDY_SHARD"] = spec
    r = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-p",
            "shards",
            "-p",
            "no:cacheprovider",
            "-rA",
            "-q",
            str(tmp),
        ],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp,
        timeout=120,
    )
    assert r.returncode in (0, 5), r.stdout + r.stderr
    ran = {ln.split()[1] for ln in r.stdout.splitlines() if ln.startswith("PASSED ")}
    return ran, json.loads(times.read_text()) if times.exists() else {}


def test_two_shards_run_every_test_once_with_whole_files(tmp_path: Path):
    suite = tmp_path / "suite"
    suite.mkdir()
    _suite(suite)
    everything, times = _run(suite, None, tmp_path / "all.json")
    assert len(everything) == 15 and set(times) == {f"test_m{i}.py" for i in range(5)}
    one, _ = _run(suite, "rest:1/2", tmp_path / "1.json")
    two, _ = _run(suite, "rest:2/2", tmp_path / "2.json")
    assert one and two and not one & two and one | two == everything
    files = [{t.split("::")[0] for t in s} for s in (one, two)]
    assert not files[0] & files[1]  # no file split across shards
