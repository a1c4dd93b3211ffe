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
import shlex
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import yaml

from remedy import __version__
from remedy.errors import InputError
from remedy.executor.runner import SESSION_ENV
from remedy.model import Facts, Plan, Step
from remedy.units.dropin import dropin_path, render_dropin

VERIFY_MODES = ("cheap", "full")
# Step probes the cheap verification replaces, as `remedy run --verify cheap` does.
_BUILD = {"flashinfer-jit-build", "sglang-jit-build", "torch-ext-build", "jit-run-probe"}
_LAUNCH = {"launch-probe"}
# Probes whose host work is a GPU (no stand-in at export time) or nothing at all.
_NO_HOST_WORK = {"static"}
_SESSION_ENV = SESSION_ENV  # per-connection values are not facts about the host


class ExportError(InputError):
    """The plan cannot be expressed as a playbook (an action without a mapping, …)."""


# --------------------------------------------------------------------------------------------
# YAML: data from the plan is !unsafe
# --------------------------------------------------------------------------------------------


class Unsafe(str):
    """A string from the plan or the host: Ansible must never template it."""


class _Dumper(yaml.SafeDumper):
    pass


def _unsafe_repr(dumper: yaml.SafeDumper, data: Unsafe) -> yaml.Node:
    style = "|" if "\n" in data else None
    return dumper.represent_scalar("!unsafe", str(data), style=style)


_Dumper.add_representer(Unsafe, _unsafe_repr)
_Dumper.ignore_aliases = lambda self, data: True  # type: ignore[method-assign]


def U(value: Any) -> Any:  # noqa: N802 - reads as a tag at the call sites
    """Tag every string inside `value` as unsafe."""
    if isinstance(value, str):
        return Unsafe(value)
    if isinstance(value, list):
        return [U(v) for v in value]
    if isinstance(value, dict):
        return {k: U(v) for k, v in value.items()}
    return value


# --------------------------------------------------------------------------------------------
# steps → tasks
# --------------------------------------------------------------------------------------------


@dataclass
class Mapped:
    """One step as tasks: what applies it, what undoes what it changed, what the precondition
    script checks (the step's before- and after-state), and the mapping's name for the docs."""

    apply: list[dict[str, Any]] = field(default_factory=list)
    undo: list[dict[str, Any]] = field(default_factory=list)
    checks: list[dict[str, Any]] = field(default_factory=list)
    reloads: bool = False  # changes a unit: daemon-reload (and the restart handler)


@dataclass
class Ctx:
    plan: Plan
    index: int  # 0-based
    step: Step
    facts: dict[str, Any]  # the plan's facts as predicted before this step

    def reg(self, j: int) -> str:
        return f"remedy_s{self.index + 1}_t{j}"

    def name(self, what: str) -> Unsafe:
        return Unsafe(f"remedy step {self.index + 1} ({self.step.action}): {what}")


def _changed(reg: str) -> str:
    return f"{reg} is defined and {reg} is changed"


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
            "ansible.builtin.command": {"argv": ["systemctl", "is-active", U(unit)]},
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


def _python_env(facts: dict[str, Any], path: str) -> dict[str, Any] | None:
    norm = posixpath.normpath(path)
    return next(
        (p for p in facts.get("pythons", []) if posixpath.normpath(p["path"]) == norm), None
    )


def _norm(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _pip_step(ctx: Ctx, cmd: str) -> Mapped:
    words = shlex.split(cmd)
    if (
        len(words) < 5
        or not words[0].endswith("/bin/python")
        or words[1:4] != ["-m", "pip", "install"]
    ):
        raise ExportError(f"step {ctx.index + 1} ({ctx.step.action}): not a pip install: {cmd!r}")
    python = words[0][: -len("/bin/python")]
    extra: list[str] = []
    state = "present"
    reqs: list[str] = []
    it = iter(words[4:])
    for w in it:
        if w == "--no-deps":
            extra.append(w)
        elif w == "--force-reinstall":
            state = "forcereinstall"
        elif w in ("--index-url", "--extra-index-url"):
            extra += [w, next(it, "")]
        elif w.startswith("-"):
            raise ExportError(
                f"step {ctx.index + 1} ({ctx.step.action}): pip option {w!r} has no mapping"
            )
        else:
            reqs.append(w)
    env = _python_env(ctx.facts, python) or {}
    before = {_norm(k): v for k, v in (env.get("packages") or {}).items()}
    pins: list[dict[str, Any]] = []
    for r in reqs:
        name, _, version = r.partition("==")
        pins.append({"name": name, "before": before.get(_norm(name)), "after": version or None})
    m = Mapped()
    reg = ctx.reg(0)
    task: dict[str, Any] = {
        "name": ctx.name("pip install " + " ".join(reqs)),
        "ansible.builtin.pip": {
            "name": U(reqs),
            "executable": U(f"{python}/bin/pip"),
            "state": state,
        },
        "register": reg,
    }
    if extra:
        task["ansible.builtin.pip"]["extra_args"] = U(shlex.join(extra))
    changes = [f"{p['name']} {p['before'] or '(none)'} -> {p['after'] or 'any'}" for p in pins]
    m.apply.append({
        "name": ctx.name("what pip would change (check mode has no pip diff)"),
        "ansible.builtin.debug": {"msg": U("planned: " + ", ".join(changes))},
        "when": "ansible_check_mode",
    })  # fmt: skip
    m.apply.append(task)
    back = [f"{p['name']}=={p['before']}" for p in pins if p["after"] and p["before"]]
    gone = [p["name"] for p in pins if p["after"] and not p["before"]]
    if back:
        m.undo.append({
            "name": ctx.name("pip back to the plan's versions " + " ".join(back)),
            "ansible.builtin.pip": {"name": U(back), "executable": U(f"{python}/bin/pip"),
                                    "extra_args": "--no-deps"},
            "when": _changed(reg),
        })  # fmt: skip
    if gone:
        m.undo.append({
            "name": ctx.name("pip uninstall what the plan's host did not have"),
            "ansible.builtin.pip": {"name": U(gone), "executable": U(f"{python}/bin/pip"),
                                    "state": "absent"},
            "when": _changed(reg),
        })  # fmt: skip
    m.checks.append({"kind": "packages", "python": python, "pins": pins})
    return m


_APT = re.compile(r"^DEBIAN_FRONTEND=noninteractive apt-get install -y (.+)$")


def _apt_step(ctx: Ctx, cmd: str) -> Mapped:
    m_ = _APT.match(cmd.strip())
    if not m_:
        raise ExportError(f"step {ctx.index + 1} ({ctx.step.action}): not an apt install: {cmd!r}")
    pkgs = shlex.split(m_.group(1))
    reg = ctx.reg(0)
    m = Mapped()
    m.apply.append({
        "name": ctx.name("apt install " + " ".join(pkgs)),
        "ansible.builtin.apt": {"name": U(pkgs), "state": "present"},
        "register": reg,
    })  # fmt: skip
    m.undo.append({
        "name": ctx.name("apt remove what this run installed"),
        "ansible.builtin.apt": {"name": U(pkgs), "state": "absent"},
        "when": _changed(reg),
    })  # fmt: skip
    m.checks.append({"kind": "apt", "packages": pkgs})
    return m


def package_step(ctx: Ctx) -> Mapped:
    """pip or apt installs: the step's own command says which and what (its pins)."""
    out = Mapped()
    for j, cmd in enumerate(c for c in ctx.step.commands if not c.lstrip().startswith("#")):
        m = _apt_step(ctx, cmd) if _APT.match(cmd.strip()) else _pip_step(ctx, cmd)
        for t in m.apply:  # one register per command
            if "register" in t:
                old = t["register"]
                t["register"] = ctx.reg(j)
                for u in m.undo:
                    u["when"] = u["when"].replace(old, ctx.reg(j))
        out.apply += m.apply
        out.undo = m.undo + out.undo
        out.checks += m.checks
    if not out.apply:
        raise ExportError(f"step {ctx.index + 1} ({ctx.step.action}) has no command to map")
    return out


def layout_step(ctx: Ctx) -> Mapped:
    """Symlinks with `file: state=link` (force: no: an existing file is never replaced), the
    link-time stub with the step's own command under `creates:`."""
    m = Mapped()
    j = 0
    for t in ctx.step.touches:
        reg = ctx.reg(j)
        if t.kind == "symlink":
            src = (t.detail or "").removeprefix("→").strip()
            if not src or " " in src:
                raise ExportError(
                    f"step {ctx.index + 1} ({ctx.step.action}): symlink {t.target} has no "
                    f"'→ TARGET' detail ({t.detail!r})"
                )
            m.apply.append({
                "name": ctx.name(f"link {t.target} -> {src}"),
                "ansible.builtin.file": {"path": U(t.target), "src": U(src), "state": "link",
                                         "force": False},
                "register": reg,
            })  # fmt: skip
            m.checks.append({"kind": "link", "path": t.target, "target": src})
        elif t.kind == "file":
            quoted = shlex.quote(t.target)
            cmd = next((c for c in ctx.step.commands if f"-o {quoted}" in c), None)
            if cmd is None:
                raise ExportError(
                    f"step {ctx.index + 1} ({ctx.step.action}): no command creates {t.target}"
                )
            d = posixpath.dirname(t.target)
            m.apply.append({
                "name": ctx.name(f"directory {d}"),
                "ansible.builtin.file": {"path": U(d), "state": "directory", "mode": "0755"},
                "register": reg + "_dir",
            })  # fmt: skip
            m.undo.insert(0, {
                "name": ctx.name(f"remove {d} (this run created it)"),
                "ansible.builtin.file": {"path": U(d), "state": "absent"},
                "when": _changed(reg + "_dir"),
            })  # fmt: skip
            m.apply.append({
                "name": ctx.name(f"create {t.target}"),
                "ansible.builtin.shell": {"cmd": U(cmd), "creates": U(t.target)},
                "register": reg,
            })  # fmt: skip
            m.checks.append({"kind": "exists", "path": t.target})
        else:
            continue
        m.undo.insert(0, {
            "name": ctx.name(f"remove {t.target} (this run created it)"),
            "ansible.builtin.file": {"path": U(t.target), "state": "absent"},
            "when": _changed(reg),
        })  # fmt: skip
        j += 1
    return m


def _env_effects(ctx: Ctx) -> tuple[dict[str, str], list[str]]:
    """The variables the action sets and unsets, from its effects in the knowledge, evaluated
    in the step's context (as the planner did)."""
    from remedy.evaluate import base_context
    from remedy.knowledge.expr import plain
    from remedy.knowledge.loader import load_knowledge

    kb = load_knowledge()
    ca = kb.actions.get(ctx.step.action)
    if ca is None:
        raise ExportError(f"step {ctx.index + 1}: action {ctx.step.action!r} is not in the "
                          "knowledge any more; run `remedy plan` again")  # fmt: skip
    env: dict[str, str] = {}
    unset: list[str] = []
    for eff in ca.effects:
        ectx = {**base_context(kb, ctx.facts), **ctx.step.params}
        if "env" in eff:
            for var, e in eff["env"].items():
                val = plain(e(**ectx))
                if val is None:
                    unset.append(var)
                else:
                    env[var] = str(val)
        elif "unset_env" in eff:
            unset += list(eff["unset_env"])
    if not env and not unset:
        raise ExportError(f"step {ctx.index + 1} ({ctx.step.action}) changes no variable")
    return env, unset


def _file_task(ctx: Ctx, j: int, path: str, content: str, mode: str, notify: bool) -> Mapped:
    m = Mapped(reloads=notify)
    reg = ctx.reg(j)
    d = posixpath.dirname(path)
    m.apply.append({
        "name": ctx.name(f"directory {d}"),
        "ansible.builtin.file": {"path": U(d), "state": "directory", "mode": "0755"},
        "register": ctx.reg(j) + "_dir",
    })  # fmt: skip
    task: dict[str, Any] = {
        "name": ctx.name(f"write {path}"),
        "ansible.builtin.copy": {"dest": U(path), "content": U(content), "mode": mode,
                                 "backup": True},
        "register": reg,
    }  # fmt: skip
    if notify:
        task["notify"] = ["remedy: systemd daemon-reload", "remedy: restart the service"]
    m.apply.append(task)
    m.undo += [
        {
            "name": ctx.name(f"restore {path} from its backup"),
            "ansible.builtin.copy": {"src": "{{ " + reg + ".backup_file }}", "dest": U(path),
                                     "remote_src": True, "mode": "preserve"},
            "when": f"{_changed(reg)} and {reg}.backup_file is defined",
        },
        {
            "name": ctx.name(f"remove {path} (this run created it)"),
            "ansible.builtin.file": {"path": U(path), "state": "absent"},
            "when": f"{_changed(reg)} and {reg}.backup_file is not defined",
        },
        {
            "name": ctx.name(f"remove {d} (this run created it)"),
            "ansible.builtin.file": {"path": U(d), "state": "absent"},
            "when": _changed(reg + "_dir"),
        },
    ]  # fmt: skip
    m.checks.append({"kind": "file", "path": path, "content": content})
    return m


def env_step(ctx: Ctx) -> Mapped:
    """A variable of the server's environment: a systemd drop-in (one per variable, as
    remedy writes it) for a service, a /etc/profile.d file for a shell-launched server."""
    env, unset = _env_effects(ctx)
    from remedy.scope import LOGIN_SHELL

    # the environment the step was planned in (remedy.scope), else the plan's workload
    scope = ctx.step.scope
    unit = None if scope == LOGIN_SHELL else (scope or ctx.plan.target.service)
    if unit:
        var = next(iter(env), None) or unset[0]
        from remedy.knowledge.functions import dropin_name

        touched = [t.target for t in ctx.step.touches if t.kind == "dropin" and "/" in t.target]
        path = touched[0] if touched else dropin_path(unit, dropin_name(var))
        return _file_task(ctx, 0, path, render_dropin(env, unset), "0644", notify=True)
    files = [t.target for t in ctx.step.touches if t.kind == "file"
             and t.target.startswith("/etc/profile.d/")]  # fmt: skip
    if not files:
        raise ExportError(
            f"step {ctx.index + 1} ({ctx.step.action}): no file holds this change for a "
            "server launched from a shell (it only changes the current shell)"
        )
    lines = [f"export {k}={shlex.quote(v)}" for k, v in env.items()]
    lines += [f"unset {k}" for k in unset]
    return _file_task(ctx, 0, files[0], "\n".join(lines) + "\n", "0644", notify=False)


def exec_start_step(ctx: Ctx) -> Mapped:
    """A drop-in that resets ExecStart= (the touch's detail is the new ExecStart= line)."""
    t = next((t for t in ctx.step.touches if t.kind == "dropin"), None)
    if t is None or not (t.detail or "").startswith("ExecStart="):
        raise ExportError(f"step {ctx.index + 1} ({ctx.step.action}): no ExecStart= drop-in")
    text = f"# written by remedy\n[Service]\nExecStart=\n{t.detail}\n"
    return _file_task(ctx, 0, t.target, text, "0644", notify=True)


MAPPERS: dict[str, Callable[[Ctx], Mapped]] = {
    **dict.fromkeys(
        [
            "pip-align-cuda-wheels", "pip-install-cccl", "pip-install-cuda-toolchain",
            "pip-install-pinned-torch", "pip-reinstall-torch-for-gpu",
            "pip-install-cuda-runtime-major", "pip-align-flashinfer-packages",
            "apt-install-cuda-toolkit", "install-cuda-library-headers", "install-python-headers",
            "pip-install-provider",
        ],
        package_step,
    ),
    "link-layout-symlinks": layout_step,
    **dict.fromkeys(
        [
            "service-env-cuda-home", "shell-env-cuda-home", "env-unset-flashinfer-nvcc",
            "env-unset-flashinfer-arch-list", "env-unset-torch-arch-list", "env-triton-ptxas",
            "env-triton-ptxas-path-for-driver", "env-triton-ptxas-blackwell-path-for-driver",
            "env-nvcc-ccbin", "env-max-jobs",
        ],
        env_step,
    ),
    **dict.fromkeys(["unit-lower-mem-fraction", "unit-disable-custom-all-reduce"], exec_start_step),
}  # fmt: skip

# Actions a playbook must not automate, and why (the step is refused with this reason).
REFUSED = {
    "upgrade-driver": "a driver upgrade and reboot is a manual step",
    "report-kernel-arch": "a report, not a change",
    "report-capture-failure": "a report, not a change",
    "purge-jit-caches": "a one-off cache purge with no idempotent form; run `remedy run`",
    # issue 17: documented manual steps (no typed operation or simulated effect yet)
    "container-image-for-driver": "choosing another image (or a driver upgrade) is a manual step",
    "patch-cuda-math-headers": "patching or replacing CUDA headers is a manual step",
    "pip-install-package-for-gpu": "picking the package build for this GPU is a manual step",
    "env-unset-ld-library-path": "a manual step until typed env operations cover LD_LIBRARY_PATH",
    "pip-upgrade-triton-for-gpu": "the Triton version the torch build pins is chosen by hand",
    "env-triton-libcuda-path": "a manual step until typed env/link operations cover libcuda",
    "pin-build-tool": "pinning a build tool in pip's isolated build env is a manual step",
}

# The step kinds a reader of the playbook meets, for `remedy export --help` and the README.
MAPPING_TABLE = [
    ("pip pins (pip-*)", "ansible.builtin.pip (exact pins, --no-deps as planned)",
     "real check mode: compares pip's installed versions"),
    ("apt installs", "ansible.builtin.apt", "real check mode"),
    ("lib64 layout symlinks", "ansible.builtin.file state=link force=no", "real check mode"),
    ("link-time stub library", "ansible.builtin.shell + creates:",
     "check mode reports 'would run' unless it exists; never runs"),
    ("environment (drop-in / profile.d)", "ansible.builtin.copy content= backup=yes + handlers",
     "real check mode and --diff"),
    ("ExecStart= drop-in", "ansible.builtin.copy content= backup=yes + handlers",
     "real check mode and --diff"),
    ("preconditions", "ansible.builtin.command (read-only script) + assert",
     "runs in check mode too (check_mode: false, changed_when: false)"),
    ("probes", "copy + command in a private dir", "skipped in check mode"),
]  # fmt: skip


def _mapper_by_shape(action: str) -> Callable[[Ctx], Mapped] | None:
    """An action the table does not name, mapped by what its typed effects do: one that only
    sets or unsets variables of the server's environment is an env_step (a drop-in or a
    profile.d file), so a new environment fix is a knowledge change, not a Python one."""
    from remedy.knowledge.loader import load_knowledge

    ca = load_knowledge().actions.get(action)
    if ca is None or not ca.effects:
        return None
    if all(set(e) <= {"env", "unset_env"} for e in ca.effects):
        return env_step
    return None


def map_step(ctx: Ctx) -> Mapped:
    action = ctx.step.action
    if action in REFUSED:
        raise ExportError(f"step {ctx.index + 1}: action {action!r} is not exported: "
                          f"{REFUSED[action]}")  # fmt: skip
    mapper = MAPPERS.get(action) or _mapper_by_shape(action)
    if mapper is None:
        raise ExportError(
            f"step {ctx.index + 1}: action {action!r} has no Ansible mapping",
            hint="known: " + ", ".join(sorted(MAPPERS)),
        )
    return mapper(ctx)


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
             "ansible.builtin.file": {"path": U(d), "state": "directory", "mode": "0700"}},
        ]  # fmt: skip
        for path, (data, mode) in cap.files.items():
            inner.append({
                "name": Unsafe(f"{label}: {posixpath.basename(path)}"),
                "ansible.builtin.copy": {"dest": U(path), "content": U(data.decode()),
                                         "mode": f"0{mode:o}"},
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
    return re.sub(r"[\x00-\x1f\x7f]", " ", text)


def export_ansible(plan: Plan, *, verify: str = "cheap", hosts: str = "all",
                   now: datetime.datetime | None = None) -> str:  # fmt: skip
    """The playbook text for `plan`."""
    if verify not in VERIFY_MODES:
        raise ExportError(f"--verify must be one of {', '.join(VERIFY_MODES)}, not {verify!r}")
    from remedy.planner.plan import facts_digest

    if facts_digest(plan.facts) != plan.facts_digest:
        raise ExportError("the plan's facts do not match its facts_digest (edited or damaged); "
                          "run `remedy plan` again")  # fmt: skip
    if plan.status in ("partial", "impossible"):
        raise ExportError(
            f"the plan is {plan.status}: {'; '.join(plan.unresolved) or 'no fix'}",
            hint="a playbook of an incomplete plan would not fix the host",
        )
    predicted = _predicted_facts(plan)
    mapped: list[Mapped] = []
    for i, st in enumerate(plan.steps):
        m = map_step(Ctx(plan, i, st, predicted[i]))
        m.checks = _prefix_checks(st) + m.checks
        mapped.append(m)
    digest = plan.facts_digest.removeprefix("sha256:")[:16]
    base = f"/var/tmp/remedy-ansible-{digest}"
    final = Facts.model_validate(predicted[-1])
    probes, notes = _probe_tasks(plan, final, verify, base) if plan.steps else ([], [])
    reloads = any(m.reloads for m in mapped)
    when_ = datetime.datetime.now(datetime.timezone.utc) if now is None else now
    stamp = when_.strftime("%Y-%m-%dT%H:%M:%SZ")

    spec = {"steps": [{"index": i + 1, "checks": m.checks} for i, m in enumerate(mapped)]}
    tasks: list[dict[str, Any]] = [
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
    body = yaml.dump([play], Dumper=_Dumper, sort_keys=False, allow_unicode=True, width=100)
    return "\n".join(head) + "\n---\n" + body
