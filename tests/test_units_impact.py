"""Unit-aware impact: seed 002's CUDA_HOME=/dev/null and the good fix, on a unit read from a tree.

The same previews run against a real systemd in tests/test_units_systemd.py.
"""

from __future__ import annotations

import asyncio
import io
import json
import os
from pathlib import Path

import pytest
from rich.console import Console

from remedy.errors import InputError
from remedy.model import Facts
from remedy.transport import LocalTransport
from remedy.units import (
    SourceFile,
    UnitFiles,
    facts_for_unit,
    impact_unit,
    load_unit,
    print_unit_impact,
    unit_impact_from_files,
)

from conftest import base_facts

UNIT = "sglang-k26.service"
FRAG = f"/etc/systemd/system/{UNIT}"
SEED = """[Unit]
Description=SGLang Kimi K2.6
After=network-online.target

[Service]
Type=simple
Environment=OMP_NUM_THREADS=8
Environment="PATH=/usr/local/cuda-12.8/bin:/root/venv_sglang211/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
ExecStart=/root/venv_sglang211/bin/python -m sglang.launch_server --model-path /models/Kimi-K2.6 --tp 8 --port 30000
Restart=on-failure
"""
CU13 = "/usr/local/cuda-13.0"


def seed_facts(with_cu13: bool = True) -> Facts:
    d = base_facts("system")
    if with_cu13:
        d["toolkits"].append(
            {**d["toolkits"][0], "prefix": CU13, "aliases": [], "nvcc_release": "13.0",
             "ptxas_release": "13.0", "cicc_release": "13.0", "cudart_version": 13000}
        )  # fmt: skip
    return Facts.model_validate(d)


def write_tree(root: Path, files: dict[str, str]) -> None:
    for path, text in files.items():
        p = root / path.lstrip("/")
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text)


def snapshot(root: Path) -> dict[str, bytes]:
    return {str(p): p.read_bytes() for p in root.rglob("*") if p.is_file() and not p.is_symlink()}


def run_impact(root: Path, kb, changes, facts=None, **kw):
    return asyncio.run(
        impact_unit(LocalTransport(host="gpu-1"), kb, UNIT, changes, facts, root=str(root), **kw)
    )


@pytest.fixture
def seed_root(tmp_path: Path) -> Path:
    write_tree(tmp_path, {FRAG: SEED})
    return tmp_path


def test_dev_null_names_the_three_jit_consumers_as_broken(kb, seed_root: Path):
    before = snapshot(seed_root)
    imp = run_impact(seed_root, kb, {"CUDA_HOME": "/dev/null"}, seed_facts(with_cu13=False))
    assert snapshot(seed_root) == before  # nothing written
    assert {"sglang-jit-kernel", "flashinfer-jit", "torch-cpp-extension"} <= set(imp.breaks)
    by = {c.component: c for c in imp.impact.consumers}
    assert "/dev/null/bin/nvcc: not found" in by["sglang-jit-kernel"].error
    assert "NotADirectoryError" in by["flashinfer-jit"].error
    assert "/dev/null/include: Not a directory" in by["torch-cpp-extension"].error
    picks = {p.component: p for p in imp.impact.picks}
    assert "/usr/local/cuda-12.8" in picks["sglang-jit-kernel"].before
    assert picks["sglang-jit-kernel"].after.startswith("/dev/null via CUDA_HOME")
    assert imp.changes[0].before is None and imp.changes[0].after == "/dev/null"
    assert imp.python == "/root/venv_sglang211"
    assert imp.launch["flags"]["tp"] == "8"
    assert not imp.ok
    assert imp.unaffected_variables == ["OMP_NUM_THREADS", "PATH"]
    out = io.StringIO()
    print_unit_impact(Console(file=out, width=160, color_system=None), imp)
    text = out.getvalue()
    for needle in (
        "BREAKS",
        f"{UNIT}.d/50-remedy.conf",
        "Verdict: do not apply",
        "SGLang jit_kernel",
    ):
        assert needle in text, needle


def test_good_fix_breaks_nothing_and_previews_the_exact_environment(kb, seed_root: Path):
    imp = run_impact(seed_root, kb, {"CUDA_HOME": CU13}, seed_facts())
    assert imp.ok and imp.breaks == []
    assert {f.rule for f in imp.impact.fixed_findings} == {
        "flashinfer-sm12x-gate",
        "toolkit-major-matches-torch",
    }
    assert imp.environment_after == {
        "OMP_NUM_THREADS": "8",
        "PATH": "/usr/local/cuda-12.8/bin:/root/venv_sglang211/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
        "CUDA_HOME": CU13,
    }
    assert imp.show_after.endswith(f" CUDA_HOME={CU13}")
    assert imp.restart == ["systemctl daemon-reload", f"systemctl restart {UNIT}"]
    json.loads(imp.model_dump_json())  # --json works


def test_environment_file_shadows_a_dropin_environment_line(kb, tmp_path: Path):
    unit = SEED.replace("Restart=", "EnvironmentFile=/etc/default/sglang\nRestart=")
    write_tree(tmp_path, {FRAG: unit, "/etc/default/sglang": "CUDA_HOME=/usr/local/cuda-12.8\n"})
    imp = run_impact(tmp_path, kb, {"CUDA_HOME": CU13}, seed_facts())
    ch = imp.changes[0]
    assert not ch.effective and ch.after == "/usr/local/cuda-12.8"
    assert "EnvironmentFile= at /etc/default/sglang:1" in ch.shadowed_by
    assert "overrides every Environment= line" in ch.shadowed_by
    assert imp.impact is None  # nothing changes for the process: no blast radius to show
    assert not imp.ok and any("would get" in w for w in imp.warnings)


def test_a_later_dropin_shadows_remedys(kb, tmp_path: Path):
    write_tree(
        tmp_path,
        {FRAG: SEED, f"{FRAG}.d/override.conf": "[Service]\nEnvironment=CUDA_HOME=/opt/other\n"},
    )
    imp = run_impact(tmp_path, kb, {"CUDA_HOME": CU13}, seed_facts())
    ch = imp.changes[0]
    assert not ch.effective and ch.after == "/opt/other"
    assert "override.conf" in ch.shadowed_by and "sorted after 50-remedy.conf" in ch.shadowed_by


def test_unset_and_unknown_variables(kb, tmp_path: Path):
    unit = SEED.replace(
        "Environment=OMP", 'Environment="FLASHINFER_CUDA_ARCH_LIST=12.0"\nEnvironment=OMP'
    )
    write_tree(tmp_path, {FRAG: unit})
    imp = run_impact(
        tmp_path, kb, {"FLASHINFER_CUDA_ARCH_LIST": None, "OMP_NUM_THREADS": "16"}, seed_facts()
    )
    assert "UnsetEnvironment=FLASHINFER_CUDA_ARCH_LIST" in imp.dropin.content
    assert "FLASHINFER_CUDA_ARCH_LIST" not in imp.effective_after
    assert imp.environment_after["FLASHINFER_CUDA_ARCH_LIST"] == "12.0"  # show still lists it
    assert imp.unknown_variables == ["OMP_NUM_THREADS"]
    assert imp.impact is not None and imp.impact.changes == {"FLASHINFER_CUDA_ARCH_LIST": None}
    assert all(c.effective for c in imp.changes)


def test_strict_refuses_a_unit_whose_lines_systemd_ignores(kb, tmp_path: Path):
    write_tree(tmp_path, {FRAG: SEED.replace("Restart=", 'Environment="CUDA_HOME=/x\nRestart=')})
    with pytest.raises(InputError, match=r"(?s)ignores or rejects.*Invalid syntax"):
        run_impact(tmp_path, kb, {"CUDA_HOME": CU13}, seed_facts())
    imp = run_impact(tmp_path, kb, {"CUDA_HOME": CU13}, seed_facts(), strict=False)
    assert imp.ok


@pytest.mark.parametrize(
    ("changes", "msg"),
    [
        ({"CUDA_HOME": "/usr/local/cuda-13.0\nLD_PRELOAD=/evil.so"}, "newline"),
        ({}, "no change given"),
    ],
)
def test_bad_changes_are_clear_errors_and_write_nothing(kb, seed_root: Path, changes, msg):
    before = snapshot(seed_root)
    with pytest.raises(InputError, match=msg):
        run_impact(seed_root, kb, changes, seed_facts())
    assert snapshot(seed_root) == before


def test_missing_environment_file_and_missing_unit(kb, tmp_path: Path):
    write_tree(tmp_path, {FRAG: SEED.replace("Restart=", "EnvironmentFile=/etc/nope\nRestart=")})
    with pytest.raises(InputError, match="does not exist; systemd refuses to start the unit"):
        run_impact(tmp_path, kb, {"CUDA_HOME": CU13}, seed_facts())
    os.remove(tmp_path / FRAG.lstrip("/"))
    with pytest.raises(InputError, match="not found"):
        run_impact(tmp_path, kb, {"CUDA_HOME": CU13}, seed_facts())


def test_loaded_state_differs_from_disk_and_inactive_unit(kb):
    files = UnitFiles(UNIT, SourceFile(FRAG, SEED.encode()))
    files.live = {"Environment": "OMP_NUM_THREADS=4", "ActiveState": "inactive"}
    imp = unit_impact_from_files(files, kb, {"CUDA_HOME": CU13}, seed_facts(), verify=False)
    assert any("daemon-reload is pending" in w for w in imp.warnings)
    assert imp.restart == ["systemctl daemon-reload"]
    assert any("takes effect at its next start" in w for w in imp.warnings)


def test_facts_for_unit_uses_the_effective_environment():
    files = UnitFiles(
        UNIT,
        SourceFile(FRAG, SEED.replace("Restart=", "EnvironmentFile=/e\nRestart=").encode()),
        env_files={"/e": b"CUDA_HOME=/from/file\n"},
    )
    unit = load_unit(files)
    f = facts_for_unit(seed_facts(), unit, "gpu-1")
    svc = next(s for s in f.services if s.name == UNIT)
    assert svc.environment["CUDA_HOME"] == "/from/file"
    assert svc.environment_files == ["/e"] and svc.python == "/root/venv_sglang211"
    assert f.workload.service == UNIT and f.workload.python == "/root/venv_sglang211"
    assert len([s for s in f.services if s.name == UNIT]) == 1


def test_without_facts_only_the_knowledge_graph_speaks(kb, seed_root: Path):
    imp = run_impact(seed_root, kb, {"CUDA_HOME": "/dev/null"}, None)
    assert imp.impact is not None and not imp.impact.simulated
    assert {"sglang-jit-kernel", "flashinfer-jit", "torch-cpp-extension"} <= set(imp.breaks)
    assert any("no host facts given" in w for w in imp.warnings)
