"""gcc never runs another user's `cc1plus`, `as`, `collect2` or `ld` from a place the
environment names for it, nor its `as`/`ld` from a root-owned PATH dir (redteam-23).

gcc 12 (Debian's, traced with canaries in each name): `-B DIR` and every `COMPILER_PATH`
entry make it run DIR/cc1 (cc1plus), DIR/as, DIR/collect2 (which runs DIR/real-ld), looked up
under DIR/MACHINE/VERSION/, DIR/MACHINE/ and DIR/ (`gcc -print-search-dirs`), and take
startfiles, a `specs` file and headers from there too; `-B PREFIX` naming no directory is a
prefix of names (`-B/d/x-` runs /d/x-cc1). `GCC_EXEC_PREFIX=P/` adds P/../../MACHINE/bin/ too:
a place outside P (`/tmp/MACHINE/bin/` for P=/tmp/a/b/). Without them, gcc finds `as` and `ld`
on PATH (`gcc -print-prog-name=as` is `as`; a PATH dir's canary `as` and `ld` ran).

remedy judged only the directory: a root-owned one holding uid 65534's file, or root's link to
it, passed, and root's link-probe (`c++` with the workload's environment) and a local step's
`cc` (the inherited environment) ran it. Now a gcc directory (`-B`, `COMPILER_PATH`) is judged
by every entry of its tree (links followed), GCC_EXEC_PREFIX is refused (a probe) or left out
(a step) whatever it names, and `as`/`ld` are found on a probe's PATH and judged by name.
Control: the same directory holding root's own wrappers is used, the probe builds.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
from pathlib import Path

import pytest
from test_probe_env import probe

needs_root = pytest.mark.skipif(os.geteuid() != 0, reason="chown to another user needs root")
NOBODY = 65534
NAMES = ("cc1", "cc1plus", "as", "collect2", "ld")


def _real(name: str) -> str:
    r = subprocess.run(["gcc", f"-print-prog-name={name}"], capture_output=True, text=True)
    p = r.stdout.strip()
    if "/" in p:
        return p
    return subprocess.run(
        ["sh", "-c", f"command -v {p}"], capture_output=True, text=True
    ).stdout.strip()


@pytest.fixture
def area(tmp_path: Path) -> Path:
    tmp_path.chmod(0o755)  # a trusted parent: only what the test makes below it varies
    return tmp_path


def gcc_dir(area: Path, owner: int, *, link: bool) -> Path:
    """A root-owned directory (755) holding cc1, cc1plus, as, collect2, ld that append
    `NAME uid $(id -u)` to area/canary, then run the real one: `owner`'s files, or (link)
    root's links to `owner`'s files in area/svc-tools (as an admin points a dir at a toolchain)."""
    d = area / "gcc-tools"
    d.mkdir()
    src = area / "svc-tools" if link else d
    src.mkdir(exist_ok=True)
    for n in NAMES:
        f = src / n
        f.write_text(
            f'#!/bin/sh\necho "{n} uid $(id -u)" >> {area / "canary"}\nexec {_real(n)} "$@"\n'
        )
        f.chmod(0o755)
        os.chown(f, owner, owner)
        if link:
            (d / n).symlink_to(f)
    if link:
        os.chown(src, owner, owner)
    return d


# the workload's environment (a unit's Environment=, the login shell the facts recorded)
PROBE_FORMS = [
    ("COMPILER_PATH", "/usr/local/nothing:{d}"),
    ("FLASHINFER_EXTRA_LDFLAGS", "-B {d}/"),  # the consumer's link line, run by root's c++
    ("FLASHINFER_EXTRA_LDFLAGS", "-B{d}"),
    ("PATH", "{d}:/usr/bin:/bin"),  # gcc's own `as` and `ld` (attack 2)
]


@needs_root
@pytest.mark.parametrize("link", [False, True], ids=["file", "link"])
@pytest.mark.parametrize(("var", "form"), PROBE_FORMS)
def test_a_gcc_directory_holding_another_users_program_is_refused(
    area: Path, var: str, form: str, link: bool
):
    d = gcc_dir(area, NOBODY, link=link)
    env = {"PATH": "/usr/bin:/bin", var: form.format(d=d)}
    res = probe(area, "link-probe", env)
    assert not (area / "canary").exists(), (area / "canary").read_text()
    assert not res.ok and res.skipped, res.detail
    assert res.skipped.startswith("not executed: "), res.skipped
    assert "owned by nobody (uid 65534)" in res.skipped, res.skipped


@needs_root
def test_gcc_exec_prefix_is_refused_whatever_it_names(area: Path):
    """GCC_EXEC_PREFIX=P/ reaches P/../../MACHINE/bin/ (outside P): no owner check of P
    covers it, so a probe whose environment sets it does not run; root's own P included."""
    d = gcc_dir(area, 0, link=False)
    res = probe(area, "link-probe", {"PATH": "/usr/bin:/bin", "GCC_EXEC_PREFIX": f"{d}/"})
    assert not (area / "canary").exists(), (area / "canary").read_text()
    assert res.skipped and "GCC_EXEC_PREFIX" in res.skipped, res.detail


@needs_root
@pytest.mark.parametrize(("var", "form"), PROBE_FORMS)
def test_control_roots_own_gcc_directory_is_used(area: Path, var: str, form: str):
    d = gcc_dir(area, 0, link=True)
    res = probe(area, "link-probe", {"PATH": "/usr/bin:/bin", var: form.format(d=d)})
    assert not res.skipped, res.detail
    ran = (area / "canary").read_text()
    assert " uid 0" in ran, ran  # (cc1plus, collect2, ld: the fake toolkit has no headers)


def test_real_gcc_takes_its_programs_from_there(tmp_path: Path):
    """What the fix judges, proved on the real gcc: -B DIR and COMPILER_PATH are searched
    below DIR only; GCC_EXEC_PREFIX leads above itself; -B PREFIX is a prefix of names."""
    d = tmp_path / "B"
    d.mkdir()

    def prog(*args: str, env: dict[str, str] | None = None) -> str:
        e = {**os.environ, **(env or {})}
        r = subprocess.run(["gcc", *args], capture_output=True, text=True, env=e, check=True)
        return r.stdout

    for n in ("as", "cc1", "x-cc1"):
        (d / n).write_text("#!/bin/sh\nexit 1\n")
        (d / n).chmod(0o755)
    assert prog("-print-prog-name=as", "-B", str(d)).strip() == f"{d}/as"
    assert prog("-print-prog-name=cc1", env={"COMPILER_PATH": str(d)}).strip() == f"{d}/cc1"
    assert prog("-print-prog-name=cc1", f"-B{d}/x-").strip() == f"{d}/x-cc1"
    dirs = prog("-print-search-dirs", env={"GCC_EXEC_PREFIX": f"{d}/"})
    assert f"{d}/../../" in dirs, dirs
    assert prog("-print-prog-name=as").strip() == "as"  # gcc's own: from PATH


def _stub_step(prefix: Path):
    from remedy.model import Step
    from remedy.operations import LinkLayout

    return Step(action="layout-x", title="the libcuda stub",
                operation=LinkLayout(prefix=str(prefix), stub="lib/stubs/libcuda.so"),
                probe="static")  # fmt: skip


@needs_root
@pytest.mark.parametrize(
    ("var", "owner", "ran"),
    [("COMPILER_PATH", NOBODY, False), ("GCC_EXEC_PREFIX", NOBODY, False),
     ("GCC_EXEC_PREFIX", 0, False), ("COMPILER_PATH", 0, True)],
    ids=["compiler-path", "exec-prefix", "exec-prefix-root", "control-compiler-path-root"],
)  # fmt: skip
def test_an_inherited_gcc_directory_is_judged_by_what_it_holds(
    area: Path, monkeypatch, var: str, owner: int, ran: bool
):
    """The inherited environment (`run --local`): the link-layout stub's `cc` ran uid 65534's
    `cc1` (root's link to it in a root-owned COMPILER_PATH dir / GCC_EXEC_PREFIX) as root."""
    from local_apply import apply_locally

    from remedy.childenv import _CONFIG_SEEN
    from remedy.model import Facts

    _CONFIG_SEEN.clear()
    prefix = area / "cuda"
    (prefix / "lib").mkdir(parents=True)
    d = gcc_dir(area, owner, link=True)
    monkeypatch.setenv(var, str(d) + ("/" if var == "GCC_EXEC_PREFIX" else ""))
    facts = Facts(host="scratch", toolkits=[{"prefix": str(prefix), "kind": "system"}])
    with contextlib.suppress(Exception):  # a failed step is fine: what ran is the question
        apply_locally(area, facts, [_stub_step(prefix)])
    canary = area / "canary"
    if ran:
        assert canary.exists() and "uid 0" in canary.read_text(), "root's own dir was not used"
    else:
        assert not canary.exists(), f"root's cc ran {canary.read_text()} from {var}"


@needs_root
def test_the_inherited_flags_naming_a_gcc_directory(area: Path):
    """CFLAGS-like `-B DIR`: judged by what DIR holds (and a `-B PREFIX` naming no directory
    is refused: gcc takes PREFIXcc1); root's own DIR is kept."""
    from remedy.childenv import _CONFIG_SEEN, own_config_env

    _CONFIG_SEEN.clear()
    theirs = gcc_dir(area, NOBODY, link=True)
    mine = area / "mine"
    mine.mkdir()
    (mine / "as").symlink_to("/usr/bin/as")
    bad = {b"CFLAGS": f"-O2 -B{theirs}", b"LDFLAGS": f"-B {theirs}/",
           b"NVCC_APPEND_FLAGS": f"-Xcompiler=-B{theirs},-O2", b"COMPILER_PATH": str(theirs),
           b"CXXFLAGS": f"-B{mine}/x-", b"GCC_EXEC_PREFIX": f"{mine}/"}  # fmt: skip
    assert own_config_env({k: v.encode() for k, v in bad.items()}) == dict.fromkeys(bad)
    good = {b"CFLAGS": f"-O2 -B{mine}", b"COMPILER_PATH": f"{mine}:/usr/lib/gcc"}
    assert own_config_env({k: v.encode() for k, v in good.items()}) == {}
