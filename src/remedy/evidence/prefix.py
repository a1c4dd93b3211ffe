"""Strip the prefixes log collectors put in front of a message, and remember the process.

journald (``journalctl -u``) prefixes every line with a timestamp, host and ``ident[pid]``;
SGLang's logger adds ``[2026-05-18 21:14:31]`` or ``[2026-11-29 18:15:55 TP0]``. Signatures are
written against the message itself, and ``near:`` context must not leak between processes that
write into one journal, so the process is returned separately.
"""

from __future__ import annotations

import re

# "May 25 20:37:37 dflash-train python[73647]: " (short, optionally with fractional seconds)
# "2026-05-25T20:37:37+0000 host python[1]: "   (short-iso / short-iso-precise)
_JOURNALD = re.compile(
    r"(?:[A-Z][a-z]{2} +\d{1,2} \d\d:\d\d:\d\d(?:\.\d+)?"
    r"|\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:[.,]\d+)?(?:Z|[+-]\d\d:?\d\d)?)"
    r" (?P<host>[^\s:]+) (?P<ident>[^\s\[\]:]+(?:\[\d+\])?): "
)
# "[2026-05-18 21:14:31] " / "[2026-11-29 18:15:55 TP0] " / "[2026-11-29 18:15:55 DP0 TP0] "
_SGLANG = re.compile(
    r"\[\d{4}-\d\d-\d\d \d\d:\d\d:\d\d(?:[.,]\d+)?(?P<rank>(?: [A-Z]{1,4}\d+)+)?\] "
)


def strip_prefixes(text: str) -> tuple[str, str | None]:
    """Return the message without journald/SGLang prefixes and the process it came from.

    The process is journald's ``ident[pid]``, SGLang's rank tag (``TP0``), or both joined by
    a space; ``None`` when the line names neither.
    """
    process: str | None = None
    m = _JOURNALD.match(text)
    if m:
        process = m.group("ident")
        text = text[m.end() :]
    m = _SGLANG.match(text)
    if m:
        rank = m.group("rank")
        if rank:
            rank = rank.strip()
            process = f"{process} {rank}" if process else rank
        text = text[m.end() :]
    return text, process
