"""Facts: the typed snapshot of one host (remedy.model says why it is a module of its own).

No `from __future__ import annotations`, as in remedy.model.
"""

from typing import Any, Literal

from pydantic import ConfigDict, Field, field_validator, model_validator

from remedy.model import Strict, nul_at, unit_name


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
    # UnsetEnvironment= as systemctl shows it (NAME, or NAME=VALUE: that pair only): applied
    # after every Environment= and EnvironmentFile= (systemd.exec(5)), a drop-in's included
    unset_environment: list[str] = Field(default_factory=list, exclude_if=lambda v: not v)
    exec_start: str | None = None
    python: str | None = None  # venv prefix derived from ExecStart
    # sandboxing/resource directives as `systemctl show` gives them (facts/services.SANDBOXING:
    # ProtectHome, ProtectSystem, ReadWritePaths, CacheDirectory, User, MemoryMax ...), non-empty
    # only; data for rules (knowledge.functions jit_cache_read_only), never a command or a path
    sandboxing: dict[str, str] = Field(default_factory=dict, exclude_if=lambda v: not v)
    # the home of its User= from the host's user database (getent passwd): where its JIT
    # caches go when the environment sets no HOME; None for root or when not read
    user_home: str | None = Field(default=None, exclude_if=lambda v: v is None)
    # what ExecStart's shell sets itself before the server starts, after systemd gave it the
    # unit's environment (so it wins over every Environment= and EnvironmentFile=, a
    # drop-in's too): a login shell (`bash -lc ...`) reads /etc/profile and /etc/profile.d,
    # `source VENV/bin/activate` runs what a user appended there. The build variables those
    # files set outright: NAME -> value, and NAME -> the file (tests/test_toolchain_sandbox.py
    # test_p, test_q)
    exec_shell_env: dict[str, str] = Field(default_factory=dict, exclude_if=lambda v: not v)
    exec_shell_from: dict[str, str] = Field(default_factory=dict, exclude_if=lambda v: not v)
    # a drop-in of the unit read after remedy's last-named one (zz-remedy-VAR.conf) that still
    # sets the variable: an admin's `zzz-local.conf` or `~override.conf` whose EnvironmentFile=
    # is listed after remedy's own (units.dropin.later_dropin_override): NAME -> "PATH (how)";
    # no drop-in of remedy's can set it (tests/test_toolchain_sandbox.py test_s)
    dropin_overrides: dict[str, str] = Field(default_factory=dict, exclude_if=lambda v: not v)


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


def _empty(v: Any) -> bool:
    return not v


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
    # the build variables (remedy.model.envdiff) whose value in a non-interactive `ssh host cmd`
    # session differs from shell_env's (None: unset there), e.g. a CUDA_HOME that ~/.bashrc
    # exports below Debian's "not interactive, return" guard; empty when none differ (and then
    # left out of a dump, so that facts and their digests read as before on other hosts)
    session_env: dict[str, str | None] = Field(default_factory=dict, exclude_if=_empty)
    # the build variables of shell_env whose value a user's own file sets outright (NAME ->
    # ~/.bashrc, ~/.profile, ...): read after /etc/environment and /etc/profile.d, so a
    # login-scope write of NAME does not reach the login shell; empty (left out) when none
    shell_env_from: dict[str, str] = Field(default_factory=dict, exclude_if=_empty)
    services: list[Service] = Field(default_factory=list)
    apt_candidates: list[str] = Field(default_factory=list)  # installable CUDA packages
    host_compilers: dict[str, str] = Field(default_factory=dict)  # gcc -> 12.2.0
    memory_mib: int | None = None
    cpus: int | None = None
    workload: Workload = Field(default_factory=Workload)
    notes: list[str] = Field(default_factory=list)

    # validator built on first use: `diagnose --log` alone never validates facts (~1% of it)
    model_config = ConfigDict(extra="forbid", defer_build=True)
