"""An nvcc job OOM-killed during a parallel JIT build ('Killed signal terminated program',
Error 137) drives a plan: jit-parallelism-fits-memory is a warning (a risk) until the logs show
a build killed (`planned_when_seen`), and the memory its jobs must fit is the unit's MemoryMax=
when lower than the host's (systemd.resource-control(5)).

Before this change the planner never planned the warning: with the OOM line the plan had no step
(the rule in `advice` only), and the job count came from the host's memory, ignoring the unit's
cgroup limit (remedy read no MemoryMax=).

Facts: the real sandbox host of sandbox/scenarios/service-jit-cache-readonly (2 CPUs, 23.5 GiB),
its unit's sandboxing replaced by a MemoryMax= (the form `systemctl show` prints, in bytes).
The OOM log is RECORDED, not produced here: this machine runs cgroup v1, where a sandbox unit's
MemoryMax= is not enforced dependably, so a real OOM kill is not reproduced;
tests/fixtures/corpus/jit-parallelism-fits-memory/2.log is the line quoted in
PennyLaneAI/catalyst#1000 (a CI runner's parallel build OOM-killed).
"""

from __future__ import annotations

import json
from pathlib import Path

from remedy.inputs import scan_logs
from remedy.knowledge.loader import load_knowledge
from remedy.model import Facts
from remedy.planner.plan import make_plan

HERE = Path(__file__).parent / "fixtures"
OOM_LOG = HERE / "corpus" / "jit-parallelism-fits-memory" / "2.log"
GIB = 1024**3


def facts(**sb: str) -> Facts:
    f = Facts.model_validate(
        json.loads((HERE / "jitcache" / "service-jit-cache-readonly.facts.json").read_text())
    )
    svc = f.services[0].model_copy(update={"sandboxing": sb})
    return f.model_copy(update={"services": [svc]})


def oom():
    return scan_logs([str(OOM_LOG)])[0]


def max_jobs(plan) -> list[tuple[str, dict]]:
    return [(s.action, s.operation.model_dump().get("set")) for s in plan.steps]


def test_an_oom_killed_build_is_planned_with_the_units_memory_max():
    kb = load_knowledge()
    f = facts(MemoryMax=str(8 * GIB))
    assert f.memory_mib and f.memory_mib > 16 * 1024 and f.cpus == 2
    plan = make_plan(kb, f, oom())
    # 8 GiB of MemoryMax= fits one 8 GiB nvcc job; the host's 23.5 GiB would have said 2
    assert max_jobs(plan) == [("env-max-jobs", {"MAX_JOBS": "1"})]
    assert plan.steps[0].operation.scope == "dropin"
    assert "jit-parallelism-fits-memory" in [x.rule for x in plan.findings]
    assert any("Killed signal terminated program" in a for a in plan.steps[0].addresses)
    assert plan.unexplained == []
    msg = next(x.message for x in plan.findings if x.rule == "jit-parallelism-fits-memory")
    assert "MemoryMax=" in msg and "MAX_JOBS=1" in msg


def test_without_a_unit_limit_the_hosts_memory_counts():
    kb = load_knowledge()
    plan = make_plan(kb, facts(), oom())
    assert max_jobs(plan) == [("env-max-jobs", {"MAX_JOBS": "2"})]


def test_a_memory_max_above_the_hosts_changes_nothing():
    kb = load_knowledge()
    plan = make_plan(kb, facts(MemoryMax=str(512 * GIB)), oom())
    assert max_jobs(plan) == [("env-max-jobs", {"MAX_JOBS": "2"})]


def test_without_an_oom_in_the_logs_it_stays_advice():
    kb = load_knowledge()
    plan = make_plan(kb, facts(MemoryMax=str(8 * GIB)))
    assert plan.steps == []
    assert "jit-parallelism-fits-memory" in [x.rule for x in plan.advice]


def test_max_jobs_that_fit_hold():
    kb = load_knowledge()
    f = facts(MemoryMax=str(8 * GIB))
    svc = f.services[0]
    svc = svc.model_copy(update={"environment": {**svc.environment, "MAX_JOBS": "1"}})
    plan = make_plan(kb, f.model_copy(update={"services": [svc]}), oom())
    assert "jit-parallelism-fits-memory" not in [x.rule for x in [*plan.findings, *plan.advice]]
    assert plan.steps == []
