"""`remedy run --inventory` on a fleet of real sandbox hosts (issue "Fleets"): 20 hosts and one
address where nothing listens, remedy as a subprocess exactly as a user runs it.

The fleet (inventory order):
  * `fixable` — 2 seed-chain-a hosts;
  * `healthy` — 6 healthy hosts;
  * `doomed` — 12 seed-chain-a hosts whose offline wheel index is hidden (a tmpfs over
    /srv/wheels inside the host): their facts are those of any seed-chain-a host, so they share
    its plan, and the plan's first step (`pip install` of the aligned wheels) fails for real;
  * `dead` — an inventory entry at a 127.0.9.x address with nothing listening.

Run 1, `--limit 'all:!doomed'`: the 2 fixable hosts get ONE plan (one plan group); the first
goes alone as the canary, then the other; both are fixed. The healthy ones form their own
group and are not touched (no remedy state directory, file listing unchanged, mtimes included);
`dead` is reported unreachable; fleet exit 4.
Run 2, `--limit doomed --canary 0 --batch-size 2 --max-errors 10%` (10% of 12 hosts: 1 error
tolerated): the first batch (2 doomed hosts) fails for real and rolls back (each host as
before), which spends the error budget: the other 10 never start (no state directory); exit 7.
(Fixing a seed-chain-a host costs ~30 s of CPU here; the fleet is mostly hosts that are cheap
to handle so the test stays within its time budget. bench/bench_fleet.py scales it up.)

Connection details travel in the inventory: ansible_host, ansible_port, ansible_user,
ansible_ssh_private_key_file, and each sandbox host's own known_hosts via
`ansible_ssh_common_args='-o UserKnownHostsFile=…'` (healthy hosts use the remedy-specific
`remedy_known_hosts` instead, so both ways are exercised). `--verify cheap` keeps time sane.
Hosts are named fl<pid>-…, started in parallel and torn down by the fixture (and atexit).
"""

from __future__ import annotations

import atexit
import json
import os
import shlex
import socket
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
import sandbox_hosts

REPO = Path(__file__).resolve().parents[1]
SBX = REPO / "sandbox" / "sbx"
PREFIX = f"fl{os.getpid() % 100000}"
CU13 = "/opt/sglang-venv/lib/python3.11/site-packages/nvidia/cu13"
STATE = "/root/.local/state/remedy"
# what a remedy step could change: the toolkit tree, the venv's dist-infos, /etc/profile.d;
# with mtimes (a host nobody touched) or without (a host restored from its checkpoints)
SITE = "/opt/sglang-venv/lib/python3.11/site-packages"


def listing_cmd(mtimes: bool) -> str:
    fmt = "%p %y %s %m %l" + (" %T@" if mtimes else "")
    return (
        f"{{ find {SITE}/nvidia /etc/profile.d -printf '{fmt}\\n'; "
        f"find {SITE} -maxdepth 1 -printf '%p %y\\n'; }} 2>/dev/null | sort | sha256sum"
    )


pytestmark = pytest.mark.sandbox

_started: set[str] = set()


def _down(names: list[str]) -> None:
    def one(n: str) -> None:
        subprocess.run([str(SBX), "down", n], capture_output=True, check=False, timeout=300)
        _started.discard(n)

    with ThreadPoolExecutor(8) as ex:
        list(ex.map(one, names))


atexit.register(lambda: _down(list(_started)))


def _up(scenario: str, name: str) -> dict:
    _started.add(name)
    try:
        return sandbox_hosts.up(scenario, name).rec  # tried twice before it fails the test
    except RuntimeError:
        _started.discard(name)
        raise


def ssh(rec: dict, cmd: str) -> str:
    p = subprocess.run(
        ["ssh", "-F", rec["ssh_config"], rec["name"], cmd],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert p.returncode == 0, p.stderr
    return p.stdout.strip()


def dead_address() -> tuple[str, int]:
    """A loopback address and port with nothing listening (bound, then released)."""
    s = socket.socket()
    s.bind(("127.0.9.250", 0))
    port = s.getsockname()[1]
    s.close()
    return "127.0.9.250", port


@pytest.fixture(scope="module")
def fleet(tmp_path_factory):
    if os.geteuid() != 0:
        pytest.skip("sandbox hosts need root (namespaces, overlayfs): not root")
    if not SBX.exists():
        pytest.skip(f"{SBX} is missing")
    p = subprocess.run([str(SBX), "doctor"], capture_output=True, text=True, timeout=120)
    try:
        if not json.loads(p.stdout).get("ssh_tier"):
            pytest.skip("sandbox ssh tier not ready (scripts/setup-sandbox.sh)")
    except ValueError:
        pytest.skip(f"sbx doctor failed: {p.stderr.strip()[-300:]}")
    layout = {"fixable": ("seed-chain-a", 2), "healthy": ("healthy", 6),
              "doomed": ("seed-chain-a", 12)}  # fmt: skip
    names = {g: [f"{PREFIX}-{g[:3]}{i}" for i in range(n)] for g, (_, n) in layout.items()}
    jobs = [(layout[g][0], n) for g in layout for n in names[g]]
    t0 = time.monotonic()
    try:
        with ThreadPoolExecutor(8) as ex:
            recs = dict(zip([n for _, n in jobs], ex.map(lambda j: _up(*j), jobs), strict=True))
        print(f"\n{len(recs)} sandbox hosts up in {time.monotonic() - t0:.1f} s")
        for n in names["doomed"]:
            r = subprocess.run(
                [str(SBX), "exec", n, "sh", "-c", "mount -t tmpfs -o ro none /srv/wheels"],
                capture_output=True,
                text=True,
                timeout=60,
            )
            assert r.returncode == 0, r.stderr
        addr, port = dead_address()
        lines = []
        for g in layout:
            lines.append(f"[{g}]")
            for n in names[g]:
                rec = recs[n]
                kh = (
                    f"remedy_known_hosts={rec['known_hosts']}"
                    if g == "healthy"
                    else "ansible_ssh_common_args="
                    + shlex.quote(f"-o UserKnownHostsFile={rec['known_hosts']}")
                )
                lines.append(
                    f"{n} ansible_host={rec['address']} ansible_port={rec['port']} "
                    f"ansible_ssh_private_key_file={rec['identity_file']} {kh}"
                )
        lines += ["[dead]", f"{PREFIX}-dead ansible_host={addr} ansible_port={port}"]
        lines += ["[all:vars]", "ansible_user=root"]
        inv = tmp_path_factory.mktemp("fleet") / "hosts.ini"
        inv.write_text("\n".join(lines) + "\n")
        with ThreadPoolExecutor(8) as ex:
            before = dict(zip(recs, ex.map(listing, recs.values()), strict=True))
        yield {"inv": inv, "names": names, "recs": recs, "before": before}
    finally:
        _down([n for n in list(_started) if n.startswith(PREFIX)])


def remedy(*args: str, timeout: float = 600) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k != "REMEDY_CRASH_AT"}
    return subprocess.run(
        [sys.executable, "-m", "remedy", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        cwd=REPO,
        env=env,
    )


def doc_of(p: subprocess.CompletedProcess) -> dict:
    try:
        return json.loads(p.stdout)
    except ValueError:
        raise AssertionError(
            f"no JSON (rc {p.returncode}):\n{p.stdout[-1500:]}\n{p.stderr[-3000:]}"
        ) from None


def listing(rec: dict) -> tuple[str, str]:
    return ssh(rec, listing_cmd(True)), ssh(rec, listing_cmd(False))


def has_state(rec: dict) -> bool:
    return ssh(rec, f"test -e {STATE} && echo yes || echo no") == "yes"


def test_fleet_run_fixes_leaves_healthy_reports_dead_then_stops_at_error_budget(fleet):
    inv, names, recs, before = fleet["inv"], fleet["names"], fleet["recs"], fleet["before"]

    # ---- run 1: fixable + healthy + dead ---------------------------------------------------
    t0 = time.monotonic()
    p = remedy("run", "--inventory", str(inv), "--limit", "all:!doomed", "--yes",
               "--json", "--verify", "cheap")  # fmt: skip
    wall1 = time.monotonic() - t0
    doc = doc_of(p)
    hosts = {h["host"]: h for h in doc["hosts"]}
    print(f"run 1: exit {p.returncode} in {wall1:.1f} s: {doc['counts']}")
    assert p.returncode == 4 and doc["exit_code"] == 4, p.stderr[-3000:]
    assert set(hosts) == set(names["fixable"] + names["healthy"]) | {f"{PREFIX}-dead"}
    # one plan for the identical broken hosts, one (nothing to do) for the healthy ones
    groups = {g["id"]: g for g in doc["groups"]}
    assert len(groups) == 2, groups
    fix_group = {hosts[n]["group"] for n in names["fixable"]}
    ok_group = {hosts[n]["group"] for n in names["healthy"]}
    assert len(fix_group) == 1 and len(ok_group) == 1 and fix_group != ok_group
    assert groups[fix_group.pop()]["hosts"] == names["fixable"]
    assert groups[ok_group.pop()]["status"] == "nothing-to-do"
    for n in names["fixable"]:
        h = hosts[n]
        assert h["outcome"] == "fixed" and h["exit_code"] == 0, h
        assert h["steps"] and all(s["outcome"] == "committed" for s in h["steps"]), h
        assert h["run_id"] and h["batch"] is not None
    assert [hosts[n]["batch"] for n in names["fixable"]] == [0, 1]  # the canary, then the rest
    # the fix is on the hosts: nvcc 13.0, lib64 layout, CCCL
    for n in names["fixable"]:
        out = ssh(recs[n], f"{CU13}/bin/nvcc --version | grep -c 'release 13.0'; "
                           f"test -L {CU13}/lib64 && test -e {CU13}/include/cccl/nv/target "
                           "&& echo layout-ok")  # fmt: skip
        assert out.split() == ["1", "layout-ok"], (n, out)
    for n in names["healthy"]:
        assert hosts[n]["outcome"] == "nothing-to-do" and hosts[n]["run_id"] is None
        assert not has_state(recs[n]), f"{n}: remedy touched a healthy host"
        assert listing(recs[n]) == before[n], f"{n}: files changed"
    dead = hosts[f"{PREFIX}-dead"]
    assert dead["outcome"] == "unreachable" and dead["exit_code"] == 4
    assert "cannot connect" in dead["message"]
    # progress went to stderr while it ran
    assert "collecting facts from 9 host(s)" in p.stderr
    assert f"{names['fixable'][0]}: fixed" in p.stderr

    # ---- run 2: a batch that spends the error budget ---------------------------------------
    t0 = time.monotonic()
    p = remedy("run", "--inventory", str(inv), "--limit", "doomed", "--yes", "--json",
               "--verify", "cheap", "--canary", "0", "--batch-size", "2",
               "--max-errors", "10%")  # fmt: skip
    wall2 = time.monotonic() - t0
    doc = doc_of(p)
    hosts = {h["host"]: h for h in doc["hosts"]}
    print(f"run 2: exit {p.returncode} in {wall2:.1f} s: {doc['counts']}; {doc['stop_reason']}")
    assert p.returncode == 7 and doc["stopped"], p.stderr[-3000:]
    assert "error budget spent: 2 host(s) failed, --max-errors 10% allows 1" in doc["stop_reason"]
    assert len({h["group"] for h in doc["hosts"]}) == 1  # doomed hosts share the plan
    first, rest = names["doomed"][:2], names["doomed"][2:]
    for n in first:
        h = hosts[n]
        assert h["outcome"] == "rolled-back" and h["exit_code"] == 3 and h["batch"] == 0, h
        assert "Could not find a version" in h["message"], h["message"]
        assert [s["outcome"] for s in h["steps"]] == ["rolled-back"]
        assert has_state(recs[n])  # its journal says rolled-back ...
        assert listing(recs[n])[1] == before[n][1], f"{n}: not restored"  # ... and it is
    for n in rest:
        assert hosts[n]["outcome"] == "skipped" and hosts[n]["run_id"] is None
        assert not has_state(recs[n]), f"{n} was touched after the stop"
    with ThreadPoolExecutor(8) as ex:
        after = dict(zip(rest, ex.map(lambda n: listing(recs[n]), rest), strict=True))
    assert all(after[n] == before[n] for n in rest)
    assert doc["policy"]["batches"] == [names["doomed"][i : i + 2] for i in range(0, 12, 2)]

    # the summary table, for a person
    p = remedy("run", "--inventory", str(inv), "--limit", "healthy[0:1]", "--yes")
    assert p.returncode == 10, p.stderr[-2000:]
    assert "nothing-to-do" in p.stdout and "exit 10 (nothing to do)" in p.stdout
