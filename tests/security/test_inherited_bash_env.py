"""The bash programs a step starts never source a BASH_ENV file another user can change.

A step runs `/bin/sh -c` (dash, or bash as `sh`), which reads no BASH_ENV; but every
non-interactive bash it starts sources `$BASH_ENV` first: a `#!/bin/bash` maintainer script
of an apt-install step, dkms (an nvidia-dkms postinst runs it), glibc's `ldd`. The attack,
for real: root's environment (`su` without `-`, `sudo -E`, or the host's login environment
over SSH) has BASH_ENV naming a file uid 65534 owns; a step's `ldd` sourced it as root (the
canary `0`). Now BASH_ENV naming a place another user can change is left out locally
(remedy.childenv) and on the host (step_env_guard); control: root's own file is sourced.
"""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

import pytest
from login_env import guarded

from remedy.transport.local import LocalTransport


def _bash_script(path: str) -> bool:
    try:
        with open(path, "rb") as f:
            return f.readline().split()[0].endswith(b"bash")
    except (OSError, IndexError):
        return False


LDD = "/usr/bin/ldd"
pytestmark = [
    pytest.mark.skipif(os.geteuid() != 0, reason="a file another user owns"),
    pytest.mark.skipif(not _bash_script(LDD), reason="ldd is no bash script here"),
]
NOBODY = 65534
STEP = f"{LDD} /bin/true >/dev/null"  # a bash program a step's sh starts


def _plant(tmp: Path, owner: int) -> tuple[Path, Path]:
    tmp.chmod(0o755)
    canary, d = tmp / "canary", tmp / "theirs"
    d.mkdir()
    rc = d / "env.sh"
    rc.write_text(f"id -u > {canary}\n")
    for p in (d, rc):
        os.chown(p, owner, owner)
    return canary, rc


def _step(rc: Path, monkeypatch) -> None:
    monkeypatch.setenv("BASH_ENV", str(rc))  # inherited by remedy, not given to the transport
    asyncio.run(LocalTransport("local").run(["sh", "-c", STEP], timeout=30))


def _host_step(rc: Path) -> None:
    guarded(STEP, {"BASH_ENV": str(rc)}, check=False)


@pytest.mark.parametrize("where", ["local", "host"])
def test_a_steps_bash_sources_no_bash_env_another_user_owns(tmp_path, monkeypatch, where):
    canary, rc = _plant(tmp_path, NOBODY)
    _step(rc, monkeypatch) if where == "local" else _host_step(rc)
    assert not canary.exists(), f"root's bash sourced uid 65534's BASH_ENV ({where})"


@pytest.mark.parametrize("where", ["local", "host"])
def test_control_roots_own_bash_env_is_kept(tmp_path, monkeypatch, where):
    canary, rc = _plant(tmp_path, 0)
    _step(rc, monkeypatch) if where == "local" else _host_step(rc)
    assert canary.read_text() == "0\n", "root's own BASH_ENV was not kept"
