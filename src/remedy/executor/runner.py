"""Apply a plan on a host: lock ▸ journal ▸ checkpoint ▸ apply ▸ probe ▸ commit | roll back.

A run always ends fully applied or exactly as before. Before every action its intent is
written (and fsynced) to the journal on the host, so a run killed at any point — remedy
killed, the connection dropped — can be resumed or rolled back from what the host itself
recorded (NixOS keeps its activation lists under /run for the same reason).

Journal events, in order, per step i:  intent(i) · checkpoint(i) · applied(i) · probed(i) ·
committed(i)   or, on failure:  rolled_back(i)
and for the run: start · … · verify · finished(outcome). A step whose proof failed only
because of a link of the chain that a later step repairs commits with `deferred_to` = that
step; its probe is run again right after it (`proved`, or `proof_deferred` once more).

A run that stops without a `finished` record (kill -9, a dropped connection, Ctrl-C) keeps the
host's lock: only `resume` (finish or roll back, from the journal) or `--break-lock` continue,
so no second run plans on a half-applied host. Each step's commands record their process group
on the host, so a resume first stops whatever of an interrupted step is still running there.
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
from pathlib import Path
from typing import TYPE_CHECKING, Any

from remedy import __version__
from remedy.errors import (
    CommandTimeout,
    ConnectionDropped,
    LockHeld,
    PlanError,
    Refused,
    RemedyError,
    RunError,
    StalePlan,
    TransportError,
)
from remedy.executor.hoststate import HostState
from remedy.executor.verdict import claim_unverified, rerun_failed_operation
from remedy.model import Facts, Plan, Step
from remedy.outcomes import OUTCOME_EXIT
from remedy.redact import redact_obj
from remedy.transport import Transport
from remedy.transport.quote import quote

if TYPE_CHECKING:
    from remedy.knowledge.loader import Knowledge

# statuses of a plan that may be applied: complete for every finding; 'unexplained' also has
# fatal log lines no finding explains (the run then re-runs the failed operation and never
# claims `fixed` while it still fails: applied-not-fixed)
APPLICABLE = ("ok", "unexplained")

# Final verification probes that build or launch for real (the expensive rung of the ladder),
# and what `verify="cheap"` runs instead for their consumer: the same toolkit lookup, flags
# and link line through nvcc alone (seconds, not minutes). GPU-only probes have no cheap
# stand-in and are not run then.
BUILD_PROBES = {"flashinfer-jit-build", "sglang-jit-build", "torch-ext-build", "jit-run-probe"}
LAUNCH_PROBES = {"launch-probe"}
CHEAP_FOR_BUILD = ("compile-probe", "link-probe")
CHEAP_FOR_LAUNCH = ("env-probe",)
# outcomes of a finished run whose steps are still applied (what `remedy rollback` undoes)
ROLLBACKABLE = (
    "fixed",
    "needs-attention",
    "applied-restart-pending",
    "applied-not-fixed",
    "applied-not-verified",
)


def _probe_budget() -> float | None:
    """REMEDY_PROBE_TIMEOUT (seconds): each probe's budget instead of the probes' default
    (600 s). A real JIT build of a torch extension took longer than that on a 2-core machine
    at load 10 (the sandbox tests under other sessions' load); a bad value is ignored."""
    raw = os.environ.get("REMEDY_PROBE_TIMEOUT", "")
    try:
        val = float(raw)
    except ValueError:
        return None
    return val if 0 < val <= 86400 else None


def _crash_point(event: str, step: int | None) -> None:
    """Fault injection for tests: REMEDY_CRASH_AT=event[:step] kills this process with
    SIGKILL right after that journal record is durable (a real kill -9, not an exception)."""
    spec = os.environ.get("REMEDY_CRASH_AT")
    if not spec:
        return
    name, _, at = spec.partition(":")
    # compared as text: a step that is no number names no step (int() of it ended the run
    # in an internal error after its journal record)
    if name == event and (not at or (step is not None and at.strip() == str(step))):
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
    deferred_to: int | None = None  # its proof waits for this (later) step


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
    verify_mode: str = "full"
    seconds: float = 0.0
    hint: str = ""
    diff: list[str] = field(default_factory=list)
    # every probe this run ran: {phase, probe, consumer, ok, seconds} (what the proof cost)
    probes: list[dict[str, Any]] = field(default_factory=list)
    units: list[str] = field(default_factory=list)  # units in the plan's scope (services.py)
    restart_pending: list[str] = field(default_factory=list)  # of those, not seen ready

    @property
    def exit_code(self) -> int:
        return OUTCOME_EXIT.get(self.outcome, 6)

    def as_dict(self) -> dict[str, Any]:
        d = {
            "run_id": self.run_id,
            "host": self.host,
            "outcome": self.outcome,
            "exit_code": self.exit_code,
            "message": self.message,
            "wrong_finding": self.wrong_finding,
            "seconds": round(self.seconds, 2),
            "expensive_verifications": self.expensive_verifications,
            "verify_mode": self.verify_mode,
            "steps": [s.__dict__ for s in self.steps],
            "verification": self.verification,
        }
        if self.hint:
            d["hint"] = self.hint
        if self.diff:
            d["diff"] = self.diff
        d["probes"] = self.probes
        if self.units or self.restart_pending:
            d["units"] = self.units
            d["restart_pending"] = self.restart_pending
        return d


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
    """Units whose definition a step changes: systemd must reload after restoring them."""
    units = [t.target for t in step.touches if t.kind == "service"]
    if not units and any(t.kind in ("dropin", "unit") for t in step.touches):
        units = [t.target for t in step.touches if t.kind in ("dropin", "unit")]
    return units


# Stops what an interrupted step left running on the host (its process group, recorded in
# step-<i>.pgid by the step's own shell), so a restore never races a half-done `pip install`.
# The number alone outlives its group (a reboot, or the group gone while remedy was dead and
# the number given to an sshd): the file also holds the group leader's start time and the
# boot it ran in, and a group is stopped only while they match. Linux never hands out a
# number still used by a group, so a group whose leader is gone (a step's shell killed by a
# dropped connection, its pip still running) is still the step's in the same boot.
_STOP_LEFTOVERS = r"""
boot=$(cat /proc/sys/kernel/random/boot_id 2>/dev/null)
for f in "$1"/step-*.pgid; do
  [ -f "$f" ] || continue
  read -r pg st bt < "$f" 2>/dev/null
  case "$pg" in ''|*[!0-9]*) rm -f "$f"; continue;; esac
  case "$st" in ''|*[!0-9]*) st=;; esac
  why=
  if [ -z "$st" ] || [ -z "$bt" ]; then why="no start time recorded (an older remedy)"
  elif [ "$bt" != "$boot" ]; then why="recorded in another boot"
  elif [ -r /proc/"$pg"/stat ]; then
    now=$(sed 's/.*) //' /proc/"$pg"/stat 2>/dev/null | cut -d' ' -f20)
    [ "$now" = "$st" ] || why="the number now belongs to another process"
  fi
  if [ -n "$why" ]; then
    kill -0 -"$pg" 2>/dev/null && echo "not stopped: process group $pg of $(basename "$f" .pgid): $why"
    rm -f "$f"; continue
  fi
  if kill -0 -"$pg" 2>/dev/null; then
    kill -TERM -"$pg" 2>/dev/null
    n=0
    while kill -0 -"$pg" 2>/dev/null && [ $n -lt 50 ]; do sleep 0.2; n=$((n+1)); done
    kill -KILL -"$pg" 2>/dev/null
    echo "stopped process group $pg of $(basename "$f" .pgid)"
  fi
  rm -f "$f"
done
exit 0
"""


# Login-session values the collectors read with the shell's environment: they differ on every
# connection (the client's source port), so a saved plan would never match its host again.
SESSION_ENV = frozenset(
    {
        "SSH_CLIENT",
        "SSH_CONNECTION",
        "SSH_TTY",
        "SSH_AUTH_SOCK",
        "XDG_SESSION_ID",
        "XDG_SESSION_TYPE",
        "XDG_SESSION_CLASS",
        "XDG_RUNTIME_DIR",
        "MOTD_SHOWN",
        "OLDPWD",
        "_",
    }
)


def _host_facts(facts: Facts) -> dict[str, Any]:
    """Facts as compared for staleness: what the host is (no timestamp, no workload, no
    per-session environment)."""
    d = facts.model_dump(exclude={"collected_at", "workload"})
    d["shell_env"] = {k: v for k, v in (d.get("shell_env") or {}).items() if k not in SESSION_ENV}
    return d


class Runner:
    """Executes plans on one host through a Transport. The caller supplies how to collect
    facts and how to run probes, so tests can drive it against sandbox hosts.

    verify: "full" runs the plan's final verification (one expensive probe per consumer);
    "cheap" replaces build probes by the compile and link probes of the same consumer and
    launch probes by env-probe, and says so in the report (verify_mode)."""

    def __init__(
        self,
        transport: Transport,
        *,
        collect: Collector,
        prober: Prober | None,
        log: Callable[[str], None] | None = None,
        owner: str | None = None,
        rollback_all_on_failure: bool = True,
        command_timeout: float = 900,
        verify: str = "full",
        knowledge: Knowledge | None = None,
    ) -> None:
        """knowledge: the rules the static re-checks evaluate, given by the caller (the
        executor does not pick a knowledge directory itself); loaded when not given."""
        if verify not in ("full", "cheap"):
            raise ValueError(f"verify must be 'full' or 'cheap', not {verify!r}")
        self.t = transport
        self.hs = HostState(transport)
        self.collect = collect
        self.prober = prober
        self.log = log or (lambda _m: None)
        self.owner = owner or f"{getpass.getuser()}@{socket.gethostname()} pid {os.getpid()}"
        self.rollback_all = rollback_all_on_failure
        self.command_timeout = command_timeout
        self.verify = verify
        self._kb = knowledge
        # `--rollback-if-not-fixed`: undo the steps when the failed operation still fails
        self.rollback_if_not_fixed = False
        # the run in progress and its last journal record: what a caller reports when an
        # exception (a dropped connection) ends it mid-way
        self.current: RunReport | None = None
        self.phase = ""
        self.last_event: tuple[str, str, int | None] | None = None

    def stopped_at(self) -> str:
        """Where the run this process drove stopped, for the report of an interruption
        ('' before its first journal record: nothing of it had changed the host)."""
        if self.last_event is None:
            return ""
        _, event, step = self.last_event
        return f"last journal record: {event}" + (
            f" of step {step + 1}" if step is not None else ""
        )

    # -- journal & lock ---------------------------------------------------------------------
    async def _journal(self, run_id: str, event: str, step: int | None = None, **data: Any) -> None:
        rec = {"run": run_id, "event": event, "step": step, **data}
        # redacted: a step's output or error can echo a secret (an index URL with a password)
        rec = redact_obj(json.loads(json.dumps(rec, default=str)))
        await self.hs.agent("append", self.hs.journal_path(run_id), json.dumps(rec))
        self.last_event = (run_id, event, step)
        _crash_point(event, step)

    async def _records(self, run_id: str, steps: int | None = None) -> list[dict[str, Any]]:
        """The run's journal records; one that is not of the runner's own shape (an event
        that is no text, a step that is no step of the plan: text, negative, past its end)
        reads as a torn record, as a half-written line does. Only the runner writes the
        journal, so such a record is damage or a hostile host's reply: trusted, a step of -1
        was the plan's last step to Python, and a text step ended resume in a TypeError."""
        _, data = await self.hs.agent("read", self.hs.journal_path(run_id))
        recs = data.get("records", [])
        if not isinstance(recs, list):
            raise RemedyError(
                f"host agent 'read' on {self.t.host} answered with no list of records"
            )
        return [r if _record_ok(r, steps) else _torn(r) for r in recs]

    async def _lock(self, run_id: str, operation: str, break_lock: str | None = None) -> None:
        info = {
            "run_id": run_id,
            "owner": self.owner,
            "operation": operation,
            "started": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            "remedy_version": __version__,
        }
        if break_lock:
            code, held = await self.hs.agent(
                "lock-release", self.hs.state_dir, break_lock, ok_codes=(0, 3)
            )
            if code == 3:
                h = held.get("held", {})
                raise LockHeld(
                    f"--break-lock {break_lock} does not match the lock held by run "
                    f"{h.get('run_id')} ({h.get('owner')}); nothing was changed"
                )
        code, data = await self.hs.agent(
            "lock-acquire", self.hs.state_dir, json.dumps(info), ok_codes=(0, 3)
        )
        if code == 3:
            h = data.get("held", {})
            if h.get("torn"):
                raise LockHeld(
                    f"{self.t.host} has an unreadable lock file (a remedy killed while taking "
                    "its lock): it names no run, so nothing was started",
                    hint=f"`remedy resume {self.t.host}` releases it (or --break-lock '?')",
                )
            raise LockHeld(
                f"{self.t.host} is locked by run {h.get('run_id')} of {h.get('owner')} "
                f"({h.get('operation')}, started {h.get('started')}, remedy "
                f"{h.get('remedy_version')})",
                hint=f"wait for it, `remedy resume {self.t.host}` if it died, or "
                f"--break-lock {h.get('run_id')} if you are sure it is gone",
            )

    async def _unlock(self, run_id: str) -> None:
        await self.hs.agent("lock-release", self.hs.state_dir, run_id, ok_codes=(0, 3))

    # -- pieces of a step -----------------------------------------------------------------------
    def _pgid_file(self, run_id: str, i: int) -> str:
        return f"{self.hs.run_dir(run_id)}/step-{i}.pgid"

    async def _apply(self, run_id: str, i: int, step: Step) -> tuple[bool, str]:
        from remedy.trust import step_env_guard

        pgf = quote(self._pgid_file(run_id, i))
        for cmd in step.commands:
            if cmd.lstrip().startswith("#"):
                continue
            # a command with a here-document (a check script) is named by its first line
            shown = cmd if "\n" not in cmd else cmd.split("\n", 1)[0] + " …"
            self.log(f"  $ {shown}")
            # the step's process group goes to a file first, so a resume after a dropped
            # connection can stop what is still running; removed when the command ends.
            # `cd /` first: every path a step names is absolute, and the directory remedy was
            # started in (`--local` from /tmp, a shared checkout) is no place for root's
            # `python -m pip` to import `pip` from (`-m` puts the working directory first on
            # sys.path). `umask 022`: what a step creates as root (a profile.d file every
            # login sources, a drop-in, a toolkit's stub directory, a root venv's packages)
            # took the umask remedy was started with, and under a container's or CI's 000
            # they were world-writable: any user's line in root's next login shell. The
            # environment is judged here, on the host: over SSH the login environment names
            # import paths, configuration and pip's cache (remedy.trust.step_env_guard)
            script = (
                "cd / || exit 1\numask 022\n"
                + step_env_guard()
                + f"pg=$(cut -d' ' -f5 /proc/$$/stat 2>/dev/null) || pg=$$\n"
                "pg=${pg:-$$}\n"
                "st=$(sed 's/.*) //' /proc/$pg/stat 2>/dev/null | cut -d' ' -f20)\n"
                "bt=$(cat /proc/sys/kernel/random/boot_id 2>/dev/null)\n"
                f'printf \'%s %s %s\\n\' "$pg" "$st" "$bt" > {pgf}\n'
                f"( set -e\n{cmd}\n)\nrc=$?\nrm -f {pgf}\nexit $rc"
            )
            try:
                r = await self.t.run(["sh", "-c", script], timeout=self.command_timeout)
            except ConnectionDropped:
                raise ConnectionDropped(
                    f"{self.t.host}: the connection dropped while step {i + 1} ran `{shown[:300]}`;"
                    " it may still be running there (a resume stops it first)"
                ) from None
            except CommandTimeout:
                raise CommandTimeout(
                    f"{self.t.host}: step {i + 1}'s `{shown[:300]}` ran past "
                    f"{self.command_timeout:g} s and was killed"
                ) from None
            if r.exit_status != 0:
                tail = (r.stderr or r.stdout).decode(errors="replace").strip()[-800:]
                return False, f"`{shown}` exited {r.exit_status}: {tail}"
        return True, ""

    async def _probe(
        self, probe: str, facts: Facts, params: dict[str, Any], consumer: str | None = None
    ) -> tuple[bool | None, str, Any]:
        if self.prober is None:
            return None, "no prober", None
        self.log(f"  probe {probe}" + (f" ({consumer})" if consumer else ""))
        t0 = time.monotonic()
        budget = _probe_budget()
        res = await self.prober(
            probe,
            self.t,
            facts,
            params=params,
            consumer=consumer,
            **({"timeout": budget} if budget else {}),
        )
        if self.current is not None:
            self.current.probes.append(
                {
                    "phase": self.phase,
                    "probe": probe,
                    "consumer": consumer,
                    "ok": None if getattr(res, "skipped", None) else bool(res.ok),
                    "seconds": round(time.monotonic() - t0, 1),
                }
            )
        lost = getattr(res, "transport_error", None)
        if lost:
            # no verdict about the host: stop as interrupted (lock kept, `remedy resume`
            # probes again) rather than roll back a step that may well be right
            raise ConnectionDropped(
                f"{self.t.host}: the connection failed during {probe}"
                + (f" ({self.phase})" if self.phase else "")
                + f": {lost}"
            )
        if getattr(res, "skipped", None):
            return None, f"skipped: {res.skipped}", res
        syms = ", ".join(dict.fromkeys(s.signature for s in getattr(res, "symptoms", [])))
        detail = (res.detail or "") + (f" [{syms}]" if syms and not res.ok else "")
        self.log(f"    {'ok' if res.ok else 'FAILED'}: {detail}")
        return bool(res.ok), detail, res

    async def _collect(self, plan: Plan) -> Facts:
        """Facts re-collected on the host, for the workload the plan was made for (how the
        server runs, e.g. `--service UNIT`, is the user's word, not a fact collectors see)."""
        facts = await self.collect(self.t)
        return facts.model_copy(update={"workload": plan.target.model_copy(deep=True)})

    @property
    def kb(self) -> Knowledge:
        if self._kb is None:
            from remedy.knowledge.loader import load_knowledge

            self._kb = load_knowledge()
        return self._kb

    async def _static_check(self, plan: Plan, step: Step) -> tuple[bool, str, Facts]:
        """Re-collect facts and check the rules the step was meant to fix now hold, except
        those the plan has a later step repair too (e.g. CUDA_HOME moved to a toolkit whose
        lib64 layout the next step adds: toolkit-links-cudart holds only after both)."""
        from remedy.evaluate import evaluate
        from remedy.executor.services import facts_for

        facts = facts_for(await self._collect(plan), step.scope)
        ev = evaluate(self.kb, facts.model_dump())
        i = plan.steps.index(step)
        later = {r: j for j in range(len(plan.steps) - 1, i, -1) for r in plan.steps[j].fixes}
        # every rule the step fixes, a warning the logs showed failing too (a promoted one)
        viol = {v.rule for v in ev.violations if v.rule in step.fixes}
        still = sorted(viol - set(later))
        if still:
            return False, "still violated after the step: " + ", ".join(still), facts
        why = "fixed rules hold on re-collected facts"
        if viol:
            why += "; " + ", ".join(
                f"{r} still violated, as planned: step {later[r] + 1} completes it"
                for r in sorted(viol)
            )
        return True, why, facts

    def _explained_later(
        self, plan: Plan, after: int, facts: Facts, res: Any
    ) -> tuple[int, list[str]] | None:
        """When a probe failed with symptoms that a rule still violated on the host predicts,
        and a later step of the plan repairs that rule, the failure is a known later link of
        the chain, not the step's own: (the last such step, its rules). None otherwise."""
        from remedy.evaluate import evaluate

        syms = {s.signature for s in getattr(res, "symptoms", None) or []}
        if not syms:
            return None
        kb = self.kb
        violated = {v.rule for v in evaluate(kb, facts.model_dump()).errors_only()}
        last, rules = None, []
        for j in range(after + 1, len(plan.steps)):
            for rid in plan.steps[j].fixes:
                rule = kb.rules.get(rid)
                if rid in violated and rule is not None and syms & set(rule.rule.predicts):
                    last = j
                    rules.append(rid)
        return (last, sorted(set(rules))) if last is not None else None

    async def _restore(self, run_id: str, i: int, step: Step) -> None:
        await self.hs.agent("restore", self.hs.cp_dir(run_id, i), timeout=600)
        units = _reloads(step)
        if units:
            await self.t.run(["systemctl", "daemon-reload"], timeout=120)
            self.log(f"  reloaded systemd ({', '.join(units)})")

    async def _stop_leftovers(self, run_id: str) -> None:
        r = await self.t.run(
            ["sh", "-c", _STOP_LEFTOVERS, "sh", self.hs.run_dir(run_id)], timeout=60
        )
        for line in r.text().splitlines():
            self.log(f"  {line}")

    # -- the run --------------------------------------------------------------------------------
    async def run(
        self, plan: Plan, *, break_lock: str | None = None, check_stale: bool = True
    ) -> RunReport:
        t0 = time.monotonic()
        await self.hs.setup()
        run_id = uuid.uuid4().hex[:12]
        if plan.status in ("partial", "impossible"):
            # never "nothing to do" for a plan that could not fix the host
            return RunReport(
                "-",
                self.t.host,
                "no-complete-plan",
                verify_mode=self.verify,
                message=f"the plan is {plan.status}: "
                + ("; ".join(plan.unresolved) or "no complete fix found")
                + "; nothing was applied",
            )
        if plan.steps and plan.status not in APPLICABLE:
            raise PlanError(
                f"the plan's status is {plan.status!r} but it has {len(plan.steps)} step(s): "
                "only a complete plan ('ok', or 'unexplained': complete for its findings, with "
                "log lines none explains) is applied; nothing was run"
            )
        if plan.status == "nothing-to-do" or not plan.steps:
            if check_stale:
                await self._check_stale(plan)
            report = RunReport(
                run_id,
                self.t.host,
                "nothing-to-do",
                verify_mode=self.verify,
                message="every rule for the workload holds",
            )
            if plan.failed_operation is not None or plan.unexplained:
                # a log whose failure no step addresses: `nothing-to-do` only if the operation
                # that failed passes now (re-run, nothing applied, no lock: probes only)
                facts = await self._collect(plan) if plan.failed_operation else None
                await rerun_failed_operation(self, run_id, plan, facts, report, applied=False)
                report.seconds = time.monotonic() - t0
            return report
        # the lock first: a busy host is refused as busy (and no other run can change the
        # facts between the staleness check and the first step)
        await self._lock(run_id, "run", break_lock)
        started = False
        try:
            if check_stale:
                await self._check_stale(plan)
            pending = [r for r in await self.runs() if r["outcome"] == "interrupted"]
            if pending:
                p = pending[-1]
                raise LockHeld(
                    f"run {p['run_id']} on {self.t.host} was interrupted (last record: "
                    f"{p['last_event']}"
                    + (f" of step {p['last_step'] + 1}" if p.get("last_step") is not None else "")
                    + "): the host may be half-changed",
                    hint=f"`remedy resume {self.t.host}` finishes it, `remedy resume "
                    f"{self.t.host} --rollback` undoes it",
                )
            await self._check_executables(plan, 0)
            await self.hs.agent(
                "write",
                f"{self.hs.run_dir(run_id)}/plan.json",
                "600",
                input=plan.model_dump_json().encode(),
            )
            self.current = RunReport(run_id, self.t.host, "interrupted", verify_mode=self.verify)
            started = True
            await self._journal(
                run_id,
                "start",
                None,
                host=self.t.host,
                owner=self.owner,
                steps=len(plan.steps),
                facts_digest=plan.facts_digest,
                remedy_version=__version__,
                verify=self.verify,
            )
            report = await self._run_steps(run_id, plan, 0)
        except BaseException:
            # the journal says where it stopped; the lock stays so that only `resume` (or
            # --break-lock) goes on from a half-applied host. Before `start` nothing changed.
            if not started:
                with _suppress_transport():
                    await self._unlock(run_id)
            raise
        await self._unlock(run_id)
        report.seconds = time.monotonic() - t0
        return report

    async def _check_executables(self, plan: Plan, start: int) -> None:
        """Refuse (nothing changed yet) when a step from `start` on would run an interpreter
        that is not trusted (remedy.trust: it, its bin dir, its env and site-packages owned
        by root or remedy's user, not writable by others): `pip install` into a venv its
        service user owns ran that user's python (and every .pth in its site-packages) as
        root. Probes already refused such an env; a step did not."""
        from remedy.trust import untrusted_reason, write_check_argv

        dirs = [d for s in plan.steps[start:] for d in s.operation.writes_under()]
        argv = write_check_argv(dirs)
        if argv is not None:
            r = await self.t.run(argv, timeout=30)
            if r.exit_status != 0:
                said = r.text().strip().splitlines()
                raise Refused(
                    f"refusing to apply the plan on {self.t.host}: a step would write in a "
                    f"directory another user can change ("
                    f"{said[-1] if said else 'the check failed'}); nothing was changed",
                    hint="run that step as the tree's owner (the plan shows its command), "
                    "or give the tree to root",
                )
        from remedy.trust import login_value_paths, untrusted_login_value

        for s in plan.steps[start:]:
            op = s.operation
            # SetEnv by its tag: the executor does not import operations (docs/ARCHITECTURE.md)
            if getattr(op, "op", None) != "env" or getattr(op, "scope", None) != "profile":
                continue
            why = await untrusted_login_value(self.t, login_value_paths(op.set))
            if why:
                raise Refused(
                    f"refusing to apply the plan on {self.t.host}: step {s.action!r} would "
                    f"put a path in every login's environment (root's too) that is "
                    f"{why.removeprefix('not trusted: ')}; nothing was changed",
                    hint="give the tree to root, or set the variable in that user's own "
                    "environment (the unit's drop-in for a service)",
                )
        if plan.steps[start:]:
            # every program a step runs by name comes from the step's own PATH (the system
            # PATH): a root-owned /usr/local/bin holding another user's `as` ran it as root
            # under the stub's `cc` (redteam-24); its `ninja`, `make`, `x86_64-linux-gnu-gcc`
            # under a pip-install's source build, its `ln` under a link-layout step
            # (redteam-27): every entry of every directory there is judged; a compile's own
            # names first (the message names them)
            # The whole system PATH, though the transport leaves a /usr/local directory that
            # holds another user's program off the PATH it gives (remedy.syspath
            # own_tools_path): a change as root is refused, saying why, rather than made with
            # a PATH the administrator did not choose (redteam-28)
            from remedy.transport.base import SYSTEM_PATH
            from remedy.trust import STEP_PATH_NAMES, untrusted_on_path

            compiles = any(s.operation.runs_compiler() for s in plan.steps[start:])
            names = STEP_PATH_NAMES if compiles else ()
            why = await untrusted_on_path(self.t, names, SYSTEM_PATH, every_entry=True)
            if why:
                raise Refused(
                    f"refusing to apply the plan on {self.t.host}: a step would run a program "
                    f"found on the system PATH, and {why.removeprefix('not executed: ')}; "
                    "nothing was changed",
                    hint="give that file to root (or remove it), or apply the plan where the "
                    "system PATH holds only root's programs",
                )
        pythons = list(
            dict.fromkeys(p for s in plan.steps[start:] for p in s.operation.runs_pythons())
        )
        if not pythons:
            return
        why = await untrusted_reason(self.t, [], pythons=pythons)
        if why:
            raise Refused(
                f"refusing to apply the plan on {self.t.host}: a step would run "
                f"{why.removeprefix('not executed: ')}; nothing was changed",
                hint="run that step as the env's owner (the plan shows its command), "
                "or give the env to root",
            )

    async def _check_stale(self, plan: Plan) -> None:
        """Terraform's rule, with what Terraform does not say: the fact diff. Values that
        differ per SSH session (SESSION_ENV) are not facts about the host and are compared
        without; everything else the plan was made from must be unchanged."""
        from remedy.planner.plan import facts_diff, facts_digest

        if plan.host != self.t.host:
            raise StalePlan(
                f"the plan was made for {plan.host!r}, not for {self.t.host!r}: refusing to "
                f"apply it to {self.t.host}; run `remedy plan` for that host",
                [f"host: plan {plan.host!r}, target {self.t.host!r}"],
            )
        if facts_digest(plan.facts) != plan.facts_digest:
            raise PlanError(
                "the saved plan's facts do not match its facts_digest (edited or damaged); "
                "run `remedy plan` again"
            )
        now = await self._collect(plan)
        was, is_ = _host_facts(plan.facts), _host_facts(now)
        if facts_digest(was) != facts_digest(is_):
            raise StalePlan(
                f"the plan is stale: {self.t.host}'s facts changed since it was made; run "
                "`remedy plan` again",
                facts_diff(was, is_),
            )

    async def _run_steps(
        self,
        run_id: str,
        plan: Plan,
        start: int,
        deferred: dict[int, int] | None = None,
        report: RunReport | None = None,
    ) -> RunReport:
        report = report or RunReport(run_id, self.t.host, "fixed", verify_mode=self.verify)
        report.outcome = "fixed"
        self.current = report
        deferred = dict(deferred or {})
        facts = plan.facts
        # resumed: the host as it is now for what runs before the next static re-check (the
        # proofs that came due before the interruption, or the final verification)
        if start > 0 and (deferred or start >= len(plan.steps)):
            facts = await self._collect(plan)
            if deferred and await self._due_proofs(
                run_id, plan, start - 1, facts, deferred, report
            ):
                return report
        for i in range(start, len(plan.steps)):
            step = plan.steps[i]
            ts = time.monotonic()
            self.log(f"step {i + 1}/{len(plan.steps)}: {step.title}")
            await self._journal(
                run_id,
                "intent",
                i,
                action=step.action,
                touches=[t.model_dump() for t in step.touches],
            )
            try:
                await self.hs.agent(
                    "capture",
                    self.hs.cp_dir(run_id, i),
                    input=json.dumps(checkpoint_spec(step)).encode(),
                    timeout=600,
                )
            except TransportError:
                raise
            except RemedyError as exc:
                # (a full disk, an unreadable file): the step has not run, so nothing of it
                # needs restoring; the steps before it are rolled back as for any failure
                why = f"its checkpoint could not be written, so it was not applied: {exc}"
                self.log(f"  step failed: {why}")
                await self._journal(run_id, "checkpoint_failed", i, detail=str(exc)[:2000])
                report.steps.append(
                    StepReport(
                        i,
                        step.action,
                        step.title,
                        "failed",
                        step.probe,
                        None,
                        why,
                        time.monotonic() - ts,
                    )
                )
                await self._fail(
                    run_id, plan, report, None, None, f"step {i + 1} ({step.action}): {why}"
                )
                return report
            await self._journal(run_id, "checkpoint", i)
            ok, why = await self._apply(run_id, i, step)
            stage = "failed to apply"
            defer: tuple[int, list[str]] | None = None
            probe_ok: bool | None = None
            if ok:
                await self._journal(run_id, "applied", i)
                stage = "failed its static re-check"
                ok, why, facts_now = await self._static_check(plan, step)
                if ok:
                    facts = facts_now
                    stage = "failed its proof"
                    self.phase = f"step {i + 1}"
                    pok, pdetail, res = await self._probe(step.probe, facts, step.params)
                    probe_ok = pok
                    if pok is False:
                        defer = self._explained_later(plan, i, facts, res)
                    if defer is not None:
                        why = (
                            f"{why}; {step.probe} failed with what "
                            f"{', '.join(defer[1])} predicts (repaired by step "
                            f"{defer[0] + 1}): proof deferred to after step {defer[0] + 1}"
                            f" ({pdetail})"
                        )
                        probe_ok = None
                        self.log(
                            f"  {step.probe}: failure explained by "
                            f"{', '.join(defer[1])}, which step {defer[0] + 1} repairs: "
                            "proof deferred"
                        )
                    else:
                        ok = pok is not False
                        why = pdetail if not ok else f"{why}; {step.probe}: {pdetail}"
                await self._journal(
                    run_id,
                    "probed",
                    i,
                    ok=ok,
                    detail=why[:2000],
                    deferred_to=defer[0] if defer else None,
                )
            if not ok:
                self.log(f"  step failed: {why}")
                report.steps.append(
                    StepReport(
                        i,
                        step.action,
                        step.title,
                        "rolled-back",
                        step.probe,
                        False,
                        why,
                        time.monotonic() - ts,
                    )
                )
                report.wrong_finding = list(step.fixes)
                await self._fail(
                    run_id, plan, report, i, step, f"step {i + 1} ({step.action}) {stage}: {why}"
                )
                return report
            await self._journal(run_id, "committed", i, deferred_to=defer[0] if defer else None)
            report.steps.append(
                StepReport(
                    i,
                    step.action,
                    step.title,
                    "committed",
                    step.probe,
                    probe_ok,
                    why,
                    time.monotonic() - ts,
                    deferred_to=defer[0] if defer else None,
                )
            )
            if defer is not None:
                deferred[i] = defer[0]
            if await self._due_proofs(run_id, plan, i, facts, deferred, report):
                return report
        # (none left here: a proof waits only for a later step; never skip one all the same)
        if deferred and await self._due_proofs(
            run_id, plan, len(plan.steps), facts, deferred, report
        ):
            return report
        await self._journal(run_id, "verify", None, mode=self.verify)
        await self._verify(plan, facts, report)
        failed = [
            f"{v['consumer']}: {v['detail']}" for v in report.verification if v["ok"] is False
        ]
        if failed:
            msg = "final verification failed: " + "; ".join(failed)
            if self.rollback_all:
                await self._fail(run_id, plan, report, None, None, msg)
                return report
            report.outcome = "needs-attention"
            report.message = msg
        else:
            # the operation the log came from, re-run: `fixed` only if it passes
            if await rerun_failed_operation(self, run_id, plan, facts, report):
                return report
            from remedy.executor.services import settle_services

            await settle_services(self.t, plan, report, self.verify, self.log)
            claim_unverified(plan, report)
        await self._journal(
            run_id,
            "finished",
            None,
            outcome=report.outcome,
            **({"restart_pending": report.restart_pending} if report.restart_pending else {}),
        )
        return report

    async def _due_proofs(
        self,
        run_id: str,
        plan: Plan,
        upto: int,
        facts: Facts,
        deferred: dict[int, int],
        report: RunReport,
    ) -> bool:
        """Run the deferred proofs that are due after step `upto`; True when one failed (the
        run was then rolled back and `report` says why)."""
        for k in sorted(k for k, due in deferred.items() if due <= upto):
            st = plan.steps[k]
            self.log(f"proof of step {k + 1} ({st.action}), deferred until now: {st.probe}")
            self.phase = f"proof of step {k + 1} after step {upto + 1}"
            from remedy.executor.services import facts_for

            pok, pdetail, res = await self._probe(st.probe, facts_for(facts, st.scope), st.params)
            again = self._explained_later(plan, upto, facts, res) if pok is False else None
            sr = next((s for s in report.steps if s.index == k), None)
            if again is not None:
                deferred[k] = again[0]
                await self._journal(
                    run_id, "proof_deferred", k, deferred_to=again[0], detail=pdetail[:2000]
                )
                if sr:
                    sr.deferred_to = again[0]
                continue
            del deferred[k]
            await self._journal(run_id, "proved", k, ok=pok is not False, detail=pdetail[:2000])
            if sr:
                sr.probe_ok = pok
                sr.detail = f"{sr.detail}; proved after step {upto + 1}: {pdetail}"
            if pok is False:
                report.wrong_finding = list(st.fixes)
                await self._fail(
                    run_id,
                    plan,
                    report,
                    None,
                    None,
                    f"step {k + 1} ({st.action}) failed its proof (run after step "
                    f"{upto + 1}): {pdetail}",
                )
                return True
        return False

    async def _fail(
        self,
        run_id: str,
        plan: Plan,
        report: RunReport,
        i: int | None,
        step: Step | None,
        message: str,
    ) -> None:
        """Undo: the failed step from its checkpoint, then every committed step, newest
        first. A restore that fails leaves the host for a person: needs-attention."""
        try:
            if step is not None and i is not None:
                await self._restore(run_id, i, step)
                await self._journal(run_id, "rolled_back", i, reason=message[:2000])
            if self.rollback_all:
                await self._rollback_committed(run_id, plan, report)
        except TransportError:
            raise
        except RemedyError as exc:
            report.outcome = "needs-attention"
            report.message = f"{message}; and rolling back failed: {exc}"
            await self._journal(run_id, "finished", None, outcome=report.outcome)
            return
        report.outcome = (
            "rolled-back" if self.rollback_all or step is not None else "needs-attention"
        )
        report.message = message + (
            "; the host is back as it was before the run" if self.rollback_all else ""
        )
        await self._journal(run_id, "finished", None, outcome=report.outcome)

    def _verifications(self, plan: Plan) -> list[tuple[Any, list[str], bool, str]]:
        """(verification, probes to try, whether all must pass, note) per consumer."""
        out: list[tuple[Any, list[str], bool, str]] = []
        for v in plan.verification:
            chain = [v.probe, *v.fallbacks]
            if v.probe == "-":
                out.append((v, [], False, v.detail or ""))
            elif self.verify == "full":
                out.append((v, chain, False, ""))
            elif set(chain) & BUILD_PROBES:
                out.append((v, list(CHEAP_FOR_BUILD), True, f"cheap, instead of {v.probe}"))
            elif set(chain) & LAUNCH_PROBES:
                out.append((v, list(CHEAP_FOR_LAUNCH), True, f"cheap, instead of {v.probe}"))
            else:
                out.append((v, [], False, f"not run: {v.probe} has no cheap stand-in"))
        return out

    async def _verify(self, plan: Plan, facts: Facts, report: RunReport) -> None:
        """One verification per consumer of the workload: its expensive probe (or the first
        fallback that can run here), or the cheap probes of verify='cheap'."""
        report.verify_mode = self.verify
        self.phase = "verify"
        from remedy.executor.services import facts_for

        all_facts = facts
        for v, probes, all_of, note in self._verifications(plan):
            params = dict(getattr(v, "params", None) or {})
            facts = facts_for(all_facts, getattr(v, "scope", None))
            unit = params.get("unit") if v.probe == "launch-probe" else None
            if not probes:
                report.verification.append(
                    {"consumer": v.consumer, "probe": "-", "ok": None, "detail": note}
                    | ({"unit": unit} if unit else {})
                )
                continue
            used, vok, vdetail = probes[0], None, ""
            if all_of:
                parts, oks = [], []
                for pr in probes:
                    # env-probe reads FlashInfer's gate: its own consumer, the unit's env
                    who = None if pr == "env-probe" else v.consumer
                    ok1, d1, _ = await self._probe(pr, facts, params, consumer=who)
                    oks.append(ok1)
                    parts.append(f"{pr}: {d1}")
                used = "+".join(probes)
                vok = False if False in oks else (True if True in oks else None)
                vdetail = f"{note}; " + "; ".join(parts)
            else:
                for pr in probes:
                    used = pr
                    vok, vdetail, _ = await self._probe(pr, facts, params, consumer=v.consumer)
                    if vok is not None:
                        break
                if vok is not None:
                    report.expensive_verifications += 1
            report.verification.append(
                {"consumer": v.consumer, "probe": used, "ok": vok, "detail": vdetail}
                | ({"unit": unit} if unit else {})
            )

    async def _rollback_committed(self, run_id: str, plan: Plan, report: RunReport) -> None:
        """Restore every step whose last record is `committed` (the journal's word, so a
        step restored earlier in this run's life is not restored twice), newest first."""
        last: dict[int, str] = {
            s.index: "committed" for s in report.steps if s.outcome == "committed"
        }
        for r in await self._records(run_id, len(plan.steps)):
            if r.get("step") is not None and r.get("event") in ("committed", "rolled_back"):
                last[r["step"]] = r["event"]
        done = sorted((i for i, ev in last.items() if ev == "committed"), reverse=True)
        for i in done:
            self.log(f"rolling back step {i + 1}: {plan.steps[i].title}")
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
        try:
            plan = Plan.model_validate_json(r.stdout)
        except ValueError as exc:
            first = " ".join(str(exc).splitlines()[:3])
            raise RunError(
                f"run {run_id}'s saved plan on {self.t.host} cannot be read: {first}"
            ) from None
        return plan, await self._records(run_id, len(plan.steps))

    async def runs(self) -> list[dict[str, Any]]:
        await self.hs.setup()
        _, data = await self.hs.agent("runs", self.hs.state_dir)
        items = data.get("runs", [])
        bad = [
            x
            for x in (items if isinstance(items, list) else [])
            if not isinstance(x, dict) or not isinstance(x.get("run_id"), str)
        ]
        if not isinstance(items, list) or bad:
            raise RemedyError(
                f"host agent 'runs' on {self.t.host} answered with no list of runs, "
                f"each naming its run: {str(bad[0] if bad else items)[:200]!r}"
            )
        out = []
        for item in items:
            # the first and last records of a journal: only the runner writes them, but a
            # damaged disk or a hostile host may not (a text start time made `history`'s
            # sort an internal error); a field of the wrong type is taken as missing
            last, first = _obj(item.get("last")), _obj(item.get("first"))
            outcome = last.get("outcome") if last.get("event") == "finished" else "interrupted"
            committed = item.get("committed")
            out.append(
                {
                    "run_id": item["run_id"],
                    "started": _typed(first.get("ts"), (int, float)),
                    "owner": _typed(first.get("owner"), str),
                    "operation": _typed(first.get("event"), str),
                    "outcome": _typed(outcome, str) or "interrupted",
                    "committed_steps": [
                        i
                        for i in (committed if isinstance(committed, list) else [])
                        if _typed(i, int) is not None and i >= 0
                    ],
                    "last_event": _typed(last.get("event"), str),
                    "last_step": _typed(last.get("step"), int),
                }
            )
        out.sort(key=lambda x: x.get("started") or 0)
        return out

    async def resume(
        self, *, rollback: bool = False, break_lock: str | None = None, run_id: str | None = None
    ) -> RunReport:
        """Finish (or, with rollback=True, undo) the newest interrupted run, or exactly the
        run named by run_id. break_lock: its id, to take it over from another machine (whose
        process remedy cannot see)."""
        t0 = time.monotonic()
        runs = [r for r in await self.runs() if r["outcome"] == "interrupted"]
        if run_id is not None:
            runs = [r for r in runs if r["run_id"] == run_id]
            if not runs:
                raise RemedyError(f"run {run_id} on {self.t.host} is not interrupted")
        _, held = await self.hs.agent("lock-read", self.hs.state_dir)
        h = held.get("held")
        if not runs:
            freed = await self._release_dead_lock(h)
            return freed or RunReport(
                "-", self.t.host, "nothing-to-do", message="no interrupted run"
            )
        run_id = runs[-1]["run_id"]
        if h and h.get("run_id") != run_id:
            raise LockHeld(
                f"{self.t.host} is locked by run {h.get('run_id')} of "
                f"{h.get('owner')}: not resuming {run_id}"
            )
        # "interrupted" only means no `finished` record yet: the run (or the resume that took
        # it over) may still be going in another remedy process on this machine
        owners = [
            str(r.get("owner") or "")
            for r in await self._records(run_id)
            if r.get("event") in ("start", "resume")
        ]
        last = owners[-1] if owners else ""
        if _remedy_alive_here(last):
            raise LockHeld(
                f"run {run_id} on {self.t.host} is still running in {last}: "
                "not resuming it (wait for it, or stop that process first)"
            )
        if _elsewhere(last) and break_lock != run_id:
            raise LockHeld(
                f"run {run_id} on {self.t.host} was last driven by {last}, another machine: "
                "remedy cannot tell whether it still runs there; not resuming it",
                hint=f"if that process is gone: add --break-lock {run_id}",
            )
        if not h:
            await self._lock(run_id, "resume")
        plan, recs = await self._load_run(run_id)
        start_rec = next((r for r in recs if r.get("event") == "start"), {})
        self.verify = (
            start_rec.get("verify", self.verify) if not self._verify_given else self.verify
        )
        await self._stop_leftovers(run_id)
        await self._journal(run_id, "resume", None, owner=self.owner, rollback=rollback)
        state: dict[int, str] = {}
        deferred: dict[int, int] = {}
        for r in recs:
            i = r.get("step")
            if i is None:
                continue
            ev = r["event"]
            if ev in ("proved",):
                deferred.pop(i, None)
                continue
            if ev in ("proof_deferred",) or (
                ev == "committed" and r.get("deferred_to") is not None
            ):
                deferred[i] = r["deferred_to"]
                if ev == "proof_deferred":
                    continue
            state[i] = ev
        # an interrupted step goes back to its checkpoint first (safe whatever ran)
        for i, ev in sorted(state.items()):
            if ev in ("checkpoint", "applied", "probed", "rollback_intent"):
                self.log(f"step {i + 1}: restoring its checkpoint (interrupted at {ev})")
                try:
                    await self._restore(run_id, i, plan.steps[i])
                except TransportError:
                    raise
                except RemedyError as exc:
                    report = RunReport(run_id, self.t.host, "needs-attention")
                    report.message = (
                        f"step {i + 1} of run {run_id} was interrupted at {ev} and restoring "
                        f"its checkpoint failed: {exc}"
                    )
                    report.hint = "fix the cause, then `remedy resume` again"
                    await self._unlock(run_id)
                    return report
                await self._journal(run_id, "rolled_back", i, reason=f"interrupted at {ev}")
                state[i] = "rolled_back"
        committed = sorted(i for i, ev in state.items() if ev == "committed")
        rolling_back = any(r.get("event") == "rollback_intent" for r in recs)
        if rollback or rolling_back:
            report = RunReport(run_id, self.t.host, "rolled-back", verify_mode=self.verify)
            self.current = report
            report.steps = [
                StepReport(
                    i, plan.steps[i].action, plan.steps[i].title, "committed", plan.steps[i].probe
                )
                for i in committed
            ]
            if await self._undo(run_id, plan, report):
                report.message = "the interrupted run was rolled back"
                await self._journal(run_id, "finished", None, outcome="rolled-back")
            await self._unlock(run_id)
            report.seconds = time.monotonic() - t0
            return report
        start = (max(committed) + 1) if committed else 0
        report = RunReport(run_id, self.t.host, "fixed", verify_mode=self.verify)
        report.steps = [
            StepReport(
                i,
                plan.steps[i].action,
                plan.steps[i].title,
                "committed",
                plan.steps[i].probe,
                None if i in deferred else True,
                "committed before the interruption",
                deferred_to=deferred.get(i),
            )
            for i in committed
        ]
        await self._check_executables(plan, start)
        report = await self._run_steps(run_id, plan, start, deferred, report)
        report.message = (
            report.message + " " if report.message else ""
        ) + f"(resumed at step {start + 1})"
        await self._unlock(run_id)
        report.seconds = time.monotonic() - t0
        return report

    async def _release_dead_lock(self, held: dict[str, Any] | None) -> RunReport | None:
        """With no interrupted run: a lock left by a run that finished (died before
        releasing it) or that never started (killed between taking the lock and its `start`
        record, i.e. during the staleness check: nothing of it ran) is released, unless its
        owner is a live process on this machine. None when there is no such lock."""
        if not held or not held.get("run_id"):
            return None
        rid = held["run_id"]
        finished = any(r["run_id"] == rid for r in await self.runs())
        owner = str(held.get("owner") or "")
        machine, pid = _parse_owner(owner)
        if not finished and machine == socket.gethostname() and _alive(pid):
            raise LockHeld(
                f"{self.t.host} is locked by run {rid} of {owner}, which is still running "
                "(it has not started changing anything yet)"
            )
        await self._unlock(rid)
        what = "had finished" if finished else "never started (no journal): nothing of it ran"
        if held.get("torn"):
            return RunReport(
                "-", self.t.host, "nothing-to-do",
                message="released an unreadable lock file that named no run",
            )  # fmt: skip
        return RunReport(
            rid, self.t.host, "nothing-to-do", message=f"run {rid} {what}; released its lock"
        )

    _verify_given = False

    def set_verify(self, mode: str | None) -> None:
        """An explicit verification mode (a resume otherwise keeps the run's own)."""
        if mode:
            if mode not in ("full", "cheap"):
                raise ValueError(f"verify must be 'full' or 'cheap', not {mode!r}")
            self.verify = mode
            self._verify_given = True

    async def rollback_target(self, run_id: str | None = None) -> dict[str, Any] | None:
        """What `rollback(run_id)` would restore, for the confirmation: {run_id, outcome,
        steps: [(index, title, touches)]}; None when it would restore nothing."""
        runs = await self.runs()
        if run_id:
            cands = [r for r in runs if r["run_id"] == run_id]
            if not cands:
                raise RemedyError(f"no run {run_id} on {self.t.host} (see `remedy history`)")
        else:
            # the run `rollback` itself picks (ROLLBACKABLE): the confirmation names that one
            cands = [r for r in runs if r["outcome"] in ROLLBACKABLE]
            if not cands:
                cands = [r for r in runs if r["outcome"] == "interrupted"]
        if not cands or cands[-1]["outcome"] not in (*ROLLBACKABLE, "interrupted"):
            return None
        target = cands[-1]
        plan, recs = await self._load_run(target["run_id"])
        idx = set(target["committed_steps"])
        if target["outcome"] == "interrupted":
            idx |= {r["step"] for r in recs if r.get("step") is not None}
        steps = [
            (i, plan.steps[i].title, plan.steps[i].touches)
            for i in sorted(idx)
            if 0 <= i < len(plan.steps)
        ]
        return {"run_id": target["run_id"], "outcome": target["outcome"], "steps": steps}

    async def rollback(
        self, run_id: str | None = None, *, break_lock: str | None = None
    ) -> RunReport:
        """Undo a finished run (the newest that left changes, or the one named); an
        interrupted one goes through resume(rollback=True) (break_lock: see resume)."""
        t0 = time.monotonic()
        runs = await self.runs()
        candidates = [r for r in runs if r["outcome"] in ROLLBACKABLE]
        if run_id:
            candidates = [r for r in runs if r["run_id"] == run_id]
            if not candidates:
                raise RemedyError(f"no run {run_id} on {self.t.host} (see `remedy history`)")
        if not candidates and any(r["outcome"] == "interrupted" for r in runs):
            return await self.resume(rollback=True, break_lock=break_lock)
        if not candidates:
            _, held = await self.hs.agent("lock-read", self.hs.state_dir)
            freed = await self._release_dead_lock(held.get("held"))
            return freed or RunReport(
                "-", self.t.host, "nothing-to-do", message="no run to roll back"
            )
        target = candidates[-1]
        if target["outcome"] == "interrupted":
            # exactly the run named (or found): never another interrupted one
            return await self.resume(rollback=True, break_lock=break_lock, run_id=target["run_id"])
        if target["outcome"] not in ROLLBACKABLE:
            return RunReport(
                target["run_id"],
                self.t.host,
                "nothing-to-do",
                message=f"run {target['run_id']} ended {target['outcome']}: "
                "nothing of it is applied",
            )
        rid = target["run_id"]
        await self._lock(rid, "rollback")
        plan, _ = await self._load_run(rid)
        report = RunReport(rid, self.t.host, "rolled-back")
        self.current = report
        report.steps = [
            StepReport(
                i, plan.steps[i].action, plan.steps[i].title, "committed", plan.steps[i].probe
            )
            for i in target["committed_steps"]
        ]
        await self._journal(rid, "rollback", None, owner=self.owner)
        if await self._undo(rid, plan, report):
            await self._journal(rid, "finished", None, outcome="rolled-back")
            report.message = f"run {rid} rolled back"
        await self._unlock(rid)
        report.seconds = time.monotonic() - t0
        return report

    async def _undo(self, run_id: str, plan: Plan, report: RunReport) -> bool:
        """Roll back every committed step; a restore that fails (a damaged checkpoint, a
        full disk) ends the run `needs-attention` (exit 6) with what failed, instead of an
        error: what was restored stays restored, the journal says which step is left, and
        `remedy rollback` can be run again once the cause is fixed."""
        try:
            await self._rollback_committed(run_id, plan, report)
            return True
        except TransportError:
            raise
        except RemedyError as exc:
            left = [s.index + 1 for s in report.steps if s.outcome == "committed"]
            report.outcome = "needs-attention"
            report.message = f"rolling back run {run_id} failed: {exc}; steps still applied: {left}"
            report.hint = f"fix the cause, then `remedy rollback {self.t.host} {run_id}` again"
            await self._journal(run_id, "finished", None, outcome="needs-attention")
            return False


def _parse_owner(owner: str) -> tuple[str, int]:
    """`user@machine pid N` (what Runner.owner writes) -> (machine, N); ("", 0) otherwise."""
    who, _, pid = owner.rpartition(" pid ")
    _, at, machine = who.rpartition("@")
    return (machine, int(pid)) if at and machine and pid.isdigit() else ("", 0)


def _elsewhere(owner: str) -> bool:
    """Whether `owner` names another machine (unparsable: no)."""
    machine, _ = _parse_owner(owner)
    return bool(machine) and machine != socket.gethostname()


def _remedy_alive_here(owner: str) -> bool:
    """Whether `owner` is another live remedy process on this machine (its command line
    names remedy: a reused pid does not block anything)."""
    machine, pid = _parse_owner(owner)
    if machine != socket.gethostname() or pid in (0, os.getpid()) or not _alive(pid):
        return False
    try:
        cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return True  # alive, and nothing says it is something else
    return b"remedy" in cmdline


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


class _suppress_transport:
    """Best effort clean-up on the way out of a failure: a second transport error must not
    replace the first."""

    def __enter__(self) -> None:
        return None

    def __exit__(self, et: Any, ev: Any, tb: Any) -> bool:
        return et is not None and issubclass(et, RemedyError)


def _typed(v: Any, kind: type | tuple[type, ...]) -> Any:
    """v when it is of that type (a bool is no number here), else None."""
    return v if isinstance(v, kind) and not isinstance(v, bool) else None


def _obj(v: Any) -> dict[str, Any]:
    return v if isinstance(v, dict) else {}


def _step_ok(v: Any, steps: int | None) -> bool:
    return _typed(v, int) is not None and v >= 0 and (steps is None or v < steps)


def _record_ok(r: Any, steps: int | None) -> bool:
    """A journal record of the runner's shape: an object whose event is text and whose step
    and deferred_to, when set, are steps of the plan."""
    if not isinstance(r, dict) or not isinstance(r.get("event"), str):
        return False
    return all(r.get(k) is None or _step_ok(r[k], steps) for k in ("step", "deferred_to"))


def _torn(r: Any) -> dict[str, Any]:
    return {"event": "torn", "raw": str(r)[:200]}
