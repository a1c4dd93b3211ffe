"""Environments: the login shell's, and systemd's quoting of Environment= in `show` output.

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


# ---- systemd ------------------------------------------------------------------------------

_CESC = {
    "a": "\a",
    "b": "\b",
    "f": "\f",
    "n": "\n",
    "r": "\r",
    "t": "\t",
    "v": "\v",
    "\\": "\\",
    '"': '"',
    "'": "'",
    "`": "`",
    "$": "$",
    "s": " ",
}


def split_systemd_words(text: str) -> list[str]:
    """Split a `systemctl show` string list (Environment=, DropInPaths=) into words.

    systemd prints each element with shell_maybe_quote(): plain if it has no whitespace,
    control characters, invalid UTF-8 or any of "\\`$*?['()<>|&;!, else double-quoted with
    \\ " ` $ backslash-escaped and control bytes C-escaped (\\n, \\t, \\xNN). Old systemd
    printed elements unquoted; those still split on spaces.
    """
    words: list[str] = []
    i, n = 0, len(text)
    while i < n:
        while i < n and text[i] == " ":
            i += 1
        if i >= n:
            break
        buf = bytearray()
        quoted = False
        while i < n and (quoted or text[i] != " "):
            c = text[i]
            if c == '"':
                quoted = not quoted
                i += 1
                continue
            if c == "\\" and i + 1 < n:
                nxt = text[i + 1]
                if nxt == "x" and re.match(r"[0-9a-fA-F]{2}", text[i + 2 : i + 4]):
                    buf.append(int(text[i + 2 : i + 4], 16))
                    i += 4
                    continue
                if re.match(r"[0-7]{3}", text[i + 1 : i + 4]):
                    buf.append(int(text[i + 1 : i + 4], 8) & 0xFF)
                    i += 4
                    continue
                if nxt in _CESC:
                    buf += _CESC[nxt].encode()
                    i += 2
                    continue
                buf += c.encode()
                i += 1
                continue
            buf += c.encode("utf-8", "surrogateescape")
            i += 1
        words.append(buf.decode("utf-8", "replace"))
    return words


def parse_systemd_environment(value: str) -> dict[str, str]:
    """Environment= value of `systemctl show` -> {NAME: value}; later entries win, as in systemd.

    A word without `=` (old unquoted output split inside a value) is glued to the previous
    value with the space it was split at.
    """
    out: dict[str, str] = {}
    last: str | None = None
    for w in split_systemd_words(value):
        k, sep, v = w.partition("=")
        if sep and _NAME.match(k):
            out.pop(k, None)
            out[k] = v
            last = k
        elif last is not None:
            out[last] += " " + w
    return out


def parse_env_file(text: str) -> dict[str, str]:
    """An EnvironmentFile= as systemd reads it: KEY=VALUE lines, '#'/';' comments, quotes,
    backslash-newline continuation. `export KEY=...` lines are NOT assignments for systemd
    (252 drops them: recorded on a real host), so they are dropped here too.
    """
    out: dict[str, str] = {}
    joined = re.sub(r"\\\n", "", text or "")
    for raw in joined.splitlines():
        line = raw.strip()
        if not line or line[0] in "#;":
            continue
        k, sep, v = line.partition("=")
        k = k.strip()
        if not sep or not _NAME.match(k):
            continue
        v = v.strip()
        if len(v) >= 2 and v[0] == v[-1] and v[0] in "'\"":
            inner = v[1:-1]
            if v[0] == '"':
                inner = re.sub(r'\\(["\\`$])', r"\1", inner)
            v = inner
        else:
            v = re.sub(r"\\(.)", r"\1", v)
        out[k] = v
    return out
