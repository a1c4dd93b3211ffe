"""A relative place in a compiler flag, an empty list entry, gcc's `--prefix`: what the
compile's working directory holds is never judged as root's (redteam-25).

1. The scrubs of a step's environment (remedy.childenv locally, trust.SH_LOGIN_SCRUB over
   SSH) stripped an option's letters up to the first `/` of a flag piece: `-Itmp/x` was
   judged as `/x` (root's), while a compile run from `/` (every step's `cd /`) reads
   /tmp/x, and `-Ltmp`, `-Ifoo` (no `/`) were not judged at all. A real compile from `/`
   took uid 65534's header (`-I` + a relative way to its directory). Now the value of each
   path option (-I, -L, -B, -isystem, -rpath, ...: next piece or joined) is judged whatever
   it holds, and any other piece holding `/` as written: a relative one is left out.
2. gcc's `--prefix DIR` is `-B DIR`: it was judged by DIR alone, not by the tree (a
   root-owned DIR holding root's link to uid 65534's `as`), and its relative form not at
   all; a build's `cc $CFLAGS` ran that `as` as root (canary `as uid 0`).
3. An empty COMPILER_PATH (LIBRARY_PATH, CPATH, PYTHONPATH, LD_LIBRARY_PATH...) entry is the
   working directory (gcc: `./as`, LIBRARY_PATH `./specs`; ld.so; Python). Over SSH the
   scrub skipped it; the exported playbook's stub task (no `cd /`: Ansible's working
   directory, the login user's home) then ran uid 65534's `./as` as root. Now a list with an
   empty entry is left out over SSH, and locally (where only the entry goes) ld.so's too.
Controls: root's absolute flags and root's own COMPILER_PATH tree are kept and used.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from test_gcc_prefix_files import NOBODY, gcc_dir

needs_root = pytest.mark.skipif(os.geteuid() != 0, reason="chown to another user needs root")
SYSTEM_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"


@pytest.fixture
def area(tmp_path: Path) -> Path:
    tmp_path.chmod(0o755)
    return tmp_path


def _theirs(area: Path) -> Path:
    """uid 65534's directory holding `as` (appends `as uid N` to area/canary, then runs the
    real one) and `mark.h` (defines THEIRS)."""
    d = area / "theirs"
    d.mkdir()
    (d / "as").write_text(f'#!/bin/sh\necho "as uid $(id -u)" >> {area}/canary\nexec as "$@"\n')
    (d / "as").chmod(0o755)
    (d / "mark.h").write_text("#define THEIRS 1\n")
    for f in (d, d / "as", d / "mark.h"):
        os.chown(f, NOBODY, NOBODY)
    return d


def _local_after(env: dict[str, str]) -> dict[str, str | None]:
    from remedy.childenv import _CONFIG_SEEN, own_config_env

    _CONFIG_SEEN.clear()
    out = own_config_env({k.encode(): v.encode() for k, v in env.items()})
    return {k.decode(): (v.decode() if v is not None else None) for k, v in out.items()}


def _build_from_root(area: Path, flags: str) -> subprocess.CompletedProcess[str]:
    """What a build does with CFLAGS the local scrub kept: `cc $CFLAGS -c`, run from `/`
    (a step's working directory)."""
    from remedy.childenv import _CONFIG_SEEN, scrubbed_environ

    _CONFIG_SEEN.clear()
    src = area / "t.c"
    src.write_text(
        '#if __has_include("mark.h")\n#include "mark.h"\n#endif\nint f(void){return 0;}\n'
    )
    env = scrubbed_environ({b"PATH": SYSTEM_PATH.encode(), b"CFLAGS": flags.encode()})
    return subprocess.run(
        ["sh", "-c", 'cc $CFLAGS -dM -E "$1" | grep -c THEIRS; cc $CFLAGS -c "$1" -o "$2"',
         "sh", str(src), str(area / "t.o")],
        env={k.decode(): v.decode() for k, v in env.items()},
        capture_output=True, text=True, cwd="/", timeout=120,
    )  # fmt: skip


@needs_root
def test_a_relative_include_dir_is_not_judged_as_roots(area: Path):
    """`-I` + the way from `/` to uid 65534's directory, with a letter before the first `/`
    (`-Itmp/...`): judged as the absolute `/...` and kept, the compile from `/` took its
    header. Now left out: the header is not read."""
    theirs = _theirs(area)
    rel = os.path.relpath(theirs, "/")
    assert "/" in rel and not rel.startswith(".")
    r = _build_from_root(area, f"-O2 -I{rel}")
    assert r.stdout.split()[:1] == ["0"], f"root's compile took uid 65534's header: {r.stdout}"
    assert _local_after({"CFLAGS": f"-I{rel}"}) == {"CFLAGS": None}


@needs_root
def test_gcc_prefix_naming_a_tree_with_another_users_as_runs_nothing(area: Path):
    """`--prefix=DIR/` (gcc's -B): a root-owned DIR holding root's link to uid 65534's `as`
    passed, judged by DIR alone; the build's cc ran it (canary `as uid 0`)."""
    d = gcc_dir(area, NOBODY, link=True)
    r = _build_from_root(area, f"-O2 --prefix={d}/")
    canary = area / "canary"
    assert not canary.exists(), f"root's cc ran {canary.read_text()} (--prefix)"
    assert r.returncode == 0, r.stderr


# flag values whose path pieces are relative (or gcc's `--prefix`): both scrubs leave them out
RELATIVE_FLAGS = {
    "CFLAGS": "-O2 -Itmp/x",
    "CPPFLAGS": "-Ifoo",
    "LDFLAGS": "-Ltmp -lfoo",
    "CXXFLAGS": "-isystem tmp/inc",
    "CUDAFLAGS": "-otmp/x",
    "NVCC_APPEND_FLAGS": "-Xlinker -rpath,lib",
    "NVCC_PREPEND_FLAGS": "--prefix tmp",
}


def test_the_local_scrub_judges_relative_pieces_and_prefix():
    bad = dict(RELATIVE_FLAGS)
    assert _local_after(bad) == dict.fromkeys(bad)
    assert _local_after({"CFLAGS": "-includemark.h"}) == {"CFLAGS": None}
    assert _local_after({"LD_LIBRARY_PATH": "/usr/lib:"}) == {"LD_LIBRARY_PATH": None}
    # an empty entry of gcc's lists: the entry goes, the rest stays
    assert _local_after({"COMPILER_PATH": "/usr/local/nothing:"}) == {
        "COMPILER_PATH": "/usr/local/nothing"
    }


def test_control_the_local_scrub_keeps_roots_absolute_flags():
    good = {
        "CFLAGS": "-O2 -I/usr/include -isystem/usr/include -DNDEBUG",
        "LDFLAGS": "-L/usr/lib -Wl,-rpath,/usr/lib -Wl,-O1",
        "CPPFLAGS": "-idirafter /usr/include -I /usr/include",
        "NVCC_APPEND_FLAGS": "-Xcompiler=-O2 --library-path=/usr/lib",
    }
    assert _local_after(good) == {}


def test_the_login_scrub_judges_relative_pieces_prefix_and_empty_entries(tmp_path: Path):
    from login_env import kept_by_guard as after

    tmp_path.chmod(0o755)
    bad = {
        **RELATIVE_FLAGS,
        "COMPILER_PATH": "/usr/local/nothing:",
        "LIBRARY_PATH": ":/usr/lib",
        "CPATH": "/usr/include::/usr/local/include",
        "PYTHONPATH": "/usr/lib/python3/dist-packages:",
        "LD_LIBRARY_PATH": "/usr/lib;",
    }
    assert after(**bad) == {}
    assert after(CFLAGS="-includemark.h") == {}


def test_control_the_login_scrub_keeps_roots_absolute_flags(tmp_path: Path):
    from login_env import kept_by_guard as after

    tmp_path.chmod(0o755)
    good = {
        "CFLAGS": "-O2 -I/usr/include -isystem/usr/include -DNDEBUG",
        "LDFLAGS": "-L/usr/lib -Wl,-rpath,/usr/lib -Wl,-O1",
        "CPPFLAGS": "-idirafter /usr/include -I /usr/include",
        "NVCC_APPEND_FLAGS": "-Xcompiler=-O2 --library-path=/usr/lib",
        "COMPILER_PATH": "/usr/local/nothing:/usr/lib/gcc",
        "LD_LIBRARY_PATH": "/usr/lib",
    }
    assert after(**good) == good


def _export_stub_cmd(prefix: Path) -> str:
    """The exported playbook's stub task's shell command (seed-sm120-pip-cu13's plan), its
    toolkit prefix moved to `prefix`."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from test_export_ansible import example_plan, load, walk_tasks

    from remedy.export.ansible import export_ansible

    plan = example_plan("seed-sm120-pip-cu13")
    play = load(export_ansible(plan, verify="cheap"))
    task = next(t for t in walk_tasks(play["tasks"]) if "ansible.builtin.shell" in t)
    cmd = str(task["ansible.builtin.shell"]["cmd"])
    old = next(s.operation.prefix for s in plan.steps if s.operation.op == "link-layout")
    assert old in cmd
    return cmd.replace(old, str(prefix))


def _run_export_stub(area: Path, cwd: Path, login: dict[str, str]) -> str | None:
    prefix = area / "cuda"
    (prefix / "lib").mkdir(parents=True)
    cmd = _export_stub_cmd(prefix)
    subprocess.run(
        ["env", "-i", f"PATH={SYSTEM_PATH}", *(f"{k}={v}" for k, v in login.items()),
         "sh", "-c", cmd],
        cwd=cwd, capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    canary = area / "canary"
    if canary.exists():
        return canary.read_text()
    assert (prefix / "lib" / "stubs" / "libcuda.so").exists(), "the stub was not built"
    return None


@needs_root
def test_the_exported_stub_task_runs_no_as_from_its_working_directory(area: Path):
    """Ansible runs the shell task in the login user's working directory (here uid 65534's,
    holding `as`); the login COMPILER_PATH ends in `:`."""
    theirs = _theirs(area)
    ran = _run_export_stub(area, theirs, {"COMPILER_PATH": "/usr/local/nothing:"})
    assert ran is None, f"the playbook's cc ran uid 65534's ./as: {ran}"


@needs_root
def test_control_the_exported_stub_task_uses_roots_compiler_path(area: Path):
    d = gcc_dir(area, 0, link=True)
    ran = _run_export_stub(area, Path("/"), {"COMPILER_PATH": str(d)})
    assert ran and "uid 0" in ran, f"root's own COMPILER_PATH was left out: {ran}"
