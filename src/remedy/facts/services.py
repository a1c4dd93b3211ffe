"""systemd services that run SGLang (or are named on request): environment, ExecStart, drop-ins.

Why systemctl show and not the unit files: show gives the merged result of the unit, every
drop-in and systemd's own quoting rules, i.e. what the service really runs with. Units are
found two ways: every loaded service (`'*.service'`), plus unit files and drop-ins on disk
that mention sglang (a disabled, inactive unit is not loaded until named).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from remedy.facts.sections import DEFAULT_TOKEN, Section, split_sections
from remedy.model import Service, unit_name
from remedy.transport.quote import quote
from remedy.units.shown import ShownEnvironment, parse_shown_environment
from remedy.units.syntax import split_show_list

# the unit's sandboxing and resource directives (systemd.exec(5), systemd.resource-control(5)):
# which paths its process may write (a JIT cache under a read-only home) and its memory limit.
# Kept as systemctl shows them, non-empty values only; read by rules, never run or written.
SANDBOXING = (
    "User",
    "DynamicUser",
    "ProtectHome",
    "ProtectSystem",
    "PrivateTmp",
    "ReadOnlyPaths",
    "ReadWritePaths",
    "InaccessiblePaths",
    "CacheDirectory",
    "StateDirectory",
    "MemoryMax",
    "MemoryHigh",
)
PROPS = (
    "Id",
    "LoadState",
    "Environment",
    "EnvironmentFiles",
    "UnsetEnvironment",
    "ExecStart",
    "FragmentPath",
    "DropInPaths",
    *SANDBOXING,
)
SHOW = "systemctl show --no-pager " + " ".join(f"-p {p}" for p in PROPS)
UNIT_DIRS = (
    "/etc/systemd/system",
    "/run/systemd/system",
    "/usr/local/lib/systemd/system",
    "/lib/systemd/system",
    "/usr/lib/systemd/system",
)
RELEVANT = re.compile(r"sglang", re.I)


@dataclass
class ServiceFacts:
    services: list[Service] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    systemd: bool = False
    # interpreter path named in each relevant unit's ExecStart (unit -> path)
    interpreters: dict[str, str] = field(default_factory=dict)
    env_files: dict[str, list[str]] = field(default_factory=dict)
    # unit -> Environment=, EnvironmentFiles=, UnsetEnvironment= as systemctl showed them
    shown: dict[str, ShownEnvironment] = field(default_factory=dict)


def parse_show(text: str) -> list[dict[str, list[str]]]:
    """`systemctl show` output -> one dict per unit (property -> values, in order).

    Units are separated by blank lines; ExecStart may repeat (one line per command).
    """
    units: list[dict[str, list[str]]] = []
    cur: dict[str, list[str]] = {}
    for line in (text or "").splitlines():
        if not line.strip():
            if cur:
                units.append(cur)
                cur = {}
            continue
        k, sep, v = line.partition("=")
        if not sep or not re.match(r"^[A-Za-z][A-Za-z0-9]*$", k):
            continue
        if k == "Id" and "Id" in cur:
            units.append(cur)
            cur = {}
        cur.setdefault(k, []).append(v)
    if cur:
        units.append(cur)
    return units


_EXEC_ARGV = re.compile(r"argv\[\]=(.*?) ; (?:ignore_errors|flags)=")
_EXEC_PATH = re.compile(r"path=(\S+)")


def exec_argv(value: str) -> str | None:
    """`{ path=/x ; argv[]=/x -m sglang... ; ignore_errors=no ; ... }` -> the command as an
    ExecStart= line says it: the argv text, or `@PATH ARGV...` when argv[0] is not the program
    systemd runs (an `ExecStart=@/opt/v/bin/python python3 ...`: show's argv[] starts at
    `python3`, which is not where the program is)."""
    m = _EXEC_ARGV.search(value)
    p = _EXEC_PATH.search(value)
    if m:
        argv = m.group(1).strip()
        words = argv.split(None, 1)
        if p and words and words[0] != p.group(1):
            return f"@{p.group(1)} {argv}"
        return argv
    return p.group(1) if p else (value.strip() or None)


# ExecStart= prefixes (systemd.service(5) "Command lines"): `-` `@` `:` `+` `!` (`!!`), and
# `|` (systemd 258: run through the user's shell); none is part of the program's path
_EXEC_PREFIX = "-@:+!|"


def exec_words(exec_start: str | None) -> tuple[str, str, list[str]]:
    """(program, argv[0], arguments) of an ExecStart= command line, its prefixes read as
    systemd reads them: `@/bin/bash -bash -c X` runs /bin/bash with argv[0] `-bash`;
    `-/opt/v/bin/python x` runs /opt/v/bin/python. ("", "", []) for no command."""
    words = (exec_start or "").split()
    if not words:
        return "", "", []
    first = words[0]
    prefix = first[: len(first) - len(first.lstrip(_EXEC_PREFIX))]
    program = first[len(prefix) :]
    if "@" in prefix:
        return program, (words[1] if len(words) > 1 else ""), words[2:]
    return program, program, words[1:]


_PY = re.compile(r"""(/[^\s;"'=]*/bin/python[0-9.]*)(?=[\s;"']|$)""")
_ACTIVATE = re.compile(r"""(/[^\s;"'=]*)/bin/activate(?=[\s;"'&]|$)""")


def interpreter_of(exec_start: str) -> str | None:
    """The Python a service runs: the program if it is python, else a /.../bin/python in the
    command (e.g. `bash -c "... /opt/v/bin/python -m sglang..."`), else a sourced venv. The
    program, not an `@` command's argv[0] (exec_words)."""
    program, _, args = exec_words(exec_start)
    text = " ".join([program, *args])
    m = _PY.search(text)
    if m:
        return m.group(1)
    m = _ACTIVATE.search(text)
    if m:
        return m.group(1) + "/bin/python"
    return None


_SHELLS = frozenset({"sh", "bash", "dash", "zsh", "ksh", "mksh"})


def runs_login_shell(exec_start: str | None) -> bool:
    """Whether the command is a login shell (`bash -l`, `bash -lc ...`, `sh --login -c ...`):
    it reads /etc/profile and /etc/profile.d (bash(1) INVOCATION) after systemd has set the
    unit's environment. Only the options before the first other word count (`-c`'s string
    comes after them)."""
    program, argv0, args = exec_words(exec_start)
    if program.rsplit("/", 1)[-1] not in _SHELLS:
        return False
    if argv0.startswith("-"):
        # `ExecStart=@/bin/bash -bash -c ...`: "A login shell is one whose first character
        # of argument zero is a -" (bash(1) INVOCATION; dash, zsh and ksh do the same)
        return True
    for w in args:
        if not w.startswith("-") or w in ("-", "--"):
            return False
        if w == "--login" or (not w.startswith("--") and "l" in w[1:]):
            return True
    return False


def login_user_files(exec_start: str | None, home: str | None) -> list[str]:
    """The user's own files a login shell ExecStart reads after /etc/profile, in the order it
    looks for them: bash reads the FIRST of ~/.bash_profile, ~/.bash_login, ~/.profile that
    exists (bash(1) INVOCATION), sh/dash read ~/.profile. home: the unit's User='s home
    (`getent passwd`), root's when the unit names no User=. [] for no login shell."""
    if not home or not home.startswith("/") or not runs_login_shell(exec_start):
        return []
    program = exec_words(exec_start)[0].rsplit("/", 1)[-1]
    names = (".bash_profile", ".bash_login", ".profile") if program == "bash" else (".profile",)
    return [f"{home.rstrip('/')}/{n}" for n in names]


# `. FILE` / `source FILE` on a line of its own or after `&&`/`then` (Debian's ~/.profile:
# `. "$HOME/.bashrc"`; RHEL's ~/.bash_profile: `if [ -f ~/.bashrc ]; then . ~/.bashrc; fi`)
_SOURCE_CMD = re.compile(
    r"""(?:^|&&|;|\bthen)\s*(?:\.|source)\s+(?P<q>["']?)(?P<path>[^\s"';&|]+)(?P=q)\s*(?=;|&&|$|\bfi\b)"""
)


def sourced_by_profile(text: str, home: str) -> list[tuple[int, str]]:
    """(line index, absolute path) of each file a user's profile file sources with `.` or
    `source`, `~`, `$HOME` and `${HOME}` read as the unit user's home; a path with any other
    variable, a glob or a relative one is left out (not guessed)."""
    out: list[tuple[int, str]] = []
    for i, line in enumerate(text.splitlines()):
        if line.lstrip().startswith("#"):
            continue
        for m in _SOURCE_CMD.finditer(line):
            p = m.group("path")
            for pre in ("~/", "$HOME/", "${HOME}/"):
                if p.startswith(pre):
                    p = home.rstrip("/") + "/" + p[len(pre) :]
            if p.startswith("/") and not re.search(r"[$`*?\[\\]", p) and "/../" not in p:
                out.append((i, p))
    return out


# a non-interactive shell stops reading ~/.bashrc here: Debian's `case $- in *i*) ;; *)
# return;; esac`, `[ -z "$PS1" ] && return`, `[[ $- != *i* ]] && return`
_INTERACTIVE_TEST = re.compile(r"\$-|\$\{-\}|\bPS1\b")


def noninteractive_part(text: str) -> str:
    """What a non-interactive shell (`bash -lc`, a unit's ExecStart) reads of a file that
    returns early when not interactive: the lines above the guard (a test of `$-` or PS1 with
    a `return` within the next lines); the whole file without one."""
    lines = text.splitlines()
    for i, line in enumerate(lines):
        if line.lstrip().startswith("#") or not _INTERACTIVE_TEST.search(line):
            continue
        if re.search(r"\breturn\b", " ".join(lines[i : i + 4])):
            return "\n".join(lines[:i]) + ("\n" if i else "")
    return text


def unit_home(svc: Service) -> str | None:
    """The home a unit's processes get: its User='s (Service.user_home), root's (/root) when
    it names no User= (a system unit runs as root; bash takes HOME from the user database)."""
    if svc.user_home:
        return svc.user_home
    return "/root" if svc.sandboxing.get("User", "root") in ("root", "0") else None


_SOURCED = re.compile(r"""(/[^\s;"'=&|]*/bin/activate)[;&|]*""")


def sourced_activates(exec_start: str | None) -> list[str]:
    """The venv activate scripts a shell ExecStart sources before the server
    (`bash -c "source /opt/v/bin/activate && exec python -m sglang..."`): what they export
    (a user's `export CUDA_HOME=...` appended to bin/activate) is set after systemd's
    environment, so it wins over every Environment= and EnvironmentFile=."""
    program, _, args = exec_words(exec_start)
    words = [program, *args]
    if program.rsplit("/", 1)[-1] not in _SHELLS:
        return []
    out: list[str] = []
    for i, w in enumerate(words[1:-1], 1):
        m = _SOURCED.fullmatch(words[i + 1]) if w.lstrip("&|;") in ("source", ".") else None
        if m and m.group(1) not in out:
            out.append(m.group(1))
    return out


def _conda_env(root: str | None, arg: str | None) -> str | None:
    """A conda environment's prefix from `-n NAME`/`-p PREFIX`/an activate argument."""
    if arg and arg.startswith("/"):
        return arg.rstrip("/") or "/"
    if root and (not arg or arg == "base"):
        return root
    if root and arg and re.fullmatch(r"[A-Za-z0-9_.+-]+", arg) and arg not in (".", ".."):
        return f"{root}/envs/{arg}"
    return None


def conda_envs(exec_start: str | None) -> list[str]:
    """The conda environments an ExecStart activates before the server: `conda run -n NAME|
    -p PREFIX ...`, or a shell's `source ROOT/bin/activate [NAME|PREFIX]` / `conda activate
    NAME|PREFIX` (ROOT from the conda it runs or the `ROOT/etc/profile.d/conda.sh` it
    sources). Activation sources PREFIX/etc/conda/activate.d/*.sh, after systemd's environment:
    what those export wins over every Environment= and EnvironmentFile= (conda's activate.d
    hooks; the facts read them as data, conda_activate_scripts)."""
    program, _, args = exec_words(exec_start)
    words = [w.strip("\"'") for w in [program, *args]]
    out: list[str] = []
    root: str | None = None

    def add(prefix: str | None) -> None:
        if prefix and prefix not in out:
            out.append(prefix)

    for i, w in enumerate(words):
        base = w.lstrip("&|;").rsplit("/", 1)
        if w.endswith("/etc/profile.d/conda.sh"):
            root = w[: -len("/etc/profile.d/conda.sh")] or None
        nxt = words[i + 1] if i + 1 < len(words) else ""
        if base[-1] == "conda" and nxt in ("run", "activate"):
            if len(base) == 2 and base[0].endswith("/bin"):
                root = base[0][: -len("/bin")] or None
            name = prefix = None
            j = i + 2
            while j < len(words):
                a = words[j]
                if a in ("-n", "--name", "-p", "--prefix") and j + 1 < len(words):
                    name, prefix = (
                        (words[j + 1], None) if a in ("-n", "--name") else (None, words[j + 1])
                    )
                    j += 2
                    continue
                if a.startswith(("--name=", "--prefix=")):
                    k, _, v = a.partition("=")
                    name, prefix = (v, None) if k == "--name" else (None, v)
                elif nxt == "activate" and not a.startswith("-") and name is None:
                    name = a
                if not a.startswith("-"):
                    break
                j += 1
            add(_conda_env(root, prefix or name))
        m = _SOURCED.fullmatch(nxt) if w.lstrip("&|;") in ("source", ".") else None
        if m:
            arg = words[i + 2] if i + 2 < len(words) else None
            if arg and (arg.startswith(("-", "&", "|", ";")) or arg in ("&&", "||")):
                arg = None
            # a venv's bin/activate takes no argument and has no etc/conda/activate.d
            add(_conda_env(m.group(1).rsplit("/bin/activate", 1)[0] or "/", arg))
    return out


def conda_state_file(prefix: str) -> str:
    """A conda environment's state file: `conda env config vars set NAME=VALUE` stores the
    variables there (`{"env_vars": {...}}`), and activation (`conda run`, `conda activate`)
    exports them after systemd's environment, before the activate.d hooks (conda's
    activate.py _get_environment_env_vars)."""
    return f"{prefix.rstrip('/')}/conda-meta/state"


_CONDA_UNSET = "***unset***"  # conda's value for "unset this variable on activation"


def conda_state_vars(raw: bytes | None) -> dict[str, str]:
    """The variables a conda-meta/state file's env_vars sets (read as data, JSON); {} for a
    missing or unreadable file. An `***unset***` entry sets nothing. The environment's owner
    writes it: json.loads raised RecursionError on its 64 KiB of `[` (an internal error of
    every `remedy facts`/`plan` of the host); fileread.json_loads makes that a ValueError."""
    from remedy.fileread import json_loads

    if not raw:
        return {}
    try:
        doc = json_loads(raw.decode("utf-8", "replace"))
    except ValueError:
        return {}
    env = doc.get("env_vars") if isinstance(doc, dict) else None
    if not isinstance(env, dict):
        return {}
    return {
        k: v
        for k, v in env.items()
        if isinstance(k, str)
        and isinstance(v, str)
        and v != _CONDA_UNSET
        and "\0" not in v
        and re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", k)
    }


def conda_activate_scripts(prefix: str) -> str:
    """The glob of a conda environment's activation hooks (sourced in name order)."""
    return f"{prefix.rstrip('/')}/etc/conda/activate.d/*.sh"


def build_services(show_text: str, wanted: list[str] | None = None) -> ServiceFacts:
    """Relevant services (ExecStart mentions sglang, or named in `wanted`) from show output."""
    wanted = [w if "." in w else w + ".service" for w in (wanted or [])]
    res = ServiceFacts(systemd=True)
    services, interpreters, env_files, notes = (
        res.services,
        res.interpreters,
        res.env_files,
        res.notes,
    )
    seen: set[str] = set()
    for u in parse_show(show_text):
        name = (u.get("Id") or [""])[0]
        if not name or name in seen:
            continue
        execs = [e for e in (exec_argv(v) for v in u.get("ExecStart", [])) if e]
        if name not in wanted and not any(RELEVANT.search(e) for e in execs):
            continue
        seen.add(name)
        try:
            unit_name(name)
        except ValueError as exc:  # a garbled reply: never an argument of systemctl later
            notes.append(f"service left out: {exc}")
            continue
        load = (u.get("LoadState") or [""])[0]
        if load and load != "loaded":
            notes.append(f"service {name}: LoadState={load}")
            if load == "not-found":
                continue
        shown = parse_shown_environment(u)
        res.shown[name] = shown
        notes += [f"service {name}: {n}" for n in shown.notes]
        env = dict(shown.environment)
        files = [f.path for f in shown.files]
        exec_start = next((e for e in execs if RELEVANT.search(e)), execs[0] if execs else None)
        drop_ins: list[str] = []
        for v in u.get("DropInPaths", []):
            try:
                drop_ins.extend(split_show_list(v))
            except ValueError as e:
                notes.append(f"service {name}: DropInPaths= not understood: {e}")
        fragment = (u.get("FragmentPath") or [""])[0] or None
        py = interpreter_of(exec_start) if exec_start else None
        if py:
            interpreters[name] = py
        env_files[name] = files
        services.append(
            Service(
                name=name,
                unit_path=fragment,
                drop_ins=drop_ins,
                environment=env,
                environment_files=files,
                unset_environment=list(shown.unset),
                exec_start=exec_start,
                sandboxing={
                    k: v[-1].strip()
                    for k in SANDBOXING
                    if (v := u.get(k)) and v[-1].strip() not in ("", "no", "infinity")
                },
                python=None,  # filled once the interpreter's environment is probed
            )
        )
    for w in wanted:
        if w not in seen:
            notes.append(f"service {w}: not found")
    return res


def parse_passwd(text: str) -> dict[str, str]:
    """`USER<TAB>getent passwd USER` lines -> User= as the unit names it (a name or a uid) ->
    its home directory (an absolute path only)."""
    out: dict[str, str] = {}
    for line in text.splitlines():
        key, _, entry = line.partition("\t")
        f = entry.split(":")
        if key and len(f) == 7 and f[5].startswith("/") and "\0" not in f[5]:
            out.setdefault(key, f[5])
    return out


def _is_template(name: str) -> bool:
    """`sglang@.service`: a template, which `systemctl show` rejects (instances it takes)."""
    n = name if "." in name else name + ".service"
    return bool(re.fullmatch(r"[^@/]+@\.[a-z]+", n))


class ServicesCollector:
    """Sections svc.boot / svc.show / svc.rc."""

    name = "services"

    def __init__(self, wanted: list[str] | None = None) -> None:
        self.wanted = list(wanted or [])

    def command(self) -> str:
        # a template (sglang@.service) is not a unit systemctl show accepts: one such name
        # fails the whole batch, so templates are left out here and noted in parse()
        names = " ".join(quote(w) for w in self.wanted if not _is_template(w))
        greps = " ".join(f"{d}/*.service {d}/*.service.d/*.conf" for d in UNIT_DIRS)
        return (
            "m svc.boot\n"
            "if [ -d /run/systemd/system ] && command -v systemctl >/dev/null 2>&1; then\n"
            "  echo systemd\n"
            f"  U=$(grep -l -s -i sglang {greps} 2>/dev/null | sed -e 's#\\.d/[^/]*$##' -e 's#.*/##' | sort -u)\n"
            "  m svc.files; printf '%s\\n' \"$U\"\n"
            "  U=$(printf '%s\\n' \"$U\" | grep -v '@\\.service$')\n"
            f"  IFS=$NL; set -f; SVC=$(to 15 {SHOW} -- '*.service' {names} $U 2>&1); SRC=$?; set +f; IFS=$IFS0\n"
            "  m svc.show; printf '%s\\n' \"$SVC\"; m svc.rc $SRC\n"
            # the home of each unit's User= from the user database (getent: NSS, as systemd
            # reads it), never guessed as /home/USER; a name from systemctl, kept quoted
            "  m svc.passwd; set -f; for u in $(printf '%s\\n' \"$SVC\" | sed -n 's/^User=//p' | "
            'sort -u); do p=$(getent passwd -- "$u" 2>/dev/null) && '
            'printf \'%s\\t%s\\n\' "$u" "$p"; done; set +f\n'
            "else\n"
            "  echo no\n"
            "fi\n"
        )

    def parse(self, stdout: str, token: str = DEFAULT_TOKEN) -> ServiceFacts:
        return self.parse_sections(split_sections(stdout, token))

    def parse_sections(self, sections: list[Section]) -> ServiceFacts:
        res = ServiceFacts()
        boot = next((s for s in sections if s.name == "svc.boot"), None)
        if boot is None or "systemd" not in boot.body:
            return res  # no systemd as PID 1: no services, which is a fact
        res.systemd = True
        show = next((s for s in sections if s.name == "svc.show"), None)
        rc = next((s for s in sections if s.name == "svc.rc"), None)
        if show is None:
            res.notes.append("systemctl show output missing (collection cut off?)")
            return res
        if rc is not None and rc.arg.strip() not in ("0", ""):
            first = show.body.strip().splitlines()[:1]
            if not parse_show(show.body):
                res.notes.append(f"systemctl show failed (exit {rc.arg.strip()}): {first}")
                return res
        found = build_services(show.body, [w for w in self.wanted if not _is_template(w)])
        homes = parse_passwd(next((s.body for s in sections if s.name == "svc.passwd"), ""))
        found.services = [
            s.model_copy(update={"user_home": homes.get(s.sandboxing.get("User", ""))})
            if homes.get(s.sandboxing.get("User", ""))
            else s
            for s in found.services
        ]
        files = next((s for s in sections if s.name == "svc.files"), None)
        templates = {w for w in self.wanted if _is_template(w)}
        templates.update(u for u in (files.lines() if files else []) if _is_template(u))
        for t in sorted(templates):
            res.notes.append(
                f"service {t}: a template unit, not shown (systemctl show takes instances, "
                f"e.g. {t.replace('@.', '@NAME.')}; loaded instances are read)"
            )
        found.notes[:0] = res.notes
        return found
