"""An ssh config another user can change never runs a command as root.

`ProxyCommand` (and `Include` of more config) in an ssh config is code: asyncssh runs it to
reach the host. remedy read `~/.ssh/config` from `$HOME`, which `sudo` keeps on many systems
(OpenSSH itself reads the passwd home, and refuses a config with a bad owner or mode). The
attack, for real: uid 65534's home, whose `.ssh/config` says `ProxyCommand` writes a canary;
root runs `remedy facts evilhost` with that HOME; likewise root's own config that `Include`s
a file uid 65534 owns, and `--ssh-config` naming one. Before, the canary appeared (written
by root). Now the connection is refused before it starts, naming the file and its owner.
The control: the same config owned by root in root's private home is used (canary).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="files another user owns")
NOBODY = 65534
REPO = Path(__file__).resolve().parents[2]


def _config(canary: Path) -> str:
    return f"Host evilhost\n  HostName 127.0.0.1\n  Port 9\n  ProxyCommand sh -c 'id > {canary}'\n"


def _facts(tmp_path: Path, home: Path, *pre: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(REPO / "src"), "HOME": str(home),
           "XDG_CACHE_HOME": str(tmp_path / "cache"), "XDG_STATE_HOME": str(tmp_path / "state")}  # fmt: skip
    return subprocess.run(
        [sys.executable, "-m", "remedy", *pre, "facts", "evilhost"],
        capture_output=True, text=True, env=env, timeout=120, cwd="/",
    )  # fmt: skip


def _home(tmp_path: Path, owner: int, text: str) -> Path:
    tmp_path.chmod(0o755)
    home = tmp_path / f"home{owner}"
    (home / ".ssh").mkdir(parents=True)
    (home / ".ssh" / "config").write_text(text)
    home.chmod(0o755 if owner else 0o700)
    for p in (home, home / ".ssh", home / ".ssh" / "config"):
        os.chown(p, owner, owner)
    return home


def _refused(r: subprocess.CompletedProcess[str], canary: Path, why: str) -> None:
    assert not canary.exists(), "a ProxyCommand another user wrote ran as root"
    assert r.returncode not in (0, 70) and "Traceback" not in r.stderr, r.stderr[-2000:]
    assert why in r.stderr, r.stderr[-2000:]


def test_the_config_of_a_home_sudo_kept_runs_nothing(tmp_path: Path):
    canary = tmp_path / "canary"
    home = _home(tmp_path, NOBODY, _config(canary))
    _refused(_facts(tmp_path, home), canary, "owned by uid 65534")


def test_an_included_config_another_user_owns_runs_nothing(tmp_path: Path):
    canary = tmp_path / "canary"
    theirs = tmp_path / "theirs.conf"
    theirs.write_text(_config(canary))
    os.chown(theirs, NOBODY, NOBODY)
    home = _home(tmp_path, 0, f"Include {theirs}\n")
    _refused(_facts(tmp_path, home), canary, "theirs.conf owned by uid 65534")


def test_an_ssh_config_option_naming_another_users_file_runs_nothing(tmp_path: Path):
    canary = tmp_path / "canary"
    home = _home(tmp_path, 0, "")
    theirs = tmp_path / "theirs.conf"
    theirs.write_text(_config(canary))
    os.chown(theirs, NOBODY, NOBODY)
    _refused(_facts(tmp_path, home, "--ssh-config", str(theirs)), canary, "owned by uid 65534")


def test_control_roots_own_config_is_used(tmp_path: Path):
    canary = tmp_path / "canary"
    home = _home(tmp_path, 0, _config(canary))
    _facts(tmp_path, home)
    assert canary.exists(), "root's own ProxyCommand was not run: the config was not read"
