"""Disk and partial-state faults of `remedy run` on a real seed-chain-a sandbox host (issue
"Reliability and security", part 6): each run must stop with one clear line (no traceback,
no hang), roll back (exit 3, the runner's contract for a failed step: OUTCOME_EXIT), release
the lock, and leave the venv's toolchain byte-identical to before (agent digest).

How each fault is made on the host (tier ssh: inside its mount namespace, `sbx exec`):
  (a) full disk while checkpointing: a 1 MiB tmpfs over remedy's state dir
      (~/.local/state/remedy): step 1's checkpoint (the 13.2 nvcc/nvvm/crt files, tens of
      MB) gets ENOSPC; the agent and the journal still fit
  (b) a read-only target: nvidia/cu13/lib bind-mounted read-only over itself
      (`mount --bind` + `remount,bind,ro`; chattr +i does not work on overlayfs): step 1's
      pip install must replace nvidia-nvvm's file there and gets EROFS
  (c) permission denied: root bypasses file modes, so remedy logs in as an unprivileged user
      (useradd in the host, home in the host's private /tmp, the host's client key): pip
      cannot touch the root-owned venv (EACCES), and the restore must not need to either
  (d) a package download that fails: the host's offline index (/srv/wheels, pip.conf's
      find-links) is replaced by a copy without nvidia-cuda-cccl, so step 3's
      `pip install nvidia-cuda-cccl==13.0.85` finds nothing, after steps 1-2 committed

One host for the four faults (each test undoes its fault and must leave the host as it found
it, which is the assertion); the plan keeps no final verification (these faults hit the
steps). Hosts are named sk<pid>f, torn down by the fixture (and atexit).
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest
from sandbox_hosts import (
    CHAIN_A,
    CU13,
    Host,
    SandboxUnavailable,
    chain_plan,
    doctor,
    down,
    report_of,
    same,
    snapshot_diff,
    up,
)

pytestmark = pytest.mark.sandbox

NAME = f"sk{os.getpid() % 100000}f"
USER = "skfault"


class Ctx:
    host: Host
    plan: Path
    before: dict


@pytest.fixture(scope="module")
def ctx(tmp_path_factory):
    try:
        doctor()
    except SandboxUnavailable as exc:
        pytest.skip(str(exc))
    c = Ctx()
    c.host = up("seed-chain-a", NAME)
    try:
        c.plan = tmp_path_factory.mktemp("faults") / "plan.json"
        chain_plan(c.host, c.plan, CHAIN_A, consumers=set())
        c.before = c.host.snapshot()
        yield c
    finally:
        down(c.host)


def run(h: Host, plan: Path) -> tuple[int, dict, str]:
    r = h.remedy("run", h.name, "--plan", str(plan), "--yes", "--json", timeout=600)
    rep = report_of(r)
    print(f"  exit {r.returncode} {rep['outcome']}: {rep['message'][:400]}")
    return r.returncode, rep, r.stderr


def rolled_back_cleanly(rc: int, rep: dict, err: str, reason: str) -> None:
    """Exit 3, rolled-back, the cause named in the report and on stderr, no traceback."""
    assert rc == 3 and rep["outcome"] == "rolled-back", (rc, rep["message"], err[-1500:])
    assert "Traceback" not in err, err[-3000:]
    assert re.search(reason, rep["message"]), rep["message"]
    assert "the host is back as it was before the run" in rep["message"]
    assert all(s["outcome"] in ("rolled-back", "failed") for s in rep["steps"]), rep["steps"]


def back_as_before(c: Ctx, h: Host | None = None) -> None:
    h = h or c.host
    assert h.lock() is None, "the lock was left held"
    assert all(x["outcome"] != "interrupted" for x in h.history())
    now = c.host.snapshot()
    assert same(c.before, now), snapshot_diff(c.before, now)


def test_full_disk_while_checkpointing(ctx):
    h = ctx.host
    mnt = h.sbx_exec(
        "mkdir -p /root/.local/state/remedy && "
        "mount -t tmpfs -o size=1m,mode=700 sk-full /root/.local/state/remedy"
    )
    assert mnt.returncode == 0, mnt.stderr
    try:
        rc, rep, err = run(h, ctx.plan)
        rolled_back_cleanly(rc, rep, err, r"step 1 .*checkpoint could not be written")
        assert "No space left on device" in rep["message"]
        assert [s["outcome"] for s in rep["steps"]] == ["failed"]
        assert h.lock() is None and h.history()[-1]["outcome"] == "rolled-back"
        # the half-written checkpoint was removed: the small tmpfs is not left full
        _, df = h.ssh("df --output=used -k /root/.local/state/remedy | tail -n 1")
        assert int(df.strip()) < 512, df
    finally:
        h.sbx_exec("umount /root/.local/state/remedy")
    back_as_before(ctx)


def test_read_only_target(ctx):
    h = ctx.host
    lib = f"{CU13}/lib"
    mnt = h.sbx_exec(f"mount --bind {lib} {lib} && mount -o remount,bind,ro {lib}")
    assert mnt.returncode == 0, mnt.stderr
    try:
        rc, rep, err = run(h, ctx.plan)
        rolled_back_cleanly(rc, rep, err, r"step 1 \(pip-align-cuda-wheels\) failed to apply")
        assert "Read-only file system" in rep["message"]
    finally:
        h.sbx_exec(f"umount {lib}")
    back_as_before(ctx)


def test_permission_denied_for_an_unprivileged_user(ctx, tmp_path):
    h = ctx.host
    pub = Path(h.rec["identity_file"] + ".pub").read_text()
    home = f"/tmp/{USER}"
    made = h.sbx_exec(
        f"id {USER} >/dev/null 2>&1 || useradd -M -d {home} -s /bin/sh {USER}; "
        f"mkdir -p {home}/.ssh && printf '%s' '{pub.strip()}' > {home}/.ssh/authorized_keys && "
        f"chown -R {USER}: {home} && chmod 700 {home} {home}/.ssh"
    )
    assert made.returncode == 0, made.stderr
    cfg = tmp_path / "ssh_config"
    cfg.write_text(
        re.sub(r"(?m)^(\s*)User root$", rf"\1User {USER}", Path(h.cfg).read_text()), "utf-8"
    )
    u = Host({**h.rec, "ssh_config": str(cfg)})
    rc, whoami = u.ssh("id -un")
    assert rc == 0 and whoami.strip() == USER, whoami
    plan = tmp_path / "plan.json"
    chain_plan(u, plan, CHAIN_A, consumers=set())
    rc, rep, err = run(u, plan)
    rolled_back_cleanly(rc, rep, err, r"step 1 \(pip-align-cuda-wheels\) failed to apply")
    assert "Permission denied" in rep["message"]
    assert u.lock() is None and u.history()[-1]["outcome"] == "rolled-back"
    back_as_before(ctx)


def test_package_download_fails(ctx):
    h = ctx.host
    hide = (
        "mkdir -p /tmp/wall /tmp/wsub && mount --bind /srv/wheels /tmp/wall && "
        'for f in /tmp/wall/*; do case "$f" in *nvidia_cuda_cccl-*) ;; '
        '*) ln -sf "$f" /tmp/wsub/ ;; esac; done && mount --bind /tmp/wsub /srv/wheels'
    )
    mnt = h.sbx_exec(hide)
    assert mnt.returncode == 0, mnt.stderr
    try:
        rc, rep, err = run(h, ctx.plan)
        rolled_back_cleanly(rc, rep, err, r"step 3 \(pip-install-cccl\) failed to apply")
        assert "No matching distribution found for nvidia-cuda-cccl" in rep["message"]
        assert [s["outcome"] for s in rep["steps"]] == ["rolled-back"] * 3
        assert [s["action"] for s in rep["steps"]][:2] == [
            "pip-align-cuda-wheels",
            "link-layout-symlinks",
        ]
    finally:
        h.sbx_exec("umount /srv/wheels; umount /tmp/wall")
    back_as_before(ctx)
