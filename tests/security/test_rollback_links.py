"""Class 4: rollback must not delete or write through a link swapped in after the checkpoint.

The attack, for real, with remedy's host agent (the code that runs as root on every host):
a checkpoint of files in a tree the venv owner (here `nobody`) can write; the step changes
them; then the owner swaps a directory of that tree for a link to a directory outside it that
holds files of the same names. The rollback must leave the outside files exactly as they
were (and say what it refused). Also: a RECORD that lists a file outside its environment, and
a checkpointed file replaced by a link. Locally (the agent as a subprocess, as root) and over
SSH on a sandbox host (the agent uploaded and run by HostState, as `remedy rollback` does).
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from remedy.executor import agent as agent_mod

AGENT = agent_mod.__file__
NOBODY = 65534
needs_root = pytest.mark.skipif(os.geteuid() != 0, reason="another user's tree needs root")


def agent(*args: str, stdin: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, AGENT, *args],
        input=json.dumps(stdin) if stdin is not None else None,
        capture_output=True,
        text=True,
        timeout=120,
    )


def chown_tree(path: Path, uid: int) -> None:
    for dp, _dns, fns in os.walk(path):
        os.chown(dp, uid, uid)
        for n in fns:
            os.chown(os.path.join(dp, n), uid, uid, follow_symlinks=False)


@pytest.fixture
def tree(tmp_path: Path) -> dict[str, Path]:
    tmp_path.chmod(0o755)
    venv = tmp_path / "venv"
    pkg = venv / "pkg"
    (pkg / "sub").mkdir(parents=True)
    (pkg / "file.txt").write_text("orig")
    (pkg / "sub" / "data.txt").write_text("data")
    outside = tmp_path / "outside"
    (outside / "sub").mkdir(parents=True)
    (outside / "file.txt").write_text("precious")
    (outside / "new.txt").write_text("precious-new")
    (outside / "sub" / "data.txt").write_text("precious-data")
    return {"root": tmp_path, "venv": venv, "pkg": pkg, "outside": outside}


def checkpoint(tree: dict[str, Path]) -> Path:
    cp = tree["root"] / "cp"
    pkg = tree["pkg"]
    spec = {"paths": [str(pkg / "file.txt"), str(pkg / "new.txt"), str(pkg / "sub")]}
    r = agent("capture", str(cp), stdin=spec)
    assert r.returncode == 0, r.stdout + r.stderr
    # the step: change a file, create one, add to the tree
    (pkg / "file.txt").write_text("changed")
    (pkg / "new.txt").write_text("created")
    (pkg / "sub" / "extra.txt").write_text("extra")
    return cp


def outside_intact(outside: Path) -> None:
    assert (outside / "file.txt").read_text() == "precious"
    assert (outside / "new.txt").read_text() == "precious-new"
    assert (outside / "sub" / "data.txt").read_text() == "precious-data"


@needs_root
def test_directory_swapped_for_a_link_is_not_followed(tree):
    cp = checkpoint(tree)
    chown_tree(tree["venv"], NOBODY)
    # the venv owner's move: pkg -> a link to a directory outside the tree
    tree["pkg"].rename(tree["venv"] / "pkg.moved")
    (tree["venv"] / "pkg").symlink_to(tree["outside"])
    os.chown(tree["venv"] / "pkg", NOBODY, NOBODY, follow_symlinks=False)
    r = agent("restore", str(cp))
    outside_intact(tree["outside"])
    assert r.returncode != 0 and "not followed" in r.stdout, r.stdout + r.stderr


def test_control_without_the_swap_the_rollback_restores(tree):
    cp = checkpoint(tree)
    r = agent("restore", str(cp))
    assert r.returncode == 0, r.stdout + r.stderr
    pkg = tree["pkg"]
    assert (pkg / "file.txt").read_text() == "orig"
    assert not (pkg / "new.txt").exists()
    outside_intact(tree["outside"])


def test_file_swapped_for_a_link_is_replaced_not_written_through(tree):
    cp = checkpoint(tree)
    f = tree["pkg"] / "file.txt"
    f.unlink()
    f.symlink_to(tree["outside"] / "file.txt")
    n = tree["pkg"] / "new.txt"
    n.unlink()
    n.symlink_to(tree["outside"] / "new.txt")
    r = agent("restore", str(cp))
    assert r.returncode == 0, r.stdout + r.stderr
    outside_intact(tree["outside"])
    assert not f.is_symlink() and f.read_text() == "orig"
    assert not os.path.lexists(n)


def test_record_entry_outside_the_environment_is_never_deleted(tmp_path: Path):
    """RECORD is written by the venv owner: a `../` entry pointing outside the environment
    must not make the rollback of a package step delete that file."""
    tmp_path.chmod(0o755)
    env = tmp_path / "venv"
    site = env / "lib" / "python3.11" / "site-packages"
    victim = tmp_path / "victim.txt"
    victim.write_text("precious")

    def install(version: str) -> None:
        (site / "evilpkg").mkdir(parents=True, exist_ok=True)
        (site / "evilpkg" / "__init__.py").write_text(f"V = {version!r}\n")
        for old in site.glob("evilpkg-*.dist-info"):
            for f in old.iterdir():
                f.unlink()
            old.rmdir()
        di = site / f"evilpkg-{version}.dist-info"
        di.mkdir()
        (di / "METADATA").write_text(f"Metadata-Version: 2.1\nName: evilpkg\nVersion: {version}\n")
        # the installed version's RECORD (which the rollback reads) names the victim
        evil = f"{os.path.relpath(victim, site)},,\n" if version == "2.0" else ""
        (di / "RECORD").write_text(
            f"evilpkg/__init__.py,,\nevilpkg-{version}.dist-info/METADATA,,\n"
            f"evilpkg-{version}.dist-info/RECORD,,\n{evil}"
        )

    install("1.0")
    cp = tmp_path / "cp"
    r = agent("capture", str(cp), stdin={"packages": [{"python": str(env), "names": ["evilpkg"]}]})
    assert r.returncode == 0, r.stdout
    install("2.0")
    r = agent("restore", str(cp))
    assert r.returncode == 0, r.stdout + r.stderr
    assert victim.read_text() == "precious"
    assert (site / "evilpkg" / "__init__.py").read_text() == "V = '1.0'\n"


# ---- over SSH, on a sandbox host ----------------------------------------------------------


@pytest.fixture
def host():
    from sandbox_hosts import host_for_test

    yield from host_for_test("healthy", "thr")


async def _rollback_over_ssh(h) -> tuple[str, str]:
    from remedy.errors import RemedyError
    from remedy.executor.hoststate import HostState
    from remedy.transport import open_transport

    t = open_transport(h.name, ssh_config=h.cfg, connect_timeout=20.0)
    try:
        hs = HostState(t)
        await hs.setup()
        spec = {"paths": ["/opt/venv-sec/pkg/file.txt", "/opt/venv-sec/pkg/new.txt"]}
        cp = hs.cp_dir("sec-test", 0)
        await hs.agent("capture", cp, input=json.dumps(spec).encode())
        r = await t.run(
            "set -e; cd /opt/venv-sec; echo changed > pkg/file.txt; echo created > pkg/new.txt; "
            "chown -R nobody:nogroup /opt/venv-sec; mv pkg pkg.moved; ln -s /srv/outside pkg; "
            "chown -h nobody:nogroup pkg",
            timeout=60,
        )
        assert r.exit_status == 0, r.stderr
        try:
            await hs.agent("restore", cp)
            err = ""
        except RemedyError as exc:
            err = str(exc)
        r = await t.run("cat /srv/outside/file.txt /srv/outside/new.txt", timeout=30)
        return r.text(), err
    finally:
        await t.close()


@pytest.mark.sandbox
def test_rollback_on_a_host_does_not_follow_a_swapped_link(host):
    rc, out = host.ssh(
        "set -e; mkdir -p /opt/venv-sec/pkg /srv/outside; echo orig > /opt/venv-sec/pkg/file.txt; "
        "echo precious > /srv/outside/file.txt; echo precious-new > /srv/outside/new.txt"
    )
    assert rc == 0, out
    text, err = asyncio.run(_rollback_over_ssh(host))
    assert text == "precious\nprecious-new\n", text
    assert "not followed" in err, err
