"""Rules from field reports (compiler, driver, libraries, arch, Python packages, JIT, CUDA graphs;
knowledge/rules-<topic>.yaml) found on facts are planned with their actions (and simulated as
fixed)."""

from __future__ import annotations

from remedy.model import Facts
from remedy.planner.plan import make_plan

from conftest import base_facts, patched


def plan_for(kb, base, patch):
    return make_plan(kb, Facts.model_validate(patched(base_facts(base), patch)))


def actions(plan):
    return [s.action for s in plan.steps]


def test_flashinfer_cubin_skew_is_aligned_with_no_deps(kb):
    p = plan_for(kb, "h200", {"pythons.0.packages.flashinfer-cubin": "0.6.8.post1"})
    assert actions(p) == ["pip-align-flashinfer-packages"]
    assert "flashinfer-cubin==0.6.11.post1" in p.steps[0].commands[0]
    assert p.status == "ok"
    assert "env-disable-flashinfer-version-check" in {r.action for r in p.rejected}


def test_small_host_gets_max_jobs_advice_not_a_step(kb):
    """Parallelism vs memory is a risk (a warning): advice, not a fix, until a build is
    seen OOM-killed (log-only diagnosis then ranks it, see the corpus)."""
    p = plan_for(kb, "h200", {"memory_mib": 65536, "cpus": 16})
    assert actions(p) == []
    assert [a.rule for a in p.advice] == ["jit-parallelism-fits-memory"]


def test_cuda12_kernel_wheel_in_a_cu13_venv_gets_the_cuda12_runtime(kb):
    p = plan_for(kb, "h200", {"pythons.0.packages.sgl-kernel": "0.3.21+cu128"})
    assert actions(p) == ["pip-install-cuda-runtime-major"]
    assert "nvidia-cuda-nvrtc-cu12" in p.steps[0].commands[0]


def test_kernel_package_pinning_another_torch(kb):
    reqs = [{"by": "vllm 0.9.2", "package": "torch", "spec": "==2.7.0"}]
    p = plan_for(kb, "h200", {"pythons.0.requirements": reqs, "pythons.0.packages.vllm": "0.9.2"})
    assert actions(p) == ["pip-install-pinned-torch"]
    assert "torch==2.7.0" in p.steps[0].commands[0]


def test_old_driver_gets_an_older_ptxas_for_triton_before_a_driver_upgrade(kb):
    """Driver 535 (CUDA 12.2) with Triton's bundled 12.9 ptxas is fine (same major), but a
    CUDA 13 ptxas-blackwell on a Blackwell GPU is not: point Triton at the host's 12.8 ptxas
    rather than touch the driver."""
    p = plan_for(
        kb,
        "system",
        {
            "gpus.0.driver": "570.124.06",
            "gpus.1.driver": "570.124.06",
            "pythons.0.torch_cuda": "12.8",
            "pythons.0.requirements": [],
        },
    )
    assert "env-triton-ptxas-blackwell-path-for-driver" in actions(p)
    assert "upgrade-driver" not in actions(p)
    step = next(s for s in p.steps if s.action == "env-triton-ptxas-blackwell-path-for-driver")
    assert step.params == {"ptxas": "/usr/local/cuda-12.8/bin/ptxas"}


def test_host_gcc_too_new_gets_nvcc_ccbin(kb):
    p = plan_for(kb, "h200", {"host_compilers": {"gcc": "16.1.1", "gcc-14": "14.2.0"}})
    assert actions(p) == ["env-nvcc-ccbin"]
    assert p.steps[0].params == {"ccbin": "/usr/bin/gcc-14"}
    assert "nvcc-allow-unsupported-compiler" in {r.action for r in p.rejected}


def test_compat_libcuda_older_than_the_driver_is_reported_never_installed(kb):
    """Error 803's cause (tune-n): the image's cuda-compat libcuda loaded on a host whose driver
    is newer. Its only repair is a manual report, so the plan has no step (no toolkit, torch or
    driver install) and leaves the rule unresolved with the finding naming the compat path."""
    notes = [
        "observed: libcuda_version=580.82.07",
        "observed: libcuda_path=/usr/local/cuda-13.0/compat/libcuda.so.580.82.07",
    ]
    p = plan_for(kb, "h200", {"gpus.0.driver": "580.105.08", "notes": notes})
    assert actions(p) == []
    assert [f.rule for f in p.findings] == ["compat-libcuda-only-where-supported"]
    assert "/usr/local/cuda-13.0/compat/" in p.findings[0].message
    assert p.unresolved == ["compat-libcuda-only-where-supported @ libcuda"]
    # the same compat libcuda on an older driver of a data-center GPU is forward compatibility
    ok = plan_for(kb, "h200", {"gpus.0.driver": "535.183.01", "notes": notes[:1]})
    assert "compat-libcuda-only-where-supported" not in [f.rule for f in ok.findings]
