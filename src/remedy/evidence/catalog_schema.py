"""The shape of a ``knowledge/signatures.yaml`` entry, checked by pydantic when the file is
loaded (remedy.evidence.catalog.load_catalog); the catalog itself is made of the plain
objects built from what passed (remedy.evidence.catalog.Signature), so a cached catalog is
read without this module or pydantic."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from remedy.evidence.catalog import _KEBAB
from remedy.model import Source

Severity = Literal["fatal", "error", "warning", "info"]
Stage = Literal[
    "import",
    "configure",
    "preprocess",
    "compile",
    "assemble",
    "link",
    "load",
    "launch",
    "capture",
    "runtime",
    "ready",
]
Component = Literal[
    "nvcc",
    "cicc",
    "ptxas",
    "crt-headers",
    "cudart-headers",
    "libcudart",
    "libcuda",
    "cccl-toolkit",
    "cccl-flashinfer",
    "flashinfer-jit",
    "sglang-jit-kernel",
    "tvm-ffi",
    "torch-cpp-extension",
    "triton",
    "cuda-graph-capture",
    "sglang-server",
    "driver",
    "gpu",
    "host-compiler",
    "linker",
    "ninja",
    "python",
    # the host's package manager (dnf/yum/zypper through libsolv, apt): its resolver's
    # failures are shown, never explained (knowledge/components.yaml, tune-r)
    "package-manager",
]
FactKey = Literal[
    "emitted_ptx_isa",
    "ptxas_ptx_isa",
    "missing_lib",
    "missing_header",
    "cuda_home",
    "nvcc_path",
    "arch",
    "jit_module",
    "jit_cache_dir",
    "flashinfer_version",
    "jit_arch",
    "python_prefix",
    "toolkit_prefix",
    "torch_cuda",
    "nvcc_release",
    "required_cuda",
    "shared_lib",
    "symbol",
    "exit_code",
    "gcc_version",
]


class NearEntry(BaseModel):
    """A signature's ``near:`` (remedy.evidence.catalog.Near)."""

    model_config = ConfigDict(extra="forbid", defer_build=True)

    pattern: str
    within: int = Field(ge=0, le=100_000)
    needles: list[str] | None = None  # literals for the prefilter; derived when pattern is plain
    absent: bool = False  # true: match only where the pattern did NOT occur within the lines


class SignatureEntry(BaseModel):
    """One signature entry (remedy.evidence.catalog.Signature)."""

    model_config = ConfigDict(extra="forbid", defer_build=True)

    id: str = Field(pattern=_KEBAB)
    title: str = Field(min_length=1)
    pattern: str = Field(min_length=1)
    needles: list[str] = Field(min_length=1)
    severity: Severity
    stage: Stage
    component: Component
    facts: dict[str, FactKey] = Field(default_factory=dict)
    wrapper: bool = False
    suspicious: bool = False
    examples: list[str] = Field(min_length=1)
    source: Source
    near: NearEntry | None = None
    supersedes: list[str] = Field(default_factory=list)
    gate: str | None = None

    @field_validator("needles")
    @classmethod
    def _needles_nonempty(cls, v: list[str]) -> list[str]:
        if any(not n for n in v):
            raise ValueError("needles must be non-empty strings")
        if any("\n" in n for n in v):
            raise ValueError("needles must not contain newlines")
        return v
