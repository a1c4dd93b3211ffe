"""remedy's own tools never come from a session PATH directory another user owns.

The attack: root's PATH starts with a directory uid 65534 owns (a service venv's bin that
/etc/environment puts first, as on the seed hosts), holding a `stat`, `readlink`, `sh`,
`grep`... that write a canary. Before the transports ran every command with a fixed system
PATH (remedy.transport.base.SYSTEM_PATH), `remedy facts --local` ran a planted `readlink` 14
times, `grep` 11 times and `head`, `id`, `uname`, `cat`, `env` as root, inside the trust
check itself. The session's PATH is still what discovery searches (and what the facts report
as the session's PATH); what it finds runs only when `trusted`.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from local_sshd import LocalSshd, sshd_available

from remedy.facts import collect_facts
from remedy.transport import LocalTransport, SSHTransport
from remedy.transport.base import SESSION_PATH_VAR, SYSTEM_PATH

NOBODY = 65534
TOOLS = [
    "stat",
    "readlink",
    "id",
    "env",
    "head",
    "cat",
    "grep",
    "sed",
    "sort",
    "uname",
    "mktemp",
    "rm",
    "ls",
    "tr",
    "cut",
    "find",
    "awk",
    "wc",
    "basename",
    "dirname",
    "timeout",
    "systemctl",
    "setpriv",
    "tar",
    "chown",
    "chmod",
    "mkdir",
    "sh",
    "dash",
    "bash",
    "python3",
    "python",
    "nvidia-smi",
    "gcc",
    "g++",
    "cc",
    "c++",
    "clang",
    "nvcc",
    "ldconfig",
    "dpkg",
    "rpm",
    "getent",
    "nproc",
    "getconf",
]

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="the attack needs root and chown")


def plant(tmp: Path) -> tuple[Path, Path]:
    """A bin dir uid 65534 owns, every tool in it writing its name to the canary."""
    bin_dir, canary = tmp / "evil-bin", tmp / "canary"
    bin_dir.mkdir()
    for t in TOOLS:
        f = bin_dir / t
        f.write_text(f'#!/bin/sh\necho "{t} $*" >> {canary}\nexit 1\n')
        f.chmod(0o755)
        os.chown(f, NOBODY, NOBODY)
    os.chown(bin_dir, NOBODY, NOBODY)
    tmp.chmod(0o755)
    return bin_dir, canary


def ran(canary: Path) -> list[str]:
    return canary.read_text().splitlines() if canary.exists() else []


def test_facts_local_runs_no_tool_from_a_path_dir_another_user_owns(tmp_path: Path) -> None:
    bin_dir, canary = plant(tmp_path)
    env = {**os.environ, "PATH": f"{bin_dir}:{SYSTEM_PATH}"}
    env.pop(SESSION_PATH_VAR, None)
    r = subprocess.run(
        [sys.executable, "-m", "remedy", "facts", "--local", "--json"],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert ran(canary) == [], "root ran another user's tools"
    assert r.returncode == 0, r.stderr
    facts = json.loads(r.stdout)
    # discovery still searched the session's PATH: the planted ones were found and refused
    notes = "\n".join(facts["notes"])
    assert f"{bin_dir}/gcc owned by nobody (uid {NOBODY})" in notes
    assert f"{bin_dir}/nvidia-smi owned by nobody (uid {NOBODY})" in notes
    # ... and the real tools answered (with a planted `grep`/`uname` they said nothing)
    assert facts["memory_mib"] and facts["os"]


def test_a_command_sees_the_system_path_and_keeps_the_session_one(tmp_path: Path) -> None:
    bin_dir, canary = plant(tmp_path)

    async def go():
        old = os.environ["PATH"]
        os.environ["PATH"] = f"{bin_dir}:{SYSTEM_PATH}"
        try:
            t = LocalTransport()
            a = await t.run(["sh", "-c", 'printf "%s\\n" "$PATH"; id -u'], timeout=10)
            b = await t.run(f'printf "%s\\n" "${SESSION_PATH_VAR}"; stat -c %u /', timeout=10)
            # a caller that names PATH (a probe running a build) gets it, as the session's too
            c = await t.run('printf "%s\\n" "$PATH"', timeout=10, env={"PATH": "/opt/x/bin:/bin"})
        finally:
            os.environ["PATH"] = old
        return a, b, c

    a, b, c = asyncio.run(go())
    assert ran(canary) == []
    assert a.text().splitlines() == [SYSTEM_PATH, "0"]
    assert b.text().splitlines() == [f"{bin_dir}:{SYSTEM_PATH}", "0"]
    assert c.text().splitlines() == ["/opt/x/bin:/bin"]


SSHD_REASON = sshd_available()


@pytest.mark.skipif(SSHD_REASON is not None, reason=SSHD_REASON or "")
def test_facts_over_ssh_run_no_tool_from_the_session_path(tmp_path: Path) -> None:
    """Over SSH the login shell starts `/bin/sh` by its path (a planted `sh` was the first
    thing it ran) and everything after it has the system PATH."""
    bin_dir, canary = plant(tmp_path)
    # the session's PATH comes from the key's environment= option (PermitUserEnvironment)
    server = LocalSshd(tmp_path / "sshd", alias="path-host", extra=["PermitUserEnvironment yes"])
    server.prepare()
    keys = server.base / "authorized_keys"
    keys.write_text(f'environment="PATH={bin_dir}:{SYSTEM_PATH}" ' + keys.read_text())
    server.start()

    async def go():
        t = SSHTransport(server.alias, ssh_config=str(server.ssh_config))
        try:
            probe = await t.run('printf "%s\\n" "$PATH" "$' + SESSION_PATH_VAR + '"', timeout=30)
            facts = await collect_facts(t, timeout=60)
        finally:
            await t.close()
        return probe, facts

    try:
        probe, facts = asyncio.run(go())
    finally:
        server.stop()
    assert ran(canary) == [], "root ran another user's tools over SSH"
    session = probe.text().splitlines()
    assert session[0] == SYSTEM_PATH
    if session[1] != f"{bin_dir}:{SYSTEM_PATH}":
        pytest.fail(f"the key's environment= PATH did not reach the session: {session[1]!r}")
    notes = "\n".join(facts.notes)
    assert f"{bin_dir}/gcc owned by nobody (uid {NOBODY})" in notes
    assert facts.memory_mib and facts.os


def test_the_controllers_own_helpers_come_from_the_system_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """grep and wc (the log reader's helpers for pipes and big files) and systemd-analyze
    (drop-in verification) are found on the system PATH, never an earlier planted one."""
    from remedy.evidence import reader
    from remedy.units.dropin import find_systemd_analyze

    bin_dir, _ = plant(tmp_path)
    for t in ("grep", "wc", "systemd-analyze"):
        (bin_dir / t).write_text("#!/bin/sh\nexit 1\n")
        (bin_dir / t).chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}:{SYSTEM_PATH}")
    grep = reader.find_grep()
    assert grep and not grep.startswith(str(bin_dir))
    exe = find_systemd_analyze()
    assert exe is None or not exe.startswith(str(bin_dir))
