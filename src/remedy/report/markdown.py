"""Markdown reports rendered with Jinja2 templates (sandboxed, like every template in remedy)."""

from __future__ import annotations

from pathlib import Path

from jinja2 import FileSystemLoader, StrictUndefined
from jinja2.sandbox import ImmutableSandboxedEnvironment

from remedy.model import Plan

_ENV = ImmutableSandboxedEnvironment(
    loader=FileSystemLoader(str(Path(__file__).parent / "templates")),
    undefined=StrictUndefined,
    trim_blocks=True,
    lstrip_blocks=True,
    autoescape=False,
)


def plan_markdown(plan: Plan) -> str:
    return _ENV.get_template("plan.md.j2").render(plan=plan)
