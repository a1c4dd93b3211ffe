"""`impact --unit` checks the drop-in with `systemd-analyze verify` on a temporary root built
from the host's unit files: the host's paths must land inside that root.

The attack, for real: a host (its unit file, or `systemctl show`'s FragmentPath/DropInPaths
over SSH, which a hostile host answers as it likes) names paths with `..`. Before, the
fragment and drop-ins were written at `root / path.lstrip("/")` and every ExecStart=
executable stubbed the same way, so `/../../etc/cron.d/x` put the host's bytes (or an
executable stub) on the controller, as root. The canaries are files outside the temporary
root that must not appear.
"""

from __future__ import annotations

import asyncio
import shutil
from pathlib import Path

import pytest

from remedy.transport import LocalTransport
from remedy.units import SourceFile, UnitFiles, impact_unit
from remedy.units.dropin import verify_unit_files

needs_analyze = pytest.mark.skipif(
    not shutil.which("systemd-analyze"), reason="systemd-analyze is not installed"
)
UP = "/.." * 24  # more than any temporary directory is deep


@needs_analyze
def test_host_paths_with_dotdot_stay_inside_the_verify_root(tmp_path: Path):
    out = tmp_path / "outside"
    out.mkdir()
    frag = f"[Service]\nExecStart={UP}{out}/canary-exec --x\n".encode()
    files = UnitFiles(
        name="x.service",
        fragment=SourceFile(f"/etc/systemd/system{UP}{out}/canary-frag", frag),
        dropins=[SourceFile(f"/etc/systemd/system/x.service.d{UP}{out}/canary-dropin", b"")],
    )
    res = verify_unit_files(files)
    assert res.ran, res.note
    assert sorted(p.name for p in out.iterdir()) == [], "a host path left the verify root"


@needs_analyze
def test_a_hostile_execstart_through_impact_unit_writes_nothing_outside(kb, tmp_path: Path):
    """End to end: the unit read from a host tree (LocalTransport root=), previewed with
    verify; its ExecStart climbs out of the temporary root."""
    host = tmp_path / "host"
    out = tmp_path / "outside"
    out.mkdir()
    unit = host / "etc/systemd/system/evil.service"
    unit.parent.mkdir(parents=True)
    unit.write_text(f"[Service]\nExecStart={UP}{out}/canary-exec\n")
    imp = asyncio.run(
        impact_unit(
            LocalTransport(host="gpu-1"), kb, "evil.service", {"CUDA_HOME": "/usr/local/cuda"},
            None, root=str(host), strict=False,
        )
    )  # fmt: skip
    assert imp.dropin.verify is not None and imp.dropin.verify.ran, imp.dropin.verify
    assert not (out / "canary-exec").exists(), "ExecStart's stub was written outside the root"
    assert list(out.iterdir()) == []
