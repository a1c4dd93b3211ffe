"""Fields of matched lines and field signals (remedy.evidence.fields, knowledge/field-signals.yaml).

Every line here is quoted from a real log in tests/fixtures/corpus (the file is named); the
tables say what the line's fields are and which cause the field makes it evidence for.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from remedy.diagnose import _driver_judge, diagnose
from remedy.errors import KnowledgeError
from remedy.evidence import scan_lines
from remedy.evidence.fields import (
    apply_signals,
    derived_fields,
    dll_soname,
    lib_in_cuda_toolkit,
    load_signals,
    symptom_views,
    with_stated_driver_fit,
)
from remedy.inputs import scan_logs
from remedy.knowledge.loader import load_knowledge

CORPUS = Path(__file__).resolve().parent / "fixtures" / "corpus"


def _symptoms(line: str):
    return scan_lines([line]).symptoms


# (corpus file it is quoted from, line, signature, derived fields expected)
DERIVED = [
    (
        "arch-supported-by-toolkit/1.log",
        "nvcc fatal : Unsupported gpu architecture 'compute_120'",
        "nvcc-unsupported-arch",
        {"arch_cc": "12.0", "arch_suffix": "plain"},
    ),
    (
        "toolkit-knows-target-archs/1.log",
        "nvcc fatal   : Unsupported gpu architecture 'compute_120a'",
        "nvcc-unsupported-arch",
        {"arch_cc": "12.0", "arch_suffix": "a"},
    ),
    (
        "package-has-gpu-arch/1.log",
        "CUDA error (/build/source/flash-attn/flash_fwd_launch_template.h:184): no kernel image "
        "is available for execution on the device",
        "no-kernel-image",
        {"consumer": "flash-attn"},
    ),
    (
        "triton-finds-libcuda/1.log",
        "/usr/bin/ld: cannot find -lcuda",
        "ld-cannot-find-lib",
        {"lib_name": "cuda"},
    ),
]


@pytest.mark.parametrize(("file", "line", "sig", "want"), DERIVED, ids=[d[0] for d in DERIVED])
def test_derived_fields_of_real_lines(file, line, sig, want):
    assert line in (CORPUS / file).read_text(), "the line is quoted from the corpus"
    sym = next(s for s in _symptoms(line) if s.signature == sig)
    got = derived_fields(sym)
    assert {k: got.get(k) for k in want} == want


# (corpus file, the cause the field says, a cause the same signature would also suggest)
SHAPES = [
    ("ld-library-path-not-shadowing/1.log", "ld-library-path-not-shadowing", None),
    ("triton-finds-libcuda/2.log", "triton-finds-libcuda", "toolkit-links-cudart"),
    ("driver-supports-build-cuda/2.log", "driver-supports-build-cuda", "driver-supports-cuda"),
    ("driver-supports-cuda/4.log", "driver-supports-cuda", "driver-supports-build-cuda"),
    ("toolkit-knows-target-archs/2.log", "toolkit-knows-target-archs", "arch-supported-by-toolkit"),
    # the targets of the nvcc command CMake echoed above the fatal line (tune-d; a bare line
    # is no longer read as the GPU's own arch: arch-supported-by-toolkit/2.log was this row)
    (
        "toolkit-knows-target-archs/fb-26.log",
        "toolkit-knows-target-archs",
        "arch-supported-by-toolkit",
    ),
    ("package-has-gpu-arch/3.log", "package-has-gpu-arch", "torch-arch-list-covers-gpu"),
    ("cccl-complete/2.log", "cccl-complete", None),
]


# tune-h: NVRTC's (EDG) missing-include line names cccl-complete only when a toolkit header
# includes the CCCL header; from the JIT program's own source it names nothing (recorded here)
NVRTC_CCCL = [
    ("cccl/nvrtc-nv-target-missing.log", ["cccl-complete"]),
    ("cccl/nvrtc-cuda-std-missing.log", []),
    ("cccl/nvrtc-cuda-std-no-include-dir.log", []),
]


@pytest.mark.parametrize(("file", "want"), NVRTC_CCCL, ids=[r[0] for r in NVRTC_CCCL])
def test_nvrtc_cccl_header_is_cccl_complete_only_from_a_toolkit_header(file, want):
    symptoms, _, wrappers = scan_logs([CORPUS.parent / "templates" / file])
    assert "missing-header" in {s.signature for s in symptoms}
    d = diagnose(load_knowledge(), None, symptoms, wrappers=wrappers)
    assert [h.rule for h in d.hypotheses[:1]] == want


@pytest.mark.parametrize(("file", "cause", "rival"), SHAPES, ids=[s[0] for s in SHAPES])
def test_a_field_decides_between_causes_of_the_same_signature(file, cause, rival):
    symptoms, _, wrappers = scan_logs([CORPUS / file])
    d = diagnose(load_knowledge(), None, symptoms, wrappers=wrappers)
    ranked = [h.rule for h in d.hypotheses]
    assert ranked[0] == cause, ranked
    assert d.hypotheses[0].matched_fields, "the field that decided is reported"
    if rival in ranked:
        assert d.hypotheses[0].score > d.hypotheses[ranked.index(rival)].score


def test_without_signals_the_nvjitlink_symbol_reads_as_a_torch_abi_break():
    """The same log, ranked with no field signals: the c10-style reading wins. The signal is
    what turns the line into search-path evidence (and it can be switched off)."""
    symptoms, _, wrappers = scan_logs([CORPUS / "ld-library-path-not-shadowing/1.log"])
    d = diagnose(load_knowledge(), None, symptoms, wrappers=wrappers, signals=[])
    assert [h.rule for h in d.hypotheses][:1] == ["extensions-match-torch-abi"]


def test_confidence_and_the_settling_fact_are_reported():
    symptoms, _, wrappers = scan_logs([CORPUS / "container-driver-satisfies-image/3.log"])
    top = diagnose(load_knowledge(), None, symptoms, wrappers=wrappers).hypotheses[0]
    assert top.rule == "container-driver-satisfies-image"
    assert 0.4 <= top.confidence <= 1.0
    assert top.settle_with and "driver_version" in top.settle_with
    # the requirement line, and nvidia-smi's header whose driver (550.144.03, CUDA 12.4) the
    # driver/image version pair judges too old for cuda>=12.8 (knowledge/version-pairs.yaml)
    assert top.support_lines == 2
    assert any("disagrees" in m and "12.8" in m for m in top.matched_fields), top.matched_fields


def test_excluded_rule_gets_no_credit_from_the_line():
    syms = _symptoms(
        "ImportError: /home/mit/kxyRAG/ragflow/.venv/lib/python3.12/site-packages/torch/lib/../../"
        "nvidia/cusparse/lib/libcusparse.so.12: undefined symbol: __nvJitLinkAddData_12_1, "
        "version libnvJitL"
    )
    res = apply_signals(load_signals(), syms)
    i = next(i for i, s in enumerate(syms) if s.signature == "undefined-symbol")
    assert ("extensions-match-torch-abi", i) in res.excluded
    assert res.bonus["ld-library-path-not-shadowing"] > 0


def test_a_line_another_rules_signal_claims_gives_no_version_pair_credit():
    """unknown/gae-1 (triton-lang/triton#4576): Triton's ptxas refuses the .version Triton
    derived from that same ptxas. The line states both PTX ISAs, so the cicc/ptxas pair reads
    as violated; the Triton guard withdraws the line from ptxas-accepts-cicc-ptx, and with it
    the pair read from it. A signal that withdraws only its own rule's bare line (DeepSpeed's
    mismatch, extension-cuda-mismatch-major-not-shown) leaves the pair to give credit back."""
    syms, _, wrappers = scan_logs([CORPUS / "unknown" / "gae-1.log"])
    res = apply_signals(load_signals(), syms)
    i = next(i for i, s in enumerate(syms) if s.signature == "ptxas-unsupported-ptx-version")
    assert ("ptxas-accepts-cicc-ptx", i) in res.not_theirs
    d = diagnose(load_knowledge(), None, syms, wrappers=wrappers)
    assert [h.rule for h in d.hypotheses] == []
    # the same ptxas line from nvcc's own pipeline (cicc's tmpxft file) keeps the pair's reading
    syms = _symptoms(
        "ptxas /tmp/tmpxft_00003f1a_00000000-6_gemm_kernel.ptx, line 5; fatal   : Unsupported"
        " .version 8.8; current version is '8.7'"
    )
    d = diagnose(load_knowledge(), None, syms)
    assert [h.rule for h in d.hypotheses][:1] == ["ptxas-accepts-cicc-ptx"]
    # own-rule withdrawal: the pair gives toolkit-major-matches-torch its credit back
    syms = _symptoms(
        "deepspeed.ops.op_builder.builder.CUDAMismatchException: >- DeepSpeed Op Builder:"
        " Installed CUDA version 12.2 does not match the version torch was compiled with 11.7,"
        " unable to compile cuda/cpp extensions without a matching cuda version."
    )
    d = diagnose(load_knowledge(), None, syms)
    assert [h.rule for h in d.hypotheses][:1] == ["toolkit-major-matches-torch"]


def test_signals_file_errors_name_file_and_line(tmp_path):
    bad = tmp_path / "field-signals.yaml"
    bad.write_text(
        "signals:\n"
        "  - id: ok-one\n"
        "    rule: no-such-rule\n"
        "    signature: undefined-symbol\n"
        "    source: {doc: x}\n"
    )
    kb = load_knowledge()
    with pytest.raises(KnowledgeError) as e:
        load_signals(bad, rules=kb.rules, signatures=["undefined-symbol"])
    assert "no-such-rule" in str(e.value) and "field-signals.yaml" in str(e.value)
    bad.write_text(
        "signals:\n"
        "  - id: bad-regex\n"
        "    rule: toolkit-found\n"
        "    signature: undefined-symbol\n"
        "    where: {symbol: '('}\n"
        "    source: {doc: x}\n"
    )
    with pytest.raises(KnowledgeError) as e:
        load_signals(bad)
    assert "invalid regex" in str(e.value) and "field-signals.yaml:5" in str(e.value)


def test_leave_one_repository_out_drops_signals_learned_from_that_repository():
    everything = {s.id for s in load_signals()}
    without = {s.id for s in load_signals(exclude_repo="ostris/ai-toolkit")}
    assert "no-kernel-image-raised-in-package-source" in everything - without
    # signals citing upstream code stay
    assert "nvjitlink-symbol-is-search-path" in without


def test_shipped_signals_reference_known_rules_and_signatures():
    from remedy.evidence.catalog import default_catalog

    kb = load_knowledge()
    sigs = load_signals(rules=kb.rules, signatures=default_catalog().ids())
    assert len(sigs) >= 10
    assert all(s.source.repo or s.source.doc or s.source.thread for s in sigs)


def test_host_stdlib_header_signature_starts_above_the_newest_supported_gcc():
    """nvcc-error-in-host-stdlib-header takes only libstdc++ paths of a gcc newer than every
    nvcc in knowledge/cuda-tables.yaml accepts: the first such major matches, the newest
    supported one does not (when the table grows, the pattern must move with it)."""
    from remedy.evidence.catalog import default_catalog, knowledge_dir
    from remedy.knowledge.yamlload import load_yaml

    tables = load_yaml(knowledge_dir() / "cuda-tables.yaml")
    newest = max(int(row["gcc"]) for row in tables["max_gcc"]["entries"])
    rx = default_catalog()["nvcc-error-in-host-stdlib-header"].rx
    line = "/usr/include/c++/{}/type_traits(3427): error: type name is not allowed"
    assert rx.search(line.format(newest + 1))
    assert not rx.search(line.format(newest))
    assert not rx.search(line.format(f"{newest}.2.1"))


TEMPLATES = Path(__file__).resolve().parent / "fixtures" / "templates"

# (log: real output recorded or copied from a thread, fields of the nvcc command echoed before
# the nvcc fatal line, read back by remedy.evidence.fields.preceding_commands)
ECHOED = [
    (  # CMake's compiler check prints the try-compile command, then nvcc's fatal
        TEMPLATES / "cmake/try-compile-arch-list.log",
        {"cmd_targets_list": "7.5 8.0 20.0", "cmd_cuda_home": "/usr/local/cuda"},
    ),
    (  # setuptools' spawn echoes a -gencode list
        TEMPLATES / "nvcc/unsupported-arch-list-echoed.log",
        {"cmd_targets_list": "20.0 9.0 8.0"},
    ),
    (  # torch cpp_extension for the visible GPU: one target (+PTX)
        TEMPLATES / "nvcc/unsupported-arch-gpu-target-echoed.log",
        {"cmd_targets_plain": "20.0", "cmd_std": "c++17"},
    ),
    (  # a thread copy hard-wrapped at a fixed width, behind box-drawing margins
        CORPUS / "toolkit-knows-target-archs/fb-9.log",
        {"cmd_nvcc": "$PREFIX/bin/nvcc", "cmd_std": "c++11"},
    ),
    (  # CMake's command with an explicit toolkit path (its version read from it)
        CORPUS / "toolkit-knows-target-archs/fb-26.log",
        {"cmd_nvcc_cuda": "11.8", "cmd_targets_list": "7.0 7.5 8.0 12.0"},
    ),
]


@pytest.mark.parametrize(("log", "want"), ECHOED, ids=[e[0].name for e in ECHOED])
def test_the_command_echoed_before_an_nvcc_fatal_line_is_read_back(log, want):
    from remedy.evidence.fields import preceding_commands

    symptoms, _, _ = scan_logs([log])
    fatal = [i for i, s in enumerate(symptoms) if s.signature == "nvcc-unsupported-arch"]
    assert fatal, "the nvcc fatal line is matched"
    got = preceding_commands(symptoms)[fatal[0]]
    assert {k: got.get(k) for k in want} == want


def test_fb9_wrapped_command_yields_its_whole_target_list():
    """The -gencode list of a command wrapped over six fixed-width lines is read whole."""
    from remedy.evidence.fields import preceding_commands

    symptoms, _, _ = scan_logs([CORPUS / "toolkit-knows-target-archs/fb-9.log"])
    i = next(i for i, s in enumerate(symptoms) if s.signature == "nvcc-unsupported-arch")
    targets = preceding_commands(symptoms)[i]["cmd_targets_list"].split()
    assert targets[:3] == ["12.1", "12.0", "11.0"] and targets[-1] == "5.0"
    assert len(targets) == 16


def test_no_command_before_a_bare_fatal_line():
    symptoms, _, _ = scan_logs([CORPUS / "toolkit-knows-target-archs/fd-2.log"])
    from remedy.evidence.fields import preceding_commands

    assert preceding_commands(symptoms) == {}


def test_lines_after_a_command_are_not_glued_to_it_unless_cut_at_one_width():
    from remedy.evidence.fields import _joined_command

    cmd = "/usr/local/cuda/bin/nvcc -c k.cu -o k.o -gencode=arch=compute_90,code=sm_90"
    # a short warning and a blank between the command and the fatal line: not the command's
    assert _joined_command([cmd, "warning: x", ""]) == cmd
    # a shell continuation is
    assert _joined_command([cmd + " \\", "  -std=c++17"]) == cmd + " -std=c++17"


# A rejected target named by no compute capability (Spack's default cuda_arch 'none' expanded by
# cuda_flags, a 'native' placeholder) comes from an arch list: no GPU has it, no toolkit knows it.
@pytest.mark.parametrize(
    "line",
    [
        "nvcc fatal   : Unsupported gpu architecture 'compute_none'",
        "nvcc fatal   : Unsupported gpu architecture 'sm_none'",
        "nvcc fatal   : Unsupported gpu architecture 'sm_native'",
    ],
)
def test_a_named_placeholder_target_is_the_arch_list(line):
    d = diagnose(load_knowledge(), None, _symptoms(line))
    ranked = [h.rule for h in d.hypotheses]
    assert ranked[:1] == ["toolkit-knows-target-archs"], ranked
    assert "arch-supported-by-toolkit" not in ranked
    assert any(f.startswith("named-placeholder-target") for f in d.hypotheses[0].matched_fields)


def test_a_numeric_target_is_not_read_as_a_placeholder():
    line = "nvcc fatal   : Unsupported gpu architecture 'sm_90'"
    d = diagnose(load_knowledge(), None, _symptoms(line))
    fields = [f for h in d.hypotheses for f in h.matched_fields]
    assert fields and not any(f.startswith("named-placeholder-target") for f in fields), fields
    assert "arch-supported-by-toolkit" in [h.rule for h in d.hypotheses]


# libtorch's only unmangled exports are its extern "C" shim (torch_*, aoti_torch_*,
# torch/csrc/stable/c/shim.h); any other unmangled name has no C++ ABI to mismatch.
@pytest.mark.parametrize(
    ("line", "torch_abi"),
    [
        ("OSError: /x/nvidia/cu13/lib/libcufile.so.0: undefined symbol: shm_open", False),
        ("ImportError: /x/ext.so: undefined symbol: clock_gettime", False),
        ("ImportError: /x/ext.so: undefined symbol: ncclCommInitRankScalable", False),
        (
            "OSError: /x/libtorchcodec_core7.so: undefined symbol: torch_dtype_float4_e2m1fn_x2",
            True,
        ),
        ("ImportError: /x/ext.so: undefined symbol: aoti_torch_dtype_float32", True),
        ("ImportError: /x/ext.so: undefined symbol: _ZN3c104cuda9SetDeviceEa", True),
    ],
)
def test_only_a_mangled_or_shim_symbol_reads_as_a_torch_abi_break(line, torch_abi):
    d = diagnose(load_knowledge(), None, _symptoms(line))
    ranked = [h.rule for h in d.hypotheses]
    assert ("extensions-match-torch-abi" in ranked) == torch_abi, ranked


@pytest.mark.parametrize(
    ("name", "cc"),
    [
        ("RTX 5060 Ti", "12.0"),
        ("RTX PRO 6000 Blackwell Server Edition", "12.0"),
        ("GB10", "12.1"),
        ("H100", "9.0"),
        ("RTX 4090", "8.9"),
        ("A100", "8.0"),
        ("T4", "7.5"),
        ("GTX 1080 Ti", "6.1"),
        ("RTX 6000", None),  # Quadro RTX 6000 (Turing), RTX 6000 Ada: the name cannot tell
        ("RTX 5000", None),
    ],
)
def test_gpu_model_names_map_to_their_compute_capability(name, cc):
    from remedy.evidence.fields import gpu_model_cc

    assert gpu_model_cc(name) == cc


# tune-ac (after round 27's fzp-12): a Windows loader names a CUDA library by its DLL, whose
# number is the library's own major, as the Linux soname's is
@pytest.mark.parametrize(
    ("dll", "soname"),
    [
        ("cublasLt64_12.dll", "libcublasLt.so.12"),
        ("cudart64_12.dll", "libcudart.so.12"),
        ("cublas64_13.dll", "libcublas.so.13"),
        ("cudnn64_9.dll", "libcudnn.so.9"),
        ("nvrtc64_120_0.dll", "libnvrtc.so.12"),
        ("nvJitLink_120_0.dll", "libnvJitLink.so.12"),
        ("cudart64_110.dll", "libcudart.so.11"),
        ("curand64_10.dll", "libcurand.so.10"),
        ("nvcuda.dll", None),
        ("onnxruntime_providers_cuda.dll", None),
        ("libcublasLt.so.12", None),
    ],
)
def test_a_cuda_dll_name_maps_to_its_soname(dll, soname):
    assert dll_soname(dll) == soname


def test_a_missing_dll_gets_the_fields_of_its_soname():
    line = (CORPUS / "runtime-libs-match-cuda-major/fzp-12.log").read_text().splitlines()[0]
    sym = next(s for s in _symptoms(line) if s.signature == "cuda-runtime-lib-not-found")
    assert sym.fields["shared_lib"] == "cublasLt64_12.dll"
    f = derived_fields(sym)
    # the same fields as 'libcublasLt.so.12: cannot open shared object file'
    linux = next(
        s
        for s in _symptoms("ImportError: libcublasLt.so.12: cannot open shared object file")
        if s.signature == "cuda-runtime-lib-not-found"
    )
    g = derived_fields(linux)
    assert (f["lib_name"], f["lib_cuda_majors"]) == (g["lib_name"], g["lib_cuda_majors"])
    assert f["lib_cuda_majors"] == "12"
    # cuRAND keeps major 10 in CUDA 12 and 13: both lines, whichever OS, say so
    rand = next(
        s
        for s in _symptoms(
            'Error loading "onnxruntime_providers_cuda.dll" which depends on "curand64_10.dll"'
            " which is missing."
        )
        if s.signature == "cuda-runtime-lib-not-found"
    )
    assert "," in derived_fields(rand)["lib_cuda_majors"]


# tune-ad: the link command echoed before 'cannot find -l<lib>' (ninja's line under FAILED:,
# setuptools' spawn) says whether any CUDA library directory was searched
LINKED = [
    (CORPUS / "unknown/fzs-5.log", {"cmd_link_cuda_libdir": "no"}),
    (TEMPLATES / "setuptools/ld-cuda-lib-no-cuda-libdir.log", {"cmd_link_cuda_libdir": "no"}),
    (
        TEMPLATES / "setuptools/ld-cuda-lib-cuda-libdir-searched.log",
        {"cmd_link_cuda_libdir": "yes"},
    ),
    (TEMPLATES / "torch-ext/cudart-link-derived-home.log", {"cmd_link_cuda_libdir": "no"}),
]


@pytest.mark.parametrize(("log", "want"), LINKED, ids=[e[0].name for e in LINKED])
def test_the_link_command_before_a_cannot_find_line_is_read_back(log, want):
    from remedy.evidence.fields import preceding_link_commands

    symptoms, _, _ = scan_logs([log])
    i = next(i for i, s in enumerate(symptoms) if s.signature == "ld-cannot-find-lib")
    assert {k: preceding_link_commands(symptoms)[i].get(k) for k in want} == want


def test_a_link_command_without_the_missing_library_is_not_read():
    from remedy.evidence.fields import link_command_fields

    cmd = "c++ a.o -shared -L/usr/local/cuda/lib64 -lcudart -o a.so"
    assert link_command_fields(cmd, "curand") == {}
    got = link_command_fields(cmd, "cudart")
    assert got == {"cmd_link_cuda_libdir": "yes", "cmd_link_dirs": "/usr/local/cuda/lib64"}
    # '-L dir' with a space, a wheel's lib dir
    got = link_command_fields(
        "g++ -shared x.o -L /venv/site-packages/nvidia/cu13/lib -lcublas", "cublas"
    )
    assert got["cmd_link_cuda_libdir"] == "yes"


def test_a_cuda_library_link_without_a_cuda_libdir_names_no_package_to_install():
    """fzs-5's shape: -lcurand after -L<torch>/lib only: needed-files-provided gets no credit;
    with the toolkit's lib64 on the command, the same line still names it."""
    kb = load_knowledge()
    for name, want in (
        ("ld-cuda-lib-no-cuda-libdir.log", []),
        ("ld-cuda-lib-cuda-libdir-searched.log", ["needed-files-provided"]),
    ):
        symptoms, _, wrappers = scan_logs([TEMPLATES / "setuptools" / name])
        ranked = [h.rule for h in diagnose(kb, None, symptoms, wrappers=wrappers).hypotheses]
        assert ranked[: len(want)] == want if want else ranked == [], (name, ranked)


# tune-af (round 30's fzx-3): only a CUDA Toolkit library's soname can say a CUDA major; the
# toolkit's names are read from the provider table, at any version of the library
@pytest.mark.parametrize(
    ("soname", "toolkit"),
    [
        ("libcudart.so.13", True),
        ("libcublasLt.so.11", True),  # CUDA 11: no pip line in the table, still a toolkit name
        ("libcudart.so.10.1", True),
        ("libnvrtc-builtins.so.12.8", True),
        ("libnvrtc-b51b459d.so.12", True),  # auditwheel's vendored copy
        ("libnvToolsExt.so.1", True),  # Debian's nvidia-cuda-dev
        ("libnuma.so.1", False),
        ("libgomp.so.1", False),
        ("libstdc++.so.6", False),
        ("libpython3.11.so.1.0", False),
        ("libssl.so.3", False),
        ("libibverbs.so.1", False),
        ("libmpi.so.40", False),
        ("libcudnn.so.9", False),  # CUDA-X, outside the toolkit: left to other signals
    ],
)
def test_only_toolkit_library_names_are_toolkit_libraries(soname, toolkit):
    assert lib_in_cuda_toolkit(soname) is toolkit


def test_a_system_library_gives_the_cuda_major_rule_no_credit():
    line = "ImportError: libnuma.so.1: cannot open shared object file"
    assert line in (CORPUS / "needed-files-provided/fzx-3.log").read_text()
    sym = next(s for s in _symptoms(line) if s.signature == "shared-lib-not-found")
    assert derived_fields(sym)["lib_cuda_toolkit"] == "no"
    d = diagnose(load_knowledge(), None, scan_logs([CORPUS / "needed-files-provided/fzx-3.log"])[0])
    ranks = [h.rule for h in d.hypotheses]
    assert ranks[0] == "needed-files-provided"
    assert ranks.index("runtime-libs-match-cuda-major") > 0


# tune-ar (rounds 39-43): which error check printed a bare 'no kernel image' (c10's, with its
# suffix on the lines below, vs a package's own form), and who spawned the nvcc that rejected
# an arch (setuptools, a torch build_ext targeting the visible GPU)
@pytest.mark.parametrize(
    ("lines", "want"),
    [
        (
            [
                "RuntimeError: CUDA error: no kernel image is available for execution on the device",
                "CUDA kernel errors might be asynchronously reported at some other API call, so "
                "the stacktrace below might be incorrect.",
            ],
            {"cuda_check": "c10"},
        ),
        (
            [
                "CUDA error: no kernel image is available for execution on the device",
                "  current device: 0, in function ggml_cuda_compute_forward at ggml-cuda.cu:2513",
            ],
            {},
        ),
        (["nvcc fatal   : Unsupported gpu architecture 'compute_86'"], {}),
        (
            [
                "nvcc fatal   : Unsupported gpu architecture 'compute_86'",
                "error: command '/usr/local/cuda-10.2/bin/nvcc' failed with exit status 1",
            ],
            {"build_spawn": "setuptools"},
        ),
    ],
    ids=["c10-suffix-below", "ggml-form", "nvcc-alone", "setuptools-below"],
)
def test_the_check_or_spawner_around_a_line_is_read_back(tmp_path, lines, want):
    from remedy.evidence.fields import check_contexts

    log = tmp_path / "x.log"
    log.write_text("\n".join(lines) + "\n")
    symptoms, _, _ = scan_logs([log])
    got = check_contexts(symptoms)
    assert (got.get(0) or {}) == want, got


@pytest.mark.parametrize(
    ("file", "want"),
    [
        ("torch/no-kernel-image-accelerator-error.log", "wheel-has-gpu-arch"),
        ("torch/no-kernel-image-ggml-near-miss.log", "package-has-gpu-arch"),
        ("nvcc/unsupported-arch-setuptools-gpu-target.log", "arch-supported-by-toolkit"),
        ("nvcc/unsupported-arch-setuptools-arch-list-near-miss.log", "toolkit-knows-target-archs"),
    ],
)
def test_the_check_or_spawner_decides_between_two_rules_of_one_line(file, want):
    symptoms, _, wrappers = scan_logs([TEMPLATES / file])
    d = diagnose(load_knowledge(), None, symptoms, wrappers=wrappers)
    assert [h.rule for h in d.hypotheses[:1]] == [want], [(h.rule, h.score) for h in d.hypotheses]
    assert len(d.hypotheses) >= 2, "the rival stays ranked, with its settling fact"


def test_a_warning_only_cause_yields_to_a_later_unexplained_error(tmp_path):
    """XLA's driver warning alone names driver-supports-build-cuda (gcn-4); followed by a
    failure no rule explains, it names nothing, and the later line is what is shown."""
    from remedy.evidence.suspicious import with_unexplained

    kb = load_knowledge()
    alone = scan_logs([CORPUS / "driver-supports-build-cuda/gcn-4.log"])
    d = diagnose(kb, None, alone[0], wrappers=alone[2])
    assert [h.rule for h in d.hypotheses[:1]] == ["driver-supports-build-cuda"]
    log = tmp_path / "x.log"
    log.write_text(
        (CORPUS / "driver-supports-build-cuda/gcn-4.log").read_text()
        + "ValueError: Failed to parse input JSON: Expecting ',' delimiter: line 14\n"
    )
    symptoms, suspicious, wrappers = scan_logs([log])
    d = diagnose(kb, None, symptoms, wrappers=wrappers)
    assert d.hypotheses == []
    shown = with_unexplained(suspicious, symptoms, wrappers, d.hypotheses)
    assert shown and shown[0].text.startswith("ValueError"), shown


# tune-av: a library's arch gate in its own words; the numbers say which side the GPU is on
CAPABILITY_LINES = [
    (
        "ValueError: SGLANG_VQ_FP8_FMT=e4m3 requires compute capability >= 8.9 (this device is sm86)",
        "yes",
    ),
    ("AssertionError: Marlin kernels require compute capability >= 8.0 (got 7.5)", "yes"),
    (
        "RuntimeError: device NVIDIA GeForce GTX 1080 Ti reports compute capability 6.1; "
        "Strata requires compute capability >= 8.0",
        "yes",
    ),
    ("RuntimeError: FP8 requires compute capability 8.9 or higher, but the GPU has 8.6", "yes"),
    ("RuntimeError: bf16 is not supported on this GPU (compute capability 7.5)", "yes"),
    ("RuntimeError: bf16 is not supported on this GPU (compute capability 9.0)", "no"),
    ("RuntimeError: FP8 requires compute capability 8.9 or higher, but found 9.0", "no"),
]


def test_a_floor_below_sm70_is_a_builds_lowest_arch_not_a_feature() -> None:
    """A GPU below a floor of 3.5 or 5.2 is outside a build's arch list (TensorRT Inference
    Server 'supports CUDA Compute Capability 5.2 and later', corpus package-has-gpu-arch/gda-10),
    not a kernel feature the hardware lacks: the comparison holds, the field signal does not
    apply. TensorFlow's 'Ignoring visible gpu device ... The minimum required Cuda capability is
    3.5' announces what it skips and is not read at all (package-has-gpu-arch, its own shape)."""
    line = "RuntimeError: this server requires compute capability >= 5.2, the device has 3.7"
    syms = [s for s in _symptoms(line) if s.signature == "error-states-compute-capability"]
    fields = derived_fields(syms[0])
    assert (fields["capability_short"], fields["capability_floor"]) == ("yes", "5.2")
    assert diagnose(load_knowledge(), None, _symptoms(line)).hypotheses == []
    tf = (
        "I tensorflow/core/common_runtime/gpu/gpu_device.cc:2019] Ignoring visible gpu device"
        " (device: 0, name: NVIDIA GeForce GTX 660, pci bus id: 0000:01:00.0, compute"
        " capability: 3.0) with Cuda compute capability 3.0. The minimum required Cuda"
        " capability is 3.5."
    )
    hyps = diagnose(load_knowledge(), None, _symptoms(tf)).hypotheses
    assert [h.rule for h in hyps][:1] == ["package-has-gpu-arch"]


@pytest.mark.parametrize(("line", "short"), CAPABILITY_LINES)
def test_a_stated_capability_floor_is_compared_with_the_devices(line: str, short: str) -> None:
    """tune-av: the floor (after 'requires'/'>=', before 'or higher', or a refused bf16/fp8's
    first architecture) and the device's own value are read from the line, in either order;
    only a device below the floor makes the line evidence for kernel-arch-feature."""
    syms = [s for s in _symptoms(line) if s.signature == "error-states-compute-capability"]
    assert syms and derived_fields(syms[0]).get("capability_short") == short
    hyps = diagnose(load_knowledge(), None, _symptoms(line)).hypotheses
    assert ([h.rule for h in hyps][:1] == ["kernel-arch-feature"]) == (short == "yes")


def test_a_version_beside_a_capability_is_not_read_as_the_devices() -> None:
    """'requires CUDA >= 12.3 and compute capability 9.0' states no device value: a CUDA (or
    torch) version is never taken for a capability, so nothing is concluded."""
    line = "RuntimeError: FA3 requires CUDA >= 12.3 and compute capability 9.0"
    syms = [s for s in _symptoms(line) if s.signature == "error-states-compute-capability"]
    assert syms and "capability_short" not in derived_fields(syms[0])


# tune-az: the GPU a log names beside an arch refusal (nvidia-smi -L, collect_env) says whether
# the refused target is the GPU's own or an arch list's, and whether a gate's family floor
# ('Ampere GPUs or newer') is really above the GPU
NAMED_GPU = [
    (
        [
            "GPU 0: NVIDIA GeForce RTX 4090",
            "nvcc fatal   : Unsupported gpu architecture 'compute_89'",
        ],
        "nvcc-unsupported-arch",
        {"target_vs_log_gpu": "same"},
    ),
    (
        [
            "GPU 0: NVIDIA GeForce RTX 3090",
            "nvcc fatal   : Unsupported gpu architecture 'compute_90'",
        ],
        "nvcc-unsupported-arch",
        {"target_vs_log_gpu": "other"},
    ),
    (
        ["GPU 0: NVIDIA B200", "RuntimeError: FlashAttention only supports Ampere GPUs or newer."],
        "gpu-below-required-capability",
        {"log_gpu_vs_floor": "above"},
    ),
    (
        ["GPU 0: Tesla T4", "RuntimeError: FlashAttention only supports Ampere GPUs or newer."],
        "gpu-below-required-capability",
        {"log_gpu_vs_floor": "below"},
    ),
]


@pytest.mark.parametrize(("lines", "sig", "want"), NAMED_GPU)
def test_a_named_gpu_is_compared_with_the_refused_arch(lines, sig, want):
    syms = scan_lines(lines).symptoms
    views = symptom_views(syms)
    got = [v for s, v in zip(syms, views, strict=True) if s.signature == sig]
    assert got, [s.signature for s in syms]
    for key, value in want.items():
        assert got[0].get(key) == value, got[0]


def test_without_a_named_gpu_the_refused_arch_is_not_compared():
    syms = scan_lines(["nvcc fatal   : Unsupported gpu architecture 'compute_89'"]).symptoms
    views = symptom_views(syms)
    assert all("target_vs_log_gpu" not in v for v in views)


# tune-cv: the nvcc a log's own banner names beside an arch refusal says whether a refused
# target at or below sm_72 was RETIRED by that nvcc (a stale arch list) or never known to it
# (an nvcc older than the target: release 7.5 refusing compute_61, AlexeyAB/darknet#1579)
LOG_NVCC = [
    # an nvcc older than the target: the retired reading is withdrawn, neither class excluded
    (
        [
            "nvcc fatal   : Unsupported gpu architecture 'compute_61'",
            "Cuda compilation tools, release 7.5, V7.5.17",
        ],
        "7.5",
        False,
    ),
    (
        [
            "-- The CUDA compiler identification is NVIDIA 8.0.61",
            "nvcc fatal   : Unsupported gpu architecture 'compute_70'",
        ],
        "8.0",
        False,
    ),
    # near misses: an nvcc that knew the target and dropped it (CUDA 13.0 on Pascal), and an
    # nvcc 8.0 on a Pascal target it knows (only a list's other entry could be refused)
    (
        [
            "nvcc fatal   : Unsupported gpu architecture 'compute_61'",
            "Cuda compilation tools, release 13.0, V13.0.88",
        ],
        "13.0",
        True,
    ),
    (
        [
            "Cuda compilation tools, release 9.0, V9.0.176",
            "nvcc fatal   : Unsupported gpu architecture 'compute_70'",
        ],
        "9.0",
        True,
    ),
]


@pytest.mark.parametrize(("lines", "release", "retired"), LOG_NVCC)
def test_a_refused_old_target_is_retired_only_by_an_nvcc_newer_than_it(lines, release, retired):
    syms = scan_lines(lines).symptoms
    views = symptom_views(syms)
    got = [v for s, v in zip(syms, views, strict=True) if s.signature == "nvcc-unsupported-arch"]
    assert got and got[0].get("log_nvcc_release") == release, got
    hyps = diagnose(load_knowledge(), None, syms).hypotheses
    fields = [f for h in hyps for f in h.matched_fields]
    assert any(f.startswith("retired-arch-is-a-target-list") for f in fields) == retired, fields
    assert [h.rule for h in hyps][:1] == ["toolkit-knows-target-archs"]


def test_without_an_nvcc_banner_the_refused_arch_has_no_log_nvcc():
    syms = scan_lines(["nvcc fatal   : Unsupported gpu architecture 'compute_61'"]).symptoms
    assert all("log_nvcc_release" not in v for v in symptom_views(syms))


# tune-ba: the traceback above "No such file or directory: 'ninja'" names the Python that ran
# ninja; a package that declares pip's ninja, in an environment whose bin/ is not a default
# PATH dir, makes the line jit-ninja-on-path's (knowledge/field-signals.yaml)
FRAMES = [
    (CORPUS / "jit-ninja-on-path/gdc-1.log", "vllm@/opt/venv", ["jit-ninja-on-path"]),
    (
        CORPUS.parent / "templates/jit/vllm-ninja-missing-conda-env.log",
        "vllm@/home/svc/miniconda3/envs/vllm,flashinfer@/home/svc/miniconda3/envs/vllm",
        ["jit-ninja-on-path"],
    ),
    (  # the image's system Python: /usr/local/bin is on every default PATH
        CORPUS.parent / "templates/jit/vllm-ninja-missing-system-python.log",
        "vllm@/usr/local,flashinfer@/usr/local",
        [],
    ),
    (  # torch does not declare ninja: a venv alone says nothing of where ninja is
        CORPUS.parent / "templates/jit/mmcv-ninja-missing-venv.log",
        "torch@/home/dev/venv",
        [],
    ),
]


@pytest.mark.parametrize(("log", "pkgs", "want"), FRAMES, ids=[f[0].name for f in FRAMES])
def test_the_traceback_above_a_missing_ninja_names_its_environment(log, pkgs, want):
    from remedy.evidence.fields import frame_contexts

    symptoms, _, wrappers = scan_logs([log])
    i = next(i for i, s in enumerate(symptoms) if s.signature == "ninja-missing")
    assert frame_contexts(symptoms)[i]["frame_packages"] == pkgs
    d = diagnose(load_knowledge(), None, symptoms, wrappers=wrappers)
    assert [h.rule for h in d.hypotheses[:1]] == want


def test_a_windows_frame_names_its_environment_with_forward_slashes():
    from remedy.evidence.fields import frame_fields

    text = r'  File "C:\Users\a\venv\Lib\site-packages\flashinfer\jit\cpp_ext.py", line 302'
    assert frame_fields(text) == {"frame_packages": "flashinfer@C:/Users/a/venv"}


# tune-if: ComfyUI prints the message first and the frames under it; the frames of a Windows
# portable bundle (python_embeded, whose Scripts\ is never on PATH) say where pip's ninja is
EMBEDDED = [
    (CORPUS / "jit-ninja-on-path/hwj-1.log", ["jit-ninja-on-path"]),
    (
        CORPUS.parent / "templates/comfyui/portable-ninja-required-message-first.log",
        ["jit-ninja-on-path"],
    ),
    (CORPUS.parent / "templates/comfyui/venv-ninja-required-message-first.log", []),
]


@pytest.mark.parametrize(("log", "want"), EMBEDDED, ids=[f[0].name for f in EMBEDDED])
def test_frames_under_a_missing_ninja_name_a_bundled_python(log, want):
    from remedy.evidence.fields import frame_contexts

    symptoms, _, wrappers = scan_logs([log])
    i = next(i for i, s in enumerate(symptoms) if s.signature == "ninja-missing")
    assert "frame_files" in frame_contexts(symptoms)[i]
    d = diagnose(load_knowledge(), None, symptoms, wrappers=wrappers)
    assert [h.rule for h in d.hypotheses[:1]] == want


def test_frame_files_lists_each_frame_with_forward_slashes():
    from remedy.evidence.fields import frame_file_fields

    text = (
        r'File "D:\A B\ComfyUI_windows_portable\ComfyUI\execution.py", line 152, in x '
        r'  File "/usr/lib/python3/x.py", line 3, in y'
    )
    assert frame_file_fields(text) == {
        "frame_files": "D:/A B/ComfyUI_windows_portable/ComfyUI/execution.py,/usr/lib/python3/x.py"
    }


# tune-br: an Inductor module frame above Triton's 'device kernel image is invalid' is Inductor's
# code-cache file (c + 51 base32 chars) in a torch.compile run, any other file a saved module
# run by itself (corpus unknown/fzr-7, pytorch/pytorch#141744)
@pytest.mark.parametrize(
    ("name", "want"),
    [
        (
            "/tmp/torchinductor_bob/ab/cabfhk2x7nq4mz5w3rj6ytvd2oelp7sgu4ic5xqa3mhn6zb2kwy7.py",
            "cache",
        ),
        (
            "/home/bob/torch_compile_debug/run_1/torchinductor/model__0_forward_1.0/output_code.py",
            "saved",
        ),
        ("/home/bob/repro.py", "saved"),
        # a shorter hash is no cache key
        (
            "/tmp/torchinductor_bob/ab/cabfhk2x7nq4mz5w3rj6ytvd2oelp7sgu4ic5xqa3mhn6zb2kw.py",
            "saved",
        ),
    ],
)
def test_an_inductor_module_frame_says_cache_or_saved(name, want):
    from remedy.evidence.fields import inductor_module_fields

    text = (
        f"File \"{name}\", line 40, in <module> triton_poi_0 = async_compile.triton('triton_', '''"
    )
    assert inductor_module_fields(text) == {"inductor_module": want}
    assert inductor_module_fields(f'File "{name}", line 40, in <module> y = f(x)') == {}


# tune-ax: the files a post lists next to the loader's line (ls, ls -l, find, ldconfig -p,
# ldd's resolved form) say whether the missing soname's major is installed (corpus
# unknown/gdk-8, ollama/ollama#602: libcudart.so.12 missing, 'ls -al' shows libcudart.so.12.0)
@pytest.mark.parametrize(
    ("soname", "lines", "want"),
    [
        (
            "libcudart.so.12",
            ["-rwxr-xr-x 1 ollama ollama    687456 Sep 26 06:27 libcudart.so.12.0"],
            "same-major",
        ),
        (
            "libcudart.so.12",
            ["/usr/local/lib/python3.11/site-packages/nvidia/cuda_runtime/lib/libcudart.so.12"],
            "same-major",
        ),
        ("libcudart.so.12", ["libcublas.so.12  libcudart.so.12.4.127  server"], "same-major"),
        (
            "libcudart.so.12",
            ["\tlibcudart.so.12 (libc6,x86-64) => /usr/local/cuda/lib64/libcudart.so.12"],
            "same-major",
        ),
        ("libcudart.so.11.0", ["/usr/local/cuda-11.8/lib64/libcudart.so.11.8.89"], "same-major"),
        (
            "libcudart.so.12",
            ["/usr/local/cuda-11.8/lib64/libcudart.so.11.0", "libcudart.so.13"],
            "other-major",
        ),
        # not listings: ldd's unresolved line, prose naming the file, another library
        ("libcudart.so.12", ["\tlibcudart.so.12 => not found"], None),
        (
            "libnvrtc-builtins.so.12",
            ["  Make sure that libnvrtc-builtins.so.12.1 is installed correctly."],
            None,
        ),
        ("libcudart.so.12", ["-rw-r--r-- 1 root root 1 Mar 1 10:00 libcublas.so.12.4.5.8"], None),
    ],
)
def test_a_listed_file_of_the_missing_soname_says_which_major_is_there(soname, lines, want):
    from remedy.evidence.fields import listing_fields

    assert listing_fields(soname, lines).get("lib_listed") == want


def test_a_listing_of_the_same_major_withdraws_the_cuda_major_claim(tmp_path: Path) -> None:
    log = tmp_path / "ollama.log"
    log.write_text(
        "error while loading shared libraries: libcudart.so.12: cannot open shared object file:"
        " No such file or directory\n"
        "-rwxr-xr-x 1 ollama ollama    687456 Sep 26 06:27 libcudart.so.12.0\n"
    )
    symptoms, _, wrappers = scan_logs([log])
    assert diagnose(load_knowledge(), None, symptoms, wrappers=wrappers).hypotheses == []
    log.write_text(log.read_text().replace("libcudart.so.12.0", "libcudart.so.11.8.89"))
    symptoms, _, wrappers = scan_logs([log])
    d = diagnose(load_knowledge(), None, symptoms, wrappers=wrappers)
    assert [h.rule for h in d.hypotheses[:1]] == ["runtime-libs-match-cuda-major"]


def test_a_refusal_that_states_only_its_floor() -> None:
    """tune-cc (round 63's kernel-arch-feature/gnh-1): a gate that states its floor alone, the
    architecture's name between the number and 'or higher', reads ('unstated', floor); a floor
    of 7.0 or more is evidence for kernel-arch-feature, a lower one (a build's lowest arch) is
    not, and a version that is not a capability gives no floor."""
    line = (
        "RuntimeError: GPU compute capability 8.0 (Ampere) or higher is required to install kernl"
    )
    syms = [s for s in _symptoms(line) if s.signature == "error-states-compute-capability"]
    fields = derived_fields(syms[0])
    assert (fields["capability_short"], fields["capability_floor"]) == ("unstated", "8.0")
    hyps = diagnose(load_knowledge(), None, _symptoms(line)).hypotheses
    assert [h.rule for h in hyps][:1] == ["kernel-arch-feature"]
    low = "RuntimeError: GPU compute capability 5.2 (Maxwell) or higher is required"
    assert diagnose(load_knowledge(), None, _symptoms(low)).hypotheses == []
    cuda = "RuntimeError: CUDA 12.3 (Hopper) or higher is required, compute capability check"
    syms = [s for s in _symptoms(cuda) if s.signature == "error-states-compute-capability"]
    assert all("capability_short" not in derived_fields(s) for s in syms)


# tune-ce (session 42): the driver a log states against the CUDA the refusing binary was built
# with (Warp's banner), judged by the version-pairs relation driver-min (cuda-releases.yaml)
SMI = "| NVIDIA-SMI {d}   Driver Version: {d}   CUDA Version: {c}     |"
WARP_35 = (
    "Warp CUDA error 35: CUDA driver version is insufficient for CUDA runtime version"
    " (in function wp_cuda_set_device, /builds/omniverse/warp/warp/native/warp.cu:2104)"
)
STATED_DRIVER = [
    (["Warp 1.10.0 initialized:", "   CUDA Toolkit 13.0, Driver 12.4", WARP_35], "below"),
    (["Warp 1.10.0 initialized:", "   CUDA Toolkit 12.8, Driver 12.9", WARP_35], "meets"),
    # same major, older minor: only minor version compatibility (Table 2) runs it
    (["Warp 1.10.0 initialized:", "   CUDA Toolkit 12.8, Driver 12.4", WARP_35], "compat"),
    # nvidia-smi's exact branch wins over the banner's CUDA: 570.26 is 12.8's minimum
    (["   CUDA Toolkit 12.8, Driver 12.8", SMI.format(d="565.57.01", c="12.7"), WARP_35], "compat"),
    (["   CUDA Toolkit 12.8, Driver 12.8", SMI.format(d="570.133.20", c="12.8"), WARP_35], "meets"),
    (["   CUDA Toolkit 12.8, Driver 12.8", SMI.format(d="470.256.02", c="11.4"), WARP_35], "below"),
    # a driver and no build CUDA, or torch's CUDA only (not judged here): nothing
    ([SMI.format(d="570.133.20", c="12.8"), WARP_35], None),
    (["PyTorch version: 2.5.1+cu124", SMI.format(d="470.256.02", c="11.4"), WARP_35], None),
]


@pytest.mark.parametrize(("lines", "want"), STATED_DRIVER)
def test_a_stated_driver_is_judged_against_the_stated_build_cuda(lines, want):
    syms = scan_lines(lines).symptoms
    views = with_stated_driver_fit(
        symptom_views(syms), [s.signature for s in syms], _driver_judge(load_knowledge())
    )
    got = [v for s, v in zip(syms, views, strict=True) if s.signature == "driver-too-old"]
    assert got, [s.signature for s in syms]
    assert got[0].get("driver_fit_binary") == want, got[0]
    # only the 35 line carries it
    others = [v for s, v in zip(syms, views, strict=True) if s.signature != "driver-too-old"]
    assert all("driver_fit_binary" not in v for v in others)
