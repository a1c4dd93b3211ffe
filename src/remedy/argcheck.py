"""Command-line checks click does not make, run before it parses.

click gives an option that takes a value the next token whatever it is, so `--out --hosts`
wrote a file named `--hosts` (two were committed by a test). Here an option's value may not
be another option of the same command (or any `--long` token); `-` (stdin/stdout) and other
values that merely start with a dash (`--launch '-x'` is not one: write `--launch=-x`) stay
possible through the `--opt=value` form.

`impact -CUDA_HOME` used to be advertised as "unset"; click reads it as bundled short options
(`-C -U ...`), so it is refused here with the form that works: `--unset CUDA_HOME`.

The host is an argument of facts/run/resume/rollback/history and an option (`--host`) of
plan/diagnose/impact. A user who mixed them got click's "No such option: --host (Possible
options: --forks)" or "Got unexpected extra argument(s) (gpu01)"; here each says the form
its command takes.
"""

from __future__ import annotations

import re
from typing import Any

from remedy.errors import InputError

_ENV_NAME = re.compile(r"-[A-Za-z_][A-Za-z0-9_]*\Z")


def _options(cmd: Any) -> tuple[set[str], set[str]]:
    """(every option name, the names of options that take a value) of a click command."""
    names: set[str] = set()
    valued: set[str] = set()
    for p in getattr(cmd, "params", []):
        if getattr(p, "param_type_name", "") != "option":
            continue
        opts = [*p.opts, *p.secondary_opts]
        names.update(opts)
        if not p.is_flag and not p.count and p.nargs != 0:
            valued.update(p.opts)
    return names, valued


def _check(tokens: list[str], cmd: Any, where: str) -> int:
    """Check tokens against one command's options; returns the index where a subcommand
    name starts (for a group), else len(tokens)."""
    names, valued = _options(cmd)
    sub = getattr(cmd, "commands", None)
    i = 0
    while i < len(tokens):
        tok = tokens[i]
        if tok == "--":
            return len(tokens)
        if tok in valued:
            nxt = tokens[i + 1] if i + 1 < len(tokens) else None
            if nxt is not None and nxt != "-" and (nxt in names or nxt.startswith("--")):
                raise InputError(
                    f"{where}{tok} needs a value, but the next word is the option {nxt!r}",
                    hint=f"give {tok} its value first (a value that starts with '-': {tok}=VALUE)",
                )
            i += 2
            continue
        if sub is not None and not tok.startswith("-"):
            return i
        if (
            where.startswith("impact")
            and tok not in names
            and _ENV_NAME.match(tok)
            and (tok[1:].isupper() or "_" in tok)
        ):
            raise InputError(
                f"{tok!r} is not an option; to unset a variable write --unset {tok[1:]}",
                hint=f"e.g. remedy impact --unset {tok[1:]}",
            )
        i += 1
    return len(tokens)


def _params(cmd: Any, kind: str) -> list[Any]:
    return [p for p in getattr(cmd, "params", []) if getattr(p, "param_type_name", "") == kind]


def _host_form(tokens: list[str], cmd: Any, name: str) -> None:
    """Refuse `--host H` where the host is the argument, and a bare word where it is --host."""
    names, valued = _options(cmd)
    takes_host_arg = any(p.name == "host" for p in _params(cmd, "argument"))
    i = 0
    while i < len(tokens):
        tok = tokens[i]
        if tok == "--":
            return
        if tok in valued:
            i += 2
            continue
        flag = tok.split("=", 1)[0]
        if takes_host_arg and flag in ("--host", "-H") and flag not in names:
            host = tok.split("=", 1)[1] if "=" in tok else (tokens[i + 1 : i + 2] or ["HOST"])[0]
            raise InputError(
                f"remedy {name} takes the host as its argument, not {flag}",
                hint=f"e.g. remedy {name} {host} (an ssh_config alias, user@host or host:port)",
            )
        if tok.startswith("-") and tok != "-" and flag not in names:
            return  # an unknown option (`--exmaple`): click's "did you mean" says more
        if not tok.startswith("-") and not _params(cmd, "argument") and "--host" in names:
            raise InputError(
                f"remedy {name} takes no argument ({tok!r}): name the host with an option",
                hint=f"e.g. remedy {name} --host {tok}, or a built-in example: "
                f"remedy {name} --example NAME (see `remedy examples`)",
            )
        i += 1


def check_argv(argv: list[str], group: Any) -> None:
    """Refuse what click would silently misread; its own errors are left to it."""
    start = _check(argv, group, "")
    if start >= len(argv):
        return
    cmd = group.commands.get(argv[start])
    if cmd is None:
        return
    _check(argv[start + 1 :], cmd, f"{argv[start]}: ")
    _host_form(argv[start + 1 :], cmd, argv[start])
