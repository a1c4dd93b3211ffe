"""A step's pip never reads a cache another user can write into.

pip (23.0.1 `check_path_owner`) asks only that the top of its cache directory be root's when
root runs it. A shared cache root owns but anyone may write into (`XDG_CACHE_HOME=/srv/cache`
with a `pip/` made under umask 000 or `chmod -R 777`, or `~/.cache/pip` of a HOME root owns):
uid 65534 ran its own pip (setpriv) against its own server at the index's address, which
answered with a page and a wheel (a `.pth`) cacheable for a year and last modified in 2100;
its pip wrote them into the shared `pip/http/`. The real index then came back (an honest page,
the honest wheel's sha256 on its link) and `remedy run --local` applied a `pip-install` into a
root-owned venv: pip revalidated the index page (If-Modified-Since 2100: 304), used uid
65534's page (its wheel's hash) and the cached wheel, fresh for a year (the canary: the .pth
in root's site-packages). Now the local transport gives a step PIP_NO_CACHE_DIR=1 when that
cache is a place another user can change (remedy.childenv._pip_cache_env), and leaves out an
XDG_CACHE_HOME another user can change. Control: a cache only root can write is still used.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import http.server
import os
import shutil
import subprocess
import tempfile
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from local_apply import apply_locally
from test_sudo_home_config import _planted, _venv, write_wheel

from remedy.model import Facts, Step
from remedy.operations import PipInstall

pytestmark = [
    pytest.mark.skipif(os.geteuid() != 0, reason="a cache another user writes into"),
    pytest.mark.skipif(
        not shutil.which("setpriv")
        or subprocess.run(
            ["/usr/bin/python3", "-m", "pip", "--version"], capture_output=True
        ).returncode
        != 0,  # fmt: skip
        reason="uid 65534's pip is the system's",
    ),
]
NOBODY = 65534
WHEEL = "nvidia_cuda_cccl-13.0.85-py3-none-any.whl"


def index(d: Path, evil: bool) -> None:
    """A PEP 503 index of one wheel, its sha256 on the link (as PyPI's pages have it)."""
    (d / "files").mkdir(parents=True)
    write_wheel(d / "files" / WHEEL, planted=evil)
    digest = hashlib.sha256((d / "files" / WHEEL).read_bytes()).hexdigest()
    page = d / "simple" / "nvidia-cuda-cccl"
    page.mkdir(parents=True)
    (page / "index.html").write_text(
        f'<html><body><a href="../../files/{WHEEL}#sha256={digest}">{WHEEL}</a></body></html>\n'
    )
    for dp, dns, fns in os.walk(d):
        for n in [dp, *(os.path.join(dp, x) for x in dns + fns)]:
            os.chmod(n, 0o755 if os.path.isdir(n) else 0o644)


@contextlib.contextmanager
def serve(d: Path, port: int, poison: bool) -> Iterator[int]:
    """d on 127.0.0.1:port; poisoned: cacheable for a year, last modified in 2100."""

    class H(http.server.SimpleHTTPRequestHandler):
        def end_headers(self):
            if poison:
                self.send_header("Cache-Control", "max-age=31536000")
            super().end_headers()

        def date_time_string(self, timestamp=None):
            if poison and timestamp is not None:  # Last-Modified
                return "Fri, 01 Jan 2100 00:00:00 GMT"
            return super().date_time_string(timestamp)

        def log_message(self, *a):
            pass

    srv = http.server.ThreadingHTTPServer(
        ("127.0.0.1", port), functools.partial(H, directory=str(d))
    )
    t = threading.Thread(target=srv.serve_forever, daemon=True)
    t.start()
    try:
        yield srv.server_address[1]
    finally:
        srv.shutdown()
        srv.server_close()


def plant(tmp_path: Path, cache_base: Path) -> tuple[Path, int]:
    """uid 65534 fills `cache_base/pip` from its own server at 127.0.0.1:PORT (a page and a
    wheel carrying the `.pth`, cacheable for a year): (root's venv, PORT)."""
    tmp_path.chmod(0o755)
    env = _venv(tmp_path)
    index(tmp_path / "honest", evil=False)
    evil = Path(tempfile.mkdtemp(prefix="rt-evil-index-", dir="/tmp"))
    try:
        index(evil / "i", evil=True)
        os.chmod(evil, 0o755)
        (evil / "dl").mkdir()
        os.chown(evil / "dl", NOBODY, NOBODY)
        with serve(evil / "i", 0, poison=True) as port:
            url = f"http://127.0.0.1:{port}/simple"
            r = subprocess.run(
                ["setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups",
                 "env", "-i", "PATH=/usr/bin:/bin", "HOME=/nonexistent",
                 "PIP_CONFIG_FILE=/dev/null", f"XDG_CACHE_HOME={cache_base}",
                 f"PIP_TRUSTED_HOST=127.0.0.1:{port}", "/usr/bin/python3", "-m", "pip",
                 "download", "--no-deps", "--disable-pip-version-check", "-d",
                 f"{evil}/dl", "--index-url", url, "nvidia-cuda-cccl==13.0.85"],
                capture_output=True, text=True, cwd="/",
            )  # fmt: skip
            assert r.returncode == 0, r.stderr
    finally:
        shutil.rmtree(evil)
    planted = [p for p in (cache_base / "pip").rglob("*") if p.is_file()]
    assert len(planted) == 2 and all(p.stat().st_uid == NOBODY for p in planted), planted
    return env, port


def pin_step(env: Path) -> tuple[Facts, Step]:
    """The facts naming root's venv, and the pip-install step into it."""
    facts = Facts(host="scratch", pythons=[{"path": str(env), "python": "3.11"}])
    step = Step(action="pip-x", title="pin a wheel", probe="static",
                operation=PipInstall(python=str(env), packages={"nvidia-cuda-cccl": "13.0.85"},
                                     no_deps=True))  # fmt: skip
    return facts, step


def _attack(
    tmp_path: Path, home: Path, cache_base: Path, monkeypatch, after_planting=lambda: None
) -> Path:
    """uid 65534 fills `cache_base/pip` from its server; root's step then installs from the
    honest one at the same address, with `home` its HOME. The venv root installed into."""
    env, port = plant(tmp_path, cache_base)
    url = f"http://127.0.0.1:{port}/simple"
    after_planting()
    for k in [k for k in os.environ if k.startswith(("PIP_", "XDG_"))]:
        monkeypatch.delenv(k)
    monkeypatch.setenv("HOME", str(home))
    if cache_base != home / ".cache":
        monkeypatch.setenv("XDG_CACHE_HOME", str(cache_base))
    # the index root's environment names (a site's mirror; over http, a trusted host)
    monkeypatch.setenv("PIP_INDEX_URL", url)
    monkeypatch.setenv("PIP_TRUSTED_HOST", f"127.0.0.1:{port}")
    monkeypatch.setenv("PIP_DISABLE_PIP_VERSION_CHECK", "1")
    facts, step = pin_step(env)
    with serve(tmp_path / "honest", port, poison=False):
        apply_locally(tmp_path, facts, [step])
    return env


@contextlib.contextmanager
def dirs(where: str) -> Iterator[tuple[Path, Path]]:
    """(root's HOME, the cache's base) in /tmp, uid 65534 reaching them (the test's own tree
    is root's 0700); `pip/` root's 0777. XDG_CACHE_HOME: a shared dir of its own; HOME: the
    HOME's `.cache`."""
    home = Path(tempfile.mkdtemp(prefix="rt-root-home-", dir="/tmp"))
    shared = Path(tempfile.mkdtemp(prefix="rt-shared-cache-", dir="/tmp"))
    try:
        base = shared if where == "XDG_CACHE_HOME" else home / ".cache"
        base.mkdir(exist_ok=True)
        for d in (home, shared, base):
            d.chmod(0o755)
        (base / "pip").mkdir()
        (base / "pip").chmod(0o777)  # root's, and anyone's to write into
        yield home, base
    finally:
        shutil.rmtree(home)
        shutil.rmtree(shared)


@pytest.mark.parametrize("where", ["XDG_CACHE_HOME", "HOME"])
def test_a_pip_cache_others_write_into_is_not_read(tmp_path: Path, monkeypatch, where: str):
    with dirs(where) as (home, base):
        env = _attack(tmp_path, home, base, monkeypatch)
        assert (env / "bin" / "python").exists()
        assert not _planted(env), "root installed uid 65534's wheel from the shared pip cache"
        # the step itself still worked: the index's own wheel, fetched again
        assert any(env.glob("lib/python3*/site-packages/nvidia_cuda_cccl-13.0.85.dist-info"))


def test_which_caches_a_step_may_use(tmp_path: Path):
    """The judgement alone: a missing `pip/` under a sticky /tmp-like dir is anyone's to
    create after pip's check; under root's 0755 dir, or a PIP_CACHE_DIR that was kept, the
    cache is used."""
    from remedy.childenv import _pip_cache_env

    tmp_path.chmod(0o755)
    sticky, mine = tmp_path / "sticky", tmp_path / "mine"
    sticky.mkdir()
    sticky.chmod(0o1777)
    mine.mkdir(mode=0o755)
    off = {b"PIP_NO_CACHE_DIR": b"1"}
    assert _pip_cache_env({b"XDG_CACHE_HOME": bytes(sticky / "c")}) == off
    assert _pip_cache_env({b"HOME": bytes(sticky)}) == off
    assert _pip_cache_env({b"XDG_CACHE_HOME": bytes(mine)}) == {}
    assert _pip_cache_env({b"XDG_CACHE_HOME": b" ", b"HOME": bytes(mine)}) == {}
    (mine / ".cache" / "pip").mkdir(parents=True)
    (mine / ".cache" / "pip").chmod(0o777)
    assert _pip_cache_env({b"HOME": bytes(mine)}) == off
    assert _pip_cache_env({b"HOME": bytes(mine), b"PIP_CACHE_DIR": bytes(mine)}) == {}


def test_control_a_cache_only_root_writes_is_used(tmp_path: Path, monkeypatch):
    """The same entries once root has taken the cache back (root's, 0755 and 0644): root's
    own cache answers, as pip would have it."""

    with dirs("XDG_CACHE_HOME") as (home, base):

        def take_back() -> None:
            for dp, dns, fns in os.walk(base):
                for n in [dp, *(os.path.join(dp, x) for x in dns + fns)]:
                    os.chown(n, 0, 0)
                    os.chmod(n, 0o755 if os.path.isdir(n) else 0o644)

        env = _attack(tmp_path, home, base, monkeypatch, take_back)
        assert _planted(env), "root's own cache was not read"
