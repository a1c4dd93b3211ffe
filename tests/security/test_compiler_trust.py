"""Class 3: `facts` must not run a host compiler another user can write.

The attack, for real: root's PATH starts with a venv's bin (/etc/environment on the seed
hosts) whose service user drops a `gcc` there that would create a canary when run. The host
collector asks every compiler on PATH for its version; `remedy facts` (locally, and as root
over SSH on a sandbox host) must leave no canary and note `gcc not executed: ... owned by`.
A control with the same script owned by root shows the canary does appear (and its version
is reported), so the attack is real and the owner check is what stops it.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

NOBODY = 65534
needs_root = pytest.mark.skipif(os.geteuid() != 0, reason="chown to another user needs root")
REMEDY = [sys.executable, "-m", "remedy"]


def evil_gcc(bin_dir: Path, canary: Path, owner: int) -> None:
    bin_dir.mkdir(parents=True, exist_ok=True)
    gcc = bin_dir / "gcc"
    gcc.write_text(f"#!/bin/sh\ntouch {canary}\necho 99.9.9\n")
    gcc.chmod(0o755)
    os.chown(bin_dir, owner, owner)
    os.chown(gcc, owner, owner)


def local_facts(bin_dir: Path) -> dict:
    env = {**os.environ, "PATH": f"{bin_dir}:/usr/local/bin:/usr/bin:/bin"}
    r = subprocess.run(
        [*REMEDY, "facts", "--local", "--json"], env=env, capture_output=True, timeout=120
    )
    assert r.returncode == 0, r.stderr.decode()
    return json.loads(r.stdout)


@needs_root
def test_a_gcc_another_user_owns_first_on_path_is_not_run(tmp_path: Path) -> None:
    tmp_path.chmod(0o755)
    canary = tmp_path / "canary"
    evil_gcc(tmp_path / "venv" / "bin", canary, NOBODY)
    facts = local_facts(tmp_path / "venv" / "bin")
    assert not canary.exists(), "facts executed a gcc owned by another user"
    assert "gcc" not in facts["host_compilers"]
    note = next(n for n in facts["notes"] if n.startswith("gcc not executed: "))
    assert f"{tmp_path}/venv/bin/gcc owned by nobody (uid {NOBODY})" in note


@needs_root
def test_control_a_root_owned_gcc_first_on_path_is_run(tmp_path: Path) -> None:
    tmp_path.chmod(0o755)
    canary = tmp_path / "canary"
    evil_gcc(tmp_path / "venv" / "bin", canary, 0)
    facts = local_facts(tmp_path / "venv" / "bin")
    assert canary.exists()
    assert facts["host_compilers"]["gcc"] == "99.9.9"
    assert not [n for n in facts["notes"] if "not executed" in n]


# ---- over SSH, on a sandbox host ----------------------------------------------------------


@pytest.fixture
def host():
    from sandbox_hosts import host_for_test

    yield from host_for_test("healthy", "ccx")


@pytest.mark.sandbox
def test_facts_over_ssh_do_not_run_a_gcc_another_user_owns(host):
    """`remedy facts HOST` as root over SSH, root's PATH (pam_env, /etc/environment) starting
    with a venv bin where nobody's gcc would write /opt/canary-gcc (its caller); then the control: root's.
    (/opt, not /: the ssh tier's / is the machine's own, shared by every sandbox host.)"""
    setup = (
        "set -e; mkdir -p /opt/evilvenv/bin; "
        "printf '#!/bin/sh\\nps -o args= -p $PPID > /opt/canary-gcc\\necho 99.9.9\\n' > /opt/evilvenv/bin/gcc; "
        "chmod 755 /opt/evilvenv/bin/gcc; chown -R nobody:nogroup /opt/evilvenv; "
        "echo 'PATH=\"/opt/evilvenv/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:"
        "/sbin:/bin\"' > /etc/environment"
    )
    rc, out = host.ssh(setup)
    assert rc == 0, out
    rc, out = host.ssh("command -v gcc")
    assert out.strip() == "/opt/evilvenv/bin/gcc", out  # the attack is in place
    r = host.remedy("facts", host.name, "--json", timeout=300)
    assert r.returncode == 0, r.stderr
    facts = json.loads(r.stdout)
    rc, out = host.ssh("cat /opt/canary-gcc 2>/dev/null; true")  # gcc's caller, if it ran
    assert out.strip() == "", f"canary appeared on the host: {out}"
    assert "gcc" not in facts["host_compilers"]
    assert facts["host_compilers"].get("g++")  # the root-owned ones still answer
    assert "gcc not executed: /opt/evilvenv/bin/gcc owned by nobody (uid 65534)" in facts["notes"]

    rc, out = host.ssh("chown -R root:root /opt/evilvenv")
    assert rc == 0, out
    r = host.remedy("facts", host.name, "--json", timeout=300)
    assert r.returncode == 0, r.stderr
    facts = json.loads(r.stdout)
    rc, out = host.ssh("cat /opt/canary-gcc 2>/dev/null; true")
    # control: root's gcc runs, called by the facts batch (the shell's, whose script holds
    # its marker; or the host agent's python, `python3 -I -S -`: remedy.facts.agent)
    assert "@@remedy-" in out or " -I -S - LC_ALL-was-" in out, out
    assert facts["host_compilers"]["gcc"] == "99.9.9"


# ---- probes (run as root by `remedy run`): `c++` and nvcc's gcc come from the step's PATH ----


def probe_with_path(area: Path, probe: str, bin_dir: Path):
    """A probe with a root-owned toolkit (its nvcc a script touching area/canary-nvcc) and the
    workload's PATH starting with bin_dir."""
    from test_exec_trust import fake_prefix

    from remedy.model import Facts, Gpu
    from remedy.probes import run_probe
    from remedy.transport.local import LocalTransport

    prefix = fake_prefix(area, area / "canary-nvcc")
    facts = Facts(
        gpus=[Gpu(name="g", compute_cap="12.0")],
        shell_env={"PATH": f"{bin_dir}:/usr/bin:/bin"},
    )
    return asyncio.run(
        run_probe(probe, LocalTransport("local"), facts, params={"prefix": str(prefix)}, timeout=60)
    )


def compilers(bin_dir: Path, canary: Path, owner: int, names: tuple[str, ...]) -> None:
    """The canary script as each of names (only those: the others are /usr/bin's)."""
    evil_gcc(bin_dir, canary, owner)
    for name in names:
        if name != "gcc":
            os.link(bin_dir / "gcc", bin_dir / name)
    if "gcc" not in names:
        (bin_dir / "gcc").unlink()


@needs_root
@pytest.mark.parametrize(("probe", "what"), [("link-probe", "c++"), ("preprocess-probe", "gcc")])
def test_probe_refuses_a_compiler_another_user_owns_on_path(
    tmp_path: Path, probe: str, what: str
) -> None:
    """link-probe runs `c++` ($CXX unset) and nvcc runs gcc/g++, both from the workload's
    PATH: one another user owns is not run; the probe is skipped with the reason."""
    tmp_path.chmod(0o755)
    canary = tmp_path / "canary"
    bin_dir = tmp_path / "venv" / "bin"
    compilers(bin_dir, canary, NOBODY, (what,))
    res = probe_with_path(tmp_path, probe, bin_dir)
    assert not canary.exists(), f"{probe} executed a compiler owned by another user"
    assert not (tmp_path / "canary-nvcc").exists()  # refused before any step ran
    assert not res.ok and res.skipped
    # the compiler itself, or (test_probe_env.py) the PATH dir it and `ld`/`as` come from
    assert res.skipped.startswith(
        (f"not executed: {what} on PATH is {bin_dir}/", f"not executed: PATH holds {bin_dir} ")
    ), res.skipped
    assert "owned by nobody" in res.skipped


@needs_root
def test_control_probe_runs_a_root_owned_compiler_on_path(tmp_path: Path) -> None:
    tmp_path.chmod(0o755)
    canary = tmp_path / "canary"
    bin_dir = tmp_path / "venv" / "bin"
    compilers(bin_dir, canary, 0, ("c++",))
    res = probe_with_path(tmp_path, "link-probe", bin_dir)
    assert not res.skipped, res.detail
    assert canary.exists()  # the host object was built by the root-owned `c++`
