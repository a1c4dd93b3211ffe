"""The host agent runs only a python3 remedy may run as root (class 3, for remedy's own agent).

The attacks, for real:

* root's PATH starts with a venv's bin (`/etc/environment` on the seed hosts) where uid 65534
  put a `python3`: the state set-up took `command -v python3` unchecked and ran it, then ran
  the agent (locks, journals, checkpoints, rollbacks) with it, as root, on every run;
* `remedy run --local` started in a directory uid 65534 writes: the agent's digest check and
  the interpreter probe ran `python3 -c 'import hashlib…'`, and `-c` puts the working
  directory first on sys.path (its `hashlib.py` ran as root).

Each would create a canary. The control: a root-owned python3 first on PATH is the one used.
"""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

import pytest

from remedy.executor.hoststate import HostState
from remedy.transport.local import LocalTransport

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="files owned by another user")
NOBODY = 65534
REAL = "/usr/bin/python3" if os.path.exists("/usr/bin/python3") else "/usr/local/bin/python3"


def python3(bin_dir: Path, canary: Path, owner: int) -> None:
    """A python3 that notes it ran in the canary, then is the real one."""
    bin_dir.mkdir(parents=True)
    py = bin_dir / "python3"
    py.write_text(f'#!/bin/sh\necho "$(id -u) $*" >> {canary}\nexec {REAL} "$@"\n')
    py.chmod(0o755)
    for p in (bin_dir, py):
        os.chown(p, owner, owner)


def setup(tmp_path: Path, path: str) -> HostState:
    t = LocalTransport(
        "local",
        env={"HOME": str(tmp_path), "XDG_STATE_HOME": str(tmp_path / "st"), "PATH": path},
    )
    hs = HostState(t)
    asyncio.run(hs.setup())
    asyncio.run(hs.agent("lock-read", hs.state_dir))
    return hs


def test_a_python3_another_user_owns_first_on_path_is_not_the_agents(tmp_path: Path):
    tmp_path.chmod(0o755)
    canary = tmp_path / "canary"
    python3(tmp_path / "venv" / "bin", canary, NOBODY)
    hs = setup(tmp_path, f"{tmp_path}/venv/bin:/usr/local/bin:/usr/bin:/bin")
    assert not canary.exists(), f"root ran nobody's python3: {canary.read_text()}"
    assert not hs.python.startswith(str(tmp_path))


def test_control_a_root_owned_python3_first_on_path_is_the_agents(tmp_path: Path):
    tmp_path.chmod(0o755)
    canary = tmp_path / "canary"
    python3(tmp_path / "venv" / "bin", canary, 0)
    setup(tmp_path, f"{tmp_path}/venv/bin:/usr/local/bin:/usr/bin:/bin")
    assert canary.exists()  # the lookup still honours PATH: root's own python3 ran


def test_the_agent_imports_nothing_from_the_working_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    tmp_path.chmod(0o755)
    canary = tmp_path / "canary"
    shared = tmp_path / "shared"
    shared.mkdir()
    for name in ("hashlib", "json", "tarfile"):
        (shared / f"{name}.py").write_text(f"open({str(canary)!r}, 'a').write('{name} ')\n")
        os.chown(shared / f"{name}.py", NOBODY, NOBODY)
    os.chown(shared, NOBODY, NOBODY)
    monkeypatch.chdir(shared)
    setup(tmp_path, "/usr/local/bin:/usr/bin:/bin")
    assert not canary.exists(), f"root imported {canary.read_text()}from the working directory"
