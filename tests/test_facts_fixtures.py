"""Table-driven collector tests on recorded output (pyinfra style).

Every tests/fixtures/facts/<kind>/<case>.json holds the exact command, its raw output and the
parse we expect; "synthetic": true marks the few outputs not recorded on a real host (each
says why in "note"). hosts/<name>.json holds every round trip of a whole collection and the
Facts it must produce; it is replayed through ScriptedTransport, and a script that no longer
matches the recording fails with "re-record" (tests/fixtures/facts/record.py).
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import re
import shlex
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from reference_paths import REFERENCE_HOST

from remedy.facts import parsers as p
from remedy.facts.collect import collect_facts
from remedy.facts.envs import parse_login_env
from remedy.facts.gpus import QUERY_FIELDS, parse_query_gpu
from remedy.facts.host import HostCollector
from remedy.facts.pythons import SH_PY, PythonEnvCollector, py_call
from remedy.facts.sections import DEFAULT_TOKEN
from remedy.facts.services import build_services
from remedy.facts.toolkits import SH_TK, ToolkitCollector, tk_call
from remedy.transport import CommandResult, ScriptedTransport
from remedy.transport.local import LocalTransport
from remedy.units.parse import EnvironmentFileRef
from remedy.units.shown import ShownEnvironment, parse_shown_environment, service_environment

FIXTURES = Path(__file__).parent / "fixtures" / "facts"


def _gpu(fx: dict[str, Any]) -> Any:
    m = re.search(r"--query-gpu=(\S+)", fx["command"])
    fields = tuple(m.group(1).split(",")) if m else QUERY_FIELDS
    r = parse_query_gpu(fx["output"], fields, fx.get("exit_status", 0))
    return {"gpus": [g.model_dump() for g in r.gpus], "notes": r.notes}


def _toolkit(fx: dict[str, Any]) -> Any:
    return [t.model_dump() for t in ToolkitCollector().parse(fx["output"])]


def _python(fx: dict[str, Any]) -> Any:
    return {
        "pythons": [e.model_dump() for e in PythonEnvCollector().parse(fx["output"])],
        "toolkits": [t.model_dump() for t in ToolkitCollector().parse(fx["output"])],
    }


def _show(fx: dict[str, Any]) -> Any:
    r = build_services(fx["output"], fx.get("wanted"))
    return {
        "services": [s.model_dump() for s in r.services],
        "interpreters": r.interpreters,
        "env_files": r.env_files,
        "optional_files": sorted(f.path for sh in r.shown.values() for f in sh.files if f.optional),
        "notes": r.notes,
    }


def _login(fx: dict[str, Any]) -> Any:
    env, shell = parse_login_env(fx["output"])
    return {"shell": shell, "env": env}


def _env_file(fx: dict[str, Any]) -> Any:
    """What facts and probes take from one EnvironmentFile (units/shown.py, the one reader)."""
    shown = ShownEnvironment(files=[EnvironmentFileRef(path="/e", optional=False)])
    data = fx["output"].encode("utf-8", "surrogateescape")
    return service_environment("x.service", shown, {"/e": data}).files_env


def _host(fx: dict[str, Any]) -> Any:
    return dataclasses.asdict(HostCollector().parse(fx["output"]))


PARSERS: dict[str, Callable[[dict[str, Any]], Any]] = {
    "gpu": _gpu,
    "tool_version": lambda fx: dataclasses.asdict(p.parse_tool_version(fx["output"])),
    "cicc": lambda fx: {
        "build": p.parse_cicc_build(fx["output"]),
        "release": p.cicc_release(p.parse_cicc_build(fx["output"])),
    },
    "cudart": lambda fx: p.parse_cudart_version(fx["output"]),
    "nvcc_profile": lambda fx: p.parse_nvcc_profile_libdir(fx["output"], fx.get("target_dir")),
    "torch_version": lambda fx: list(p.parse_torch_version_py(fx["output"])),
    "systemd_show": _show,
    "systemd_environment": lambda fx: (
        parse_shown_environment({"Environment": [fx["output"]]}).environment
    ),
    "env_file": _env_file,
    "login_env": _login,
    "host": _host,
    "toolkit": _toolkit,
    "python": _python,
}


def expected_for(kind: str, fx: dict[str, Any]) -> Any:
    """What the current parsers make of a fixture (record.py writes it, the tests compare)."""
    return json.loads(json.dumps(PARSERS[kind](fx)))


def fixture_files() -> list[Path]:
    return sorted(f for f in FIXTURES.glob("*/*.json") if f.parent.name in PARSERS)


@pytest.mark.parametrize("path", fixture_files(), ids=lambda f: f"{f.parent.name}/{f.stem}")
def test_fixture_parses_as_recorded(path: Path) -> None:
    fx = json.loads(path.read_text())
    assert {"command", "output", "expected", "source"} <= set(fx), path
    assert fx.get("synthetic") is False or fx.get("note"), "synthetic fixtures say why"
    assert expected_for(path.parent.name, fx) == fx["expected"]


def test_collector_commands_match_the_recordings() -> None:
    """A fixture's command must still be what the collector sends (else: re-record it)."""
    for path in fixture_files():
        fx = json.loads(path.read_text())
        kind = path.parent.name
        cmd = fx["command"]
        if kind == "toolkit":
            args = shlex.split(cmd)
            assert args[0] == "tk" and cmd == tk_call(*args[1:]), path
        elif kind == "python":
            args = shlex.split(cmd)
            assert args[0] == "py" and cmd == py_call(*args[1:]), path
        elif kind == "host":
            # h200 (a lent GPU machine, out of reach) keeps the pre-trust script verbatim;
            # test_host_script_prints_what_the_reference_printed shows the output is the same
            assert cmd == HostCollector().command() or (
                path.stem == "h200" and cmd == REFERENCE_HOST
            ), f"{path}: re-record"
    assert "tk()" in SH_TK and "py()" in SH_PY


def test_host_script_prints_what_the_reference_printed() -> None:
    """The compilers now run only when trusted (remedy.trust), by their real path. Where they
    are root's (this machine's /usr/bin, as on the H200 that recorded host/h200.json), the
    new script's output is byte for byte the old one's, so that recording still stands."""
    from remedy.facts.collect import library

    async def go(cmd: str) -> str:
        r = await LocalTransport("local").run(library(DEFAULT_TOKEN) + cmd, timeout=30)
        return r.stdout.decode()

    old = asyncio.run(go(REFERENCE_HOST))
    new = asyncio.run(go(HostCollector().command()))
    assert HostCollector().parse(new).compilers  # compilers were found
    assert new == old


def test_every_kind_has_real_recordings() -> None:
    kinds = {
        f.parent.name for f in fixture_files() if not json.loads(f.read_text()).get("synthetic")
    }
    assert {
        "gpu",
        "tool_version",
        "toolkit",
        "python",
        "systemd_show",
        "systemd_environment",
        "login_env",
        "host",
    } <= kinds


# ---- whole hosts, replayed --------------------------------------------------------------------


def host_files() -> list[Path]:
    return sorted((FIXTURES / "hosts").glob("*.json"))


def replay(fx: dict[str, Any]) -> ScriptedTransport:
    """The recorded answers, in the order the collector asks (its login-environment script
    apart from the others). Issue 16 changed the scripts (binaries run only when trusted, the
    login environment read, not run); the real hosts recorded here are out of reach, so their
    answers are replayed by position: a trusted root-owned toolkit answers the same either way,
    and the login shell's recorded `env` section is still parsed as before."""
    login = [r for r in fx["rounds"] if "env.end" in r["command"]]
    other = [r for r in fx["rounds"] if "env.end" not in r["command"]]

    def handler(call):
        queue = login if "env.end" in (call.script or "") else other
        if queue:
            r = queue.pop(0)
            return CommandResult(r["exit_status"], r["output"].encode(), b"", 0.0)
        pytest.fail(
            f"{fx['host']}: the collector sent more scripts than the recording holds "
            "(re-record: python tests/fixtures/facts/record.py ...)\n" + (call.script or "")[:300]
        )

    return ScriptedTransport(handler, host=fx["host"])


@pytest.mark.parametrize("path", host_files(), ids=lambda f: f.stem)
def test_host_recording_replays_to_the_same_facts(path: Path) -> None:
    fx = json.loads(path.read_text())
    t = replay(fx)
    facts = asyncio.run(
        collect_facts(t, services=fx.get("services"), timeout=30, token=DEFAULT_TOKEN)
    )
    got = json.loads(facts.model_dump_json(exclude={"collected_at"}))
    assert got == fx["expected"]
    assert len(t.calls) == len(fx["rounds"])
