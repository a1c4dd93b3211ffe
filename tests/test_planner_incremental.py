"""The planner's copy-on-write states, diff keys and incremental evaluation change nothing in
what it plans: same plans as full evaluation, keys equal exactly when states are equal."""

from __future__ import annotations

import copy
from typing import Any

import pytest
import yaml

import remedy.evaluate as evaluate_mod
from remedy.knowledge.loader import load_knowledge
from remedy.model import Facts
from remedy.planner import provider as provider_mod
from remedy.planner.plan import make_plan
from remedy.planner.provider import FactsProvider, diff_key

from conftest import EXAMPLES, grown


def plan_dump(kb: Any, facts: Facts) -> dict[str, Any]:
    return make_plan(kb, facts).model_dump(exclude={"created_at"})


@pytest.mark.parametrize(
    "facts",
    [
        pytest.param(lambda: grown(12, "buildhost"), id="build-host-12"),
        *(
            pytest.param(
                lambda ex=ex: Facts.model_validate(yaml.safe_load((ex / "facts.yaml").read_text())),
                id=ex.name,
            )
            for ex in sorted(EXAMPLES.iterdir())
            if (ex / "facts.yaml").exists()
        ),
    ],
)
def test_incremental_plan_equals_full_evaluation(
    facts: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    kb = load_knowledge()
    f = facts()
    fast = plan_dump(kb, f)
    full_evaluate = evaluate_mod.evaluate

    def no_prev(kb: Any, facts: Any, rule_ids: Any = None, *, prev: Any = None) -> Any:
        return full_evaluate(kb, facts, rule_ids)

    monkeypatch.setattr(provider_mod, "evaluate", no_prev)
    monkeypatch.setattr(provider_mod.FactsProvider, "apply", _deepcopy_apply)
    assert plan_dump(kb, f) == fast


def _deepcopy_apply(self: FactsProvider, state: dict[str, Any], move: Any) -> dict[str, Any]:
    """The old apply: a deep copy per move (no sharing at all)."""
    facts = copy.deepcopy(state)
    for step in move.steps:
        self.apply_step(facts, step)
    return facts


def test_incremental_evaluation_reuses_and_agrees() -> None:
    kb = load_knowledge()
    root = grown(6, "buildhost").model_dump()
    prov = FactsProvider(kb)
    ev0 = prov.evaluation(root)
    calls = 0
    real_check = evaluate_mod._check

    def counting(*a: Any) -> Any:
        nonlocal calls
        calls += 1
        return real_check(*a)

    for move in list(prov.candidates(root))[:8]:
        after = prov.apply(root, move)
        assert root == grown(6, "buildhost").model_dump(), "apply changed the state it started from"
        calls = 0
        evaluate_mod._check = counting
        try:
            inc = evaluate_mod.evaluate(kb, after, prev=ev0)
            n_inc = calls
            full = evaluate_mod.evaluate(kb, copy.deepcopy(after))
        finally:
            evaluate_mod._check = real_check
        assert [(v.key, v.consumers, v.hard) for v in inc.violations] == [
            (v.key, v.consumers, v.hard) for v in full.violations
        ]
        assert inc.errors == full.errors
        assert n_inc < calls, "nothing was reused"


def test_diff_key_equal_iff_content_equal() -> None:
    root = grown(4, "buildhost").model_dump()
    a = dict(root)
    a["toolkits"] = list(root["toolkits"])
    a["toolkits"][1] = dict(root["toolkits"][1])  # a copy, same content
    assert diff_key(a, root) == diff_key(root, root) == ()
    b = dict(a)
    b["toolkits"] = [*a["toolkits"][:1], {**a["toolkits"][1], "nvcc_release": "9.9"}]
    b["toolkits"] += a["toolkits"][2:]
    c = copy.deepcopy(b)
    assert diff_key(b, root) == diff_key(c, root) != ()
    d = dict(root)
    d["toolkits"] = [*root["toolkits"], {"prefix": "/x"}]
    assert diff_key(d, root) not in (diff_key(b, root), ())
    e = dict(root)
    e.pop("notes")
    assert diff_key(e, root) != () and diff_key(e, root) != diff_key(dict(root, notes=[]), root)
