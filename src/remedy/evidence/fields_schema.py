"""The shape of the rows of knowledge/field-signals.yaml and knowledge/cuda-api-changes.yaml,
checked by pydantic when a file is loaded (remedy.evidence.fields); the run-time rows are the
plain objects built from what passed (remedy.evidence.plain), so a cached or loaded table is
used without this module or pydantic."""

from __future__ import annotations

import re
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from remedy.model import Source


class ApiChangeEntry(BaseModel):
    """One row of knowledge/cuda-api-changes.yaml (remedy.evidence.fields.ApiChange)."""

    model_config = ConfigDict(extra="forbid", defer_build=True)

    symbol: str = Field(pattern=r"^[A-Za-z_][\w]*(?:(?:::|\.)[A-Za-z_][\w]*)?$")
    removed_in: str = Field(pattern=r"^\d+\.\d+$")
    library: str
    change: Literal["removed", "signature", "include"]
    kind: Literal["function", "type"] | None = None
    replacement: str
    source: str


class ApiFamilyEntry(BaseModel):
    """One row of the table's ``families:`` (remedy.evidence.fields.ApiFamily)."""

    model_config = ConfigDict(extra="forbid", defer_build=True)

    family: str = Field(pattern=r"^[A-Za-z_][\w*]*$")
    pattern: str
    removed_in: str = Field(pattern=r"^\d+\.\d+$")
    library: str
    change: Literal["removed"]
    replacement: str
    source: str

    @field_validator("pattern")
    @classmethod
    def _compiles(cls, v: str) -> str:
        re.compile(v)
        return v


class RemovedHeaderEntry(BaseModel):
    """One row of the table's ``headers:`` (remedy.evidence.fields.RemovedHeader)."""

    model_config = ConfigDict(extra="forbid", defer_build=True)

    header: str = Field(pattern=r"^[A-Za-z_][\w.+-]*(?:/[\w.+-]+)+$")
    removed_in: str = Field(pattern=r"^\d+\.\d+$")
    library: str
    replacement: str
    source: str


class SignalEntry(BaseModel):
    """One row of knowledge/field-signals.yaml (remedy.evidence.fields.Signal)."""

    model_config = ConfigDict(extra="forbid", defer_build=True)

    id: str = Field(pattern=r"^[a-z0-9]+(?:-[a-z0-9]+)*$")
    rule: str
    signature: str
    where: dict[str, str] = Field(default_factory=dict)
    with_: list[str] = Field(default_factory=list, alias="with")
    without: list[str] = Field(default_factory=list)
    unless: list[str] = Field(default_factory=list)
    weight: float = Field(default=1.0, ge=-1.0, le=5.0)
    excludes: list[str] = Field(default_factory=list)
    source: Source

    @field_validator("where")
    @classmethod
    def _regexes_compile(cls, v: dict[str, str]) -> dict[str, str]:
        for key, rx in v.items():
            try:
                re.compile(rx)
            except re.error as exc:
                raise ValueError(f"where.{key}: invalid regex: {exc}") from None
        return v
