"""remedy.entry.script / remedy.fastcli.leave: a plain `plan` / `diagnose` ends its process
without Python's teardown, with everything a reader or the next run sees: exit handlers,
flushed output, the exit code; in-process callers of main() still get SystemExit."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

SRC = str(Path(__file__).resolve().parents[1] / "src")
EXAMPLE = "seed-sm120-pip-cu13"


def _run(code: str, *args: str, cache: Path | None = None) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": SRC}
    if cache is not None:
        env["XDG_CACHE_HOME"] = str(cache)
    return subprocess.run(
        [sys.executable, "-c", code, *args], capture_output=True, text=True, env=env, timeout=120
    )


_FINISHED = (
    "import atexit, sys\n"
    "from remedy import fastcli\n"
    "fastcli.finished = True\n"
    "atexit.register(lambda: sys.stdout.write('handler'))\n"
)


def test_leave_runs_exit_handlers_flushes_and_keeps_the_exit_code() -> None:
    out = _run(
        _FINISHED + "sys.stdout.write('out ')\nsys.stderr.write('err ')\nfastcli.leave(3)\n"
        "print('never')\n"
    )
    assert (out.returncode, out.stdout, out.stderr) == (3, "out handler", "err ")


def test_leave_skips_the_teardown() -> None:
    """Control: an object's finalizer that the teardown would run does not run."""
    code = (
        "import sys\n"
        "from remedy.fastcli import leave\n"
        "class Noisy:\n"
        "    def __del__(self): sys.stdout.write(' teardown')\n"
        "keep = Noisy()\n"
        "sys.stdout.write('done')\n"
        "leave(0)\n"
    )
    assert (_run(code).returncode, _run(code).stdout) == (0, "done")
    plain = _run(code.replace("leave(0)", "sys.exit(0)"))
    assert plain.stdout == "done teardown"  # what Python's exit does


def test_leave_returns_where_the_teardown_may_matter() -> None:
    """Another thread alive, or an exit code that is not an int: leave does nothing, and
    Python's own exit (which waits for the thread) follows."""
    out = _run(
        "import sys, threading, time\n"
        "from remedy.fastcli import leave\n"
        "def late():\n"
        "    time.sleep(0.3)\n"
        "    sys.stdout.write(' late')\n"
        "threading.Thread(target=late).start()\n"
        "sys.stdout.write('main')\n"
        "leave(5)\n"
        "leave('text')\n"
        "sys.exit(5)\n"
    )
    assert (out.returncode, out.stdout) == (5, "main late")


def test_the_script_exits_as_main_does(tmp_path: Path) -> None:
    """`python -m remedy` (remedy.entry.script) prints the bytes and exits with the code of
    main() run in-process, where the SystemExit still reaches the caller; an error (not
    finished) exits through Python as before."""
    in_process = (
        "import sys\n"
        "sys.argv = ['remedy', *sys.argv[1:]]\n"
        "from remedy.entry import main\n"
        "try:\n"
        "    main()\n"
        "except SystemExit as e:\n"
        "    sys.stdout.flush()\n"
        "    sys.stderr.write(f'@@{e.code}')\n"
    )
    script = "import runpy, sys\nsys.argv = ['remedy', *sys.argv[1:]]\n"
    script += "runpy.run_module('remedy', run_name='__main__')\n"
    for args in (
        ["diagnose", "--example", EXAMPLE, "--json"],
        ["plan", "--example", EXAMPLE, "--json"],
        ["diagnose", "--log", str(tmp_path / "missing.log"), "--json"],
    ):
        a = _run(in_process, *args, cache=tmp_path / "c1")
        b = _run(script, *args, cache=tmp_path / "c2")
        err, _, code = a.stderr.rpartition("@@")
        assert (b.returncode, b.stdout, b.stderr) == (int(code), a.stdout, err), args
    assert int(code) == 2  # control: the missing log's exit code came through
