"""Class 2: every writer quotes for the syntax it writes into; a hostile value comes back
exactly, parsed by the real consumer, and never runs.

Local (sh is the consumer of profile.d files): hypothesis round-trips through
`sh -c '. FILE; printf %s "$V"'`, the env operation's own rendered commands run for real into
a scratch file, and a canary per payload that must not appear. The systemd writers
(Environment= in a drop-in, EnvironmentFile=, ExecStart=) are round-tripped by a real systemd
on the sandbox systemd tier host: `systemctl show -p Environment`, and a oneshot unit whose
process reports the environment and argv it got.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from remedy.operations import SetEnv
from remedy.operations.writers import (
    environment_file_text,
    exec_start_dropin_text,
    profile_text,
)

MARK = "CANARY"
# each, if it ran as shell, creates ./CANARY (the cwd is a scratch dir)
PAYLOADS = [
    f"$(echo x >{MARK})",
    f"`echo x >{MARK}`",
    f";echo x >{MARK};",
    f"&& echo x >{MARK} #",
    f"|echo x >{MARK}",
    f"\necho x >{MARK}\n",
    f"'; echo x >{MARK}; '",
    f'"; echo x >{MARK}; "',
    f"${{IFS}}$(echo x >{MARK})",
    f"/opt/cuda$(echo x >{MARK})/bin;echo x >{MARK}",
    f"%h %n %% $HOME ${{HOME}} \\$(echo x >{MARK})",
]

# any text a file can hold: no NUL, no lone surrogates (not encodable as UTF-8)
values = st.text(
    alphabet=st.characters(blacklist_categories=("Cs",), blacklist_characters="\0"), max_size=80
) | st.sampled_from(PAYLOADS)
one_line = values.filter(lambda v: not any(c in v for c in "\n\r"))


def _sourced(file: Path, var: str, cwd: Path) -> str:
    r = subprocess.run(
        ["sh", "-c", f'. "$1"; printf %s "${var}"', "sh", str(file)],
        capture_output=True, cwd=cwd, timeout=30,
        env={"PATH": "/usr/bin:/bin", "HOME": str(cwd), "LANG": "C.UTF-8"},
    )  # fmt: skip
    assert r.returncode == 0, r.stderr
    return r.stdout.decode("utf-8")


@settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(value=values)
def test_profile_d_writer_round_trips_through_sh(tmp_path, value):
    f = tmp_path / "remedy-x.sh"
    f.write_text(profile_text({"CUDA_HOME": value}), encoding="utf-8")
    assert _sourced(f, "CUDA_HOME", tmp_path) == value
    assert not (tmp_path / MARK).exists()


@pytest.mark.parametrize("payload", PAYLOADS, ids=range(len(PAYLOADS)))
def test_env_operation_commands_write_and_sh_reads_back_exactly(tmp_path, monkeypatch, payload):
    """The env operation's own commands (printf into a temp file, mv into place), run by sh
    for real, with the profile path pointed into tmp_path; then the file is sourced."""
    target = tmp_path / "profile.d" / "remedy-cuda-home.sh"
    target.parent.mkdir()
    monkeypatch.setattr(SetEnv, "path", lambda self: str(target))
    op = SetEnv(scope="profile", name="cuda-home", set={"CUDA_HOME": payload})
    for cmd in op.commands():
        r = subprocess.run(["sh", "-c", cmd], cwd=tmp_path, capture_output=True, timeout=30)
        assert r.returncode == 0, (cmd, r.stderr)
    assert not (tmp_path / MARK).exists(), "the payload ran while the file was written"
    assert target.read_text(encoding="utf-8") == op.text()
    assert _sourced(target, "CUDA_HOME", tmp_path) == payload
    assert not (tmp_path / MARK).exists(), "the payload ran when the file was sourced"


def test_a_planned_hostile_toolkit_path_lands_quoted_in_profile_d(tmp_path):
    """End to end through the planner: a shell-launched server (no CUDA_HOME, no nvcc on
    PATH) on a host whose venv path carries $(…), backticks and `;`: the plan's profile.d step
    sets CUDA_HOME to that path, and sh reads it back exactly without running it."""
    import yaml

    from remedy.knowledge.loader import load_knowledge
    from remedy.model import Facts
    from remedy.planner.plan import make_plan

    root = Path(__file__).resolve().parents[2]
    ex = root / "src" / "remedy" / "examples" / "seed-sm120-pip-cu13" / "facts.yaml"
    data = yaml.safe_load(ex.read_text())
    data["shell_env"].pop("CUDA_HOME")
    data["shell_env"]["PATH"] = "/usr/bin:/bin"
    hostile = f"/root/v`echo x >{MARK}`;echo x >{MARK};$(echo x >{MARK})"
    facts = Facts.model_validate(json.loads(json.dumps(data).replace("/root/venv", hostile)))
    plan = make_plan(load_knowledge(), facts)
    envs = [s.operation for s in plan.steps if s.operation.op == "env"]
    assert envs and envs[0].scope == "profile"
    assert hostile in envs[0].set["CUDA_HOME"]
    f = tmp_path / "p.sh"
    f.write_text(envs[0].text(), encoding="utf-8")
    assert _sourced(f, "CUDA_HOME", tmp_path) == envs[0].set["CUDA_HOME"]
    assert not (tmp_path / MARK).exists()


# --------------------------------------------------------------------------------------------
# systemd: the real consumer on the sandbox systemd tier host
# --------------------------------------------------------------------------------------------

UNIT = "remedy-quoting.service"
OUT = "/run/remedy-quoting.json"
REPORT = (
    "import json, os, sys; json.dump({'argv': sys.argv[1:], 'env': os.environ.get('V')}, "
    f"open('{OUT}', 'w'))"
)


@pytest.fixture(scope="module")
def sdhost():
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    import sandbox_hosts as sh

    try:
        doc = sh.doctor()
    except sh.SandboxUnavailable as e:
        pytest.skip(str(e))
    if not doc.get("systemd_tier"):
        pytest.skip(f"sandbox systemd tier not ready: {doc.get('missing')}")
    h = sh.up("seed-chain-b", "trust-plan-q")
    try:
        rc, out = h.ssh("command -v python3")
        py = out.strip().splitlines()[-1] if rc == 0 else ""
        assert py, out
        unit = f'[Service]\nType=oneshot\nExecStart={py} -c "{REPORT}"\n'
        rc, out = h.ssh(f"cat > /etc/systemd/system/{UNIT}", input=unit)
        assert rc == 0, out
        h.py = py  # type: ignore[attr-defined]
        yield h
    finally:
        sh.down(h)


def _ssh_ok(h, cmd: str, input: str | None = None) -> str:
    rc, out = h.ssh(cmd, input=input, timeout=120)
    assert rc == 0, (cmd, out)
    return out


def _write(h, path: str, text: str) -> None:
    _ssh_ok(h, f"mkdir -p {os.path.dirname(path)} && cat > {path}", input=text)


def _start_and_report(h) -> dict:
    _ssh_ok(h, f"rm -f {OUT}; systemctl daemon-reload && systemctl start {UNIT}")
    return json.loads(_ssh_ok(h, f"cat {OUT}"))


@pytest.mark.sandbox
@pytest.mark.systemd
@settings(max_examples=20, deadline=None, suppress_health_check=list(HealthCheck))
@given(value=one_line)
def test_dropin_environment_round_trips_through_systemd(sdhost, value):
    """The drop-in writer (the env operation's file) read back by systemd: `systemctl show
    -p Environment` parsed, and the environment the unit's process got."""
    from remedy.units import parse_show_environment

    op = SetEnv(scope="dropin", unit=UNIT, name="v", set={"V": value})
    try:
        text = op.text()
    except Exception as exc:  # noqa: BLE001 - refused values must be refused clearly
        assert "control character" in str(exc) or "UTF-8" in str(exc), exc
        return
    _write(sdhost, op.path(), text)
    got = _start_and_report(sdhost)
    show = _ssh_ok(sdhost, f"systemctl show -p Environment {UNIT}")
    env = parse_show_environment(show.strip().removeprefix("Environment="))
    _ssh_ok(sdhost, f"rm -f {op.path()}")
    assert env.get("V") == value, (value, show)
    assert got["env"] == value
    assert _ssh_ok(sdhost, f"ls /root/{MARK} /{MARK} 2>/dev/null || true").strip() == ""


@pytest.mark.sandbox
@pytest.mark.systemd
@settings(max_examples=15, deadline=None, suppress_health_check=list(HealthCheck))
@given(value=one_line)
def test_environment_file_and_exec_start_round_trip_through_systemd(sdhost, value):
    """EnvironmentFile= and ExecStart= writers: the process gets exactly V and argv."""
    envfile = "/etc/remedy-quoting.env"
    dropin = f"/etc/systemd/system/{UNIT}.d/60-remedy-exec-start.conf"
    try:
        env_text = environment_file_text({"V": value})
        exec_text = exec_start_dropin_text([sdhost.py, "-c", REPORT, value])
    except ValueError:
        assert any(c in value for c in "\n\r") or any(ord(c) < 32 for c in value)
        return
    _write(sdhost, envfile, env_text)
    _write(sdhost, dropin, exec_text + f"EnvironmentFile={envfile}\n")
    try:
        got = _start_and_report(sdhost)
    finally:
        _ssh_ok(sdhost, f"rm -f {dropin} {envfile}")
    assert got == {"argv": [value], "env": value}, (value, got)
    assert _ssh_ok(sdhost, f"ls /root/{MARK} /{MARK} 2>/dev/null || true").strip() == ""
