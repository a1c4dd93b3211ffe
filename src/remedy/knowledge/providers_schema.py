"""The shape of knowledge/providers.yaml, checked by pydantic when the file is loaded
(remedy.knowledge.providers); the run-time table is the plain objects built from what passed
(providers.Table), so a cached table is read without this module or pydantic."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field


class Package(BaseModel):
    """A package's files as its own file list has them: headers by their path under
    include/, deep header trees by their top two dirs, libraries by file name."""

    model_config = ConfigDict(extra="forbid", defer_build=True)
    version: str | None = None
    source: str | None = None
    headers: list[str] = Field(default_factory=list)
    header_dirs: list[str] = Field(default_factory=list)
    libraries: list[str] = Field(default_factory=list)


class Files(BaseModel):
    model_config = ConfigDict(extra="allow", defer_build=True)
    packages: dict[str, Package] = Field(default_factory=dict)


class PipLine(Files):
    cuda_toolkit: str
    pins: dict[str, str] = Field(default_factory=dict)
    pins_source: str


class Table(BaseModel):
    model_config = ConfigDict(extra="allow", defer_build=True)
    pip: dict[str, PipLine]
    debian: Files
