"""Measure the sandbox on this machine: per-host up/down times per tier, and N tier-1 hosts at once.

usage: /usr/bin/python3 sandbox/lib/bench.py [--runs 5] [--many 50] [--scenario healthy]
       [--systemd-scenario seed-chain-b] [--no-systemd]
Prints one JSON object. Hosts are named bench<pid>-...; all are torn down at the end.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import json
import os
import shutil
import statistics
import subprocess
import time
from pathlib import Path

SBX = Path(__file__).resolve().parents[1] / "sbx"
P = f"bench{os.getpid()}"


def run(*args: str) -> tuple[float, subprocess.CompletedProcess]:
    t0 = time.monotonic()
    p = subprocess.run([str(SBX), *args], capture_output=True, text=True, check=False)
    dt = time.monotonic() - t0
    if p.returncode != 0:
        raise SystemExit(f"sbx {' '.join(args)}: {p.stderr.strip()}")
    return dt, p


def ssh_true(host: dict) -> float:
    t0 = time.monotonic()
    subprocess.run(["ssh", "-F", host["ssh_config"], host["name"], "true"], check=True)
    return time.monotonic() - t0


def stats(xs: list[float]) -> dict:
    return {
        "median_s": round(statistics.median(xs), 3),
        "min_s": round(min(xs), 3),
        "max_s": round(max(xs), 3),
        "n": len(xs),
    }


def per_host(scenario: str, extra: list[str], runs: int) -> dict:
    ups, downs, firsts = [], [], []
    for i in range(runs):
        name = f"{P}-{scenario}-{i}"
        dt, p = run("up", scenario, "--name", name, *extra)
        ups.append(dt)
        firsts.append(ssh_true(json.loads(p.stdout)))
        downs.append(run("down", name)[0])
    return {"up": stats(ups), "first_ssh_true": stats(firsts), "down": stats(downs)}


def many(scenario: str, n: int) -> dict:
    names = [f"{P}-many-{i}" for i in range(n)]
    t0 = time.monotonic()
    with concurrent.futures.ThreadPoolExecutor(n) as ex:
        hosts = [
            json.loads(p.stdout)
            for _, p in ex.map(lambda nm: run("up", scenario, "--name", nm, "--gpu", "none"), names)
        ]
    t_up = time.monotonic() - t0
    t0 = time.monotonic()
    with concurrent.futures.ThreadPoolExecutor(n) as ex:
        list(ex.map(ssh_true, hosts))
    t_ssh = time.monotonic() - t0
    run_dir = Path(hosts[0]["ssh_config"]).parents[2]
    du = (
        subprocess.run(
            ["du", "-sc", *[str(run_dir / nm) for nm in names]], capture_output=True, text=True
        )
        .stdout.splitlines()[-1]
        .split()[0]
    )
    t0 = time.monotonic()
    with concurrent.futures.ThreadPoolExecutor(n) as ex:
        list(ex.map(lambda nm: run("down", nm), names))
    t_down = time.monotonic() - t0
    return {
        "hosts": n,
        "all_up_s": round(t_up, 2),
        "ssh_true_on_all_concurrently_s": round(t_ssh, 2),
        "all_down_s": round(t_down, 2),
        "run_dirs_kib": int(du),
    }


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--many", type=int, default=50)
    ap.add_argument("--scenario", default="healthy")
    ap.add_argument("--systemd-scenario", default="seed-chain-b")
    ap.add_argument("--no-systemd", action="store_true")
    a = ap.parse_args()
    out = {"cpus": os.cpu_count(), "loadavg_before": os.getloadavg()[0]}
    out["tier_ssh"] = per_host(a.scenario, [], a.runs)
    if not a.no_systemd and shutil.which("systemd-nspawn"):
        out["tier_systemd"] = per_host(a.systemd_scenario, [], a.runs)
    if a.many:
        out["many_tier_ssh"] = many(a.scenario, a.many)
    out["loadavg_after"] = os.getloadavg()[0]
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
