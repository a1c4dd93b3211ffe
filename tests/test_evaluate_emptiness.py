"""A rule that only asks whether the environment is empty (``env or {}`` in a knowledge
function) is reused while that answer stays the same, evaluated again when it changes, and
incremental evaluation still agrees with a full one."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import yaml

import remedy.evaluate as evaluate_mod
from remedy.evaluate import _EVERYTHING, _NONEMPTY, _Watch, evaluate
from remedy.knowledge.loader import load_knowledge
from remedy.model import Facts

EXAMPLE = (
    Path(__file__).resolve().parents[1]
    / "src"
    / "remedy"
    / "examples"
    / "seed-sm120-system-cuda128"
    / "facts.yaml"
)
TRITON = "triton-ptxas-knows-arch"  # reads the environment through triton_ptxas_for


def test_truthiness_is_noted_apart_from_a_whole_read() -> None:
    for d, want in (({}, False), ({"A": "1"}, True)):
        w = _Watch(d)
        w._seen = seen = set()
        assert bool(w) is want and bool(w or {}) is want
        assert seen == {_NONEMPTY}, "truthiness is not a read of every key"
        w._seen = seen = set()
        len(w)
        assert _EVERYTHING in seen


def _shell_state(root: dict[str, Any], env: dict[str, str]) -> dict[str, Any]:
    """``root`` with another login-shell environment, sharing every other part (as the
    planner's copy-on-write states do)."""
    return {**root, "shell_env": env}


def _checked(kb: Any, state: dict[str, Any], prev: Any) -> tuple[Any, list[str]]:
    rules: list[str] = []
    real = evaluate_mod._check

    def noting(rule: Any, *a: Any) -> Any:
        rules.append(rule.rule.id)
        return real(rule, *a)

    evaluate_mod._check = noting
    try:
        ev = evaluate(kb, state, prev=prev)
    finally:
        evaluate_mod._check = real
    full = evaluate(kb, copy.deepcopy(state))
    assert [(v.key, v.consumers, v.hard) for v in ev.violations] == [
        (v.key, v.consumers, v.hard) for v in full.violations
    ]
    assert ev.errors == full.errors
    return ev, rules


def test_emptiness_of_the_environment_decides_reuse() -> None:
    kb = load_knowledge()
    facts = yaml.safe_load(EXAMPLE.read_text())
    facts["workload"]["service"] = None  # the login shell's environment
    root = Facts.model_validate(facts).model_dump()
    empty = _shell_state(root, {})
    ev_empty = evaluate(kb, empty)
    assert (TRITON, "triton") in ev_empty.outcomes, "the rule must be in play"

    one = _shell_state(empty, {"OMP_NUM_THREADS": "8"})
    ev_one, rules = _checked(kb, one, ev_empty)
    assert TRITON in rules, "the environment stopped being empty: evaluated again"

    other = _shell_state(one, {"OMP_NUM_THREADS": "16"})
    _, rules = _checked(kb, other, ev_one)
    assert TRITON not in rules, "still not empty, and the rule read nothing else of it"

    blackwell = _shell_state(one, {"TRITON_PTXAS_BLACKWELL_PATH": "/usr/local/cuda-12.8/bin/ptxas"})
    ev_bw, rules = _checked(kb, blackwell, ev_one)
    assert TRITON in rules, "the variable it reads changed"

    _, rules = _checked(kb, _shell_state(blackwell, {}), ev_bw)
    assert TRITON in rules, "empty again"
