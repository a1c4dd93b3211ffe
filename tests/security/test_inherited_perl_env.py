"""A step's perl never loads code from a directory another user owns that an inherited perl
variable names (PERL5OPT, PERL5LIB, PERLLIB), nor runs PERL5DB's code.

The attack, for real: root's environment (`su` without `-`, `sudo -E`, a CI runner's) has
PERL5OPT="-I/their/dir -Mevil" (or `-Mlib=/their/dir`), where uid 65534 owns the directory and
its evil.pm. Every perl a step starts (dpkg's and debconf's in an apt install) loads evil.pm as
root: the canary. With `-d`, perl runs the code PERL5DB holds. Now such a PERL5OPT is left out
of every local command's environment (`remedy.childenv.own_config_env`), as PERL5LIB/PERLLIB
entries naming such a directory were; control: root's own directory is used.
"""

from __future__ import annotations

import asyncio
import os
import shutil
from pathlib import Path

import pytest

from remedy.transport.local import LocalTransport

pytestmark = [
    pytest.mark.skipif(os.geteuid() != 0, reason="a perl library dir another user owns"),
    pytest.mark.skipif(not shutil.which("perl"), reason="perl"),
]
NOBODY = 65534


def _plant(d: Path, canary: Path, owner: int) -> None:
    d.mkdir()
    pm = d / "evil.pm"
    pm.write_text(f'package evil; open(my $f, ">>", "{canary}"); print $f "ran as $<\\n"; 1;\n')
    for n in (d, pm):
        os.chown(n, owner, owner)


def _perl(env: dict[str, str], monkeypatch) -> None:
    for k in ("PERL5OPT", "PERL5LIB", "PERLLIB", "PERL5DB"):
        monkeypatch.delenv(k, raising=False)
    for k, v in env.items():
        monkeypatch.setenv(k, v)  # inherited by remedy, not given to the transport
    t = LocalTransport("local")
    asyncio.run(t.run(["perl", "-e", "1"], timeout=30))


FORMS = {
    "PERL5OPT -I": lambda d: {"PERL5OPT": f"-I{d} -Mevil"},
    "PERL5OPT -I spaced": lambda d: {"PERL5OPT": f"-w -I {d} -Mevil"},
    "PERL5OPT -Mlib=": lambda d: {"PERL5OPT": f"-Mlib=/usr/share/perl5,{d} -Mevil"},
    "PERL5LIB": lambda d: {"PERL5LIB": f"/usr/share/perl5:{d}", "PERL5OPT": "-Mevil"},
    "PERLLIB": lambda d: {"PERLLIB": str(d), "PERL5OPT": "-Mevil"},
}


@pytest.mark.parametrize("form", sorted(FORMS))
def test_perl_loads_no_module_from_another_users_dir(tmp_path: Path, monkeypatch, form: str):
    tmp_path.chmod(0o755)
    canary = tmp_path / "canary"
    d = tmp_path / "perl-lib"
    _plant(d, canary, NOBODY)
    _perl(FORMS[form](d), monkeypatch)
    assert not canary.exists(), f"root's perl loaded uid 65534's evil.pm ({form})"


@pytest.mark.parametrize("form", ["PERL5OPT -I", "PERL5OPT -Mlib="])
def test_control_roots_own_perl_dir_is_used(tmp_path: Path, monkeypatch, form: str):
    tmp_path.chmod(0o755)
    canary = tmp_path / "canary"
    d = tmp_path / "perl-lib"
    _plant(d, canary, 0)
    _perl(FORMS[form](d), monkeypatch)
    assert canary.read_text() == "ran as 0\n", "root's own PERL5OPT was not kept"


def test_the_debugger_switch_runs_no_inherited_perl5db(tmp_path: Path, monkeypatch):
    """`-d` in PERL5OPT runs PERL5DB's code (anyone who set root's environment chose it)."""
    tmp_path.chmod(0o755)
    canary = tmp_path / "canary"
    code = f'BEGIN {{ open(my $f, ">>", "{canary}"); print $f "db\\n"; }}'
    _perl({"PERL5OPT": "-d", "PERL5DB": code}, monkeypatch)
    assert not canary.exists(), "root's perl ran the inherited PERL5DB"
