"""The build environment of a non-interactive `ssh host cmd` session vs the login shell's
(remedy.model.envdiff, Facts.session_env), and what plan and run make of a difference.

A CUDA_HOME exported in ~/.bashrc below Debian's "not interactive, return" guard is in the
login environment remedy computes (an interactive login shell's) and not in `ssh host cmd`,
where users run build scripts: FlashInfer then finds no nvcc. Before this change the plan had
no step ("every rule holds", the log's line unexplained) and `run` said `nothing-to-do`
(exit 10) while the user's build still failed. The fixtures are real: the facts and the log of
the sandbox host sandbox/scenarios/cuda-home-bashrc-interactive (tests/test_toolchain_sandbox.py
runs the whole chain there).
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from types import SimpleNamespace

from remedy.executor.runner import Runner
from remedy.facts.envs import parse_login_env, session_env_of
from remedy.inputs import scan_logs
from remedy.knowledge.loader import load_knowledge
from remedy.model import Facts, Plan
from remedy.model.envdiff import describe, session_differences
from remedy.planner.plan import make_plan
from remedy.transport import LocalTransport

HERE = Path(__file__).parent / "fixtures" / "session"
CU13 = "/opt/sglang-venv/lib/python3.11/site-packages/nvidia/cu13"
T = "@@remedy-fact@@"


def facts(**update) -> Facts:
    f = Facts.model_validate(
        json.loads((HERE / "cuda-home-bashrc-interactive.facts.json").read_text())
    )
    return f.model_copy(update=update)


def symptoms():
    return scan_logs([str(HERE / "fi-no-nvcc-ssh-cmd.log")])[0]


BASHRC = """\
case $- in
    *i*) ;;
      *) return;;
esac
HISTSIZE=1000
export CUDA_HOME=/opt/venv/nvidia/cu13
export PATH=$CUDA_HOME/bin:$PATH
"""


def test_a_bashrc_export_below_the_guard_is_the_login_shells_only():
    session = "PATH=/usr/bin:/bin\0HOME=/root\0"
    out = (
        f"\n{T} shell /bin/bash\n\n{T} uid 0\n\n{T} env\n{session}\n{T} env.end\n"
        f"\n{T} profile /root/.bashrc\n{BASHRC}\n{T} profile.end\n"
    )
    login, _ = parse_login_env(out, T)
    sess = session_env_of(out, T)
    assert login["CUDA_HOME"] == "/opt/venv/nvidia/cu13" and sess is not None
    assert "CUDA_HOME" not in sess
    diff = session_differences(login, sess, ["/opt/venv/nvidia/cu13"])
    assert diff == {"CUDA_HOME": None, "PATH": "/usr/bin:/bin"}
    assert describe(diff, ["/opt/venv/nvidia/cu13"]) == (
        "CUDA_HOME unset, PATH without a toolkit's nvcc"
    )
    # the same environment twice: nothing differs; a non-build variable never counts
    assert session_differences(login, login, []) == {}
    assert session_differences({"HISTSIZE": "1"}, {}, []) == {}
    # a cut-off reply is no session environment
    assert session_env_of(f"\n{T} env\nPATH=/x", T) is None


def test_plan_for_the_session_the_log_came_from():
    kb = load_knowledge()
    plan = make_plan(kb, facts(), symptoms(), consumers=["flashinfer-jit"])
    steps = [(s.action, s.params) for s in plan.steps]
    assert plan.status == "ok" and plan.unexplained == [], plan.unexplained
    assert steps == [("shell-env-cuda-home", {"prefix": CU13})]
    step = plan.steps[0]
    assert step.operation.scope == "profile"  # /etc/environment + profile.d: both sessions
    assert any("Could not find nvcc" in a for a in step.addresses)
    assert "non-interactive `ssh host cmd`" in step.because[0]
    assert "CUDA_HOME unset" in step.because[0]
    # the plan keeps the host's own facts (a saved plan is checked against them)
    assert plan.facts.shell_env["CUDA_HOME"] == CU13
    assert plan.facts.session_env == facts().session_env
    # without the session's difference the log is unexplained and there is nothing to do
    alone = make_plan(kb, facts(session_env={}), symptoms(), consumers=["flashinfer-jit"])
    assert alone.steps == [] and alone.status == "unexplained" and alone.unexplained


class _Res(SimpleNamespace):
    pass


def _run_without_steps(build_ok: bool) -> tuple:
    """`run` of a plan with no step whose log names a failed build (the session difference
    left out, so the planner finds nothing): the build is re-run, nothing is applied."""
    kb = load_knowledge()
    f = facts(session_env={})
    plan = make_plan(kb, f, symptoms(), consumers=["flashinfer-jit"])
    assert plan.steps == [] and plan.failed_operation is not None
    calls: list[str] = []

    async def collect(_t):
        return f

    async def prober(probe, _t, _facts, params=None, consumer=None, timeout=None):
        calls.append(probe)
        return _Res(
            ok=build_ok,
            detail="built" if build_ok else "FlashInfer JIT build failed",
            symptoms=[]
            if build_ok
            else [
                SimpleNamespace(severity="fatal", text="no nvcc", signature="flashinfer-no-nvcc")
            ],
            skipped=None,
            transport_error=None,
        )

    r = Runner(LocalTransport("h"), collect=collect, prober=prober, knowledge=kb)
    report = asyncio.run(r.run(Plan.model_validate(plan.model_dump()), check_stale=False))
    return report, calls


def test_run_of_a_plan_without_steps_re_runs_the_failed_build():
    report, calls = _run_without_steps(build_ok=False)
    # still failing: no `nothing-to-do` (exit 10), no fix either
    assert report.outcome == "no-complete-plan" and report.exit_code == 3, report.message
    assert calls == ["flashinfer-jit-build"]
    assert "still fails" in report.message and "nothing was applied" in report.message
    assert report.verification[0]["failed_operation"] and report.verification[0]["ok"] is False

    report, calls = _run_without_steps(build_ok=True)
    assert report.outcome == "nothing-to-do" and report.exit_code == 10
    assert "passes now" in report.message and calls == ["flashinfer-jit-build"]


STALE = "/opt/sglang-venv-old/lib/python3.11/site-packages/nvidia/cu13"


def test_a_users_own_file_that_sets_a_build_variable_is_recorded():
    """`export CUDA_HOME=...` in ~/.bashrc (no guard above it): the file is the origin; a
    `PATH=$CUDA_HOME/bin:$PATH`-style line composes and pins nothing; /etc files are not
    the user's."""
    origins: dict[str, str] = {}
    out = (
        f"\n{T} shell /bin/bash\n\n{T} uid 0\n\n{T} env\nPATH=/usr/bin\0\n{T} env.end\n"
        f"\n{T} profile /etc/profile.d/cuda.sh\nexport CUDA_HOME=/etc-said\n"
        f"\n{T} profile /root/.bashrc\nexport CUDA_HOME={STALE}\n"
        "export PATH=$CUDA_HOME/bin:$PATH\nexport LD_LIBRARY_PATH=/x:$LD_LIBRARY_PATH\n"
        f"\n{T} profile.end\n"
    )
    env, _ = parse_login_env(out, T, None, origins)
    assert env["CUDA_HOME"] == STALE
    assert origins["CUDA_HOME"] == "/root/.bashrc"
    assert "PATH" not in origins and "LD_LIBRARY_PATH" not in origins


def test_plan_says_a_login_write_cannot_beat_the_users_bashrc():
    """cuda-home-bashrc-stale: ~/.bashrc exports a deleted venv's CUDA_HOME above its guard,
    so every bash session (`ssh host cmd` too) gets it after /etc/environment and
    /etc/profile.d. Before this change the plan was `ok` with a profile write that lost to
    ~/.bashrc: `run` applied it, its re-check failed and it was rolled back (exit 3, no word
    of ~/.bashrc). Now the plan is impossible, says where the value comes from, and `run`
    applies nothing."""
    kb = load_knowledge()
    f = Facts.model_validate(json.loads((HERE / "cuda-home-bashrc-stale.facts.json").read_text()))
    assert f.shell_env["CUDA_HOME"] == STALE and f.shell_env_from == {"CUDA_HOME": "/root/.bashrc"}
    syms = scan_logs([str(HERE / "fi-stale-cuda-home-bashrc.log")])[0]
    plan = make_plan(kb, f, syms, consumers=["flashinfer-jit"])
    assert plan.steps == [] and plan.status == "impossible", plan.status
    assert any(
        u.startswith("cuda-home-is-toolkit @ flashinfer-jit")
        and "CUDA_HOME is set by /root/.bashrc" in u
        for u in plan.unresolved
    ), plan.unresolved
    # without the origin (as before): an `ok` plan whose step writes /etc/environment
    before = make_plan(kb, f.model_copy(update={"shell_env_from": {}}), syms)
    assert before.status == "ok" and [s.action for s in before.steps] == ["shell-env-cuda-home"]


def test_a_units_environment_file_is_outranked_by_remedys_own():
    """service-envfile-cuda-home (systemd): the unit's EnvironmentFile= sets CUDA_HOME to a
    CUDA 12.8; Environment= (a drop-in's too) loses to any EnvironmentFile= (systemd.exec(5)).
    Before this change the plan was impossible (no drop-in can win). Now remedy's drop-in also
    names an EnvironmentFile of its own, read after the unit's, whose value wins."""
    kb = load_knowledge()
    f = Facts.model_validate(
        json.loads((HERE / "service-envfile-cuda-home.facts.json").read_text())
    )
    syms = scan_logs([str(HERE / "unit-envfile-cuda-12.8.journal")])[0]
    plan = make_plan(kb, f, syms)
    assert plan.status == "ok" and plan.unexplained == [] and len(plan.steps) == 1
    op = plan.steps[0].operation
    assert plan.steps[0].action == "service-env-cuda-home" and op.envfile is True
    assert op.set == {"CUDA_HOME": CU13}
    env = "/etc/systemd/system/sglang-k26.service.d/50-remedy-cuda-home.env"
    assert op.envfile_path() == env
    assert op.text().splitlines()[-1] == f"EnvironmentFile={env}"
    cmds = op.commands()
    # the file first, then the drop-in that names it, then daemon-reload
    assert (
        cmds.index(
            f"mv -f /etc/systemd/system/sglang-k26.service.d/.50-remedy-cuda-home.env.tmp {env}"
        )
        < len(cmds) - 2
    )
    assert env in [t.target for t in op.touches()]
    assert any("SM 12.x requires CUDA >= 12.9" in a for a in plan.steps[0].addresses)
    # a unit whose environment files do not set the variable: a plain drop-in, as before
    svc = f.services[0].model_copy(update={"environment_files_env": {}})
    plain = make_plan(kb, f.model_copy(update={"services": [svc]}), syms)
    assert plain.steps and plain.steps[0].operation.envfile is False


def test_a_later_drop_in_of_the_admins_is_outranked_by_remedys_environment_file():
    """service-dropin-later-cuda-home (systemd): the admin's 90-local.conf sets
    Environment=CUDA_HOME=<12.8>, parsed after remedy's 50-remedy-cuda-home.conf (systemd.unit(5):
    drop-ins in name order, the later assignment wins), so a plain drop-in is silently
    overridden (main: envfile False, the run was not `fixed`). remedy's drop-in now names an
    EnvironmentFile of its own, which overrides every Environment= (systemd.exec(5))."""
    kb = load_knowledge()
    f = Facts.model_validate(
        json.loads((HERE / "service-envfile-cuda-home.facts.json").read_text())
    )
    syms = scan_logs([str(HERE / "unit-envfile-cuda-12.8.journal")])[0]
    d = "/etc/systemd/system/sglang-k26.service.d"

    def plan_with(*drop_ins: str) -> Plan:
        svc = f.services[0]
        env = {**svc.environment, "CUDA_HOME": "/usr/local/cuda-12.8"}
        svc = svc.model_copy(
            update={"environment_files_env": {}, "environment": env, "drop_ins": list(drop_ins)}
        )
        return make_plan(kb, f.model_copy(update={"services": [svc]}), syms)

    for later in (f"{d}/90-local.conf", f"{d}/override.conf", "/run/systemd/system/x.d/zz.conf"):
        plan = plan_with(f"{d}/10-cuda13.conf", later)
        assert plan.status == "ok" and len(plan.steps) == 1, later
        op = plan.steps[0].operation
        assert plan.steps[0].action == "service-env-cuda-home" and op.set == {"CUDA_HOME": CU13}
        assert op.envfile is True and op.last is True, later
        # named to be parsed after the admin's drop-in (test_o: its own EnvironmentFile=)
        assert op.path() == f"{d}/zz-remedy-cuda-home.conf"
        assert op.text().splitlines()[-1] == f"EnvironmentFile={d}/zz-remedy-cuda-home.env"
    # an earlier run's zz-remedy drop-in for the variable (the admin's later one since
    # removed): written again, not left to override a new 50-remedy one
    plan = plan_with(f"{d}/zz-remedy-cuda-home.conf")
    assert plan.steps and plan.steps[0].operation.path() == f"{d}/zz-remedy-cuda-home.conf"
    # drop-ins parsed before remedy's, or remedy's own: a plain drop-in, as before
    for earlier in (
        f"{d}/10-local.conf",
        f"{d}/50-remedy-path.conf",
        f"{d}/60-remedy-exec-start.conf",
        f"{d}/zz-remedy-path.conf",
    ):
        plan = plan_with(earlier)
        op = plan.steps[0].operation if plan.steps else None
        assert op and op.envfile is False and op.last is False, earlier
        assert op.path() == f"{d}/50-remedy-cuda-home.conf"


def test_a_drop_in_sorting_after_remedys_last_one_is_computed_and_named():
    """An admin's drop-in whose name sorts after remedy's zz-remedy-cuda-home.conf
    (`zzz-local.conf`, `~override.conf`): the effective value is computed from the drop-ins
    in systemd's order (units.dropin.dropin_overrides). Its EnvironmentFile= setting
    CUDA_HOME is read after remedy's own file and wins: the plan is `impossible` and names
    the drop-in and its file (sandbox test_s; main: `ok`, one zz-remedy drop-in step, and the
    run rolled back). An Environment= line there loses to remedy's file: `ok`, as before."""
    from remedy.units.dropin import dropin_overrides, read_after_remedy

    d = "/etc/systemd/system/sglang-k26.service.d"
    unit = "sglang-k26.service"
    envfile = b"[Service]\nEnvironmentFile=/etc/sglang/local.env\n"
    local = {"/etc/sglang/local.env": b"CUDA_HOME=/usr/local/cuda-12.8\n"}
    for name in ("zzz-local.conf", "~override.conf", "zz-site.conf"):
        files = {f"{d}/{name}": envfile, **local}
        assert read_after_remedy([f"{d}/{name}", f"{d}/90-local.conf"]) == [f"{d}/{name}"]
        assert dropin_overrides(unit, [f"{d}/{name}"], files, {}) == {
            "CUDA_HOME": f"{d}/{name} (EnvironmentFile=/etc/sglang/local.env)"
        }, name
    # read before remedy's last-named drop-in (test_o), or remedy's own: nothing overrides
    for name in (
        "90-local.conf",
        "override.conf",
        "zz-remedy-path.conf",
        "zz-remedy-cuda-home.conf",
    ):
        files = {f"{d}/{name}": envfile, **local}
        assert dropin_overrides(unit, [f"{d}/{name}"], files, {}) == {}, name
    # an Environment= line after remedy's loses to remedy's EnvironmentFile (systemd.exec(5))
    files = {f"{d}/~override.conf": b"[Service]\nEnvironment=CUDA_HOME=/usr/local/cuda-12.8\n"}
    assert dropin_overrides(unit, [f"{d}/~override.conf"], files, {}) == {}
    # ... unless the same drop-in empties EnvironmentFile= first: remedy's file is dropped
    files = {f"{d}/~o.conf": b"[Service]\nEnvironmentFile=\nEnvironment=CUDA_HOME=/x\n"}
    assert dropin_overrides(unit, [f"{d}/~o.conf"], files, {}) == {
        "CUDA_HOME": f"{d}/~o.conf (Environment=CUDA_HOME=...)"
    }
    # both lists emptied: every variable remedy would set is lost
    files = {f"{d}/~o.conf": b"[Service]\nEnvironmentFile=\nEnvironment=\n"}
    assert dropin_overrides(unit, [f"{d}/~o.conf"], files, {}) == {
        "*": f"{d}/~o.conf (an empty EnvironmentFile= and Environment=)"
    }

    kb = load_knowledge()
    f = Facts.model_validate(
        json.loads((HERE / "service-envfile-cuda-home.facts.json").read_text())
    )
    syms = scan_logs([str(HERE / "unit-envfile-cuda-12.8.journal")])[0]
    svc = f.services[0].model_copy(
        update={
            "drop_ins": [f"{d}/zzz-local.conf"],
            "environment_files": ["/etc/sglang/local.env"],
            "environment_files_env": {"CUDA_HOME": "/usr/local/cuda-12.8"},
        }
    )
    # main's facts (no dropin_overrides): `ok`, a zz-remedy drop-in that systemd overrides
    plan = make_plan(kb, f.model_copy(update={"services": [svc]}), syms)
    assert plan.status == "ok" and plan.steps[0].operation.last is True
    why = f"{d}/zzz-local.conf (EnvironmentFile=/etc/sglang/local.env)"
    svc = svc.model_copy(update={"dropin_overrides": {"CUDA_HOME": why}})
    plan = make_plan(kb, f.model_copy(update={"services": [svc]}), syms)
    assert plan.status == "impossible" and plan.steps == [], plan.steps
    assert any(f"CUDA_HOME is set again by {why}" in u for u in plan.unresolved), plan.unresolved
    svc = svc.model_copy(update={"dropin_overrides": {"*": why}})
    plan = make_plan(kb, f.model_copy(update={"services": [svc]}), syms)
    assert plan.status == "impossible" and plan.steps == []
    assert any(f"remedy's lines are dropped by {why}" in u for u in plan.unresolved)


def test_exec_start_prefixes_are_read_as_systemd_reads_them():
    """systemd.service(5) "Command lines": `-` `@` `:` `+` `!` before the program's path, and
    with `@` the second word is argv[0]. `systemctl show` prints `path=` and `argv[]=`: for
    `ExecStart=@/opt/v/bin/python python3 SCRIPT` argv[] starts at `python3`, and main read the
    argv as the command: no venv (python None; sandbox test_t). `@/bin/bash -bash -c "source
    VENV/bin/activate && ..."` is a login shell (argv[0] starts with `-`, bash(1)), which main
    did not see (it reads /etc/profile.d after the unit's environment, as in test_p)."""
    from remedy.facts.services import (
        build_services,
        exec_words,
        interpreter_of,
        runs_login_shell,
        sourced_activates,
    )

    show = (
        "Id=sglang.service\nLoadState=loaded\n"
        "ExecStart={ path=/opt/v/bin/python ; argv[]=python3 /srv/launch.py --port 30000 ; "
        "ignore_errors=no ; start_time=[n/a] ; stop_time=[n/a] ; pid=0 ; code=(null) ; "
        "status=0/0 }\n"
    )
    res = build_services(show, ["sglang.service"])
    cmd = res.services[0].exec_start
    assert cmd == "@/opt/v/bin/python python3 /srv/launch.py --port 30000"
    assert res.interpreters == {"sglang.service": "/opt/v/bin/python"}
    # argv[0] the program: the argv text, as before
    same = show.replace("argv[]=python3", "argv[]=/opt/v/bin/python")
    assert build_services(same, ["sglang.service"]).services[0].exec_start == (
        "/opt/v/bin/python /srv/launch.py --port 30000"
    )
    assert exec_words("-:+/opt/v/bin/python -m x") == ("/opt/v/bin/python", "/opt/v/bin/python",
                                                       ["-m", "x"])  # fmt: skip
    assert exec_words("@/bin/bash -bash -c x") == ("/bin/bash", "-bash", ["-c", "x"])
    assert exec_words("!!@/bin/sh sh") == ("/bin/sh", "sh", [])
    for cmd in ("-/opt/v/bin/python -m sglang.launch_server", "@/opt/v/bin/python py -m s",
                "+@/opt/v/bin/python3.11 sglang-k26 x"):  # fmt: skip
        assert interpreter_of(cmd) and interpreter_of(cmd).startswith("/opt/v/bin/python"), cmd
    login = "@/bin/bash -bash -c source /opt/v/bin/activate && exec python -m sglang.launch_server"
    assert runs_login_shell(login) and sourced_activates(login) == ["/opt/v/bin/activate"]
    assert not runs_login_shell("@/bin/bash bash -c x") and runs_login_shell("-/bin/bash -lc x")
    assert not runs_login_shell("@/opt/v/bin/python -bash -c x")


def test_a_user_units_login_shell_reads_that_users_own_profile_file():
    """A unit with User=sglang (home /var/lib/sglang from getent) whose ExecStart is `bash
    -lc ...`: bash reads the first of ~/.bash_profile, ~/.bash_login, ~/.profile after
    /etc/profile (bash(1) INVOCATION); sh reads ~/.profile; root's home when no User=. The
    facts read that file as data (sandbox test_u; main: not read, a drop-in step)."""
    from remedy.facts.services import login_user_files, unit_home
    from remedy.model import Service

    svc = Service(name="s.service", sandboxing={"User": "sglang"}, user_home="/var/lib/sglang")
    assert unit_home(svc) == "/var/lib/sglang"
    assert unit_home(Service(name="s.service")) == "/root"
    assert unit_home(Service(name="s.service", sandboxing={"User": "nobody"})) is None
    home = "/var/lib/sglang"
    assert login_user_files("/bin/bash -lc x", home) == [
        f"{home}/.bash_profile",
        f"{home}/.bash_login",
        f"{home}/.profile",
    ]
    assert login_user_files("@/bin/sh -sh -c x", home) == [f"{home}/.profile"]
    assert login_user_files("/bin/bash -c x", home) == []
    assert login_user_files("/bin/bash -lc x", None) == []


def test_a_units_conda_activation_hooks_are_read_as_data():
    """A unit that runs its server in a conda environment (`conda run -n sglang ...`, or a
    shell's `source /opt/conda/bin/activate sglang` / `conda activate sglang`): activation
    sources PREFIX/etc/conda/activate.d/*.sh after systemd's environment, so an `export
    CUDA_HOME=$CONDA_PREFIX/...` there wins over remedy's drop-in. The facts find the
    environment (conda_envs), read its hooks by glob (followup_script) and keep what they set
    outright (exec_shell_env / exec_shell_from), which the planner names as for test_p. Main
    read no hook. (No sandbox scenario: the sandbox image has no conda.)"""
    from remedy.facts.collect import _Needs, _State, activate_vars, followup_script
    from remedy.facts.services import conda_activate_scripts, conda_envs

    assert conda_envs("/opt/conda/bin/conda run -n sglang python -m sglang.launch_server") == [
        "/opt/conda/envs/sglang"
    ]
    assert conda_envs("/opt/conda/bin/conda run --no-capture-output -p /srv/env python x") == [
        "/srv/env"
    ]
    assert conda_envs("@/opt/conda/bin/conda conda run --name=sg python x") == [
        "/opt/conda/envs/sg"
    ]
    assert conda_envs("/bin/bash -c source /opt/conda/bin/activate sglang && exec python") == [
        "/opt/conda/envs/sglang"
    ]
    cmd = "/bin/bash -lc source /opt/conda/etc/profile.d/conda.sh && conda activate sglang && x"
    assert conda_envs(cmd) == ["/opt/conda/envs/sglang"]
    assert conda_envs("/bin/bash -c source /opt/conda/bin/activate && exec python") == [
        "/opt/conda"
    ]
    assert conda_envs("/opt/v/bin/python -m sglang.launch_server") == []
    # a name without the conda it belongs to names no environment; never `..`
    assert conda_envs("/usr/bin/env conda run -n sg python") == []
    assert conda_envs("/opt/conda/bin/conda run -n .. python") == []
    g = conda_activate_scripts("/opt/conda/envs/sglang")
    assert g == "/opt/conda/envs/sglang/etc/conda/activate.d/*.sh"
    script = followup_script("TOK", _State(), _Needs(env_files=[g]))
    assert "envglob" in script and "/opt/conda/envs/sglang/etc/conda/activate.d/" in script
    hook = "/opt/conda/envs/sglang/etc/conda/activate.d/cuda.sh"
    text = b'export CUDA_HOME="$CONDA_PREFIX/targets/x86_64-linux"\nexport PATH=/x:$PATH\n'
    env = {"PATH": "/usr/bin", "CONDA_PREFIX": "/opt/conda/envs/sglang"}
    assert activate_vars(hook, text, env) == {
        "CUDA_HOME": "/opt/conda/envs/sglang/targets/x86_64-linux"
    }


def test_paths_from_a_units_exec_start_and_home_never_become_commands(tmp_path):
    """Attack: the conda prefix, the venv and the home the facts now read come from the host's
    unit text and user database. A prefix or home holding `$(touch CANARY)` or a `;` is read as
    a file name by the follow-up script (quoted), never run; a prefix with glob characters of
    its own is not read at all. Control: the canary stays absent, the real hook is read."""
    import subprocess

    from remedy.facts.collect import _needs, _State, followup_script
    from remedy.facts.services import ServiceFacts
    from remedy.model import Service

    canary = tmp_path / "canary"
    env = tmp_path / "env"
    (env / "etc/conda/activate.d").mkdir(parents=True)
    (env / "etc/conda/activate.d/a.sh").write_text("export CUDA_HOME=/x\n")
    evil = f"/tmp/$(touch {canary});touch {canary}"
    cmds = [
        f"/bin/bash -c source {evil}/bin/activate && exec python",
        f"/opt/conda/bin/conda run -p {evil} python",
        f"/opt/conda/bin/conda run -p {tmp_path}/e* python",
        f"/opt/conda/bin/conda run -p {env} python",
    ]
    svcs = [Service(name=f"s{i}.service", exec_start=c) for i, c in enumerate(cmds)]
    svcs.append(
        Service(
            name="h.service", exec_start="/bin/bash -lc x", user_home=evil, sandboxing={"User": "u"}
        )  # fmt: skip
    )
    need = _needs(_State(), {}, ServiceFacts(services=svcs, systemd=True))
    assert f"{tmp_path}/e*/etc/conda/activate.d/*.sh" not in need.env_files
    assert f"{evil}/.profile" in need.env_files
    need.prefixes, need.interpreters, need.paths = [], [], []
    out = subprocess.run(
        ["sh", "-c", followup_script("TOK", _State(), need)],
        capture_output=True, text=True, cwd=tmp_path, timeout=60, check=False,
    )  # fmt: skip
    assert not canary.exists(), out.stderr[-2000:]
    assert f"{env}/etc/conda/activate.d/a.sh" in out.stdout


def test_a_units_login_shell_reads_the_system_profile_after_its_drop_ins():
    """A unit whose ExecStart is a login shell (`bash -lc "source VENV/bin/activate && exec
    python ..."`) reads /etc/profile.d after systemd's environment (bash(1) INVOCATION): a
    CUDA_HOME set there beats remedy's drop-in. The facts keep it (exec_shell_env), the
    consumers see it, the plan is impossible and names the file (sandbox test_p; main: a
    drop-in step for a CUDA_HOME it thought unset)."""
    from remedy.facts.collect import login_profile_vars
    from remedy.facts.services import runs_login_shell

    for cmd in ("/bin/bash -lc x", "/usr/bin/bash -l -c x", "sh --login -c x", "bash -xlc x"):
        assert runs_login_shell(cmd), cmd
    for cmd in ("/bin/bash -c x -l", "/opt/v/bin/python -l", "bash x -l", "bash", None):
        assert not runs_login_shell(cmd), cmd
    origins = {
        "CUDA_HOME": "/etc/profile.d/cuda.sh",
        "PATH": "/etc/profile.d/cuda.sh",
        "CUDA_PATH": "/root/.profile",
        "LANG": "/etc/profile.d/lang.sh",
        "NVCC_FLAGS": "/etc/bash.bashrc",
    }
    env = {"CUDA_HOME": "/usr/local/cuda-12.8", "PATH": "/x", "CUDA_PATH": "/y", "LANG": "C"}
    env["NVCC_FLAGS"] = "-g"
    assert login_profile_vars(env, origins) == {
        "exec_shell_env": {"CUDA_HOME": "/usr/local/cuda-12.8"},
        "exec_shell_from": {"CUDA_HOME": "/etc/profile.d/cuda.sh"},
    }
    # a venv activate script the shell sources (sandbox test_q): read as data, never run
    from remedy.facts.collect import activate_vars
    from remedy.facts.services import sourced_activates

    act = "/opt/v/bin/activate"
    assert sourced_activates(f"/bin/bash -c source {act} && exec python -m x") == [act]
    assert sourced_activates(f"/bin/sh -c cd /x; . {act}; exec python") == [act]
    assert sourced_activates(f"/opt/v/bin/python -c source {act}") == []
    assert sourced_activates("/bin/bash -c source /opt/v/bin/activate.sh") == []
    text = (
        "deactivate () {\n    unset CUDA_HOME\n}\nVIRTUAL_ENV=/opt/v\nexport VIRTUAL_ENV\n"
        'PATH="$VIRTUAL_ENV/bin:$PATH"\nexport PATH\n'
        "export CUDA_HOME=/usr/local/cuda-12.8\nexport CUDA_PATH=$(cat /x)\n"
    )
    got = activate_vars(act, text.encode(), {"PATH": "/usr/bin", "CUDA_PATH": "/y"})
    assert got == {"CUDA_HOME": "/usr/local/cuda-12.8"}
    assert activate_vars(act, None, {}) == {}
    kb = load_knowledge()
    f = Facts.model_validate(
        json.loads((HERE / "service-envfile-cuda-home.facts.json").read_text())
    )
    syms = scan_logs([str(HERE / "unit-envfile-cuda-12.8.journal")])[0]

    def plan_with(profile: dict[str, str]) -> Plan:
        svc = f.services[0]
        svc = svc.model_copy(
            update={
                "environment": {**svc.environment, "CUDA_HOME": "/usr/local/cuda-12.8"},
                "environment_files_env": {},
                "exec_start": "/bin/bash -lc source /opt/sglang-venv/bin/activate && exec python",
                "exec_shell_env": profile,
                "exec_shell_from": {k: "/etc/profile.d/cuda.sh" for k in profile},
            }
        )
        return make_plan(kb, f.model_copy(update={"services": [svc]}), syms)

    plan = plan_with({"CUDA_HOME": "/usr/local/cuda-12.8"})
    assert plan.status == "impossible" and plan.steps == [] and plan.unexplained == []
    assert any("CUDA_HOME is set by /etc/profile.d/cuda.sh" in u for u in plan.unresolved)
    # the profile sets nothing: the unit's own Environment= wins, a plain drop-in fixes it
    plain = plan_with({})
    assert plain.status == "ok" and [s.action for s in plain.steps] == ["service-env-cuda-home"]


def test_a_units_unset_environment_makes_a_drop_in_impossible_and_is_named():
    """The unit's own UnsetEnvironment=CUDA_HOME (a drop-in's too) is applied after every
    Environment= and EnvironmentFile= (systemd.exec(5)): no drop-in of remedy's can set it.
    Before this change the plan was `ok` with a drop-in that the unit then drops (the run's
    re-check failed, rolled back). Now: `impossible`, the reason names UnsetEnvironment=;
    `UnsetEnvironment=CUDA_HOME=/x` (that pair only) leaves remedy's value alone."""
    kb = load_knowledge()
    f = Facts.model_validate(
        json.loads((HERE / "service-envfile-cuda-home.facts.json").read_text())
    )
    syms = scan_logs([str(HERE / "unit-envfile-cuda-12.8.journal")])[0]

    def plan_with(unset: list[str]) -> Plan:
        svc = f.services[0].model_copy(
            update={"environment_files_env": {}, "unset_environment": unset}
        )
        return make_plan(kb, f.model_copy(update={"services": [svc]}), syms)

    plan = plan_with(["CUDA_HOME"])
    assert plan.status == "impossible" and plan.steps == []
    assert plan.unresolved and all(
        "CUDA_HOME removed by the unit's UnsetEnvironment=" in u for u in plan.unresolved
    )
    for unset in ([], ["CUDA_HOME=/x"], ["OTHER"]):
        plan = plan_with(unset)
        assert [s.action for s in plan.steps] == ["service-env-cuda-home"], unset


def test_a_login_only_value_from_the_users_profile_still_gets_the_session_fix():
    """CUDA_HOME set by ~/.profile (login shells only) and absent from `ssh host cmd`: the
    user's file pins the login value, but the session does not read it, so the session's plan
    (a login-scope write, which /etc/environment carries to `ssh host cmd`) still applies."""
    kb = load_knowledge()
    f = facts(shell_env_from={"CUDA_HOME": "/root/.profile"})
    plan = make_plan(kb, f, symptoms(), consumers=["flashinfer-jit"])
    assert [(s.action, s.params) for s in plan.steps] == [("shell-env-cuda-home", {"prefix": CU13})]
    assert plan.status == "ok" and plan.facts.shell_env_from == {"CUDA_HOME": "/root/.profile"}


DEBIAN_PROFILE = """if [ "$(id -u)" -eq 0 ]; then
  PATH="/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
else
  PATH="/usr/local/bin:/usr/bin:/bin:/usr/local/games:/usr/games"
fi
export PATH

if [ -d /etc/profile.d ]; then
  for i in /etc/profile.d/*.sh; do
    if [ -r $i ]; then
      . $i
    fi
  done
  unset i
fi
"""


def test_an_export_appended_to_etc_profile_is_read_after_profile_d():
    """`echo 'export CUDA_HOME=...' >> /etc/profile`: Debian's /etc/profile sources
    /etc/profile.d/*.sh in a loop, so the appended line is read after every profile.d file,
    remedy's zz-remedy-*.sh included. Before this change the facts read /etc/profile whole,
    before profile.d: the computed login environment had remedy's value after a run, its
    re-run passed there (`fixed`) while real login shells kept the stale one. Now the tail
    is read last and named, like a user's own file: a login-scope write cannot beat it."""
    from remedy.facts.envs import ETC_PROFILE_TAIL, evaluate_profile, split_etc_profile

    mine = ("/etc/profile.d/zz-remedy-cuda-home.sh", f"export CUDA_HOME={CU13}\n")
    tail = f"export CUDA_HOME={STALE}\n"
    files = [("/etc/profile", DEBIAN_PROFILE + tail), mine, ("/root/.profile", ": \n")]
    order = split_etc_profile(files)
    assert [p for p, _ in order] == [
        "/etc/profile",
        mine[0],
        ETC_PROFILE_TAIL,
        "/root/.profile",
    ]
    origins: dict[str, str] = {}
    env = evaluate_profile({}, order, uid="0", origins=origins)
    assert env["CUDA_HOME"] == STALE and origins["CUDA_HOME"] == ETC_PROFILE_TAIL
    assert env["PATH"].startswith("/usr/local/sbin")
    # before the loop, or no loop at all: profile.d still wins, /etc/profile is kept whole
    for text in (tail + DEBIAN_PROFILE, "export CUDA_HOME=/x\n"):
        order = split_etc_profile([("/etc/profile", text), mine])
        assert order == [("/etc/profile", text), mine]
        assert evaluate_profile({}, order, uid="0")["CUDA_HOME"] == CU13
    # the plan: that origin makes a login-scope write impossible, and names it
    kb = load_knowledge()
    f = Facts.model_validate(json.loads((HERE / "cuda-home-bashrc-stale.facts.json").read_text()))
    syms = scan_logs([str(HERE / "fi-stale-cuda-home-bashrc.log")])[0]
    f = f.model_copy(update={"shell_env_from": {"CUDA_HOME": ETC_PROFILE_TAIL}})
    plan = make_plan(kb, f, syms, consumers=["flashinfer-jit"])
    assert plan.steps == [] and plan.status == "impossible", plan.status
    assert any(f"CUDA_HOME is set by {ETC_PROFILE_TAIL}" in u for u in plan.unresolved)


# the profile.d loops of other distributions' /etc/profile, in their shapes (each followed by
# an appended export): Fedora/RHEL (setup, https://pagure.io/setup/blob/master/f/profile),
# Alpine (alpine-baselayout), Arch (filesystem: `if test -d /etc/profile.d/; then`)
LOOPS = {
    "rhel": 'for i in /etc/profile.d/*.sh /etc/profile.d/sh.local ; do\n    if [ -r "$i" ]; then\n'
    '        if [ "${-#*i}" != "$-" ]; then\n            . "$i"\n        else\n'
    '            . "$i" >/dev/null\n        fi\n    fi\ndone\n\nunset i\n',
    "alpine": 'for script in /etc/profile.d/*.sh ; do\n\tif [ -r "$script" ] ; then\n'
    '\t\t. "$script"\n\tfi\ndone\nunset script\n',
    "arch": "if test -d /etc/profile.d/; then\n\tfor profile in /etc/profile.d/*.sh; do\n"
    '\t\ttest -r "$profile" && . "$profile"\n\tdone\n\tunset profile\nfi\n',
    "do-on-its-own-line": "for f in /etc/profile.d/*.sh\ndo\n  for g in a b; do :; done\n"
    '  while false; do :; done\n  . "$f"\ndone\n',
}


def test_the_profile_d_loop_of_every_distributions_etc_profile_is_found():
    """Before this change only Debian's loop was recognised: on Fedora/RHEL (and a loop whose
    `do` is on its own line) /etc/profile was read whole, before profile.d, so an export
    appended below the loop lost to remedy's zz-remedy-*.sh in the computed login
    environment (sandbox test_r: main said `fixed`, the `bash -l` build still failed)."""
    from remedy.facts.envs import ETC_PROFILE_TAIL, evaluate_profile, split_etc_profile

    mine = ("/etc/profile.d/zz-remedy-cuda-home.sh", f"export CUDA_HOME={CU13}\n")
    tail = f"export CUDA_HOME={STALE}\n"
    for distro, loop in LOOPS.items():
        order = split_etc_profile([("/etc/profile", "umask 022\n" + loop + tail), mine])
        assert [p for p, _ in order] == ["/etc/profile", mine[0], ETC_PROFILE_TAIL], distro
        assert order[0][1].rstrip().endswith(("done", "fi")), distro
        assert order[2][1].strip().endswith(tail.strip()) and "profile.d" not in order[2][1], distro
        origins: dict[str, str] = {}
        env = evaluate_profile({}, order, uid="0", origins=origins)
        assert env["CUDA_HOME"] == STALE and origins["CUDA_HOME"] == ETC_PROFILE_TAIL, distro
    # a loop over another directory, or an unclosed one: kept whole
    for text in ("for f in /etc/other/*.sh; do . $f; done\n" + tail, LOOPS["alpine"][:-18]):
        assert split_etc_profile([("/etc/profile", text), mine]) == [("/etc/profile", text), mine]


USER_PROFILE_DEBIAN = (
    '# ~/.profile\nif [ -n "$BASH_VERSION" ]; then\n    if [ -f "$HOME/.bashrc" ]; then\n'
    '\t. "$HOME/.bashrc"\n    fi\nfi\nexport LANG=C\n'
)
BASHRC_GUARD = "case $- in\n    *i*) ;;\n      *) return;;\nesac\n"


def test_a_units_login_shell_follows_the_users_profile_into_bashrc():
    """toolchain-7 left: a unit's `bash -lc` reads the user's ~/.profile, and Debian's (or
    RHEL's ~/.bash_profile) sources ~/.bashrc. An export there above the "not interactive,
    return" guard reaches the server after systemd's environment; one below it does not.
    Before: only ~/.profile was read, so an export in ~/.bashrc was missed (plan: a drop-in
    the shell then overrides; sandbox test_v). Now the sourced file is read (as data) and
    cut at its guard; the variable is named with the file that sets it."""
    from remedy.facts.collect import _needs, _State, login_user_vars
    from remedy.facts.services import ServiceFacts
    from remedy.model import Service

    home = "/var/lib/sglang"
    svc = Service(
        name="s.service", exec_start="/bin/bash -lc x", user_home=home,
        sandboxing={"User": "sglang"},
    )  # fmt: skip
    state = _State()
    for n in (".bash_profile", ".bash_login"):
        state.files_read[f"{home}/{n}"] = None
    state.files_read[f"{home}/.profile"] = USER_PROFILE_DEBIAN.encode()
    need = _needs(state, {}, ServiceFacts(services=[svc], systemd=True))
    assert f"{home}/.bashrc" in need.env_files
    files = {f"{home}/.profile": USER_PROFILE_DEBIAN.encode()}
    env = {"PATH": "/usr/bin"}
    above = "export CUDA_HOME=/usr/local/cuda-12.8\n" + BASHRC_GUARD + "export CUDA_PATH=/i\n"
    got = login_user_vars(f"{home}/.profile", {**files, f"{home}/.bashrc": above.encode()},
                          home, env)  # fmt: skip
    assert got == {"CUDA_HOME": ("/usr/local/cuda-12.8", f"{home}/.bashrc")}
    below = BASHRC_GUARD + "export CUDA_HOME=/usr/local/cuda-12.8\n"
    assert login_user_vars(f"{home}/.profile", {**files, f"{home}/.bashrc": below.encode()},
                           home, env) == {}  # fmt: skip
    # RHEL's ~/.bash_profile, `~` for the home, PS1's guard; a value set after the source wins
    rhel = "if [ -f ~/.bashrc ]; then . ~/.bashrc; fi\nexport CUDA_PATH=/after\n"
    rc = 'export CUDA_PATH=/rc\nexport CUDA_HOME=/rc\n[ -z "$PS1" ] && return\nexport X_Y=1\n'
    got = login_user_vars("/root/.bash_profile",
                          {"/root/.bash_profile": rhel.encode(), "/root/.bashrc": rc.encode()},
                          "/root", env)  # fmt: skip
    assert got == {
        "CUDA_HOME": ("/rc", "/root/.bashrc"),
        "CUDA_PATH": ("/after", "/root/.bash_profile"),
    }
    # a sourced path with another variable or a glob is not guessed at (nor read)
    odd = '. "$XDG_CONFIG_HOME/sh"\n. ~/.b*\n'
    assert login_user_vars("/root/.profile", {"/root/.profile": odd.encode()}, "/root", env) == {}


def test_specifiers_in_a_later_drop_ins_paths_are_expanded_as_systemd_does():
    """toolchain-7 left: an admin's drop-in read after remedy's (`zzz-local.conf`) names its
    EnvironmentFile= with %-specifiers (systemd.unit(5) "Specifiers"; the system manager's
    %h is /root, %E /etc, %S /var/lib, %% a `%`). systemd reads the expanded path, and so
    `systemctl show` lists it and facts read it there: the computed value must come from the
    same file (sandbox test_w). remedy was already right there; kept so it stays right. A
    host-dependent one (%H) names a file remedy cannot know: now named as an override (main:
    none, a drop-in step). An Environment= value with a specifier is expanded too."""
    from remedy.units.dropin import dropin_overrides

    d = "/etc/systemd/system/sglang-k26.service.d"
    unit = "sglang-k26.service"
    body = b"CUDA_HOME=/usr/local/cuda-12.8\n"
    for spec, path in (
        ("%E/sglang/local.env", "/etc/sglang/local.env"),
        ("%h/sglang.env", "/root/sglang.env"),
        ("%S/sglang/local.env", "/var/lib/sglang/local.env"),
        ("/etc/sglang/100%%.env", "/etc/sglang/100%.env"),
        ("-%E/sglang/%N.env", "/etc/sglang/sglang-k26.env"),
    ):
        conf = f"[Service]\nEnvironmentFile={spec}\n".encode()
        files = {f"{d}/zzz-local.conf": conf, path: body}
        got = dropin_overrides(unit, [f"{d}/zzz-local.conf"], files, {})
        assert got == {"CUDA_HOME": f"{d}/zzz-local.conf (EnvironmentFile={path})"}, spec
        # the unexpanded text names no file systemd reads: nothing is found there
        literal = {f"{d}/zzz-local.conf": conf, spec.lstrip("-"): body}
        assert dropin_overrides(unit, [f"{d}/zzz-local.conf"], literal, {}) == {}, spec
    # a host-dependent specifier (%H) in the path: the file systemd reads is not known here,
    # so remedy's value may be overridden: named, never planned around (main: `{}`, a
    # drop-in step systemd then overrides)
    conf = b"[Service]\nEnvironmentFile=/etc/sglang/%H.env\n"
    got = dropin_overrides(unit, [f"{d}/zzz-local.conf"], {f"{d}/zzz-local.conf": conf}, {})
    assert list(got) == ["*"] and got["*"].startswith(f"{d}/zzz-local.conf ("), got
    assert "/etc/sglang/%H.env" in got["*"] and "%H (hostname)" in got["*"]
    conf = b"[Service]\nEnvironmentFile=\nEnvironment=CUDA_HOME=%h/cuda\n"
    got = dropin_overrides(unit, [f"{d}/~o.conf"], {f"{d}/~o.conf": conf}, {})
    assert got == {"CUDA_HOME": f"{d}/~o.conf (Environment=CUDA_HOME=...)"}


def test_a_conda_envs_config_vars_reach_a_conda_run_unit_and_are_named():
    """toolchain-7 left: `conda env config vars set CUDA_HOME=...` stores the value in the
    environment's conda-meta/state (`{"env_vars": {...}}`); `conda run -n ENV` (and `conda
    activate`) exports it after systemd's environment, before the activate.d hooks. Before:
    only activate.d was read, the value missed: a drop-in step the activation overrides. Now
    the state file is read as data (JSON, never run), the value kept with the file, and the
    plan is `impossible` naming it. (No sandbox scenario: the sandbox image has no conda.)"""
    from remedy.facts.collect import _needs, _State
    from remedy.facts.services import ServiceFacts, conda_state_file, conda_state_vars
    from remedy.model import Service

    prefix = "/opt/conda/envs/sglang"
    st = f"{prefix}/conda-meta/state"
    assert conda_state_file(prefix + "/") == st
    cmd = "/opt/conda/bin/conda run -n sglang python -m sglang.launch_server"
    need = _needs(_State(), {}, ServiceFacts(services=[Service(name="s.service",
                  exec_start=cmd)], systemd=True))  # fmt: skip
    assert st in need.env_files
    raw = json.dumps(
        {"env_vars": {"CUDA_HOME": "/usr/local/cuda-12.8", "CUDA_PATH": "***unset***",
                      "bad name": "x", "N": 1}}
    ).encode()  # fmt: skip
    assert conda_state_vars(raw) == {"CUDA_HOME": "/usr/local/cuda-12.8"}
    for junk in (None, b"", b"{not json", b"[]", b'{"env_vars": []}'):
        assert conda_state_vars(junk) == {}

    kb = load_knowledge()
    f = Facts.model_validate(
        json.loads((HERE / "service-envfile-cuda-home.facts.json").read_text())
    )
    syms = scan_logs([str(HERE / "unit-envfile-cuda-12.8.journal")])[0]
    svc = f.services[0].model_copy(
        update={
            "environment": {**f.services[0].environment, "CUDA_HOME": "/usr/local/cuda-12.8"},
            "environment_files_env": {},
            "exec_start": cmd,
            "exec_shell_env": {"CUDA_HOME": "/usr/local/cuda-12.8"},
            "exec_shell_from": {"CUDA_HOME": st},
        }
    )
    plan = make_plan(kb, f.model_copy(update={"services": [svc]}), syms)
    assert plan.status == "impossible" and plan.steps == [], plan.steps
    assert any(f"CUDA_HOME is set by {st}" in u for u in plan.unresolved), plan.unresolved
