"""`remedy plan` / `remedy diagnose` in their plain forms, without typer.

Importing typer and building the command costs ~80 ms of a plan's start-up, for a command
line that is often just `plan --example NAME --json` or `diagnose --log FILE --json`. Those
plain forms are parsed here and handed to the same bodies the CLI calls (remedy.commands),
inside the same error handling as remedy.cli.main, so the bytes printed and the exit code
are the CLI's. Anything else goes to typer untouched: another command or option, a global
option, an option given twice (except --log), a value that starts with '-' or is empty
(click and remedy.argcheck have their own say on those), `--`, help, shell completion.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

# option word -> parameter; those that take a value, and the flags
_VALUED = {
    "--example": "example",
    "-e": "example",
    "--facts": "facts",
    "-f": "facts",
    "--log": "log",
    "-l": "log",
}
_FLAGS = {"--json": "json_"}
_COMMANDS = ("plan", "diagnose")


def parse(argv: list[str]) -> tuple[str, dict[str, Any]] | None:
    """(command, its parameters) for a plain `plan`/`diagnose` command line, else None."""
    if not argv or argv[0] not in _COMMANDS or any(k.endswith("_COMPLETE") for k in os.environ):
        return None
    params: dict[str, Any] = {"example": None, "facts": None, "log": [], "json_": False}
    seen: set[str] = set()
    words = argv[1:]
    i = 0
    while i < len(words):
        word = words[i]
        name, value = word, None
        if word.startswith("--") and "=" in word:
            name, value = word.split("=", 1)
        if name in _FLAGS and value is None:
            key = _FLAGS[name]
            i += 1
        elif name in _VALUED:
            key = _VALUED[name]
            if value is None:
                if i + 1 >= len(words):
                    return None  # click's "requires an argument"
                value = words[i + 1]
                i += 2
            else:
                i += 1
            if not value or value.startswith("-"):
                return None
        else:
            return None  # an option or argument not handled here (help, --host, ...)
        if key in seen and key != "log":
            return None
        seen.add(key)
        if key == "json_":
            params[key] = True
        elif key == "log":
            params[key].append(Path(value))  # type: ignore[arg-type]
        elif key == "facts":
            params[key] = Path(value)  # type: ignore[arg-type]
        else:
            params[key] = value
    params["log"] = params["log"] or None  # as click gives a repeatable option not given
    return argv[0], params


def serve(argv: list[str]) -> bool:
    """Run a plain `plan`/`diagnose` and exit (SystemExit) as remedy.cli.main would; False,
    with nothing done, for any other command line."""
    parsed = parse(argv)
    if parsed is None:
        return False
    command, params = parsed
    from remedy.errors import Interrupted

    try:
        _run(command, params)
    except Interrupted as exc:  # a signal while an error was reported, or at exit
        from remedy.interrupts import ignore

        ignore()
        sys.stderr.write(f"remedy: stopped: {exc.message}\n")
        sys.exit(exc.exit_code)
    return True  # pragma: no cover - _run always exits


def _run(command: str, params: dict[str, Any]) -> None:
    """remedy.cli._main's handling around one command body."""
    from remedy.commands import (
        diagnose_run,
        exit_internal_error,
        exit_reader_left,
        plan_run,
        report_error,
    )
    from remedy.errors import RemedyError

    try:
        from remedy.interrupts import set_mode

        set_mode("raise")  # as the CLI's callback does for a command that changes no host
        run = plan_run if command == "plan" else diagnose_run
        rc = run(params["example"], params["facts"], None, params["log"], json_=params["json_"])
        sys.stdout.flush()  # a reader that left shows here, not in Python's exit
    except RemedyError as exc:
        report_error(exc)
        sys.exit(exc.exit_code)
    except KeyboardInterrupt:  # as typer's main: exit 130, nothing said
        sys.exit(130)
    except EOFError:  # as typer's main (click's Abort): a newline, then the CLI's "aborted"
        sys.stderr.write("\nremedy: aborted\n")
        sys.exit(130)
    except BrokenPipeError:
        exit_reader_left()
    except Exception as exc:
        exit_internal_error(exc)
    global finished
    finished = True  # the command ran to its end, its output flushed (remedy.entry.script)
    sys.exit(rc)


finished = False


def leave(code: object) -> None:
    """End the process with ``code`` without tearing the interpreter down, once a command
    served here ran to its end (``finished``; the console script calls this with the code it
    exits with, remedy.entry.script): the exit handlers run (remedy's caches are saved, an
    early scan job is ended), stdout and stderr are flushed, and the process ends. Python's
    own teardown after that (destroying ~200 modules, pydantic's among them, and every object
    the command made, one by one) was ~10 ms of CPU of each `diagnose` and `plan`, for
    nothing a reader sees: the kernel frees a process's memory at once. Returns, doing
    nothing, where anything could still need the teardown (another thread alive, an exit
    code that is not a plain int); a flush that fails is left to Python's exit to report."""
    threading = sys.modules.get("threading")
    if type(code) is not int or (threading is not None and threading.active_count() > 1):
        return
    import atexit

    atexit._run_exitfuncs()
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except BaseException:  # noqa: S110 - Python's exit reports it, as it always has
        return
    os._exit(code)
