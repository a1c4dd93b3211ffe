"""Looks-alike pairs: logs whose wording points at one cause while another is the real one.

Each test runs log-only diagnosis (no facts) on real logs (tests/fixtures/corpus, the seed and
lab logs) and checks that remedy either tells the pair apart from the log or names, in
distinguishes_from, the fact that would.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path

from remedy.diagnose import diagnose
from remedy.evidence import scan_lines
from remedy.inputs import scan_logs
from remedy.knowledge.loader import load_knowledge
from remedy.model import Diagnosis

FIX = Path(__file__).resolve().parent / "fixtures"
CORPUS = FIX / "corpus"
LOGS = FIX / "logs"
TEMPLATES = FIX / "templates"

# what a toolchain fix touches: the rules whose repairs change compilers, toolkits, CUDA wheels
TOOLCHAIN = {
    "ptxas-accepts-cicc-ptx",
    "nvcc-matches-cudart-headers",
    "toolkit-links-cudart",
    "cccl-complete",
    "toolkit-found",
    "cuda-home-is-toolkit",
    "arch-supported-by-toolkit",
    "flashinfer-sm12x-gate",
    "toolkit-major-matches-torch",
    "flashinfer-nvcc-override-consistent",
    "path-nvcc-not-distro",
    "toolkit-knows-target-archs",
    "host-compiler-supported",
    "toolkit-has-library-headers",
    "python-headers-present",
}


@cache
def log_only(path: Path) -> Diagnosis:
    symptoms, _, wrappers = scan_logs([path])
    return diagnose(load_knowledge(), None, symptoms, wrappers=wrappers)


def ranked(path: Path) -> list[str]:
    return [h.rule for h in log_only(path).hypotheses]


def hyp(path: Path, rule: str):
    return next(h for h in log_only(path).hypotheses if h.rule == rule)


# --- one sgl_kernel loader message, three causes ---------------------------------------------


def test_sgl_kernel_missing_sm121_directory_is_a_torch_abi_mismatch():
    """sgl-project/sglang#29317 reads like a missing SM121 wheel ('No sm121/ directory',
    'Expected variant: SM121'); #30562 shows the wheel has sm_121a and the cause is libtorch's
    ABI. The arch hypothesis stays listed, below, with the fact that separates them."""
    p = CORPUS / "extensions-match-torch-abi" / "5.log"
    r = ranked(p)
    assert r[0] == "extensions-match-torch-abi"
    assert "wheel-has-gpu-arch" in r[1:]
    top = hyp(p, "extensions-match-torch-abi")
    assert "arch_list" in top.distinguishes_from["wheel-has-gpu-arch"]  # torch.cuda.get_arch_list()


def test_same_loader_wrapper_different_inner_errors():
    """The same '[sgl_kernel] CRITICAL: Could not load any common_ops library!' wraps an ABI
    mismatch (sglang#13948, GPU SM86 but an sm100/ path) and a CUDA 12 library missing in a
    cu13 venv (sglang#29646): the inner line decides."""
    assert (
        ranked(CORPUS / "extensions-match-torch-abi" / "1.log")[0] == "extensions-match-torch-abi"
    )
    assert ranked(CORPUS / "runtime-libs-match-cuda-major" / "1.log")[0] == (
        "runtime-libs-match-cuda-major"
    )
    # the wrapper alone names nothing
    res = scan_lines(["ImportError: [sgl_kernel] CRITICAL: Could not load any common_ops library!"])
    d = diagnose(load_knowledge(), None, res.symptoms, wrappers={"sgl-kernel-load-failed"})
    assert d.hypotheses == []


# --- ptxas errors on a new architecture: three causes, only one is the toolkit ----------------


def test_ptxas_errors_on_new_arch_are_told_apart():
    """'Value sm_121a is not defined' = ptxas too old (triton#8539: another ptxas fixes it);
    'not supported on .target sm_120' = the arch needs its a/f target (flashinfer#1966);
    'requires .target sm_75 or higher' = the kernel needs an arch the GPU lacks
    (3DGSTensorCore#2): no toolchain change helps."""
    assert ranked(CORPUS / "triton-ptxas-knows-arch" / "1.log")[0] == "triton-ptxas-knows-arch"
    assert ranked(CORPUS / "arch-specific-target" / "1.log")[0] == "arch-specific-target"
    r = ranked(CORPUS / "kernel-arch-feature" / "2.log")
    assert r == ["kernel-arch-feature"]
    assert not set(r) & TOOLCHAIN


def test_driver_jit_ptx_skew_is_not_a_toolkit_ptxas_skew():
    """Both print 'Unsupported .version X; current version is Y'. From the toolkit's ptxas
    (lab F1: cicc newer than ptxas) the fix is aligning wheels; from the driver's JIT ('ptxas
    application ptx input', CUDA_ERROR_UNSUPPORTED_PTX_VERSION, ingowald/pynari#6) it is the
    driver against the CUDA the binary's PTX came from (session 32: pynari's prebuilt backend,
    not Triton, so driver-supports-build-cuda)."""
    assert ranked(LOGS / "lab_f1_ptx_isa_skew.log")[0] == "ptxas-accepts-cicc-ptx"
    r = ranked(CORPUS / "driver-supports-build-cuda" / "ptx-1.log")
    assert r[0] == "driver-supports-build-cuda"
    assert "ptxas-accepts-cicc-ptx" not in r
    assert "driver-runs-ptx" not in r


def test_rejected_ptx_is_tritons_only_when_triton_says_so():
    """The same CUresult 222 text: Triton's 'Triton Error [CUDA]: ' prefix names Triton's ptxas
    (driver-runs-ptx); a runtime-API binary's own error macro (nvbandwidth, a CUDA sample) and
    Numba's linker name the binary's build CUDA (driver-supports-build-cuda)."""
    t = TEMPLATES / "triton" / "inductor-ptx-unsupported-toolchain.log"
    assert ranked(t)[0] == "driver-runs-ptx"
    assert "driver-supports-build-cuda" not in ranked(t)
    for p in (
        TEMPLATES / "cuda-samples" / "helper-cuda-222.log",
        TEMPLATES / "numba" / "linker-driver-jit-ptx-newer.log",
        CORPUS / "driver-supports-build-cuda" / "gac-2.log",
    ):
        r = ranked(p)
        assert r[0] == "driver-supports-build-cuda", (p, r)
        assert "driver-runs-ptx" not in r, (p, r)


# --- CUDA graph capture: memory vs a JIT build that fails inside capture ----------------------


def test_capture_oom_is_not_a_toolchain_problem():
    """'Capture cuda graph failed: CUDA out of memory' (sglang#5285): the memory rule ranks
    first, far above the toolchain rules the generic capture wrapper also fits."""
    p = CORPUS / "capture-memory-headroom" / "1.log"
    hs = log_only(p).hypotheses
    assert hs[0].rule == "capture-memory-headroom"
    assert all(h.score < hs[0].score / 10 for h in hs[1:])


def test_jit_failure_inside_capture_is_not_a_memory_problem():
    """A JIT build failing inside capture (seed 003: nv/detail missing; sglang#1117: Python.h
    for Triton's launcher) names the toolchain cause, never the capture memory rule."""
    for p, cause in [
        (LOGS / "seed003_capture_nv_detail.log", "cccl-complete"),
        (CORPUS / "python-headers-present" / "1.log", "python-headers-present"),
    ]:
        r = ranked(p)
        assert r[0] == cause, (p, r)
        assert not {
            "capture-memory-headroom",
            "capture-sync-free",
            "capture-collectives",
            "capture-custom-allreduce",
        } & set(r), (p, r)


def test_capture_sync_vs_nccl_capture():
    assert ranked(CORPUS / "capture-sync-free" / "2.log")[0] == "capture-sync-free"
    assert ranked(CORPUS / "capture-collectives" / "1.log")[0] == "capture-collectives"


# --- only facts can tell ----------------------------------------------------------------------


def test_sm12x_gate_names_the_distro_nvcc_it_could_be():
    """'SM 12.x requires CUDA >= 12.9' comes from FlashInfer's gate whatever picked the old
    nvcc: a CUDA_HOME of 12.8, or the distribution's /usr/bin/nvcc found on PATH
    (flashinfer#2577). The log cannot tell; diagnosis says which fact does."""
    p = LOGS / "lab_f5_sm12x_gate.log"
    assert ranked(p)[0] == "flashinfer-sm12x-gate"
    top = hyp(p, "flashinfer-sm12x-gate")
    assert "which -a nvcc" in top.distinguishes_from["path-nvcc-not-distro"]


def test_no_kernel_image_alone_is_ambiguous_and_says_which_fact_decides():
    """'no kernel image is available' alone (causal-conv1d#119): a package or torch wheel
    without the arch, or an arch list preset by an image. Issue 17: the arch-list rules need a
    variable the log never names and torch prints its own capability warning when its wheel
    lacks the arch, so the package ranks first, by evidence rather than by rule id; the others
    stay as hypotheses, each with the fact that decides, and no hypothesis is confident."""
    p = CORPUS / "package-has-gpu-arch" / "4.log"
    hs = log_only(p).hypotheses
    assert {h.rule for h in hs} == {
        "package-has-gpu-arch",
        "wheel-has-gpu-arch",
        "flashinfer-arch-list-covers-gpu",
        "torch-arch-list-covers-gpu",
    }
    assert hs[0].rule == "package-has-gpu-arch"
    assert hs[1].rule == "wheel-has-gpu-arch"
    assert all(h.confidence < 0.5 for h in hs)
    assert set(hs[0].distinguishes_from) == {h.rule for h in hs[1:]}


def test_confirm_with_uses_what_the_log_shows():
    """The CUDA_HOME seen in a path replaces the $CUDA_HOME placeholder."""
    h = hyp(CORPUS / "cuda-home-is-toolkit" / "2.log", "cuda-home-is-toolkit")
    assert h.confirm_with[0] == "ls -l :/usr/local/cuda/bin/nvcc on the host"
    d = log_only(CORPUS / "cuda-home-is-toolkit" / "2.log")
    assert d.partial_facts["cuda_home"] == ":/usr/local/cuda"
