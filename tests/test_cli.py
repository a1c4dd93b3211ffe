"""The command line as a user runs it: exit codes, JSON contracts, clear errors."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import EXAMPLES


def remedy(*args: str, stdin: bytes | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "remedy", *args], capture_output=True, input=stdin, timeout=60
    )


def test_help_lists_commands_and_examples():
    r = remedy("--help")
    assert r.returncode == 0
    out = r.stdout.decode()
    for cmd in ("plan", "diagnose", "impact", "graph", "examples", "schema", "facts"):
        assert cmd in out
    r = remedy("plan", "--help")
    assert "remedy plan --example seed-sm120-pip-cu13" in r.stdout.decode()


def test_examples_lists_both_seeds():
    r = remedy("examples", "--json")
    names = {e["name"] for e in json.loads(r.stdout)}
    assert {"seed-sm120-pip-cu13", "seed-sm120-system-cuda128"} <= names


def test_plan_example_json_and_saved_plan(tmp_path: Path):
    out = tmp_path / "plan.json"
    r = remedy("plan", "--example", "seed-sm120-system-cuda128", "--json", "--out", str(out))
    assert r.returncode == 0, r.stderr.decode()
    data = json.loads(r.stdout)
    assert json.loads(out.read_text())["facts_digest"] == data["facts_digest"]
    assert data["steps"] and all({"action", "params", "probe"} <= set(s) for s in data["steps"])
    devnull = [x for x in data["rejected"] if x["params"].get("prefix") == "/dev/null"]
    assert devnull and {"sglang-jit-kernel", "torch-cpp-extension", "flashinfer-jit"} <= set(
        devnull[0]["breaks"]
    )


def test_plan_terminal_and_markdown():
    r = remedy("plan", "--example", "seed-sm120-pip-cu13")
    assert r.returncode == 0
    text = r.stdout.decode()
    assert "Findings (4)" in text and "Rejected alternatives" in text
    r = remedy("plan", "--example", "seed-sm120-pip-cu13", "--markdown")
    md = r.stdout.decode()
    assert md.startswith("# remedy plan") and "## Rejected alternatives" in md
    assert "| `ptxas-accepts-cicc-ptx` |" in md


def test_schema_is_valid_json_schema():
    r = remedy("schema", "plan")
    schema = json.loads(r.stdout)
    assert schema["title"] == "Plan" and "steps" in schema["properties"]


def test_impact_json_contract_and_fail_on_breakage():
    r = remedy("impact", "CUDA_HOME=/dev/null", "--json", "--fail-on-breakage")
    assert r.returncode == 1
    data = json.loads(r.stdout)
    for c in data["consumers"]:
        assert {"component", "variable", "effect", "source"} <= set(c)
    r = remedy("impact", "MAX_JOBS=4", "--fail-on-breakage")
    assert r.returncode == 0


@pytest.mark.parametrize("fmt", ["dot", "graphml", "json"])
def test_graph_formats(fmt):
    r = remedy("graph", "--format", fmt)
    assert r.returncode == 0 and len(r.stdout) > 1000


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["plan", "--example", "nope"], "unknown example 'nope'"),
        (["plan"], "say which host"),
        (["graph", "--format", "png"], "unknown format"),
        (["impact", "NOT_A_VAR=1"], "knows no consumer"),
        (["plan", "--example", "seed-sm120-pip-cu13", "--facts", "x.json"], "only one of"),
        # the CLI parser's own errors (typer's vendored click): no traceback either
        (["plan", "--bogus"], "No such option: --bogus"),
        (["run", "--inventory", "x.ini", "--forks", "many"], "Invalid value for '--forks'"),
        (["plan", "--example"], "requires an argument"),
        (["no-such-command"], "No such command"),
        (["impact", "--unit"], "requires an argument"),
        # an endless or huge file where a small one belongs: refused, not read for ever
        (["plan", "--facts", "/dev/zero"], "/dev/zero is larger than 16 MiB: not a facts file"),
        (["export", "/dev/zero"], "larger than 16 MiB: not a saved remedy plan"),
        (["plan", "--inventory", "/dev/zero"], "/dev/zero: larger than 16 MiB"),
    ],
)
def test_usage_errors_are_clear(args, needle):
    r = remedy(*args)
    assert r.returncode == 2
    err = r.stderr.decode()
    assert needle in err and "Traceback" not in err


@pytest.mark.parametrize(
    ("content", "needle"),
    [
        (b"\x7fELF\x00\x00\x01", "binary file"),
        (b"", "is empty"),
        (b"\xff\xfe{bad", "not valid UTF-8"),
        (b"host: [unclosed\n", "not valid JSON/YAML"),
        (b"gpus: 3\n", "invalid facts: gpus"),
        (b"- a\n- b\n", "facts must be a mapping"),
    ],
)
def test_bad_facts_files(tmp_path: Path, content: bytes, needle: str):
    f = tmp_path / "facts.yaml"
    f.write_bytes(content)
    r = remedy("plan", "--facts", str(f))
    assert r.returncode == 2, r.stderr
    err = r.stderr.decode()
    assert needle in err and "Traceback" not in err


def test_hostile_strings_in_facts_are_rendered_quoted(tmp_path: Path):
    import yaml

    facts = yaml.safe_load((EXAMPLES / "seed-sm120-pip-cu13" / "facts.yaml").read_text())
    evil = "/root/venv/lib/python3.12/site-packages/nvidia/cu13; rm -rf / #$(reboot)`id`"
    facts["toolkits"][0]["prefix"] = evil
    facts["toolkits"][0]["python"] = "/root/venv"
    facts["shell_env"]["CUDA_HOME"] = evil
    f = tmp_path / "evil.yaml"
    f.write_text(yaml.safe_dump(facts))
    r = remedy("plan", "--facts", str(f), "--json")
    assert r.returncode == 0, r.stderr.decode()
    from remedy.model import Plan

    # the plan stores typed operations; their commands are rendered (and quoted) from them
    data = Plan.model_validate_json(r.stdout)
    cmds = [c for s in data.steps for c in s.commands]
    assert cmds
    import shlex

    for c in cmds:
        if evil in c:
            assert (
                shlex.quote(evil + "/lib64") in c
                or shlex.quote(evil + "/lib/libcudart.so") in c
                or shlex.quote(evil + "/lib/stubs") in c
                or shlex.quote(evil + "/lib/stubs/libcuda.so") in c
            ), c


@pytest.mark.parametrize("args", [["graph", "--format", "graphml"], ["schema", "plan"]])
def test_a_reader_that_leaves_is_exit_141_without_a_traceback(args):
    """`remedy graph | head`: the pipe closes before remedy has written everything."""
    import os

    r, w = os.pipe()
    os.close(r)
    try:
        p = subprocess.run(
            [sys.executable, "-m", "remedy", *args], stdout=w, stderr=subprocess.PIPE, timeout=60
        )
    finally:
        os.close(w)
    assert p.returncode == 141 and b"Traceback" not in p.stderr, p.stderr[-800:]


def test_an_out_file_is_whole_or_untouched(tmp_path: Path):
    """A write that fails is a clear error, and a saved plan that cannot be replaced stays the
    last good one: on a 64 KiB tmpfs nearly full, the 28 KiB plan does not fit; written in
    place it would have truncated the good 16 KiB plan and left half of the new one."""
    import os

    r = remedy("graph", "--out", "/dev/full")
    assert r.returncode == 2 and b"cannot write /dev/full: No space left" in r.stderr, r.stderr
    d = tmp_path / "small"
    d.mkdir()
    if subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64k", "none", str(d)]).returncode:
        pytest.skip("cannot mount a small tmpfs here (not root)")
    try:
        out = d / "plan.json"
        assert (
            remedy("plan", "--example", "seed-sm120-system-cuda128", "--out", str(out)).returncode
            == 0
        )
        good = out.read_bytes()
        st = os.statvfs(d)
        (d / "filler").write_bytes(b"\0" * (st.f_bavail * st.f_frsize - 12 * 1024))
        r = remedy("plan", "--example", "seed-sm120-pip-cu13", "--out", str(out))
        assert r.returncode == 2 and b"cannot write" in r.stderr, r.stderr[-800:]
        assert b"Traceback" not in r.stderr
        assert out.read_bytes() == good
        assert sorted(p.name for p in d.iterdir()) == ["filler", "plan.json"]  # no temp left
    finally:
        subprocess.run(["umount", str(d)])


def test_a_log_file_that_fails_mid_run_does_not_stop_the_run(tmp_path: Path):
    """--log on a full disk: one warning, the command finishes with its own outcome."""
    import os

    env = {**os.environ, "XDG_STATE_HOME": str(tmp_path / "state")}
    p = subprocess.run(
        [sys.executable, "-m", "remedy", "resume", "--local", "--json", "--log", "/dev/full"],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert p.returncode == 10, p.stderr[-1500:]
    assert json.loads(p.stdout)["outcome"] == "nothing-to-do"
    assert "the log file cannot be written (No space left on device)" in p.stderr, p.stderr
    assert "Traceback" not in p.stderr
