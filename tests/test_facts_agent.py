"""The host fact agent (remedy.facts.agent_host) answers exactly as the shell batch does.

Issue 18: the shell batch starts ~100 processes a host; the agent does the same work in one
python3 on the host. Its contract is the shell's own output: for the same host, the same
sections byte for byte (so the same facts: they go through the same parsers). Here both run
against the same real trees (this machine; a tree of hostile cases: binaries another user
owns, writable dirs, links, names holding a newline, `|` or glob characters, binary METADATA)
and the same sandbox hosts over real SSH (every scenario), and must agree; an untrusted
binary must not run under either (a canary); a host without a usable python3 gets the shell
batch; what the agent prints is read as data with bounds.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path

import pytest
import sandbox_hosts

from remedy.facts import agent, agent_host, collect
from remedy.facts.pythons import py_call
from remedy.facts.sections import split_sections
from remedy.facts.toolkits import tk_call
from remedy.transport.local import LocalTransport
from remedy.trust import SH_TRUST

ROOT = Path(__file__).resolve().parents[1]
SBX = ROOT / "sandbox" / "sbx"
SCENARIOS = sorted(p.parent.name for p in (ROOT / "sandbox" / "scenarios").glob("*/scenario.yaml"))
TOKEN = "@@agent-test@@"
NOBODY = 65534
needs_root = pytest.mark.skipif(os.geteuid() != 0, reason="chown to another user needs root")


def _run(coro):  # noqa: ANN001, ANN202 - a test helper
    return asyncio.run(coro)


def shell_sections(script: str, transport: LocalTransport | None = None) -> list[tuple]:
    r = _run((transport or LocalTransport("local")).run(script, timeout=60))
    return [
        (s.name, s.arg, s.body) for s in split_sections(r.stdout.decode("utf-8", "replace"), TOKEN)
    ]


def agent_sections(request: dict, transport: LocalTransport | None = None) -> list[tuple]:
    t = transport or LocalTransport("local")
    r = _run(t.run(agent.command(), timeout=60, input=agent.program(request)))
    assert r.exit_status == 0, r.stderr.decode(errors="replace")[-2000:]
    return [(s.name, s.arg, s.body) for s in agent.parse_output(r.stdout)]


def ops_request(ops: list[list[str]]) -> dict:
    req = collect.agent_request()
    req["ops"] = [[op[0], *(os.fsencode(a).decode("latin-1") for a in op[1:])] for op in ops]
    return req


# ---- this machine ----------------------------------------------------------------------------


@pytest.mark.skipif(not Path(agent.PYTHON).exists(), reason="no /usr/bin/python3 here")
def test_the_whole_batch_on_this_machine_is_the_shell_batch() -> None:
    """Login sections + round 1, byte for byte, and the run ends with `end`."""
    want = shell_sections(collect.login_env_script(TOKEN)) + shell_sections(
        collect.main_script(TOKEN)
    )
    got = [s for s in agent_sections(collect.agent_request()) if s[0] != "spec.look"]
    assert got == want
    assert got[-1][0] == "end" and any(s[0] == "host.os" for s in got)


def fake_tool(path: Path, canary: Path, banner: str, shebang: bool = True) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    head = "#!/bin/sh\n" if shebang else ""
    path.write_text(f"{head}touch {canary}\necho '{banner}'\n")
    path.chmod(0o755)


def chown_tree(path: Path, uid: int) -> None:
    for dp, _dns, fns in os.walk(path):
        os.chown(dp, uid, uid)
        for n in fns:
            os.chown(os.path.join(dp, n), uid, uid, follow_symlinks=False)


@pytest.fixture
def hostile(tmp_path: Path) -> dict:
    """Prefixes and interpreters built to hit every branch of tk() and py()."""
    tmp_path.chmod(0o755)
    canary = tmp_path / "canaries"
    canary.mkdir()
    banner = "Cuda compilation tools, release 12.8, V12.8.93"
    cases: dict[str, Path] = {}

    def prefix(name: str) -> Path:
        p = tmp_path / name
        (p / "include").mkdir(parents=True)
        (p / "include" / "cuda_runtime_api.h").write_text(
            "/* x */\n#define CUDART_VERSION 12080\n#define CUDART_VERSION 1\n"
        )
        (p / "version.json").write_text(json.dumps({"cuda_nvcc": {"version": "12.8.93"}}))
        (p / "version.txt").write_text("CUDA Version 12.8.93\n")
        cases[name] = p
        return p

    ok = prefix("ok")
    fake_tool(ok / "bin" / "nvcc", canary / "ok-nvcc", banner)
    fake_tool(ok / "bin" / "ptxas", canary / "ok-ptxas", banner, shebang=False)  # run by sh
    (ok / "bin" / "nvcc.profile").write_text(
        "TOP = $(_HERE_)/..\nLIBRARIES = -L$(TOP)/lib64\nX=1\n"
    )
    (ok / "lib").mkdir()
    for n in ("libcudart.so.12", "libcudart.so.12.8.90", "libcudart.so", "libcudart.so.x"):
        (ok / "lib" / n).write_text("")
    (ok / "lib64").symlink_to("lib")
    (ok / "lib" / "stubs").mkdir()
    (ok / "lib" / "stubs" / "libcuda.so").symlink_to("/nonexistent")  # dangling: not -e
    (ok / "targets" / "x86_64-linux").mkdir(parents=True)
    (ok / "targets" / "sbsa-linux").write_text("")  # not a dir
    (ok / "nvvm" / "bin").mkdir(parents=True)
    (ok / "nvvm" / "bin" / "cicc").write_bytes(
        b"\0\x01cuda_1x.r/compiler.9\0cuda_13.0.r13.0/compiler.36424714_0\0"
        b"cuda_99.9.r99.9/compiler.1\0" * 3
    )
    (ok / "include" / "cccl" / "nv" / "detail").mkdir(parents=True)
    (ok / "include" / "cccl" / "nv" / "target").write_text("")
    (ok / "include" / "cccl" / "nv" / "detail" / "__target_macros").write_text("")
    dist = ok / "dist-info"
    (dist / "nvidia_cuda_nvcc-12.8.93.dist-info").mkdir(parents=True)
    (dist / "nvidia_cuda_nvcc-12.8.93.dist-info" / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: nvidia-cuda-nvcc\nVersion: 12.8.93\nName: again\n"
    )
    (dist / "b-1.dist-info").mkdir()
    (dist / "b-1.dist-info" / "METADATA").write_bytes(b"Name: b\n\0Version: 1\n")  # binary
    (dist / "c-1.dist-info").mkdir()
    (dist / "c-1.dist-info" / "METADATA").write_text("x" * 20000 + "\nName: c\nVersion: 1")

    owned = prefix("owned")
    fake_tool(owned / "bin" / "nvcc", canary / "owned-nvcc", banner)
    fake_tool(owned / "bin" / "ptxas", canary / "owned-ptxas", banner)
    chown_tree(owned, NOBODY)

    writable = prefix("writable")
    fake_tool(writable / "bin" / "nvcc", canary / "writable-nvcc", banner)
    (writable / "bin").chmod(0o777)

    linked = prefix("linked")  # root-owned prefix, its nvcc a link to another user's binary
    evil = tmp_path / "evil"
    fake_tool(evil / "nvcc", canary / "linked-nvcc", banner)
    chown_tree(evil, NOBODY)
    (linked / "bin").mkdir()
    (linked / "bin" / "nvcc").symlink_to(evil / "nvcc")

    odd = prefix("odd *[x] |pipe|")  # glob characters and `|` in the literal part
    fake_tool(odd / "bin" / "nvcc", canary / "odd-nvcc", banner)
    nl = prefix("new\nline")
    fake_tool(nl / "bin" / "bin" / "nvcc", canary / "nl-nvcc", banner)
    (tmp_path / "alias").symlink_to(ok)

    # Python environments
    venv = tmp_path / "venv"
    site = venv / "lib" / "python3.11" / "site-packages"
    (site / "torch").mkdir(parents=True)
    (site / "torch" / "version.py").write_text(
        "__version__ = '2.9.0+cu128'\ncuda = '12.8'\ngit_version = 'x'\nother = 1\nhip = None\n"
    )
    (site / "torch-2.9.0.dist-info").mkdir()
    (site / "torch-2.9.0.dist-info" / "METADATA").write_text(
        "Name: torch\nVersion: 2.9.0\nRequires-Dist: nvidia-cublas-cu12==12.8.4.1; "
        "platform_system == 'Linux'\nRequires-Dist: filelock\n"
    )
    (site / "x.egg-info").mkdir()
    (site / "x.egg-info" / "PKG-INFO").write_text("Name: x\nVersion: 0.1\n")
    (site / "flashinfer" / "data" / "cccl" / "libcudacxx" / "include").mkdir(parents=True)
    tb = site / "triton" / "backends" / "nvidia" / "bin"
    fake_tool(tb / "ptxas", canary / "triton-ptxas", "ptxas: NVIDIA (R) Ptx optimizing assembler")
    fake_tool(tb / "ptxas-blackwell", canary / "triton-bw", "Cuda compilation tools, release 12.9")
    os.chown(tb / "ptxas-blackwell", NOBODY, NOBODY)
    (site / "nvidia" / "cu13" / "bin").mkdir(parents=True)
    fake_tool(site / "nvidia" / "cu13" / "bin" / "nvcc", canary / "cu13-nvcc", banner)
    (venv / "pyvenv.cfg").write_text("home = /usr/bin\nversion = 3.11.2\n")
    (venv / "bin").mkdir()
    (venv / "bin" / "python").symlink_to("/usr/bin/python3")
    bare = tmp_path / "bare"  # no site-packages: the interpreter is asked (it is trusted)
    (bare / "bin").mkdir(parents=True)
    (bare / "bin" / "python").symlink_to("/usr/bin/python3")
    theirs = tmp_path / "theirs"  # no site-packages, another user's bin: not run
    (theirs / "bin").mkdir(parents=True)
    (theirs / "bin" / "python").symlink_to("/usr/bin/python3")
    chown_tree(theirs, NOBODY)
    return {
        "root": tmp_path,
        "canary": canary,
        "prefixes": [str(p) for p in cases.values()]
        + [str(tmp_path / "alias"), str(tmp_path / "missing"), str(ok / "version.txt"), ""]
        + [str(nl / "bin")],  # (a newline in a prefix: tk() skips it; its child is probed)
        "pythons": [
            str(venv / "bin" / "python"),
            str(bare / "bin" / "python"),
            str(theirs / "bin" / "python"),
            str(tmp_path / "nothing" / "bin" / "python"),
            str(venv / "bin" / "python"),  # again: an alias now
        ],
    }


@needs_root
def test_hostile_trees_give_the_shell_batchs_sections_and_run_nothing_untrusted(
    hostile: dict,
) -> None:
    prefixes, pythons = hostile["prefixes"], hostile["pythons"]
    script = collect.library(TOKEN)
    ops: list[list[str]] = []
    for p in prefixes:
        script += tk_call(p, "", "", "test")
        ops.append(["tk", p, "", "", "test"])
    for x in pythons:
        script += py_call(x, "test")
        ops.append(["py", x, "test"])
    want = shell_sections(script + "m end\n")
    ran_by_shell = sorted(p.name for p in hostile["canary"].iterdir())
    for p in hostile["canary"].iterdir():
        p.unlink()
    got = agent_sections(ops_request(ops))
    ran_by_agent = sorted(p.name for p in hostile["canary"].iterdir())
    assert got == want
    # what ran: the trusted ones only, the same under both
    assert ran_by_agent == ran_by_shell
    assert (
        "ok-nvcc" in ran_by_agent and "ok-ptxas" in ran_by_agent and "triton-ptxas" in ran_by_agent
    )
    for bad in ("owned-nvcc", "owned-ptxas", "writable-nvcc", "linked-nvcc", "triton-bw"):
        assert bad not in ran_by_agent, f"the agent ran an untrusted binary ({bad})"
    names = [s[0] for s in got]
    assert names.count("tk.nvcc.untrusted") >= 3 and "py.triton.untrusted" in names
    assert "py.untrusted" in names and "tk.alias" in names and "py.alias" in names
    assert any(s[0] == "tk.cicc" and "cuda_13.0.r13.0/compiler.36424714" in s[2] for s in got)


@needs_root
def test_the_agents_trust_check_answers_as_sh_trust(hostile: dict) -> None:
    root: Path = hostile["root"]
    paths = [
        str(p)
        for p in sorted(root.rglob("*"))
        if p.name in ("nvcc", "ptxas", "ptxas-blackwell", "python", "cicc", "evil")
    ] + [
        str(root / "missing" / "nvcc"),
        "/",
        str(root),
        str(root / "ok" / "lib" / "stubs" / "libcuda.so"),
    ]
    driver = 'for p in "$@"; do if trusted "$p"; then rc=0; else rc=1; fi\n'
    driver += 'printf \'%s\\t%s\\t%s\\036\' "$rc" "$WHY" "$RP"; done\n'
    r = subprocess.run(
        ["sh", "-c", SH_TRUST + driver, "sh", *paths], capture_output=True, timeout=60, check=True
    )
    want = r.stdout.decode("utf-8", "surrogateescape").split("\036")[:-1]
    agent_host.TRUSTED.clear()
    got = []
    for p in paths:
        ok, why, rp = agent_host.trusted(os.fsencode(p))
        got.append(f"{0 if ok else 1}\t{os.fsdecode(why)}\t{os.fsdecode(rp)}")
    assert got == want
    assert any(a.startswith("1\t") and "owned by nobody" in a for a in got)


def test_command_lookup_answers_as_the_shell(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`command -v` (how nvidia-smi, the compilers and systemctl are found) in the agent and
    in sh over the same PATH: a non-executable file, a directory and an executable of the
    name in turn, an empty entry, a missing dir."""
    for d, kind in (("a", "file644"), ("b", "dir"), ("c", "exe"), ("d", "exe")):
        p = tmp_path / d / "tool"
        p.parent.mkdir()
        if kind == "dir":
            p.mkdir()
        else:
            p.write_text("#!/bin/sh\n")
            p.chmod(0o755 if kind == "exe" else 0o644)
    path = ":".join([str(tmp_path / "missing"), "", *(str(tmp_path / d) for d in "abcd")])
    want = subprocess.run(
        ["/bin/sh", "-c", "command -v tool || echo none"],
        env={"PATH": path},
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    monkeypatch.chdir(tmp_path)
    monkeypatch.setitem(agent_host.ENV, b"PATH", os.fsencode(path))
    got = agent_host.command_v(b"tool")
    assert (os.fsdecode(got) if got else "none") == want == str(tmp_path / "c" / "tool")


def test_without_the_bytecode_the_source_runs_the_same() -> None:
    """A host whose python has another bytecode magic compiles the source: same answer."""
    import importlib.util

    req = collect.agent_request()
    prog = agent.program(req)
    magic = repr(importlib.util.MAGIC_NUMBER).encode()
    assert prog.count(magic) == 1
    t = LocalTransport("local")
    a = _run(t.run(agent.command(), timeout=60, input=prog))
    b = _run(t.run(agent.command(), timeout=60, input=prog.replace(magic, b"b'nope'")))
    assert a.exit_status == b.exit_status == 0
    strip = {"tk.nvcc", "tk.ptxas"}  # (nothing here differs run to run but be safe)
    sa = [s for s in agent.parse_output(a.stdout) if s.name not in strip]
    sb = [s for s in agent.parse_output(b.stdout) if s.name not in strip]
    assert sa == sb and sa[-1].name == "end"


@pytest.mark.skipif(not Path(agent.PYTHON).exists(), reason="no /usr/bin/python3 here")
def test_the_whole_collection_on_this_machine_gives_the_shell_paths_facts() -> None:
    """Login + round 1 + follow-ups: with the agent and without, the same Facts."""
    t = LocalTransport("local")
    via_agent = _facts_doc(_run(collect.collect_facts(t, timeout=60, agent=True)))
    shell = _facts_doc(_run(collect.collect_facts(t, timeout=60, agent=False)))
    assert via_agent == shell and shell["host"] and shell["shell_env"]


def test_the_followup_answered_from_the_agents_look_is_the_real_followup(tmp_path: Path) -> None:
    """_spec_answer stands for a follow-up only where that follow-up would print exactly what
    it builds: here the real one runs (shell) over dirs that exist, are missing or are files."""
    home = tmp_path / "home"
    (home / "bin").mkdir(parents=True)
    (home / ".pyenv" / "shims").mkdir(parents=True)
    (home / ".local").mkdir()
    (home / ".local" / "bin").write_text("")  # a file, not a dir
    t = LocalTransport("local", env={"HOME": str(home)})
    req = collect.agent_request()
    req["ops"] = [["spec"]]
    spec = collect._spec_lines(
        agent.parse_output(
            _run(t.run(agent.command(), timeout=60, input=agent.program(req))).stdout
        )
    )
    assert set(spec) == {f"{home}/{d}" for d in collect.SPEC_DIRS}
    dirs = [f"{home}/.local/bin", f"{home}/bin", "", f"{home}/.pyenv/shims"]
    need = collect._Needs(paths=[(":".join(dirs), "login")])
    got = collect._spec_answer(need, spec)
    assert got is not None
    out = _run(t.run(collect.followup_script(TOKEN, collect._State(), need), timeout=60))
    assert got == split_sections(out.stdout.decode(), TOKEN)
    # a python3 in one of them: drain would probe it, so the follow-up really runs
    (home / "bin" / "python3").symlink_to("/usr/bin/python3")
    spec = collect._spec_lines(
        agent.parse_output(
            _run(t.run(agent.command(), timeout=60, input=agent.program(req))).stdout
        )
    )
    assert collect._spec_answer(need, spec) is None
    # a dir the agent did not look at, or more than PATH dirs to probe: no answer either
    assert collect._spec_answer(collect._Needs(paths=[("/opt/x/bin", "login")]), spec) is None
    assert collect._spec_answer(collect._Needs(paths=need.paths, env_files=["/e"]), spec) is None


# ---- fallback and bounds ---------------------------------------------------------------------


def _facts_doc(facts) -> dict:  # noqa: ANN001 - a Facts
    doc = json.loads(facts.model_dump_json(exclude={"collected_at"}))
    for k in ("SSH_CLIENT", "SSH_CONNECTION"):
        doc["shell_env"].pop(k, None)
    return doc


@needs_root
@pytest.mark.parametrize("why", ["missing", "untrusted"])
def test_a_host_without_a_usable_python3_gets_the_shell_batch(
    why: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    tmp_path.chmod(0o755)
    py = tmp_path / "bin" / "python3"
    if why == "untrusted":
        py.parent.mkdir()
        shutil.copy2(os.path.realpath(agent.PYTHON), py)
        chown_tree(tmp_path / "bin", NOBODY)
    monkeypatch.setattr(agent, "PYTHON", str(py))
    t = LocalTransport("local")
    assert _run(agent.run_agent(t, collect.agent_request(), 60)) is None
    r = _run(t.run(agent.command(str(py)), timeout=60, input=b"raise SystemExit(0)\n"))
    assert r.exit_status == (agent.NO_PYTHON if why == "missing" else agent.UNTRUSTED_PYTHON)
    via_agent = _facts_doc(_run(collect.collect_facts(t, timeout=60, agent=True)))
    shell = _facts_doc(_run(collect.collect_facts(t, timeout=60, agent=False)))
    assert via_agent == shell and shell["host"]


@pytest.mark.parametrize(
    "stdout",
    [
        b"",
        b"not json\n",
        b'["a","b"]\n',
        b"[1,2,3]\n",
        b'["!!","",""]\n',
        b'{"a":1}\n',
        b'["' + b"A" * 10 + b'","",""]\n' + b"\xff\xfe\n",
        b'["ZW5k","",""]\n["ZW5k","","\xe2\x80\xa6"]\n',
    ],
)
def test_garbled_agent_output_is_data_that_stops_cleanly(stdout: bytes) -> None:
    """Whatever comes back: a prefix of well-formed sections, never an exception."""
    got = agent.parse_output(stdout)
    assert all(isinstance(s.name, str) and isinstance(s.body, str) for s in got)
    assert len(got) <= 1


def test_hostile_strings_in_sections_stay_data() -> None:
    """Bytes a host controls (markup, escapes, invalid UTF-8, a fake marker) come back as
    the same text the shell stream's decoding gives, never anything else."""
    import binascii

    raw = b"\x1b]0;pwn\x07[bold]x[/] $(touch /x) \n@@remedy-0@@ end\n\xff\xfe"
    line = (
        b'["'
        + b'","'.join(binascii.b2a_base64(x, newline=False) for x in (b"py.site", raw, raw))
        + b'"]\n'
    )
    (s,) = agent.parse_output(line)
    assert s.name == "py.site" and s.arg == s.body == raw.decode("utf-8", "replace")


# ---- sandbox hosts over real SSH ----------------------------------------------------------


def _doctor() -> dict:
    if not SBX.exists() or os.geteuid() != 0:
        return {}
    try:
        r = subprocess.run([str(SBX), "doctor"], capture_output=True, text=True, timeout=120)
        return json.loads(r.stdout)
    except (subprocess.SubprocessError, json.JSONDecodeError):
        return {}


@dataclass
class _Counted:
    """Each command a collection sent (the SSH sessions it cost)."""

    inner: object
    commands: list[str] = field(default_factory=list)
    facts_agent = True

    @property
    def host(self) -> str:
        return self.inner.host  # type: ignore[attr-defined]

    async def run(self, command, **kw):  # noqa: ANN001, ANN003, ANN201 - a pass-through
        self.commands.append(str(command))
        return await self.inner.run(command, **kw)  # type: ignore[attr-defined]


def _up(scenario: str, name: str) -> dict:
    doc = _doctor()
    tier = "systemd" if scenario == "seed-chain-b" else "ssh"
    if not doc.get(f"{tier}_tier"):
        pytest.skip(f"sandbox tier {tier} not ready: {doc.get('missing')}")
    return sandbox_hosts.up(scenario, name).rec  # a start that fails twice fails the test


def _collect(rec: dict, use_agent: bool) -> tuple[dict, list[str]]:
    from remedy.transport import SSHTransport

    async def go():  # noqa: ANN202
        t = _Counted(SSHTransport(rec["name"], ssh_config=rec["ssh_config"]))
        try:
            # a budget no loaded host spends: the two ways are compared, not timed (a shell
            # batch of triton-ptxas-old ran out of 60 s at load 6, and its facts then differ)
            facts = await collect.collect_facts(t, timeout=300, agent=use_agent)  # type: ignore[arg-type]
        finally:
            await t.inner.close()
        return facts, t.commands

    facts, commands = asyncio.run(go())
    return _facts_doc(facts), commands


@pytest.mark.sandbox
@pytest.mark.parametrize("scenario", SCENARIOS)
def test_agent_facts_equal_the_shell_batchs_over_ssh(scenario: str) -> None:
    host = f"fa{os.getpid() % 100000}{SCENARIOS.index(scenario)}"
    rec = _up(scenario, host)
    try:
        shell, shell_cmds = _collect(rec, False)
        fast, fast_cmds = _collect(rec, True)
        fast2, _ = _collect(rec, True)
    finally:
        subprocess.run([str(SBX), "down", host], capture_output=True, timeout=300)
    assert fast == shell
    assert fast2 == shell
    assert fast["pythons"] and fast["toolkits"] and fast["gpus"]  # what is being compared
    assert agent.MARK in fast_cmds[0]  # the agent ran, no fallback
    assert len(fast_cmds) < len(shell_cmds)
    if scenario in ("healthy", "pip-layout-cu130", "seed-chain-a"):
        # the login PATH's ~/bin and ~/.local/bin: answered from the agent's own look
        assert len(fast_cmds) == 1 and len(shell_cmds) == 3


@pytest.mark.sandbox
def test_an_untrusted_python3_on_the_host_is_not_run_and_facts_stay_the_same() -> None:
    """/usr/bin/python3 writable by others on the host: the agent is not started (the
    wrapper's trust check), the shell batch answers, the facts are the same."""
    host = f"fb{os.getpid() % 100000}"
    rec = _up("healthy", host)
    try:
        before, _ = _collect(rec, False)
        chmod = subprocess.run(
            [str(SBX), "exec", host, "sh", "-c", 'chmod o+w "$(readlink -f /usr/bin/python3)"'],
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert chmod.returncode == 0, chmod.stderr
        started = time.monotonic()
        after, cmds = _collect(rec, True)
        assert time.monotonic() - started < 60
    finally:
        subprocess.run([str(SBX), "down", host], capture_output=True, timeout=300)
    assert agent.MARK in cmds[0] and len(cmds) > 1  # tried, refused, then the shell batch
    assert after == before
