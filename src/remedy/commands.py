"""The bodies of `remedy plan` and `remedy diagnose`, without typer.

The CLI (remedy.cli, typer) parses the command line and calls these; so does remedy.fastcli,
which answers the plain forms of both commands (`--example/--facts/--log/--json`) without
importing typer (~70 ms of a ~0.5 s command). One body for both, so both print the same
bytes and exit with the same code. Heavy modules are imported inside the functions.
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, NoReturn

from remedy import startgc
from remedy.errors import InputError, RemedyError
from remedy.redact import redact_text
from remedy.report.safe import json_safe, strip_controls


def console(stderr: bool = False) -> Any:
    from remedy.report.console import terminal_console

    return terminal_console(sys.stderr if stderr else sys.stdout)


def emit_json(text: str) -> None:
    text = json_safe(redact_text(text))
    if not _stdout_is_utf():  # an ASCII or Latin-1 locale: \uXXXX, the same document
        text = _ascii_json(text)
    sys.stdout.write(text if text.endswith("\n") else text + "\n")


def _stdout_is_utf() -> bool:
    import codecs

    try:
        return codecs.lookup(sys.stdout.encoding).name.startswith("utf-")
    except (AttributeError, LookupError, TypeError):
        return True  # a stream without an encoding (a test's StringIO) takes any text


def _ascii_json(text: str) -> str:
    """Every non-ASCII character as a JSON escape (a pair for one beyond U+FFFF): outside
    strings JSON is ASCII, so each is inside a string, where the escape means that character."""
    import re

    def esc(m: re.Match[str]) -> str:
        c = ord(m.group())
        if c > 0xFFFF:
            c -= 0x10000
            return f"\\u{0xD800 + (c >> 10):04x}\\u{0xDC00 + (c & 0x3FF):04x}"
        return f"\\u{c:04x}"

    return re.sub(r"[^\x00-\x7f]", esc, text)


def shown(text: object) -> str:
    """Text for stderr: redacted, control characters removed. Error messages quote what
    was read (a saved plan's edited value, a path, a host's reply): an escape sequence in
    them must reach the operator's terminal as text, never as a command to it."""
    return strip_controls(redact_text(str(text)))


def report_error(exc: RemedyError) -> None:
    """remedy's own error: one line (and its hint, and a stale plan's diff) on stderr."""
    sys.stderr.write(f"remedy: {exc.label}: {shown(exc.message)}\n")
    if exc.hint:
        sys.stderr.write(f"  hint: {shown(exc.hint)}\n")
    diff = getattr(exc, "diff", None)
    if diff:
        sys.stderr.write("  what changed:\n")
        for line in diff[:50]:
            sys.stderr.write(f"    {shown(line)}\n")


def exit_reader_left() -> NoReturn:
    """`remedy ... | head`: the reader left. No traceback, and no second one when Python
    flushes stdout at exit: exit 141 like the shell (128 + SIGPIPE)."""
    with contextlib.suppress(OSError):
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    sys.exit(141)


def exit_internal_error(exc: Exception) -> NoReturn:
    """A bug in remedy: one redacted line and exit 70 (REMEDY_DEBUG=1 re-raises instead)."""
    if os.environ.get("REMEDY_DEBUG"):
        raise exc
    sys.stderr.write(
        f"remedy: internal error: {type(exc).__name__}: {shown(exc)}\n"
        "  (this is a bug in remedy; REMEDY_DEBUG=1 shows the traceback)\n"
    )
    sys.exit(70)


def load_facts(
    example: str | None,
    facts: Path | None,
    host: str | None,
    *,
    required: bool,
    collect: Callable[[str], Any] | None = None,
) -> tuple[Any, list[Path]]:
    """Facts from exactly one source, and the example's own logs when it is an example;
    `collect` gathers a host's facts (the CLI's, with its SSH options)."""
    from remedy.inputs import get_example, load_facts_file

    given = [x for x in (example, facts, host) if x]
    if len(given) > 1:
        raise InputError("give only one of --example, --facts, --host")
    if example:
        ex = get_example(example)
        return load_facts_file(ex.facts_path), ex.logs
    if facts:
        return load_facts_file(facts), []
    if host:
        if collect is None:  # pragma: no cover - remedy.fastcli leaves --host to the CLI
            raise InputError("--host needs the full command line interface")
        return collect(host), []
    if required:
        raise InputError(
            "say which host: --example NAME, --facts FILE or --host HOST",
            hint="try: remedy plan --example seed-sm120-pip-cu13",
        )
    return None, []


def csv(value: str | None) -> list[str] | None:
    """`a,b` -> ["a", "b"]; None stays None (no selection)."""
    return None if value is None else [x.strip() for x in value.split(",") if x.strip()]


def known_ids(option: str, given: list[str] | None, known: list[str]) -> None:
    """An id the knowledge does not have is refused, naming the closest known ones: `--rules
    nope` made a plan with no step at all (every step filtered out) and exit 0."""
    if given is None:
        return
    if not given:
        if option == "--consumers":  # an empty list is a selection: verify no consumer
            return
        raise InputError(f"{option} names nothing: give one id or more, comma-separated")
    unknown = [x for x in given if x not in known]
    if not unknown:
        return
    import difflib

    close = sorted({c for x in unknown for c in difflib.get_close_matches(x, known, n=3)})
    shown = ", ".join(close or sorted(known)[:8])
    raise InputError(
        f"{option}: unknown id {', '.join(repr(x[:60]) for x in unknown[:5])}",
        hint=("did you mean: " if close else f"{len(known)} known, e.g. ")
        + shown
        + (" (all: `remedy knowledge list`)" if option == "--rules" else ""),
    )


def with_workload(f: Any, service: str | None, launch: str | None) -> Any:
    """The user says how the server runs, or remedy finds which consumers fail (remedy.scope)."""
    from remedy.knowledge.loader import load_knowledge
    from remedy.scope import with_scopes

    return with_scopes(load_knowledge(), f, service=service, launch=launch)


def plan_run(
    example: str | None,
    facts: Path | None,
    host: str | None,
    log: list[Path] | None,
    *,
    json_: bool = False,
    markdown: bool = False,
    out: Path | None = None,
    explain: bool = False,
    service: str | None = None,
    launch: str | None = None,
    report: Path | None = None,
    rules: str | None = None,
    consumers: str | None = None,
    collect: Callable[[str], Any] | None = None,
) -> int:
    """`remedy plan` for one host; the exit code (3: no complete plan)."""
    from remedy.inputs import scan_logs
    from remedy.knowledge.loader import load_knowledge
    from remedy.planner.plan import make_plan

    if json_ and markdown:  # both write the plan to stdout: --json won without a word
        raise InputError(
            "give one of --json and --markdown: both write the plan to stdout",
            hint="a file beside it: --json --report plan.md (or --out plan.json --markdown)",
        )
    f, ex_logs = load_facts(example, facts, host, required=True, collect=collect)
    f = with_workload(f, service, launch)
    logs = list(log or []) or ex_logs
    symptoms, _, wrappers = scan_logs(logs) if logs else ([], [], set())
    kb = load_knowledge()
    startgc.resume()  # start-up is over (remedy.startgc)
    known_ids("--rules", csv(rules), list(kb.rules))
    # what a plan verifies: the knowledge's consumers, the workload's, the service component
    # itself (planner.plan._verification's launch-level proof, e.g. sglang-server)
    workload = getattr(f, "workload", None)
    verifiable = [c.id for c in kb.consumers()]
    verifiable += [c.id for c in kb.components.values() if c.kind == "service"]
    verifiable += list(getattr(workload, "consumers", None) or [])
    known_ids("--consumers", csv(consumers), verifiable)
    p = make_plan(kb, f, symptoms, wrappers=wrappers, rules=csv(rules), consumers=csv(consumers))
    if logs:  # no rule matches the log: what its wording resembles (a hint, never a step)
        from remedy.diagnose import learned_hint

        p.learned = learned_hint(kb, symptoms, wrappers, lambda: learned_text(logs))
    if out:
        write_out(out, redact_text(p.model_dump_json(indent=2)) + "\n")
    if report:
        from remedy.report.files import plan_report, report_format

        write_out(report, redact_text(plan_report(p, report_format(report))))
    if json_:
        emit_json(p.model_dump_json(indent=2))
    elif markdown:
        from remedy.report.markdown import plan_markdown

        sys.stdout.write(redact_text(plan_markdown(p)))
    else:
        from remedy.report.terminal import print_plan

        print_plan(console(), p, explain=explain)
        if out:
            console().print(f"[dim]plan saved to {out}[/]")
    # "unexplained": a fatal line of the log no finding explains, so no complete plan for it
    return 3 if p.status in ("partial", "impossible", "unexplained") else 0


def diagnose_run(
    example: str | None,
    facts: Path | None,
    host: str | None,
    log: list[Path] | None,
    *,
    json_: bool = False,
    collect: Callable[[str], Any] | None = None,
) -> int:
    """`remedy diagnose`; the exit code (1: a finding of severity error)."""
    from remedy.inputs import LogScans

    spooled: list[Path] = []
    scans: LogScans | None = None
    try:
        # the log's scan workers start first and read it while facts, imports and the
        # knowledge base load here (remedy.inputs.LogScans)
        scans = LogScans([stdin_to_file(p, spooled) for p in log or []], caller_works=True)
        f, ex_logs = load_facts(example, facts, host, required=False, collect=collect)
        if not scans.paths and ex_logs:
            scans = LogScans(ex_logs, caller_works=True)
        if f is None and not scans.paths:
            raise InputError(
                "nothing to diagnose: give --log FILE and/or facts (--example, --facts, --host)"
            )
        from remedy.diagnose import diagnose as run_diagnose

        if f is None:  # a log alone: the part of the knowledge its diagnosis reads, plain
            from remedy.knowledge.logview import load_log_view

            kb = load_log_view()
        else:
            from remedy.knowledge.loader import load_knowledge

            kb = load_knowledge()
        if f is None and scans.reading:  # what the log-only diagnosis loads, while it reads
            from remedy.diagnose import prepare_log_only

            prepare_log_only(kb)
        startgc.resume()  # start-up is over (remedy.startgc)
        symptoms, suspicious, wrappers = scans.result()
        names = {k: "<stdin>" for p in spooled for k in (str(p), p.name)}
        if spooled:  # name the log as the user gave it, not the spool file
            for s in [*symptoms, *suspicious]:
                s.source = names.get(s.source, s.source)
        # the learned fallback reads the logs only when no rule matched (before the spool goes)
        paths = list(scans.paths)
        d = run_diagnose(kb, f, symptoms, wrappers=wrappers, log_text=lambda: learned_text(paths))
        from remedy.evidence.suspicious import with_unexplained

        # the lines to show, read back where nothing looks like an error (before the spool goes)
        logs = [str(p) for p in paths]
        d.suspicious = with_unexplained(suspicious, symptoms, wrappers, d.hypotheses, logs)
        for s in d.suspicious:
            s.source = names.get(s.source, s.source)
    except InputError as exc:  # "<stdin> is empty", not the spool file's temp name
        for tmp in spooled:
            exc.message = exc.message.replace(str(tmp), "<stdin>")
        exc.args = (exc.message,)
        raise
    finally:
        if scans is not None:
            scans.close()
        for tmp in spooled:  # stdin's copy is ours: gone once read
            with contextlib.suppress(OSError):
                tmp.unlink()
    if f is None and not d.hypotheses:
        d.collect_next = [
            "remedy facts HOST --json (toolkits, nvcc/ptxas/cicc versions, CCCL, lib layout)",
            "the environment the server runs under (systemctl show -p Environment UNIT)",
        ]
    if json_:
        emit_json(d.model_dump_json(indent=2))
    else:
        from remedy.report.terminal import print_diagnosis

        print_diagnosis(console(), d)
    return 1 if any(x.severity == "error" for x in d.findings) else 0


def learned_text(paths: list[Path]) -> str:
    """The bounded text the learned fallback reads (remedy.evidence.learned.read_log_text)."""
    from remedy.evidence.learned import read_log_text

    return read_log_text(paths, checked=True)  # the files the scan checked, not their names


def stdin_to_file(p: Path, spooled: list[Path]) -> Path:
    """`--log -` streams stdin into a temporary file so the fast scanner can read it; the
    caller removes what ``spooled`` lists."""
    if str(p) != "-":
        return p
    import tempfile

    from remedy.evidence import reader
    from remedy.fileread import private_tempdir, stdin_binary

    try:
        stream = stdin_binary()
    except OSError as exc:
        raise InputError(f"--log -: {exc.strerror}") from None
    where = private_tempdir()  # never a TMPDIR another user could swap the file in
    if where is None:
        raise InputError("--log -: no temporary directory only root or remedy's user can change")
    tmp = tempfile.NamedTemporaryFile(
        prefix="remedy-stdin-", suffix=".log", delete=False, dir=where
    )
    spooled.append(Path(tmp.name))
    # at most the cap of any pipe (reader.STREAM_CAP): `yes | remedy diagnose --log -` filled
    # the disk at ~400 MB/s; the rest of an endless stream is not read, as for a FIFO
    left = reader.STREAM_CAP
    with tmp:
        while left > 0:
            chunk = stream.read(min(1 << 20, left))
            if not chunk:
                break
            tmp.write(chunk)
            left -= len(chunk)
    return Path(tmp.name)


def write_out(path: Path, text: str) -> None:
    """An --out file is whole or untouched: a temp file beside it, fsynced, renamed over it
    (a full disk must not leave half a plan where the last good one was); a link there is
    replaced by the file, never written through, so no chain of links anyone made can aim
    the write.

    Two kinds of name are written as they are: the stream remedy already writes to
    (`/dev/stdout` or `/proc/self/fd/2` while stdout/stderr is a file: renaming over that
    name replaced /dev/stdout, a link, by a regular file for the whole machine), and a special
    file (`/dev/stdout` to a pipe, a FIFO) — but not through a link another user could have
    planted (remedy.fileread.foreign_link): `/tmp/plan.json -> /dev/sda` is refused."""
    import stat

    from remedy.fileread import foreign_link_chain
    from remedy.report.safe import file_safe

    text = file_safe(text)  # a report or plan shown with `cat` is text, never escape codes
    try:
        try:
            lst = os.lstat(path)
        except FileNotFoundError:
            lst = None
        is_link = lst is not None and stat.S_ISLNK(lst.st_mode)
        try:
            st = os.stat(path) if lst is not None else None
        except FileNotFoundError:
            st = None  # a dangling link
        special = st is not None and not stat.S_ISREG(st.st_mode)
        why = foreign_link_chain(path) if is_link else None
        if why and special:
            raise InputError(
                f"cannot write {path}: {why}, to something that is not a regular file; "
                "nothing was written",
                hint="name the file itself, or a new path",
            )
        if is_link and st is not None and _write_std_stream(st, text):
            return  # /dev/stdout, /proc/self/fd/2: the stream remedy already writes to
        if special:
            # not a link (or a trusted one, which nobody else can swap): O_NOFOLLOW holds
            # the name to what was checked
            dfd, name = _parent(path)
            try:
                flags = os.O_WRONLY | os.O_CLOEXEC | (0 if is_link else os.O_NOFOLLOW)
                fd = os.open(name, flags, dir_fd=dfd)
            finally:
                os.close(dfd)
            with os.fdopen(fd, "w", encoding="utf-8") as f:
                f.write(text)
            return
        _atomic_text(path, text)
    except OSError as exc:
        raise InputError(f"cannot write {path}: {exc.strerror or exc}") from None


def _write_std_stream(st: os.stat_result, text: str) -> bool:
    """Write to stdout or stderr when `st` is the file one of them is: a second descriptor
    opened on it (or a rename over its path) would clash with what is printed there."""
    for stream in (sys.stdout, sys.stderr):
        try:
            fst = os.fstat(stream.fileno())
        except (OSError, ValueError, AttributeError):
            continue
        if (fst.st_dev, fst.st_ino) == (st.st_dev, st.st_ino):
            stream.write(text)
            stream.flush()
            return True
    return False


def _parent(path: Path) -> tuple[int, str]:
    """A handle on path's directory, reached without following a link another user could
    have placed on the way (`--out /tmp/reports/plan` with /tmp/reports uid 65534's link to
    /etc/cron.d: remedy.dirfd), and the last name. InputError when there is none."""
    from remedy.dirfd import open_dir

    fd, why = open_dir(os.path.dirname(os.path.abspath(path)) or "/")
    if fd is None:
        raise InputError(
            f"cannot write {path}: {why}; nothing was written",
            hint="name a path whose directories are not links others could have placed",
        )
    return fd, os.path.basename(path)


def _atomic_text(path: Path, text: str) -> None:
    """A random temp name created O_EXCL|O_NOFOLLOW in the directory's handle, renamed over
    the name in that same handle."""
    dfd, name = _parent(path)
    try:
        tmp = f".{name}.{os.urandom(6).hex()}.tmp"
        fd = os.open(
            tmp,
            os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC,
            0o600,
            dir_fd=dfd,
        )
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as f:
                f.write(text)
                f.flush()
                os.fchmod(f.fileno(), 0o644 & ~umask())
                os.fsync(f.fileno())
            os.replace(tmp, name, src_dir_fd=dfd, dst_dir_fd=dfd)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp, dir_fd=dfd)
            raise
    finally:
        os.close(dfd)


def open_append(path: Path) -> Any:
    """A text file opened for appending (the run's `--log`), never through a link another
    user could have planted: `/tmp/run.log -> /etc/profile.d/x.sh` would have had root append
    lines carrying host text (a `;` in a pip error) to a file a shell runs at login. The final
    name is opened O_NOFOLLOW unless it is a link only root or this user could have made."""
    import stat

    from remedy.fileread import foreign_link_chain

    why = foreign_link_chain(path)
    if why:
        raise InputError(
            f"cannot write the log {path}: {why}; nothing was written",
            hint="name the file itself, or a new path",
        )
    try:
        is_link = stat.S_ISLNK(os.lstat(path).st_mode)
    except FileNotFoundError:
        is_link = False
    except OSError as exc:
        raise InputError(f"cannot write the log {path}: {exc.strerror or exc}") from None
    flags = os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC
    dfd, name = _parent(path)
    try:
        fd = os.open(name, flags | (0 if is_link else os.O_NOFOLLOW), 0o644, dir_fd=dfd)
    except OSError as exc:
        raise InputError(f"cannot write the log {path}: {exc.strerror or exc}") from None
    finally:
        os.close(dfd)
    return os.fdopen(fd, "a")


def umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask
