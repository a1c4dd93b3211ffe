"""The default identity files (`~/.ssh/id_*`) come only from a place root or remedy's user owns.

With no key named (no inventory `ansible_ssh_private_key_file`), asyncssh loads
`~/.ssh/id_ed25519`, `id_rsa`... of $HOME by name with a plain open(), while the options are
built, before any connection. `sudo` keeps the invoking user's HOME on many systems. The
attacks, for real, through `remedy facts root@127.0.0.1:9` as root with HOME uid 65534's:
its `~/.ssh/id_ed25519` a FIFO nobody writes to (remedy hung in open() for ever, SIGTERM
from `timeout` too: only SIGKILL ended it), a link to /dev/zero (MemoryError under a 2 GiB
cap, exit 70; all of root's memory without), and a real key of its own (root's connection
offered uid 65534's key: its identity, chosen by that user). Now remedy reads the default
keys itself (`remedy.transport.ssh.default_keypairs`): only a regular file of at most 1 MiB
in a tree `untrusted_tree` passes, opened O_NONBLOCK. Control: root's own key is used.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from foreign_home import NOBODY, cap_memory, home_owned_by

REPO = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="a HOME another user owns")


def _keygen(path: Path, owner: int) -> str:
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(path)], check=True)
    for p in (path, Path(f"{path}.pub")):
        os.chown(p, owner, owner)
    return Path(f"{path}.pub").read_text().split()[1]


@pytest.mark.parametrize("kind", ["fifo", "/dev/zero"])
def test_a_default_key_in_a_home_sudo_kept_does_not_hang_or_exhaust_root(tmp_path: Path, kind: str):
    home = home_owned_by(tmp_path, NOBODY)
    key = home / ".ssh" / "id_ed25519"
    if kind == "fifo":
        os.mkfifo(key)
        os.chown(key, NOBODY, NOBODY)
    else:
        key.symlink_to("/dev/zero")
        os.chown(key, NOBODY, NOBODY, follow_symlinks=False)
    env = {**os.environ, "PYTHONPATH": str(REPO / "src"), "HOME": str(home),
           "XDG_STATE_HOME": str(tmp_path / "s"), "XDG_CACHE_HOME": str(tmp_path / "c")}  # fmt: skip
    try:
        r = subprocess.run(
            [sys.executable, "-m", "remedy", "facts", "root@127.0.0.1:9"],
            capture_output=True, text=True, env=env, timeout=60, cwd=tmp_path, preexec_fn=cap_memory,
        )  # fmt: skip
    except subprocess.TimeoutExpired:
        pytest.fail(f"remedy hung on uid 65534's ~/.ssh/id_ed25519 ({kind})")
    out = r.stdout + r.stderr
    assert "internal error" not in out and "MemoryError" not in out, out[-800:]
    assert "127.0.0.1" in out, out[-800:]  # the connection was tried (port 9: refused)


@pytest.mark.parametrize("owner", [NOBODY, 0], ids=["nobody", "control-root"])
def test_a_key_in_a_home_another_user_owns_is_not_roots_identity(
    tmp_path: Path, monkeypatch, owner: int
):
    from remedy.transport.ssh import SSHTransport

    home = home_owned_by(tmp_path, owner)
    blob = _keygen(home / ".ssh" / "id_ed25519", owner)
    monkeypatch.setenv("HOME", str(home))
    opts = SSHTransport("root@127.0.0.1:9")._options()
    offered = [k.public_data for k in (opts.client_keys or ())]
    import base64

    if owner == NOBODY:
        assert base64.b64decode(blob) not in offered, "root offered uid 65534's key"
    else:
        assert base64.b64decode(blob) in offered, "root's own key is not used"


def test_control_roots_own_default_key_logs_in(tmp_path: Path, monkeypatch):
    """A real loopback sshd: root's own `~/.ssh/id_ed25519` (no key named) still logs in."""
    import asyncio
    import shutil

    from local_sshd import LocalSshd, sshd_available

    from remedy.transport.ssh import SSHTransport

    if why := sshd_available():
        pytest.skip(why)
    home = home_owned_by(tmp_path, 0)
    with LocalSshd(tmp_path / "sshd") as sshd:
        shutil.copy(sshd.client_key, home / ".ssh" / "id_ed25519")
        (home / ".ssh" / "known_hosts").write_text(sshd.known_hosts_line())
        monkeypatch.setenv("HOME", str(home))
        monkeypatch.delenv("SSH_AUTH_SOCK", raising=False)

        async def go() -> int:
            t = SSHTransport(f"root@{sshd.addr}:{sshd.port}")
            try:
                return (await t.run(["true"], timeout=30)).exit_status
            finally:
                await t.close()

        assert asyncio.run(go()) == 0
