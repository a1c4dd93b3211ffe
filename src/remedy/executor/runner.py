"""Apply a plan on a host: lock ▸ journal ▸ checkpoint ▸ apply ▸ probe ▸ commit | roll back.

A run always ends fully applied or exactly as before. Before every action its intent is
written (and fsynced) to the journal on the host, so a run killed at any point — remedy
killed, the connection dropped — can be resumed or rolled back from what the host itself
recorded (NixOS keeps its activation lists under /run for the same reason).

Journal events, in order, per step i:  intent(i) · checkpoint(i) · applied(i) · probed(i) ·
committed(i)   or, on failure:  restored(i) · rolled_back(i)
and for the run: start · … · verify · finished(outcome).
"""

from __future__ import annotations

import getpass
import json
import os
import signal
import socket
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from remedy import __version__
from remedy.errors import LockHeld, RemedyError, RunError, StalePlan
from remedy.executor.hoststate import HostState
from remedy.model import Facts, Plan, Step
from remedy.transport import Transport

OUTCOME_EXIT = {"fixed": 0, "nothing-to-do": 10, "rolled-back": 3, "refused": 5,
                "needs-attention": 6}


def _crash_point(event: str, step: int | None) -> None:
    """Fault injection for tests: REMEDY_CRASH_AT=event[:step] kills this process with
    SIGKILL right after that journal record is durable (a real kill -9, not an exception)."""
    spec = os.environ.get("REMEDY_CRASH_AT")
    if not spec:
        return
    name, _, at = spec.partition(":")
    if name == event and (not at or (step is not None and int(at) == step)):
        os.kill(os.getpid(), signal.SIGKILL)


@dataclass
class StepReport:
    index: int
    action: str
    title: str
    outcome: str  # committed | failed | rolled-back | skipped
    probe: str
    probe_ok: bool | None = None
    detail: str = ""
    seconds: float = 0.0


@dataclass
class RunReport:
    run_id: str
    host: str
    outcome: str
    steps: list[StepReport] = field(default_factory=list)
    verification: list[dict[str, Any]] = field(default_factory=list)
    wrong_finding: list[str] = field(default_factory=list)
    message: str = ""
    expensive_verifications: int = 0
    seconds: float = 0.0

    @property
    def exit_code(self) -> int:
        return OUTCOME_EXIT.get(self.outcome, 6)

    def as_dict(self) -> dict[str, Any]:
        return {
            "run_id": self.run_id, "host": self.host, "outcome": self.outcome,
            "exit_code": self.exit_code, "message": self.message,
            "wrong_finding": self.wrong_finding, "seconds": round(self.seconds, 2),
            "expensive_verifications": self.expensive_verifications,
            "steps": [s.__dict__ for s in self.steps], "verification": self.verification,
        }


Prober = Callable[..., Any]  # async (probe_id, transport, facts, params, consumer) -> result
Collector = Callable[[Transport], Any]  # async transport -> Facts


def checkpoint_spec(step: Step) -> dict[str, Any]:
    """What to capture before a step, from what it declares it touches."""
    paths: list[str] = []
    packages: list[dict[str, Any]] = []
    for t in step.touches:
        if t.kind in ("file", "symlink", "dir", "dropin", "unit"):
            paths.append(t.target)
        elif t.kind == "package" and t.target.startswith("/"):
            names = [w.split("==")[0] for w in (t.detail or "").split() if "==" in w]
            if names:
                packages.append({"python": t.target, "names": names})
    return {"paths": paths, "packages": packages}


def _reloads(step: Step) -> list[str]:
    return [t.target for t in step.touches if t.kind == "service"]


class Runner:
    """Executes plans on one host through a Transport. The caller supplies how to collect
    facts and how to run probes, so tests can drive it against sandbox hosts."""

    def __init__(self, transport: Transport, *, collect: Collector, prober: Prober | None,
                 log: Callable[[str], None] | None = None, owner: str | None = None,
                 rollback_all_on_failure: bool = True, command_timeout: float = 900) -> None:
        self.t = transport
        self.hs = HostState(transport)
        self.collect = collect
        self.prober = prober
        self.log = log or (lambda _m: None)
        self.owner = owner or f"{getpass.getuser()}@{socket.gethostname()} pid {os.getpid()}"
        self.rollback_all = rollback_all_on_failure
        self.command_timeout = command_timeout

    # -- journal & lock ---------------------------------------------------------------------
    async def _journal(self, run_id: str, event: str, step: int | None = None, **data: Any
                       ) -> None:
        rec = {"run": run_id, "event": event, "step": step, **data}
        await self.hs.agent("append", self.hs.journal_path(run_id), json.dumps(rec, default=str))
        _crash_point(event, step)

    async def _records(self, run_id: str) -> list[dict[str, Any]]:
        _, data = await self.hs.agent("read", self.hs.journal_path(run_id))
        return data.get("records", [])

    async def _lock(self, run_id: str, operation: str, break_lock: str | None = None) -> None:
        info = {"run_id": run_id, "owner": self.owner, "operation": operation,
                "started": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
                "remedy_version": __version__}
        if break_lock:
            code, held = await self.hs.agent("lock-release", self.hs.state_dir, break_lock,
                                             ok_codes=(0, 3))
            if code == 3:
                h = held.get("held", {})
                raise LockHeld(f"--break-lock {break_lock} does not match the lock held by run "
                               f"{h.get('run_id')} ({h.get('owner')}); nothing was changed")
        code, data = await self.hs.agent("lock-acquire", self.hs.state_dir, json.dumps(info),
                                         ok_codes=(0, 3))
        if code == 3:
            h = data.get("held", {})
            raise LockHeld(
                f"{self.t.host} is locked by run {h.get('run_id')} of {h.get('owner')} "
                f"({h.get('operation')}, started {h.get('started')}, remedy "
                f"{h.get('remedy_version')})",
                hint=f"wait for it, `remedy resume {self.t.host}` if it died, or "
                     f"--break-lock {h.get('run_id')} if you are sure it is gone")

    async def _unlock(self, run_id: str) -> None:
        await self.hs.agent("lock-release", self.hs.state_dir, run_id, ok_codes=(0, 3))

    # -- pieces of a step -----------------------------------------------------------------------
    async def _apply(self, step: Step) -> tuple[bool, str]:
        for cmd in step.commands:
            if cmd.lstrip().startswith("#"):
                continue
            self.log(f"  $ {cmd}")
            r = await self.t.run(["sh", "-c", "set -e\n" + cmd], timeout=self.command_timeout)
            if r.exit_status != 0:
                tail = (r.stderr or r.stdout).decode(errors="replace").strip()[-800:]
                return False, f"`{cmd}` exited {r.exit_status}: {tail}"
        return True, ""

    async def _probe(self, probe: str, facts: Facts, params: dict[str, Any],
                     consumer: str | None = None) -> tuple[bool | None, str]:
        if self.prober is None:
            return None, "no prober"
        res = await self.prober(probe, self.t, facts, params=params, consumer=consumer)
        if getattr(res, "skipped", None):
            return None, f"skipped: {res.skipped}"
        syms = ", ".join(s.signature for s in getattr(res, "symptoms", [])[:5])
        return bool(res.ok), (res.detail or "") + (f" [{syms}]" if syms else "")

    async def _static_check(self, step: Step) -> tuple[bool, str, Facts]:
        """Re-collect facts and check the rules the step was meant to fix now hold."""
        from remedy.evaluate import evaluate
        from remedy.knowledge.loader import load_knowledge

        facts = await self.collect(self.t)
        ev = evaluate(load_knowledge(), facts.model_dump())
        still = sorted({v.rule for v in ev.errors_only() if v.rule in step.fixes})
        if still:
            return False, "still violated after the step: " + ", ".join(still), facts
        return True, "fixed rules hold on re-collected facts", facts

    async def _restore(self, run_id: str, i: int, step: Step) -> None:
        await self.hs.agent("restore", self.hs.cp_dir(run_id, i), timeout=600)
        for unit in _reloads(step):
            await self.t.run(["systemctl", "daemon-reload"], timeout=120)
            self.log(f"  reloaded systemd for {unit}")

    # -- the run --------------------------------------------------------------------------------
    async def run(self, plan: Plan, *, break_lock: str | None = None, check_stale: bool = True
                  ) -> RunReport:
        t0 = time.monotonic()
        await self.hs.setup()
        if check_stale:
            from remedy.planner.plan import facts_diff, facts_digest

            now = await self.collect(self.t)
            if facts_digest(now) != plan.facts_digest:
                diff = facts_diff(plan.facts.model_dump(exclude={"collected_at"}),
                                  now.model_dump(exclude={"collected_at"}))
                raise StalePlan(f"the plan is stale: {self.t.host}'s facts changed since it was "
                                "made; run `remedy plan` again", diff)
        run_id = uuid.uuid4().hex[:12]
        if plan.status == "nothing-to-do" or not plan.steps:
            return RunReport(run_id, self.t.host, "nothing-to-do",
                             message="every rule for the workload holds")
        await self._lock(run_id, "run", break_lock)
        try:
            await self.hs.agent("write", f"{self.hs.run_dir(run_id)}/plan.json", "600",
                                input=plan.model_dump_json().encode())
            await self._journal(run_id, "start", None, host=self.t.host, owner=self.owner,
                                steps=len(plan.steps), facts_digest=plan.facts_digest,
                                remedy_version=__version__)
            report = await self._run_steps(run_id, plan, 0)
        finally:
            await self._unlock(run_id)
        report.seconds = time.monotonic() - t0
        return report

    async def _run_steps(self, run_id: str, plan: Plan, start: int) -> RunReport:
        report = RunReport(run_id, self.t.host, "fixed")
        facts = plan.facts
        for i in range(start, len(plan.steps)):
            step = plan.steps[i]
            ts = time.monotonic()
            self.log(f"step {i + 1}/{len(plan.steps)}: {step.title}")
            await self._journal(run_id, "intent", i, action=step.action,
                                touches=[t.model_dump() for t in step.touches])
            await self.hs.agent("capture", self.hs.cp_dir(run_id, i),
                                input=json.dumps(checkpoint_spec(step)).encode(), timeout=600)
            await self._journal(run_id, "checkpoint", i)
            ok, why = await self._apply(step)
            if ok:
                await self._journal(run_id, "applied", i)
                ok, why, facts_now = await self._static_check(step)
                if ok:
                    facts = facts_now
                    pok, pdetail = await self._probe(step.probe, facts, step.params)
                    ok = pok is not False
                    why = pdetail if not ok else f"{why}; {step.probe}: {pdetail}"
                await self._journal(run_id, "probed", i, ok=ok, detail=why[:2000])
            if not ok:
                self.log(f"  step failed: {why}")
                await self._restore(run_id, i, step)
                await self._journal(run_id, "rolled_back", i, reason=why[:2000])
                report.steps.append(StepReport(i, step.action, step.title, "rolled-back",
                                               step.probe, False, why,
                                               time.monotonic() - ts))
                report.wrong_finding = list(step.fixes)
                if self.rollback_all:
                    await self._rollback_committed(run_id, plan, report)
                report.outcome = "rolled-back"
                report.message = (f"step {i + 1} ({step.action}) failed its proof: {why}; the "
                                  "host is back as it was before the run")
                await self._journal(run_id, "finished", None, outcome=report.outcome)
                return report
            await self._journal(run_id, "committed", i)
            report.steps.append(StepReport(i, step.action, step.title, "committed", step.probe,
                                           True, why, time.monotonic() - ts))
        # one expensive verification per consumer of the workload
        await self._journal(run_id, "verify", None)
        failed: list[str] = []
        for v in plan.verification:
            if v.probe == "-":
                report.verification.append({"consumer": v.consumer, "probe": v.probe,
                                            "ok": None, "detail": v.detail})
                continue
            used = v.probe
            vok, vdetail = await self._probe(v.probe, facts, {}, consumer=v.consumer)
            for fb in v.fallbacks:
                if vok is not None:
                    break
                used = fb
                vok, vdetail = await self._probe(fb, facts, {}, consumer=v.consumer)
            if vok is not None:
                report.expensive_verifications += 1
            report.verification.append({"consumer": v.consumer, "probe": used, "ok": vok,
                                        "detail": vdetail})
            if vok is False:
                failed.append(f"{v.consumer}: {vdetail}")
        if failed:
            if self.rollback_all:
                await self._rollback_committed(run_id, plan, report)
                report.outcome = "rolled-back"
            else:
                report.outcome = "needs-attention"
            report.message = "final verification failed: " + "; ".join(failed)
        await self._journal(run_id, "finished", None, outcome=report.outcome)
        return report

    async def _rollback_committed(self, run_id: str, plan: Plan, report: RunReport) -> None:
        done = [s.index for s in report.steps if s.outcome == "committed"]
        recs = await self._records(run_id)
        done = sorted({r["step"] for r in recs if r.get("event") == "committed"} | set(done),
                      reverse=True)
        for i in done:
            await self._journal(run_id, "rollback_intent", i)
            await self._restore(run_id, i, plan.steps[i])
            await self._journal(run_id, "rolled_back", i, reason="run rolled back")
            for s in report.steps:
                if s.index == i:
                    s.outcome = "rolled-back"

    # -- after a crash ----------------------------------------------------------------------------
    async def _load_run(self, run_id: str) -> tuple[Plan, list[dict[str, Any]]]:
        r = await self.t.run(["cat", f"{self.hs.run_dir(run_id)}/plan.json"], timeout=60)
        if r.exit_status != 0:
            raise RunError(f"run {run_id} has no saved plan on {self.t.host}")
        return Plan.model_validate_json(r.stdout), await self._records(run_id)

    async def runs(self) -> list[dict[str, Any]]:
        await self.hs.setup()
        _, data = await self.hs.agent("runs", self.hs.state_dir)
        out = []
        for item in data.get("runs", []):
            last, first = item.get("last") or {}, item.get("first") or {}
            outcome = last.get("outcome") if last.get("event") == "finished" else "interrupted"
            out.append({"run_id": item["run_id"], "started": first.get("ts"),
                        "owner": first.get("owner"), "operation": first.get("event"),
                        "outcome": outcome, "committed_steps": item.get("committed", []),
                        "last_event": last.get("event"), "last_step": last.get("step")})
        out.sort(key=lambda x: x.get("started") or 0)
        return out

    async def resume(self, *, rollback: bool = False) -> RunReport:
        """Finish (or, with rollback=True, undo) the newest interrupted run."""
        runs = [r for r in await self.runs() if r["outcome"] == "interrupted"]
        if not runs:
            return RunReport("-", self.t.host, "nothing-to-do", message="no interrupted run")
        run_id = runs[-1]["run_id"]
        code, held = await self.hs.agent("lock-read", self.hs.state_dir)
        h = held.get("held")
        if h and h.get("run_id") != run_id:
            raise LockHeld(f"{self.t.host} is locked by run {h.get('run_id')} of "
                           f"{h.get('owner')}: not resuming {run_id}")
        if not h:
            await self._lock(run_id, "resume")
        plan, recs = await self._load_run(run_id)
        await self._journal(run_id, "resume", None, owner=self.owner, rollback=rollback)
        try:
            state: dict[int, str] = {}
            for r in recs:
                if r.get("step") is not None:
                    state[r["step"]] = r["event"]
            # an interrupted step goes back to its checkpoint first (safe whatever ran)
            for i, ev in sorted(state.items()):
                if ev in ("checkpoint", "applied", "probed", "rollback_intent"):
                    self.log(f"step {i + 1}: restoring its checkpoint (interrupted at {ev})")
                    await self._restore(run_id, i, plan.steps[i])
                    await self._journal(run_id, "rolled_back", i, reason=f"interrupted at {ev}")
                    state[i] = "rolled_back"
            committed = sorted(i for i, ev in state.items() if ev == "committed")
            rolling_back = any(r.get("event") == "rollback_intent" for r in recs)
            if rollback or rolling_back:
                report = RunReport(run_id, self.t.host, "rolled-back")
                report.steps = [StepReport(i, plan.steps[i].action, plan.steps[i].title,
                                           "committed", plan.steps[i].probe) for i in committed]
                await self._rollback_committed(run_id, plan, report)
                report.message = "the interrupted run was rolled back"
                await self._journal(run_id, "finished", None, outcome="rolled-back")
                return report
            start = (max(committed) + 1) if committed else 0
            report = await self._run_steps(run_id, plan, start)
            report.message = (report.message or "") + f" (resumed at step {start + 1})"
            return report
        finally:
            await self._unlock(run_id)

    async def rollback(self, run_id: str | None = None) -> RunReport:
        """Undo a finished run (the newest that left changes, or the one named)."""
        runs = await self.runs()
        candidates = [r for r in runs if r["outcome"] in ("fixed", "needs-attention")]
        if run_id:
            candidates = [r for r in runs if r["run_id"] == run_id]
            if not candidates:
                raise RemedyError(f"no run {run_id} on {self.t.host} (see `remedy history`)")
        if not candidates:
            return RunReport("-", self.t.host, "nothing-to-do", message="no run to roll back")
        target = candidates[-1]
        if target["outcome"] == "interrupted":
            return await self.resume(rollback=True)
        if target["outcome"] not in ("fixed", "needs-attention"):
            return RunReport(target["run_id"], self.t.host, "nothing-to-do",
                             message=f"run {target['run_id']} ended {target['outcome']}: "
                                     "nothing of it is applied")
        rid = target["run_id"]
        await self._lock(rid, "rollback")
        try:
            plan, _ = await self._load_run(rid)
            report = RunReport(rid, self.t.host, "rolled-back")
            report.steps = [StepReport(i, plan.steps[i].action, plan.steps[i].title,
                                       "committed", plan.steps[i].probe)
                            for i in target["committed_steps"]]
            await self._journal(rid, "rollback", None, owner=self.owner)
            await self._rollback_committed(rid, plan, report)
            await self._journal(rid, "finished", None, outcome="rolled-back")
            report.message = f"run {rid} rolled back"
            return report
        finally:
            await self._unlock(rid)
