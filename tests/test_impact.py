"""remedy impact: blast radius of environment changes, with and without host facts."""

from __future__ import annotations

import pytest

from remedy.errors import InputError
from remedy.impact import analyse, classify, parse_assignment
from remedy.model import Facts

from conftest import base_facts


def test_cuda_home_dev_null_lists_every_consumer_with_its_failure(kb):
    rep = analyse(kb, {"CUDA_HOME": "/dev/null"})
    graph_consumers = {e.component for e in kb.variables["CUDA_HOME"].consumers}
    assert {c.component for c in rep.consumers} == graph_consumers
    by = {c.component: c for c in rep.consumers}
    assert by["flashinfer-jit"].breaks and "NotADirectoryError" in by["flashinfer-jit"].error
    assert "/dev/null/bin/nvcc: not found" in by["sglang-jit-kernel"].error
    assert "/dev/null/include: Not a directory" in by["torch-cpp-extension"].error
    for c in rep.consumers:
        assert c.source and c.how and c.value_class == "not_a_directory"
    assert {"sglang-jit-kernel", "flashinfer-jit", "torch-cpp-extension"} <= set(rep.breaks)
    assert "triton" in {u.component for u in rep.unaffected}
    assert "cuda-graph-capture" in by["flashinfer-jit"].downstream


def test_impact_with_facts_simulates_what_each_consumer_picks(kb):
    facts = Facts.model_validate(base_facts("system"))
    rep = analyse(kb, {"CUDA_HOME": "/dev/null"}, facts)
    assert rep.simulated
    picks = {p.component: p for p in rep.picks}
    assert "cuda-12.8" in picks["flashinfer-jit"].before
    assert picks["flashinfer-jit"].after.startswith("/dev/null via CUDA_HOME")
    new = {f.rule for f in rep.new_findings}
    assert "cuda-home-is-toolkit" in new


def test_good_change_fixes_and_breaks_nothing(kb):
    # add the toolkit the plan would install, then point CUDA_HOME at it
    d = base_facts("system")
    d["toolkits"].append(
        {
            **d["toolkits"][0],
            "prefix": "/usr/local/cuda-13.0",
            "aliases": [],
            "nvcc_release": "13.0",
            "ptxas_release": "13.0",
            "cicc_release": "13.0",
            "cudart_version": 13000,
        }
    )
    rep = analyse(kb, {"CUDA_HOME": "/usr/local/cuda-13.0"}, Facts.model_validate(d))
    assert rep.breaks == []
    assert {f.rule for f in rep.fixed_findings} == {
        "flashinfer-sm12x-gate",
        "toolkit-major-matches-torch",
    }


@pytest.mark.parametrize(
    ("kind", "value", "facts", "expect"),
    [
        ("dir", None, None, "unset"),
        ("dir", "", None, "unset"),
        ("dir", "/dev/null", None, "not_a_directory"),
        ("dir", "/usr/local/cuda/bin", None, "directory"),
        ("dir", "/usr/local/cuda-13.0", "h200", "toolkit"),
        ("dir", "/usr/local/cuda-13.0/bin", "h200", "directory"),
        ("dir", "/opt/nothing", "h200", "nonexistent"),
        ("archlist", "9.0 bogus", None, "malformed"),
        ("archlist", "9.0 10.0a", None, "set"),
        ("file", "/bin/false", None, "set"),
        ("file", "/opt/x/bin/nvcc", "h200", "missing"),
    ],
)
def test_value_classes(kind, value, facts, expect):
    assert classify(kind, value, base_facts(facts) if facts else None) == expect


@pytest.mark.parametrize("bad", ["=x", "1A=2", "A B=1", ""])
def test_bad_assignments_are_clear_errors(bad):
    with pytest.raises(InputError):
        parse_assignment(bad)


def test_unknown_variable_is_a_clear_error(kb):
    with pytest.raises(InputError, match="knows no consumer of NOT_A_VAR"):
        analyse(kb, {"NOT_A_VAR": "1"})


def test_assignment_needs_an_equals_sign():
    # issue 19: a bare VAR (or -VAR) used to mean "unset" silently; unset is --unset VAR now
    assert parse_assignment("CUDA_HOME=") == ("CUDA_HOME", "")
    for bare in ("CUDA_HOME", "-FLASHINFER_NVCC"):
        with pytest.raises(InputError, match="no '='") as e:
            parse_assignment(bare)
        assert "--unset" in (e.value.hint or "")
