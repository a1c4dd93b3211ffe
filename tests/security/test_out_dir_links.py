"""Class 10: a file remedy writes is never placed through a *directory* link someone planted.

The attack, for real: uid 65534 got `/tmp/reports` first (a sticky shared dir) and made it a
link to a stand-in for /etc/cron.d. Root runs `remedy plan … --out /tmp/reports/plan` (or
`--report`, `export --out`, `run --log`): only the last name used to be checked for a link,
so `mkstemp(dir=…)` and the rename put root's file, carrying host text, into the stand-in.
It must stay empty and the command must say why. The control: root's own link, in a
directory only root can change, is followed.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
NOBODY = 65534
needs_root = pytest.mark.skipif(os.geteuid() != 0, reason="a link owned by another user")


def remedy(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "remedy", *args],
        capture_output=True, text=True, timeout=120, cwd=REPO, env={**os.environ, **(env or {})},
    )  # fmt: skip


@pytest.fixture
def area(tmp_path: Path) -> Path:
    tmp_path.chmod(0o755)
    (tmp_path / "crond").mkdir()  # the stand-in for /etc/cron.d: nothing may appear in it
    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o1777)
    (shared / "reports").symlink_to(tmp_path / "crond")
    os.chown(shared / "reports", NOBODY, NOBODY, follow_symlinks=False)
    return tmp_path


@needs_root
@pytest.mark.parametrize("flag", ["--out", "--report"])
def test_plan_output_through_a_planted_directory_link_is_refused(area: Path, flag: str):
    out = f"{area}/shared/reports/plan" + (".md" if flag == "--report" else "")
    r = remedy("plan", "--example", "seed-sm120-pip-cu13", flag, out)
    assert list((area / "crond").iterdir()) == [], "root wrote through nobody's directory link"
    assert r.returncode == 2, r.stderr
    assert "reports: it is a link owned by uid 65534" in r.stderr, r.stderr


@needs_root
def test_run_log_through_a_planted_directory_link_is_refused(area: Path):
    plan = area / "plan.json"
    assert remedy("plan", "--example", "seed-sm120-pip-cu13", "--out", str(plan)).returncode == 0
    r = remedy(
        "run", "--local", "--plan", str(plan), "--yes", "--log", f"{area}/shared/reports/run",
        env={"XDG_STATE_HOME": str(area / "state")},
    )  # fmt: skip
    assert list((area / "crond").iterdir()) == [], "the run log was created through the link"
    assert r.returncode == 2, r.stderr
    assert "link owned by uid 65534" in r.stderr, r.stderr


@needs_root
def test_control_roots_own_directory_link_is_followed(area: Path):
    mine = area / "mine"
    mine.mkdir(mode=0o700)
    (mine / "reports").symlink_to(area / "crond")
    r = remedy("plan", "--example", "seed-sm120-pip-cu13", "--out", f"{mine}/reports/plan.json")
    assert r.returncode == 0, r.stderr
    assert (area / "crond" / "plan.json").read_text().startswith("{")
    assert not [p for p in (area / "crond").iterdir() if p.name.endswith(".tmp")]
