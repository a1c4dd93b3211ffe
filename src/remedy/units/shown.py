"""A service's environment from `systemctl show` plus its EnvironmentFiles, as systemd builds it.

Why here: facts (one batched script for every service), probes (re-read after a step) and
`impact` (unit files parsed) must all see the SAME environment. They share every piece:
systemctl's list quoting (syntax.split_show_list), the EnvironmentFile reader
(parse.load_environment_files → parse_env_file, a port of env-file.c, globs included) and
UnsetEnvironment= (parse._apply_unset, env-util.c strv_env_delete). This module only glues
those to the three `systemctl show` properties, so no caller tokenizes anything itself.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from remedy.transport.quote import quote
from remedy.units.parse import (
    EnvironmentFileRef,
    _apply_unset,
    has_glob,
    load_environment_files,
)
from remedy.units.syntax import parse_show_environment, split_show_list

SHOW_ENV_PROPS = ("Environment", "EnvironmentFiles", "UnsetEnvironment")
_IGNORE = re.compile(r"^(.*?)\s*\(ignore_errors=(\w+)\)\s*$")


@dataclass
class ShownEnvironment:
    """What `systemctl show -p Environment -p EnvironmentFiles -p UnsetEnvironment` says."""

    environment: dict[str, str] = field(default_factory=dict)
    files: list[EnvironmentFileRef] = field(default_factory=list)
    unset: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


def parse_shown_environment(props: Mapping[str, Sequence[str]]) -> ShownEnvironment:
    """Property -> its lines (EnvironmentFiles= repeats, one per file) -> ShownEnvironment.

    A value systemctl could not have printed (unterminated quote) becomes a note, not a crash.
    """
    out = ShownEnvironment()
    for v in props.get("Environment", ()):
        try:
            out.environment.update(parse_show_environment(v))
        except ValueError as e:
            out.notes.append(f"Environment= not understood: {e}")
    for v in props.get("EnvironmentFiles", ()):
        # "EnvironmentFiles=/etc/default/x (ignore_errors=no)": the path is printed raw
        m = _IGNORE.match(v)
        path, optional = (m.group(1), m.group(2) == "yes") if m else (v.strip(), False)
        if path:
            out.files.append(EnvironmentFileRef(path=path, optional=optional))
    for v in props.get("UnsetEnvironment", ()):
        try:
            out.unset.extend(split_show_list(v))
        except ValueError as e:
            out.notes.append(f"UnsetEnvironment= not understood: {e}")
    return out


@dataclass
class ServiceEnvironment:
    """The environment systemd hands the service, split as facts record it.

    environment + files_env (files win) is exactly `effective`: UnsetEnvironment= applied.
    """

    environment: dict[str, str]
    files_env: dict[str, str]
    effective: dict[str, str]
    files_used: dict[str, list[str]]  # pattern -> files it read (globs expanded)
    file_values: dict[str, dict[str, str]]  # pattern -> what its file(s) set
    missing: list[str]  # patterns without `-` that matched no readable file
    notes: list[str]


def service_environment(
    unit: str,
    shown: ShownEnvironment,
    env_files: Mapping[str, bytes | None],
    env_globs: Mapping[str, Sequence[str]] | None = None,
) -> ServiceEnvironment:
    """Environment=, then every EnvironmentFile in order, then UnsetEnvironment= removes.

    notes: ignored env-file lines and removed variables (shown.notes stay the caller's)."""
    loaded, diags = load_environment_files(
        unit, shown.files, env_files, env_globs or {}, strict=False
    )
    files_env: dict[str, str] = {}
    for lf in loaded:
        files_env.update(lf.values)
    merged = {**shown.environment, **files_env}
    eff = _apply_unset(merged, shown.unset)
    notes = [f"{unit}: {d.message}" for d in diags if d.severity != "error"]
    for k in sorted(set(merged) - set(eff)):
        notes.append(f"{unit}: {k} removed by UnsetEnvironment=")
    return ServiceEnvironment(
        environment={k: v for k, v in shown.environment.items() if k in eff and k not in files_env},
        files_env={k: v for k, v in files_env.items() if k in eff},
        effective=eff,
        files_used={lf.pattern: list(lf.paths) for lf in loaded},
        file_values={lf.pattern: dict(lf.values) for lf in loaded},
        missing=[lf.pattern for lf in loaded if lf.missing and not lf.optional],
        notes=notes,
    )


def env_file_read_script(
    patterns: Sequence[str],
    emit: str,
    *,
    limit: int = 65536,
    as_user: Mapping[str, str] | None = None,
) -> str:
    """sh that reads each env file (globs expanded on the host, as glob(3) would).

    emit: a shell command prefix called as `EMIT KIND ARG` before its output (facts use their
    section marker `m`): `envfile PATH` + the content in base64 (a file with invalid UTF-8 is
    one systemd refuses: the bytes must arrive intact), `envfile.missing PATH`,
    `envglob PATTERN` + matched paths one a line.
    as_user: pattern -> the account that reads those files (a unit's User= for its own
    login profile): tested and read with that user's privileges (setpriv, as root), so a
    link to a file only root may read is one the reader cannot read (missing), never
    content; no setpriv or no such user: missing too. The others are read as systemd reads
    EnvironmentFiles and drop-ins: as root.
    """
    parts: list[str] = []
    users = as_user or {}
    if any(p in users for p in patterns):
        parts.append(AS_USER_FN)
    for pat in patterns:
        q = quote(pat)
        who = f"remedy_as {quote(users[pat])} " if pat in users else ""
        if has_glob(pat):
            g = glob_word(pat)
            parts.append(
                f"{emit} envglob {q}; {glob_list_script(pat)}"
                f'for f in {g}; do if [ -f "$f" ] && {who}test -r "$f"; then {emit} envfile "$f"; '
                f'{who}head -c {int(limit)} -- "$f" | base64; fi; done\n'
            )
        else:
            parts.append(
                f"if [ -f {q} ] && {who}test -r {q}; then {emit} envfile {q}; "
                f"{who}head -c {int(limit)} -- {q} | base64; "
                f"else {emit} envfile.missing {q}; fi\n"
            )
    return "".join(parts)


# `remedy_as USER CMD...`: CMD with USER's uid, gid and groups when running as root (setpriv,
# util-linux; no_new_privs), else as it is (a non-root reader reads only what it may); fails
# when there is no setpriv or no such user
AS_USER_FN = (
    "remedy_as() { "
    'if [ "$(id -u)" != 0 ]; then shift; "$@"; return; fi; '
    "command -v setpriv >/dev/null 2>&1 || return 1; "
    'remedy_u=$(id -u -- "$1" 2>/dev/null) && remedy_g=$(id -g -- "$1" 2>/dev/null) '
    "|| return 1; shift; "
    'setpriv --reuid="$remedy_u" --regid="$remedy_g" --init-groups --no-new-privs -- "$@"; }\n'
)


def glob_list_script(pattern: str) -> str:
    """sh that prints the regular files `pattern` matches, one a line, in glob(3) order."""
    return f'for f in {glob_word(pattern)}; do [ -f "$f" ] && printf \'%s\\n\' "$f"; done\n'


def glob_word(pattern: str) -> str:
    """A shell word that globs like `pattern`: literal runs quoted, * ? [..] left raw."""
    out: list[str] = []
    lit = ""
    i = 0
    while i < len(pattern):
        c = pattern[i]
        if c in "*?":
            out.append(quote(lit) if lit else "")
            lit = ""
            out.append(c)
        elif c == "[" and "]" in pattern[i + 2 :]:
            j = pattern.index("]", i + 2)
            body = pattern[i : j + 1]
            if re.fullmatch(r"\[[!^]?[A-Za-z0-9_.,:+@%-]+\]", body):
                out.append(quote(lit) if lit else "")
                lit = ""
                out.append(body)
                i = j
            else:
                lit += c
        else:
            lit += c
        i += 1
    if lit:
        out.append(quote(lit))
    return "".join(out)
