"""remedy's own tools (`sh`, `stat`, `readlink`, `find`, `id`...) and a link in /usr/local/bin
(redteam-28).

The transports run every command with the fixed system PATH (remedy.syspath.SYSTEM_PATH),
which starts with /usr/local/sbin:/usr/local/bin. Nothing judged what those directories hold:
root's /usr/local/bin/stat, a link to uid 65534's program (an admin's `ln -s` to a tool
directory a service user owns), ran as root in `remedy facts` (read-only), inside the trust
check itself (canary: `stat`, `readlink`, `id`, `find` each ran as uid 0). Now the PATH
remedy's commands get is judged first, by a judge that itself runs with the distribution's
directories only (remedy.syspath.own_tools_path, SH_OWN_PATH): a /usr/local directory holding
something another user can change (a file, a link, any hop of a link's way) is left out.
Control: root's own link there keeps the directory on the PATH.
"""

from __future__ import annotations

import json
import os
import textwrap
from pathlib import Path

import pytest
from local_apply import needs_private_mounts, python_under_usr_local_bin
from local_sshd import sshd_available

NOBODY = 65534
TOOLS = ["stat", "readlink", "id", "find", "sh", "cat", "grep", "uname", "head"]
SSHD_REASON = sshd_available()
pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="chown to another user needs root")


def _site_dir(area: Path, owner: int) -> Path:
    """A root-owned dir (755) holding root's links NAME -> `owner`'s program that appends
    `NAME uid` to area/canary, then runs the real one (a copy of /usr/local/bin's entries
    too, so what the host had there is still found)."""
    bindir, svc = area / "bin", area / "svc"
    bindir.mkdir(mode=0o755)
    svc.mkdir(mode=0o755)
    for name in TOOLS:
        real = f"/usr/bin/{name}" if os.path.exists(f"/usr/bin/{name}") else f"/bin/{name}"
        f = svc / name
        f.write_text(f'#!/bin/sh\necho "{name} $(/usr/bin/id -u)" >> {area / "canary"}\n'
                     f'exec {real} "$@"\n')  # fmt: skip
        f.chmod(0o755)
        os.chown(f, owner, owner)
        (bindir / name).symlink_to(f)
    os.chown(svc, owner, owner)
    return bindir


_NS_FACTS = textwrap.dedent(
    """
    import asyncio, json, sys
    sys.path[:0] = sys.argv[1].split(":")
    how = sys.argv[2]
    if how == "local":
        from remedy.facts import collect_facts
        from remedy.transport import LocalTransport
        t = LocalTransport()
        f = asyncio.run(collect_facts(t, timeout=60))
        p = asyncio.run(t.run('printf "%s" "$PATH"', timeout=10)).text()
    else:
        from pathlib import Path
        from local_sshd import LocalSshd
        from remedy.facts import collect_facts
        from remedy.transport import SSHTransport
        server = LocalSshd(Path(sys.argv[3]) / "sshd", alias="site-host")
        server.prepare(); server.start()
        async def go():
            t = SSHTransport(server.alias, ssh_config=str(server.ssh_config))
            try:
                f = await collect_facts(t, timeout=60)
                p = (await t.run('printf "%s" "$PATH"', timeout=30)).text()
            finally:
                await t.close()
            return f, p
        try:
            f, p = asyncio.run(go())
        finally:
            server.stop()
    print("FACTS", json.dumps({"os": f.os, "memory_mib": f.memory_mib, "path": p}))
    """
)


def _facts_with_site_dir(area: Path, owner: int, how: str) -> tuple[dict, list[str]]:
    needs_private_mounts()
    area.chmod(0o755)
    bindir = _site_dir(area, owner)
    r = python_under_usr_local_bin(bindir, _NS_FACTS, how, str(area))
    line = next((x for x in r.stdout.splitlines() if x.startswith("FACTS ")), None)
    assert line, r.stdout + r.stderr
    canary = area / "canary"
    ran = canary.read_text().splitlines() if canary.exists() else []
    return json.loads(line[6:]), ran


@pytest.mark.parametrize("how", ["local", "ssh"])
def test_remedys_own_tools_never_come_from_a_site_dir_link_of_another_user(
    tmp_path: Path, how: str
):
    if how == "ssh" and SSHD_REASON:
        pytest.skip(SSHD_REASON)
    facts, ran = _facts_with_site_dir(tmp_path, NOBODY, how)
    assert ran == [], f"root ran uid 65534's tools through /usr/local/bin ({how}): {ran}"
    assert facts["os"] and facts["memory_mib"], facts
    assert "/usr/local/bin" not in facts["path"].split(":"), facts["path"]


@pytest.mark.parametrize("how", ["local"])
def test_control_roots_own_links_there_keep_the_site_dir(tmp_path: Path, how: str):
    facts, ran = _facts_with_site_dir(tmp_path, 0, how)
    assert "/usr/local/bin" in facts["path"].split(":"), facts["path"]
    assert ran and {x.split()[1] for x in ran} == {"0"}, ran
