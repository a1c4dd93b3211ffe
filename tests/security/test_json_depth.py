"""JSON that another user (or a hand edit) nests without end is a clear answer, not a crash.

`json.loads` raises RecursionError (not a ValueError) on ~100,000 nested brackets, and a
ValueError that is no JSONDecodeError on a 5,000-digit number. The attacks, for real:
  * a toolkit prefix uid 65534 owns (a pip wheel's, in a service user's venv) whose
    `version.json` is 200,000 `[`: the facts reader read it as root and ended in an internal
    error (exit 70) on every `remedy facts`/`plan` of that host; now the release comes from
    the next file and the toolkit is still listed;
  * a probe's result line and a launch probe's HTTP body (the workload's own code prints them)
    nested as deep;
  * a saved plan nested as deep (`export`: exit 70), and a plan or facts file holding a
    5,000-digit number (`run --plan`, `plan --facts`: exit 70).
One parser (`remedy.fileread.json_loads`) turns both into the ValueError every caller
already handles.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from test_exec_trust import chown_tree, fake_prefix, probe_prefix  # noqa: E402

REPO = Path(__file__).resolve().parents[2]
DEEP = "[" * 200_000 + "]" * 200_000


def test_a_deep_version_json_another_user_wrote_is_not_a_crash(tmp_path: Path):
    if os.geteuid() != 0:
        pytest.skip("chown to another user needs root")
    tmp_path.chmod(0o755)
    prefix = fake_prefix(tmp_path, tmp_path / "canary")
    (prefix / "version.json").write_text(DEEP)
    (prefix / "version.txt").write_text("CUDA Version 12.8.93\n")
    chown_tree(prefix, 65534)
    tk = probe_prefix(prefix)
    assert tk.prefix == str(prefix)
    assert not (tmp_path / "canary").exists()


def test_a_deep_probe_result_and_http_body_are_no_crash():
    from remedy.probes.base import RESULT_MARK, result_json
    from remedy.probes.launch import answered

    assert result_json(RESULT_MARK + DEEP) == {}
    status, _why = answered("REMEDY-HTTP 200\nREMEDY-BODY " + DEEP)
    assert status == "bad-body"


def _remedy(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(REPO / "src"), "XDG_STATE_HOME": str(cwd / "state")}
    return subprocess.run([sys.executable, "-m", "remedy", *args], capture_output=True,
                          text=True, env=env, timeout=120, cwd=cwd)  # fmt: skip


def test_a_deep_or_huge_number_plan_and_facts_are_a_clear_error(tmp_path: Path):
    good = tmp_path / "good.json"
    r = _remedy("plan", "--example", "seed-sm120-pip-cu13", "--out", str(good), cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    deep = tmp_path / "deep.json"
    deep.write_text("{" + '"a":' * 1 + DEEP + "}")
    big = tmp_path / "big.json"
    big.write_text(good.read_text().replace('"13.0.88"', "1" + "0" * 5000, 1))
    facts = tmp_path / "facts.json"
    facts.write_text('{"host": ' + "1" + "0" * 5000 + "}")
    for args in (
        ["export", str(deep)],
        ["export", str(big)],
        ["run", "--local", "--plan", str(big), "--yes"],
        ["run", "--local", "--plan", str(deep), "--yes"],
        ["plan", "--facts", str(facts)],
        ["plan", "--facts", str(deep)],
    ):
        r = _remedy(*args, cwd=tmp_path)
        assert r.returncode == 2, (args, r.returncode, r.stderr[-600:])
        assert "Traceback" not in r.stderr and "bug in remedy" not in r.stderr, (args, r.stderr)
    assert not list((tmp_path / "state").rglob("journal.jsonl"))  # nothing was run
