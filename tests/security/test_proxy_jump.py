"""A ProxyJump hop and a PKCS11Provider are held to the rules of the target's connection.

ProxyJump: asyncssh opened each hop itself as `asyncssh.connect(hop, config=())`, which
loads the default `~/.ssh/config`, not the `--ssh-config` remedy checked, and takes
SSH_AUTH_SOCK and known_hosts as they come. The attacks, for real, as root: root's own
`--ssh-config` sends the target through `ProxyJump jumpbox`, and `~/.ssh/config` of a HOME
`sudo` kept (uid 65534's) says `Host jumpbox / ProxyCommand …`: root ran it (canary `0`);
with root's own config and HOME, SSH_AUTH_SOCK naming uid 65534's agent socket: the jump's
connection asked that agent for keys (redteam-12's attack, one hop earlier). Now remedy opens
every hop through a transport of its own (`SSHTransport._open_jumps`). Control: the chain
still logs in through a loopback sshd, and root's own agent is asked.

PKCS11Provider: asyncssh hands it to python-pkcs11, which dlopen()s it in remedy's process
(python-pkcs11 is not in remedy's lock: its loader is stood in for by ctypes, which is what
`pkcs11.lib(provider)` does first). A library uid 65534 owns (or can replace) ran its
constructor as root (canary `0`). Now it must be an absolute path that
`remedy.fileread.untrusted_tree` passes (`transport.ssh.pkcs11_problem`), else exit 2 naming
it. Control: root's own library is loaded.
"""

from __future__ import annotations

import asyncio
import ctypes
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="files another user owns")
NOBODY = 65534


def _theirs(tmp_path: Path) -> Path:
    tmp_path.chmod(0o755)
    d = tmp_path / "theirs"
    d.mkdir()
    os.chown(d, NOBODY, NOBODY)
    return d


def _sshd_or_skip() -> None:
    from local_sshd import sshd_available

    if why := sshd_available():
        pytest.skip(why)


async def _true(target: str, cfg: Path | None) -> int:
    from remedy.transport.ssh import SSHTransport

    t = SSHTransport(target, ssh_config=str(cfg) if cfg else None)
    try:
        return (await t.run(["true"], timeout=30)).exit_status
    finally:
        await t.close()


def _jump_config(sshd, path: Path) -> None:
    """`target` is the loopback sshd reached through `jumpbox`, the same sshd."""
    path.write_text(
        sshd.ssh_config.read_text().replace(f"Host {sshd.alias}", "Host jumpbox target", 1)
        + "Host target\n  ProxyJump jumpbox\n"
    )
    path.chmod(0o600)


def test_a_jump_host_reads_no_config_but_the_one_remedy_checked(tmp_path: Path):
    theirs = _theirs(tmp_path)
    canary = tmp_path / "canary"
    (theirs / ".ssh").mkdir()
    (theirs / ".ssh" / "config").write_text(
        f"Host jumpbox\n  ProxyCommand sh -c 'id -u > {canary}'\n"
    )
    for p in (theirs / ".ssh", theirs / ".ssh" / "config"):
        os.chown(p, NOBODY, NOBODY)
    cfg = tmp_path / "root_ssh_config"
    cfg.write_text("Host target\n  HostName 127.0.0.1\n  Port 9\n  ProxyJump jumpbox\n")
    env = {**os.environ, "PYTHONPATH": str(REPO / "src"), "HOME": str(theirs),
           "XDG_STATE_HOME": str(tmp_path / "s"), "XDG_CACHE_HOME": str(tmp_path / "c")}  # fmt: skip
    env.pop("SSH_AUTH_SOCK", None)
    r = subprocess.run(
        [sys.executable, "-m", "remedy", "--ssh-config", str(cfg), "facts", "target"],
        capture_output=True, text=True, env=env, timeout=60, cwd=tmp_path,
    )  # fmt: skip
    out = r.stdout + r.stderr
    assert not canary.exists(), f"root ran uid 65534's ProxyCommand: {canary.read_text()!r}"
    assert "internal error" not in out and r.returncode != 0, out[-800:]
    assert "jumpbox" in out, out[-800:]  # the hop is looked up in root's config: no such host


@pytest.mark.parametrize("owner", [NOBODY, 0], ids=["nobody", "control-root"])
def test_a_jump_host_does_not_ask_another_users_agent(tmp_path: Path, monkeypatch, owner: int):
    from local_sshd import LocalSshd
    from test_named_keys import _Agent

    _sshd_or_skip()
    d = _theirs(tmp_path) if owner else tmp_path / "mine"
    d.mkdir(mode=0o700, exist_ok=True)
    sock, canary = d / "agent.1234", tmp_path / "canary"
    home = tmp_path / "home"
    (home / ".ssh").mkdir(parents=True, mode=0o700)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("SSH_AUTH_SOCK", str(sock))
    monkeypatch.delenv("SUDO_UID", raising=False)
    agent = _Agent(sock, canary)
    os.chown(sock, owner, owner)
    try:
        with LocalSshd(tmp_path / "sshd") as sshd:
            _jump_config(sshd, home / ".ssh" / "config")  # root's own default config
            assert asyncio.run(_true("target", None)) == 0  # through the jump, the key's login
    finally:
        agent.close()
    if owner == NOBODY:
        assert not canary.exists(), "the jump's connection asked uid 65534's agent for keys"
    else:
        assert canary.exists(), "root's own agent is not used for the jump"


def test_control_a_jump_chain_from_ssh_config_logs_in(tmp_path: Path, monkeypatch):
    """`--ssh-config` names the hop: it is read for the hop too (asyncssh read ~/.ssh/config)."""
    from local_sshd import LocalSshd

    _sshd_or_skip()
    monkeypatch.setenv("HOME", str(tmp_path / "nohome"))
    monkeypatch.delenv("SSH_AUTH_SOCK", raising=False)
    with LocalSshd(tmp_path / "sshd") as sshd:
        cfg = tmp_path / "cfg"
        _jump_config(sshd, cfg)
        assert asyncio.run(_true("target", cfg)) == 0
        cfg.write_text(
            cfg.read_text() + "Host loop1\n  ProxyJump loop2\nHost loop2\n  ProxyJump loop1\n"
        )
        from remedy.errors import InputError

        with pytest.raises(InputError, match="ProxyJump chains more than"):
            asyncio.run(_true("loop1", cfg))


def _provider(path: Path, canary: Path, owner: int) -> None:
    src = path.with_suffix(".c")
    src.write_text(
        "#include <stdio.h>\n#include <unistd.h>\n"
        "__attribute__((constructor)) static void ran(void) {\n"
        f'  FILE *f = fopen("{canary}", "w"); if (f) {{ fprintf(f, "%d", (int)getuid()); fclose(f); }}\n'
        "}\n"
    )
    subprocess.run(["cc", "-shared", "-fPIC", "-o", str(path), str(src)], check=True)
    os.chown(path, owner, owner)


@pytest.mark.parametrize("owner", [NOBODY, 0], ids=["nobody", "control-root"])
def test_a_pkcs11_provider_another_user_owns_is_not_loaded(tmp_path: Path, monkeypatch, owner: int):
    import asyncssh.connection
    from local_sshd import LocalSshd

    from remedy.errors import IdentityFileError

    _sshd_or_skip()
    d = _theirs(tmp_path) if owner else tmp_path / "mine"
    d.mkdir(exist_ok=True)
    lib, canary = d / "libtoken-pkcs11.so", tmp_path / "canary"
    _provider(lib, canary, owner)
    # python-pkcs11's loader, stood in for: pkcs11.lib(provider) dlopen()s it first
    monkeypatch.setattr(
        asyncssh.connection,
        "load_pkcs11_keys",
        lambda provider, pin=None: [] if ctypes.CDLL(provider) else [],
    )
    monkeypatch.setenv("HOME", str(tmp_path / "nohome"))
    monkeypatch.delenv("SSH_AUTH_SOCK", raising=False)
    with LocalSshd(tmp_path / "sshd") as sshd:
        cfg = tmp_path / "cfg"
        cfg.write_text(sshd.ssh_config.read_text() + f"  PKCS11Provider {lib}\n")
        if owner == NOBODY:
            refused = None
            try:
                asyncio.run(_true(sshd.alias, cfg))
            except IdentityFileError as exc:
                refused = str(exc)
            assert not canary.exists(), f"root loaded uid 65534's library: {canary.read_text()!r}"
            assert refused and "PKCS11Provider" in refused and "65534" in refused, refused
        else:
            assert asyncio.run(_true(sshd.alias, cfg)) == 0
            assert canary.read_text() == "0", "root's own provider is not loaded"


def test_a_pkcs11_provider_the_search_path_or_another_user_could_choose_is_refused(
    tmp_path: Path,
):
    from remedy.transport.ssh import pkcs11_problem

    theirs = _theirs(tmp_path)
    assert "absolute" in (pkcs11_problem("opensc-pkcs11.so") or "")
    assert "does not exist" in (pkcs11_problem(str(theirs / "later.so")) or "")
    fifo = tmp_path / "p.so"
    os.mkfifo(fifo)
    assert "regular file" in (pkcs11_problem(str(fifo)) or "")
    lib = tmp_path / "lib.so"
    lib.write_bytes(b"\x7fELF")
    lib.chmod(0o666)
    assert pkcs11_problem(str(lib)), "a world-writable library is anyone's code"
    lib.chmod(0o644)
    assert pkcs11_problem(str(lib)) is None
