"""Identity files the user names, and the agent socket, come only from places root owns.

The ssh config's `IdentityFile`/`CertificateFile` (root's own config, `--ssh-config`) and an
inventory's `ansible_ssh_private_key_file` were opened by asyncssh by name with a plain
open(), and so were `KEY-cert.pub` and `KEY.pub` beside each key. The attacks, for real, as
root: an `IdentityFile` that is uid 65534's FIFO (remedy hung for ever in open()); an
`IdentityFile` that is uid 65534's own key (root offered that user's key as its identity);
an inventory key root owns in a sticky, world-writable directory (a /tmp stand-in) beside
which uid 65534 planted `KEY-cert.pub` as a FIFO (hung, after `check_identity_file` had
passed the key itself). Now remedy reads every named key file itself
(`remedy.transport.ssh.named_keypairs`): a key that exists and is refused is a clear error
naming it; a `.pub`/`-cert.pub` another user owns is left out. And `SSH_AUTH_SOCK` naming a
socket uid 65534 owns (a stale `/tmp/ssh-XXXX/agent.N` recreated by that user): root's
connection asked that user's agent for its keys (the canary: the agent was contacted); now
such an agent is not used. Controls: root's own key, and root's own agent, still are.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from foreign_home import NOBODY, cap_memory

REPO = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="files another user owns")


def _theirs(tmp_path: Path) -> Path:
    tmp_path.chmod(0o755)
    d = tmp_path / "theirs"
    d.mkdir()
    os.chown(d, NOBODY, NOBODY)
    return d


def _keygen(path: Path, owner: int) -> bytes:
    import base64

    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(path)], check=True)
    for p in (path, Path(f"{path}.pub")):
        os.chown(p, owner, owner)
    return base64.b64decode(Path(f"{path}.pub").read_text().split()[1])


def _remedy(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(REPO / "src"), "HOME": str(tmp_path),
           "XDG_STATE_HOME": str(tmp_path / "s"), "XDG_CACHE_HOME": str(tmp_path / "c")}  # fmt: skip
    env.pop("SSH_AUTH_SOCK", None)
    try:
        return subprocess.run(
            [sys.executable, "-m", "remedy", *args],
            capture_output=True, text=True, env=env, timeout=60, cwd=tmp_path, preexec_fn=cap_memory,
        )  # fmt: skip
    except subprocess.TimeoutExpired:
        pytest.fail(f"remedy hung: {args}")


def test_a_config_identity_file_that_is_a_fifo_is_refused_not_waited_on(tmp_path: Path):
    key = _theirs(tmp_path) / "id_work"
    os.mkfifo(key)
    os.chown(key, NOBODY, NOBODY)
    cfg = tmp_path / "ssh_config"
    cfg.write_text(f"Host *\n  IdentityFile {key}\n")
    r = _remedy(tmp_path, "--ssh-config", str(cfg), "facts", "root@127.0.0.1:9")
    out = r.stdout + r.stderr
    assert "internal error" not in out, out[-800:]
    assert r.returncode == 2 and f"the identity file {key} cannot be used" in out, out[-800:]


@pytest.mark.parametrize("owner", [NOBODY, 0], ids=["nobody", "control-root"])
def test_a_config_identity_file_another_user_owns_is_not_roots_identity(
    tmp_path: Path, monkeypatch, owner: int
):
    from remedy.errors import IdentityFileError
    from remedy.transport.ssh import SSHTransport

    d = _theirs(tmp_path) if owner else tmp_path / "mine"
    d.mkdir(exist_ok=True)
    blob = _keygen(d / "id_work", owner)
    cfg = tmp_path / "ssh_config"
    cfg.write_text(f"Host *\n  IdentityFile {d / 'id_work'}\n")
    monkeypatch.delenv("SSH_AUTH_SOCK", raising=False)
    t = SSHTransport("root@127.0.0.1:9", ssh_config=str(cfg))
    if owner == NOBODY:
        with pytest.raises(IdentityFileError, match="owned by uid 65534|65534"):
            t._options()
    else:
        offered = [k.public_data for k in (t._options().client_keys or ())]
        assert blob in offered, "root's own key is not used"


def test_a_cert_fifo_beside_an_inventory_key_does_not_hang_root(tmp_path: Path):
    """The key is root's, in a root-owned sticky world-writable dir (as /tmp): it passes;
    what uid 65534 can add beside it (`KEY-cert.pub`, `KEY.pub`) is not read."""
    tmp_path.chmod(0o755)
    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o1777)
    key = shared / "deploy"
    _keygen(key, 0)
    os.unlink(f"{key}.pub")
    for name in (f"{key}-cert.pub", f"{key}.pub"):
        os.mkfifo(name)
        os.chown(name, NOBODY, NOBODY)
    inv = tmp_path / "inv.ini"
    inv.write_text(
        f"[g]\nh ansible_host=127.0.0.1 ansible_port=9 ansible_ssh_private_key_file={key}\n"
    )
    r = _remedy(tmp_path, "facts", "--inventory", str(inv))
    out = r.stdout + r.stderr
    assert "internal error" not in out, out[-800:]
    assert "127.0.0.1" in out and "cannot connect" in out, out[-800:]  # tried: port 9 refused


class _Agent:
    """A listening ssh-agent that writes `canary` when a client connects and answers
    REQUEST_IDENTITIES with no keys."""

    def __init__(self, path: Path, canary: Path) -> None:
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.bind(str(path))
        self.sock.listen(4)
        self.canary = canary
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        while True:
            try:
                c, _ = self.sock.accept()
            except OSError:
                return
            self.canary.write_text("asked\n")
            with c:
                while True:
                    head = c.recv(4)
                    if len(head) < 4:
                        break
                    c.recv(int.from_bytes(head, "big"))
                    c.sendall(b"\0\0\0\x05\x0c\0\0\0\0")  # IDENTITIES_ANSWER, 0 keys

    def close(self) -> None:
        self.sock.close()


@pytest.mark.parametrize("owner", [NOBODY, 0], ids=["nobody", "control-root"])
def test_an_agent_socket_another_user_owns_is_not_asked(tmp_path: Path, monkeypatch, owner: int):
    import asyncio

    from local_sshd import LocalSshd, sshd_available

    from remedy.transport.ssh import SSHTransport

    if why := sshd_available():
        pytest.skip(why)
    d = _theirs(tmp_path) if owner else tmp_path / "mine"
    d.mkdir(mode=0o700, exist_ok=True)
    sock, canary = d / "agent.1234", tmp_path / "canary"
    agent = _Agent(sock, canary)
    os.chown(sock, owner, owner)
    monkeypatch.setenv("SSH_AUTH_SOCK", str(sock))
    monkeypatch.delenv("SUDO_UID", raising=False)
    try:
        with LocalSshd(tmp_path / "sshd") as sshd:

            async def go() -> int:
                t = SSHTransport(sshd.alias, ssh_config=str(sshd.ssh_config))
                try:
                    return (await t.run(["true"], timeout=30)).exit_status
                finally:
                    await t.close()

            assert asyncio.run(go()) == 0  # the config's own key logs in
    finally:
        agent.close()
    if owner == NOBODY:
        assert not canary.exists(), "root's connection asked uid 65534's agent for keys"
    else:
        assert canary.exists(), "root's own agent is not used"


def test_under_sudo_the_invoking_users_own_agent_is_used(tmp_path: Path, monkeypatch):
    """Control: `sudo -E` keeps the invoking user's SSH_AUTH_SOCK (`SUDO_UID` is that user):
    its own agent, in its own directory, is asked."""
    from remedy.transport.ssh import trusted_agent_path

    d = _theirs(tmp_path)
    sock = d / "agent.1"
    agent = _Agent(sock, tmp_path / "canary")
    try:
        os.chown(sock, NOBODY, NOBODY)
        monkeypatch.setenv("SUDO_UID", str(NOBODY))
        assert trusted_agent_path(str(sock)) == str(sock)
        monkeypatch.setenv("SUDO_UID", "4242")
        assert trusted_agent_path(str(sock)) is None
    finally:
        agent.close()
