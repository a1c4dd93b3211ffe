"""A violation no move can repair (a file only a driver ships, where no action installs one) is
marked once as unfixable: the search plans the rest as before, leaves it unresolved, says so in
the trace, and no longer expands every state it can reach looking for a repair (issue 18)."""

from __future__ import annotations

from typing import Any

import pytest

from remedy.model import Facts
from remedy.planner.plan import make_plan
from remedy.planner.provider import FactsProvider
from remedy.planner.search import Reporter, Verdict, search

from conftest import FIXTURES, grown

# -- the search, on a toy domain ------------------------------------------------------------


class TwoGoals:
    """Goal "a" is met by any of n moves ("use", i), each leaving a state of its own; goal "z"
    no move meets. A state is the index used (None: none yet)."""

    def __init__(self, n: int, says_unfixable: bool = True) -> None:
        self.n = n
        if says_unfixable:
            self.unfixable = lambda state, goal: goal == "z"

    def unmet(self, s: Any) -> list[str]:
        return ["z"] if s is not None else ["a", "z"]

    def candidates(self, s: Any) -> list[tuple[str, int]]:
        return [("use", i) for i in range(self.n)]

    def apply(self, s: Any, m: tuple[str, int]) -> Any:
        return m[1]

    def judge(self, before: Any, after: Any, m: Any) -> Verdict:
        return Verdict.ok() if before is None else Verdict("prune", "fixes nothing")

    def cost(self, s: Any, m: tuple[str, int]) -> tuple[int, int]:
        return (0, 1)

    def state_key(self, s: Any) -> Any:
        return s

    def move_key(self, m: Any) -> Any:
        return m


class Counting(Reporter):
    def __init__(self) -> None:
        self.expanded = 0
        self.unfixable_goals: list[Any] = []

    def expanding(self, depth: int, cost: tuple[int, ...], unmet: Any) -> None:
        self.expanded += 1

    def unfixable(self, goals: Any) -> None:
        self.unfixable_goals.extend(goals)


@pytest.mark.parametrize("n", [3, 300])
def test_search_stops_branching_on_an_unfixable_goal(n: int) -> None:
    rep = Counting()
    res = search(TwoGoals(n), None, criteria=2, reporter=rep)
    assert res.moves == [("use", 0)] and res.unmet == ["z"] and res.unfixable == ["z"]
    assert not res.solved and not res.exhausted
    assert rep.unfixable_goals == ["z"]
    # the start state, not one state per move that met "a"
    assert rep.expanded == 1


def test_without_the_mark_the_same_answer_costs_a_state_per_move() -> None:
    """What the mark saves: the same partial answer, found by expanding every reachable state
    (the search stays correct for a provider that says nothing)."""
    rep = Counting()
    res = search(TwoGoals(300, says_unfixable=False), None, criteria=2, reporter=rep)
    assert res.moves == [("use", 0)] and res.unmet == ["z"] and res.unfixable == []
    assert rep.expanded == 301 and rep.unfixable_goals == []


# -- the planner ----------------------------------------------------------------------------


def _with_missing(facts: Facts, files: list[str]) -> Facts:
    wl = facts.workload.model_copy(update={"missing_files": files})
    return facts.model_copy(update={"workload": wl})


def _what_it_does(plan: Any) -> dict[str, Any]:
    return {
        "status": plan.status,
        "steps": [(s.action, s.params, s.fixes) for s in plan.steps],
        "unresolved": plan.unresolved,
        "cost": plan.cost,
    }


def _expansions(plan: Any) -> int:
    return sum(1 for line in plan.trace if line.lstrip().startswith("expand "))


def test_link_log_needing_libcuda_plans_as_before_and_names_it_unfixable(
    kb: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """lab_f3's link line (-lcuda: libcuda.so, a driver file no action provides): the plan
    repairs the rest as the search without the mark does, and says which rule it left."""
    from remedy.inputs import scan_logs

    symptoms, _, wrappers = scan_logs([str(FIXTURES / "logs" / "lab_f3_link_cudart.log")])
    facts = grown(1, "buildhost")
    plan = make_plan(kb, facts, symptoms, wrappers=wrappers)
    assert plan.status == "partial"
    assert plan.unresolved == ["needed-files-provided @ files:libcuda.so"]
    assert [s.action for s in plan.steps] == ["apt-install-cuda-toolkit", "service-env-cuda-home"]
    unfix = [line for line in plan.trace if line.startswith("unfixable: ")]
    assert len(unfix) == 1 and "needed-files-provided@files:libcuda.so" in unfix[0]

    # the search as it was: every violation searched for in every state
    monkeypatch.setattr(FactsProvider, "unfixable", lambda self, state, goal: False)
    before = make_plan(kb, facts, symptoms, wrappers=wrappers)
    assert not any(line.startswith("unfixable: ") for line in before.trace)
    assert _what_it_does(before) == _what_it_does(plan)
    assert _expansions(before) > _expansions(plan)


def test_a_file_a_pip_package_ships_is_not_marked_unfixable(kb: Any) -> None:
    """nvml.h: no rule lists the repair, but pip-install-provider's declared effect ships it:
    fixable, so searched for and planned."""
    plan = make_plan(kb, _with_missing(grown(1, "buildhost"), ["nvml.h"]))
    assert not any(line.startswith("unfixable: ") for line in plan.trace)
    assert any(s.action == "pip-install-provider" for s in plan.steps)


def test_unfixable_violation_expands_the_same_states_for_any_number_of_venvs(kb: Any) -> None:
    """N unrelated venvs, each a CUDA_HOME candidate: the search once expanded a state per
    candidate (15 at N=5, 108 at N=40) looking for a repair of libcuda.so."""
    small = make_plan(kb, _with_missing(grown(5, "buildhost"), ["libcuda.so"]))
    big = make_plan(kb, _with_missing(grown(60, "buildhost"), ["libcuda.so"]))
    assert small.unresolved == ["needed-files-provided @ files:libcuda.so"]
    assert _what_it_does(big) == _what_it_does(small)
    assert _expansions(big) == _expansions(small) <= 3
