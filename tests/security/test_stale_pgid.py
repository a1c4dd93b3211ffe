"""A resume or rollback never kills a process group that is not the interrupted step's.

A step's shell records its process group in `step-N.pgid` so that a resume after a kill -9
or a dropped connection can stop what the step left running. The number outlives the group:
the host reboots (or the group ends while remedy is dead, its shell killed too) and the
number is given to another process, an sshd, the inference server. The attack, for real: a
run killed mid-way (kill -9) whose step file now names the process group of an unrelated
root service (a `sleep` in its own session stands in for it), as it would after the number
was reused. Before, `remedy resume`/rollback sent it SIGTERM then SIGKILL. Now the step file
holds the group leader's start time and the boot it ran in, and a group is stopped only when
they still match (Linux never reuses a number while its group has a member; across a boot,
or once the leader is gone and the number reused, they differ). The control: a real leftover
of the step (the step's own group, still running) is stopped.
"""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from test_executor import drive, inproc, setup_tree  # noqa: E402


@pytest.fixture
def root(tmp_path: Path) -> Path:
    setup_tree(tmp_path / "tree")
    return tmp_path


def _run_dir(root: Path) -> Path:
    (journal,) = (root / "state").rglob("journal.jsonl")
    return journal.parent


def _start_of(pid: int) -> str:
    return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[19]


def _boot() -> str:
    return Path("/proc/sys/kernel/random/boot_id").read_text().strip()


@pytest.mark.parametrize("recorded", ["number only (an older remedy)", "another leader's start"])
def test_a_reused_process_group_number_is_not_killed(root: Path, monkeypatch, recorded):
    assert drive(root, "run", crash="applied:1").returncode == -9
    victim = subprocess.Popen(["sleep", "300"], start_new_session=True)
    try:
        line = f"{victim.pid}\n"
        if recorded != "number only (an older remedy)":
            line = f"{victim.pid} {int(_start_of(victim.pid)) - 1000} {_boot()}\n"
        (_run_dir(root) / "step-1.pgid").write_text(line)
        rep = inproc(root, "resume-rollback", monkeypatch)
        time.sleep(0.3)
        assert victim.poll() is None, "an unrelated process group was killed"
        assert rep["outcome"] == "rolled-back", rep
        assert not (_run_dir(root) / "step-1.pgid").exists()
    finally:
        victim.kill()
        victim.wait()


def test_control_the_steps_own_leftover_group_is_stopped(root: Path, monkeypatch):
    assert drive(root, "run", crash="applied:1").returncode == -9
    left = subprocess.Popen(["sleep", "300"], start_new_session=True)
    try:
        (_run_dir(root) / "step-1.pgid").write_text(f"{left.pid} {_start_of(left.pid)} {_boot()}\n")
        inproc(root, "resume-rollback", monkeypatch)
        for _ in range(50):
            if left.poll() is not None:
                break
            time.sleep(0.1)
        assert left.poll() is not None, "the step's own leftover was not stopped"
    finally:
        left.kill()
        left.wait()
