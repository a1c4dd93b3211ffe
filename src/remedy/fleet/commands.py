"""What `remedy facts|plan|run --inventory FILE [--limit PATTERN]` do, put together from the
inventory, the fan-out, the plan groups, the rollout and the report.

Output discipline: progress goes to stderr as it happens (one line per host event), the
result (summary table, plan previews, or with --json ONE JSON document) goes to stdout.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from remedy.errors import (
    InputError,
    Interrupted,
    LockHeld,
    RemedyError,
    RollbackFailed,
    StalePlan,
    TransportError,
)
from remedy.fleet.fanout import (
    HostFacts,
    PlanGroup,
    collect_fleet,
    group_by_facts,
    open_host,
    plan_for_host,
    plan_groups,
)
from remedy.fleet.inventory import InventoryHost, load_inventory
from remedy.fleet.report import (
    FleetReport,
    GroupSummary,
    HostResult,
    counts,
    fleet_exit,
    print_summary,
)
from remedy.fleet.rollout import RolloutPolicy, RolloutResult, plan_batches, rollout
from remedy.interrupts import run_interruptible
from remedy.outcomes import exit_code_for, transport_outcome
from remedy.redact import redact_obj, redact_text
from remedy.report.safe import json_safe, strip_controls


@dataclass
class FleetTarget:
    inventory: Path
    limit: str | None = None
    forks: int = 20
    ssh_config: str | None = None
    accept_new: bool = False
    connect_timeout: float = 10.0

    def hosts(self) -> list[InventoryHost]:
        if self.forks < 1:
            raise InputError("--forks must be at least 1")
        inv = load_inventory(self.inventory)
        return inv.select(self.limit)

    def opener(self) -> Callable[[InventoryHost], Any]:
        def make(h: InventoryHost) -> Any:
            return open_host(
                h,
                ssh_config=self.ssh_config,
                accept_new=self.accept_new,
                connect_timeout=self.connect_timeout,
            )

        return make


def _console(stderr: bool = False) -> Any:
    """The one terminal console (remedy.report.console): host names, plans and messages
    from many hosts are redacted and lose their control characters, as for one host."""
    from remedy.report.console import terminal_console

    return terminal_console(sys.stderr if stderr else sys.stdout)


class Progress:
    """One line per host event on stderr: `[ 3/20] gpu03 facts ok (1.2 s)`."""

    def __init__(self, total: int, quiet: bool = False) -> None:
        self.total = total
        self.done = 0
        self.quiet = quiet
        from remedy.report.console import terminal_console

        self.con = terminal_console(sys.stderr)
        self.con.soft_wrap = True
        self.width = len(str(total))

    def start(self, what: str) -> None:
        self.done = 0
        if not self.quiet:
            self.con.print(what, markup=False, highlight=False)

    def __call__(self, host: str, text: str) -> None:
        self.done += 1
        if not self.quiet:
            self.con.print(
                f"[{self.done:>{self.width}}/{self.total}] {host}: {text}",
                markup=False,
                highlight=False,
            )


def _failed_result(hf: HostFacts) -> HostResult:
    exc = hf.error
    assert exc is not None
    return HostResult(
        host=hf.name,
        address=hf.host.connection.address if _safe_conn(hf.host) else None,
        outcome=transport_outcome(exc) if isinstance(exc, TransportError) else "error",
        exit_code=exc.exit_code,
        message=redact_text(exc.message),
        hint=exc.hint or "",
        seconds=round(hf.seconds, 2),
    )


def _safe_conn(h: InventoryHost) -> bool:
    try:
        h.connection  # noqa: B018 - raises on bad connection variables
    except RemedyError:
        return False
    return True


async def _collect(
    target: FleetTarget, hosts: list[InventoryHost], service: str | None, quiet: bool
) -> list[HostFacts]:
    prog = Progress(len(hosts), quiet)
    prog.start(f"collecting facts from {len(hosts)} host(s), {target.forks} at a time")

    def done(hf: HostFacts) -> None:
        if hf.error is None:
            prog(hf.name, f"facts ok ({hf.seconds:.1f} s)")
        else:
            prog(hf.name, f"FAILED: {redact_text(hf.error.message)}")

    return await collect_fleet(
        hosts,
        target.opener(),
        forks=target.forks,
        services=lambda h: _wanted_units(h, service),
        on_done=done,
    )


# --------------------------------------------------------------------------------------------
# remedy facts --inventory
# --------------------------------------------------------------------------------------------


def fleet_facts(target: FleetTarget, *, json_: bool) -> int:
    import json

    from remedy.fleet.fanout import fleet_key

    hosts = target.hosts()
    items = run_interruptible(lambda: _collect(target, hosts, None, quiet=False))
    groups = {g.key: g.id for g in group_by_facts(items)}
    rows = []
    for hf in items:
        rows.append(
            {
                "host": hf.name,
                "ok": hf.facts is not None,
                "group": groups.get(fleet_key(hf.facts)) if hf.facts else None,
                "error": hf.error.message if hf.error else None,
                "exit_code": hf.error.exit_code if hf.error else 0,
                "facts": hf.facts.model_dump(mode="json") if hf.facts else None,
            }
        )
    rc = 4 if any(not r["ok"] for r in rows) else 0
    if json_:
        doc = {
            "inventory": str(target.inventory),
            "limit": target.limit,
            "exit_code": rc,
            "groups": len(groups),
            "hosts": rows,
        }
        sys.stdout.write(json_safe(json.dumps(redact_obj(doc), indent=2, default=str)) + "\n")
        return rc
    from rich.markup import escape
    from rich.table import Table

    t = Table(
        title=f"facts of {len(rows)} host(s) — {len(groups)} distinct fact set(s)",
        title_justify="left",
    )
    for col in ("host", "facts set", "os", "GPUs", "toolkits", "pythons", "error"):
        t.add_column(col, overflow="fold")
    for r, hf in zip(rows, items, strict=True):
        f = hf.facts
        t.add_row(
            escape(r["host"]),
            str(r["group"] or "-"),
            escape((f.os or "?") if f else "-"),
            ", ".join(sorted({g.name for g in f.gpus})) or "none" if f else "-",
            str(len(f.toolkits)) if f else "-",
            str(len(f.pythons)) if f else "-",
            f"[red]{escape(r['error'])}[/]" if r["error"] else "",
        )
    _console().print(t)
    return rc


# --------------------------------------------------------------------------------------------
# plans, one per group
# --------------------------------------------------------------------------------------------


def _with_workload(kb: Any, hf: HostFacts, service: str | None, launch: str | None) -> None:
    """The scopes of one host (remedy.scope): --service, else the inventory's
    `remedy_services` for the host or its groups, else the units and shell that fail."""
    from remedy.scope import inventory_services, with_scopes

    f = hf.facts
    if f is None:
        return
    try:
        named = None if service or launch else inventory_services(hf.host.vars, hf.name)
        with_scopes(kb, f, service=service, launch=launch, services=named)
    except InputError as exc:
        hf.error = InputError(f"{hf.name}: {exc.message}", hint=exc.hint)
        hf.facts = None


def _wanted_units(h: InventoryHost, service: str | None) -> list[str] | None:
    """Units whose facts must be read even when no ExecStart mentions SGLang."""
    from remedy.scope import inventory_services

    if service:
        return [service]
    try:
        return inventory_services(h.vars, h.name)
    except InputError:
        return None  # reported when the host's scopes are chosen


def _plan_all(
    target: FleetTarget, service: str | None, launch: str | None, quiet: bool
) -> tuple[list[InventoryHost], list[HostFacts], list[PlanGroup], float]:
    if service and launch:
        raise InputError("give --service or --launch, not both")
    hosts = target.hosts()
    t0 = time.monotonic()
    items = run_interruptible(lambda: _collect(target, hosts, service, quiet))
    from remedy.knowledge.loader import load_knowledge
    from remedy.planner.plan import make_plan

    kb = load_knowledge()
    for hf in items:
        _with_workload(kb, hf, service, launch)
    groups = group_by_facts(items)
    if groups:
        plan_groups(groups, lambda f: make_plan(kb, f))
    return hosts, items, groups, time.monotonic() - t0


def _group_summary(g: PlanGroup) -> GroupSummary:
    p = g.plan
    assert p is not None
    return GroupSummary(
        id=g.id,
        facts_key=g.key,
        status=p.status,
        hosts=g.hosts,
        steps=[f"{s.action}: {s.title}" for s in p.steps],
        unresolved=list(p.unresolved),
    )


def _preview(groups: list[PlanGroup], explain: bool = False) -> None:
    from rich.markup import escape

    from remedy.report.terminal import print_plan

    con = _console()
    for g in groups:
        p = g.plan
        assert p is not None
        names = ", ".join(g.hosts[:8]) + (
            f", … ({len(g.hosts)} in all)" if len(g.hosts) > 8 else ""
        )
        con.print(
            f"[bold]plan group {g.id}[/] — {len(g.hosts)} host(s) with the same facts: "
            f"{escape(names)}"
        )
        if p.status == "nothing-to-do":
            con.print("  [green]nothing to do[/]: every rule for the target workload holds")
            continue
        print_plan(con, p, explain=explain)


def fleet_plan(
    target: FleetTarget, *, json_: bool, explain: bool, service: str | None, launch: str | None
) -> int:
    import json

    _, items, groups, secs = _plan_all(target, service, launch, quiet=False)
    failed = [_failed_result(hf) for hf in items if hf.facts is None]
    rc = (
        3
        if any(g.plan and g.plan.status in ("partial", "impossible") for g in groups)
        else (
            8
            if any(r.outcome == "host-key-rejected" for r in failed)
            else 4
            if any(r.outcome == "unreachable" for r in failed)
            else 2
            if failed
            else 0
        )
    )
    if json_:
        rep = FleetReport(
            command="plan",
            inventory=str(target.inventory),
            limit=target.limit,
            exit_code=rc,
            groups=[_group_summary(g) for g in groups],
            hosts=failed,
            counts=counts(failed),
            seconds=round(secs, 2),
        )
        doc = rep.model_dump(mode="json")
        doc["plans"] = {str(g.id): g.plan.model_dump(mode="json") for g in groups if g.plan}
        sys.stdout.write(json_safe(json.dumps(redact_obj(doc), indent=2, default=str)) + "\n")
        return rc
    from rich.markup import escape

    _preview(groups, explain)
    con = _console()
    for r in failed:
        con.print(
            f"[red]{r.outcome}[/] {escape(r.host)}: {escape(redact_text(r.message))}",
            highlight=False,
        )
    con.print(
        f"{sum(len(g.hosts) for g in groups)} host(s) in {len(groups)} plan group(s), "
        f"{len(failed)} failed; {secs:.1f} s",
        highlight=False,
    )
    return rc


# --------------------------------------------------------------------------------------------
# remedy run --inventory
# --------------------------------------------------------------------------------------------


def _run_error(exc: RemedyError, host: str, runner: Any) -> tuple[str, str, str]:
    """(outcome, message, hint) of a host's run that ended in a remedy error (cli's rules)."""
    cur = getattr(runner, "current", None)
    if isinstance(exc, (LockHeld, StalePlan)):
        return "refused", exc.message, exc.hint or ""
    if isinstance(exc, RollbackFailed):
        return "needs-attention", exc.message, exc.hint or ""
    if isinstance(exc, TransportError):
        if cur is not None:
            return (
                "interrupted",
                f"{exc.message}; run {cur.run_id} was interrupted, the host keeps remedy's lock",
                f"`remedy resume {host}` finishes it, `remedy resume {host} --rollback` undoes it",
            )
        return transport_outcome(exc), exc.message, exc.hint or ""
    return "error", exc.message, exc.hint or ""


def _cut_off_rollout(
    exc: Interrupted,
    to_run: list[str],
    policy: RolloutPolicy,
    group_of: dict[str, int],
    finished: dict[str, Any],
    started: set[str],
) -> RolloutResult:
    """What the rollout had done when a second signal cancelled it: the finished hosts'
    results; hosts cut off are reported by the caller; the rest never started."""
    ro = RolloutResult(batches=plan_batches(to_run, policy, group_of.get))
    ro.results = dict(finished)
    ro.stopped = True
    ro.stop_reason = (
        f"{exc.message} (twice): no further host was started, hosts in flight were stopped"
    )
    ro.skipped = [h for h in to_run if h not in started]
    return ro


def _cut_off_result(exc: Interrupted, host: str, runner: Any) -> HostResult:
    """A host whose run a signal cancelled: interrupted (lock kept) once its journal has a
    record, else nothing of it ran (the runner released the lock on the way out)."""
    last = getattr(runner, "last_event", None)
    cur = getattr(runner, "current", None)
    if last is None:
        return HostResult(
            host=host,
            outcome="skipped",
            exit_code=exit_code_for("skipped"),
            message=f"{exc.message} before remedy changed anything",
        )
    return HostResult(
        host=host,
        outcome="interrupted",
        exit_code=4,
        run_id=last[0],
        message=f"{exc.message}: run {last[0]} stopped ({runner.stopped_at()}), "
        "the host keeps remedy's lock",
        hint=f"`remedy resume {host}` finishes it, `remedy resume {host} --rollback` undoes it",
        steps=[dict(s.__dict__) for s in cur.steps] if cur else [],
    )


def _hint_with_inventory(hint: str, host: str, inventory: Path) -> str:
    """`remedy resume gpu07` names an inventory alias: the hint says where it is defined."""
    import shlex

    inv = shlex.quote(str(inventory))
    for cmd in ("resume", "rollback"):
        hint = hint.replace(
            f"`remedy {cmd} {host}", f"`remedy {cmd} {shlex.quote(host)} --inventory {inv}"
        )
    return hint


def inventory_transport(
    inventory: Path, host: str, *, ssh_config: str | None = None, accept_new: bool = False
) -> Any:
    """The transport to one host of an inventory, by its inventory name (for `remedy resume
    HOST --inventory FILE` and `remedy rollback`, as a fleet run's hints print them)."""
    inv = load_inventory(inventory)
    h = inv.hosts.get(host)
    if h is None:
        raise InputError(
            f"no host {host!r} in {inventory}",
            hint="hosts: "
            + ", ".join(list(inv.hosts)[:20])
            + (" …" if len(inv.hosts) > 20 else ""),
        )
    return open_host(h, ssh_config=ssh_config, accept_new=accept_new, connect_timeout=10.0)


def fleet_run(
    target: FleetTarget,
    policy: RolloutPolicy,
    *,
    yes: bool,
    json_: bool,
    verify: str | None,
    service: str | None,
    launch: str | None,
    log: Callable[[str], None] | None = None,
) -> int:
    import json

    log = log or (lambda _m: None)
    t0 = time.monotonic()
    hosts, items, groups, _ = _plan_all(target, service, launch, quiet=False)
    by_name = {hf.name: hf for hf in items}
    results: dict[str, HostResult] = {}
    for hf in items:
        if hf.facts is None:
            results[hf.name] = _failed_result(hf)
    plan_of: dict[str, Any] = {}
    group_of: dict[str, int] = {}
    for g in groups:
        assert g.plan is not None
        for hf in g.members:
            group_of[hf.name] = g.id
            if g.plan.status == "nothing-to-do" or not g.plan.steps:
                results[hf.name] = HostResult(
                    host=hf.name,
                    outcome="nothing-to-do",
                    exit_code=10,
                    group=g.id,
                    message="every rule for the workload holds",
                )
            elif g.plan.status in ("partial", "impossible"):
                results[hf.name] = HostResult(
                    host=hf.name,
                    outcome="no-complete-plan",
                    exit_code=3,
                    group=g.id,
                    message=f"the plan is {g.plan.status}: "
                    + ("; ".join(g.plan.unresolved) or "no complete fix found"),
                )
            else:
                assert hf.facts is not None
                plan_of[hf.name] = plan_for_host(g.plan, hf.facts)
    to_run = [h.name for h in hosts if h.name in plan_of]
    for name in to_run:
        p = plan_of[name]
        log(
            f"[{name}] plan group {group_of[name]}: {len(p.steps)} step(s): "
            + ", ".join(s.action for s in p.steps)
        )
    if not json_:
        _preview(groups)
    if to_run and not yes:
        if not sys.stdin.isatty():
            raise InputError(
                "refusing to apply without confirmation: no terminal to ask on",
                hint="pass --yes for unattended runs",
            )
        import typer

        from remedy.interrupts import prompting

        with prompting():  # a run holds signals until its work: not while it waits on a human
            ok = typer.confirm(
                f"Apply to {len(to_run)} host(s) (canary {policy.canary}, then batches)?"
            )
        if not ok:
            raise InputError("not confirmed")

    prog = Progress(len(to_run))
    if to_run:
        prog.start(
            f"applying to {len(to_run)} host(s): canary {min(policy.canary, len(to_run))}"
            f", batch size {policy.batch_size or 'all'}, forks {policy.forks}, "
            f"max errors {policy.max_errors}"
        )

    # signals (remedy.interrupts): the first stops new starts, hosts in flight finish; a
    # second cancels those too, each where it stood (its lock kept for `remedy resume`)
    signals: list[int] = []
    started: set[str] = set()
    finished: dict[str, Any] = {}
    runners: dict[str, Any] = {}  # host -> its Runner, once it has one

    def first_signal(signum: int) -> None:
        import signal

        signals.append(signum)
        flying = len(started) - len(finished)
        msg = (
            f"{signal.Signals(signum).name}: no further host starts; {flying} host(s) in "
            "flight finish (a second signal stops them too, each keeping its lock for "
            "`remedy resume`)"
        )
        log(msg)
        if not prog.quiet:
            prog.con.print(msg, markup=False, highlight=False)

    def stop_reason() -> str:
        import signal

        if not signals:
            return ""
        return f"interrupted by {signal.Signals(signals[0]).name}: no further host was started"

    from remedy.knowledge.loader import load_knowledge

    kb = load_knowledge()  # one knowledge for every host's runner

    async def apply(name: str, batch: int) -> HostResult:
        from remedy.executor.runner import Runner
        from remedy.facts import collect_facts

        try:
            from remedy.probes import run_probe
        except ImportError:  # pragma: no cover
            run_probe = None

        started.add(name)
        hf = by_name[name]
        wanted = _wanted_units(hf.host, service)

        async def collect(tr: Any) -> Any:
            # the same collection the plan was made from (named units are always read)
            return await collect_facts(tr, services=wanted)

        t = None
        runner = None
        start = time.monotonic()
        try:
            t = open_host(
                hf.host,
                ssh_config=target.ssh_config,
                accept_new=target.accept_new,
                connect_timeout=target.connect_timeout,
            )
            runner = Runner(
                t,
                collect=collect,
                prober=run_probe,
                log=lambda m: log(f"[{name}] {m}"),
                verify=verify or "full",
                knowledge=kb,
            )
            runner.set_verify(verify)
            runners[name] = runner
            rep = await runner.run(plan_of[name], check_stale=True)
            res = HostResult(
                host=name,
                outcome=rep.outcome,
                exit_code=rep.exit_code,
                run_id=rep.run_id,
                message=rep.message,
                hint=rep.hint,
                steps=[dict(s.__dict__) for s in rep.steps],
                units=list(rep.units),
                restart_pending=list(rep.restart_pending),
            )
        except RemedyError as exc:
            outcome, msg, hint = _run_error(exc, name, runner)
            cur = getattr(runner, "current", None)
            res = HostResult(
                host=name,
                outcome=outcome,
                exit_code=exc.exit_code if outcome != "interrupted" else 4,
                run_id=cur.run_id if cur else None,
                message=msg,
                hint=hint,
                steps=[dict(s.__dict__) for s in cur.steps] if cur else [],
            )
        finally:
            if t is not None:
                await t.close()
        res.seconds = round(time.monotonic() - start, 2)
        res.group, res.batch = group_of[name], batch
        log(
            f"[{name}] outcome: {res.outcome} (exit {res.exit_code})"
            + (f": {res.message}" if res.message else "")
        )
        return res

    def on_result(name: str, r: Any) -> None:
        finished[name] = r
        steps = getattr(r, "steps", []) or []
        prog(
            name,
            f"{r.outcome}"
            + (f" ({len(steps)} step(s)" if steps else " (")
            + f"{', ' if steps else ''}{getattr(r, 'seconds', 0):.1f} s)"
            + (
                f": {redact_text(r.message[:200])}"
                if r.outcome not in ("fixed",) and r.message
                else ""
            ),
        )

    def go() -> Any:
        return rollout(
            to_run,
            apply,
            policy,
            on_result=on_result,
            kind_of=group_of.get,
            stop_reason=stop_reason,
        )

    try:
        ro = run_interruptible(go, on_first=first_signal)
    except Interrupted as exc:
        ro = _cut_off_rollout(exc, to_run, policy, group_of, finished, started)
        signals[:1] = signals[:1] or [exc.signum]
        for name in sorted(started - set(finished)):  # in flight at the second signal
            results[name] = _cut_off_result(exc, name, runners.get(name))
            results[name].group = group_of.get(name)
    for name, r in ro.results.items():
        if isinstance(r, HostResult):
            results[name] = r
        else:  # the scheduler's HostFailure: a bug in remedy, reported, never a traceback
            results[name] = HostResult(
                host=name,
                outcome="error",
                exit_code=70,
                group=group_of.get(name),
                batch=ro.batch_of.get(name),
                message=f"internal error: {r.message}",
            )
    for name in ro.skipped:
        results[name] = HostResult(
            host=name,
            outcome="skipped",
            exit_code=exit_code_for("skipped"),
            group=group_of.get(name),
            message="not started: the rollout stopped before it",
        )
    for r in results.values():  # a command's output can echo a secret remedy never saw
        r.hint = _hint_with_inventory(r.hint, r.host, target.inventory)
        r.message, r.hint = redact_text(r.message), redact_text(r.hint)
        r.steps = redact_obj(r.steps)
        hf = by_name.get(r.host)
        if hf is not None and r.address is None and _safe_conn(hf.host):
            r.address = hf.host.connection.address
    ordered = [results[h.name] for h in hosts]
    rep = FleetReport(
        command="run",
        inventory=str(target.inventory),
        limit=target.limit,
        stopped=ro.stopped,
        stop_reason=ro.stop_reason,
        policy={
            "canary": policy.canary,
            "batch_size": str(policy.batch_size or "all"),
            "max_errors": str(policy.max_errors),
            "allowed_errors": ro.allowed_errors,
            "forks": policy.forks,
            "verify": verify or "full",
            "batches": ro.batches,
        },
        groups=[_group_summary(g) for g in groups],
        hosts=ordered,
        counts=counts(ordered),
        seconds=round(time.monotonic() - t0, 2),
    )
    rep.exit_code = fleet_exit(ordered, stopped=ro.stopped, signal=signals[0] if signals else None)
    log(f"fleet outcome: exit {rep.exit_code}; " + json.dumps(rep.counts))
    if rep.stopped:  # on stderr too, so a --json run's terminal or CI log says why it stopped
        sys.stderr.write(
            f"remedy: rollout stopped: {strip_controls(redact_text(rep.stop_reason))}\n"
        )
        sys.stderr.flush()
    if json_:
        sys.stdout.write(json_safe(redact_text(rep.model_dump_json(indent=2))) + "\n")
    else:
        print_summary(_console(), rep)
    return rep.exit_code
