"""A sparse log is refused at once, not read as gigabytes of zeros.

The attack, for real: uid 65534's build log holds 80 KB of text (the sniff of its head passes),
then `truncate -s 64G`: 64 GiB of holes, allocated nowhere, read as zeros. `remedy diagnose
--log` read every byte (4 GB took ~4 s; a terabyte held root's job for the better part of an
hour). Now a regular log with more than `reader.HOLES_MAX` bytes of holes (SEEK_DATA /
SEEK_HOLE, counted only where its allocated blocks say so) is refused with a clear error,
within a second of CPU. The control: the same text without the holes is diagnosed.
"""

from __future__ import annotations

import os
import resource
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
TEXT = "".join(f"step {i}: building kernel objects\n" for i in range(2500))
FATAL = "nvcc fatal   : Unsupported gpu architecture 'compute_130'\n"


def _diagnose(tmp: Path, log: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(REPO / "src"), "XDG_CACHE_HOME": str(tmp / "c")}
    return subprocess.run([sys.executable, "-m", "remedy", "diagnose", "--log", str(log)],
                          capture_output=True, text=True, env=env, timeout=45)  # fmt: skip


def _log(tmp: Path) -> Path:
    log = tmp / "build.log"
    log.write_text(TEXT + FATAL)
    if os.geteuid() == 0:
        os.chown(log, 65534, 65534)
    return log


def test_a_log_that_is_mostly_holes_is_refused_at_once(tmp_path: Path):
    log = _log(tmp_path)
    os.truncate(log, 64 << 30)
    if os.stat(log).st_blocks * 512 > 1 << 30:
        pytest.skip("this filesystem allocates a truncated file's holes")
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    try:
        r = _diagnose(tmp_path, log)
    except subprocess.TimeoutExpired:
        pytest.fail("remedy read 64 GiB of holes")
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    assert r.returncode == 2 and "holes" in r.stderr, r.stderr
    # CPU seconds, not wall: a loaded CI host stretches the wall time of any start-up, while
    # reading the holes costs ~1 CPU-s per GB (64 GiB: about a minute)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    assert cpu < 5, f"refusing the log cost {cpu:.1f} CPU-s"


def test_control_the_same_log_without_holes_is_diagnosed(tmp_path: Path):
    r = _diagnose(tmp_path, _log(tmp_path))
    assert r.returncode in (0, 1) and "compute_130" in r.stdout, r.stdout + r.stderr
