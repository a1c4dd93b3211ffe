"""`--accept-new` appends a host key only to a known_hosts file, never to a file an inventory
(or an ssh config) merely names.

An inventory is often a file in a shared repository; `remedy_known_hosts` (or `-o
UserKnownHostsFile=` in `ansible_ssh_common_args`) names the file root appends a new host
key to. The attacks, for real, against a loopback sshd with a new host key, `remedy
--accept-new facts --inventory INV` as root: the file named is (a) a path that does not exist
yet (a stand-in for /etc/sudoers.d/x: a new file there with a key line breaks sudo), (b) a
root file that is no known_hosts (a stand-in for /etc/crontab), (c) a FIFO (a stand-in for
/dev/sda: root opened it for append; the FIFO made it hang). Before, (a) was created, (b)
got the line appended, (c) hung. Now the line goes only into a regular file every line of
which is a known_hosts entry (or a comment), or into `~/.ssh/known_hosts`, the one file
remedy creates, as ssh does. The control: an existing empty known_hosts file gets the key.
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


@pytest.fixture(scope="module")
def sshd(tmp_path_factory: pytest.TempPathFactory):
    yield from untrusted_sshd(tmp_path_factory)


def _facts(tmp_path: Path, sshd: LocalSshd, known: Path) -> subprocess.CompletedProcess[str]:
    return facts_with_known_hosts(tmp_path, sshd, known, "--accept-new", "facts")


def test_a_path_that_does_not_exist_is_not_created(tmp_path: Path, sshd: LocalSshd):
    target = tmp_path / "etc" / "sudoers.d" / "x"
    target.parent.mkdir(parents=True)
    r = _facts(tmp_path, sshd, target)
    assert not target.exists(), "root created a file the inventory named"
    assert "cannot record the host key" in r.stdout + r.stderr, r.stdout + r.stderr


def test_a_file_that_is_no_known_hosts_is_not_appended_to(tmp_path: Path, sshd: LocalSshd):
    target = tmp_path / "crontab"
    target.write_text("0 * * * * root true\n")
    r = _facts(tmp_path, sshd, target)
    assert target.read_text() == "0 * * * * root true\n", "root appended to a non-known_hosts file"
    assert "is not a known_hosts file" in r.stdout + r.stderr, r.stdout + r.stderr


def test_a_fifo_standing_in_for_a_disk_is_not_written(tmp_path: Path, sshd: LocalSshd):
    target = tmp_path / "sda"
    os.mkfifo(target)
    try:
        r = _facts(tmp_path, sshd, target)
    except subprocess.TimeoutExpired:
        pytest.fail("remedy hung opening the FIFO named as known_hosts")
    assert "not a regular file" in r.stdout + r.stderr, r.stdout + r.stderr


def test_control_an_empty_known_hosts_file_gets_the_key(tmp_path: Path, sshd: LocalSshd):
    target = tmp_path / "kh"
    target.write_text("# mine\n")
    _facts(tmp_path, sshd, target)
    assert sshd.known_hosts_line().split()[2] in target.read_text()
