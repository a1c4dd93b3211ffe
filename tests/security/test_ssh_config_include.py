"""Every file asyncssh `Include`s is a file remedy checked first.

remedy checks an ssh config and the files its `Include` lines name (`untrusted_config`)
before asyncssh reads them, since their `ProxyCommand` runs as root. The check found the
included files with a regex and `glob.glob`, asyncssh with its own parser and pathlib's
glob: `glob.glob` skips hidden names and reads `**` as `*`, the regex missed a quoted
`"Include"`. The attacks, for real, as root, with root's own `--ssh-config` (root's file in
root's directory): `Include DIR/*.conf` where DIR (root's) holds `.team.conf` of uid 65534's;
`Include DIR/**/*.conf` where `DIR/team/` is uid 65534's, its config two levels down; a line
`"Include" FILE` naming uid 65534's file: asyncssh read each, and root ran its `ProxyCommand`
(canary `0`). Now the included files are found as asyncssh finds them
(`transport.ssh._include_words`, `_included_files`) and refused by name (exit 5). Control:
root's own hidden include is read and its ProxyCommand runs.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="files another user owns")
NOBODY = 65534
REPO = Path(__file__).resolve().parents[2]


def _facts(tmp_path: Path, cfg: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(REPO / "src"), "HOME": str(tmp_path / "home"),
           "XDG_CACHE_HOME": str(tmp_path / "cache"), "XDG_STATE_HOME": str(tmp_path / "state")}  # fmt: skip
    env.pop("SSH_AUTH_SOCK", None)
    return subprocess.run(
        [sys.executable, "-m", "remedy", "--ssh-config", str(cfg), "facts", "root@127.0.0.1:9"],
        capture_output=True, text=True, env=env, timeout=120, cwd="/",
    )  # fmt: skip


def _proxy(canary: Path) -> str:
    return f"Host *\n  ProxyCommand sh -c 'id -u > {canary}'\n"


@pytest.mark.parametrize("how", ["hidden", "double-star", "quoted-option"])
def test_an_include_the_check_did_not_find_runs_nothing(tmp_path: Path, how: str):
    tmp_path.chmod(0o755)
    etc, canary = tmp_path / "etc", tmp_path / "canary"
    etc.mkdir()
    if how == "hidden":
        theirs, line = etc / ".team.conf", f"Include {etc}/*.conf"
    elif how == "double-star":
        team = etc / "team"
        (team / "sub").mkdir(parents=True)
        for d in (team, team / "sub"):
            os.chown(d, NOBODY, NOBODY)
        theirs, line = team / "sub" / "x.conf", f"Include {etc}/**/*.conf"
    else:
        (etc / "team").mkdir()
        os.chown(etc / "team", NOBODY, NOBODY)
        theirs, line = etc / "team" / "x.conf", f'"Include" {etc}/team/x.conf'
    theirs.write_text(_proxy(canary))
    os.chown(theirs, NOBODY, NOBODY)
    cfg = tmp_path / "root_ssh_config"
    cfg.write_text(line + "\n")
    r = _facts(tmp_path, cfg)
    assert not canary.exists(), f"root ran uid 65534's ProxyCommand: {canary.read_text()!r}"
    assert r.returncode == 5 and "owned by uid 65534" in r.stderr, r.stderr[-1500:]


def test_control_roots_own_hidden_include_is_read(tmp_path: Path):
    tmp_path.chmod(0o755)
    etc, canary = tmp_path / "etc", tmp_path / "canary"
    etc.mkdir()
    (etc / ".site.conf").write_text(_proxy(canary))
    cfg = tmp_path / "root_ssh_config"
    cfg.write_text(f"Include {etc}/*.conf\n")
    r = _facts(tmp_path, cfg)
    assert canary.read_text().strip() == "0", r.stderr[-1500:]
