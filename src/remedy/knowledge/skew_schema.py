"""The schema of knowledge/version-pairs.yaml (pydantic) and its loader.

Split off remedy.knowledge.skew, whose relations (``check``, ``log_versions``,
``log_pairs``) a log-only diagnosis calls on the plain records of remedy.knowledge.logview:
that path imports no pydantic. The knowledge loader validates the file with the models here.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from remedy.errors import KnowledgeError
from remedy.knowledge.skew import Kind, Relation
from remedy.knowledge.yamlload import KEYLINES_KEY, line_of, load_yaml, validate_entry

if TYPE_CHECKING:
    from remedy.knowledge.schema import Rule


class Side(BaseModel):
    """One part of a pair: which component, how host facts and log fields give its version."""

    model_config = ConfigDict(extra="forbid", defer_build=True)

    part: str
    kind: Kind
    fact: str  # expression over the rule context (tk, py, gpu, env, c, ...)
    log: list[str] = Field(default_factory=list)  # normalised log version keys (log_fields)


class Pair(BaseModel):
    """A row of knowledge/version-pairs.yaml: two parts that must agree, and the rule (its id,
    message, repairs, ...) a disagreement is."""

    model_config = ConfigDict(extra="forbid", defer_build=True)

    id: str = Field(pattern=r"^[a-z0-9]+(?:-[a-z0-9]+)*$")
    a: Side
    b: Side
    agree: Relation
    when: str = "true"
    # the rule a disagreement is: everything of a Rule but id/when/holds
    rule: dict[str, Any] | None = None
    # or, for a log-only pair, the existing rule a disagreement is evidence for (no rule is
    # generated: that rule's own when/holds judge the host facts, e.g. wheel-has-gpu-arch
    # reads the torch wheel's CUDA and the GPU; the log states the same two versions)
    evidence_for: str | None = Field(default=None, pattern=r"^[a-z0-9]+(?:-[a-z0-9]+)*$")
    # log-only: weight of a violated pair (as evidence for the rule) and of an agreeing one
    log_weight: float = Field(default=1.0, ge=0.0, le=5.0)
    log_agree_weight: float = Field(default=-0.75, ge=-5.0, le=0.0)

    @model_validator(mode="after")
    def _one_rule(self) -> Pair:
        if (self.rule is None) == (self.evidence_for is None):
            raise ValueError("a pair has exactly one of rule: (its own rule) or evidence_for:")
        return self

    @property
    def target(self) -> str:
        """The rule a disagreement read from a log is evidence for."""
        return self.evidence_for or self.id

    def as_rule(self) -> Rule:
        """The rule this pair is: its when/holds are the one relation over the two versions."""
        if self.rule is None:
            raise ValueError(f"pair {self.id!r} is log-only (evidence_for), it has no rule")
        from remedy.knowledge.schema import Rule  # here: a log-only diagnosis builds none

        a, b = f"({self.a.fact})", f"({self.b.fact})"
        args = f"'{self.agree}', {a}, '{self.a.kind}', {b}, '{self.b.kind}'"
        return Rule(
            id=self.id,
            when=f"({self.when}) and {a} and {b} and skew_known({args})",
            holds=f"skew_holds({args})",
            **self.rule,
        )


class LogField(BaseModel):
    """knowledge/version-pairs.yaml ``log_fields`` row: a signature/command field that states
    the version of a part."""

    model_config = ConfigDict(extra="forbid", defer_build=True)

    field: str
    signature: str | None = None  # only this signature's field (a group name means one thing there)
    key: str  # the normalised key pairs name in `log:`
    kind: Kind


# -- loading -------------------------------------------------------------------------------


def load_pairs(
    path: Path, components: dict[str, Any]
) -> tuple[list[Pair], list[LogField], list[tuple[Rule, Any, Path]]]:
    """The pairs, the log fields, and each pair as a rule entry (rule, raw, file) for the
    loader; errors name file:line. A missing file means no pairs (a site's own knowledge)."""
    if not path.is_file():
        return [], [], []
    file = str(path)
    data: Any = load_yaml(path)
    if not isinstance(data, dict) or not isinstance(data.get("pairs"), list):
        raise KnowledgeError("top level must be a mapping with a 'pairs:' list", file=file, line=1)
    log_fields = [
        validate_entry(LogField, e, file, "log field") for e in data.get("log_fields") or []
    ]
    keys = {lf.key for lf in log_fields}
    pairs: list[Pair] = []
    rules: list[tuple[Rule, Any, Path]] = []
    for e in data["pairs"]:
        p = validate_entry(Pair, e, file, "version pair")
        line = line_of(e)
        for side in (p.a, p.b):
            if side.part in COMPONENT_PARTS and side.part not in components:
                raise KnowledgeError(
                    f"pair {p.id!r}: unknown component {side.part!r}", file=file, line=line
                )
            for k in side.log:
                if k not in keys:
                    raise KnowledgeError(
                        f"pair {p.id!r}: log key {k!r} is not in log_fields", file=file, line=line
                    )
        pairs.append(p)
        if p.rule is None:  # log-only: evidence for an existing rule (the loader checks it)
            continue
        try:
            rule = p.as_rule()
        except ValidationError as exc:
            raise KnowledgeError(f"pair {p.id!r}: rule: {exc}", file=file, line=line) from None
        rules.append((rule, _raw_rule(e), path))
    return pairs, log_fields, rules


def _raw_rule(e: Any) -> Any:
    """The pair's ``rule:`` mapping with its line marks, plus lines for the generated
    when/holds: the pair's ``a:`` line (the fact expressions and relation live there)."""
    raw = e.get("rule") if isinstance(e, dict) else None
    if not isinstance(raw, dict):
        return e
    out = dict(raw)
    lines = dict(raw.get(KEYLINES_KEY, {}))
    where = line_of(e, "a") or line_of(e)
    lines.setdefault("when", where)
    lines.setdefault("holds", where)
    out[KEYLINES_KEY] = lines
    return out


# parts that must be components.yaml nodes (others name a versioned thing outside the graph)
COMPONENT_PARTS = frozenset(
    {
        "nvcc",
        "cicc",
        "ptxas",
        "crt-headers",
        "cudart-headers",
        "libcudart",
        "driver",
        "gpu",
        "host-compiler",
        "torch",
        "triton",
    }
)
