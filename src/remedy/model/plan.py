"""Plan: what the planner produces, saved, diffed and applied exactly as previewed
(remedy.model says why it is a module of its own).

No `from __future__ import annotations`, as in remedy.model.
"""

from typing import Any, Literal

from pydantic import ConfigDict, Field, field_serializer, field_validator

from remedy.model import Finding, Hypothesis, Strict, Symptom
from remedy.model.host import Facts, Workload


class Touch(Strict):
    kind: Literal["file", "symlink", "dir", "package", "unit", "dropin", "service", "driver"]
    target: str
    detail: str | None = None


class Step(Strict):
    """One step of a plan: the knowledge's action, its bound parameters, and the typed
    operation (remedy.operations) that says what it changes. The plan stores intent, never
    shell: commands and touches are rendered from the operation when they are needed."""

    action: str
    title: str
    params: dict[str, Any] = Field(default_factory=dict)
    operation: Any  # remedy.operations.Operation (validated from its "op" name)
    probe: str
    probe_detail: str | None = None
    fixes: list[str] = Field(default_factory=list)  # rule ids it repairs
    because: list[str] = Field(default_factory=list)
    risk: str = "low"
    cost: dict[str, int] = Field(default_factory=dict)
    facts_after: dict[str, Any] = Field(default_factory=dict)  # predicted fact changes
    # the log's fatal lines ("source:line: text") this step's findings explain
    addresses: list[str] = Field(default_factory=list)
    found_by_effect: bool = False  # chosen for its declared effect, not a rule's `repairs`
    scope: str | None = None  # the unit (or "login-shell") whose environment it was planned in

    @field_validator("operation", mode="before")
    @classmethod
    def _typed(cls, v: Any) -> Any:
        from remedy.operations import parse_operation

        return parse_operation(v)

    @field_serializer("operation")
    def _dump(self, v: Any) -> Any:
        return v.model_dump()

    @property
    def commands(self) -> list[str]:
        """The shell the operation renders (quoted for the syntax each value lands in)."""
        return list(self.operation.commands())

    @property
    def touches(self) -> list[Touch]:
        """What the operation changes on the host (checkpointed before it runs)."""
        return list(self.operation.touches())


class Rejected(Strict):
    action: str
    params: dict[str, Any] = Field(default_factory=dict)
    reason: str
    breaks: list[str] = Field(default_factory=list)  # consumer component ids
    rules: list[str] = Field(default_factory=list)


class Verification(Strict):
    consumer: str
    probe: str
    detail: str | None = None
    # cheaper probes to fall back on when `probe` cannot run on this host (no GPU there)
    fallbacks: list[str] = Field(default_factory=list)
    params: dict[str, Any] = Field(default_factory=dict)  # e.g. the launch command
    scope: str | None = None  # the environment it runs in (remedy.scope); None: the plan's


class FailedOperation(Strict):
    """The operation the log came from, as remedy re-runs it at the end of `run`: the
    consumer's own build probe with what the log's failing command needed (the headers its
    failing translation unit included), never the log's command line itself."""

    consumer: str  # torch-cpp-extension | flashinfer-jit | sglang-jit-kernel
    probe: str  # the consumer's build probe (playbooks/probes.yaml)
    params: dict[str, Any] = Field(default_factory=dict)  # e.g. headers: [c10/cuda/driver_api.h]
    first_error: str  # the log's first fatal line ("source:line: text")
    from_lines: list[str] = Field(default_factory=list)  # the log lines it was rebuilt from


class Plan(Strict):
    # validator built on first use, as Facts': only `plan` (and a saved plan's reader) needs it
    model_config = ConfigDict(extra="forbid", defer_build=True)

    schema_version: int = 2
    remedy_version: str
    host: str
    facts_digest: str
    # sha256 of the knowledge/ and playbooks/ files the plan was made with
    knowledge_version: str = ""
    # sha256 over facts, target, steps, status, verification and knowledge_version
    plan_digest: str = ""
    # the user's selection (`remedy plan --rules/--consumers`): only the steps that repair
    # these rules, only the final verification of these consumers (None: all)
    scope_rules: list[str] | None = None
    scope_consumers: list[str] | None = None
    facts: Facts
    target: Workload
    findings: list[Finding] = Field(default_factory=list)
    advice: list[Finding] = Field(default_factory=list)  # warning-level rules: risks, not faults
    symptoms: list[Symptom] = Field(default_factory=list)
    steps: list[Step] = Field(default_factory=list)
    rejected: list[Rejected] = Field(default_factory=list)
    verification: list[Verification] = Field(default_factory=list)
    criteria: list[str] = Field(default_factory=list)
    cost: dict[str, int] = Field(default_factory=dict)
    unresolved: list[str] = Field(default_factory=list)
    trace: list[str] = Field(default_factory=list)
    status: Literal["ok", "nothing-to-do", "partial", "impossible"] = "ok"
    # rules or actions that could not be evaluated (a knowledge bug): shown, never dropped
    evaluation_errors: list[str] = Field(default_factory=list)
    # the log's fatal lines that no finding explains: applying the plan will not fix them
    unexplained: list[str] = Field(default_factory=list)
    failed_operation: FailedOperation | None = None  # what `run` re-runs to say `fixed`
    # no rule matched the log: the classes its wording resembles (remedy.evidence.learned),
    # shown with the fact that would settle them; no step is ever planned from them
    learned: list[Hypothesis] = Field(default_factory=list)
    status: Literal["ok", "nothing-to-do", "partial", "impossible", "unexplained"] = "ok"
