"""collect_facts: every collector in one batched script, plus a follow-up for what it named.

Round 1 runs two commands at once on the host: the main batch (host, GPUs, services,
PATH lookups, every toolkit prefix and Python env found by static discovery) and the login
shell's environment. Round 2 runs only when round 1 named something not yet probed:
CUDA_HOME/CUDA_PATH/VIRTUAL_ENV of the login shell or a service, a service's interpreter,
PATH dirs of the login shell or a service, EnvironmentFiles. Usually that is zero or one
small script, so a host costs two to three round trips whatever it holds.

For fleets (issue 18) the host's work is what costs: the main batch starts nvidia-smi in the
background, the trust walk stats a binary's chain once (remedy.trust), and the follow-up for
the login PATH's own dirs (~/bin, ~/.local/bin, pyenv's shims: on nearly every host) is sent
as soon as the login script answers, beside the main batch, and used only when it is exactly
the follow-up that would have been sent after it. One connection, all on concurrent channels.

Over SSH (a transport with `facts_agent`) the login script, the main batch and a look at
those login-PATH dirs are one session instead: the host agent (remedy.facts.agent), one
trust-checked python3 printing the very sections the shell scripts print, so everything
below parses them unchanged; the follow-up for the login PATH is answered from its look when
it would find nothing to probe (_spec_answer). A host without a usable python3 gets the
shell scripts as above.
"""

from __future__ import annotations

import asyncio
import base64
import datetime as _dt
import os
import time
from dataclasses import dataclass, field
from typing import TypeVar

from remedy.errors import CommandTimeout, ConnectionDropped, InputError
from remedy.facts import agent as _agent
from remedy.facts.envs import (
    ETC_PROFILE_TAIL,
    PROFILE_CAP,
    SYSTEM_PROFILES,
    USER_PROFILES,
    evaluate_profile,
    login_env_script,
    parse_env_block,
    parse_login_env,
    session_env_of,
)
from remedy.facts.gpus import QUERY_ARGS, GpuCollector
from remedy.facts.host import HostCollector
from remedy.facts.pythons import SH_PY, build_python, group_pythons, py_call
from remedy.facts.sections import Section, new_token, prelude, section_text, split_sections
from remedy.facts.services import (
    SHOW,
    UNIT_DIRS,
    ServiceFacts,
    ServicesCollector,
    _is_template,
    conda_activate_scripts,
    conda_envs,
    conda_state_file,
    conda_state_vars,
    login_user_files,
    noninteractive_part,
    runs_login_shell,
    sourced_activates,
    sourced_by_profile,
    unit_home,
)
from remedy.facts.toolkits import (
    _FILES,
    _HEADER_DIRS,
    LIB_DIRS,
    SH_TK,
    build_toolkits,
    group_toolkits,
    tk_call,
)
from remedy.model import Facts, PythonEnv, Service, Toolkit
from remedy.model.envdiff import BUILD_VAR, session_differences
from remedy.redact import REDACTED, is_secret_name, redact_env, redact_facts  # noqa: F401
from remedy.transport.base import BASE_PATH, OWN_PATH_FORMS, Transport
from remedy.transport.quote import quote
from remedy.units.dropin import dropin_overrides, read_after_remedy
from remedy.units.parse import EnvironmentFileRef, has_glob
from remedy.units.shown import (
    ServiceEnvironment,
    ShownEnvironment,
    env_file_read_script,
    service_environment,
)

_T = TypeVar("_T")
SYSTEMD_DEFAULT_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
HOME_VARS = ("CUDA_HOME", "CUDA_PATH")
PY_VARS = ("VIRTUAL_ENV", "CONDA_PREFIX")

SH_LOOK = r"""
look() {
  m path "$2"
  IFS=:; set -f
  for d in $1; do
    IFS=$IFS0
    [ -n "$d" ] || continue
    n=0; y=0
    [ -f "$d/nvcc" ] && [ -x "$d/nvcc" ] && n=1
    [ -f "$d/python3" ] && [ -x "$d/python3" ] && y=1
    printf '%s\t%s\t%s\n' "$d" "$n" "$y"
    [ $n = 1 ] && LN="$LN${d%/*}$NL"
    [ $y = 1 ] && LY="$LY$d/python3$NL"
  done
  IFS=$IFS0; set +f
}
drain() {
  IFS=$NL; set -f
  for p in $LN; do IFS=$IFS0; set +f; tk "$p" "" "" "PATH:$1"; done
  IFS=$NL; set -f
  for x in $LY; do IFS=$IFS0; set +f; py "$x" "PATH:$1"; done
  IFS=$IFS0; set +f; LN=; LY=
}
"""

_TK_GLOBS = (
    "/usr/local/cuda /usr/local/cuda-* /opt/cuda /usr "
    "/opt/conda /opt/conda/envs/* /opt/miniconda3 /opt/miniconda3/envs/* "
    "/opt/miniforge3 /opt/miniforge3/envs/* "
    '"$HOME"/miniconda3 "$HOME"/miniconda3/envs/* "$HOME"/miniforge3 "$HOME"/anaconda3'
)
_PY_GLOBS = (
    "/usr/bin/python3 /opt/*/bin/python3 /opt/*/bin/python /opt/*/.venv/bin/python "
    "/opt/*/venv/bin/python /opt/conda/envs/*/bin/python /opt/miniconda3/envs/*/bin/python "
    "/opt/miniforge3/envs/*/bin/python /root/*venv*/bin/python /root/.venv/bin/python "
    '"$HOME"/*venv*/bin/python "$HOME"/.venv/bin/python "$HOME"/miniconda3/bin/python '
    '"$HOME"/miniconda3/envs/*/bin/python "$HOME"/miniforge3/bin/python'
)


# nvidia-smi first and in the background: a real one takes 0.1-1.5 s to wake the
# driver, time the rest of the batch now uses; its output is printed at the end (the
# sections are found by name). Only when a private 0700 dir that only root or we can
# rename holds its output (in a sticky /tmp of ours, or `trusted`); else in line as before.
# Like every binary remedy runs, nvidia-smi runs only when `trusted` (its real path, $RP).
GPU_BACKGROUND = (
    "GP=; GD=; GX=\n"
    'if CV=$(PATH=${SP:-$PATH}; command -v nvidia-smi 2>/dev/null) && trusted "$CV" && GX=$RP && '
    'GD=$(mktemp -d "${TMPDIR:-/tmp}/remedy-facts.XXXXXXXX" 2>/dev/null) && [ -n "$GD" ] && '
    '{ { [ -z "${TMPDIR-}" ] && [ -k /tmp ] && [ -O /tmp ]; } || trusted "$GD" || '
    '{ rm -rf -- "$GD"; false; }; }; then\n'
    f'  {{ to 20 "$GX" {QUERY_ARGS} > "$GD/gpu" 2>&1; echo $? > "$GD/rc"; }} &\n'
    "  GP=$!\n"
    "else\n"
    "GD=\n" + GpuCollector().command() + "fi\n"
)
# ... and its output, once the rest is done (the job is waited for; its dir removed)
GPU_COLLECT = (
    'if [ -n "$GP" ]; then\n'
    '  wait "$GP"; m gpu; cat -- "$GD/gpu"; GRC=; read -r GRC < "$GD/rc"; m gpu.rc "${GRC:-1}"\n'
    "fi\n"
    '[ -n "$GD" ] && rm -rf -- "$GD"\n'
)


def library(token: str) -> str:
    """Prelude plus every shell function the collectors call."""
    return prelude(token) + "IFS0=$IFS\nTKSEEN=\nPYSEEN=\nLN=\nLY=\n" + SH_TK + SH_PY + SH_LOOK


def main_script(token: str, services: list[str] | None = None) -> str:
    """Round 1: one POSIX sh script for every collector (only sh, coreutils, grep, sed)."""
    svc = ServicesCollector(services)
    parts = [
        library(token),
        GPU_BACKGROUND,
        HostCollector().command(),
        svc.command(),
        # interpreters named by sglang units (the python side re-checks, this saves a round)
        # (no systemd, no units: skip the pipeline's five processes, SVCPY is empty either way)
        "SVCPY=\n[ -n \"${SVC-}\" ] && SVCPY=$(printf '%s\\n' \"$SVC\" | grep '^ExecStart=' | "
        "grep -i sglang | grep -o '/[^ ;\"]*/bin/python[0-9.]*' | sort -u)\n",
        'look "$P0" session; drain session\n',
        f'look "{SYSTEMD_DEFAULT_PATH}" systemd-default; drain systemd-default\n',
        f'for p in {_TK_GLOBS}; do [ -d "$p" ] && has_cuda "$p" && tk "$p" \'\' \'\' glob; done\n',
        'for v in CUDA_HOME CUDA_PATH; do eval "x=\\${$v-}"; '
        '[ -n "$x" ] && tk "$x" \'\' \'\' "session:$v"; done\n',
        '[ -n "${CONDA_PREFIX-}" ] && has_cuda "$CONDA_PREFIX" && '
        "tk \"$CONDA_PREFIX\" conda '' session:CONDA_PREFIX\n",
        f'for x in {_PY_GLOBS}; do [ -f "$x" ] && [ -x "$x" ] && py "$x" glob; done\n',
        '[ -n "${VIRTUAL_ENV-}" ] && py "$VIRTUAL_ENV/bin/python" session:VIRTUAL_ENV\n',
        '[ -n "${CONDA_PREFIX-}" ] && py "$CONDA_PREFIX/bin/python" session:CONDA_PREFIX\n',
        'IFS=$NL; set -f; for x in $SVCPY; do IFS=$IFS0; set +f; py "$x" service; done; IFS=$IFS0; set +f\n',
        GPU_COLLECT,
        "m end\n",
    ]
    return "".join(parts)


PRELUDE_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"


def _glob_words(words: str) -> list[tuple[bool, str]]:
    """_TK_GLOBS / _PY_GLOBS as (starts with "$HOME", the rest) for the agent."""
    home = '"$HOME"'
    return [
        (w.startswith(home), w[len(home) :] if w.startswith(home) else w) for w in words.split()
    ]


# dirs a login PATH usually adds beyond the session's (Debian's ~/.profile: ~/bin and
# ~/.local/bin; pyenv), looked at by the agent so that the follow-up for them needs no round
SPEC_DIRS = ("bin", ".local/bin", ".pyenv/shims", ".pyenv/bin")
LOGIN_SECTIONS = frozenset({"shell", "uid", "env", "env.end", "profile", "profile.end"})


def agent_request(services: list[str] | None = None) -> dict[str, object]:
    """Round 1 for the host agent (remedy.facts.agent_host): login_env_script's sections,
    main_script's batch and the speculative look (spec_look), its lists passed from the same
    constants the shell scripts are built from."""
    wanted = ServicesCollector(services).wanted
    return {
        "ops": [["login"], ["main"], ["spec"]],
        "system_profiles": list(SYSTEM_PROFILES),
        "user_profiles": list(USER_PROFILES),
        "profile_cap": PROFILE_CAP,
        "spec_dirs": list(SPEC_DIRS),
        "extra_path": PRELUDE_PATH,
        "own_paths": sorted(OWN_PATH_FORMS),
        "base_path": BASE_PATH,
        "gpu_args": QUERY_ARGS.split(),
        "unit_dirs": list(UNIT_DIRS),
        "show": SHOW.split(),
        "services": [w for w in wanted if not _is_template(w)],
        "systemd_path": SYSTEMD_DEFAULT_PATH,
        "tk_globs": _glob_words(_TK_GLOBS),
        "py_globs": _glob_words(_PY_GLOBS),
        "files": _FILES.split(),
        "lib_dirs": list(LIB_DIRS),
        "header_dirs": list(_HEADER_DIRS),
    }


def redact(env: dict[str, str]) -> list[str]:
    """Blank secret-looking values in place (facts are saved in plan files); returns names.

    HF_TOKEN and friends are common on inference hosts and nothing in remedy needs them.
    """
    return redact_env(env)


@dataclass
class _Needs:
    """What round 1 named but did not probe."""

    prefixes: list[tuple[str, str]] = field(default_factory=list)  # (path, origin)
    interpreters: list[tuple[str, str]] = field(default_factory=list)
    paths: list[tuple[str, str]] = field(default_factory=list)  # (PATH string, label)
    env_files: list[str] = field(default_factory=list)
    # env files a unit's User= reads (its login profile, a sourced activate, conda hooks):
    # path -> that account, whose privileges read them (env_file_read_script's as_user)
    user_files: dict[str, str] = field(default_factory=dict)

    def __bool__(self) -> bool:
        return bool(self.prefixes or self.interpreters or self.paths or self.env_files)


@dataclass
class _State:
    """Everything learned so far, across rounds."""

    toolkits: list[Toolkit] = field(default_factory=list)
    tk_real: dict[str, Toolkit] = field(default_factory=dict)  # real path -> toolkit
    tk_names: set[str] = field(default_factory=set)
    pythons: list[PythonEnv] = field(default_factory=list)
    py_real: dict[str, PythonEnv] = field(default_factory=dict)
    interp_env: dict[str, str] = field(default_factory=dict)  # interpreter -> env path
    interp_missing: set[str] = field(default_factory=set)
    dirs_checked: set[str] = field(default_factory=set)
    files_read: dict[str, bytes | None] = field(default_factory=dict)  # env files, raw
    globs: dict[str, list[str]] = field(default_factory=dict)  # EnvironmentFile glob -> paths
    notes: list[str] = field(default_factory=list)

    def service_env(self, svc: ServiceFacts, s: Service) -> ServiceEnvironment:
        """The service's environment from what has been read so far (the shared reader)."""
        shown = svc.shown.get(s.name) or ShownEnvironment(
            environment=dict(s.environment),
            files=[EnvironmentFileRef(path=f, optional=False) for f in s.environment_files],
        )
        return service_environment(s.name, shown, self.files_read, self.globs)

    def unread_env_files(self, s: Service) -> list[str]:
        """EnvironmentFile patterns of s not looked at yet."""
        return [
            f
            for f in s.environment_files
            if (f not in self.globs if has_glob(f) else f not in self.files_read)
        ]

    def absorb(self, sections: list[Section]) -> None:
        """Add one batch's toolkits, pythons, PATH lookups and env files."""
        for rec in group_toolkits(sections):
            self.tk_names.add(rec.prefix)
        self.toolkits += build_toolkits(sections, self.tk_real)
        for rec in group_pythons(sections):
            if rec.missing:
                self.interp_missing.add(rec.interpreter)
                continue
            real = rec.real
            if rec.is_alias and real and real in self.py_real:
                self.interp_env[rec.interpreter] = self.py_real[real].path
                continue
            env = build_python(rec)
            if real and real in self.py_real:
                self.interp_env[rec.interpreter] = self.py_real[real].path
                continue
            self.pythons.append(env)
            if real:
                self.py_real[real] = env
            self.interp_env[rec.interpreter] = env.path
        for s in sections:
            if s.name == "path":
                for line in s.body.splitlines():
                    d = line.split("\t", 1)[0]
                    if d:
                        self.dirs_checked.add(d)
            elif s.name == "envfile":
                # base64: systemd refuses a file with invalid UTF-8, so the bytes must survive
                try:
                    self.files_read[s.arg] = base64.b64decode("".join(s.body.split()))
                except ValueError:
                    self.notes.append(f"EnvironmentFile {s.arg}: garbled reply")
            elif s.name == "envfile.missing":
                self.files_read[s.arg] = None
            elif s.name == "envglob":
                self.globs[s.arg] = s.lines()
            elif s.name == "py.triton.untrusted":
                tool, _, why = s.arg.partition(" ")
                self.notes.append(f"Triton's {tool} not executed: {why}")
            elif s.name == "py.untrusted":
                self.notes.append(f"Python interpreter not executed: {s.arg}")


def activate_vars(path: str, raw: bytes | None, env: dict[str, str]) -> dict[str, str]:
    """The build variables a sourced venv activate script sets outright (a user's `export
    CUDA_HOME=...` appended to it), read as data (evaluate_profile: nothing run). Not PATH:
    activate puts the venv's bin/ first on whatever PATH it finds."""
    if not raw:
        return {}
    origins: dict[str, str] = {}
    out = evaluate_profile(env, [(path, raw.decode("utf-8", "replace"))], origins=origins)
    return {
        k: out[k]
        for k, f in origins.items()
        if f == path and k != "PATH" and BUILD_VAR.match(k) and k in out
    }


_SOURCE_DEPTH = 3  # ~/.profile -> ~/.bashrc -> ~/.bash_aliases: deeper is left unread


def _login_segments(
    path: str, files_read: dict[str, bytes | None], home: str, depth: int = 0
) -> tuple[list[tuple[str, str]], list[str]]:
    """A unit user's login file as a non-interactive login shell reads it: its own lines, and
    in place of each `. FILE` / `source FILE` that file's lines (down to its "not interactive,
    return" guard: noninteractive_part), each segment under its own path. Also the sourced
    files not read yet (facts read them in the next round, as data)."""
    raw = files_read.get(path)
    if raw is None:
        return [], []
    text = raw.decode("utf-8", "replace")
    if depth:
        text = noninteractive_part(text)
    lines = text.splitlines()
    segs: list[tuple[str, str]] = []
    missing: list[str] = []
    start = 0
    for i, src in sourced_by_profile(text, home):
        if depth + 1 >= _SOURCE_DEPTH or src == path:
            continue
        segs.append((path, "\n".join(lines[start:i])))
        start = i + 1
        if src not in files_read:
            missing.append(src)
            continue
        more, miss = _login_segments(src, files_read, home, depth + 1)
        segs += more
        missing += miss
    segs.append((path, "\n".join(lines[start:])))
    return segs, missing


def login_user_vars(
    path: str, files_read: dict[str, bytes | None], home: str, env: dict[str, str]
) -> dict[str, tuple[str, str]]:
    """NAME -> (value, file) for the build variables a unit user's login file sets outright,
    the files it sources included (Debian's ~/.profile sources ~/.bashrc: an export above its
    interactive guard reaches `bash -lc`, one below it does not). Read as data; not PATH."""
    segs, _ = _login_segments(path, files_read, home)
    origins: dict[str, str] = {}
    out = evaluate_profile(env, segs, origins=origins)
    mine = {p for p, _ in segs}
    return {
        k: (out[k], f)
        for k, f in origins.items()
        if f in mine and k != "PATH" and BUILD_VAR.match(k) and k in out
    }


def login_profile_vars(login_env: dict[str, str], origins: dict[str, str]) -> dict[str, dict]:
    """What a unit whose ExecStart is a login shell gets from the system profile files, read
    after systemd's Environment= and EnvironmentFile= (so their values win): the build
    variables /etc/profile, its tail or an /etc/profile.d file sets outright (facts.envs
    origins), as Service.exec_shell_env / exec_shell_from. Not PATH (the command goes
    on to change it: `source VENV/bin/activate`), not /etc/bash.bashrc (Debian's /etc/profile
    reads it only in an interactive shell), not a user's own file (the unit's User= may have
    another home)."""
    env: dict[str, str] = {}
    where: dict[str, str] = {}
    for k, f in origins.items():
        system = f == ETC_PROFILE_TAIL or f == "/etc/profile" or f.startswith("/etc/profile.d/")
        if system and k != "PATH" and BUILD_VAR.match(k) and k in login_env:
            env[k], where[k] = login_env[k], f
    return {"exec_shell_env": env, "exec_shell_from": where} if env else {}


def _needs(state: _State, login_env: dict[str, str], svc: ServiceFacts) -> _Needs:
    need = _Needs()
    envs: list[tuple[str, dict[str, str]]] = [("login", login_env)]
    for s in svc.services:
        envs.append((f"service:{s.name}", state.service_env(svc, s).effective))
    for label, env in envs:
        for v in HOME_VARS:
            val = env.get(v)
            if val and val not in state.tk_names and (val, f"{label}:{v}") not in need.prefixes:
                need.prefixes.append((val, f"{label}:{v}"))
        for v in PY_VARS:
            val = env.get(v)
            if val:
                x = val.rstrip("/") + "/bin/python"
                if x not in state.interp_env and x not in state.interp_missing:
                    need.interpreters.append((x, f"{label}:{v}"))
        path = env.get("PATH")
        if label.startswith("service:") and path is None:
            path = SYSTEMD_DEFAULT_PATH
        if path:
            dirs = [d for d in path.split(":") if d and d not in state.dirs_checked]
            if dirs:
                need.paths.append((":".join(dirs), label))
    for s in svc.services:
        for f in state.unread_env_files(s):
            if f not in need.env_files:
                need.env_files.append(f)
        # a conda environment's activate.d hooks, which its activation sources (as data)
        for prefix in conda_envs(s.exec_start):
            g = conda_activate_scripts(prefix)
            # a prefix with glob characters of its own is left unread (its * would glob)
            if g not in state.globs and g not in need.env_files and not has_glob(prefix):
                need.env_files.append(g)
                _read_as(need, g, s)
            # and its `conda env config vars` (conda-meta/state, JSON), read by `conda run`
            st = conda_state_file(prefix)
            if st not in state.files_read and st not in need.env_files and not has_glob(prefix):
                need.env_files.append(st)
                _read_as(need, st, s)
        # the unit user's ~/.bash_profile / ~/.profile its login shell reads (as data)
        home = unit_home(s)
        mine = login_user_files(s.exec_start, home)
        for f in mine:
            if f not in state.files_read and f not in need.env_files:
                need.env_files.append(f)
                _read_as(need, f, s)
        # and the files the first of them sources (~/.profile's `. "$HOME/.bashrc"`)
        first = next((p for p in mine if state.files_read.get(p) is not None), None)
        if first is not None and home:
            for f in _login_segments(first, state.files_read, home)[1]:
                if f not in need.env_files and not has_glob(f):
                    need.env_files.append(f)
                    _read_as(need, f, s)
        # a venv activate script its ExecStart's shell sources: read (as bytes, never run)
        for f in sourced_activates(s.exec_start):
            if f not in state.files_read and f not in need.env_files:
                need.env_files.append(f)
                _read_as(need, f, s)
        # its drop-ins that sort after remedy's own (an admin's zzz-local.conf): read as data,
        # to tell whether what remedy would write is overridden (dropin_overrides)
        for f in read_after_remedy(s.drop_ins):
            if f not in state.files_read and f not in need.env_files and not has_glob(f):
                need.env_files.append(f)
    return need


def _read_as(need: _Needs, path: str, s: Service) -> None:
    """Record that `path` is read by s's processes, as its User=: remedy reads it with that
    user's privileges. Read as root, `~/.profile` or a venv's `bin/activate` that the user
    made a link to a root-only file (/etc/shadow, root's own secrets) put that file's
    `export CUDA_...=` lines in the facts, the plan and its report, for whoever reads them."""
    user = s.sandboxing.get("User", "")
    if user and user not in ("root", "0") and "\0" not in user:
        need.user_files[path] = user


def followup_script(token: str, state: _State, need: _Needs) -> str:
    """Round 2+: probe only what round 1 did not (already-probed dirs come back as aliases).

    A value holding NUL came from a garbled reply (no path or name on a host can hold one, and
    no shell word either): it is left out rather than failing the whole collection."""

    def ok(*values: str) -> bool:
        return not any("\0" in v for v in values)

    seen_tk = "".join(f"|{r}|" for r in state.tk_real if ok(r))
    seen_py = "".join(f"|{r}|" for r in state.py_real if ok(r))
    parts = [library(token), f"TKSEEN={quote(seen_tk)}\nPYSEEN={quote(seen_py)}\n"]
    for path, label in need.paths:
        if ok(path, label):
            parts.append(f"look {quote(path)} {quote(label)}; drain {quote(label)}\n")
    for prefix, origin in need.prefixes:
        if ok(prefix, origin):
            parts.append(tk_call(prefix, "", "", origin))
    for x, origin in need.interpreters:
        if ok(x, origin):
            parts.append(py_call(x, origin))
    files = [f for f in need.env_files if ok(f)]
    parts.append(env_file_read_script(files, "m", as_user=need.user_files))
    parts.append("m end\n")
    return "".join(parts)


def predicted_need(login_out: str, login_env: dict[str, str], token: str) -> _Needs | None:
    """The follow-up the login PATH will most likely ask for, known before the main batch ends:
    its dirs that neither the session's PATH nor systemd's default (the two the main batch
    looks at) hold. None when there is nothing to predict."""
    session: dict[str, str] = {}
    for s in split_sections(login_out, token):
        if s.name == "env":
            session = parse_env_block(s.body)
    main_dirs = set((session.get("PATH") or "").split(":")) | set(SYSTEMD_DEFAULT_PATH.split(":"))
    dirs = [d for d in (login_env.get("PATH") or "").split(":") if d and d not in main_dirs]
    return _Needs(paths=[(":".join(dirs), "login")]) if dirs else None


def _early_is_the_followup(
    early: _Needs, out: str | None, need: _Needs, state: _State, token: str
) -> bool:
    """Whether the follow-up sent early (with no TKSEEN/PYSEEN: the main batch was still
    running) answered exactly what the real one would: the same need, a complete reply, and
    no probed directory that the real one would have cut short as already seen (its `case`
    on TKSEEN/PYSEEN, emulated on the same strings)."""
    if out is None or need != early:
        return False
    sections = split_sections(out, token)
    if not any(s.name == "end" for s in sections):
        return False
    seen_tk = "".join(f"|{r}|" for r in state.tk_real if "\0" not in r)
    seen_py = "".join(f"|{r}|" for r in state.py_real if "\0" not in r)
    for s in sections:
        if s.name == "tk.real" and f"|{s.arg}|" in seen_tk:
            return False
        if s.name == "py.real" and f"|{s.arg}|" in seen_py:
            return False
    return True


async def _run_script(transport: Transport, script: str, timeout: float) -> str:
    r = await transport.run(script, timeout=timeout)
    return r.stdout.decode("utf-8", "replace")


AGENT = True  # the host agent for transports that ask for it (SSHTransport.facts_agent)


async def _main_sections(
    transport: Transport, token: str, services: list[str] | None, timeout: float
) -> list[Section]:
    """Round 1's sections from the shell batch."""
    out = await _run_script(transport, main_script(token, services), timeout)
    return split_sections(out, token)


def _spec_lines(sections: list[Section]) -> dict[str, tuple[str, str]]:
    """The agent's speculative look: dir -> (nvcc there, python3 there), as `look` prints."""
    out: dict[str, tuple[str, str]] = {}
    for s in sections:
        if s.name == "spec.look":
            for line in s.body.split("\n"):
                d, n, y = (line.split("\t") + ["", "", ""])[:3]
                if d and n in ("0", "1") and y in ("0", "1"):
                    out[d] = (n, y)
    return out


def _spec_answer(need: _Needs, spec: dict[str, tuple[str, str]]) -> list[Section] | None:
    """The follow-up's exact answer, where it would only `look` at dirs the agent looked at
    already and none holds nvcc or python3 (then `drain` probes nothing): the `path`
    sections look prints and `end`. None where the follow-up must really run."""
    if not spec or not need.paths or need.prefixes or need.interpreters or need.env_files:
        return None
    out: list[Section] = []
    for path, label in need.paths:
        if "\n" in path or "\n" in label or "\0" in path:
            return None
        dirs = [d for d in path.split(":") if d]
        if any(spec.get(d) != ("0", "0") for d in dirs):
            return None
        out.append(Section(name="path", arg=label, body="".join(f"{d}\t0\t0\n" for d in dirs)))
    return [*out, Section(name="end", arg="", body="")]


def _outcome(task: asyncio.Future[_T]) -> _T | BaseException:
    """A finished task's result or exception (what gather(return_exceptions=True) gave)."""
    if task.cancelled():
        return asyncio.CancelledError()
    return task.exception() or task.result()


async def _settle(task: asyncio.Future[str], within: float) -> str | None:
    """The early follow-up's output; None if it failed or is not done within `within` s (the
    real follow-up then runs as before)."""
    await asyncio.wait({task}, timeout=max(within, 0.001))
    if not task.done():
        task.cancel()
        await asyncio.wait({task})
        return None
    if task.cancelled() or task.exception() is not None:
        return None
    return task.result()


async def _discard(task: asyncio.Future[str] | None) -> None:
    """An early follow-up nobody needed: stop it; never raise."""
    if task is None:
        return
    if not task.done():
        task.cancel()
    await asyncio.wait({task})
    if not task.cancelled():
        task.exception()  # retrieved: a failed early follow-up is no error


async def collect_facts(
    transport: Transport,
    *,
    services: list[str] | None = None,
    timeout: float = 30,
    token: str | None = None,
    agent: bool | None = None,
) -> Facts:
    """Collect one host's Facts. Raises TransportError subclasses only for transport failures;
    anything odd on the host becomes an unknown value or a note.

    services: unit names to collect even if their ExecStart does not mention sglang.
    token: the section marker; random per call unless given (recordings and replays fix it).
    agent: run round 1 with the host agent (remedy.facts.agent); default: where the transport
    says it reaches a real host (`facts_agent`), and AGENT is on.
    """
    if agent is None:
        agent = AGENT and bool(getattr(transport, "facts_agent", False))
    spare: list[asyncio.Future[str]] = []
    try:
        return await _collect_facts(transport, services, timeout, token, spare, agent)
    finally:
        for task in spare:  # an early follow-up that was not used, whatever happened
            await _discard(task)


async def _collect_facts(
    transport: Transport,
    services: list[str] | None,
    timeout: float,
    token: str | None,
    spare: list[asyncio.Future[str]],
    agent: bool = False,
) -> Facts:
    t0 = time.monotonic()
    token = token or new_token()
    early: _Needs | None = None
    early_t: asyncio.Future[str] | None = None
    login_notes: list[str] = []
    login_origins: dict[str, str] = {}
    login_parsed: tuple[dict[str, str], str | None] | None = None
    spec: dict[str, tuple[str, str]] = {}
    got = await _agent.run_agent(transport, agent_request(services), timeout) if agent else None
    res_main: list[Section] | BaseException
    res_login: str | BaseException
    if got is not None:
        # one session did it all: the login sections, round 1, the speculative look
        login_text = section_text([s for s in got if s.name in LOGIN_SECTIONS], token)
        res_main = [s for s in got if s.name not in LOGIN_SECTIONS and s.name != "spec.look"]
        res_login = login_text
        login_parsed = parse_login_env(login_text, token, login_notes, login_origins)
        spec = _spec_lines(got)
    else:
        # (after an agent this host could not run: the shell scripts, in the time left)
        left = max(timeout - (time.monotonic() - t0), 1)
        main_t = asyncio.ensure_future(_main_sections(transport, token, services, left))
        login_t = asyncio.ensure_future(
            _run_script(transport, login_env_script(token), min(left, 20))
        )
        # The login script is tiny and answers first. What its PATH adds (Debian's ~/.profile
        # puts ~/bin and ~/.local/bin there, pyenv its shims) is nearly always the one
        # follow-up round: it is sent now, beside the main batch, and used only if it is
        # exactly what the real follow-up would have been (_early_is_the_followup); else the
        # follow-up runs as before.
        try:
            await asyncio.wait({login_t})
            if not login_t.cancelled() and login_t.exception() is None:
                login_parsed = parse_login_env(login_t.result(), token, login_notes, login_origins)
                early = predicted_need(login_t.result(), login_parsed[0], token)
                if early is not None and not main_t.done():
                    early_t = asyncio.ensure_future(
                        _run_script(transport, followup_script(token, _State(), early), left)
                    )
                    spare.append(early_t)
            await asyncio.wait({main_t})
        except BaseException:
            for task in (main_t, login_t, early_t):
                if task is not None:
                    task.cancel()
            raise
        res_main = _outcome(main_t)
        res_login = _outcome(login_t)
    if isinstance(res_main, BaseException):
        raise res_main
    notes: list[str] = []
    sections = res_main
    if not any(s.name == "end" for s in sections):
        notes.append("fact collection output was cut off; facts are partial")

    host = HostCollector().parse_sections(sections)
    gpu = GpuCollector().parse_sections(sections)
    svc = ServicesCollector(services).parse_sections(sections)
    notes += HostCollector().notes(sections) + gpu.notes + svc.notes
    if services and not svc.systemd:
        notes.append(f"services {', '.join(services)} requested, but systemd is not PID 1 here")

    login_env: dict[str, str] = {}
    if isinstance(res_login, (CommandTimeout, ConnectionDropped)):
        notes.append(f"login shell environment not collected: {res_login}")
    elif isinstance(res_login, BaseException):
        raise res_login
    else:
        assert login_parsed is not None
        login_env, shell = login_parsed
        notes += login_notes
        if not login_env:
            notes.append(f"login shell {shell or '?'} printed no environment")
        hidden = redact(login_env)
        if hidden:
            notes.append(f"login shell: values of {', '.join(hidden)} redacted")

    state = _State()
    state.absorb(sections)
    extra_interps = [(x, f"service:{name}") for name, x in svc.interpreters.items()]
    for _round in range(3):
        need = _needs(state, login_env, svc)
        for x, origin in extra_interps:
            if (
                x not in state.interp_env
                and x not in state.interp_missing
                and (x, origin) not in need.interpreters
            ):
                need.interpreters.append((x, origin))
        if not need:
            break
        left = timeout - (time.monotonic() - t0)
        if left <= 1:
            left_out = [p for p, _ in need.prefixes + need.interpreters + need.paths]
            notes.append("no time left to probe: " + ", ".join(left_out + need.env_files))
            break
        out: str | None = None
        if early_t is not None and early is not None:
            done = await _settle(early_t, left)
            if _early_is_the_followup(early, done, need, state, token):
                out = done
            early_t = None
        more = _spec_answer(need, spec) if out is None else None
        if more is None:
            if out is None:
                out = await _run_script(transport, followup_script(token, state, need), left)
            more = split_sections(out, token)
        spec = {}  # (only ever answers the first follow-up: later ones know more)
        state.absorb(more)
        for f in need.env_files:
            if has_glob(f):
                state.globs.setdefault(f, [])
            else:
                state.files_read.setdefault(f, None)
        for x, _ in need.interpreters:
            if x not in state.interp_env:
                state.interp_missing.add(x)
        for p, _ in need.prefixes:
            state.tk_names.add(p)
        for path, _ in need.paths:
            state.dirs_checked.update(path.split(":"))

    services_out: list[Service] = []
    for s in svc.services:
        x = svc.interpreters.get(s.name)
        py = state.interp_env.get(x) if x else None
        if x and py is None:
            notes.append(f"service {s.name}: interpreter {x} does not exist")
        se = state.service_env(svc, s)
        env = dict(se.environment)
        hidden = redact(env)
        if hidden:
            notes.append(f"service {s.name}: values of {', '.join(hidden)} redacted")
        for f in se.missing:
            notes.append(f"service {s.name}: EnvironmentFile {f} is missing or unreadable")
        notes.extend(f"service {n}" for n in se.notes)
        files_env = dict(se.files_env)
        redact(files_env)
        for pattern, values in se.file_values.items():
            values = dict(values)
            redact(values)
            if values:
                shown = ", ".join(f"{k}={v}" for k, v in values.items())
                notes.append(f"service {s.name}: EnvironmentFile {pattern} sets {shown}")
            elif has_glob(pattern) and not se.files_used.get(pattern):
                notes.append(f"service {s.name}: EnvironmentFile {pattern} matched no file")
        update = {"python": py, "environment": env, "environment_files_env": files_env}
        shell: dict[str, dict] = {"exec_shell_env": {}, "exec_shell_from": {}}
        if runs_login_shell(s.exec_start):
            shell.update(login_profile_vars(login_env, login_origins))
            # then the unit user's own profile file, the first one bash finds (read last:
            # its exports win over /etc/profile.d's; test_u)
            # (and the files it sources: ~/.profile's `. "$HOME/.bashrc"`, down to the
            # bashrc's "not interactive, return" guard)
            home = unit_home(s)
            mine = login_user_files(s.exec_start, home)
            f = next((p for p in mine if state.files_read.get(p) is not None), None)
            if f is not None and home:
                login_vars = login_user_vars(f, state.files_read, home, {**env, **files_env})
                for k, (v, src) in login_vars.items():
                    shell["exec_shell_env"][k], shell["exec_shell_from"][k] = v, src
        # a conda environment's activation: its activate.d/*.sh in name order (test_session_env)
        for prefix in conda_envs(s.exec_start):
            # its `conda env config vars set` values first, then its hooks (conda activate.py)
            st = conda_state_file(prefix)
            cvars = conda_state_vars(state.files_read.get(st))
            for k, v in cvars.items():
                if k != "PATH" and BUILD_VAR.match(k):
                    shell["exec_shell_env"][k], shell["exec_shell_from"][k] = v, st
            scope = {**env, **files_env, **cvars, "CONDA_PREFIX": prefix}
            for f in state.globs.get(conda_activate_scripts(prefix), []):
                for k, v in activate_vars(f, state.files_read.get(f), scope).items():
                    shell["exec_shell_env"][k], shell["exec_shell_from"][k] = v, f
        for f in sourced_activates(s.exec_start):  # sourced after the login profile
            for k, v in activate_vars(f, state.files_read.get(f), {**env, **files_env}).items():
                shell["exec_shell_env"][k], shell["exec_shell_from"][k] = v, f
        if shell["exec_shell_env"]:
            update.update(shell)
        overrides = dropin_overrides(s.name, s.drop_ins, state.files_read, state.globs)
        if overrides:
            update["dropin_overrides"] = overrides
        services_out.append(s.model_copy(update=update))
    notes += state.notes
    # a note may quote a garbled reply: a NUL in it would make Facts refuse the whole host
    notes = [n.replace("\0", "\\0") for n in notes]

    # build variables a user's own profile file sets outright (it is read last)
    user_set = {
        k: f
        for k, f in login_origins.items()
        if BUILD_VAR.match(k)
        and (not f.startswith("/etc/") or f == ETC_PROFILE_TAIL)
        and k in login_env
    }
    session_diff: dict[str, str | None] = {}
    if login_env and hasattr(transport, "fresh") and isinstance(res_login, str):
        # over SSH the login script ran in a non-interactive `ssh host cmd` session: what it
        # saw before any profile file is what such a session's builds get
        session = session_env_of(res_login, token)
        if session is not None:
            session_diff = session_differences(
                login_env, session, [tk.prefix for tk in state.toolkits]
            )
    facts = Facts(
        host=transport.host,
        collected_at=_dt.datetime.now(_dt.timezone.utc).replace(microsecond=0).isoformat(),
        os=host.os,
        gpus=gpu.gpus,
        toolkits=state.toolkits,
        pythons=state.pythons,
        shell_env=login_env,
        session_env=session_diff,
        shell_env_from=user_set,
        services=services_out,
        host_compilers=host.compilers,
        memory_mib=host.memory_mib,
        cpus=host.cpus,
        notes=notes,
    )
    # every string (an ExecStart's --api-key, a note quoting an EnvironmentFile), before
    # anything digests or saves the facts
    return redact_facts(facts)


def collect_local(*, services: list[str] | None = None, timeout: float = 30) -> Facts:
    """collect_facts on this machine, synchronously (for the CLI and scripts)."""
    from remedy.transport.local import LocalTransport

    host = os.uname().nodename or "localhost"
    try:
        return asyncio.run(collect_facts(LocalTransport(host), services=services, timeout=timeout))
    except RuntimeError as exc:
        if "running event loop" in str(exc):
            raise InputError(
                "collect_local() cannot run inside an event loop; "
                "await collect_facts(LocalTransport()) instead"
            ) from None
        raise
