"""The facts agent (python3 run as root on every host) never blocks on a file swapped after
its look (TOCTOU, reading facts).

The attack, for real: a venv's owner (uid 65534) owns its `pyvenv.cfg`. The agent checks
`[ -f pyvenv.cfg ]` (a plain file), then opens it by name. Between the two the owner swaps in
a FIFO (or a link to one): `open()` without O_NONBLOCK waited for a writer for ever, and the
facts of the whole host (every GPU, toolkit and service) waited with it until the transport
gave up; a link to /proc/kmsg made root's agent drain the kernel's log as it waited. The swap
is hooked right after the agent's `isfile` of that path. The agent must finish, with the
other sections of the venv still there; the control: an unswapped pyvenv.cfg is read.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from remedy.facts import agent_host, collect

NOBODY = 65534
DRIVER = r"""
import os, sys, importlib.util
path, x, swap = sys.argv[1], sys.argv[2].encode(), sys.argv[3] == "1"
spec = importlib.util.spec_from_file_location("agent_host", path)
ah = importlib.util.module_from_spec(spec); spec.loader.exec_module(ah)
real = ah.isfile
def isfile(p):
    ok = real(p)
    if swap and ok and p.endswith(b"/pyvenv.cfg"):
        os.unlink(p)
        os.mkfifo(p)  # the owner's swap, right after the look
    return ok
ah.isfile = isfile
req = eval(sys.stdin.read())
req["ops"] = [["py", x.decode("latin-1"), "test"]]
ah.main(req)
"""


def venv(tmp_path: Path) -> Path:
    tmp_path.chmod(0o755)
    v = tmp_path / "venv"
    (v / "bin").mkdir(parents=True)
    (v / "lib" / "python3.11" / "site-packages" / "demo-1.0.dist-info").mkdir(parents=True)
    (v / "lib" / "python3.11" / "site-packages" / "demo-1.0.dist-info" / "METADATA").write_text(
        "Name: demo\nVersion: 1.0\n"
    )
    (v / "pyvenv.cfg").write_text("home = /usr/bin\nversion = 3.11.2\n")
    py = v / "bin" / "python"
    py.write_text("#!/bin/sh\nexit 0\n")
    py.chmod(0o755)
    for dp, dns, fns in os.walk(v):
        for n in [dp, *(os.path.join(dp, f) for f in dns + fns)]:
            os.chown(n, NOBODY, NOBODY, follow_symlinks=False)
    return py


def run(py: Path, swap: bool) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-c", DRIVER, agent_host.__file__, str(py), "1" if swap else "0"],
        input=repr(collect.agent_request()).encode(),
        capture_output=True,
        timeout=20,
    )


@pytest.mark.skipif(os.geteuid() != 0, reason="another user's venv needs root")
def test_a_fifo_swapped_in_after_the_look_does_not_stop_the_facts(tmp_path: Path):
    py = venv(tmp_path)
    try:
        r = run(py, swap=True)
    except subprocess.TimeoutExpired:
        pytest.fail("the facts agent waited on the owner's FIFO")
    assert r.returncode == 0, r.stderr[-2000:]
    out = r.stdout
    from remedy.facts import agent

    names = [s.name for s in agent.parse_output(out)]
    assert "py.site" in names and names[-1] == "end", names


@pytest.mark.skipif(os.geteuid() != 0, reason="another user's venv needs root")
def test_control_an_unswapped_pyvenv_cfg_is_read(tmp_path: Path):
    from remedy.facts import agent

    py = venv(tmp_path)
    r = run(py, swap=False)
    assert r.returncode == 0, r.stderr[-2000:]
    secs = agent.parse_output(r.stdout)
    cfg = [s for s in secs if s.name == "py.cfg"]
    assert cfg and "version = 3.11.2" in cfg[0].body
