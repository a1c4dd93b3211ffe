"""`impact --unit`'s `systemd-analyze verify` must not run `man` with the host's words.

`systemd-analyze verify` checks every `Documentation=man:PAGE(SECTION)` of the unit by running
`man SECTION PAGE` (systemd src/analyze/analyze-verify-util.c verify_documentation ->
show_man_page), unless `--man=no`. Both words are the host's text, put on man's command line
as they are: `man:canarypage(--config-file=/tmp/x/man.cfg)` runs, as root on the controller,
`man --config-file=/tmp/x/man.cfg canarypage`, and that man_db config (another user's file)
can `DEFINE nroff PROGRAM`: man-db formats the page with it. The attack, for real: the unit
read from a host tree names a config and a program uid 65534 owns; the program writes a
canary. Control: the same unit checked by hand without `--man=no` does run it (so the
attack is live on this machine), and remedy's verify still reports on the unit.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from remedy.transport import LocalTransport
from remedy.units import impact_unit

pytestmark = pytest.mark.skipif(
    not (shutil.which("systemd-analyze") and shutil.which("man")),
    reason="needs systemd-analyze and man-db",
)
NOBODY = 65534


def _plant(tmp_path: Path) -> tuple[Path, Path]:
    """uid 65534's man page, man_db config naming its program as nroff, and the program."""
    evil = tmp_path / "nobody"
    (evil / "man/man1").mkdir(parents=True)
    (evil / "man/man1/canarypage.1").write_text(".TH CANARYPAGE 1\n.SH NAME\ncanarypage \\- x\n")
    canary = evil / "canary"
    prog = evil / "fmt"
    prog.write_text(f"#!/bin/sh\nid -u > {canary}\ncat\n")
    prog.chmod(0o755)
    cfg = evil / "man.cfg"
    cfg.write_text(
        f"MANDATORY_MANPATH {evil}/man\nNOCACHE\nDEFINE nroff {prog}\nDEFINE troff {prog}\n"
    )
    for p in [evil, *evil.rglob("*")]:
        os.lchown(p, NOBODY, NOBODY)
    tmp_path.chmod(0o755)
    return cfg, canary


def _host(tmp_path: Path, cfg: Path) -> Path:
    host = tmp_path / "host"
    unit = host / "etc/systemd/system/doc.service"
    unit.parent.mkdir(parents=True)
    unit.write_text(
        "[Unit]\nDescription=d\n"
        f"Documentation=man:canarypage(--config-file={cfg})\n"
        "[Service]\nExecStart=/usr/bin/true\n"
    )
    return host


def test_a_documentation_line_runs_no_man_option_of_the_host(kb, tmp_path: Path):
    cfg, canary = _plant(tmp_path)
    host = _host(tmp_path, cfg)
    imp = asyncio.run(
        impact_unit(
            LocalTransport(host="gpu-1"), kb, "doc.service", {"CUDA_HOME": "/usr/local/cuda"},
            None, root=str(host), strict=False,
        )
    )  # fmt: skip
    assert imp.dropin.verify is not None and imp.dropin.verify.ran, imp.dropin.verify
    assert not canary.exists(), f"man ran uid 65534's formatter as uid {canary.read_text()}"
    assert "--man=no" in imp.dropin.verify.command


def test_control_the_attack_is_live_without_man_no(tmp_path: Path):
    """The same unit under plain `systemd-analyze verify` (what remedy ran before): man runs
    the planted program as root."""
    cfg, canary = _plant(tmp_path)
    host = _host(tmp_path, cfg)
    exe = shutil.which("systemd-analyze")
    subprocess.run(
        [exe, "verify", "--recursive-errors=no", "--no-pager", f"--root={host}", "doc.service"],
        env={"PATH": "/usr/sbin:/usr/bin:/sbin:/bin", "LANG": "C.UTF-8"},
        capture_output=True, timeout=60, check=False,
    )  # fmt: skip
    assert canary.exists() and canary.read_text().strip() == str(os.getuid())
