"""A probe of a service runs the service's code as the unit's User=, never as root.

The attacks, for real (root, a local shell): a fake `nvcc` that records which uid ran it, in a
toolkit prefix owned by another user. With the unit's User= being that owner, the probe runs it
through setpriv as that user (the canary is made, owned by that uid: nothing ran as root); with
another User= it is not run at all; `AS=` in the environment cannot widen the trust check.
The unit itself is stood in for (read_unit_env / read_unit_account patched): the real
systemctl path is tests/test_probes_systemd.py's.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from remedy.model import Facts, Gpu, Workload
from remedy.probes import base, run_probe
from remedy.transport.local import LocalTransport
from remedy.trust import untrusted_reason

NOBODY = 65534
needs_root = pytest.mark.skipif(
    os.geteuid() != 0 or shutil.which("setpriv") is None, reason="needs root and setpriv"
)


@pytest.fixture
def area() -> Iterator[Path]:
    """A dir the unit's user can reach (pytest's tmp_path sits under a root-only TMPDIR)."""
    top = Path(tempfile.mkdtemp(prefix="remedy-runas-", dir="/tmp"))
    top.chmod(0o755)
    drop = top / "drop"  # where the fake tools leave their canary: anyone may write
    drop.mkdir()
    drop.chmod(0o1777)
    try:
        yield top
    finally:
        shutil.rmtree(top)


def fake_prefix(area: Path, owner: int) -> Path:
    prefix = area / "cuda-user"
    (prefix / "bin").mkdir(parents=True)
    (prefix / "include").mkdir()
    nvcc = prefix / "bin" / "nvcc"
    nvcc.write_text(f"#!/bin/sh\nid -u > {area}/drop/canary-nvcc\necho nvcc ran\nexit 1\n")
    nvcc.chmod(0o755)
    for dp, _d, fns in os.walk(prefix):
        os.chown(dp, owner, owner)
        for n in fns:
            os.chown(os.path.join(dp, n), owner, owner)
    return prefix


def probe_as(monkeypatch: pytest.MonkeyPatch, prefix: Path, run_as: base.RunAs | None):
    async def unit_env(_t, unit):
        return {"PATH": "/usr/bin:/bin"}, f"{unit}'s environment (stand-in)"

    async def unit_account(_t, _unit):
        return run_as, ""

    monkeypatch.setattr(base, "read_unit_env", unit_env)
    monkeypatch.setattr(base, "read_unit_account", unit_account)
    facts = Facts(
        gpus=[Gpu(name="g", compute_cap="12.0")],
        workload=Workload(service="svc.service"),
    )
    return asyncio.run(
        run_probe(
            "preprocess-probe",
            LocalTransport("local"),
            facts,
            params={"prefix": str(prefix)},
            timeout=60,
        )
    )


@needs_root
def test_a_units_own_toolkit_runs_as_its_user_not_as_root(area, monkeypatch):
    prefix = fake_prefix(area, NOBODY)
    res = probe_as(monkeypatch, prefix, base.RunAs("nobody", NOBODY, NOBODY))
    canary = area / "drop" / "canary-nvcc"
    assert canary.exists(), f"the probe did not run the unit user's nvcc: {res.detail}"
    assert canary.read_text().strip() == str(NOBODY), "nvcc ran as another uid than User="
    assert canary.stat().st_uid == NOBODY
    assert not res.ok and "nvcc ran" in res.output_tail


@needs_root
def test_a_toolkit_of_another_user_is_not_run_for_the_unit(area, monkeypatch):
    prefix = fake_prefix(area, 4242)
    res = probe_as(monkeypatch, prefix, base.RunAs("nobody", NOBODY, NOBODY))
    assert not (area / "drop" / "canary-nvcc").exists()
    assert res.skipped and "owned by" in res.skipped and "uid 4242" in res.skipped


@needs_root
def test_without_user_the_users_toolkit_is_not_run_as_root(area, monkeypatch):
    prefix = fake_prefix(area, NOBODY)
    res = probe_as(monkeypatch, prefix, None)
    assert not (area / "drop" / "canary-nvcc").exists()
    assert res.skipped and "owned by" in res.skipped


@needs_root
def test_AS_in_the_environment_does_not_widen_the_trust_check(area, monkeypatch):
    prefix = fake_prefix(area, NOBODY)
    monkeypatch.setenv("AS", str(NOBODY))
    t = LocalTransport("local")
    why = asyncio.run(untrusted_reason(t, [str(prefix / "bin" / "nvcc")]))
    assert why and "owned by" in why
    assert asyncio.run(untrusted_reason(t, [str(prefix / "bin" / "nvcc")], as_uid=NOBODY)) is None


@pytest.mark.parametrize(
    "shown, account",
    [
        ("User=\nGroup=\nDynamicUser=no\n", None),
        ("User=root\nGroup=\nDynamicUser=no\n", None),
        ("User=svc\nGroup=\nDynamicUser=yes\n", None),
        ("User=$(touch /tmp/x)\nGroup=\nDynamicUser=no\n", None),
        ("User=-rf\nGroup=\nDynamicUser=no\n", None),
        ("User=svc\nGroup=\nDynamicUser=no\n", ("svc", 998, 997)),
    ],
)
def test_read_unit_account(shown: str, account):
    """Which units run their probes as another user; a hostile User= never reaches a shell."""
    from remedy.transport.base import CommandResult

    class T:
        host = "t"
        calls: list[list[str]] = []

        async def run(self, argv, timeout=None):
            self.calls.append(argv)
            if argv[0] == "systemctl":
                return CommandResult(0, shown.encode(), b"", 0.0)
            return CommandResult(0, b"998 997\n", b"", 0.0)

    t = T()
    got, _why = asyncio.run(base.read_unit_account(t, "svc.service"))
    assert (None if got is None else (got.user, got.uid, got.gid)) == account
    if account is None:
        assert all(c[0] == "systemctl" for c in t.calls)
    else:
        assert t.calls[-1][-2:] == ["svc", ""]  # argv words, not shell text
        assert got.argv()[:3] == ["setpriv", "--reuid=998", "--regid=997"]
