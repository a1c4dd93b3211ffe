"""Signals to `remedy run --inventory` on real sandbox hosts (`remedy.interrupts`).

Three seed-chain-a hosts A, B, C (each really fails; step 1 is a real `pip install`).
Run 1, `--canary 0 --forks 2`: A and B start, C waits for a fork; one SIGTERM while a pip
install runs: no further host starts, A and B finish (fixed), C is skipped and untouched (no
run in its history, files as before); exit 143 and the stop reason in the JSON.
Run 2, C alone: SIGTERM twice while its pip install runs: the second stops C where it stood —
its pip is killed on the host, C is `interrupted` with the resume hint, the host keeps the
lock; `remedy resume C --rollback` then leaves C byte-identical to before.
"""

from __future__ import annotations

import json
import os
import shlex
import signal
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor

import pytest
from foreground import default_stop_signals
from sandbox_hosts import REPO, Host, SandboxUnavailable, doctor, down, report_of, same, up

pytestmark = pytest.mark.sandbox
PREFIX = f"sg{os.getpid() % 100000}"


@pytest.fixture(scope="module")
def hosts(tmp_path_factory):
    try:
        doctor()
    except SandboxUnavailable as exc:
        pytest.skip(str(exc))
    names = [f"{PREFIX}-{x}" for x in "abc"]
    try:
        with ThreadPoolExecutor(3) as ex:
            hs = list(ex.map(lambda n: up("seed-chain-a", n), names))
        lines = ["[gpu]"]
        for h in hs:
            r = h.rec
            common = shlex.quote(f"-o UserKnownHostsFile={r['known_hosts']}")
            lines.append(
                f"{h.name} ansible_host={r['address']} ansible_port={r['port']} "
                f"ansible_user=root ansible_ssh_private_key_file={r['identity_file']} "
                f"ansible_ssh_common_args={common}"
            )
        inv = tmp_path_factory.mktemp("signals") / "hosts.ini"
        inv.write_text("\n".join(lines) + "\n")
        yield hs, inv
    finally:
        for n in names:
            down(n)


def fleet_popen(inv, *args: str) -> subprocess.Popen:
    env = {k: v for k, v in os.environ.items() if k != "REMEDY_CRASH_AT"}
    return subprocess.Popen(
        [
            sys.executable,
            "-m",
            "remedy",
            "run",
            "--inventory",
            str(inv),
            "--yes",
            "--json",
            "--verify",
            "cheap",
            *args,
        ],  # fmt: skip
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=REPO,
        env=env,
        preexec_fn=default_stop_signals,  # not what this runner ignores (tests/foreground.py)
    )


def pip_running(h: Host) -> bool:
    return h.sbx_exec("pgrep -f '[p]ip install' >/dev/null && echo yes").stdout.strip() == "yes"


def wait_for_pip(proc: subprocess.Popen, hs: list[Host], timeout: float = 300) -> None:
    deadline = time.monotonic() + timeout
    while not any(pip_running(h) for h in hs):
        assert proc.poll() is None, proc.communicate()[1][-3000:]
        assert time.monotonic() < deadline, "no pip install started"
        time.sleep(0.2)


def finish(proc: subprocess.Popen, timeout: float = 900) -> tuple[dict, str]:
    try:
        out, err = proc.communicate(timeout=timeout)
    finally:
        if proc.poll() is None:
            proc.kill()
    return report_of(subprocess.CompletedProcess(proc.args, proc.returncode, out, err)), err


def test_first_signal_lets_hosts_in_flight_finish_second_stops_them(hosts):
    (a, b, c), inv = hosts
    before_c = c.snapshot()

    # ---- run 1: one SIGTERM while A and B are in flight ----------------------------------
    proc = fleet_popen(inv, "--canary", "0", "--forks", "2")
    wait_for_pip(proc, [a, b])
    proc.send_signal(signal.SIGTERM)
    doc, err = finish(proc)
    by = {h["host"]: h for h in doc["hosts"]}
    print(f"run 1: exit {proc.returncode}: {doc['counts']}; {doc['stop_reason']}")
    assert proc.returncode == 143 and doc["exit_code"] == 143, err[-3000:]
    assert doc["stopped"] and doc["stop_reason"].startswith("interrupted by SIGTERM"), doc
    assert "SIGTERM: no further host starts; 2 host(s) in flight finish" in err, err[-3000:]
    for h in (a, b):
        assert by[h.name]["outcome"] == "fixed", by[h.name]
        assert all(m for m in h.markers().values()), h.markers()
        assert h.lock() is None
    assert by[c.name]["outcome"] == "skipped" and by[c.name]["run_id"] is None
    assert c.history() == [] and c.lock() is None, "C was touched after the stop"
    assert same(c.snapshot(), before_c)
    assert "Traceback" not in err

    # ---- run 2: C alone, two signals: the second cuts it off -----------------------------
    proc = fleet_popen(inv, "--limit", c.name)
    wait_for_pip(proc, [c])
    proc.send_signal(signal.SIGTERM)
    time.sleep(1.0)
    proc.send_signal(signal.SIGTERM)
    doc, err = finish(proc, timeout=120)
    hc = doc["hosts"][0]
    print(f"run 2: exit {proc.returncode}: {hc['outcome']}: {hc['message']}")
    assert proc.returncode == 143 and doc["exit_code"] == 143, err[-3000:]
    assert hc["outcome"] == "interrupted" and hc["run_id"], hc
    assert (
        "interrupted by SIGTERM: run " in hc["message"] and "keeps remedy's lock" in hc["message"]
    )
    # the hint names the inventory too (resume/rollback --inventory), then --rollback
    assert f"remedy resume {c.name} " in hc["hint"] and "--rollback" in hc["hint"]
    assert "(twice)" in doc["stop_reason"]
    assert "Traceback" not in err
    time.sleep(1.0)
    assert not pip_running(c), "the step's pip install outlived remedy on the host"
    assert (c.lock() or {}).get("run_id") == hc["run_id"]

    r = c.remedy("resume", c.name, "--rollback", "--json")
    rep = report_of(r)
    assert r.returncode == 0 and rep["outcome"] == "rolled-back", r.stderr[-3000:]
    assert c.lock() is None
    assert same(c.snapshot(), before_c), "C is not as before after the rollback"
    hist = json.loads(c.remedy("history", c.name, "--json").stdout)
    assert [x["outcome"] for x in hist] == ["rolled-back"], hist
