"""ld's own `-B` keywords inside `-Wl,` are no gcc `-B DIR`; a real `-B DIR` is still judged
(redteam-26).

Both scrubs of a step's environment (remedy.childenv locally, trust.SH_LOGIN_SCRUB over SSH)
read every piece starting `-B` as gcc's `-B DIR`: Ubuntu's default LDFLAGS
(`-Wl,-Bsymbolic-functions`, dpkg's scripts/Dpkg/Vendor/Ubuntu.pm) named the relative place
`symbolic-functions`, so the whole variable was left out of every step. gcc hands each piece
after `-Wl,` to ld, whose -Bdynamic, -Bgroup, -Bno-symbolic, -Bshareable, -Bstatic, -Bsymbolic,
-Bsymbolic-functions are keywords (GNU ld manual, Command-line Options): now kept in gcc's own
variables (CFLAGS, CXXFLAGS, CPPFLAGS, LDFLAGS). Anywhere else `-Bsymbolic` IS gcc's
`-B symbolic` (gcc 12 ran `./symbolic/as` from the working directory: shown below for real),
and `-B -Wl,-Bstatic` hands gcc the relative place `-Wl,-Bstatic`: both still left out, as is
every redteam-23/25 form (their own test files pass unchanged).

`-Wl,-rpath,$ORIGIN` stays left out (relative): GNU make expands an environment variable it
imports (`$(LDFLAGS)` with `$ORIGIN` reads `$(O)RIGIN`), and a ninja or sh step `$ORIGIN` as a
shell variable, so what reaches ld is `RIGIN` or an empty entry, resolved against the working
directory of whatever process later loads the library (shown below with make).
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
from test_gcc_prefix_files import NOBODY
from test_relative_flag_pieces import _local_after

needs_root = pytest.mark.skipif(os.geteuid() != 0, reason="chown to another user needs root")
UBUNTU_LDFLAGS = "-Wl,-Bsymbolic-functions -flto=auto -ffat-lto-objects -Wl,-z,relro"
KEYWORDS = ("-Bdynamic", "-Bgroup", "-Bno-symbolic", "-Bshareable", "-Bstatic", "-Bsymbolic",
            "-Bsymbolic-functions")  # fmt: skip


def _login_after(**env: str) -> dict[str, str]:
    from login_env import kept_by_guard

    return kept_by_guard(**env)


KEPT = {
    "LDFLAGS": UBUNTU_LDFLAGS,
    "CFLAGS": "-O2 -Wl,-Bstatic,-lfoo,-Bdynamic",
    "CXXFLAGS": "-Wl,-Bsymbolic -Wl,-Bno-symbolic -Wl,-Bgroup -Wl,-Bshareable",
    "CPPFLAGS": "-DX=1 -Wl,-Bsymbolic-functions,-z,now",
}
# still left out: gcc reads each as `-B PLACE` with PLACE relative (or another user's)
REFUSED = {
    "LDFLAGS": "-Bsymbolic-functions",  # no -Wl,: gcc's -B symbolic-functions
    "CFLAGS": "-B -Wl,-Bstatic",  # gcc's -B with the place `-Wl,-Bstatic`
    "CXXFLAGS": "-Wl,-Bsymbolic --prefix -Wl,-Bdynamic",
    "CPPFLAGS": "-Wl,-Bsymbolic,-Bsymbolicx",  # not a keyword of ld: judged as before
    "NVCC_APPEND_FLAGS": "-Xcompiler -Wl,-Bsymbolic",  # nvcc splits at commas: gcc -Bsymbolic
    "CUDAFLAGS": "-Wl,-Bstatic",  # nvcc's, not gcc's
}


def test_the_local_scrub_keeps_lds_b_keywords_in_gccs_variables():
    assert _local_after(KEPT) == {}, "a -Wl, ld keyword was read as gcc's -B"


def test_the_login_scrub_keeps_lds_b_keywords_in_gccs_variables():
    assert _login_after(**KEPT) == KEPT


def test_the_local_scrub_still_judges_a_real_b_and_other_places():
    assert _local_after(REFUSED) == dict.fromkeys(REFUSED)


def test_the_login_scrub_still_judges_a_real_b_and_other_places():
    assert _login_after(**REFUSED) == {}


@needs_root
def test_a_keyword_next_to_another_users_b_dir_is_still_left_out(tmp_path: Path):
    tmp_path.chmod(0o755)
    theirs = tmp_path / "theirs"
    theirs.mkdir()
    os.chown(theirs, NOBODY, NOBODY)
    env = {"LDFLAGS": f"-Wl,-Bsymbolic-functions -B{theirs}/"}
    assert _local_after(env) == {"LDFLAGS": None}
    assert _login_after(**env) == {}


def test_origin_rpath_is_still_left_out():
    """`$ORIGIN` does not reach ld as written from a Makefile or a shell: judged relative."""
    env = {"LDFLAGS": "-Wl,-rpath,$ORIGIN/lib"}
    assert _local_after(env) == {"LDFLAGS": None}
    assert _login_after(**env) == {}


def test_why_origin_stays_out_make_reads_it_as_a_relative_place(tmp_path: Path):
    mk = tmp_path / "Makefile"
    mk.write_text("all:\n\t@echo [$(LDFLAGS)]\n")
    r = subprocess.run(["make", "-s", "-f", str(mk)], capture_output=True, text=True,
                       env={**os.environ, "LDFLAGS": "-Wl,-rpath,$ORIGIN/lib"})  # fmt: skip
    if r.returncode != 0:
        pytest.skip("no make here")
    assert r.stdout.strip() == "[-Wl,-rpath,RIGIN/lib]", r.stdout


def _cwd_with_as(area: Path) -> Path:
    """A working directory (uid 65534's) holding `symbolic/as`, `symbolic-functions/as` and
    `-Wl,-Bstatic/as`, each appending `as uid N` to area/canary then running the real one."""
    cwd = area / "cwd"
    cwd.mkdir()
    for d in ("symbolic", "symbolic-functions", "-Wl,-Bstatic"):
        (cwd / d).mkdir()
        f = cwd / d / "as"
        # `--`: the kernel hands sh the script path, which may start with `-`
        f.write_text(f'#!/bin/sh --\necho "as uid $(id -u)" >> {area}/canary\nexec as "$@"\n')
        f.chmod(0o755)
    for p in (cwd, *cwd.rglob("*")):
        os.chown(p, NOBODY, NOBODY)
    (area / "t.c").write_text("int f(void) { return 1; }\n")
    return cwd


def _link(area: Path, cwd: Path, flags: str) -> tuple[int, str | None]:
    """`cc -shared -fPIC $LDFLAGS t.c` run from cwd, as root; (exit status, canary)."""
    r = subprocess.run(["sh", "-c", 'exec cc -shared -fPIC $LDFLAGS "$1" -o "$2"', "sh",
                        str(area / "t.c"), str(area / "t.so")],
                       cwd=cwd, env={**os.environ, "LDFLAGS": flags},
                       capture_output=True, text=True)  # fmt: skip
    canary = area / "canary"
    return r.returncode, canary.read_text() if canary.exists() else None


@needs_root
@pytest.mark.parametrize("flags", [UBUNTU_LDFLAGS, *(f"-Wl,{k}" for k in KEYWORDS)])
def test_a_kept_keyword_runs_nothing_from_the_working_directory(tmp_path: Path, flags: str):
    """What both scrubs now keep, for real: gcc hands it to ld; no `as` of the working
    directory runs (Ubuntu's default LDFLAGS links; a lone -Bstatic may fail to link libc)."""
    tmp_path.chmod(0o755)
    cwd = _cwd_with_as(tmp_path)
    rc, ran = _link(tmp_path, cwd, flags)
    assert ran is None, f"{flags!r} ran the working directory's as: {ran}"
    assert rc == 0 or flags != UBUNTU_LDFLAGS, "gcc did not link with Ubuntu's LDFLAGS"


@needs_root
@pytest.mark.parametrize("flags", ["-Bsymbolic", "-B -Wl,-Bstatic"])
def test_why_the_others_stay_out_gcc_runs_the_working_directorys_as(tmp_path: Path, flags: str):
    """The forms still left out, for real: gcc reads them as `-B PLACE`, and ran uid 65534's
    `as` from the working directory as root."""
    tmp_path.chmod(0o755)
    cwd = _cwd_with_as(tmp_path)
    _, ran = _link(tmp_path, cwd, flags)
    assert ran and "as uid 0" in ran, f"gcc did not read {flags!r} as -B: {ran}"
    assert _local_after({"LDFLAGS": flags}) == {"LDFLAGS": None}
    assert _login_after(LDFLAGS=flags) == {}
