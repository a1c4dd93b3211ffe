"""A unit name is never an option of the systemctl it is given to.

The attack, for real: a saved plan (or a facts file) whose `workload.service` is
`-H127.0.0.1:PORT`, the port a listener standing in for the attacker's host. The probes read
the unit's environment and account with `systemctl show … UNIT`: systemctl took the name as
`-H` (`--host`) and root's ssh connected to the listener (canary: the listener hears
`SSH-2.0`); the launch probe's `systemctl restart "$u"` likewise. Now every systemctl call
puts `--` before the unit, and a unit name must be systemd's form (`remedy.model.unit_name`:
letters, digits, `:_.\\@-`, not starting with `-` or `.`) in facts, plans and `--service`: a
clear error (exit 2), nothing run.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import socket
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from remedy.probes.base import ProbeError, read_unit_account, read_unit_env
from remedy.transport import LocalTransport

REPO = Path(__file__).resolve().parents[2]
EXAMPLE = REPO / "src" / "remedy" / "examples" / "seed-sm120-pip-cu13" / "facts.yaml"


class Listener:
    """A TCP port standing in for the attacker's host; ``heard`` is what connected to it."""

    def __init__(self) -> None:
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(4)
        self.sock.settimeout(0.2)
        self.port = self.sock.getsockname()[1]
        self.heard: list[bytes] = []
        self.stop = False
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self) -> None:
        while not self.stop:
            try:
                c, _ = self.sock.accept()
            except OSError:
                continue
            c.settimeout(2)
            try:
                self.heard.append(c.recv(64) or b"(connected)")
            except OSError:
                self.heard.append(b"(connected)")
            c.close()

    def close(self) -> list[bytes]:
        self.stop = True
        self.thread.join(5)
        self.sock.close()
        return self.heard


@pytest.fixture
def listener():
    li = Listener()
    yield li
    li.close()


@pytest.mark.skipif(shutil.which("systemctl") is None, reason="needs systemctl")
def test_a_unit_named_like_an_option_does_not_make_systemctl_connect_out(tmp_path, listener):
    unit = f"-H127.0.0.1:{listener.port}"
    t = LocalTransport(host="scratch", env={"XDG_STATE_HOME": str(tmp_path / "state")})

    async def go() -> None:
        with pytest.raises(ProbeError):
            await read_unit_env(t, unit)
        await read_unit_account(t, unit)

    asyncio.run(go())
    assert listener.close() == [], "systemctl took the unit name as -H and connected out"


def _remedy(*args: str, tmp: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(REPO / "src"), "XDG_STATE_HOME": str(tmp / "state"),
           "XDG_CACHE_HOME": str(tmp / "cache")}  # fmt: skip
    return subprocess.run([sys.executable, "-m", "remedy", *args], capture_output=True,
                          text=True, env=env, timeout=120, cwd=tmp)  # fmt: skip


@pytest.mark.parametrize("name", ["-H127.0.0.1:9", "--host=x.service", "a b.service", "$(id)"])
def test_a_facts_file_or_service_naming_no_unit_is_a_clear_error(tmp_path, name):
    import yaml

    facts = yaml.safe_load(EXAMPLE.read_text())
    facts.setdefault("workload", {})["service"] = name
    f = tmp_path / "facts.json"
    f.write_text(json.dumps(facts))
    r = _remedy("plan", "--facts", str(f), tmp=tmp_path)
    assert r.returncode == 2 and "not a systemd unit name" in r.stderr, r.stderr[-2000:]
    assert "Traceback" not in r.stderr
    r = _remedy("plan", "--example", "seed-sm120-pip-cu13", f"--service={name}", tmp=tmp_path)
    assert r.returncode == 2 and "not a systemd unit name" in r.stderr, r.stderr[-2000:]


def test_a_saved_plan_naming_no_unit_is_refused_before_anything_runs(tmp_path):
    out = tmp_path / "plan.json"
    r = _remedy("plan", "--example", "seed-sm120-pip-cu13", "--out", str(out), tmp=tmp_path)
    assert out.exists(), r.stderr
    plan = json.loads(out.read_text())
    plan["facts"]["workload"]["service"] = "-H127.0.0.1:9"
    out.write_text(json.dumps(plan))
    r = _remedy("run", "--local", "--plan", str(out), "--yes", tmp=tmp_path)
    assert r.returncode == 2 and "not a systemd unit name" in r.stderr, r.stderr[-2000:]
    assert not (tmp_path / "state").exists() or not any((tmp_path / "state").rglob("journal*"))


@pytest.mark.parametrize("value", ["-H127.0.0.1:9", "a.service,-Mx.service", "--host=x"])
def test_an_inventorys_remedy_services_naming_an_option_is_refused(value):
    """An inventory (a shared file) names each host's units in `remedy_services`: a name
    starting with '-' passed its character check and reached systemctl as an option."""
    from remedy.errors import InputError
    from remedy.scope import inventory_services

    with pytest.raises(InputError, match="names no unit"):
        inventory_services({"remedy_services": value}, "gpu01")
