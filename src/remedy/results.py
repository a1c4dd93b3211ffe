"""What a log scan and a diagnosis produce, as plain objects: Symptom, SuspiciousLine,
Hypothesis, Diagnosis, and their JSON.

Why: `remedy diagnose --log FILE [--json]` made these as pydantic models (remedy.model) and
printed ``model_dump_json(indent=2)``; importing pydantic and building its classes was ~30 ms
of each such process, for objects nothing validates (remedy makes every one itself). These
classes have the same fields, defaults and order as remedy.model's models of the same names,
which stay the schema: a saved plan (remedy.model.Plan's ``symptoms`` and ``learned``) and
`remedy schema diagnosis` use them, built from these by attribute (``from_attributes``).
``model_dump_json(indent=2)`` writes the bytes pydantic writes for the same data
(tests/test_results.py compares them). Change a field here and in remedy.model together.
"""

from __future__ import annotations

import json
import math
from typing import Any

_STR_ESCAPE = json.encoder.encode_basestring  # type: ignore[attr-defined]


def source_short(src: Any) -> str:
    """One line naming an upstream citation (repo:path::function @ref, else doc/thread/note).

    Shared by remedy.model.Source (the schema) and remedy.evidence.plain.Source (the cached
    plain row) so a citation reads the same whichever path printed it."""
    if src.repo and src.path:
        s = f"{src.repo}:{src.path}"
        if src.function:
            s += f"::{src.function}"
        if src.ref:
            s += f" @{src.ref}"
        return s
    return src.doc or src.thread or src.note or "?"


class _Plain:
    """Fields as attributes, in ``_FIELDS`` order; defaults made fresh for each object."""

    _FIELDS: tuple[str, ...] = ()

    def __eq__(self, other: object) -> bool:
        if type(other) is not type(self):
            return NotImplemented
        return self.__dict__ == other.__dict__

    __hash__ = None  # type: ignore[assignment]  # mutable, as pydantic's models

    def __repr__(self) -> str:
        inner = ", ".join(f"{k}={getattr(self, k)!r}" for k in self._FIELDS)
        return f"{type(self).__name__}({inner})"

    def model_copy(self, *, update: dict[str, Any] | None = None) -> Any:
        """A shallow copy with ``update``'s fields replaced (pydantic's model_copy)."""
        new = object.__new__(type(self))
        new.__dict__.update(self.__dict__)
        if update:
            new.__dict__.update(update)
        return new

    def model_dump(self, *, exclude: set[str] | None = None) -> dict[str, Any]:
        """The fields as plain data, nested objects as dicts (pydantic's model_dump)."""
        return {k: _dump(getattr(self, k)) for k in self._FIELDS if not exclude or k not in exclude}

    def model_dump_json(self, *, indent: int | None = None) -> str:
        """pydantic's model_dump_json for the same data, byte for byte."""
        out: list[str] = []
        _write(self, out, indent, 0)
        return "".join(out)


class Symptom(_Plain):
    """One matched signature in a log: what, where, and the fields it extracted."""

    _FIELDS = (
        "signature",
        "line",
        "text",
        "source",
        "fields",
        "process",
        "stage",
        "component",
        "severity",
    )

    def __init__(
        self,
        *,
        signature: str,
        line: int,
        text: str,
        source: str = "<stdin>",
        fields: dict[str, str] | None = None,
        process: str | None = None,
        stage: str | None = None,
        component: str | None = None,
        severity: str = "error",
    ) -> None:
        self.signature = signature
        self.line = line  # 1-based line number in the source
        self.text = text  # the line, journald prefix stripped, truncated to a sane length
        self.source = source
        self.fields = dict(fields) if fields else {}
        self.process = process  # journald identifier[pid] when present
        self.stage = stage
        self.component = component
        self.severity = severity


class SuspiciousLine(_Plain):
    _FIELDS = ("line", "text", "source", "score", "reason")

    def __init__(
        self,
        *,
        line: int,
        text: str,
        source: str = "<stdin>",
        score: float = 0.0,
        reason: str = "",
    ) -> None:
        self.line = line
        self.text = text
        self.source = source
        self.score = float(score)
        self.reason = reason


class Hypothesis(_Plain):
    """With a log and no facts: a cause consistent with what was seen."""

    _FIELDS = (
        "rule",
        "message",
        "score",
        "evidence",
        "confirm_with",
        "distinguishes_from",
        "confidence",
        "support_lines",
        "matched_fields",
        "settle_with",
        "source",
        "probability",
    )

    def __init__(
        self,
        *,
        rule: str,
        message: str,
        score: float,
        evidence: list[int] | None = None,
        confirm_with: list[str] | None = None,
        distinguishes_from: dict[str, str] | None = None,
        confidence: float = 0.0,
        support_lines: int = 0,
        matched_fields: list[str] | None = None,
        settle_with: str | None = None,
        source: str = "rules",
        probability: float | None = None,
    ) -> None:
        if source not in ("rules", "learned"):
            raise ValueError(f"a hypothesis's source is 'rules' or 'learned', not {source!r}")
        self.rule = rule
        self.message = message
        self.score = float(score)
        self.evidence = list(evidence) if evidence else []
        self.confirm_with = list(confirm_with) if confirm_with else []
        self.distinguishes_from = dict(distinguishes_from) if distinguishes_from else {}
        # evidence behind the rank (issue 17): 0..1 share of the evidence, lines and fields
        self.confidence = float(confidence)
        self.support_lines = int(support_lines)
        self.matched_fields = list(matched_fields) if matched_fields else []
        self.settle_with = settle_with  # the one fact that would confirm or refute it
        # "learned": named by the corpus-trained text classifier (remedy.evidence.learned)
        # because no rule matched the log; a hint with its probability, never a plan's cause
        self.source = source
        self.probability = None if probability is None else float(probability)


class Diagnosis(_Plain):
    """``findings`` and ``advice`` hold remedy.model.Finding (pydantic): only a diagnosis
    with facts has any, and facts are pydantic already."""

    _FIELDS = (
        "host",
        "symptoms",
        "findings",
        "advice",
        "hypotheses",
        "unexplained",
        "suspicious",
        "partial_facts",
        "collect_next",
        "evaluation_errors",
    )

    def __init__(
        self,
        *,
        host: str | None = None,
        symptoms: list[Symptom] | None = None,
        findings: list[Any] | None = None,
        advice: list[Any] | None = None,
        hypotheses: list[Hypothesis] | None = None,
        unexplained: list[int] | None = None,
        suspicious: list[SuspiciousLine] | None = None,
        partial_facts: dict[str, Any] | None = None,
        collect_next: list[str] | None = None,
        evaluation_errors: list[str] | None = None,
    ) -> None:
        self.host = host
        self.symptoms = list(symptoms) if symptoms else []
        self.findings = list(findings) if findings else []
        self.advice = list(advice) if advice else []  # warning-level rules: risks, not faults
        self.hypotheses = list(hypotheses) if hypotheses else []
        self.unexplained = list(unexplained) if unexplained else []
        self.suspicious = list(suspicious) if suspicious else []
        self.partial_facts = dict(partial_facts) if partial_facts else {}
        self.collect_next = list(collect_next) if collect_next else []
        # rules that could not be evaluated (a knowledge bug): shown, never silently dropped
        self.evaluation_errors = list(evaluation_errors) if evaluation_errors else []


# -- JSON as pydantic writes it ------------------------------------------------------------


def _dump(v: Any) -> Any:
    if isinstance(v, _Plain):
        return v.model_dump()
    if isinstance(v, list | tuple):
        return [_dump(x) for x in v]
    if isinstance(v, dict):
        return {k: _dump(x) for k, x in v.items()}
    if hasattr(v, "model_dump"):  # a pydantic model (a Finding)
        return v.model_dump()
    return v


def json_float(x: float) -> str:
    """A float as pydantic-core writes it (serde_json's ryu): the shortest digits that read
    back as ``x`` (Python's repr has the same digits), a decimal point from 1e-5 up to 1e16,
    else an exponent without leading zeros ('e-7', 'e+16'); inf and nan as null."""
    if not math.isfinite(x):
        return "null"
    r = repr(x)
    sign = ""
    if r.startswith("-"):
        sign, r = "-", r[1:]
    mant, _, e = r.partition("e")
    whole, _, frac = mant.partition(".")
    digits = (whole + frac).lstrip("0")
    exp = int(e or 0) + len(whole)  # the decimal point after `exp` digits
    if not digits:
        return sign + "0.0"
    lead = len(whole + frac) - len((whole + frac).lstrip("0"))
    exp -= lead
    digits = digits.rstrip("0")
    n = len(digits)
    if 0 <= n <= exp <= 16:  # an integer: digits, zeros, ".0"
        return f"{sign}{digits}{'0' * (exp - n)}.0"
    if 0 < exp <= 16:  # the point inside the digits
        return f"{sign}{digits[:exp]}.{digits[exp:]}"
    if -5 < exp <= 0:  # 0.000ddd
        return f"{sign}0.{'0' * -exp}{digits}"
    e10 = exp - 1
    m = digits[0] + ("." + digits[1:] if n > 1 else "")
    return f"{sign}{m}e{e10:+d}" if e10 > 0 else f"{sign}{m}e{e10}"


def _write(v: Any, out: list[str], indent: int | None, level: int) -> None:
    if v is None:
        out.append("null")
    elif v is True:
        out.append("true")
    elif v is False:
        out.append("false")
    elif isinstance(v, str):
        out.append(_STR_ESCAPE(v))
    elif isinstance(v, int):
        out.append(str(int(v)))
    elif isinstance(v, float):
        out.append(json_float(v))
    elif isinstance(v, _Plain):
        _write_items([(k, getattr(v, k)) for k in v._FIELDS], out, indent, level)
    elif isinstance(v, dict):
        _write_items(list(v.items()), out, indent, level)
    elif isinstance(v, list | tuple):
        if not v:
            out.append("[]")
            return
        if indent is None:
            out.append("[")
            for i, x in enumerate(v):
                if i:
                    out.append(",")
                _write(x, out, indent, level)
            out.append("]")
            return
        pad = "\n" + " " * (indent * (level + 1))
        out.append("[")
        for i, x in enumerate(v):
            out.append(("," if i else "") + pad)
            _write(x, out, indent, level + 1)
        out.append("\n" + " " * (indent * level) + "]")
    elif hasattr(v, "model_dump"):  # a pydantic model (a Finding)
        _write(v.model_dump(), out, indent, level)
    else:
        raise TypeError(f"cannot write {type(v).__name__} as JSON")


def _write_items(
    items: list[tuple[Any, Any]], out: list[str], indent: int | None, level: int
) -> None:
    if not items:
        out.append("{}")
        return
    sep = ":" if indent is None else ": "
    pad = "" if indent is None else "\n" + " " * (indent * (level + 1))
    out.append("{")
    for i, (k, x) in enumerate(items):
        out.append(("," if i else "") + pad + _STR_ESCAPE(str(k)) + sep)
        _write(x, out, indent, level + 1)
    out.append(("" if indent is None else "\n" + " " * (indent * level)) + "}")
