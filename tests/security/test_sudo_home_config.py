"""A step never reads its configuration from a HOME another user owns.

`sudo` keeps the invoking user's HOME on many systems. Root's `pip install` (a `pip-install`
step) then reads `~/.config/pip/pip.conf` from that user's home: an index, `find-links`, a
log file, all chosen by that user. The attack, for real: uid 65534's HOME holds a pip.conf
pointing pip at its own wheel directory (`no-index`, `find-links`), whose
`nvidia_cuda_cccl-13.0.85` wheel carries a `.pth` file (code every later start of that
interpreter runs, as root). `remedy run --local` (the real runner) applied the step into a
root-owned venv: root installed uid 65534's wheel (the canary: the .pth in root's
site-packages). Now a HOME another user owns is replaced, for every command remedy runs
locally, by the passwd home of the user remedy runs as (what sshd gives a login), so the
user's pip.conf is not read. The control: the same pip.conf in root's own HOME is read.
"""

from __future__ import annotations

import os
import subprocess
import zipfile
from pathlib import Path

import pytest
from local_apply import apply_locally

from remedy.model import Facts, Step
from remedy.operations import PipInstall

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="a HOME another user owns")
NOBODY = 65534
PTH = "planted_by_65534.pth"


def _wheel(d: Path) -> None:
    d.mkdir(parents=True)
    write_wheel(d / "nvidia_cuda_cccl-13.0.85-py3-none-any.whl")


def write_wheel(path: Path, planted: bool = True) -> None:
    """nvidia-cuda-cccl 13.0.85 as a wheel, carrying the canary .pth when ``planted``."""
    name = "nvidia_cuda_cccl-13.0.85"
    with zipfile.ZipFile(path, "w") as z:
        if planted:
            z.writestr(PTH, "import os\n")
        z.writestr(f"{name}.dist-info/METADATA",
                   "Metadata-Version: 2.1\nName: nvidia-cuda-cccl\nVersion: 13.0.85\n")  # fmt: skip
        z.writestr(f"{name}.dist-info/WHEEL",
                   "Wheel-Version: 1.0\nGenerator: t\nRoot-Is-Purelib: true\nTag: py3-none-any\n")  # fmt: skip
        z.writestr(f"{name}.dist-info/RECORD", "")


def _venv(tmp_path: Path) -> Path:
    env = tmp_path / "opt" / "venv"
    subprocess.run(["/usr/bin/python3", "-m", "venv", str(env)], check=True)
    return env


def _home(tmp_path: Path, name: str, owner: int) -> Path:
    home = tmp_path / name
    conf = home / ".config" / "pip"
    conf.mkdir(parents=True)
    _wheel(home / "wheels")
    (conf / "pip.conf").write_text(
        f"[global]\nno-index = true\nfind-links = {home / 'wheels'}\ndisable-pip-version-check = true\n"
    )
    for dp, dns, fns in os.walk(home):
        for n in [dp, *(os.path.join(dp, x) for x in dns + fns)]:
            os.chown(n, owner, owner)
    return home


def _apply(tmp_path: Path, env: Path, home: Path, monkeypatch) -> None:
    monkeypatch.setenv("HOME", str(home))  # what `sudo` kept
    for k in [k for k in os.environ if k.startswith("PIP_") or k == "XDG_CONFIG_HOME"]:
        monkeypatch.delenv(k)
    facts = Facts(host="scratch", pythons=[{"path": str(env), "python": "3.11"}])
    step = Step(
        action="pip-x",
        title="pin a wheel",
        operation=PipInstall(
            python=str(env), packages={"nvidia-cuda-cccl": "13.0.85"}, no_deps=True
        ),  # fmt: skip
        probe="static",
    )
    apply_locally(tmp_path, facts, [step])


def _planted(env: Path) -> bool:
    return any(env.glob(f"lib/python3*/site-packages/{PTH}"))


def test_a_pip_conf_in_a_home_sudo_kept_is_not_read(tmp_path: Path, monkeypatch):
    tmp_path.chmod(0o755)
    env = _venv(tmp_path)
    home = _home(tmp_path, "home-nobody", NOBODY)
    _apply(tmp_path, env, home, monkeypatch)  # pip then finds no index here: the step fails
    assert not _planted(env), "root installed uid 65534's wheel from its pip.conf"


def test_control_roots_own_pip_conf_is_read(tmp_path: Path, monkeypatch):
    tmp_path.chmod(0o755)
    env = _venv(tmp_path)
    home = _home(tmp_path, "home-root", 0)
    _apply(tmp_path, env, home, monkeypatch)
    assert _planted(env), "root's own pip.conf was not read"


def test_commands_get_the_passwd_home_instead_of_another_users(tmp_path: Path, monkeypatch):
    import asyncio
    import pwd

    from remedy.transport.local import LocalTransport

    tmp_path.chmod(0o755)
    theirs, mine = tmp_path / "theirs", tmp_path / "mine"
    theirs.mkdir()
    mine.mkdir()
    os.chown(theirs, NOBODY, NOBODY)
    link = tmp_path / "shared"
    link.mkdir(mode=0o1777)
    (link / "home").symlink_to(mine)
    os.chown(link / "home", NOBODY, NOBODY, follow_symlinks=False)

    def home_of_a_command(home: Path) -> str:
        monkeypatch.setenv("HOME", str(home))
        r = asyncio.run(LocalTransport().run(["sh", "-c", 'printf %s "$HOME"'], timeout=10))
        return r.text()

    passwd_home = pwd.getpwuid(os.geteuid()).pw_dir
    assert home_of_a_command(theirs) == passwd_home
    assert home_of_a_command(link / "home") == passwd_home  # their link to root's dir
    assert home_of_a_command(mine) == str(mine)  # root's own: kept
