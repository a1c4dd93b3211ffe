"""A unit runs the venv's python by its absolute path without the venv's bin/ on its PATH, so
the JIT builders (tvm-ffi build_ninja, FlashInfer run_ninja, torch cpp_extension) cannot exec
pip's ninja: "FileNotFoundError: [Errno 2] No such file or directory: 'ninja'".

The fixtures are real: the facts and the journal of the sandbox host
sandbox/scenarios/service-path-no-ninja (tests/test_toolchain_sandbox.py test_h runs the whole
chain there). Before this change no rule predicted the line: the plan had no step, the line was
unexplained (exit 3) and `run` said no-complete-plan. A warning-level rule (a system ninja may
serve: without a log it is advice) now drives a plan once the log shows what it warns about,
as its comment always said; before, the planner searched for errors only.
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
    return Facts.model_validate(json.loads((HERE / "service-path-no-ninja.facts.json").read_text()))


def journal():
    return scan_logs([str(HERE / "sglang-k26-journal.log")])[0]


def with_unit_env(f: Facts, **env: str) -> Facts:
    svc = f.services[0].model_copy(update={"environment": {**f.services[0].environment, **env}})
    return f.model_copy(update={"services": [svc]})


def test_ninja_not_found_in_the_units_journal_plans_the_venv_bin_on_its_path():
    kb = load_knowledge()
    plan = make_plan(kb, facts(), journal())
    assert plan.status == "ok" and plan.unexplained == []
    assert [s.action for s in plan.steps] == ["env-path-venv-bin"]
    op = plan.steps[0].operation.model_dump()
    assert op["scope"] == "dropin" and op["unit"] == "sglang-k26.service"
    # the venv's bin/ ahead of the PATH the unit had (systemd's default: it set none)
    assert op["set"] == {"PATH": f"/opt/sglang-venv/bin:{DEFAULT_PATH}"}
    assert [f.rule for f in plan.findings] == ["jit-ninja-on-path"]
    assert any("No such file or directory: 'ninja'" in a for a in plan.steps[0].addresses)


def test_without_the_log_it_is_advice_not_a_step():
    """A system ninja (/usr/bin/ninja) may serve: the facts alone do not say the build fails."""
    kb = load_knowledge()
    plan = make_plan(kb, facts())
    assert plan.steps == [] and plan.status == "nothing-to-do"
    assert "jit-ninja-on-path" in [a.rule for a in plan.advice]


def test_a_unit_path_with_the_venv_bin_holds():
    kb = load_knowledge()
    f = with_unit_env(facts(), PATH=f"/opt/sglang-venv/bin/:{DEFAULT_PATH}")
    plan = make_plan(kb, f, journal())
    assert "jit-ninja-on-path" not in [x.rule for x in [*plan.findings, *plan.advice]]
    assert plan.steps == []
