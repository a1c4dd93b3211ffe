"""Markdown reports rendered with Jinja2 templates (sandboxed, like every template in remedy)."""

from __future__ import annotations

from pathlib import Path

from jinja2 import FileSystemLoader, StrictUndefined
from jinja2.sandbox import ImmutableSandboxedEnvironment

from remedy.model import Plan
from remedy.report.safe import fence_len, md, md_code, strip_controls

_ENV = ImmutableSandboxedEnvironment(
    loader=FileSystemLoader(str(Path(__file__).parent / "templates")),
    undefined=StrictUndefined,
    trim_blocks=True,
    lstrip_blocks=True,
    autoescape=False,
    # every value that reaches the page loses its control characters; templates pick the
    # escaping for where it lands (md: prose and table cells, mdcode: inline code)
    finalize=lambda v: strip_controls(v) if isinstance(v, str) else v,
)
_ENV.filters["md"] = md
_ENV.filters["mdcode"] = md_code
_ENV.filters["fence_len"] = fence_len


def plan_markdown(plan: Plan) -> str:
    return _ENV.get_template("plan.md.j2").render(plan=plan)
