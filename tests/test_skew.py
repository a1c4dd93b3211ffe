"""Version skew per pair (knowledge/version-pairs.yaml, remedy.knowledge.skew) and the fields of
the failing command (remedy.evidence.fields.command_fields).

Table-driven on recorded real output: the corpus logs (tests/fixtures/corpus, each from a public
thread) and tool output recorded here with tests/fixtures/skew/record.sh (nvcc/ptxas 13.0 from
/usr/local/cuda-13.0, ninja, gcc-12). Both directions of each relation are checked.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from remedy.diagnose import diagnose, log_versions_of
from remedy.evidence.fields import command_fields, fields_of
from remedy.inputs import scan_logs
from remedy.knowledge.loader import load_knowledge
from remedy.knowledge.skew import check, log_pairs, log_versions

ROOT = Path(__file__).resolve().parents[1]
CORPUS = ROOT / "tests" / "fixtures" / "corpus"
SKEW = ROOT / "tests" / "fixtures" / "skew"


@pytest.fixture(scope="module")
def kb():
    return load_knowledge()


# relation, a, kind a, b, kind b, holds — each relation in both directions
RELATIONS = [
    ("same-major", "13.0", "cuda", "12.8", "cuda", False),  # nvcc newer than torch's CUDA
    ("same-major", "12.8", "cuda", "13.0", "cuda", False),  # nvcc older
    ("same-major", "12.4", "cuda", "12.1", "cuda", True),  # minor only: torch warns
    ("same-major", "V12.4.131", "cuda", "cu121", "cuda", True),  # banner and wheel-tag spellings
    ("same-release", "13.0.88", "cuda", "13020", "cuda", False),  # headers newer (CUDART_VERSION)
    ("same-release", "13.2", "cuda", "13000", "cuda", False),  # headers older
    ("same-release", "12.8", "cuda", "12080", "cuda", True),
    ("ptx-le", "13.2", "cuda", "13.0", "cuda", False),  # cicc newer than ptxas
    ("ptx-le", "13.0", "cuda", "13.2", "cuda", True),  # ptxas newer: accepted
    ("ptx-le", "9.2", "ptx", "9.0", "ptx", False),
    ("driver-min", "470.82.01", "driver", "12.1", "cuda", False),
    ("driver-min", "550.54.14", "driver", "12.4", "cuda", True),
    ("driver-min", "11060", "cuda", "11.8", "cuda", False),  # torch's 'found version 11060'
    ("driver-min", "12.2", "cuda", "12.1", "cuda", True),  # nvidia-smi 'CUDA Version: 12.2'
    ("driver-compat", "535.104.05", "driver", "12.8", "cuda", True),  # minor version compat
    ("driver-compat", "470.82.01", "driver", "12.3", "cuda", False),
    ("driver-compat", "8.4", "ptx", "8.5", "ptx", False),  # the driver's JIT is older
    ("max-gcc", "13.2.0", "gcc", "12.1", "cuda", False),
    ("max-gcc", "12", "gcc", "13.0", "cuda", True),
    ("knows-arch", "compute_120", "arch", "12.4", "cuda", False),  # too new for that nvcc
    ("knows-arch", "compute_70", "arch", "13.0", "cuda", False),  # removed by that nvcc
    ("knows-arch", "7.0 9.0a", "arch", "12.8", "cuda", True),
    ("knows-arch", "12.1f", "arch", "12.8", "cuda", False),
    ("std-ge", "c++14", "std", "13.0", "cuda", False),  # CUDA 13's CCCL needs C++17
    ("std-ge", "c++17", "std", "13.0", "cuda", True),
    ("std-ge", "c++14", "std", "12.4", "cuda", True),  # CUDA 12's needs C++14
    ("std-ge", "gnu++14", "std", "C++ 17", "std", False),  # libcu++'s own wording
]


@pytest.mark.parametrize(("rel", "a", "ka", "b", "kb_", "holds"), RELATIONS)
def test_one_relation_judges_both_directions(kb, rel, a, ka, b, kb_, holds):
    out = check(rel, a, ka, b, kb_, kb.functions)
    assert out.holds is holds, out.why


def test_unknown_versions_are_not_judged(kb):
    assert check("driver-min", "550.54.14", "driver", "99.9", "cuda", kb.functions).holds is None
    assert check("same-major", "", "cuda", "12.8", "cuda", kb.functions).holds is None


def test_every_pair_is_a_rule_with_the_generated_relation(kb):
    assert len(kb.pairs) >= 10
    for p in kb.pairs:
        if (
            p.evidence_for is not None
        ):  # log-only: evidence for an existing rule, no rule of its own
            assert p.id not in kb.rules and p.target in kb.rules
            assert not kb.rules[p.target].file.endswith("version-pairs.yaml")
            continue
        cr = kb.rules[p.id]
        assert cr.file.endswith("version-pairs.yaml")
        assert f"skew_holds('{p.agree}'" in cr.rule.holds
        assert cr.rule.source.repo or cr.rule.source.doc or cr.rule.source.thread


# Real logs: the pair the log's own version lines judge, and the verdict.
LOG_PAIRS = [
    (CORPUS / "toolkit-major-matches-torch/1.log", "toolkit-major-matches-torch", "10.1 vs 11.3"),
    (CORPUS / "toolkit-major-matches-torch/4.log", "toolkit-major-matches-torch", "12.2 vs 11.3"),
    (CORPUS / "toolkit-major-matches-torch/5.log", "toolkit-major-matches-torch", "11.7 vs 12.4"),
    (CORPUS / "container-driver-satisfies-image/3.log", "container-driver-satisfies-image", "550"),
    (CORPUS / "container-driver-satisfies-image/2.log", "container-driver-satisfies-image", "551"),
    (CORPUS / "driver-supports-build-cuda/ptx-1.log", "driver-supports-build-cuda", "8.4"),
    (CORPUS / "ptxas-accepts-cicc-ptx/1.log", "ptxas-accepts-cicc-ptx", "8.5"),
    (SKEW / "ptxas-newer-ptx.log", "ptxas-accepts-cicc-ptx", "9.2"),
    # the command asked for an arch list (9.0a and 13.0): the list's target, not the GPU's
    (SKEW / "ninja-unknown-target.log", "toolkit-knows-target-archs", "13.0 (newer than"),
    (SKEW / "ninja-cxx-dialect.log", "cxx-dialect-meets-toolkit", "c++14 vs at least C++17"),
    # log-only (evidence_for wheel-has-gpu-arch): a +cu126 torch wheel and an RTX 5060 Ti (sm_120)
    (
        CORPUS / "wheel-has-gpu-arch/fzn-8.log",
        "torch-wheel-knows-gpu-arch",
        "12.0 (needs CUDA >= 12.8)",
    ),
]


@pytest.mark.parametrize(("log", "pair", "shown"), LOG_PAIRS, ids=lambda x: str(x)[-40:])
def test_a_log_that_states_two_versions_is_judged_by_the_pair(kb, log, pair, shown):
    symptoms, _, wrappers = scan_logs([log])
    versions = log_versions_of(kb, symptoms)
    verdicts = {v.pair: v for v in log_pairs(kb.pairs, versions, kb.functions)}
    assert pair in verdicts and verdicts[pair].holds is False, verdicts
    assert shown in verdicts[pair].why
    top = diagnose(kb, None, symptoms, wrappers=wrappers).hypotheses[0]
    assert top.rule == next(p.target for p in kb.pairs if p.id == pair)
    assert any("disagrees" in m for m in top.matched_fields), top.matched_fields


def test_a_retired_target_is_judged_by_the_pair_but_ranks_the_arch_list(kb):
    """nvcc 13.0 rejecting compute_70: the pair says the nvcc cannot compile for it (removed in
    CUDA 13.0), and a target CUDA retired is a stale arch-list entry (field signal
    retired-arch-is-a-target-list, after round 13), so toolkit-knows-target-archs ranks first;
    the GPU reading stays second, since the log names no GPU."""
    symptoms, _, wrappers = scan_logs([SKEW / "nvcc-removed-arch.log"])
    verdicts = {v.pair: v for v in log_pairs(kb.pairs, log_versions_of(kb, symptoms), kb.functions)}
    assert verdicts["arch-supported-by-toolkit"].holds is False
    assert "removed in CUDA 13.0" in verdicts["arch-supported-by-toolkit"].why
    ranked = [h.rule for h in diagnose(kb, None, symptoms, wrappers=wrappers).hypotheses]
    assert ranked[:2] == ["toolkit-knows-target-archs", "arch-supported-by-toolkit"], ranked


def test_an_agreeing_pair_weighs_against_its_rule(kb, tmp_path):
    """'CUDA driver version is insufficient' while the driver covers torch's CUDA: the binary
    that failed is not torch (a torch-only log keeps driver-supports-cuda first)."""
    line = "RuntimeError: CUDA error: CUDA driver version is insufficient for CUDA runtime version"
    ranked = {}
    for driver in ("470.82.01", "550.54.14"):
        log = tmp_path / f"{driver}.log"
        log.write_text(
            f"CUDA used to build PyTorch: 12.1\nNvidia driver version: {driver}\n{line}\n"
        )
        symptoms, _, wrappers = scan_logs([log])
        ranked[driver] = [
            h.rule for h in diagnose(kb, None, symptoms, wrappers=wrappers).hypotheses
        ]
    assert ranked["470.82.01"][0] == "driver-supports-cuda"
    assert ranked["550.54.14"][0] == "driver-supports-build-cuda"


def test_failing_command_fields_from_a_real_ninja_block():
    lines = (SKEW / "ninja-unknown-target.log").read_text().splitlines()
    failed = lines.index(next(x for x in lines if x.startswith("FAILED: ")))
    f = command_fields(lines[failed + 1])
    assert f["cmd_nvcc"] == "/usr/local/cuda-13.0/bin/nvcc"
    assert f["cmd_nvcc_cuda"] == "13.0"
    assert (f["cmd_ccbin"], f["cmd_host_gcc"]) == ("/usr/bin/gcc-12", "12")
    assert f["cmd_targets_list"] == "9.0a 13.0" and "cmd_targets_plain" not in f
    assert f["cmd_std"] == "c++17" and f["cmd_cxx11_abi"] == "1"


@pytest.mark.parametrize(
    ("line", "want"),
    [
        (  # FlashInfer JIT (pip toolkit: no version in the path, the -I names none either)
            "/root/venv/lib/python3.12/site-packages/nvidia/cu13/bin/nvcc --generate-dependencies-"
            "with-compile -gencode=arch=compute_120f,code=sm_120f -std=c++17 -c a.cu -o a.o",
            {"cmd_targets_list": "12.0f", "cmd_std": "c++17"},
        ),
        (  # setuptools: version from the toolkit include dir, -arch=, --compiler-bindir=
            "/usr/local/cuda/bin/nvcc -I/usr/local/cuda-12.4/include -arch=sm_90 "
            "--compiler-bindir=/usr/bin/g++-13 -c b.cu -o b.o",
            {"cmd_nvcc_cuda": "12.4", "cmd_targets_plain": "9.0", "cmd_host_gcc": "13"},
        ),
        (  # a quote cut off by the log: still parsed
            "[2/3] /usr/local/cuda-12.1/bin/nvcc -gencode arch=compute_89,code=sm_89 -Xcompiler '-fPIC",
            {"cmd_nvcc_cuda": "12.1", "cmd_targets_plain": "8.9"},
        ),
    ],
)
def test_command_shapes(line, want):
    f = command_fields(line)
    assert {k: f.get(k) for k in want} == want, f
    if "pip" in line or "cu13" in line:
        assert "cmd_nvcc_cuda" not in f, "no version is read from a path that states none"


def test_a_command_a_log_echoes_is_not_a_command_remedy_runs():
    """The fields are strings to compare; a hostile command line yields fields, never runs."""
    f = command_fields("/x/bin/nvcc -ccbin '$(rm -rf /)' -c a.cu")
    assert f["cmd_ccbin"] == "$(rm -rf /)" and "cmd_host_gcc" not in f
    assert command_fields("nothing here") == {}


@pytest.mark.parametrize(
    ("line", "verdict"),
    [  # torch's own host-compiler range check, both directions (cpp_extension template)
        (
            "RuntimeError: The current installed version of g++ (13.2.0) is greater than the "
            "maximum required version by CUDA 11.3. Please make sure to use an adequate "
            "version of g++ (>=5.0.0, <11.0).",
            False,
        ),
        (
            "RuntimeError: The current installed version of g++ (4.8.5) is less than the minimum "
            "required version by CUDA 11.3 (5.0.0). Please make sure to use an adequate version "
            "of g++ (>=5.0.0, <11.0).",
            True,  # the gcc table has no minimum: the pair cannot see it, the line still counts
        ),
    ],
)
def test_torch_host_compiler_range_names_the_host_compiler_rule(kb, tmp_path, line, verdict):
    log = tmp_path / "build.log"
    log.write_text(line + "\n")
    symptoms, _, wrappers = scan_logs([log])
    versions = log_versions(
        [fields_of(s) for s in symptoms], kb.log_fields, [s.signature for s in symptoms]
    )
    verdicts = {v.pair: v.holds for v in log_pairs(kb.pairs, versions, kb.functions)}
    assert verdicts.get("host-compiler-supported") is verdict
    top = diagnose(kb, None, symptoms, wrappers=wrappers).hypotheses[0]
    assert top.rule == "host-compiler-supported"


def test_the_command_under_ninja_failed_dates_the_nvcc(kb, tmp_path, monkeypatch):
    """Without a version banner, the nvcc path of the command ninja printed under 'FAILED:'
    (read back from the log; not a scanner candidate) says which release rejected the target."""
    import remedy.evidence.fields as fieldmod

    lines = (SKEW / "ninja-unknown-target.log").read_text().splitlines()
    start = next(i for i, x in enumerate(lines) if x.startswith("[1/1]"))
    log = tmp_path / "build.log"
    log.write_text("\n".join(lines[start:]) + "\n")
    symptoms, _, wrappers = scan_logs([log])
    assert "nvcc-version-banner" not in {s.signature for s in symptoms}
    cmds = fieldmod.failing_commands(symptoms)
    assert [c["cmd_nvcc_cuda"] for c in cmds.values()] == ["13.0"]
    top = diagnose(kb, None, symptoms, wrappers=wrappers).hypotheses[0]
    assert top.rule == "toolkit-knows-target-archs"
    assert any("disagrees" in m and "nvcc 13.0" in m for m in top.matched_fields)
    monkeypatch.setattr(fieldmod, "REREAD_MAX_BYTES", 10)  # a big log is not read twice
    assert fieldmod.failing_commands(symptoms) == {}


def test_field_signals_see_the_failing_commands_fields(tmp_path):
    """A field signal can match the fields of the command under a ninja FAILED: line (the -std
    the build used), not only the FAILED line's own text."""
    from remedy.evidence.fields import apply_signals, load_signals, symptom_views

    sig = tmp_path / "field-signals.yaml"
    sig.write_text(
        "signals:\n"
        "  - id: cxx14-build\n"
        "    rule: cxx-dialect-meets-toolkit\n"
        "    signature: ninja-failed-target\n"
        "    where: {cmd_std: '^c\\+\\+14$', cmd_nvcc_cuda: '^13\\.'}\n"
        "    weight: 1.0\n"
        "    source: {repo: NVIDIA/cccl, path: thrust/thrust/detail/config/cpp_dialect.h}\n"
    )
    symptoms, _, _ = scan_logs([SKEW / "ninja-cxx-dialect.log"])
    signals = load_signals(sig)
    assert apply_signals(signals, symptoms).bonus == {}  # the FAILED line alone has no -std
    res = apply_signals(signals, symptoms, symptom_views(symptoms))
    assert res.bonus["cxx-dialect-meets-toolkit"] == 1.0
    assert res.matched["cxx-dialect-meets-toolkit"] == [
        "cxx14-build (cmd_std=c++14, cmd_nvcc_cuda=13.0)"
    ]


NO_KERNEL_IMAGE = (
    "RuntimeError: CUDA error: no kernel image is available for execution on the device\n"
    "CUDA kernel errors might be asynchronously reported at some other API call, so the "
    "stacktrace below might be incorrect.\n"
)


@pytest.mark.parametrize(
    ("torch", "gpu", "first"),
    [
        ("2.6.0+cu126", "NVIDIA GeForce RTX 5060 Ti", "wheel-has-gpu-arch"),  # 12.6 < sm_120's 12.8
        ("2.9.0+cu130", "NVIDIA GeForce GTX 1080 Ti", "wheel-has-gpu-arch"),  # 13.0 dropped sm_61
        ("2.7.1+cu128", "NVIDIA GeForce RTX 5090", "package-has-gpu-arch"),  # 12.8 targets sm_120
        ("2.6.0+cu126", "NVIDIA H100 80GB HBM3", "package-has-gpu-arch"),  # 12.6 targets sm_90
        ("2.6.0+cu126", "NVIDIA RTX 6000", "package-has-gpu-arch"),  # Turing, Ada or Blackwell
    ],
)
def test_torch_wheel_cuda_and_gpu_name_decide_whose_kernel_image_is_missing(
    kb, tmp_path, torch, gpu, first
):
    """tune-ab (round 27's fzn-8): 'no kernel image' with the torch wheel's CUDA tag and the
    GPU's name in the log is the wheel's when that CUDA cannot target the GPU's architecture
    (the log-only pair torch-wheel-knows-gpu-arch); when it can, or the name is ambiguous, the
    pair says nothing (torch builds a subset of its CUDA's targets) and the bare line keeps the
    corpus prior, a package."""
    log = tmp_path / "app.log"
    log.write_text(f"PyTorch: {torch}\nCUDA device: {gpu}, 15.9 GB VRAM\n{NO_KERNEL_IMAGE}")
    symptoms, _, wrappers = scan_logs([log])
    hyps = diagnose(kb, None, symptoms, wrappers=wrappers).hypotheses
    assert hyps[0].rule == first, [(h.rule, h.score) for h in hyps]
    wheel = next(h for h in hyps if h.rule == "wheel-has-gpu-arch")
    assert any("pair gpu/torch disagrees" in m for m in wheel.matched_fields) == (
        first == "wheel-has-gpu-arch"
    )


def test_a_log_only_pair_names_exactly_one_rule():
    from pydantic import ValidationError

    from remedy.knowledge.skew import Pair

    side = {"part": "gpu", "kind": "arch", "fact": "gpu.compute_cap"}
    base = {"id": "x-y", "a": side, "b": {**side, "part": "torch", "kind": "cuda"}}
    assert Pair(**base, agree="knows-arch", evidence_for="wheel-has-gpu-arch").target == (
        "wheel-has-gpu-arch"
    )
    with pytest.raises(ValidationError):
        Pair(**base, agree="knows-arch")
    with pytest.raises(ValidationError):
        Pair(**base, agree="knows-arch", evidence_for="a-b", rule={"title": "t"})


def test_a_gpu_the_toolkit_retired_is_a_violation_on_the_host(kb):
    """tune-at (round 45's gcw-5, a Kepler sm_30 card under CUDA 11.2's nvcc): the knows-arch
    relation judges both directions, and the rule is now evaluated for a GPU the table lists
    as dropped too (its `when` used to need a first release for the GPU, which the table has
    only for GPUs newer than it): a Pascal GPU under CUDA 13.0's nvcc is a violation whose
    message names the release that dropped it; under CUDA 12.8 it holds."""
    from remedy.evaluate import evaluate
    from remedy.model import Facts

    from conftest import base_facts

    facts = base_facts("system")
    for g in facts["gpus"]:
        g.update(name="NVIDIA GeForce GTX 1080", compute_cap="6.1")
    found = [v for v in evaluate(kb, facts).violations if v.rule == "arch-supported-by-toolkit"]
    assert found == [], found  # CUDA 12.8 still compiles for sm_61
    tk = facts["toolkits"][0]
    tk.update(nvcc_version="13.0.88", nvcc_release="13.0", ptxas_release="13.0")
    tk.update(cicc_release="13.0", cudart_version=13000)
    found = [v for v in evaluate(kb, facts).violations if v.rule == "arch-supported-by-toolkit"]
    assert found, [v.rule for v in evaluate(kb, facts).violations]
    d = diagnose(kb, Facts.model_validate(facts), [])
    msgs = [f.message for f in d.findings if f.rule == "arch-supported-by-toolkit"]
    assert msgs and "CUDA 13.0 and later no longer compile for" in msgs[0], msgs
