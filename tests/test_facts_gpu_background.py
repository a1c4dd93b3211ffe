"""nvidia-smi in the background of the main batch: same GPU facts as in line, no file left.

The batch's GPU part runs for real in a real shell here, with a stand-in nvidia-smi (a
script printing a row recorded from a real H200, or failing with a given status) first on
PATH. A private dir that others could rename (TMPDIR group/world-writable, not sticky) must
not hold the output: the query then runs in line, as it always did. An nvidia-smi another
user owns is not run at all (remedy.trust), in the background or in line.
"""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

import pytest

from remedy.facts.collect import GPU_BACKGROUND, GPU_COLLECT, library
from remedy.facts.gpus import GpuCollector
from remedy.facts.sections import split_sections
from remedy.transport.local import LocalTransport

T = "@@gpu-bg-test@@"
ROW = "0, NVIDIA H200, 9.0, 580.159.04, 143771 MiB"


def fake_smi(bin_dir: Path, status: int, canary: Path | None = None) -> None:
    bin_dir.mkdir(parents=True, exist_ok=True)
    smi = bin_dir / "nvidia-smi"
    touch = f"touch {canary}\n" if canary else ""
    smi.write_text(f"#!/bin/sh\n{touch}echo '{ROW}'\necho 'to stderr' >&2\nexit {status}\n")
    smi.chmod(0o755)


def run(tmp: Path, tmpdir: Path, status: int = 0, background: bool = True, owner: int = 0):
    fake_smi(tmp / "bin", status, tmp / "canary")
    os.chown(tmp / "bin" / "nvidia-smi", owner, owner)
    gpu = (GPU_BACKGROUND if background else GpuCollector().command()) + "m between\n"
    script = library(T) + gpu + (GPU_COLLECT if background else "") + "m end\n"
    env = {"PATH": f"{tmp / 'bin'}:/usr/bin:/bin", "TMPDIR": str(tmpdir)}
    r = asyncio.run(LocalTransport("local").run(script, timeout=30, env=env))
    sections = split_sections(r.stdout.decode(), T)
    return [s.name for s in sections], GpuCollector().parse_sections(sections)


@pytest.mark.parametrize("status", [0, 9])
def test_background_query_gives_the_in_line_facts_and_leaves_nothing(
    tmp_path: Path, status: int
) -> None:
    tmp_path.chmod(0o755)
    private = tmp_path / "tmp"
    private.mkdir(mode=0o755)
    order, got = run(tmp_path, private, status)
    _, want = run(tmp_path, private, status, background=False)
    assert order.index("gpu") > order.index("between")  # it ran in the background
    assert (got.gpus, got.notes) == (want.gpus, want.notes)
    if status == 0:
        assert got.gpus[0].name == "NVIDIA H200"
        assert got.notes == ["nvidia-smi printed lines that are not GPU rows: to stderr"]
    else:
        assert "exit 9" in got.notes[0]
    assert list(private.iterdir()) == []


@pytest.mark.skipif(os.geteuid() != 0, reason="the check accepts only root's or our own dirs")
def test_a_dir_others_can_rename_in_is_not_used(tmp_path: Path) -> None:
    tmp_path.chmod(0o755)
    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o777)  # writable by all, not sticky: someone could swap our dir
    order, got = run(tmp_path, shared)
    assert order.index("gpu") < order.index("between")  # in line, as before
    assert got.gpus[0].name == "NVIDIA H200"
    assert list(shared.iterdir()) == []  # the dir it made was removed again


@pytest.mark.skipif(os.geteuid() != 0, reason="chown to another user needs root")
@pytest.mark.parametrize("background", [True, False])
def test_an_nvidia_smi_another_user_owns_is_not_run(tmp_path: Path, background: bool) -> None:
    """Root's PATH often starts with a venv's bin (/etc/environment on the seed hosts); its
    service user could drop an nvidia-smi there. It is not executed (no canary), and the
    facts say why instead of listing GPUs. Control: the same file owned by root does run."""
    tmp_path.chmod(0o755)
    private = tmp_path / "tmp"
    private.mkdir(mode=0o755)
    order, got = run(tmp_path, private, background=background, owner=65534)
    assert not (tmp_path / "canary").exists()
    assert got.gpus == [] and "gpu.untrusted" in order
    assert got.notes[0].startswith("nvidia-smi not executed: ") and "owned by" in got.notes[0]
    run(tmp_path, private, background=background, owner=0)
    assert (tmp_path / "canary").exists()
