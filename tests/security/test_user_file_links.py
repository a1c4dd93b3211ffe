"""A unit user's own files are read with that user's privileges, never root's.

The facts read, as data, the files a unit's processes read as its User=: the login profile
its `bash -lc` ExecStart reads (`~/.bash_profile`, `~/.profile`), a venv `bin/activate` it
sources, a conda environment's `activate.d` hooks. The user owns them. The attack, for real,
as root: uid 65534 (the unit's User=) makes its `~/.profile` and its venv's `bin/activate`
links to a file only root may read (mode 0600, a stand-in for root's secrets, holding
`export CUDA_HOME=...`): the follow-up script read it as root (`head -c`), so its content
came back to the controller and, through `exec_shell_env`, into the facts, the plan and its
report, for whoever reads them. Now those files are tested and read through `setpriv` as
the unit's user (`units.shown.env_file_read_script`, `as_user`): the link leads to a file
the user cannot read, which is missing. Control: the user's own profile is still read.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

pytestmark = pytest.mark.skipif(
    os.geteuid() != 0 or not shutil.which("setpriv"), reason="a home uid 65534 owns, setpriv"
)
NOBODY = 65534
SECRET = "/SECRET-4f1c9e"


@pytest.fixture
def home() -> Iterator[Path]:
    """A home uid 65534 owns, in a directory it can reach (pytest's tmp_path is root's 0700)."""
    base = Path(tempfile.mkdtemp(prefix="remedy-userfile-", dir="/tmp"))
    try:
        base.chmod(0o755)
        h = base / "home"
        (h / "venv" / "bin").mkdir(parents=True)
        for d in (h, h / "venv", h / "venv" / "bin"):
            os.chown(d, NOBODY, NOBODY)
        yield h
    finally:
        shutil.rmtree(base)


def _read(home: Path, secret: Path | None) -> dict[str, bytes | None]:
    """The follow-up script for a `bash -lc 'source VENV/bin/activate && ...'` unit with
    User=nobody, run by sh as root; the files it read, by path."""
    from remedy.facts.collect import _needs, _State, followup_script
    from remedy.facts.sections import split_sections
    from remedy.facts.services import ServiceFacts
    from remedy.model import Service

    exec_start = f"/bin/bash -lc source {home}/venv/bin/activate && exec python -m x"
    svc = Service(
        name="u.service", exec_start=exec_start, user_home=str(home),
        sandboxing={"User": "nobody"},
    )  # fmt: skip
    need = _needs(_State(), {}, ServiceFacts(services=[svc], systemd=True))
    need.prefixes, need.interpreters, need.paths = [], [], []
    out = subprocess.run(
        ["sh", "-c", followup_script("TOK", _State(), need)],
        capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    state = _State()
    state.absorb(split_sections(out.stdout, "TOK"))
    return state.files_read


def test_a_users_profile_linked_to_a_root_only_file_is_not_read_as_root(home: Path, tmp_path):
    secret = tmp_path / "shadow-like"
    secret.write_text(f"export CUDA_HOME={SECRET}\n")
    secret.chmod(0o600)
    for f in (home / ".bash_profile", home / "venv" / "bin" / "activate"):
        f.symlink_to(secret)
        os.chown(f, NOBODY, NOBODY, follow_symlinks=False)
    read = _read(home, secret)
    assert f"{home}/.bash_profile" in read and f"{home}/venv/bin/activate" in read, read
    leaked = [p for p, b in read.items() if b and SECRET.encode() in b]
    assert not leaked, f"root read a root-only file through uid 65534's link: {leaked}"


def test_control_the_users_own_profile_is_read(home: Path):
    for f in (home / ".bash_profile", home / "venv" / "bin" / "activate"):
        f.write_text("export CUDA_HOME=/usr/local/cuda-12.8\n")
        os.chown(f, NOBODY, NOBODY)
    read = _read(home, None)
    assert read[f"{home}/.bash_profile"] == b"export CUDA_HOME=/usr/local/cuda-12.8\n"
    assert read[f"{home}/venv/bin/activate"] == b"export CUDA_HOME=/usr/local/cuda-12.8\n"
