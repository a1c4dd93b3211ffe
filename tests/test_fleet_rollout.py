"""The rollout scheduler (remedy.fleet.rollout) against a fake per-host runner: canary first,
batches like Ansible's serial, the error budget's arithmetic, a consistent stop (hosts in
flight finish, no host starts after the stop), bounded concurrency; and the fleet exit code.
No SSH, no sandbox: fast."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from remedy.errors import InputError
from remedy.fleet.report import HostResult, fleet_exit
from remedy.fleet.rollout import RolloutPolicy, Size, parse_size, plan_batches, rollout


@dataclass
class Res:
    host: str
    outcome: str


class FakeFleet:
    """Hosts that take `delay` seconds and end `fixed` unless listed in `failing`; records
    the order of starts and finishes and the most hosts ever in flight."""

    def __init__(self, failing: set[str] = frozenset(), delay: float = 0.01, crash=()) -> None:
        self.failing = set(failing)
        self.crash = set(crash)
        self.delay = delay
        self.events: list[tuple[str, str, int]] = []
        self.in_flight = 0
        self.max_in_flight = 0

    async def apply(self, host: str, batch: int) -> Res:
        self.events.append(("start", host, batch))
        self.in_flight += 1
        self.max_in_flight = max(self.max_in_flight, self.in_flight)
        try:
            await asyncio.sleep(self.delay)
            if host in self.crash:
                raise RuntimeError("bug in a runner")
        finally:
            self.in_flight -= 1
            self.events.append(("end", host, batch))
        return Res(host, "rolled-back" if host in self.failing else "fixed")

    def started(self) -> list[str]:
        return [h for e, h, _ in self.events if e == "start"]


HOSTS = [f"h{i:02d}" for i in range(20)]


def go(fleet: FakeFleet, policy: RolloutPolicy, hosts=HOSTS):
    return asyncio.run(rollout(hosts, fleet.apply, policy))


def test_sizes():
    assert parse_size("5", "--x") == Size(5) and parse_size("10%", "--x") == Size(10, True)
    assert Size(10, True).of(20) == 2 and Size(10, True).of(19) == 1 and Size(10, True).of(5) == 0
    assert Size(3).of(100) == 3
    for bad in ("-1", "1.5", "ten", "150%", ""):
        with pytest.raises(InputError):
            parse_size(bad, "--max-errors")
    with pytest.raises(InputError, match="at least 1"):
        parse_size("0", "--batch-size", minimum=1)


def test_batches_canary_then_serial():
    p = RolloutPolicy(canary=1, batch_size=Size(5))
    assert [len(b) for b in plan_batches(HOSTS, p)] == [1, 5, 5, 5, 4]
    assert plan_batches(HOSTS, p)[0] == ["h00"]
    # a percentage counts the whole rollout (Ansible's serial: 25% of 20 = 5)
    assert [len(b) for b in plan_batches(HOSTS, RolloutPolicy(batch_size=Size(25, True)))] == [
        1,
        5,
        5,
        5,
        4,
    ]
    assert [len(b) for b in plan_batches(HOSTS, RolloutPolicy(canary=0))] == [20]
    assert [len(b) for b in plan_batches(HOSTS[:3], RolloutPolicy(canary=2))] == [2, 1]
    # 1% of 20 rounds down to 0: at least one host per batch
    assert len(plan_batches(HOSTS, RolloutPolicy(canary=0, batch_size=Size(1, True)))) == 20
    assert plan_batches([], RolloutPolicy()) == []


def test_each_plan_group_gets_its_own_canary():
    kind = {h: ("A" if i % 3 else "B") for i, h in enumerate(HOSTS)}.__getitem__
    b = plan_batches(HOSTS, RolloutPolicy(canary=1, batch_size=Size(6)), kind)
    assert b[0] == ["h00", "h01"]  # the first B, the first A
    assert b[1] == ["h02", "h03", "h04", "h05", "h06", "h07"]
    b = plan_batches(HOSTS, RolloutPolicy(canary=2), kind)
    assert b[0] == ["h00", "h01", "h02", "h03"] and len(b) == 2


@given(
    n=st.integers(0, 60),
    canary=st.integers(0, 5),
    size=st.one_of(st.none(), st.integers(1, 30), st.integers(1, 100).map(lambda v: -v)),
)
@settings(max_examples=200, deadline=None)
def test_batches_cover_every_host_once_in_order(n, canary, size):
    hosts = [f"h{i}" for i in range(n)]
    bs = None if size is None else (Size(-size, True) if size < 0 else Size(size))
    batches = plan_batches(hosts, RolloutPolicy(canary=canary, batch_size=bs))
    assert [h for b in batches for h in b] == hosts
    assert all(batches)


def test_all_good_runs_everything_canary_first():
    f = FakeFleet()
    res = go(f, RolloutPolicy(canary=1, batch_size=Size(5)))
    assert not res.stopped and not res.skipped and res.errors == []
    assert set(res.results) == set(HOSTS)
    # the canary ended before any other host started; batches never overlap
    ev = f.events
    assert ev[0] == ("start", "h00", 0) and ev[1] == ("end", "h00", 0)
    for b in range(1, 5):
        last_end = max(i for i, e in enumerate(ev) if e[0] == "end" and e[2] == b)
        first_next = min(
            (i for i, e in enumerate(ev) if e[0] == "start" and e[2] == b + 1), default=len(ev)
        )
        assert last_end < first_next
    assert res.batch_of["h00"] == 0 and res.batch_of["h19"] == 4


def test_failed_canary_starts_nothing_else():
    f = FakeFleet(failing={"h00"})
    res = go(f, RolloutPolicy(canary=1, max_errors=Size(5)))
    assert res.stopped and "canary failed on h00" in res.stop_reason
    assert f.started() == ["h00"] and res.skipped == HOSTS[1:]


def test_error_budget_stops_after_the_batch_that_spent_it():
    # budget 2; batch 1 (h01-h05) has 2 failures: within budget; batch 2 has a third: stop
    f = FakeFleet(failing={"h02", "h04", "h07"})
    res = go(f, RolloutPolicy(canary=1, batch_size=Size(5), max_errors=Size(2)))
    assert res.allowed_errors == 2 and res.errors == ["h02", "h04", "h07"]
    assert res.stopped and "3 host(s) failed, --max-errors 2 allows 2" in res.stop_reason
    # the batch in flight finished (consistent), nothing after it started
    assert set(f.started()) == set(HOSTS[:11])
    assert res.skipped == HOSTS[11:]
    assert all(("end", h, 2) in f.events for h in HOSTS[6:11])


def test_error_budget_percentage():
    # 10% of 20 = 2 tolerated, so the third failure stops the rollout
    f = FakeFleet(failing={"h01", "h02", "h03"})
    res = go(f, RolloutPolicy(canary=1, batch_size=Size(1), max_errors=Size(10, True)))
    assert res.allowed_errors == 2 and res.stopped
    assert f.started() == HOSTS[:4] and res.skipped == HOSTS[4:]
    f = FakeFleet(failing={"h01", "h02"})
    res = go(f, RolloutPolicy(canary=1, batch_size=Size(1), max_errors=Size(10, True)))
    assert not res.stopped and len(res.results) == 20


def test_default_budget_zero_stops_at_first_failure_but_in_flight_hosts_finish():
    # forks 3 in one batch of 19: the failure of h03 stops new starts; h01, h02 (in flight)
    # finish; h04.. whose turn had not come are skipped
    f = FakeFleet(delay=0.05)

    async def main():
        async def slow_or_fast(host, batch):
            if host == "h03":  # fails at once, while h01 and h02 still run
                f.events.append(("start", host, batch))
                f.events.append(("end", host, batch))
                return Res(host, "rolled-back")
            return await f.apply(host, batch)

        return await rollout(HOSTS, slow_or_fast, RolloutPolicy(canary=1, forks=3))

    res = asyncio.run(main())
    assert res.stopped and res.errors == ["h03"]
    assert {"h01", "h02"} <= set(res.results) and res.results["h01"].outcome == "fixed"
    assert res.skipped == HOSTS[4:]
    assert not set(res.skipped) & set(f.started())


def test_forks_bound_hosts_in_flight():
    f = FakeFleet(delay=0.02)
    res = go(f, RolloutPolicy(canary=0, forks=4))
    assert len(res.results) == 20 and f.max_in_flight == 4


def test_a_crashing_runner_is_an_error_not_a_crash():
    f = FakeFleet(crash={"h05"})
    res = go(f, RolloutPolicy(canary=1, max_errors=Size(3)))
    assert res.results["h05"].outcome == "error" and "bug in a runner" in res.results["h05"].message
    assert not res.stopped and len(res.results) == 20


def test_bad_policy():
    with pytest.raises(InputError):
        RolloutPolicy(forks=0)
    with pytest.raises(InputError):
        RolloutPolicy(canary=-1)


def r(outcome: str, code: int) -> HostResult:
    return HostResult(host="x", outcome=outcome, exit_code=code)


@pytest.mark.parametrize(
    "results, stopped, code",
    [
        ([r("fixed", 0), r("nothing-to-do", 10)], False, 0),
        ([r("nothing-to-do", 10)] * 3, False, 10),
        ([r("fixed", 0), r("unreachable", 4)], False, 4),
        ([r("rolled-back", 3), r("unreachable", 4)], False, 3),
        ([r("rolled-back", 3), r("skipped", 0)], True, 7),
        ([r("needs-attention", 6), r("rolled-back", 3)], True, 6),
        ([r("refused", 5), r("unreachable", 4)], False, 5),
        ([], False, 0),
    ],
)
def test_fleet_exit_precedence(results, stopped, code):
    assert fleet_exit(results, stopped=stopped) == code


def test_an_outside_stop_lets_hosts_in_flight_finish_and_starts_nothing_more():
    """What the first Ctrl-C / SIGTERM of a fleet run does (remedy.interrupts): stop_reason
    turns non-empty while h01..h03 run; they finish, nobody else starts."""
    f = FakeFleet(delay=0.05)
    why: list[str] = []

    async def main():
        async def apply(host, batch):
            if host == "h02":
                why.append("interrupted by SIGTERM")
            return await f.apply(host, batch)

        return await rollout(
            HOSTS, apply, RolloutPolicy(canary=0, forks=3), stop_reason=lambda: "".join(why)
        )

    res = asyncio.run(main())
    assert res.stopped and res.stop_reason == "interrupted by SIGTERM"
    assert sorted(res.results) == ["h00", "h01", "h02"]
    assert all(r.outcome == "fixed" for r in res.results.values())
    assert res.skipped == HOSTS[3:] and f.started() == HOSTS[:3]


@pytest.mark.parametrize(
    "results, code",
    [
        ([r("fixed", 0), r("skipped", 0)], 143),
        ([r("rolled-back", 3), r("interrupted", 4)], 143),
        ([r("needs-attention", 6), r("skipped", 0)], 6),  # a broken host still comes first
    ],
)
def test_fleet_exit_of_a_signalled_rollout(results, code):
    assert fleet_exit(results, stopped=True, signal=15) == code
