"""Command-line checks click does not make, run before it parses.

click gives an option that takes a value the next token whatever it is, so `--out --hosts`
wrote a file named `--hosts` (two were committed by a test). Here an option's value may not
be another option of the same command (or any `--long` token); `-` (stdin/stdout) and other
values that merely start with a dash (`--launch '-x'` is not one: write `--launch=-x`) stay
possible through the `--opt=value` form.

`impact -CUDA_HOME` used to be advertised as "unset"; click reads it as bundled short options
(`-C -U ...`), so it is refused here with the form that works: `--unset CUDA_HOME`.
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


def check_argv(argv: list[str], group: Any) -> None:
    """Refuse what click would silently misread; its own errors are left to it."""
    start = _check(argv, group, "")
    if start >= len(argv):
        return
    cmd = group.commands.get(argv[start])
    if cmd is None:
        return
    _check(argv[start + 1 :], cmd, f"{argv[start]}: ")
