"""Log-only evidence too weak for a toolchain or driver change (tune-s).

A harmful fix is a proposed toolkit/driver/toolchain change for a failure whose cause lies
elsewhere (bench/generalize.py counts them). Two guards:

- a field signal may name, in ``unless``, the signals that would confirm what its line claims;
  it applies only while none of them matched. ``insufficient-driver-unconfirmed`` uses it:
  CUDA error 35 (cudaErrorInsufficientDriver) is what libcudart returns for an older driver AND
  for no loadable driver at all (recorded: cudart 13.0 on a host without libcuda.so.1 returns 35
  and cudaDriverGetVersion 0; torch's device_count_impl tells the two apart by that version), so
  a line that states no driver version and names no binary leaves the cause unknown;
- equal log-only evidence is ranked by the change it proposes: a rule whose repairs only
  report comes before one whose repairs change the host (``diagnose.changes_facts``).
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from remedy.diagnose import changes_facts, diagnose
from remedy.errors import KnowledgeError
from remedy.evidence import scan_lines
from remedy.evidence.fields import apply_signals, load_signals
from remedy.inputs import scan_logs
from remedy.knowledge.loader import load_knowledge

ROOT = Path(__file__).resolve().parents[1]
CORPUS = ROOT / "tests" / "fixtures" / "corpus"
DRIVER_RULES = {"driver-supports-cuda", "driver-supports-build-cuda"}


def _ranked(lines: list[str], **kw) -> list[str]:
    symptoms = scan_lines(lines).symptoms
    assert "driver-too-old" in {s.signature for s in symptoms} or kw.get("any_sig")
    d = diagnose(load_knowledge(), None, symptoms, wrappers=set(), **kw)
    return [h.rule for h in d.hypotheses]


# error 35 worded by a binary the knowledge does not identify, no driver version stated
UNCONFIRMED = [
    # package-has-gpu-arch/fh-1, complete (the driver was 580): ONNX Runtime's CudaCall line cut
    # after its message (with its file=/onnxruntime_src/... part the binary is named)
    "CUDA failure 35: CUDA driver version is insufficient for CUDA runtime version",
    # a Rust binary's panic (package-has-gpu-arch/fp-12: a container run without --gpus)
    'called `Result::unwrap()` on an `Err` value: Other("CUDA driver version is insufficient '
    'for CUDA runtime version")',
    # cudaGetErrorString(35) alone, as recorded from libcudart 13.0 with no libcuda.so.1
    "CUDA driver version is insufficient for CUDA runtime version",
    "CUDA Error: 35",
]


@pytest.mark.parametrize("line", UNCONFIRMED)
def test_error_35_with_no_version_and_no_binary_names_no_driver_upgrade(line):
    assert _ranked([line]) == []


# the same error where the log confirms whose runtime and which driver it is
CONFIRMED = [
    (
        "RuntimeError: The NVIDIA driver on your system is too old (found version 11060). "
        "Please update your GPU driver",
        "driver-supports-cuda",
    ),
    (
        "RuntimeError: CUDA error: CUDA driver version is insufficient for CUDA runtime version",
        "driver-supports-cuda",
    ),
    (
        "ggml_cuda_init: failed to initialize CUDA: CUDA driver version is insufficient for CUDA "
        "runtime version",
        "driver-supports-build-cuda",
    ),
    ("CUDA error 35 at src/main.cu:118", "driver-supports-build-cuda"),
]


@pytest.mark.parametrize(("line", "rule"), CONFIRMED)
def test_error_35_stays_a_driver_cause_when_the_log_confirms_it(line, rule):
    assert _ranked([line])[:1] == [rule]


def test_a_driver_version_elsewhere_in_the_log_keeps_the_driver_rules():
    """An nvidia-smi header states the driver: the version pairs judge it, the line keeps its
    credit (driver-supports-build-cuda/1 has this shape)."""
    ranked = _ranked(
        [
            "| NVIDIA-SMI 470.57.02    Driver Version: 470.57.02    CUDA Version: 11.4     |",
            "CUDA driver version is insufficient for CUDA runtime version",
        ]
    )
    assert ranked and ranked[0] in DRIVER_RULES


@pytest.mark.parametrize(
    "file", ["package-has-gpu-arch/fh-1.log", "package-has-gpu-arch/fp-12.log"]
)
def test_corpus_error_35_rows_whose_cause_lies_elsewhere_propose_no_driver_upgrade(file):
    symptoms, _, wrappers = scan_logs([CORPUS / file])
    d = diagnose(load_knowledge(), None, symptoms, wrappers=wrappers)
    assert not {h.rule for h in d.hypotheses} & DRIVER_RULES


def _signals_file(tmp_path: Path, unless: str) -> Path:
    p = tmp_path / "field-signals.yaml"
    p.write_text(
        "signals:\n"
        "  - id: names-torch\n"
        "    rule: driver-supports-cuda\n"
        "    signature: driver-too-old\n"
        "    where: {text: 'torch'}\n"
        "    weight: 0.5\n"
        "    source: {doc: x}\n"
        "  - id: withdraw-unless-torch\n"
        "    rule: driver-supports-cuda\n"
        "    signature: driver-too-old\n"
        f"    unless: [{unless}]\n"
        "    weight: 0\n"
        "    excludes: [driver-supports-cuda, driver-supports-build-cuda]\n"
        "    source: {doc: x}\n"
    )
    return p


def test_unless_applies_only_while_no_confirming_signal_matched(tmp_path):
    signals = load_signals(_signals_file(tmp_path, "names-torch"))
    bare = scan_lines(["CUDA driver version is insufficient for CUDA runtime version"]).symptoms
    res = apply_signals(signals, bare)
    assert ("driver-supports-cuda", 0) in res.excluded
    torch = scan_lines(
        ["torch: CUDA driver version is insufficient for CUDA runtime version"]
    ).symptoms
    i = next(i for i, s in enumerate(torch) if s.signature == "driver-too-old")
    res = apply_signals(signals, torch)
    assert not any(rule_i[1] == i for rule_i in res.excluded)
    assert res.bonus["driver-supports-cuda"] == 0.5


def test_unless_naming_an_unknown_signal_is_a_file_line_error(tmp_path):
    with pytest.raises(KnowledgeError) as e:
        load_signals(_signals_file(tmp_path, "no-such-signal"))
    assert "no-such-signal" in str(e.value) and "field-signals.yaml:" in str(e.value)


def test_report_only_rules_are_told_apart_from_rules_that_change_the_host():
    kb = load_knowledge()
    assert changes_facts(kb, "driver-supports-cuda")  # upgrade-driver
    assert changes_facts(kb, "flashinfer-arch-list-covers-gpu")  # unsets an env var
    assert not changes_facts(kb, "package-has-gpu-arch")  # a manual report
    assert not changes_facts(kb, "no-such-rule")


def test_equal_evidence_ranks_the_report_only_cause_before_a_change():
    """A bare 'no kernel image' line with no field signal is equal evidence for four causes;
    the two whose repairs only report (a prebuilt package's or torch wheel's arch) come before
    the arch-list rules, whose repairs unset an environment variable, whatever their ids."""
    kb = load_knowledge()
    symptoms = scan_lines(
        ["RuntimeError: CUDA error: no kernel image is available for execution on the device"]
    ).symptoms
    hyps = diagnose(kb, None, symptoms, wrappers=set(), signals=[]).hypotheses
    assert len({h.score for h in hyps}) == 1 and len(hyps) == 4
    flags = [changes_facts(kb, h.rule) for h in hyps]
    assert flags == sorted(flags) and flags[0] is False and flags[-1] is True
    # the ids alone would put flashinfer-arch-list-covers-gpu (a change) first
    assert min(h.rule for h in hyps) == "flashinfer-arch-list-covers-gpu" != hyps[0].rule


def test_generalize_counts_a_driver_upgrade_as_harmful():
    """bench/generalize.py's harmful count reads the driver change from upgrade-driver's
    gpu_driver effect (refs since the typed operations have no ``touches``)."""
    sys.path.insert(0, str(ROOT / "bench"))
    import generalize as gen

    actions = {
        "upgrade-driver": {"effects": [{"gpu_driver": "min_driver(py.torch_cuda)"}], "touches": []},
        "report": {"effects": [], "touches": []},
        "env-max-jobs": {"effects": [{"env": {"MAX_JOBS": "4"}}], "touches": []},
    }
    assert gen.toolchain_actions(actions) == {"upgrade-driver"}


# (line, the rules it may name): the toolkit's link layout and Triton's -lcuda explain only a
# missing CUDA runtime/driver library; any other -l is its own package's (torch's lib dir for
# -lc10/-ltorch*: torch/utils/cpp_extension.py _prepare_ldflags, the torch wheel's own
# libraries, which no provider package supplies: no cause named, tune-r)
LINKS = [
    ("/usr/bin/ld: cannot find -lcudart: No such file or directory", "toolkit-links-cudart"),
    ("/usr/bin/ld: cannot find -lcuda", "triton-finds-libcuda"),
    ("error LNK1104: cannot open file 'cudart.lib'", "toolkit-links-cudart"),
    ("/usr/bin/ld: cannot find -lc10", None),
    ("/usr/bin/ld: cannot find -lstdc++: No such file or directory", "needed-files-provided"),
    ("ld.lld: error: unable to find library -ltorch_cuda", None),
]


@pytest.mark.parametrize(("line", "top"), LINKS)
def test_only_a_cuda_runtime_library_missing_at_link_names_a_toolkit_layout_change(line, top):
    kb = load_knowledge()
    symptoms = scan_lines([line]).symptoms
    assert "ld-cannot-find-lib" in {s.signature for s in symptoms}
    ranked = [h.rule for h in diagnose(kb, None, symptoms, wrappers=set()).hypotheses]
    assert ranked[:1] == ([top] if top else [])
    if top != "toolkit-links-cudart" and top != "triton-finds-libcuda":
        assert not {"toolkit-links-cudart", "triton-finds-libcuda"} & set(ranked)


def test_torch_libraries_missing_at_link_propose_no_toolchain_change():
    """unknown/fza-2: a stale cargo cache points torch-sys at a deleted torch; the link layout
    of the CUDA toolkit (link-layout-symlinks) is not offered for it."""
    kb = load_knowledge()
    symptoms, _, wrappers = scan_logs([CORPUS / "unknown/fza-2.log"])
    hyps = diagnose(kb, None, symptoms, wrappers=wrappers).hypotheses
    assert not any(changes_facts(kb, h.rule) for h in hyps)


def test_a_triton_ptxas_failure_without_a_version_reason_proposes_no_ptxas_change():
    """Triton names only ptxas' exit status and prints ptxas' stderr below it: a kernel's own
    limit there (recorded: 'uses too much shared data') is no TRITON_PTXAS_PATH cause, and the
    status line alone names none; with ptxas' unknown --gpu-name it stays the ptxas rule."""
    kb = load_knowledge()
    status = "triton.runtime.errors.PTXASError: PTXAS error: Internal Triton PTX codegen error"
    smem = (
        "ptxas error   : Entry function 'k' uses too much shared data (0x493e0 bytes, 0x38c00 max)"
    )
    for lines in ([status], [status, "`ptxas` stderr:", smem]):
        hyps = diagnose(kb, None, scan_lines(lines).symptoms, wrappers=set()).hypotheses
        assert "triton-ptxas-knows-arch" not in {h.rule for h in hyps}
    gpu_name = "ptxas fatal   : Value 'sm_121a' is not defined for option 'gpu-name'"
    hyps = diagnose(
        kb, None, scan_lines([status, "`ptxas` stderr:", gpu_name]).symptoms, wrappers=set()
    ).hypotheses
    assert [h.rule for h in hyps[:1]] == ["triton-ptxas-knows-arch"]


def test_a_compiler_that_cannot_start_names_flashinfer_nvcc_only_in_a_flashinfer_build():
    """'nvcc: error while loading shared libraries' is a broken compiler install; FlashInfer's
    ninja runs $FLASHINFER_NVCC, so only inside its JIT build (a failed edge in its cached_ops
    dir: the recorded H200 launch of bench/gpu scenario c) is the override a candidate."""
    kb = load_knowledge()
    line = (
        "nvcc: error while loading shared libraries: libnvvm.so.4: cannot open shared object "
        "file: No such file or directory"
    )
    hyps = diagnose(kb, None, scan_lines([line]).symptoms, wrappers=set()).hypotheses
    assert hyps and hyps[0].rule == "needed-files-provided"
    assert "flashinfer-nvcc-override-consistent" not in {h.rule for h in hyps}
    symptoms, _, wrappers = scan_logs(
        [ROOT / "tests" / "fixtures" / "gpu" / "h200-c-flashinfer-nvcc-broken-launch.log"]
    )
    hyps = diagnose(kb, None, symptoms, wrappers=wrappers).hypotheses
    assert hyps[0].rule == "flashinfer-nvcc-override-consistent"


def test_an_nccl_error_35_keeps_torch_s_driver_rule():
    """NCCL's wording names torch's process group: the confirming signal keeps the line's
    credit (nccl-cuda-failure-is-torch), so the driver rule stays first."""
    line = "NCCL WARN Cuda failure 'CUDA driver version is insufficient for CUDA runtime version'"
    assert _ranked([line])[:1] == ["driver-supports-cuda"]
