"""An identity file an inventory names is read only if it is a small regular file.

`ansible_ssh_private_key_file` comes from the inventory (often a shared file). The attacks,
for real, through `remedy facts --inventory INV`: the key is `/dev/zero` (asyncssh read it
without end: all of root's memory, here capped at 2 GiB so the test machine survives: a
MemoryError, exit 70), or a FIFO nobody writes to (the check's `open()` waited for ever).
Now the file must be a regular file of at most 1 MiB (a private key is a few KB), opened
without blocking: a clear error naming the host and the file, the host not contacted.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from foreign_home import cap_memory

REPO = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("kind", ["/dev/zero", "fifo"])
def test_an_identity_file_that_is_no_key_file_is_refused(tmp_path: Path, kind: str):
    key = Path("/dev/zero")
    if kind == "fifo":
        key = tmp_path / "key"
        os.mkfifo(key)
    inv = tmp_path / "inv.ini"
    inv.write_text(
        f"[g]\nh ansible_host=127.0.0.1 ansible_port=9 ansible_ssh_private_key_file={key}\n"
    )
    env = {**os.environ, "PYTHONPATH": str(REPO / "src"), "HOME": str(tmp_path),
           "XDG_STATE_HOME": str(tmp_path / "s"), "XDG_CACHE_HOME": str(tmp_path / "c")}  # fmt: skip
    try:
        r = subprocess.run(
            [sys.executable, "-m", "remedy", "facts", "--inventory", str(inv)],
            capture_output=True, text=True, env=env, timeout=60, cwd=tmp_path, preexec_fn=cap_memory,
        )  # fmt: skip
    except subprocess.TimeoutExpired:
        pytest.fail("remedy hung on the identity file")
    out = r.stdout + r.stderr
    assert "internal error" not in out and "MemoryError" not in out, out[-800:]
    assert f"the identity file {key}" in out and "not a regular file" in out, out[-800:]


def test_a_huge_file_named_as_known_hosts_is_not_read_whole(tmp_path: Path):
    """`remedy_known_hosts` naming an 8 GiB (sparse) file, a stand-in for a big log: read whole
    before the connection (MemoryError under the 2 GiB cap); now read up to its cap (16 MiB),
    beyond which it is no known_hosts file."""
    big = tmp_path / "big.log"
    with open(big, "wb") as f:
        f.truncate(8 << 30)
    inv = tmp_path / "inv.ini"
    inv.write_text(f"[g]\nh ansible_host=127.0.0.1 ansible_port=9 remedy_known_hosts={big}\n")
    env = {**os.environ, "PYTHONPATH": str(REPO / "src"), "HOME": str(tmp_path),
           "XDG_STATE_HOME": str(tmp_path / "s"), "XDG_CACHE_HOME": str(tmp_path / "c")}  # fmt: skip
    r = subprocess.run(
        [sys.executable, "-m", "remedy", "facts", "--inventory", str(inv)],
        capture_output=True, text=True, env=env, timeout=120, cwd=tmp_path, preexec_fn=cap_memory,
    )  # fmt: skip
    out = r.stdout + r.stderr
    assert "internal error" not in out and "MemoryError" not in out, out[-800:]
