"""Uniform-cost search for the cheapest sequence of moves that reaches a goal state.

This module knows nothing of the domain (resolvelib's lesson): a Provider says what a state's
unmet goals are, which moves could help, what a move does, whether a result is acceptable,
and what it costs. Costs are tuples compared lexicographically, so ranking criteria apply in
order (the first criterion always dominates the rest) rather than as one weighted score.
A Reporter observes the search; it never changes it.
"""

from __future__ import annotations

import heapq
import itertools
from collections.abc import Hashable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, Generic, Literal, Protocol, TypeVar

S = TypeVar("S")
M = TypeVar("M")


@dataclass(frozen=True)
class Verdict:
    kind: Literal["ok", "reject", "defer", "prune"]
    reason: str = ""
    data: Any = None

    @staticmethod
    def ok() -> Verdict:
        return Verdict("ok")


class Provider(Protocol[S, M]):
    def unmet(self, state: S) -> Sequence[Hashable]:
        """Goals the state does not meet; empty means the state is a goal."""

    def candidates(self, state: S) -> Iterable[M]:
        """Moves that might help from this state."""

    def apply(self, state: S, move: M) -> S:
        """The state after the move (a new object; never mutate `state`)."""

    def judge(self, before: S, after: S, move: M) -> Verdict:
        """ok, reject (the move breaks something: reported), defer (not now: not reported),
        prune (useless: not reported)."""

    def cost(self, state: S, move: M) -> tuple[int, ...]:
        """The move's cost per ranking criterion, most important first."""

    def state_key(self, state: S) -> Hashable: ...

    def move_key(self, move: M) -> Hashable: ...

    # Optional: ``cost_floor() -> tuple[int, ...]``, a lower bound, criterion by criterion, on
    # the cost of any move (every move's cost minus it is >= 0 in each criterion). Without it
    # the bound is zero.
    #
    # Optional: ``unfixable(state, goal) -> bool``, asked once for each goal the initial state
    # does not meet: True when no move the provider knows can make that goal hold (no move
    # offered for it, none whose declared effect meets it). The search then stops branching
    # on it: a state whose only unmet goals are unfixable ones counts as a goal (the result is
    # partial: ``unmet`` lists them, ``unfixable`` too), and the provider, having said so, may
    # stop looking for moves for it. Without it every unmet goal is searched for in every
    # state, and a goal nothing can meet makes the search expand every state it can reach.


class Reporter:
    """Hooks called as the search runs (all no-ops here)."""

    def starting(self, unmet: Sequence[Hashable]) -> None: ...

    def expanding(self, depth: int, cost: tuple[int, ...], unmet: Sequence[Hashable]) -> None: ...

    def rejecting(self, depth: int, move: Any, verdict: Verdict) -> None: ...

    def adding(self, depth: int, move: Any, cost: tuple[int, ...]) -> None: ...

    def unfixable(self, goals: Sequence[Hashable]) -> None:
        """The provider says no move can meet these goals of the initial state: the search
        does not branch on them and the result leaves them unmet."""

    def bounding(self, goal_cost: tuple[int, ...], left: int) -> None:
        """The search stops: none of the ``left`` states it has not expanded can lead to a
        goal cheaper than ``goal_cost`` (bounded search)."""

    def ending(self, result: SearchResult) -> None: ...


@dataclass
class Rejection(Generic[M]):
    move: M
    verdict: Verdict
    depth: int


@dataclass
class SearchResult(Generic[S, M]):
    moves: list[M]
    states: list[S]  # states[0] is the initial state; states[i+1] follows moves[i]
    cost: tuple[int, ...]
    unmet: list[Hashable]
    rejections: list[Rejection[M]] = field(default_factory=list)
    expansions: int = 0
    exhausted: bool = False  # the budget ran out before a goal was found
    # goals of the initial state the provider said no move can meet (``Provider.unfixable``)
    # and left unmet in ``unmet``
    unfixable: list[Hashable] = field(default_factory=list)

    @property
    def solved(self) -> bool:
        return not self.unmet


def search(
    provider: Provider[S, M],
    initial: S,
    *,
    reporter: Reporter | None = None,
    criteria: int = 4,
    max_expansions: int = 5000,
    max_depth: int = 8,
    bounded: bool = True,
) -> SearchResult[S, M]:
    """The cheapest goal, ties going to the goal found first (uniform-cost search).

    ``bounded``: stop as soon as no state left to expand can lead to a better goal than the
    best one already found (a state of cost c leads only to goals of cost >= c + the
    provider's cost floor, and a goal found later loses a tie). The result's moves, cost and
    states are those of the full search (``bounded=False``: every state popped before the
    goal is expanded); what differs is the work done and so the rejections and expansions
    seen on the way. On a host with a thousand equally cheap one-move candidates that each
    leave something unmet, the full search expands all of them before taking the two-move
    goal found at the start."""
    rep = reporter or Reporter()
    zero = (0,) * criteria
    floor_of = getattr(provider, "cost_floor", None)
    floor = tuple(floor_of()) if floor_of is not None else zero
    # the best goal pushed so far: (its cost, its frontier entry)
    goal: tuple[tuple[int, ...], tuple[Any, ...]] | None = None
    start_unmet = list(provider.unmet(initial))
    rep.starting(start_unmet)
    # goals no move can meet, marked once: a state counts as a goal once only these are unmet
    unfixable_of = getattr(provider, "unfixable", None)
    hopeless = frozenset(
        g for g in start_unmet if unfixable_of is not None and unfixable_of(initial, g)
    )
    if hopeless:
        rep.unfixable([g for g in start_unmet if g in hopeless])

    def done(unmet: Sequence[Hashable]) -> bool:
        return all(g in hopeless for g in unmet)

    counter = itertools.count()
    frontier: list[tuple[tuple[int, ...], int, int, S, list[M], list[S]]] = [
        (zero, 0, next(counter), initial, [], [initial])
    ]
    best: dict[Hashable, tuple[int, ...]] = {provider.state_key(initial): zero}
    rejections: dict[Hashable, Rejection[M]] = {}
    # The closest we got, for a partial answer when no goal is reachable.
    closest = (len(start_unmet), zero, initial, [], [initial], start_unmet)
    expansions = 0
    while frontier:
        cost, depth, _, state, moves, states = heapq.heappop(frontier)
        unmet = list(provider.unmet(state))
        if not done(unmet) and goal is not None and not _add(cost, floor) < goal[0]:
            # nothing left can beat the goal already found: the full search would expand
            # this and the rest in vain, then pop that goal
            rep.bounding(goal[0], len(frontier))  # the popped state, not the goal
            cost, depth, _, state, moves, states = goal[1]
            unmet = list(provider.unmet(state))
        if done(unmet):
            result = SearchResult(
                moves,
                states,
                cost,
                unmet,
                list(rejections.values()),
                expansions,
                unfixable=unmet,
            )
            rep.ending(result)
            return result
        if len(unmet) < closest[0]:
            closest = (len(unmet), cost, state, moves, states, unmet)
        if expansions >= max_expansions or depth >= max_depth:
            continue
        expansions += 1
        rep.expanding(depth, cost, unmet)
        seen_moves: set[Hashable] = set()
        for move in provider.candidates(state):
            mk = provider.move_key(move)
            if mk in seen_moves:
                continue
            seen_moves.add(mk)
            after = provider.apply(state, move)
            verdict = provider.judge(state, after, move)
            if verdict.kind == "reject":
                rejections.setdefault(mk, Rejection(move, verdict, depth))
                rep.rejecting(depth, move, verdict)
                continue
            if verdict.kind != "ok":
                continue
            step = provider.cost(state, move)
            new_cost = tuple(a + b for a, b in zip(cost, step, strict=True))
            key = provider.state_key(after)
            if key in best and best[key] <= new_cost:
                continue
            best[key] = new_cost
            rep.adding(depth, move, new_cost)
            entry = (new_cost, depth + 1, next(counter), after, [*moves, move], [*states, after])
            heapq.heappush(frontier, entry)
            # (a goal pushed later than one of equal cost loses the tie to it)
            if bounded and (goal is None or new_cost < goal[0]) and done(provider.unmet(after)):
                goal = (new_cost, entry)
    _, cost, state, moves, states, unmet = closest
    result = SearchResult(
        moves,
        states,
        cost,
        unmet,
        list(rejections.values()),
        expansions,
        exhausted=expansions >= max_expansions,
        unfixable=[g for g in unmet if g in hopeless],
    )
    rep.ending(result)
    return result


def _add(a: tuple[int, ...], b: tuple[int, ...]) -> tuple[int, ...]:
    return tuple(x + y for x, y in zip(a, b, strict=True))
