"""asyncssh's default X.509 trust (`~/.ssh/ca-bundle.crt`, `~/.ssh/crt`) comes only from a
place root or remedy's user owns.

With no `x509_trusted_certs` given, asyncssh's options open `~/.ssh/ca-bundle.crt` of $HOME by
name with a plain open() whenever `os.access` says it is readable, before any connection; a
HOME `sudo` kept is the invoking user's. The attacks, for real, through `remedy facts
root@127.0.0.1:9` as root with HOME uid 65534's: its `~/.ssh/ca-bundle.crt` a FIFO nobody
writes to (remedy hung in open() for ever; SIGTERM from `timeout` did not end it), a link to
/dev/zero (all memory: MemoryError under a 2 GiB cap). The redteam-12 fix of the default keys
left this one file. Now remedy reads it itself (`transport.ssh.default_x509_trust`, through
`read_key_file`) and names `~/.ssh/crt` only where `untrusted_tree` passes it. Control:
root's own bundle still reaches asyncssh.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from foreign_home import NOBODY, cap_memory, home_owned_by

REPO = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="a HOME another user owns")


@pytest.mark.parametrize("kind", ["fifo", "/dev/zero"])
def test_a_ca_bundle_in_a_home_sudo_kept_does_not_hang_or_exhaust_root(tmp_path: Path, kind: str):
    home = home_owned_by(tmp_path, NOBODY)
    bundle = home / ".ssh" / "ca-bundle.crt"
    if kind == "fifo":
        os.mkfifo(bundle)
    else:
        bundle.symlink_to("/dev/zero")
    os.chown(bundle, NOBODY, NOBODY, follow_symlinks=False)
    env = {**os.environ, "PYTHONPATH": str(REPO / "src"), "HOME": str(home),
           "XDG_STATE_HOME": str(tmp_path / "s"), "XDG_CACHE_HOME": str(tmp_path / "c")}  # fmt: skip
    env.pop("SSH_AUTH_SOCK", None)
    try:
        r = subprocess.run(
            [sys.executable, "-m", "remedy", "facts", "root@127.0.0.1:9"],
            capture_output=True, text=True, env=env, timeout=60, cwd=tmp_path, preexec_fn=cap_memory,
        )  # fmt: skip
    except subprocess.TimeoutExpired:
        pytest.fail("root hung opening uid 65534's ~/.ssh/ca-bundle.crt")
    out = r.stdout + r.stderr
    assert "internal error" not in out and "MemoryError" not in out, out[-800:]
    assert r.returncode == 4 and "cannot connect" in out, out[-800:]  # tried: port 9 refused


@pytest.mark.parametrize("owner", [NOBODY, 0], ids=["nobody", "control-root"])
def test_a_trust_dir_another_user_owns_is_not_roots(tmp_path: Path, monkeypatch, owner: int):
    from remedy.transport.ssh import SSHTransport

    home = home_owned_by(tmp_path, owner)
    (home / ".ssh" / "crt").mkdir()
    (home / ".ssh" / "ca-bundle.crt").write_bytes(b"")
    for p in (home / ".ssh" / "crt", home / ".ssh" / "ca-bundle.crt"):
        os.chown(p, owner, owner)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("SSH_AUTH_SOCK", raising=False)
    opts = SSHTransport("root@127.0.0.1:9")._options()
    if owner == NOBODY:
        assert opts.x509_trusted_certs is None, "uid 65534's bundle was read"
        assert not opts.x509_trusted_cert_paths, opts.x509_trusted_cert_paths
    else:
        assert opts.x509_trusted_certs == [], "root's own bundle is not read"
        assert opts.x509_trusted_cert_paths == [str(home / ".ssh" / "crt")]
