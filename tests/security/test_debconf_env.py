"""A step's debconf never reads another user's debconf.conf or database.

Every `apt-install` step's apt-get runs debconf as root: its Pre-Install-Pkgs hook
(`/etc/apt/apt.conf.d/70debconf`: `dpkg-preconfigure --apt`) and every postinst that sources
the confmodule. debconf (1.5.82, Debconf/Config.pm) takes its debconf.conf from
DEBCONF_SYSTEMRC, else `$DPKG_ROOT/etc/debconf.conf`, and each stanza's `Driver:` value is
perl code to Debconf/Db.pm (`eval qq{use Debconf::DbDriver::$type}`). The attack, for real:
root's environment (`su` without `-`, `sudo -E`, or the host's login environment over SSH)
has DEBCONF_SYSTEMRC (or DPKG_ROOT) naming a place uid 65534 owns; its file's `Driver: File;
BEGIN {...}` wrote the canary as root from `dpkg-preconfigure --apt`. DEBCONF_DB_OVERRIDE (and
_REPLACE, _FALLBACK) `File{PATH}`: debconf creates a missing PATH with `sysopen O_CREAT`,
which follows uid 65534's dangling link: root created a file where it pointed (and takes its
answers as the packages' configuration). Now these are left out where they name a place
another user can change, locally (remedy.childenv) and on the host (step_env_guard);
controls: root's own are kept, and a database by name (`configdb`) or a `Pipe` is no place.
"""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

import pytest
from login_env import SYSTEM_PATH, guarded

from remedy.transport.local import LocalTransport

PRECONFIGURE = "/usr/sbin/dpkg-preconfigure"
pytestmark = [
    pytest.mark.skipif(os.geteuid() != 0, reason="a directory another user owns"),
    pytest.mark.skipif(not os.access(PRECONFIGURE, os.X_OK), reason="debconf"),
]
NOBODY = 65534
VARS = ("DEBCONF_SYSTEMRC", "DPKG_ROOT", "DEBCONF_DB_REPLACE", "DEBCONF_DB_OVERRIDE",
        "DEBCONF_DB_FALLBACK")  # fmt: skip


def _conf(canary: Path) -> str:
    """A debconf.conf like /etc/debconf.conf whose config driver's name runs perl code."""
    return (
        "Config: configdb\nTemplates: templatedb\n\n"
        "Name: configdb\n"
        f'Driver: File; BEGIN {{ open my $f, ">", "{canary}"; print $f "ran as $>"; }}\n'
        "Filename: /var/cache/debconf/config.dat\n\n"
        "Name: templatedb\nDriver: File\nMode: 644\nFilename: /var/cache/debconf/templates.dat\n"
    )


def _plant(tmp: Path, owner: int) -> tuple[Path, dict[str, dict[str, str]], Path]:
    """`owner`'s dir with a debconf.conf (also as DPKG_ROOT's etc/) and a link `db` to a
    file not yet made in a root-only dir; the canary path, the forms, the link's target."""
    tmp.chmod(0o755)
    canary, outside = tmp / "canary", tmp / "outside"
    outside.mkdir(mode=0o755)
    d = tmp / "theirs"
    (d / "root" / "etc").mkdir(parents=True)
    for p in (d / "debconf.conf", d / "root" / "etc" / "debconf.conf"):
        p.write_text(_conf(canary))
    (d / "db").symlink_to(outside / "made")
    for p in (d, d / "root", d / "root" / "etc", *d.rglob("*")):
        os.lchown(p, owner, owner)
    forms = {
        "DEBCONF_SYSTEMRC": {"DEBCONF_SYSTEMRC": str(d / "debconf.conf")},
        "DPKG_ROOT": {"DPKG_ROOT": str(d / "root")},
        "DEBCONF_DB_OVERRIDE": {"DEBCONF_DB_OVERRIDE": f"File{{{d / 'db'}}}"},
        "DEBCONF_DB_FALLBACK": {"DEBCONF_DB_FALLBACK": f"File{{filename:{d / 'db'}}}"},
        "DEBCONF_DB_REPLACE": {"DEBCONF_DB_REPLACE": f"File{{mode:600 {d / 'db'}}}"},
    }
    return canary, forms, outside / "made"


def _step(env: dict[str, str], monkeypatch) -> None:
    """What an apt-install step's apt-get runs first, started by the local transport with
    `env` inherited by remedy (not given to the transport)."""
    for k in VARS:
        monkeypatch.delenv(k, raising=False)
    for k, v in env.items():
        monkeypatch.setenv(k, v)
    t = LocalTransport("local")
    asyncio.run(t.run(["sh", "-c", PRECONFIGURE + " --apt </dev/null"], timeout=60))


def _host_step(env: dict[str, str]) -> None:
    """The same over SSH: the step's script (step_env_guard first) in a login environment."""
    guarded(PRECONFIGURE + " --apt </dev/null", env, path=SYSTEM_PATH, check=False)


@pytest.mark.parametrize("where", ["local", "host"])
@pytest.mark.parametrize("form", ["DEBCONF_SYSTEMRC", "DPKG_ROOT"])
def test_debconf_runs_no_code_from_another_users_conf(tmp_path, monkeypatch, form, where):
    canary, forms, _ = _plant(tmp_path, NOBODY)
    _step(forms[form], monkeypatch) if where == "local" else _host_step(forms[form])
    assert not canary.exists(), f"root's debconf ran uid 65534's driver code ({form}, {where})"


@pytest.mark.parametrize("where", ["local", "host"])
@pytest.mark.parametrize(
    "form", ["DEBCONF_DB_OVERRIDE", "DEBCONF_DB_FALLBACK", "DEBCONF_DB_REPLACE"]
)
def test_debconf_makes_no_database_through_another_users_link(tmp_path, monkeypatch, form, where):
    _, forms, made = _plant(tmp_path, NOBODY)
    _step(forms[form], monkeypatch) if where == "local" else _host_step(forms[form])
    assert not made.exists(), f"root's debconf created a file through uid 65534's link ({form})"


@pytest.mark.parametrize("where", ["local", "host"])
@pytest.mark.parametrize("form", ["DEBCONF_SYSTEMRC", "DPKG_ROOT", "DEBCONF_DB_OVERRIDE"])
def test_control_roots_own_debconf_settings_are_kept(tmp_path, monkeypatch, form, where):
    canary, forms, _ = _plant(tmp_path, 0)
    made = tmp_path / "theirs" / "config.dat"  # root's dir here: made by debconf
    forms["DEBCONF_DB_OVERRIDE"] = {"DEBCONF_DB_OVERRIDE": f"File{{{made}}}"}
    _step(forms[form], monkeypatch) if where == "local" else _host_step(forms[form])
    if form == "DEBCONF_DB_OVERRIDE":
        assert made.exists(), "root's own DEBCONF_DB_OVERRIDE was not kept"
    else:
        assert canary.read_text() == "ran as 0", f"root's own {form} was not kept"


def test_what_is_judged_in_a_debconf_database_value(tmp_path: Path):
    """Names of databases and non-path options are kept; `/a/b:c` is a filename to debconf."""
    from remedy.childenv import own_config_env

    tmp_path.chmod(0o755)
    theirs = tmp_path / "theirs"
    theirs.mkdir()
    os.chown(theirs, NOBODY, NOBODY)
    mine = tmp_path / "mine.dat"

    def after(value: str) -> tuple[str, bool]:
        r = guarded('printf %s "${DEBCONF_DB_OVERRIDE-unset}"', {"DEBCONF_DB_OVERRIDE": value})
        kept = own_config_env({b"DEBCONF_DB_OVERRIDE": os.fsencode(value)}) == {}
        return r.stdout, kept

    for value in ("configdb", "Pipe{infd:none outfd:none}", f"File{{{mine} mode:600}}"):
        assert after(value) == (value, True), value
    for value in (f"File{{{theirs}/x:y}}", f"DirTree{{directory:{theirs}}}", "File{db.dat}",
                  f"File{{{theirs}/db", "File;x{/etc/x}", f"File{{backup:{theirs}/x}}"):  # fmt: skip
        assert after(value) == ("unset", False), value
