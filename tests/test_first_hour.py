"""What a new user hit in the first hour (issue 19), one test per surprise.

Arguments that meant the opposite of what was asked, output cut at 80 columns, exit codes
the help did not list, a rollback that "failed" when it worked, a host key problem reported
as "unreachable", a saved plan accepted as facts, and files left behind.
"""

from __future__ import annotations

import asyncio
import io
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import typer
from rich.console import Console

from remedy.outcomes import EXIT_MEANING, OUTCOME_EXIT

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ["seed-sm120-pip-cu13", "seed-sm120-system-cuda128"]


def remedy(*args: str, cwd: Path | None = None, stdin: bytes | None = None, cols: int = 80):
    env = dict(os.environ, COLUMNS=str(cols), NO_COLOR="1", TERM="dumb")
    return subprocess.run(
        [sys.executable, "-m", "remedy", *args],
        capture_output=True,
        cwd=cwd or ROOT,
        env=env,
        input=stdin,
        timeout=300,
    )


# ---- arguments -------------------------------------------------------------------------------


def test_impact_var_without_equals_is_an_error_not_unset():
    r = remedy("impact", "CUDA_HOME")
    err = r.stderr.decode()
    assert r.returncode == 2, err
    assert "no '='" in err and "--unset CUDA_HOME" in err and "Traceback" not in err


def test_impact_unit_set_without_value_never_previews_an_unset(tmp_path: Path):
    r = remedy("impact", "--unit", "sglang.service", "--set", "CUDA_HOME", "--local")
    err = r.stderr.decode()
    assert r.returncode == 2 and "UnsetEnvironment" not in r.stdout.decode() + err
    assert "CUDA_HOME=VALUE" in err


def test_minus_var_is_refused_with_the_form_that_works():
    r = remedy("impact", "-CUDA_HOME")
    err = r.stderr.decode()
    assert r.returncode == 2 and "--unset CUDA_HOME" in err, err
    # and --unset works without --unit: the blast radius of unsetting it
    r = remedy("impact", "--unset", "CUDA_HOME", "--json")
    assert r.returncode == 0, r.stderr.decode()
    assert json.loads(r.stdout)["changes"] == {"CUDA_HOME": None}


@pytest.mark.parametrize(
    ("args", "says", "form"),
    [
        (["facts", "--host", "127.0.0.9:1"], "not --host", "remedy facts 127.0.0.9:1"),
        (["facts", "-H", "127.0.0.9:1"], "not -H", "remedy facts 127.0.0.9:1"),
        (["run", "--host=gpu01", "--yes"], "not --host", "remedy run gpu01"),
        (["history", "--host", "gpu01"], "not --host", "remedy history gpu01"),
        (["plan", "gpu01"], "takes no argument ('gpu01')", "remedy plan --host gpu01"),
        (["diagnose", "gpu01", "--json"], "takes no argument", "remedy diagnose --host gpu01"),
    ],
)
def test_the_host_in_the_other_commands_form_says_which_form(args, says, form):
    """plan/diagnose/impact take --host, facts/run/resume/rollback/history the host as an
    argument; the other form got click's "No such option: --host (Possible options:
    --forks)" or "Got unexpected extra argument(s) (gpu01)", and no connection is tried."""
    r = remedy(*args)
    err = r.stderr.decode()
    assert r.returncode == 2 and r.stdout == b"", err
    assert says in err and form in err and "Traceback" not in err and "cannot connect" not in err


def test_a_misspelt_option_still_gets_clicks_suggestion():
    """`plan --exmaple x`: the misspelt option is the mistake, not the word after it."""
    r = remedy("plan", "--exmaple", "seed-sm120-pip-cu13")
    err = r.stderr.decode()
    assert r.returncode == 2 and "No such option: --exmaple" in err and "--example" in err, err
    assert "takes no argument" not in err


def test_help_advertises_no_form_the_parser_rejects():
    text = remedy("impact", "--help").stdout.decode()
    assert "-VAR" not in text and "--unset" in text


@pytest.mark.parametrize(
    "args",
    [
        ["graph", "--out", "--hosts"],
        ["export", "plan.json", "--out", "-o"],
        ["plan", "--example", "--json"],
        ["--ssh-config", "--accept-new", "examples"],
    ],
)
def test_an_option_value_is_never_the_next_option(tmp_path: Path, args: list[str]):
    r = remedy(*args, cwd=tmp_path)
    err = r.stderr.decode()
    assert r.returncode == 2 and "needs a value" in err, err
    assert list(tmp_path.iterdir()) == []  # no file named --hosts or -o
    # the explicit form still takes such a value
    if args[0] == "graph":
        assert remedy("graph", "--out=--hosts", cwd=tmp_path).returncode == 0
        assert (tmp_path / "--hosts").read_text().startswith("digraph")
        (tmp_path / "--hosts").unlink()


def test_a_saved_plan_given_as_facts_is_refused(tmp_path: Path):
    plan = tmp_path / "plan.json"
    assert remedy("plan", "--example", EXAMPLES[0], "--out", str(plan)).returncode == 0
    r = remedy("plan", "--facts", str(plan))
    err = r.stderr.decode()
    assert r.returncode == 2 and "is a saved remedy plan, not a facts file" in err, err
    assert "remedy run HOST --plan" in err


@pytest.mark.parametrize(
    ("content", "says"),
    [
        ("facts", "it is YAML or text"),
        ('{"host": "x", "toolkits": [], "gpus": []}', "it is a facts file"),
        ('{"hypotheses": [], "findings": []}', "it is a diagnosis"),
        ('{"steps": [], "facts_digest": "x"}', "damaged or hand-edited remedy plan"),
        ("[1, 2]", "JSON list, not an object"),
    ],
)
def test_exporting_a_file_that_is_not_a_plan_says_what_it_is(tmp_path: Path, content, says):
    f = tmp_path / "x.json"
    if content == "facts":
        f = ROOT / "src/remedy/examples" / EXAMPLES[0] / "facts.yaml"
    else:
        f.write_text(content)
    r = remedy("export", str(f))
    err = r.stderr.decode()
    assert r.returncode == 2 and says in err, err
    assert len(err.splitlines()) <= 2 and "validation error" not in err


@pytest.mark.parametrize(
    ("args", "option"),
    [
        (["report", "PLAN", "--out", "r.pdf"], "--out"),
        (["plan", "--example", EXAMPLES[0], "--report", "r.pdf"], "--report"),
    ],
)
def test_a_report_name_without_a_format_names_the_option_given(tmp_path: Path, args, option):
    """`remedy report plan.json --out r.pdf` said "--report r.pdf: say the format ...": an
    option `remedy report` does not have."""
    saved = tmp_path / "plan.json"
    saved.write_bytes(remedy("plan", "--example", EXAMPLES[0], "--json").stdout)
    r = remedy(*[str(saved) if a == "PLAN" else a for a in args], cwd=tmp_path)
    err = r.stderr.decode()
    assert r.returncode == 2 and err.startswith(f"remedy: error: {option} r.pdf: "), err
    assert f"e.g. {option} report.html" in err and not (tmp_path / "r.pdf").exists()


def test_plan_json_and_markdown_together_is_an_error():
    """Both write the plan to stdout; --json won silently, whichever came first."""
    for args in (["--json", "--markdown"], ["--markdown", "--json"]):
        r = remedy("plan", "--example", EXAMPLES[0], *args)
        err = r.stderr.decode()
        assert r.returncode == 2 and r.stdout == b"", err
        assert "one of --json and --markdown" in err


def test_diagnose_help_says_what_its_exit_code_means(tmp_path: Path):
    """Exit 1 is "findings (diagnose)", but a log alone that matches a known failure exited
    0 with nothing in --help saying why: the help now says it, and this holds it true."""
    text = " ".join(remedy("diagnose", "--help", cols=120).stdout.decode().split())
    assert "Exit 1 when the facts show an error finding; 0 otherwise, a log alone" in text
    log = sorted((ROOT / "src/remedy/examples" / EXAMPLES[0]).glob("*.log"))[-1]
    alone = remedy("diagnose", "--log", str(log), "--json")
    assert alone.returncode == 0 and json.loads(alone.stdout)["hypotheses"]
    with_facts = remedy("diagnose", "--example", EXAMPLES[0], "--json")
    assert with_facts.returncode == 1 and json.loads(with_facts.stdout)["findings"]


def test_version():
    from remedy import __version__

    r = remedy("--version")
    assert r.returncode == 0 and r.stdout.decode().strip() == f"remedy {__version__}"


# ---- exit codes ------------------------------------------------------------------------------


def test_help_and_readme_list_every_exit_code():
    help_text = remedy("--help", cols=120).stdout.decode()
    readme = (ROOT / "README.md").read_text()
    codes = {*OUTCOME_EXIT.values(), *EXIT_MEANING}
    for code in sorted(codes):
        shown = "128+N" if code == 128 else str(code)
        assert re.search(rf"^\s+{re.escape(shown)}\s", help_text, re.M), (code, help_text)
        assert f"| `{shown}` |" in readme, f"README's exit-code table lacks {shown}"
    assert set(OUTCOME_EXIT.values()) <= set(EXIT_MEANING), "a run outcome's code is undocumented"


def test_every_command_has_help_with_an_example():
    from remedy.cli import app

    cmd = typer.main.get_command(app)
    names = [n for n in cmd.commands if n != "knowledge"]
    names += [f"knowledge {n}" for n in cmd.commands["knowledge"].commands]
    for name in names:
        text = remedy(*name.split(), "--help", cols=120).stdout.decode()
        assert re.search(r"Example", text), f"remedy {name} --help has no example"


def test_a_requested_rollback_that_finished_exits_0():
    from remedy.cli import _finish_run
    from remedy.executor.runner import RunReport

    rep = RunReport("abc", "h1", "rolled-back")
    for requested, want in ((True, 0), (False, 3)):
        out = io.StringIO()
        sys_stdout, sys.stdout = sys.stdout, out
        try:
            with pytest.raises(typer.Exit) as e:
                _finish_run(rep, True, requested_rollback=requested)
        finally:
            sys.stdout = sys_stdout
        assert e.value.exit_code == want
        assert json.loads(out.getvalue())["exit_code"] == want
    # a rollback that failed still says so
    bad = RunReport("abc", "h1", "needs-attention")
    with pytest.raises(typer.Exit) as e:
        _finish_run(bad, True, requested_rollback=True)
    assert e.value.exit_code == 6


def test_a_host_key_problem_has_its_own_outcome():
    from remedy.cli import _error_report
    from remedy.errors import HostKeyRejected, HostUnreachable
    from remedy.outcomes import exit_code_for, transport_outcome

    exc = HostKeyRejected("h1: unknown host key for h1 (ssh-ed25519 SHA256:x)", hint="ssh-keyscan")
    rep = _error_report(exc, "h1", None)
    assert rep.outcome == "host-key-rejected" and exc.exit_code == 8
    assert exit_code_for("host-key-rejected") == 8
    assert transport_outcome(HostUnreachable("x")) == "unreachable"


def test_an_unknown_host_key_over_real_ssh(tmp_path: Path):
    """A real sshd (this machine's, on a free loopback port) and an empty known_hosts: exit 8
    with the ways to trust the key, not "unreachable"."""
    sshd = "/usr/sbin/sshd"
    if not os.path.exists(sshd) or os.geteuid() != 0:
        pytest.skip("needs sshd and root (not root)")
    import socket

    key = tmp_path / "hostkey"
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(key)], check=True)
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    cfg = tmp_path / "sshd_config"
    cfg.write_text(
        f"Port {port}\nListenAddress 127.0.0.1\nHostKey {key}\nPidFile none\n"
        "UsePAM no\nStrictModes no\n"
    )
    # sshd wants /run/sshd: a private /run in a mount namespace of its own (as sandbox/sbx)
    proc = subprocess.Popen(
        ["unshare", "--mount", "--propagation", "private", "sh", "-c",
         f"mount -t tmpfs sbx-run /run && mkdir /run/sshd && exec {sshd} -D -e -f {cfg}"],
        stderr=subprocess.DEVNULL,
    )  # fmt: skip
    try:
        import time

        for _ in range(50):
            with socket.socket() as c:
                if c.connect_ex(("127.0.0.1", port)) == 0:
                    break
            time.sleep(0.1)
        kh = tmp_path / "known_hosts"
        kh.write_text("")
        sc = tmp_path / "ssh_config"
        sc.write_text(
            f"Host h1\n  HostName 127.0.0.1\n  Port {port}\n  User root\n"
            f"  UserKnownHostsFile {kh}\n  IdentityFile {key}\n"
        )
        r = remedy("--ssh-config", str(sc), "facts", "h1", "--json")
        err = r.stderr.decode()
        assert r.returncode == 8, err
        assert "unknown host key" in err and "ssh-keyscan" in err and "--accept-new" in err
        assert "unreachable" not in err
    finally:
        proc.terminate()
        proc.wait(timeout=10)


# ---- 80 columns: nothing a user must read or copy is cut -------------------------------------


def _lines(text: str) -> list[str]:
    return [ln.rstrip() for ln in text.splitlines()]


def _whole(needle: str, text: str) -> bool:
    """On one line, or (prose) over several lines joined at spaces."""
    if any(needle in ln for ln in text.splitlines()):
        return True
    flat = " ".join(ln.strip() for ln in text.splitlines())
    return " ".join(needle.split()) in flat


@pytest.mark.parametrize("example", EXAMPLES)
def test_plan_at_80_columns_cuts_nothing(tmp_path: Path, example: str):
    saved = tmp_path / "p.json"
    r = remedy("plan", "--example", example, "--out", str(saved), "--explain")
    out = r.stdout.decode()
    assert r.returncode in (0, 3), r.stderr.decode()
    plan = json.loads(saved.read_text())
    lines = out.splitlines()
    # no line is cut short with an ellipsis (knowledge text may contain one mid-line)
    assert not [ln for ln in lines if ln.rstrip().endswith("…")], out
    from remedy.model import Plan

    # the plan file holds typed operations; commands and touches are rendered from them
    for i, s in enumerate(Plan.model_validate(plan).steps, 1):
        assert f"{i}. {s.title}" in lines, s.title  # the title, whole, on its line
        for c in s.commands:
            first, *rest = f"$ {c}".splitlines()
            assert any(ln.strip() == first for ln in lines), c
            for part in rest:  # a command of several lines: each line whole
                assert any(ln.rstrip() == part.rstrip() for ln in lines), (c, part)
        for t in s.touches:
            assert any(t.target in ln for ln in lines), t.target
    for f in plan["findings"]:
        assert _whole(f["message"], out), f["message"]
    for rej in plan["rejected"]:
        for v in rej["params"].values():
            assert any(str(v) in ln for ln in lines), v


@pytest.mark.parametrize("example", EXAMPLES)
def test_plan_verification_details_stay_under_their_bullet(example: str):
    """rich wrapped '• torch-cpp-extension: torch-ext-build a real <wrap>' at column 0, with
    trailing blanks; each detail now wraps under its own bullet."""
    out = remedy("plan", "--example", example, "--explain").stdout.decode()
    rep = json.loads(remedy("plan", "--example", example, "--json").stdout)
    lines = out.splitlines()
    assert not [ln for ln in lines if ln != ln.rstrip()], "trailing blanks"
    trace = lines[lines.index("Search trace") + 1 :]
    assert trace and all(ln.startswith("  ") for ln in trace), trace
    tail = out[out.index("Final verification") :]
    for v in rep["verification"]:
        assert f"  • {v['consumer']}: {v['probe']}" in lines, v
        if v["detail"]:
            at = lines.index(f"  • {v['consumer']}: {v['probe']}")
            assert lines[at + 1].startswith("    "), lines[at + 1]
            assert _whole(v["detail"], tail), v["detail"]


def test_diagnose_says_what_comes_next_once_per_rule(tmp_path: Path):
    """Three findings of one rule (one per consumer) printed the same 'next in the chain'
    line three times."""
    facts = tmp_path / "empty-host.json"
    facts.write_text("{}")
    out = remedy("diagnose", "--facts", str(facts)).stdout.decode()
    rep = json.loads(remedy("diagnose", "--facts", str(facts), "--json").stdout)
    rules = [f["rule"] for f in rep["findings"] if f["predicts"]]
    assert len(rules) > len(set(rules))  # the case: a rule with findings for several consumers
    for rule in set(rules):
        assert out.count(f"next in the chain if '{rule}' stays") == 1, out


def test_check_wraps_without_trailing_blanks():
    lines = remedy("check").stdout.decode().splitlines()
    assert len(lines) >= 2 and "CUDA releases: OK" in " ".join(lines), lines
    assert not [ln for ln in lines if ln != ln.rstrip()], lines


def test_examples_wrap_under_each_name():
    """`remedy examples`, the README's first thing to try, wrapped its titles and
    descriptions back to column 0 (with trailing blanks): the names were hard to find."""
    out = remedy("examples").stdout.decode()
    names = [e["name"] for e in json.loads(remedy("examples", "--json").stdout)]
    lines = out.splitlines()
    assert [ln for ln in lines if not ln.startswith("  ")] == names, out
    assert not [ln for ln in lines if ln != ln.rstrip()], "trailing blanks"
    for n in names:
        assert f"  try: remedy plan --example {n}" in lines


def test_facts_wrap_under_their_heading():
    """`remedy facts` sent a venv's package list and a toolkit's lib layout to column 0 with
    trailing blanks, and printed 'cicc None CUDART None' for what it did not find."""
    import yaml

    facts = yaml.safe_load((ROOT / "src/remedy/examples" / EXAMPLES[0] / "facts.yaml").read_text())
    tk = facts["toolkits"][0]
    tk["cicc_release"] = tk["cudart_version"] = None
    from remedy.cli import _print_facts
    from remedy.model import Facts

    buf = io.StringIO()
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr("remedy.cli._console", lambda stderr=False: Console(file=buf, width=80))
        _print_facts(Facts.model_validate(facts))
    lines = buf.getvalue().splitlines()
    assert len(lines) > 5 and all(ln.startswith("  ") for ln in lines[1:]), lines
    assert not [ln for ln in lines if ln != ln.rstrip()], "trailing blanks"
    assert "None" not in buf.getvalue() and "cicc ? CUDART ?" in buf.getvalue()


@pytest.mark.parametrize("args", [["plan", "--example", EXAMPLES[0]], ["examples"]])
def test_columns_0_still_prints(args):
    """COLUMNS=0 (set by some CI runners): rich laid out at width 0 and every command
    printed nothing, exit 0."""
    wide = remedy(*args, cols=80).stdout.decode()
    r = remedy(*args, cols=0)
    assert r.returncode == 0 and r.stdout.decode() == wide


def test_impact_at_80_columns_cuts_nothing():
    r = remedy("impact", "CUDA_HOME=/dev/null", "--example", EXAMPLES[1])
    out = r.stdout.decode()
    rep = json.loads(
        remedy("impact", "CUDA_HOME=/dev/null", "--example", EXAMPLES[1], "--json").stdout
    )
    lines = out.splitlines()
    assert not [ln for ln in lines if ln.rstrip().endswith("…")], out
    for c in rep["consumers"]:
        if c["error"]:
            assert any(f"error: {c['error']}" in ln for ln in lines), c["error"]
        assert any(f"source: {c['source']}" in ln for ln in lines), c["source"]
        assert _whole(c["how"], out) and _whole(c["effect"], out)
    for p in rep["picks"]:
        assert any(p["before"] in ln and p["after"] in ln for ln in lines), p


def test_diagnose_log_only_at_80_columns_cuts_nothing(tmp_path: Path):
    """The README's `remedy diagnose --log server.log` drew its hypotheses as a table: at 80
    columns it cut the rule names and the commands to confirm each ('test -f
    $CUDA_HOME/includ…'), the one thing a user copies from it."""
    log = sorted((ROOT / "src/remedy/examples" / EXAMPLES[0]).glob("*.log"))[-1]
    out = remedy("diagnose", "--log", str(log)).stdout.decode()
    rep = json.loads(remedy("diagnose", "--log", str(log), "--json").stdout)
    assert rep["hypotheses"] and not rep["findings"]
    lines = out.splitlines()
    assert not [ln for ln in lines if ln.rstrip().endswith("…")], out
    for h in rep["hypotheses"][:8]:
        assert any(h["rule"] in ln.split() for ln in lines), h["rule"]  # the name whole
        assert _whole(h["message"], out), h["message"]
        for c in h["confirm_with"]:
            assert _whole(c, out), c


def test_impact_unit_at_80_columns_cuts_nothing(kb, tmp_path: Path):
    from test_units_impact import FRAG, SEED, UNIT, seed_facts, write_tree

    from remedy.report.console import terminal_console
    from remedy.transport.local import LocalTransport
    from remedy.units import impact_unit, print_unit_impact

    write_tree(tmp_path, {FRAG: SEED})
    imp = asyncio.run(
        impact_unit(
            LocalTransport(host="gpu-1"),
            kb,
            UNIT,
            {"CUDA_HOME": "/usr/local/cuda-13.0/targets/x86_64-linux", "FLASHINFER_NVCC": None},
            seed_facts(),
            root=str(tmp_path),
        )
    )
    buf = io.StringIO()
    con = terminal_console(buf)
    con.width = 80  # type: ignore[misc]
    print_unit_impact(con, imp)
    out = buf.getvalue()
    lines = out.splitlines()
    assert imp.dropin.diff
    for d in imp.dropin.diff.splitlines():
        assert any(ln.strip() == d.strip() for ln in lines if d.strip()), d  # diff lines whole
    assert any(imp.dropin.path in ln for ln in lines)
    assert any(imp.fragment_path in ln for ln in lines)
    for r in imp.restart:
        assert r in out
    assert isinstance(con, Console)


# ---- plan with no fix ------------------------------------------------------------------------


def test_a_plan_without_steps_says_why_and_lists_only_related_alternatives(tmp_path: Path, kb):
    import yaml

    facts = yaml.safe_load((ROOT / "tests/fixtures/rules/h200-healthy.yaml").read_text())
    # a healthy host but for one pin no action may touch: the only finding has no repair
    facts["pythons"][0]["requirements"][0]["spec"] = "==13.0.48"
    f = tmp_path / "facts.json"
    f.write_text(json.dumps(facts))
    saved = tmp_path / "p.json"
    r = remedy("plan", "--facts", str(f), "--out", str(saved))
    out = r.stdout.decode()
    plan = json.loads(saved.read_text())
    assert r.returncode == 3 and plan["steps"] == [] and plan["unresolved"], out
    assert "No fix found" in out
    assert "python-requirements-hold" in out and "it needs a person" in out
    assert "python -m pip check" in out  # how to check it by hand
    left = {u.split(" @ ")[0] for u in plan["unresolved"]}
    related = {a for rule in left for a in kb.rules[rule].rule.repairs}
    for rej in plan["rejected"]:
        shown = any(ln.strip().startswith(f"✗ {rej['action']}") for ln in out.splitlines())
        assert shown == (rej["action"] in related), rej


# ---- leftovers --------------------------------------------------------------------------------


def test_diagnose_from_stdin_leaves_no_temp_file(tmp_path: Path):
    log = (ROOT / "tests/fixtures/logs/lab_f2_cccl_ctk_mismatch.log").read_bytes()
    env_tmp = tmp_path / "t"
    env_tmp.mkdir()
    env = dict(os.environ, TMPDIR=str(env_tmp), COLUMNS="80")
    r = subprocess.run(
        [sys.executable, "-m", "remedy", "diagnose", "--log", "-", "--json"],
        input=log,
        capture_output=True,
        env=env,
        timeout=120,
    )
    assert r.returncode in (0, 1), r.stderr.decode()
    doc = json.loads(r.stdout)
    assert doc["symptoms"] and all(s["source"] == "<stdin>" for s in doc["symptoms"])
    assert list(env_tmp.iterdir()) == []


@pytest.mark.parametrize(
    ("stdin", "says"), [(b"", "is empty"), (b"a\0b\n", "does not look like a text log")]
)
@pytest.mark.parametrize("command", ["diagnose", "plan"])
def test_a_bad_log_on_stdin_is_named_stdin(tmp_path: Path, stdin: bytes, says: str, command):
    """`... | remedy diagnose --log -` with nothing on stdin said "/tmp/remedy-stdin-xbb0j0hc.log
    is empty": the name of remedy's own spool file, not what the user gave."""
    env_tmp = tmp_path / "t"
    env_tmp.mkdir()
    args = ["--example", EXAMPLES[0]] if command == "plan" else []
    r = subprocess.run(
        [sys.executable, "-m", "remedy", command, *args, "--log", "-", "--json"],
        input=stdin,
        capture_output=True,
        env=dict(os.environ, TMPDIR=str(env_tmp)),
        timeout=120,
    )
    err = r.stderr.decode()
    assert r.returncode == 2 and r.stdout == b"", err
    assert err.startswith(f"remedy: error: <stdin> {says}") and "remedy-stdin-" not in err, err
    assert list(env_tmp.iterdir()) == []


def test_a_home_that_does_not_exist_is_not_made(tmp_path: Path):
    """HOME=/nonexistent (nobody's home; a unit's environment): remedy as root made
    /nonexistent/.cache/remedy for its caches. It now runs without them, and still makes
    the cache dir under a home that exists (and an XDG_CACHE_HOME whose parent does)."""
    home = tmp_path / "gone"
    env = dict(os.environ, HOME=str(home), NO_COLOR="1")
    env.pop("XDG_CACHE_HOME", None)
    cmd = [sys.executable, "-m", "remedy", "plan", "--example", EXAMPLES[0], "--json"]
    r = subprocess.run(cmd, capture_output=True, env=env, timeout=300)
    assert r.returncode == 0 and json.loads(r.stdout)["steps"], r.stderr.decode()
    assert not home.exists()
    home.mkdir()
    assert subprocess.run(cmd, capture_output=True, env=env, timeout=300).returncode == 0
    assert (home / ".cache" / "remedy").is_dir()
    env["XDG_CACHE_HOME"] = str(tmp_path / "xdg" / "cache")
    assert subprocess.run(cmd, capture_output=True, env=env, timeout=300).returncode == 0
    assert not (tmp_path / "xdg").exists()
    (tmp_path / "xdg").mkdir()
    assert subprocess.run(cmd, capture_output=True, env=env, timeout=300).returncode == 0
    assert (tmp_path / "xdg" / "cache" / "remedy").is_dir()


@pytest.mark.parametrize(
    "locale_env",
    [{"LC_ALL": "C", "PYTHONUTF8": "0"}, {"PYTHONIOENCODING": "latin-1"}],
    ids=["C-without-utf8-mode", "latin-1"],
)
def test_a_locale_that_cannot_encode_the_output_is_no_crash(tmp_path: Path, locale_env):
    """LANG=en_US.ISO-8859-1 (or LC_ALL=C with PYTHONUTF8=0): every command ended in exit 70
    ('ascii' codec can't encode '—') at its first line, and the example list could not even
    be read. The text now escapes what the locale cannot show, --json is the same document
    in ASCII, and an --out file is UTF-8 whatever the locale."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("LC_", "LANG", "PYTHONIO"))}
    env.update(locale_env, NO_COLOR="1")

    def run(*args: str, **extra: str) -> subprocess.CompletedProcess:
        cmd = [sys.executable, "-m", "remedy", *args]
        return subprocess.run(cmd, capture_output=True, env=env | extra, timeout=300)

    for args in (["plan", "--example", EXAMPLES[0]], ["examples"], ["impact", "CUDA_HOME=/x"]):
        r = run(*args)
        assert r.returncode == 0 and r.stdout, (args, r.stderr.decode()[-400:])
        assert b"internal error" not in r.stderr
    here = run("plan", "--example", EXAMPLES[0], "--json", "--out", str(tmp_path / "a.json"))
    utf8 = run("plan", "--example", EXAMPLES[0], "--json", PYTHONIOENCODING="utf-8")
    assert here.returncode == 0 and max(here.stdout) < 128  # ASCII
    assert json.loads(here.stdout) == json.loads(utf8.stdout)
    saved = (tmp_path / "a.json").read_bytes()
    assert "→".encode() in saved or "—".encode() in saved  # UTF-8, not the locale's
    assert json.loads(saved.decode("utf-8")) == json.loads(utf8.stdout)


@pytest.mark.parametrize(
    "args",
    [["plan", "--example", EXAMPLES[0]], ["knowledge", "list"], ["examples"], ["graph"]],
)
def test_a_reader_that_left_is_exit_141_for_text_too(args):
    """`remedy plan | head`: the JSON and graph paths exited 141 as the help says, but rich's
    own handler ended the text reports in exit 1 ("findings"), without a word."""
    r_fd, w_fd = os.pipe()
    os.close(r_fd)  # the reader is gone before remedy writes
    try:
        r = subprocess.run(
            [sys.executable, "-m", "remedy", *args],
            stdout=w_fd,
            stderr=subprocess.PIPE,
            env=dict(os.environ, NO_COLOR="1"),
            timeout=300,
        )
    finally:
        os.close(w_fd)
    assert r.returncode == 141, r.stderr.decode()
    assert b"Traceback" not in r.stderr


def test_the_leftover_guard_catches_a_leftover(tmp_path: Path):
    """The autouse fixture in tests/conftest.py fails a test that leaves a file behind (run
    in a pytest of its own, with the same conftest and the plugins it loads)."""
    for name in ("conftest.py", "failure_notice.py", "shards.py"):
        (tmp_path / name).write_text((ROOT / "tests" / name).read_text())
    (tmp_path / "test_x.py").write_text(
        "import tempfile\n"
        "from pathlib import Path\n\n"
        "def test_leaves_tmp():\n"
        "    tempfile.mkstemp(prefix='left-')\n\n"
        "def test_leaves_cwd():\n"
        "    Path('left-here').write_text('x')\n\n"
        "def test_clean(tmp_path):\n"
        "    (tmp_path / 'fine').write_text('x')\n"
    )
    # not the outer run's shard (scripts/test): the inner pytest would keep none of its tests
    env = {k: v for k, v in os.environ.items() if k not in ("REMEDY_SHARD", "REMEDY_FILE_TIMES")}
    r = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-rE", str(tmp_path)],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    out = r.stdout
    assert r.returncode == 1, out[-2000:]
    assert "3 passed, 2 errors" in out, out[-2000:]  # the two fail at teardown
    assert "test_leaves_tmp left files behind" in out and "/left-" in out
    assert "test_leaves_cwd left files behind" in out and "left-here" in out
    # the plugin told each failure as it happened, before the summary
    assert out.index("FAILED NOW (teardown") < out.index("3 passed, 2 errors"), out[-2000:]
    (tmp_path / "left-here").unlink()


# ---- progress --------------------------------------------------------------------------------


def test_progress_goes_to_a_terminal_stderr_and_json_stays_clean():
    """`facts --local --json` with stderr on a terminal: a spinner with the elapsed time there,
    one clean JSON document on stdout."""
    import pty
    import select

    master, slave = pty.openpty()
    env = dict(os.environ, COLUMNS="100", TERM="xterm")
    env.pop("REMEDY_NO_PROGRESS", None)
    proc = subprocess.Popen(
        [sys.executable, "-m", "remedy", "facts", "--local", "--json"],
        stdout=subprocess.PIPE,
        stderr=slave,
        stdin=subprocess.DEVNULL,
        env=env,
    )
    os.close(slave)
    seen = b""
    while True:
        r, _, _ = select.select([master], [], [], 0.2)
        if r:
            try:
                chunk = os.read(master, 65536)
            except OSError:
                break
            if not chunk:
                break
            seen += chunk
        elif proc.poll() is not None:
            break
    out, _ = proc.communicate(timeout=300)
    os.close(master)
    assert proc.returncode == 0, seen[-2000:]
    doc = json.loads(out)  # nothing but the document on stdout
    assert doc["host"]
    assert b"collecting facts from this machine" in seen
    assert re.search(rb"0:00:\d\d", seen), seen[-500:]  # the elapsed time


def test_shell_completion_is_typer_s():
    env = dict(os.environ, _REMEDY_COMPLETE="complete_bash", COMP_WORDS="remedy pl", COMP_CWORD="1")
    r = subprocess.run(
        [str(Path(sys.executable).parent / "remedy")], env=env, capture_output=True, timeout=60
    )
    assert r.stdout.decode().split() == ["plan"], (r.stdout, r.stderr)


# ---- the knowledge as a reference ------------------------------------------------------------


def test_knowledge_list_and_show(kb):
    rows = json.loads(remedy("knowledge", "list", "--json").stdout)
    assert {r["id"] for r in rows} == set(kb.rules)
    doc = json.loads(remedy("knowledge", "show", "cccl-complete", "--json").stdout)
    r = kb.rules["cccl-complete"].rule
    assert doc["matches"]["violated_unless"] == r.holds and doc["because"] == list(r.because)
    assert [f["action"] for f in doc["fix"]] == list(r.repairs) and doc["fix"][0]["operation"]
    assert doc["source"] and doc["defined_at"].startswith("knowledge/")
    text = remedy("knowledge", "show", "cccl-complete").stdout.decode()
    for head in ("WHAT IT MATCHES", "WHY", "THE FIX", "CONFIRM BY HAND", "SOURCE"):
        assert head in text
    assert r.source.short() in text
    bad = remedy("knowledge", "show", "cccl")
    assert bad.returncode == 2 and "did you mean: cccl-complete" in bad.stderr.decode()
