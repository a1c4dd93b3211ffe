"""Rules × facts → violations. The inner loop of diagnosis and of the planner's simulation."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any

from remedy.errors import KnowledgeError
from remedy.knowledge.expr import call, plain, plain_mapping, truthy
from remedy.record import Record
from remedy.resolve import pick_toolkit, workload_env, workload_python

if TYPE_CHECKING:
    from jinja2.exceptions import SecurityError

    # not at run time: a log-only diagnosis renders templates without the loader (logview)
    from remedy.knowledge.loader import CompiledRule, Knowledge


# Plain records (remedy.record), not dataclasses: why is said there.
class Violation(Record):
    _FIELDS = ("rule", "subject", "consumers", "ctx", "hard", "severity")

    def __init__(
        self,
        rule: str,
        subject: str,
        consumers: list[str],
        ctx: dict[str, Any],
        hard: bool,
        severity: str,
    ) -> None:
        self.rule = rule
        self.subject = subject
        self.consumers = consumers
        self.ctx = ctx
        self.hard = hard
        self.severity = severity

    @property
    def key(self) -> tuple[str, str]:
        return (self.rule, self.subject)


class Evaluation(Record):
    # for incremental evaluation (``evaluate(..., prev=)``): the facts evaluated, the server's
    # environment and Python env, and per (rule, consumer) what _check said (True, False, or
    # None with the error) and the subject of a violation. picks: consumer -> Pick
    _FIELDS = ("violations", "errors", "picks", "facts", "env", "py", "outcomes")

    def __init__(
        self,
        violations: list[Violation],
        errors: list[str] | None = None,
        picks: dict[str, Any] | None = None,
        facts: dict[str, Any] | None = None,
        env: dict[str, str] | None = None,
        py: Any = None,
        outcomes: dict[tuple[str, str | None], Any] | None = None,
    ) -> None:
        self.violations = violations
        self.errors: list[str] = [] if errors is None else errors
        self.picks: dict[str, Any] = {} if picks is None else picks
        self.facts = facts
        self.env = env
        self.py = py
        self.outcomes: dict[tuple[str, str | None], Any] = {} if outcomes is None else outcomes

    def keys(self) -> set[tuple[str, str]]:
        return {v.key for v in self.violations}

    def errors_only(self) -> list[Violation]:
        return [v for v in self.violations if v.severity == "error"]


_EVERYTHING: Any = object()  # in a _Watch's notes: the whole dict was read
# in a _Watch's notes: whether the dict is empty was read (``env or {}``): such a rule is
# evaluated again when that changes, not whenever any variable does
_NONEMPTY: Any = object()


def _read(d: dict[Any, Any], key: Any) -> Any:
    """What a note in a _Watch's ``_seen`` stands for, in ``d`` (for comparing two dicts)."""
    if key is _NONEMPTY:
        return dict.__len__(d) > 0
    return dict.get(d, key, _EVERYTHING)


@plain_mapping
class _Watch(dict):  # type: ignore[type-arg]
    """A copy of a dict (the facts' top level, the environment, a component) that notes, while
    ``_seen`` is a set, the keys read from it: by an expression, or by a function it calls
    (a read of the whole dict notes _EVERYTHING). A rule's outcome is then reused while
    what it actually read is unchanged: a rule that reads FLASHINFER_CUDA_ARCH_LIST is not
    evaluated again because CUDA_HOME changed."""

    __slots__ = ("_seen",)

    def __init__(self, d: Any) -> None:
        super().__init__(d)
        self._seen: set[Any] | None = None

    def _all(self) -> None:
        if self._seen is not None:
            self._seen.add(_EVERYTHING)

    def __getitem__(self, key: Any) -> Any:
        if self._seen is not None:
            self._seen.add(key)
        return dict.__getitem__(self, key)

    def get(self, key: Any, default: Any = None) -> Any:
        if self._seen is not None:
            self._seen.add(key)
        return dict.get(self, key, default)

    def __contains__(self, key: Any) -> bool:
        if self._seen is not None:
            self._seen.add(key)
        return dict.__contains__(self, key)

    def __iter__(self) -> Any:
        self._all()
        return dict.__iter__(self)

    def __len__(self) -> int:
        self._all()
        return dict.__len__(self)

    def __bool__(self) -> bool:
        if self._seen is not None:
            self._seen.add(_NONEMPTY)
        return dict.__len__(self) > 0

    def keys(self) -> Any:
        self._all()
        return dict.keys(self)

    def values(self) -> Any:
        self._all()
        return dict.values(self)

    def items(self) -> Any:
        self._all()
        return dict.items(self)

    def copy(self) -> dict[Any, Any]:
        self._all()
        return dict(dict.items(self))

    def __eq__(self, other: object) -> bool:
        self._all()
        return dict.__eq__(self, other)

    def __ne__(self, other: object) -> bool:
        self._all()
        return dict.__ne__(self, other)

    def __repr__(self) -> str:
        self._all()
        return dict.__repr__(self)

    __str__ = __repr__
    __hash__ = None  # type: ignore[assignment]


def base_context(kb: Knowledge, facts: dict[str, Any], *, watch: bool = False) -> dict[str, Any]:
    """The context of a workload-scope rule. ``watch``: the facts and environment as _Watch
    copies (evaluate() notes what each rule reads of them)."""
    env = workload_env(facts)
    py = workload_python(facts)
    gpus = facts.get("gpus") or []
    workload = facts.get("workload") or {}
    if watch:
        env, facts = _Watch(env), _Watch(facts)
    ctx: dict[str, Any] = dict(kb.functions.statics())
    ctx.update(kb.functions.bind(facts, env))
    ctx.update(
        env=env,
        py=py,
        pkgs=(py or {}).get("packages") or {},
        gpu=gpus[0] if gpus else None,
        gpus=gpus,
        facts=facts,
        workload=workload,
    )
    return ctx


def consumer_context(
    kb: Knowledge, base: dict[str, Any], cid: str, picks: dict[str, Any]
) -> dict[str, Any]:
    comp = kb.components[cid]
    if cid not in picks:
        picks[cid] = pick_toolkit(base["facts"], comp.toolkit_lookup, base["env"])
    pick = picks[cid]
    ctx = dict(base)
    ctx.update(c=kb.functions.components[cid], tk=pick.tk, tk_path=pick.path, how=pick.how)
    return ctx


def _check(rule: CompiledRule, ctx: dict[str, Any], errors: list[str]) -> bool | None:
    """True if violated, False if it holds or does not apply, None if it could not be evaluated."""
    try:
        if not truthy(call(rule.when, ctx)):
            return False
        return not truthy(call(rule.holds, ctx))
    except Exception as exc:  # a rule that cannot be evaluated is reported, never fatal
        errors.append(f"rule {rule.rule.id}: {type(exc).__name__}: {exc}")
        return None


# ctx names that never change with the facts (a consumer's component; the static functions)
_CONSTANT = frozenset({"c"})


def _rule_names(kb: Knowledge) -> dict[str, frozenset[str]]:
    """Per rule, the context names its when/holds/subject expressions read (cached on kb)."""
    hit = _RULE_NAMES.get(id(kb))
    names = hit[1] if hit is not None and hit[0] is kb else None
    if names is None:
        names = {}
        for rid, cr in kb.rules.items():
            used: set[str] = set()
            for expr in (cr.when, cr.holds, cr.subject):
                got = getattr(expr, "remedy_names", None)
                used |= got if got is not None else {"*"}  # unknown: reads everything
            names[rid] = frozenset(used)
        if len(_RULE_NAMES) > 8:
            _RULE_NAMES.clear()
        _RULE_NAMES[id(kb)] = (kb, names)
    return names


_RULE_NAMES: dict[int, tuple[Knowledge, dict[str, frozenset[str]]]] = {}


_PICK_NAMES = frozenset({"tk", "tk_path", "how"})  # what consumer_context adds per consumer
# names whose reads are noted as they happen (_Watch), not compared as a whole
_WATCHED = frozenset({"env", "facts", "c"})


class _Unchanged:
    """What changed from the previous evaluation's state to this one, worked out once per
    evaluation so that each rule's test is a set intersection.

    Sound only for states that share unchanged parts by identity and are never changed in
    place (the planner's copy-on-write states): a part that is the same object is unchanged."""

    def __init__(
        self, kb: Knowledge, prev: Evaluation, facts: dict[str, Any], base: dict[str, Any]
    ) -> None:
        old = prev.facts or {}
        changed = {k for k in set(old) | set(facts) if old.get(k) is not facts.get(k)}
        old_env: dict[str, Any] = dict(dict.items(prev.env or {}))
        new_env: dict[str, Any] = dict(dict.items(base["env"]))
        env_changed = {k for k in set(old_env) | set(new_env) if old_env.get(k) != new_env.get(k)}
        # the top-level facts / environment variables whose value changed; _EVERYTHING in
        # it when any did (for a rule that read the whole of them)
        self.facts_changed = changed | ({_EVERYTHING} if changed else set())
        self.env_changed = env_changed | ({_EVERYTHING} if env_changed else set())
        if bool(old) != bool(facts):
            self.facts_changed.add(_NONEMPTY)
        if bool(old_env) != bool(new_env):
            self.env_changed.add(_NONEMPTY)
        py_old, py_new = prev.py, base["py"]
        same = {
            "py": py_old is py_new or py_old == py_new,
            "gpu": "gpus" not in changed,
            "workload": "workload" not in changed,
        }
        same["pkgs"], same["gpus"] = same["py"], same["gpu"]
        nothing = not changed and not env_changed
        # context names (other than the watched and the per-consumer ones) whose value changed
        self.names_changed = {n for n in _rule_info(kb).base_names if not same.get(n, nothing)}
        self.prev = prev
        self.nothing = nothing
        self._picks: dict[str, bool] = {}

    def pick_same(self, cid: str, picks: dict[str, Any]) -> bool:
        """The consumer picks the same toolkit, path and way as before."""
        got = self._picks.get(cid)
        if got is None:
            a, b = self.prev.picks.get(cid), picks.get(cid)
            got = self._picks[cid] = (
                a is not None
                and b is not None
                and a.tk is b.tk
                and (a.path, a.how) == (b.path, b.how)
            )
        return got


class _RuleInfo:
    """Per rule, the context names to compare between evaluations: ``base`` those of the base
    context that are neither constant nor watched; ``pick`` whether it reads a consumer's
    toolkit pick. ``base_names``: the union of ``base`` over the rules."""

    def __init__(
        self, base: dict[str, frozenset[str]], pick: dict[str, bool], base_names: frozenset[str]
    ) -> None:
        self.base = base
        self.pick = pick
        self.base_names = base_names


def _rule_info(kb: Knowledge) -> _RuleInfo:
    hit = _RULE_INFO.get(id(kb))
    if hit is not None and hit[0] is kb:
        return hit[1]
    names = _rule_names(kb)
    fixed = _CONSTANT | _PICK_NAMES | _WATCHED | set(kb.functions.statics())
    fixed |= kb.functions.bound_names()  # what they read of the facts is watched
    base = {rid: frozenset(ns - fixed) for rid, ns in names.items()}
    info = _RuleInfo(
        base=base,
        pick={rid: not ns.isdisjoint(_PICK_NAMES) for rid, ns in names.items()},
        base_names=frozenset().union(*base.values()),
    )
    if len(_RULE_INFO) > 8:
        _RULE_INFO.clear()
    _RULE_INFO[id(kb)] = (kb, info)
    return info


_RULE_INFO: dict[int, tuple[Knowledge, _RuleInfo]] = {}
_INTERNED: dict[frozenset[Any], frozenset[Any]] = {}
_NOTHING: frozenset[Any] = frozenset()


def _intern(keys: set[Any]) -> frozenset[Any]:
    """One frozenset object per distinct set of keys read (outcomes of thousands of states
    share a handful of them)."""
    if not keys:
        return _NOTHING
    fs = frozenset(keys)
    got = _INTERNED.get(fs)
    if got is None:
        if len(_INTERNED) > 4096:
            _INTERNED.clear()
        got = _INTERNED[fs] = fs
    return got


_Outcome = tuple[bool | None, str, frozenset[Any], frozenset[Any]]


def evaluate(
    kb: Knowledge,
    facts: dict[str, Any],
    rule_ids: set[str] | None = None,
    *,
    prev: Evaluation | None = None,
) -> Evaluation:
    """Every rule over ``facts``. With ``prev`` (an evaluation of a state ``facts`` was derived
    from by copy on write), a rule whose inputs are unchanged keeps its previous outcome: only
    the rules a move touched are evaluated again (the planner judges thousands of moves).
    Its inputs: the context names it reads, and of the facts, the environment and the
    consumer's component, the keys it (or a function it calls) actually read."""
    base = base_context(kb, facts, watch=True)
    fw: _Watch = base["facts"]
    ew: _Watch = base["env"]
    wl_consumers = list((facts.get("workload") or {}).get("consumers") or [])
    errors: list[str] = []
    picks: dict[str, Any] = {}
    found: dict[tuple[str, str], Violation] = {}
    outcomes: dict[tuple[str, str | None], _Outcome] = {}
    unchanged = _Unchanged(kb, prev, facts, base) if prev is not None else None
    info = _rule_info(kb)
    prev_outcomes = unchanged.prev.outcomes if unchanged is not None else {}
    # per consumer, its context (the same for every rule, its component a _Watch); per rule
    # and consumer pick, what _check said and which keys of the component it read: another
    # consumer with the same pick and the same values there has the same outcome
    cctx: dict[str, dict[str, Any]] = {}
    memo: dict[Any, list[tuple[tuple[Any, ...], tuple[Any, ...], Any, list[str], Any, Any]]] = {}
    for rid, rule in kb.rules.items():
        if rule_ids is not None and rid not in rule_ids:
            continue
        r = rule.rule
        if r.scope == "consumer":
            contexts = []
            for cid in r.consumers:
                if cid in wl_consumers:
                    if cid not in cctx:
                        ctx = consumer_context(kb, base, cid, picks)
                        ctx["c"] = _Watch(ctx["c"])
                        cctx[cid] = ctx
                    contexts.append((cid, cctx[cid]))
        else:
            contexts = [(None, base)]
        base_same = unchanged is not None and info.base[rid].isdisjoint(unchanged.names_changed)
        reads_pick = info.pick[rid]
        for cid, ctx in contexts:
            known = None
            if base_same:
                was = prev_outcomes.get((rid, cid))
                if (
                    was is not None
                    and (
                        not reads_pick
                        or (
                            unchanged.pick_same(cid, picks)  # type: ignore[union-attr]
                            if cid is not None
                            else unchanged.nothing  # type: ignore[union-attr]
                        )
                    )
                    and was[2].isdisjoint(unchanged.facts_changed)  # type: ignore[union-attr]
                    and was[3].isdisjoint(unchanged.env_changed)  # type: ignore[union-attr]
                ):
                    known = was
            if known is not None:
                status, subject = known[0], known[1]
                if status is None:
                    errors.append(subject)
                outcomes[(rid, cid)] = known
            else:
                cw: _Watch | None = ctx.get("c") if cid is not None else None
                fw._seen, ew._seen = fs, es = set(), set()
                hit = None
                mk = None
                if cw is not None:
                    pk = picks[cid]
                    mk = (rid, id(pk.tk), pk.path, pk.how)
                    for ckeys, cvals, *rest in memo.get(mk, ()):
                        if all(_read(cw, k) == v for k, v in zip(ckeys, cvals, strict=True)):
                            hit = rest
                            break
                if hit is not None:
                    status, errs, hf, he = hit
                    fs |= hf
                    es |= he
                    errs = list(errs)
                else:
                    cs: set[Any] = set()
                    if cw is not None:
                        cw._seen = cs
                    errs = []
                    try:
                        status = _check(rule, ctx, errs)
                    finally:
                        if cw is not None:
                            cw._seen = None
                    if mk is not None and _EVERYTHING not in cs:
                        ckeys = tuple(cs)
                        cvals = tuple(_read(cw, k) for k in ckeys)  # type: ignore[arg-type]
                        memo.setdefault(mk, []).append(
                            (ckeys, cvals, status, list(errs), set(fs), set(es))
                        )
                subject = errs[0] if errs else ""
                if status:
                    try:
                        said = str(plain(call(rule.subject, ctx)) or "")
                    except Exception as exc:  # reported like a failed `when`, finding kept
                        errs.append(f"rule {rid} subject: {type(exc).__name__}: {exc}")
                        said = ""
                    subject = said or cid or rid
                fw._seen = ew._seen = None
                errors.extend(errs)
                outcomes[(rid, cid)] = (status, subject, _intern(fs), _intern(es))
            if not status:
                continue
            key = (rid, subject)
            if key in found:
                if cid and cid not in found[key].consumers:
                    found[key].consumers.append(cid)
                continue
            found[key] = Violation(
                rule=rid,
                subject=subject,
                consumers=[cid] if cid else [],
                ctx=ctx,
                hard=r.hard,
                severity=r.severity,
            )
    return Evaluation(
        violations=list(found.values()),
        errors=errors,
        picks=picks,
        facts=facts,
        env=ew,
        py=base["py"],
        outcomes=outcomes,
    )


def _is_refusal(exc: Exception) -> bool:
    """A Jinja2 sandbox refusal (jinja2.exceptions.SecurityError); without Jinja2 loaded
    (remedy.knowledge.expr renders plain templates without it) nothing can be one."""
    jinja = sys.modules.get("jinja2.exceptions")
    return jinja is not None and isinstance(exc, jinja.SecurityError)


def _refused(template: Any, exc: SecurityError) -> KnowledgeError:
    """A template that reached for Python internals is hostile, not merely wrong: stop."""
    src = getattr(template, "remedy_source", None) or "a knowledge template"
    return KnowledgeError(f"{src}: refused by the template sandbox: {exc}")


def render_raw(template: Any, ctx: dict[str, Any]) -> str:
    """Rendered as is (commands keep their newlines); errors become a visible message, except
    a sandbox refusal, which is a KnowledgeError."""
    try:
        return template.render(**ctx).strip()
    except Exception as exc:
        if _is_refusal(exc):
            raise _refused(template, exc) from None
        return f"(could not render: {type(exc).__name__}: {exc})"


def render(template: Any, ctx: dict[str, Any]) -> str:
    try:
        return " ".join(template.render(**ctx).split())
    except Exception as exc:
        if _is_refusal(exc):
            raise _refused(template, exc) from None
        return f"(could not render: {type(exc).__name__}: {exc})"
