"""The login scope's /etc/environment rewrite keeps the file's mode: a token stays private.

The attack (a leak): an admin keeps /etc/environment 0600 (pam_env reads it as root) because
it holds HF_TOKEN. The rewrite wrote a new file and `chmod 0644`-ed it before the rename, so
after a remedy run every local user could read the token (and the temporary copy was 0644 under
root's umask while it was being written). Now the temporary file is a `cp -p` of the old one,
chowned to root: its mode and group stay; a file that did not exist is created 0644. The
exported playbook's `lineinfile` had `mode: "0644"` (chmod of the existing file): gone.
"""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from remedy.operations import SetEnv
from remedy.operations.playbook import Ctx, Dumper

CU = "/usr/local/cuda-12.8"
TOKEN = b"HF_TOKEN=hf_canaryCanaryCanary0123456789\n"


def _run(op: SetEnv, tmp: Path) -> Path:
    env = tmp / "environment"
    cmd = op.commands()[-1].replace(f"/etc/.environment.remedy-{op.name}.tmp", str(tmp / "t"))
    subprocess.run(["sh", "-ec", cmd.replace("/etc/environment", str(env))], check=True)
    return env


@pytest.mark.parametrize("mode", [0o600, 0o640])
def test_a_private_file_stays_private(tmp_path, mode):
    env = tmp_path / "environment"
    env.write_bytes(b"PATH=/usr/bin:/bin\n" + TOKEN)
    env.chmod(mode)
    op = SetEnv(scope="profile", name="cuda-home", set={"CUDA_HOME": CU})
    _run(op, tmp_path)
    st = env.stat()
    assert stat.S_IMODE(st.st_mode) == mode
    assert st.st_uid == os.geteuid()
    assert env.read_bytes() == b"PATH=/usr/bin:/bin\n" + TOKEN + f"CUDA_HOME={CU}\n".encode()


def test_control_a_new_file_is_0644(tmp_path):
    op = SetEnv(scope="profile", name="cuda-home", set={"CUDA_HOME": CU})
    env = _run(op, tmp_path)
    assert stat.S_IMODE(env.stat().st_mode) == 0o644
    assert env.read_bytes() == f"CUDA_HOME={CU}\n".encode()


PLAYBOOK = shutil.which("ansible-playbook", path=str(Path(sys.executable).parent))


@pytest.mark.skipif(PLAYBOOK is None, reason="ansible-playbook not installed")
def test_the_playbook_keeps_a_private_file_private(tmp_path):
    """The same edit exported as `lineinfile`, run by ansible-playbook on a 0600 copy."""
    env = tmp_path / "environment"
    env.write_bytes(b"PATH=/usr/bin:/bin\n" + TOKEN)
    env.chmod(0o600)
    op = SetEnv(scope="profile", name="cuda-home", set={"CUDA_HOME": CU})
    tasks = [
        t
        for t in op.ansible(Ctx(index=0, action="shell-env-cuda-home", facts={})).apply
        if "ansible.builtin.lineinfile" in t
    ]
    assert tasks
    for t in tasks:
        t["ansible.builtin.lineinfile"]["path"] = str(env)
        t["ansible.builtin.lineinfile"]["backup"] = False
    pb = tmp_path / "pb.yml"
    pb.write_text(yaml.dump([{"hosts": "localhost", "gather_facts": False, "tasks": tasks}],
                            Dumper=Dumper))  # fmt: skip
    r = subprocess.run(
        [PLAYBOOK, "-i", "localhost,", "-c", "local", str(pb),
         "-e", f"ansible_python_interpreter={sys.executable}"],
        capture_output=True, text=True, timeout=60, cwd=tmp_path,
        env={**os.environ, "ANSIBLE_NOCOLOR": "1", "ANSIBLE_LOCALHOST_WARNING": "0"},
    )  # fmt: skip
    assert r.returncode == 0, r.stdout + r.stderr
    assert env.read_bytes() == b"PATH=/usr/bin:/bin\n" + TOKEN + f"CUDA_HOME={CU}\n".encode()
    assert stat.S_IMODE(env.stat().st_mode) == 0o600
