"""remedy run's mechanics on a scratch tree: journal, checkpoints, rollback, resume after a
kill -9 at every journal point, the lock, stale plans."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

DRIVER = Path(__file__).parent / "executor_driver.py"
SITE = "venv/lib/python3.11/site-packages"


def setup_tree(root: Path) -> None:
    (root / "cu13" / "lib").mkdir(parents=True)
    (root / "cu13" / "lib" / "libcudart.so.13").write_bytes(b"\x7fELF fake")
    (root / "etc").mkdir()
    site = root / SITE
    (site / "fakepkg").mkdir(parents=True)
    (site / "fakepkg" / "__init__.py").write_text("V = '1.0'\n")
    info = site / "fakepkg-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: fakepkg\nVersion: 1.0\n")
    (info / "RECORD").write_text(
        "fakepkg/__init__.py,,\nfakepkg-1.0.dist-info/METADATA,,\nfakepkg-1.0.dist-info/RECORD,,\n"
    )
    (root / "cu13" / "lib" / "libcudart.so.13").chmod(0o755)


def snapshot(root: Path) -> list[tuple]:
    """Everything that matters for 'byte-identical': paths, kinds, contents, modes, links."""
    out = []
    for dp, dns, fns in os.walk(root / "tree"):
        for n in sorted(dns + fns):
            p = Path(dp) / n
            st = p.lstat()
            if p.is_symlink():
                out.append((str(p), "L", os.readlink(p)))
            elif p.is_dir():
                out.append((str(p), "D", oct(st.st_mode)))
            else:
                out.append((str(p), "F", p.read_bytes(), oct(st.st_mode)))
    return sorted(out)


def inproc(root: Path, mode: str, monkeypatch) -> dict:
    """resume/rollback/history in this process (only the crashing run needs its own)."""
    import asyncio
    import importlib.util

    monkeypatch.setenv("XDG_STATE_HOME", str(root / "state"))
    monkeypatch.delenv("REMEDY_CRASH_AT", raising=False)
    monkeypatch.setattr(sys, "argv", [str(DRIVER), str(root / "tree"), mode])
    spec = importlib.util.spec_from_file_location("executor_driver", DRIVER)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    import contextlib
    import io

    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        asyncio.run(mod.main())
    return json.loads(buf.getvalue())


def drive(root: Path, *args: str, crash: str | None = None) -> subprocess.CompletedProcess:
    env = dict(os.environ, XDG_STATE_HOME=str(root / "state"))
    env.pop("REMEDY_CRASH_AT", None)
    if crash:
        env["REMEDY_CRASH_AT"] = crash
    return subprocess.run(
        [sys.executable, str(DRIVER), str(root / "tree"), *args],
        env=env,
        capture_output=True,
        timeout=120,
    )


@pytest.fixture
def root(tmp_path: Path) -> Path:
    setup_tree(tmp_path / "tree")
    return tmp_path


def fixed_state(root: Path) -> None:
    t = root / "tree"
    assert os.readlink(t / "cu13" / "lib64") == "lib"
    assert (t / "etc" / "x.service.d" / "50-remedy.conf").read_text().startswith("[Service]")
    assert "2.0" in (t / SITE / "fakepkg" / "__init__.py").read_text()
    assert (t / SITE / "fakepkg-2.0.dist-info").is_dir()
    assert not (t / SITE / "fakepkg-1.0.dist-info").exists()


def test_run_applies_every_step_and_rollback_restores_byte_identical(root):
    before = snapshot(root)
    r = drive(root, "run")
    rep = json.loads(r.stdout)
    assert r.returncode == 0 and rep["outcome"] == "fixed", r.stderr.decode()
    assert [s["outcome"] for s in rep["steps"]] == ["committed"] * 3
    fixed_state(root)
    state = root / "state" / "remedy"
    assert oct(state.stat().st_mode & 0o777) == "0o700"
    journal = next(state.glob("runs/*/journal.jsonl"))
    assert oct(journal.stat().st_mode & 0o777) == "0o600"
    events = [json.loads(x)["event"] for x in journal.read_text().splitlines()]
    assert events[:6] == ["start", "intent", "checkpoint", "applied", "probed", "committed"]
    assert events[-1] == "finished"
    r = drive(root, "rollback")
    assert json.loads(r.stdout)["outcome"] == "rolled-back", r.stderr.decode()
    assert snapshot(root) == before
    hist = json.loads(drive(root, "history").stdout)
    assert [h["outcome"] for h in hist] == ["rolled-back"]


def test_failed_final_verification_rolls_back_everything(root):
    before = snapshot(root)
    r = drive(root, "run", "fail-probe")
    rep = json.loads(r.stdout)
    assert r.returncode == 3 and rep["outcome"] == "rolled-back"
    assert snapshot(root) == before


def test_fixed_only_when_the_failed_operation_passes_again(root):
    r = drive(root, "run", "op-passes")
    rep = json.loads(r.stdout)
    assert r.returncode == 0 and rep["outcome"] == "fixed", r.stderr.decode()
    rerun = [v for v in rep["verification"] if v.get("failed_operation")]
    assert [v["ok"] for v in rerun] == [True]


def test_failed_operation_still_failing_is_applied_not_fixed_and_stays_applied(root):
    before = snapshot(root)
    r = drive(root, "run", "op-fails")
    rep = json.loads(r.stdout)
    assert r.returncode == 12 and rep["outcome"] == "applied-not-fixed", r.stderr.decode()
    assert "fatal error: x.h" in rep["message"]
    assert [s["outcome"] for s in rep["steps"]] == ["committed"] * 3
    fixed_state(root)
    # the user can still undo a run that did not fix the failure
    r = drive(root, "rollback")
    assert json.loads(r.stdout)["outcome"] == "rolled-back", r.stderr.decode()
    assert snapshot(root) == before


def test_failed_operation_still_failing_rolls_back_when_asked(root):
    before = snapshot(root)
    r = drive(root, "run", "op-fails-rollback")
    rep = json.loads(r.stdout)
    assert r.returncode == 3 and rep["outcome"] == "rolled-back", r.stderr.decode()
    assert "not fixed" in rep["message"] and "x.h" in rep["message"]
    assert snapshot(root) == before


POINTS = [
    f"{ev}:{i}"
    for i in range(3)
    for ev in ("intent", "checkpoint", "applied", "probed", "committed")
] + ["start", "verify"]


@pytest.mark.parametrize("point", POINTS)
def test_kill_9_at_every_journal_point_then_resume(root, point, monkeypatch):
    before = snapshot(root)
    r = drive(root, "run", crash=point)
    assert r.returncode == -9, (point, r.returncode, r.stderr.decode()[-500:])
    rep = inproc(root, "resume", monkeypatch)
    assert rep["outcome"] == "fixed", (point, rep)
    fixed_state(root)
    assert inproc(root, "rollback", monkeypatch)["outcome"] == "rolled-back"
    assert snapshot(root) == before, point


def test_a_second_run_is_refused_while_the_lock_is_held(root, monkeypatch):
    assert drive(root, "run", crash="applied:1").returncode == -9
    r2 = drive(root, "run")
    assert r2.returncode != 0 and b"locked by run" in r2.stderr + r2.stdout
    hist = inproc(root, "history", monkeypatch)
    assert [h["outcome"] for h in hist] == ["interrupted"]


@pytest.mark.parametrize("point", ["checkpoint:1", "applied:2", "committed:1"])
def test_kill_9_then_resume_with_rollback_is_byte_identical(root, point, monkeypatch):
    before = snapshot(root)
    assert drive(root, "run", crash=point).returncode == -9
    rep = inproc(root, "resume-rollback", monkeypatch)
    assert rep["outcome"] == "rolled-back"
    assert snapshot(root) == before
