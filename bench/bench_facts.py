#!/usr/bin/env python3
"""Wall time of collect_facts over SSH: one host, then N hosts at once.

    python bench/bench_facts.py                 # 1 host + 50 hosts (sandbox hosts if sbx works)
    python bench/bench_facts.py --hosts 20 --mode sshd

One host: a private sshd on 127.0.0.1 (remedy.transport.testing.LocalSshd), fresh connection
per run (connect + collect), 5 runs. N hosts: `sandbox/sbx up <scenario>` N times (tier-1
hosts: own namespaces, overlayfs, sshd on 127.0.1X.Y) when sbx is usable, else N private
sshds on 127.0.20.1..N; then N SSHTransports collect concurrently. Targets: < 1.5 s for one
host, < 5 s for 50. The machine may be shared: the load average is printed with the figures.
Needs root and /usr/sbin/sshd. Not a test.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from remedy.facts import collect_facts  # noqa: E402
from remedy.transport import SSHTransport  # noqa: E402
from remedy.transport.testing import LocalSshd, sshd_available  # noqa: E402

SBX = ROOT / "sandbox" / "sbx"


def load() -> str:
    return " ".join(Path("/proc/loadavg").read_text().split()[:3])


async def one_run(alias: str, cfg: str) -> tuple[float, int]:
    t = SSHTransport(alias, ssh_config=cfg)
    start = time.monotonic()
    try:
        facts = await collect_facts(t, timeout=60)
    finally:
        await t.close()
    return time.monotonic() - start, len(facts.toolkits) + len(facts.pythons)


async def many(hosts: list[tuple[str, str]]) -> tuple[float, list[float | str]]:
    async def timed(alias: str, cfg: str) -> float | str:
        try:
            return (await one_run(alias, cfg))[0]
        except Exception as exc:  # a benchmark reports, it does not stop
            return f"{type(exc).__name__}: {exc}"

    start = time.monotonic()
    res = await asyncio.gather(*[timed(a, c) for a, c in hosts])
    return time.monotonic() - start, list(res)


def sbx_usable() -> bool:
    if not SBX.exists():
        return False
    r = subprocess.run([str(SBX), "doctor"], capture_output=True, text=True, timeout=60)
    try:
        return bool(json.loads(r.stdout).get("ssh_tier"))
    except json.JSONDecodeError:
        return False


def sbx_up(names: list[str], scenario: str) -> list[tuple[str, str]]:
    def up(name: str) -> tuple[str, str]:
        r = subprocess.run(
            [str(SBX), "up", scenario, "--name", name], capture_output=True, text=True, timeout=300
        )
        if r.returncode != 0:
            raise RuntimeError(f"sbx up {name}: {r.stderr.strip()}")
        rec = json.loads(r.stdout.strip().splitlines()[-1])
        return rec["name"], rec["ssh_config"]

    with ThreadPoolExecutor(8) as ex:
        return list(ex.map(up, names))


def sbx_down(names: list[str]) -> None:
    def down(name: str) -> None:
        subprocess.run([str(SBX), "down", name], capture_output=True, timeout=300)

    with ThreadPoolExecutor(8) as ex:
        list(ex.map(down, names))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--hosts", type=int, default=50)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--mode", choices=["auto", "sbx", "sshd"], default="auto")
    ap.add_argument("--scenario", default="healthy")
    args = ap.parse_args()
    why = sshd_available()
    if why:
        print(f"cannot run: {why}")
        return 2
    base = Path(tempfile.mkdtemp(prefix="bench-facts-"))

    print(f"load average before: {load()}")
    single = LocalSshd(base / "single", alias="bench-single").start()
    try:
        runs = [
            asyncio.run(one_run(single.alias, str(single.ssh_config))) for _ in range(args.runs)
        ]
    finally:
        single.stop()
    times = [r[0] for r in runs]
    print(
        f"1 host over SSH (127.0.0.1, fresh connection each run, {args.runs} runs): "
        f"min {min(times):.3f} s, median {statistics.median(times):.3f} s, "
        f"max {max(times):.3f} s  [{runs[0][1]} toolkits+pythons found]  target < 1.5 s"
    )

    mode = args.mode
    if mode == "auto":
        mode = "sbx" if sbx_usable() else "sshd"
    n = args.hosts
    names = [f"benchf-{i}" for i in range(n)]
    servers: list[LocalSshd] = []
    t_up = time.monotonic()
    try:
        if mode == "sbx":
            hosts = sbx_up(names, args.scenario)
            what = f"sandbox/sbx '{args.scenario}' tier-1 hosts"
        else:
            for i in range(n):
                s = LocalSshd(
                    base / f"h{i}",
                    addr=f"127.0.20.{i + 1}",
                    port=2222,
                    alias=f"bench-{i}",
                    extra=["MaxStartups 100:30:200"],
                )
                servers.append(s.start())
            hosts = [(s.alias, str(s.ssh_config)) for s in servers]
            what = "private sshds on 127.0.20.1..N"
        up_s = time.monotonic() - t_up
        print(f"{n} hosts up in {up_s:.1f} s ({what}); load average: {load()}")
        cpu0 = time.process_time()
        wall, res = asyncio.run(many(hosts))
        cpu = time.process_time() - cpu0
        ok = [r for r in res if isinstance(r, float)]
        bad = [r for r in res if not isinstance(r, float)]
        print(
            f"{n} hosts concurrently over SSH: wall {wall:.3f} s, per host {wall / n:.3f} s "
            f"(ratio to one host's median: {wall / statistics.median(times):.1f}x for "
            f"{n}x the hosts); slowest host {max(ok) if ok else float('nan'):.3f} s, "
            f"failed {len(bad)}  target < 5 s"
        )
        print(
            f"  controller CPU (this process: asyncssh + parsing) {cpu:.2f} s = "
            f"{cpu / n * 1000:.0f} ms per host; the rest of the wall time is the hosts' own "
            f"work, which here shares this machine's {os.cpu_count()} cores"
        )
        for b in bad[:5]:
            print(f"  failure: {b}")
    finally:
        if mode == "sbx":
            sbx_down(names)
        for s in servers:
            s.stop()
    print(f"load average after: {load()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
