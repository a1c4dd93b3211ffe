"""The exported playbook's probe directory is in /var/tmp, where every user can create names:
it must be made exclusively, never adopted.

The attack, for real: another user (uid 65534) creates the probe directory the playbook will
use (its name is fixed by the plan's facts digest and shows in `ps` during a run) and puts a
script of theirs in it, or leaves a link there. Before, the playbook's `file: state=directory`
kept their directory (still theirs), `copy` wrote the probe's scripts into it and root ran
them: the directory's owner could swap a script in between. The task's own script (taken
from the exported playbook) is run here against each case.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from test_export_ansible import example_plan, load, walk_tasks  # noqa: E402

from remedy.export.ansible import export_ansible  # noqa: E402


def _private_dir_tasks() -> list[dict]:
    play = load(export_ansible(example_plan("seed-sm120-pip-cu13"), verify="cheap"))
    tasks = [
        t for t in walk_tasks(play["tasks"]) if str(t.get("name", "")).endswith(": private dir")
    ]
    assert tasks, "the playbook has probes with a private dir"
    for t in tasks:
        assert "ansible.builtin.file" not in t  # never `state: directory` on a shared name
    return tasks


def _make(argv: list[str], d: Path) -> subprocess.CompletedProcess:
    assert argv[:2] == ["sh", "-c"] and str(argv[4]).startswith("/var/tmp/remedy-ansible-")
    return subprocess.run(
        [str(a) for a in argv[:4]] + [str(d)], capture_output=True, text=True, timeout=30
    )


@pytest.fixture
def shared(tmp_path: Path) -> Path:
    tmp_path.chmod(0o755)
    s = tmp_path / "vartmp"
    s.mkdir()
    s.chmod(0o1777)  # like /var/tmp
    return s


def test_a_new_private_dir_is_made_0700(shared: Path):
    argv = _private_dir_tasks()[0]["ansible.builtin.command"]["argv"]
    d = shared / "remedy-ansible-x-probe-1"
    r = _make(argv, d)
    assert r.returncode == 0, r.stderr
    st = d.stat()
    assert st.st_uid == os.geteuid() and oct(st.st_mode & 0o777) == oct(0o700)


@pytest.mark.skipif(os.geteuid() != 0, reason="a directory owned by another user")
@pytest.mark.parametrize("kind", ["dir", "link"])
def test_a_name_another_user_made_first_is_refused(shared: Path, tmp_path: Path, kind: str):
    argv = _private_dir_tasks()[0]["ansible.builtin.command"]["argv"]
    d = shared / "remedy-ansible-x-probe-1"
    theirs = tmp_path / "theirs"
    theirs.mkdir()
    canary = theirs / "probe.py"
    canary.write_text("open('/tmp/canary-export', 'w')\n")
    os.chown(theirs, 65534, 65534)
    if kind == "dir":
        d.mkdir()
        (d / "probe.py").write_text(canary.read_text())
        os.chown(d, 65534, 65534)
    else:
        d.symlink_to(theirs)
        os.chown(d, 65534, 65534, follow_symlinks=False)
    r = _make(argv, d)
    assert r.returncode != 0 and "refusing to use it" in r.stderr, (r.returncode, r.stderr)
    assert (d.lstat().st_uid, canary.read_text()) == (65534, "open('/tmp/canary-export', 'w')\n")


def test_our_own_leftover_is_replaced_empty(shared: Path):
    argv = _private_dir_tasks()[0]["ansible.builtin.command"]["argv"]
    d = shared / "remedy-ansible-x-probe-1"
    d.mkdir()
    (d / "old.py").write_text("x")
    r = _make(argv, d)
    assert r.returncode == 0, r.stderr
    assert list(d.iterdir()) == [] and oct(d.stat().st_mode & 0o777) == oct(0o700)
