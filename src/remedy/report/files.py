"""`--report FILE`: the report's format follows the file name (.html, .md)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from remedy.errors import InputError
from remedy.fileread import json_loads
from remedy.report.safe import md, md_code

FORMATS = (".html", ".htm", ".md", ".markdown")


def report_format(path: Path, option: str = "--report") -> str:
    """The format `path` names; `option` is how the user gave it (`remedy report` takes
    --out: its error named a --report the user never typed)."""
    suffix = path.suffix.lower()
    if suffix not in FORMATS:
        raise InputError(
            f"{option} {path}: say the format with the file name: .html or .md",
            hint=f"e.g. {option} report.html (a self-contained page) or {option} report.md",
        )
    return "html" if suffix in (".html", ".htm") else "md"


def plan_report(plan: Any, fmt: str) -> str:
    from remedy.report.chain import plan_chain

    if fmt == "html":
        from remedy.report.html import plan_html

        return plan_html(plan)
    from remedy.report.markdown import plan_markdown
    from remedy.report.mermaid import chain_mermaid

    g = plan_chain(plan)
    return (
        f"# {md(g.title)}\n\n## Failure chain: {md(' → '.join(g.layers))}\n\n"
        + chain_mermaid(g)
        + "\n"
        + plan_markdown(plan)
    )


def impact_report(rep: Any, fmt: str, title: str = "remedy impact — blast radius") -> str:
    from remedy.report.chain import impact_chain

    if fmt == "html":
        from remedy.report.html import impact_html

        return impact_html(rep, title)
    from remedy.report.mermaid import chain_mermaid

    g = impact_chain(rep, title)
    lines = [f"# {md(title)}\n", f"## Blast radius: {md(' → '.join(g.layers))}\n", chain_mermaid(g)]
    lines.append("| consumer | variable | predicted effect | error |\n|---|---|---|---|")
    for c in rep.consumers:
        # host text (a path in an effect or an error) escaped for its cell or code span
        cells = [
            ("**BREAKS** " if c.breaks else "") + md(c.name),
            md_code(c.variable),
            md(c.effect),
            md_code(c.error) if c.error else "",
        ]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def fleet_report(report: dict[str, Any], fmt: str) -> str:
    from remedy.report.chain import fleet_chain

    if fmt == "html":
        from remedy.report.html import fleet_html

        return fleet_html(report)
    from remedy.report.mermaid import chain_mermaid

    g = fleet_chain(report)
    return f"# {md(g.title)}\n\n" + chain_mermaid(g)


def report_from_json(data: bytes, name: str, fmt: str, fleet_model: Any = None) -> str:
    """A saved plan, impact report or fleet report (their --json), drawn. ``fleet_model``:
    the pydantic model a fleet report must validate as (remedy.fleet.report.FleetReport,
    given by the caller: report/ does not import fleet/)."""
    try:
        doc = json_loads(data)
    except (ValueError, UnicodeDecodeError):
        raise InputError(f"{name} is not JSON: give a saved plan, impact or fleet report") from None
    if isinstance(doc, dict) and "steps" in doc and "facts_digest" in doc:
        from remedy.planfile import load_plan

        return plan_report(load_plan(data, name), fmt)
    from pydantic import ValidationError

    if isinstance(doc, dict) and "hosts" in doc and "groups" in doc:
        if fleet_model is None:
            return fleet_report(doc, fmt)
        # checked as the impact report is: drawn from a raw dict, `"hosts": 5` (or the
        # `facts --inventory --json` document, whose groups are a count) was an internal error
        try:
            rep = fleet_model.model_validate(doc)
        except ValidationError as exc:
            err = exc.errors()[0]
            loc = ".".join(str(x) for x in err["loc"]) or "(top level)"
            raise InputError(
                f"{name}: not a valid fleet report (`remedy run|plan --inventory --json`): "
                f"{loc}: {err['msg']}"
            ) from None
        return fleet_report(rep.model_dump(mode="json"), fmt)
    if isinstance(doc, dict) and "consumers" in doc and "changes" in doc:
        from remedy.impact import ImpactReport

        try:
            return impact_report(ImpactReport.model_validate(doc), fmt)
        except ValidationError as exc:
            raise InputError(
                f"{name}: not a valid impact report: {exc.errors()[0]['msg']}"
            ) from None
    from remedy.planfile import what_it_is

    raise InputError(
        f"{name} is {what_it_is(doc)}: remedy draws saved plans, impact reports "
        "(`remedy impact --json`) and fleet reports (`--inventory --json`)"
    )
