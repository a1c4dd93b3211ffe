"""Probes without a CUDA toolchain: resolution (toolkit, Python, arch, environment), skips,
and launch-probe against a stand-in server replaying real recorded SGLang log lines.

The real-toolchain probes are in test_probes_real.py.
"""

from __future__ import annotations

import asyncio
import glob
import json
import os
import socket
import sys
from pathlib import Path
from typing import Any

import pytest

from remedy.errors import ConnectionDropped
from remedy.model import Facts, Gpu, PythonEnv, Service, Workload
from remedy.probes import PROBES, ProbeResult, run_probe
from remedy.probes.base import Arch, ProbeContext, ProbeError
from remedy.probes.launch import compilers_under, parse_stat
from remedy.transport import CommandResult, LocalTransport, ScriptedTransport
from remedy.transport.scripted import ScriptedCall

FIX = Path(__file__).resolve().parent / "fixtures" / "probes"
FAKE_SERVER = FIX / "fake_sglang_server.py"
PROBES_YAML = Path(__file__).resolve().parents[1] / "playbooks" / "probes.yaml"


def run(coro: Any) -> Any:
    return asyncio.run(coro)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def ctx(facts: Facts, **kw: Any) -> ProbeContext:
    return ProbeContext(
        probe=kw.pop("probe", "compile-probe"),
        transport=kw.pop("transport", LocalTransport()),
        facts=facts,
        params=kw.pop("params", {}),
        consumer=kw.pop("consumer", "flashinfer-jit"),
        arch_arg=kw.pop("arch", None),
        timeout=kw.pop("timeout", 60.0),
    )


# ---- the API ------------------------------------------------------------------------------


def test_every_probe_in_the_playbook_is_implemented() -> None:
    import yaml

    ids = [p["id"] for p in yaml.safe_load(PROBES_YAML.read_text())["probes"]]
    assert sorted(ids) == sorted(PROBES)


def test_unknown_probe_is_a_failed_result_not_an_exception() -> None:
    r = run(run_probe("no-such-probe", LocalTransport(), Facts()))
    assert isinstance(r, ProbeResult) and not r.ok and "unknown probe" in r.detail


def test_static_does_no_host_work() -> None:
    t = ScriptedTransport(lambda call: pytest.fail(f"static ran {call.text}"))
    r = run(run_probe("static", t, Facts()))
    assert r.ok and r.skipped is None and t.calls == []


@pytest.mark.parametrize(
    ("text", "nvcc", "dotted"),
    [
        ("12.0", "sm_120a", "12.0"),
        ("9.0", "sm_90a", "9.0"),
        ("8.9", "sm_89", "8.9"),
        ("sm_120a", "sm_120a", "12.0a"),
        ("120", "sm_120a", "12.0"),
        ("12.0f", "sm_120f", "12.0f"),
        ("compute_100a", "sm_100a", "10.0a"),
    ],
)
def test_arch_spellings(text: str, nvcc: str, dotted: str) -> None:
    a = Arch.parse(text)
    assert (a.nvcc, a.dotted) == (nvcc, dotted)


def test_no_gpu_and_no_arch_is_a_clear_failure() -> None:
    facts = Facts(toolkits=[], shell_env={"CUDA_HOME": "/opt/cuda"})
    r = run(run_probe("compile-probe", ScriptedTransport(lambda c: 0), facts))
    assert not r.ok and "no GPU in the facts: pass arch" in r.detail
    with pytest.raises(ProbeError, match="pass arch"):
        ctx(facts).arch()


def test_arch_comes_from_the_first_gpu() -> None:
    facts = Facts(
        gpus=[
            Gpu(name="RTX PRO 6000", compute_cap="12.0"),
            Gpu(index=1, name="H200", compute_cap="9.0"),
        ]
    )
    assert ctx(facts).arch().nvcc == "sm_120a"
    assert ctx(facts, arch="9.0").arch().nvcc == "sm_90a"


# ---- which toolkit, which Python ------------------------------------------------------------


def _facts_two_toolkits(**env: str) -> Facts:
    return Facts.model_validate(
        {
            "gpus": [{"name": "g", "compute_cap": "12.0"}],
            "toolkits": [
                {
                    "prefix": "/usr/local/cuda-12.8",
                    "kind": "system",
                    "nvcc_release": "12.8",
                    "aliases": ["/usr/local/cuda"],
                },
                {
                    "prefix": "/v/lib/python3.11/site-packages/nvidia/cu13",
                    "kind": "pip-cu13",
                    "nvcc_release": "13.0",
                },
            ],
            "shell_env": env,
        }
    )


def test_toolkit_is_the_consumers_own_pick_or_the_steps_subject() -> None:
    cu13 = "/v/lib/python3.11/site-packages/nvidia/cu13"
    f = _facts_two_toolkits(CUDA_HOME=cu13, PATH="/usr/local/cuda/bin:/usr/bin")
    assert ctx(f).toolkit() == (cu13, "flashinfer-jit picks it by CUDA_HOME")
    f = _facts_two_toolkits(PATH="/usr/local/cuda/bin:/usr/bin")
    prefix, how = ctx(f).toolkit()
    assert prefix == "/usr/local/cuda-12.8" and how.startswith("flashinfer-jit picks it by PATH")
    assert ctx(f, params={"prefix": cu13}).toolkit()[0] == cu13
    # FlashInfer runs $FLASHINFER_NVCC when set, with $CUDA_HOME's headers and libs: so does
    # the probe (here CUDA_HOME is unset and nvcc not on PATH: FlashInfer's default prefix)
    f = _facts_two_toolkits(FLASHINFER_NVCC=cu13 + "/bin/nvcc")
    c = ctx(f)
    prefix, how = c.toolkit()
    assert (prefix, how) == (
        "/usr/local/cuda",
        "flashinfer-jit picks it by default /usr/local/cuda",
    )
    assert c.nvcc(prefix) == cu13 + "/bin/nvcc"
    assert ctx(f, consumer="tvm-ffi").nvcc(prefix) == "/usr/local/cuda/bin/nvcc"  # no override


def test_no_toolkit_found_says_so() -> None:
    f = Facts(gpus=[Gpu(name="g", compute_cap="12.0")], shell_env={"PATH": "/usr/bin"})
    r = run(run_probe("compile-probe", ScriptedTransport(lambda c: 0), f))
    assert not r.ok and "finds no CUDA toolkit" in r.detail


def test_python_is_the_workloads_interpreter() -> None:
    f = Facts(pythons=[PythonEnv(path="/opt/sglang-venv", packages={"sglang": "0.5.12"})])
    assert ctx(f).python() == "/opt/sglang-venv/bin/python"
    assert ctx(f, params={"python": "/srv/v"}).python() == "/srv/v/bin/python"
    assert ctx(f, params={"python": "/srv/v/bin/python3.12"}).python() == "/srv/v/bin/python3.12"
    assert ctx(Facts()).python() == "python3"


# ---- the service's environment --------------------------------------------------------------

SHOW = (
    'Environment=CUDA_HOME=/opt/sglang-venv/lib/python3.11/site-packages/nvidia/cu13 "X=a b"\n'
    "EnvironmentFiles=/etc/default/sglang (ignore_errors=no)\n"
)


def _systemd_facts() -> Facts:
    return Facts(
        gpus=[Gpu(name="RTX PRO 6000", compute_cap="12.0")],
        services=[
            Service(
                name="sglang.service",
                environment={"CUDA_HOME": "/stale"},
                python="/opt/sglang-venv",
            )
        ],
        pythons=[
            PythonEnv(path="/opt/sglang-venv", packages={"flashinfer-python": "0.6.11.post1"})
        ],
        shell_env={"CUDA_HOME": "/shell/only", "PATH": "/root/bin:/usr/bin"},
        workload=Workload(service="sglang.service"),
    )


def test_env_probe_reads_the_units_environment_on_the_host() -> None:
    """A systemd workload's environment is re-read (systemctl show + EnvironmentFile), and the
    gate runs under `env -i` + exactly that, with the unit's interpreter."""

    def handler(call: ScriptedCall) -> Any:
        argv = call.argv or []
        if argv[:2] == ["systemctl", "show"]:
            return SHOW
        if call.script and "mktemp" in call.script:
            return "/tmp/remedy-probe.TEST"
        if argv and argv[0] == "env":
            return CommandResult(
                0,
                b'REMEDY-RESULT {"cuda_home": "x", "nvcc_arch_flags": ["-gencode=a"]}\n',
                b"",
                0.1,
            )
        return 0

    t = ScriptedTransport(handler)
    t.files["/etc/default/sglang"] = b"FLASHINFER_NVCC=/opt/n/bin/nvcc\n"
    r = run(run_probe("env-probe", t, _systemd_facts()))
    assert r.ok, r.detail
    gate = next(c.argv for c in t.calls if c.argv and c.argv[0] == "env")
    assert gate[:2] == ["env", "-i"]
    assigned = dict(w.split("=", 1) for w in gate[2 : gate.index("sh")])
    assert assigned["CUDA_HOME"] == "/opt/sglang-venv/lib/python3.11/site-packages/nvidia/cu13"
    assert assigned["X"] == "a b"
    assert assigned["FLASHINFER_NVCC"] == "/opt/n/bin/nvcc"  # EnvironmentFile overrides
    assert assigned["PATH"].startswith("/usr/local/sbin")  # systemd's default, not the shell's
    assert assigned["FLASHINFER_CUDA_ARCH_LIST"] == "12.0"
    assert "/opt/sglang-venv/bin/python" in gate
    assert "/tmp/remedy-probe.TEST/fi_gate.py" in gate
    assert "sglang.service's environment (systemctl show" in r.detail
    # the private dir is removed
    assert any(c.argv == ["rm", "-rf", "--", "/tmp/remedy-probe.TEST"] for c in t.calls)


ARCH_BOGUS = (  # the tail of FlashInfer's traceback for FLASHINFER_CUDA_ARCH_LIST=bogus (H200 call A)
    b'  File "/opt/sglang-venv/lib/python3.11/site-packages/flashinfer/compilation_context.py", '
    b"line 65, in __init__\n"
    b'    major, minor = arch.split(".")\n'
    b"ValueError: not enough values to unpack (expected 2, got 1)\n"
)


def test_an_arch_list_in_the_units_environment_is_kept_unless_arch_is_passed() -> None:
    seen: list[dict[str, str]] = []

    def handler(call: ScriptedCall) -> Any:
        argv = call.argv or []
        if argv[:2] == ["systemctl", "show"]:
            return "Environment=FLASHINFER_CUDA_ARCH_LIST=bogus\n"
        if call.script and "mktemp" in call.script:
            return "/tmp/remedy-probe.T2"
        if argv and argv[0] == "env":
            seen.append(dict(w.split("=", 1) for w in argv[2 : argv.index("sh")]))
            return CommandResult(1, ARCH_BOGUS, b"", 0.1)
        return 0

    r = run(run_probe("env-probe", ScriptedTransport(handler), _systemd_facts()))
    assert not r.ok and seen[-1]["FLASHINFER_CUDA_ARCH_LIST"] == "bogus"
    assert "flashinfer-arch-list-invalid" in [s.signature for s in r.symptoms]
    run(run_probe("env-probe", ScriptedTransport(handler), _systemd_facts(), arch="12.0"))
    assert seen[-1]["FLASHINFER_CUDA_ARCH_LIST"] == "12.0"


# ---- GPU probes skip honestly ---------------------------------------------------------------


@pytest.mark.parametrize(
    "probe", ["driver-probe", "jit-run-probe", "graph-capture", "triton-compile"]
)
def test_gpu_probes_skip_without_a_gpu_in_the_facts(probe: str) -> None:
    t = ScriptedTransport(lambda c: pytest.fail("no host work expected"))
    r = run(run_probe(probe, t, Facts()))
    assert not r.ok and r.skipped == "needs a GPU: none in the facts"


def test_gpu_probes_skip_when_nvidia_smi_is_missing_here() -> None:
    facts = Facts(gpus=[Gpu(name="RTX PRO 6000", compute_cap="12.0")])
    for probe in ("jit-run-probe", "graph-capture", "triton-compile", "driver-probe"):
        t = ScriptedTransport(
            lambda c: CommandResult(127, b"", b"sh: 1: nvidia-smi: not found\n", 0)
        )
        r = run(run_probe(probe, t, facts))
        assert not r.ok and r.skipped and r.skipped.startswith("needs a GPU: nvidia-smi fails"), (
            probe
        )


def test_driver_probe_fails_when_nvidia_smi_cannot_talk_to_the_driver() -> None:
    msg = b"NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver.\n"
    t = ScriptedTransport(lambda c: CommandResult(9, msg, b"", 0))
    r = run(run_probe("driver-probe", t, Facts(gpus=[Gpu(name="g", compute_cap="12.0")])))
    assert not r.ok and r.skipped is None and "couldn't communicate" in r.detail


def test_torch_ext_build_skips_a_cpu_torch_from_facts() -> None:
    facts = Facts(
        gpus=[Gpu(name="g", compute_cap="12.0")],
        pythons=[PythonEnv(path="/v", packages={"torch": "2.13.0+cpu"}, torch_cuda=None)],
    )
    r = run(run_probe("torch-ext-build", ScriptedTransport(lambda c: pytest.fail("ran")), facts))
    assert not r.ok and r.skipped and "CPU-only" in r.skipped


def test_a_script_skip_is_reported_as_skipped(tmp_path: Path) -> None:
    """A Python env without FlashInfer: the real script says so, the probe is skipped."""
    venv_py = sys.executable  # remedy's own interpreter: no flashinfer here
    facts = Facts(gpus=[Gpu(name="g", compute_cap="12.0")], shell_env={"PATH": "/usr/bin:/bin"})
    r = run(run_probe("env-probe", LocalTransport(), facts, params={"python": venv_py}))
    if r.skipped is None:
        pytest.skip("this interpreter has flashinfer installed")
    assert not r.ok and "flashinfer is not installed" in r.skipped


def test_probes_leave_no_temp_dir_behind() -> None:
    before = set(glob.glob("/tmp/remedy-probe.*"))
    facts = Facts(gpus=[Gpu(name="g", compute_cap="12.0")], shell_env={"PATH": "/usr/bin:/bin"})
    run(run_probe("env-probe", LocalTransport(), facts, params={"python": sys.executable}))
    run(run_probe("compile-probe", LocalTransport(), facts, params={"prefix": "/nonexistent"}))
    assert set(glob.glob("/tmp/remedy-probe.*")) <= before


def test_a_missing_nvcc_fails_with_the_shells_words() -> None:
    facts = Facts(gpus=[Gpu(name="g", compute_cap="12.0")], shell_env={"PATH": "/usr/bin:/bin"})
    r = run(
        run_probe("preprocess-probe", LocalTransport(), facts, params={"prefix": "/nonexistent"})
    )
    assert not r.ok and "/nonexistent/bin/nvcc" in r.detail


# ---- launch-probe: host process tree ----------------------------------------------------------

STAT = """\
100 (python3) S 1 100 100 0 -1 4194560 1 0 0 0 500 20 0 0 20 0 1 0 1 1 1
101 (python3) S 100 100 100 0 -1 4194560 1 0 0 0 90 3 0 0 20 0 1 0 1 1 1
102 (ninja) S 101 100 100 0 -1 4194560 1 0 0 0 1 1 0 0 20 0 1 0 1 1 1
103 (cicc) R 102 100 100 0 -1 4194560 1 0 0 0 700 10 0 0 20 0 1 0 1 1 1
200 (cicc) R 1 200 200 0 -1 4194560 1 0 0 0 50 1 0 0 20 0 1 0 1 1 1
300 (tmux: server) S 1 300 300 0 -1 4194560 1 0 0 0 5 1 0 0 20 0 1 0 1 1 1
"""


def test_compilers_are_looked_for_under_the_server_only() -> None:
    procs = parse_stat(STAT)
    assert procs[300] == (1, "tmux: server", 6)
    assert compilers_under(procs, 100) == {102: ("ninja", 2), 103: ("cicc", 710)}
    assert set(compilers_under(procs, 0)) == {102, 103, 200}  # root unknown: the whole host


# ---- launch-probe against the stand-in server (real recorded SGLang lines) -----------------


def launch(
    mode: str,
    *,
    timeout: float = 3.0,
    extend_s: float = 2.0,
    transport: Any = None,
    **extra: Any,
) -> ProbeResult:
    port = free_port()
    cmd = [
        sys.executable,
        str(FAKE_SERVER),
        "--mode",
        mode,
        "--port",
        str(port),
        *extra.pop("args", []),
    ]
    facts = Facts(shell_env={"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": "/tmp"})
    params = {"command": cmd, "extend_s": extend_s, **extra}
    t = transport or LocalTransport()
    return run(run_probe("launch-probe", t, facts, params=params, timeout=timeout))


def test_launch_ready_means_readiness_line_then_health_200() -> None:
    # a budget a loaded CI host cannot run out (the fake server's start-up took 4.9 s there);
    # ok means the readiness line and /health decided, since a spent budget fails
    r = launch("ready", timeout=30)
    assert r.ok, r.detail
    assert "readiness line, then GET http://127.0.0.1:" in r.detail and "/health = 200" in r.detail
    sigs = [s.signature for s in r.symptoms]
    assert "server-ready" in sigs
    # benign lines of the real log never decide: openai_harmony missing, FA3 import ignored
    assert "python-module-not-found" in sigs and "sglang-optional-import-ignored" in sigs
    assert r.seconds < 30


def test_launch_decides_on_the_first_fatal_signature_and_keeps_the_chain() -> None:
    r = launch("fatal", timeout=60)
    assert not r.ok
    assert "capture-cuda-graph-failed" in r.detail and "Capture cuda graph failed" in r.detail
    sigs = [s.signature for s in r.symptoms]
    # the lines after the deciding one are still read: the real cause is in them
    assert {"capture-cuda-graph-failed", "cccl-nv-detail-missing", "sglang-child-sigquit"} <= set(
        sigs
    )
    assert r.seconds < 30, "decided by the log, not by the 60 s budget"


def test_launch_budget_is_extended_while_the_log_shows_build_progress() -> None:
    """ninja's [n/m] lines keep coming after the 3 s base budget: the build is not cut off."""
    r = launch("building", timeout=3.0, extend_s=3.0, args=["--step", "2.5"])
    assert r.ok, r.detail
    assert r.seconds > 3.0 and "progress lines" in r.detail


def test_launch_budget_is_extended_while_a_silent_build_burns_cpu() -> None:
    """A cold JIT build inside capture prints nothing: a `cicc` under the server, using CPU,
    keeps the budget open (the base budget is 8 s, the build 12 s). The base budget covers a
    loaded host's start-up of the fake server (4.9 s seen in CI-like load), and each extension
    window (4 s) the gap between the build's end and the readiness line: with 2 s and 1 s a
    loaded host found the build over and the line not yet printed."""
    r = launch("silent-build", timeout=8.0, extend_s=4.0, args=["--build-s", "12"])
    assert r.ok, r.detail
    assert "running compilers" in r.detail and "cicc[" in r.detail
    assert r.seconds > 12.0


def test_launch_without_progress_fails_when_the_budget_is_spent() -> None:
    r = launch("hang", timeout=1.5, extend_s=1.0)
    assert not r.ok and "no readiness line and no fatal signature" in r.detail
    assert "no build in progress" in r.detail
    assert r.seconds < 8


def test_launch_reports_a_server_that_exits_early() -> None:
    facts = Facts(shell_env={"PATH": "/usr/bin:/bin"})
    params = {"command": "echo 'Load weight begin.'; exit 3"}
    r = run(run_probe("launch-probe", LocalTransport(), facts, params=params, timeout=30))
    assert not r.ok and "exited (exit status 3) before the readiness line" in r.detail


def test_launch_then_generate_is_answered() -> None:
    r = launch("ready", timeout=10, generate=True)
    assert r.ok, r.detail
    assert "/generate #1 200 in" in r.detail and "(16 output ids)" in r.detail


def test_generate_waits_while_the_first_request_builds_sampling() -> None:
    """The first non-greedy request JIT-builds FlashInfer sampling (87-106 s on an H200): a
    silent `cicc` under the server keeps the 1 s wait open for the 4 s build."""
    r = launch("ready", timeout=10, extend_s=1.0, args=["--generate", "build", "--build-s", "4"],
               generate=[{"input_ids": [1, 2], "sampling_params": {"temperature": 0.8, "top_k": 20}}])  # fmt: skip
    assert r.ok, r.detail
    assert "waited on a build" in r.detail and "cicc[" in r.detail


@pytest.mark.parametrize(
    ("mode", "expect"),
    [
        ("hang", "got no answer within"),
        ("error", "answered 500"),
        ("die", "scheduler-exception"),
    ],
)
def test_generate_failures_decide_failed(mode: str, expect: str) -> None:
    r = launch("ready", timeout=10, extend_s=1.5, args=["--generate", mode], generate=True)
    assert not r.ok
    assert expect in r.detail, r.detail
    assert r.seconds < 20


def test_generate_answer_parsing() -> None:
    from remedy.probes.launch import answered, generate_requests

    assert answered('REMEDY-HTTP 200\nREMEDY-BODY {"output_ids": [1, 2]}') == (
        "200",
        "2 output ids",
    )
    assert answered('REMEDY-HTTP 200\nREMEDY-BODY [{"text": "hi"}]')[0] == "200"
    assert answered("REMEDY-HTTP 200\nREMEDY-BODY <html>")[0] == "bad-body"
    assert answered('REMEDY-HTTP 200\nREMEDY-BODY {"error": 1}')[0] == "bad-body"
    assert answered("REMEDY-HTTP 0 URLError: refused") == ("0", "URLError: refused")
    assert generate_requests(True)[0]["sampling_params"]["temperature"] == 0
    assert generate_requests({"text": "x"}) == [{"text": "x"}] and generate_requests(None) == []


class DroppingTransport(LocalTransport):
    """The connection drops: the server's log stream after a line matching `after`, or the
    /generate request (a run carrying a JSON body)."""

    def __init__(self, *, after: str | None = None, on_generate: bool = False) -> None:
        super().__init__()
        self.after, self.on_generate = after, on_generate

    def stream(self, command: Any, *, timeout: float, env: Any = None) -> Any:
        inner = super().stream(command, timeout=timeout, env=env)
        after = self.after

        async def lines() -> Any:
            try:
                async for raw in inner:
                    yield raw
                    if after and after in raw.decode(errors="replace"):
                        raise ConnectionDropped("scratch: connection lost (test)")
            finally:
                await inner.aclose()

        return lines()

    async def run(self, command: Any, **kw: Any) -> Any:
        if self.on_generate and isinstance(command, list) and "input_ids" in command[-1]:
            raise ConnectionDropped("scratch: connection lost during the request (test)")
        return await super().run(command, **kw)


@pytest.mark.parametrize(
    ("transport", "generate"),
    [
        (lambda: DroppingTransport(after="Load weight begin"), None),
        (lambda: DroppingTransport(on_generate=True), True),
    ],
    ids=["during-startup", "during-generate"],
)
def test_a_connection_drop_inside_the_launch_is_no_verdict(transport: Any, generate: Any) -> None:
    """A drop under the launch says nothing about the host: the result carries the transport
    error, so `remedy run` stops as interrupted (exit 4, resumable) instead of rolling back a
    step that may be right."""
    extra = {"generate": generate} if generate else {}
    r = launch("ready", timeout=10, transport=transport(), **extra)
    assert not r.ok
    assert r.transport_error and "connection lost" in r.transport_error, r.detail


def test_a_drop_after_the_fatal_line_keeps_the_verdict() -> None:
    r = launch("fatal", timeout=30, transport=DroppingTransport(after="Capture cuda graph failed"))
    assert not r.ok and "capture-cuda-graph-failed" in r.detail
    assert r.transport_error is None


def test_launch_needs_a_unit_or_a_command() -> None:
    r = run(run_probe("launch-probe", ScriptedTransport(lambda c: 0), Facts()))
    assert not r.ok and "needs a server to start" in r.detail


def test_launch_of_a_unit_follows_this_invocations_journal() -> None:
    """systemd path: restart, then journalctl of the new InvocationID (scripted: the journal
    of a unit whose capture fails, then systemd's own line about the exit)."""
    journal = (
        "REMEDY-LAUNCH-PID 4242\nREMEDY-LAUNCH-INVOCATION 0123abcd\n"
        + (FIX / "h200_server1.log")
        .read_text()
        .split("[2026-11-29 18:11:51] Capture cuda graph bs")[0]
        + (FIX / "seed003_capture_failure.log").read_text()
        + "sglang.service: Main process exited, code=exited, status=1/FAILURE\n"
    )

    def handler(call: ScriptedCall) -> Any:
        if call.script and "mktemp" in call.script:
            return "/tmp/remedy-probe.U"
        if call.argv and call.argv[:2] == ["sh", "/tmp/remedy-probe.U/launch_unit.sh"]:
            assert call.argv[2] == "sglang.service"
            return journal
        return 0

    facts = Facts(workload=Workload(service="sglang.service"))
    t = ScriptedTransport(handler)
    r = run(run_probe("launch-probe", t, facts, timeout=60))
    assert not r.ok and "capture-cuda-graph-failed" in r.detail
    assert "cccl-nv-detail-missing" in [s.signature for s in r.symptoms]
    script = t.files["/tmp/remedy-probe.U/launch_unit.sh"].decode()
    assert "systemctl restart" in script and "_SYSTEMD_INVOCATION_ID=" in script


def test_launch_probe_result_is_json_friendly() -> None:
    r = launch("fatal", timeout=30)
    json.dumps({"detail": r.detail, "symptoms": [s.model_dump() for s in r.symptoms]})


def test_a_build_without_any_arch_source_says_pass_arch() -> None:
    """No GPU in the facts, no arch list in the environment, no `arch`: nothing to build for."""
    t = ScriptedTransport(
        lambda c: "/tmp/remedy-probe.N" if c.script and "mktemp" in c.script else 0
    )
    r = run(run_probe("flashinfer-jit-build", t, Facts(shell_env={"PATH": "/usr/bin"})))
    assert not r.ok and "no GPU in the facts: pass arch" in r.detail
    assert any(c.argv == ["rm", "-rf", "--", "/tmp/remedy-probe.N"] for c in t.calls)


def test_launch_of_a_unit_systemd_refuses_says_why() -> None:
    refused = (
        "Job for sglang.service failed because start of the service was attempted too often.\n"
        "REMEDY-LAUNCH-ERROR systemctl restart sglang.service failed (exit 1)\n"
    )

    def handler(call: ScriptedCall) -> Any:
        if call.script and "mktemp" in call.script:
            return "/tmp/remedy-probe.R"
        if call.argv and call.argv[1:2] == ["/tmp/remedy-probe.R/launch_unit.sh"]:
            return CommandResult(1, refused.encode(), b"", 0.1)
        return 0

    facts = Facts(workload=Workload(service="sglang.service"))
    r = run(run_probe("launch-probe", ScriptedTransport(handler), facts, timeout=30))
    assert not r.ok and "attempted too often" in r.detail and r.seconds < 5


def test_launch_uses_the_workloads_launch_command() -> None:
    port = free_port()
    cmd = f"exec {sys.executable} {FAKE_SERVER} --mode ready --port {port}"
    facts = Facts(shell_env={"PATH": "/usr/bin:/bin"}, workload=Workload(launch=cmd))
    r = run(run_probe("launch-probe", LocalTransport(), facts, timeout=30))
    assert r.ok and f"127.0.0.1:{port}/health = 200" in r.detail, r.detail
