"""No command injection, no sandbox escape, no code execution from data.

Hostile strings placed in facts (paths, service names, environment values), unit files and CLI
arguments flow through plan -> rendered commands -> a real shell (LocalTransport, with every
external program stubbed so nothing but the shell itself runs), and the marker file the payloads
try to create never appears. Playbook templates are rendered in Jinja2's sandbox: known escapes
end in a remedy error, never in execution. Loading YAML never constructs Python objects.
"""

from __future__ import annotations

import asyncio
import os
import shlex
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from remedy.errors import KnowledgeError, RemedyError
from remedy.evaluate import render, render_raw
from remedy.knowledge.expr import compile_expr, compile_template
from remedy.knowledge.yamlload import load_yaml, load_yaml_text
from remedy.model import Facts
from remedy.planner.plan import make_plan
from remedy.transport.local import LocalTransport
from remedy.transport.quote import command_line, quote

from conftest import ROOT, base_facts

MARK_NAME = "PWNED"
# Every way a value could break out of its word; each one, if it ran, creates ./PWNED (cwd is a
# scratch dir) with shell builtins only, so stubbing PATH cannot hide it.
PAYLOADS = [
    f"$(echo x >{MARK_NAME})",
    f"`echo x >{MARK_NAME}`",
    f";echo x >{MARK_NAME};",
    f"&& echo x >{MARK_NAME} #",
    f"|echo x >{MARK_NAME}",
    f"\necho x >{MARK_NAME}\n",
    f"'; echo x >{MARK_NAME}; '",
    f'"; echo x >{MARK_NAME}; "',
    f"${{IFS}}$(echo x >{MARK_NAME})",
    f"é😀\u202e$(echo x >{MARK_NAME})",
    "A" * 5000 + f"$(echo x >{MARK_NAME})",
]


def _hostile(payload: str) -> str:
    """A payload as a path component (no NUL: paths and environment values cannot hold one)."""
    return "x" + payload.replace("/", "_")


@pytest.fixture()
def stub_env(tmp_path: Path) -> dict[str, str]:
    """PATH holding only no-op stand-ins for every external program the playbooks call."""
    bin_dir = tmp_path / "stub-bin"
    bin_dir.mkdir()
    for name in (
        "mkdir",
        "mv",
        "ln",
        "rm",
        "cp",
        "systemctl",
        "apt-get",
        "cc",
        "pip",
        "test",
        "touch",
        "chmod",
        "install",
        "sed",
        "cat",
        "python",
        "python3",
        "env",
        "sh",
    ):
        stub = bin_dir / name
        stub.write_text("#!/bin/sh\nexit 0\n")
        stub.chmod(0o755)
    return {"PATH": str(bin_dir), "HOME": str(tmp_path), "LANG": "C.UTF-8"}


def _run_for_real(cmd: str, cwd: Path, env: dict[str, str]) -> None:
    """One rendered command through the Local transport, as the executor runs it (`sh -c`)."""
    script = f"cd {quote(str(cwd))} || exit 9\n{cmd}\n"
    old = os.environ.copy()
    try:
        asyncio.run(LocalTransport().run(["/bin/sh", "-c", script], timeout=30, env=env))
    finally:
        os.environ.clear()
        os.environ.update(old)


def _replaced(obj: Any, old: str, new: str) -> Any:
    """`old` replaced by `new` in every string (keys too) of a facts dict."""
    if isinstance(obj, dict):
        return {_replaced(k, old, new): _replaced(v, old, new) for k, v in obj.items()}
    if isinstance(obj, list):
        return [_replaced(v, old, new) for v in obj]
    return obj.replace(old, new) if isinstance(obj, str) else obj


def _plan_commands(facts: dict) -> list[str]:
    from remedy.knowledge.loader import load_knowledge

    plan = make_plan(load_knowledge(), Facts.model_validate(facts))
    return [c for s in plan.steps for c in s.commands]


def _check_commands(cmds: list[str], hostile: str, cwd: Path, env: dict[str, str]) -> int:
    """Every command splits as a shell would; the hostile value survives as one piece of one
    word; running it for real creates no marker. Returns how many commands carried it."""
    carried = 0
    for cmd in cmds:
        words = shlex.split(cmd, comments=False)
        if any(hostile in w for w in words):
            carried += 1
        assert not any(MARK_NAME in w and hostile not in w for w in words), (
            f"the hostile value was split across words: {cmd[:300]!r}"
        )
        _run_for_real(cmd, cwd, env)
        assert not (cwd / MARK_NAME).exists(), f"INJECTION: {cmd[:300]!r} ran the payload"
    return carried


@pytest.mark.parametrize("payload", PAYLOADS, ids=range(len(PAYLOADS)))
def test_hostile_python_and_toolkit_paths_never_run(payload, tmp_path, stub_env):
    """seed-chain-a (pip wheels in a venv): the venv path is hostile; every plan step's commands
    carry it, quoted."""
    hostile = _hostile(payload)
    facts = _replaced(base_facts("pip"), "/root/venv", f"/root/{hostile}")
    cmds = _plan_commands(facts)
    assert cmds, "the plan has commands to check"
    assert _check_commands(cmds, hostile, tmp_path, stub_env) >= 2


@pytest.mark.parametrize("payload", PAYLOADS[:6], ids=range(6))
def test_hostile_service_name_and_env_values_never_run(payload, tmp_path, stub_env):
    """A service whose name and environment hold the payload: a name that is no systemd unit
    name is refused when the facts load (tests/security/test_unit_names.py); the drop-in
    commands quote the rest."""
    from pydantic import ValidationError

    from remedy.model import unit_name

    hostile = _hostile(payload).replace("\n", "_")
    svc = f"sglang{hostile}.service"
    facts = _replaced(base_facts("system"), "sglang-k26.service", svc)
    try:
        unit_name(svc)
    except ValueError:
        with pytest.raises(ValidationError, match="not a systemd unit name"):
            Facts.model_validate(facts)
        svc = "sglang-k26.service"
        facts = base_facts("system")
    for s in facts["services"]:
        s["environment"]["HF_HOME"] = payload
    cmds = _plan_commands(facts)
    assert any(svc in c or quote(svc) in c for c in cmds) or not cmds
    _check_commands(cmds, hostile, tmp_path, stub_env)


def test_quote_round_trips_every_payload():
    for p in PAYLOADS:
        assert shlex.split(quote(p)) == [p]
        line = command_line(["echo", p], env={"X": p}).decode()
        assert shlex.split(line) == ["env", f"X={p}", "echo", p]


def test_nul_cannot_reach_a_shell():
    with pytest.raises(ValueError, match="NUL"):
        quote("a\0b")
    with pytest.raises(ValueError, match="NUL"):
        command_line(["echo", "a\0;id"])


# one argument carrying every form at once (each CLI run costs a Python start-up)
CLI_PAYLOADS = ["".join(PAYLOADS[:6]), PAYLOADS[6] + PAYLOADS[7]]


@pytest.mark.parametrize("payload", CLI_PAYLOADS, ids=range(len(CLI_PAYLOADS)))
def test_cli_impact_with_hostile_arguments(payload, tmp_path):
    """remedy impact --set/--unit with hostile values, reading the unit on this machine for
    real: a clear remedy error or a preview, never a traceback, never the marker."""
    env = {**os.environ, "HOME": str(tmp_path)}
    runs = [
        ["impact", f"CUDA_HOME={payload}", "--example", "seed-sm120-system-cuda128"],
        ["impact", "--local", "--unit", f"x{payload}.service", "--set", f"CUDA_HOME={payload}"],
        ["impact", "--local", "--unit", "ssh.service", "--set", f"CUDA_HOME={payload}"],
    ]
    for args in runs:
        r = subprocess.run(
            [sys.executable, "-m", "remedy", *args],
            cwd=tmp_path,
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert "Traceback" not in r.stderr, r.stderr[-2000:]
        assert r.returncode in (0, 1, 2), (args, r.returncode, r.stderr[-500:])
        assert not (tmp_path / MARK_NAME).exists(), f"INJECTION via {args}"


# ---- Jinja2 sandbox --------------------------------------------------------------------------

# (template, reaches a real object): an escape that gets hold of something must be refused with
# a KnowledgeError; the others (names the context does not have, attributes the object lacks)
# render as undefined. Either way nothing leaks and nothing runs.
ESCAPES = [
    ("{{ ().__class__.__mro__[1].__subclasses__() }}", True),
    ("{{ ''.__class__.__mro__[1].__subclasses__() }}", True),
    ("{{ cycler.__init__.__globals__.os.system('echo x >PWNED') }}", True),
    ("{{ joiner.__init__.__globals__.os.popen('id').read() }}", True),
    ("{{ namespace.__init__.__globals__.os.system('id') }}", True),
    ("{{ lipsum.__globals__['os'].popen('id').read() }}", True),
    ("{{ lipsum.__globals__.__builtins__.__import__('os').system('id') }}", True),
    ("{{ self._TemplateReference__context.cycler.__init__.__globals__.os.system('id') }}", True),
    ("{{ self.__init__.__globals__.__builtins__ }}", True),
    ("{{ request.application.__globals__.__builtins__.__import__('os').popen('id') }}", False),
    ("{{ config.__class__.__init__.__globals__['os'].popen('id').read() }}", False),
    ("{{ '{0.__class__.__mro__}'.format(x) }}", True),
    ("{{ '{0.__class__}'.format(x) }}", True),
    ("{{ '{0.__init__.__globals__}'.format(f) }}", True),
    ("{{ x | attr('__class__') | attr('__mro__') }}", True),
    ("{{ (x | attr('__class__')).__subclasses__() }}", True),
    ("{{ x.__class__.__base__.__subclasses__() }}", True),
    ("{{ f.__code__ }}", True),
    ("{{ f.__globals__ }}", True),
    ("{% for c in [].__class__.__base__.__subclasses__() %}{{ c }}{% endfor %}", True),
    ("{{ 'a' * 10**10 }}", True),
    ("{{ [0] * 10**9 }}", True),
    ("{{ 10 ** (10 ** 10) }}", True),
    ("{% set d = {} %}{{ d.update({'a': 1}) }}", True),
    ("{{ [].append(1) }}", True),
    ("{{ cfg.clear() }}", True),
    ("{{ ''.join.__self__.__class__ }}", True),
    ("{{ range(10**10) | list | length }}", False),  # Jinja2's MAX_RANGE: OverflowError
    ("{{ x.__dict__ }}", False),
    ("{{ q.__globals__ }}", False),
]


def _ctx() -> dict:
    return {"x": "value", "f": _ctx, "cfg": {"a": 1}}


LEAKS = ("<class", "<function", "<module", "<built-in", "uid=", "__")


@pytest.mark.parametrize(("src", "reaches"), ESCAPES, ids=range(len(ESCAPES)))
def test_template_escapes_are_blocked(src, reaches, tmp_path, monkeypatch):
    """Compiled as a playbook template and rendered in the sandbox: refused with a remedy error
    (KnowledgeError naming the template), never executed, never leaking Python internals."""
    monkeypatch.chdir(tmp_path)
    tmpl = compile_template(src, file="hostile.yaml", line=7, what="command")
    for fn in (render, render_raw):
        try:
            out = fn(tmpl, _ctx())
        except RemedyError as exc:
            assert "hostile.yaml:7" in str(exc) and "sandbox" in str(exc), exc
            continue
        assert not reaches, f"not refused: {src} -> {out!r}"
        out = out.replace(src, "")
        assert not any(leak in out for leak in LEAKS), out
    assert not (tmp_path / MARK_NAME).exists()


@pytest.mark.parametrize(
    ("src", "reaches"), [(e[3:-3], r) for e, r in ESCAPES if e.startswith("{{")], ids=str
)
def test_expression_escapes_are_blocked(src, reaches, tmp_path, monkeypatch):
    """Rule conditions (expressions): the same escapes raise, never execute."""
    monkeypatch.chdir(tmp_path)
    try:
        fn = compile_expr(src, file="hostile.yaml", line=1, what="when")
    except KnowledgeError:
        return
    try:
        out = fn(**_ctx())
    except Exception as exc:  # evaluate._check reports any error of a rule as "not evaluated"
        if reaches:
            assert type(exc).__name__ == "SecurityError", (src, exc)
    else:
        assert not reaches, (src, out)
        assert not any(leak in str(out) for leak in LEAKS), out
    assert not (tmp_path / MARK_NAME).exists()


# ---- YAML never executes code ----------------------------------------------------------------

YAML_ATTACKS = [
    "a: !!python/object/apply:os.system ['echo x >PWNED']\n",
    "a: !!python/object/new:os.system ['echo x >PWNED']\n",
    "a: !!python/name:os.system\n",
    "a: !!python/module:os\n",
    "rules:\n  - id: r\n    x: !!python/object:remedy.model.Facts {}\n",
    "a: !<tag:yaml.org,2002:python/object/apply:subprocess.check_output> [[id]]\n",
    "!!python/object/apply:os.system\n- echo x >PWNED\n",
]


@pytest.mark.parametrize("text", YAML_ATTACKS, ids=range(len(YAML_ATTACKS)))
def test_yaml_python_tags_are_a_clear_error(text, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    path = tmp_path / "rules.yaml"
    path.write_text(text)
    with pytest.raises(KnowledgeError) as err:
        load_yaml(path)
    assert f"{path}:" in str(err.value), "names file:line"
    with pytest.raises(KnowledgeError):
        load_yaml_text(text, "x.yaml")
    assert not (tmp_path / MARK_NAME).exists()


def test_knowledge_dir_with_a_python_tag_is_refused(tmp_path):
    """A whole knowledge base with one poisoned file: load_knowledge stops at file:line."""
    from remedy.knowledge.loader import load_knowledge

    k, p = tmp_path / "knowledge", tmp_path / "playbooks"
    for src, dst in ((ROOT / "knowledge", k), (ROOT / "playbooks", p)):
        dst.mkdir()
        for f in src.glob("*.yaml"):
            (dst / f.name).write_bytes(f.read_bytes())
    poisoned = k / "cuda-releases.yaml"
    poisoned.write_text(poisoned.read_text() + "extra: !!python/object/apply:os.system ['id']\n")
    with pytest.raises(KnowledgeError, match=r"cuda-releases\.yaml:\d+"):
        load_knowledge(str(k), str(p))
