"""The planner on big hosts: a host with a thousand toolkit prefixes and venvs (or services,
or consumers) gets the plan a small one gets, and the machinery that keeps planning linear
(Frozen lists' derived toolkit index and counts, _Watch's notes of what a rule read) agrees
with doing it the slow way."""

from __future__ import annotations

import copy
import json
import random
from typing import Any

import pytest

from remedy.evaluate import _EVERYTHING, _Watch
from remedy.knowledge.loader import load_knowledge
from remedy.planner.plan import make_plan
from remedy.resolve import Frozen, _toolkit_at_scan, item_counts, toolkit_at, toolkit_with_bin

from conftest import grown


def what_it_does(plan: Any) -> dict[str, Any]:
    return {
        "status": plan.status,
        "steps": [
            (s.action, s.params, s.operation.model_dump() if s.operation else None, s.fixes)
            for s in plan.steps
        ],
        "unresolved": plan.unresolved,
        "cost": plan.cost,
    }


@pytest.mark.parametrize(
    ("kind", "n"), [("buildhost", 1000), ("services", 1000), ("consumers", 1000)]
)
def test_big_host_gets_the_small_hosts_plan(kind: str, n: int) -> None:
    kb = load_knowledge()
    small = what_it_does(make_plan(kb, grown(10, kind)))
    big = what_it_does(make_plan(kb, grown(n, kind)))
    assert small["steps"], "the example host needs a plan: nothing would be compared"
    assert big == small


def _tk(prefix: str, nvcc: str | None = "13.0", aliases: list[str] | None = None) -> dict[str, Any]:
    return {"prefix": prefix, "nvcc_release": nvcc, "aliases": aliases or [], "libs": {}}


def test_frozen_index_derived_equals_a_scan() -> None:
    """Replacing and appending toolkits (duplicates, aliases, trailing slashes, nvcc gained or
    lost) on Frozen lists: every lookup through the derived index is what a scan finds."""
    rnd = random.Random(7)
    prefixes = [f"/opt/t{i}" for i in range(12)] + ["/opt/t1/", "/opt/./t2"]
    lst = Frozen([_tk(p) for p in prefixes[:6]])
    for _ in range(300):
        if rnd.random() < 0.2:
            new = _tk(rnd.choice(prefixes), rnd.choice(["13.0", None]))
            lst = Frozen([*lst, new], parent=lst, changed=(len(lst),))
        else:
            i = rnd.randrange(len(lst))
            new = _tk(rnd.choice(prefixes), rnd.choice(["12.8", None]), rnd.sample(prefixes, k=1))
            items = list(lst)
            items[i] = new
            lst = Frozen(items, parent=lst, changed=(i,))
        facts = {"toolkits": lst}
        plain = {"toolkits": list(lst)}
        for p in prefixes:
            assert toolkit_at(facts, p) is _toolkit_at_scan(plain, toolkit_at_norm(p))
            assert toolkit_with_bin(facts, p + "/bin") is toolkit_with_bin(plain, p + "/bin")


def toolkit_at_norm(p: str) -> str:
    from remedy.resolve import norm

    return norm(p)


def test_frozen_refuses_changes_and_copies_plain() -> None:
    lst = Frozen([1, 2])
    for change in (
        lambda: lst.append(3),
        lambda: lst.extend([3]),
        lambda: lst.__setitem__(0, 5),
        lambda: lst.pop(),
        lambda: lst.sort(),
    ):
        with pytest.raises(TypeError):
            change()
    assert type(copy.deepcopy(lst)) is list and copy.deepcopy(lst) == [1, 2]
    assert json.dumps(lst) == "[1, 2]"


def test_item_counts_derived_equals_full() -> None:
    rnd = random.Random(3)

    def majors(tk: dict[str, Any]) -> set[int]:
        return set(tk["m"])

    lst = Frozen([{"m": [rnd.randrange(4)]} for _ in range(5)])
    for _ in range(200):
        i = rnd.randrange(len(lst) + 1)
        new = {"m": rnd.sample(range(5), k=rnd.randrange(3))}
        items = [*lst, new] if i == len(lst) else [*lst[:i], new, *lst[i + 1 :]]
        lst = Frozen(items, parent=lst, changed=(i,))
        assert item_counts(lst, "m", majors) == item_counts(list(lst), "m", majors)


def test_watch_notes_what_is_read() -> None:
    w = _Watch({"A": "1", "B": "2"})
    w._seen = seen = set()
    assert w.get("A") == "1" and w["B"] == "2" and "C" not in w
    assert seen == {"A", "B", "C"}
    for whole in (len, list, dict, json.dumps, lambda x: x == {}, lambda x: {**x}, str):
        w._seen = seen = set()
        whole(w)
        assert _EVERYTHING in seen, whole
    w._seen = None
    assert w == {"A": "1", "B": "2"}


def test_gc_threshold_restored_after_nested_and_threaded_searches() -> None:
    import gc
    import threading

    from remedy.planner.plan import fewer_collections

    before = gc.get_threshold()
    barrier = threading.Barrier(3)

    def plan_in_thread() -> None:
        with fewer_collections():
            barrier.wait()
            assert gc.get_threshold()[0] >= 50_000

    threads = [threading.Thread(target=plan_in_thread) for _ in range(2)]
    for t in threads:
        t.start()
    with fewer_collections(), fewer_collections():
        barrier.wait()
    for t in threads:
        t.join()
    assert gc.get_threshold() == before


def test_diff_key_through_frozen_parents_equals_a_full_compare() -> None:
    """Keys of states made through Frozen lists (positions known) are the keys of the same
    states made of plain lists (every position compared)."""
    from remedy.planner.provider import diff_key

    rnd = random.Random(5)
    root = {"toolkits": Frozen([_tk(f"/opt/t{i}") for i in range(30)])}
    plain_root = {"toolkits": list(root["toolkits"])}
    lst = root["toolkits"]
    for _ in range(40):
        i = rnd.randrange(len(lst) + 1)
        new = _tk(f"/opt/t{rnd.randrange(40)}", rnd.choice(["13.0", None]))
        items = [*lst, new] if i == len(lst) else [*lst[:i], new, *lst[i + 1 :]]
        lst = Frozen(items, parent=lst, changed=(i,))
        assert diff_key({"toolkits": lst}, root) == diff_key({"toolkits": list(lst)}, plain_root)


def test_sandbox_key_lookup_shortcut_answers_as_the_sandbox() -> None:
    """Sandbox.getattr goes straight to the key on a dict (or a _Watch) for a name that is no
    attribute of its type: the same value, undefined or refusal as the full lookup."""
    from jinja2 import Undefined
    from jinja2.exceptions import SecurityError
    from jinja2.sandbox import ImmutableSandboxedEnvironment

    from remedy.knowledge.expr import ENV

    def full(obj: Any, name: str) -> Any:
        return ImmutableSandboxedEnvironment.getattr(ENV, obj, name)

    for obj in ({"a": 1, "items": 2, "get": 3}, _Watch({"a": 1, "items": 2})):
        for name in ("a", "items", "get", "missing", "_seen", "__class__", "keys", "update"):
            try:
                want: Any = full(obj, name)
            except SecurityError:
                with pytest.raises(SecurityError):
                    ENV.getattr(obj, name)
                continue
            got = ENV.getattr(obj, name)
            if isinstance(want, Undefined):
                assert isinstance(got, Undefined), name
            else:
                assert got == want, name
