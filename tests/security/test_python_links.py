"""A step never runs an interpreter reached through a link another user can re-point.

The attack, for real: the facts recorded a Python env at `SHARED/venv`, which is uid 65534's
link (in a sticky, world-writable directory, as in /tmp) to a root-owned env. The check
before the run judged the real path (root's env: trusted); the step then ran
`SHARED/venv/bin/python -m pip` by the path as written. uid 65534 re-points the link at its
own env between the check and the step (done here right after the check command returns,
the race won every time), and its `bin/python` ran as root: the canary. Now every link on
the interpreter's path as written must be root's or remedy's user's in a trusted directory
(`links_trusted`), so the run is refused before anything changes. The control: root's own
link in root's private directory is followed and the env's python runs.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from local_apply import apply_locally

from remedy.errors import Refused
from remedy.model import Facts, Step
from remedy.operations import PipInstall
from remedy.transport.local import LocalTransport

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="links another user owns")
NOBODY = 65534


def _env(root: Path, owner: int, canary: Path | None) -> Path:
    env = root / "venv"
    (env / "bin").mkdir(parents=True)
    (env / "lib" / "python3.12" / "site-packages").mkdir(parents=True)
    py = env / "bin" / "python"
    py.write_text("#!/bin/sh\n" + (f"touch {canary}\n" if canary else "") + "exit 0\n")
    py.chmod(0o755)
    for dp, dns, fns in os.walk(env):
        for n in [dp, *(os.path.join(dp, x) for x in dns + fns)]:
            os.chown(n, owner, owner)
    return env


def _run(tmp_path: Path, python: str, monkeypatch, repoint=None):
    real_run = LocalTransport.run

    async def run(self, command, *a, **kw):
        r = await real_run(self, command, *a, **kw)
        said = " ".join(command) if isinstance(command, list) else ""
        # the interpreter's check (other owner checks, e.g. of the compilers on PATH, come first)
        if repoint and "not executed: %s" in said and python in said:
            repoint()  # uid 65534 wins the race between the check and the step
        return r

    monkeypatch.setattr(LocalTransport, "run", run)
    facts = Facts(host="scratch", pythons=[{"path": python, "python": "3.12"}])
    step = Step(
        action="pip-x",
        title="pin a wheel",
        operation=PipInstall(python=python, packages={"nvidia-cuda-cccl": "13.0.85"}),
        probe="static",
    )
    return apply_locally(tmp_path, facts, [step])


def test_an_env_behind_a_link_another_user_can_repoint_is_refused(tmp_path: Path, monkeypatch):
    tmp_path.chmod(0o755)
    canary = tmp_path / "canary"
    roots = _env(tmp_path / "opt", 0, None)
    (tmp_path / "home").mkdir()
    theirs = _env(tmp_path / "home", NOBODY, canary)
    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o1777)
    link = shared / "venv"
    link.symlink_to(roots)
    os.chown(link, NOBODY, NOBODY, follow_symlinks=False)

    def repoint() -> None:
        tmp = shared / ".venv-new"
        tmp.symlink_to(theirs)
        os.chown(tmp, NOBODY, NOBODY, follow_symlinks=False)
        os.rename(tmp, link)

    with pytest.raises(Refused, match=r"is a link owned by uid 65534: not followed"):
        _run(tmp_path, str(link), monkeypatch, repoint)
    assert not canary.exists(), "uid 65534's python ran as root"


def test_control_roots_own_link_is_followed(tmp_path: Path, monkeypatch):
    tmp_path.chmod(0o755)
    canary = tmp_path / "canary"
    roots = _env(tmp_path / "opt", 0, canary)
    private = tmp_path / "private"
    private.mkdir(mode=0o700)
    (private / "venv").symlink_to(roots)
    _run(tmp_path, str(private / "venv"), monkeypatch)
    assert canary.exists(), "the step ran root's env"
