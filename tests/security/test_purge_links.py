"""`purge-jit-caches` never deletes, as root, through a link another user planted.

The attack, for real: the step runs `rm -rf` as root on the JIT caches under `$HOME` (or
`$FLASHINFER_WORKSPACE_BASE`, `$TVM_FFI_CACHE_DIR`, `$TORCH_EXTENSIONS_DIR`). `sudo` kept a
user's HOME (uid 65534 here), or root's environment names a cache directory that user owns:
the user makes `~/.cache/flashinfer/a` a link to a root-owned tree (a stand-in for /var/lib)
holding `b/cached_ops`, so the glob `*/*/cached_ops` reaches it, and `~/.cache/torch_extensions`
is reached through their own link too. Before, root's `rm -rf` deleted both inside root's tree.
The canary: root's files are still there. The control: a cache in root's own home is purged.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from local_apply import apply_locally

from remedy.errors import RunError
from remedy.model import Facts, Step
from remedy.operations import PurgeJitCaches

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="links another user owns")
NOBODY = 65534


def _victim(tmp_path: Path) -> Path:
    """Root's tree: what a purge through a planted link would delete."""
    tmp_path.chmod(0o755)
    v = tmp_path / "var-lib"
    (v / "b" / "cached_ops").mkdir(parents=True)
    (v / "b" / "cached_ops" / "precious").write_text("root's\n")
    (v / "ext" / "torch_extensions").mkdir(parents=True)
    (v / "ext" / "torch_extensions" / "precious").write_text("root's\n")
    return v


def _chown_tree(root: Path, uid: int) -> None:
    for dp, dns, fns in os.walk(root):
        for n in [dp, *(os.path.join(dp, x) for x in dns + fns)]:
            os.chown(n, uid, uid, follow_symlinks=False)


def _step() -> Step:
    return Step(action="purge", title="purge", operation=PurgeJitCaches(), probe="static")


def _run(tmp_path: Path, env: dict[str, str]) -> str:
    try:
        rep = apply_locally(tmp_path, Facts(host="scratch"), [_step()], env=env)
    except RunError as e:
        return str(e)
    return str(rep.model_dump() if hasattr(rep, "model_dump") else rep)


def _attack_home(tmp_path: Path, victim: Path) -> Path:
    home = tmp_path / "home-nobody"
    (home / ".cache" / "flashinfer").mkdir(parents=True)
    (home / ".cache" / "flashinfer" / "a").symlink_to(victim)
    (home / ".cache" / "torch_extensions").symlink_to(victim / "ext" / "torch_extensions")
    (home / ".cache" / "tvm").mkdir()
    (home / ".cache" / "tvm" / "x").symlink_to(victim / "ext")
    _chown_tree(home, NOBODY)
    return home


def test_a_home_sudo_kept_cannot_point_the_purge_at_roots_files(tmp_path: Path):
    victim = _victim(tmp_path)
    home = _attack_home(tmp_path, victim)
    said = _run(tmp_path, {"HOME": str(home)})
    assert (victim / "b" / "cached_ops" / "precious").exists(), "rm -rf followed the glob's link"
    assert (victim / "ext" / "torch_extensions" / "precious").exists(), said
    # Since redteam-18 the step's guard (trust.step_env_guard) replaces a HOME another user owns
    # by the passwd home before the purge runs, so the purge never sees uid 65534's links here;
    # its own link check is the next test's (cache variables naming the links).
    assert str(home) not in said or "not removed: " in said, said
    assert "ME=$(id -u" not in said  # the step is named by its first line, not its script


def test_a_cache_variable_naming_another_users_link_is_not_followed(tmp_path: Path):
    victim = _victim(tmp_path)
    home = _attack_home(tmp_path, victim)
    root_home = tmp_path / "root-home"
    root_home.mkdir(mode=0o700)
    said = _run(
        tmp_path,
        {
            "HOME": str(root_home),
            "FLASHINFER_WORKSPACE_BASE": str(home),
            "TORCH_EXTENSIONS_DIR": str(home / ".cache" / "tvm" / "x" / "torch_extensions"),
        },
    )
    assert (victim / "b" / "cached_ops" / "precious").exists(), said
    assert (victim / "ext" / "torch_extensions" / "precious").exists(), said
    assert "not removed: " in said and "uid 65534" in said, said


def test_control_roots_own_caches_are_purged(tmp_path: Path):
    tmp_path.chmod(0o755)
    home = tmp_path / "root-home"
    ops = home / ".cache" / "flashinfer" / "90a" / "mod" / "cached_ops"
    ops.mkdir(parents=True)
    (ops / "x.so").write_text("")
    (home / ".cache" / "torch_extensions" / "py312").mkdir(parents=True)
    (home / ".cache" / "tvm-ffi").mkdir(parents=True)
    said = _run(tmp_path, {"HOME": str(home)})
    # applied (the fixture plan verifies no consumer: not `fixed`, exit 14)
    assert "outcome='applied-not-verified'" in said, said
    assert not ops.exists()
    assert not (home / ".cache" / "torch_extensions").exists()
    assert not (home / ".cache" / "tvm-ffi").exists()
    assert (home / ".cache" / "flashinfer" / "90a" / "mod").is_dir()
