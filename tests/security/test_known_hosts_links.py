"""Recording a host key (`--accept-new`) never appends, as root, through a planted link.

The attack, for real: `sudo` kept uid 65534's HOME and it has no ssh config, so the user
known_hosts file is `~/.ssh/known_hosts`, which uid 65534 made a link to a root-owned file
(a stand-in for /etc/cron.d/x or /root/.ssh/authorized_keys). Root runs `remedy
--accept-new facts 127.0.0.1:PORT` against a real loopback sshd with a new host key: the
key was appended to the link's target (`open(path, "ab")` follows it, `mkdir(parents=True)`
too). Now the file and the directories above it must be root's or remedy's user's and
reached through no planted link (remedy.fileread.untrusted_tree), else the key is not
recorded and the refusal names why. The canary: the stand-in keeps its bytes. The control:
root's own known_hosts in root's private home gets the key.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from local_sshd import LocalSshd, sshd_available, untrusted_sshd

pytestmark = pytest.mark.skipif(
    os.geteuid() != 0 or bool(sshd_available()), reason=str(sshd_available() or "root")
)
NOBODY = 65534
REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def sshd(tmp_path_factory: pytest.TempPathFactory):
    yield from untrusted_sshd(tmp_path_factory)


def _facts(tmp_path: Path, home: Path, sshd: LocalSshd) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(REPO / "src"), "HOME": str(home),
           "XDG_CACHE_HOME": str(tmp_path / "cache"), "XDG_STATE_HOME": str(tmp_path / "state")}  # fmt: skip
    env.pop("SSH_AUTH_SOCK", None)
    return subprocess.run(
        [sys.executable, "-m", "remedy", "--accept-new", "facts", f"{sshd.addr}:{sshd.port}"],
        capture_output=True, text=True, env=env, timeout=120, cwd="/",
    )  # fmt: skip


def test_a_known_hosts_link_in_a_home_sudo_kept_is_not_written_through(
    tmp_path: Path, sshd: LocalSshd
):
    tmp_path.chmod(0o755)
    target = tmp_path / "etc" / "cron-x"
    target.parent.mkdir()
    target.write_text("keep\n")
    home = tmp_path / "home"
    (home / ".ssh").mkdir(parents=True)
    (home / ".ssh" / "known_hosts").symlink_to(target)
    for p in (home, home / ".ssh", home / ".ssh" / "known_hosts"):
        os.chown(p, NOBODY, NOBODY, follow_symlinks=False)
    r = _facts(tmp_path, home, sshd)
    assert target.read_text() == "keep\n", "root appended the host key through the link"
    assert "Traceback" not in r.stderr and r.returncode != 70, r.stderr[-2000:]
    assert "cannot record the host key" in r.stderr and "65534" in r.stderr, r.stderr[-2000:]


def test_control_roots_own_known_hosts_gets_the_key(tmp_path: Path, sshd: LocalSshd):
    tmp_path.chmod(0o755)
    home = tmp_path / "root-home"
    (home / ".ssh").mkdir(parents=True)
    home.chmod(0o700)
    _facts(tmp_path, home, sshd)
    kh = home / ".ssh" / "known_hosts"
    assert kh.exists() and sshd.known_hosts_line().split()[2] in kh.read_text()
