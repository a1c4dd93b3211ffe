"""The planner on the built-in examples and on small variations of them."""

from __future__ import annotations

from remedy.model import Facts
from remedy.planner.plan import facts_diff, make_plan
from remedy.planner.search import Reporter, Verdict, search

from conftest import base_facts, patched


def plan_for(kb, base, patch=None):
    return make_plan(kb, Facts.model_validate(patched(base_facts(base), patch)))


def test_seed_chain_a_all_four_links_in_one_plan(kb):
    p = plan_for(kb, "pip")
    assert p.status == "ok"
    assert {f.rule for f in p.findings} == {
        "ptxas-accepts-cicc-ptx",
        "nvcc-matches-cudart-headers",
        "toolkit-links-cudart",
        "cccl-complete",
    }
    fixed = [r for s in p.steps for r in s.fixes]
    assert sorted(fixed) == sorted(f.rule for f in p.findings)
    assert all(s.probe for s in p.steps)
    order = [s.action for s in p.steps]
    # the link probe compiles first, so the wheels are aligned before the layout is fixed
    assert order.index("pip-align-cuda-wheels") < order.index("link-layout-symlinks")
    align = p.steps[order.index("pip-align-cuda-wheels")]
    assert align.params["release"] == "13.0", "torch pins the 13.0 runtime: align on it"
    assert "nvidia-nvvm==13.0.88" in align.commands[0]
    assert p.cost["driver"] == 0 and p.cost["pins"] == 0


def test_seed_chain_a_rejects_the_pin_breaking_and_masking_fixes(kb):
    p = plan_for(kb, "pip")
    rej = {(r.action, r.params.get("release")): r for r in p.rejected}
    assert ("pip-align-cuda-wheels", "13.2") in rej
    assert rej[("pip-align-cuda-wheels", "13.2")].breaks == ["torch"]
    assert any(r.action == "disable-cccl-ctk-check" and "masks" in r.reason for r in p.rejected)


def test_seed_chain_a_without_torch_pin_may_upgrade_the_runtime(kb):
    p = plan_for(kb, "pip", {"pythons.0.requirements": []})
    align = next(s for s in p.steps if s.action == "pip-align-cuda-wheels")
    assert align.params["release"] in ("13.0", "13.2", "13.3")
    assert not any(r.breaks == ["torch"] for r in p.rejected)


def test_seed_chain_b_fixes_selection_with_a_dropin_and_rejects_dev_null(kb):
    p = plan_for(kb, "system")
    assert p.status == "ok"
    actions = [s.action for s in p.steps]
    assert actions[-1] == "service-env-cuda-home"
    assert p.steps[-1].params["prefix"] == "/usr/local/cuda-13.0"
    assert any(
        t.kind == "dropin" and t.target.endswith("sglang-k26.service.d/50-remedy-cuda-home.conf")
        for t in p.steps[-1].touches
    )
    assert "apt-install-cuda-toolkit" in actions
    devnull = [r for r in p.rejected if r.params.get("prefix") == "/dev/null"]
    assert devnull, "CUDA_HOME=/dev/null must be listed among the rejected alternatives"
    assert set(devnull[0].breaks) >= {"sglang-jit-kernel", "torch-cpp-extension", "flashinfer-jit"}


def test_seed_chain_b_without_apt_installs_wheels_and_fixes_their_layout(kb):
    p = plan_for(kb, "system", {"apt_candidates": []})
    actions = [s.action for s in p.steps]
    assert actions[:2] == ["pip-install-cuda-toolchain", "service-env-cuda-home"]
    assert "link-layout-symlinks" in actions
    # the release's wheels include nvidia-cuda-cccl: no second step installs it again
    assert "pip-install-cccl" not in actions
    assert p.steps[0].params["release"] == "13.0"
    assert p.status == "ok"


def test_healthy_host_has_nothing_to_do(kb):
    p = plan_for(kb, "h200")
    assert p.status == "nothing-to-do" and p.steps == [] and p.findings == []


def test_driver_upgrade_is_the_last_resort_and_flagged(kb):
    p = plan_for(kb, "h200", {"gpus.0.driver": "570.124.06"})
    assert [s.action for s in p.steps] == ["upgrade-driver"]
    assert p.cost["driver"] == 1
    assert p.steps[0].risk == "high"


def test_arch_list_fix_on_h200(kb):
    p = plan_for(kb, "h200", {"shell_env.FLASHINFER_CUDA_ARCH_LIST": "8.0"})
    assert [s.action for s in p.steps] == ["env-unset-flashinfer-arch-list"]


def test_plan_json_contract(kb):
    data = plan_for(kb, "system").model_dump(mode="json")
    for f in data["findings"]:
        assert {"rule", "message"} <= set(f)
    for s in data["steps"]:
        assert {"action", "params", "probe"} <= set(s)
    for r in data["rejected"]:
        assert {"action", "params", "reason", "breaks"} <= set(r)


def test_plan_is_bound_to_its_facts(kb):
    a = plan_for(kb, "pip")
    b = plan_for(kb, "pip", {"toolkits.0.cicc_release": "13.2"})
    assert a.facts_digest != b.facts_digest
    diff = facts_diff(a.facts.model_dump(), b.facts.model_dump())
    assert any("cicc_release" in d and "13.3" in d and "13.2" in d for d in diff)


def test_every_step_carries_a_because_chain(kb):
    for base in ("pip", "system"):
        for s in plan_for(kb, base).steps:
            assert s.because and all(b.startswith("Because ") for b in s.because)


# -- the search itself, on a toy domain (it must not know CUDA) ----------------------------


class Counter:
    """Reach a number with +1 (cost 1 step) or *2 (cost 1 step, 1 'risk'); 13 is forbidden."""

    target = 10

    def unmet(self, s):
        return [] if s == self.target else ["off"]

    def candidates(self, s):
        return ["inc", "dbl"]

    def apply(self, s, m):
        return s + 1 if m == "inc" else s * 2

    def judge(self, before, after, m):
        if after == 13:
            return Verdict("reject", "forbidden")
        if after > self.target:
            return Verdict("prune")
        return Verdict.ok()

    def cost(self, s, m):
        return (1, 0) if m == "dbl" else (0, 1)

    def state_key(self, s):
        return s

    def move_key(self, m):
        return m


def test_search_ranks_criteria_in_order():
    res = search(Counter(), 1, criteria=2, max_depth=12)
    assert res.solved
    assert res.moves == ["inc"] * 9  # any doubling costs more on the first criterion


def test_search_reports_rejections_and_partial_results():
    class Stuck(Counter):
        target = 14

        def judge(self, before, after, m):
            if after >= 13:
                return Verdict("reject", "forbidden")
            return Verdict.ok()

    calls = []

    class Rep(Reporter):
        def rejecting(self, depth, move, verdict):
            calls.append(verdict.reason)

    res = search(Stuck(), 12, criteria=2, reporter=Rep())
    assert not res.solved and res.unmet == ["off"]
    assert calls and res.rejections


def test_search_module_knows_no_cuda():
    import inspect

    import remedy.planner.search as s

    src = inspect.getsource(s).lower()
    for word in ("cuda", "nvcc", "flashinfer", "toolkit", "sglang"):
        assert word not in src
