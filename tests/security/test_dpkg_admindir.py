"""A step's apt-get never runs dpkg on another user's database.

dpkg (>= 1.20) takes `DPKG_ADMINDIR` from the environment where no `--admindir` is given, and
`apt-get install` passes none (`-o Debug::pkgDPkgPM=1` prints its dpkg command lines). uid
65534's directory as that database: its `status` says the package being installed is there
already, and its `info/PKG.prerm` is then the "old pre-removal script" dpkg runs, as root,
before unpacking. By hand (redteam-18, dpkg 1.21.22, apt 2.6.1): root's `DPKG_ADMINDIR=DIR
apt-get install -y python3-all` from apt's cache ran uid 65534's prerm (canary `0`; it exited
1, so dpkg gave up). That is the command of an `apt-install` step, which got DPKG_ADMINDIR
inherited (`su` without `-`, `sudo -E`) or from the login environment over SSH. No test here
runs apt-get: once the variable is left out, it would install the package on this machine. Now DPKG_ADMINDIR naming a place
another user can change is left out locally (remedy.childenv) and on the host
(remedy.trust.step_env_guard); the playbook sets it to dpkg's default (an empty one is the
directory "", not unset). Control: a database only root can change is kept.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from login_env import guarded
from test_shared_pip_cache import NOBODY

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="a directory another user owns")


def test_the_hosts_step_leaves_out_another_users_dpkg_admindir(tmp_path: Path):
    """The host-side guard under `env -i` + a login environment, as childenv locally."""
    from remedy.childenv import own_config_env

    def after(value: str) -> str:
        return guarded('printf %s "${DPKG_ADMINDIR-unset}"', {"DPKG_ADMINDIR": value}).stdout

    tmp_path.chmod(0o755)
    theirs, mine = tmp_path / "theirs", tmp_path / "mine"
    theirs.mkdir()
    mine.mkdir(mode=0o755)
    os.chown(theirs, NOBODY, NOBODY)
    assert after(str(theirs)) == "unset"
    assert after("var/lib/dpkg") == "unset"
    assert after(str(mine)) == str(mine)
    assert own_config_env({b"DPKG_ADMINDIR": os.fsencode(theirs)}) == {b"DPKG_ADMINDIR": None}
    assert own_config_env({b"DPKG_ADMINDIR": os.fsencode(mine)}) == {}
