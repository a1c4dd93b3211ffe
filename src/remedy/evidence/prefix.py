"""Strip the prefixes log collectors put in front of a message, and remember the process.

journald (``journalctl -u``) prefixes every line with a timestamp, host and ``ident[pid]``;
SGLang's logger adds ``[2026-05-18 21:14:31]`` or ``[2026-11-29 18:15:55 TP0]``; a vLLM or Ray
worker ``(Worker_TP0 pid=N)``; ``docker compose logs``, ``kubectl logs --prefix``, a CI
runner, Python's logging formats, terminal colours and a Markdown quote their own (the table
``_PREFIXES``, each shape cited; bench/decorations.py measures them). Signatures are written
against the message itself, and ``near:`` context must not leak between processes that write
into one log, so the process is returned separately.

Docker's json-file logging driver (the default: ``/var/lib/docker/containers/ID/ID-json.log``,
what ``docker logs`` reads back) stores each line the container wrote as one JSON object,
``{"log":"<line>\\n","stream":"stderr","time":"..."}``, with ``"``, ``\\``, control bytes and
``<``, ``>``, ``&`` escaped. A signature anchored at the message's end never matches such a
line, so it is unwrapped first (``unwrap_docker_json``).
"""

from __future__ import annotations

import json
import re

# Line prefixes, one table: (name, shape; a group "proc" names the process where it has one). Each shape is
# matched at the line's start, again and again (collectors nest: a CI timestamp before a compose
# service before a vLLM worker tag before vLLM's logger header); what names a process (an ident,
# a rank, a worker, a container) is kept so ``near:`` context never leaks between processes.
# Every shape ends in the separator its writer puts before the message, and needs its own
# punctuation (brackets, ' pid=', ' | ', a timestamp's digits): a message's own words are
# never taken for one.
_LEVELS = r"(?:CRITICAL|FATAL|ERROR|WARNING|WARN|INFO|DEBUG)"
_PREFIXES: tuple[tuple[str, str], ...] = (
    # systemd journalctl output short/short-precise: "May 25 20:37:37 host python[73647]: ";
    # short-iso / short-iso-precise: "2026-05-25T20:37:37+0000 host python[1]: " (systemd
    # src/shared/logs-show.c output_timestamp_realtime: the zone always as an offset, never
    # "Z", microseconds at most; a "...Z" timestamp is a CI runner's, docker's or Rust
    # tracing's, whose "ERROR target: " is no host and ident)
    (
        "journald",
        (
            r"(?:[A-Z][a-z]{2} +\d{1,2} \d\d:\d\d:\d\d(?:\.\d+)?"
            r"|\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:[.,]\d{1,6})?[+-]\d\d:?\d\d)"
            r" (?P<host>[^\s:]+) (?P<proc>[^\s\[\]:]+(?:\[\d+\])?): "
        ),
    ),
    # SGLang python/sglang/srt/utils.py configure_logger: "[2026-05-18 21:14:31] ",
    # "[2026-11-29 18:15:55 TP0] ", "[2026-11-29 18:15:55 DP0 TP0] "
    (
        "sglang",
        (
            r"\[\d{4}-\d\d-\d\d \d\d:\d\d:\d\d(?:[.,]\d+)?(?: (?P<proc>[A-Z]{1,4}\d+"
            r"(?: [A-Z]{1,4}\d+)*))?\] "
        ),
    ),
    # vLLM vllm/utils (system_utils.py) _add_prefix: "(EngineCore_DP0 pid=1815813) " on every
    # line a worker writes, nested "(EngineCore_DP0 pid=1) (Worker_TP0 pid=2) "; Ray
    # python/ray/_private/worker.py print_worker_logs: "(pid=4121) ", "(RayWorkerWrapper
    # pid=4121) ", "(RayWorkerWrapper pid=4121, ip=10.0.3.17) "
    (
        "worker",
        r"\((?P<proc>(?:[\w.:-]+ )?pid=\d+)(?:, ip=[\w.:-]+)?\) ",
    ),
    # docker/compose cmd/formatter/logs.go logConsumer.Log: "%-<width>s |" then " "
    # ("sglang-1    | ", compose v1 "sglang_1  | ")
    ("compose", r"(?P<proc>\w[\w.-]*+) +\| "),
    # kubectl (staging/src/k8s.io/kubectl/pkg/cmd/logs/logs.go addPrefixIfNeeded) --prefix:
    # "[pod/NAME/CONTAINER] "
    ("kubectl", r"\[(?P<proc>pod/[\w.-]+/[\w.-]+)\] "),
    # actions/runner src/Runner.Common/Logging.cs PagingLogger.Write: DateTime.ToString("O")
    # ("2025-01-01T12:00:00.1234567Z "); `docker logs -t` / `kubectl logs --timestamps`
    # (RFC 3339 nano) the same shape
    (
        "timestamp",
        r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d{1,9})?(?:Z|[+-]\d\d:?\d\d) ",
    ),
    # vLLM vllm/logger.py _FORMAT "%(levelname)s %(asctime)s [%(fileinfo)s:%(lineno)d] "
    # (datefmt "%m-%d %H:%M:%S"): "ERROR 09-17 23:37:06 [multiproc_executor.py:671] "; its
    # NewLineFormatter (vllm/logging_utils/formatter.py) repeats it on every line of a message
    (
        "vllm_logger",
        _LEVELS + r" \d\d-\d\d \d\d:\d\d:\d\d(?:\.\d+)? \[[\w.-]+:\d+\] ",
    ),
    # cpython Lib/logging/__init__.py BASIC_FORMAT "%(levelname)s:%(name)s:%(message)s"
    # ("ERROR:root:", "ERROR:torch.distributed.elastic.multiprocessing.api:")
    ("pylog_basic", _LEVELS + r":[\w.]+:"),
    # cpython Doc/howto/logging.rst (and logging-cookbook) "%(asctime)s - %(name)s -
    # %(levelname)s - %(message)s": "2025-01-01 12:00:00,123 - worker - ERROR - "
    (
        "pylog_asctime",
        r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d(?:[.,]\d+)? - [\w.-]+ - " + _LEVELS + r" - ",
    ),
    # (tune-ia, round 98's unknown/ict-1) BuildKit's plain progress (docker build
    # --progress=plain, the default where stdout is no tty): moby/buildkit
    # util/progress/progressui printer.go textMux.printVtx writes each line a RUN step printed as
    # '#<vertex index> <seconds since the step started> <line>' ('#21 0.734 ', '#21 31.16 ');
    # its own records ('#21 [17/69] RUN ...', '#21 DONE 3.2s', '#21 ERROR: ...') carry no
    # seconds and stay whole
    ("buildkit", r"#\d+ \d+\.\d+ "),
    # CommonMark block quote: a log pasted into an issue or a chat as "> " lines
    # (nested "> > "; never the REPL's ">>> ")
    ("quote", r"(?:> )+"),
)
# ECMA-48 CSI sequences a terminal colours with (SGR "ESC[...m") and the erase-line "ESC[K"
# GCC and GNU grep write after each (gcc/pretty-print.cc colorize_start/stop, grep's
# --color=always; vLLM's _add_prefix colours its tag "ESC[1;36m...ESC[0;0m"): no message holds
# an escape byte, so they are dropped wherever they stand in a selected line
_ANSI = re.compile(r"\x1b\[[0-9;]*[mK]")
_MAX_PREFIXES = 8  # nested prefixes taken off one line
# the table as one alternation (one match call per prefix taken, ~1 us for a line with none):
# shape NAME is group NAME, its process group NAME_proc; lastgroup names the shape matched
_ANY = re.compile(
    "|".join(
        f"(?P<{name}>{shape.replace('(?P<proc>', f'(?P<{name}_proc>')})"
        for name, shape in _PREFIXES
    )
)
_PROC = {name: f"{name}_proc" for name, shape in _PREFIXES if "(?P<proc>" in shape}

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
    """Return the message without its collectors' prefixes and the process it came from.

    A CRI prefix is stripped and a Docker json-file record unwrapped first (``unwrap_line``),
    terminal colour codes dropped, then every shape of ``_PREFIXES`` at the line's start, as
    often as they nest.

    The process is what the prefixes name (journald's ``ident[pid]``, SGLang's rank tag
    ``TP0``, a vLLM/Ray worker's ``Name pid=N``, a compose service, a pod's container), joined
    by a space in the order they stand; ``None`` when the line names none.
    """
    text = unwrap_line(text)
    if "\x1b" in text:
        text = _ANSI.sub("", text)
    procs: list[str] = []
    for _ in range(_MAX_PREFIXES):
        m = _ANY.match(text)
        if m is None:
            break
        group = _PROC.get(m.lastgroup or "")
        if group is not None and m.group(group):
            procs.append(m.group(group))
        text = text[m.end() :]
    return text, " ".join(procs) if procs else None
