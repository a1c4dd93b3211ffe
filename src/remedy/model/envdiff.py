"""What a build reads from its environment, and where two environments differ in it.

remedy computes the login shell's environment from the profile files (remedy.facts.envs), as an
interactive login shell gets it. A non-interactive `ssh host cmd` session (a build script, CI,
cron, `ssh host make`) gets less: pam_env's /etc/environment, then the user's shell, which on
Debian reads ~/.bashrc only down to its "not interactive, return" guard. A CUDA_HOME exported
below that guard is in the first and not the second
(sandbox/scenarios/cuda-home-bashrc-interactive): the planner and the verdict of `run` compare
the two with `session_differences`. Pure functions, no remedy import (model layer).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping

# the toolkit (CUDA_HOME, CUDA_PATH, nvcc on PATH), the compilers, the arch lists, the
# consumers' own switches, the library and include search paths
BUILD_VAR = re.compile(
    r"^(?:LD_LIBRARY_PATH|LIBRARY_PATH|CPATH|C_INCLUDE_PATH|CPLUS_INCLUDE_PATH|CC|CXX"
    r"|CUDAHOSTCXX|MAX_JOBS|(?:CUDA|NVCC|TRITON|FLASHINFER|TORCH|SGLANG|TVM_FFI)[A-Z0-9_]*)$"
)


def nvcc_dir(path: str | None, prefixes: Iterable[str]) -> str | None:
    """The first PATH dir that is a known toolkit's bin/: where `which nvcc` finds it."""
    bins = {f"{p.rstrip('/')}/bin" for p in prefixes}
    return next((d.rstrip("/") for d in (path or "").split(":") if d.rstrip("/") in bins), None)


def session_differences(
    login: Mapping[str, str], session: Mapping[str, str], prefixes: Iterable[str]
) -> dict[str, str | None]:
    """The build variables whose value in `session` differs from `login`: NAME -> the
    session's value (None: unset there). PATH only when the nvcc found on it differs."""
    names = sorted(k for k in set(login) | set(session) if BUILD_VAR.match(k))
    out: dict[str, str | None] = {
        k: session.get(k) for k in names if login.get(k) != session.get(k)
    }
    prefixes = list(prefixes)
    if nvcc_dir(login.get("PATH"), prefixes) != nvcc_dir(session.get("PATH"), prefixes):
        out["PATH"] = session.get("PATH")
    return out


def applied(login: Mapping[str, str], diff: Mapping[str, str | None]) -> dict[str, str]:
    """`login` with the session's differences applied: the session's build environment."""
    env = dict(login)
    for k, v in diff.items():
        if v is None:
            env.pop(k, None)
        else:
            env[k] = v
    return env


def describe(diff: Mapping[str, str | None], prefixes: Iterable[str] = ()) -> str:
    """`CUDA_HOME unset, PATH without a toolkit's nvcc` (for messages)."""
    prefixes = list(prefixes)
    parts = []
    for k, v in diff.items():
        if k == "PATH":
            d = nvcc_dir(v, prefixes)
            parts.append(f"PATH finds nvcc in {d}" if d else "PATH without a toolkit's nvcc")
        else:
            parts.append(f"{k} unset" if v is None else f"{k}={v}")
    return ", ".join(parts)
