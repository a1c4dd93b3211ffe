"""The early follow-up (sent beside the main batch once the login PATH is known) never outlives
collect_facts and never changes what it raises.

Scripted answers, so the timing is ours: the login script answers at once, the main batch
later; the real hosts are covered by test_facts_fast_path.py.
"""

from __future__ import annotations

import asyncio
import time

import pytest

from remedy.errors import ConnectionDropped
from remedy.facts import collect_facts
from remedy.facts.sections import DEFAULT_TOKEN
from remedy.transport.scripted import ScriptedCall, ScriptedTransport

T = DEFAULT_TOKEN


def login_output() -> str:
    env = "\0".join(["HOME=/root", "PATH=/usr/bin:/bin", "SHELL=/bin/bash"]) + "\0"
    return (
        f"\n{T} shell /bin/bash\n\n{T} uid 0\n\n{T} env\n{env}\n{T} env.end\n"
        f'\n{T} profile /root/.profile\nPATH="$HOME/bin:$PATH"\n\n{T} profile.end\n'
    )


def kind(call: ScriptedCall) -> str:
    s = call.script or ""
    if "env.end" in s:
        return "login"
    if "m svc.boot" in s:
        return "main"
    return "followup"


def test_main_batch_failing_stops_the_early_followup_and_raises_as_before() -> None:
    seen: dict[str, str] = {}

    async def handler(call: ScriptedCall) -> str:
        k = kind(call)
        if k == "login":
            return login_output()
        if k == "main":
            await asyncio.sleep(0.2)
            raise ConnectionDropped("scripted: connection lost during the main batch")
        assert "look /root/bin login" in (call.script or "")
        try:
            await asyncio.sleep(30)
        except asyncio.CancelledError:
            seen["followup"] = "cancelled"
            raise
        return ""

    async def go() -> None:
        t = ScriptedTransport(handler, host="h")
        start = time.monotonic()
        with pytest.raises(ConnectionDropped):
            await collect_facts(t, timeout=60, token=T)
        assert time.monotonic() - start < 5
        assert [kind(c) for c in t.calls] == ["main", "login", "followup"]
        # nothing of collect_facts is left running
        others = [x for x in asyncio.all_tasks() if x is not asyncio.current_task()]
        assert not others

    asyncio.run(go())
    assert seen == {"followup": "cancelled"}


def test_an_early_followup_that_is_not_the_real_one_is_stopped_and_replaced() -> None:
    """The main batch itself looked at /root/bin (it is on the session PATH there), so the
    real need differs from the prediction: the early one is stopped, no second follow-up."""
    calls: list[str] = []

    async def handler(call: ScriptedCall) -> str:
        k = kind(call)
        calls.append(k)
        if k == "login":
            return login_output()
        if k == "main":
            await asyncio.sleep(0.2)
            return f"\n{T} path session\n/root/bin\t0\t0\n/usr/bin\t0\t0\n/bin\t0\t0\n\n{T} end\n"
        await asyncio.sleep(30)
        return ""

    async def go():
        t = ScriptedTransport(handler, host="h")
        start = time.monotonic()
        facts = await collect_facts(t, timeout=60, token=T)
        assert not [x for x in asyncio.all_tasks() if x is not asyncio.current_task()]
        return facts, time.monotonic() - start

    facts, took = asyncio.run(go())
    assert took < 5  # the early follow-up's 30 s were not waited for
    assert calls == ["main", "login", "followup"]  # and no follow-up after the main batch
    assert facts.shell_env["PATH"] == "/root/bin:/usr/bin:/bin"


def test_no_time_left_names_what_was_not_probed() -> None:
    """The main batch answers with a second of the budget left: no follow-up is sent, and the
    note says which login PATH went unprobed (it named nothing when only prefixes counted)."""

    async def handler(call: ScriptedCall) -> str:
        k = kind(call)
        if k == "login":
            return login_output()
        if k == "main":
            await asyncio.sleep(1.3)
            return f"\n{T} path session\n/usr/bin\t0\t0\n/bin\t0\t0\n\n{T} end\n"
        await asyncio.sleep(30)
        return ""

    facts = asyncio.run(collect_facts(ScriptedTransport(handler, host="h"), timeout=2.0, token=T))
    left = [n for n in facts.notes if n.startswith("no time left to probe: ")]
    assert left and "/root/bin" in left[0], facts.notes
