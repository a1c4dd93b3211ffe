"""The planner's fast paths give the plans of the slow ones on varied generated hosts
(bench/gen_facts_varied.py: system trees, pip wheel venvs, conda prefixes, stale services,
with a failing link log): the indexed ``nvcc_owner`` lookup against a scan of every toolkit,
the memo of ``providers`` against looking each file up again, by_effect's one-rule
incremental check of a binding against evaluating every rule afresh."""

from __future__ import annotations

import posixpath
import sys
from pathlib import Path
from typing import Any

import pytest

import remedy.knowledge.functions as functions
import remedy.knowledge.providers as providers
import remedy.planner.provider as provider
from remedy.inputs import scan_logs
from remedy.knowledge.loader import load_knowledge
from remedy.model import Facts
from remedy.planner.plan import make_plan
from remedy.resolve import Frozen, norm

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))

from gen_facts_varied import generate  # noqa: E402

LOG = ROOT / "tests" / "fixtures" / "logs" / "lab_f3_link_cudart.log"


class _NoMemo(dict):  # type: ignore[type-arg]
    def get(self, *_: Any) -> Any:
        return None


def _plan_json(shape: str, n: int) -> str:
    symptoms, _, wrappers = scan_logs([LOG])
    plan = make_plan(
        load_knowledge(), Facts.model_validate(generate(n, shape)), symptoms, wrappers=wrappers
    )
    return plan.model_dump_json(exclude={"knowledge_version", "plan_digest"})


@pytest.mark.parametrize("shape", ["system", "conda", "pipvenv"])
def test_fast_paths_give_the_slow_paths_plan(shape: str, monkeypatch: pytest.MonkeyPatch) -> None:
    real_eval = provider.evaluate
    targeted = {"fast": 0, "slow": 0}

    def counted(kb: Any, facts: Any, rule_ids: Any = None, *, prev: Any = None) -> Any:
        if rule_ids is not None:
            targeted["fast"] += 1
        return real_eval(kb, facts, rule_ids, prev=prev)

    monkeypatch.setattr(provider, "evaluate", counted)
    fast = _plan_json(shape, 16)
    assert targeted["fast"] > 0  # by_effect's one-rule check ran

    def full(kb: Any, facts: Any, rule_ids: Any = None, *, prev: Any = None) -> Any:
        if rule_ids is not None:
            targeted["slow"] += 1
        return real_eval(kb, facts)  # every rule, from scratch

    monkeypatch.setattr(provider, "evaluate", full)
    monkeypatch.setattr(functions, "_odd_roots", lambda tk: [True])  # nvcc_owner: the scan
    monkeypatch.setattr(providers, "_PROVIDERS", _NoMemo())
    slow = _plan_json(shape, 16)
    assert targeted["slow"] > 0
    assert slow == fast
    assert '"steps"' in fast


def _scan_owner(toolkits: list[dict[str, Any]], path: str) -> Any:
    p = norm(path)
    for tk in toolkits:
        for root in [tk["prefix"], *tk.get("aliases", ())]:
            if norm(posixpath.join(root, "bin", "nvcc")) == p:
                return tk
    return None


@pytest.mark.parametrize("frozen", [False, True])
def test_nvcc_owner_matches_a_scan(frozen: bool) -> None:
    facts = generate(40, "mixed")
    tks = facts["toolkits"]
    tks[3]["aliases"] = ["/usr/local/cuda", "/opt/cuda/"]  # an alias, a trailing slash
    tks.append(dict(tks[5], note="a second toolkit at the same prefix: the first wins"))
    odd = dict(tks[7], prefix="/srv/odd /", aliases=[])  # normalizes to a blank-ended root
    if frozen:
        facts["toolkits"] = Frozen(tks)
    kb = load_knowledge()
    paths = [posixpath.join(tk["prefix"], "bin", "nvcc") for tk in tks]
    paths += ["/usr/local/cuda/bin/nvcc", "/opt/cuda/bin/nvcc", "/opt//cuda/./bin/nvcc"]
    paths += ["/srv/odd /bin/nvcc", "/srv/odd/bin/nvcc", "bin/nvcc", "/bin/nvcc", "/nowhere/nvcc"]
    owner = kb.functions.bind(facts, {})["nvcc_owner"]
    for p in paths:
        assert owner(p) is _scan_owner(facts["toolkits"], p), p
    # a host with an odd root: the scan decides (the index would key it as "/srv/odd")
    facts2 = {**facts, "toolkits": [*facts["toolkits"], odd]}
    owner2 = kb.functions.bind(facts2, {})["nvcc_owner"]
    for p in paths:
        assert owner2(p) is _scan_owner(facts2["toolkits"], p), p
    assert owner2("/srv/odd /bin/nvcc") is odd
