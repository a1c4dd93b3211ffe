"""A unit written with the shell's idiom Environment=PATH=<venv>/bin:$PATH: systemd never
expands variables in Environment= (systemd.exec(5)), so the process's PATH is literally
"/opt/sglang-venv/bin:$PATH" and nvcc finds no gcc ("gcc: No such file or directory",
"nvcc fatal : Failed to preprocess host compiler properties.").

The fixtures are real: the facts and the journal of the sandbox host
sandbox/scenarios/service-path-literal (tests/test_toolchain_sandbox.py test_i runs the whole
chain there). Before this change no rule explained the line: the plan had no step (exit 3,
the nvcc line unexplained) and `run` said no-complete-plan.
"""

from __future__ import annotations

import json
from pathlib import Path

from remedy.inputs import scan_logs
from remedy.knowledge.loader import load_knowledge
from remedy.model import Facts
from remedy.planner.plan import make_plan

HERE = Path(__file__).parent / "fixtures" / "ninja"
DEFAULT_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"


def facts() -> Facts:
    return Facts.model_validate(json.loads((HERE / "service-path-literal.facts.json").read_text()))


def journal():
    return scan_logs([str(HERE / "sglang-k26-literal-path-journal.log")])[0]


def test_a_units_literal_path_variable_is_written_out_in_a_drop_in():
    kb = load_knowledge()
    f = facts()
    assert f.services[0].environment["PATH"] == "/opt/sglang-venv/bin:$PATH"
    plan = make_plan(kb, f, journal())
    assert plan.status == "ok" and plan.unexplained == []
    assert [s.action for s in plan.steps] == ["service-path-expanded"]
    op = plan.steps[0].operation.model_dump()
    assert op["scope"] == "dropin" and op["unit"] == "sglang-k26.service"
    assert op["set"] == {"PATH": f"/opt/sglang-venv/bin:{DEFAULT_PATH}"}
    assert [x.rule for x in plan.findings] == ["path-has-no-literal-variable"]
    assert any("Failed to preprocess host compiler" in a for a in plan.steps[0].addresses)
    # the venv's ninja stays first: the ninja rule holds before and after
    assert "jit-ninja-on-path" not in [x.rule for x in [*plan.findings, *plan.advice]]


def test_without_a_log_the_literal_path_is_still_a_finding():
    """A literal $PATH is wrong whatever the log says (nothing under /usr/bin can be run)."""
    kb = load_knowledge()
    plan = make_plan(kb, facts())
    assert [s.action for s in plan.steps] == ["service-path-expanded"]


def test_a_written_out_path_holds():
    kb = load_knowledge()
    f = facts()
    svc = f.services[0]
    env = {**svc.environment, "PATH": f"/opt/sglang-venv/bin:{DEFAULT_PATH}"}
    f = f.model_copy(update={"services": [svc.model_copy(update={"environment": env})]})
    plan = make_plan(kb, f, journal())
    assert "path-has-no-literal-variable" not in [x.rule for x in plan.findings]
    assert plan.steps == []
