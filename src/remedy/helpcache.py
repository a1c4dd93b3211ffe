"""`remedy --help` / `remedy CMD --help` without importing typer: the bytes typer printed
the last time, replayed.

Building the CLI to print its help costs ~0.15 s (typer and its vendored click, ~400
option objects); the help it prints only changes with remedy's CLI code, typer's version
and the terminal. So when a help-only command line (`[CMD ...] --help`, nothing else) goes
through typer, what it writes to stdout is recorded (`recording`) with everything it
depends on, and the next identical request is answered from that record (`serve`):

* the key: the words of the command line, how the program was started (`sys.argv[0]` and
  `__main__`'s package: click's program name), the terminal's width (COLUMNS, or the
  terminal), stdout's encoding and whether it is a terminal, the environment variables
  typer or click read for help, Python's version and typer's `__init__.py` (its version);
* the check: the sha256 of every remedy source file that was loaded when typer printed it
  (the CLI, its help text, the exit-code table...). Any edit to one of them, or a file
  gone, and the record is not used: typer prints the help again, and it is recorded again.

Only an exit status of 0 with text free of escape sequences is recorded, so an error or a
styled page is never replayed. The record is a remedy cache (remedy.cachefile): read only
when this user owns it, it is private and intact; anything else is ignored, never a crash.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager

from remedy.cachefile import read_private, sha256, write_private

# environment variables that change what typer/click print for --help
_ENV = (
    "COLUMNS",
    "TERMINAL_WIDTH",
    "TYPER_USE_RICH",
    "_TYPER_FORCE_DISABLE_TERMINAL",
    "FORCE_COLOR",
    "NO_COLOR",
    "PY_COLORS",
    "GITHUB_ACTIONS",
)
_KEEP = 64  # records kept (command x terminal width x way of starting)
_WORD_CHARS = frozenset("abcdefghijklmnopqrstuvwxyz0123456789-_")


def help_only(argv: list[str]) -> bool:
    """`--help` after zero or more command names, and nothing else."""
    if not argv or argv[-1] != "--help":
        return False
    return all(w and w[0].isalpha() and set(w) <= _WORD_CHARS for w in argv[:-1])


def _path() -> str:
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "remedy", f"help-py{sys.version_info[0]}{sys.version_info[1]}")


def _typer_init() -> bytes:
    """typer's __init__.py (it holds typer's version), found without importing typer."""
    from importlib.machinery import PathFinder

    spec = PathFinder.find_spec("typer")
    if spec is None or not spec.origin:
        return b""
    try:
        with open(spec.origin, "rb") as f:
            return f.read()
    except OSError:
        return b""


def _columns() -> str:
    """What shutil.get_terminal_size() (click's help width) reads: $COLUMNS, else the terminal."""
    try:
        return str(os.get_terminal_size(sys.__stdout__.fileno()).columns)  # type: ignore[union-attr]
    except (AttributeError, ValueError, OSError):
        return "-"


def _isatty(stream: object) -> bool:
    try:
        return bool(stream.isatty())  # type: ignore[attr-defined]
    except (AttributeError, ValueError, OSError):
        return False


def _key(argv: list[str]) -> str | None:
    out = sys.stdout
    if (
        out is None
        or not hasattr(out, "buffer")
        or any(k.endswith("_COMPLETE") for k in os.environ)
    ):
        return None  # no real stdout, or shell completion (typer answers that itself)
    main = sys.modules.get("__main__")
    parts = [
        "\0".join(argv),
        sys.argv[0] if sys.argv else "",
        str(getattr(main, "__package__", None)),
        _columns(),
        f"{out.encoding}:{out.errors}:{_isatty(out)}",
        *(f"{k}={os.environ.get(k)}" for k in _ENV),
        sys.version,
    ]
    h = sha256("\0\0".join(parts).encode("utf-8", "surrogateescape"))
    h.update(_typer_init())
    return h.hexdigest()


def _sources_digest(files: tuple[str, ...]) -> str | None:
    h = sha256()
    for name in files:
        try:
            with open(name, "rb") as f:
                data = f.read()
        except OSError:
            return None
        h.update(name.encode("utf-8", "surrogateescape") + b"\0" + data + b"\0")
    return h.hexdigest()


def _load() -> dict[str, tuple[tuple[str, ...], str, bytes]]:
    import marshal

    body = read_private(_path())
    if body is None:
        return {}
    try:
        data = marshal.loads(body)
    except Exception:  # a damaged record is rewritten, never a failure
        return {}
    if not isinstance(data, dict):
        return {}
    return {
        k: v
        for k, v in data.items()
        if isinstance(k, str)
        and isinstance(v, tuple)
        and len(v) == 3
        and isinstance(v[0], tuple)
        and all(isinstance(f, str) for f in v[0])
        and isinstance(v[1], str)
        and isinstance(v[2], bytes)
    }


def serve(argv: list[str]) -> bool:
    """Write the recorded help for `argv` and return True; False (nothing written) when
    there is no valid record, so typer must print it."""
    if not help_only(argv):
        return False
    key = _key(argv)
    if key is None:
        return False
    entry = _load().get(key)
    if entry is None:
        return False
    files, digest, text = entry
    if not files or _sources_digest(files) != digest:
        return False
    try:
        sys.stdout.flush()
        sys.stdout.buffer.write(text)
        sys.stdout.flush()
    except BrokenPipeError:  # `remedy --help | head -0`: as the CLI does, quietly 141
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        sys.exit(141)
    return True


def _remedy_files() -> tuple[str, ...]:
    """The remedy source files loaded now (those the help just printed came from)."""
    here = os.path.dirname(os.path.abspath(__file__))
    files = set()
    for name, mod in list(sys.modules.items()):
        f = getattr(mod, "__file__", None)
        if (name == "remedy" or name.startswith("remedy.")) and f and f.endswith(".py"):
            f = os.path.abspath(f)
            if f.startswith(here + os.sep):
                files.add(f)
    return tuple(sorted(files))


@contextmanager
def recording(argv: list[str]) -> Iterator[None]:
    """Run the CLI with stdout recorded when `argv` asks only for help; the bytes are passed
    on as they are, and kept for `serve` when the exit status is 0. Any other command runs
    untouched."""
    key = _key(argv) if help_only(argv) else None
    if key is None:
        yield
        return
    import io

    class Recorder(io.TextIOWrapper):
        """stdout as the CLI sees it (a terminal stays one: click and rich decide on styling
        by isatty), into memory."""

        def isatty(self) -> bool:
            return tty

    real = sys.stdout
    tty = _isatty(real)
    buf = io.BytesIO()
    wrapper = Recorder(buf, encoding=real.encoding, errors=real.errors)
    sys.stdout = wrapper
    ok = False
    try:
        yield
        ok = True
    except SystemExit as exc:
        ok = exc.code in (0, None)
        raise
    finally:
        sys.stdout = real
        try:
            wrapper.flush()
        except ValueError:  # closed by the command itself
            ok = False
        text = buf.getvalue() if not buf.closed else b""
        try:
            real.flush()
            real.buffer.write(text)
            real.flush()
        except BrokenPipeError:  # the reader left: as the CLI does, quietly 141
            os.dup2(os.open(os.devnull, os.O_WRONLY), real.fileno())
            sys.exit(141)
        if ok and text and b"\x1b" not in text:
            _store(key, text)


def _store(key: str, text: bytes) -> None:
    import marshal

    files = _remedy_files()
    digest = _sources_digest(files)
    if not files or digest is None:
        return
    entries = _load()
    entries.pop(key, None)
    entries = dict(list(entries.items())[-(_KEEP - 1) :])
    entries[key] = (files, digest, text)
    write_private(_path(), marshal.dumps(entries))
