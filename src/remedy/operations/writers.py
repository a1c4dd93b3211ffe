"""Every file remedy writes that another program parses, quoted for that program's syntax.

Why one module: a value that came from a host (a toolkit path, an ExecStart) is data. Written
into a file that a shell sources or that systemd parses, it must come back as exactly that
value and never as syntax. Each writer here quotes for its own consumer and has a round-trip
property test (tests/security/test_quoting_writers.py) that parses the file back with the
real consumer (`sh -c '. FILE'`, `systemctl show`).
"""

from __future__ import annotations

import shlex
from collections.abc import Mapping, Sequence

from remedy.units.syntax import env_name_is_valid, quote_assignment

PROFILE_HEADER = "# written by remedy; delete this file to undo"


def _name(var: str) -> str:
    if not env_name_is_valid(var):
        raise ValueError(f"{var!r} is not a valid environment variable name")
    return var


def profile_text(env: Mapping[str, str], unset: Sequence[str] = ()) -> str:
    """A /etc/profile.d file: `export VAR='value'` (shlex-quoted: sourced by sh at login)."""
    lines = [PROFILE_HEADER]
    for k, v in env.items():
        if "\0" in v:
            raise ValueError(f"the value of {k} contains a NUL byte")
        lines.append(f"export {_name(k)}={shlex.quote(v)}")
    lines += [f"unset {_name(k)}" for k in unset]
    return "\n".join(lines) + "\n"


def dropin_env_text(env: Mapping[str, str], unset: Sequence[str] = ()) -> str:
    """A systemd drop-in with quoted Environment= lines (systemd's quoting, `%` doubled)."""
    from remedy.units.dropin import render_dropin  # systemd's parser: only for a drop-in

    return render_dropin(dict(env), list(unset))


def environment_file_text(env: Mapping[str, str]) -> str:
    """An EnvironmentFile= file: `VAR="value"` lines with systemd's EnvironmentFile quoting
    (inside double quotes `\\`, `"`, `` ` `` and `$` are escaped; no specifiers there)."""
    lines = ["# written by remedy"]
    for k, v in env.items():
        for c in v:
            if c in "\n\r\0":
                raise ValueError(f"the value of {k} contains a newline or NUL")
        body = "".join("\\" + c if c in '\\"`$' else c for c in v)
        lines.append(f'{_name(k)}="{body}"')
    return "\n".join(lines) + "\n"


# /etc/environment as pam_env reads it (linux-pam modules/pam_env/pam_env.c, _parse_env_file):
# leading blanks skipped, an optional "export " skipped, the value ends at '#' or the line's
# end, quotes around it stripped; no escapes. A value is written only where it comes back
# exactly: no blank, quote, '#', '$' or backslash (a path, a list of paths).
ETC_ENVIRONMENT = "/etc/environment"
_PAM_PLAIN = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-./:+,@%=~")


def pam_env_plain(value: str) -> bool:
    """Whether pam_env reads `NAME=value` in /etc/environment back as exactly `value`."""
    return bool(value) and all(c in _PAM_PLAIN for c in value)


# pam_env up to 1.3 (Ubuntu 20.04, EL8) reads a line with fgets into BUF_SIZE 1024 bytes and
# takes the rest of a longer line as a line of its own (_assemble_line stops at a chunk that
# does not end in a backslash): a host path of ~1 KiB whose tail reads `PATH=/home/u/bin` or
# `LD_PRELOAD=/home/u/x` would set that variable for every SSH session, root's included.
# 1.5.2 (BUF_SIZE 8192) stops reading the file at such a line instead. So a line goes in only
# when it and its newline fit one 1024-byte read. Source read:
# https://github.com/linux-pam/linux-pam/blob/0588831303c27c32d6be8ae6cdf62daa40933745/modules/pam_env/pam_env.c
PAM_ENV_LINE_MAX = 1022


def pam_env_line_fits(var: str, value: str) -> bool:
    """Whether `var=value` is one line pam_env (any version) reads back as exactly that."""
    return pam_env_plain(value) and len(f"{var}={value}".encode()) <= PAM_ENV_LINE_MAX


def etc_environment_line(var: str, value: str) -> str:
    """One /etc/environment assignment (pam_env's syntax), for a value pam_env_line_fits."""
    if not pam_env_line_fits(var, value):
        raise ValueError(f"the value of {var} cannot be written to {ETC_ENVIRONMENT} exactly")
    return f"{_name(var)}={value}"


def _exec_word(word: str) -> str:
    """One word of a systemd command line: double-quoted, `\\` and `"` escaped, `%` doubled,
    `$` doubled (systemd expands $VAR in ExecStart= words)."""
    if any(c in word for c in "\n\r\0"):
        raise ValueError(f"a command-line word contains a newline or NUL: {word!r}")
    body = word.replace("\\", "\\\\").replace('"', '\\"').replace("%", "%%").replace("$", "$$")
    return f'"{body}"'


# config_parse_exec() reads the prefixes `-@:+!|` of ExecStart='s first word AFTER unquoting
# it (systemd src/core/load-fragment.c; remedy's model: units/parse.py _exec), and a first
# word `;` is a separator: quoting cannot keep them literal. `"+/opt/x"` runs /opt/x with full
# privileges and no sandboxing (User= ignored), `"-…"` hides its failure, `"@…"` makes the
# next word argv[0]. Such a word is refused, never written.
_EXEC_PREFIXES = "-@:+!|"


def _exec_path(word: str) -> str:
    if not word or word[0] in _EXEC_PREFIXES or word == ";":
        raise ValueError(
            f"the command's executable {word!r} would be read by systemd as an ExecStart= "
            "prefix or separator, not as a path; remedy writes no such line"
        )
    return word


def exec_start_dropin_text(argv: Sequence[str]) -> str:
    """A drop-in that resets ExecStart= to `argv`, each word quoted for systemd."""
    if not argv:
        raise ValueError("an empty command line")
    _exec_path(argv[0])
    line = "ExecStart=" + " ".join(_exec_word(w) for w in argv)
    return f"# written by remedy\n[Service]\nExecStart=\n{line}\n"


def exec_start_line(argv: Sequence[str]) -> str:
    """The ExecStart= line alone (shown in previews)."""
    _exec_path(argv[0] if argv else "")
    return "ExecStart=" + " ".join(_exec_word(w) for w in argv)


__all__ = [
    "dropin_env_text",
    "environment_file_text",
    "exec_start_dropin_text",
    "exec_start_line",
    "profile_text",
    "quote_assignment",
]
