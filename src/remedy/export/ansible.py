"""A remedy plan as an Ansible playbook, for fleets that already run Ansible/AWX.

The playbook does what `remedy run` does for one step, with Ansible's own modules so that
`--check` and `--diff` mean something: pip pins with `ansible.builtin.pip`, links with
`ansible.builtin.file`, drop-ins and profile files with `ansible.builtin.copy` (content diff,
`backup: true`), apt packages with `ansible.builtin.apt`, and a command only where no module
fits (the libcuda.so link stub), guarded by `creates:` so check mode reports it without running
it. In order:

1. preconditions (read-only, run in check mode too): a stdlib script compares the host with the
   facts the plan was made from (package versions, paths, drop-ins); a host that matches
   neither the plan's before- nor its after-state fails with what differs. Steps the host
   already has are skipped, so a second run reports changed=0.
2. a block: the steps, `meta: flush_handlers` (daemon-reload, optional restart), then the
   probes `remedy run` would run, captured from remedy's own probe code (probecapture.py) and
   shipped with `copy` + `command`; skipped in check mode, since nothing was changed.
3. its rescue: undo, in reverse, what each task reports it changed (pip back to the plan's
   versions, new links/files removed, drop-ins restored from their backups, daemon-reload),
   then fail.

Everything that comes from the plan is YAML-dumped (never templated into YAML text) and tagged
`!unsafe`, so Ansible never evaluates `{{ }}` or `{% %}` in host data.
"""

from __future__ import annotations

import copy
import datetime
import json
import posixpath
import re
from typing import Any

import yaml

from remedy import __version__
from remedy.executor.runner import SESSION_ENV
from remedy.model import Facts, Plan, Step
from remedy.operations.playbook import Ctx, Dumper, ExportError, Mapped, U, Unsafe
from remedy.transport.base import SYSTEM_PATH

VERIFY_MODES = ("cheap", "full")
# Step probes the cheap verification replaces, as `remedy run --verify cheap` does.
_BUILD = {"flashinfer-jit-build", "sglang-jit-build", "torch-ext-build", "jit-run-probe"}
_LAUNCH = {"launch-probe"}
# Probes whose host work is a GPU (no stand-in at export time) or nothing at all.
_NO_HOST_WORK = {"static"}
_SESSION_ENV = SESSION_ENV  # per-connection values are not facts about the host


# --------------------------------------------------------------------------------------------
# steps → tasks: each typed operation renders its own (remedy.operations); no per-action code
# --------------------------------------------------------------------------------------------

# The step kinds a reader of the playbook meets, for `remedy export --help` and the README.
MAPPING_TABLE = [
    ("pip-install", "ansible.builtin.pip (exact pins, --no-deps as planned)",
     "real check mode: compares pip's installed versions"),
    ("apt-install", "ansible.builtin.apt", "real check mode"),
    ("link-layout: links", "ansible.builtin.file state=link force=no", "real check mode"),
    ("link-layout: link-time stub library", "ansible.builtin.shell + creates:",
     "check mode reports 'would run' unless it exists; never runs"),
    ("env (drop-in / profile.d)", "ansible.builtin.copy content= backup=yes + handlers",
     "real check mode and --diff"),
    ("exec-start drop-in", "ansible.builtin.copy content= backup=yes + handlers",
     "real check mode and --diff"),
    ("preconditions", "ansible.builtin.command (read-only script) + assert",
     "runs in check mode too (check_mode: false, changed_when: false)"),
    ("probes", "copy + command in a private dir", "skipped in check mode"),
]  # fmt: skip


def map_step(plan: Plan, index: int, step: Step, facts: dict[str, Any]) -> Mapped:
    """The step's operation as tasks (refused with the operation's reason if it has none)."""
    ctx = Ctx(index=index, action=step.action, facts=facts, service=plan.target.service)
    return step.operation.ansible(ctx)


def _readiness_tasks(plan: Plan, units: list[str]) -> list[dict[str, Any]]:
    """After the restart handlers: each unit in scope must answer GET /health 200 (as the
    launch probe decides; a JIT build at start-up takes minutes) and be active."""
    out: list[dict[str, Any]] = []
    when = "not ansible_check_mode and remedy_restart | bool"
    for unit in units:
        svc = next((s for s in plan.facts.services if s.name == unit), None)
        m = re.search(r"--port[= ](\d+)", (svc.exec_start or "") if svc else "")
        url = f"http://127.0.0.1:{m.group(1) if m else 30000}/health"
        out.append({
            "name": Unsafe(f"remedy: wait until {unit} is ready (GET {url} 200)"),
            "ansible.builtin.uri": {"url": U(url), "status_code": 200},
            "register": "remedy_health", "until": "remedy_health.status == 200",
            "retries": 90, "delay": 10, "when": when,
        })  # fmt: skip
        out.append({
            "name": Unsafe(f"remedy: {unit} is active"),
            "ansible.builtin.command": {"argv": ["systemctl", "is-active", "--", U(unit)]},
            "changed_when": False, "when": when,
        })  # fmt: skip
    return out


def system_python(facts: dict[str, Any]) -> str:
    """The interpreter Ansible's modules run with: the system python the facts found
    (prefix /usr, else /usr/local), else Debian's and RHEL's /usr/bin/python3."""
    prefixes = {posixpath.normpath(p["path"]) for p in facts.get("pythons", []) if p.get("path")}
    for prefix in ("/usr", "/usr/local"):
        if prefix in prefixes:
            return f"{prefix}/bin/python3"
    return "/usr/bin/python3"


# --------------------------------------------------------------------------------------------
# preconditions (a stdlib script run on the host with the host's python3)
# --------------------------------------------------------------------------------------------

PRECHECK = r"""
import json, os, subprocess, sys
spec = json.loads(sys.argv[1])
problems, done = [], []
def versions(python, names):
    code = ("import json, sys\nfrom importlib import metadata\nout = {}\n"
            "for n in sys.argv[1:]:\n    try: out[n] = metadata.version(n)\n"
            "    except Exception: out[n] = None\nprint(json.dumps(out))")
    exe = os.path.join(python, "bin", "python")
    r = subprocess.run([exe, "-c", code] + names, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    if r.returncode != 0:
        return None
    return json.loads(r.stdout.decode())
for step in spec["steps"]:
    n, at_after = step["index"], True
    for c in step["checks"]:
        k = c["kind"]
        if k == "packages":
            if not os.path.exists(os.path.join(c["python"], "bin", "pip")):
                problems.append("step %d: %s/bin/pip is missing" % (n, c["python"]))
                at_after = False
                continue
            v = versions(c["python"], [p["name"] for p in c["pins"]])
            if v is None:
                problems.append("step %d: %s/bin/python does not run" % (n, c["python"]))
                at_after = False
                continue
            for p in c["pins"]:
                have = v.get(p["name"])
                if p["after"] is None:
                    at_after = at_after and have is not None
                elif have == p["after"]:
                    pass
                elif have == p["before"]:
                    at_after = False
                else:
                    problems.append("step %d: %s in %s is %s; the plan was made from %s "
                                    "and would install %s" % (n, p["name"], c["python"], have,
                                    p["before"] or "nothing", p["after"]))
                    at_after = False
        elif k == "link":
            p = c["path"]
            if os.path.islink(p) and os.readlink(p) == c["target"]:
                pass
            elif os.path.lexists(p):
                problems.append("step %d: %s exists and is not a link to %s (the plan saw it "
                                "missing)" % (n, p, c["target"]))
                at_after = False
            else:
                at_after = False
        elif k == "exists":
            at_after = at_after and os.path.exists(c["path"])
        elif k == "file":
            try:
                with open(c["path"], encoding="utf-8", errors="replace") as f:
                    at_after = at_after and f.read() == c["content"]
            except OSError:
                at_after = False
        elif k == "apt":
            r = subprocess.run(["dpkg-query", "-W", "-f=${Status}\n"] + c["packages"],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE)
            st = r.stdout.decode().split("\n")
            at_after = at_after and r.returncode == 0 and all(
                s.endswith(" installed") for s in st if s)
        elif k == "dir":
            if not os.path.isdir(c["path"]):
                problems.append("step %d: %s is not a directory (the plan's %s)"
                                % (n, c["path"], c["what"]))
                at_after = False
    if at_after:
        done.append(n)
print(json.dumps({"problems": problems, "done": done}))
"""


def _prefix_checks(step: Step) -> list[dict[str, Any]]:
    out = []
    for key in ("prefix", "python"):
        v = step.params.get(key)
        if isinstance(v, str) and v.startswith("/"):
            out.append({"kind": "dir", "path": v, "what": key})
    return out


# --------------------------------------------------------------------------------------------
# probes
# --------------------------------------------------------------------------------------------


def _predicted_facts(plan: Plan) -> list[dict[str, Any]]:
    """The plan's facts before each step and after the last one (the planner's own effects
    replayed), so probes see the environment the steps make."""
    from remedy.knowledge.loader import load_knowledge
    from remedy.planner.provider import FactsProvider, StepSpec

    provider = FactsProvider(load_knowledge())
    state = plan.facts.model_dump()
    state["workload"] = plan.target.model_dump()
    state["shell_env"] = {
        k: v for k, v in (state.get("shell_env") or {}).items() if k not in _SESSION_ENV
    }
    out = [copy.deepcopy(state)]
    for st in plan.steps:
        if st.action in provider.kb.actions:
            provider.apply_step(state, StepSpec(st.action, tuple(sorted(st.params.items()))))
        out.append(copy.deepcopy(state))
    return out


def _probe_list(
    plan: Plan, verify: str
) -> tuple[list[tuple[str, dict[str, Any], str | None]], list[str]]:
    """(probe, params, consumer) to run after the steps, and notes on what is not run."""
    want: list[tuple[str, dict[str, Any], str | None]] = []
    notes: list[str] = []
    for st in plan.steps:
        if st.probe in _NO_HOST_WORK:
            notes.append(f"step {plan.steps.index(st) + 1}'s probe '{st.probe}' re-evaluates "
                         "rules on the controller: not in the playbook")  # fmt: skip
        elif st.probe in _BUILD:
            want += [("compile-probe", st.params, None), ("link-probe", st.params, None)]
        elif st.probe in _LAUNCH:
            want.append(("env-probe", st.params, None))
        else:
            want.append((st.probe, st.params, None))
    if verify == "full":
        for v in plan.verification:
            if v.probe in _LAUNCH:
                want.append(("env-probe", {}, None))
                notes.append(f"{v.consumer}: the launch probe is not exported (restart the "
                             "service and watch its log); env-probe instead")  # fmt: skip
            elif v.probe != "-":
                want.append((v.probe, dict(v.params), v.consumer))
                want += [(f, dict(v.params), v.consumer) for f in v.fallbacks]
    seen: set[str] = set()
    out = []
    for p, params, consumer in want:
        key = json.dumps([p, params, consumer], sort_keys=True, default=str)
        if key not in seen:
            seen.add(key)
            out.append((p, params, consumer))
    return out, notes


# The probe's private dir is a fixed name in /var/tmp, which every user can write: made with
# an exclusive mkdir (a name someone else created first, or a link, fails the probe instead
# of holding the scripts root then runs: `file: state=directory` kept another user's
# directory as theirs). A leftover of remedy's own (root's directory: a run killed before its
# cleanup) is removed first; in sticky /var/tmp nobody else can rename it.
PRIVATE_DIR = (
    'd=$1; if [ -e "$d" ] || [ -L "$d" ]; then '
    'if [ -d "$d" ] && [ ! -L "$d" ] && [ "$(stat -c %u -- "$d")" = "$(id -u)" ]; '
    'then rm -rf -- "$d"; '
    'else echo "$d exists and is not this user\'s own directory: refusing to use it" >&2; exit 1; fi; '
    'fi; mkdir -m 0700 -- "$d"'
)


def _probe_tasks(
    plan: Plan, facts: Facts, verify: str, base: str
) -> tuple[list[dict[str, Any]], list[str]]:
    from remedy.export.probecapture import NotCapturable, capture_probe

    wanted, notes = _probe_list(plan, verify)
    tasks: list[dict[str, Any]] = []
    captured_any: dict[str, bool] = {}
    for k, (probe, params, consumer) in enumerate(wanted):
        d = f"{base}-probe-{k + 1}"
        try:
            cap = capture_probe(probe, facts, d, params=params, consumer=consumer)
        except NotCapturable as e:
            notes.append(f"{probe}{f' ({consumer})' if consumer else ''} not exported: {e}")
            continue
        captured_any[consumer or probe] = True
        label = f"remedy verify: {probe}" + (f" ({consumer})" if consumer else "")
        inner: list[dict[str, Any]] = [
            {"name": Unsafe(label + ": private dir"),
             "ansible.builtin.command": {"argv": ["sh", "-c", Unsafe(PRIVATE_DIR), "sh", U(d)]}},
        ]  # fmt: skip
        for path, (data, mode) in cap.files.items():
            inner.append({
                "name": Unsafe(f"{label}: {posixpath.basename(path)}"),
                "ansible.builtin.copy": {"dest": U(path), "content": U(data.decode()),
                                         "mode": f"0{mode:o}"},
            })  # fmt: skip
        for j, check in enumerate(cap.trust_checks):
            inner.append({
                "name": Unsafe(f"{label}: only trusted binaries run ({j + 1})"),
                "ansible.builtin.command": {"argv": U(check)},
            })  # fmt: skip
        reg = f"remedy_probe_{k + 1}"
        inner.append({
            "name": Unsafe(label),
            "ansible.builtin.command": {"argv": U(cap.argv)},
            "register": reg,
            # a probe that cannot run here (exit 3 + REMEDY-SKIP) is not a failure of the fix
            "failed_when": f"{reg}.rc != 0 and not ({reg}.rc == 3 and "
                           f"'REMEDY-SKIP' in {reg}.stdout)",
        })  # fmt: skip
        for t in inner:  # a probe's own private dir is not a change to the host
            t.update({"changed_when": False, "diff": False})
        tasks.append({
            "name": Unsafe(label),
            "block": inner,
            "always": [{"name": Unsafe(label + ": remove the private dir"),
                        "ansible.builtin.file": {"path": U(d), "state": "absent"},
                        "changed_when": False, "diff": False}],
        })  # fmt: skip
    return tasks, notes


# --------------------------------------------------------------------------------------------
# the playbook
# --------------------------------------------------------------------------------------------


def _comment(text: str) -> str:
    """Host text inside a `#` comment line: YAML (PyYAML and libyaml, which Ansible reads the
    playbook with) also ends a line at NEL, LINE SEPARATOR and PARAGRAPH SEPARATOR, so a
    host name holding U+2028 wrote its own YAML lines (a `%TAG` directive, content) there."""
    return re.sub(r"[\x00-\x1f\x7f-\x9f\u2028\u2029]", " ", text)


def _trust_tasks(i: int, st: Step) -> list[dict[str, Any]]:
    """Before a step runs a host interpreter (pip's python): remedy.trust's check, as
    `remedy run` makes it, so the playbook never runs, as root, a venv another user owns.
    Read-only, so it runs in check mode too."""
    from remedy.trust import trust_argv, write_check_argv

    out: list[dict[str, Any]] = []
    argv = write_check_argv(st.operation.writes_under())
    if argv is not None:
        out.append({
            "name": Unsafe(f"remedy step {i + 1}: only a tree root or this user owns is written"),
            "ansible.builtin.command": {"argv": U(argv)},
            "changed_when": False,
            "check_mode": False,
        })  # fmt: skip
    argv = trust_argv([], st.operation.runs_pythons())
    if argv is None:
        return out
    return out + [{
        "name": Unsafe(f"remedy step {i + 1}: only an interpreter root or this user owns runs"),
        "ansible.builtin.command": {"argv": U(argv)},
        "changed_when": False,
        "check_mode": False,
    }]  # fmt: skip


def _precheck_trust_tasks(mapped: list[Mapped]) -> list[dict[str, Any]]:
    """The precondition script runs `ENV/bin/python` of every pip step to read its versions,
    as root and in check mode too, before any step's own trust task: the same check
    (remedy.trust.trust_argv) runs first, so a venv another user owns never runs its code as
    root, not even for `--check` (it did: the preview ran uid 65534's `bin/python`)."""
    from remedy.trust import trust_argv

    pythons = [
        posixpath.join(c["python"], "bin", "python")
        for m in mapped
        for c in m.checks
        if c.get("kind") == "packages"
    ]
    argv = trust_argv([], list(dict.fromkeys(pythons)))
    if argv is None:
        return []
    return [{
        "name": "remedy: only interpreters root or this user owns are run to read versions",
        "ansible.builtin.command": {"argv": U(argv)},
        "changed_when": False,
        "check_mode": False,
    }]  # fmt: skip


# What every task after the first runs in: the system PATH, and the login environment's
# variables the first task judged another user's set empty (Python, pip, ld.so, perl and
# OpenSSL take an empty one as unset), PIP_NO_CACHE_DIR=1 where pip's cache is theirs.
_ENV = "{{ remedy_env | default({'PATH': " + json.dumps(SYSTEM_PATH) + "}) }}"


def _login_env_tasks(compiles: bool) -> list[dict[str, Any]]:
    """The play's first tasks: judge the host's login environment (its /etc/environment
    through pam_env, sshd's SetEnv, sudo's kept variables) before any module's Python starts
    in it. Every module is `python3 AnsiballZ_*.py` started in that environment: a
    PYTHONPATH naming uid 65534's directory ran its sitecustomize as root in every task, in
    `--check` too (tests/security/test_export_login_env.py). `raw` runs no Python on the
    host; remedy.trust.login_env_judgement names what `remedy run` leaves out over SSH, and
    the play's `environment:` (applied inside the become shell, before the module's
    interpreter) sets those empty, and HOME the passwd home where the login's names a place
    another user can change (its user site-packages, `.pth` files and all, is on the system
    python3's sys.path of every module run as root: tests/security/test_export_login_env.py).
    gcc's variables are left out by the shell tasks' own
    guard (remedy.trust.UNSET_ONLY_VARS). compiles: a step compiles (Operation.runs_compiler:
    the stub's `cc`, ansible.builtin.pip's source build, ansible.builtin.apt's dkms build,
    each with the play's PATH, the system PATH): the task also fails, before any step, when
    that PATH finds another user's cc, gcc, c++, g++, as or ld, as `remedy run` refuses such
    a plan (remedy.trust.step_path_judgement): the stub task's `cc` ran uid 65534's `as` from
    a root-owned /usr/local/bin (tests/security/test_export_compile_path.py). Every plan: the
    task fails when an entry of a directory on that PATH is another user's (a step's `ln`,
    a build's `ninja` or `make`: redteam-27)."""
    from remedy.trust import (
        DEFAULT_VALUES,
        UNSET_ONLY_VARS,
        login_env_judgement,
        step_path_judgement,
    )

    script = f"PATH={SYSTEM_PATH}; export PATH\n" + login_env_judgement()
    script += step_path_judgement(compiles)
    lines = "remedy_login.stdout_lines | map('trim') | list"
    names = (
        f"{lines} | select('match', '^[A-Za-z_][A-Za-z0-9_]*$')"
        f" | reject('in', {json.dumps([*UNSET_ONLY_VARS, *DEFAULT_VALUES])}) | list"
    )
    defaults = "".join(
        f" | combine({{{json.dumps(k)}: {json.dumps(v)}}} if {json.dumps(k)} in ({lines}) else {{}})"
        for k, v in DEFAULT_VALUES.items()
    )  # set to their default, not empty (remedy.trust.DEFAULT_VALUES)
    homes = f"{lines} | select('match', '^~/')"  # `~HOME`: the passwd home replaces HOME
    value = (
        "{{ {'PATH': " + json.dumps(SYSTEM_PATH) + "}"
        f" | combine(dict({names} | zip_longest([], fillvalue='')))"
        f" | combine({{'PIP_NO_CACHE_DIR': '1'}} if '+' in ({lines}) else {{}})"
        + defaults
        + f" | combine({{'HOME': ({homes} | first)[1:]}} if ({homes} | list) else {{}}) }}}}"
    )
    return [
        {
            "name": "remedy: which login variables name another user's code or configuration",
            "ansible.builtin.raw": Unsafe(script),
            "args": {"executable": "/bin/sh"},
            "register": "remedy_login",
            "changed_when": False,
            "check_mode": False,
        },
        {
            "name": "remedy: every later task runs without them",
            "ansible.builtin.set_fact": {"remedy_env": value},
        },
    ]


def export_ansible(plan: Plan, *, verify: str = "cheap", hosts: str = "all",
                   now: datetime.datetime | None = None) -> str:  # fmt: skip
    """The playbook text for `plan`."""
    if verify not in VERIFY_MODES:
        raise ExportError(f"--verify must be one of {', '.join(VERIFY_MODES)}, not {verify!r}")
    from remedy.knowledge.loader import load_knowledge
    from remedy.operations.verify import verify_saved_plan

    # a plan is exported only if it is what remedy plans from its own facts (nothing else
    # is trusted to become playbook tasks)
    verify_saved_plan(plan, load_knowledge())
    if plan.status in ("partial", "impossible"):
        raise ExportError(
            f"the plan is {plan.status}: {'; '.join(plan.unresolved) or 'no fix'}",
            hint="a playbook of an incomplete plan would not fix the host",
        )
    predicted = _predicted_facts(plan)
    mapped: list[Mapped] = []
    for i, st in enumerate(plan.steps):
        m = map_step(plan, i, st, predicted[i])
        m.checks = _prefix_checks(st) + m.checks
        m.apply[:0] = _trust_tasks(i, st)
        mapped.append(m)
    digest = plan.facts_digest.removeprefix("sha256:")[:16]
    base = f"/var/tmp/remedy-ansible-{digest}"
    final = Facts.model_validate(predicted[-1])
    probes, notes = _probe_tasks(plan, final, verify, base) if plan.steps else ([], [])
    reloads = any(m.reloads for m in mapped)
    when_ = datetime.datetime.now(datetime.timezone.utc) if now is None else now
    stamp = when_.strftime("%Y-%m-%dT%H:%M:%SZ")

    spec = {"steps": [{"index": i + 1, "checks": m.checks} for i, m in enumerate(mapped)]}
    compiles = any(st.operation.runs_compiler() for st in plan.steps)
    tasks: list[dict[str, Any]] = _login_env_tasks(compiles) + _precheck_trust_tasks(mapped)
    tasks += [
        {
            "name": "remedy: does the host still match the facts the plan was made from?",
            "ansible.builtin.command": {
                "argv": ["python3", "-c", Unsafe(PRECHECK), U(json.dumps(spec, sort_keys=True))]
            },
            "register": "remedy_precheck",
            "check_mode": False,
            "changed_when": False,
        },
        {
            "name": "remedy: read the precondition result",
            "ansible.builtin.set_fact": {
                "remedy_pre": "{{ remedy_precheck.stdout | from_json }}",
            },
        },
        {
            "name": "remedy: refuse a host that matches neither the plan's before nor after state",
            "ansible.builtin.assert": {
                "that": ["remedy_pre.problems | length == 0"],
                "fail_msg": "stale plan for this host (run `remedy plan` again): "
                "{{ remedy_pre.problems | join('; ') }}",
                "success_msg": "the host matches the plan's facts",
                "quiet": True,
            },
        },
    ]
    steps_tasks: list[dict[str, Any]] = []
    undo: list[dict[str, Any]] = []
    for i, (st, m) in enumerate(zip(plan.steps, mapped, strict=True)):
        steps_tasks.append({
            "name": Unsafe(f"remedy step {i + 1}: {st.title}"),
            "when": f"{i + 1} not in remedy_pre.done",
            "block": m.apply,
        })  # fmt: skip
        undo = m.undo + undo
    if reloads:
        undo.append({
            "name": "remedy: systemd daemon-reload after the restore",
            "ansible.builtin.systemd": {"daemon_reload": True},
        })  # fmt: skip
    main = [*steps_tasks, {"name": "remedy: reload/restart now", "meta": "flush_handlers"}]
    from remedy.executor.services import units_in_scope

    units = units_in_scope(plan) or ([plan.target.service] if plan.target.service else [])
    main += _readiness_tasks(plan, units)
    if probes:
        main.append({
            "name": "remedy: verify with remedy's probes (not in check mode: nothing changed)",
            "when": "not ansible_check_mode and remedy_verify | bool",
            "block": probes,
        })  # fmt: skip
    rescue = [
        *undo,
        {
            "name": "remedy: the run failed; what this run changed was undone",
            "ansible.builtin.fail": {
                "msg": "remedy playbook failed at '{{ ansible_failed_task.name | default('?') }}'"
                ": {{ ansible_failed_result.msg | default(ansible_failed_result.stderr"
                " | default('')) }}; what this run changed was undone",
            },
        },
    ]
    if plan.steps:
        tasks.append({"name": "remedy: apply and verify", "block": main, "rescue": rescue})
    if plan.steps and units:
        # the same outcome names as `remedy run` (remedy.outcomes): a service is `fixed` only
        # once restarted and seen ready; without the restart its steps are applied, no more
        tasks.append({
            "name": "remedy: outcome",
            "when": "not ansible_check_mode",
            "ansible.builtin.debug": {"msg": (
                "{{ ('fixed: ' ~ (remedy_units | join(', ')) ~ ' restarted, active and ready')"
                " if remedy_restart | bool else ('applied-restart-pending: restart '"
                " ~ (remedy_units | join(' '))) }}")},
        })  # fmt: skip
    handlers: list[dict[str, Any]] = [
        {"name": "remedy: systemd daemon-reload",
         "ansible.builtin.systemd": {"daemon_reload": True}},
    ]  # fmt: skip
    if units:
        handlers.append({
            "name": "remedy: restart the service",
            "ansible.builtin.systemd": {"name": U(units[0]) if len(units) == 1 else "{{ item }}",
                                        "state": "restarted"},
            **({"loop": U(units)} if len(units) > 1 else {}),
            "when": "remedy_restart | bool",
        })  # fmt: skip
    else:
        handlers.append({"name": "remedy: restart the service", "ansible.builtin.debug": {
            "msg": "no service in the plan: restart the server yourself"}})  # fmt: skip
    play = {
        "name": Unsafe(f"remedy: {len(plan.steps)} step(s) planned for {plan.host}"),
        "hosts": U(hosts),
        "gather_facts": False,
        # every task's commands (stat, id, readlink in the trust checks...) from the system
        # PATH, as remedy's transports run them (remedy.transport.base.SYSTEM_PATH): root's
        # PATH may start with a directory another user owns; less the login environment's
        # variables that name another user's code (_login_env_tasks)
        "environment": _ENV,
        "vars": {
            # the host's system python from the plan's facts, never Ansible's discovery
            # (which can pick a venv's python from PATH, as it did on seed-chain-b)
            "ansible_python_interpreter": U(system_python(plan.facts.model_dump())),
            "remedy_restart": True,  # restart the service after its drop-ins changed
            "remedy_units": U(units),  # the units in the plan's scope (remedy.scope)
            "remedy_verify": True,  # run remedy's probes after the steps
            "remedy_plan": U(
                {
                    "host": plan.host,
                    "facts_digest": plan.facts_digest,
                    "remedy_version": plan.remedy_version,
                    "exported_by": __version__,
                    "exported_at": stamp,
                    "status": plan.status,
                    "steps": [f"{s.action}: {s.title}" for s in plan.steps],
                    "verify": verify,
                    "not_verified": notes,
                }
            ),
        },
        "handlers": handlers,
        "tasks": tasks,
    }
    head = [
        f"# remedy plan for {_comment(plan.host)} exported as an Ansible playbook",
        f"# plan facts digest {_comment(plan.facts_digest)}; planned by remedy "
        f"{_comment(plan.remedy_version)}; exported by remedy {__version__} at {stamp}",
        f"# verification: {verify} ({len(probes)} probe(s) after the steps)",
        "# run: ansible-playbook -i INVENTORY THIS.yml --check --diff   (preview, changes nothing)",
        "#      ansible-playbook -i INVENTORY THIS.yml [-e remedy_restart=false] [-e remedy_verify=false]",
        "# needs on each host: python3; ansible.builtin.pip also needs python3-setuptools or",
        "# python3-packaging there. Run as root (or with --become).",
        "# rollback: a failed step or probe undoes what this run changed (rescue); there is no",
        "# journal or host lock as with `remedy run`, and no undo after the playbook succeeded.",
    ]
    body = yaml.dump([play], Dumper=Dumper, sort_keys=False, allow_unicode=True, width=100)
    return "\n".join(head) + "\n---\n" + body
