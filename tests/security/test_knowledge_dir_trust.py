"""Knowledge another user can change never decides what root plans or runs.

`$REMEDY_KNOWLEDGE_DIR` / `$REMEDY_PLAYBOOKS_DIR` (a site's own rules) choose every step of a
plan: which packages pip installs as root and at what version, the values written into
drop-ins and /etc/profile.d, the links made in a toolkit. The attack, for real: root's
environment names a copy of the knowledge that uid 65534 can change (its own directory; a
root-owned directory holding a rules file uid 65534 owns; a link uid 65534 planted in a
sticky directory). uid 65534 rewrote an action's title to a canary. Before, `remedy plan`
planned with those rules (the canary in the plan root would apply); now it refuses with the
variable, the path and the owner named, and plans nothing. The control: the same copy owned
by root is used.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="files another user owns")
NOBODY = 65534
REPO = Path(__file__).resolve().parents[2]
CANARY = "PLANTED-BY-UID-65534"


def _copy(dst: Path) -> tuple[Path, Path]:
    k, p = dst / "knowledge", dst / "playbooks"
    shutil.copytree(REPO / "knowledge", k)
    shutil.copytree(REPO / "playbooks", p)
    f = p / "actions.yaml"
    text = f.read_text()
    i = text.index("- id: pip-install-cccl")
    j = text.index("title:", i)
    k_end = text.index("\n", j)
    f.write_text(text[:j] + f'title: "{CANARY}"' + text[k_end:])
    return k, p


def _chown(root: Path, uid: int) -> None:
    for dp, dns, fns in os.walk(root):
        for n in [dp, *(os.path.join(dp, x) for x in dns + fns)]:
            os.chown(n, uid, uid, follow_symlinks=False)


def _plan(tmp_path: Path, k: Path, p: Path) -> subprocess.CompletedProcess[str]:
    env = {
        **os.environ,
        "PYTHONPATH": str(REPO / "src"),
        "REMEDY_KNOWLEDGE_DIR": str(k),
        "REMEDY_PLAYBOOKS_DIR": str(p),
        "XDG_CACHE_HOME": str(tmp_path / "cache"),
    }
    return subprocess.run(
        [sys.executable, "-m", "remedy", "plan", "--example", "seed-sm120-pip-cu13", "--json"],
        capture_output=True, text=True, env=env, timeout=300, cwd="/",
    )  # fmt: skip


def _refused(r: subprocess.CompletedProcess[str], why: str) -> None:
    assert CANARY not in r.stdout, "root planned with rules another user wrote"
    assert r.returncode != 0 and r.returncode != 70, (r.returncode, r.stderr[-2000:])
    assert "Traceback" not in r.stderr, r.stderr[-2000:]
    assert why in r.stderr, r.stderr[-2000:]


def test_a_knowledge_dir_another_user_owns_is_refused(tmp_path: Path):
    tmp_path.chmod(0o755)
    site = tmp_path / "site"
    site.mkdir()
    k, p = _copy(site)
    _chown(site, NOBODY)
    _refused(_plan(tmp_path, k, p), "owned by uid 65534")


def test_a_rules_file_another_user_owns_in_roots_dir_is_refused(tmp_path: Path):
    tmp_path.chmod(0o755)
    k, p = _copy(tmp_path / "site")
    os.chown(p / "actions.yaml", NOBODY, NOBODY)
    _refused(_plan(tmp_path, k, p), "actions.yaml owned by uid 65534")


def test_a_knowledge_dir_reached_through_a_planted_link_is_refused(tmp_path: Path):
    tmp_path.chmod(0o755)
    k, p = _copy(tmp_path / "site")
    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o1777)
    (shared / "playbooks").symlink_to(p)
    os.chown(shared / "playbooks", NOBODY, NOBODY, follow_symlinks=False)
    _refused(_plan(tmp_path, k, shared / "playbooks"), "not followed")


def test_control_roots_own_copy_is_used(tmp_path: Path):
    tmp_path.chmod(0o755)
    k, p = _copy(tmp_path / "site")
    r = _plan(tmp_path, k, p)
    assert r.returncode == 0, r.stderr[-2000:]
    assert CANARY in json.dumps([s["title"] for s in json.loads(r.stdout)["steps"]])


def test_a_learned_model_another_user_owns_is_not_loaded(tmp_path: Path, monkeypatch):
    """$REMEDY_LEARNED_MODEL naming uid 65534's file: its weights would choose the hints
    root's diagnosis prints; it is not loaded (rules only). Control: root's copy is."""
    from remedy.evidence import learned

    tmp_path.chmod(0o755)
    for owner, loaded in ((NOBODY, False), (0, True)):
        d = tmp_path / f"m{owner}"
        d.mkdir()
        m = d / "model.json"
        shutil.copy(REPO / "knowledge" / "learned" / "log-classes.json", m)
        _chown(d, owner)
        monkeypatch.setenv("REMEDY_LEARNED_MODEL", str(m))
        assert (learned.load_model() is not None) is loaded, owner
