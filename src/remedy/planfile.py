"""Reading a saved plan, with a message a person can act on when the file is not one.

pydantic's errors list every field of every nested model; for "you gave me the facts file"
that is forty lines that never say so. Here the file is first recognised for what it is."""

from __future__ import annotations

from typing import Any

from pydantic import ValidationError

from remedy.errors import InputError
from remedy.fileread import json_loads
from remedy.model import Plan

_HINT = "make one with `remedy plan ... --out plan.json`"


def what_it_is(data: Any) -> str:
    """A short name for a JSON document that is not a plan."""
    if not isinstance(data, dict):
        return f"JSON {type(data).__name__}, not an object"
    keys = set(data)
    if "toolkits" in keys or "pythons" in keys or "gpus" in keys:
        return "a facts file (`remedy facts --json`)"
    if "hypotheses" in keys or ("findings" in keys and "steps" not in keys):
        return "a diagnosis (`remedy diagnose --json`)"
    if "consumers" in keys and "changes" in keys:
        return "an impact report (`remedy impact --json`)"
    if "outcome" in keys and "run_id" in keys:
        return "a run report (`remedy run --json`)"
    if "$schema" in keys or ("properties" in keys and "type" in keys):
        return "a JSON Schema"
    return "a JSON object without a plan's fields"


SCHEMA_VERSION: int = Plan.model_fields["schema_version"].default


def _check_schema(version: Any, name: str) -> None:
    """A plan of another schema version is refused, never read as this one: its fields may
    mean something else (a step's parameters, what a digest covers), and a plan is run as root."""
    if type(version) is int and version == SCHEMA_VERSION:
        return
    # a plan without the field may be damaged as well as older: the message says both
    what = (
        "is a damaged or hand-edited remedy plan, or a remedy plan of another format: it has no "
        "schema_version"
        if version is None
        else f"is a remedy plan of another format: it has schema_version {repr(version)[:40]}"
    )
    raise InputError(
        f"{name} {what}, this remedy reads schema_version {SCHEMA_VERSION}",
        hint="make it again with this remedy: `remedy plan ... --out plan.json`",
    )


def load_plan(raw: bytes, name: str) -> Plan:
    """The plan in ``raw``, or an InputError saying what the file is instead."""
    try:
        data = json_loads(raw)
    except (ValueError, UnicodeDecodeError) as exc:
        head = raw[:200].lstrip()
        kind = "YAML or text" if head and not head.startswith((b"{", b"[")) else "broken JSON"
        if kind == "broken JSON" and getattr(exc, "doc", None):  # where and what the parser says
            kind += f" (line {exc.lineno}, column {exc.colno}: {exc.msg})"  # type: ignore[attr-defined]
        raise InputError(
            f"{name} is not a saved remedy plan: it is {kind}, a plan is JSON", hint=_HINT
        ) from None
    if not (isinstance(data, dict) and "steps" in data and "facts_digest" in data):
        raise InputError(f"{name} is not a saved remedy plan: it is {what_it_is(data)}", hint=_HINT)
    _check_schema(data.get("schema_version"), name)
    try:
        return Plan.model_validate(data)
    except ValidationError as exc:
        err = exc.errors()[0]
        loc = ".".join(str(p) for p in err["loc"]) or "(top level)"
        more = f" (and {exc.error_count() - 1} more)" if exc.error_count() > 1 else ""
        raise InputError(
            f"{name} is a damaged or hand-edited remedy plan: {loc}: {err['msg']}{more}",
            hint="make it again with `remedy plan ... --out plan.json`",
        ) from None
