"""The console script's first code: signals are noted from here on, before the CLI (typer,
rich: ~140 ms of imports) is imported, so a signal in that window is held for the command
instead of a KeyboardInterrupt traceback or a silent death. Only Python's own start-up
(~40 ms) stays uncovered. A signal the parent left ignored (`nohup remedy run ...` ignores
SIGHUP; a script's `remedy ... &` ignores SIGINT) stays ignored, as Python itself keeps an
ignored SIGINT: a closed terminal must not stop a run started under nohup. A help-only command line is answered before any of that when
remedy.helpcache holds what typer printed for it.

The handler goes in at import (this module is only ever imported as the entry point): the
console script imports it and calls script() (main, then the exit) a moment later."""

from __future__ import annotations

import signal
from typing import Any

_early: list[int] = []


def _note(signum: int, _frame: object) -> None:
    _early.append(signum)


for _s in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
    if signal.getsignal(_s) is not signal.SIG_IGN:  # ignored by the parent: stays so
        signal.signal(_s, _note)


def _standard_fds() -> None:
    """Descriptors 0-2 closed at start (`remedy plan --json >&-`, a daemon's child): each is
    opened on /dev/null before remedy opens anything, and a closed stdout/stderr writes
    there. Python leaves sys.stdout None (every command's first line was an internal error,
    exit 70), and the next file remedy opened took the free number: a grep or ssh child then
    wrote its output into it. sys.stdin stays None: `--log -` says stdin is closed."""
    import os
    import sys

    for fd, mode in ((0, os.O_RDONLY), (1, os.O_WRONLY), (2, os.O_WRONLY)):
        try:
            os.fstat(fd)
        except OSError:
            got = os.open(os.devnull, mode)
            if got != fd:
                os.dup2(got, fd)
                os.close(got)
    if sys.stdout is None:
        sys.stdout = open(1, "w", encoding="utf-8", closefd=False)  # noqa: SIM115
    if sys.stderr is None:
        sys.stderr = open(2, "w", encoding="utf-8", closefd=False)  # noqa: SIM115


def _stdout_never_fails() -> None:
    """A locale that cannot encode remedy's '—', '→', '…' (LANG=en_US.ISO-8859-1,
    PYTHONIOENCODING=ascii, LC_ALL=C with PYTHONUTF8=0) ended every command in exit 70 at
    its first line: stdout now writes what it cannot encode as a backslash escape, as Python's
    stderr already does (JSON goes out as ASCII there: remedy.commands.emit_json)."""
    import sys

    out: Any = sys.stdout
    try:
        # C locale: "surrogateescape", which fails on '—' as "strict" does
        if out.errors in ("strict", "surrogateescape") and not _utf(out.encoding):
            out.reconfigure(errors="backslashreplace")
    except (AttributeError, LookupError, ValueError, OSError):
        pass  # not a text stream we can reconfigure: left as it is


def _utf(encoding: str | None) -> bool:
    import codecs

    return bool(encoding) and codecs.lookup(encoding).name.startswith("utf-")


def main() -> None:
    import sys

    _standard_fds()
    _stdout_never_fails()
    from remedy import helpcache

    if helpcache.serve(sys.argv[1:]):  # `--help` as typer last printed it, typer not loaded
        return
    from remedy import startcache, startgc

    startgc.pause()  # until the command has loaded what it needs (remedy.startgc)
    from remedy.interrupts import install

    install("hold", pending=_early)
    # the scan worker first: until it is forked the log waits. The code cache after it: its
    # install (dataclasses' imports) and first load were ~5 ms of that wait; the scan's few
    # modules compile their regexes without it (~1-2 ms more CPU, while the worker reads)
    _start_scan()
    startcache.install(_code_profile(sys.argv[1:]))  # generated code from the last start-up
    from remedy.fastcli import serve

    if serve(sys.argv[1:]):  # a plain `plan`/`diagnose`: the same bodies, typer not loaded
        return
    startgc.resume()  # the CLI's commands (run, fleet) may run long: collector on
    from remedy.cli import main as cli_main

    with helpcache.recording(sys.argv[1:]):
        cli_main()


def script() -> None:
    """The console script and `python -m remedy`: ``main``; a plain `plan` / `diagnose` that
    remedy.fastcli ran to its end then ends the process without Python's teardown
    (remedy.fastcli.leave), with the same exit code. In-process callers of ``main`` (tests,
    a wrapper) get its SystemExit as before."""
    try:
        main()
    except SystemExit as exc:
        import sys

        fastcli = sys.modules.get("remedy.fastcli")
        if fastcli is not None and fastcli.finished:
            fastcli.leave(0 if exc.code is None else exc.code)
        raise


def _code_profile(argv: list[str]) -> str:
    """remedy.startcache's file for this command line: "log" for a `diagnose` given nothing
    but ``--log FILE`` (any number) and ``--json`` (no pydantic models, typer or rich are
    imported on its way), "" (the shared file) for everything else."""
    if argv[:1] != ["diagnose"]:
        return ""
    words, i = argv[1:], 0
    while i < len(words):
        w = words[i]
        if w in ("--log", "-l"):
            i += 2
        elif w == "--json" or w.startswith("--log="):
            i += 1
        else:
            return ""
    return "log"


def _start_scan() -> None:
    """`remedy diagnose --log FILE`: the scan starts before the CLI's imports
    (remedy.evidence.early); any trouble there leaves it to the ordinary path."""
    import sys

    if sys.argv[1:2] != ["diagnose"]:
        return  # nothing imported for the other commands (`--help` stays fast)
    try:
        from remedy.evidence.early import start

        start(sys.argv[1:])
    except Exception:  # noqa: S110 - the ordinary path scans the log and reports errors
        pass
