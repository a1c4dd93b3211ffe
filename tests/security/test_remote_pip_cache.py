"""Over SSH, a step's pip never reads a cache another user can write into either.

The local transport scrubs the environment it starts steps with (remedy.childenv); over SSH a
step starts in the host's login environment (its `/etc/environment` through pam_env, sshd's
`SetEnv`, root's own HOME), which remedy does not set. Here that environment comes from the
key's `environment=` options (PermitUserEnvironment) of a loopback sshd logging in as root:
`XDG_CACHE_HOME` naming a shared cache dir (or HOME a home whose `.cache/pip` is root's 0777),
the site's http mirror (`PIP_INDEX_URL`, `PIP_TRUSTED_HOST`). uid 65534 filled the shared
`pip/http/` from its own server at the mirror's address (a page and a wheel carrying a `.pth`,
fresh for a year, last modified in 2100; test_shared_pip_cache.plant). With the honest mirror
back, `remedy run` over SSH applied a `pip-install` into root's venv, and pip took uid 65534's
page and wheel from the cache: the `.pth` in root's site-packages. Now every step's script
judges, on the host, the cache pip would use (`remedy.trust.step_env_guard`) and gives pip
PIP_NO_CACHE_DIR=1 when another user can change it. Control: root's own cache still answers.
"""

from __future__ import annotations

import asyncio
import os
import subprocess
from pathlib import Path

import pytest
from local_sshd import sshd_available
from login_env import guarded, login_sshd
from test_shared_pip_cache import NOBODY, dirs, pin_step, plant, serve
from test_sudo_home_config import _planted

from remedy.executor.runner import Runner
from remedy.model import Facts, Plan, Step
from remedy.planner.plan import facts_digest
from remedy.transport.ssh import SSHTransport

SSHD_REASON = sshd_available()
pytestmark = [
    pytest.mark.skipif(SSHD_REASON is not None, reason=SSHD_REASON or ""),
    *__import__("test_shared_pip_cache").pytestmark,
]


def _apply_over_ssh(tmp_path: Path, facts: Facts, step: Step, login: dict[str, str]) -> None:
    """The real runner over a loopback sshd whose sessions get `login` (every probe passes)."""
    server = login_sshd(tmp_path / "sshd", "cache-host", login)
    plan = Plan(remedy_version="t", host="scratch", facts_digest=facts_digest(facts),
                facts=facts, target=facts.workload, steps=[step])  # fmt: skip

    async def collect(_t):
        return facts

    async def ok(probe, t, f, params=None, consumer=None):
        class R:
            ok, detail, symptoms, skipped, transport_error = True, "", [], None, None

        return R()

    async def go():
        t = SSHTransport(server.alias, ssh_config=str(server.ssh_config))
        try:
            return await Runner(t, collect=collect, prober=ok).run(plan, check_stale=False)
        finally:
            await t.close()

    server.start()
    try:
        report = asyncio.run(go())
    finally:
        server.stop()
    assert report.outcome != "failed", report.message


def pin_cccl_over_ssh(area: Path, links: Path, login: dict[str, str]) -> Path:
    """Root's pip-install step pinning nvidia-cuda-cccl 13.0.85 into a new venv under `area`
    from the local sdist index `links`, applied over a loopback sshd whose sessions get a
    closed pip setup plus `login`; the venv."""
    from remedy.operations import PipInstall

    venv = area / "opt" / "venv"
    subprocess.run(["/usr/bin/python3", "-m", "venv", str(venv)], check=True)
    env = {"XDG_STATE_HOME": str(area / "state"), "PIP_NO_INDEX": "1",
           "PIP_FIND_LINKS": str(links), "PIP_CONFIG_FILE": "/dev/null",
           "PIP_DISABLE_PIP_VERSION_CHECK": "1", **login}  # fmt: skip
    facts = Facts(host="scratch", pythons=[{"path": str(venv), "python": "3.11"}])
    step = Step(action="pip-x", title="pin a package",
                operation=PipInstall(python=str(venv), packages={"nvidia-cuda-cccl": "13.0.85"},
                                     no_deps=True),
                probe="static")  # fmt: skip
    _apply_over_ssh(area, facts, step, env)
    return venv


def _attack(tmp_path: Path, home: Path, base: Path, after_planting=lambda: None) -> Path:
    env, port = plant(tmp_path, base)
    after_planting()
    login = {
        "XDG_STATE_HOME": str(tmp_path / "state"),
        "PIP_INDEX_URL": f"http://127.0.0.1:{port}/simple",
        "PIP_TRUSTED_HOST": f"127.0.0.1:{port}",
        "PIP_DISABLE_PIP_VERSION_CHECK": "1",
        "HOME": str(home),
    }
    if base != home / ".cache":
        login["XDG_CACHE_HOME"] = str(base)
    facts, step = pin_step(env)
    with serve(tmp_path / "honest", port, poison=False):
        _apply_over_ssh(tmp_path, facts, step, login)
    assert (env / "bin" / "python").exists()
    return env


@pytest.mark.parametrize("where", ["XDG_CACHE_HOME", "HOME"])
def test_a_login_environments_pip_cache_others_write_into_is_not_read(tmp_path: Path, where):
    with dirs(where) as (home, base):
        env = _attack(tmp_path, home, base)
        assert not _planted(env), "root installed uid 65534's wheel from the shared pip cache"
        # the step itself still worked: the index's own wheel, fetched again
        assert any(env.glob("lib/python3*/site-packages/nvidia_cuda_cccl-13.0.85.dist-info"))


def test_control_over_ssh_a_cache_only_root_writes_is_used(tmp_path: Path):
    """The same entries once root has taken the cache back (root's, 0755 and 0644)."""
    with dirs("XDG_CACHE_HOME") as (home, base):

        def take_back() -> None:
            for dp, dns, fns in os.walk(base):
                for n in [dp, *(os.path.join(dp, x) for x in dns + fns)]:
                    os.chown(n, 0, 0)
                    os.chmod(n, 0o755 if os.path.isdir(n) else 0o644)

        env = _attack(tmp_path, home, base, take_back)
        assert _planted(env), "root's own cache was not read"


def test_which_caches_the_hosts_step_may_use(tmp_path: Path):
    """The judgement on the host alone (the guard under `env -i` + a login environment):
    as childenv._pip_cache_env judges locally, and a PIP_CACHE_DIR the login environment
    names is judged too (nothing scrubbed it); PIP_NO_CACHE_DIR already set is kept."""

    def guard(**login: str) -> str:
        return guarded('printf %s "${PIP_NO_CACHE_DIR-used}"', login).stdout

    tmp_path.chmod(0o755)
    sticky, mine = tmp_path / "sticky", tmp_path / "mine"
    sticky.mkdir()
    sticky.chmod(0o1777)
    mine.mkdir(mode=0o755)
    assert guard(XDG_CACHE_HOME=f"{sticky}/c") == "1"
    # a HOME anyone may add to is no HOME of root's (redteam-18): the passwd home's cache
    import pwd

    assert guard(HOME=str(sticky)) == guard(HOME=pwd.getpwuid(os.geteuid()).pw_dir)
    assert guard() == "1"  # no HOME: pip's `~` is the passwd home, not judged
    assert guard(XDG_CACHE_HOME="relative/c") == "1"
    assert guard(XDG_CACHE_HOME=str(mine)) == "used"
    assert guard(XDG_CACHE_HOME=" ", HOME=str(mine)) == "used"
    assert guard(PIP_CACHE_DIR=str(sticky)) == "1"
    (mine / ".cache" / "pip").mkdir(parents=True)
    (mine / ".cache" / "pip").chmod(0o777)
    assert guard(HOME=str(mine)) == "1"
    assert guard(HOME=str(mine), PIP_CACHE_DIR=str(mine)) == "used"
    assert guard(HOME=str(mine), PIP_NO_CACHE_DIR="0") == "0"
    # uid 65534's link in the sticky dir to root's own private cache: not followed
    os.symlink(mine, sticky / "link")
    os.lchown(sticky / "link", NOBODY, NOBODY)
    assert guard(PIP_CACHE_DIR=f"{sticky}/link") == "1"
    assert guard(PIP_CACHE_DIR=str(mine)) == "used"
