""".ci/run (exactly scripts/test) fails when the sandbox cannot be set up (issue 19: it used to
say "sandbox tests will skip" and go on, so CI could pass with its most important tests never
run). The real scripts run here in a copy of the checkout's layout whose setup-sandbox.sh is
broken on purpose; the venv is a stand-in that records what it is asked to do (no install,
no suite inside the suite)."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

FAKE_TOOL = """#!/bin/sh
echo "$(basename "$0") $* STRICT=${REMEDY_STRICT_SKIPS:-} SHARD=${REMEDY_SHARD:-}" >> "$CALLS"
if [ -n "${FAIL_ON:-}" ]; then
  case "$* SHARD=${REMEDY_SHARD:-}" in *"$FAIL_ON"*) exit "${FAIL_RC:-1}" ;; esac
fi
exit 0
"""


def layout(tmp: Path, setup_rc: int | None) -> tuple[Path, Path, dict[str, str]]:
    repo = tmp / "repo"
    (repo / "scripts").mkdir(parents=True)
    (repo / ".ci").mkdir()
    (repo / "requirements").mkdir()
    shutil.copy(ROOT / "scripts" / "test", repo / "scripts" / "test")
    shutil.copy(ROOT / ".ci" / "run", repo / ".ci" / "run")
    (repo / "requirements" / "dev.lock").write_text("")
    if setup_rc is not None:
        (repo / "scripts" / "setup-sandbox.sh").write_text(
            f"echo 'setup-sandbox: debootstrap failed (on purpose)' >&2\nexit {setup_rc}\n"
        )
    venv = tmp / "venv"
    (venv / "bin").mkdir(parents=True)
    for tool in ("python", "ruff"):
        p = venv / "bin" / tool
        p.write_text(FAKE_TOOL)
        p.chmod(0o755)
    calls = tmp / "calls"
    env = {
        "PATH": "/usr/bin:/bin",
        "HOME": str(tmp),
        "REMEDY_VENV": str(venv),
        "CALLS": str(calls),
        "TMPDIR": os.environ.get("TMPDIR", "/tmp"),
    }
    return repo, calls, env


def run_ci(repo: Path, env: dict[str, str]) -> subprocess.CompletedProcess:
    return subprocess.run(
        ["bash", str(repo / ".ci" / "run")], env=env, capture_output=True, text=True, timeout=60
    )


def test_ci_fails_when_sandbox_setup_fails(tmp_path: Path):
    repo, calls, env = layout(tmp_path, setup_rc=1)
    r = run_ci(repo, env)
    out = r.stdout + r.stderr
    assert r.returncode != 0, out
    assert "sandbox setup FAILED" in out and "on purpose" in out
    ran = calls.read_text() if calls.exists() else ""
    assert "-m pytest" not in ran, "the suite ran without its sandbox"


def test_ci_fails_when_the_setup_script_is_missing(tmp_path: Path):
    repo, calls, env = layout(tmp_path, setup_rc=None)
    r = run_ci(repo, env)
    assert r.returncode != 0 and "setup-sandbox.sh is missing" in r.stderr
    assert "-m pytest" not in (calls.read_text() if calls.exists() else "")


def test_ci_runs_the_suite_with_strict_skips_when_setup_works(tmp_path: Path):
    repo, calls, env = layout(tmp_path, setup_rc=0)
    r = run_ci(repo, env)
    assert r.returncode == 0, r.stdout + r.stderr
    ran = calls.read_text().splitlines()
    assert any("-c " in c and "dev.lock" in c for c in ran), ran  # the lock pins the install
    pytest_calls = sorted(c for c in ran if "-m pytest" in c)
    # the whole suite as three shards side by side, each strict and each given the whole
    # selection (no -m: tests/shards.py keeps its files of it)
    assert len(pytest_calls) == 3 and all("STRICT=1 SHARD=" in c for c in pytest_calls), ran
    assert not any(" -m " in c.split("-m pytest", 1)[1] for c in pytest_calls), ran
    assert [c.rsplit("SHARD=", 1)[1] for c in pytest_calls] == ["all:1/3", "all:2/3", "all:3/3"]
    for shard in ("all-1", "all-2", "all-3"):
        assert f"{shard} shard: exit 0" in r.stdout, r.stdout


def test_a_subset_runs_one_pytest_with_the_arguments_given(tmp_path: Path):
    repo, calls, env = layout(tmp_path, setup_rc=0)
    r = subprocess.run(  # scripts/test itself (.ci/run passes no arguments)
        ["bash", str(repo / "scripts" / "test"), "-m", "not sandbox", "-x"],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert r.returncode == 0, r.stdout + r.stderr
    pytest_calls = [c for c in calls.read_text().splitlines() if "-m pytest" in c]
    assert len(pytest_calls) == 1 and pytest_calls[0].endswith("-m not sandbox -x STRICT=1 SHARD=")


def test_any_shard_failing_fails_the_run_and_says_which(tmp_path: Path):
    for k in (1, 2, 3):
        repo, calls, env = layout(tmp_path / str(k), setup_rc=0)
        r = run_ci(repo, dict(env, FAIL_ON=f"SHARD=all:{k}/3", FAIL_RC="1"))
        assert r.returncode == 1, r.stdout + r.stderr
        assert f"all-{k} shard: exit 1" in r.stdout, r.stdout
        for other in {1, 2, 3} - {k}:  # the others still ran to the end
            assert f"all-{other} shard: exit 0" in r.stdout, r.stdout


def test_a_shard_that_collects_nothing_fails_the_run(tmp_path: Path):
    repo, calls, env = layout(tmp_path, setup_rc=0)
    r = run_ci(repo, dict(env, FAIL_ON="SHARD=all:1/3", FAIL_RC="5"))
    assert r.returncode == 1, r.stdout + r.stderr
    assert "collected no tests in the all-1 shard" in r.stdout, r.stdout
