"""The login environment a step over SSH starts in, for the attacks on it.

Over SSH a step starts in the host's login environment (/etc/environment through pam_env,
sshd's SetEnv, the key's `environment=` options), which remedy does not set; its script
begins with remedy.trust.step_env_guard(). The tests of that guard need the same three
things: the guard alone under `env -i` plus a login environment, a loopback sshd whose
sessions get one, and the places an attack points it at."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from local_sshd import LocalSshd

from remedy.trust import step_env_guard

NOBODY = 65534
SYSTEM_PATH = "/usr/sbin:/usr/bin:/sbin:/bin"


def guarded(
    script: str, login: Mapping[str, str] = {}, *, path: str = "/usr/bin:/bin", check: bool = True
) -> subprocess.CompletedProcess[str]:
    """`script` as a step's script runs on the host: the guard first, under `env -i` with
    PATH and `login` only (later names win, as in the login environment)."""
    return subprocess.run(
        ["env", "-i", f"PATH={path}", *(f"{k}={v}" for k, v in login.items()),
         "sh", "-c", step_env_guard() + script],
        capture_output=True, text=True, cwd="/", check=check, timeout=120,
    )  # fmt: skip


def kept_by_guard(**login: str) -> dict[str, str]:
    """Which of `login`'s variables the guard keeps, and their values (a HOME with no pip
    config and pip's cache on, so only what is judged here changes)."""
    r = guarded("env -0", {"HOME": "/nonexistent", "PIP_NO_CACHE_DIR": "0", **login})
    out = dict(x.split("=", 1) for x in r.stdout.split("\0") if "=" in x)
    return {k: v for k, v in out.items() if k in login}


def login_sshd(base: Path, alias: str, login: Mapping[str, str]) -> LocalSshd:
    """A prepared (not started) loopback sshd whose sessions get `login` through the key's
    `environment=` options (PermitUserEnvironment)."""
    server = LocalSshd(base, alias=alias, extra=["PermitUserEnvironment yes"])
    server.prepare()
    keys = server.base / "authorized_keys"
    opts = ",".join(f'environment="{k}={v}"' for k, v in login.items())
    keys.write_text(f"{opts} {keys.read_text()}")
    return server


@dataclass(frozen=True)
class Places:
    """theirs: uid 65534's dir; mine: root's own 0755 dir; sticky: a 1777 dir holding
    `link`, uid 65534's symlink to `mine`."""

    theirs: Path
    mine: Path
    sticky: Path


def places(tmp_path: Path) -> Places:
    tmp_path.chmod(0o755)
    p = Places(tmp_path / "theirs", tmp_path / "mine", tmp_path / "sticky")
    for d in (p.theirs, p.mine, p.sticky):
        d.mkdir(mode=0o755)
    os.chown(p.theirs, NOBODY, NOBODY)
    p.sticky.chmod(0o1777)
    os.symlink(p.mine, p.sticky / "link")
    os.lchown(p.sticky / "link", NOBODY, NOBODY)
    return p
