"""A short run of bench/soak.py's loop on a real seed-chain-a sandbox host: random kill -9 /
dropped SSH connections (fixed seed) must leave the host fully applied or byte-identical to
before, the lock free and no run interrupted; and the invariant checker itself must see a
host that breaks it (a crash left unrecovered, one changed byte).

The long soak is `bench/soak.py --runs N --minutes M --frozen --json`; the default run keeps
two iterations (REMEDY_SOAK_RUNS=N for more). The plan keeps no
final verification (consumers=set()), so a run is the three steps and their proofs.
Host sk<pid>s, torn down by the fixture (and atexit).
"""

from __future__ import annotations

import importlib.util
import os
import random
import signal
import sys
from pathlib import Path

import pytest
from sandbox_hosts import CU13, SandboxUnavailable, doctor, down, up

pytestmark = pytest.mark.sandbox

SOAK = Path(__file__).resolve().parents[1] / "bench" / "soak.py"
SEED = 7
ITERATIONS = int(os.environ.get("REMEDY_SOAK_RUNS", "2"))


def load_soak():
    spec = importlib.util.spec_from_file_location("remedy_bench_soak", SOAK)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod  # dataclasses look their module up
    spec.loader.exec_module(mod)
    return mod


@pytest.fixture(scope="module")
def soak(tmp_path_factory):
    try:
        doctor()
    except SandboxUnavailable as exc:
        pytest.skip(str(exc))
    mod = load_soak()
    name = f"sk{os.getpid() % 100000}s"
    box = {}
    try:
        box["host"], box["ref"] = mod.reference(name, tmp_path_factory.mktemp("soak"), set())
        yield mod, box
    finally:
        down(name)


def fresh(mod, box):
    """The host back at the broken baseline (recreated), with the digest cache."""
    down(box["host"])
    box["host"] = up("seed-chain-a", box["host"].name)
    mod.push_cache(box["host"], box["ref"].cache)
    return box["host"]


def test_random_faults_keep_the_invariant(soak):
    mod, box = soak
    rng = random.Random(SEED)
    results = []
    for i in range(ITERATIONS):
        h = fresh(mod, box)
        res = mod.one_run(h, box["ref"], rng, i)
        print(mod.describe(res))
        results.append(res)
    assert [r.problems for r in results] == [[]] * ITERATIONS
    assert all(r.state in ("before", "fixed") for r in results)
    assert any(f.hit for r in results for f in r.faults), "no fault hit a running remedy"


def test_the_invariant_checker_sees_a_broken_host(soak):
    """A crash that nobody recovers, then one changed byte: both are violations; the
    rolled-back host in between is not."""
    mod, box = soak
    h, ref = fresh(mod, box), box["ref"]
    r = h.remedy(
        "run",
        h.name,
        "--plan",
        str(ref.plan),
        "--yes",
        "--json",
        "--verify",
        "cheap",
        crash="applied:0",
    )
    assert r.returncode == -signal.SIGKILL, r.stderr[-1000:]
    state, problems = mod.check(h, ref)
    text = "\n".join(problems)
    assert state == "other", problems
    assert "runs left interrupted" in text and "lock still held" in text
    assert "neither fully applied nor byte-identical" in text
    r = h.remedy("resume", h.name, "--rollback", "--json")
    assert r.returncode == 0, r.stderr[-1000:]
    assert mod.check(h, ref) == ("before", [])
    rc, out = h.ssh(f"printf x >> {CU13}/bin/nvcc.profile")
    assert rc == 0, out
    state, problems = mod.check(h, ref)
    assert state == "other" and "nvcc.profile" in problems[0], problems
