"""Pydantic models shared by every part of remedy.

These are the boundary types: what collectors produce (Facts), what the log reader produces
(Symptom), what diagnosis produces (Finding) and what the planner produces (Plan). They are
plain data so a plan can be saved, diffed and applied later exactly as previewed.
"""

# No `from __future__ import annotations` here: pydantic would then evaluate every field's
# annotation from its string (an eval per field, ~300 for remedy's models) each time remedy
# starts; evaluated by Python as the class body runs, they cost nothing extra. Every name an
# annotation uses must therefore be defined above it (quote a forward reference).

import re
from typing import Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    field_serializer,
    field_validator,
    model_validator,
)


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
        if self.repo and self.path:
            s = f"{self.repo}:{self.path}"
            if self.function:
                s += f"::{self.function}"
            if self.ref:
                s += f" @{self.ref}"
            return s
        return self.doc or self.thread or self.note or "?"


# --------------------------------------------------------------------------------------------
# Facts
# --------------------------------------------------------------------------------------------


class Gpu(Strict):
    index: int = 0
    name: str
    compute_cap: str  # "12.0"
    driver: str | None = None
    memory_mib: int | None = None


class CcclTree(Strict):
    """CCCL headers as a consumer sees them on the include path of one toolkit prefix."""

    present: bool = False
    nv_target: bool = False
    nv_detail: bool = False
    include_dir: str | None = None  # e.g. include/cccl


class Toolkit(Strict):
    """One CUDA toolkit prefix on a host (system, pip wheel tree, conda, or a stand-in)."""

    prefix: str
    kind: Literal["system", "pip-cu13", "pip-cu12", "conda", "stand-in", "unknown"] = "unknown"
    nvcc_version: str | None = None  # 13.2.78 (the nvcc wheel / package version)
    nvcc_release: str | None = None  # 13.2, from `nvcc --version`
    ptxas_release: str | None = None  # from `ptxas --version`
    cicc_release: str | None = None  # build string embedded in nvvm/bin/cicc
    cudart_version: int | None = None  # CUDART_VERSION in include/cuda_runtime_api.h
    cccl: CcclTree = Field(default_factory=CcclTree)
    # relative lib dir -> library file names found there (libcudart.so, libcudart.so.13, libcuda.so)
    libs: dict[str, list[str]] = Field(default_factory=dict)
    nvcc_profile_libdir: str | None = None  # what nvcc.profile adds with -L (relative to prefix)
    pip: dict[str, str] = Field(default_factory=dict)  # nvidia-* wheel -> version
    python: str | None = None  # the Python environment a pip toolkit lives in
    stand_in: str | None = None  # set when a binary is a stand-in; says what it replays
    aliases: list[str] = Field(default_factory=list)  # symlinks to the prefix (/usr/local/cuda)
    note: str | None = None


class Requirement(Strict):
    """A version constraint one installed package puts on another (from its Requires-Dist)."""

    by: str  # "torch 2.11.0"
    package: str
    spec: str  # "==13.0.96"


class PythonEnv(Strict):
    path: str  # prefix of the venv (sys.prefix)
    python: str | None = None  # 3.12
    packages: dict[str, str] = Field(default_factory=dict)  # normalized name -> version
    torch_cuda: str | None = None  # torch.version.cuda
    requirements: list[Requirement] = Field(default_factory=list)
    flashinfer_cccl: str | None = None  # path of FlashInfer's vendored CCCL include dir
    triton_ptxas: dict[str, str] = Field(default_factory=dict)  # ptxas / ptxas-blackwell -> release


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


class Service(Strict):
    name: str  # sglang-k26.service

    @field_validator("name")
    @classmethod
    def _name(cls, v: str) -> str:
        return unit_name(v)

    unit_path: str | None = None
    drop_ins: list[str] = Field(default_factory=list)
    environment: dict[str, str] = Field(default_factory=dict)  # as systemctl show -p Environment
    environment_files: list[str] = Field(default_factory=list)
    # values read from EnvironmentFile=: systemd applies them after Environment= (they win)
    environment_files_env: dict[str, str] = Field(default_factory=dict)
    exec_start: str | None = None
    python: str | None = None  # venv prefix derived from ExecStart


class Workload(Strict):
    """What must work on the host: by default an SGLang server with FlashInfer backends."""

    name: str = "sglang-server"
    consumers: list[str] = Field(
        default_factory=lambda: [
            "flashinfer-jit",
            "sglang-jit-kernel",
            "torch-cpp-extension",
            "triton",
            "cuda-graph-capture",
        ]
    )
    service: str | None = None  # systemd unit whose environment the server runs under
    launch: str | None = None  # or the command that starts the server (run under shell_env)
    python: str | None = None  # venv prefix of the server
    # the environments the plan covers (remedy.scope): units, then "login-shell"; empty = the
    # one of `service` (or the login shell) alone, as plans made before scopes
    scopes: list[str] = Field(default_factory=list)
    cuda_graphs: bool = True
    attention_backend: str = "flashinfer"
    # files the failing operation could not find (the log's fatal lines: a missing header,
    # `cannot find -lX`, `libX.so.N: cannot open shared object file`); looked up, never run
    missing_files: list[str] = Field(default_factory=list)

    @field_validator("service")
    @classmethod
    def _service(cls, v: str | None) -> str | None:
        return None if v is None else unit_name(v)

    @field_validator("scopes")
    @classmethod
    def _scopes(cls, v: list[str]) -> list[str]:
        return [unit_name(x) for x in v]  # units, and "login-shell"


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


class Facts(Strict):
    """Typed snapshot of one host. The planner simulates actions as edits of this snapshot."""

    @model_validator(mode="before")
    @classmethod
    def _no_nul(cls, data: Any) -> Any:
        where = nul_at(data) if isinstance(data, dict) else None
        if where:
            raise ValueError(f"a NUL character in {where}: no host value can hold one")
        return data

    host: str = "localhost"
    collected_at: str | None = None
    os: str | None = None
    gpus: list[Gpu] = Field(default_factory=list)
    toolkits: list[Toolkit] = Field(default_factory=list)
    pythons: list[PythonEnv] = Field(default_factory=list)
    shell_env: dict[str, str] = Field(default_factory=dict)
    services: list[Service] = Field(default_factory=list)
    apt_candidates: list[str] = Field(default_factory=list)  # installable CUDA packages
    host_compilers: dict[str, str] = Field(default_factory=dict)  # gcc -> 12.2.0
    memory_mib: int | None = None
    cpus: int | None = None
    workload: Workload = Field(default_factory=Workload)
    notes: list[str] = Field(default_factory=list)

    # validator built on first use: `diagnose --log` alone never validates facts (~1% of it)
    model_config = ConfigDict(extra="forbid", defer_build=True)


# --------------------------------------------------------------------------------------------
# Evidence
# --------------------------------------------------------------------------------------------


class Symptom(Strict):
    """One matched signature in a log: what, where, and the fields it extracted."""

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
