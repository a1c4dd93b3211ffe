"""A step never reads its configuration from a directory another user owns that the
inherited environment names (XDG_CONFIG_HOME, XDG_CONFIG_DIRS, PIP_CONFIG_FILE, PYTHONPATH,
PYTHONUSERBASE), as it no longer does from a HOME `sudo` kept (test_sudo_home_config.py).

The attack, for real: root's HOME is its own, but the environment `remedy run --local` was
started with (`su` without `-`, `sudo -E`, `env_keep`, a CI runner's) has
XDG_CONFIG_HOME=uid 65534's dir, whose `pip/pip.conf` points pip at its wheel directory
(`no-index`, `find-links`); the `nvidia_cuda_cccl-13.0.85` wheel there carries a `.pth`.
The local transport passed the variable on, root's pip read that pip.conf and installed the
wheel into a root-owned venv (the canary: the .pth in root's site-packages). The same through
PIP_CONFIG_FILE and XDG_CONFIG_DIRS. Now such a variable (an entry of a list) naming another
user's file or directory, or one reached through a link they planted, is left out of the
environment of every command remedy runs locally. Control: root's own XDG_CONFIG_HOME is read.
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path

import pytest
from test_sudo_home_config import _apply, _home, _planted, _venv

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="a config dir another user owns")
NOBODY = 65534


def _run(tmp_path: Path, monkeypatch, var: str, owner: int) -> Path:
    tmp_path.chmod(0o755)
    env = _venv(tmp_path)
    home = _home(tmp_path, f"cfg-{owner}", owner)
    values = {
        "XDG_CONFIG_HOME": {var: str(home / ".config")},
        "XDG_CONFIG_DIRS": {var: f"/etc/xdg:{home / '.config'}"},
        "PIP_CONFIG_FILE": {var: str(home / ".config" / "pip" / "pip.conf")},
        "PIP_FIND_LINKS": {var: f"file://{home / 'wheels'}", "PIP_NO_INDEX": "1",
                           "PIP_CONFIG_FILE": "/dev/null"},
        # pip takes a relative find-links path from its working directory (`/` for a step)
        "PIP_FIND_LINKS-relative": {"PIP_FIND_LINKS": str(home / "wheels").lstrip("/"),
                                    "PIP_NO_INDEX": "1", "PIP_CONFIG_FILE": "/dev/null"},
        # pip percent-decodes a file: URL; undecoded, the nearest existing ancestor is root's
        "PIP_FIND_LINKS-percent": {
            "PIP_FIND_LINKS": "file://" + str(home / "wheels").replace("cfg-65534", "cfg-6553%34"),
            "PIP_NO_INDEX": "1", "PIP_CONFIG_FILE": "/dev/null"},
    }[var]  # fmt: skip
    root_home = tmp_path / "root-home"
    root_home.mkdir()
    for k in ("XDG_CONFIG_HOME", "XDG_CONFIG_DIRS", "PIP_CONFIG_FILE", "PIP_FIND_LINKS"):
        monkeypatch.delenv(k, raising=False)
    orig = os.environ.copy()
    try:
        import test_sudo_home_config as t

        real = t.apply_locally

        def with_var(*a, **kw):  # _apply clears PIP_*/XDG_CONFIG_HOME: set them after that
            os.environ.update(values)
            return real(*a, **kw)

        monkeypatch.setattr(t, "apply_locally", with_var)
        _apply(tmp_path, env, root_home, monkeypatch)
    finally:
        os.environ.clear()
        os.environ.update(orig)
    return env


@pytest.mark.parametrize(
    "var",
    [
        "XDG_CONFIG_HOME",
        "XDG_CONFIG_DIRS",
        "PIP_CONFIG_FILE",
        "PIP_FIND_LINKS",
        "PIP_FIND_LINKS-relative",
        "PIP_FIND_LINKS-percent",
    ],  # fmt: skip
)
def test_a_pip_conf_another_user_owns_named_by_the_environment_is_not_read(
    tmp_path: Path, monkeypatch, var: str
):
    env = _run(tmp_path, monkeypatch, var, NOBODY)
    assert not _planted(env), f"root installed uid 65534's wheel from the pip.conf {var} names"


def test_control_roots_own_xdg_config_home_is_read(tmp_path: Path, monkeypatch):
    env = _run(tmp_path, monkeypatch, "XDG_CONFIG_HOME", 0)
    assert _planted(env), "root's own pip.conf was not read"


def _stub_step(prefix: Path):
    from remedy.model import Step
    from remedy.operations import LinkLayout

    return Step(action="layout-x", title="the libcuda stub",
                operation=LinkLayout(prefix=str(prefix), stub="lib/stubs/libcuda.so"),
                probe="static")  # fmt: skip


@pytest.mark.parametrize("owner", [NOBODY, 0], ids=["nobody", "control-root"])
def test_compiler_path_naming_another_users_as_runs_nothing(tmp_path: Path, monkeypatch, owner):
    """COMPILER_PATH inherited: gcc looks there for `as`, `ld`, `collect2` before PATH; the
    link-layout stub's `cc` ran uid 65534's `as` as root. Control: root's own dir is used."""
    from local_apply import apply_locally

    from remedy.model import Facts

    tmp_path.chmod(0o755)
    prefix, tools, canary = tmp_path / "cuda", tmp_path / "tools", tmp_path / "canary"
    (prefix / "lib").mkdir(parents=True)
    tools.mkdir()
    for t in ("as", "ld", "collect2"):
        (tools / t).write_text(f"#!/bin/sh\necho {t} >> {canary}\nexit 1\n")
        (tools / t).chmod(0o755)
        os.chown(tools / t, owner, owner)
    os.chown(tools, owner, owner)
    monkeypatch.setenv("COMPILER_PATH", str(tools))
    facts = Facts(host="scratch", toolkits=[{"prefix": str(prefix), "kind": "system"}])
    # a failed step is fine: what ran is the question
    with contextlib.suppress(Exception):
        apply_locally(tmp_path, facts, [_stub_step(prefix)])
    if owner == NOBODY:
        assert not canary.exists(), "root's cc ran uid 65534's " + canary.read_text()
    else:
        assert canary.exists(), "root's own COMPILER_PATH was not used"


def test_an_inherited_platlibdir_leading_out_is_left_out(tmp_path: Path, monkeypatch):
    """PYTHONPLATLIBDIR=../../DIR inherited: root's `ENV/bin/python -m pip` took its standard
    library (`encodings`, run at start-up) from uid 65534's DIR."""
    tmp_path.chmod(0o755)
    env = _venv(tmp_path)
    d, canary = tmp_path / "plat", tmp_path / "canary"
    for minor in range(8, 16):
        enc = d / f"python3.{minor}" / "encodings"
        enc.mkdir(parents=True)
        (enc / "__init__.py").write_text(
            f"import posix\nfd = posix.open({str(canary)!r}, posix.O_WRONLY | posix.O_CREAT"
            f" | posix.O_APPEND, 0o644)\nposix.write(fd, b'encodings ran')\n"
        )
    for dp, dns, fns in os.walk(d):
        for n in [dp, *(os.path.join(dp, x) for x in dns + fns)]:
            os.chown(n, NOBODY, NOBODY)
    import test_sudo_home_config as t

    real = t.apply_locally

    def with_var(*a, **kw):
        monkeypatch.setenv("PYTHONPLATLIBDIR", "../../../../../../../.." + str(d))
        return real(*a, **kw)

    monkeypatch.setattr(t, "apply_locally", with_var)
    root_home = tmp_path / "root-home"
    root_home.mkdir()
    with contextlib.suppress(Exception):
        _apply(tmp_path, env, root_home, monkeypatch)
    assert not canary.exists(), "root's pip ran uid 65534's encodings"


@pytest.mark.parametrize("owner", [NOBODY, 0], ids=["nobody", "control-root"])
def test_an_inherited_pycache_prefix_another_user_owns_runs_no_bytecode(
    tmp_path: Path, monkeypatch, owner: int
):
    """PYTHONPYCACHEPREFIX inherited (`su` without `-`, `sudo -E`): Python takes the bytecode
    of every module it imports from there when its header matches the source (mtime, size,
    which anyone can read), and root's `ENV/bin/python -m pip` of a pip-install step ran
    uid 65534's `json` pyc. Now left out like PYTHONPATH; control: root's own dir is used."""
    from test_probe_write_env import _plant_pyc

    tmp_path.chmod(0o755)
    env = _venv(tmp_path)
    prefix, canary = tmp_path / "pyc", tmp_path / "canary"
    _plant_pyc(prefix, canary)
    for dp, dns, fns in os.walk(prefix):
        for n in [dp, *(os.path.join(dp, x) for x in dns + fns)]:
            os.chown(n, owner, owner)
    import test_sudo_home_config as t

    real = t.apply_locally

    def with_var(*a, **kw):
        monkeypatch.setenv("PYTHONPYCACHEPREFIX", str(prefix))
        return real(*a, **kw)

    monkeypatch.setattr(t, "apply_locally", with_var)
    root_home = tmp_path / "root-home"
    root_home.mkdir()
    with contextlib.suppress(Exception):
        _apply(tmp_path, env, root_home, monkeypatch)
    if owner == NOBODY:
        assert not canary.exists(), "root's pip ran uid 65534's bytecode: " + canary.read_text()
    else:
        assert canary.read_text().startswith("pyc ran as 0"), "root's own prefix was not used"


def test_control_pip_options_that_name_no_place_are_kept(monkeypatch):
    """Every PIP_* word is now looked at as a place (from `/`): options that are no path
    (`1`, `60`, `off`, a remote index) still reach pip."""
    from remedy.transport.base import own_config_env

    environ = {b"PIP_NO_INDEX": b"1", b"PIP_DEFAULT_TIMEOUT": b"60",
               b"PIP_PROGRESS_BAR": b"off", b"PIP_INDEX_URL": b"https://pypi.org/simple",
               b"PIP_TRUSTED_HOST": b"pypi.org files.pythonhosted.org"}  # fmt: skip
    assert own_config_env(environ) == {}
