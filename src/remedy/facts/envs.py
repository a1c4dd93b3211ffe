"""The login shell's environment, read never run (a service's is read by remedy.units.shown).

The login environment is where engineers put `export CUDA_HOME=...` (/etc/profile.d, ~/.profile,
~/.bashrc below Debian's "not interactive, return" guard), and it is what a hand-started
`python -m sglang.launch_server` inherits. remedy used to run root's interactive login shell to
print it; that executed every /etc/profile.d file as root on every `facts`, so one injected
profile file ran again on each later `facts`, `plan --host` and `run` (issue 16, class 3).
Now the host only prints the session's `env -0` and the text of the profile files, and
`evaluate_profile` below reads their assignments as data: nothing in them is executed, a
command substitution is reported and skipped.
"""

from __future__ import annotations

import re

from remedy.facts.sections import DEFAULT_TOKEN, split_sections
from remedy.transport.base import SESSION_PATH_VAR
from remedy.transport.quote import quote

_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")

# What a bash login shell reads, in order (bash(1) INVOCATION; Debian's /etc/profile sources
# /etc/bash.bashrc and /etc/profile.d/*.sh; its ~/.profile sources ~/.bashrc).
SYSTEM_PROFILES = ("/etc/profile", "/etc/bash.bashrc")
USER_PROFILES = (".bash_profile", ".bash_login", ".profile")
PROFILE_CAP = 65536


def login_env_script(token: str = DEFAULT_TOKEN, timeout: int = 10) -> str:
    """A `sh` script that prints the session's `env -0` and the profile files' text, between
    markers. It sources nothing and runs no login shell (`timeout` is kept for callers)."""
    del timeout
    t = quote(token)
    files = " ".join([*SYSTEM_PROFILES, "/etc/profile.d/*.sh"])
    users = " ".join(f'"$HOME"/{f}' for f in USER_PROFILES)
    return (
        f'T={t}\nm() {{ printf \'\\n%s %s\\n\' "$T" "$*"; }}\n'
        'm shell "${SHELL:-/bin/sh}"\n'
        'm uid "$(id -u 2>/dev/null)"\n'
        # env runs from the system PATH (the transport's); it prints the session's PATH,
        # kept in SESSION_PATH_VAR, as PATH
        f'm env; if [ -n "${{{SESSION_PATH_VAR}+x}}" ]; then '
        f'set -- -u {SESSION_PATH_VAR} PATH="${SESSION_PATH_VAR}"; else set --; fi\n'
        'env -0 "$@" 2>/dev/null || env "$@"; m env.end\n'
        f"for f in {files}; do\n"
        '  [ -f "$f" ] && [ -r "$f" ] || continue\n'
        f'  m profile "$f"; head -c {PROFILE_CAP} -- "$f"\n'
        "done\n"
        f"for f in {users}; do\n"
        '  [ -f "$f" ] && [ -r "$f" ] || continue\n'
        f'  m profile "$f"; head -c {PROFILE_CAP} -- "$f"; break\n'
        "done\n"
        f'f="$HOME/.bashrc"; [ -f "$f" ] && [ -r "$f" ] && {{ m profile "$f"; head -c {PROFILE_CAP} -- "$f"; }}\n'
        "m profile.end\n"
    )


# the name the lines of /etc/profile after its /etc/profile.d loop are known by: read after
# every /etc/profile.d file (remedy's zz-remedy-*.sh included), so a value set there wins in
# login shells, like a user's own file (facts.shell_env_from)
ETC_PROFILE_TAIL = "/etc/profile (after its /etc/profile.d loop)"
# the loop that sources /etc/profile.d, as each distribution writes it: Debian's
# `for i in /etc/profile.d/*.sh; do` (inside `if [ -d /etc/profile.d ]; then`), Fedora's and
# RHEL's `for i in /etc/profile.d/*.sh /etc/profile.d/sh.local ; do` (setup package,
# https://pagure.io/setup/blob/master/f/profile), Alpine's `for script in
# /etc/profile.d/*.sh ; do` (alpine-baselayout), Arch's `for profile in /etc/profile.d/*.sh;
# do` inside `if test -d /etc/profile.d/; then` (filesystem package); `do` may be on the
# next line
_PROFILE_D_LOOP = re.compile(
    r"^\s*for\s+\w+\s+in\s+(?:[^;\s]+\s+)*/etc/profile\.d/\*\.sh(?:\s+[^;\s]+)*\s*;?\s*(?:do)?\s*$"
)
_LOOP_OPEN = re.compile(r"^(?:for|while|until|select)\s")
_LOOP_CLOSE = re.compile(r"^done(?:\s|;|$)")
_PROFILE_D_IF = re.compile(
    r"^if\s+(?:\[\s+-d\s+/etc/profile\.d/?\s+\]|test\s+-d\s+/etc/profile\.d/?)\s*(?:;\s*then)?$"
)


def split_etc_profile(profiles: list[tuple[str, str]]) -> list[tuple[str, str]]:
    """The profile files in the order a login shell reads their lines: /etc/profile sources
    /etc/profile.d/*.sh in a `for` loop (Debian's inside `if [ -d /etc/profile.d ]; then`,
    Arch's inside `if test -d /etc/profile.d/; then`, Fedora's/RHEL's and Alpine's bare), so
    what follows that block (an admin's appended `export CUDA_HOME=...`) is read after every
    profile.d file. Split there: the tail goes after the last /etc/profile.d file, under
    ETC_PROFILE_TAIL. A /etc/profile without such a loop is kept whole."""
    text = next((t for p, t in profiles if p == "/etc/profile"), None)
    if text is None:
        return profiles
    lines = text.splitlines(keepends=True)
    start = next((i for i, ln in enumerate(lines) if _PROFILE_D_LOOP.match(ln)), None)
    if start is None:
        return profiles
    # its `done`: loops nested in its body (none in the distributions' own) counted
    depth, end = 1, None
    for j in range(start + 1, len(lines)):
        ln = lines[j].strip()
        if _LOOP_OPEN.match(ln) and not _LOOP_CLOSE.search(ln.rsplit(";", 1)[-1].strip()):
            depth += 1
        elif _LOOP_CLOSE.match(ln):
            depth -= 1
            if depth == 0:
                end = j
                break
    if end is None:
        return profiles
    before = [ln.strip() for ln in lines[:start] if ln.strip()]
    if before and _PROFILE_D_IF.match(before[-1]):
        # the enclosing if: its `fi` (only `unset NAME` between `done` and it)
        for j in range(end + 1, len(lines)):
            ln = lines[j].strip()
            if ln == "fi":
                end = j
                break
            if ln and not ln.startswith("unset ") and not ln.startswith("#"):
                break
    head, tail = "".join(lines[: end + 1]), "".join(lines[end + 1 :])
    out = [(p, head if p == "/etc/profile" else t) for p, t in profiles]
    if tail.strip():
        last = max(
            (i for i, (p, _) in enumerate(out) if p.startswith("/etc/")), default=len(out) - 1
        )
        out.insert(last + 1, (ETC_PROFILE_TAIL, tail))
    return out


def parse_env_block(body: str) -> dict[str, str]:
    """`env -0` output (NUL separated) or plain `env` (newline separated, best effort).

    With plain env a value containing a newline is ambiguous: a line that does not start with
    NAME= is taken as a continuation of the previous value. `_` (the shell's last argument)
    is dropped: it is noise, and it holds our own marker.
    """
    out: dict[str, str] = {}
    if "\0" in body:
        for entry in body.split("\0"):
            k, sep, v = entry.partition("=")
            if sep and _NAME.match(k):
                out[k] = v
        return _session_view(out)
    last: str | None = None
    for line in body.split("\n"):
        k, sep, v = line.partition("=")
        if sep and _NAME.match(k):
            out[k] = v
            last = k
        elif last is not None and line:
            out[last] += "\n" + line
    return _session_view(out)


def _session_view(env: dict[str, str]) -> dict[str, str]:
    """The session's environment: the transport ran `env` with the fixed system PATH and kept
    the session's in SESSION_PATH_VAR (remedy.transport.base), which is its PATH."""
    env.pop("_", None)
    if SESSION_PATH_VAR in env:
        env["PATH"] = env.pop(SESSION_PATH_VAR)
    return env


def parse_login_env(
    stdout: str,
    token: str = DEFAULT_TOKEN,
    notes: list[str] | None = None,
    origins: dict[str, str] | None = None,
) -> tuple[dict[str, str], str | None]:
    """(environment, shell) from login_env_script's output; ({}, shell) when it was cut off.

    The session environment, then each profile file's assignments evaluated as data
    (`evaluate_profile`). Output of the older script (a login shell's env, no profile
    sections) is still read as it was recorded."""
    shell: str | None = None
    env: dict[str, str] = {}
    body: str | None = None
    complete = False
    uid: str | None = None
    profiles: list[tuple[str, str]] = []
    for s in split_sections(stdout, token):
        if s.name == "shell":
            shell = s.arg or None
        elif s.name == "uid":
            uid = s.arg.strip() or None
        elif s.name == "env":
            body = s.body
        elif s.name == "env.end":
            complete = True
        elif s.name == "profile":
            profiles.append((s.arg, s.body))
    if body is not None:
        if not complete:
            # a dropped connection: keep only entries that were certainly complete
            body = body.rsplit("\0", 1)[0] if "\0" in body else body.rsplit("\n", 1)[0]
        env = parse_env_block(body)
    if complete and profiles:
        profiles = split_etc_profile(profiles)
        env = evaluate_profile(env, profiles, uid=uid, notes=notes, origins=origins)
    return env, shell


def session_env_of(stdout: str, token: str = DEFAULT_TOKEN) -> dict[str, str] | None:
    """The environment of the session login_env_script ran in (a non-interactive `ssh host
    cmd` session over SSH), before any profile file is evaluated; None when cut off."""
    body: str | None = None
    for s in split_sections(stdout, token):
        if s.name == "env":
            body = s.body
        elif s.name == "env.end" and body is not None:
            return parse_env_block(body)
    return None


_ASSIGN_HEAD = re.compile(
    r"^(?:(export|readonly|declare\s+-x|typeset\s+-x)\s+)?([A-Za-z_][A-Za-z0-9_]*)(\+?=)"
)
_EXPORT_NAMES = re.compile(r"^export\s+((?:[A-Za-z_][A-Za-z0-9_]*\s*)+)$")
_UNSET = re.compile(r"^unset\s+(?:-v\s+)?((?:[A-Za-z_][A-Za-z0-9_]*\s*)+)$")
_ROOT_TEST = re.compile(
    r"""^(el)?if\s+\[\s+"?\$(?:\(id -u\)|\{?EUID\}?|\{?UID\}?)"?\s+(-eq|=|-ne|!=)\s+"?0"?\s+\]"""
)


class _Unsafe(Exception):
    """A value that would need a command run to know it."""


def _expand(text: str, scope: dict[str, str]) -> tuple[str, int]:
    """One shell word's value (quotes removed, $NAME / ${NAME} / ${NAME:-x} expanded from
    scope) and where it ended. `$(`, backticks and `${NAME:=…}`-style forms raise _Unsafe."""
    out: list[str] = []
    i, n = 0, len(text)
    quote_ch: str | None = None
    while i < n:
        c = text[i]
        if quote_ch == "'":
            if c == "'":
                quote_ch = None
            else:
                out.append(c)
            i += 1
            continue
        if quote_ch is None and c in " \t;&|#":
            break
        if c == "'" and quote_ch is None:
            quote_ch = "'"
            i += 1
            continue
        if c == '"':
            quote_ch = None if quote_ch == '"' else '"'
            i += 1
            continue
        if c == "`":
            raise _Unsafe("backticks")
        if c == "\\" and i + 1 < n:
            nxt = text[i + 1]
            if quote_ch == '"' and nxt not in '$`"\\':
                out.append(c)
            out.append(nxt)
            i += 2
            continue
        if c == "$" and i + 1 < n:
            nxt = text[i + 1]
            if nxt == "(":
                raise _Unsafe("command substitution")
            if nxt == "{":
                close = text.find("}", i + 2)
                if close < 0:
                    raise _Unsafe("unterminated ${")
                inner = text[i + 2 : close]
                m = re.fullmatch(r"([A-Za-z_][A-Za-z0-9_]*)(?:(:?-)(.*))?", inner)
                if not m:
                    raise _Unsafe(f"${{{inner}}}")
                val = scope.get(m.group(1))
                if m.group(2) and (val is None or (m.group(2) == ":-" and not val)):
                    val, _ = _expand(m.group(3), scope)
                out.append(val or "")
                i = close + 1
                continue
            m = re.match(r"[A-Za-z_][A-Za-z0-9_]*", text[i + 1 :])
            if m:
                out.append(scope.get(m.group(0), ""))
                i += 1 + m.end()
                continue
        out.append(c)
        i += 1
    if quote_ch is not None:
        raise _Unsafe("unterminated quote")
    return "".join(out), i


def evaluate_profile(
    env: dict[str, str],
    files: list[tuple[str, str]],
    *,
    uid: str | None = None,
    notes: list[str] | None = None,
    origins: dict[str, str] | None = None,
) -> dict[str, str]:
    """The environment a login shell would export after reading `files`, computed without
    running them: `[export] NAME=value`, `export NAME`, `unset NAME`, in file order.

    Structure is read loosely, as data: `if [ "$(id -u)" -eq 0 ]` (Debian's /etc/profile)
    is decided from the uid; of any other if/elif/else only the first branch counts; `case`
    bodies and function bodies are skipped. A value that needs a command (`$(…)`, backticks)
    is not evaluated: the variable keeps its earlier value and a note says so."""
    scope = dict(env)
    exported = set(env)
    for path, text in files:
        # stack of (taking branch?, a branch already taken?) for if blocks
        stack: list[tuple[bool, bool]] = []
        skip_depth = 0  # inside case ... esac or a function body
        joined = re.sub(r"\\\n", "", text)
        for raw in joined.splitlines():
            line = raw.strip()
            if not line or line.startswith("#"):
                continue
            if skip_depth:
                if re.match(r"^(case)\b", line) or re.search(r"\(\)\s*\{?\s*$", line):
                    skip_depth += 1
                if re.match(r"^(esac|\})\b", line) or line in ("esac", "}"):
                    skip_depth -= 1
                continue
            if re.match(r"^case\b", line) or re.search(
                r"^(function\s+)?[A-Za-z_][A-Za-z0-9_]*\s*\(\)\s*\{?\s*$", line
            ):
                skip_depth = 1
                continue
            active = all(take for take, _ in stack)
            m = _ROOT_TEST.match(line)
            if line.startswith("if ") or line.startswith("if\t"):
                if m and uid is not None:
                    is_root = uid == "0"
                    take = is_root if m.group(2) in ("-eq", "=") else not is_root
                else:
                    take = True
                stack.append((take, take))
                if ";" in line and "then" in line.split(";", 1)[1]:
                    rest = line.split("then", 1)[1].strip()
                    if rest and not rest.startswith("fi"):
                        line = rest.removesuffix("fi").strip().rstrip(";").strip()
                    else:
                        if rest.startswith("fi") and stack:
                            stack.pop()
                        continue
                else:
                    continue
                active = all(take for take, _ in stack)
            elif line.startswith("elif ") and stack:
                _, taken = stack[-1]
                take = (not taken) and bool(m) and uid is not None
                if take and m is not None:
                    is_root = uid == "0"
                    take = is_root if m.group(2) in ("-eq", "=") else not is_root
                stack[-1] = (take, taken or take)
                continue
            elif line.startswith("else") and stack:
                _, taken = stack[-1]
                stack[-1] = (not taken, True)
                rest = line[4:].strip()
                if not rest:
                    continue
                line = rest
                active = all(take for take, _ in stack)
            elif line.startswith("fi") and stack:
                stack.pop()
                continue
            if not active:
                continue
            if line.endswith("fi") and stack and line.rstrip().endswith("; fi"):
                line = line[: -len("fi")].rstrip().rstrip(";")
                stack.pop()
            # a guard such as `[ -z "$PS1" ] && return`: the interactive shell goes on
            if line.startswith("[") and "&&" in line:
                line = line.split("&&", 1)[1].strip()
            for part in _split_commands(line):
                _apply(part, scope, exported, path, notes, origins)
    if origins is not None:
        for k in [k for k in origins if k not in exported or k not in scope]:
            del origins[k]
    return {k: v for k, v in scope.items() if k in exported}


def _split_commands(line: str) -> list[str]:
    """`A=1; export A` -> ['A=1', 'export A'] (a `;` inside quotes is kept)."""
    parts, buf, q = [], [], None
    for c in line:
        if q:
            buf.append(c)
            if c == q:
                q = None
            continue
        if c in "'\"":
            q = c
        if c == ";":
            parts.append("".join(buf).strip())
            buf = []
            continue
        buf.append(c)
    parts.append("".join(buf).strip())
    return [p for p in parts if p]


def _apply(
    cmd: str,
    scope: dict[str, str],
    exported: set[str],
    path: str,
    notes: list[str] | None,
    origins: dict[str, str] | None = None,
) -> None:
    """One command of a profile file, on scope/exported. origins: NAME -> the file whose
    assignment set its value outright (not `NAME=$NAME:...`, which keeps what came before)."""
    m = _EXPORT_NAMES.match(cmd)
    if m:
        exported.update(m.group(1).split())
        return
    m = _UNSET.match(cmd)
    if m:
        for name in m.group(1).split():
            scope.pop(name, None)
            exported.discard(name)
            if origins is not None:
                origins.pop(name, None)
        return
    m = _ASSIGN_HEAD.match(cmd)
    if not m:
        return
    name, op = m.group(2), m.group(3)
    try:
        value, _ = _expand(cmd[m.end() :], scope)
    except _Unsafe as exc:
        if notes is not None:
            notes.append(f"login environment: {name} in {path} not evaluated ({exc}: not run)")
        return
    scope[name] = scope.get(name, "") + value if op == "+=" else value
    if m.group(1):
        exported.add(name)
    if origins is not None:
        rest = cmd[m.end() :]
        # `NAME=$NAME:...` composes with what came before: it leaves the origin as it was
        if not (op == "+=" or f"${name}" in rest or f"${{{name}" in rest):
            origins[name] = path
