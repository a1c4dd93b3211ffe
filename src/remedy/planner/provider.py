"""The domain side of the planner: facts as states, playbook actions as moves.

The search (planner/search.py) calls this provider; everything here is about what actions do
to a host's facts and which rules they must leave holding.
"""

from __future__ import annotations

import itertools
import json
import operator
import re
from collections.abc import Hashable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from remedy.evaluate import Evaluation, Violation, evaluate
from remedy.knowledge.expr import call, plain, truthy
from remedy.knowledge.loader import CompiledAction, Knowledge
from remedy.planner.search import Verdict
from remedy.resolve import Frozen, toolkit_at, workload_python

CRITERIA = ["driver", "pins", "launches", "steps"]
RISK = {"low": 0, "medium": 1, "high": 2}
CRITERIA_TEXT = [
    "touch no driver",
    "keep pinned package versions",
    "fewest expensive launches",
    "fewest steps",
]


@dataclass(frozen=True)
class StepSpec:
    action: str
    params: tuple[tuple[str, Any], ...]

    def as_dict(self) -> dict[str, Any]:
        return dict(self.params)


@dataclass(frozen=True)
class Move:
    """One planner move: an action plus the steps that must come before it."""

    steps: tuple[StepSpec, ...]
    fixes: str  # the rule the main step was chosen for
    subject: str
    # found by its declared effect, not because the rule lists it among its repairs
    by_effect: bool = field(default=False, compare=False)

    @property
    def main(self) -> StepSpec:
        return self.steps[-1]


def _freeze(value: Any) -> Any:
    if isinstance(value, dict):
        return tuple(sorted((k, _freeze(v)) for k, v in value.items()))
    if isinstance(value, list):
        return tuple(_freeze(v) for v in value)
    return value


def state_key(facts: dict[str, Any]) -> str:
    return json.dumps(facts, sort_keys=True, default=str)


_MISSING: Any = object()


def _canon(value: Any) -> str:
    return "-" if value is _MISSING else json.dumps(value, sort_keys=True, default=str)


def diff_key(state: dict[str, Any], root: dict[str, Any]) -> Hashable:
    """A key equal for two states exactly when their contents are equal, built from how they
    differ from ``root``: parts shared with ``root`` (``is``) cost one comparison, so a state
    that changed one toolkit of a thousand is keyed in microseconds, not by serializing it."""
    if state is root:
        return ()
    parts: list[tuple[str, Any]] = []
    for k in sorted(set(state) | set(root), key=str):
        a, b = state.get(k, _MISSING), root.get(k, _MISSING)
        if a is b:
            continue
        if isinstance(a, list) and isinstance(b, list):
            # positions whose items are not the same object (found at C speed), then of those
            # the ones whose contents differ, then any beyond the shorter list
            n = min(len(a), len(b))
            maybe = a.changed_since(b) if type(a) is Frozen else None
            odd = (
                sorted(i for i in maybe if i < n and a[i] is not b[i])
                if maybe is not None
                else itertools.compress(range(n), map(operator.is_not, a, b))
            )
            items = [(i, _canon(a[i])) for i in odd if a[i] != b[i]]
            items += [
                (i, _canon(a[i] if i < len(a) else _MISSING)) for i in range(n, max(len(a), len(b)))
            ]
            if items:
                parts.append((str(k), (len(a), tuple(items))))
        elif a != b:
            parts.append((str(k), _canon(a)))
    return tuple(parts)


def seal(facts: dict[str, Any]) -> dict[str, Any]:
    """The first state of a search: its lists made Frozen (the states derived from it share
    them, and a Frozen list's toolkit index is derived from its parent's, not rebuilt)."""
    return {k: Frozen(v) if type(v) is list else v for k, v in facts.items()}


def _replaced(old: Any, changed: dict[int, Any], appended: tuple[Any, ...] = ()) -> list[Any]:
    """A copy of ``old`` with positions replaced and items appended: Frozen, derived from
    ``old`` when that is Frozen too."""
    items = [*old, *appended]
    for i, x in changed.items():
        items[i] = x
    if isinstance(old, Frozen):
        at = (*changed, *range(len(old), len(items)))
        return Frozen(items, parent=old, changed=at)
    return Frozen(items)


def _own_item(facts: dict[str, Any], key: str, item: dict[str, Any]) -> dict[str, Any]:
    """Replace ``item`` in ``facts[key]`` by a copy (in a copy of the list) and return it."""
    old = facts.get(key, ())
    # the position of ``item`` itself (not of an equal item), found at C speed
    at = next(
        itertools.compress(itertools.count(), map(operator.is_, old, itertools.repeat(item))), None
    )
    if at is not None:
        item = dict(item)
        facts[key] = _replaced(old, {at: item})
        return item
    facts[key] = _replaced(old, {})
    return item


def _first(items: Any, field: str, value: Any) -> dict[str, Any] | None:
    """The first item whose ``field`` equals ``value``, found at C speed (these lists hold
    every venv of a build host)."""
    try:
        return items[list(map(operator.itemgetter(field), items)).index(value)]
    except ValueError:
        return None


def _set_env(facts: dict[str, Any], var: str, value: str | None) -> None:
    """``resolve.set_workload_env`` without changing any dict ``facts`` shares."""
    wl = facts.get("workload") or {}
    svc_name = wl.get("service")
    target: dict[str, str] | None = None
    if svc_name and "services" in facts:
        mine: dict[int, Any] = {}
        for i, svc in enumerate(facts["services"]):
            if svc["name"] == svc_name:
                mine[i] = svc = {
                    **svc,
                    "environment": dict(svc.get("environment") or {}),
                    "environment_files_env": dict(svc.get("environment_files_env") or {}),
                }
                target = svc["environment"]
                if var in (svc.get("exec_shell_env") or {}):
                    # its ExecStart is a login shell: /etc/profile(.d) sets the variable
                    # after systemd's environment, remedy's drop-in included (bash(1)
                    # INVOCATION; tests/test_toolchain_sandbox.py test_p)
                    return
                if var in (svc.get("unset_environment") or ()):
                    # the unit's UnsetEnvironment=NAME removes it after every Environment=
                    # and EnvironmentFile=, remedy's own too (systemd.exec(5)): no drop-in
                    # of remedy's sets it (sandbox/scenarios/service-dropin-later-cuda-home)
                    return
                later = svc.get("dropin_overrides") or {}
                if value is not None and (var in later or "*" in later):
                    # a drop-in read after remedy's last-named one sets it again (its
                    # EnvironmentFile= listed after remedy's): remedy's value never reaches
                    # the process (units.dropin.later_dropin_override; test_s). An unset
                    # still holds: UnsetEnvironment= applies after every drop-in's lines
                    return
                if value is not None and var in svc["environment_files_env"]:
                    # the unit's EnvironmentFile= sets it: remedy's drop-in names a file of
                    # its own, read after the unit's (SetEnv.envfile), whose value wins
                    svc["environment_files_env"][var] = value
        facts["services"] = _replaced(facts["services"], mine)
    if target is None:
        if var in (facts.get("shell_env_from") or {}):
            # a user's own file (~/.bashrc, ~/.profile) sets it after /etc/environment and
            # /etc/profile.d: what remedy writes there does not reach the login shell
            return
        target = facts["shell_env"] = dict(facts.get("shell_env") or {})
    if value is None:
        target.pop(var, None)
    else:
        target[var] = value


_NOT_EXECUTED = re.compile(r"(?:nvcc|ptxas) not executed: ([^;]*)")


@dataclass
class FactsProvider:
    kb: Knowledge
    evaluations: dict[Hashable, Evaluation] = field(default_factory=dict)
    root: dict[str, Any] | None = None  # the first state keyed: others are keyed by their diff
    # actions whose when/bind/before could not be evaluated: the plan shows them
    errors: list[str] = field(default_factory=list)
    # login-scope moves never offered: (action, params, rule, why) (the plan lists them)
    untrusted: dict[tuple[str, Hashable], tuple[dict[str, Any], str, str]] = field(
        default_factory=dict
    )
    # warning-level rules the logs show failing (a finding `observed` through a signature it
    # predicts): repaired like errors. Without a log they stay advice (a risk, not a failure).
    promoted: frozenset[str] = frozenset()
    # violations no move can repair (``unfixable``): candidates stops looking for moves for them
    hopeless: set[Hashable] = field(default_factory=set)
    _keys: dict[int, tuple[dict[str, Any], Hashable]] = field(default_factory=dict, repr=False)
    _last: tuple[dict[str, Any], Move, dict[str, Any]] | None = field(default=None, repr=False)

    # -- evaluation cache ---------------------------------------------------------------
    def evaluation(self, facts: dict[str, Any], parent: dict[str, Any] | None = None) -> Evaluation:
        """Evaluation of ``facts`` (cached by state); ``parent``: a state ``facts`` was derived
        from by ``apply``, whose evaluation lets only the rules the move touched run again."""
        key = self.state_key(facts)
        ev = self.evaluations.get(key)
        if ev is None:
            prev = self.evaluations.get(self.state_key(parent)) if parent is not None else None
            ev = evaluate(self.kb, facts, prev=prev)
            self.evaluations[key] = ev
        return ev

    def violations(self, facts: dict[str, Any]) -> list[Violation]:
        ev = self.evaluation(facts)
        if not self.promoted:
            return ev.errors_only()
        return [v for v in ev.violations if v.severity == "error" or v.rule in self.promoted]

    # -- Provider protocol ----------------------------------------------------------------
    def unmet(self, state: dict[str, Any]) -> Sequence[Hashable]:
        return [v.key for v in self.violations(state)]

    def candidates(self, state: dict[str, Any]) -> Iterable[Move]:
        violations = self.violations(state)
        unrepaired = []
        for v in violations:
            listed = False
            for aid in self.kb.rules[v.rule].rule.repairs:
                ca = self.kb.actions[aid]
                if ca.action.masks:
                    continue
                for move in self.bind(ca, v):
                    listed = True
                    yield move
            if not listed:
                unrepaired.append(v)
        # a violation that no listed repair applies to: any other action whose declared effect
        # makes the rule hold, least blast radius first (risk, then how much it touches). A
        # rule's `repairs` is where the knowledge's author put the fix; it is not the limit of
        # what the planner may do, but it goes first (an effect-found step never displaces a
        # listed repair that applies: recorded H200 scenario d keeps its wheel alignment)
        for v in unrepaired:
            if v.key not in self.hopeless:
                yield from self.by_effect(state, v)

    def unfixable(self, state: dict[str, Any], goal: Hashable) -> bool:
        """Whether no move can repair the violation ``goal`` of ``state``: its rule lists no
        repair that applies to it, and no other action's declared effect, bound for it, makes
        the rule hold (a file only a driver ships, -lcuda's libcuda.so, where no action
        installs a driver). Marked once (``hopeless``): the search then does not branch on it,
        and ``candidates`` no longer binds every action against it in every state it expands,
        which on a host with many venvs made planning superlinear."""
        v = next((v for v in self.violations(state) if v.key == goal), None)
        if v is None:
            return False
        for aid in self.kb.rules[v.rule].rule.repairs:
            ca = self.kb.actions[aid]
            if not ca.action.masks and next(iter(self.bind(ca, v)), None) is not None:
                return False
        # not only a move that repairs it alone: one that changes it (a violation naming
        # several missing files, one action shipping some of them, another the rest) starts a
        # repair that a later move completes; marking it would leave that repair unplanned
        if next(iter(self.by_effect(state, v, changes=True)), None) is not None:
            return False
        self.hopeless.add(goal)
        return True

    def by_effect(
        self, state: dict[str, Any], v: Violation, *, changes: bool = False
    ) -> Iterable[Move]:
        """Moves of actions the rule does not list whose declared effect makes ``v``'s rule
        hold; ``changes``: every move after which ``v`` is no longer violated as it was (met,
        or violated otherwise: a step of a longer repair)."""
        listed = set(self.kb.rules[v.rule].rule.repairs)
        others = sorted(
            (
                ca
                for aid, ca in self.kb.actions.items()
                if aid not in listed and not ca.action.masks
            ),
            key=lambda ca: (RISK.get(ca.action.risk, 3), _breadth(ca), ca.action.id),
        )
        for ca in others:
            for move in self.bind(ca, v):
                try:
                    after = self.apply(state, move)
                except Exception:  # an effect that cannot be simulated here proves nothing
                    continue
                if self.state_key(after) not in self.evaluations:
                    # v's own rule alone first, incrementally from the state's evaluation
                    # (its outcome is kept where the move changed nothing it read): most
                    # bindings leave v violated, and a full evaluation of each made this loop
                    # cost every rule for every binding; a rule's outcome depends on no other
                    one = evaluate(self.kb, after, {v.rule}, prev=self.evaluation(state))
                    if any(w.key == v.key for w in one.violations):
                        continue
                    if changes:
                        yield move
                        continue
                still = self.evaluation(after, parent=state).keys()
                if v.key not in still and (changes or self.holds_after(v, after)):
                    yield Move(move.steps, move.fixes, move.subject, by_effect=True)

    def holds_after(self, v: Violation, after: dict[str, Any]) -> bool:
        """The rule applies after the move and holds: a move that only makes the rule not
        apply (CUDA_HOME=/dev/null: no toolkit left to check) does not satisfy it."""
        from remedy.evaluate import base_context, consumer_context

        cr = self.kb.rules[v.rule]
        base = base_context(self.kb, after)
        ctxs = (
            [consumer_context(self.kb, base, c, {}) for c in v.consumers]
            if cr.rule.scope == "consumer"
            else [base]
        )
        try:
            return all(truthy(call(cr.when, c)) and truthy(call(cr.holds, c)) for c in ctxs)
        except Exception:
            return False

    def bind(self, ca: CompiledAction, v: Violation) -> Iterable[Move]:
        ctx = v.ctx
        try:
            if not truthy(call(ca.when, ctx)):
                return
            names = list(ca.bind)
            values = []
            for n in names:
                vals = plain(call(ca.bind[n], ctx))
                values.append(list(vals) if vals else [])
        except Exception as exc:
            self._error(f"action {ca.action.id} (for {v.rule} @ {v.subject})", exc)
            return
        for combo in itertools.product(*values):
            params = dict(zip(names, combo, strict=True))
            pctx = {**ctx, **params}
            steps: list[StepSpec] = []
            try:
                for b in ca.before:
                    if truthy(call(b.when, pctx)):
                        bp = {k: plain(call(e, pctx)) for k, e in b.params.items()}
                        steps.append(StepSpec(b.action, tuple(sorted(bp.items()))))
            except Exception as exc:
                self._error(f"action {ca.action.id} before", exc)
                continue
            why = self.login_untrusted(ca, pctx)
            if why:
                key = (ca.action.id, _freeze(params))
                self.untrusted.setdefault(key, (params, v.rule, why))
                continue
            if self.env_already(ca, pctx):
                # the step would write values the workload's environment already has
                # (CUDA_HOME is the prefix, only its nvcc is missing): a step that changes
                # nothing is no step; what it needs before it may still be the repair
                if steps:
                    yield Move(tuple(steps), v.rule, v.subject)
                continue
            steps.append(StepSpec(ca.action.id, tuple(sorted(params.items()))))
            yield Move(tuple(steps), v.rule, v.subject)

    def env_already(self, ca: CompiledAction, ctx: dict[str, Any]) -> bool:
        """Whether every effect of ``ca`` sets variables to the values the workload's
        environment already holds (so applying it would change nothing the rules read)."""
        if not ca.effects or any(set(eff) != {"env"} for eff in ca.effects):
            return False
        env = ctx.get("env") or {}
        try:
            for eff in ca.effects:
                for var, e in eff["env"].items():
                    val = plain(call(e, ctx))
                    if val is None or env.get(var) != str(val):
                        return False
        except Exception:
            return False
        return True

    def login_untrusted(self, ca: CompiledAction, ctx: dict[str, Any]) -> str | None:
        """Why a login-scope step of ``ca`` may not be offered: a value it writes into
        /etc/environment and profile.d (which root's own sessions read) names a toolkit whose
        nvcc or ptxas remedy would not run (owned by another user, or writable by others up
        its path: facts' `not executed` note). A unit's drop-in is that unit's user's own
        business and is not checked. The runner checks the host again before writing."""
        if (ctx.get("workload") or {}).get("service") or not ca.effects:
            return None
        tk_at = ctx.get("tk_at")
        if tk_at is None:
            return None
        try:
            for eff in ca.effects:
                for e in (eff.get("env") or {}).values():
                    for p in str(plain(call(e, ctx)) or "").split(":"):
                        note = ((tk_at(p) if p.startswith("/") else None) or {}).get("note")
                        m = _NOT_EXECUTED.search(note or "")
                        if m:
                            return f"{p} is not trusted for every login (root's too): {m[1]}"
        except Exception:
            return None
        return None

    def _error(self, where: str, exc: Exception) -> None:
        msg = f"{where}: {type(exc).__name__}: {exc}"
        if msg not in self.errors:
            self.errors.append(msg)

    def apply(self, state: dict[str, Any], move: Move) -> dict[str, Any]:
        """The state after ``move``: a new top-level dict sharing every part the move does not
        change with ``state`` (copy on write: a deep copy per candidate made planning
        quadratic in the number of toolkits, venvs and services)."""
        last = self._last
        if last is not None and last[0] is state and last[1] == move:
            return last[2]  # the search applies a move, then asks its cost: apply it once
        facts = dict(state)
        for step in move.steps:
            self.apply_step(facts, step)
        self._last = (state, move, facts)
        return facts

    def apply_step(self, facts: dict[str, Any], step: StepSpec) -> None:
        """Apply one step to ``facts``: its top-level dict is changed in place, nothing below it
        is (a list, toolkit, env or package dict is copied before it is changed), so states
        may share their unchanged parts."""
        from remedy.evaluate import base_context

        ca = self.kb.actions[step.action]
        params = step.as_dict()
        for eff in ca.effects:
            ctx = {**base_context(self.kb, facts), **params}
            if "toolkit" in eff:
                tk = toolkit_at(facts, params.get(eff["toolkit"]))
                if tk is None:
                    continue
                tk = _own_item(facts, "toolkits", tk)
                for f, e in eff["set"].items():
                    tk[f] = plain(call(e, ctx))
                facts["toolkits"].touched()  # its index may have seen tk half-changed
            elif "python" in eff:
                py = _first(facts.get("pythons", ()), "path", params.get(eff["python"]))
                if py is None:
                    continue
                pk = eff["packages"]
                new = (
                    plain(call(pk, ctx))
                    if callable(pk)
                    else {n: plain(call(e, ctx)) for n, e in pk.items()}
                )
                py = _own_item(facts, "pythons", py)
                py["packages"] = {**(py.get("packages") or {}), **(new or {})}
            elif "env" in eff:
                for var, e in eff["env"].items():
                    val = plain(call(e, ctx))
                    _set_env(facts, var, None if val is None else str(val))
            elif "unset_env" in eff:
                for var in eff["unset_env"]:
                    _set_env(facts, var, None)
            elif "add_toolkit" in eff:
                new_tk = plain(call(eff["add_toolkit"], ctx))
                if new_tk:
                    old = toolkit_at(facts, new_tk["prefix"])
                    if old is not None:
                        _own_item(facts, "toolkits", old).update(new_tk)
                        facts["toolkits"].touched()
                    else:
                        facts["toolkits"] = _replaced(facts.get("toolkits", ()), {}, (new_tk,))
            elif "gpu_driver" in eff:
                val = plain(call(eff["gpu_driver"], ctx))
                if "gpus" in facts:
                    facts["gpus"] = Frozen({**g, "driver": val} for g in facts["gpus"])

    def judge(self, before: dict[str, Any], after: dict[str, Any], move: Move) -> Verdict:
        ev_before = self.evaluation(before)
        ev_after = self.evaluation(after, parent=before)
        keys_before = ev_before.keys()
        new = [v for v in ev_after.errors_only() if v.key not in keys_before]
        hard = [v for v in new if v.hard]
        if hard:
            breaks: list[str] = []
            for v in hard:
                rule = self.kb.rules[v.rule].rule
                for c in v.consumers or ([rule.breaks_component] if rule.breaks_component else []):
                    if c and c not in breaks:
                        breaks.append(c)
            return Verdict("reject", "breaks", {"violations": hard, "breaks": breaks})
        after_keys = {v.key for v in self.violations(after)}
        if not (set(self.unmet(before)) - after_keys):
            return Verdict("prune", "fixes nothing")
        probe = self.kb.probes[self.kb.actions[move.main.action].action.probe]
        if probe.requires:
            blocking = [v for v in ev_after.errors_only() if v.rule in probe.requires]
            if blocking:
                return Verdict("defer", f"probe {probe.id} needs {blocking[0].rule} first")
        return Verdict.ok()

    def cost(self, state: dict[str, Any], move: Move) -> tuple[int, ...]:
        total = dict.fromkeys(CRITERIA, 0)
        py = workload_python(state)
        pinned = {r["package"] for r in (py or {}).get("requirements", [])}
        after = self.apply(state, move)
        py_after = workload_python(after)
        for step in move.steps:
            c = self.kb.actions[step.action].action.cost
            total["driver"] += c.driver
            total["launches"] += c.launches
            total["steps"] += c.steps
        if py and py_after:
            before_pk = py.get("packages", {})
            after_pk = py_after.get("packages", {})
            total["pins"] += sum(1 for p in pinned if before_pk.get(p) != after_pk.get(p))
        return tuple(total[k] for k in CRITERIA)

    def cost_floor(self) -> tuple[int, ...]:
        """The least any move costs, per criterion: a move is one or more actions, each
        costing at least the least of every action's fixed cost; pins (counted from the
        packages a move changes) may be 0. Lets the search stop once nothing it has left
        can beat the best plan it has found (planner/search.py)."""
        costs = [ca.action.cost for ca in self.kb.actions.values()]
        least = {
            "driver": min((c.driver for c in costs), default=0),
            "pins": 0,
            "launches": min((c.launches for c in costs), default=0),
            "steps": min((c.steps for c in costs), default=0),
        }
        return tuple(least[k] for k in CRITERIA)

    def state_key(self, state: dict[str, Any]) -> Hashable:
        if self.root is None:
            self.root = state
        # states are never changed once made (copy on write): their key neither
        hit = self._keys.get(id(state))
        if hit is not None and hit[0] is state:
            return hit[1]
        key = diff_key(state, self.root)
        self._keys[id(state)] = (state, key)
        return key

    def move_key(self, move: Move) -> Hashable:
        return tuple((s.action, _freeze(s.as_dict())) for s in move.steps)


# How much an operation touches (the tie-break after risk): links and drop-ins write several
# paths, a pip pin or a profile.d file one.
_OP_BREADTH = {"pip-install": 1, "apt-install": 2, "env": 2, "link-layout": 3,
               "exec-start": 2, "purge-jit-caches": 3, "manual": 1}  # fmt: skip


def _breadth(ca: Any) -> int:
    return _OP_BREADTH.get((ca.action.operation or {}).get("op", ""), 0)
