"""Which consumer failed decides where the fix goes: the scopes of a plan.

A scope is an environment a consumer of the toolchain really reads: a systemd unit's
(`Environment=`, `EnvironmentFile=`, drop-ins; PATH defaults to systemd's, never the shell's)
or the login shell's (`/etc/environment`, `/etc/profile.d`). A fix written to one is invisible
to the other: a profile.d file never reaches a unit (systemd.exec(5)), so a host whose SGLang
unit fails is not fixed by the shell's environment (issue 22).

How the scopes are chosen (``choose_scopes``):
  * ``--service UNIT`` (or the inventory's ``remedy_services`` for a host or group): exactly
    those; the user said which consumer matters. The name ``login-shell`` stands for the
    login shell, so ``remedy_services=sglang-k26.service,login-shell`` asks for both.
  * ``--launch CMD``: the login shell (the command runs under its environment).
  * otherwise, where units run a known consumer (their ExecStart is an SGLang launch or a
    FlashInfer/SGLang JIT build): every such unit that fails under its own environment (a
    rule of the workload is violated there); the server is the service, so the login shell
    is no consumer of its own. Where no unit runs one, the login shell (a server started by
    hand). A host whose consumer units all pass has nothing to do.
"""

from __future__ import annotations

import re
from typing import Any

from remedy.errors import InputError
from remedy.model import Facts, Service

LOGIN_SHELL = "login-shell"

# What a unit's ExecStart runs when it is a consumer of the CUDA toolchain:
#   python -m sglang.launch_server / sglang.launch_server (sgl-project/sglang
#   python/sglang/launch_server.py), `sglang serve` (python/sglang/cli/main.py), scripts
#   named like the launcher (the sandbox's sglang_launch_standin.py), FlashInfer's JIT/AOT
#   builds (`python -m flashinfer` / flashinfer.aot, flashinfer-ai/flashinfer
#   flashinfer/__main__.py) and SGLang's jit_kernel builds (python/sglang/jit_kernel).
_CONSUMERS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("sglang-launch", re.compile(r"\bsglang[._]launch|\bsglang(?:\s+|\.cli\.main\s+)serve\b")),
    ("sglang-launch", re.compile(r"-m\s+sglang\b")),
    ("jit-build", re.compile(r"\bflashinfer\b|\bsglang\.jit_kernel\b|\bjit[_-]?build\b")),
)


def consumer_of(svc: Service) -> str | None:
    """The kind of toolchain consumer a unit runs (None when its ExecStart is none of them)."""
    cmd = svc.exec_start or ""
    for kind, rx in _CONSUMERS:
        if rx.search(cmd):
            return kind
    return None


def scoped(facts: Facts, scope: str | None) -> Facts:
    """A copy of the facts whose workload runs in `scope` (a unit, or the login shell)."""
    wl = facts.workload.model_copy(deep=True)
    if scope and scope != LOGIN_SHELL:
        wl.service = scope
        wl.launch = None
    else:
        wl.service = None
    return facts.model_copy(update={"workload": wl})


def scoped_dict(facts: dict[str, Any], scope: str | None) -> dict[str, Any]:
    """The same for the planner's plain-dict states (no copy of the big parts)."""
    wl = dict(facts.get("workload") or {})
    if scope and scope != LOGIN_SHELL:
        wl["service"], wl["launch"] = scope, None
    else:
        wl["service"] = None
    return {**facts, "workload": wl}


def failing(kb: Any, facts: Facts, scope: str) -> list[str]:
    """The error-level rules violated under a scope's environment ('rule @ subject')."""
    from remedy.evaluate import evaluate

    ev = evaluate(kb, scoped(facts, scope).model_dump())
    return [f"{v.rule} @ {v.subject}" for v in ev.errors_only()]


def unit_name(name: str) -> str:
    return name if "." in name else name + ".service"


def choose_scopes(
    kb: Any,
    facts: Facts,
    *,
    service: str | None = None,
    services: list[str] | None = None,
    launch: str | None = None,
) -> list[str]:
    """The scopes a plan for these facts covers, first the units (see the module docstring)."""
    named = [
        s if s == LOGIN_SHELL else unit_name(s)
        for s in ([service] if service else list(services or []))
    ]
    if named:
        have = {s.name for s in facts.services} | {LOGIN_SHELL}
        missing = [n for n in named if n not in have]
        if missing:
            raise InputError(
                f"no unit {missing[0]!r} in the host's facts",
                hint="units seen: " + (", ".join(sorted(have)) or "none"),
            )
        return list(dict.fromkeys(named))
    if launch:
        return [LOGIN_SHELL]
    consumers = [s.name for s in facts.services if consumer_of(s)]
    if not consumers:
        return [LOGIN_SHELL]
    return [u for u in consumers if failing(kb, facts, u)] or consumers


def inventory_services(hostvars: dict[str, Any], host: str) -> list[str] | None:
    """`remedy_services` of an inventory host (a list, or a comma/space separated string)."""
    val = hostvars.get("remedy_services")
    if val is None:
        return None
    if isinstance(val, str):
        names = [x for x in re.split(r"[,\s]+", val) if x]
    elif isinstance(val, list) and all(isinstance(x, str) for x in val):
        names = [x.strip() for x in val if x.strip()]
    else:
        raise InputError(
            f"{host}: remedy_services must be a list of unit names or a comma-separated string"
        )
    from remedy.units.specifiers import unit_type  # a name systemd accepts, with its type

    for n in names:
        if n == LOGIN_SHELL:
            continue
        bad = n.startswith(("-", ".")) or not re.fullmatch(r"[A-Za-z0-9:_.\\@-]+", n)
        if bad or unit_type(unit_name(n)) is None:  # "-H…": an option of systemctl
            raise InputError(f"{host}: remedy_services names no unit: {n!r}")
    return names


def with_scopes(
    kb: Any,
    facts: Facts,
    *,
    service: str | None = None,
    launch: str | None = None,
    services: list[str] | None = None,
) -> Facts:
    """The facts with the workload the user asked for and the scopes it covers. A unit the
    facts file itself names (`workload.service`) counts as named."""
    if service and launch:
        raise InputError("give --service or --launch, not both")
    if service:
        from remedy.model import unit_name as checked_unit

        try:
            checked_unit(service)
        except ValueError as exc:
            raise InputError(f"--service: {exc}") from None
    if launch:
        facts.workload.launch = launch
        facts.workload.service = None
    service = service or (None if launch or services else facts.workload.service)
    scopes = choose_scopes(kb, facts, service=service, services=services, launch=launch)
    facts.workload.scopes = scopes
    units = [s for s in scopes if s != LOGIN_SHELL]
    facts.workload.service = units[0] if units and LOGIN_SHELL not in scopes else None
    return facts
