"""The exported playbook's modules never start in a login environment naming another user's code.

Every Ansible module is `python3 AnsiballZ_*.py` started on the host in its login environment
(/etc/environment through pam_env, for the SSH login and again for sudo's become session;
sshd's SetEnv; here a loopback sshd's key `environment=` options, PermitUserEnvironment).
redteam-16 judged that environment in `remedy run`'s step scripts (remedy.trust.step_env_guard);
the playbook's tasks had only `environment: {PATH: …}`. The attack, for real: `PYTHONPATH`
naming a directory uid 65534 owns holding a `sitecustomize.py`, and `ansible-playbook --check`
(the preview that "changes nothing") of `remedy export`'s playbook over SSH: the trust task,
the precondition and every later module ran it as root (the canary `ran as 0`, once a task).
Now the play's first task (`raw`: no Python on the host) runs the same judgement and the
play's `environment:` sets what it names empty before any module's interpreter starts.
Control: a PYTHONPATH only root can change is kept (its sitecustomize runs).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from local_sshd import sshd_available
from login_env import login_sshd
from test_remote_login_env import _shared
from test_shared_pip_cache import NOBODY

from remedy.export import export_plan
from remedy.knowledge.loader import load_knowledge
from remedy.model import Facts
from remedy.planner.plan import make_plan

REPO = Path(__file__).resolve().parents[2]
PLAYBOOK = Path(sys.executable).parent / "ansible-playbook"
SSHD_REASON = sshd_available()

pytestmark = [
    pytest.mark.skipif(os.geteuid() != 0, reason="a directory another user owns"),
    pytest.mark.skipif(not PLAYBOOK.exists(), reason="ansible-core not installed"),
    pytest.mark.skipif(SSHD_REASON is not None, reason=SSHD_REASON or ""),
]


def _check_over_ssh(tmp_path: Path, login: dict[str, str]) -> str:
    """`ansible-playbook --check` of a pip plan's playbook over a loopback sshd whose
    sessions get `login`; the play's output."""
    tmp_path.chmod(0o755)
    env = tmp_path / "venv"
    data = yaml.safe_load((REPO / "src/remedy/examples/seed-sm120-pip-cu13/facts.yaml").read_text())
    facts = Facts.model_validate(json.loads(json.dumps(data).replace("/root/venv", str(env))))
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(env)], check=True)
    pb = tmp_path / "pb.yml"
    pb.write_text(export_plan(make_plan(load_knowledge(), facts), "ansible"))
    server = login_sshd(tmp_path / "sshd", "playbook-host", login)
    server.start()
    try:
        r = subprocess.run(
            [str(PLAYBOOK), "-i", f"{server.alias},", "--check", str(pb),
             "-e", f"ansible_ssh_common_args='-F {server.ssh_config}'"],
            capture_output=True, text=True, timeout=300, cwd=tmp_path,
            env={**os.environ, "ANSIBLE_NOCOLOR": "1"},
        )  # fmt: skip
    finally:
        server.stop()
    out = r.stdout + r.stderr
    # the play reached the precondition (then found the stand-in venv not the facts' one)
    assert "ok: [playbook-host]" in out.split("does the host still match")[-1], out[-3000:]
    return out


@pytest.mark.parametrize("owner", [NOBODY, 0], ids=["nobody", "control-root"])
def test_a_login_pythonpath_another_user_owns_runs_no_module_code_as_root(tmp_path, owner):
    canary = tmp_path / "canary"
    d = _shared(owner, canary)
    try:
        out = _check_over_ssh(tmp_path, {"PYTHONPATH": str(d)})
    finally:
        subprocess.run(["rm", "-rf", "--", str(d)], check=True)
    ran = canary.read_text() if canary.exists() else None
    if owner == NOBODY:
        assert ran is None, f"the playbook's modules ran uid 65534's sitecustomize: {ran}"
    else:
        assert ran and ran.startswith("ran as 0"), "root's own PYTHONPATH was left out\n" + out


@pytest.mark.parametrize("home_cache", ["root-0755", "root-0777"])
def test_the_modules_get_no_pip_cache_another_user_writes_into(tmp_path, home_cache):
    """The same judgement as a step's (redteam-16's test_remote_pip_cache): XDG_CACHE_HOME
    naming uid 65534's dir is set empty for the modules (ansible.builtin.pip's pip among them:
    platformdirs takes an empty one as unset), so pip's cache is HOME's `.cache/pip`; where
    that is root's but 0777 (anyone writes entries into it), pip's cache is off. A root-owned
    PYTHONPATH's sitecustomize records what each module's interpreter was started with."""
    record = tmp_path / "seen"
    d = _shared(0, tmp_path / "unused")
    (d / "sitecustomize.py").write_text(
        "import os\n"
        f"open({str(record)!r}, 'a').write(repr((os.environ.get('XDG_CACHE_HOME'),"
        " os.environ.get('PIP_NO_CACHE_DIR'))) + '\\n')\n"
    )
    theirs, home = tmp_path / "cache", tmp_path / "home"
    theirs.mkdir()
    os.chown(theirs, NOBODY, NOBODY)
    (home / ".cache" / "pip").mkdir(parents=True, mode=0o755)
    home.chmod(0o755)
    (home / ".cache").chmod(0o755)
    (home / ".cache" / "pip").chmod(int(home_cache[-4:], 8))
    login = {"PYTHONPATH": str(d), "XDG_CACHE_HOME": str(theirs), "HOME": str(home)}
    try:
        _check_over_ssh(tmp_path, login)
    finally:
        subprocess.run(["rm", "-rf", "--", str(d)], check=True)
    seen = set(record.read_text().splitlines())
    assert seen == {repr(("", None if home_cache == "root-0755" else "1"))}, seen


@pytest.mark.parametrize("owner", [NOBODY, 0], ids=["nobody", "control-root"])
def test_a_login_home_another_user_owns_gives_the_modules_no_user_site(tmp_path, owner):
    """redteam-18: HOME the login sets to uid 65534's home, whose user site-packages
    (`~/.local/lib/python3.X/site-packages`, on sys.path of root's system python3, which runs
    every module) holds a `.pth` writing the canary: it ran as root in every module of
    `--check`. Now the judgement prints `~PASSWD_HOME` and the play's `environment:` sets
    HOME to it. Control: root's own private HOME is kept (its user site's `.pth` runs)."""
    canary = tmp_path / "canary"
    ver = subprocess.run(["/usr/bin/python3", "-c", "import sys; print('%d.%d' % sys.version_info[:2])"],
                         capture_output=True, text=True, check=True).stdout.strip()  # fmt: skip
    home = tmp_path / "home"
    site = home / ".local" / "lib" / f"python{ver}" / "site-packages"
    site.mkdir(parents=True)
    (site / "zz_canary.pth").write_text(
        f"import os; open({str(canary)!r}, 'a').write(f'ran as {{os.getuid()}}\\n')\n"
    )
    for dp, dns, fns in os.walk(home):
        for n in [dp, *(os.path.join(dp, x) for x in dns + fns)]:
            os.chown(n, owner, owner)
            os.chmod(n, 0o755 if os.path.isdir(n) else 0o644)
    out = _check_over_ssh(tmp_path, {"HOME": str(home)})
    ran = canary.read_text() if canary.exists() else None
    if owner == NOBODY:
        assert ran is None, f"the playbook's modules ran uid 65534's user site .pth: {ran}"
    else:
        assert ran and ran.startswith("ran as 0"), "root's own HOME was replaced\n" + out
