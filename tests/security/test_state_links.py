"""The host state directory (journal, lock, checkpoints, the agent remedy runs as root) is
never reached through a link another user could have planted or can re-point.

The attacks, for real (root plants what another user could): `$XDG_STATE_HOME/remedy` is a
link owned by uid 65534 in a sticky, world-writable directory, pointing at a root-owned
directory standing in for /etc; `sudo` kept a user's HOME, whose `.local/state` is theirs and
holds a link. Before, `mkdir -p; chmod 700` ran through the link (/etc would have become
0700), the agent and journals went to wherever the link pointed, and the check looked only at
the real path, so the link's owner could re-point it after the check (at a directory with an
agent of their own). The canary: the target directory's mode and contents stay as they were.
"""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

import pytest

from remedy.errors import RunError
from remedy.executor.hoststate import HostState
from remedy.transport.local import LocalTransport

NOBODY = 65534
pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="links owned by another user")


def _target(tmp_path: Path) -> Path:
    etc = tmp_path / "etc"  # stands in for /etc: root's, 0755, with a file in it
    etc.mkdir(mode=0o755)
    etc.chmod(0o755)
    (etc / "passwd").write_text("root:x:0:0::/root:/bin/sh\n")
    return etc


def _untouched(etc: Path) -> None:
    assert oct(etc.stat().st_mode & 0o777) == oct(0o755), "chmod went through the link"
    assert sorted(p.name for p in etc.iterdir()) == ["passwd"], "state written through it"


def test_a_state_dir_link_planted_in_a_sticky_dir_is_refused(tmp_path: Path):
    tmp_path.chmod(0o755)
    etc = _target(tmp_path)
    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o1777)
    link = shared / "remedy"
    link.symlink_to(etc)
    os.chown(link, NOBODY, NOBODY, follow_symlinks=False)
    t = LocalTransport(host="h", env={"XDG_STATE_HOME": str(shared)})
    with pytest.raises(RunError, match="is a link owned by uid 65534: not followed"):
        asyncio.run(HostState(t).setup())
    _untouched(etc)


def test_a_link_in_a_home_sudo_kept_is_refused(tmp_path: Path):
    """HOME is a user's: even a root-owned link there can be renamed away by its owner."""
    tmp_path.chmod(0o755)
    etc = _target(tmp_path)
    home = tmp_path / "alice"
    state = home / ".local" / "state"
    state.mkdir(parents=True)
    for d in (home, home / ".local", state):
        os.chown(d, NOBODY, NOBODY)
    (state / "remedy").symlink_to(etc)  # root-owned link, in alice's directory
    t = LocalTransport(host="h", env={"HOME": str(home), "XDG_STATE_HOME": ""})
    with pytest.raises(RunError, match="link in a directory others can change"):
        asyncio.run(HostState(t).setup())
    _untouched(etc)


def test_control_roots_own_link_in_roots_dir_is_followed_and_the_real_path_used(
    tmp_path: Path,
):
    """A link only root could have made (e.g. ~/.local/state on another disk) still works,
    and remedy keeps the real path, so nothing on the path as written is followed again."""
    tmp_path.chmod(0o755)
    real = tmp_path / "disk" / "state"
    real.mkdir(parents=True)
    home = tmp_path / "root"
    home.mkdir()
    (home / "state").symlink_to(real)
    t = LocalTransport(host="h", env={"XDG_STATE_HOME": str(home / "state")})
    hs = HostState(t)
    asyncio.run(hs.setup())
    assert hs.state_dir == str(real / "remedy")
    assert oct((real / "remedy").stat().st_mode & 0o777) == oct(0o700)
    assert Path(hs.agent_path).parent == real / "remedy"
