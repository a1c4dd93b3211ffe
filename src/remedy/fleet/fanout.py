"""Many hosts at once: one SSH transport per inventory host, facts collected with bounded
concurrency (`--forks`), and hosts whose facts are the same grouped so that a fleet of 200
identical hosts gets ONE plan, made and previewed once.

Per-host concurrency is the transport's own business (SSHTransport opens at most 8 channels
per connection); across hosts, a semaphore of `forks` bounds connections in flight.

What "the same facts" means: everything the planner reads, minus what differs per host or per
connection and never changes a plan — the host's name, when facts were read, and the login
session's variables (SSH_CLIENT, SSH_CONNECTION, … : `executor.runner.SESSION_ENV`, and
HOSTNAME). That is `planner.plan.facts_digest`'s rule (which leaves out collected_at and the
workload) plus the staleness rule (`runner._host_facts`, which leaves out the session), with
one difference: the workload is kept, because hosts that serve differently plan differently.
No machine-id or address is collected as a fact, so none needs leaving out.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
import stat
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from remedy.errors import IdentityFileError, RemedyError
from remedy.executor.runner import SESSION_ENV
from remedy.fleet.inventory import InventoryHost
from remedy.model import Facts, Plan

NOISE_ENV = SESSION_ENV | {"HOSTNAME"}  # + the one per-host name identical hosts differ by


def fleet_key(facts: Facts) -> str:
    """The digest hosts are grouped by (see the module docstring for what it leaves out)."""
    d = facts.model_dump(exclude={"host", "collected_at"})
    d["shell_env"] = {k: v for k, v in (d.get("shell_env") or {}).items() if k not in NOISE_ENV}
    blob = json.dumps(d, sort_keys=True, default=str).encode()
    return "sha256:" + hashlib.sha256(blob).hexdigest()


def open_host(
    host: InventoryHost,
    *,
    ssh_config: str | None = None,
    accept_new: bool = False,
    connect_timeout: float = 10.0,
) -> Any:
    """The transport for one inventory host; its `host` is the inventory name, so facts,
    journals and reports say `gpu07`, not an address."""
    c = host.connection
    if c.kind == "local":
        from remedy.transport.local import LocalTransport

        return LocalTransport(host=host.name)
    from remedy.transport.ssh import SSHTransport

    if c.key_file:
        check_identity_file(host.name, os.path.expanduser(c.key_file))
    t = SSHTransport(
        c.address,
        ssh_config=ssh_config,
        accept_new=accept_new,
        connect_timeout=connect_timeout,
        client_keys=[os.path.expanduser(c.key_file)] if c.key_file else None,
        known_hosts=[os.path.expanduser(k) for k in c.known_hosts] if c.known_hosts else None,
        username=c.user,
        port=c.port,
    )
    t.host = host.name
    return t


IDENTITY_MAX = 1 << 20  # a private key is a few KB


def check_identity_file(host: str, path: str) -> None:
    """A named identity file that cannot be read is the inventory's problem, said with its
    path: asyncssh would report a bare `No such file or directory` as a failed connection.
    It must be a regular file of at most IDENTITY_MAX bytes, opened without blocking:
    asyncssh reads it whole (/dev/zero: all memory), and open() of a FIFO waits for ever."""
    why = ""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
        try:
            st = os.fstat(fd)
        finally:
            os.close(fd)
        if not stat.S_ISREG(st.st_mode):
            why = "it is not a regular file"
        elif st.st_size > IDENTITY_MAX:
            why = f"it is {st.st_size} bytes, not a private key"
    except OSError as exc:
        why = exc.strerror or type(exc).__name__
    if why:
        raise IdentityFileError(
            f"{host}: the identity file {path} cannot be read: {why}",
            hint="check ansible_ssh_private_key_file for this host (or its group) in the "
            "inventory; the host was not contacted",
        )


Opener = Callable[[InventoryHost], Any]


@dataclass
class HostFacts:
    host: InventoryHost
    facts: Facts | None = None
    error: RemedyError | None = None
    seconds: float = 0.0

    @property
    def name(self) -> str:
        return self.host.name


async def collect_fleet(
    hosts: list[InventoryHost],
    opener: Opener,
    *,
    forks: int = 20,
    services: list[str] | Callable[[InventoryHost], list[str] | None] | None = None,
    timeout: float = 60,
    on_done: Callable[[HostFacts], None] | None = None,
) -> list[HostFacts]:
    """Facts of every host, at most `forks` at a time; a host that fails is recorded with its
    remedy error (unreachable, host key, …) and never stops the others."""
    from remedy.facts import collect_facts

    sem = asyncio.Semaphore(forks)

    async def one(h: InventoryHost) -> HostFacts:
        async with sem:
            t0 = time.monotonic()
            hf = HostFacts(h)
            try:
                t = opener(h)
                try:
                    wanted = services(h) if callable(services) else services
                    hf.facts = await collect_facts(t, services=wanted, timeout=timeout)
                finally:
                    await t.close()
            except RemedyError as exc:
                hf.error = exc
            hf.seconds = time.monotonic() - t0
            if on_done is not None:
                on_done(hf)
            return hf

    return list(await asyncio.gather(*(one(h) for h in hosts)))


@dataclass
class PlanGroup:
    """Hosts whose facts are the same, and the one plan made for all of them."""

    id: int
    key: str
    members: list[HostFacts] = field(default_factory=list)
    plan: Plan | None = None

    @property
    def hosts(self) -> list[str]:
        return [m.name for m in self.members]


def group_by_facts(items: list[HostFacts]) -> list[PlanGroup]:
    """Plan groups in the order their first host appears; failed hosts belong to none."""
    groups: dict[str, PlanGroup] = {}
    for hf in items:
        if hf.facts is None:
            continue
        k = fleet_key(hf.facts)
        if k not in groups:
            groups[k] = PlanGroup(len(groups) + 1, k)
        groups[k].members.append(hf)
    return list(groups.values())


def plan_groups(groups: list[PlanGroup], make: Callable[[Facts], Plan]) -> None:
    """One plan per group, made from its first host's facts."""
    for g in groups:
        first = g.members[0].facts
        assert first is not None
        g.plan = make(first)


def plan_for_host(plan: Plan, facts: Facts) -> Plan:
    """The group's plan, re-targeted at one member: its name and its own facts (which differ
    from the group's first host only in what fleet_key leaves out), so the run's staleness
    check compares the host with itself."""
    from remedy.planner.plan import facts_digest, plan_digest

    p = plan.model_copy(
        update={"host": facts.host, "facts": facts, "facts_digest": facts_digest(facts)}
    )
    return p.model_copy(update={"plan_digest": plan_digest(p)})
