"""A scoped plan (as `remedy plan` makes it) hashes a big host's facts once, and its digests are
still those computed from scratch: the facts' digest of its facts, the plan's of the plan."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

import remedy.planner.plan as plan_mod
import remedy.planner.scoped as scoped_mod
from remedy.model import Facts
from remedy.planner.plan import facts_digest, make_plan, plan_digest
from remedy.scope import LOGIN_SHELL, with_scopes

EXAMPLE = (
    Path(__file__).resolve().parents[1]
    / "src"
    / "remedy"
    / "examples"
    / "seed-sm120-system-cuda128"
    / "facts.yaml"
)


@pytest.mark.parametrize("services", [None, ["sglang-k26.service", LOGIN_SHELL]])
def test_scoped_plan_digests_once_and_right(
    kb: Any, services: list[str] | None, monkeypatch: pytest.MonkeyPatch
) -> None:
    facts = Facts.model_validate(yaml.safe_load(EXAMPLE.read_text()))
    facts = with_scopes(kb, facts, services=services)
    assert facts.workload.scopes
    digested: list[Any] = []
    real = plan_mod.facts_digest

    def counting(f: Any) -> str:
        digested.append(f)
        return real(f)

    monkeypatch.setattr(plan_mod, "facts_digest", counting)
    monkeypatch.setattr(scoped_mod, "facts_digest", counting)
    plan = make_plan(kb, facts)
    assert plan.steps
    assert len(digested) == 1, "the facts are hashed once per plan"
    monkeypatch.undo()
    assert plan.facts_digest == facts_digest(plan.facts) == facts_digest(facts)
    assert plan.plan_digest == plan_digest(plan)
