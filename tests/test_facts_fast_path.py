"""The fast fact path gives the facts the reference path gives, on the same real hosts.

Issue 18 made facts cheap enough for a fleet: the trust walk stats a binary's chain once, the
SVCPY pipeline is skipped without units, Requires-Dist lines that cannot be a pin are not
parsed, nvidia-smi runs in the background of the batch, and the follow-up for the login
PATH's own dirs is sent beside the main batch (used only when it is exactly what the real
follow-up would have been). The code each of these
replaced is kept in
tests/reference_paths.py; here both paths run against the same sandbox hosts (every scenario,
real sshd) and the same METADATA, and must agree on every fact.
"""

from __future__ import annotations

import asyncio
import glob
import json
import os
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path

import pytest
import sandbox_hosts
from reference_paths import (
    REFERENCE_GPU,
    REFERENCE_SVCPY,
    REFERENCE_TRUSTED,
    reference_parse_requirements,
)

from remedy.facts import collect, pythons
from remedy.facts.sections import split_sections
from remedy.transport import SSHTransport
from remedy.trust import SH_TRUST

ROOT = Path(__file__).resolve().parents[1]
SBX = ROOT / "sandbox" / "sbx"
FIXTURES = ROOT / "tests" / "fixtures" / "facts"
SCENARIOS = sorted(p.parent.name for p in (ROOT / "sandbox" / "scenarios").glob("*/scenario.yaml"))
FAST_SVCPY = (
    "SVCPY=\n[ -n \"${SVC-}\" ] && SVCPY=$(printf '%s\\n' \"$SVC\" | grep '^ExecStart=' | "
    "grep -i sglang | grep -o '/[^ ;\"]*/bin/python[0-9.]*' | sort -u)\n"
)


# ---- Requires-Dist pins ------------------------------------------------------------------


def _recorded_req_texts() -> list[str]:
    out = []
    for f in sorted((FIXTURES / "python").glob("*.json")):
        fx = json.loads(f.read_text())
        token = fx.get("token") or "@@remedy-fact@@"
        out += [s.body for s in split_sections(fx["output"], token) if s.name == "py.req"]
    return out


def _real_req_text() -> str | None:
    """Requires-Dist of the sandbox's real heavy venv (torch 2.14.1, sglang, flashinfer)."""
    cache = os.environ.get("SBX_CACHE") or str(ROOT / "sandbox" / "cache")
    sites = glob.glob(f"{cache}/venv-*/lib/python3*/site-packages")
    if not sites:
        return None
    pats = ("torch-", "cuda_toolkit-", "sglang-", "flashinfer_python-", "sglang_kernel-")
    lines = []
    for meta in sorted(glob.glob(f"{sites[0]}/*.dist-info/METADATA")):
        if not Path(meta).parent.name.startswith(pats):
            continue
        for line in Path(meta).read_text(errors="replace").splitlines():
            if line.startswith("Requires-Dist: "):
                lines.append(f"{meta}:{line}")
    return "\n".join(lines) + "\n"


HOSTILE = "\n".join(
    f"/v/lib/python3.11/site-packages/{dist}.dist-info/METADATA:Requires-Dist: {req}"
    for dist, req in [
        ("torch-2.9.0", "nvidia-cublas-cu12==12.8.4.1; platform_system == 'Linux'"),
        ("torch-2.9.0", 'nvidia-cudnn-cu12 (==9.10.2.21) ; platform_machine == "x86_64"'),
        ("torch-2.9.0", "triton===3.5.0"),
        ("torch-2.9.0", "nvidia-nccl-cu12==2.27.5; sys_platform == 'win32'"),
        ("torch-2.9.0", "cuda-toolkit[cudart,nvcc]==12.8.1; python_version >= '3.10'"),
        ("torch-2.9.0", "nvidia-x==1.0; platform_version == '[weird]'"),
        ("torch-2.9.0", "nvidia-y>=1.0,==1.1"),
        ("torch-2.9.0", "nvidia-z"),
        ("torch-2.9.0", "nvidia- ==1"),
        ("torch-2.9.0", "nvidia-w.==1"),
        ("torch-2.9.0", "not a requirement at all =="),
        ("torch-2.9.0", "filelock==3.0"),
        ("cuda_toolkit-12.8.1", "nvidia-cuda-runtime-cu12==12.8.90.*; extra == 'cudart'"),
        ("cuda_toolkit-12.8.1", 'nvidia-cuda-nvcc-cu12==12.8.93.*; extra == "nvcc"'),
        ("cuda_toolkit-12.8.1", "nvidia-cufft-cu12==11.3.3.83.*; extra == 'cufft'"),
        ("cuda_toolkit-12.8.1", "nvidia-cufft-cu12==11.3.3.83.*; extra == 'cufft'"),
        ("sglang-0.5.3", "flashinfer_python==0.4.0; extra == 'srt'"),
        ("sglang-0.5.3", "sgl-kernel==0.3.16 ; python_version < '3.9'"),
        ("flashinfer_python-0.4.0", "apache-tvm-ffi==0.1.0b15"),
        ("numpy-2.0.0", "nvidia-foo==1.0"),
        ("sglang_kernel-0.3.16", "torch==2.9.0"),
    ]
)


def test_requirement_pins_match_the_reference_parser() -> None:
    texts = _recorded_req_texts() + [HOSTILE]
    real = _real_req_text()
    if real:
        texts.append(real)
    packages = {"torch": "2.9.0", "cuda-toolkit": "12.8.1", "sglang": "0.5.3"}
    compared = 0
    for text in texts:
        for python in ("3.11", "3.8", None):
            want = reference_parse_requirements(text, packages, python)
            assert pythons.parse_requirements(text, packages, python) == want
            assert pythons.parse_requirements(text, packages, python) == want  # memoized
            compared += len(want)
    assert compared > 20  # the inputs do hold pins: the comparison is not of empty lists
    if real is None:
        pytest.skip("compared recorded and hostile lines only: no sandbox heavy venv here")


# ---- whole hosts: the reference path vs the fast path ----------------------------------------


def doctor() -> dict:
    if not SBX.exists():
        return {}
    try:
        r = subprocess.run([str(SBX), "doctor"], capture_output=True, text=True, timeout=120)
        return json.loads(r.stdout)
    except (subprocess.SubprocessError, json.JSONDecodeError):
        return {}


DOCTOR = doctor()


def _reference(monkeypatch: pytest.MonkeyPatch) -> None:
    """Make collect_facts run the code the fast path replaced."""
    lib, main = collect.library, collect.main_script

    def ref_library(token: str) -> str:
        text = lib(token)
        assert text.count(SH_TRUST) == 1
        return text.replace(SH_TRUST, REFERENCE_TRUSTED)

    def ref_main(token: str, services: list[str] | None = None) -> str:
        text = main(token, services)  # built on ref_library already
        assert text.count(REFERENCE_TRUSTED) == 1 and text.count(FAST_SVCPY) == 1
        assert text.count(collect.GPU_BACKGROUND) == 1 and text.count(collect.GPU_COLLECT) == 1
        text = text.replace(collect.GPU_BACKGROUND, REFERENCE_GPU)  # in line, unchecked
        return text.replace(collect.GPU_COLLECT, "").replace(FAST_SVCPY, REFERENCE_SVCPY)

    monkeypatch.setattr(collect, "library", ref_library)
    monkeypatch.setattr(collect, "main_script", ref_main)
    monkeypatch.setattr(collect, "predicted_need", lambda *a: None)  # no early follow-up
    monkeypatch.setattr(pythons, "parse_requirements", reference_parse_requirements)


@dataclass
class _Timed:
    """Each script with when it was sent and when its answer came (seconds from the start)."""

    inner: SSHTransport
    runs: list[tuple[str, float, float]] = field(default_factory=list)
    t0: float = field(default_factory=time.monotonic)

    @property
    def host(self) -> str:
        return self.inner.host

    async def run(self, command, **kw):  # noqa: ANN001, ANN003, ANN201 - a pass-through
        start = time.monotonic() - self.t0
        r = await self.inner.run(command, **kw)
        self.runs.append((str(command), start, time.monotonic() - self.t0))
        return r


def _collect(rec: dict) -> tuple[dict, list[tuple[str, float, float]]]:
    async def go():
        t = _Timed(SSHTransport(rec["name"], ssh_config=rec["ssh_config"]))
        try:
            facts = await collect.collect_facts(t, timeout=60)  # type: ignore[arg-type]
        finally:
            await t.inner.close()
        return facts, t.runs

    facts, runs = asyncio.run(go())
    doc = json.loads(facts.model_dump_json(exclude={"collected_at"}))
    for k in ("SSH_CLIENT", "SSH_CONNECTION"):  # the client port differs per connection
        doc["shell_env"].pop(k, None)
    return doc, runs


def _followups(runs: list[tuple[str, float, float]]) -> tuple[int, int]:
    """(follow-ups sent while the main batch ran, follow-ups sent after it: extra rounds).
    A follow-up carries the probe library and is not the main batch."""
    main_end = next(end for s, _, end in runs if "m svc.boot" in s)
    starts = [start for s, start, _ in runs if "tk() {" in s and "m svc.boot" not in s]
    return sum(1 for x in starts if x < main_end), sum(1 for x in starts if x >= main_end)


def _up(name: str, host: str) -> dict:
    tier = "systemd" if name == "seed-chain-b" else "ssh"
    if not DOCTOR.get(f"{tier}_tier"):
        pytest.skip(f"sandbox tier {tier} not ready: {DOCTOR.get('missing')}")
    return sandbox_hosts.up(name, host).rec  # a start that fails twice fails the test


@pytest.mark.sandbox
@pytest.mark.parametrize("name", SCENARIOS)
def test_fast_path_facts_equal_the_reference_path(
    name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    if not DOCTOR:
        pytest.skip("sandbox/sbx is missing or `sbx doctor` failed")
    host = f"fp{os.getpid() % 100000}{SCENARIOS.index(name)}"
    rec = _up(name, host)
    try:
        fast, fast_scripts = _collect(rec)
        with monkeypatch.context() as m:
            _reference(m)
            ref, ref_scripts = _collect(rec)
        fast2, _ = _collect(rec)  # and again: the memoized parts answer the same
    finally:
        subprocess.run([str(SBX), "down", host], capture_output=True, timeout=300)
    assert fast == ref
    assert fast2 == ref
    assert fast["pythons"] and fast["toolkits"] and fast["gpus"]  # what is being compared
    assert _followups(fast_scripts)[1] <= _followups(ref_scripts)[1]
    if name in ("healthy", "pip-layout-cu130", "seed-chain-a"):
        # the login PATH adds ~/bin and ~/.local/bin (Debian's ~/.profile): the follow-up for
        # them went out beside the main batch and was used; no round after it
        assert _followups(ref_scripts) == (0, 1)
        assert _followups(fast_scripts) == (1, 0)


LOGIN_ONLY = {
    # a venv of its own: the early follow-up probes it and is used
    "venv": ("python3 -m venv --without-pip /root/.local", (1, 0)),
    # the main batch's own venv under another name: the real follow-up would only say
    # "alias" (PYSEEN), the early one probed it in full, so it is not used and the follow-up
    # runs after the main batch as before
    "alias": ("ln -s /opt/sglang-venv /root/.local", (1, 1)),
}


@pytest.mark.sandbox
@pytest.mark.parametrize("case", sorted(LOGIN_ONLY))
def test_a_python_in_a_login_only_dir(case: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """A python3 in ~/.local/bin (on the login PATH only, from Debian's ~/.profile): whether
    or not the early follow-up can stand for the real one, the facts equal the reference
    path's (where the follow-up always came after the main batch)."""
    if not DOCTOR:
        pytest.skip("sandbox/sbx is missing or `sbx doctor` failed")
    setup, rounds = LOGIN_ONLY[case]
    host = f"fq{os.getpid() % 100000}{sorted(LOGIN_ONLY).index(case)}"
    rec = _up("healthy", host)
    try:
        put = subprocess.run(
            [str(SBX), "exec", host, "sh", "-c", setup],
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert put.returncode == 0, put.stderr
        fast, fast_runs = _collect(rec)
        with monkeypatch.context() as m:
            _reference(m)
            ref, ref_runs = _collect(rec)
    finally:
        subprocess.run([str(SBX), "down", host], capture_output=True, timeout=300)
    assert fast == ref
    assert _followups(ref_runs) == (0, 1)
    assert _followups(fast_runs) == rounds
    paths = [p["path"] for p in fast["pythons"]]
    assert ("/root/.local" in paths) == (case == "venv")
