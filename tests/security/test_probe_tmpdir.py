"""A probe run as root keeps its scripts in a private directory no other user can rename.

`HostDir` made the probe's directory with `mktemp -d "${TMPDIR:-/tmp}/remedy-probe.XXXXXXXX"`:
mode 0700, but in whatever directory TMPDIR names: `remedy run --local` inherits it (a CI runner's
or batch job's per-job dir; su and sudo drop it, glibc's secure mode does), and over SSH it is
the session's (pam_env, a site's scratch TMPDIR). When
another user owns that directory (or may write in it, not sticky), they can rename root's
0700 directory away and put their own in its place: root then runs `python DIR/steps.py`
from it. (The facts collector's background nvidia-smi directory already checked this; the
probes did not.)

The attack, for real: TMPDIR names a directory uid 65534 owns; right after remedy put the
probe's files (the race an inotify watcher wins; hooked here at the step command), uid
65534 (setpriv) renames the probe directory and makes its own with a `steps.py` that writes
a canary. Control: with a TMPDIR root owns, the probe uses it.
"""

from __future__ import annotations

import asyncio
import os
import re
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest
from test_probe_env import NOBODY, needs_root

from remedy.model import Facts, Gpu
from remedy.probes import run_probe
from remedy.transport.local import LocalTransport

pytestmark = needs_root


@pytest.fixture
def area(tmp_path: Path) -> Path:
    tmp_path.chmod(0o755)
    return tmp_path


def _launch():
    """launch-probe of a command (`true`: a server that exits at once) as root."""
    facts = Facts(gpus=[Gpu(name="g", compute_cap="12.0")], shell_env={"PATH": "/usr/bin:/bin"})
    params = {"command": ["true"], "max_s": 10}
    return asyncio.run(run_probe("launch-probe", LocalTransport("local"), facts, params=params,
                                 timeout=10))  # fmt: skip


def _dirs(tmpdir: Path, argv) -> list[str]:
    text = " ".join(os.fsdecode(a) if isinstance(a, bytes) else str(a) for a in argv)
    return re.findall(re.escape(str(tmpdir)) + r"/remedy-probe\.\w+", text)


def _swapper(tmpdir: Path, canary: Path, seen: list[str]):
    """LocalTransport._spawn that, before a command running a script of the probe's dir, lets
    uid 65534 swap any remedy-probe.* directory in its TMPDIR for its own (as a watcher of
    its dir would), holding a launch_cmd.sh and steps.py that write the canary."""
    orig = LocalTransport._spawn
    sh = f"#!/bin/sh\nid -u > {canary}\n"

    async def spawn(self, command, **kw):
        argv = [command] if isinstance(command, (str, bytes)) else list(command)
        for d in _dirs(tmpdir, argv):
            if d in seen or not os.path.isdir(d):
                continue
            seen.append(d)
            subprocess.run(
                ["setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups",
                 "sh", "-c", 'mv -- "$1" "$1.away" && mkdir -- "$1" && printf %s "$2" > '
                 '"$1/launch_cmd.sh" && printf %s "$2" > "$1/launch_unit.sh"', "sh", d, sh],
                check=True,
            )  # fmt: skip
        return await orig(self, command, **kw)

    return spawn


@pytest.fixture
def nobody_tmp():
    """A directory uid 65534 owns that it can reach (in /tmp: the test's own tree is 0700)."""
    d = Path(tempfile.mkdtemp(prefix="remedy-nobody-tmp-", dir="/tmp"))
    os.chown(d, NOBODY, NOBODY)
    yield d
    shutil.rmtree(d, ignore_errors=True)


def test_a_tmpdir_another_user_owns_does_not_hold_roots_probe(
    area: Path, nobody_tmp: Path, monkeypatch
):
    tmpdir = nobody_tmp
    canary = area / "canary"
    seen: list[str] = []
    monkeypatch.setenv("TMPDIR", str(tmpdir))
    monkeypatch.setattr(LocalTransport, "_spawn", _swapper(tmpdir, canary, seen))
    res = _launch()
    assert not canary.exists(), f"root ran uid 65534's launch_cmd.sh (uid {canary.read_text()})"
    assert not seen, f"the probe's directory was in uid 65534's TMPDIR: {seen}"
    assert "exited" in res.detail or not res.ok, res.detail  # the probe itself ran (elsewhere)


def test_control_a_tmpdir_root_owns_is_used(area: Path, monkeypatch):
    tmpdir = area / "root-tmp"
    tmpdir.mkdir(mode=0o700)
    made: list[str] = []
    orig = LocalTransport._spawn

    async def spawn(self, command, **kw):
        made.extend(_dirs(tmpdir, [command] if isinstance(command, (str, bytes)) else command))
        return await orig(self, command, **kw)

    monkeypatch.setenv("TMPDIR", str(tmpdir))
    monkeypatch.setattr(LocalTransport, "_spawn", spawn)
    _launch()
    assert made, "the probe did not use root's own TMPDIR"
    assert not list(tmpdir.iterdir()), "the probe's directory was not removed"
