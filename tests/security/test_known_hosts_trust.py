"""A known_hosts file is trust only when nobody but root (or remedy's user) can change it.

An inventory (a file in a shared repository) names `remedy_known_hosts`; its keys decide which
host root believes it is talking to, and root then runs its facts and steps there. The attack,
for real, against a loopback sshd: the known_hosts file the inventory names holds the key the
attacker chose (here the sshd's own, so a connection proves the keys were taken) and is (a)
uid 65534's file, (b) root's file in a directory uid 65534 owns (it can replace the file), (c)
uid 65534's link in a sticky dir to root's file (it can re-point it). Before, root read the
keys and connected in all three. Now such a file is not read: the host key is unknown and the
message names the file and its owner. The control: root's own file in root's directory is used.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
from local_sshd import LocalSshd, facts_with_known_hosts, sshd_available, untrusted_sshd

pytestmark = pytest.mark.skipif(
    os.geteuid() != 0 or bool(sshd_available()), reason=str(sshd_available() or "root")
)
REPO = Path(__file__).resolve().parents[2]
NOBODY = 65534


@pytest.fixture(scope="module")
def sshd(tmp_path_factory: pytest.TempPathFactory):
    yield from untrusted_sshd(tmp_path_factory)


def _facts(tmp_path: Path, sshd: LocalSshd, known: Path) -> subprocess.CompletedProcess[str]:
    return facts_with_known_hosts(tmp_path, sshd, known, "facts", "--json")


def _refused(r: subprocess.CompletedProcess[str]) -> None:
    out = r.stdout + r.stderr
    assert "unknown host key" in out and "uid 65534" in out, out
    assert '"os"' not in r.stdout  # no facts were collected from the host


def test_a_known_hosts_file_another_user_owns_is_not_trust(tmp_path: Path, sshd: LocalSshd):
    kh = tmp_path / "known_hosts"
    kh.write_text(sshd.known_hosts_line())
    os.chown(kh, NOBODY, NOBODY)
    _refused(_facts(tmp_path, sshd, kh))


def test_a_known_hosts_file_in_a_dir_another_user_owns_is_not_trust(
    tmp_path: Path, sshd: LocalSshd
):
    d = tmp_path / "shared"
    d.mkdir()
    kh = d / "known_hosts"
    kh.write_text(sshd.known_hosts_line())
    os.chown(d, NOBODY, NOBODY)  # the file is root's, but uid 65534 can swap it
    _refused(_facts(tmp_path, sshd, kh))


def test_a_known_hosts_link_another_user_planted_is_not_trust(tmp_path: Path, sshd: LocalSshd):
    tmp_path.chmod(0o755)
    real = tmp_path / "roots-known-hosts"
    real.write_text(sshd.known_hosts_line())
    sticky = tmp_path / "tmp"
    sticky.mkdir()
    sticky.chmod(0o1777)
    link = sticky / "known_hosts"
    link.symlink_to(real)
    os.chown(link, NOBODY, NOBODY, follow_symlinks=False)
    _refused(_facts(tmp_path, sshd, link))


def test_control_roots_own_known_hosts_is_trust(tmp_path: Path, sshd: LocalSshd):
    kh = tmp_path / "known_hosts"
    kh.write_text(sshd.known_hosts_line())
    r = _facts(tmp_path, sshd, kh)
    assert r.returncode == 0 and "unknown host key" not in r.stdout + r.stderr, r.stderr
