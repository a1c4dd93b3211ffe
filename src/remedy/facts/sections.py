"""The batch protocol: many collectors' output in one stream, split by marker lines.

Why: one round trip beats fifty (each SSH command costs a channel and a login-shell start).
Every collector snippet writes `\\n<TOKEN> <name> [arg]\\n` before each piece of raw output,
with the shell function `m`. The token is random per run, so no file content on the host can
fake a marker; fixtures use DEFAULT_TOKEN.
"""

from __future__ import annotations

import re
import secrets
from dataclasses import dataclass
from typing import TypeVar

from remedy.facts.parsers import parse_key_values
from remedy.transport.base import BASE_PATH, OWN_PATH_FORMS

DEFAULT_TOKEN = "@@remedy-fact@@"


def new_token() -> str:
    """A per-run token no host output can predict."""
    return f"@@remedy-{secrets.token_hex(6)}@@"


def prelude(token: str = DEFAULT_TOKEN) -> str:
    """Shell header every batch starts with: marker function, C locale, PATHs, timeouts.

    P0 is the session's PATH (kept by the transport, remedy.transport.base.SESSION_PATH_VAR),
    SP the search path discovery uses (`$(PATH=$SP; command -v nvcc)`, then `trusted`), and
    PATH the fixed system one that remedy's own tools (stat, readlink, grep...) come from: the
    one the transport judged (remedy.syspath.own_tools_path: a /usr/local directory holding
    another user's program left out), else the distribution's directories."""
    if not re.fullmatch(r"[@A-Za-z0-9_-]+", token):
        raise ValueError(f"bad token {token!r}")
    own, base = "|".join(sorted(OWN_PATH_FORMS)), BASE_PATH
    return f"""T='{token}'
m() {{ printf '\\n%s %s\\n' "$T" "$*"; }}
LC_ALL=C; export LC_ALL
P0=${{REMEDY_SESSION_PATH-$PATH}}
SP="${{P0:+$P0:}}/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
case $PATH in {own}) ;; *) PATH={base};; esac; export PATH
NL='
'
if command -v timeout >/dev/null 2>&1; then to() {{ timeout "$@"; }}; else to() {{ shift; "$@"; }}; fi
"""


@dataclass(frozen=True)
class Section:
    """One marker and the raw output that followed it."""

    name: str
    arg: str
    body: str

    def lines(self) -> list[str]:
        return [ln for ln in self.body.splitlines() if ln.strip()]


def split_sections(text: str, token: str = DEFAULT_TOKEN) -> list[Section]:
    """Cut a batch's stdout at marker lines; output before the first marker is dropped.

    Tolerant by design: a cut-off stream just yields fewer sections, and a marker line in the
    middle of a partial line (no newline before it) is still found.
    """
    pat = re.compile(r"(?:^|\n)" + re.escape(token) + r" ([^\n]*)(?:\n|$)")
    out: list[Section] = []
    matches = list(pat.finditer(text))
    for i, mt in enumerate(matches):
        end = matches[i + 1].start() if i + 1 < len(matches) else len(text)
        head = mt.group(1)
        name, _, arg = head.partition(" ")
        out.append(Section(name=name, arg=arg, body=text[mt.end() : end]))
    return out


def section_text(sections: list[Section], token: str = DEFAULT_TOKEN) -> str:
    """Re-render sections as a stream (for fixtures and tests)."""
    return "".join(f"\n{token} {s.name}{' ' + s.arg if s.arg else ''}\n{s.body}" for s in sections)


class Record:
    """The sections of one `<TAG>.begin ARG` .. `<TAG>.end` block (a python: py, a toolkit: tk);
    a subclass keeps ARG under its own name (interpreter, prefix)."""

    TAG = ""

    def __init__(self, arg: str) -> None:
        self.sections: list[Section] = []

    def get(self, name: str) -> Section | None:
        return next((s for s in self.sections if s.name == name), None)

    def meta(self) -> dict[str, str]:
        return parse_key_values(self.sections[0].body) if self.sections else {}

    @property
    def real(self) -> str | None:
        s = self.get(f"{self.TAG}.real")
        return (s.arg or None) if s else None

    @property
    def is_alias(self) -> bool:
        return self.get(f"{self.TAG}.alias") is not None


R = TypeVar("R", bound=Record)


def group_records(sections: list[Section], make: type[R]) -> list[R]:
    """`<TAG>.*` sections into records, one per `<TAG>.begin ARG` (`make(ARG)`) up to its
    `<TAG>.end`; other sections, interleaved or nested, are skipped."""
    tag = make.TAG
    out: list[R] = []
    cur: R | None = None
    for s in sections:
        if s.name == f"{tag}.begin":
            cur = make(s.arg)
            cur.sections.append(s)
            out.append(cur)
        elif s.name == f"{tag}.end":
            cur = None
        elif s.name.startswith(f"{tag}.") and cur is not None:
            cur.sections.append(s)
    return out
