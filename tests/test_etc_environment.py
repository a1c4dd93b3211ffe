"""The login scope's /etc/environment edit (remedy.operations.SetEnv): pam_env gives every SSH
session, a non-login `ssh host cmd` included, the variables of /etc/environment and never reads
/etc/profile.d, so a fix for a server started by hand is written to both. Here the generated
command runs against a copy of the file (the real one is exercised by
tests/test_toolchain_sandbox.py over real SSH and PAM)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from remedy.operations import SetEnv
from remedy.operations.writers import etc_environment_line, pam_env_plain

CU13 = "/opt/v/lib/python3.11/site-packages/nvidia/cu13"


def run_on_copy(op: SetEnv, tmp_path: Path, text: str | None) -> str | None:
    """The op's /etc/environment command, pointed at a copy of the file in tmp_path."""
    env = tmp_path / "environment"
    if text is not None:
        env.write_text(text)
    cmd = op.commands()[-1]
    assert "/etc/environment" in cmd
    cmd = cmd.replace(f"/etc/.environment.remedy-{op.name}.tmp", str(tmp_path / "env.tmp"))
    cmd = cmd.replace("/etc/environment", str(env))
    subprocess.run(["sh", "-ec", cmd], check=True)
    return env.read_text() if env.exists() else None


def test_set_replaces_every_assignment_and_keeps_the_rest(tmp_path):
    op = SetEnv(scope="profile", name="cuda-home", set={"CUDA_HOME": CU13})
    old = (
        "# comment CUDA_HOME=/x\nPATH=/usr/bin:/bin\nCUDA_HOME=/stale\n"
        "  export CUDA_HOME=/stale2\nCUDA_HOME_X=/keep\nLANG=C.UTF-8\n"
    )
    new = run_on_copy(op, tmp_path, old)
    assert new == (
        "# comment CUDA_HOME=/x\nPATH=/usr/bin:/bin\nCUDA_HOME_X=/keep\nLANG=C.UTF-8\n"
        f"CUDA_HOME={CU13}\n"
    )
    (tmp_path / "environment").unlink()
    assert run_on_copy(op, tmp_path, None) == f"CUDA_HOME={CU13}\n"  # no file yet


def test_unset_removes_the_lines(tmp_path):
    op = SetEnv(scope="profile", name="u", unset=["FLASHINFER_CUDA_ARCH_LIST"])
    new = run_on_copy(op, tmp_path, "FLASHINFER_CUDA_ARCH_LIST=12.0a\nPATH=/bin\n")
    assert new == "PATH=/bin\n"


@pytest.mark.parametrize("value", ["a b", "/x#y", '/x"', "/x'", "$HOME/x", "/x\\y", "", "a\nb"])
def test_values_pam_env_cannot_read_back_stay_out(value):
    assert not pam_env_plain(value)
    with pytest.raises(ValueError):
        etc_environment_line("CUDA_HOME", value)
    if value and "\n" not in value:
        op = SetEnv(scope="profile", name="cuda-home", set={"CUDA_HOME": value})
        assert not any("/etc/environment" in c for c in op.commands())
        assert "/etc/environment" not in {t.target for t in op.touches()}


def test_the_file_is_a_checkpointed_touch_and_a_unit_scope_never_writes_it():
    op = SetEnv(scope="profile", name="cuda-home", set={"CUDA_HOME": CU13})
    assert {"/etc/profile.d/zz-remedy-cuda-home.sh", "/etc/environment"} <= {
        t.target for t in op.touches() if t.kind == "file"
    }
    unit = SetEnv(scope="dropin", unit="sglang.service", name="x", set={"CUDA_HOME": CU13})
    assert not any("/etc/environment" in c for c in unit.commands())
