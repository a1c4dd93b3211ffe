"""Signals stop remedy cleanly (`remedy.interrupts`).

`remedy run` on this machine (the real CLI, LocalTransport): Ctrl-C, SIGTERM or SIGHUP while a
step runs stops that step's processes, keeps the lock, reports the run as interrupted (JSON and
stderr, exit 128+N) with the resume hint, and `remedy resume --rollback` then restores the file
byte for byte. Before any step, a signal at a blocking prompt ends it at once.
"""

from __future__ import annotations

import asyncio
import json
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from remedy.errors import Interrupted
from remedy.interrupts import prompting, run_interruptible
from remedy.model import Facts, Plan, Step, Touch
from remedy.planner.plan import facts_digest
from remedy.transport.quote import quote

sys.path.insert(0, str(Path(__file__).parent))
from foreground import default_stop_signals  # noqa: E402
from runner_fixture_op import FixtureShell  # noqa: E402

REMEDY = [sys.executable, "-m", "remedy"]
# a hand-made step (not what the planner makes) needs the fixture driver: the real CLI with
# the runner fixture operation registered and the saved-plan check off (see that file)
FIXTURE_CLI = [sys.executable, str(Path(__file__).parent / "cli_fixture_driver.py")]


@pytest.fixture(autouse=True)
def _stop_signals_not_ignored():
    """The in-process tests signal this process: whatever the runner inherited ignored
    (pytest under nohup ignores SIGHUP), a stop signal reaches remedy's handler here, which
    keeps an inherited SIG_IGN (tests/foreground.py)."""
    saved = {s: signal.getsignal(s) for s in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)}
    for s, h in saved.items():
        if h is signal.SIG_IGN:
            signal.signal(s, signal.default_int_handler if s == signal.SIGINT else signal.SIG_DFL)
    yield
    for s, h in saved.items():
        signal.signal(s, h)


def _env(tmp_path: Path) -> dict[str, str]:
    return {**os.environ, "XDG_STATE_HOME": str(tmp_path / "state"), "NO_COLOR": "1"}


def _pids(marker: str) -> list[str]:
    p = subprocess.run(["pgrep", "-f", marker], capture_output=True, text=True)
    return p.stdout.split()


def _saved_plan(tmp_path: Path, conf: Path, marker: str) -> Path:
    """A plan for this machine (its real facts) whose one step rewrites conf, then waits."""
    out = subprocess.run(
        [*REMEDY, "facts", "--local", "--json"],
        capture_output=True,
        text=True,
        env=_env(tmp_path),
        timeout=120,
        check=True,
    ).stdout
    facts = Facts.model_validate_json(out)
    step = Step(
        action="edit-conf",
        title="rewrite conf, then a long command",
        probe="static",
        operation=FixtureShell(
            cmds=[f"printf 'new\\n' > {quote(str(conf))} && {marker}"],
            paths=[Touch(kind="file", target=str(conf))],
        ),
    )
    plan = Plan(
        remedy_version="test",
        host=facts.host,
        facts_digest=facts_digest(facts),
        facts=facts,
        target=facts.workload,
        steps=[step],
    )
    path = tmp_path / "plan.json"
    path.write_text(plan.model_dump_json())
    return path


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM, signal.SIGHUP])
def test_a_signal_mid_step_stops_it_keeps_the_lock_and_resume_rolls_back(tmp_path, sig):
    conf = tmp_path / "app.conf"
    conf.write_bytes(b"old\n")
    os.chmod(conf, 0o640)
    marker = f"sleep {300 + random.random():.6f}"  # unique argv: pgrep finds only this one
    plan = _saved_plan(tmp_path, conf, marker)
    env = _env(tmp_path)
    proc = subprocess.Popen(
        [*FIXTURE_CLI, "run", "--local", "--plan", str(plan), "--yes", "--json"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
        preexec_fn=default_stop_signals,
    )
    try:
        deadline = time.monotonic() + 90
        # the step's shell matches the marker before its printf ran: wait for both
        while not (_pids(marker) and conf.read_bytes() == b"new\n"):
            assert proc.poll() is None, proc.communicate()
            assert time.monotonic() < deadline, "the step never started"
            time.sleep(0.1)
        proc.send_signal(sig)
        out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 128 + sig, (proc.returncode, err[-1500:])
    assert "Traceback" not in err, err
    rep = json.loads(out)
    assert rep["outcome"] == "interrupted" and rep["exit_code"] == 128 + sig
    name = signal.Signals(sig).name
    assert f"remedy: stopped: interrupted by {name}: run {rep['run_id']} stopped" in err, err
    assert "last journal record: " in err and "of step 1" in err, err
    assert f"remedy resume {rep['host']} --rollback" in err, err
    time.sleep(0.5)
    assert not _pids(marker), "the step's command outlived remedy"
    assert (tmp_path / "state" / "remedy" / "lock.json").exists(), "the lock must stay"

    # a new run is refused while the interrupted one is pending; a rollback restores the file
    again = subprocess.run(
        [*FIXTURE_CLI, "run", "--local", "--plan", str(plan), "--yes", "--json"],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert again.returncode == 5, (again.returncode, again.stderr[-800:])
    back = subprocess.run(
        [*FIXTURE_CLI, "resume", "--local", "--rollback", "--json"],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert back.returncode == 0, (back.returncode, back.stderr[-1500:])  # asked-for rollback: 0
    assert json.loads(back.stdout)["outcome"] == "rolled-back"
    assert conf.read_bytes() == b"old\n" and (conf.stat().st_mode & 0o777) == 0o640
    assert not (tmp_path / "state" / "remedy" / "lock.json").exists()


def test_a_signal_at_a_blocking_prompt_ends_it_at_once(tmp_path):
    """The loop cannot turn while input() blocks: inside prompting() the handler raises."""
    script = (
        "import sys\n"
        "from remedy.errors import Interrupted\n"
        "from remedy.interrupts import prompting, run_interruptible\n"
        "async def work():\n"
        "    print('asking', flush=True)\n"
        "    with prompting():\n"
        "        sys.stdin.readline()\n"
        "    return 'answered'\n"
        "try:\n"
        "    print(run_interruptible(work))\n"
        "except Interrupted as e:\n"
        "    print(e.message, e.exit_code); sys.exit(e.exit_code)\n"
    )
    r_fd, w_fd = os.pipe()  # stdin that never answers
    proc = subprocess.Popen(
        [sys.executable, "-c", script],
        stdin=r_fd,
        stdout=subprocess.PIPE,
        text=True,
        preexec_fn=default_stop_signals,
    )
    try:
        assert proc.stdout.readline().strip() == "asking"
        time.sleep(0.2)
        proc.send_signal(signal.SIGTERM)
        out = proc.communicate(timeout=20)[0]
    finally:
        os.close(w_fd)
        os.close(r_fd)
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 143 and out.strip() == "interrupted by SIGTERM 143", out


def test_first_signal_goes_to_on_first_and_a_second_cancels():
    seen: list[int] = []
    progress: list[str] = []

    async def work() -> str:
        os.kill(os.getpid(), signal.SIGTERM)
        await asyncio.sleep(0.3)
        progress.append("went on after the first signal")
        os.kill(os.getpid(), signal.SIGINT)
        await asyncio.sleep(30)
        progress.append("not reached")
        return "done"

    before = signal.getsignal(signal.SIGTERM)
    with pytest.raises(Interrupted) as exc:
        run_interruptible(work, on_first=seen.append)
    assert seen == [signal.SIGTERM] and progress == ["went on after the first signal"]
    assert exc.value.exit_code == 128 + signal.SIGTERM
    assert exc.value.message == "interrupted by SIGTERM"
    assert signal.getsignal(signal.SIGTERM) is before  # handlers are put back


def test_work_that_finishes_returns_and_no_signal_means_no_interruption():
    async def work() -> int:
        with prompting():
            pass
        return 7

    assert run_interruptible(work) == 7

    async def fails() -> None:
        raise asyncio.CancelledError  # cancelled by its own code, not by a signal

    with pytest.raises(asyncio.CancelledError):
        run_interruptible(fails)


# The process-wide handler (`install`, the console script's): a signal before the work, or
# after it, is held or raised by mode instead of killing remedy without its report.

ENTRY_THEN_SIGNAL = (
    "import os, signal, sys\n"
    "from remedy.entry import main\n"  # from here on signals are noted
    "os.kill(os.getpid(), getattr(signal, sys.argv[1]))\n"  # as if sent while Python imports
    "sys.argv = ['remedy', *sys.argv[2:]]\n"
    "main()\n"
)


@pytest.mark.parametrize("sig", ["SIGINT", "SIGTERM"])
def test_a_signal_before_the_cli_is_imported_still_ends_in_the_runs_report(tmp_path, sig):
    """The CI soak found this: SIGINT while `remedy resume --json` started exited 130 with no
    JSON (Python's own KeyboardInterrupt, caught as "remedy: interrupted")."""
    r = subprocess.run(
        [sys.executable, "-c", ENTRY_THEN_SIGNAL, sig, "resume", "--local", "--json"],
        capture_output=True,
        text=True,
        env=_env(tmp_path),
        timeout=120,
        preexec_fn=default_stop_signals,
    )
    n = int(getattr(signal, sig))
    assert r.returncode == 128 + n, r.stderr
    rep = json.loads(r.stdout)
    assert rep["outcome"] == "interrupted" and rep["exit_code"] == 128 + n
    assert rep["message"] == f"interrupted by {sig} before remedy changed anything on localhost"
    assert "Traceback" not in r.stderr
    assert not (tmp_path / "state" / "remedy").exists(), "nothing may have been started"


def test_a_signal_before_a_read_only_command_stops_it_with_a_message(tmp_path):
    r = subprocess.run(
        [
            sys.executable,
            "-c",
            ENTRY_THEN_SIGNAL,
            "SIGTERM",
            "plan",
            "--example",
            "seed-sm120-pip-cu13",
            "--json",
        ],
        capture_output=True,
        text=True,
        env=_env(tmp_path),
        timeout=120,
        preexec_fn=default_stop_signals,
    )
    assert r.returncode == 143, r.stderr
    assert r.stdout == ""
    assert r.stderr == "remedy: stopped: interrupted by SIGTERM\n"


@pytest.fixture
def process_handler():
    """install() in this process, undone afterwards (pytest's own SIGINT handler back)."""
    from remedy import interrupts

    P = interrupts._Process
    saved = {s: signal.getsignal(s) for s in interrupts.STOP_SIGNALS}
    state = (P.installed, P.mode, list(P.pending), P.count, P.dispatch)
    P.count = 0  # the in-process tests above went through the same handler
    yield interrupts
    for s, h in saved.items():
        signal.signal(s, h)
    P.installed, P.mode, P.pending, P.count, P.dispatch = state


def test_held_signal_cancels_the_next_work_before_it_starts(process_handler):
    process_handler.install("hold")
    os.kill(os.getpid(), signal.SIGHUP)  # held: nothing raised here
    started: list[str] = []

    async def work() -> str:
        started.append("work")
        return "done"

    with pytest.raises(Interrupted) as exc:
        run_interruptible(work)
    assert exc.value.exit_code == 128 + signal.SIGHUP and started == []
    assert process_handler.current_mode() == "hold"


def test_held_signal_goes_to_on_first_and_the_work_runs(process_handler):
    """A fleet rollout with a signal held since start: it starts no host, and reports."""
    process_handler.install("hold")
    os.kill(os.getpid(), signal.SIGTERM)
    seen: list[int] = []

    async def work() -> str:
        await asyncio.sleep(0)
        return f"stopped={seen}"

    assert run_interruptible(work, on_first=seen.append) == f"stopped={[int(signal.SIGTERM)]}"


def test_after_the_work_a_held_signal_waits_and_raise_mode_raises_it(process_handler):
    process_handler.install("hold")

    async def work() -> int:
        return 3

    assert run_interruptible(work) == 3
    os.kill(os.getpid(), signal.SIGINT)  # while the finished run's report is printed: held
    assert process_handler._Process.pending == [signal.SIGINT]
    with pytest.raises(Interrupted) as exc:
        process_handler.set_mode("raise")
    assert exc.value.signum == signal.SIGINT and process_handler._Process.pending == []
    with pytest.raises(Interrupted):
        os.kill(os.getpid(), signal.SIGTERM)  # raise mode: at once, where the program stands
        time.sleep(5)


def test_a_third_signal_while_held_raises(process_handler):
    process_handler.install("hold")
    os.kill(os.getpid(), signal.SIGINT)
    os.kill(os.getpid(), signal.SIGINT)
    with pytest.raises(Interrupted) as exc:
        os.kill(os.getpid(), signal.SIGTERM)
        time.sleep(5)
    assert exc.value.signum == signal.SIGINT  # the first one names it


def test_a_prompt_outside_the_work_is_not_held(process_handler):
    """The fleet's confirmation comes before its rollout (hold mode): a signal must end the
    question at once, not wait for an answer."""
    process_handler.install("hold")
    with pytest.raises(Interrupted) as exc, prompting():
        os.kill(os.getpid(), signal.SIGINT)
        time.sleep(5)
    assert exc.value.signum == signal.SIGINT and process_handler._Process.pending == []


def _ignoring(*sigs: int):
    """What `nohup` (SIGHUP) or a script's `cmd &` (SIGINT) does before it execs remedy."""

    def pre() -> None:
        for s in sigs:
            signal.signal(s, signal.SIG_IGN)

    return pre


def test_a_signal_ignored_by_the_parent_stays_ignored(tmp_path):
    """`nohup remedy run gpu01 --yes &` then closing the terminal stopped the run ("stopped:
    interrupted by SIGHUP", exit 129): remedy's handler replaced the SIG_IGN nohup set. Python
    keeps an inherited SIG_IGN for SIGINT; remedy now keeps it for each signal it handles."""
    args = [sys.executable, "-c", ENTRY_THEN_SIGNAL, "SIGHUP", "plan"]
    args += ["--example", "seed-sm120-pip-cu13", "--json"]
    r = subprocess.run(
        args,
        capture_output=True,
        text=True,
        env=_env(tmp_path),
        timeout=120,
        preexec_fn=_ignoring(signal.SIGHUP),
    )
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["steps"] and r.stderr == ""
    # the signals the parent did not ignore still stop it
    r = subprocess.run(
        [*args[:3], "SIGTERM", *args[4:]],
        capture_output=True,
        text=True,
        env=_env(tmp_path),
        timeout=120,
        preexec_fn=_ignoring(signal.SIGHUP),
    )
    assert r.returncode == 143 and r.stdout == "", r.stderr


def test_install_leaves_an_ignored_signal_ignored(process_handler):
    signal.signal(signal.SIGHUP, signal.SIG_IGN)
    process_handler.install("hold")
    os.kill(os.getpid(), signal.SIGHUP)
    assert signal.getsignal(signal.SIGHUP) is signal.SIG_IGN
    assert process_handler._Process.pending == []
    os.kill(os.getpid(), signal.SIGTERM)  # handled as before: held
    assert process_handler._Process.pending == [signal.SIGTERM]
