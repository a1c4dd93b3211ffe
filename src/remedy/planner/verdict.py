"""What a plan claims about the log it was made from: which fatal line each step addresses, and
which fatal lines no finding explains.

A plan that repairs real defects of a host but not the one that stopped the build must say so
at its top, in its JSON and in its status: applying it will not make the failure go away.
"""

from __future__ import annotations

from remedy.knowledge.providers import missing_file
from remedy.model import Finding, Plan, Symptom

# the fields a signature extracts that name a missing file, and how to read them
FILE_FIELDS = {"missing_header": "header", "missing_lib": "lib", "shared_lib": "so"}


def fatal_indexes(symptoms: list[Symptom]) -> list[int]:
    return [i for i, s in enumerate(symptoms) if s.severity == "fatal"]


def missing_files(symptoms: list[Symptom]) -> list[str]:
    """Files the failing operation could not find, from its fatal lines (validated names)."""
    out: list[str] = []
    for i in fatal_indexes(symptoms):
        for fld, kind in FILE_FIELDS.items():
            v = symptoms[i].fields.get(fld)
            f = missing_file(kind, v) if v else None
            if f and f not in out:
                out.append(f)
    return out


def _named_file(s: Symptom) -> str | None:
    for fld in FILE_FIELDS:
        if s.fields.get(fld):
            return s.fields[fld]
    return None


def explains(f: Finding, i: int, s: Symptom) -> bool:
    """A finding explains a fatal line when it predicts the line's signature and, for a line
    that names a missing file, the finding is about that file (names it): "cannot find
    -lcudart" is the link layout's, "cutlass/cutlass.h: No such file" is not."""
    if i not in f.explains:
        return False
    name = _named_file(s)
    if not name:
        return True
    base = name[3:] if name.startswith("lib") else name
    return name in f.message or f"lib{base}" in f.message or f"-l{name}" in f.message


def line_ref(s: Symptom) -> str:
    return f"{s.source}:{s.line}: {s.text}"


def attribute(plan: Plan) -> None:
    """Fill each step's `addresses` and the plan's `unexplained` fatal lines; a plan with
    steps or nothing to do whose log has an unexplained fatal line gets status 'unexplained'."""
    fatal = fatal_indexes(plan.symptoms)
    explained: set[int] = set()
    for step in plan.steps:
        step.addresses = []
    for f in plan.findings:
        mine = [i for i in fatal if explains(f, i, plan.symptoms[i])]
        explained.update(mine)
        for step in plan.steps:
            if f.rule in step.fixes:
                for i in mine:
                    ref = line_ref(plan.symptoms[i])
                    if ref not in step.addresses:
                        step.addresses.append(ref)
    plan.unexplained = [line_ref(plan.symptoms[i]) for i in fatal if i not in explained]
    if plan.unexplained and plan.status in ("ok", "nothing-to-do"):
        plan.status = "unexplained"
