"""`impact --unit`'s temporary verify root is made where no other user can rename it.

`systemd-analyze verify` runs on a temporary root that remedy fills with the host's unit
files (`tempfile.TemporaryDirectory`, so in `$TMPDIR`), writing each by name with
`Path.write_bytes`, which follows links. `remedy` inherits TMPDIR (a CI runner's or batch
job's per-job dir; su and sudo drop it). When another user owns that directory they can rename root's
0700 directory away and put their own in its place, with `etc/systemd/system/UNIT` a link to
any file: root wrote the host's unit text there (a stand-in for /etc/cron.d/x below).

The attack, for real: TMPDIR names a directory uid 65534 owns; right after the temporary
root is made (the race an inotify watcher wins; hooked here), uid 65534 (setpriv) swaps it.
Control: with a TMPDIR root owns, the verify root is made there.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest

from remedy.units import SourceFile, UnitFiles
from remedy.units import dropin as dropin_mod
from remedy.units.dropin import verify_unit_files

NOBODY = 65534
pytestmark = [
    pytest.mark.skipif(not shutil.which("systemd-analyze"), reason="needs systemd-analyze"),
    pytest.mark.skipif(os.geteuid() != 0, reason="chown to another user needs root"),
]
UNIT = b"[Service]\nExecStart=/usr/bin/true\n# * * * * * root touch /tmp/pwned\n"


@pytest.fixture
def nobody_tmp():
    d = Path(tempfile.mkdtemp(prefix="remedy-nobody-tmp-", dir="/tmp"))
    os.chown(d, NOBODY, NOBODY)
    yield d
    shutil.rmtree(d, ignore_errors=True)


def _files() -> UnitFiles:
    return UnitFiles(
        name="doc.service", fragment=SourceFile("/etc/systemd/system/doc.service", UNIT)
    )


def test_a_tmpdir_another_user_owns_gets_no_verify_root(tmp_path: Path, nobody_tmp, monkeypatch):
    cron = tmp_path / "cron.d"  # root's, a stand-in for /etc/cron.d
    cron.mkdir()
    target = cron / "x"
    swapped: list[str] = []
    orig = dropin_mod._write_root

    def write_root(root: Path, files: UnitFiles) -> None:
        if str(root).startswith(str(nobody_tmp) + "/"):
            swapped.append(str(root))
            subprocess.run(
                ["setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups",
                 "sh", "-c", 'mv -- "$1" "$1.away" && mkdir -p -- "$1/etc/systemd/system" && '
                 'ln -s -- "$2" "$1/etc/systemd/system/doc.service"', "sh", str(root),
                 str(target)],
                check=True,
            )  # fmt: skip
        orig(root, files)

    monkeypatch.setenv("TMPDIR", str(nobody_tmp))
    monkeypatch.setattr(tempfile, "tempdir", None)  # read TMPDIR again
    monkeypatch.setattr(dropin_mod, "_write_root", write_root)
    res = verify_unit_files(_files())
    assert not target.exists(), f"root wrote the host's unit through uid 65534's link: {swapped}"
    assert not swapped, "the verify root was made in uid 65534's TMPDIR"
    assert res.ran, res.note


def test_control_a_tmpdir_root_owns_is_used(tmp_path: Path, monkeypatch):
    own = tmp_path / "tmp"
    own.mkdir(mode=0o700)
    made: list[str] = []
    orig = dropin_mod._write_root

    def write_root(root: Path, files: UnitFiles) -> None:
        made.append(str(root))
        orig(root, files)

    monkeypatch.setenv("TMPDIR", str(own))
    monkeypatch.setattr(tempfile, "tempdir", None)
    monkeypatch.setattr(dropin_mod, "_write_root", write_root)
    res = verify_unit_files(_files())
    assert res.ran and res.ok, res
    assert made and made[0].startswith(str(own) + "/remedy-verify-")
