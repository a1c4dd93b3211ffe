"""A log is read as the file remedy checked, never again by its name.

The attack, for real: a build log in a directory uid 65534 owns (its build dir, a shared log
dir) passes `open_log`'s checks (a regular file, not a link). Then its owner, as uid 65534
(setpriv), renames it away and puts a link to a root-only file in its place, holding lines of
the same shape with a canary. remedy read the log again *by name* after the check: GNU grep
(the scan of a regular file) and `wc -l`, the nvcc command under a ninja `FAILED:` line and
the one echoed before an nvcc fatal line (`evidence/fields.py`), the learned model's head and
tail (`commands.learned_text`). Each put the root-only file's text in root's diagnosis. Now
they read the very file that was checked (`reader.open_checked`: the name's device and inode
must be the checked file's, read through `/proc/self/fd`), or nothing.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from remedy.evidence.scan import PendingScan
from remedy.inputs import scan_logs

pytestmark = pytest.mark.skipif(
    os.geteuid() != 0 or shutil.which("setpriv") is None or shutil.which("grep") is None,
    reason="a swap by another user needs root, setpriv and grep",
)
NOBODY = 65534


def _log(home: str, tag: str = "") -> str:
    return (
        "[1/1] building k.cuda.o\n"
        "FAILED: k.cuda.o \n"
        f"{home}/bin/nvcc -gencode arch=compute_130,code=sm_130 -c k.cu -o k.cuda.o\n"
        f"nvcc fatal   : Unsupported gpu architecture 'compute_130'{tag}\n"
        "ninja: build stopped: subcommand failed.\n"
    )


@pytest.fixture
def area() -> Iterator[tuple[Path, Path]]:
    """(the log in uid 65534's dir, root's 0600 secret with the canary); 65534 can reach its
    dir (the pytest tmp dir is root's 0700 one)."""
    top = Path(tempfile.mkdtemp(prefix="remedy-reread-", dir="/tmp"))
    try:
        top.chmod(0o755)
        secret = top / "root-only.log"
        secret.write_text(_log("/opt/CANARY-root-only", " CANARY"))
        secret.chmod(0o600)
        logs = top / "build"
        logs.mkdir()
        log = logs / "build.log"
        log.write_text(_log("/usr/local/cuda-13.0"))
        for p in (logs, log):
            os.chown(p, NOBODY, NOBODY)
        yield log, secret
    finally:
        shutil.rmtree(top)


def swap(log: Path, secret: Path) -> None:
    """As uid 65534: the checked log renamed away, a link to root's file in its place."""
    subprocess.run(
        ["setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups", "--"]
        + ["sh", "-c", 'mv -- "$1" "$1.old" && ln -s -- "$2" "$1"', "sh", str(log), str(secret)],
        check=True,
    )
    assert log.is_symlink() and "CANARY" in log.read_text()  # root reads it by name now


def test_the_grep_scan_reads_the_checked_file_not_the_name(area):
    log, secret = area
    with PendingScan(str(log), method="grep") as pending:  # open_log's checks pass
        swap(log, secret)
        res = pending.result()
    assert res.method == "grep"
    texts = [s.text for s in res.symptoms] + [s.text for s in res.suspicious]
    assert any("compute_130" in t for t in texts), texts  # the checked log was scanned
    assert not any("CANARY" in t for t in texts), texts


def test_command_fields_read_again_come_from_the_checked_file(area):
    from remedy.evidence.fields import failing_commands, preceding_commands

    log, secret = area
    symptoms, _, _ = scan_logs([log])
    assert any(s.signature == "nvcc-unsupported-arch" for s in symptoms)
    swap(log, secret)
    got = [*failing_commands(symptoms).values(), *preceding_commands(symptoms).values()]
    assert not any("CANARY" in v for fields in got for v in fields.values()), got


def test_command_fields_are_read_from_the_checked_file_control(area):
    """Control: without the swap, the same calls read the nvcc path from the log."""
    from remedy.evidence.fields import failing_commands, preceding_commands

    log, _ = area
    symptoms, _, _ = scan_logs([log])
    got = [*failing_commands(symptoms).values(), *preceding_commands(symptoms).values()]
    assert len(got) == 2 and all(f.get("cmd_cuda_home") == "/usr/local/cuda-13.0" for f in got)


def test_the_learned_models_text_is_the_checked_file(area):
    from remedy.commands import learned_text

    log, secret = area
    scan_logs([log])
    assert "cuda-13.0" in learned_text([log])  # control: the checked file is read
    swap(log, secret)
    assert "CANARY" not in learned_text([log])


def test_without_o_path_the_checked_file_is_still_the_one_read(area, monkeypatch):
    """Where there is no O_PATH (not Linux), the name is opened for reading and kept only
    when it is the checked file: the swap still yields nothing, the checked file its fields."""
    from remedy.evidence.fields import failing_commands

    monkeypatch.delattr(os, "O_PATH", raising=False)
    log, secret = area
    symptoms, _, _ = scan_logs([log])
    assert [f["cmd_cuda_home"] for f in failing_commands(symptoms).values()] == [
        "/usr/local/cuda-13.0"
    ]
    swap(log, secret)
    assert failing_commands(symptoms) == {}
