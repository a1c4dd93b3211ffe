"""A default ssh config that did not exist when remedy checked it is not read afterwards.

`~/.ssh/config` of $HOME is checked (`untrusted_config`) and then loaded by asyncssh, which
looks for it again by name. Under sudo, HOME is the invoking user's; with no config there,
the check found nothing to refuse. The attack, for real, as root: right after the check
(hooked, as a watcher of that user's `~/.ssh` would win it), uid 65534 creates
`~/.ssh/config` with `ProxyCommand sh -c 'id -u > canary'`: asyncssh loaded it and root ran
the command (canary `0`). Now remedy tells asyncssh which config to read: the file it
checked, or none when there was none (`config=None`). Control: root's own config is used.
"""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

import pytest

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="a HOME another user owns")
NOBODY = 65534


def _connect(monkeypatch, home: Path, plant: Path | None, canary: Path) -> None:
    import remedy.transport.ssh as ssh

    real = ssh.untrusted_config

    def hooked(path: str, depth: int = 0) -> str | None:
        why = real(path, depth)
        if plant is not None and depth == 0 and not plant.exists():  # the race, won
            plant.write_text(f"Host *\n  ProxyCommand sh -c 'id -u > {canary}'\n")
            os.chown(plant, NOBODY, NOBODY)
        return why

    monkeypatch.setattr(ssh, "untrusted_config", hooked)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("SSH_AUTH_SOCK", raising=False)

    async def go() -> None:
        t = ssh.SSHTransport("root@127.0.0.1:9", connect_timeout=5)
        try:
            await t.run(["true"], timeout=5)
        except Exception:  # noqa: BLE001 - port 9: refused, or the proxy's pipe closed
            pass
        finally:
            await t.close()

    asyncio.run(go())


def test_a_config_created_after_the_check_is_not_read(tmp_path: Path, monkeypatch):
    tmp_path.chmod(0o755)
    home, canary = tmp_path / "home", tmp_path / "canary"
    (home / ".ssh").mkdir(parents=True)
    for d in (home, home / ".ssh"):
        os.chown(d, NOBODY, NOBODY)
    _connect(monkeypatch, home, home / ".ssh" / "config", canary)
    assert not canary.exists(), f"root ran uid 65534's ProxyCommand: {canary.read_text()!r}"


def test_control_roots_own_config_is_read(tmp_path: Path, monkeypatch):
    home, canary = tmp_path / "home", tmp_path / "canary"
    (home / ".ssh").mkdir(parents=True, mode=0o700)
    (home / ".ssh" / "config").write_text(f"Host *\n  ProxyCommand sh -c 'id -u > {canary}'\n")
    _connect(monkeypatch, home, None, canary)
    assert canary.read_text().strip() == "0"
