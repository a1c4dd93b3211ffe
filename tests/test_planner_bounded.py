"""The bounded search (stop once nothing left can beat the best goal found) plans what the full
uniform-cost search plans: on the examples, the recorded H200 hosts, every violated rule case
and grown hosts, and on random toy domains; and it does less work where it should."""

from __future__ import annotations

import functools
import json
import random
from pathlib import Path
from typing import Any

import pytest
import yaml
from test_planner_scale import grown

import remedy.planner.plan as plan_mod
from remedy.knowledge.loader import load_knowledge
from remedy.model import Facts
from remedy.planner.plan import make_plan
from remedy.planner.provider import FactsProvider
from remedy.planner.search import Verdict, search
from remedy.scope import LOGIN_SHELL, with_scopes

from conftest import FIXTURES, base_facts, patched

EXAMPLES = Path(__file__).resolve().parents[1] / "src" / "remedy" / "examples"
RULE_CASES = yaml.safe_load((FIXTURES / "rules" / "cases.yaml").read_text())["cases"]


def _scenarios() -> list[Any]:
    out = [
        pytest.param(
            lambda ex=ex: Facts.model_validate(yaml.safe_load((ex / "facts.yaml").read_text())),
            id=ex.name,
        )
        for ex in sorted(EXAMPLES.iterdir())
        if (ex / "facts.yaml").exists()
    ]
    out += [
        pytest.param(lambda f=f: Facts.model_validate(json.loads(f.read_text())), id=f.stem)
        for f in sorted((FIXTURES / "gpu").glob("*-facts.json"))
    ]
    out += [
        pytest.param(
            lambda c=c: Facts.model_validate(patched(base_facts(c["base"]), c.get("patch"))),
            id=f"rule-{i}-{c['rule']}",
        )
        for i, c in enumerate(RULE_CASES)
        if c["expect"] == "violated"
    ]
    out += [
        pytest.param(lambda k=k: grown(30, k), id=f"{k}-30")
        for k in ("buildhost", "services", "consumers")
    ]
    # as `remedy plan` plans them: per scope (remedy.scope), chained
    out += [
        pytest.param(
            lambda p=p, kw=kw: with_scopes(load_knowledge(), p.values[0](), **kw),
            id=f"scoped-{p.id}{'-2' if kw else ''}",
        )
        for p in out
        if p.id in ("seed-sm120-pip-cu13", "seed-sm120-system-cuda128", "buildhost-30")
        for kw in ({}, {"services": ["sglang-k26.service", LOGIN_SHELL]})
        if not kw or p.id == "seed-sm120-system-cuda128"
    ]
    return out


def _plan(kb: Any, facts: Facts) -> tuple[dict[str, Any], str]:
    plan = make_plan(kb, facts)
    # the trace shows the expansions, which is what differs
    return plan.model_dump(mode="json", exclude={"created_at", "trace"}), "\n".join(plan.trace)


@pytest.mark.parametrize("facts", _scenarios())
def test_bounded_search_plans_what_the_full_search_plans(
    kb: Any, facts: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    f = facts()
    floor = FactsProvider(kb).cost_floor()
    real_cost = FactsProvider.cost

    def checked_cost(self: FactsProvider, state: Any, move: Any) -> tuple[int, ...]:
        c = real_cost(self, state, move)
        assert all(a >= b for a, b in zip(c, floor, strict=True)), (move, c, floor)
        return c

    monkeypatch.setattr(FactsProvider, "cost", checked_cost)
    bounded, bounded_end = _plan(kb, f)
    monkeypatch.setattr(plan_mod, "search", functools.partial(search, bounded=False))
    full, full_end = _plan(kb, f)
    assert bounded == full
    assert _expansions(bounded_end) <= _expansions(full_end)


def _expansions(trace: str) -> int:
    return int(trace.split(" expansion(s)")[0].rsplit(" ", 1)[1])


def test_bounded_search_skips_the_build_hosts_one_move_dead_ends(
    kb: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """30 venvs: 29 one-move CUDA_HOME candidates, none a goal, and the two-move goal found
    at the root: the full search expands all of them first, the bounded one none."""
    judged: list[int] = []
    real_judge = FactsProvider.judge

    def counting(self: FactsProvider, *a: Any) -> Verdict:
        judged[-1] += 1
        return real_judge(self, *a)

    monkeypatch.setattr(FactsProvider, "judge", counting)
    f = grown(30, "buildhost")
    judged.append(0)
    _, bounded_end = _plan(kb, f)
    monkeypatch.setattr(plan_mod, "search", functools.partial(search, bounded=False))
    judged.append(0)
    _, full_end = _plan(kb, f)
    assert _expansions(bounded_end) == 1 and _expansions(full_end) == 30
    assert "none of the 30 state(s) not expanded can lead to a better one" in bounded_end
    assert "stop:" not in full_end
    assert judged[0] * 2 < judged[1], judged


# -- toy domains: random graphs, costs of two criteria, rejections and prunes --------------


class Graph:
    """States 0..n-1; each has a few moves to other states with a cost of two criteria; some
    moves are rejected or pruned; some states are goals."""

    def __init__(self, rnd: random.Random, n: int, floor: bool) -> None:
        least = rnd.choice([0, 1, 1])  # the cheapest a move can be in the second criterion
        self.goals = set(rnd.sample(range(1, n), k=rnd.randint(0, min(6, n - 1))))
        self.edges: dict[int, list[tuple[str, int, tuple[int, int], str]]] = {}
        for s in range(n):
            self.edges[s] = []
            for j in range(rnd.randint(0, 8)):
                verdict = rnd.choices(["ok", "reject", "prune", "defer"], [8, 1, 1, 1])[0]
                cost = (rnd.choice([0, 0, 0, 1]), rnd.choice([least, least, 2]))
                self.edges[s].append((f"{s}>{j}", rnd.randrange(n), cost, verdict))
        self.by_name = {m[0]: m for ms in self.edges.values() for m in ms}
        if floor:
            costs = [m[2] for m in self.by_name.values()] or [(0, 0)]
            self.cost_floor = lambda: (min(c[0] for c in costs), min(c[1] for c in costs))

    def unmet(self, s: int) -> list[str]:
        return [] if s in self.goals else ["off"]

    def candidates(self, s: int) -> list[str]:
        return [m[0] for m in self.edges[s]]

    def apply(self, s: int, m: str) -> int:
        return self.by_name[m][1]

    def judge(self, before: int, after: int, m: str) -> Verdict:
        return Verdict(self.by_name[m][3], "toy")

    def cost(self, s: int, m: str) -> tuple[int, int]:
        return self.by_name[m][2]

    def state_key(self, s: int) -> int:
        return s

    def move_key(self, m: str) -> str:
        return m


def test_bounded_search_equals_full_search_on_random_graphs() -> None:
    cut_short = 0
    for seed in range(1000):
        rnd = random.Random(seed)
        g = Graph(rnd, rnd.randint(2, 40), floor=seed % 3 != 0)  # a third without a floor
        limits = {"max_expansions": rnd.choice([3, 20, 5000]), "max_depth": rnd.choice([2, 8])}
        a = search(g, 0, criteria=2, **limits)
        b = search(g, 0, criteria=2, bounded=False, **limits)
        got, want = (a.moves, a.states, a.cost, a.unmet), (b.moves, b.states, b.cost, b.unmet)
        assert got == want, seed
        assert a.expansions <= b.expansions, seed
        if not a.solved:  # nothing was found, so nothing was cut short
            assert (a.expansions, a.exhausted, len(a.rejections)) == (
                b.expansions,
                b.exhausted,
                len(b.rejections),
            ), seed
        cut_short += a.expansions < b.expansions
    assert cut_short > 150, "the toy graphs no longer exercise the bound"
