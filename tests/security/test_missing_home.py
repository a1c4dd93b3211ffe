"""A HOME that does not exist yet, where another user could create it, is not kept.

`own_home_env` replaced a HOME another user owns by the passwd home, but kept one that did
not exist ("nothing to read"). A HOME `sudo` kept that names a directory not made yet under
a directory anyone can add names to (`/tmp/alice`, a sticky world-writable dir, or a
directory uid 65534 owns) is that user's to create, with `.config/pip/pip.conf` in it,
between the check and the command's start. The attack, for real, hooked at that moment:
right after remedy's check, uid 65534 (setpriv) creates the HOME with a pip.conf; the
command remedy runs locally as root (a stand-in for its `pip install`) read that user's
pip.conf (the canary: its index line in the output). Now such a HOME is replaced by the
passwd home, like one another user owns. Control: a missing HOME under a directory only root
can write to is kept.
"""

from __future__ import annotations

import asyncio
import os
import pwd
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

pytestmark = pytest.mark.skipif(
    os.geteuid() != 0 or not shutil.which("setpriv"), reason="a directory uid 65534 writes in"
)
NOBODY = 65534
CANARY = "https://index.planted-by-65534.invalid/simple"


def _run_with_late_home(monkeypatch, home: Path) -> str:
    """Run `cat $HOME/.config/pip/pip.conf` through LocalTransport; uid 65534 creates the
    HOME with its pip.conf right after remedy's HOME check."""
    import remedy.transport.local as local
    from remedy.transport.local import LocalTransport

    real = local.own_home_env

    def hooked(h: bytes | None) -> dict[bytes, bytes]:
        out = real(h)
        script = (
            f"mkdir -p '{home}/.config/pip' && "
            f"printf '[global]\\nindex-url = {CANARY}\\n' > '{home}/.config/pip/pip.conf'"
        )
        subprocess.run(
            ["setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups",
             "sh", "-c", script], check=True,
        )  # fmt: skip
        return out

    monkeypatch.setattr(local, "own_home_env", hooked)
    monkeypatch.setenv("HOME", str(home))

    async def go() -> str:
        r = await LocalTransport().run(
            ["sh", "-c", 'cat "$HOME/.config/pip/pip.conf" 2>/dev/null; echo "HOME=$HOME"'],
            timeout=30,
        )
        return r.text()

    return asyncio.run(go())


@pytest.fixture
def reachable() -> Iterator[Path]:
    """A directory uid 65534 can reach (pytest's tmp_path is under root's 0700 dir)."""
    base = Path(tempfile.mkdtemp(prefix="remedy-home-", dir="/tmp"))
    try:
        base.chmod(0o755)
        yield base
    finally:
        shutil.rmtree(base)


@pytest.mark.parametrize("where", ["sticky", "theirs"])
def test_a_missing_home_another_user_can_create_is_not_roots(reachable: Path, monkeypatch, where):
    d = reachable / "d"
    d.mkdir()
    if where == "sticky":
        d.chmod(0o1777)
    else:
        os.chown(d, NOBODY, NOBODY)
    home = d / "alice"
    out = _run_with_late_home(monkeypatch, home)
    assert CANARY not in out, f"root's command read uid 65534's pip.conf: {out}"
    assert f"HOME={pwd.getpwuid(0).pw_dir}" in out, out


def test_control_a_missing_home_only_root_can_create_is_kept(tmp_path: Path):
    from remedy.transport.base import own_home_env

    tmp_path.chmod(0o755)
    assert own_home_env(os.fsencode(tmp_path / "not-yet" / "home")) == {}
    assert own_home_env(b"/nonexistent") == {}
