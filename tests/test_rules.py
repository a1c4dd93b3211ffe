"""Every rule on fact fixtures where it holds and where it fails (table: fixtures/rules)."""

from __future__ import annotations

import pytest
import yaml

from remedy.evaluate import evaluate

from conftest import FIXTURES, base_facts, patched

CASES = yaml.safe_load((FIXTURES / "rules" / "cases.yaml").read_text())["cases"]


@pytest.mark.parametrize(
    "case", CASES, ids=[f"{c['rule']}-{c['expect']}-{i}" for i, c in enumerate(CASES)]
)
def test_rule_case(kb, case):
    facts = patched(base_facts(case["base"]), case.get("patch"))
    ev = evaluate(kb, facts, rule_ids={case["rule"]})
    assert not ev.errors, ev.errors
    violated = any(v.rule == case["rule"] for v in ev.violations)
    assert violated == (case["expect"] == "violated"), case


def test_every_rule_has_a_holding_and_a_failing_case(kb):
    have = {(c["rule"], c["expect"]) for c in CASES}
    missing = [
        f"{rid}:{exp}"
        for rid in kb.rules
        for exp in ("holds", "violated")
        if (rid, exp) not in have
    ]
    assert not missing, f"rules without table cases: {missing}"


def test_healthy_h200_has_no_finding(kb):
    ev = evaluate(kb, base_facts("h200"))
    assert ev.violations == [] and ev.errors == []


def test_findings_merge_across_consumers_of_one_toolkit(kb):
    ev = evaluate(kb, base_facts("pip"))
    by_rule = {v.rule: v for v in ev.violations}
    assert set(by_rule) == {
        "ptxas-accepts-cicc-ptx",
        "nvcc-matches-cudart-headers",
        "toolkit-links-cudart",
        "cccl-complete",
    }
    # FlashInfer bundles CCCL: only the consumers that take it from the toolkit are affected.
    assert "flashinfer-jit" not in by_rule["cccl-complete"].consumers
    assert {"sglang-jit-kernel", "torch-cpp-extension"} <= set(by_rule["cccl-complete"].consumers)
    assert "flashinfer-jit" in by_rule["toolkit-links-cudart"].consumers
