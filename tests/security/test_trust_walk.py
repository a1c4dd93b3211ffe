"""The one-stat trust walk (remedy.trust.SH_TRUST) decides exactly as the per-level walk did.

`trusted` used to run one `stat` per directory above a binary (~12 processes for a venv's
nvcc); it now stats the whole chain at once and remembers the directories it found trusted
for the rest of the script. The per-level walk it replaced is kept, verbatim, as the
reference (tests/reference_paths.py): both run, in one real shell each, the same sequence of calls over a real tree
(files and directories owned by another user, group/world-writable and sticky directories,
links into and out of untrusted places, names holding `|` and a newline, paths built to
collide with the remembered list), and every answer (status, WHY, RP) must be the same.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from remedy.trust import SH_TRUST

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from reference_paths import REFERENCE_TRUSTED as REFERENCE  # noqa: E402

NOBODY = 65534


DRIVER = r"""
for p in "$@"; do
  if trusted "$p"; then rc=0; else rc=1; fi
  printf '%s\t%s\t%s\036' "$rc" "$WHY" "$RP"
done
"""

needs_root = pytest.mark.skipif(os.geteuid() != 0, reason="chown to another user needs root")


def answers(lib: str, paths: list[str]) -> list[str]:
    r = subprocess.run(
        ["sh", "-c", lib + DRIVER, "sh", *paths], capture_output=True, timeout=60, check=True
    )
    return r.stdout.decode("utf-8", "surrogateescape").split("\036")


def tool(path: Path, uid: int = 0) -> str:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("#!/bin/sh\necho tool\n")
    path.chmod(0o755)
    os.chown(path, uid, uid)
    return str(path)


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    tmp_path.chmod(0o755)
    return tmp_path


@needs_root
def test_one_stat_walk_answers_as_the_per_level_walk(tree: Path) -> None:
    ok = tool(tree / "ok" / "bin" / "nvcc")
    ok2 = tool(tree / "ok" / "bin" / "ptxas")
    deep = tool(tree / "ok" / "lib" / "python3.11" / "site-packages" / "triton" / "ptxas")
    evil_file = tool(tree / "ok" / "bin" / "evil", NOBODY)
    nob = tree / "nob"
    nob_tool = tool(nob / "bin" / "nvcc")
    os.chown(nob, NOBODY, NOBODY)
    gw = tree / "gw"
    gw_tool = tool(gw / "nvcc")
    gw.chmod(0o775)
    sticky = tree / "sticky"
    sticky_tool = tool(sticky / "d" / "nvcc")
    sticky.chmod(0o1777)
    sticky_nob = tree / "sticky-nobody"
    sticky_nob_tool = tool(sticky_nob / "nvcc")
    sticky_nob.chmod(0o1777)
    os.chown(sticky_nob, NOBODY, NOBODY)
    (tree / "ok" / "link").symlink_to(nob / "bin" / "nvcc")
    (tree / "ok" / "dangling").symlink_to(tree / "nothing-here")
    (tree / "nob" / "tolink").symlink_to(tree / "ok" / "bin" / "nvcc")
    bar = tool(tree / "a|b" / "bin" / "nvcc")
    # built to look like two remembered entries glued together: "<sticky>/d" and "<sticky>"
    glued = sticky / "d||" / str(sticky).lstrip("/")
    glued_tool = tool(glued / "nvcc")
    os.chown(sticky / "d||", NOBODY, NOBODY)
    nl = tool(tree / "new\nline" / "nvcc")
    ww_file = tool(tree / "ok" / "bin" / "ww")
    os.chmod(ww_file, 0o777)

    paths = [
        ok,
        ok2,  # same dir: only the file is new
        deep,
        evil_file,
        nob_tool,
        str(tree / "ok" / "link"),
        str(tree / "ok" / "dangling"),
        str(tree / "nob" / "tolink"),
        gw_tool,
        sticky_tool,
        sticky_nob_tool,
        bar,
        bar,
        glued_tool,
        nl,
        ww_file,
        str(tree / "missing" / "nvcc"),
        ok,
        "/",
        str(tree),
    ]
    want = answers(REFERENCE, paths)
    got = answers(SH_TRUST, paths)
    assert got == want
    # the control: the reference really says no to the bad ones and yes to the good ones
    verdicts = dict(zip(paths, (a.split("\t", 1)[0] for a in want), strict=False))
    assert verdicts[ok] == "0" and verdicts[deep] == "0" and verdicts[sticky_tool] == "0"
    for bad in (evil_file, nob_tool, gw_tool, sticky_nob_tool, glued_tool, ww_file):
        assert verdicts[bad] == "1", bad


@needs_root
def test_the_walk_stats_the_chain_once_and_then_only_what_is_new(tree: Path) -> None:
    """Why it exists: count the processes each walk starts for three binaries of one venv."""
    site = tree / "venv" / "lib" / "python3.11" / "site-packages"
    paths = [
        tool(site / "nvidia" / "cu13" / "bin" / "nvcc"),
        tool(site / "nvidia" / "cu13" / "bin" / "ptxas"),
        tool(site / "triton" / "backends" / "nvidia" / "bin" / "ptxas"),
    ]
    counts = {}
    for name, lib in (("reference", REFERENCE), ("batched", SH_TRUST)):
        log = tree / f"{name}.strace"
        r = subprocess.run(
            ["strace", "-f", "-qq", "-e", "trace=execve", "-o", str(log)]
            + ["sh", "-c", lib + DRIVER, "sh", *paths],
            capture_output=True,
            timeout=60,
        )
        if r.returncode != 0:
            pytest.skip(f"strace unusable here: {r.stderr.decode()[-200:]}")
        counts[name] = log.read_text().count('/stat"')
    depth = len(Path(paths[0]).parts)
    assert counts["reference"] >= 3 * (depth - 1)
    assert counts["batched"] == 3
