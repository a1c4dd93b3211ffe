"""A saved plan's launch command runs only when the command line says it again.

The attack: whoever can write a saved plan sets `workload.launch` (facts and target, both
digests recomputed: the re-derived steps are the same, so `verify_saved_plan` passes) to a
shell command. Full verification's launch probe runs it as root, and the preview before the
question shows the unit but not the command (under `--yes` nobody reads it anyway). Now `run
--plan` refuses such a plan before anything changes (exit 5, the command named) unless
`--launch` repeats the same command; `--verify cheap` launches nothing and is not refused.
The example plan's facts are not this host's: a run that passes the check is then refused as
stale, which shows the check let it through.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


def _remedy(tmp: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(REPO / "src"), "XDG_STATE_HOME": str(tmp / "state"),
           "XDG_CACHE_HOME": str(tmp / "c")}  # fmt: skip
    return subprocess.run([sys.executable, "-m", "remedy", *args], capture_output=True,
                          text=True, env=env, timeout=120, cwd=tmp)  # fmt: skip


@pytest.fixture(scope="module")
def saved(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, str]:
    """(work dir, a saved plan whose launch command makes a canary, the command)"""
    tmp = tmp_path_factory.mktemp("launch")
    canary = tmp / "canary"
    cmd = f"touch {canary}"
    plan = tmp / "plan.json"
    r = _remedy(tmp, "plan", "--example", "seed-sm120-pip-cu13", f"--launch={cmd}", "--out",
                str(plan))  # fmt: skip
    assert plan.exists(), r.stderr
    return tmp, plan, cmd


def test_a_saved_plans_launch_command_is_not_run_unless_repeated(saved):
    tmp, plan, cmd = saved
    r = _remedy(tmp, "run", "--local", "--plan", str(plan), "--yes")
    assert r.returncode == 5 and "would run its launch command" in r.stderr, r.stderr
    assert cmd in r.stderr and not (tmp / "canary").exists()
    r = _remedy(tmp, "run", "--local", "--plan", str(plan), "--yes", "--launch=other")
    assert r.returncode == 2 and "not the same command" in r.stderr, r.stderr


@pytest.mark.parametrize("extra", ["--launch=CMD", "--verify=cheap"])
def test_control_a_repeated_command_or_cheap_verification_passes_the_check(saved, extra):
    """It then stops at the staleness check (the example's facts are not this host's)."""
    tmp, plan, cmd = saved
    r = _remedy(tmp, "run", "--local", "--plan", str(plan), "--yes", extra.replace("CMD", cmd))
    assert "would run its launch command" not in r.stderr and r.returncode == 5, r.stderr
    assert not (tmp / "canary").exists()
