"""Damaged input gets a clear error and loses nothing, never a traceback or a stuck host.

The attacks, for real:
  * a lock file left empty, cut short or not a JSON object (a remedy killed between creating
    lock.json and writing it): it used to block every later run for ever (`--break-lock ?`
    found "no lock" and the next acquire the same unreadable file); now the lock is written
    whole before it is linked into place, and an unreadable one is named as such and released
    by `resume`;
  * a journal whose tail is torn (half a record, NULs, a JSON value that is not a record)
    after a kill -9: history, resume and resume-with-rollback still finish the run;
  * a facts file or saved plan holding a NUL character (JSON "\\u0000") in a host path: it
    reached the shell quoting, which refuses NUL, and `export` ended in an internal error.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from test_executor import drive, fixed_state, inproc, setup_tree, snapshot  # noqa: E402
from test_runner_faults import lock_file, runner  # noqa: E402

from remedy.errors import LockHeld  # noqa: E402

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture
def root(tmp_path: Path) -> Path:
    setup_tree(tmp_path / "tree")
    return tmp_path


@pytest.mark.parametrize("torn", [b"", b'{"run_id": "dead', b"[]", b'"x"', b"\x00" * 8])
def test_an_unreadable_lock_is_named_and_released_by_resume(root: Path, monkeypatch, torn):
    asyncio.run(runner(root).hs.setup())
    lock_file(root).write_bytes(torn)
    before = snapshot(root)
    r = drive(root, "run")
    assert r.returncode != 0 and b"unreadable lock file" in r.stderr, r.stderr[-400:]
    assert snapshot(root) == before and not list((root / "state").rglob("journal.jsonl"))
    rep = asyncio.run(runner(root).resume())
    assert rep.outcome == "nothing-to-do" and "unreadable lock" in rep.message, rep.message
    assert not lock_file(root).exists()
    assert inproc(root, "run", monkeypatch)["outcome"] == "fixed"  # the host is usable again
    fixed_state(root)


def _lock(root: Path, run_id: str, break_lock: str | None = None) -> None:
    async def go() -> None:
        r = runner(root)
        await r.hs.setup()
        await r._lock(run_id, "run", break_lock)

    asyncio.run(go())


def test_break_lock_question_mark_releases_an_unreadable_lock(root: Path):
    asyncio.run(runner(root).hs.setup())
    lock_file(root).write_bytes(b"")
    with pytest.raises(LockHeld, match="unreadable lock file"):
        _lock(root, "r1")
    _lock(root, "r1", break_lock="?")
    assert json.loads(lock_file(root).read_text())["run_id"] == "r1"


def test_the_lock_is_never_left_empty(root: Path):
    """Taken by linking a complete temp file: at no point is lock.json empty or partial, and
    no temp file is left beside it."""
    _lock(root, "r2")
    state = lock_file(root).parent
    assert json.loads(lock_file(root).read_text())["run_id"] == "r2"
    assert not [p.name for p in state.iterdir() if p.name.startswith(".lock-")]
    with pytest.raises(LockHeld, match="locked by run r2"):
        _lock(root, "r3")
    assert not [p.name for p in state.iterdir() if p.name.startswith(".lock-")]


@pytest.mark.parametrize("tail", [b'{"run": "x", "event": "appl', b"\x00\x00\x00", b"7\n"])
@pytest.mark.parametrize("mode", ["resume", "resume-rollback"])
def test_a_torn_journal_tail_after_kill_9_still_finishes(root: Path, monkeypatch, tail, mode):
    before = snapshot(root)
    assert drive(root, "run", crash="applied:1").returncode == -9
    (journal,) = (root / "state").rglob("journal.jsonl")
    with open(journal, "ab") as f:
        f.write(tail)
    assert [h["outcome"] for h in inproc(root, "history", monkeypatch)] == ["interrupted"]
    rep = inproc(root, mode, monkeypatch)
    if mode == "resume":
        assert rep["outcome"] == "fixed", rep
        fixed_state(root)
    else:
        assert rep["outcome"] == "rolled-back", rep
        assert snapshot(root) == before


def remedy(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "remedy", *args],
        capture_output=True, text=True, timeout=120, cwd=REPO,
    )  # fmt: skip


def test_a_nul_in_a_facts_path_is_a_clear_error(tmp_path: Path):
    ex = REPO / "src/remedy/examples/seed-sm120-system-cuda128/facts.yaml"
    facts = json.loads(json.dumps(__import__("yaml").safe_load(ex.read_text())))
    text = json.dumps(facts).replace("/root/venv_sglang211", "/root/v\\u0000x")
    ff = tmp_path / "facts.json"
    ff.write_text(text)
    out = tmp_path / "plan.json"
    for args in (["plan", "--facts", str(ff), "--out", str(out)], ["diagnose", "--facts", str(ff)]):
        r = remedy(*args)
        assert r.returncode == 2, (args, r.returncode, r.stderr)
        assert "NUL character in" in r.stderr and "Traceback" not in r.stderr
    assert not out.exists()
    # a saved plan whose facts hold one (as an older remedy saved it) is refused at load
    good = tmp_path / "good.json"
    assert (
        remedy("plan", "--example", "seed-sm120-system-cuda128", "--out", str(good)).returncode == 0
    )
    bad = tmp_path / "bad.json"
    bad.write_text(good.read_text().replace("/root/venv_sglang211", "/root/v\\u0000x"))
    for args in (["export", str(bad)], ["run", "--local", "--plan", str(bad), "--yes"]):
        r = remedy(*args)
        assert r.returncode == 2 and "NUL character in" in r.stderr, (args, r.stderr)
        assert "internal error" not in r.stderr


def _alias_bomb(levels: int = 8) -> str:
    """~300 bytes that a YAML loader expands to 10**levels references of one list."""
    lines = ["l0: &l0 [x, x, x, x, x, x, x, x, x, x]"]
    for i in range(1, levels):
        lines.append(f"l{i}: &l{i} [{', '.join([f'*l{i - 1}'] * 10)}]")
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize(
    "text",
    [
        "host: a\ntoolkits: &t [*t]\n",  # a cycle: RecursionError, exit 70
        _alias_bomb(),  # 10**8 nodes: every walk over the facts hung
        "host: a\nos: &o Debian\nnotes: [*o]\n",  # even a harmless one: facts are a tree
    ],
)
def test_a_yaml_alias_in_a_facts_file_is_refused_at_once(tmp_path: Path, text: str):
    ff = tmp_path / "facts.yaml"
    ff.write_text(text)
    for cmd in ("plan", "diagnose"):
        r = subprocess.run(
            [sys.executable, "-m", "remedy", cmd, "--facts", str(ff)],
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert r.returncode == 2, (cmd, r.returncode, r.stderr[-400:])
        assert r.stderr.startswith(f"remedy: error: {ff}: the YAML value anchored at line ")
        assert "alias" in r.stderr and r.stdout == ""
