"""The login shell's environment (a service's environment is read by remedy.units.shown).

The login shell is run interactive + login (`-lic`) because that is where engineers put
`export CUDA_HOME=...` (below the "not interactive, return" guard of Debian's .bashrc), and
it is the environment a hand-started `python -m sglang.launch_server` inherits. Its output
is framed by markers so a chatty rc file cannot corrupt it, and read as `env -0` so values
with newlines survive.
"""

from __future__ import annotations

import re

from remedy.facts.sections import DEFAULT_TOKEN, split_sections
from remedy.transport.quote import quote

_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def login_env_script(token: str = DEFAULT_TOKEN, timeout: int = 10) -> str:
    """A `sh` script that prints the login shell's `env -0` between two markers."""
    inner = (
        f"printf '\\n%s\\n' {quote(token + ' env')}; "
        "env -0 2>/dev/null || env; "
        f"printf '\\n%s\\n' {quote(token + ' env.end')}"
    )
    return (
        'S=${SHELL:-/bin/sh}; [ -x "$S" ] || S=/bin/sh\n'
        "case ${S##*/} in bash|zsh|ksh|mksh|dash|sh|ash|yash) F=-lic;; *) F=-lc;; esac\n"
        f'if command -v timeout >/dev/null 2>&1; then TO="timeout {int(timeout)}"; else TO=; fi\n'
        f"printf '%s\\n' \"{token} shell $S\"\n"
        f'exec $TO "$S" $F {quote(inner)} </dev/null 2>/dev/null\n'
    )


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
        out.pop("_", None)
        return out
    last: str | None = None
    for line in body.split("\n"):
        k, sep, v = line.partition("=")
        if sep and _NAME.match(k):
            out[k] = v
            last = k
        elif last is not None and line:
            out[last] += "\n" + line
    out.pop("_", None)
    return out


def parse_login_env(stdout: str, token: str = DEFAULT_TOKEN) -> tuple[dict[str, str], str | None]:
    """(environment, shell) from login_env_script's output; ({}, shell) when it was cut off."""
    shell: str | None = None
    env: dict[str, str] = {}
    body: str | None = None
    complete = False
    for s in split_sections(stdout, token):
        if s.name == "shell":
            shell = s.arg or None
        elif s.name == "env":
            body = s.body
        elif s.name == "env.end":
            complete = True
    if body is not None:
        if not complete:
            # a dropped connection: keep only entries that were certainly complete
            body = body.rsplit("\0", 1)[0] if "\0" in body else body.rsplit("\n", 1)[0]
        env = parse_env_block(body)
    return env, shell
