"""A staged rollout over many hosts: canary first, then batches, stopped by an error budget.

What the best rollout tools agree on, and what this does:

* canary (`--canary N`, default 1): the first N hosts (inventory order) of each plan group go
  first, alone; if any of them fails, nothing else starts — a plan that breaks one host must
  not reach the fleet;
* batches (`--batch-size N` or `P%` of the hosts, like Ansible's `serial`; default: every
  other host at once), each bounded by `--forks` hosts in flight;
* error budget (`--max-errors N` or `P%`, default 0): once more hosts have failed than the
  budget allows, no further host starts. Hosts already in flight finish — each host's run is
  atomic (fully applied or rolled back, `executor/runner.py`), so stopping never leaves a
  half-changed host; a host that never started is untouched (outcome `skipped`);
* an outside stop (`stop_reason`, e.g. the first Ctrl-C / SIGTERM, see `remedy.interrupts`)
  works like the error budget: nothing further starts, hosts in flight finish.

The scheduler knows nothing about SSH or plans: it calls `apply(host, batch)` and reads the
`outcome` of what comes back, so tests drive it with a fake runner.
"""

from __future__ import annotations

import asyncio
import math
import re
from collections.abc import Awaitable, Callable, Hashable, Sequence
from dataclasses import dataclass, field
from typing import Any

from remedy.errors import InputError

OK_OUTCOMES = frozenset({"fixed", "nothing-to-do"})


@dataclass(frozen=True)
class Size:
    """A count of hosts, or a percentage of them (rounded down, as Ansible rounds serial)."""

    value: int
    percent: bool = False

    def of(self, total: int) -> int:
        return math.floor(total * self.value / 100) if self.percent else self.value

    def __str__(self) -> str:
        return f"{self.value}%" if self.percent else str(self.value)


def parse_size(text: str | int, option: str, *, minimum: int = 0) -> Size:
    """`5` or `10%`; bad values are a clear input error naming the option."""
    s = str(text).strip()
    m = re.fullmatch(r"(\d+)(%?)", s)
    if not m:
        raise InputError(
            f"{option} takes a number of hosts or a percentage (e.g. 5 or 10%), not {s!r}"
        )
    size = Size(int(m.group(1)), bool(m.group(2)))
    if size.percent and size.value > 100:
        raise InputError(f"{option} {s}: a percentage is at most 100%")
    if size.value < minimum:
        raise InputError(f"{option} must be at least {minimum}, not {s}")
    return size


@dataclass(frozen=True)
class RolloutPolicy:
    canary: int = 1
    batch_size: Size | None = None  # None: every host after the canaries in one batch
    max_errors: Size = Size(0)
    forks: int = 20

    def __post_init__(self) -> None:
        if self.canary < 0:
            raise InputError("--canary must be 0 or more")
        if self.forks < 1:
            raise InputError("--forks must be at least 1")


def plan_batches(
    hosts: Sequence[str], policy: RolloutPolicy, kind_of: Callable[[str], Hashable] | None = None
) -> list[list[str]]:
    """Batch 0 is the canary (when there is one); batch sizes count the whole rollout.

    kind_of: hosts of different kinds (plan groups: different plans) each get their own
    canaries — a canary proves only the plan it ran."""
    hosts = list(hosts)
    out: list[list[str]] = []
    kind = kind_of or (lambda _h: None)
    taken: dict[Hashable, int] = {}
    canaries: list[str] = []
    for h in hosts:
        k = kind(h)
        if taken.get(k, 0) < policy.canary:
            taken[k] = taken.get(k, 0) + 1
            canaries.append(h)
    if canaries:
        out.append(canaries)
    chosen = set(canaries)
    rest = [h for h in hosts if h not in chosen]
    if not rest:
        return out
    size = len(rest) if policy.batch_size is None else max(1, policy.batch_size.of(len(hosts)))
    out.extend(rest[i : i + size] for i in range(0, len(rest), size))
    return out


@dataclass
class HostFailure:
    """What the scheduler records when `apply` raised instead of returning a result."""

    host: str
    outcome: str = "error"
    message: str = ""


@dataclass
class RolloutResult:
    batches: list[list[str]]
    results: dict[str, Any] = field(default_factory=dict)  # host -> what apply returned
    batch_of: dict[str, int] = field(default_factory=dict)
    skipped: list[str] = field(default_factory=list)  # never started: untouched
    errors: list[str] = field(default_factory=list)
    allowed_errors: int = 0
    stopped: bool = False
    stop_reason: str = ""
    has_canary: bool = False


async def rollout(
    hosts: Sequence[str],
    apply: Callable[[str, int], Awaitable[Any]],
    policy: RolloutPolicy,
    *,
    is_error: Callable[[Any], bool] | None = None,
    on_result: Callable[[str, Any], None] | None = None,
    kind_of: Callable[[str], Hashable] | None = None,
    stop_reason: Callable[[], str] | None = None,
) -> RolloutResult:
    """Run `apply` on every host batch by batch; stop starting hosts once the canary failed,
    the error budget is spent or `stop_reason()` gives a reason. Returns every result, and
    which hosts never started."""
    failed = is_error or (lambda r: getattr(r, "outcome", "error") not in OK_OUTCOMES)
    batches = plan_batches(hosts, policy, kind_of)
    res = RolloutResult(
        batches=batches,
        allowed_errors=policy.max_errors.of(len(hosts)),
        has_canary=bool(policy.canary and batches),
    )
    sem = asyncio.Semaphore(policy.forks)

    def over_budget() -> bool:
        return len(res.errors) > res.allowed_errors

    def stopped() -> bool:
        if not res.stopped and stop_reason is not None and (why := stop_reason()):
            res.stopped, res.stop_reason = True, why
        return res.stopped

    async def one(host: str, b: int) -> None:
        async with sem:
            if stopped():
                res.skipped.append(host)
                return
            res.batch_of[host] = b
            try:
                r = await apply(host, b)
            except Exception as exc:  # a bug in a host's runner must not stop the others
                r = HostFailure(host, message=f"{type(exc).__name__}: {exc}")
            res.results[host] = r
            if failed(r):
                res.errors.append(host)
                if over_budget() and not res.stopped:
                    res.stopped = True
                    res.stop_reason = (
                        f"error budget spent: {len(res.errors)} host(s) failed, "
                        f"--max-errors {policy.max_errors} allows {res.allowed_errors}"
                    )
            if on_result is not None:
                on_result(host, r)

    for b, batch in enumerate(batches):
        if stopped():
            res.skipped.extend(batch)
            continue
        await asyncio.gather(*(one(h, b) for h in batch))
        if b == 0 and res.has_canary:
            bad = [h for h in batch if h in res.errors]
            if bad and not res.stopped:
                res.stopped = True
                res.stop_reason = f"canary failed on {', '.join(bad)}: no other host was started"
            elif bad:
                res.stop_reason = f"canary failed on {', '.join(bad)}; " + res.stop_reason
    order = {h: i for i, h in enumerate(hosts)}
    res.skipped.sort(key=order.__getitem__)
    return res
