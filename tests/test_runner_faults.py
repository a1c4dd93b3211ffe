"""Faults the run must survive, on a scratch tree (LocalTransport): regressions for what the
sandbox soak (bench/soak.py) and fault tests (tests/test_faults_sandbox.py) found.

  * a probe whose connection failed is no verdict: the run stops interrupted (lock kept) and
    a resume proves the step again, instead of rolling back a good fix
  * a checkpoint that cannot be written (a full disk) fails its step before it runs: the
    committed steps are rolled back (exit 3), nothing is left locked
  * a lock whose run never wrote a journal (killed during its staleness check) is released by
    `resume`/`rollback`, unless its owner still runs on this machine
  * a restore leaves files that are already as captured alone (a step that failed on a
    read-only or root-owned file changed nothing, and undoing it must not need to write)
  * a truncated host agent (a put cut off by kill -9) is uploaded again
"""

from __future__ import annotations

import asyncio
import importlib.util
import json
import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest
from test_executor import setup_tree, snapshot

from remedy.errors import ConnectionDropped, LockHeld
from remedy.executor.hoststate import AGENT_SOURCE, HostState
from remedy.executor.runner import Runner
from remedy.transport import LocalTransport

DRIVER = Path(__file__).parent / "executor_driver.py"
AGENT = Path(__file__).parents[1] / "src" / "remedy" / "executor" / "agent.py"


def driver(root: Path, monkeypatch):
    """executor_driver (its three-step plan over root/tree), imported in this process."""
    monkeypatch.setattr(sys, "argv", [str(DRIVER), str(root / "tree"), "run"])
    spec = importlib.util.spec_from_file_location("executor_driver_faults", DRIVER)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


class Res:
    def __init__(self, ok: bool, transport_error: str | None = None) -> None:
        self.ok, self.detail, self.symptoms, self.skipped = ok, "probe", [], None
        self.transport_error = transport_error


def runner(root: Path, prober=None, transport=None) -> Runner:
    async def collect(_t):
        from remedy.model import Facts

        return Facts(host="scratch")

    async def ok(probe, t, facts, params=None, consumer=None):
        return Res(True)

    t = transport or LocalTransport(host="scratch", env={"XDG_STATE_HOME": str(root / "state")})
    return Runner(t, collect=collect, prober=prober or ok)


@pytest.fixture
def root(tmp_path: Path) -> Path:
    setup_tree(tmp_path / "tree")
    return tmp_path


def lock_file(root: Path) -> Path:
    return root / "state" / "remedy" / "lock.json"


def test_a_probe_that_lost_its_connection_interrupts_instead_of_rolling_back(root, monkeypatch):
    mod = driver(root, monkeypatch)

    async def lost_on_step_2(probe, t, facts, params=None, consumer=None):
        lost_on_step_2.calls += 1
        if lost_on_step_2.calls == 2:
            return Res(False, transport_error="scratch: connection lost (Connection lost)")
        return Res(True)

    lost_on_step_2.calls = 0
    r = runner(root, lost_on_step_2)
    with pytest.raises(ConnectionDropped) as exc:
        asyncio.run(r.run(mod.plan()))
    assert "connection failed during static" in str(exc.value) and "step 2" in str(exc.value)
    assert lock_file(root).exists()  # kept for `remedy resume`
    hist = asyncio.run(runner(root).runs())
    assert [(h["outcome"], h["last_event"], h["last_step"]) for h in hist] == [
        ("interrupted", "applied", 1)
    ]
    rep = asyncio.run(runner(root).resume())
    assert rep.outcome == "fixed", rep.message
    assert not lock_file(root).exists()


def test_a_checkpoint_that_cannot_be_written_rolls_back_the_committed_steps(root, monkeypatch):
    """The host agent's capture fails on step 3 (as on a full disk): step 3 never runs, steps
    1-2 are restored, exit 3 with the agent's reason; the lock is released."""
    mod = driver(root, monkeypatch)
    before = snapshot(root)
    t = LocalTransport(host="scratch", env={"XDG_STATE_HOME": str(root / "state")})
    real_run = t.run

    async def run(command, **kw):
        if isinstance(command, list) and "capture" in command and command[-1].endswith("/cp/2"):
            command = [*command[:-1], "/dev/null/cp/2"]  # NotADirectoryError, like ENOSPC
        return await real_run(command, **kw)

    t.run = run
    rep = asyncio.run(runner(root, transport=t).run(mod.plan()))
    assert rep.outcome == "rolled-back" and rep.exit_code == 3, rep.message
    assert "step 3 (pip): its checkpoint could not be written" in rep.message
    assert "host agent 'capture' failed" in rep.message
    assert [s.outcome for s in rep.steps] == ["rolled-back", "rolled-back", "failed"]
    assert rep.wrong_finding == []  # not the finding's fault
    assert snapshot(root) == before
    assert not lock_file(root).exists()
    events = [
        json.loads(x)["event"]
        for x in next((root / "state").rglob("journal.jsonl")).read_text().splitlines()
    ]
    assert "checkpoint_failed" in events and events[-1] == "finished"


def test_a_partial_checkpoint_is_removed(tmp_path):
    """capture that fails while writing its tar leaves no files.tar/manifest behind."""
    big = tmp_path / "f"
    big.write_bytes(b"x" * 4096)
    cp = tmp_path / "cp"
    cp.mkdir()
    (cp / "manifest.json").mkdir()  # the manifest cannot be written: after the tar
    p = subprocess.run(
        [sys.executable, str(AGENT), "capture", str(cp)],
        input=json.dumps({"paths": [str(big)]}),
        capture_output=True,
        text=True,
    )
    assert p.returncode == 1 and "error" in json.loads(p.stdout)
    assert not (cp / "files.tar").exists()


@pytest.mark.parametrize("command", ["resume", "rollback"])
def test_a_lock_whose_run_never_started_is_released(root, command):
    r = runner(root)
    asyncio.run(r.hs.setup())
    lock_file(root).write_text(
        json.dumps({"run_id": "deadbeef0001", "owner": "u@elsewhere pid 1", "operation": "run"})
    )
    rep = asyncio.run(getattr(runner(root), command)())
    assert rep.outcome == "nothing-to-do" and "never started" in rep.message, rep.message
    assert not lock_file(root).exists()


def test_a_lock_of_a_live_run_on_this_machine_is_not_released(root):
    r = runner(root)
    asyncio.run(r.hs.setup())
    me = f"u@{socket.gethostname()} pid {os.getpid()}"
    lock_file(root).write_text(json.dumps({"run_id": "live00000001", "owner": me}))
    with pytest.raises(LockHeld, match="still running"):
        asyncio.run(runner(root).resume())
    assert lock_file(root).exists()


def test_restore_leaves_unchanged_files_alone(tmp_path):
    same, changed = tmp_path / "same", tmp_path / "changed"
    same.write_bytes(b"a" * 100)
    changed.write_bytes(b"b" * 100)
    cp = tmp_path / "cp"
    spec = json.dumps({"paths": [str(same), str(changed)]})
    agent = [sys.executable, str(AGENT)]
    assert subprocess.run([*agent, "capture", str(cp)], input=spec, text=True).returncode == 0
    ino = same.stat().st_ino
    changed.write_bytes(b"c" * 100)
    p = subprocess.run([*agent, "restore", str(cp)], capture_output=True, text=True)
    assert p.returncode == 0, p.stdout
    assert same.stat().st_ino == ino  # not rewritten
    assert changed.read_bytes() == b"b" * 100


def test_a_truncated_agent_is_uploaded_again(tmp_path):
    t = LocalTransport(host="scratch", env={"XDG_STATE_HOME": str(tmp_path)})
    hs = HostState(t)
    asyncio.run(hs.setup())
    Path(hs.agent_path).write_bytes(AGENT_SOURCE[:1000])
    asyncio.run(HostState(t).setup())
    assert Path(hs.agent_path).read_bytes() == AGENT_SOURCE


def _tree(root: Path) -> list[tuple]:
    return sorted(
        (str(p.relative_to(root)), p.is_dir(), p.read_bytes() if p.is_file() else b"")
        for p in root.rglob("*")
    )


def test_a_restore_killed_half_way_finishes_on_retry(tmp_path, monkeypatch):
    """kill -9 inside a package restore after the newer version's RECORD is gone: the retry
    (what `remedy resume` does) still removes that version's files, byte-identical after."""
    spec = importlib.util.spec_from_file_location("remedy_agent_inproc", AGENT)
    agent = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(agent)
    prefix = tmp_path / "venv"
    site = prefix / "lib" / "python3.11" / "site-packages"

    def install(version: str, extra: list[str]) -> None:
        for old in site.glob("fakepkg*"):
            subprocess.run(["rm", "-rf", str(old)], check=True)
        info = site / f"fakepkg-{version}.dist-info"
        (site / "fakepkg").mkdir(parents=True)
        info.mkdir()
        files = [f"fakepkg-{version}.dist-info/RECORD", "fakepkg/__init__.py", *extra]
        for f in files[1:]:
            (site / f).write_text(f"# {version} {f}\n")
        (info / "METADATA").write_text(
            f"Metadata-Version: 2.1\nName: fakepkg\nVersion: {version}\n"
        )
        files.append(f"fakepkg-{version}.dist-info/METADATA")
        (info / "RECORD").write_text("".join(f"{f},,\n" for f in files))

    install("1.0", [])
    before = _tree(tmp_path / "venv")
    cp = tmp_path / "cp"
    monkeypatch.setattr(sys, "stdin", None)
    with pytest.raises(SystemExit):
        agent.capture(str(cp), {"packages": [{"python": str(prefix), "names": ["fakepkg"]}]})
    install("2.0", ["fakepkg/new.py"])
    real_unlink, calls = os.unlink, []

    def dies_after_record(path, *, dir_fd=None):  # the agent unlinks through dir handles
        real_unlink(path, dir_fd=dir_fd)
        calls.append(path)
        if str(path).endswith("RECORD"):
            raise KeyboardInterrupt  # the process dies here (kill -9)

    monkeypatch.setattr(agent.os, "unlink", dies_after_record)
    with pytest.raises(KeyboardInterrupt):
        agent.restore(str(cp))
    assert (site / "fakepkg" / "new.py").exists()  # left behind, its RECORD gone
    monkeypatch.setattr(agent.os, "unlink", real_unlink)
    with pytest.raises(SystemExit) as done:
        agent.restore(str(cp))
    assert done.value.code == 0
    assert _tree(tmp_path / "venv") == before


def test_a_half_done_install_that_no_record_lists_is_removed(tmp_path, monkeypatch):
    """pip killed mid-install (connection gone, `resume` stopped it) leaves files and
    directories that no RECORD owns: the restore removes them too (the soak found this)."""
    spec = importlib.util.spec_from_file_location("remedy_agent_inproc2", AGENT)
    agent = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(agent)
    site = tmp_path / "venv" / "lib" / "python3.11" / "site-packages"
    (site / "nvidia" / "cu13" / "include").mkdir(parents=True)
    (site / "nvidia" / "cu13" / "include" / "cuda.h").write_text("old\n")
    (site / "keep-empty").mkdir()
    before = _tree(tmp_path / "venv")
    cp = tmp_path / "cp"
    pk = {"python": str(tmp_path / "venv"), "names": ["nvidia-cuda-cccl"]}
    with pytest.raises(SystemExit):
        agent.capture(str(cp), {"packages": [pk]})
    half = site / "nvidia" / "cu13" / "include" / "cccl" / "cub" / "agent"
    half.mkdir(parents=True)
    (half / "a.cuh").write_text("partial\n")
    (site / "nvidia" / "cu13" / "include" / "cccl" / "thrust").mkdir()
    with pytest.raises(SystemExit) as done:
        agent.restore(str(cp))
    assert done.value.code == 0
    assert _tree(tmp_path / "venv") == before


def test_a_half_done_install_in_a_venv_with_lib64_is_removed_once(tmp_path, monkeypatch):
    """A venv's lib64 is a symlink to lib: the site dir must be walked once, or every file
    pip left (here its uninstall stash `~rt`, from a kill -9 mid-uninstall) is removed twice
    and the second unlink fails (FileNotFoundError, found by `bench/soak.py --during`)."""
    spec = importlib.util.spec_from_file_location("remedy_agent_inproc3", AGENT)
    agent = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(agent)
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    assert (venv / "lib64").is_symlink(), "the premise: a real venv's lib64 -> lib"
    site = next((venv / "lib").glob("python3*/site-packages"))
    (site / "nvidia" / "cu13" / "include").mkdir(parents=True)
    (site / "nvidia" / "cu13" / "include" / "cuda.h").write_text("old\n")
    before = _tree(venv)
    assert len(agent._site_dirs(str(venv))) == 1
    cp = tmp_path / "cp"
    pk = {"python": str(venv), "names": ["nvidia-cuda-runtime"]}
    with pytest.raises(SystemExit):
        agent.capture(str(cp), {"packages": [pk]})
    stash = site / "nvidia" / "cu13" / "include" / "~rt"
    stash.mkdir()
    (stash / "device_double_functions.hpp").write_text("stashed by pip's uninstall\n")
    with pytest.raises(SystemExit) as done:
        agent.restore(str(cp))
    assert done.value.code == 0
    assert _tree(venv) == before


def interrupted_run(root: Path, monkeypatch, owner: str) -> Path:
    """The driver's run cut off by a lost connection in step 1's proof, then a `resume`
    record of `owner` (as a remedy on that machine/pid would write it); its journal."""
    mod = driver(root, monkeypatch)

    async def lost(probe, t, facts, params=None, consumer=None):
        return Res(False, transport_error="scratch: connection lost (Connection lost)")

    with pytest.raises(ConnectionDropped):
        asyncio.run(runner(root, lost).run(mod.plan()))
    journal = next((root / "state").rglob("journal.jsonl"))
    with journal.open("a") as f:
        f.write(json.dumps({"event": "resume", "owner": owner, "ts": 1e10}) + "\n")
    return journal


def test_resume_refuses_a_run_that_is_still_going_here(root, monkeypatch):
    """An interrupted-looking run (no `finished` record) whose last owner is a live remedy
    process on this machine is not taken over; once that process is gone, resume proceeds."""
    other = subprocess.Popen(
        [sys.executable, "-c", "import time; time.sleep(60)", "remedy", "resume"]
    )
    try:
        interrupted_run(root, monkeypatch, f"u@{socket.gethostname()} pid {other.pid}")
        with pytest.raises(LockHeld, match="still running"):
            asyncio.run(runner(root).resume())
        assert lock_file(root).exists()
    finally:
        other.kill()
        other.wait()
    rep = asyncio.run(runner(root).resume())
    assert rep.outcome == "fixed", rep.message
    assert not lock_file(root).exists()


def test_a_reused_pid_does_not_block_a_resume():
    """A live pid whose command line is not remedy's (the pid was reused) is not an owner."""
    from remedy.executor.runner import _remedy_alive_here

    host = socket.gethostname()
    sleeper = subprocess.Popen(["sleep", "30"])
    try:
        assert not _remedy_alive_here(f"u@{host} pid {sleeper.pid}")
        assert not _remedy_alive_here(f"u@elsewhere pid {sleeper.pid}")
        assert not _remedy_alive_here(f"u@{host} pid {os.getpid()}")  # this very process
    finally:
        sleeper.kill()
        sleeper.wait()


def test_a_run_last_driven_from_another_machine_needs_break_lock(root, monkeypatch):
    """remedy cannot see a process on another controller: taking its run over (resume, or
    rollback of an interrupted run) needs --break-lock RUN_ID; with it, the run finishes."""
    journal = interrupted_run(root, monkeypatch, "ops@ctl-2 pid 4242")
    rid = journal.parent.name
    for attempt in (
        lambda r: r.resume(),
        lambda r: r.rollback(),
        lambda r: r.resume(break_lock="x"),
    ):
        with pytest.raises(LockHeld, match="another machine") as exc:
            asyncio.run(attempt(runner(root)))
        assert exc.value.hint == f"if that process is gone: add --break-lock {rid}"
    assert lock_file(root).exists()
    rep = asyncio.run(runner(root).resume(break_lock=rid))
    assert rep.outcome == "fixed", rep.message
    assert not lock_file(root).exists()


def test_cli_resume_and_rollback_refuse_a_foreign_run_with_the_break_lock_hint(root, monkeypatch):
    journal = interrupted_run(root, monkeypatch, "ops@ctl-2 pid 4242")
    rid = journal.parent.name
    env = {**os.environ, "XDG_STATE_HOME": str(root / "state")}
    # rollback asks first: --yes (no terminal here); the fixture driver because the run's
    # saved plan holds the runner fixture operation, which it registers
    fixture_cli = [sys.executable, str(Path(__file__).parent / "cli_fixture_driver.py")]
    for args in (["resume", "--local"], ["rollback", "--local", "--yes"]):
        p = subprocess.run(
            [*fixture_cli, *args, "--json"],
            capture_output=True,
            text=True,
            env=env,
            timeout=120,
        )
        assert p.returncode == 5, (p.returncode, p.stderr[-800:])
        assert json.loads(p.stdout)["outcome"] == "refused"
        assert "Traceback" not in p.stderr and f"--break-lock {rid}" in p.stderr, p.stderr
    assert lock_file(root).exists() and journal.read_text().count('"event": "resume"') == 1
    h = subprocess.run(
        [sys.executable, "-m", "remedy", "resume", "--help"], capture_output=True, text=True
    )
    assert "--break-lock" in h.stdout and "another machine" in h.stdout
