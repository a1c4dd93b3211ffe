"""Toolchains assembled and broken the way users do it, on real sandbox hosts (real sshd,
real pip CUDA wheels, FlashInfer's real JIT), remedy run as a subprocess as a user runs it.

  (a) cuda-home-no-nvcc: `pip install torch` (cu130) and CUDA_HOME=<venv>/nvidia/cu13, but no
      nvidia-cuda-nvcc. FlashInfer's JIT stops at `<cu13>/bin/nvcc: not found`. CUDA_HOME is
      already right, so the minimal plan installs the compiler wheels at torch's CUDA (their
      CCCL included) and fixes pip's link layout: two steps. Before this change the plan also
      re-wrote CUDA_HOME to the value it had (a profile.d file that changes nothing) and
      installed nvidia-cuda-cccl a second time. `run` must say `fixed` only because the failed
      build, re-run, passes; the user's own compile over SSH passes too.

  (b) cuda-home-unset: a consistent pip toolchain and CUDA_HOME set nowhere; FlashInfer finds
      no nvcc. The user builds with `ssh host cmd` (a non-login session: pam_env's
      /etc/environment, never /etc/profile.d). The plan sets CUDA_HOME in the login
      environment; before this change that was a profile.d file only, the run said `fixed`
      and the same `ssh host cmd` build still failed. Now /etc/environment gets the line too,
      and `remedy rollback` gives the file back as it was.

  (c) cuda-home-stale: CUDA_HOME in /etc/environment (and, as sbx mirrors it, in a profile.d
      file read after remedy's old `remedy-*.sh`) names a deleted venv. Before this change the
      plan's profile.d file lost to that later file, the step failed its re-check and the run
      was rolled back (exit 3): no fix. Now the file is `zz-remedy-*.sh` (read last) and
      /etc/environment is rewritten: `fixed`, and both kinds of session see the live venv.

  (d) triton-ptxas-old: TRITON_PTXAS_BLACKWELL_PATH names a leftover cu12 wheel's ptxas 12.6;
      Triton's sm_120 compile stops at LLVM's "PTX version 8.5 does not support target
      'sm_120a'". Before this change no signature knew that line, the log named no failed
      operation, and the triton-compile probe was skipped without a GPU: `run` said `fixed`
      with nothing re-run. Now the step addresses the line, the failed Triton compile is
      re-run (compiled for the GPU's arch, no driver needed) and passes.

  (e) cuda-home-bashrc-interactive: CUDA_HOME (and PATH to its nvcc) exported at the end of
      ~/.bashrc, below Debian's "not interactive, return" guard; the user's build over `ssh
      host cmd` finds no nvcc. remedy computes the login environment as an interactive shell
      gets it (CUDA_HOME set): before this change the plan had no step and `run` said
      `nothing-to-do` (exit 10) with the build still failing. Now facts record where a new
      `ssh host cmd` session differs (session_env), the plan is made for that session
      (CUDA_HOME into /etc/environment + profile.d), and `run` re-runs the failed build in the
      login environment AND in a new `ssh host cmd` session: `fixed` only when both pass.
      A plan with no step re-runs it too: still failing -> no-complete-plan (exit 3).

  (f) cuda-home-bashrc-stale: ~/.bashrc exports a deleted venv's CUDA_HOME above its guard,
      so every bash session gets it after /etc/environment and /etc/profile.d. Before this
      change the plan was `ok` with a login-scope write that loses to that line; `run` applied
      it, its re-check failed, rolled back (exit 3) without naming ~/.bashrc. Now facts record
      which user file sets a build variable (shell_env_from), the planner knows a login-scope
      write cannot beat it: `impossible`, the reason names /root/.bashrc, nothing applied.

  (g) service-envfile-cuda-home (systemd tier): the unit's EnvironmentFile= sets CUDA_HOME to
      a CUDA 12.8 and overrides the user's drop-in Environment=CUDA_HOME=<cu13>. remedy's
      drop-in lost the same way: the plan was `impossible` (exit 3, no word of the file). Now
      its drop-in also names an EnvironmentFile of its own, read after the unit's: `run`
      restarts the unit and says `fixed` when it is ready; `rollback` restores both files.

  (h) service-path-no-ninja (systemd tier): the unit runs the venv's python without the
      venv's bin/ on its PATH; the JIT builds cannot exec ninja. Before this change: no rule
      predicted the line, plan with no step (exit 3), run no-complete-plan. Now a drop-in puts
      the venv's bin/ first on the unit's PATH: `fixed`; rollback restores the unit.

  (i) service-path-literal (systemd tier): Environment=PATH=/opt/sglang-venv/bin:$PATH, which
      systemd does not expand: nvcc finds no gcc. Before this change: no rule explained
      "nvcc fatal : Failed to preprocess host compiler properties.", plan with no step (exit 3),
      run no-complete-plan. Now a drop-in writes the PATH out: `fixed`; rollback restores it.

  (j) service-jit-cache-readonly (systemd tier): ProtectHome=read-only + ProtectSystem=strict;
      the JIT caches under /root are read-only: "OSError: [Errno 30] Read-only file system".
      Before this change: plan nothing-to-do (exit 0), `run` nothing-to-do (exit 10), the unit
      failed. Now a drop-in with CacheDirectory=remedy-jit and the consumers' cache variables:
      `fixed` after the unit's real builds pass; rollback restores the unit.
      service-jit-cache-strict: ProtectSystem=strict without PrivateTmp=, /tmp read-only too
      ("No usable temporary directory found"): the drop-in also sets TMPDIR (main: plan
      nothing-to-do, run nothing-to-do exit 10, as for the first).

  (k) the same unit with MemoryMax=8G: remedy reads the limit (`systemctl show`) and plans
      MAX_JOBS=1 for a RECORDED OOM-killed build (cgroup v1 here: MemoryMax= is not enforced,
      no real OOM kill can be produced). Before: advice only, no step, no MemoryMax= read.

  (l) service-dropin-later-cuda-home (systemd tier): the admin's 90-local.conf sets
      Environment=CUDA_HOME=<12.8>, parsed after remedy's 50-remedy-cuda-home.conf (drop-ins in
      name order, the later assignment wins). Before this change: plan `ok` with a plain
      drop-in, `run` rolled-back (exit 3): silently overridden. Now remedy's drop-in names an
      EnvironmentFile of its own, which beats every Environment=: `fixed`; rollback restores.
      With the admin's UnsetEnvironment=CUDA_HOME in a drop-in instead (applied after every
      Environment= and EnvironmentFile=): before, plan `ok`, `run` applied, re-check failed,
      rolled back (exit 3); now the facts keep UnsetEnvironment=, the plan is `impossible`
      and names it, nothing applied (no-complete-plan, exit 3).
      As a template (sglang@.service, the admin's sglang@.service.d/90-local.conf, instance
      sglang@0 running): remedy's drop-in goes to sglang@0.service.d, systemd lists it in the
      instance's DropInPaths and applies it: `fixed`; rollback restores.

  (m) the unit of (l) run as a system user (`useradd --system --home-dir /var/lib/sglang`)
      under ProtectHome=read-only: its caches in /var/lib/sglang are writable, the unit is
      ready. Before this change remedy guessed /home/sglang (read-only): plan `ok` with a
      CacheDirectory= drop-in, `run` applied it to the healthy unit, restarted it, rolled
      back (exit 3). Now facts read the home (`getent passwd`): nothing-to-do, untouched.

  (n) cuda-home-unset with `export CUDA_HOME=<deleted venv>` appended to /etc/profile, below
      its /etc/profile.d loop: login shells get it after remedy's zz-remedy-*.sh. Before this
      change: plan `ok`, `run` said `fixed` (exit 0) and the `bash -l` build still failed.
      Now the tail of /etc/profile is read last and named: `impossible`, nothing applied.

  (o) the unit of (l) with the admin's 90-local.conf naming an EnvironmentFile= of its own
      (CUDA_HOME=<12.8>): files are read in the order listed, the admin's after remedy's
      50-remedy-cuda-home.env. Before this change: plan `ok`, `run` rolled back (exit 3, the
      re-check failed). Now remedy's drop-in is named to be read after every drop-in of the
      unit (zz-remedy-cuda-home.conf): `fixed`; rollback restores.

  (p) the unit's ExecStart is a login shell (`bash -lc "source VENV/bin/activate && exec
      python ..."`) and /etc/profile.d/cuda.sh exports CUDA_HOME=<12.8>, read after systemd's
      environment. Before this change: findings for an unset CUDA_HOME, the log unexplained,
      a drop-in step (exit 3); `run` applied it, restarted the unit: rolled back. Now the facts
      read what the login shell adds (Service.exec_shell_env): `impossible`, the file named.

  (q) the same with `bash -c` (no login shell) and `export CUDA_HOME=<12.8>` appended to the
      venv's bin/activate, which ExecStart sources: main as in (p); now the sourced script is
      read as data: `impossible`, bin/activate named, nothing applied.

  (r) test_n on a Fedora/RHEL-shaped /etc/profile (`for i in /etc/profile.d/*.sh
      /etc/profile.d/sh.local ; do`): main found Debian's loop only, read the file whole:
      plan `ok`, `run` said `fixed` (exit 0) while the `bash -l` build still failed. Now the
      loop is found in the RHEL, Alpine and Arch shapes: `impossible`, named.

  (s) the unit of (o) with the admin's EnvironmentFile= named in `zzz-local.conf`, which
      sorts after remedy's zz-remedy-cuda-home.conf: the admin's file is read after remedy's
      and wins. Before this change: plan `ok` (a zz-remedy drop-in), `run` applied it,
      restarted the unit, the re-check failed: rolled back (exit 3). Now the facts read the
      drop-ins sorting after remedy's and compute the value in systemd's order
      (Service.dropin_overrides): `impossible`, zzz-local.conf and its file named, nothing
      applied. With Environment=CUDA_HOME=<12.8> in `~override.conf` instead, remedy's own
      EnvironmentFile wins: `fixed` (remedy was already right there; the test keeps it).

  (t) ExecStart= prefixes (systemd.service(5) "Command lines"). `@/opt/sglang-venv/bin/python
      python3 SCRIPT`: `systemctl show`'s argv[] starts at `python3`; main found no venv for
      the unit (Service.python None; plan and run right by the PATH fallback). `-:+/opt/...`:
      already right. `@/bin/bash -bash -c "source VENV/bin/activate && exec python ..."` is a
      login shell (argv[0] `-bash`) reading /etc/profile.d/cuda.sh: main saw no shell, plan
      `unexplained` with a drop-in step the profile overrides; now `impossible`, cuda.sh named.

  (u) test_p's unit run as a system user (User=sglang, home /var/lib/sglang) whose
      ~/.profile exports CUDA_HOME=<12.8>, read by the ExecStart's login shell after systemd's
      environment. Before this change: plan exit 3 `unexplained`, with a drop-in step the
      profile overrides. Now the unit user's first login file is read: `impossible`, named.

  (v) test_u's unit with Debian's ~/.profile (`. "$HOME/.bashrc"` when bash) and the
      export in that user's ~/.bashrc. Above the bashrc's "not interactive, return" guard,
      `bash -lc` gets CUDA_HOME=<12.8> after systemd's environment. Before this change only
      ~/.profile was read: plan exit 3 `unexplained` with a drop-in step the shell overrides.
      Now the sourced file is read as data, cut at its guard: `impossible`, ~/.bashrc named,
      nothing applied. Below the guard (the admin's 90-local.conf sets CUDA_HOME=<12.8> as
      in test_l) the shell never reaches it: a drop-in, `fixed` with <cu13> in the running
      process (main was already right there; the test keeps it so).

  (w) test_s's unit with the admin's zzz-local.conf naming its EnvironmentFile= with
      %-specifiers (%E/sglang/local.env, %h/sglang.env, %S/sglang/local.env, a `%%`): systemd
      reads the expanded path (`systemctl show` lists it). remedy expands them as systemd
      does: `impossible`, zzz-local.conf and the expanded file named, nothing applied.
      (remedy was already right here; the tests keep it so.)

Needs root and scripts/setup-sandbox.sh (else skipped with the reason). ~40 s each.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
import yaml
from sandbox_hosts import Host, host_for_test, report_of

ROOT = Path(__file__).resolve().parents[1]
SCENARIOS = ROOT / "sandbox" / "scenarios"
FI_BUILD = ROOT / "sandbox" / "lib" / "probes" / "fi_build.py"
CU13 = "/opt/sglang-venv/lib/python3.11/site-packages/nvidia/cu13"

pytestmark = pytest.mark.sandbox


def scenario(name: str) -> dict:
    return yaml.safe_load((SCENARIOS / name / "scenario.yaml").read_text())


def fi_build(h: Host, module: str = "act") -> tuple[int, str]:
    """The user's FlashInfer JIT build, run directly over SSH (not through remedy)."""
    rc, _ = h.ssh("cat > /tmp/fi_build.py", input=FI_BUILD.read_text())
    assert rc == 0
    return h.ssh(
        f"cd /tmp && FLASHINFER_CUDA_ARCH_LIST=12.0 /opt/sglang-venv/bin/python - {module} "
        "< fi_build.py 2>&1",
        timeout=600,
    )


def plan_from_log(h: Host, tmp_path: Path, name: str, out: str, consumers: str) -> tuple[Any, dict]:
    """`remedy plan --host H --log LOG --consumers C --out p.json` on the failing build's output."""
    log = tmp_path / name
    log.write_text(out)
    r = h.remedy("plan", "--host", h.name, "--log", str(log), "--consumers", consumers,
                 "--out", str(tmp_path / "p.json"), timeout=600)  # fmt: skip
    return r, json.loads((tmp_path / "p.json").read_text())


def run_plan(h: Host, tmp_path: Path) -> tuple[Any, dict]:
    """`remedy run H --plan p.json --yes --json --verify cheap`: the saved plan, as previewed."""
    r = h.remedy("run", h.name, "--plan", str(tmp_path / "p.json"), "--yes", "--json",
                 "--verify", "cheap")  # fmt: skip
    return r, report_of(r)


@pytest.fixture
def no_nvcc():
    yield from host_for_test("cuda-home-no-nvcc", "tcn")


def test_a_cuda_home_without_nvcc_installs_the_compiler_only(no_nvcc, tmp_path):
    h = no_nvcc
    defect = scenario("cuda-home-no-nvcc")["expected"]["defects"][0]
    rc, out = h.ssh(defect["probe"])
    assert rc != 0 and re.search(defect["expect"], out), out[-1500:]
    rc, out = fi_build(h)
    assert rc != 0 and f"{CU13}/bin/nvcc: not found" in out, out[-1500:]
    r, plan = plan_from_log(h, tmp_path, "fi.log", out, "flashinfer-jit")
    steps = [(s["action"], s["params"]) for s in plan["steps"]]
    print(f"(a) plan: exit {r.returncode}, {plan['status']}, {steps}")
    assert r.returncode == 0 and plan["status"] == "ok" and plan["unexplained"] == []
    actions = [a for a, _ in steps]
    # CUDA_HOME already names the prefix: no step re-writes it; CCCL comes with the wheels
    assert actions == ["pip-install-cuda-toolchain", "link-layout-symlinks"], actions
    wheels = plan["steps"][0]["operation"]["packages"]
    # torch 2.14.1 is cu130 (cuda-toolkit==13.0.3 pins runtime 13.0.96): the compiler at 13.0
    assert plan["facts"]["pythons"][0]["torch_cuda"] == "13.0"
    assert wheels["nvidia-cuda-nvcc"].startswith("13.0.") and "nvidia-cuda-cccl" in wheels
    assert wheels.get("nvidia-cuda-runtime", "13.0.96") == "13.0.96"
    assert any("bin/nvcc: not found" in a for a in plan["steps"][0]["addresses"])

    r, rep = run_plan(h, tmp_path)
    print(f"(a) run: exit {r.returncode}, {rep['outcome']}: {rep['message'][:300]}")
    assert r.returncode == 0 and rep["outcome"] == "fixed", rep["message"]
    rerun = [v for v in rep["verification"] if v.get("failed_operation")]
    assert len(rerun) == 1 and rerun[0]["ok"] is True, rerun
    # nothing was written to the login environment; the user's own compile now passes
    assert h.ssh("test -e /etc/profile.d/zz-remedy-cuda-home.sh")[0] != 0
    rc, out = h.ssh(defect["probe"])
    assert rc == 0, out[-1500:]


@pytest.fixture
def unset_home():
    yield from host_for_test("cuda-home-unset", "tcu")


def test_b_cuda_home_set_for_the_sessions_the_user_builds_in(unset_home, tmp_path):
    h = unset_home
    before = h.ssh("cat /etc/environment")[1]
    rc, out = fi_build(h)
    want = scenario("cuda-home-unset")["expected"]["jit"][0]["expect"]
    assert rc != 0 and re.search(want, out), out[-1500:]
    r, plan = plan_from_log(h, tmp_path, "fi.log", out, "flashinfer-jit")
    steps = [(s["action"], s["params"]) for s in plan["steps"]]
    print(f"(b) plan: exit {r.returncode}, {plan['status']}, {steps}")
    assert r.returncode == 0 and plan["status"] == "ok"
    assert steps == [("shell-env-cuda-home", {"prefix": CU13})]
    assert plan["steps"][0]["operation"]["scope"] == "profile"

    r, rep = run_plan(h, tmp_path)
    print(f"(b) run: exit {r.returncode}, {rep['outcome']}: {rep['message'][:300]}")
    assert r.returncode == 0 and rep["outcome"] == "fixed", rep["message"]
    # the session the user built in (ssh host cmd: pam_env, no profile) and a login shell
    assert h.ssh("echo $CUDA_HOME")[1].strip() == CU13
    assert h.ssh("bash -lc 'echo $CUDA_HOME'")[1].strip() == CU13
    env = h.ssh("cat /etc/environment")[1]
    # the other lines are kept; CUDA_HOME is there once
    assert [ln for ln in env.splitlines() if not ln.startswith("CUDA_HOME=")] == [
        ln for ln in before.splitlines() if not ln.startswith("CUDA_HOME=")
    ]
    assert env.splitlines().count(f"CUDA_HOME={CU13}") == 1
    rc, out = h.ssh(
        "cd /tmp && printf '#include <cuda_fp16.h>\\n__global__ void k(__half *p) "
        '{ *p = __float2half(1.f); }\\n\' > b.cu && "$CUDA_HOME/bin/nvcc" -arch=sm_120a -c b.cu'
    )
    assert rc == 0, out[-1500:]

    r = h.remedy("rollback", h.name, "--yes", "--json")
    assert r.returncode == 0 and report_of(r)["outcome"] == "rolled-back", r.stderr[-1500:]
    assert h.ssh("cat /etc/environment")[1] == before
    assert h.ssh("test -e /etc/profile.d/zz-remedy-cuda-home.sh")[0] != 0


@pytest.fixture
def stale_home():
    yield from host_for_test("cuda-home-stale", "tcs")


def test_c_stale_cuda_home_is_replaced_where_every_session_reads_it(stale_home, tmp_path):
    h = stale_home
    rc, out = fi_build(h)
    want = scenario("cuda-home-stale")["expected"]["jit"][0]["expect"]
    assert rc != 0 and re.search(want, out), out[-1500:]
    r, plan = plan_from_log(h, tmp_path, "fi.log", out, "flashinfer-jit")
    steps = [(s["action"], s["params"]) for s in plan["steps"]]
    print(f"(c) plan: exit {r.returncode}, {plan['status']}, {steps}")
    assert r.returncode == 0 and steps == [("shell-env-cuda-home", {"prefix": CU13})]

    r, rep = run_plan(h, tmp_path)
    print(f"(c) run: exit {r.returncode}, {rep['outcome']}: {rep['message'][:300]}")
    assert r.returncode == 0 and rep["outcome"] == "fixed", rep["message"]
    rerun = [v for v in rep["verification"] if v.get("failed_operation")]
    assert len(rerun) == 1 and rerun[0]["ok"] is True, rerun
    assert h.ssh("echo $CUDA_HOME")[1].strip() == CU13
    assert h.ssh("bash -lc 'echo $CUDA_HOME'")[1].strip() == CU13
    assert "sglang-venv-old" not in h.ssh("cat /etc/environment")[1]


TRITON_COMPILE = ROOT / "sandbox" / "lib" / "probes" / "triton_compile.py"


@pytest.fixture
def old_ptxas():
    yield from host_for_test("triton-ptxas-old", "tct")


def test_d_triton_ptxas_override_too_old_for_the_gpu(old_ptxas, tmp_path):
    h = old_ptxas
    assert h.ssh("cat > /tmp/triton_compile.py", input=TRITON_COMPILE.read_text())[0] == 0
    defect = scenario("triton-ptxas-old")["expected"]["defects"][0]
    rc, out = h.ssh(defect["probe"] + " 2>&1")
    assert rc != 0 and re.search(defect["expect"], out), out[-1500:]
    r, plan = plan_from_log(h, tmp_path, "triton.log", out, "triton")
    steps = [(s["action"], s["params"]) for s in plan["steps"]]
    print(f"(d) plan: exit {r.returncode}, {plan['status']}, {steps}")
    assert r.returncode == 0 and plan["status"] == "ok" and plan["unexplained"] == []
    assert steps == [("env-triton-ptxas", {"ptxas": f"{CU13}/bin/ptxas"})]
    assert any("does not support target 'sm_120a'" in a for a in plan["steps"][0]["addresses"])
    assert plan["failed_operation"]["consumer"] == "triton"

    r, rep = run_plan(h, tmp_path)
    print(f"(d) run: exit {r.returncode}, {rep['outcome']}: {rep['verification'][-1]}")
    assert r.returncode == 0 and rep["outcome"] == "fixed", rep["message"]
    rerun = [v for v in rep["verification"] if v.get("failed_operation")]
    assert len(rerun) == 1 and rerun[0]["ok"] is True and "sm_120" in rerun[0]["detail"]
    rc, out = h.ssh(defect["probe"] + " 2>&1")
    assert rc == 0 and "COMPILED" in out, out[-1500:]


@pytest.fixture
def bashrc_home():
    yield from host_for_test("cuda-home-bashrc-interactive", "tcbi")


def test_e_cuda_home_in_bashrc_below_the_guard_reaches_ssh_cmd_builds(bashrc_home, tmp_path):
    h = bashrc_home
    # interactive shells have CUDA_HOME; `ssh host cmd` (and `bash -lc`) do not
    assert h.ssh("echo $CUDA_HOME")[1].strip() == ""
    assert h.ssh("bash -lc 'echo $CUDA_HOME'")[1].strip() == ""
    rc, out = fi_build(h)
    want = scenario("cuda-home-bashrc-interactive")["expected"]["jit"][0]["expect"]
    assert rc != 0 and re.search(want, out), out[-1500:]
    r, plan = plan_from_log(h, tmp_path, "fi.log", out, "flashinfer-jit")
    steps = [(s["action"], s["params"]) for s in plan["steps"]]
    print(f"(e) plan: exit {r.returncode}, {plan['status']}, {steps}, {plan['unexplained']}")
    # the facts say where the sessions differ; the plan is the one for the session the log
    # came from (before: no step, the log's line unexplained, exit 3)
    assert plan["facts"]["shell_env"]["CUDA_HOME"] == CU13
    assert plan["facts"]["session_env"]["CUDA_HOME"] is None
    assert r.returncode == 0 and plan["status"] == "ok" and plan["unexplained"] == []
    assert steps == [("shell-env-cuda-home", {"prefix": CU13})]
    assert "non-interactive `ssh host cmd`" in plan["steps"][0]["because"][0]

    r, rep = run_plan(h, tmp_path)
    print(f"(e) run: exit {r.returncode}, {rep['outcome']}: {rep['message'][:300]}")
    # (before: `nothing-to-do`, exit 10, and the build still failing)
    assert r.returncode == 0 and rep["outcome"] == "fixed", rep["message"]
    rerun = [v for v in rep["verification"] if v.get("failed_operation")]
    # re-run in the login environment AND in a new `ssh host cmd` session: both pass
    assert [v["ok"] for v in rerun] == [True, True], rerun
    assert "new non-interactive `ssh host cmd` session" in rerun[1]["environment"]
    assert h.ssh("echo $CUDA_HOME")[1].strip() == CU13
    rc, out = fi_build(h)
    assert rc == 0 and "BUILT" in out, out[-1500:]


def test_e_a_plan_without_the_fix_is_not_nothing_to_do(bashrc_home, tmp_path):
    """The same host and log, the plan's steps narrowed to a rule that holds (`--rules`): no
    step, as remedy planned before. `run` re-runs the failed build: it passes in the login
    environment remedy computes and fails in a new `ssh host cmd` session, so the verdict is
    no-complete-plan (exit 3), not `nothing-to-do` (exit 10) as before."""
    h = bashrc_home
    rc, out = fi_build(h)
    assert rc != 0
    (tmp_path / "fi.log").write_text(out)
    r = h.remedy("plan", "--host", h.name, "--log", str(tmp_path / "fi.log"), "--consumers",
                 "flashinfer-jit", "--rules", "toolkit-links-cudart", "--out",
                 str(tmp_path / "p.json"), timeout=600)  # fmt: skip
    plan = json.loads((tmp_path / "p.json").read_text())
    assert plan["steps"] == [] and plan["failed_operation"], r.stderr[-1500:]
    r, rep = run_plan(h, tmp_path)
    print(f"(e2) run: exit {r.returncode}, {rep['outcome']}: {rep['message'][:400]}")
    assert r.returncode == 3 and rep["outcome"] == "no-complete-plan", rep["message"]
    rerun = [v for v in rep["verification"] if v.get("failed_operation")]
    assert [v["ok"] for v in rerun] == [True, False], rerun
    assert "Could not find nvcc" in rep["message"] and "nothing was applied" in rep["message"]
    assert "CUDA_HOME unset" in rerun[1]["environment"]
    # nothing changed on the host
    assert "CUDA_HOME" not in h.ssh("cat /etc/environment")[1]


@pytest.fixture
def bashrc_stale():
    yield from host_for_test("cuda-home-bashrc-stale", "tcbs")


def test_f_a_stale_cuda_home_in_the_users_bashrc_is_named_not_overwritten(bashrc_stale, tmp_path):
    h = bashrc_stale
    rc, out = fi_build(h)
    want = scenario("cuda-home-bashrc-stale")["expected"]["jit"][0]["expect"]
    assert rc != 0 and want in out, out[-1500:]
    before = h.ssh("cat /etc/environment; ls /etc/profile.d; cat ~/.bashrc")[1]
    r, plan = plan_from_log(h, tmp_path, "fi.log", out, "flashinfer-jit")
    print(f"(f) plan: exit {r.returncode}, {plan['status']}, {plan['unresolved'][:1]}")
    assert plan["facts"]["shell_env_from"] == {"CUDA_HOME": "/root/.bashrc"}
    # (before: `ok`, one step writing /etc/environment + profile.d, which ~/.bashrc overrides)
    assert r.returncode == 3 and plan["status"] == "impossible" and plan["steps"] == []
    assert any("CUDA_HOME is set by /root/.bashrc" in u for u in plan["unresolved"])
    r, rep = run_plan(h, tmp_path)
    print(f"(f) run: exit {r.returncode}, {rep['outcome']}: {rep['message'][:300]}")
    # (before: the step applied, its re-check failed, rolled back: exit 3, ~/.bashrc unnamed)
    assert r.returncode == 3 and rep["outcome"] == "no-complete-plan", rep["message"]
    assert "/root/.bashrc" in rep["message"] and "nothing was applied" in rep["message"]
    assert h.ssh("cat /etc/environment; ls /etc/profile.d; cat ~/.bashrc")[1] == before


@pytest.fixture
def envfile_unit():
    yield from host_for_test("service-envfile-cuda-home", "tcef")


def test_g_a_units_environment_file_is_outranked_by_remedys_own(envfile_unit, tmp_path):
    """systemd tier: the unit's EnvironmentFile= sets CUDA_HOME to a CUDA 12.8 (stand-in) and
    overrides the user's drop-in Environment=CUDA_HOME=<cu13>; the server fails at FlashInfer's
    "SM 12.x requires CUDA >= 12.9". A drop-in's Environment= cannot win (before this change:
    plan `impossible`, exit 3): remedy's drop-in now also names an EnvironmentFile of its own,
    read after the unit's. `run` restarts the unit and says `fixed` only when it is ready."""
    h = envfile_unit
    defect = scenario("service-envfile-cuda-home")["expected"]["defects"][0]
    rc, journal = h.ssh(defect["probe"], timeout=120)
    assert re.search(defect["expect"], journal), journal[-1500:]
    ls = "cat /etc/default/sglang-k26; ls -R /etc/systemd/system/sglang-k26.service.d"
    before = h.ssh(ls)
    log = tmp_path / "journal.log"
    log.write_text(journal)
    r = h.remedy("plan", "--host", h.name, "--service", "sglang-k26.service", "--log",
                 str(log), "--out", str(tmp_path / "p.json"), timeout=600)  # fmt: skip
    plan = json.loads((tmp_path / "p.json").read_text())
    steps = [(s["action"], s["operation"].get("envfile")) for s in plan["steps"]]
    print(f"(g) plan: exit {r.returncode}, {plan['status']}, {steps}")
    svc = plan["facts"]["services"][0]
    assert svc["environment_files_env"]["CUDA_HOME"] == "/usr/local/cuda-12.8"
    assert r.returncode == 0 and plan["status"] == "ok", plan["unresolved"]
    assert steps == [("service-env-cuda-home", True)]
    r = h.remedy("run", h.name, "--plan", str(tmp_path / "p.json"), "--yes", "--json",
                 timeout=1200)  # fmt: skip
    rep = report_of(r)
    print(f"(g) run: exit {r.returncode}, {rep['outcome']}: {rep['message'][:300]}")
    assert r.returncode == 0 and rep["outcome"] == "fixed", rep["message"]
    # the unit's process has remedy's value, the unit's own file is as it was
    pid = h.ssh("systemctl show -p MainPID --value sglang-k26.service")[1].strip()
    env = h.ssh(f"tr '\\0' '\\n' < /proc/{pid}/environ")[1]
    assert f"CUDA_HOME={CU13}" in env.splitlines(), env
    assert "CUDA_HOME=/usr/local/cuda-12.8" in h.ssh("cat /etc/default/sglang-k26")[1]
    r = h.remedy("rollback", h.name, "--yes", "--json", timeout=600)
    assert r.returncode == 0 and report_of(r)["outcome"] == "rolled-back", r.stderr[-1500:]
    assert h.ssh(ls) == before


@pytest.fixture
def no_ninja_unit():
    yield from host_for_test("service-path-no-ninja", "tcnj")


def test_h_a_units_path_without_the_venvs_bin_gets_it_in_a_drop_in(no_ninja_unit, tmp_path):
    """systemd tier: ExecStart=/opt/sglang-venv/bin/python (the venv not activated), CUDA_HOME
    the venv's cu13, no Environment=PATH: systemd's default PATH has no ninja, the JIT build
    stops at "FileNotFoundError: [Errno 2] No such file or directory: 'ninja'". Before this
    change no rule predicted the line: plan with no step, the line unexplained (exit 3), `run`
    said no-complete-plan (exit 3). Now a drop-in puts the venv's bin/ first on the unit's
    PATH; `run` restarts the unit, re-runs the failed build: `fixed`; rollback restores it."""
    h = no_ninja_unit
    defect = scenario("service-path-no-ninja")["expected"]["defects"][0]
    rc, journal = h.ssh(defect["probe"], timeout=120)
    assert re.search(defect["expect"], journal), journal[-1500:]
    ls = "ls -R /etc/systemd/system; systemctl show -p Environment sglang-k26.service"
    before = h.ssh(ls)
    log = tmp_path / "journal.log"
    log.write_text(journal)
    r = h.remedy("plan", "--host", h.name, "--service", "sglang-k26.service", "--log",
                 str(log), "--out", str(tmp_path / "p.json"), timeout=600)  # fmt: skip
    plan = json.loads((tmp_path / "p.json").read_text())
    steps = [(s["action"], s["operation"].get("set")) for s in plan["steps"]]
    print(f"(h) plan: exit {r.returncode}, {plan['status']}, {steps}, {plan['unexplained']}")
    assert r.returncode == 0 and plan["status"] == "ok" and plan["unexplained"] == []
    default = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
    assert steps == [("env-path-venv-bin", {"PATH": f"/opt/sglang-venv/bin:{default}"})]
    r = h.remedy("run", h.name, "--plan", str(tmp_path / "p.json"), "--yes", "--json",
                 timeout=1200)  # fmt: skip
    rep = report_of(r)
    print(f"(h) run: exit {r.returncode}, {rep['outcome']}: {rep['message'][:300]}")
    assert r.returncode == 0 and rep["outcome"] == "fixed", rep["message"]
    rerun = [v for v in rep["verification"] if v.get("failed_operation")]
    assert len(rerun) == 1 and rerun[0]["ok"] is True, rerun
    # the unit's process has the venv's bin/ first; its own file is as it was
    pid = h.ssh("systemctl show -p MainPID --value sglang-k26.service")[1].strip()
    env = h.ssh(f"tr '\\0' '\\n' < /proc/{pid}/environ")[1]
    assert f"PATH=/opt/sglang-venv/bin:{default}" in env.splitlines(), env
    assert "ready to roll" in h.ssh("journalctl -u sglang-k26.service --no-pager")[1]
    r = h.remedy("rollback", h.name, "--yes", "--json", timeout=600)
    assert r.returncode == 0 and report_of(r)["outcome"] == "rolled-back", r.stderr[-1500:]
    assert h.ssh(ls) == before


@pytest.fixture
def literal_path_unit():
    yield from host_for_test("service-path-literal", "tcpl")


def test_i_a_units_literal_path_variable_is_written_out(literal_path_unit, tmp_path):
    """systemd tier: Environment=PATH=/opt/sglang-venv/bin:$PATH, which systemd does not
    expand: nvcc finds no gcc ("nvcc fatal : Failed to preprocess host compiler properties.").
    Before this change no rule explained the line: plan with no step (exit 3), `run`
    no-complete-plan. Now a drop-in writes the unit's PATH out (the literal $PATH replaced by
    systemd's default): `run` restarts the unit and re-runs the failed build: `fixed`."""
    h = literal_path_unit
    defect = scenario("service-path-literal")["expected"]["defects"][0]
    rc, journal = h.ssh(defect["probe"], timeout=120)
    assert re.search(defect["expect"], journal), journal[-1500:]
    assert "gcc: No such file or directory" in journal
    ls = "ls -R /etc/systemd/system; systemctl show -p Environment sglang-k26.service"
    before = h.ssh(ls)
    log = tmp_path / "journal.log"
    log.write_text(journal)
    r = h.remedy("plan", "--host", h.name, "--service", "sglang-k26.service", "--log",
                 str(log), "--out", str(tmp_path / "p.json"), timeout=600)  # fmt: skip
    plan = json.loads((tmp_path / "p.json").read_text())
    steps = [(s["action"], s["operation"].get("set")) for s in plan["steps"]]
    print(f"(i) plan: exit {r.returncode}, {plan['status']}, {steps}, {plan['unexplained']}")
    assert plan["facts"]["services"][0]["environment"]["PATH"] == "/opt/sglang-venv/bin:$PATH"
    assert r.returncode == 0 and plan["status"] == "ok" and plan["unexplained"] == []
    default = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
    assert steps == [("service-path-expanded", {"PATH": f"/opt/sglang-venv/bin:{default}"})]
    r = h.remedy("run", h.name, "--plan", str(tmp_path / "p.json"), "--yes", "--json",
                 timeout=1200)  # fmt: skip
    rep = report_of(r)
    print(f"(i) run: exit {r.returncode}, {rep['outcome']}: {rep['message'][:300]}")
    assert r.returncode == 0 and rep["outcome"] == "fixed", rep["message"]
    rerun = [v for v in rep["verification"] if v.get("failed_operation")]
    assert len(rerun) == 1 and rerun[0]["ok"] is True, rerun
    pid = h.ssh("systemctl show -p MainPID --value sglang-k26.service")[1].strip()
    env = h.ssh(f"tr '\\0' '\\n' < /proc/{pid}/environ")[1]
    assert f"PATH=/opt/sglang-venv/bin:{default}" in env.splitlines(), env
    r = h.remedy("rollback", h.name, "--yes", "--json", timeout=600)
    assert r.returncode == 0 and report_of(r)["outcome"] == "rolled-back", r.stderr[-1500:]
    assert h.ssh(ls) == before


@pytest.fixture
def readonly_cache_unit():
    yield from host_for_test("service-jit-cache-readonly", "tcro")


@pytest.fixture
def strict_cache_unit():
    yield from host_for_test("service-jit-cache-strict", "tcst")


@pytest.mark.parametrize(
    "unit, tmpdir",
    [("readonly_cache_unit", None), ("strict_cache_unit", "/var/cache/remedy-jit")],
)
def test_j_a_hardened_units_read_only_jit_cache_gets_a_cache_directory(
    unit, tmpdir, request, tmp_path
):
    """systemd tier: ProtectHome=read-only + ProtectSystem=strict make root's home read-only in
    the unit's namespace, where FlashInfer ($HOME/.cache/flashinfer) and tvm-ffi
    (~/.cache/tvm-ffi) build: "OSError: [Errno 30] Read-only file system: '/root/.cache'".
    Before this change remedy read no sandboxing directive and no signature knew the line: the
    plan was nothing-to-do (exit 0) and `run` said nothing-to-do (exit 10), the unit failed.
    Now a drop-in gives the caches CacheDirectory=remedy-jit and points FLASHINFER_WORKSPACE_BASE,
    TVM_FFI_CACHE_DIR, TORCH_EXTENSIONS_DIR there: `run` restarts the unit, `fixed` when the
    real builds pass and it is ready; rollback restores the unit. service-jit-cache-strict:
    ProtectSystem=strict without PrivateTmp= (/tmp read-only too): the drop-in also sets TMPDIR
    there (a cache fix alone stops at "No usable temporary directory found", seen here)."""
    h = request.getfixturevalue(unit)
    defect = scenario(h.rec["scenario"])["expected"]["defects"][0]
    rc, journal = h.ssh(defect["probe"], timeout=120)
    assert re.search(defect["expect"], journal), journal[-1500:]
    ls = "ls -R /etc/systemd/system; systemctl show -p Environment sglang-k26.service"
    before = h.ssh(ls)
    log = tmp_path / "journal.log"
    log.write_text(journal)
    r = h.remedy("plan", "--host", h.name, "--service", "sglang-k26.service", "--log",
                 str(log), "--out", str(tmp_path / "p.json"), timeout=600)  # fmt: skip
    plan = json.loads((tmp_path / "p.json").read_text())
    steps = [(s["action"], s["operation"].get("cache_directory")) for s in plan["steps"]]
    print(f"(j) plan: exit {r.returncode}, {plan['status']}, {steps}, {plan['unexplained']}")
    svc = plan["facts"]["services"][0]
    assert svc["sandboxing"]["ProtectSystem"] == "strict"
    assert r.returncode == 0 and plan["status"] == "ok" and plan["unexplained"] == []
    assert steps == [("service-jit-cache-dir", "remedy-jit")]
    assert plan["steps"][0]["operation"]["set"].get("TMPDIR") == tmpdir
    r = h.remedy("run", h.name, "--plan", str(tmp_path / "p.json"), "--yes", "--json",
                 timeout=1200)  # fmt: skip
    rep = report_of(r)
    print(f"(j) run: exit {r.returncode}, {rep['outcome']}: {rep['message'][:300]}")
    assert r.returncode == 0 and rep["outcome"] == "fixed", rep["message"]
    launch = [v for v in rep["verification"] if v.get("probe") == "launch-probe"]
    assert launch and launch[0]["ok"] is True, rep["verification"]
    # the real builds wrote the new cache, inside the unit's namespace
    pid = h.ssh("systemctl show -p MainPID --value sglang-k26.service")[1].strip()
    env = h.ssh(f"tr '\\0' '\\n' < /proc/{pid}/environ")[1]
    assert "TVM_FFI_CACHE_DIR=/var/cache/remedy-jit/tvm-ffi" in env.splitlines(), env
    assert h.ssh("ls /var/cache/remedy-jit/tvm-ffi /var/cache/remedy-jit/.cache/flashinfer")[0] == 0
    assert "ready to roll" in h.ssh("journalctl -u sglang-k26.service --no-pager")[1]
    r = h.remedy("rollback", h.name, "--yes", "--json", timeout=600)
    assert r.returncode == 0 and report_of(r)["outcome"] == "rolled-back", r.stderr[-1500:]
    assert h.ssh(ls) == before


OOM_LOG = ROOT / "tests" / "fixtures" / "corpus" / "jit-parallelism-fits-memory" / "2.log"


def test_k_a_units_memory_max_is_read_and_sizes_max_jobs(readonly_cache_unit, tmp_path):
    """systemd tier: the unit's MemoryMax= (a user's override.conf) is read for real
    (`systemctl show`) and the OOM-killed build is planned in it: MAX_JOBS=1 for 8 GiB, where
    the host's 23.5 GiB would say 2 (before this change: the rule was advice only, no step, and
    no MemoryMax= was read). The OOM line is RECORDED (corpus row, PennyLaneAI/catalyst#1000):
    this machine runs cgroup v1, where systemd does not enforce MemoryMax= (a 40M limit let the
    unit's real JIT builds pass), so a real OOM kill cannot be produced here."""
    h = readonly_cache_unit
    d = "/etc/systemd/system/sglang-k26.service.d"
    cmd = f"mkdir -p {d} && printf '[Service]\\nMemoryMax=8G\\n' > {d}/override.conf"
    assert h.ssh(cmd + " && systemctl daemon-reload")[0] == 0
    r = h.remedy("plan", "--host", h.name, "--service", "sglang-k26.service", "--log",
                 str(OOM_LOG), "--out", str(tmp_path / "p.json"), timeout=600)  # fmt: skip
    plan = json.loads((tmp_path / "p.json").read_text())
    steps = {s["action"]: s["operation"].get("set") for s in plan["steps"]}
    print(f"(k) plan: exit {r.returncode}, {plan['status']}, {steps}")
    assert plan["facts"]["services"][0]["sandboxing"]["MemoryMax"] == str(8 * 1024**3)
    assert plan["facts"]["memory_mib"] > 16 * 1024
    assert r.returncode == 0 and plan["status"] == "ok" and plan["unexplained"] == []
    assert steps["env-max-jobs"] == {"MAX_JOBS": "1"}


@pytest.fixture
def later_dropin_unit():
    yield from host_for_test("service-dropin-later-cuda-home", "tcld")


def test_l_an_admins_later_drop_in_does_not_silently_override_remedys(later_dropin_unit, tmp_path):
    """systemd tier: the admin's 90-local.conf sets Environment=CUDA_HOME=/usr/local/cuda-12.8
    (stand-in), parsed after remedy's 50-remedy-cuda-home.conf (systemd.unit(5): drop-ins in
    name order, the later assignment wins); the server fails at FlashInfer's "SM 12.x requires
    CUDA >= 12.9". remedy's drop-in Environment= line alone would lose to it, so its drop-in
    also names an EnvironmentFile of its own, which overrides every Environment= line
    (systemd.exec(5)). `run` restarts the unit: `fixed` when ready; the admin's file is left
    as it was, and rollback restores the unit."""
    h = later_dropin_unit
    defect = scenario("service-dropin-later-cuda-home")["expected"]["defects"][0]
    rc, journal = h.ssh(defect["probe"], timeout=120)
    assert re.search(defect["expect"], journal), journal[-1500:]
    ls = "ls -R /etc/systemd/system/sglang-k26.service.d; systemctl show -p Environment sglang-k26"
    before = h.ssh(ls)
    log = tmp_path / "journal.log"
    log.write_text(journal)
    r = h.remedy("plan", "--host", h.name, "--service", "sglang-k26.service", "--log",
                 str(log), "--out", str(tmp_path / "p.json"), timeout=600)  # fmt: skip
    plan = json.loads((tmp_path / "p.json").read_text())
    steps = [(s["action"], s["operation"].get("envfile")) for s in plan["steps"]]
    print(f"(l) plan: exit {r.returncode}, {plan['status']}, {steps}")
    svc = plan["facts"]["services"][0]
    assert svc["environment"]["CUDA_HOME"] == "/usr/local/cuda-12.8"
    assert any(p.endswith("/90-local.conf") for p in svc["drop_ins"]), svc["drop_ins"]
    assert r.returncode == 0 and plan["status"] == "ok", plan["unresolved"]
    # (main: envfile False, the drop-in lost to 90-local.conf, the run was not `fixed`)
    assert steps == [("service-env-cuda-home", True)]
    r = h.remedy("run", h.name, "--plan", str(tmp_path / "p.json"), "--yes", "--json",
                 timeout=1200)  # fmt: skip
    rep = report_of(r)
    print(f"(l) run: exit {r.returncode}, {rep['outcome']}: {rep['message'][:300]}")
    assert r.returncode == 0 and rep["outcome"] == "fixed", rep["message"]
    pid = h.ssh("systemctl show -p MainPID --value sglang-k26.service")[1].strip()
    env = h.ssh(f"tr '\\0' '\\n' < /proc/{pid}/environ")[1]
    assert f"CUDA_HOME={CU13}" in env.splitlines(), env
    local = h.ssh("cat /etc/systemd/system/sglang-k26.service.d/90-local.conf")[1]
    assert "Environment=CUDA_HOME=/usr/local/cuda-12.8" in local
    r = h.remedy("rollback", h.name, "--yes", "--json", timeout=600)
    assert r.returncode == 0 and report_of(r)["outcome"] == "rolled-back", r.stderr[-1500:]
    assert h.ssh(ls) == before


@pytest.fixture
def unset_dropin_unit():
    yield from host_for_test("service-dropin-later-cuda-home", "tclu")


def test_l_a_units_unset_environment_is_named_not_planned_around(unset_dropin_unit, tmp_path):
    """systemd tier, the unit of test_l with the admin's UnsetEnvironment=CUDA_HOME in a
    drop-in: systemd applies it after every Environment= and EnvironmentFile=, remedy's
    included (systemd.exec(5)). Before this change the plan was `ok` with a drop-in the unit
    then dropped (`run`: its re-check failed, rolled back). Now `systemctl show`'s
    UnsetEnvironment= is kept in the facts: `impossible`, the reason names it, nothing applied."""
    h = unset_dropin_unit
    d = "/etc/systemd/system/sglang-k26.service.d"
    cmd = f"printf '[Service]\\nUnsetEnvironment=CUDA_HOME\\n' > {d}/95-unset.conf"
    assert h.ssh(cmd + " && systemctl daemon-reload && systemctl restart sglang-k26")[0] == 0
    defect = scenario("service-dropin-later-cuda-home")["expected"]["defects"][0]
    rc, journal = h.ssh(defect["probe"], timeout=120)
    before = h.ssh(f"ls -R {d}; systemctl show -p Environment -p UnsetEnvironment sglang-k26")
    log = tmp_path / "journal.log"
    log.write_text(journal)
    r = h.remedy("plan", "--host", h.name, "--service", "sglang-k26.service", "--log",
                 str(log), "--out", str(tmp_path / "p.json"), timeout=600)  # fmt: skip
    plan = json.loads((tmp_path / "p.json").read_text())
    steps = [s["action"] for s in plan["steps"]]
    print(f"(l2) plan: exit {r.returncode}, {plan['status']}, {steps}, {plan['unresolved'][:1]}")
    assert "Could not find nvcc" in journal, journal[-1500:]
    assert plan["facts"]["services"][0]["unset_environment"] == ["CUDA_HOME"]
    assert r.returncode == 3 and plan["status"] == "impossible" and steps == []
    assert any("UnsetEnvironment=" in u for u in plan["unresolved"]), plan["unresolved"]
    r = h.remedy("run", h.name, "--plan", str(tmp_path / "p.json"), "--yes", "--json",
                 timeout=1200)  # fmt: skip
    rep = report_of(r)
    print(f"(l2) run: exit {r.returncode}, {rep['outcome']}: {rep['message'][:300]}")
    assert r.returncode == 3 and rep["outcome"] == "no-complete-plan", rep["message"]
    assert (
        h.ssh(f"ls -R {d}; systemctl show -p Environment -p UnsetEnvironment sglang-k26") == before
    )


@pytest.fixture
def template_unit():
    yield from host_for_test("service-dropin-later-cuda-home", "tclt")


def test_l_a_template_units_instance_gets_its_own_drop_in(template_unit, tmp_path):
    """systemd tier, the unit of test_l as a template: sglang@.service and the admin's
    sglang@.service.d/90-local.conf (CUDA_HOME=<12.8>), instance sglang@0.service running.
    remedy's drop-in goes to the instance's directory (sglang@0.service.d, systemd.unit(5):
    an instance reads the template's drop-ins and its own, in one name order), names its
    EnvironmentFile, and systemd applies it: `fixed`; rollback restores the instance."""
    h = template_unit
    etc = "/etc/systemd/system"
    setup = (
        f"systemctl disable --now sglang-k26.service && mv {etc}/sglang-k26.service "
        f"{etc}/sglang@.service && mv {etc}/sglang-k26.service.d {etc}/sglang@.service.d && "
        "systemctl daemon-reload && systemctl start sglang@0.service; "
        "for i in $(seq 60); do [ $(systemctl is-active sglang@0.service) = failed ] && break; "
        "sleep 0.5; done; journalctl -u sglang@0.service --no-pager"
    )
    rc, journal = h.ssh(setup, timeout=120)
    assert "SM 12.x requires CUDA >= 12.9" in journal, journal[-1500:]
    ls = f"ls -R {etc}; systemctl show -p Environment -p DropInPaths sglang@0.service"
    before = h.ssh(ls)
    log = tmp_path / "journal.log"
    log.write_text(journal)
    r = h.remedy("plan", "--host", h.name, "--service", "sglang@0.service", "--log",
                 str(log), "--out", str(tmp_path / "p.json"), timeout=600)  # fmt: skip
    plan = json.loads((tmp_path / "p.json").read_text())
    steps = [(s["action"], s["operation"].get("envfile")) for s in plan["steps"]]
    print(f"(l3) plan: exit {r.returncode}, {plan['status']}, {steps}, {plan['unresolved'][:1]}")
    assert r.returncode == 0 and plan["status"] == "ok", plan["unresolved"]
    assert steps == [("service-env-cuda-home", True)]
    assert plan["steps"][0]["operation"]["unit"] == "sglang@0.service"
    r = h.remedy("run", h.name, "--plan", str(tmp_path / "p.json"), "--yes", "--json",
                 timeout=1200)  # fmt: skip
    rep = report_of(r)
    print(f"(l3) run: exit {r.returncode}, {rep['outcome']}: {rep['message'][:300]}")
    assert r.returncode == 0 and rep["outcome"] == "fixed", rep["message"]
    pid = h.ssh("systemctl show -p MainPID --value sglang@0.service")[1].strip()
    env = h.ssh(f"tr '\\0' '\\n' < /proc/{pid}/environ")[1]
    assert f"CUDA_HOME={CU13}" in env.splitlines(), env
    mine = f"{etc}/sglang@0.service.d/zz-remedy-cuda-home.conf"  # after the admin's 90-local
    shown = h.ssh("systemctl show -p DropInPaths --value sglang@0.service")[1].split()
    assert mine in shown and f"{etc}/sglang@.service.d/90-local.conf" in shown, shown
    r = h.remedy("rollback", h.name, "--yes", "--json", timeout=600)
    assert r.returncode == 0 and report_of(r)["outcome"] == "rolled-back", r.stderr[-1500:]
    assert h.ssh(ls) == before


@pytest.fixture
def system_user_unit():
    yield from host_for_test("service-dropin-later-cuda-home", "tcsu")


def test_m_a_system_users_home_is_read_from_the_user_database(system_user_unit, tmp_path):
    """systemd tier: the unit runs as a system user made the usual way (`useradd --system
    --home-dir /var/lib/sglang`), with ProtectHome=read-only. Its JIT caches are under
    /var/lib/sglang/.cache, which ProtectHome= does not cover: the unit builds and is ready.
    Before this change remedy guessed the home as /home/sglang (read-only), planned a
    CacheDirectory= drop-in for a healthy unit (plan `ok`), and `run` applied it, restarted
    the unit and rolled back (exit 3). Now facts read the home (`getent passwd`): nothing to
    do, and nothing is touched."""
    h = system_user_unit
    d = "/etc/systemd/system/sglang-k26.service.d"
    setup = (
        "systemctl stop sglang-k26 && useradd --system --home-dir /var/lib/sglang "
        "--create-home --shell /usr/sbin/nologin sglang && "
        f"printf '[Service]\\nEnvironment=CUDA_HOME={CU13}\\nUser=sglang\\nProtectHome=read-only\\n'"
        f" > {d}/90-local.conf && systemctl daemon-reload && systemctl restart sglang-k26; "
        "for i in $(seq 120); do journalctl -u sglang-k26 --no-pager | grep -q 'fired up' && "
        "break; sleep 1; done; journalctl -u sglang-k26 --no-pager"
    )
    rc, journal = h.ssh(setup, timeout=180)
    assert "The server is fired up and ready to roll!" in journal, journal[-1500:]
    assert h.ssh("ls /var/lib/sglang/.cache")[1].split() == ["flashinfer", "tvm-ffi"]
    before = h.ssh(f"ls -R {d}; systemctl show -p Environment -p MainPID sglang-k26")
    r = h.remedy("plan", "--host", h.name, "--service", "sglang-k26.service",
                 "--out", str(tmp_path / "p.json"), timeout=600)  # fmt: skip
    plan = json.loads((tmp_path / "p.json").read_text())
    steps = [s["action"] for s in plan["steps"]]
    print(f"(m) plan: exit {r.returncode}, {plan['status']}, {steps}")
    svc = plan["facts"]["services"][0]
    assert svc["user_home"] == "/var/lib/sglang" and svc["sandboxing"]["User"] == "sglang"
    assert plan["status"] == "nothing-to-do" and steps == [], steps
    r = h.remedy("run", h.name, "--plan", str(tmp_path / "p.json"), "--yes", "--json",
                 timeout=1200)  # fmt: skip
    rep = report_of(r)
    print(f"(m) run: exit {r.returncode}, {rep['outcome']}: {rep['message'][:300]}")
    assert rep["outcome"] == "nothing-to-do", rep["message"]
    assert h.ssh(f"ls -R {d}; systemctl show -p Environment -p MainPID sglang-k26") == before


@pytest.fixture
def etc_profile_home():
    yield from host_for_test("cuda-home-unset", "tcep")


STALE = "/opt/sglang-venv-old/lib/python3.11/site-packages/nvidia/cu13"


def test_n_an_export_appended_to_etc_profile_is_named_not_overwritten(etc_profile_home, tmp_path):
    """`echo 'export CUDA_HOME=<deleted venv>' >> /etc/profile`: Debian's /etc/profile sources
    /etc/profile.d/*.sh in a loop above that line, so every login shell gets the stale value
    after remedy's zz-remedy-*.sh. The user's build in a login shell (`bash -l`) fails. Before
    this change the facts read /etc/profile whole, before profile.d: plan `ok`, `run` said
    `fixed` (its re-run in the computed login environment passed) and the login shell's build
    still failed. Now the tail is read last and named: `impossible`, nothing applied."""
    h = etc_profile_home
    assert h.ssh(f"echo 'export CUDA_HOME={STALE}' >> /etc/profile")[0] == 0
    assert h.ssh("cat > /tmp/fi_build.py", input=FI_BUILD.read_text())[0] == 0
    login_build = (
        "bash -lc 'cd /tmp && FLASHINFER_CUDA_ARCH_LIST=12.0 /opt/sglang-venv/bin/python - act "
        "< fi_build.py' 2>&1"
    )
    rc, out = h.ssh(login_build, timeout=600)
    assert rc != 0 and STALE in out, out[-1500:]
    before = h.ssh("cat /etc/environment /etc/profile; ls /etc/profile.d")[1]
    r, plan = plan_from_log(h, tmp_path, "fi.log", out, "flashinfer-jit")
    print(f"(n) plan: exit {r.returncode}, {plan['status']}, {plan['unresolved'][:1]}")
    assert plan["facts"]["shell_env"]["CUDA_HOME"] == STALE
    where = "/etc/profile (after its /etc/profile.d loop)"
    assert plan["facts"]["shell_env_from"] == {"CUDA_HOME": where}
    assert r.returncode == 3 and plan["status"] == "impossible" and plan["steps"] == []
    assert any(f"CUDA_HOME is set by {where}" in u for u in plan["unresolved"])
    r, rep = run_plan(h, tmp_path)
    print(f"(n) run: exit {r.returncode}, {rep['outcome']}: {rep['message'][:300]}")
    assert r.returncode == 3 and rep["outcome"] == "no-complete-plan", rep["message"]
    assert h.ssh("cat /etc/environment /etc/profile; ls /etc/profile.d")[1] == before
    # the truth main's `fixed` hid: the login shell's build fails until /etc/profile changes
    assert h.ssh(login_build, timeout=600)[0] != 0


@pytest.fixture
def later_envfile_unit():
    yield from host_for_test("service-dropin-later-cuda-home", "tcle")


def test_o_an_admins_later_drop_in_with_its_own_environment_file(later_envfile_unit, tmp_path):
    """systemd tier, the unit of test_l with the admin's 90-local.conf naming an
    EnvironmentFile= of its own (/etc/sglang/local.env: CUDA_HOME=<12.8>) instead of an
    Environment= line. systemd reads EnvironmentFiles in the order they are listed, the
    unit's then its drop-ins' in name order (systemd.exec(5), systemd.unit(5)): remedy's
    50-remedy-cuda-home.env came before the admin's file, which won. Before this change: plan
    `ok` (envfile), `run` applied it, restarted the unit, its re-check failed: rolled back.
    Now remedy's drop-in is named to be read after every drop-in of the unit
    (zz-remedy-cuda-home.conf): `fixed`; the admin's files are untouched; rollback restores."""
    h = later_envfile_unit
    d = "/etc/systemd/system/sglang-k26.service.d"
    setup = (
        "mkdir -p /etc/sglang && printf 'CUDA_HOME=/usr/local/cuda-12.8\\n' > "
        f"/etc/sglang/local.env && printf '[Service]\\nEnvironmentFile=/etc/sglang/local.env\\n'"
        f" > {d}/90-local.conf && systemctl daemon-reload && systemctl restart sglang-k26; "
        "sleep 1; for i in $(seq 60); do [ $(systemctl is-active sglang-k26) = failed ] && "
        "break; sleep 0.5; done; journalctl -u sglang-k26 --no-pager"
    )
    rc, journal = h.ssh(setup, timeout=120)
    assert "SM 12.x requires CUDA >= 12.9" in journal, journal[-1500:]
    ls = f"ls -R {d}; cat {d}/90-local.conf /etc/sglang/local.env; systemctl show -p Environment sglang-k26"
    before = h.ssh(ls)
    log = tmp_path / "journal.log"
    log.write_text(journal)
    r = h.remedy("plan", "--host", h.name, "--service", "sglang-k26.service", "--log",
                 str(log), "--out", str(tmp_path / "p.json"), timeout=600)  # fmt: skip
    plan = json.loads((tmp_path / "p.json").read_text())
    steps = [(s["action"], s["operation"].get("envfile")) for s in plan["steps"]]
    print(f"(o) plan: exit {r.returncode}, {plan['status']}, {steps}, {plan['unresolved'][:1]}")
    svc = plan["facts"]["services"][0]
    assert svc["environment_files_env"]["CUDA_HOME"] == "/usr/local/cuda-12.8"
    assert r.returncode == 0 and plan["status"] == "ok", plan["unresolved"]
    r = h.remedy("run", h.name, "--plan", str(tmp_path / "p.json"), "--yes", "--json",
                 timeout=1200)  # fmt: skip
    rep = report_of(r)
    print(f"(o) run: exit {r.returncode}, {rep['outcome']}: {rep['message'][:300]}")
    assert r.returncode == 0 and rep["outcome"] == "fixed", rep["message"]
    pid = h.ssh("systemctl show -p MainPID --value sglang-k26.service")[1].strip()
    env = h.ssh(f"tr '\\0' '\\n' < /proc/{pid}/environ")[1]
    assert f"CUDA_HOME={CU13}" in env.splitlines(), env
    shown = h.ssh("systemctl show -p DropInPaths --value sglang-k26.service")[1].split()
    assert shown[-1] == f"{d}/zz-remedy-cuda-home.conf", shown
    assert "ready to roll" in h.ssh("journalctl -u sglang-k26.service --no-pager")[1]
    r = h.remedy("rollback", h.name, "--yes", "--json", timeout=600)
    assert r.returncode == 0 and report_of(r)["outcome"] == "rolled-back", r.stderr[-1500:]
    assert h.ssh(ls) == before


@pytest.fixture
def login_shell_unit():
    yield from host_for_test("service-dropin-later-cuda-home", "tcls")


def test_p_a_units_login_shell_reads_the_profile_after_its_drop_ins(login_shell_unit, tmp_path):
    """systemd tier: the unit activates its venv the way users write it,
    `ExecStart=/bin/bash -lc "source /opt/sglang-venv/bin/activate && exec python ..."`, and
    the CUDA 12.8 install left `export CUDA_HOME=/usr/local/cuda-12.8` in
    /etc/profile.d/cuda.sh. A login shell reads /etc/profile and /etc/profile.d after systemd
    has set the unit's environment (bash(1) INVOCATION): the server fails at FlashInfer's "SM
    12.x requires CUDA >= 12.9". Before this change remedy read only `systemctl show`: its
    findings said CUDA_HOME was unset, the plan (exit 3, the log's lines unexplained) held a
    drop-in Environment=CUDA_HOME=<cu13>, and `run` applied it, restarted the unit, which failed
    again: rolled back. Now the facts read what the login shell adds: the log is explained,
    the plan is `impossible` and names /etc/profile.d/cuda.sh, nothing is applied."""
    h = login_shell_unit
    d = "/etc/systemd/system/sglang-k26.service.d"
    unit = "/etc/systemd/system/sglang-k26.service"
    setup = (
        f"rm {d}/90-local.conf && printf 'export CUDA_HOME=/usr/local/cuda-12.8\\n"
        "export PATH=$CUDA_HOME/bin:$PATH\\n' > /etc/profile.d/cuda.sh && sed -i "
        "'s#^ExecStart=/opt/sglang-venv/bin/python \\(.*\\)#ExecStart=/bin/bash -lc "
        f'"source /opt/sglang-venv/bin/activate \\&\\& exec python \\1"#\' {unit} && '
        "systemctl daemon-reload && systemctl restart sglang-k26; sleep 1; for i in $(seq 60);"
        " do [ $(systemctl is-active sglang-k26) = failed ] && break; sleep 0.5; done; "
        "journalctl -u sglang-k26 --no-pager"
    )
    rc, journal = h.ssh(setup, timeout=120)
    assert "SM 12.x requires CUDA >= 12.9" in journal, journal[-1500:]
    assert "ExecStart=/bin/bash -lc" in h.ssh(f"cat {unit}")[1]
    ls = f"ls -R /etc/systemd/system; cat /etc/profile.d/cuda.sh; systemctl show -p MainPID {unit}"
    before = h.ssh(ls)
    log = tmp_path / "journal.log"
    log.write_text(journal)
    r = h.remedy("plan", "--host", h.name, "--service", "sglang-k26.service", "--log",
                 str(log), "--out", str(tmp_path / "p.json"), timeout=600)  # fmt: skip
    plan = json.loads((tmp_path / "p.json").read_text())
    steps = [s["action"] for s in plan["steps"]]
    print(f"(p) plan: exit {r.returncode}, {plan['status']}, {steps}, {plan['unresolved'][:1]}")
    svc = plan["facts"]["services"][0]
    assert svc["exec_shell_env"] == {"CUDA_HOME": "/usr/local/cuda-12.8"}
    assert svc["exec_shell_from"] == {"CUDA_HOME": "/etc/profile.d/cuda.sh"}
    # (main: findings for an unset CUDA_HOME, the log unexplained, a drop-in step: exit 3)
    assert plan["unexplained"] == [], plan["unexplained"]
    assert r.returncode == 3 and plan["status"] == "impossible" and steps == []
    assert any("CUDA_HOME is set by /etc/profile.d/cuda.sh" in u for u in plan["unresolved"])
    r = h.remedy("run", h.name, "--plan", str(tmp_path / "p.json"), "--yes", "--json",
                 timeout=1200)  # fmt: skip
    rep = report_of(r)
    print(f"(p) run: exit {r.returncode}, {rep['outcome']}: {rep['message'][:300]}")
    # (main: the drop-in applied, the unit restarted and failed again: rolled-back)
    assert r.returncode == 3 and rep["outcome"] == "no-complete-plan", rep["message"]
    assert h.ssh(ls) == before


@pytest.fixture
def activate_unit():
    yield from host_for_test("service-dropin-later-cuda-home", "tcac")


def test_q_an_export_appended_to_the_venvs_activate_script(activate_unit, tmp_path):
    """systemd tier: `ExecStart=/bin/bash -c "source /opt/sglang-venv/bin/activate && exec
    python ..."` (no login shell) and the venv's bin/activate ends in the user's own
    `export CUDA_HOME=/usr/local/cuda-12.8` (the usual "put it in your venv's activate"
    advice, kept from the CUDA 12.8 install). `source` runs it after systemd has set the
    unit's environment: remedy's drop-in loses. Before this change: the findings said
    CUDA_HOME was unset, the plan (exit 3) held a drop-in, `run` applied it, restarted the
    unit, which failed again: rolled back. Now the facts read the sourced script as data:
    the log is explained, the plan is `impossible` and names bin/activate, nothing applied."""
    h = activate_unit
    d = "/etc/systemd/system/sglang-k26.service.d"
    unit = "/etc/systemd/system/sglang-k26.service"
    act = "/opt/sglang-venv/bin/activate"
    setup = (
        f"rm {d}/90-local.conf && echo 'export CUDA_HOME=/usr/local/cuda-12.8' >> {act} && "
        "sed -i 's#^ExecStart=/opt/sglang-venv/bin/python \\(.*\\)#ExecStart=/bin/bash -c "
        f'"source {act} \\&\\& exec python \\1"#\' {unit} && '
        "systemctl daemon-reload && systemctl restart sglang-k26; sleep 1; for i in $(seq 60);"
        " do [ $(systemctl is-active sglang-k26) = failed ] && break; sleep 0.5; done; "
        "journalctl -u sglang-k26 --no-pager"
    )
    rc, journal = h.ssh(setup, timeout=120)
    assert "SM 12.x requires CUDA >= 12.9" in journal, journal[-1500:]
    assert f'ExecStart=/bin/bash -c "source {act}' in h.ssh(f"cat {unit}")[1]
    ls = f"ls -R /etc/systemd/system; md5sum {act}; systemctl show -p MainPID {unit}"
    before = h.ssh(ls)
    log = tmp_path / "journal.log"
    log.write_text(journal)
    r = h.remedy("plan", "--host", h.name, "--service", "sglang-k26.service", "--log",
                 str(log), "--out", str(tmp_path / "p.json"), timeout=600)  # fmt: skip
    plan = json.loads((tmp_path / "p.json").read_text())
    steps = [s["action"] for s in plan["steps"]]
    print(f"(q) plan: exit {r.returncode}, {plan['status']}, {steps}, {plan['unresolved'][:1]}")
    svc = plan["facts"]["services"][0]
    assert svc.get("exec_shell_env") == {"CUDA_HOME": "/usr/local/cuda-12.8"}, svc
    assert svc["exec_shell_from"] == {"CUDA_HOME": act}
    # (main: findings for an unset CUDA_HOME, the log unexplained, a drop-in step: exit 3)
    assert plan["unexplained"] == [], plan["unexplained"]
    assert r.returncode == 3 and plan["status"] == "impossible" and steps == []
    assert any(f"CUDA_HOME is set by {act}" in u for u in plan["unresolved"])
    r = h.remedy("run", h.name, "--plan", str(tmp_path / "p.json"), "--yes", "--json",
                 timeout=1200)  # fmt: skip
    rep = report_of(r)
    print(f"(q) run: exit {r.returncode}, {rep['outcome']}: {rep['message'][:300]}")
    # (main: the drop-in applied, the unit restarted and failed again: rolled-back)
    assert r.returncode == 3 and rep["outcome"] == "no-complete-plan", rep["message"]
    assert h.ssh(ls) == before


# The shape of Fedora's and RHEL's /etc/profile (the `setup` package,
# https://pagure.io/setup/blob/master/f/profile): profile.d is sourced in a loop over
# `/etc/profile.d/*.sh /etc/profile.d/sh.local`, not in Debian's `if [ -d ]` block
RHEL_PROFILE = """\
# /etc/profile (the loop and what follows it as Fedora/RHEL write them)
for i in /etc/profile.d/*.sh /etc/profile.d/sh.local ; do
    if [ -r "$i" ]; then
        if [ "${-#*i}" != "$-" ]; then
            . "$i"
        else
            . "$i" >/dev/null
        fi
    fi
done

unset i

if [ -n "${BASH_VERSION-}" ] ; then
        if [ -f /etc/bashrc ] ; then
                . /etc/bashrc
       fi
fi
"""


@pytest.fixture
def rhel_profile_home():
    yield from host_for_test("cuda-home-unset", "tcrp")


def test_r_an_export_appended_to_a_rhel_shaped_etc_profile(rhel_profile_home, tmp_path):
    """test_n on a host whose /etc/profile has Fedora's/RHEL's shape: its profile.d loop is
    `for i in /etc/profile.d/*.sh /etc/profile.d/sh.local ; do`, and the admin appended
    `export CUDA_HOME=<deleted venv>` below it, read after remedy's zz-remedy-*.sh in every
    login shell. Before this change the facts found Debian's loop only and read this
    /etc/profile whole, before profile.d: plan `ok`, `run` said `fixed` (its re-run in the
    computed login environment passed) while the `bash -l` build still failed. Now the loop
    is found in any of the distributions' shapes: `impossible`, named, nothing applied."""
    h = rhel_profile_home
    assert h.ssh("cat > /etc/profile", input=RHEL_PROFILE + f"export CUDA_HOME={STALE}\n")[0] == 0
    assert h.ssh("cat > /tmp/fi_build.py", input=FI_BUILD.read_text())[0] == 0
    login_build = (
        "bash -lc 'cd /tmp && FLASHINFER_CUDA_ARCH_LIST=12.0 /opt/sglang-venv/bin/python - act "
        "< fi_build.py' 2>&1"
    )
    rc, out = h.ssh(login_build, timeout=600)
    assert rc != 0 and STALE in out, out[-1500:]
    before = h.ssh("cat /etc/environment /etc/profile; ls /etc/profile.d")[1]
    r, plan = plan_from_log(h, tmp_path, "fi.log", out, "flashinfer-jit")
    steps = [s["action"] for s in plan["steps"]]
    print(f"(r) plan: exit {r.returncode}, {plan['status']}, {steps}, {plan['unresolved'][:1]}")
    where = "/etc/profile (after its /etc/profile.d loop)"
    assert plan["facts"]["shell_env_from"] == {"CUDA_HOME": where}
    # (main: `ok`, one shell-env-cuda-home step)
    assert r.returncode == 3 and plan["status"] == "impossible" and plan["steps"] == []
    assert any(f"CUDA_HOME is set by {where}" in u for u in plan["unresolved"])
    r, rep = run_plan(h, tmp_path)
    print(f"(r) run: exit {r.returncode}, {rep['outcome']}: {rep['message'][:300]}")
    # (main: `fixed`, exit 0, and the login shell's build below still failing)
    assert r.returncode == 3 and rep["outcome"] == "no-complete-plan", rep["message"]
    assert h.ssh("cat /etc/environment /etc/profile; ls /etc/profile.d")[1] == before
    assert h.ssh(login_build, timeout=600)[0] != 0


@pytest.fixture
def after_remedy_dropin_unit():
    yield from host_for_test("service-dropin-later-cuda-home", "tcaz")


def test_s_an_admins_drop_in_sorting_after_remedys_is_named(after_remedy_dropin_unit, tmp_path):
    """systemd tier, the unit of test_o with the admin's EnvironmentFile= named in
    `zzz-local.conf` instead of 90-local.conf: "zzz-" sorts after remedy's
    zz-remedy-cuda-home.conf, so the admin's file is listed (and read) after remedy's own and
    wins (systemd.unit(5), systemd.exec(5)). Before this change: plan `ok` (zz-remedy, envfile),
    `run` applied it, restarted the unit, the re-check failed: rolled back. Now the facts read
    the unit's drop-ins and compute who wins in systemd's order (Service.dropin_overrides):
    `impossible`, the reason names zzz-local.conf and its file, nothing applied."""
    h = after_remedy_dropin_unit
    d = "/etc/systemd/system/sglang-k26.service.d"
    setup = (
        "mkdir -p /etc/sglang && printf 'CUDA_HOME=/usr/local/cuda-12.8\\n' > "
        f"/etc/sglang/local.env && printf '[Service]\\nEnvironmentFile=/etc/sglang/local.env\\n'"
        f" > {d}/zzz-local.conf && rm {d}/90-local.conf && systemctl daemon-reload && "
        "systemctl restart sglang-k26; sleep 1; for i in $(seq 60); do "
        "[ $(systemctl is-active sglang-k26) = failed ] && break; sleep 0.5; done; "
        "journalctl -u sglang-k26 --no-pager"
    )
    rc, journal = h.ssh(setup, timeout=120)
    assert "SM 12.x requires CUDA >= 12.9" in journal, journal[-1500:]
    ls = f"ls -R {d}; cat {d}/*.conf /etc/sglang/local.env; systemctl show -p Environment -p MainPID sglang-k26"
    before = h.ssh(ls)
    log = tmp_path / "journal.log"
    log.write_text(journal)
    r = h.remedy("plan", "--host", h.name, "--service", "sglang-k26.service", "--log",
                 str(log), "--out", str(tmp_path / "p.json"), timeout=600)  # fmt: skip
    plan = json.loads((tmp_path / "p.json").read_text())
    steps = [(s["action"], s["operation"].get("path")) for s in plan["steps"]]
    print(f"(s) plan: exit {r.returncode}, {plan['status']}, {steps}, {plan['unresolved'][:1]}")
    svc = plan["facts"]["services"][0]
    assert svc["dropin_overrides"] == {
        "CUDA_HOME": f"{d}/zzz-local.conf (EnvironmentFile=/etc/sglang/local.env)"
    }, svc
    # (main: `ok`, one zz-remedy-cuda-home.conf step; `run` then rolled back, exit 3)
    assert r.returncode == 3 and plan["status"] == "impossible" and steps == []
    assert any(f"{d}/zzz-local.conf" in u for u in plan["unresolved"]), plan["unresolved"]
    r = h.remedy("run", h.name, "--plan", str(tmp_path / "p.json"), "--yes", "--json",
                 timeout=1200)  # fmt: skip
    rep = report_of(r)
    print(f"(s) run: exit {r.returncode}, {rep['outcome']}: {rep['message'][:300]}")
    assert r.returncode == 3 and rep["outcome"] == "no-complete-plan", rep["message"]
    assert h.ssh(ls) == before


@pytest.fixture
def tilde_override_unit():
    yield from host_for_test("service-dropin-later-cuda-home", "tcat")


def test_s_a_tilde_override_environment_line_loses_to_remedys_file(tilde_override_unit, tmp_path):
    """systemd tier, the unit of test_l with the admin's Environment=CUDA_HOME=<12.8> in
    `~override.conf` ('~' sorts after every letter: after zz-remedy-cuda-home.conf). An
    Environment= line, a later drop-in's too, loses to every EnvironmentFile= (systemd.exec(5)):
    remedy's own file wins. remedy was already right here (main: `fixed` too); the test keeps
    it so: `fixed` only with the new value in the running process, and the facts record no
    override for CUDA_HOME."""
    h = tilde_override_unit
    d = "/etc/systemd/system/sglang-k26.service.d"
    setup = (
        f"mv {d}/90-local.conf '{d}/~override.conf' && systemctl daemon-reload && "
        "systemctl restart sglang-k26; sleep 1; for i in $(seq 60); do "
        "[ $(systemctl is-active sglang-k26) = failed ] && break; sleep 0.5; done; "
        "journalctl -u sglang-k26 --no-pager"
    )
    rc, journal = h.ssh(setup, timeout=120)
    assert "SM 12.x requires CUDA >= 12.9" in journal, journal[-1500:]
    log = tmp_path / "journal.log"
    log.write_text(journal)
    r = h.remedy("plan", "--host", h.name, "--service", "sglang-k26.service", "--log",
                 str(log), "--out", str(tmp_path / "p.json"), timeout=600)  # fmt: skip
    plan = json.loads((tmp_path / "p.json").read_text())
    steps = [(s["action"], s["operation"].get("envfile")) for s in plan["steps"]]
    print(f"(s2) plan: exit {r.returncode}, {plan['status']}, {steps}, {plan['unresolved'][:1]}")
    assert "CUDA_HOME" not in plan["facts"]["services"][0].get("dropin_overrides", {})
    assert r.returncode == 0 and plan["status"] == "ok", plan["unresolved"]
    assert steps == [("service-env-cuda-home", True)]
    r = h.remedy("run", h.name, "--plan", str(tmp_path / "p.json"), "--yes", "--json",
                 timeout=1200)  # fmt: skip
    rep = report_of(r)
    print(f"(s2) run: exit {r.returncode}, {rep['outcome']}: {rep['message'][:300]}")
    assert r.returncode == 0 and rep["outcome"] == "fixed", rep["message"]
    pid = h.ssh("systemctl show -p MainPID --value sglang-k26.service")[1].strip()
    env = h.ssh(f"tr '\\0' '\\n' < /proc/{pid}/environ")[1]
    assert f"CUDA_HOME={CU13}" in env.splitlines(), env
    assert "Environment=CUDA_HOME=/usr/local/cuda-12.8" in h.ssh(f"cat '{d}/~override.conf'")[1]


@pytest.fixture
def exec_prefix_unit(request):
    yield from host_for_test("service-dropin-later-cuda-home", f"tcx{request.param}")


# ExecStart= prefixes (systemd.service(5) "Command lines"): `@` makes the second word argv[0]
# (the first stays the executable); `-` ignores the exit status, `:` turns off variable
# expansion, `+` and `!` change privileges: none of them is part of the path
EXEC_PREFIXES = {
    "at": "@/opt/sglang-venv/bin/python python3",
    "flags": "-:+/opt/sglang-venv/bin/python",
}


@pytest.mark.parametrize("exec_prefix_unit", sorted(EXEC_PREFIXES), indirect=True)
def test_t_exec_start_prefixes_are_read_as_systemd_reads_them(exec_prefix_unit, tmp_path):
    """systemd tier, the unit of test_l with its ExecStart= written with prefixes:
    `@/opt/sglang-venv/bin/python python3 SCRIPT ...` (the venv's python runs with argv[0]
    `python3`, which it finds on the unit's PATH, the venv's bin/ first) or
    `-:+/opt/sglang-venv/bin/python SCRIPT ...`. Before this change the facts read argv (what
    `systemctl show` prints as argv[]): for `@` it starts at `python3`, and the unit's venv was
    not found (Service.python None); the plan and run still came out right here (`ok`,
    `fixed`: the planner fell back to the venv on the unit's PATH), so only the last assert
    fails on main. Now the program is `path=`, as systemd runs it (`@PATH ARGV...` kept in
    Service.exec_start): the venv is the server's, test_l's plan, `fixed` with the new
    CUDA_HOME in the running process. The `-:+` form was already right (kept: it can fail)."""
    h = exec_prefix_unit
    name = next(k for k in EXEC_PREFIXES if h.name.startswith(f"tcx{k}"))
    unit = "/etc/systemd/system/sglang-k26.service"
    new = EXEC_PREFIXES[name]
    setup = (
        f"sed -i 's#^ExecStart=/opt/sglang-venv/bin/python #ExecStart={new} #' {unit} && "
        "systemctl daemon-reload && systemctl restart sglang-k26; sleep 1; for i in $(seq 60);"
        " do [ $(systemctl is-active sglang-k26) = failed ] && break; sleep 0.5; done; "
        "journalctl -u sglang-k26 --no-pager"
    )
    rc, journal = h.ssh(setup, timeout=120)
    assert "SM 12.x requires CUDA >= 12.9" in journal, journal[-1500:]
    assert f"ExecStart={new} " in h.ssh(f"cat {unit}")[1]
    print(f"(t-{name}) show:", h.ssh("systemctl show -p ExecStart sglang-k26")[1])
    log = tmp_path / "journal.log"
    log.write_text(journal)
    r = h.remedy("plan", "--host", h.name, "--service", "sglang-k26.service", "--log",
                 str(log), "--out", str(tmp_path / "p.json"), timeout=600)  # fmt: skip
    plan = json.loads((tmp_path / "p.json").read_text())
    steps = [(s["action"], s["operation"].get("envfile")) for s in plan["steps"]]
    print(f"(t-{name}) plan: exit {r.returncode}, {plan['status']}, {steps}, "
          f"{plan['unresolved'][:1]}, {plan['unexplained'][:1]}")  # fmt: skip
    svc = plan["facts"]["services"][0]
    print(f"(t-{name}) service:", svc.get("python"), svc.get("exec_start"))
    assert r.returncode == 0 and plan["status"] == "ok", plan["unresolved"]
    assert steps == [("service-env-cuda-home", True)]
    r = h.remedy("run", h.name, "--plan", str(tmp_path / "p.json"), "--yes", "--json",
                 timeout=1200)  # fmt: skip
    rep = report_of(r)
    print(f"(t-{name}) run: exit {r.returncode}, {rep['outcome']}: {rep['message'][:300]}")
    assert r.returncode == 0 and rep["outcome"] == "fixed", rep["message"]
    pid = h.ssh("systemctl show -p MainPID --value sglang-k26.service")[1].strip()
    env = h.ssh(f"tr '\\0' '\\n' < /proc/{pid}/environ")[1]
    assert f"CUDA_HOME={CU13}" in env.splitlines(), env
    # the venv was the server's in the facts too (main, `@`: python None)
    assert svc["python"] == "/opt/sglang-venv", svc


@pytest.fixture
def argv0_login_unit():
    yield from host_for_test("service-dropin-later-cuda-home", "tcal")


def test_t_an_at_prefixed_shell_with_a_dash_argv0_is_a_login_shell(argv0_login_unit, tmp_path):
    """systemd tier, test_p's unit with its shell started the `exec -a -bash` way:
    `ExecStart=@/bin/bash -bash -c "source /opt/sglang-venv/bin/activate && exec python ..."`.
    A shell whose argv[0] starts with `-` is a login shell (bash(1) INVOCATION): it reads
    /etc/profile.d/cuda.sh (CUDA_HOME=<12.8>) after systemd's environment. Before this change
    the facts held `-bash -c ...` (show's argv[]) as the command, saw no shell and no login
    profile: plan exit 3, `unexplained`, with a drop-in step (service-env-cuda-home) that the
    login shell's cuda.sh overrides (test_p's main). Now `@` is read as systemd reads it:
    `impossible`, cuda.sh named, nothing applied."""
    h = argv0_login_unit
    d = "/etc/systemd/system/sglang-k26.service.d"
    unit = "/etc/systemd/system/sglang-k26.service"
    setup = (
        f"rm {d}/90-local.conf && printf 'export CUDA_HOME=/usr/local/cuda-12.8\\n"
        "export PATH=$CUDA_HOME/bin:$PATH\\n' > /etc/profile.d/cuda.sh && sed -i "
        "'s#^ExecStart=/opt/sglang-venv/bin/python \\(.*\\)#ExecStart=@/bin/bash -bash -c "
        f'"source /opt/sglang-venv/bin/activate \\&\\& exec python \\1"#\' {unit} && '
        "systemctl daemon-reload && systemctl restart sglang-k26; sleep 1; for i in $(seq 60);"
        " do [ $(systemctl is-active sglang-k26) = failed ] && break; sleep 0.5; done; "
        "journalctl -u sglang-k26 --no-pager"
    )
    rc, journal = h.ssh(setup, timeout=120)
    assert "SM 12.x requires CUDA >= 12.9" in journal, journal[-1500:]
    assert "ExecStart=@/bin/bash -bash -c" in h.ssh(f"cat {unit}")[1]
    ls = f"ls -R /etc/systemd/system; cat /etc/profile.d/cuda.sh; systemctl show -p MainPID {unit}"
    before = h.ssh(ls)
    log = tmp_path / "journal.log"
    log.write_text(journal)
    r = h.remedy("plan", "--host", h.name, "--service", "sglang-k26.service", "--log",
                 str(log), "--out", str(tmp_path / "p.json"), timeout=600)  # fmt: skip
    plan = json.loads((tmp_path / "p.json").read_text())
    steps = [s["action"] for s in plan["steps"]]
    print(f"(t3) plan: exit {r.returncode}, {plan['status']}, {steps}, {plan['unresolved'][:1]}")
    svc = plan["facts"]["services"][0]
    assert svc["exec_start"].startswith("@/bin/bash -bash -c "), svc["exec_start"]
    assert svc.get("exec_shell_from") == {"CUDA_HOME": "/etc/profile.d/cuda.sh"}, svc
    assert plan["unexplained"] == [], plan["unexplained"]
    assert r.returncode == 3 and plan["status"] == "impossible" and steps == []
    assert any("CUDA_HOME is set by /etc/profile.d/cuda.sh" in u for u in plan["unresolved"])
    r = h.remedy("run", h.name, "--plan", str(tmp_path / "p.json"), "--yes", "--json",
                 timeout=1200)  # fmt: skip
    rep = report_of(r)
    print(f"(t3) run: exit {r.returncode}, {rep['outcome']}: {rep['message'][:300]}")
    assert r.returncode == 3 and rep["outcome"] == "no-complete-plan", rep["message"]
    assert h.ssh(ls) == before


@pytest.fixture
def user_profile_unit():
    yield from host_for_test("service-dropin-later-cuda-home", "tcup")


def test_u_a_user_units_login_shell_reads_that_users_profile(user_profile_unit, tmp_path):
    """systemd tier: test_p's unit run as a system user (`useradd --system --home-dir
    /var/lib/sglang --shell /bin/bash sglang`, User=sglang), its ExecStart a login shell
    (`/bin/bash -lc "source /opt/sglang-venv/bin/activate && exec python ..."`), and the CUDA
    12.8 install's `export CUDA_HOME=/usr/local/cuda-12.8` in that user's ~/.profile. bash
    reads it after /etc/profile, after systemd's environment (bash(1) INVOCATION): remedy's
    drop-in loses. Before this change the facts read the system profile files only: plan
    exit 3, `unexplained`, with a drop-in step (service-env-cuda-home). Now the unit user's first login
    file (~/.bash_profile, ~/.bash_login, ~/.profile) is read as data: `impossible`, the file
    named, nothing applied."""
    h = user_profile_unit
    d = "/etc/systemd/system/sglang-k26.service.d"
    unit = "/etc/systemd/system/sglang-k26.service"
    prof = "/var/lib/sglang/.profile"
    setup = (
        "systemctl stop sglang-k26 && useradd --system --home-dir /var/lib/sglang "
        "--create-home --shell /bin/bash sglang && "
        f"echo 'export CUDA_HOME=/usr/local/cuda-12.8' > {prof} && chown sglang: {prof} && "
        f"printf '[Service]\\nUser=sglang\\n' > {d}/90-local.conf && sed -i "
        "'s#^ExecStart=/opt/sglang-venv/bin/python \\(.*\\)#ExecStart=/bin/bash -lc "
        f'"source /opt/sglang-venv/bin/activate \\&\\& exec python \\1"#\' {unit} && '
        "systemctl daemon-reload && systemctl restart sglang-k26; sleep 1; for i in $(seq 60);"
        " do [ $(systemctl is-active sglang-k26) = failed ] && break; sleep 0.5; done; "
        "journalctl -u sglang-k26 --no-pager"
    )
    rc, journal = h.ssh(setup, timeout=180)
    assert "SM 12.x requires CUDA >= 12.9" in journal, journal[-1500:]
    ls = f"ls -R /etc/systemd/system; md5sum {prof}; systemctl show -p MainPID {unit}"
    before = h.ssh(ls)
    log = tmp_path / "journal.log"
    log.write_text(journal)
    r = h.remedy("plan", "--host", h.name, "--service", "sglang-k26.service", "--log",
                 str(log), "--out", str(tmp_path / "p.json"), timeout=600)  # fmt: skip
    plan = json.loads((tmp_path / "p.json").read_text())
    steps = [s["action"] for s in plan["steps"]]
    print(f"(u) plan: exit {r.returncode}, {plan['status']}, {steps}, {plan['unresolved'][:1]}")
    svc = plan["facts"]["services"][0]
    assert svc["user_home"] == "/var/lib/sglang", svc
    assert svc.get("exec_shell_from") == {"CUDA_HOME": prof}, svc
    assert r.returncode == 3 and plan["status"] == "impossible" and steps == []
    assert any(f"CUDA_HOME is set by {prof}" in u for u in plan["unresolved"])
    r = h.remedy("run", h.name, "--plan", str(tmp_path / "p.json"), "--yes", "--json",
                 timeout=1200)  # fmt: skip
    rep = report_of(r)
    print(f"(u) run: exit {r.returncode}, {rep['outcome']}: {rep['message'][:300]}")
    assert r.returncode == 3 and rep["outcome"] == "no-complete-plan", rep["message"]
    assert h.ssh(ls) == before


DEBIAN_PROFILE = (
    'if [ -n "$BASH_VERSION" ]; then\n    if [ -f "$HOME/.bashrc" ]; then\n'
    '\t. "$HOME/.bashrc"\n    fi\nfi\n'
)
DEBIAN_GUARD = "# If not running interactively, don't do anything\ncase $- in\n    *i*) ;;\n      *) return;;\nesac\n"


@pytest.fixture
def bashrc_profile_unit(request):
    yield from host_for_test("service-dropin-later-cuda-home", f"tcv{request.param[0]}")


@pytest.mark.parametrize("bashrc_profile_unit", ["above", "below"], indirect=True)
def test_v_a_user_units_login_shell_reads_the_bashrc_its_profile_sources(
    bashrc_profile_unit, request, tmp_path
):
    """systemd tier: test_u's unit (User=sglang, ExecStart `/bin/bash -lc "source VENV/bin/
    activate && exec python ..."`) with Debian's ~/.profile, which sources ~/.bashrc. `above`:
    `export CUDA_HOME=/usr/local/cuda-12.8` above the bashrc's interactive guard reaches the
    server (before: plan `unexplained` with a drop-in step the shell overrides; now
    `impossible`, ~/.bashrc named, nothing applied). `below`: the export of a deleted CUDA
    below the guard is never read by `bash -lc`; the admin's 90-local.conf sets the 12.8:
    remedy's drop-in wins, `fixed`, the running server has <cu13> (main: right too)."""
    h = bashrc_profile_unit
    where = request.node.callspec.params["bashrc_profile_unit"]
    home = "/var/lib/sglang"
    d = "/etc/systemd/system/sglang-k26.service.d"
    unit = "/etc/systemd/system/sglang-k26.service"
    if where == "above":
        bashrc = "export CUDA_HOME=/usr/local/cuda-12.8\n" + DEBIAN_GUARD + "alias ll='ls -l'\n"
        local = "[Service]\\nUser=sglang\\n"
    else:
        bashrc = DEBIAN_GUARD + "export CUDA_HOME=/opt/cuda-gone\n"
        local = "[Service]\\nUser=sglang\\nEnvironment=CUDA_HOME=/usr/local/cuda-12.8\\n"
    rc, out = h.ssh(
        "systemctl stop sglang-k26 && useradd --system --home-dir /var/lib/sglang "
        "--create-home --shell /bin/bash sglang"
    )
    assert rc == 0, out
    for name, text in ((".profile", DEBIAN_PROFILE), (".bashrc", bashrc)):
        assert h.ssh(f"cat > {home}/{name} && chown sglang: {home}/{name}", input=text)[0] == 0
    setup = (
        f"printf '{local}' > {d}/90-local.conf && sed -i "
        "'s#^ExecStart=/opt/sglang-venv/bin/python \\(.*\\)#ExecStart=/bin/bash -lc "
        f'"source /opt/sglang-venv/bin/activate \\&\\& exec python \\1"#\' {unit} && '
        "systemctl daemon-reload && systemctl restart sglang-k26; sleep 1; for i in $(seq 60);"
        " do [ $(systemctl is-active sglang-k26) = failed ] && break; sleep 0.5; done; "
        "journalctl -u sglang-k26 --no-pager"
    )
    rc, journal = h.ssh(setup, timeout=180)
    assert "SM 12.x requires CUDA >= 12.9" in journal, journal[-1500:]
    ls = f"ls -R /etc/systemd/system; md5sum {home}/.bashrc; systemctl show -p MainPID {unit}"
    before = h.ssh(ls)
    log = tmp_path / "journal.log"
    log.write_text(journal)
    r = h.remedy("plan", "--host", h.name, "--service", "sglang-k26.service", "--log",
                 str(log), "--out", str(tmp_path / "p.json"), timeout=600)  # fmt: skip
    plan = json.loads((tmp_path / "p.json").read_text())
    steps = [s["action"] for s in plan["steps"]]
    print(f"(v {where}) plan: exit {r.returncode}, {plan['status']}, {steps}, "
          f"{plan['unresolved'][:1]}")  # fmt: skip
    svc = plan["facts"]["services"][0]
    r = h.remedy("run", h.name, "--plan", str(tmp_path / "p.json"), "--yes", "--json",
                 timeout=1200)  # fmt: skip
    rep = report_of(r)
    print(f"(v {where}) run: exit {r.returncode}, {rep['outcome']}: {rep['message'][:300]}")
    if where == "above":
        assert svc.get("exec_shell_from") == {"CUDA_HOME": f"{home}/.bashrc"}, svc
        assert plan["status"] == "impossible" and steps == [], plan["unresolved"]
        assert any(f"CUDA_HOME is set by {home}/.bashrc" in u for u in plan["unresolved"])
        assert r.returncode == 3 and rep["outcome"] == "no-complete-plan", rep["message"]
        assert h.ssh(ls) == before
        return
    assert "CUDA_HOME" not in (svc.get("exec_shell_env") or {}), svc
    assert plan["status"] == "ok" and steps == ["service-env-cuda-home"], plan["unresolved"]
    assert r.returncode == 0 and rep["outcome"] == "fixed", rep["message"]
    pid = h.ssh("systemctl show -p MainPID --value sglang-k26.service")[1].strip()
    env = h.ssh(f"tr '\\0' '\\n' < /proc/{pid}/environ")[1]
    assert f"CUDA_HOME={CU13}" in env.splitlines(), env


SPECIFIER_FILES = {
    "E": ("%E/sglang/local.env", "/etc/sglang/local.env"),
    "h": ("%h/sglang.env", "/root/sglang.env"),
    "S": ("%S/sglang/local.env", "/var/lib/sglang/local.env"),
    "pct": ("/etc/sglang/100%%.env", "/etc/sglang/100%.env"),
}


@pytest.fixture
def specifier_unit(request):
    yield from host_for_test("service-dropin-later-cuda-home", f"tcw{request.param}")


@pytest.mark.parametrize("specifier_unit", sorted(SPECIFIER_FILES), indirect=True)
def test_w_specifiers_in_a_later_drop_ins_environment_file_are_expanded(
    specifier_unit, request, tmp_path
):
    """systemd tier: test_s with the admin's `zzz-local.conf` saying
    EnvironmentFile=<a path with %E, %h, %S or %%> (systemd.unit(5) "Specifiers": the system
    manager's %h is /root). systemd reads the expanded file after remedy's own; the plan must
    compute the value from that same file: `impossible`, zzz-local.conf and the expanded path
    named, nothing applied (the run: no-complete-plan). remedy was already right here."""
    h = specifier_unit
    spec, path = SPECIFIER_FILES[request.node.callspec.params["specifier_unit"]]
    d = "/etc/systemd/system/sglang-k26.service.d"
    setup = (
        f"mkdir -p \"$(dirname '{path}')\" && printf 'CUDA_HOME=/usr/local/cuda-12.8\\n' > "
        f"'{path}' && printf '[Service]\\nEnvironmentFile={spec.replace('%', '%%')}\\n'"
        f" > {d}/zzz-local.conf && rm {d}/90-local.conf && systemctl daemon-reload && "
        "systemctl restart sglang-k26; sleep 1; for i in $(seq 60); do "
        "[ $(systemctl is-active sglang-k26) = failed ] && break; sleep 0.5; done; "
        "journalctl -u sglang-k26 --no-pager"
    )
    rc, journal = h.ssh(setup, timeout=120)
    assert "SM 12.x requires CUDA >= 12.9" in journal, journal[-1500:]
    # systemd itself expanded it to `path` (the file the admin's value comes from)
    shown = h.ssh("systemctl show -p EnvironmentFiles sglang-k26")[1]
    assert f"EnvironmentFiles={path} " in shown, shown
    assert f"EnvironmentFile={spec}" in h.ssh(f"cat {d}/zzz-local.conf")[1]
    ls = f"ls -R {d}; md5sum '{path}'; systemctl show -p Environment -p MainPID sglang-k26"
    before = h.ssh(ls)
    log = tmp_path / "journal.log"
    log.write_text(journal)
    r = h.remedy("plan", "--host", h.name, "--service", "sglang-k26.service", "--log",
                 str(log), "--out", str(tmp_path / "p.json"), timeout=600)  # fmt: skip
    plan = json.loads((tmp_path / "p.json").read_text())
    steps = [s["action"] for s in plan["steps"]]
    print(f"(w {spec}) plan: exit {r.returncode}, {plan['status']}, {steps}")
    svc = plan["facts"]["services"][0]
    assert svc["dropin_overrides"] == {
        "CUDA_HOME": f"{d}/zzz-local.conf (EnvironmentFile={path})"
    }, svc
    assert r.returncode == 3 and plan["status"] == "impossible" and steps == []
    assert any(f"{d}/zzz-local.conf" in u for u in plan["unresolved"]), plan["unresolved"]
    r = h.remedy("run", h.name, "--plan", str(tmp_path / "p.json"), "--yes", "--json",
                 timeout=1200)  # fmt: skip
    rep = report_of(r)
    assert r.returncode == 3 and rep["outcome"] == "no-complete-plan", rep["message"]
    assert h.ssh(ls) == before
