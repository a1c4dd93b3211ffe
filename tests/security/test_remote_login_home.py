"""Over SSH, a HOME the login environment sets to another user's place is not root's HOME.

A step over SSH starts in the host's login environment (/etc/environment through pam_env,
sshd's SetEnv; here a loopback sshd's key `environment=` options, PermitUserEnvironment).
redteam-16's host-side guard judged the variables childenv judges, but kept HOME: local steps
get the passwd home in place of another user's (remedy.childenv.own_home_env), steps over SSH
did not. uid 65534's home (or a root-owned one anyone may add to, `HOME=/tmp`) holding
`.config/pip/pip.conf` (`no-index`, `find-links` to its wheel carrying a `.pth`): root's
`pip-install` step over SSH installed that wheel into root's venv (the canary). Now the
step's guard replaces such a HOME by the passwd home of the login's user, as own_home_env
does (remedy.trust.step_env_guard). Control: root's own private HOME is kept (its pip.conf
is read).
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path

import pytest
from login_env import guarded, places
from test_remote_pip_cache import SSHD_REASON, _apply_over_ssh
from test_shared_pip_cache import NOBODY, pin_step
from test_sudo_home_config import _home, _planted, _venv

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="a HOME another user owns")


@pytest.mark.skipif(SSHD_REASON is not None, reason=SSHD_REASON or "")
@pytest.mark.parametrize("kind", ["nobody", "sticky", "control-root"])
def test_a_login_home_another_user_can_change_gives_root_no_pip_conf(tmp_path: Path, kind):
    tmp_path.chmod(0o755)
    env = _venv(tmp_path)
    home = _home(tmp_path, "home", NOBODY if kind == "nobody" else 0)
    if kind == "sticky":  # root's, but anyone may add to it (`HOME=/tmp`): uid 65534's pip.conf
        home.chmod(0o1777)
        for dp, dns, fns in os.walk(home / ".config"):
            for n in [dp, *(os.path.join(dp, x) for x in dns + fns)]:
                os.chown(n, NOBODY, NOBODY)
    facts, step = pin_step(env)
    login = {"XDG_STATE_HOME": str(tmp_path / "state"), "HOME": str(home)}
    with contextlib.suppress(AssertionError):  # no index then: the step fails, as locally
        _apply_over_ssh(tmp_path, facts, step, login)
    if kind == "control-root":
        assert _planted(env), "root's own HOME's pip.conf was not read"
    else:
        assert not _planted(env), f"root installed uid 65534's wheel from the login HOME ({kind})"


def test_which_login_homes_a_step_keeps(tmp_path: Path):
    """The guard alone under `env -i`: HOME another user can change (theirs, their link,
    one anyone may add to, a relative or missing one they could create) becomes the passwd
    home; root's own private HOME, and a missing one under root's dir, are kept."""
    import pwd

    def home(value: str | None) -> str:
        login = {} if value is None else {"HOME": value}
        return guarded('printf %s "${HOME-unset}"', login).stdout

    theirs, mine, sticky = (p := places(tmp_path)).theirs, p.mine, p.sticky
    passwd = pwd.getpwuid(os.geteuid()).pw_dir
    for bad in (theirs, sticky, sticky / "link", sticky / "new", theirs / "sub", "rel/home"):
        assert home(str(bad)) == passwd, bad
    assert home(str(mine)) == str(mine)
    assert home(str(mine / "missing")) == str(mine / "missing")
    assert home(None) == "unset"
