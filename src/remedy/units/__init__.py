"""systemd units: read them as PID 1 does, preview environment changes, write drop-ins safely.

parse_unit(name, fragment, dropins)          -> UnitConfig   (pure; systemd 252 semantics)
load_unit(UnitFiles)                          -> Unit         (+ EnvironmentFile, effective env)
await read_unit(transport, name)              -> UnitFiles    (1-2 round trips, writes nothing)
plan_dropin(files, {VAR: value|None})         -> (DropinPreview, UnitFiles after)
await impact_unit(transport, kb, unit, changes, facts) -> UnitImpact
print_unit_impact(console, impact)
parse_show_environment(line) / format_show_environment(env)   (`systemctl show -p Environment`)
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from remedy.units.dropin import (
        DROPIN_NAME,
        DropinPreview,
        VerifyResult,
        dropin_path,
        plan_dropin,
        render_dropin,
        verify_unit_files,
    )
    from remedy.units.host import read_unit
    from remedy.units.impact import (
        EnvChange,
        UnitImpact,
        facts_for_unit,
        impact_unit,
        print_unit_impact,
        unit_impact_from_files,
        unit_impact_renderable,
    )
    from remedy.units.parse import (
        Diagnostic,
        SourceFile,
        Unit,
        UnitConfig,
        UnitFiles,
        dropin_dirs,
        load_unit,
        order_dropins,
        parse_env_file,
        parse_unit,
    )
    from remedy.units.specifiers import HostContext
    from remedy.units.syntax import format_show_environment, parse_show_environment


# Names resolve on first use (PEP 562): importing one submodule (operations need only
# `dropin`) must not pull in the host reader (asyncio, the SSH transport) or the impact
# preview (rich) for every command.
_WHERE = {
    **dict.fromkeys(
        (
            "DROPIN_NAME",
            "DropinPreview",
            "VerifyResult",
            "dropin_path",
            "plan_dropin",
            "render_dropin",
            "verify_unit_files",
        ),
        "dropin",
    ),
    "read_unit": "host",
    **dict.fromkeys(
        (
            "EnvChange",
            "UnitImpact",
            "facts_for_unit",
            "impact_unit",
            "print_unit_impact",
            "unit_impact_from_files",
            "unit_impact_renderable",
        ),
        "impact",
    ),
    **dict.fromkeys(
        (
            "Diagnostic",
            "SourceFile",
            "Unit",
            "UnitConfig",
            "UnitFiles",
            "dropin_dirs",
            "load_unit",
            "order_dropins",
            "parse_env_file",
            "parse_unit",
        ),
        "parse",
    ),
    "HostContext": "specifiers",
    "format_show_environment": "syntax",
    "parse_show_environment": "syntax",
}


def __getattr__(name: str) -> Any:
    mod = _WHERE.get(name)
    if mod is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{mod}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})


__all__ = [
    "DROPIN_NAME",
    "Diagnostic",
    "DropinPreview",
    "EnvChange",
    "HostContext",
    "SourceFile",
    "Unit",
    "UnitConfig",
    "UnitFiles",
    "UnitImpact",
    "VerifyResult",
    "dropin_dirs",
    "dropin_path",
    "facts_for_unit",
    "format_show_environment",
    "impact_unit",
    "load_unit",
    "order_dropins",
    "parse_env_file",
    "parse_show_environment",
    "parse_unit",
    "plan_dropin",
    "print_unit_impact",
    "read_unit",
    "render_dropin",
    "unit_impact_from_files",
    "unit_impact_renderable",
    "verify_unit_files",
]
