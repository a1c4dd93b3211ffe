"""A host or user name with shell characters never reaches a ProxyCommand.

asyncssh expands `%h`/`%r` of the ssh config's `ProxyCommand` with the target's host and
user, then runs it. A shell in that command (`ProxyCommand bash -c 'exec
3<>/dev/tcp/%h/%p; …'`, a netcat-less idiom, or `ssh jump nc %h %p`, whose remote command
a shell on the jump host reads) runs what the name holds. The attack, for real: `remedy
--ssh-config CFG facts 'root@$(touch$IFS/…/canary)'` as root, and an inventory whose
`ansible_host` (or `ansible_user`) is such a name: root ran `touch` (the canary). OpenSSH
9.6 refuses these characters in host and user names (CVE-2023-51385); remedy now does too
(`transport.ssh.check_shell_safe`): exit 2 (a failed host in a fleet), no canary. Control:
a plain host name still goes through the same ProxyCommand.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


def _config(tmp_path: Path) -> Path:
    cfg = tmp_path / "ssh_config"
    cfg.write_text(
        "Host *\n"
        f'  ProxyCommand bash -c "touch {tmp_path}/proxy-ran; exec 3<>/dev/tcp/%h/%p; '
        'cat <&3 & cat >&3"\n'
    )
    return cfg


def _remedy(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(REPO / "src"), "HOME": str(tmp_path),
           "XDG_STATE_HOME": str(tmp_path / "s"), "XDG_CACHE_HOME": str(tmp_path / "c")}  # fmt: skip
    return subprocess.run(
        [sys.executable, "-m", "remedy", "--ssh-config", str(_config(tmp_path)), *args],
        capture_output=True, text=True, env=env, timeout=120, cwd=tmp_path,
    )  # fmt: skip


def test_a_target_with_shell_characters_runs_nothing(tmp_path: Path):
    canary = tmp_path / "canary"
    r = _remedy(tmp_path, "facts", f"root@$(touch$IFS{canary})")
    assert not canary.exists(), "the host name ran as root through the ProxyCommand"
    assert r.returncode == 2 and "shell characters" in r.stderr, r.stderr[-800:]


@pytest.mark.parametrize("var", ["ansible_host", "ansible_user"])
def test_an_inventory_name_with_shell_characters_runs_nothing(tmp_path: Path, var: str):
    canary = tmp_path / "canary"
    inv = tmp_path / "inv.ini"
    inv.write_text(f"[g]\nh ansible_port=9 {var}=$(touch$IFS{canary})\n")
    r = _remedy(tmp_path, "facts", "--inventory", str(inv))
    out = r.stdout + r.stderr
    assert not canary.exists(), f"{var} ran as root through the ProxyCommand"
    assert "internal error" not in out and "shell characters" in out, out[-800:]


def test_control_a_plain_host_goes_through_the_proxy_command(tmp_path: Path):
    r = _remedy(tmp_path, "facts", "root@127.0.0.1:9")
    assert (tmp_path / "proxy-ran").exists(), r.stderr[-800:]
    assert "shell characters" not in r.stderr
