"""A HOME that is root's but open to everyone (a sticky world-writable directory: `HOME=/tmp`
of a CI runner or a container, kept by `sudo -E`) is not root's configuration.

The attack, for real: HOME is a root-owned 1777 directory (a stand-in for /tmp), in which uid
65534 created `.config/pip/pip.conf` (`no-index`, `find-links` to its wheel of
`nvidia-cuda-cccl` carrying a `.pth`), as any user may add a name there. `own_home_env` kept
the HOME (its owner is root), and `run --local`'s `pip-install` into a root-owned venv
installed that user's wheel (the canary: the .pth in root's site-packages). Now a HOME that is
group- or world-writable (sticky or not) is replaced by the passwd home like another user's;
control: root's own private HOME's pip.conf is read (test_sudo_home_config.py).
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from test_sudo_home_config import _apply, _home, _planted, _venv

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="a file another user owns")
NOBODY = 65534


@pytest.mark.parametrize("mode", [0o1777, 0o777, 0o775], ids=["sticky", "world", "group"])
def test_a_home_everyone_can_add_to_is_not_roots(tmp_path: Path, monkeypatch, mode: int):
    tmp_path.chmod(0o755)
    env = _venv(tmp_path)
    home = _home(tmp_path, "shared", NOBODY)  # uid 65534's .config and wheels in it
    os.chown(home, 0, 0)
    home.chmod(mode)
    _apply(tmp_path, env, home, monkeypatch)
    assert not _planted(env), "root installed uid 65534's wheel from a pip.conf in a shared HOME"


def test_a_shared_home_gives_commands_the_passwd_home(tmp_path: Path, monkeypatch):
    import pwd

    from remedy.transport.base import own_home_env

    shared = tmp_path / "shared"
    shared.mkdir(mode=0o1777)
    shared.chmod(0o1777)
    me = os.fsencode(pwd.getpwuid(os.geteuid()).pw_dir)
    assert own_home_env(os.fsencode(shared)) == {b"HOME": me}
    private = tmp_path / "private"
    private.mkdir(mode=0o700)
    assert own_home_env(os.fsencode(private)) == {}
