"""read_unit() on a directory tree through LocalTransport (root=), and its refusals.

The live path (systemctl show over SSH on a real systemd) is exercised in
tests/test_units_systemd.py; here the same script reads a fake root in milliseconds.
"""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

import pytest

from remedy.errors import InputError
from remedy.transport import LocalTransport, ScriptedTransport
from remedy.units import load_unit, read_unit

UNIT = "sglang-k26.service"


def tree(root: Path, files: dict[str, str | bytes]) -> None:
    for path, data in files.items():
        p = root / path.lstrip("/")
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_bytes(data.encode() if isinstance(data, str) else data)


def snapshot(root: Path) -> dict[str, tuple[int, int]]:
    out = {}
    for dirpath, _, names in os.walk(root):
        for n in names:
            st = (Path(dirpath) / n).lstat()
            out[str(Path(dirpath) / n)] = (st.st_size, st.st_mtime_ns)
    return out


def read(root: Path, name: str = UNIT):
    return asyncio.run(read_unit(LocalTransport(), name, root=str(root)))


SEED = """[Service]
Environment=OMP_NUM_THREADS=8
Environment="PATH=/usr/local/cuda-12.8/bin:/root/venv_sglang211/bin:/usr/bin:/bin"
EnvironmentFile=-/etc/default/sglang
EnvironmentFile=/etc/sglang/*.env
ExecStart=/root/venv_sglang211/bin/python -m sglang.launch_server --tp 8
"""


def test_reads_unit_dropins_in_systemd_order_and_env_files(tmp_path: Path):
    tree(
        tmp_path,
        {
            f"/usr/lib/systemd/system/{UNIT}": SEED,
            f"/usr/lib/systemd/system/{UNIT}.d/10-vendor.conf": "[Service]\nEnvironment=V=usr\n",
            f"/etc/systemd/system/{UNIT}.d/10-vendor.conf": "[Service]\nEnvironment=V=etc\n",
            f"/run/systemd/system/{UNIT}.d/05-run.conf": "[Service]\nEnvironment=R=1\n",
            "/etc/systemd/system/sglang-.service.d/20-prefix.conf": "[Service]\nEnvironment=P=1\n",
            "/etc/systemd/system/other.service.d/x.conf": "[Service]\nEnvironment=NO=1\n",
            "/etc/sglang/b.env": "CUDA_HOME=/from/b\n",
            "/etc/sglang/a.env": "CUDA_HOME=/from/a\nA=1\n",
            "/etc/machine-id": "0123456789abcdef0123456789abcdef\n",
            "/etc/os-release": 'ID=debian\nVERSION_ID="12"\n',
            "/root/venv_sglang211/bin/python": "#!/bin/sh\n",
        },
    )
    (tmp_path / "root/venv_sglang211/bin/python").chmod(0o755)
    f = read(tmp_path)
    assert f.fragment is not None and f.fragment.path == f"/usr/lib/systemd/system/{UNIT}"
    assert [d.path for d in f.dropins] == [
        f"/run/systemd/system/{UNIT}.d/05-run.conf",
        f"/etc/systemd/system/{UNIT}.d/10-vendor.conf",
        "/etc/systemd/system/sglang-.service.d/20-prefix.conf",
    ]
    assert f.env_globs == {"/etc/sglang/*.env": ["/etc/sglang/a.env", "/etc/sglang/b.env"]}
    assert f.env_files["/etc/default/sglang"] is None
    assert f.live is None and f.executables == {"/root/venv_sglang211/bin/python"}
    assert f.host and f.host.machine_id == "0123456789abcdef0123456789abcdef"
    assert f.host.os_release["VERSION_ID"] == "12"
    u = load_unit(f)
    assert u.environment == {
        "OMP_NUM_THREADS": "8",
        "PATH": "/usr/local/cuda-12.8/bin:/root/venv_sglang211/bin:/usr/bin:/bin",
        "R": "1",
        "V": "etc",
        "P": "1",
    }
    assert u.effective_environment["CUDA_HOME"] == "/from/b" and u.effective_environment["A"] == "1"
    assert str(u.effective_origins["CUDA_HOME"]) == "EnvironmentFile= at /etc/sglang/b.env:1"
    assert u.python == "/root/venv_sglang211" and u.launch and u.launch.flags == {"tp": "8"}


def test_template_instance_falls_back_to_the_template_file(tmp_path: Path):
    tree(
        tmp_path,
        {
            "/etc/systemd/system/sg@.service": "[Service]\nEnvironment=I=%i\nExecStart=/bin/true\n",
            "/etc/systemd/system/sg@.service.d/a.conf": "[Service]\nEnvironment=T=1\n",
        },
    )
    u = load_unit(read(tmp_path, "sg@gpu0.service"))
    assert u.fragment_path == "/etc/systemd/system/sg@.service"
    assert u.environment == {"I": "gpu0", "T": "1"}


def test_nonexistent_unit_is_a_clear_error(tmp_path: Path):
    with pytest.raises(InputError, match="unit nothere.service not found"):
        read(tmp_path, "nothere.service")


def test_masked_unit_is_refused(tmp_path: Path):
    (tmp_path / "etc/systemd/system").mkdir(parents=True)
    os.symlink("/dev/null", tmp_path / f"etc/systemd/system/{UNIT}")
    with pytest.raises(InputError, match="masked"):
        read(tmp_path)


def test_unit_systemd_refuses_to_load_is_a_clear_error(tmp_path: Path):
    tree(tmp_path, {f"/etc/systemd/system/{UNIT}": "[Service\nEnvironment=A=1\n"})
    before = snapshot(tmp_path)
    with pytest.raises(InputError, match=r"(?s)would refuse to load.*:1: Invalid section header"):
        read(tmp_path)
    assert snapshot(tmp_path) == before


def test_missing_environment_file_without_dash(tmp_path: Path):
    tree(tmp_path, {f"/etc/systemd/system/{UNIT}": "[Service]\nEnvironmentFile=/etc/nope.env\n"})
    f = read(tmp_path)
    assert f.env_files == {"/etc/nope.env": None}
    with pytest.raises(InputError, match="EnvironmentFile=/etc/nope.env .*does not exist"):
        load_unit(f)


def test_not_a_unit_name_gets_a_service_suffix(tmp_path: Path):
    tree(tmp_path, {f"/etc/systemd/system/{UNIT}": "[Service]\nEnvironment=A=1\n"})
    assert read(tmp_path, "sglang-k26").name == UNIT


def test_live_systemd_path_uses_fragment_path_and_detects_not_found():
    """The systemctl show branch, replayed: LoadState=not-found is a clear error."""

    def handler(call):
        if "systemctl show" in (call.script or ""):
            show = "Id=x.service\nLoadState=not-found\nFragmentPath=\n"
            import base64

            return ("\x1eB 1\n\x1eS 0 " + base64.b64encode(show.encode()).decode() + "\n").encode()
        return b""

    t = ScriptedTransport(handler, host="gpu-1")
    with pytest.raises(InputError, match="unit x.service not found on gpu-1"):
        asyncio.run(read_unit(t, "x.service"))
