"""Class 3: read-only commands must not execute code someone else can write.

The attacks, for real: a fake `nvcc`/`ptxas` (and Triton's ptxas) that would create a canary
file when run, in a toolkit prefix owned by another user or writable by others; a profile file
and a ~/.profile that would create a canary when sourced. `facts` (the real collector scripts,
run by a real shell, locally and over SSH on a sandbox host) must leave no canary and say why
the binary was not executed, and still learn the release from files it can read.

A control run with the same prefix owned by root shows the canary does appear when the
binary is trusted and executed, so the attack is real and the owner check is what stops it.
"""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path

import pytest

from remedy.facts.collect import library
from remedy.facts.envs import login_env_script, parse_login_env
from remedy.facts.pythons import group_pythons, py_call
from remedy.facts.sections import split_sections
from remedy.facts.toolkits import build_toolkits, tk_call
from remedy.transport.local import LocalTransport

NOBODY = 65534
TOKEN = "@@sec-test@@"
BANNER = "Cuda compilation tools, release 12.8, V12.8.93"

needs_root = pytest.mark.skipif(os.geteuid() != 0, reason="chown to another user needs root")


def fake_tool(path: Path, canary: Path) -> None:
    """A compiler that, when executed, touches the canary and prints a real banner."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"#!/bin/sh\ntouch {canary}\necho '{BANNER}'\n")
    path.chmod(0o755)


def fake_prefix(root: Path, canary: Path) -> Path:
    prefix = root / "cuda-evil"
    fake_tool(prefix / "bin" / "nvcc", canary)
    fake_tool(prefix / "bin" / "ptxas", canary)
    (prefix / "include").mkdir()
    (prefix / "include" / "cuda_runtime_api.h").write_text("#define CUDART_VERSION 12080\n")
    (prefix / "version.json").write_text(json.dumps({"cuda_nvcc": {"version": "12.8.93"}}))
    return prefix


def chown_tree(path: Path, uid: int) -> None:
    for dp, _dns, fns in os.walk(path):
        os.chown(dp, uid, uid)
        for n in fns:
            os.chown(os.path.join(dp, n), uid, uid, follow_symlinks=False)


def probe_prefix(prefix: Path):
    script = library(TOKEN) + tk_call(str(prefix), "", "", "test") + "m end\n"
    r = asyncio.run(LocalTransport("local").run(script, timeout=30))
    return build_toolkits(split_sections(r.stdout.decode(), TOKEN))[0]


@pytest.fixture
def area(tmp_path: Path) -> Path:
    tmp_path.chmod(0o755)  # a trusted parent: only what the test makes below it varies
    return tmp_path


@needs_root
def test_nvcc_owned_by_another_user_is_not_executed(area: Path):
    canary = area / "canary-owned"
    prefix = fake_prefix(area, canary)
    chown_tree(prefix, NOBODY)
    tk = probe_prefix(prefix)
    assert not canary.exists(), "facts executed a binary owned by another user"
    assert "nvcc not executed" in (tk.note or "") and "owned by" in (tk.note or "")
    assert "ptxas not executed" in (tk.note or "")
    # read without running it: the release comes from version.json
    assert tk.nvcc_release == "12.8" and tk.ptxas_release == "12.8"
    assert "version.json" in (tk.note or "")


def test_nvcc_under_a_group_or_world_writable_dir_is_not_executed(area: Path):
    canary = area / "canary-writable"
    prefix = fake_prefix(area, canary)
    (prefix / "bin").chmod(0o777)
    tk = probe_prefix(prefix)
    assert not canary.exists(), "facts executed a binary others can replace"
    assert "writable by group or others" in (tk.note or "")


def test_control_a_trusted_nvcc_is_executed(area: Path):
    """The same prefix, owned by us and not writable by others: it runs (the canary shows
    the attack above would have worked without the check)."""
    canary = area / "canary-trusted"
    prefix = fake_prefix(area, canary)
    tk = probe_prefix(prefix)
    assert canary.exists()
    assert tk.nvcc_release == "12.8" and "not executed" not in (tk.note or "")


@needs_root
def test_tritons_ptxas_owned_by_another_user_is_not_executed(area: Path):
    canary = area / "canary-triton"
    env = area / "venv"
    site = env / "lib" / "python3.11" / "site-packages"
    fake_tool(site / "triton" / "backends" / "nvidia" / "bin" / "ptxas", canary)
    (env / "bin").mkdir(parents=True)
    (env / "bin" / "python").symlink_to("/usr/bin/python3")
    chown_tree(env, NOBODY)
    script = library(TOKEN) + py_call(str(env / "bin" / "python"), "test") + "m end\n"
    r = asyncio.run(LocalTransport("local").run(script, timeout=30))
    sections = split_sections(r.stdout.decode(), TOKEN)
    assert not canary.exists(), "facts executed Triton's ptxas owned by another user"
    assert any(s.name == "py.triton.untrusted" and "owned by" in s.arg for s in sections)
    assert group_pythons(sections), "the environment itself is still read"


def test_profile_files_are_read_not_sourced(area: Path):
    """The login environment comes from the profile files' text: a ~/.profile that would
    touch a canary when sourced does not, and its plain exports still count."""
    canary = area / "canary-profile"
    home = area / "home"
    home.mkdir()
    (home / ".profile").write_text(
        f"touch {canary}\nexport CUDA_HOME=/opt/from-profile\nX=$(touch {canary})\nexport X\n"
        f"`touch {canary}`\n"
    )
    (home / ".bashrc").write_text(f"touch {canary}\nexport FROM_BASHRC=1\n")
    t = LocalTransport("local", env={"HOME": str(home)})
    r = asyncio.run(t.run(login_env_script(TOKEN), timeout=30))
    notes: list[str] = []
    env, _shell = parse_login_env(r.stdout.decode(), TOKEN, notes)
    assert not canary.exists(), "reading the login environment executed a profile file"
    assert env["CUDA_HOME"] == "/opt/from-profile" and env["FROM_BASHRC"] == "1"
    assert "X" not in env and any("command substitution" in n for n in notes)


# ---- over SSH, on a sandbox host ----------------------------------------------------------


@pytest.fixture
def host():
    from sandbox_hosts import host_for_test

    yield from host_for_test("healthy", "thx")


@pytest.mark.sandbox
def test_facts_over_ssh_execute_no_untrusted_binary_and_no_profile(host):
    """`remedy facts HOST` as root over SSH: a user-owned nvcc named by CUDA_HOME in a
    profile.d file, and the profile.d file itself, both try to touch a canary on the host."""
    setup = (
        "set -e; mkdir -p /opt/evilcuda/bin /opt/evilcuda/include; "
        f"printf '#!/bin/sh\\ntouch /canary-nvcc\\necho \"{BANNER}\"\\n' > /opt/evilcuda/bin/nvcc; "
        "cp /opt/evilcuda/bin/nvcc /opt/evilcuda/bin/ptxas; chmod 755 /opt/evilcuda/bin/*; "
        "echo '#define CUDART_VERSION 12080' > /opt/evilcuda/include/cuda_runtime_api.h; "
        'echo \'{"cuda_nvcc": {"version": "12.8.93"}}\' > /opt/evilcuda/version.json; '
        "chown -R nobody:nogroup /opt/evilcuda; "
        "printf 'touch /canary-profile\\nexport CUDA_HOME=/opt/evilcuda\\n' "
        "> /etc/profile.d/zz-evil.sh"
    )
    rc, out = host.ssh(setup)
    assert rc == 0, out
    r = host.remedy("facts", host.name, "--json", timeout=300)
    assert r.returncode == 0, r.stderr
    facts = json.loads(r.stdout)
    rc, out = host.ssh("ls -d /canary-nvcc /canary-profile 2>/dev/null; true")
    assert out.strip() == "", f"canary appeared on the host: {out}"
    assert facts["shell_env"].get("CUDA_HOME") == "/opt/evilcuda"  # read as data
    tk = next(t for t in facts["toolkits"] if t["prefix"] == "/opt/evilcuda")
    assert "nvcc not executed" in tk["note"] and "owned by nobody" in tk["note"]
    assert tk["nvcc_release"] == "12.8"


@needs_root
@pytest.mark.parametrize("probe", ["preprocess-probe", "compile-probe"])
def test_probe_does_not_run_an_untrusted_nvcc(area: Path, probe: str):
    """A probe (run as root by `remedy run`) with the consumer's toolkit owned by another
    user: skipped with the reason, the canary never made."""
    from remedy.model import Facts, Gpu
    from remedy.probes import run_probe

    canary = area / f"canary-{probe}"
    prefix = fake_prefix(area, canary)
    chown_tree(prefix, NOBODY)
    facts = Facts(gpus=[Gpu(name="g", compute_cap="12.0")], shell_env={"PATH": "/usr/bin:/bin"})
    res = asyncio.run(
        run_probe(probe, LocalTransport("local"), facts, params={"prefix": str(prefix)}, timeout=60)
    )
    assert not canary.exists(), f"{probe} executed an nvcc owned by another user"
    assert (
        not res.ok and res.skipped and "not executed" in res.skipped and "owned by" in res.skipped
    )
