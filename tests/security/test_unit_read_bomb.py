"""`impact --unit` reads a host's unit files as a tar the host sends; it must stay bounded.

The host's script sends its unit files as `tar -c` (no compression) in base64, but the
controller opened that tar with `tarfile.open(fileobj=…)`, whose default mode takes gzip, bz2
and xz as well, and read each member whole (`extractfile(m).read()`): the reply is capped at
64 MiB, but a hostile host (its reply is not trusted, class 9) can send ~2 MiB of gzip that
holds a 2 GiB "unit file", and the controller allocated it all (MemoryError under an
address-space cap: exit 70; without a cap, root's process and its neighbours at the mercy of
the OOM killer). The attack, for real: the hostile reply to `read_unit`, in a child process
capped at 1 GiB of address space. Now the tar is read uncompressed only and no member beyond
the per-file cap (`units.host.MAX_FILE`, as the host's `head -c` path) is read: a clear
TransportError. Control: a real unit file in an uncompressed tar is read.
"""

from __future__ import annotations

import base64
import io
import subprocess
import sys
import tarfile
import textwrap
from pathlib import Path

SRC = str(Path(__file__).resolve().parents[2] / "src")
UNIT = "/etc/systemd/system/evil.service"


def _tar(size: int, mode: str) -> bytes:
    """A tar (mode 'w:gz' or 'w') holding UNIT of `size` bytes of zeros (a real unit text
    when size is 0)."""
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode=mode) as tf:
        data = b"[Service]\nExecStart=/usr/bin/true\n" if size == 0 else None
        info = tarfile.TarInfo(UNIT.lstrip("/"))
        if data is not None:
            info.size = len(data)
            tf.addfile(info, io.BytesIO(data))
        else:
            info.size = size

            class Zeros:
                left = size

                def read(self, n: int = -1) -> bytes:
                    n = self.left if n < 0 else min(n, self.left)
                    self.left -= n
                    return bytes(n)

            tf.addfile(info, Zeros())  # type: ignore[arg-type]
    return out.getvalue()


def _reply(tar: bytes) -> bytes:
    names = base64.b64encode(UNIT.encode() + b"\n")
    return b"\x1eN " + names + b"\n\x1eP " + names + b"\n\x1eT " + base64.b64encode(tar) + b"\n"


CHILD = textwrap.dedent(
    """
    import asyncio, resource, sys
    from remedy.errors import RemedyError
    from remedy.transport.base import CommandResult
    from remedy.units.host import read_unit

    reply = sys.stdin.buffer.read()
    resource.setrlimit(resource.RLIMIT_AS, (1 << 30, 1 << 30))

    class Hostile:
        host = "hostile"
        async def run(self, cmd, **kw):
            return CommandResult(0, reply, b"", 0.0)

    try:
        files = asyncio.run(read_unit(Hostile(), "evil.service", root="/srv/img"))
    except MemoryError:
        print("MEMORY-ERROR"); sys.exit(70)
    except RemedyError as e:
        print("REFUSED", e); sys.exit(0)
    print("READ", len(files.fragment.data) if files.fragment else None)
    """
)


def _run_child(reply: bytes) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", CHILD], input=reply.decode("latin-1"), text=True,
        encoding="latin-1", capture_output=True, timeout=300, env={"PYTHONPATH": SRC},
    )  # fmt: skip


def test_a_compressed_tar_bomb_from_a_host_is_refused_not_allocated():
    bomb = _tar(2 << 30, "w:gz")
    assert len(bomb) < 4 << 20  # ~2 MiB on the wire, far below the 64 MiB output cap
    r = _run_child(_reply(bomb))
    assert "MEMORY-ERROR" not in r.stdout, "the controller tried to hold the 2 GiB member"
    assert r.returncode == 0 and r.stdout.startswith("REFUSED"), r.stdout + r.stderr[-2000:]


def test_a_huge_uncompressed_member_header_is_not_read_whole():
    """An uncompressed tar whose member is larger than the per-file cap (5 MiB here, inside
    the output cap): refused, as the host's own `head -c` path would have cut it."""
    r = _run_child(_reply(_tar(5 << 20, "w")))
    assert r.returncode == 0 and r.stdout.startswith("REFUSED"), r.stdout + r.stderr[-2000:]


def test_control_a_real_unit_in_a_plain_tar_is_read():
    r = _run_child(_reply(_tar(0, "w")))
    assert r.returncode == 0 and r.stdout.strip() == "READ 34", r.stdout + r.stderr[-2000:]
