"""Schemas of the knowledge and playbook YAML files.

The YAML is data about CUDA toolchains; these models only say what shape it must have.
"""

# No `from __future__ import annotations` here: pydantic would then evaluate every field's
# annotation from its string (an eval per field, ~300 for remedy's models) each time remedy
# starts; evaluated by Python as the class body runs, they cost nothing extra. Every name an
# annotation uses must therefore be defined above it (quote a forward reference).

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from remedy.model import Source


class Entry(BaseModel):
    # validator and serializer built when a model is first validated or dumped, not when its
    # class is made (~0.3 ms a class): a warm `diagnose` takes the knowledge and the signature
    # catalog whole from remedy.knowledge.kbcache and never validates most of these models
    model_config = ConfigDict(extra="forbid", defer_build=True)


class LinkSpec(Entry):
    dirs: list[str]
    libs: list[str]
    any_dir: bool = False  # torch: lib64, else lib


class ArchSpec(Entry):
    env: str | None = None
    fallback: str | None = None
    note: str | None = None


class Component(Entry):
    id: str
    name: str
    kind: Literal["tool", "headers", "library", "runtime", "consumer", "service", "hardware"]
    description: str | None = None
    package: str | None = None
    depends_on: list[str] = Field(default_factory=list)
    toolkit_lookup: list[str] = Field(default_factory=list)
    nvcc_override: str | None = None
    link: LinkSpec | None = None
    cccl: Literal["bundled", "toolkit", "none"] | None = None
    arch: ArchSpec | None = None
    read_at: str | None = None
    source: Source | None = None

    @field_validator("toolkit_lookup")
    @classmethod
    def _lookup_forms(cls, v: list[str]) -> list[str]:
        for item in v:
            kind, _, arg = item.partition(":")
            if kind not in ("env", "which", "default") or not arg:
                raise ValueError(
                    f"lookup entry {item!r} must be env:VAR, which:PROG or default:PATH"
                )
        return v


class Effect(Entry):
    breaks: bool = False
    effect: str
    error: str | None = None
    signature: str | None = None


class ConsumerEdge(Entry):
    component: str
    how: str
    read_at: str | None = None
    source: Source | None = None
    effects: dict[str, Effect] = Field(default_factory=dict)


class Unaffected(Entry):
    component: str
    why: str
    source: Source | None = None


VALUE_CLASSES = {
    "dir": ["unset", "not_a_directory", "nonexistent", "directory", "toolkit"],
    "file": ["unset", "missing", "set"],
    "pathlist": ["unset", "set"],
    "archlist": ["unset", "malformed", "set"],
    "value": ["unset", "set"],
}


class Variable(Entry):
    name: str
    kind: Literal["dir", "file", "pathlist", "archlist", "value"]
    description: str | None = None
    consumers: list[ConsumerEdge] = Field(default_factory=list)
    unaffected: list[Unaffected] = Field(default_factory=list)


class Rule(Entry):
    id: str
    title: str
    scope: Literal["consumer", "workload"]
    consumers: list[str] = Field(default_factory=list)
    subject: str
    hard: bool = False
    severity: Literal["error", "warning"] = "error"
    # a warning repaired like an error once the logs show what it warns about (a signature it
    # predicts); without such a line it stays advice
    planned_when_seen: bool = False
    when: str = "true"
    holds: str
    message: str
    because: list[str] = Field(default_factory=list)
    predicts: list[str] = Field(default_factory=list)
    repairs: list[str] = Field(default_factory=list)
    breaks_component: str | None = None
    confirm_with: list[str] = Field(default_factory=list)
    source: Source


class BeforeStep(Entry):
    action: str
    when: str = "true"
    params: dict[str, str] = Field(default_factory=dict)


class TouchSpec(Entry):
    kind: str
    target: str
    detail: str | None = None


class Cost(Entry):
    driver: int = 0
    pins: int = 0
    launches: int = 0
    steps: int = 1


class Action(Entry):
    id: str
    title: str
    repairs: list[str] = Field(default_factory=list)
    when: str = "true"
    bind: dict[str, str] = Field(default_factory=dict)
    before: list[BeforeStep] = Field(default_factory=list)
    effects: list[dict[str, Any]] = Field(default_factory=list)
    # the typed operation (remedy.operations): {op: NAME, PARAM: EXPRESSION | constant, ...}
    operation: dict[str, Any] | None = None
    probe: str
    cost: Cost = Field(default_factory=Cost)
    risk: Literal["low", "medium", "high"] = "low"
    masks: bool = False
    reason: str | None = None
    source: Source | None = None

    @field_validator("effects")
    @classmethod
    def _effect_forms(cls, v: list[dict[str, Any]]) -> list[dict[str, Any]]:
        allowed = [
            {"toolkit", "set"},
            {"python", "packages"},
            {"env"},
            {"unset_env"},
            {"add_toolkit"},
            {"gpu_driver"},
        ]
        for eff in v:
            keys = set(eff) - {"__line__"}
            if keys not in allowed:
                raise ValueError(
                    f"effect {sorted(keys)} must be one of: toolkit+set, python+packages, env, "
                    "unset_env, add_toolkit, gpu_driver"
                )
        return v


class Probe(Entry):
    id: str
    title: str
    level: Literal["static", "compile", "jit", "gpu", "launch"]
    seconds: float
    requires: list[str] = Field(default_factory=list)
    verifies: list[str] = Field(default_factory=list)
    gpu: bool = False


class Release(Entry):
    release: str
    ptx_isa: str
    min_driver: str
    targets: list[str] = Field(default_factory=list)
    apt: list[str] = Field(default_factory=list)
    wheels: dict[str, str] = Field(default_factory=dict)


class CompatDriver(Entry):
    major: int
    driver: str


class MaxGcc(Entry):
    from_: str = Field(alias="from")
    gcc: int


class MinArch(Entry):
    package: str
    arch: str
    says: str  # the upstream statement a finding quotes
    source: Source


class CompatDrivers(Entry):
    source: Source
    entries: list[CompatDriver]


class MaxGccTable(Entry):
    source: Source
    entries: list[MaxGcc]


class DroppedTarget(Entry):
    release: str  # the first release whose nvcc no longer compiles for these
    targets: list[str]


class DroppedTargets(Entry):
    source: Source
    entries: list[DroppedTarget]


class CcclStd(Entry):
    from_: str = Field(alias="from")
    std: str


class CcclStdTable(Entry):
    source: Source
    entries: list[CcclStd]


class ToolkitWheels(Entry):
    source: Source
    names: list[str]


class GpuModel(Entry):
    model: str  # a regex the model name (as a log prints it after 'NVIDIA '/'GeForce ') fullmatches
    cc: str  # its compute capability


class GpuModelTable(Entry):
    source: Source
    entries: list[GpuModel]


class CudaTables(Entry):
    """knowledge/cuda-tables.yaml: CUDA facts the functions look up, each table with a source."""

    compat_drivers: CompatDrivers
    max_gcc: MaxGccTable
    min_arch: list[MinArch]
    toolkit_wheels: ToolkitWheels
    dropped_targets: DroppedTargets | None = None
    cccl_min_std: CcclStdTable | None = None
    gpu_models: GpuModelTable | None = None
