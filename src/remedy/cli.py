"""The `remedy` command line.

Exit codes (stable, for scripts):
  0  success: a complete plan, nothing to do, no finding
  1  findings present (diagnose), breakage predicted (impact --fail-on-breakage)
  2  bad input or usage (the message says which)
  3  no complete plan (partial or impossible) / a run failed and was rolled back
  4  a host could not be reached or dropped the connection
  5  refused: stale plan, host locked
  6  needs attention: a rollback failed
  7  fleet rollout stopped: the canary failed or the error budget was spent (--inventory)
  70 internal error (a bug in remedy; REMEDY_DEBUG=1 shows the traceback)
  128+N stopped by signal N: 130 Ctrl-C, 143 SIGTERM, 129 SIGHUP (a run keeps its lock and
        says how to `remedy resume` it); 141 the reader of stdout left (`| head`)

Heavy modules are imported inside the commands so `remedy --help` stays fast.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated, Any

import typer

from remedy.commands import (
    diagnose_run,
    emit_json,
    exit_internal_error,
    exit_reader_left,
    load_facts,
    plan_run,
    report_error,
)
from remedy.commands import write_out as _write_out
from remedy.errors import InputError, RemedyError
from remedy.helptext import exit_code_epilog
from remedy.redact import redact_text
from remedy.report.safe import strip_controls, term

app = typer.Typer(
    add_completion=True,
    no_args_is_help=True,
    rich_markup_mode=None,
    help="remedy: see the whole CUDA / JIT failure chain of a GPU inference host, preview a "
    "minimal fix with its blast radius, apply it with rollback.\n\n"
    "Start with: remedy plan --example seed-sm120-pip-cu13",
    epilog=exit_code_epilog(),
)

ExampleOpt = Annotated[
    str | None,
    typer.Option(
        "--example", "-e", metavar="NAME", help="A built-in example host (see `remedy examples`)."
    ),
]
FactsOpt = Annotated[
    Path | None,
    typer.Option(
        "--facts",
        "-f",
        metavar="FILE",
        help="Facts file (JSON/YAML, as written by `remedy facts --json`).",
    ),
]
HostOpt = Annotated[
    str | None,
    typer.Option(
        "--host",
        "-H",
        metavar="HOST",
        help="Collect facts from this host over SSH (an ssh_config alias works).",
    ),
]
LogOpt = Annotated[
    list[Path] | None,
    typer.Option(
        "--log",
        "-l",
        metavar="FILE",
        help="A failing log (server log, journalctl -u output, ninja output). Repeatable.",
    ),
]
JsonOpt = Annotated[bool, typer.Option("--json", help="Machine-readable JSON on stdout.")]
SshConfigOpt = Annotated[
    Path | None,
    typer.Option("--ssh-config", help="OpenSSH client config file (default ~/.ssh/config)."),
]
AcceptNewOpt = Annotated[
    bool,
    typer.Option(
        "--accept-new", help="Trust and record the host key of a host seen for the first time."
    ),
]

InventoryOpt = Annotated[
    Path | None,
    typer.Option(
        "--inventory",
        "-i",
        metavar="FILE",
        help="Many hosts: an Ansible inventory (INI or YAML) or a list, one host per line.",
    ),
]
LimitOpt = Annotated[
    str | None,
    typer.Option(
        "--limit",
        metavar="PATTERN",
        help="With "
        "--inventory: Ansible host pattern (group, "
        "'gpu*', 'a:b', 'a:&b', 'a:!b', 'a,b').",
    ),
]
ForksOpt = Annotated[
    int, typer.Option("--forks", metavar="N", help="With --inventory: hosts worked on at once.")
]


ReportOpt = Annotated[
    Path | None,
    typer.Option(
        "--report",
        metavar="FILE",
        help="Also draw it: FILE.html (self-contained page, inline SVG) or FILE.md (Mermaid).",
    ),
]

TakeOverOpt = Annotated[
    str | None,
    typer.Option(
        "--break-lock",
        metavar="RUN_ID",
        help="Take over interrupted run RUN_ID last driven from another machine (only if its "
        "remedy process there is gone).",
    ),
]


def _fleet(inventory: Path | None, limit: str | None, forks: int, *others: Any) -> Any:
    """The fleet target of --inventory, or None; --limit without it is a mistake."""
    if inventory is None:
        if limit:
            raise InputError("--limit goes with --inventory")
        return None
    if any(others):
        raise InputError(
            "--inventory names the hosts: give no host, --local, --example, "
            "--facts, --host, --plan, --out, --markdown, --report, --log FILE (plan) or "
            "--break-lock with it",
            hint="a fleet's report: --json > fleet.json, then remedy report fleet.json -o fleet.html",
        )
    from remedy.fleet.commands import FleetTarget

    return FleetTarget(
        inventory,
        limit,
        forks,
        ssh_config=str(State.ssh_config) if State.ssh_config else None,
        accept_new=State.accept_new,
    )


class State:
    ssh_config: Path | None = None
    accept_new: bool = False


# commands that change hosts: a signal from process start to their work is held and acted on
# when the work starts, so it ends in their report (`remedy.interrupts`)
HOLDING_COMMANDS = frozenset({"run", "resume", "rollback"})


def _version(value: bool) -> None:
    if value:
        from remedy import __version__

        sys.stdout.write(f"remedy {__version__}\n")
        raise typer.Exit(0)


@app.callback()
def _global(
    ctx: typer.Context,
    ssh_config: SshConfigOpt = None,
    accept_new: AcceptNewOpt = False,
    version: Annotated[
        bool,
        typer.Option(
            "--version", callback=_version, is_eager=True, help="Print remedy's version and exit."
        ),
    ] = False,
) -> None:
    State.ssh_config = ssh_config
    State.accept_new = accept_new
    if ctx.invoked_subcommand not in HOLDING_COMMANDS:
        from remedy.interrupts import set_mode

        set_mode("raise")  # nothing to unwind: a signal (one held since start too) ends it now


def _console(stderr: bool = False):
    from remedy.commands import console

    return console(stderr)


def _collect(host: str, local: bool = False) -> Any:

    try:
        from remedy.facts import collect_facts
        from remedy.transport import open_transport
    except ImportError as exc:  # pragma: no cover - until the hosts issue lands
        raise RemedyError(f"collecting facts from hosts is not available: {exc}") from None

    async def go() -> Any:
        t = open_transport(
            host,
            local=local,
            ssh_config=str(State.ssh_config) if State.ssh_config else None,
            accept_new=State.accept_new,
            connect_timeout=10.0,
        )
        try:
            return await collect_facts(t)
        finally:
            await t.close()

    from remedy.interrupts import run_interruptible
    from remedy.report.progress import activity

    with activity(f"collecting facts from {'this machine' if local else host}"):
        return run_interruptible(go)


def _load_facts(
    example: str | None, facts: Path | None, host: str | None, *, required: bool
) -> tuple[Any, list[Path]]:
    """Facts from exactly one source, and the example's own logs when it is an example."""
    return load_facts(example, facts, host, required=required, collect=_collect)


@app.command()
def examples(json_: JsonOpt = False) -> None:
    """List the built-in example hosts (no host or GPU needed).

    \b
    Example: remedy examples
    """
    from remedy.inputs import examples as all_examples

    exs = all_examples()
    if json_:
        import json

        emit_json(
            json.dumps(
                [
                    {
                        "name": e.name,
                        "title": e.title,
                        "description": e.description,
                        "logs": [p.name for p in e.logs],
                    }
                    for e in exs.values()
                ],
                indent=2,
            )
        )
        return
    from remedy.report.wrap import Prose, whole

    con = _console()
    for e in exs.values():  # wrapped under the name (rich's wrap went to column 0)
        con.print(whole(strip_controls(e.name), "bold cyan"), soft_wrap=True)
        con.print(Prose(strip_controls(e.title), 2), soft_wrap=True)
        con.print(Prose(strip_controls(e.description), 2, "dim"), soft_wrap=True)
        con.print(whole(f"try: remedy plan --example {strip_controls(e.name)}", "", 2))


@app.command()
def plan(
    example: ExampleOpt = None,
    facts: FactsOpt = None,
    host: HostOpt = None,
    log: LogOpt = None,
    json_: JsonOpt = False,
    markdown: Annotated[
        bool, typer.Option("--markdown", help="Markdown report on stdout.")
    ] = False,
    out: Annotated[
        Path | None,
        typer.Option("--out", "-o", help="Save the plan (JSON) for `remedy run --plan`."),
    ] = None,
    explain: Annotated[
        bool, typer.Option("--explain", help="Show predicted fact changes and the search trace.")
    ] = False,
    service: Annotated[
        str | None,
        typer.Option("--service", metavar="UNIT", help="The systemd unit that runs the server."),
    ] = None,
    launch: Annotated[
        str | None,
        typer.Option(
            "--launch",
            metavar="CMD",
            help="Or the command that starts the server (final launch probe).",
        ),
    ] = None,
    report: ReportOpt = None,
    inventory: InventoryOpt = None,
    limit: LimitOpt = None,
    forks: ForksOpt = 20,
    rules: Annotated[
        str | None,
        typer.Option(
            "--rules",
            metavar="R1,R2",
            help="Keep only the steps that repair these rules (recorded in the plan).",
        ),
    ] = None,
    consumers: Annotated[
        str | None,
        typer.Option(
            "--consumers",
            metavar="C1,C2",
            help='Final verification of these consumers only (recorded in the plan; "": none).',
        ),
    ] = None,
) -> None:
    """Preview the minimal fix: findings, ordered steps with probes, rejected alternatives.

    With --inventory: facts from every host, ONE plan per set of hosts with the same facts,
    each previewed once with the hosts it applies to (exit 3 if a set has no complete plan,
    4 if a host was unreachable).

    \b
    Examples:
      remedy plan --example seed-sm120-pip-cu13
      remedy plan --facts host.json --log server.log --out plan.json
      remedy plan --host gpu01 --json
      remedy plan --inventory hosts.ini --limit 'gpu:!gpu07' --json
      remedy plan --example seed-sm120-pip-cu13 --report chain.html
    """
    fleet = _fleet(inventory, limit, forks, example, facts, host, log, out, markdown, report)
    if fleet is not None:
        from remedy.fleet.commands import fleet_plan

        if rules is not None or consumers is not None:  # fleet_plan plans every rule
            raise InputError(
                "--rules and --consumers go with one host's plan, not --inventory",
                hint="plan each host with --host HOST --rules ... --out plan.json",
            )

        raise typer.Exit(
            fleet_plan(fleet, json_=json_, explain=explain, service=service, launch=launch)
        )
    rc = plan_run(
        example,
        facts,
        host,
        log,
        json_=json_,
        markdown=markdown,
        out=out,
        explain=explain,
        service=service,
        launch=launch,
        report=report,
        rules=rules,
        consumers=consumers,
        collect=_collect,
    )
    if rc:
        raise typer.Exit(rc)


def _with_workload(f: Any, service: str | None, launch: str | None) -> Any:
    from remedy.commands import with_workload

    return with_workload(f, service, launch)


@app.command()
def diagnose(
    example: ExampleOpt = None,
    facts: FactsOpt = None,
    host: HostOpt = None,
    log: LogOpt = None,
    json_: JsonOpt = False,
) -> None:
    """Findings from facts, symptoms from logs, and which finding explains which symptom.

    With a log and no facts, ranks the causes the log is consistent with and says which fact
    would confirm each.

    Exit 1 when the facts show an error finding; 0 otherwise, a log alone included (its
    causes are hypotheses until facts confirm one: `remedy plan` exits 3 on a fatal line no
    finding explains).

    \b
    Examples:
      remedy diagnose --log server.log
      journalctl -u sglang --no-pager | remedy diagnose --log -
      remedy diagnose --example seed-sm120-system-cuda128 --json
    """
    rc = diagnose_run(example, facts, host, log, json_=json_, collect=_collect)
    if rc:
        raise typer.Exit(rc)


@app.command()
def impact(
    assignments: Annotated[
        list[str] | None,
        typer.Argument(help="VAR=VALUE to set (unset with --unset VAR).", show_default=False),
    ] = None,
    example: ExampleOpt = None,
    facts: FactsOpt = None,
    host: HostOpt = None,
    unit: Annotated[
        str | None,
        typer.Option(
            "--unit",
            metavar="UNIT",
            help="Preview the "
            "change as a drop-in for this systemd unit (read "
            "from --host or --local).",
        ),
    ] = None,
    set_: Annotated[
        list[str] | None,
        typer.Option("--set", metavar="VAR=VALUE", help="With --unit: a variable to set."),
    ] = None,
    unset: Annotated[
        list[str] | None,
        typer.Option("--unset", metavar="VAR", help="A variable to unset (repeatable)."),
    ] = None,
    local: Annotated[
        bool, typer.Option("--local", help="With --unit: read the unit on this machine.")
    ] = False,
    json_: JsonOpt = False,
    fail_on_breakage: Annotated[
        bool, typer.Option("--fail-on-breakage", help="Exit 1 if any consumer would break.")
    ] = False,
    report: ReportOpt = None,
) -> None:
    """Blast radius of an environment change, before anyone makes it.

    Every consumer of each variable, how it reads it, the predicted effect with the error it
    would print and the upstream source; with facts, a simulation of what each would pick.
    With --unit, also the drop-in remedy would write (as a diff), validated with
    systemd-analyze verify on a copy, and the restarts it implies. Nothing is written.

    \b
    Examples:
      remedy impact CUDA_HOME=/dev/null
      remedy impact CUDA_HOME=/usr/local/cuda-13.0 --example seed-sm120-system-cuda128
      remedy impact --unit sglang-k26.service --set CUDA_HOME=/dev/null --host gpu01
      remedy impact --unit sglang.service --unset FLASHINFER_NVCC --local --json
      remedy impact CUDA_HOME=/dev/null --report blast.html
    """
    from remedy.impact import analyse, parse_assignment, parse_name
    from remedy.knowledge.loader import load_knowledge

    changes: dict[str, str | None] = {}
    said: dict[str, str] = {}

    def once(k: str, how: str) -> None:
        """A variable given twice is refused: the last one silently won (`CUDA_HOME=a
        CUDA_HOME=b` analysed only b, `X=1 --unset X` only the unset)."""
        if k in said:
            raise InputError(
                f"{k} is given twice ({said[k]} and {how}): say once what it becomes",
                hint="one VAR=VALUE (or one --unset VAR) for each variable",
            )
        said[k] = how

    for a in [*(assignments or []), *(set_ or [])]:
        k, v = parse_assignment(a)
        once(k, f"{k}={v}"[:60])
        changes[k] = v
    for u in unset or []:
        k = parse_name(u)
        once(k, f"--unset {k}")
        changes[k] = None
    if not changes:
        raise InputError("nothing to analyse: give VAR=VALUE (or --set/--unset with --unit)")
    if unit:
        _impact_unit_cmd(
            unit, changes, example, facts, host, local, json_, fail_on_breakage, report
        )
        return
    if set_ or local:
        raise InputError("--set and --local go with --unit (without it: VAR=VALUE, --unset VAR)")
    f, _ = _load_facts(example, facts, host, required=False)
    rep = analyse(load_knowledge(), changes, f)
    if report:
        from remedy.report.files import impact_report, report_format

        _write_out(report, redact_text(impact_report(rep, report_format(report))))
    if json_:
        emit_json(rep.model_dump_json(indent=2))
    else:
        _print_impact(rep)
    if fail_on_breakage and rep.breaks:
        raise typer.Exit(1)


def _impact_unit_cmd(
    unit: str,
    changes: dict[str, str | None],
    example: str | None,
    facts_file: Path | None,
    host: str | None,
    local: bool,
    json_: bool,
    fail_on_breakage: bool,
    report: Path | None = None,
) -> None:

    from remedy.knowledge.functions import dropin_name
    from remedy.knowledge.loader import load_knowledge
    from remedy.units import impact_unit, print_unit_impact

    if not host and not local:
        raise InputError("--unit needs the host that has it: --host HOST or --local")
    f, _ = _load_facts(example, facts_file, None, required=False)
    t = _transport(host, local)
    name = dropin_name(next(iter(changes))) if len(changes) == 1 else "50-remedy.conf"

    async def go() -> Any:
        try:
            if f is None:
                from remedy.facts import collect_facts

                try:
                    facts_now = await collect_facts(t, services=[unit])
                except RemedyError:
                    facts_now = None
            else:
                facts_now = f
            return await impact_unit(
                t, load_knowledge(), unit, changes, facts_now, dropin_name=name
            )
        finally:
            await t.close()

    from remedy.interrupts import run_interruptible

    imp = run_interruptible(go)
    if report and imp.impact is not None:
        from remedy.report.files import impact_report, report_format

        title = f"remedy impact — {unit} on {imp.host}"
        _write_out(report, redact_text(impact_report(imp.impact, report_format(report), title)))
    if json_:
        emit_json(imp.model_dump_json(indent=2))
    else:
        print_unit_impact(_console(), imp)
    if fail_on_breakage and (imp.breaks or not imp.ok):
        raise typer.Exit(1)


def _print_impact(rep: Any) -> None:
    from remedy.report.impact_text import print_impact

    print_impact(_console(), rep)


@app.command()
def graph(
    format_: Annotated[str, typer.Option("--format", help="dot, graphml or json.")] = "dot",
    out: Annotated[Path | None, typer.Option("--out", "-o")] = None,
) -> None:
    """Export the knowledge graph (components, variables, rules, actions, signatures).

    \b
    Example: remedy graph --format dot | dot -Tsvg > remedy.svg
    """
    from remedy.knowledge.graph import build_graph, to_dot, to_graphml, to_json
    from remedy.knowledge.loader import load_knowledge

    writers = {"dot": to_dot, "graphml": to_graphml, "json": to_json}
    if format_ not in writers:
        raise InputError(f"unknown format {format_!r}: use dot, graphml or json")
    text = writers[format_](build_graph(load_knowledge()))
    if out:
        _write_out(out, text)
    else:
        sys.stdout.write(text)


@app.command()
def schema(
    what: Annotated[str, typer.Argument(help="plan, facts, diagnosis or impact.")] = "plan",
) -> None:
    """Print the published JSON Schema of remedy's JSON output.

    \b
    Example: remedy schema plan > plan.schema.json
    """
    import json

    from remedy.impact import ImpactReport
    from remedy.model import Diagnosis, Facts, Plan

    models = {"plan": Plan, "facts": Facts, "diagnosis": Diagnosis, "impact": ImpactReport}
    if what not in models:
        raise InputError(f"unknown schema {what!r}: use " + ", ".join(models))
    emit_json(json.dumps(models[what].model_json_schema(), indent=2))


@app.command()
def facts(
    host: Annotated[
        str | None, typer.Argument(help="Host (ssh_config alias, user@host, host:port).")
    ] = None,
    local: Annotated[bool, typer.Option("--local", help="This machine, no SSH.")] = False,
    json_: JsonOpt = False,
    inventory: InventoryOpt = None,
    limit: LimitOpt = None,
    forks: ForksOpt = 20,
) -> None:
    """Collect and print a host's facts: GPUs, every CUDA toolkit, Python envs, environment.

    With --inventory: every host's facts, N at a time (exit 4 if a host was unreachable).

    \b
    Examples:
      remedy facts --local
      remedy --ssh-config sandbox/run/h1/ssh_config facts h1 --json > h1.json
      remedy facts --inventory hosts.yml --limit gpu --json
    """
    fleet = _fleet(inventory, limit, forks, host, local)
    if fleet is not None:
        from remedy.fleet.commands import fleet_facts

        raise typer.Exit(fleet_facts(fleet, json_=json_))
    if not host and not local:
        raise InputError("say which host, or --local")
    _host_or_local(host, local)
    f = _collect(host or "localhost", local=local)
    if json_:
        emit_json(f.model_dump_json(indent=2))
        return
    _print_facts(f)


def _host_or_local(host: str | None, local: bool) -> None:
    """--local is this machine, labelled `localhost`: never another host's name (its facts,
    plans and runs would then pass for that host's)."""
    if host and local:
        raise InputError(
            f"give a HOST or --local, not both: --local reads this machine, not {host!r}",
            hint="`remedy ... --local` labels this machine localhost",
        )


def _print_facts(f: Any) -> None:
    """Every value here is the host's (a GPU's driver string, a version a venv owner wrote
    in torch/version.py): each goes through `term` (escaped markup, no controls). Long
    values wrap under their heading (rich's wrap sent a venv's package list to column 0);
    a value not found is '?', not Python's None."""
    from remedy.report.wrap import Prose

    def e(v: Any) -> str:
        return "?" if v is None else term(v)

    con = _console()

    def body(markup: str) -> None:
        con.print(Prose.markup(markup, 4), soft_wrap=True)

    con.print(Prose.markup(f"[bold]{e(f.host)}[/] {e(f.os or '')}"), soft_wrap=True)
    if not f.gpus:
        con.print("  GPUs: none")
    for g in f.gpus:
        body(f"GPU {e(g.index)}: {e(g.name)} sm {e(g.compute_cap)} driver {e(g.driver)}")
    for tk in f.toolkits:
        layout = ", ".join(f"{d}/{{{', '.join(n)}}}" for d, n in tk.libs.items() if n)
        cccl = (
            "complete"
            if tk.cccl.nv_target and tk.cccl.nv_detail
            else "incomplete"
            if tk.cccl.present
            else "absent"
        )
        con.print(Prose.markup(f"toolkit [cyan]{e(tk.prefix)}[/] ({e(tk.kind)})", 2))
        body(
            f"nvcc {e(tk.nvcc_release)} ptxas {e(tk.ptxas_release)} cicc {e(tk.cicc_release)}"
            f" CUDART {e(tk.cudart_version)} CCCL {cccl}; libs: {e(layout or 'none')}"
        )
    for py in f.pythons:
        pk = ", ".join(f"{k} {v}" for k, v in py.packages.items() if not k.startswith("nvidia"))
        con.print(Prose.markup(f"python {e(py.path)}: torch cuda {e(py.torch_cuda)}", 2))
        if pk:
            body(f"[dim]{e(pk)}[/]")
    for s in f.services:
        con.print(Prose.markup(f"unit {e(s.name)}", 2), soft_wrap=True)
        if s.environment:
            body(e(" ".join(f"{k}={v}" for k, v in s.environment.items())))
    for n in f.notes:
        body(f"[dim]note: {e(n)}[/]")


def _transport(host: str | None, local: bool, inventory: Path | None = None) -> Any:
    from remedy.transport import open_transport

    if not host and not local:
        raise InputError("say which host, or --local")
    _host_or_local(host, local)
    if inventory is not None:
        if local or not host:
            raise InputError("--inventory names the host's connection: give its name, not --local")
        from remedy.fleet.commands import inventory_transport

        return inventory_transport(
            inventory,
            host,
            ssh_config=str(State.ssh_config) if State.ssh_config else None,
            accept_new=State.accept_new,
        )
    return open_transport(
        host or "localhost",
        local=local,
        ssh_config=str(State.ssh_config) if State.ssh_config else None,
        accept_new=State.accept_new,
        connect_timeout=10.0,
    )


VerifyOpt = Annotated[
    str | None,
    typer.Option(
        "--verify",
        metavar="full|cheap",
        help="Final verification: full = one expensive probe "
        "per consumer (real JIT builds, a launch); cheap = their compile/link/env probes only "
        "(says so in the report). resume keeps the run's own unless given.",
    ),
]
RunLogOpt = Annotated[
    Path | None,
    typer.Option(
        "--log", metavar="FILE", help="Append everything the run does and its report to FILE."
    ),
]


class _RunLog:
    """The run's log: every line to FILE (timestamped, appended) and, unless quiet, stderr."""

    def __init__(self, log_file: Path | None, quiet: bool) -> None:
        self.quiet = quiet
        self.con = _console(stderr=True)
        from remedy.commands import open_append

        self.fh = open_append(log_file) if log_file else None

    def __call__(self, msg: str) -> None:
        msg = redact_text(msg)
        self.file(msg)
        if not self.quiet:
            self.con.print(msg, markup=False, highlight=False)

    def file(self, msg: str) -> None:
        if self.fh:
            import time as _t

            stamp = _t.strftime("%Y-%m-%d %H:%M:%S")
            try:
                # a file people `cat` or `tail -f`: host text in it loses its escapes too
                for line in strip_controls(redact_text(msg)).splitlines() or [""]:
                    self.fh.write(f"{stamp} {line}\n")
                self.fh.flush()
            except OSError as exc:
                # the run goes on: its journal on the host is the record; the log is a copy
                self.fh = None
                self.con.print(
                    f"remedy: warning: the log file cannot be written ({exc.strerror or exc}); "
                    "logging to it stopped, the run goes on",
                    markup=False,
                    highlight=False,
                )


def _runner(t: Any, log: _RunLog, verify: str | None = None) -> Any:
    from remedy.executor.runner import Runner
    from remedy.facts import collect_facts
    from remedy.knowledge.loader import load_knowledge

    try:
        from remedy.probes import run_probe
    except ImportError:  # pragma: no cover - probes not installed
        run_probe = None

    async def collect(tr: Any) -> Any:
        return await collect_facts(tr)

    r = Runner(
        t, collect=collect, prober=run_probe, log=log, verify=verify or "full",
        knowledge=load_knowledge(),
    )  # fmt: skip
    r.set_verify(verify)
    return r


def _check_verify(verify: str | None) -> None:
    if verify not in (None, "full", "cheap"):
        raise InputError(f"--verify must be full or cheap, not {verify!r}")


def _finish_run(
    report: Any, json_: bool, log: _RunLog | None = None, *, requested_rollback: bool = False
) -> None:
    import json

    from remedy.outcomes import REQUESTED_ROLLBACK_EXIT

    data = report.as_dict()
    code = report.exit_code
    if requested_rollback:  # the rollback that was asked for, done: the command succeeded
        code = REQUESTED_ROLLBACK_EXIT.get(report.outcome, code)
    data["exit_code"] = code
    if log is not None:
        log.file(
            f"outcome: {report.outcome} (exit {code})"
            + (f": {report.message}" if report.message else "")
        )
        log.file("report: " + json.dumps(data, default=str))
    if json_:
        emit_json(json.dumps(data, indent=2, default=str))
    else:
        con = _console()
        colour = {
            "fixed": "green",
            "nothing-to-do": "green",
            "rolled-back": "yellow",
            "applied-restart-pending": "yellow",
            "applied-not-verified": "yellow",
        }.get(report.outcome, "red")
        con.print(
            f"[{colour} bold]{report.outcome}[/] run {term(report.run_id)} on {term(report.host)}"
            + (f": {term(report.message)}" if report.message else ""),
            markup=True,
            highlight=False,
        )
        for st in report.steps:
            proof = (
                "ok"
                if st.probe_ok
                else "failed"
                if st.probe_ok is False
                else f"deferred to step {st.deferred_to + 1}"
                if st.deferred_to is not None
                else "-"
            )
            con.print(
                f"  {st.index + 1}. {st.action}: {st.outcome} (probe {st.probe}: {proof})",
                markup=False,
                highlight=False,
            )
        for v in report.verification:
            con.print(
                f"  verify {v['consumer']}: {v['probe']} "
                f"{'ok' if v['ok'] else 'FAILED' if v['ok'] is False else 'skipped'}",
                markup=False,
                highlight=False,
            )
        if getattr(report, "restart_pending", None):
            con.print(
                "  restart pending (not proven running): " + " ".join(report.restart_pending),
                markup=False,
                highlight=False,
            )
        if report.verification and report.verify_mode == "cheap":
            con.print(
                "  (cheap verification: compile/link/env probes, no real build or launch)",
                markup=False,
                highlight=False,
            )
    raise typer.Exit(code)


def _error_report(exc: RemedyError, host: str, runner: Any) -> Any:
    """A RunReport for a run that ended in an error: refused (lock, stale plan: 5), host
    unreachable (4) — or interrupted mid-run (4; 128+N by a signal), the lock kept for
    `remedy resume`."""
    from remedy.errors import (
        HostKeyRejected,
        Interrupted,
        LockHeld,
        Refused,
        RollbackFailed,
        StalePlan,
        TransportError,
    )
    from remedy.executor.runner import RunReport
    from remedy.outcomes import transport_outcome

    cur = getattr(runner, "current", None)
    if isinstance(exc, Interrupted):
        return _interrupted_report(exc, host, runner)
    outcome = (
        "refused"
        if isinstance(exc, (LockHeld, StalePlan, Refused))
        else transport_outcome(exc)
        if isinstance(exc, TransportError)
        else "needs-attention"
        if isinstance(exc, RollbackFailed)
        else "error"
    )
    rep = RunReport(
        cur.run_id if cur else "-",
        host,
        outcome,
        message=exc.message,
        hint=exc.hint or "",
        diff=list(getattr(exc, "diff", None) or []),
    )
    if cur is not None and isinstance(exc, TransportError) and not isinstance(exc, HostKeyRejected):
        rep.outcome = "interrupted"
        rep.steps = cur.steps
        rep.verify_mode = cur.verify_mode
        at = runner.stopped_at() if runner is not None else ""
        where = f" ({at})" if at else ""
        rep.message = (
            f"{exc.message}; run {cur.run_id} was interrupted{where}, the host keeps remedy's lock"
        )
        rep.hint = (
            f"when {host} answers again: `remedy resume {host}` finishes the run, "
            f"`remedy resume {host} --rollback` undoes it"
        )
    return rep


def _interrupted_report(exc: Any, host: str, runner: Any) -> Any:
    """A signal stopped run/resume/rollback: where (from the journal records this process
    wrote), and that `remedy resume` goes on; before the first record nothing had changed."""
    from remedy.executor.runner import RunReport

    cur = getattr(runner, "current", None)
    last = getattr(runner, "last_event", None)
    run_id = cur.run_id if cur is not None else (last[0] if last else "-")
    rep = RunReport(run_id, host, "interrupted", message=exc.message)
    if cur is not None:
        rep.steps, rep.verify_mode = cur.steps, cur.verify_mode
    if last is None:
        rep.message = f"{exc.message} before remedy changed anything on {host}"
        return rep
    rep.message = (
        f"{exc.message}: run {run_id} stopped ({runner.stopped_at()}), the host keeps remedy's lock; "
        "what the step had started there was stopped"
    )
    rep.hint = (
        f"`remedy resume {host}` finishes the run, `remedy resume {host} --rollback` undoes it"
    )
    return rep


def _guarded(host: str, runner_box: list[Any], json_: bool, log: _RunLog, go: Any) -> Any:
    """Run a run/resume/rollback coroutine (signals cancel it: `remedy.interrupts`); remedy's
    own errors become a report too (JSON on stdout with --json, the log), then the usual
    message on stderr and exit code."""
    import json

    from remedy.interrupts import run_interruptible

    try:
        return run_interruptible(go)
    except RemedyError as exc:
        rep = _error_report(exc, host, runner_box[0] if runner_box else None)
        data = rep.as_dict()
        data["exit_code"] = exc.exit_code
        log.file(f"outcome: {rep.outcome} (exit {exc.exit_code}): {rep.message}")
        for line in rep.diff[:50]:
            log.file(f"  what changed: {line}")
        log.file("report: " + json.dumps(data, default=str))
        if json_:
            emit_json(json.dumps(data, indent=2, default=str))
        exc.message, exc.hint = rep.message, rep.hint or exc.hint
        raise


@app.command()
def run(
    host: Annotated[str | None, typer.Argument(help="Host (ssh_config alias, user@host).")] = None,
    local: Annotated[bool, typer.Option("--local", help="This machine, no SSH.")] = False,
    plan_file: Annotated[
        Path | None,
        typer.Option(
            "--plan",
            metavar="FILE",
            help="Apply exactly this saved plan (refused if the host's facts changed).",
        ),
    ] = None,
    yes: Annotated[bool, typer.Option("--yes", "-y", help="Do not ask (unattended).")] = False,
    json_: JsonOpt = False,
    log_file: RunLogOpt = None,
    break_lock: Annotated[
        str | None,
        typer.Option(
            "--break-lock", metavar="RUN_ID", help="Remove a dead run's lock (its id is the nonce)."
        ),
    ] = None,
    verify: VerifyOpt = None,
    service: Annotated[
        str | None,
        typer.Option(
            "--service",
            metavar="UNIT",
            help="The systemd unit that runs the server (as for `remedy plan`).",
        ),
    ] = None,
    launch: Annotated[
        str | None,
        typer.Option("--launch", metavar="CMD", help="Or the command that starts the server."),
    ] = None,
    inventory: InventoryOpt = None,
    limit: LimitOpt = None,
    forks: ForksOpt = 20,
    canary: Annotated[
        int,
        typer.Option(
            "--canary",
            metavar="N",
            help="With --inventory: "
            "hosts of each plan group that go first, alone; if "
            "one fails, nothing else starts.",
        ),
    ] = 1,
    batch_size: Annotated[
        str | None,
        typer.Option(
            "--batch-size",
            metavar="N|P%",
            help="With --inventory: hosts per batch after the canary (default: all).",
        ),
    ] = None,
    max_errors: Annotated[
        str,
        typer.Option(
            "--max-errors",
            metavar="N|P%",
            help="With --inventory: failed hosts tolerated before no further host starts.",
        ),
    ] = "0",
    rollback_if_not_fixed: Annotated[
        bool,
        typer.Option(
            "--rollback-if-not-fixed",
            help="When the plan's log names the operation that failed and it still fails "
            "after the steps, roll them back (default: keep them, exit 12 applied-not-fixed).",
        ),
    ] = False,
) -> None:
    """Apply a plan on a host with a journal, checkpoints, probes and rollback.

    Without --plan it collects facts, plans, shows the preview and asks (or --yes).
    Without --service, the units whose ExecStart runs SGLang/a JIT build and fail under their
    own environment get drop-ins, the login shell profile.d if it fails too (remedy.scope).
    Exit: 0 fixed (a unit in scope: restarted, active and ready) · 10 nothing to do · 11
    applied, units still to restart (--verify cheap) · 12 applied, not fixed (the
    operation the plan's log came from, re-run, still fails) · 14 applied, not verified
    (nothing re-run: no --log and no consumer verified, e.g. --consumers "") · 3 failed and
    rolled back (or no complete plan) ·
    5 refused (stale plan, lock) · 6 needs attention · 4 host unreachable (a run cut off
    keeps the lock: `remedy resume`) · 128+N stopped by signal N (130 Ctrl-C, 143 SIGTERM:
    the step is stopped where it stands, the lock kept for `remedy resume`).

    \b
    Examples:
      remedy run gpu01                     # preview, confirm, apply
      remedy plan --host gpu01 --out p.json && remedy run gpu01 --plan p.json --yes
      remedy run gpu01 --yes --json --log run.log
      remedy run gpu01 --service sglang.service --yes
      remedy run --local --yes --json
      remedy run --inventory hosts.ini --limit gpu --batch-size 25% --max-errors 2 --yes

    With --inventory: facts from every host, one plan per set of hosts with the same facts
    (previewed once), then a canary, batches and an error budget; hosts in flight when the
    rollout stops finish (each is fully applied or rolled back), the others are not touched.
    Hosts with nothing to do are not touched at all. A summary table (or --json: one document,
    a record per host) at the end; progress on stderr. A first Ctrl-C/SIGTERM stops new
    starts (hosts in flight finish), a second stops those too. Fleet exit, worst first: 6 a
    host needs attention · 128+N a signal · 7 stopped (canary failed / error budget spent) · 3 a host rolled back or has
    no complete plan · 2 bad input for a host · 5 a host refused · 4 a host unreachable · 11
    a host's units still to restart · 0 all fixed or fine · 10 nothing to do anywhere; a
    skipped host's own record is 13. Per host, `remedy_services` in the inventory names units.
    """
    fleet = _fleet(inventory, limit, forks, host, local, plan_file, break_lock)
    if fleet is not None:
        from remedy.fleet.commands import fleet_run
        from remedy.fleet.rollout import RolloutPolicy, parse_size

        _check_verify(verify)
        policy = RolloutPolicy(
            canary=canary,
            forks=forks,
            max_errors=parse_size(max_errors, "--max-errors"),
            batch_size=parse_size(batch_size, "--batch-size", minimum=1) if batch_size else None,
        )
        flog = _RunLog(log_file, quiet=True)
        raise typer.Exit(
            fleet_run(
                fleet,
                policy,
                yes=yes,
                json_=json_,
                verify=verify,
                service=service,
                launch=launch,
                log=flog,
            )
        )
    from remedy.knowledge.loader import load_knowledge
    from remedy.planner.plan import make_plan

    _check_verify(verify)
    if plan_file and service:
        raise InputError(
            "a saved plan carries its workload: give --service/--launch to "
            "`remedy plan`, not with --plan"
        )
    log = _RunLog(log_file, quiet=json_)
    t = _transport(host, local)
    box: list[Any] = []
    log.file(
        f"remedy run {t.host}"
        + (f" --plan {plan_file}" if plan_file else "")
        + (f" --verify {verify}" if verify else "")
    )

    async def go() -> Any:
        from remedy.confirm import ask, show_plan
        from remedy.executor.runner import RunReport

        runner = _runner(t, log, verify)
        runner.rollback_if_not_fixed = rollback_if_not_fixed
        box.append(runner)
        try:
            if plan_file:
                # read and checked before anything reaches the host (with --json a refusal is
                # still a run report: remedy.cli._guarded)
                p = _verified_plan(plan_file, launch, verify)
            else:
                from remedy.facts import collect_facts

                facts = _with_workload(await collect_facts(t), service, launch)
                p = make_plan(load_knowledge(), facts)
            _log_plan(log, p)
            show_plan(p, json_=json_, yes=yes, console=_console(stderr=json_))
            question = f"Apply these {len(p.steps)} step(s) to {t.host}{_restarts(p, verify)}?"
            if (
                p.steps
                and p.status in ("ok", "unexplained")
                and not ask(question, yes=yes, what="apply the plan")
            ):
                return RunReport("-", t.host, "refused", message="not confirmed")
            # (a plan that is not `ok` is never applied: the runner reports why)
            return await runner.run(p, break_lock=break_lock, check_stale=bool(plan_file))
        finally:
            await t.close()

    _finish_run(_guarded(t.host, box, json_, log, go), json_, log)


def _verified_plan(plan_file: Path, launch: str | None, verify: str | None) -> Any:
    """A saved plan read and checked (schema version, digests, steps, launch command) before
    any host is reached: a stale, foreign or edited file is refused without connecting, so a
    bad file never costs an SSH session, a lock or a log line on the host."""
    from remedy.knowledge.loader import load_knowledge
    from remedy.operations.verify import verify_saved_plan
    from remedy.planfile import load_plan

    name = "stdin" if str(plan_file) == "-" else str(plan_file)
    p = load_plan(_read_plan_file(plan_file), name)
    # intent, not shell: the steps must be what remedy plans from the plan's own facts
    # (refused, naming the field, before anything runs)
    verify_saved_plan(p, load_knowledge())
    _check_saved_launch(p, str(plan_file), launch, verify)
    return p


def _check_saved_launch(p: Any, plan_file: str, launch: str | None, verify: str | None) -> None:
    """A saved plan's launch command is a shell command full verification runs as root; the
    file is anyone's who could write it, and the preview does not show it (nor does anyone
    read it under --yes). So it runs only when the command line says it again (`--launch`
    with the same command); --verify cheap launches nothing."""
    from remedy.errors import Refused
    from remedy.report.safe import strip_controls

    cmds = {c for c in (p.facts.workload.launch, p.target.launch) if c}
    if launch is not None and cmds != {launch}:
        raise InputError(
            "--launch with --plan only repeats the saved plan's own launch command: "
            + ("the plan has none" if not cmds else "it is not the same command"),
            hint="give --service/--launch to `remedy plan` to plan for another workload",
        )
    if cmds and verify != "cheap" and launch is None:
        shown = strip_controls(next(iter(sorted(cmds))), newlines=False)
        raise Refused(
            f"{plan_file} would run its launch command as root to verify the fix: {shown!r}; "
            "nothing was changed",
            hint="if that is your server's command, say it again: --launch 'CMD' "
            "(or --verify cheap: nothing is launched)",
        )


def _restarts(p: Any, verify: str | None) -> str:
    """What the confirmation also agrees to: the units full verification restarts."""
    from remedy.executor.services import units_in_scope

    units = units_in_scope(p)
    return f" and restart {', '.join(units)}" if units and verify != "cheap" else ""


def _log_plan(log: _RunLog, p: Any) -> None:
    log.file(f"plan for {p.host} ({p.status}, facts {p.facts_digest[:19]}): {len(p.steps)} step(s)")
    for i, st in enumerate(p.steps):
        log.file(
            f"  {i + 1}. {st.action}: {st.title} (probe {st.probe}; fixes {', '.join(st.fixes)})"
        )
    for v in p.verification:
        log.file(
            f"  verify {v.consumer}: {v.probe}"
            + (f" (fallbacks {', '.join(v.fallbacks)})" if v.fallbacks else "")
        )


@app.command()
def resume(
    host: Annotated[str | None, typer.Argument()] = None,
    local: Annotated[bool, typer.Option("--local")] = False,
    rollback_: Annotated[
        bool, typer.Option("--rollback", help="Undo the interrupted run instead of finishing it.")
    ] = False,
    json_: JsonOpt = False,
    log_file: RunLogOpt = None,
    verify: VerifyOpt = None,
    break_lock: TakeOverOpt = None,
    inventory: Annotated[
        Path | None,
        typer.Option("--inventory", "-i", metavar="FILE", help="HOST is a host of this inventory."),
    ] = None,
) -> None:
    """Finish an interrupted run from the journal on the host (or roll it back).

    First stops whatever the interrupted step left running on the host, restores that step
    from its checkpoint, then goes on from the next step (or undoes every committed step).
    Refused while the run's remedy process still lives on this machine; a run last driven
    from another machine needs --break-lock RUN_ID (remedy cannot see that process).

    \b
    Example: remedy resume gpu01
    Example: remedy resume gpu01 --rollback --break-lock 3f2a9c1d0e4b
    """
    _check_verify(verify)
    log = _RunLog(log_file, quiet=json_)
    t = _transport(host, local, inventory)
    box: list[Any] = []
    log.file(f"remedy resume {t.host}" + (" --rollback" if rollback_ else ""))

    async def go() -> Any:
        runner = _runner(t, log, verify)
        box.append(runner)
        try:
            return await runner.resume(rollback=rollback_, break_lock=break_lock)
        finally:
            await t.close()

    _finish_run(_guarded(t.host, box, json_, log, go), json_, log, requested_rollback=rollback_)


@app.command()
def rollback(
    host: Annotated[str | None, typer.Argument()] = None,
    run_id: Annotated[
        str | None, typer.Argument(help="Run to undo (default: the newest applied one).")
    ] = None,
    local: Annotated[bool, typer.Option("--local")] = False,
    json_: JsonOpt = False,
    log_file: RunLogOpt = None,
    break_lock: TakeOverOpt = None,
    inventory: Annotated[
        Path | None,
        typer.Option("--inventory", "-i", metavar="FILE", help="HOST is a host of this inventory."),
    ] = None,
    yes: Annotated[bool, typer.Option("--yes", "-y", help="Do not ask (unattended).")] = False,
) -> None:
    """Undo a finished run: every step restored from its checkpoint, newest first.

    Shows what it will restore and asks (or --yes; with no terminal and no --yes nothing is
    restored: exit 5). Exit 0 when the run was rolled back. An interrupted run is rolled back
    as `remedy resume --rollback` does (same refusals), exactly the run named.

    \b
    Example: remedy rollback gpu01 3f2a9c1d0e4b
    """
    if local and host and not run_id:
        host, run_id = None, host  # `rollback --local RUN_ID`: the argument is the run
    log = _RunLog(log_file, quiet=json_)
    t = _transport(host, local, inventory)
    box: list[Any] = []
    log.file(f"remedy rollback {t.host}" + (f" {run_id}" if run_id else ""))

    async def go() -> Any:
        from remedy.confirm import ask, show_rollback
        from remedy.executor.runner import RunReport

        runner = _runner(t, log)
        box.append(runner)
        try:
            target = await runner.rollback_target(run_id)
            if target is not None:
                if not (json_ and yes):
                    show_rollback(_console(stderr=json_), t.host, target)
                if not ask(f"Roll back run {target['run_id']} on {t.host}?", yes=yes,
                           what="roll back"):  # fmt: skip
                    return RunReport(target["run_id"], t.host, "refused", message="not confirmed")
                run = target["run_id"]
            else:
                run = run_id
            return await runner.rollback(run, break_lock=break_lock)
        finally:
            await t.close()

    _finish_run(_guarded(t.host, box, json_, log, go), json_, log, requested_rollback=True)


@app.command()
def history(
    host: Annotated[str | None, typer.Argument()] = None,
    local: Annotated[bool, typer.Option("--local")] = False,
    json_: JsonOpt = False,
) -> None:
    """List the runs recorded on a host with their outcome.

    \b
    Example: remedy history gpu01 --json
    """
    import json

    t = _transport(host, local)

    async def go() -> Any:
        try:
            return await _runner(t, _RunLog(None, quiet=True)).runs()
        finally:
            await t.close()

    from remedy.interrupts import run_interruptible

    runs = run_interruptible(go)
    if json_:
        emit_json(json.dumps(runs, indent=2, default=str))
        return
    con = _console()
    if not runs:
        con.print("no runs recorded")
    for r in runs:
        started = time_str(r.get("started"))
        last = (
            ""
            if r["outcome"] != "interrupted"
            else (
                f" at {r.get('last_event')}"
                + (f" of step {r['last_step'] + 1}" if r.get("last_step") is not None else "")
            )
        )
        con.print(
            f"{r['run_id']}  {started}  {r['outcome']:<14} steps committed "
            f"{[i + 1 for i in r['committed_steps']]}  {r.get('owner') or ''}{last}",
            markup=False,
            highlight=False,
        )


def time_str(ts: Any) -> str:
    import time as _t

    return _t.strftime("%Y-%m-%d %H:%M:%S", _t.localtime(ts)) if ts else "?"


@app.command()
def export(
    plan_file: Annotated[
        str,
        typer.Argument(metavar="PLAN", help="A saved plan (`remedy plan --out`), or - for stdin."),
    ],
    format_: Annotated[
        str, typer.Option("--format", help="ansible (the only one for now).")
    ] = "ansible",
    out: Annotated[
        Path | None,
        typer.Option("--out", "-o", metavar="FILE", help="Write here instead of stdout."),
    ] = None,
    verify: Annotated[
        str,
        typer.Option(
            "--verify",
            metavar="cheap|full",
            help="Probes after "
            "the steps: cheap = each step's compile/link/env probe; "
            "full = + the plan's final JIT builds.",
        ),
    ] = "cheap",
    hosts: Annotated[
        str, typer.Option("--hosts", metavar="PATTERN", help="The play's hosts: pattern.")
    ] = "all",
) -> None:
    """Write a plan as an Ansible playbook for your Ansible/AWX to run at any scale.

    The playbook checks the host still matches the plan's facts, applies each step with
    Ansible modules (--check and --diff work), reloads systemd, runs remedy's probes, and on
    a failure undoes what it changed. No journal or host lock: that is `remedy run`.

    \b
    Examples:
      remedy plan --host gpu01 --out plan.json
      remedy export --format ansible plan.json --out fix.yml
      ansible-playbook -i inventory fix.yml --check --diff     # preview, changes nothing
      ansible-playbook -i inventory fix.yml
      remedy plan --example seed-sm120-pip-cu13 --json | remedy export -
    """
    from remedy.export import export_plan
    from remedy.planfile import load_plan

    p = load_plan(_read_plan_file(plan_file), "stdin" if plan_file == "-" else plan_file)
    text = redact_text(export_plan(p, format_, verify=verify, hosts=hosts))
    if out:
        _write_out(out, text)
    else:
        from remedy.report.safe import file_safe

        sys.stdout.write(file_safe(text))  # the playbook's comments hold the host's name


@app.command(name="report")
def report_cmd(
    source: Annotated[
        str,
        typer.Argument(
            metavar="JSON",
            help="A saved plan, `impact --json` or `--inventory --json` output; - for stdin.",
        ),
    ],
    out: Annotated[
        Path,
        typer.Option("--out", "-o", metavar="FILE", help="FILE.html or FILE.md."),
    ],
) -> None:
    """Draw a saved plan, impact report or fleet report as HTML (inline SVG) or markdown.

    \b
    Examples:
      remedy report plan.json --out plan.html
      remedy run --inventory hosts.ini --yes --json > fleet.json; remedy report fleet.json -o fleet.html
    """
    from remedy.report.files import report_format, report_from_json

    fmt = report_format(out, "--out")
    name = "stdin" if source == "-" else source
    from remedy.fleet.report import FleetReport

    doc = report_from_json(_read_plan_file(source), name, fmt, fleet_model=FleetReport)
    _write_out(out, redact_text(doc))


from remedy.knowledge_cli import knowledge_app  # noqa: E402  (its own module; imports little)

app.add_typer(knowledge_app, name="knowledge")


@app.command(name="check")
def check_knowledge() -> None:
    """Validate knowledge/ and playbooks/ (file:line on any error) and print what is known.

    \b
    Example: remedy check
    """
    from remedy.evidence.catalog import default_catalog
    from remedy.knowledge.loader import load_knowledge

    kb = load_knowledge()
    default_catalog()  # signatures.yaml is validated by the log reader's own schema
    from remedy.report.wrap import Prose

    con = _console()
    con.print(
        Prose(
            f"{len(kb.components)} components, {len(kb.variables)} variables, "
            f"{len(kb.rules)} rules, {len(kb.actions)} actions, {len(kb.probes)} probes, "
            f"{len(kb.signature_ids)} signatures, {len(kb.releases)} CUDA releases: OK"
        ),
        soft_wrap=True,
    )
    from remedy.evidence.learned import check_model

    con.print(Prose(check_model(set(kb.rules))), soft_wrap=True)


def main(argv: list[str] | None = None) -> None:
    """Entry point: remedy's own errors become one clear message and an exit code."""
    from remedy.errors import Interrupted

    try:
        _main(argv)
    except Interrupted as exc:  # a signal while an error was reported, or at exit
        from remedy.interrupts import ignore

        ignore()
        sys.stderr.write(f"remedy: stopped: {exc.message}\n")
        sys.exit(exc.exit_code)


def _main(argv: list[str] | None) -> None:
    try:
        from remedy.argcheck import check_argv
        from remedy.clicommand import command_for

        # built once (typer's app() would build it again), for the named command only
        words = list(sys.argv[1:] if argv is None else argv)
        cmd = command_for(app, words)
        check_argv(words, cmd)
        rc = cmd(args=argv, standalone_mode=False)
        sys.stdout.flush()  # a reader that left shows here, not in Python's exit
    except RemedyError as exc:
        _report_error(exc)
        sys.exit(exc.exit_code)
    except typer.Exit as exc:
        sys.exit(exc.exit_code)
    except KeyboardInterrupt:
        sys.stderr.write("remedy: interrupted\n")
        sys.exit(130)
    except SystemExit as exc:
        # click's parser turns a reader that left (EPIPE) into a silent exit 1, which is
        # "findings" here: say 141 like the shell (128 + SIGPIPE)
        if exc.code == 1 and type(sys.stdout).__name__ == "PacifyFlushWrapper":
            sys.exit(141)
        raise
    except BrokenPipeError:
        exit_reader_left()
    except Exception as exc:
        # typer >= 0.2x vendors click (typer._click) and no longer installs it: match
        # click's usage errors by class name, which both arrangements share
        if isinstance(exc, typer.Abort):
            sys.stderr.write("remedy: aborted\n")
            sys.exit(130)
        if _is_click_error(exc):
            exc.show()  # type: ignore[attr-defined]
            sys.exit(2)
        exit_internal_error(exc)
    sys.exit(rc if isinstance(rc, int) else 0)


def _read_plan_file(path: str | Path) -> bytes:
    """A saved plan's bytes ('-': stdin), at most fileread.LIMIT; errors name the file."""
    from remedy.fileread import TooLarge, read_limited

    try:
        return read_limited(path)
    except OSError as exc:
        raise InputError(f"cannot read {path}: {exc.strerror or exc}") from None
    except TooLarge as exc:
        raise InputError(f"{path} is {exc}: not a saved remedy plan") from None


def _is_click_error(exc: BaseException) -> bool:
    """A usage error of the CLI parser (unknown option, bad value, missing argument)."""
    return hasattr(exc, "show") and any(c.__name__ == "ClickException" for c in type(exc).__mro__)


def _report_error(exc: RemedyError) -> None:
    report_error(exc)
