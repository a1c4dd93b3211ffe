"""Files remedy writes for people hold no terminal escape: `cat report.html` only prints.

The attack, for real: a facts file whose host name and a note hold OSC 52 (set the clipboard),
`ESC[2J` (clear the screen), BEL, the one-byte CSI `\\x9b` and a right-to-left override. The
terminal and `--json` on stdout were clean, but `plan --report r.html` wrote ESC and BEL raw
into the page, `plan --out plan.json` and `export` (to a file and to stdout: the playbook's
first comment names the host) wrote C1 and bidi controls raw: a `cat` of the file ran them.
Now every file remedy writes, and the playbook on stdout, goes through
`remedy.report.safe.file_safe`: DEL/C1/bidi as `\\uXXXX` (the same data in JSON and in YAML's
double-quoted strings), other C0 controls but newline and tab removed.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[2]
EXAMPLE = REPO / "src" / "remedy" / "examples" / "seed-sm120-pip-cu13" / "facts.yaml"
HOST = "gpu\x1b]52;c;cm0gLXJmIH4=\x07\x1b[2J\x9b2J\u202eevil"
RAW = ("\x1b", "\x07", "\x9b", "\u202e")


def _remedy(tmp: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(REPO / "src"), "XDG_CACHE_HOME": str(tmp / "c")}
    return subprocess.run([sys.executable, "-m", "remedy", *args], capture_output=True,
                          text=True, env=env, timeout=120, cwd=tmp)  # fmt: skip


def _raw(text: str) -> list[str]:
    return [repr(c) for c in RAW if c in text]


def test_files_remedy_writes_hold_no_terminal_escape(tmp_path: Path):
    facts = yaml.safe_load(EXAMPLE.read_text())
    facts["host"] = HOST
    facts["notes"] = [f"note {HOST}"]
    f = tmp_path / "facts.json"
    f.write_text(json.dumps(facts))
    outs = {n: tmp_path / n for n in ("plan.json", "r.html", "r.md", "fix.yml")}
    r = _remedy(tmp_path, "plan", "--facts", str(f), "--out", str(outs["plan.json"]),
                "--report", str(outs["r.html"]))  # fmt: skip
    assert r.returncode in (0, 3), r.stderr
    assert _remedy(
        tmp_path, "plan", "--facts", str(f), "--report", str(outs["r.md"])
    ).returncode in (0, 3)
    r = _remedy(tmp_path, "export", str(outs["plan.json"]), "--out", str(outs["fix.yml"]))
    assert r.returncode == 0, r.stderr
    shown = _remedy(tmp_path, "export", str(outs["plan.json"]))
    assert shown.returncode == 0, shown.stderr
    found = {n: _raw(p.read_text()) for n, p in outs.items()}
    found["export to stdout"] = _raw(shown.stdout)
    assert all(not v for v in found.values()), found
    # the data is kept: the plan's JSON and the playbook's strings still say the host's name
    assert json.loads(outs["plan.json"].read_text())["host"] == HOST
    assert HOST in _strings(yaml.safe_load(_unsafe_as_str(outs["fix.yml"].read_text())))


def _unsafe_as_str(text: str) -> str:
    return text.replace("!unsafe ", "")


def _strings(node: object) -> list[str]:
    if isinstance(node, str):
        return [node]
    if isinstance(node, dict):
        return [s for v in node.values() for s in _strings(v)]
    if isinstance(node, list):
        return [s for v in node for s in _strings(v)]
    return []
