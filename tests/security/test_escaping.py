"""Class 7: host strings reach the terminal and markdown as text, never as escapes or markup.

The attacks, for real: a host name, a unit's ExecStart and a run report's message carrying an
OSC window-title/hyperlink sequence, a screen-clearing CSI, a one-byte C1 CSI, bidi overrides,
rich markup (`[bold red]…[/]`) and a stray `[/]` (which made rich raise and abort the report).
Property tests (hypothesis) for the terminal and markdown escapers.
"""

from __future__ import annotations

import io
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import typer
import yaml
from hypothesis import given
from hypothesis import strategies as st

from remedy.executor.runner import RunReport, StepReport
from remedy.report.console import terminal_console
from remedy.report.safe import md, md_code, strip_controls, term

REPO = Path(__file__).resolve().parents[2]
EXAMPLE = REPO / "src/remedy/examples/seed-sm120-system-cuda128/facts.yaml"
EVIL = (
    "gpu1\x1b]0;pwned\x07\x1b]8;;http://evil/\x1b\\link\x1b]8;;\x1b\\\x1b[2J\x9b31m"
    "\u202eexe.txt[bold red]LOUD[/][/]`|<script>|\n# heading"
)
CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")

PIECES = list("ab[]/|`*_<>#\\\n\t ") + [
    "\x1b",
    "\x07",
    "\x9b",
    "\x1b]",
    "\x1b[",
    "\u202e",
    "[/]",
    "[bold]",
    "[link=x]",
    "\x00",
    "\r",
]
hostile = st.lists(st.sampled_from(PIECES), max_size=20).map("".join)


def render(markup: str) -> str:
    buf = io.StringIO()
    terminal_console(buf).print(markup, highlight=False)
    return buf.getvalue()


@given(s=hostile)
def test_terminal_escaping_leaves_no_control_and_no_markup(s: str):
    out = render(f"[bold]host[/] {term(s)} end")
    assert not CONTROL.search(out.replace("\n", "").replace("\t", "")), repr(out)
    # the markup in the host string is shown as text, ours still applies (not shown)
    assert "[bold]host" not in out and out.replace("\n", "").rstrip().endswith("end")
    visible = strip_controls(s).replace("\n", "").replace("\t", "")
    if "[bold]" in visible:
        assert "[bold]" in out.replace("\n", "")


@given(s=hostile)
def test_a_raw_host_string_as_markup_never_raises(s: str):
    """The safety net: a string that escaped escaping is printed, not raised on."""
    out = render(s)
    assert not CONTROL.search(out.replace("\n", "").replace("\t", ""))


@given(s=hostile)
def test_markdown_escaping_stays_in_its_cell_and_span(s: str):
    cell = md(s)
    assert "\n" not in cell and not CONTROL.search(cell)
    assert not re.search(r"(?<!\\)[|`<>\[\]*_]", cell.replace("\\\\", "")), cell
    code = md_code(s)
    fence = re.match(r"`+", code).group(0)
    inner = code[len(fence) : -len(fence)]
    assert code.endswith(fence) and "\n" not in code
    assert all(len(r) < len(fence) for r in re.findall(r"`+", inner))
    assert not re.search(r"(?<!\\)\|", inner)


def remedy(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "remedy", *args],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=REPO,
        env={**os.environ, "COLUMNS": "200", "FORCE_COLOR": "1"},
    )


def test_hostile_host_strings_in_plan_terminal_and_markdown(tmp_path: Path):
    facts = yaml.safe_load(EXAMPLE.read_text())
    facts["host"] = EVIL
    facts["services"][0]["exec_start"] += " --served-model-name " + EVIL.replace("\n", " ")
    facts["notes"].append(EVIL)
    ff = tmp_path / "facts.json"
    ff.write_text(json.dumps(facts))
    for args in ([], ["--explain"], ["--markdown"]):
        r = remedy("plan", "--facts", str(ff), *args)
        assert r.returncode in (0, 3), r.stderr
        bads = ["\x1b]", "\x07", "\x1b[2J", "\x9b", "\u202e"]
        if args == ["--markdown"]:
            bads += ["<script>", "`|<"]  # HTML and a cell/span break-out
        for bad in bads:
            assert bad not in r.stdout + r.stderr, (args, bad)
    md_out = remedy("plan", "--facts", str(ff), "--markdown").stdout
    assert "\n# heading" not in md_out  # a newline in a host string starts no heading


def test_run_report_with_markup_and_escapes_is_printed(capsys: pytest.CaptureFixture[str]):
    from remedy.cli import _finish_run

    report = RunReport(
        run_id="r1",
        host=EVIL,
        outcome="rolled-back",
        message="pip said: [/] [bold]x\x1b]0;t\x07 [link=file:///etc]y[/link]",
        steps=[StepReport(0, "pin [/]" + EVIL, "t", "rolled-back", "compile-probe", False)],
    )
    with pytest.raises(typer.Exit) as ei:
        _finish_run(report, json_=False)
    assert ei.value.exit_code == 3
    out = capsys.readouterr().out
    assert "rolled-back run r1" in out and "pip said: [/] [bold]x" in out
    assert "\x1b]" not in out and "\x07" not in out


# --------------------------------------------------------------------------------------------
# log lines, Text objects built without markup, JSON, error messages, the fleet console
# --------------------------------------------------------------------------------------------

# an OSC 52 clipboard write, a screen clear, cursor moves, a one-byte CSI, NEL, CR, LRM, RLO
ATTACK = (
    "\x1b]52;c;cHduZWQ=\x07\x1b[2J\x1b[10;10H\x1b[1A\x9b31m\x85\r\u200f\u202e"
    "TXT[bold red]RED[/][link=http://evil]L[/link]"
)
RAW = ["\x1b]52", "\x07", "\x1b[2J", "\x1b[10;10H", "\x1b[1A", "\x9b", "\x85", "\r", "\u200f"]
RAW += ["\u202e", "http://evil\x1b"]


def _no_raw(out: str, what: object) -> None:
    for bad in RAW:
        assert bad not in out, (what, bad)


def test_text_objects_built_without_markup_lose_their_controls(monkeypatch: pytest.MonkeyPatch):
    """`whole()` and `Prose()` build rich Text directly (no markup parse): the console still
    strips the controls of every segment it renders; its own styles are kept."""
    from remedy.report.wrap import Prose, whole

    monkeypatch.setenv("FORCE_COLOR", "1")  # styles written, as on a terminal
    buf = io.StringIO()
    con = terminal_console(buf)
    con.print(whole("a" + ATTACK, "bold", 2), soft_wrap=True)
    con.print(Prose("b" + ATTACK, 4), soft_wrap=True)
    out = buf.getvalue()
    _no_raw(out, "console")
    assert "TXT[bold red]RED[/]" in out and "\x1b[1m" in out  # text shown, our style kept
    assert "[link=http://evil]L[/link]" in out


def test_a_hostile_log_on_the_terminal_and_in_json(tmp_path: Path):
    """`diagnose --log` and `plan --log` print the matched log lines: their escapes are text;
    `--json` stays valid JSON, the same strings, with C1 and bidi written as \\u escapes."""
    ex = REPO / "src/remedy/examples/seed-sm120-pip-cu13"
    log = tmp_path / "evil.log"
    log.write_text(
        "".join(f"{line} {ATTACK}\n" for line in (ex / "seed000-grep.log").read_text().splitlines())
    )
    for args in (["diagnose"], ["plan", "--example", "seed-sm120-pip-cu13"]):
        r = remedy(*args, "--log", str(log))
        assert r.returncode in (0, 1), r.stderr
        assert "TXT[bold red]RED[/]" in r.stdout  # the line is shown, its markup as text
        _no_raw(r.stdout + r.stderr, args)
        j = remedy(*args, "--log", str(log), "--json")
        _no_raw(j.stdout, (args, "--json"))
        texts = [s["text"] for s in json.loads(j.stdout)["symptoms"]]
        assert texts and all(ATTACK in t for t in texts)  # the data itself is unchanged


def test_an_error_message_quoting_host_text_is_inert(capsys: pytest.CaptureFixture[str]):
    """Errors quote what was read (a stale plan's diff, a path, a host's reply)."""
    from remedy.commands import report_error
    from remedy.errors import InputError

    exc = InputError("cannot read " + ATTACK, hint="hint " + ATTACK)
    exc.diff = ["steps[0].title: saved " + ATTACK]  # type: ignore[attr-defined]
    report_error(exc)
    err = capsys.readouterr().err
    _no_raw(err, "report_error")
    assert err.count("TXT[bold red]RED[/]") == 3


def test_the_fleet_console_is_the_terminal_console(capsys: pytest.CaptureFixture[str]):
    """`--inventory` progress lines and previews name hosts and carry their messages."""
    from remedy.fleet.commands import Progress, _console

    Progress(1)("gpu1" + ATTACK, "facts failed: " + ATTACK)
    _console().print("[bold]plan group 1[/] " + term(ATTACK))
    cap = capsys.readouterr()
    _no_raw(cap.out + cap.err, "fleet")
    assert "gpu1" in cap.err and "RED[/][link=http://evil]" in cap.out


def _outside_code_spans(text: str) -> str:
    """Markdown text with every code span (any fence length) and mermaid block taken out:
    what a renderer would treat as HTML or markup."""
    text = re.sub(r"```mermaid\n.*?```", "", text, flags=re.S)
    return re.sub(r"(`+)(?!`).*?(?<!`)\1(?!`)", "", text)


def test_markdown_report_files_escape_host_text(tmp_path: Path):
    """`--report FILE.md`: its heading (the host's name) and the impact table's cells (the
    effect and error quote the value, which here holds HTML, `|` and a backtick)."""
    facts = yaml.safe_load(EXAMPLE.read_text())
    facts["host"] = "gpu<script>alert(1)</script>\x1b]0;t\x07"
    ff = tmp_path / "facts.json"
    ff.write_text(json.dumps(facts))
    plan_md, imp_md = tmp_path / "plan.md", tmp_path / "impact.md"
    assert remedy("plan", "--facts", str(ff), "--report", str(plan_md)).returncode in (0, 3)
    value = "CUDA_HOME=/x<script>alert(2)</script>|`y"
    r = remedy("impact", value, "--facts", str(ff), "--report", str(imp_md))
    assert r.returncode == 0, r.stderr
    for f in (plan_md, imp_md):
        text = f.read_text()
        assert "\x1b" not in text and "\x07" not in text, f
        outside = _outside_code_spans(text)
        assert "<script>" not in outside and "</script>" not in outside, (f, outside[:800])
    assert "alert(2)" in imp_md.read_text()  # the value is shown, as text


def test_facts_output_shows_every_host_value_as_text(monkeypatch: pytest.MonkeyPatch, capsys):
    """`remedy facts`: a GPU's driver string, toolkit releases, torch's CUDA version (a file
    the venv owner writes) each carry markup; none is applied, and no hyperlink is written."""
    from remedy.cli import _print_facts
    from remedy.model import Facts

    mark = "[bold red]RED[/][link=evil.example]L[/link]\x1b[2J"
    # enums and pattern-checked fields (unit names: test_unit_names.py)
    skip = {"kind", "scope", "compute_cap", "service", "scopes"}

    def walk(v: object, key: str = "") -> object:
        if isinstance(v, str):
            return v if key in skip else v + mark
        if isinstance(v, list):
            return [walk(x, key) for x in v]
        if isinstance(v, dict):
            return {k: walk(x, k) for k, x in v.items()}
        return v

    raw = yaml.safe_load(EXAMPLE.read_text())
    units = [s["name"] for s in raw.get("services", [])]
    data = walk(raw)
    for s, name in zip(data.get("services", []), units, strict=True):  # type: ignore[union-attr]
        s["name"] = name
    facts = Facts.model_validate(data)
    monkeypatch.setenv("FORCE_COLOR", "1")
    _print_facts(facts)
    out = capsys.readouterr().out
    assert "\x1b]8;" not in out and "\x1b[2J" not in out
    shown = re.sub(r"\s+", " ", re.sub(r"\x1b\[[0-9;]*m", "", out))  # styles, wrapping out
    assert shown.count("RED") == shown.count("[bold red]RED[/][link=evil.example]") > 10


def test_a_hyperlink_style_never_reaches_the_terminal(monkeypatch: pytest.MonkeyPatch):
    """The console's last line of defence: remedy draws no links, so a link style (from
    markup that escaped escaping) is dropped; the text stays."""
    from rich.text import Text

    monkeypatch.setenv("FORCE_COLOR", "1")
    buf = io.StringIO()
    con = terminal_console(buf)
    con.print("[link=https://evil.example]click[/link]")
    con.print(Text("here", style="link https://evil.example"))
    out = buf.getvalue()
    assert "\x1b]8;" not in out and "click" in out and "here" in out


def test_the_run_log_file_holds_no_escape_sequences(tmp_path: Path):
    """`run --log FILE` copies what the host said (a pip error, a probe's output): someone
    `cat`s or `tail -f`s that file on a terminal."""
    from remedy.cli import _RunLog

    f = tmp_path / "run.log"
    log = _RunLog(f, quiet=True)
    log("  pip said: " + ATTACK)
    log.fh.close()
    text = f.read_text()
    _no_raw(text, "run log")
    assert "pip said: " in text and "TXT[bold red]RED[/]" in text
