"""Unit-aware impact: what an Environment= change to one service would do, before writing it.

Seed 002 is the reason this exists: `sed -i … Environment=CUDA_HOME=/dev/null` on
sglang-k26.service fixed FlashInfer's version check and broke SGLang's jit_kernel, and it took
a 7-minute launch to find out. Here the same change is previewed in milliseconds: the drop-in
remedy would write (with its diff and `systemd-analyze verify`), the unit's environment before
and after as systemd computes it (including a value that an EnvironmentFile= or a later drop-in
would silently override), every consumer of each variable with the effect predicted by the
knowledge graph and a simulation on host facts (remedy.impact.analyse with this unit as the
workload), the restarts it implies and what stays unaffected.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel, Field
from rich.console import Console, Group, RenderableType
from rich.markup import escape
from rich.text import Text

from remedy.errors import InputError
from remedy.impact import ImpactReport, analyse
from remedy.knowledge.loader import Knowledge
from remedy.model import Facts, Service
from remedy.report.impact_text import consumer_parts, simulation_parts
from remedy.report.wrap import Prose, whole
from remedy.transport.base import Transport
from remedy.units.dropin import DROPIN_NAME, DropinPreview, plan_dropin
from remedy.units.host import read_unit
from remedy.units.parse import ExecCommand, Unit, UnitFiles, load_unit
from remedy.units.syntax import format_show_environment


class EnvChange(BaseModel):
    """One requested change and what the process would really get."""

    variable: str
    requested: str | None  # None = unset
    before: str | None  # in the process environment the unit hands out, before
    after: str | None  # after the drop-in and a daemon-reload
    origin_before: str | None = None  # where the old value came from
    effective: bool = True  # after == requested
    shadowed_by: str | None = None  # why not: the EnvironmentFile=/drop-in/Unset that wins
    remedy_knows: bool = True  # the knowledge graph has consumers for this variable


class UnitImpact(BaseModel):
    """Everything `remedy impact --unit` shows; JSON-serialisable for --json."""

    host: str
    unit: str
    fragment_path: str | None
    dropin_paths_before: list[str] = Field(default_factory=list)
    dropin: DropinPreview
    environment_before: dict[str, str] = Field(default_factory=dict)  # systemctl show
    environment_after: dict[str, str] = Field(default_factory=dict)
    show_before: str = ""  # `systemctl show -p Environment` line, as systemd prints it
    show_after: str = ""
    effective_before: dict[str, str] = Field(default_factory=dict)  # what the process gets
    effective_after: dict[str, str] = Field(default_factory=dict)
    changes: list[EnvChange] = Field(default_factory=list)
    python: str | None = None  # the venv ExecStart runs
    launch: dict[str, Any] | None = None  # module + flags of the SGLang launch
    impact: ImpactReport | None = None  # consumers, simulation, breaks (remedy.impact.analyse)
    breaks: list[str] = Field(default_factory=list)
    unknown_variables: list[str] = Field(default_factory=list)
    restart: list[str] = Field(default_factory=list)  # commands that make it take effect
    unaffected_variables: list[str] = Field(default_factory=list)
    warnings: list[str] = Field(default_factory=list)
    live: dict[str, str] | None = None  # systemctl show properties where systemd runs
    ok: bool = True  # verify passed, every change effective, nothing predicted to break


def _origin_text(unit: Unit, var: str) -> str | None:
    o = unit.effective_origins.get(var)
    return str(o) if o else None


def _why_not(after: Unit, var: str, requested: str | None, dropin_path: str) -> str | None:
    """Which setting makes the process not get `requested` for `var` after the change."""
    if requested is None:
        o = after.effective_origins.get(var)
        return str(o) if o else None
    if var in after.removed_by_unset:
        return str(after.removed_by_unset[var])
    o = after.effective_origins.get(var)
    if o is None:
        return None
    if o.kind == "EnvironmentFile":
        return f"{o} (an EnvironmentFile= value overrides every Environment= line)"
    if o.file != dropin_path:
        return f"{o} (a drop-in sorted after {dropin_path.rsplit('/', 1)[-1]} wins)"
    return None


def _exec_text(cmd: ExecCommand) -> str:
    """The command as facts hold it (facts.services.exec_argv): its argv, or `@PATH ARGV...`
    when `@` gave it an argv[0] other than the program (`@/opt/v/bin/python python3 ...`)."""
    if cmd.separate_argv0 and cmd.argv[:1] != [cmd.path]:
        return " ".join([f"@{cmd.path}", *cmd.argv])
    return " ".join(cmd.argv)


def facts_for_unit(facts: Facts | None, unit: Unit, host: str) -> Facts:
    """facts with this unit as the workload's service, its environment from the parser.

    Service.environment is set to the EFFECTIVE environment (Environment= + EnvironmentFile=
    − UnsetEnvironment=): that is what the server process and its JIT consumers read.
    """
    f = facts.model_copy(deep=True) if facts is not None else Facts(host=host)
    old = next((s for s in f.services if s.name == unit.name), None)
    cmd = unit.exec_start[0] if unit.exec_start else None
    svc = Service(
        name=unit.name,
        unit_path=unit.fragment_path,
        drop_ins=list(unit.dropin_paths),
        environment=dict(unit.effective_environment),
        environment_files=[("-" if r.optional else "") + r.path for r in unit.environment_files],
        exec_start=_exec_text(cmd) if cmd else (old.exec_start if old else None),
        python=unit.python or (old.python if old else None),
    )
    f.services = [s for s in f.services if s.name != unit.name] + [svc]
    f.workload.service = unit.name
    if svc.python:
        f.workload.python = svc.python
    return f


def _check_strict(unit: Unit) -> None:
    bad = [d for d in unit.diagnostics if d.severity in ("error", "ignored")]
    if bad:
        raise InputError(
            f"{unit.name}: systemd ignores or rejects part of this unit, so it does not do "
            "what its files say:\n  " + "\n  ".join(str(d) for d in bad),
            hint="fix these lines first (or pass strict=False to preview anyway); "
            "nothing was written",
        )


def unit_impact_from_files(
    files: UnitFiles,
    kb: Knowledge,
    changes: Mapping[str, str | None],
    facts: Facts | None = None,
    *,
    host: str = "localhost",
    strict: bool = True,
    verify: bool = True,
    dropin_name: str = DROPIN_NAME,
) -> UnitImpact:
    """impact_unit() on files already read (tests, saved snapshots). Runs verify locally."""
    if not changes:
        raise InputError("no change given", hint="e.g. --set CUDA_HOME=/usr/local/cuda-13.0")
    before = load_unit(files)
    if strict:
        _check_strict(before)
    preview, after_files = plan_dropin(files, changes, name=dropin_name, verify=verify)
    after = load_unit(after_files, strict_env_files=False)

    warnings = [str(d) for d in before.diagnostics if d.severity == "warning"]
    warnings += [f"specifier {s} is not resolved here" for s in before.unresolved_specifiers]
    if files.live is not None:
        live_env = files.live.get("Environment", "")
        mine = format_show_environment(before.environment, prefix=False)
        if live_env != mine:
            warnings.append(
                "systemd has loaded a different Environment= than the files on disk give "
                f"(loaded: {live_env or '(empty)'}; files: {mine or '(empty)'}): a daemon-reload "
                "is pending or the unit was changed at runtime; the preview is of the files"
            )
    if preview.hidden_by:
        warnings.append(f"{preview.path} would be hidden by {preview.hidden_by}")

    env_changes: list[EnvChange] = []
    eff_changes: dict[str, str | None] = {}
    unknown: list[str] = []
    for var, req in changes.items():
        b = before.effective_environment.get(var)
        a = after.effective_environment.get(var)
        effective = a == req
        ch = EnvChange(
            variable=var,
            requested=req,
            before=b,
            after=a,
            origin_before=_origin_text(before, var),
            effective=effective,
            shadowed_by=None if effective else _why_not(after, var, req, preview.path),
            remedy_knows=var in kb.variables,
        )
        env_changes.append(ch)
        if not effective:
            warnings.append(
                f"{var}: the drop-in asks for {req!r} but the process would get {a!r}"
                + (f", because of {ch.shadowed_by}" if ch.shadowed_by else "")
            )
        if a != b:
            if var in kb.variables:
                eff_changes[var] = a
            else:
                unknown.append(var)

    # with facts: simulate on them with this unit as the workload; without: the knowledge
    # graph's consumers only (an empty snapshot would claim every toolkit is missing)
    unit_facts = facts_for_unit(facts, before, host) if facts is not None else None
    report = analyse(kb, eff_changes, unit_facts) if eff_changes else None
    if facts is None and eff_changes:
        warnings.append(
            "no host facts given: consumers and effects come from the knowledge graph only, "
            "without a simulation of which toolkit each would pick"
        )
    breaks = list(report.breaks) if report else []

    restart: list[str] = []
    if not preview.noop:
        restart.append("systemctl daemon-reload")
        state = (files.live or {}).get("ActiveState")
        if state in (None, "active", "activating", "reloading", "deactivating"):
            restart.append(f"systemctl restart {files.name}")
        else:
            warnings.append(
                f"{files.name} is {state}: the change takes effect at its next start "
                "(no restart needed now)"
            )
    unaffected = [
        k
        for k in after.effective_environment
        if k not in changes
        and after.effective_environment.get(k) == before.effective_environment.get(k)
    ]
    verify_ok = preview.verify is None or not preview.verify.ran or preview.verify.ok
    if preview.verify is not None and not preview.verify.ran and preview.verify.note:
        warnings.append(preview.verify.note)
    ok = (
        verify_ok
        and not breaks
        and all(c.effective for c in env_changes)
        and preview.hidden_by is None
    )
    return UnitImpact(
        host=host,
        unit=files.name,
        fragment_path=before.fragment_path,
        dropin_paths_before=list(before.dropin_paths),
        dropin=preview,
        environment_before=dict(before.environment),
        environment_after=dict(after.environment),
        show_before=format_show_environment(before.environment),
        show_after=format_show_environment(after.environment),
        effective_before=dict(before.effective_environment),
        effective_after=dict(after.effective_environment),
        changes=env_changes,
        python=before.python,
        launch=before.launch.model_dump() if before.launch else None,
        impact=report,
        breaks=breaks,
        unknown_variables=unknown,
        restart=restart,
        unaffected_variables=unaffected,
        warnings=warnings,
        live=files.live,
        ok=ok,
    )


async def impact_unit(
    transport: Transport,
    kb: Knowledge,
    unit: str,
    changes: dict[str, str | None],
    facts: Facts | None,
    *,
    strict: bool = True,
    verify: bool = True,
    dropin_name: str = DROPIN_NAME,
    root: str = "/",
) -> UnitImpact:
    """Read `unit` from the host behind `transport` and preview `changes` ({VAR: value|None}).

    Nothing is written on the host. Raises InputError for a missing unit, a missing
    EnvironmentFile without `-`, a unit systemd would reject or (strict) partly ignore, and a
    value remedy cannot write faithfully (e.g. a newline).
    """
    files = await read_unit(transport, unit, root=root)
    host = getattr(transport, "host", "localhost")
    return await asyncio.to_thread(
        unit_impact_from_files,
        files,
        kb,
        changes,
        facts,
        host=host,
        strict=strict,
        verify=verify,
        dropin_name=dropin_name,
    )


# --------------------------------------------------------------------------------------------
# Terminal rendering
# --------------------------------------------------------------------------------------------


def _val(v: str | None) -> str:
    return "(unset)" if v is None else repr(v) if (v == "" or v != v.strip()) else v


def unit_impact_renderable(imp: UnitImpact) -> RenderableType:
    """A rich renderable of the whole preview (print it, or put it in a panel)."""
    parts: list[RenderableType] = []
    head = Text.assemble(
        ("remedy impact", "bold"),
        " — unit ",
        (imp.unit, "cyan"),
        " on ",
        (imp.host, "cyan"),
    )
    parts.append(head)
    parts.append(whole(f"unit file {imp.fragment_path}", "dim"))
    for p in imp.dropin_paths_before:
        parts.append(whole(f"drop-in   {p}", "dim"))
    if imp.python:
        flags = ""
        if imp.launch:
            flags = f"  ({imp.launch['module']})"
        parts.append(whole(f"runs      {imp.python}{flags}", "dim"))

    parts.append(Text("Environment of the service process", style="bold"))
    for c in imp.changes:
        mark = "✓" if c.effective else "✗ not effective"
        parts.append(
            whole(
                f"{c.variable}: {_val(c.before)} → {_val(c.after)}  {mark}",
                "" if c.effective else "red",
                2,
            )
        )
        if c.origin_before:
            parts.append(whole(f"now from: {c.origin_before}", "dim", 4))
        if c.shadowed_by:
            parts.append(whole(f"shadowed by: {c.shadowed_by}", "red", 4))

    d = imp.dropin
    verdict: str
    if d.verify is None:
        verdict = "[dim]not verified[/]"
    elif not d.verify.ran:
        verdict = f"[yellow]not verified:[/] {escape(d.verify.note or '')}"
    elif d.verify.ok:
        verdict = "[green]systemd-analyze verify: ok[/]"
    else:
        verdict = "[red]systemd-analyze verify: FAILED[/]\n" + escape(
            "\n".join(d.verify.new_messages or d.verify.messages)
        )
    # the drop-in as lines, never cropped: a user copies these (issue 19)
    parts.append(whole(f"drop-in {d.path}", "bold"))
    if d.noop:
        parts.append(Text("  no change: the drop-in already says this", style="green"))
    elif d.diff:
        for line in d.diff.splitlines():
            style = (
                "green"
                if line.startswith("+") and not line.startswith("+++")
                else "red"
                if line.startswith("-") and not line.startswith("---")
                else "dim"
                if line.startswith(("@@", "---", "+++"))
                else ""
            )
            parts.append(whole(line, style, 2))
    parts.append(Prose(Text.from_markup(verdict), 2))
    if d.hidden_by:
        parts.append(whole(f"hidden by {d.hidden_by}", "red", 2))

    rep = imp.impact
    if rep is not None:
        for var in rep.changes:
            parts.extend(consumer_parts(rep, var, sources=False))
        parts.extend(simulation_parts(rep, "Simulated on this host's facts"))
    for var in imp.unknown_variables:
        parts.append(
            Text(f"remedy knows no consumer of {var}: its blast radius is not modelled", "yellow")
        )
    if imp.unaffected_variables:
        parts.append(Text("unchanged: " + ", ".join(imp.unaffected_variables), style="dim"))
    for w in imp.warnings:
        parts.append(Text.from_markup(f"[yellow]warning[/] {escape(w)}"))
    if imp.restart:
        parts.append(whole("To take effect: " + " && ".join(imp.restart), "bold"))
    if imp.breaks:
        parts.append(Text.from_markup("[red bold]Breaks:[/] " + escape(", ".join(imp.breaks))))
    elif imp.ok:
        parts.append(Text("No consumer is predicted to break.", style="green"))
    if not imp.ok:
        parts.append(Text("Verdict: do not apply as is.", style="red bold"))
    return Group(*parts)


def print_unit_impact(console: Console, imp: UnitImpact) -> None:
    """Print the preview; what `remedy impact --unit` shows without --json."""
    console.print(unit_impact_renderable(imp), soft_wrap=True)
