"""Strip the prefixes log collectors put in front of a message, and remember the process.

journald (``journalctl -u``) prefixes every line with a timestamp, host and ``ident[pid]``;
SGLang's logger adds ``[2026-05-18 21:14:31]`` or ``[2026-11-29 18:15:55 TP0]``. Signatures are
written against the message itself, and ``near:`` context must not leak between processes that
write into one journal, so the process is returned separately.

Docker's json-file logging driver (the default: ``/var/lib/docker/containers/ID/ID-json.log``,
what ``docker logs`` reads back) stores each line the container wrote as one JSON object,
``{"log":"<line>\\n","stream":"stderr","time":"..."}``, with ``"``, ``\\``, control bytes and
``<``, ``>``, ``&`` escaped. A signature anchored at the message's end never matches such a
line, so it is unwrapped first (``unwrap_docker_json``).
"""

from __future__ import annotations

import json
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


# moby daemon/logger/jsonfilelog/jsonlog/jsonlogbytes.go (MarshalJSONBuf): the record starts
# with the "log" key, then "stream" and "time" (the order Docker writes); the key is matched as
# written, never a JSON object of another shape
_DOCKER_JSON_HEAD = '{"log":"'
DOCKER_JSON_HEAD = _DOCKER_JSON_HEAD.encode()
# the same record re-serialised with spaces after the separators (`{"log": "...", "stream":
# ...}`: Python's json.dumps, jq, a log shipper's copy): unwrapped the same way
_DOCKER_JSON_START = re.compile(r'\{[ \t]*"log"[ \t]*:[ \t]*"')
DOCKER_JSON_START = re.compile(rb'\{[ \t]*"log"[ \t]*:[ \t]*"')
# Kubernetes' CRI log format (kubelet's /var/log/pods/.../N.log, containerd, CRI-O):
# "<RFC 3339 nano time> <stream> <tag> <line>", tag F (a full line) or P (partial: the line
# continues in the next record); every signature anchored at the message's start missed it
_CRI = re.compile(
    r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d{1,9})?(?:Z|[+-]\d\d:\d\d) (?:stdout|stderr) [FP] "
)
# a UTF-16 surrogate left alone by json.loads (an escaped pair is joined into one character,
# a lone "\ud800" is not): no UTF-8 encodes it, so it would fail the JSON and text output
_SURROGATE = re.compile("[\ud800-\udfff]")


def unwrap_docker_json(text: str) -> str:
    """The line a container wrote, when ``text`` is a record of Docker's json-file log driver
    (its trailing newline dropped); any other text unchanged (a line that only starts like one
    but is not valid JSON, or whose "log" is not a string, is kept as it is)."""
    if not _DOCKER_JSON_START.match(text):
        return text
    try:
        rec = json.loads(text)
    except (ValueError, RecursionError):  # RecursionError: a record nested past the parser's depth
        return text
    log = rec.get("log") if isinstance(rec, dict) else None
    if not isinstance(log, str):
        return text
    if log.endswith("\n"):
        log = log[:-1]
    if log.endswith("\r"):
        log = log[:-1]
    # as a plain log's undecodable bytes read (decode "replace"): U+FFFD
    log = _SURROGATE.sub("\ufffd", log)
    # one record is one line of the container's output; a stray newline inside would shift
    # nothing here (the line number is the record's), but must not join two messages
    return log.replace("\n", " ")


def strip_cri(text: str) -> str:
    """The line without its CRI log prefix (``2026-01-01T00:00:00.000000000Z stdout F ``),
    any other text unchanged."""
    m = _CRI.match(text)
    return text[m.end() :] if m else text


def unwrap_line(text: str) -> str:
    """The line as the program wrote it: a UTF-8 byte-order mark (a Windows editor's or
    PowerShell's, at the start of the file or of each file `cat` joined) dropped, a CRI
    prefix stripped, a Docker json-file record unwrapped (both, for a CRI line that holds
    such a record). The mark hid the first line from every signature anchored at its start."""
    if text[:1] == "\ufeff":
        text = text[1:]
    return unwrap_docker_json(strip_cri(text))


def strip_prefixes(text: str) -> tuple[str, str | None]:
    """Return the message without journald/SGLang prefixes and the process it came from.

    A CRI prefix is stripped and a Docker json-file record unwrapped first (``unwrap_line``).

    The process is journald's ``ident[pid]``, SGLang's rank tag (``TP0``), or both joined by
    a space; ``None`` when the line names neither.
    """
    process: str | None = None
    text = unwrap_line(text)
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
