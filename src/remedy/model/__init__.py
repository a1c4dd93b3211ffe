"""Pydantic models shared by every part of remedy.

These are the boundary types: what collectors produce (Facts), what the log reader produces
(Symptom), what diagnosis produces (Finding) and what the planner produces (Plan). They are
plain data so a plan can be saved, diffed and applied later exactly as previewed.

Facts and its parts live in ``remedy.model.host``, Plan and its parts in ``remedy.model.plan``;
both are imported on first use of one of their names from here (PEP 562), so
``from remedy.model import Facts`` works as before. Why: ``diagnose --log`` builds neither,
and making their 14 pydantic classes was ~7 ms of each such process's start-up, on the main
process's path while the scan workers compete with it for the CPUs.
"""

# No `from __future__ import annotations` here: pydantic would then evaluate every field's
# annotation from its string (an eval per field, ~300 for remedy's models) each time remedy
# starts; evaluated by Python as the class body runs, they cost nothing extra. Every name an
# annotation uses must therefore be defined above it (quote a forward reference).

import importlib
import re
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

# systemd's unit name characters (systemd.unit(5): ASCII letters, digits, ":", "-", "_", ".",
# "\\"; "@" for templates). A name is an argument of systemctl, a directory name and text in
# drop-ins: one starting with "-" was an option (`systemctl show -H127.0.0.1:PORT` made root's
# ssh connect where a saved plan's workload.service said).
_UNIT_NAME = re.compile(r"[A-Za-z0-9:_.\\@-]{1,256}")


def unit_name(v: str) -> str:
    """``v`` if it can be a systemd unit name (never an option, a path or a shell word)."""
    if not _UNIT_NAME.fullmatch(v) or v.startswith(("-", ".")):
        raise ValueError(
            f"{v!r} is not a systemd unit name (letters, digits, ':', '_', '.', '\\', '@', '-';"
            " not starting with '-' or '.')"
        )
    return v


class Strict(BaseModel):
    # validator and serializer built when a model is first validated or dumped, not when its
    # class is made (~0.3 ms a class): a warm `diagnose` takes the knowledge and the signature
    # catalog whole from remedy.knowledge.kbcache and never validates most of these models
    model_config = ConfigDict(extra="forbid", defer_build=True)


# --------------------------------------------------------------------------------------------
# Upstream citations
# --------------------------------------------------------------------------------------------


class Source(Strict):
    """Where a piece of knowledge comes from: upstream code, a doc, or a field report."""

    repo: str | None = None
    path: str | None = None
    function: str | None = None
    ref: str | None = None
    doc: str | None = None
    thread: str | None = None
    note: str | None = None

    def short(self) -> str:
        from remedy.results import source_short

        return source_short(self)


def nul_at(value: Any, where: str = "") -> str | None:
    """Where a NUL character is in decoded JSON/YAML data (a key or a string), or None.

    No path, name, version or environment value on a host can hold one (the kernel and
    `env -0` cut there), so in facts it is an edit or a garbled reply; left in, it reached a
    shell quoting that refuses it (an internal error) or a C string cut short."""
    if isinstance(value, str):
        return (where or "(top level)") if "\0" in value else None
    if isinstance(value, dict):
        for k, v in value.items():
            here = f"{where}.{k}" if where else str(k)
            if isinstance(k, str) and "\0" in k:
                return here
            found = nul_at(v, here)
            if found:
                return found
    elif isinstance(value, list):
        for i, v in enumerate(value):
            found = nul_at(v, f"{where}[{i}]")
            if found:
                return found
    return None


# --------------------------------------------------------------------------------------------
# Evidence
# --------------------------------------------------------------------------------------------


# Symptom, SuspiciousLine, Hypothesis and Diagnosis are made by remedy as the plain objects of
# remedy.results (same names, fields, defaults and order: change both together); these are
# their schema, for a saved plan's `symptoms`/`learned` and `remedy schema`, built from the
# plain objects by attribute (from_attributes).


class Symptom(Strict):
    """One matched signature in a log: what, where, and the fields it extracted."""

    model_config = ConfigDict(from_attributes=True)

    signature: str
    line: int  # 1-based line number in the source
    text: str  # the line, journald prefix stripped, truncated to a sane length
    source: str = "<stdin>"
    fields: dict[str, str] = Field(default_factory=dict)
    process: str | None = None  # journald identifier[pid] when present
    stage: str | None = None
    component: str | None = None
    severity: str = "error"


class SuspiciousLine(Strict):
    model_config = ConfigDict(from_attributes=True)

    line: int
    text: str
    source: str = "<stdin>"
    score: float = 0.0
    reason: str = ""


# --------------------------------------------------------------------------------------------
# Diagnosis and plans
# --------------------------------------------------------------------------------------------


class Finding(Strict):
    """A violated rule on a host: a root-cause candidate."""

    rule: str
    message: str
    subject: str  # e.g. "flashinfer-jit" or a toolkit prefix
    consumer: str | None = None
    affects: list[str] = Field(default_factory=list)  # consumer ids that hit it
    toolkit: str | None = None
    severity: str = "error"
    because: list[str] = Field(default_factory=list)  # external facts that make it true
    explains: list[int] = Field(default_factory=list)  # indexes into the symptoms list
    predicts: list[str] = Field(default_factory=list)  # signature ids expected if unfixed
    observed: bool = False  # at least one predicted signature was seen
    source: Source | None = None
    confirm_with: list[str] = Field(default_factory=list)  # facts that would confirm it
    scope: str | None = None  # the environment it holds in (a unit, "login-shell"; remedy.scope)


class Hypothesis(Strict):
    """With a log and no facts: a cause consistent with what was seen."""

    model_config = ConfigDict(from_attributes=True)
    rule: str
    message: str
    score: float
    evidence: list[int] = Field(default_factory=list)
    confirm_with: list[str] = Field(default_factory=list)
    distinguishes_from: dict[str, str] = Field(default_factory=dict)
    # evidence behind the rank (issue 17): 0..1 share of the evidence, lines and field matches
    confidence: float = 0.0
    support_lines: int = 0
    matched_fields: list[str] = Field(default_factory=list)
    settle_with: str | None = None  # the one fact that would confirm or refute it
    # "learned": named by the corpus-trained text classifier (remedy.evidence.learned) because
    # no rule matched the log; a hint with its probability, never a cause a plan acts on
    source: Literal["rules", "learned"] = "rules"
    probability: float | None = None


class Diagnosis(Strict):
    host: str | None = None
    symptoms: list[Symptom] = Field(default_factory=list)
    findings: list[Finding] = Field(default_factory=list)
    advice: list[Finding] = Field(default_factory=list)  # warning-level rules: risks, not faults
    hypotheses: list[Hypothesis] = Field(default_factory=list)
    unexplained: list[int] = Field(default_factory=list)
    suspicious: list[SuspiciousLine] = Field(default_factory=list)
    partial_facts: dict[str, Any] = Field(default_factory=dict)
    collect_next: list[str] = Field(default_factory=list)
    # rules that could not be evaluated (a knowledge bug): shown, never silently dropped
    evaluation_errors: list[str] = Field(default_factory=list)


# what remedy.model.host and remedy.model.plan define (imported by __getattr__ on first use)
_HOST = ("CcclTree", "Facts", "Gpu", "PythonEnv", "Requirement", "Service", "Toolkit", "Workload")
_PLAN = ("FailedOperation", "Plan", "Rejected", "Step", "Touch", "Verification")
_LAZY = {**dict.fromkeys(_HOST, "host"), **dict.fromkeys(_PLAN, "plan")}

if TYPE_CHECKING:
    from remedy.model.host import (
        CcclTree,
        Facts,
        Gpu,
        PythonEnv,
        Requirement,
        Service,
        Toolkit,
        Workload,
    )
    from remedy.model.plan import FailedOperation, Plan, Rejected, Step, Touch, Verification


def __getattr__(name: str) -> Any:
    where = _LAZY.get(name)
    if where is None:
        raise AttributeError(f"module 'remedy.model' has no attribute {name!r}")
    value = getattr(importlib.import_module(f"remedy.model.{where}"), name)
    globals()[name] = value
    return value


__all__ = [
    "CcclTree",
    "Diagnosis",
    "Facts",
    "FailedOperation",
    "Finding",
    "Gpu",
    "Hypothesis",
    "Plan",
    "PythonEnv",
    "Rejected",
    "Requirement",
    "Service",
    "Source",
    "Step",
    "Strict",
    "SuspiciousLine",
    "Symptom",
    "Toolkit",
    "Touch",
    "Verification",
    "Workload",
    "nul_at",
]
