"""Apply a plan with the real runner over the local transport, every probe passing: the
attack tests only ask what the steps themselves run or write."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import textwrap
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from remedy.executor.runner import Runner
from remedy.model import Facts, Plan, Step
from remedy.planner.plan import facts_digest
from remedy.transport import LocalTransport


def apply_locally(
    tmp_path: Path, facts: Facts, steps: list[Step], env: Mapping[str, str] | None = None
) -> Any:
    plan = Plan(remedy_version="t", host="scratch", facts_digest=facts_digest(facts),
                facts=facts, target=facts.workload, steps=steps)  # fmt: skip

    async def collect(_t):
        return facts

    async def ok(probe, t, f, params=None, consumer=None):
        class R:
            ok, detail, symptoms, skipped, transport_error = True, "", [], None, None

        return R()

    t = LocalTransport(
        host="scratch", env={"XDG_STATE_HOME": str(tmp_path / "state"), **(env or {})}
    )
    return asyncio.run(Runner(t, collect=collect, prober=ok).run(plan, check_stale=False))


def as_canary_dir(area: Path, owner: int, *, link: bool) -> Path:
    """A root-owned dir (755) holding `as` (`owner`'s file, or root's link to it) that appends
    `as uid $(id -u)` to area/canary, then runs the real one."""
    bindir, tools = area / "bin", area / "tools"
    bindir.mkdir(mode=0o755)
    tools.mkdir(mode=0o755)
    f = tools / "as"
    f.write_text(f'#!/bin/sh\necho "as uid $(id -u)" >> {area / "canary"}\nexec /usr/bin/as "$@"\n')
    f.chmod(0o755)
    os.chown(f, owner, owner)
    if link:
        (bindir / "as").symlink_to(f)
    else:
        os.rename(f, bindir / "as")
    return bindir


# a pip-install step pinning nvidia-cuda-cccl from a local sdist index (argv: sys.path, area, links)
PIP_PIN_SCRIPT = textwrap.dedent(
    """
    import sys
    sys.path[:0] = sys.argv[1].split(":")
    from pathlib import Path
    from local_apply import apply_locally
    from remedy.model import Facts, Step
    from remedy.operations import PipInstall
    area, links = Path(sys.argv[2]), sys.argv[3]
    venv = area / "opt" / "venv"
    facts = Facts(host="scratch", pythons=[{"path": str(venv), "python": "3.11"}])
    step = Step(action="pip-x", title="pin a package",
                operation=PipInstall(python=str(venv), packages={"nvidia-cuda-cccl": "13.0.85"},
                                     no_deps=True), probe="static")
    env = {"PIP_NO_INDEX": "1", "PIP_FIND_LINKS": links, "PIP_CONFIG_FILE": "/dev/null",
           "PIP_DISABLE_PIP_VERSION_CHECK": "1"}
    try:
        r = apply_locally(area, facts, [step], env)
        print("OUTCOME", r.outcome, r.message)
    except Exception as e:
        print("REFUSED", type(e).__name__, e)
    """
)


def needs_private_mounts() -> None:
    """Skip where this process cannot make a private mount namespace."""
    import pytest

    if subprocess.run(["unshare", "-m", "true"], capture_output=True).returncode != 0:
        pytest.skip("no private mount namespace here")


def under_usr_local_bin(
    bindir: Path, argv: list[str], *, timeout: int = 300, **kw: Any
) -> subprocess.CompletedProcess[str]:
    """argv with `bindir` mounted at /usr/local/bin (the system PATH's first dir of programs)
    for this process only: a private mount namespace."""
    return subprocess.run(
        ["unshare", "-m", "--propagation", "private", "sh", "-c",
         'mount --bind "$1" /usr/local/bin && shift && exec "$@"', "sh", str(bindir), *argv],
        capture_output=True, text=True, timeout=timeout, **kw,
    )  # fmt: skip


def python_under_usr_local_bin(
    bindir: Path, script: str, *args: str, timeout: int = 300
) -> subprocess.CompletedProcess[str]:
    """`script` run by this Python under_usr_local_bin; its argv: the tests' import path (for
    sys.path), then `args`."""
    here = Path(__file__).parent
    pypath = ":".join([str(here), str(here.parent), *sys.path])
    return under_usr_local_bin(
        bindir, [sys.executable, "-c", script, pypath, *args], timeout=timeout
    )


def pip_pin_under_usr_local_bin(area: Path, bindir: Path, links: Path) -> tuple[str, str | None]:
    """Run PIP_PIN_SCRIPT with `bindir` as /usr/local/bin: the script's stdout and area/canary's
    text (None when no canary program ran)."""
    r = python_under_usr_local_bin(bindir, PIP_PIN_SCRIPT, str(area), str(links), timeout=400)
    assert "OUTCOME" in r.stdout or "REFUSED" in r.stdout, r.stdout + r.stderr
    canary = area / "canary"
    return r.stdout, (canary.read_text() if canary.exists() else None)
