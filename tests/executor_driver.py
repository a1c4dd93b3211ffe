"""Runs remedy's Runner against a scratch tree with LocalTransport (driven by test_executor).

Usage: python executor_driver.py ROOT (run|resume|rollback|history|resume-rollback)
       [fail-probe | op-passes | op-fails | op-fails-rollback]

op-*: the plan carries the operation its log came from (Plan.failed_operation); its re-run
after the steps passes, or still fails (kept applied, or rolled back as the user chose).

The plan has three steps touching a symlink, a created directory with a file, and the package
set of a Python environment (a hand-made dist-info, updated like pip would), so checkpoints
of every kind are exercised. The REMEDY_CRASH_AT variable of the runner injects kill -9.
"""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path

from remedy.executor.runner import Runner
from remedy.model import Facts, FailedOperation, Plan, Step, Touch, Verification
from remedy.planner.plan import facts_digest
from remedy.transport import LocalTransport
from remedy.transport.quote import quote

ROOT = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(".")
SITE = ROOT / "venv" / "lib" / "python3.11" / "site-packages"


def make_pkg(version: str) -> str:
    """Shell that installs fakepkg==version the way pip would: files + dist-info + RECORD."""
    pkg, info = SITE / "fakepkg", SITE / f"fakepkg-{version}.dist-info"
    lines = [
        f"rm -rf {quote(str(SITE))}/fakepkg {quote(str(SITE))}/fakepkg-*.dist-info",
        f"mkdir -p {quote(str(pkg))} {quote(str(info))}",
        f"printf 'V = {version!r}\\n' > {quote(str(pkg / '__init__.py'))}",
        f"printf 'Metadata-Version: 2.1\\nName: fakepkg\\nVersion: {version}\\n' > "
        f"{quote(str(info / 'METADATA'))}",
        f"printf 'fakepkg/__init__.py,,\\nfakepkg-{version}.dist-info/METADATA,,\\n"
        f"fakepkg-{version}.dist-info/RECORD,,\\n' > {quote(str(info / 'RECORD'))}",
    ]
    return " && ".join(lines)


def plan() -> Plan:
    facts = Facts(host="scratch")
    prefix = ROOT / "cu13"
    steps = [
        Step(
            action="link-layout",
            title="lib64 -> lib",
            probe="static",
            commands=[
                f"ln -s lib {quote(str(prefix / 'lib64'))}",
                f"ln -s libcudart.so.13 {quote(str(prefix / 'lib' / 'libcudart.so'))}",
            ],
            touches=[
                Touch(kind="symlink", target=str(prefix / "lib64")),
                Touch(kind="symlink", target=str(prefix / "lib" / "libcudart.so")),
            ],
        ),
        Step(
            action="dropin",
            title="write a drop-in",
            probe="static",
            commands=[
                f"mkdir -p {quote(str(ROOT / 'etc' / 'x.service.d'))}",
                "printf '[Service]\\nEnvironment=\"CUDA_HOME=/opt/cuda\"\\n' > "
                + quote(str(ROOT / "etc" / "x.service.d" / "50-remedy.conf")),
            ],
            touches=[
                Touch(kind="dropin", target=str(ROOT / "etc" / "x.service.d" / "50-remedy.conf"))
            ],
        ),
        Step(
            action="pip",
            title="fakepkg 2.0",
            probe="static",
            commands=[make_pkg("2.0")],
            touches=[Touch(kind="package", target=str(ROOT / "venv"), detail="fakepkg==2.0")],
        ),
    ]
    return Plan(
        remedy_version="t",
        host="scratch",
        facts_digest=facts_digest(facts),
        facts=facts,
        target=facts.workload,
        steps=steps,
        verification=[Verification(consumer="x", probe="final-check")],
        failed_operation=FailedOperation(
            consumer="torch-cpp-extension",
            probe="rerun-op",
            params={"headers": ["x.h"]},
            first_error="build.log:3: main.cpp:1:10: fatal error: x.h: No such file or directory",
        )
        if OPT.startswith("op-")
        else None,
    )


OPT = sys.argv[3] if len(sys.argv) > 3 else ""


class Res:
    def __init__(self, ok: bool, detail: str = "probe") -> None:
        self.ok, self.detail, self.symptoms, self.skipped = ok, detail, [], None


async def main() -> int:
    mode = sys.argv[2]
    fail_probe = len(sys.argv) > 3 and sys.argv[3] == "fail-probe"

    async def collect(_t):
        return Facts(host="scratch")

    async def prober(probe, t, facts, params=None, consumer=None):
        if probe == "rerun-op":
            assert params == {"headers": ["x.h"]}, params
            if OPT == "op-passes":
                return Res(True)
            return Res(False, "main.cpp:1:10: fatal error: x.h: No such file or directory")
        return Res(not (fail_probe and probe == "final-check"))

    r = Runner(LocalTransport(host="scratch"), collect=collect, prober=prober)
    r.rollback_if_not_fixed = OPT == "op-fails-rollback"
    if mode == "run":
        rep = await r.run(plan())
    elif mode == "resume":
        rep = await r.resume()
    elif mode == "resume-rollback":
        rep = await r.resume(rollback=True)
    elif mode == "rollback":
        rep = await r.rollback()
    else:
        print(json.dumps(await r.runs(), default=str))
        return 0
    await r.t.close()
    print(json.dumps(rep.as_dict(), default=str))
    return rep.exit_code


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
