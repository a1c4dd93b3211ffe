"""remedy probe step runner (runs ON the host, stdlib only, Python >= 3.7).

Why a runner and not a shell script: a probe is a few compiler commands whose argv come from
facts (paths with spaces, flag lists); passing them as JSON avoids a second layer of shell
quoting, runs independent steps in parallel (two cores: the PTX and the CCCL translation
units of compile-probe at once) and reports every step's exit status and time, so one failing
step never hides another.

Usage: python steps.py PLAN.json    (cwd = the probe's private temp dir)
PLAN: {"groups": [[step, ...], ...]}; the steps of a group run in parallel, groups in order.
step: {"name": str, "argv": [str, ...], "optional_inputs": [path, ...]}: the inputs that exist
replace an "@INPUTS@" word of argv (or are appended): a link step links whatever objects the
compile steps produced, in the consumer's order ($cxx $in $ldflags -o $out).
Output: per step "REMEDY-STEP <name> BEGIN", its merged stdout+stderr, "REMEDY-STEP <name>
END rc=<n> seconds=<s>"; at the end one line "REMEDY-RESULT <json>". Exit 0 when every step
passed, else 1.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from typing import Any


def start(step: dict[str, Any]) -> tuple[subprocess.Popen | None, float, bytes, int | None]:
    inputs = [p for p in step.get("optional_inputs", []) if os.path.exists(p)]
    argv = list(step["argv"])
    if "@INPUTS@" in argv:
        i = argv.index("@INPUTS@")
        argv[i : i + 1] = inputs
    else:
        argv += inputs
    t0 = time.time()
    try:
        proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    except OSError as e:  # the program itself is missing or not executable
        return None, t0, f"{argv[0]}: {e}\n".encode(), 127
    return proc, t0, b"", None


def main() -> int:
    with open(sys.argv[1]) as f:
        plan = json.load(f)
    results: list[dict[str, Any]] = []
    for group in plan["groups"]:
        running = [(step,) + start(step) for step in group]
        for step, proc, t0, early, rc in running:
            out = early
            if proc is not None:
                out, _ = proc.communicate()
                rc = proc.returncode
            secs = round(time.time() - t0, 3)
            sys.stdout.write("REMEDY-STEP {} BEGIN\n".format(step["name"]))
            sys.stdout.write(out.decode("utf-8", "replace"))
            if out and not out.endswith(b"\n"):
                sys.stdout.write("\n")
            sys.stdout.write("REMEDY-STEP {} END rc={} seconds={}\n".format(step["name"], rc, secs))
            sys.stdout.flush()
            results.append({"name": step["name"], "rc": rc, "seconds": secs})
    print("REMEDY-RESULT " + json.dumps({"steps": results}))
    return 0 if all(r["rc"] == 0 for r in results) else 1


if __name__ == "__main__":
    sys.exit(main())
