"""A step's programs never load a library another user can change through the loader
variables `remedy run --local` inherited (LD_LIBRARY_PATH, LD_PRELOAD, LD_AUDIT).

The attack, for real: root's environment (root's own profile, `su` without `-`, a CI runner's)
has LD_LIBRARY_PATH naming a directory uid 65534 owns (a service venv's `nvidia/*/lib`, a job's
library dir). That user puts there a library remedy's own python never loads: `libsframe.so.0`,
which root's `as` and `ld` (libbfd) load when the link-layout step's `cc` builds the libcuda
stub. Its constructor ran as root (the canary). The same through `;` (ld.so splits
LD_LIBRARY_PATH on it too) behind a root-owned entry, and through LD_PRELOAD. Now a loader list
with such an entry is left out of every local command's environment
(`remedy.childenv.own_config_env`); control: root's own directory is used.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
from pathlib import Path

import pytest

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="a library dir another user owns")
NOBODY = 65534
CTOR = r"""
#include <fcntl.h>
#include <unistd.h>
__attribute__((constructor)) static void ran(void) {
  char b[32]; int n = 0; unsigned u = getuid();
  do { b[n++] = '0' + u % 10; u /= 10; } while (u);
  int fd = open(CANARY, O_WRONLY | O_CREAT | O_APPEND, 0644);
  if (fd >= 0) { write(fd, "ran as ", 7); while (n) write(fd, &b[--n], 1); write(fd, "\n", 1); }
}
"""


def _needs_libsframe() -> bool:
    """`as` (libbfd) loads libsframe.so.0 here: the library the attack plants."""
    if not shutil.which("cc") or not shutil.which("as"):
        return False
    r = subprocess.run(["ldd", shutil.which("as") or "as"], capture_output=True, text=True)
    return "libsframe.so.0" in r.stdout


def _plant(d: Path, canary: Path, owner: int) -> Path:
    d.mkdir()
    src = d / "c.c"
    src.write_text(f"#define CANARY {str(canary)!r}\n".replace("'", '"') + CTOR)
    lib = d / "libsframe.so.0"
    subprocess.run(["cc", "-shared", "-fPIC", "-Wl,-soname,libsframe.so.0", "-o", str(lib),
                    str(src)], check=True)  # fmt: skip
    for n in (d, src, lib):
        os.chown(n, owner, owner)
    return lib


def _stub_run(tmp_path: Path, monkeypatch, var: str, value: str) -> None:
    from local_apply import apply_locally
    from test_inherited_config_env import _stub_step

    from remedy.model import Facts

    prefix = tmp_path / "cuda"
    (prefix / "lib").mkdir(parents=True)
    monkeypatch.setenv(var, value)  # this process is started: only its children see it
    facts = Facts(host="scratch", toolkits=[{"prefix": str(prefix), "kind": "system"}])
    with contextlib.suppress(Exception):  # what ran is the question, not the step's outcome
        apply_locally(tmp_path, facts, [_stub_step(prefix)])


@pytest.mark.skipif(not _needs_libsframe(), reason="no cc, or `as` does not load libsframe.so.0")
@pytest.mark.parametrize("var", ["LD_LIBRARY_PATH", "LD_LIBRARY_PATH-semicolon", "LD_PRELOAD"])
def test_a_library_another_user_owns_is_not_loaded_by_a_step(tmp_path: Path, monkeypatch, var):
    tmp_path.chmod(0o755)
    canary = tmp_path / "canary"
    lib = _plant(tmp_path / "libs", canary, NOBODY)
    name, value = {
        "LD_LIBRARY_PATH": ("LD_LIBRARY_PATH", f"/usr/lib:{lib.parent}"),
        "LD_LIBRARY_PATH-semicolon": ("LD_LIBRARY_PATH", f"/usr/lib;{lib.parent}"),
        "LD_PRELOAD": ("LD_PRELOAD", str(lib)),
    }[var]
    _stub_run(tmp_path, monkeypatch, name, value)
    assert not canary.exists(), "root's step loaded uid 65534's library: " + canary.read_text()


@pytest.mark.skipif(not _needs_libsframe(), reason="no cc, or `as` does not load libsframe.so.0")
def test_control_roots_own_library_dir_is_used(tmp_path: Path, monkeypatch):
    tmp_path.chmod(0o755)
    canary = tmp_path / "canary"
    lib = _plant(tmp_path / "libs", canary, 0)
    _stub_run(tmp_path, monkeypatch, "LD_LIBRARY_PATH", str(lib.parent))
    assert canary.read_text().startswith("ran as 0"), "root's own LD_LIBRARY_PATH was not used"


def test_control_loader_lists_of_roots_places_are_kept(monkeypatch):
    """Bare LD_PRELOAD names (found in the library dirs) and system dirs are kept."""
    from remedy.transport.base import own_config_env

    env = {b"LD_LIBRARY_PATH": b"/usr/lib:/lib", b"LD_PRELOAD": b"libc.so.6"}
    assert own_config_env(env) == {}
    assert own_config_env({b"LD_LIBRARY_PATH": b"lib:/usr/lib"}) == {b"LD_LIBRARY_PATH": None}


def _pcre_user() -> str | None:
    """The libpcre2 the system grep loads (its NEEDED name), or None (no such grep)."""
    from remedy.evidence.reader import find_grep

    grep = find_grep()
    if not grep or not shutil.which("cc"):
        return None
    r = subprocess.run(["ldd", grep], capture_output=True, text=True)
    return next((w for w in r.stdout.split() if w.startswith("libpcre2-8.so")), None)


def _plant_pcre(d: Path, name: str, canary: Path, owner: int, binary: str = "grep") -> None:
    """uid `owner`'s `name` in d: the constructor, then the real library (a NEEDED entry under
    another name, so every symbol `binary` asks for is there and it works as before)."""
    real = subprocess.run(["ldd", shutil.which(binary) or binary], capture_output=True, text=True)
    path = next(ln.split("=>")[1].split()[0] for ln in real.stdout.splitlines() if name in ln)
    d.mkdir()
    (d / "libreal.so").symlink_to(path)
    (d / "c.c").write_text(f"#define CANARY {str(canary)!r}\n".replace("'", '"') + CTOR)
    (d / "e.c").write_text("")
    build = d / "build" / "libreal.so"
    build.parent.mkdir()
    subprocess.run(["cc", "-shared", "-fPIC", "-Wl,-soname,libreal.so", "-o", str(build),
                    str(d / "e.c")], check=True)  # fmt: skip
    subprocess.run(["cc", "-shared", "-fPIC", f"-Wl,-soname,{name}", "-o", str(d / name),
                    str(d / "c.c"), "-Wl,--no-as-needed", str(build)], check=True)  # fmt: skip
    for dp, dns, fns in os.walk(d):
        for n in [dp, *(os.path.join(dp, x) for x in dns + fns)]:
            os.chown(n, owner, owner, follow_symlinks=False)


@pytest.mark.skipif(_pcre_user() is None, reason="no grep that loads libpcre2-8, or no cc")
@pytest.mark.parametrize("owner", [NOBODY, 0], ids=["nobody", "control-root"])
def test_the_log_readers_grep_loads_no_library_another_user_owns(tmp_path: Path, owner: int):
    """`remedy diagnose --log FIFO` scans the stream with the system grep, started with the
    inherited environment: LD_LIBRARY_PATH naming uid 65534's dir made root's grep load its
    libpcre2-8 (which remedy's python never loads). Control: root's own dir is used."""
    import sys
    import threading

    tmp_path.chmod(0o755)
    canary, fifo = tmp_path / "canary", tmp_path / "log.fifo"
    _plant_pcre(tmp_path / "libs", str(_pcre_user()), canary, owner)
    os.mkfifo(fifo)

    def write() -> None:
        with open(fifo, "wb") as f:
            f.write(b"step 1\nRuntimeError: CUDA error: no kernel image is available\n")

    w = threading.Thread(target=write, daemon=True)
    w.start()
    env = {**os.environ, "LD_LIBRARY_PATH": str(tmp_path / "libs")}
    r = subprocess.run([sys.executable, "-m", "remedy", "diagnose", "--log", str(fifo)],
                       capture_output=True, text=True, timeout=120, env=env)  # fmt: skip
    w.join(5)
    assert r.returncode in (0, 1, 3), r.stderr
    if owner == NOBODY:
        assert not canary.exists(), "root's grep loaded uid 65534's library: " + canary.read_text()
    else:
        assert canary.read_text().startswith("ran as 0"), "root's own LD_LIBRARY_PATH was unused"


def _seccomp_user() -> str | None:
    """systemd-analyze's libseccomp (found before its RUNPATH through LD_LIBRARY_PATH)."""
    exe = shutil.which("systemd-analyze")
    if not exe or not shutil.which("cc"):
        return None
    r = subprocess.run(["ldd", exe], capture_output=True, text=True)
    return next((w for w in r.stdout.split() if w.startswith("libseccomp.so")), None)


@pytest.mark.skipif(_seccomp_user() is None, reason="no systemd-analyze loading libseccomp")
def test_the_systemd_version_check_loads_no_library_another_user_owns(tmp_path: Path, monkeypatch):
    """`impact --unit`'s verify ran `systemd-analyze verify` in a fixed environment, but then
    `systemd-analyze --version` with the inherited one: LD_LIBRARY_PATH (searched before its
    RUNPATH) naming uid 65534's dir made root's systemd-analyze load its libseccomp.so.2. Now
    both run in the fixed one. Control: the same library is loaded where the variable is
    passed (the stand-in works)."""
    from remedy.units.dropin import verify_unit_files
    from remedy.units.parse import SourceFile, UnitFiles

    tmp_path.chmod(0o755)
    canary, libs = tmp_path / "canary", tmp_path / "libs"
    _plant_pcre(libs, str(_seccomp_user()), canary, NOBODY, "systemd-analyze")
    monkeypatch.setenv("LD_LIBRARY_PATH", str(libs))
    unit = b"[Service]\nExecStart=/bin/true\n"
    res = verify_unit_files(
        UnitFiles("x.service", SourceFile("/etc/systemd/system/x.service", unit))
    )
    assert res.ran and res.systemd_version, res.note
    assert not canary.exists(), "systemd-analyze loaded uid 65534's library: " + canary.read_text()
    exe = shutil.which("systemd-analyze") or "systemd-analyze"
    subprocess.run([exe, "--version"], capture_output=True, check=True)  # control
    assert canary.read_text().startswith("ran as 0"), "the stand-in library was not loaded"
