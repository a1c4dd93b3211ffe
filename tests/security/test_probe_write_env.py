"""A probe's compiler never writes a file the workload's environment names (class 3).

The attack, for real: a service's environment (its EnvironmentFile=, typically the service
user's) sets `DEPENDENCIES_OUTPUT` (or `SUNPRO_DEPENDENCIES`), which every gcc/g++ run honours
by writing the make dependencies of what it compiles to that file, the target name taken from
the value's second word: `DEPENDENCIES_OUTPUT='/etc/cron.d/x * * * * * root CMD #'` makes root's
compiler write `* * * * * root CMD #: probe_host.cpp` to /etc/cron.d/x, a line cron runs as
root every minute. link-probe (root's `c++` with the workload's environment) wrote it; the
environment checks looked only at locations code is loaded from. Here a root-owned stand-in
for /etc/cron.d must stay empty. Now a probe whose environment sets a variable that makes the
compiler write a file is skipped with the reason, as for a code location another user owns.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from test_probe_env import probe

needs_root = pytest.mark.skipif(os.geteuid() != 0, reason="root's probe, as remedy runs it")


@pytest.fixture
def area(tmp_path: Path) -> Path:
    tmp_path.chmod(0o755)
    return tmp_path


@needs_root
@pytest.mark.parametrize("var", ["DEPENDENCIES_OUTPUT", "SUNPRO_DEPENDENCIES"])
def test_the_compiler_writes_no_file_the_environment_names(area: Path, var: str):
    crond = area / "cron.d"
    crond.mkdir()
    target = crond / "remedy-probe"
    env = {"PATH": "/usr/bin:/bin", var: f"{target} * * * * * root touch {area}/pwn #"}
    res = probe(area, "link-probe", env)
    assert not target.exists(), f"root's compiler wrote {target}:\n{target.read_text()}"
    assert res.skipped and var in res.skipped, res.detail


@needs_root
def test_control_the_probe_runs_without_it(area: Path):
    res = probe(area, "link-probe", {"PATH": "/usr/bin:/bin"})
    assert not res.skipped, res.detail


def _plant_pyc(prefix: Path, canary: Path) -> None:
    """A bytecode cache for every python3 on this host's `json/__init__.py`, under the
    PYTHONPYCACHEPREFIX layout, whose header matches the source (mtime, size): Python runs it
    instead of the source."""
    import glob
    import struct
    import subprocess

    code = f"open({str(canary)!r}, 'a').write('pyc ran as ' + str(__import__('os').getuid()))\n"
    for py in ("/usr/bin/python3", *glob.glob("/usr/local/bin/python3*")):
        r = subprocess.run([py, "-c", "import json,sys,importlib.util as u; "
                            "print(json.__file__); print(u.MAGIC_NUMBER.hex()); "
                            "print(sys.implementation.cache_tag)"],
                           capture_output=True, text=True)  # fmt: skip
        if r.returncode != 0:
            continue
        src, magic, tag = r.stdout.split()
        st = os.stat(src)
        body = subprocess.run([py, "-c", "import marshal,sys; sys.stdout.buffer.write("
                               f"marshal.dumps(compile({code!r}, {src!r}, 'exec')))"],
                              capture_output=True, check=True).stdout  # fmt: skip
        pyc = prefix / src.lstrip("/")
        pyc = pyc.parent / f"{pyc.stem}.{tag}.pyc"
        pyc.parent.mkdir(parents=True, exist_ok=True)
        head = bytes.fromhex(magic) + struct.pack(
            "<III", 0, int(st.st_mtime), st.st_size & 0xFFFFFFFF
        )
        pyc.write_bytes(head + body)


@needs_root
@pytest.mark.parametrize("owner", [65534, 0], ids=["nobody", "control-root"])
def test_a_bytecode_cache_another_user_owns_is_not_run(area: Path, owner: int):
    """PYTHONPYCACHEPREFIX names where Python takes the bytecode of what it imports: the
    service user's dir held a `json` pyc that link-probe's python ran as root."""
    from test_probe_env import own

    prefix, canary = area / "svc" / "pyc", area / "canary"
    _plant_pyc(prefix, canary)
    own(area / "svc", owner)
    res = probe(area, "link-probe", {"PATH": "/usr/bin:/bin", "PYTHONPYCACHEPREFIX": str(prefix)})
    if owner:
        assert not canary.exists(), canary.read_text()
        assert res.skipped and "PYTHONPYCACHEPREFIX" in res.skipped, res.detail
    else:
        assert canary.exists(), "the planted bytecode was not run: the attack is not real"


def _flag_attack(area: Path, kind: str, owner: int) -> tuple[dict[str, str], Path]:
    """FLASHINFER_EXTRA_LDFLAGS (link-probe puts it on root's `c++` line, as FlashInfer does)
    naming uid `owner`'s program through an option that runs, loads or writes."""
    from test_probe_env import own

    d, canary = area / "svc", area / "canary"
    d.mkdir(exist_ok=True)
    w = d / "w.sh"
    w.write_text(f'#!/bin/sh\necho "$1" >> {canary}\nexec "$@"\n')
    w.chmod(0o755)
    (d / "opts").write_text(f"-wrapper {w}\n")
    (d / "x.specs").write_text(f"*linker:\n{w} ld\n\n")
    flags = {
        "wrapper": f"-wrapper {w}",
        "wrapper-joined": f"-Wl,-O1 -wrapper={w}",
        "response-file": f"@{d / 'opts'}",
        "specs": f"-specs={d / 'x.specs'}",
        "depfile": f"-MD -MF {area / 'cron.d-x'}",
        "linker-map": f"-Wl,-Map={area / 'cron.d-x'}",
    }[kind]
    own(d, owner)
    return {"PATH": "/usr/bin:/bin", "FLASHINFER_EXTRA_LDFLAGS": flags}, canary


FLAG_KINDS = ["wrapper", "wrapper-joined", "response-file", "specs", "depfile", "linker-map"]


@needs_root
@pytest.mark.parametrize("kind", FLAG_KINDS)
def test_a_compiler_flag_that_runs_or_writes_is_not_put_on_roots_compiler(area: Path, kind):
    env, canary = _flag_attack(area, kind, 65534)
    res = probe(area, "link-probe", env)
    ran = canary.read_text() if canary.exists() else ""
    assert not ran, f"root's c++ ran uid 65534's program through {kind}: {ran}"
    assert not (area / "cron.d-x").exists(), "root's compiler wrote the file the flags named"
    assert res.skipped and "FLASHINFER_EXTRA_LDFLAGS" in res.skipped, res.detail


@needs_root
def test_control_plain_link_flags_pass(area: Path):
    env = {"PATH": "/usr/bin:/bin",
           "FLASHINFER_EXTRA_LDFLAGS": "-Wl,-rpath,/usr/lib -Wl,--no-as-needed -lm -O2"}  # fmt: skip
    res = probe(area, "link-probe", env)
    assert not res.skipped, res.detail


CUDA = Path("/usr/local/cuda-13.0")


def _nvcc_probe(area: Path, env: dict[str, str]):
    import asyncio

    from remedy.model import Facts, Gpu
    from remedy.probes import run_probe
    from remedy.transport.local import LocalTransport

    facts = Facts(gpus=[Gpu(name="g", compute_cap="12.0")], shell_env=env)
    return asyncio.run(
        run_probe(
            "preprocess-probe",
            LocalTransport("local"),
            facts,
            params={"prefix": str(CUDA)},
            timeout=120,
        )  # fmt: skip
    )


@needs_root
@pytest.mark.skipif(not (CUDA / "bin" / "nvcc").exists(), reason="a real nvcc")
@pytest.mark.parametrize("owner", [65534, 0], ids=["nobody", "control-root"])
def test_nvcc_ccbin_another_user_owns_is_not_run(area: Path, owner: int):
    """nvcc takes its host compiler from NVCC_CCBIN (CUDA 13's nvcc, for real): the workload's
    environment naming uid 65534's `g++` made root's preprocess-probe run it."""
    from test_probe_env import own

    d, canary = area / "svc", area / "canary"
    d.mkdir()
    gxx = d / "g++"
    gxx.write_text(f'#!/bin/sh\necho "ran as $(id -u)" >> {canary}\nexec /usr/bin/g++ "$@"\n')
    gxx.chmod(0o755)
    own(d, owner)
    res = _nvcc_probe(area, {"PATH": "/usr/bin:/bin", "NVCC_CCBIN": str(gxx)})
    if owner:
        assert not canary.exists(), "root's nvcc ran uid 65534's host compiler: " + (
            canary.read_text()
        )
        assert res.skipped and "NVCC_CCBIN" in res.skipped, res.detail
    else:
        assert canary.exists(), f"root's own NVCC_CCBIN was not run: {res.detail}"


@needs_root
def test_a_platlibdir_leading_out_of_the_prefix_is_refused(area: Path):
    """PYTHONPLATLIBDIR is joined to the interpreter's prefix to find the standard library:
    `../../DIR` made root's python (link-probe's steps.py) import uid 65534's `encodings`."""
    from test_probe_env import own

    d, canary = area / "svc", area / "canary"
    for minor in range(8, 16):
        enc = d / "plat" / f"python3.{minor}" / "encodings"
        enc.mkdir(parents=True)
        (enc / "__init__.py").write_text(  # builtins.open is not there yet: posix is
            f"import posix\nfd = posix.open({str(canary)!r}, posix.O_WRONLY | posix.O_CREAT"
            f" | posix.O_APPEND, 0o644)\nposix.write(fd, b'encodings ran')\n"
        )
    own(d, 65534)
    env = {"PATH": "/usr/bin:/bin", "PYTHONPLATLIBDIR": f"../../../../../../..{d}/plat"}
    res = probe(area, "link-probe", env)
    assert not canary.exists(), "root's python took its standard library from uid 65534's dir"
    assert res.skipped and "PYTHONPLATLIBDIR" in res.skipped, res.detail


@needs_root
def test_control_a_platlibdir_name_is_kept(area: Path):
    from remedy.trust import env_code_paths

    assert env_code_paths({"PYTHONPLATLIBDIR": "lib64"})[1] is None


@needs_root
@pytest.mark.parametrize("owner", [65534, 0], ids=["nobody", "control-root"])
def test_a_home_another_user_owns_gives_root_no_user_site(area: Path, owner: int):
    """HOME in the workload's environment (a unit's Environment=/EnvironmentFile=): root's
    probe python (link-probe's steps.py) ran the `.pth` of that home's user site."""
    from test_probe_env import own

    home, canary = area / "svc-home", area / "canary"
    for minor in range(8, 16):
        sp = home / ".local" / "lib" / f"python3.{minor}" / "site-packages"
        sp.mkdir(parents=True)
        (sp / "zz_planted.pth").write_text(
            f"import os; open({str(canary)!r}, 'a').write('user site ran as %d' % os.getuid())\n"
        )
    own(home, owner)
    res = probe(area, "link-probe", {"PATH": "/usr/bin:/bin", "HOME": str(home)})
    if owner:
        assert not canary.exists(), canary.read_text()
        assert res.skipped and "HOME holds" in res.skipped, res.detail
    else:
        assert canary.exists(), "root's own HOME's user site was not read: the attack is not real"
