"""The link command read back before a 'cannot find -l' line costs bounded time.

The attack, for real: a build log another user writes (read by root's `remedy diagnose
--log`) holds 62 lines of ~64 KB (~4 MB): each a `/usr/bin/ld: cannot find -lx<i>` line with a
distinct library, padded with ~30,000 blank-separated words, among them `a-lx0 … a-lx49` (every
library's `-l` as text, never as a word). tune-ad's `fields.preceding_link_commands` looked up
to 12 lines back for each of the 50 kept symptoms and `shlex.split` each of those lines whole
(pure Python, ~35 ms per 64 KB line): 600 splits, ~20 s of root's CPU for a 4 MB log (and as
long again for each `plan`/`run` given the log). Now a line is split only when it holds the
library's `-l` text, and at most `LINK_SPLIT_BUDGET` characters are split per log, so the same
log costs well under a second here; control: a real link command before the line is read.
"""

from __future__ import annotations

import time
from pathlib import Path

from remedy.evidence.fields import preceding_link_commands
from remedy.inputs import scan_logs

N_SYMPTOMS = 50  # scan.MAX_PER_SIGNATURE: symptoms kept per signature


def _hostile_log(tmp: Path) -> Path:
    libs = " ".join(f"a-lx{i}" for i in range(N_SYMPTOMS))
    pad = "a " * 30000
    lines = [f"{libs} {pad}\n" for _ in range(12)]
    lines += [f"{libs} {pad} /usr/bin/ld: cannot find -lx{i}\n" for i in range(N_SYMPTOMS)]
    log = tmp / "build.log"
    log.write_text("".join(lines))
    return log


def test_a_padded_log_costs_no_seconds_of_lookback(tmp_path: Path):
    symptoms, _, _ = scan_logs([_hostile_log(tmp_path)])
    assert sum(s.signature == "ld-cannot-find-lib" for s in symptoms) == N_SYMPTOMS
    t0 = time.process_time()  # CPU seconds: root's cost, whatever else the host is running
    got = preceding_link_commands(symptoms)
    took = time.process_time() - t0
    assert took < 3.0, f"the link-command lookback took {took:.1f} CPU-s"
    assert got == {}


def test_control_a_real_link_command_is_still_read(tmp_path: Path):
    log = tmp_path / "build.log"
    log.write_text(
        "running build_ext\n"
        "g++ -shared build/a.o -L/usr/local/cuda/lib64 -lcudart -o build/a.so\n"
        "/usr/bin/ld: cannot find -lcudart: No such file or directory\n"
    )
    symptoms, _, _ = scan_logs([log])
    i = next(i for i, s in enumerate(symptoms) if s.signature == "ld-cannot-find-lib")
    assert preceding_link_commands(symptoms)[i] == {
        "cmd_link_cuda_libdir": "yes",
        "cmd_link_dirs": "/usr/local/cuda/lib64",
    }
