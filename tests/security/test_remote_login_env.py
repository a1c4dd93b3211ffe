"""Over SSH, a step's login environment names no other user's code or configuration.

A step over SSH starts in the host's login environment (its /etc/environment through pam_env,
sshd's SetEnv; here a loopback sshd's key `environment=` options, PermitUserEnvironment),
which the local transport's scrub (remedy.childenv) never sees. `PYTHONPATH` naming a
directory uid 65534 owns (a shared ML tools dir) holding a `sitecustomize.py` (a `pip/`
package did the same): root's `ENV/bin/python -m pip` of a pip-install step ran it (the canary
`ran as 0`). Now every step's script leaves out, on the host, the variables childenv leaves
out where they name a place another user can change (remedy.trust.step_env_guard). Control:
a PYTHONPATH only root can change is kept (its sitecustomize runs).
"""

from __future__ import annotations

import os
import subprocess
import tempfile
from pathlib import Path

import pytest
from login_env import kept_by_guard, places
from test_remote_pip_cache import SSHD_REASON, _apply_over_ssh
from test_shared_pip_cache import NOBODY, pin_step
from test_sudo_home_config import _venv

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="a directory another user owns")


def _shared(owner: int, canary: Path) -> Path:
    """A dir in /tmp owned by `owner` holding a sitecustomize.py that writes `canary`."""
    d = Path(tempfile.mkdtemp(prefix="rt-shared-pylib-", dir="/tmp"))
    d.chmod(0o755)
    site = d / "sitecustomize.py"
    site.write_text(f"import os\nopen({str(canary)!r}, 'w').write(f'ran as {{os.getuid()}}')\n")
    for p in (d, site):
        os.chown(p, owner, owner)
    return d


@pytest.mark.skipif(SSHD_REASON is not None, reason=SSHD_REASON or "")
@pytest.mark.parametrize("owner", [NOBODY, 0], ids=["nobody", "control-root"])
def test_a_login_pythonpath_another_user_owns_runs_nothing_as_root(tmp_path: Path, owner: int):
    tmp_path.chmod(0o755)
    canary = tmp_path / "canary"
    env = _venv(tmp_path)
    d = _shared(owner, canary)
    facts, step = pin_step(env)
    login = {"XDG_STATE_HOME": str(tmp_path / "state"), "PYTHONPATH": str(d),
             "PIP_NO_INDEX": "1", "PIP_FIND_LINKS": str(tmp_path / "wheels")}  # fmt: skip
    (tmp_path / "wheels").mkdir()
    from test_sudo_home_config import write_wheel

    write_wheel(tmp_path / "wheels" / "nvidia_cuda_cccl-13.0.85-py3-none-any.whl", planted=False)
    try:
        _apply_over_ssh(tmp_path, facts, step, login)
    finally:
        subprocess.run(["rm", "-rf", "--", str(d)], check=True)
    ran = canary.read_text() if canary.exists() else None
    if owner == NOBODY:
        assert ran is None, f"root ran uid 65534's sitecustomize from the login PYTHONPATH: {ran}"
    else:
        assert ran == "ran as 0", "root's own PYTHONPATH was left out"
    assert any(env.glob("lib/python3*/site-packages/nvidia_cuda_cccl-13.0.85.dist-info"))


def test_what_the_host_side_scrub_leaves_out(tmp_path: Path):
    """The judgement alone, under `env -i` + a login environment: what childenv leaves out
    locally (a place another user can change, in any variable, list entry or PIP_*/PERL5OPT
    word) is left out here too; root's own places, remote URLs and plain words are kept."""

    after = kept_by_guard
    theirs, mine, sticky = (p := places(tmp_path)).theirs, p.mine, p.sticky
    out = {
        "PYTHONPATH": f"{mine}:{theirs}",
        "LD_LIBRARY_PATH": f"{mine};{theirs}/lib",
        "LD_PRELOAD": f"libc.so.6 {theirs}/x.so",
        "XDG_CONFIG_HOME": f"{sticky}/link",
        "TMPDIR": str(sticky),
        "PIP_CONFIG_FILE": f"{sticky}/new.conf",
        "PIP_FIND_LINKS": f"https://example.org/w file://{theirs}/w",
        # relative (the guard runs in /): /tmp/<a name no one made yet>, a sticky dir's entry
        # that any user may create (a fixed "tmp/x" failed once root had made /tmp/x itself)
        "PIP_CONSTRAINT": f"tmp/{tmp_path.name}-{os.getpid()}-absent/x",
        "PERL5OPT": f"-Mstrict -I {theirs}",
        "PYTHONPLATLIBDIR": "../../x",
        "XDG_CONFIG_DIRS": f"{mine}:relative",
    }
    assert after(**out) == {}
    kept = {
        "PYTHONPATH": f"{mine}:{mine}/sub",
        "LD_LIBRARY_PATH": str(mine),
        "LD_PRELOAD": "libc.so.6",
        "XDG_CONFIG_HOME": str(mine),
        "PIP_FIND_LINKS": f"https://example.org/w file://{mine}/w",
        "PIP_INDEX_URL": "https://example.org/simple",
        "PIP_DEFAULT_TIMEOUT": "60",
        "PERL5OPT": f"-Mstrict -I{mine}",
        "PYTHONPLATLIBDIR": "lib64",
    }
    assert after(**kept) == kept
