#!/usr/bin/env python3
"""Wall time of collect_facts over SSH: one host, then N hosts at once.

    python bench/bench_facts.py                 # 1 host + 50 hosts (sandbox hosts if sbx works)
    python bench/bench_facts.py --hosts 20 --mode sshd

One host: a private sshd on 127.0.0.1 (tests/local_sshd.py LocalSshd), fresh connection
per run (connect + collect), 5 runs. N hosts: `sandbox/sbx up <scenario>` N times (tier-1
hosts: own namespaces, overlayfs, sshd on 127.0.1X.Y) when sbx is usable, else N private
sshds on 127.0.20.1..N; then N SSHTransports collect concurrently. Targets: < 1.5 s for one
host, < 5 s for 50. The machine may be shared: the load average is printed with the figures.
Needs root and /usr/sbin/sshd. Not a test.

--mode farm: for a machine without OpenSSH (the lent GPU box): N asyncssh SSH servers in
worker processes on 127.0.0.1, each running commands with `sh -c` in a new session as sshd
does; the hosts' work then runs on that machine's own cores.
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
# --src DIR: import remedy from another checkout's src (a paired run against main's code)
_SRC = next((a.split("=", 1)[1] for a in sys.argv if a.startswith("--src=")), str(ROOT / "src"))
sys.path.insert(0, _SRC)
sys.path.insert(0, str(ROOT / "tests"))  # local_sshd: the test sshd helper

from local_sshd import LocalSshd, sshd_available  # noqa: E402

from remedy.facts import collect_facts  # noqa: E402
from remedy.transport import SSHTransport  # noqa: E402

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


async def many(hosts: list[tuple[str, str]], forks: int = 0) -> tuple[float, list[float | str]]:
    """All hosts at once, or at most `forks` at a time (remedy fleet's --forks)."""
    sem = asyncio.Semaphore(forks or len(hosts) or 1)

    async def timed(alias: str, cfg: str) -> float | str:
        async with sem:
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


def sbx_up_records(names: list[str], scenario: str) -> list[dict]:
    """Start sandbox hosts in parallel; each is `sbx up`'s JSON record."""

    def up(name: str) -> dict:
        r = subprocess.run(
            [str(SBX), "up", scenario, "--name", name], capture_output=True, text=True, timeout=300
        )
        if r.returncode != 0:
            raise RuntimeError(f"sbx up {name}: {r.stderr.strip()}")
        return json.loads(r.stdout.strip().splitlines()[-1])

    with ThreadPoolExecutor(8) as ex:
        return list(ex.map(up, names))


def sbx_up(names: list[str], scenario: str) -> list[tuple[str, str]]:
    return [(r["name"], r["ssh_config"]) for r in sbx_up_records(names, scenario)]


def hosts_cpu(names: list[str]) -> float | None:
    """CPU seconds the sandbox hosts' sshds have spent on finished sessions (their listener's
    cutime + cstime: every session, its shell and all it ran, once reaped), or None."""
    total = 0.0
    for name in names:
        try:
            rec = json.loads((ROOT / "sandbox" / "run" / name / "host.json").read_text())
            init = int(rec["init_pid"])
            kids = Path(f"/proc/{init}/task/{init}/children").read_text().split()
            stat = Path(f"/proc/{kids[0]}/stat").read_text().rsplit(")", 1)[1].split()
        except (OSError, KeyError, ValueError, IndexError):
            return None
        total += (int(stat[13]) + int(stat[14])) / os.sysconf("SC_CLK_TCK")
    return total


def hosts_last_pid(names: list[str]) -> dict[str, int] | None:
    """The last PID each sandbox host's own PID namespace handed out (nsenter + its
    /proc/sys/kernel/ns_last_pid; the probe itself takes one), or None where unreadable."""
    out: dict[str, int] = {}
    for name in names:
        try:
            rec = json.loads((ROOT / "sandbox" / "run" / name / "host.json").read_text())
            r = subprocess.run(
                ["nsenter", "-t", str(int(rec["init_pid"])), "-p", "-m", "--"]
                + ["cat", "/proc/sys/kernel/ns_last_pid"],
                capture_output=True,
                text=True,
                timeout=30,
            )
            out[name] = int(r.stdout.strip())
        except (OSError, KeyError, ValueError, subprocess.SubprocessError):
            return None
    return out


def processes_per_host(before: dict[str, int] | None, after: dict[str, int] | None) -> str:
    """Processes the collection started on each host (sshd's session ones included)."""
    if not before or not after:
        return "n/a"
    counts = sorted(after[n] - before[n] - 1 for n in before)
    return f"median {statistics.median(counts):g} (min {counts[0]}, max {counts[-1]})"


def sbx_down(names: list[str]) -> None:
    def down(name: str) -> None:
        subprocess.run([str(SBX), "down", name], capture_output=True, timeout=300)

    with ThreadPoolExecutor(8) as ex:
        list(ex.map(down, names))


# ---- farm mode: asyncssh servers, for machines without sshd -------------------------------


def _farm_worker(ports: list[int], keydir: str, ready: object) -> None:
    import asyncssh

    async def handle(process: asyncssh.SSHServerProcess) -> None:
        data = await process.stdin.read()
        proc = await asyncio.create_subprocess_exec(
            "sh",
            "-c",
            process.command or "",
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            start_new_session=True,
        )
        out, err = await proc.communicate(data)
        process.stdout.write(out)
        process.stderr.write(err)
        rc = proc.returncode
        process.exit(rc if rc is not None and rc >= 0 else 128 - (rc or 0))

    async def serve() -> None:
        for port in ports:
            await asyncssh.create_server(
                asyncssh.SSHServer,
                "127.0.0.1",
                port,
                server_host_keys=[f"{keydir}/host"],
                authorized_client_keys=f"{keydir}/client.pub",
                process_factory=handle,
                encoding=None,
            )
        ready.put(len(ports))  # type: ignore[attr-defined]
        await asyncio.Event().wait()

    asyncio.run(serve())


def farm_bench(args: argparse.Namespace, base: Path) -> int:
    import multiprocessing as mp

    import asyncssh
    from local_sshd import free_port

    n = args.hosts
    host = asyncssh.generate_private_key("ssh-ed25519")
    client = asyncssh.generate_private_key("ssh-ed25519")
    host.write_private_key(str(base / "host"))
    client.write_private_key(str(base / "client"))
    client.write_public_key(str(base / "client.pub"))
    ports = [free_port() for _ in range(n + 1)]
    hostpub = host.export_public_key().decode().split()
    (base / "known_hosts").write_text(
        "".join(f"[127.0.0.1]:{p} {hostpub[0]} {hostpub[1]}\n" for p in ports)
    )
    cfg = base / "ssh_config"
    cfg.write_text(
        "".join(
            f"Host farm-{i}\n  HostName 127.0.0.1\n  Port {p}\n  User root\n"
            f"  IdentityFile {base / 'client'}\n  UserKnownHostsFile {base / 'known_hosts'}\n"
            for i, p in enumerate(ports)
        )
    )
    ctx = mp.get_context("fork")
    ready = ctx.Queue()
    groups = [ports[i :: args.workers] for i in range(args.workers)]
    procs = [
        ctx.Process(target=_farm_worker, args=(g, str(base), ready), daemon=True)
        for g in groups
        if g
    ]
    for pr in procs:
        pr.start()
    try:
        got = sum(ready.get(timeout=60) for _ in procs)
        assert got == len(ports)
        print(
            f"load average before: {load()}; {os.cpu_count()} cores; {len(ports)} asyncssh "
            f"servers in {len(procs)} processes"
        )
        runs = [asyncio.run(one_run(f"farm-{n}", str(cfg))) for _ in range(args.runs)]
        times = [r[0] for r in runs]
        print(
            f"1 host over SSH (asyncssh server on 127.0.0.1, fresh connection each run, "
            f"{args.runs} runs): min {min(times):.3f} s, median {statistics.median(times):.3f} s"
            f", max {max(times):.3f} s  [{runs[0][1]} toolkits+pythons found]  target < 1.5 s"
        )
        cpu0 = time.process_time()
        wall, res = asyncio.run(many([(f"farm-{i}", str(cfg)) for i in range(n)]))
        cpu = time.process_time() - cpu0
        ok = [r for r in res if isinstance(r, float)]
        bad = [r for r in res if not isinstance(r, float)]
        print(
            f"{n} hosts concurrently over SSH: wall {wall:.3f} s, per host {wall / n:.3f} s "
            f"(ratio to one host's median: {wall / statistics.median(times):.1f}x for {n}x the "
            f"hosts); slowest host {max(ok) if ok else float('nan'):.3f} s, failed {len(bad)}"
            f"  target < 5 s"
        )
        print(f"  controller CPU {cpu:.2f} s = {cpu / n * 1000:.0f} ms per host")
        for b in bad[:5]:
            print(f"  failure: {b}")
        print(f"load average after: {load()}")
    finally:
        for pr in procs:
            pr.terminate()
    return 0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--hosts", type=int, default=50)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--mode", choices=["auto", "sbx", "sshd", "farm"], default="auto")
    ap.add_argument("--workers", type=int, default=8, help="farm mode: server processes")
    ap.add_argument("--scenario", default="healthy")
    ap.add_argument("--name-prefix", default="benchf", help="sandbox host names: PREFIX-<i>")
    ap.add_argument(
        "--single",
        choices=["local", "sbx"],
        default="local",
        help="the 1-host figure: a private sshd over this machine, or one sandbox host "
        "of --scenario (sbx); --hosts 0 measures only that",
    )
    ap.add_argument("--record", type=Path, help="write the N hosts' per-host seconds here (JSON)")
    ap.add_argument(
        "--src", help="=DIR (with '='): import remedy from DIR, e.g. a copy of main's src"
    )
    ap.add_argument(
        "--forks",
        type=lambda v: [int(x) for x in v.split(",")],
        default=[0],
        help="hosts at a time (0: all); a list F1,F2,..: first F2.. on the same hosts (printed "
        "alone), then F1 with the full figures",
    )
    args = ap.parse_args()
    base = Path(tempfile.mkdtemp(prefix="bench-facts-"))
    if args.mode == "farm":
        return farm_bench(args, base)
    why = sshd_available()
    if why:
        print(f"cannot run: {why}")
        return 2

    print(f"load average before: {load()}; remedy from {_SRC}")
    if args.single == "sbx":
        # one sandbox host of the scenario: what each of the N hosts is, measured alone
        sname = f"{args.name_prefix}-single"
        try:
            rec = sbx_up_records([sname], args.scenario)[0]
            runs = [asyncio.run(one_run(rec["name"], rec["ssh_config"])) for _ in range(args.runs)]
        finally:
            sbx_down([sname])
        where = f"sandbox '{args.scenario}' host"
    else:
        single = LocalSshd(base / "single", alias="bench-single").start()
        try:
            runs = [
                asyncio.run(one_run(single.alias, str(single.ssh_config))) for _ in range(args.runs)
            ]
        finally:
            single.stop()
        where = "127.0.0.1, this machine"
    times = [r[0] for r in runs]
    print(
        f"1 host over SSH ({where}, fresh connection each run, {args.runs} runs): "
        f"min {min(times):.3f} s, median {statistics.median(times):.3f} s, "
        f"max {max(times):.3f} s  [{runs[0][1]} toolkits+pythons found]  target < 1.5 s"
    )
    if args.hosts <= 0:
        print(f"load average after: {load()}")
        return 0

    mode = args.mode
    if mode == "auto":
        mode = "sbx" if sbx_usable() else "sshd"
    n = args.hosts
    names = [f"{args.name_prefix}-{i}" for i in range(n)]
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
        for forks in args.forks[1:]:  # more rounds on the same hosts, at other limits
            time.sleep(2)
            w, r = asyncio.run(many(hosts, forks))
            print(
                f"  at most {forks} at a time: wall {w:.3f} s, failed "
                f"{sum(1 for x in r if not isinstance(x, float))}; load average {load()}"
            )
        pids0 = hosts_last_pid(names) if mode == "sbx" else None
        hcpu0 = hosts_cpu(names) if mode == "sbx" else None
        cpu0 = time.process_time()
        wall, res = asyncio.run(many(hosts, args.forks[0]))
        cpu = time.process_time() - cpu0
        ok = [r for r in res if isinstance(r, float)]
        bad = [r for r in res if not isinstance(r, float)]
        at = f" (at most {args.forks[0]} at a time)" if args.forks[0] else ""
        print(
            f"{n} hosts concurrently over SSH{at}: wall {wall:.3f} s, per host {wall / n:.3f} s "
            f"(ratio to one host's median: {wall / statistics.median(times):.1f}x for "
            f"{n}x the hosts); slowest host {max(ok) if ok else float('nan'):.3f} s, "
            f"failed {len(bad)}  target < 5 s"
        )
        if hcpu0 is not None:
            time.sleep(0.5)  # the last sessions' sshd processes are reaped
            hcpu1 = hosts_cpu(names)
            if hcpu1 is not None:
                print(
                    f"  hosts' own CPU (their sshd sessions and all they ran) "
                    f"{hcpu1 - hcpu0:.2f} s = {(hcpu1 - hcpu0) / n * 1000:.0f} ms per host"
                )
            pids1 = hosts_last_pid(names)
            print(f"  processes started per host: {processes_per_host(pids0, pids1)}")
        print(
            f"  controller CPU (this process: asyncssh + parsing) {cpu:.2f} s = "
            f"{cpu / n * 1000:.0f} ms per host; the rest of the wall time is the hosts' own "
            f"work, which here shares this machine's {os.cpu_count()} cores"
        )
        for b in bad[:5]:
            print(f"  failure: {b}")
        if args.record and ok:
            args.record.write_text(
                json.dumps(
                    {
                        "what": f"facts of {n} {what} collected concurrently over SSH, "
                        f"seconds per host (connect + collect), load average {load()}",
                        "wall": wall,
                        "seconds": sorted(ok),
                        "one_host_seconds": times,
                    },
                    indent=1,
                )
                + "\n"
            )
            print(f"  per-host seconds written to {args.record}")
    finally:
        if mode == "sbx":
            sbx_down(names)
        for s in servers:
            s.stop()
    print(f"load average after: {load()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
