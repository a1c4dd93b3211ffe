"""An ExecStart= word remedy writes is a path, never one of systemd's command prefixes.

The attack, checked with the real consumer: systemd reads the prefixes `-@:+!|` of
ExecStart='s first word after unquoting it, so quoting (what `_exec_word` does for every
word) does not keep them literal. A command line taken from a host (the unit's argv[] as
`systemctl show` prints it, whose argv[0] is whatever text an `@` line gave it) whose first
word is `+/opt/x` became `ExecStart="+/opt/x" …`: /opt/x run with full privileges and no
sandboxing, User= ignored; `-/opt/x` had its failure ignored. `systemd-analyze verify` on a
temporary root shows it: the quoted `"-/nonexistent/x"` draws no complaint (the `-` was
taken as ignore-failure), the quoted `"+/nonexistent/x"` is complained about as
`/nonexistent/x` (the `+` was taken as a prefix). Such a word must be refused (a clear
error, nothing written), and the plan built from such facts must say so without a traceback.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from remedy.operations import ExecStart, parse_operation
from remedy.operations.writers import exec_start_dropin_text, exec_start_line

WORDS = ["-/nonexistent/x", "+/nonexistent/x", "!/nonexistent/x", "@/nonexistent/x",
         ":/nonexistent/x", "|/nonexistent/x", ";"]  # fmt: skip
ANALYZE = shutil.which("systemd-analyze")


def verify(tmp_path: Path, dropin: str) -> str:
    d = tmp_path / "etc" / "systemd" / "system"
    (d / "t.service.d").mkdir(parents=True)
    (d / "t.service").write_text("[Service]\nExecStart=/bin/true\n")
    (d / "t.service.d" / "60-remedy-exec-start.conf").write_text(dropin)
    r = subprocess.run([ANALYZE, "verify", f"--root={tmp_path}", "t.service"],
                       capture_output=True, text=True, timeout=60)  # fmt: skip
    return r.stdout + r.stderr


@pytest.mark.parametrize("word", WORDS)
def test_a_first_word_systemd_reads_as_a_prefix_is_refused(tmp_path: Path, word: str):
    argv = [word, "-m", "sglang.launch_server"]
    try:
        text = exec_start_dropin_text(argv)
    except ValueError as exc:
        assert "prefix" in str(exc)
    else:
        if ANALYZE is None:
            pytest.fail(f"written: {text!r}")
        out = verify(tmp_path, text)
        # systemd must have taken the whole word as the executable (and found it missing)
        assert f"Command {word} is not executable" in out, out
    with pytest.raises(ValueError):
        exec_start_line(argv)
    with pytest.raises(ValueError):
        parse_operation({"op": "exec-start", "unit": "sglang.service", "argv": argv})


@pytest.mark.skipif(ANALYZE is None, reason="systemd-analyze")
def test_control_systemd_reads_a_plain_quoted_path_as_the_path(tmp_path: Path):
    out = verify(tmp_path, exec_start_dropin_text(["/nonexistent/x", "-m", "%h $X"]))
    assert "Command /nonexistent/x is not executable" in out, out


def test_control_a_plain_path_is_an_operation():
    op = ExecStart(unit="sglang.service", argv=["/opt/v/bin/python", "-m", "sglang.launch_server"])
    assert op.commands() and "ExecStart=" in op.touches()[0].detail


def test_a_plan_from_such_facts_is_a_clear_error():
    """Through the planner: the action's argv bound from the unit's command line."""
    from remedy.errors import InputError
    from remedy.knowledge.loader import load_knowledge
    from remedy.model import Facts
    from remedy.planner.plan import StepSpec, build_operation

    kb = load_knowledge()
    facts = Facts(
        host="h",
        workload={"service": "sglang.service"},
        services=[{"name": "sglang.service",
                   "exec_start": "+/opt/v/bin/python -m sglang.launch_server --tp 8"}],
    )  # fmt: skip
    spec = StepSpec(action="unit-disable-custom-all-reduce", params=())
    with pytest.raises(InputError, match="prefix"):
        build_operation(kb, facts.model_dump(mode="json"), spec)


def test_an_at_units_command_is_not_rewritten_without_its_program():
    """`ExecStart=@/opt/v/bin/python python3 -m sglang.launch_server ...`: systemctl show's
    argv[] starts at `python3`. Main's facts held `python3 -m ...` as the command, and a
    step built from it wrote `ExecStart="python3" ...`, which systemd resolves in its own
    search path (/usr/bin/python3: not the venv). The facts now keep `@/opt/v/bin/python
    python3 ...` (facts.services.exec_argv), and the step is refused with a clear error
    rather than written without the unit's program."""
    from remedy.errors import InputError
    from remedy.facts.services import build_services
    from remedy.knowledge.loader import load_knowledge
    from remedy.model import Facts
    from remedy.planner.plan import StepSpec, build_operation

    show = (
        "Id=sglang.service\nLoadState=loaded\nExecStart={ path=/opt/v/bin/python ; "
        "argv[]=python3 -m sglang.launch_server --tp 8 ; ignore_errors=no ; start_time=[n/a] }\n"
    )
    cmd = build_services(show, ["sglang.service"]).services[0].exec_start
    assert cmd == "@/opt/v/bin/python python3 -m sglang.launch_server --tp 8"
    facts = Facts(
        host="h",
        workload={"service": "sglang.service"},
        services=[{"name": "sglang.service", "exec_start": cmd}],
    )
    spec = StepSpec(action="unit-disable-custom-all-reduce", params=())
    kb = load_knowledge()
    with pytest.raises(InputError, match="prefix"):
        build_operation(kb, facts.model_dump(mode="json"), spec)
