"""Apply a plan with the real runner over the local transport, every probe passing: the
attack tests only ask what the steps themselves run or write."""

from __future__ import annotations

import asyncio
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from remedy.executor.runner import Runner
from remedy.model import Facts, Plan, Step
from remedy.planner.plan import facts_digest
from remedy.transport import LocalTransport


def apply_locally(
    tmp_path: Path, facts: Facts, steps: list[Step], env: Mapping[str, str] | None = None
) -> Any:
    plan = Plan(remedy_version="t", host="scratch", facts_digest=facts_digest(facts),
                facts=facts, target=facts.workload, steps=steps)  # fmt: skip

    async def collect(_t):
        return facts

    async def ok(probe, t, f, params=None, consumer=None):
        class R:
            ok, detail, symptoms, skipped, transport_error = True, "", [], None, None

        return R()

    t = LocalTransport(
        host="scratch", env={"XDG_STATE_HOME": str(tmp_path / "state"), **(env or {})}
    )
    return asyncio.run(Runner(t, collect=collect, prober=ok).run(plan, check_stale=False))


def as_canary_dir(area: Path, owner: int, *, link: bool) -> Path:
    """A root-owned dir (755) holding `as` (`owner`'s file, or root's link to it) that appends
    `as uid $(id -u)` to area/canary, then runs the real one."""
    bindir, tools = area / "bin", area / "tools"
    bindir.mkdir(mode=0o755)
    tools.mkdir(mode=0o755)
    f = tools / "as"
    f.write_text(f'#!/bin/sh\necho "as uid $(id -u)" >> {area / "canary"}\nexec /usr/bin/as "$@"\n')
    f.chmod(0o755)
    os.chown(f, owner, owner)
    if link:
        (bindir / "as").symlink_to(f)
    else:
        os.rename(f, bindir / "as")
    return bindir
