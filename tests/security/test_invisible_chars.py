"""Class 7: characters a terminal draws as nothing never reach it from host text.

The attack, for real: a facts file (a host name, a note, the unit's ExecStart) and a log line
hold ZERO WIDTH SPACE/JOINER, WORD JOINER, a BOM, a SOFT HYPHEN, LINE SEPARATOR and Unicode
tag characters (U+E0000 block: invisible letters, "ASCII smuggling"). rich and every
terminal draw them as nothing, so `/opt/x<U+200B>/.venv` reads as `/opt/x/.venv` in the
preview the operator approves, and tag text is a hidden message to whatever reads the output
next. remedy's stripping knew C0/C1 and the bidi controls only: `plan`, `plan --explain`,
`plan --markdown` and `diagnose --log` printed all of them raw, `--json` and the files remedy
writes (`--out` plan JSON, `--report` HTML, the exported playbook) held them raw too. Now
they are stripped on the terminal like the bidi controls, and written as escapes in JSON and
YAML (the same data: a saved plan and the playbook's strings read back exactly; a playbook
string holding one is double-quoted, where an escape means that character).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[2]
EX = REPO / "src" / "remedy" / "examples" / "seed-sm120-pip-cu13"
# ZWSP, ZWNJ, ZWJ, WJ, BOM, SHY, LINE SEPARATOR, PARAGRAPH SEPARATOR, Mongolian VS, tag text
INVISIBLE = "\u200b\u200c\u200d\u2060\ufeff\u00ad\u2028\u2029\u180e"
TAGS = "".join(chr(0xE0000 + ord(c)) for c in "RUN rm -rf /") + "\U000e007f"
HIDDEN = f"gpu{INVISIBLE}{TAGS}01"
RAW = re.compile("[\u00ad\u180e\u200b-\u200d\u2028\u2029\u2060\ufeff\U000e0000-\U000e007f]")


def _remedy(tmp: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(REPO / "src"), "XDG_CACHE_HOME": str(tmp / "c"),
           "COLUMNS": "200", "FORCE_COLOR": "1"}  # fmt: skip
    return subprocess.run([sys.executable, "-m", "remedy", *args], capture_output=True,
                          text=True, env=env, timeout=300, cwd=tmp)  # fmt: skip


def _raw(text: str) -> list[str]:
    return sorted({f"U+{ord(c):04X}" for c in RAW.findall(text)})


def _facts(tmp: Path) -> Path:
    facts = yaml.safe_load((EX / "facts.yaml").read_text())
    facts["host"] = HIDDEN
    facts["notes"] = [f"note {HIDDEN}"]
    for s in facts.get("services", []):
        s["exec_start"] = s["exec_start"] + " --served-model-name " + HIDDEN
    f = tmp / "facts.json"
    f.write_text(json.dumps(facts))
    return f


def test_invisible_characters_never_reach_the_terminal(tmp_path: Path):
    f = _facts(tmp_path)
    log = tmp_path / "evil.log"
    log.write_text(
        "".join(f"{line} {HIDDEN}\n" for line in (EX / "seed000-grep.log").read_text().splitlines())
    )
    found = {}
    for args in (
        ["plan", "--facts", str(f)],
        ["plan", "--facts", str(f), "--explain"],
        ["plan", "--facts", str(f), "--markdown"],
        ["diagnose", "--facts", str(f), "--log", str(log)],
        ["plan", "--example", "seed-sm120-pip-cu13", "--log", str(log)],
    ):
        r = _remedy(tmp_path, *args)
        assert r.returncode in (0, 1, 3), (args, r.stderr)
        assert "gpu" in r.stdout  # the host (or the log line) is shown, as text
        found[" ".join(args[:2] + args[3:])] = _raw(r.stdout + r.stderr)
    assert all(not v for v in found.values()), found


def test_invisible_characters_in_json_are_escapes_of_the_same_data(tmp_path: Path):
    f = _facts(tmp_path)
    r = _remedy(tmp_path, "plan", "--facts", str(f), "--json")
    assert r.returncode in (0, 3), r.stderr
    assert not _raw(r.stdout), _raw(r.stdout)
    assert json.loads(r.stdout)["host"] == HIDDEN


def test_files_remedy_writes_hold_them_as_escapes_of_the_same_data(tmp_path: Path):
    f = _facts(tmp_path)
    plan, html, fix = tmp_path / "plan.json", tmp_path / "r.html", tmp_path / "fix.yml"
    r = _remedy(tmp_path, "plan", "--facts", str(f), "--out", str(plan), "--report", str(html))
    assert r.returncode in (0, 3), r.stderr
    r = _remedy(tmp_path, "export", str(plan), "--out", str(fix))
    assert r.returncode == 0, r.stderr
    shown = _remedy(tmp_path, "export", str(plan))
    assert shown.returncode == 0, shown.stderr
    found = {p.name: _raw(p.read_text()) for p in (plan, html, fix)}
    found["export to stdout"] = _raw(shown.stdout)
    assert all(not v for v in found.values()), found
    # the same data: the saved plan is the plan (its digests check), the playbook says the host
    assert json.loads(plan.read_text())["host"] == HIDDEN
    strings = _strings(yaml.safe_load(fix.read_text().replace("!unsafe ", "")))
    assert any(HIDDEN in s for s in strings), [s for s in strings if "gpu" in s]


def test_a_playbook_string_with_a_bidi_control_reads_back_exactly():
    """file_safe writes U+202E as `\\u202e`: inside a single-quoted or plain YAML scalar
    (what PyYAML chose for a string holding no C0 control) that is six characters of text,
    and the playbook named another path than the plan's."""
    from remedy.operations.playbook import Dumper, U
    from remedy.report.safe import file_safe

    values = ["/opt/x\u202ey/.venv", "a\u200bb", f"t{TAGS}", "line\u202e\nnext", "plain\u2066"]
    text = file_safe(yaml.dump([{"v": U(v), "w": v} for v in values], Dumper=Dumper,
                               allow_unicode=True))  # fmt: skip
    assert not _raw(text) and "\u202e" not in text and "\u2066" not in text
    back = yaml.safe_load(text.replace("!unsafe ", ""))
    assert [d["v"] for d in back] == values and [d["w"] for d in back] == values


def _strings(node: object) -> list[str]:
    if isinstance(node, str):
        return [node]
    if isinstance(node, dict):
        return [s for v in node.values() for s in _strings(v)]
    if isinstance(node, list):
        return [s for v in node for s in _strings(v)]
    return []
