#!/usr/bin/env python3
"""Facts and plan for a fleet: one host, then N identical sandbox hosts, measured in the same run.

    python bench/bench_fleet.py                  # 100 seed-chain-a hosts (sandbox/sbx)
    python bench/bench_fleet.py --hosts 50 --forks 20 50

What is timed, the way `remedy plan --inventory` does it (remedy.fleet): facts from every host
over SSH with at most --forks connections in flight, hosts grouped by their facts (per-host
noise left out), ONE plan per group. One host = the same pipeline on a fleet of one (median of
--runs). The per-host ratio is (N-host wall / N) / (1-host wall): below 1 means the fleet costs
less per host than one host alone. Also: the end-to-end `remedy plan --inventory --json`
subprocess (start-up and knowledge loading included), and what planning every host separately
would have cost (N × one plan, measured on the first host's facts).

Needs root and the sandbox (scripts/setup-sandbox.sh). Hosts are named flb<pid>-<i> and torn
down at the end. The machine may be shared: the load average is printed with the figures.
Not a test.
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
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from remedy.fleet.fanout import collect_fleet, group_by_facts, open_host  # noqa: E402
from remedy.fleet.inventory import load_inventory  # noqa: E402
from remedy.knowledge.loader import load_knowledge  # noqa: E402
from remedy.planner.plan import make_plan  # noqa: E402

sys.path.insert(0, str(ROOT / "bench"))
from bench_facts import sbx_down  # noqa: E402
from bench_facts import sbx_up_records as sbx_up  # noqa: E402

SBX = ROOT / "sandbox" / "sbx"


def load() -> str:
    return " ".join(Path("/proc/loadavg").read_text().split()[:3])


def write_inventory(recs: list[dict], path: Path) -> None:
    lines = ["[fleet]"]
    for r in recs:
        lines.append(
            f"{r['name']} ansible_host={r['address']} ansible_port={r['port']} "
            f"ansible_user={r['user']} ansible_ssh_private_key_file={r['identity_file']} "
            f"remedy_known_hosts={r['known_hosts']}"
        )
    path.write_text("\n".join(lines) + "\n")


def facts_and_plan(inv_path: Path, limit: str | None, forks: int, kb) -> dict:
    """The fleet pipeline of `remedy plan --inventory`, timed phase by phase."""
    hosts = load_inventory(inv_path).select(limit)
    t0, c0 = time.monotonic(), time.process_time()
    items = asyncio.run(collect_fleet(hosts, open_host, forks=forks))
    t1 = time.monotonic()
    groups = group_by_facts(items)
    t2 = time.monotonic()
    for g in groups:
        g.plan = make_plan(kb, g.members[0].facts)
    t3 = time.monotonic()
    return {
        "hosts": len(hosts),
        "failed": [f"{i.name}: {i.error}" for i in items if i.error],
        "groups": [len(g.members) for g in groups],
        "steps": [len(g.plan.steps) for g in groups],
        "facts_s": t1 - t0,
        "group_s": t2 - t1,
        "plan_s": t3 - t2,
        "wall_s": t3 - t0,
        "cpu_s": time.process_time() - c0,
        "first_facts": next((i.facts for i in items if i.facts), None),
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--hosts", type=int, default=100)
    ap.add_argument("--forks", type=int, nargs="+", default=[20, 100])
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--scenario", default="seed-chain-a")
    args = ap.parse_args()
    if os.geteuid() != 0 or not SBX.exists():
        print("cannot run: needs root and sandbox/sbx")
        return 2
    n = args.hosts
    names = [f"flb{os.getpid() % 100000}-{i:03d}" for i in range(n)]
    base = Path(tempfile.mkdtemp(prefix="bench-fleet-"))
    inv = base / "hosts.ini"
    print(f"load average before: {load()}; {os.cpu_count()} cores")
    t_up = time.monotonic()
    try:
        recs = sbx_up(names, args.scenario)
        print(f"{n} '{args.scenario}' sandbox hosts up in {time.monotonic() - t_up:.1f} s "
              f"(8 parallel sbx up); load average: {load()}")  # fmt: skip
        write_inventory(recs, inv)
        t = time.monotonic()
        kb = load_knowledge()
        print(f"knowledge loaded once in {time.monotonic() - t:.2f} s (not in the figures below)")

        one = [facts_and_plan(inv, names[0], 1, kb) for _ in range(args.runs)]
        w1 = statistics.median(r["wall_s"] for r in one)
        f1 = statistics.median(r["facts_s"] for r in one)
        p1 = statistics.median(r["plan_s"] for r in one)
        print(
            f"1 host, facts + plan ({args.runs} runs, fresh connection each): median "
            f"{w1:.2f} s (facts {f1:.2f} s, plan {p1:.2f} s, {one[0]['steps'][0]} step(s))"
        )
        for forks in args.forks:
            r = facts_and_plan(inv, None, forks, kb)
            print(
                f"{n} hosts, --forks {forks}: wall {r['wall_s']:.2f} s = facts "
                f"{r['facts_s']:.2f} s + grouping {r['group_s'] * 1000:.0f} ms + "
                f"{len(r['groups'])} plan(s) {r['plan_s']:.2f} s; plan groups {r['groups']}; "
                f"failed {len(r['failed'])}"
            )
            print(
                f"  controller CPU (this process: SSH, parsing, grouping, planning) "
                f"{r['cpu_s']:.2f} s = {r['cpu_s'] / n * 1000:.0f} ms per host; the rest of the "
                f"wall time is the hosts' own fact scripts, on this machine's cores"
            )
            print(
                f"  per host {r['wall_s'] / n:.3f} s; ratio per host to one host: "
                f"{r['wall_s'] / n / w1:.3f} (whole fleet = {r['wall_s'] / w1:.1f}x one host "
                f"for {n}x the hosts); load average {load()}"
            )
            for f in r["failed"][:5]:
                print(f"  failure: {f}")
        # what one plan per host would have cost instead of one per group
        facts = one[0]["first_facts"]
        t = time.monotonic()
        make_plan(kb, facts)
        each = time.monotonic() - t
        print(
            f"planning each host separately instead: {n} x {each:.2f} s = {n * each:.1f} s of "
            f"planning (the grouped fleet plans once)"
        )
        # end to end, as a user runs it
        t = time.monotonic()
        p = subprocess.run(
            [sys.executable, "-m", "remedy", "plan", "--inventory", str(inv), "--json"],
            capture_output=True,
            text=True,
            timeout=900,
            cwd=ROOT,
        )
        e2e = time.monotonic() - t
        doc = json.loads(p.stdout) if p.stdout.strip().startswith("{") else {}
        print(
            f"`remedy plan --inventory ({n} hosts) --json` end to end: {e2e:.2f} s, exit "
            f"{p.returncode}, {len(doc.get('groups', []))} plan group(s) "
            f"{[len(g['hosts']) for g in doc.get('groups', [])]}"
        )
    finally:
        t = time.monotonic()
        sbx_down(names)
        print(f"{n} hosts down in {time.monotonic() - t:.1f} s; load average after: {load()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
