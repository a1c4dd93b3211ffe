"""`remedy diagnose --log` on logs that match no known cause: say so, show the first real
error, say which facts to collect."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from remedy.cli import app

CORPUS = Path(__file__).resolve().parent / "fixtures" / "corpus"


def remedy(*args: str):
    """The CLI in-process (the same app `python -m remedy` runs), wide enough not to wrap."""
    return CliRunner().invoke(app, list(args), env={"COLUMNS": "400"})


def test_unknown_ninja_failure_text_says_so_and_points_at_the_diagnostic():
    """vllm-project/vllm#36584: nvcc errors inside CUTLASS headers, every line prefixed
    'ERROR' by vLLM's logger; the first compiler diagnostic comes first, not a logger line."""
    log = CORPUS / "unknown" / "1.log"
    r = remedy("diagnose", "--log", str(log))
    assert r.exit_code == 0, r.output
    out = r.stdout
    assert "No known failure matches this log." in out
    assert "Most suspicious lines" in out
    first = out.split("Most suspicious lines", 1)[1].splitlines()[1]
    assert f"{log}:2" in first
    assert "Collect next" in out and "remedy facts" in out


def test_unknown_log_json_contract():
    r = remedy("diagnose", "--log", str(CORPUS / "unknown" / "2.log"), "--json")
    assert r.exit_code == 0, r.output
    d = json.loads(r.stdout)
    assert d["hypotheses"] == [] and d["findings"] == []
    assert d["suspicious"][0]["line"] == 4  # src/core.cu(717): error: identifier "so" ...
    assert "compiler/linker diagnostic" in d["suspicious"][0]["reason"]
    assert d["collect_next"]


def test_wrapper_only_log_names_no_cause():
    """Only 'ninja: build stopped' matched (sgl-project/sglang#7855, the tail of a JIT
    failure): a wrapper proves nothing, so no hypothesis; the error lines are shown."""
    r = remedy("diagnose", "--log", str(CORPUS / "unknown" / "3.log"), "--json")
    d = json.loads(r.stdout)
    assert [s["signature"] for s in d["symptoms"]] == ["ninja-subcommand-failed"]
    assert d["hypotheses"] == []
    assert d["suspicious"][0]["text"] == "Error limit reached."


def test_known_log_json_carries_confirm_and_partial_facts():
    r = remedy(
        "diagnose", "--log", str(CORPUS / "runtime-libs-match-cuda-major" / "1.log"), "--json"
    )
    d = json.loads(r.stdout)
    top = d["hypotheses"][0]
    assert top["rule"] == "runtime-libs-match-cuda-major"
    assert top["confirm_with"] and top["distinguishes_from"]
    assert d["partial_facts"]["shared_lib"] == "libnvrtc.so.12"


TEMPLATES = Path(__file__).resolve().parent / "fixtures" / "templates"


def test_rust_panic_is_the_first_error_even_indented_by_cargo():
    """A Rust panic ('thread 'main' panicked at FILE:LINE:COL:') holds no error word; the
    line is the statement of the failure (round 43's unknown/gcp-3, cudarc's libcuda lookup),
    and stays one when cargo indents a build script's stderr (round 31's unknown/gad-1, where
    a later 'warning: build failed' outranked it)."""
    r = remedy(
        "diagnose",
        "--log",
        str(TEMPLATES / "rust" / "cudarc-libcuda-not-found-panic.log"),
        "--json",
    )
    d = json.loads(r.stdout)
    assert d["hypotheses"] == []
    assert d["suspicious"][0]["line"] == 1
    r = remedy("diagnose", "--log", str(CORPUS / "unknown" / "gad-1.log"), "--json")
    d = json.loads(r.stdout)
    assert d["suspicious"][0]["line"] == 4, d["suspicious"][:2]


def test_message_wrapped_inside_a_quote_bar_is_joined():
    """A quoted copy wraps ptxas' message and carries the quote bar ('│', '▎', '> ') into the
    second half (round 43's triton-ptxas-knows-arch/gco-7): the halves are joined without it."""
    for name in ("gpu-name-unknown-wrapped-box-quote", "gpu-name-unknown-wrapped-markdown-quote"):
        r = remedy("diagnose", "--log", str(TEMPLATES / "ptxas" / f"{name}.log"), "--json")
        d = json.loads(r.stdout)
        assert [s["signature"] for s in d["symptoms"]] == ["ptxas-unknown-gpu-name"], name
        assert d["symptoms"][0]["line"] == 1


def test_traceback_cut_before_its_exception_shows_no_error_line(tmp_path: Path):
    """A copy cut inside the frames (round 43's unknown/gcp-2) holds no statement of the
    failure: the header alone is not shown as the first error; with the exception line
    after it, that line is."""
    frames = [
        "Traceback (most recent call last):",
        '  File "/app/main.py", line 3, in <module>',
        "    ray.init()",
        '  File "/venv/lib/python3.10/site-packages/ray/_private/worker.py", line 1642, in init',
        "    _global_node = ray._private.node.Node(",
    ]
    cut = tmp_path / "cut.log"
    cut.write_text("\n".join(frames) + "\n")
    d = json.loads(remedy("diagnose", "--log", str(cut), "--json").stdout)
    assert d["hypotheses"] == [] and d["suspicious"] == []
    whole = tmp_path / "whole.log"
    whole.write_text("\n".join([*frames, "KeyError: 'accelerator_type'"]) + "\n")
    d = json.loads(remedy("diagnose", "--log", str(whole), "--json").stdout)
    assert d["suspicious"][0]["line"] == 6


def _diagnosed(path: Path) -> dict:
    r = remedy("diagnose", "--log", str(path), "--json")
    assert r.exit_code == 0, r.output
    return json.loads(r.stdout)


def _names_none_points_at(path: Path, lines: list[str], first: int) -> None:
    """``lines`` written to ``path``: no cause named, the first suspicious line is ``first``."""
    path.write_text("\n".join(lines) + "\n")
    d = _diagnosed(path)
    assert d["hypotheses"] == [], (path.name, lines, d["hypotheses"])
    assert [s["line"] for s in d["suspicious"][:1]] == [first], (lines, d["suspicious"][:3])


def test_a_verdict_without_an_error_word_is_the_first_error_of_a_short_log(tmp_path: Path):
    """tune-av (round 47's first-error misses: unknown/gcq-1, gcs-12, gcz-5, gda-5, gda-7): a
    short copy whose failure is worded without any error word (a Python message quoted
    without its exception name, a shell's 'not found', a library's own check) shows its first
    such line, not nothing; a lone 'UserWarning:' heading states nothing."""
    cases = {
        "shell.log": (["Apptainer 1.1.9 loaded", "/bin/sh: 1: exec: --gpus: not found"], 2),
        "module.log": (["No module named 'sageattention._qattn_sm80'"], 1),
        "plan.log": (
            [
                "[I] Loading engine from model.plan",
                "The engine plan file is not compatible with this version of TensorRT",
            ],
            2,
        ),
        "container.log": (
            [
                "== Triton Inference Server ==",
                "WARNING: Detected NVIDIA L4 GPU, which is not yet supported by this container",
            ],
            2,
        ),
        "heading.log": (["UserWarning:", "    The GPU dependencies are not loaded."], 2),
    }
    for name, (lines, first) in cases.items():
        _names_none_points_at(tmp_path / name, lines, first)
    # only where nothing looks like an error, and only in a short log (a quoted copy): a
    # journal of hundreds of lines with a 'not found' in it shows none
    p = tmp_path / "both.log"
    p.write_text("tritonserver: not found\nRuntimeError: model repository is empty\n")
    assert [s["line"] for s in _diagnosed(p)["suspicious"][:1]] == [2]
    long = tmp_path / "long.log"
    long.write_text("".join(f"step {i}: ok\n" for i in range(300)) + "exec: --nv: not found\n")
    assert _diagnosed(long)["suspicious"] == []


def test_the_echoed_raise_line_is_code_not_the_first_statement(tmp_path: Path):
    """tune-av (round 47's unknown/gcz-2): the traceback's echo of the raising source line
    quotes the exception's message; it is code, so the exception line is the first error
    (a logger's earlier line stating the same message still is)."""
    p = tmp_path / "raise.log"
    p.write_text(
        '  File "/venv/lib/python3.11/site-packages/transformers/training_args.py", line 1574,'
        " in __post_init__\n"
        '    raise ValueError("--optim adamw_torch_fused with --fp16 needs PyTorch>2.0 here")\n'
        "ValueError: --optim adamw_torch_fused with --fp16 needs PyTorch>2.0 here\n"
    )
    assert [s["line"] for s in _diagnosed(p)["suspicious"][:1]] == [3]


def test_a_compiled_op_frame_names_no_cause_above_an_unexplained_type_error(tmp_path: Path):
    """tune-av (round 47's unknown/gcz-1): the source line of a frame that calls flash-attn's
    compiled op is context for a CUDA error; above a TypeError no rule takes (a wrong argument
    type), it names no cause. Above 'no kernel image' it still does (corpus
    package-has-gpu-arch/3)."""
    frame = "    out, q, k, v, out_padded, softmax_lse, S_dmask, rng_state = flash_attn_2_cuda.fwd("
    p = tmp_path / "typeerror.log"
    p.write_text(
        frame + "\n"
        "TypeError: fwd(): incompatible function arguments. The following argument types are"
        " supported:\n"
    )
    d = _diagnosed(p)
    assert d["hypotheses"] == [] and d["suspicious"][0]["line"] == 2
    p.write_text(
        frame + "\nRuntimeError: CUDA error: no kernel image is available for execution"
        " on the device\n"
    )
    assert _diagnosed(p)["hypotheses"][0]["rule"] == "package-has-gpu-arch"


def test_a_compilers_tally_ranks_below_the_diagnostic_it_counts() -> None:
    """NVIDIA HPC compilers end with '0 inform, 0 warnings, 1 severes, 0 fatal for X': its
    '0 fatal' is a count, not a verdict (corpus unknown/gdl-2)."""
    from remedy.evidence.suspicious import base_score

    tally = "  0 inform,   0 warnings,   1 severes, 0 fatal for mbd_c_api"
    severe = "NVFORTRAN-S-0000-Internal compiler error. unexpected ast type in initialization expr"
    assert base_score(tally)[0] < base_score(severe)[0]


def test_a_bare_warning_yields_to_a_later_verdict_in_a_log_without_errors(tmp_path: Path) -> None:
    """Meson's notice about an unstable module is no statement of the failure; its 'found: NO'
    under it is (corpus unknown/gdk-9). A Python warning category heads its message and stays."""
    from remedy.evidence.suspicious import verdict_lines
    from remedy.inputs import scan_logs

    log = tmp_path / "meson.log"
    log.write_text(
        "Host machine cpu: x86_64\n"
        "../meson.build:18: WARNING: Module unstable-cuda has no backwards or forwards"
        " compatibility and might not exist in future releases.\n"
        "Run-time dependency CUDA (modules: cudart) found: NO \n"
    )
    scan_logs([log])  # the lines are read back only from a log the scan checked
    assert [s.line for s in verdict_lines([str(log)])] == [3]
    log = tmp_path / "jax.log"
    log.write_text(
        "RuntimeWarning: JAX plugin jax_cuda12_plugin version 0.9.2 is installed,\n"
        "but it is not compatible with the installed jaxlib version 0.9.0.1\n"
    )
    scan_logs([log])
    assert [s.line for s in verdict_lines([str(log)])] == [1]


def test_vllm_logger_header_on_every_traceback_line_leaves_the_exception_first() -> None:
    """vLLM's NewLineFormatter repeats 'ERROR <date> [file:line] ' on each traceback line: the
    frames under it still rank below the exception line (tune-bf, null fd-6)."""
    from remedy.evidence.suspicious import base_score

    head = "ERROR 11-02 14:03:11 [core.py:700] "
    frame = head + '  File "/usr/lib/python3.12/site-packages/vllm/v1/engine/core.py", line 9'
    exc = head + "torch.distributed.DistBackendError: NCCL error in: ProcessGroupNCCL.cpp:3356"
    worker = "(EngineCore_DP0 pid=5123) " + frame
    assert base_score(frame)[0] < base_score(exc)[0]
    assert base_score(worker)[0] < base_score(exc)[0]
    # a header over a message that is not a frame keeps its error-word score
    assert base_score(head + "Engine core failed to start.")[0] >= 3.0


def test_a_process_death_line_is_the_first_error_only_where_nothing_states_a_cause(
    tmp_path: Path,
) -> None:
    """tune-cb (round 62's unknown/gmk-1, gml-1): the shell's report that the process died of a
    signal (bash jobs.c printable_job_status: strsignal()'s text, ' (core dumped)' where a
    core was written) holds no error word; alone it is the statement of a crash that printed
    nothing of its own. It states the end, not the cause: any line above it that looks like
    an error, or a verdict worded without an error word (corpus unknown/fzs-2), goes first."""
    alone = {
        "sigill.log": ["$ python3 -c 'import numpy'", "Illegal instruction (core dumped)"],
        "sigabrt.log": [">>> import cv2", "Aborted"],
        "sigkill.log": ["Loading checkpoint shards:  40%", "Killed"],
        "bash.log": ["./run.sh: line 7: 48213 Bus error               (core dumped) ./infer"],
        "trap.log": ["[1]+  Trace/breakpoint trap   (core dumped) ./bench --gpu 0"],
    }
    for name, lines in alone.items():
        _names_none_points_at(tmp_path / name, lines, len(lines))
    above = {
        "what.log": (
            ["llama_model_load: loading model.gguf", "  failed to read tensor data", "Aborted"],
            2,
        ),
        "verdict.log": (
            ["Sanity Checking: 0%", "Cannot load symbol cudnnGetVersion", "Aborted (core dumped)"],
            2,
        ),
    }
    for name, (lines, first) in above.items():
        p = tmp_path / name
        p.write_text("\n".join(lines) + "\n")
        d = _diagnosed(p)
        assert [s["line"] for s in d["suspicious"][:1]] == [first], (name, d["suspicious"])
    # a signal named inside a sentence is not the shell's report: it scores as any error word
    prose = tmp_path / "prose.log"
    prose.write_text("the worker was Killed by the scheduler after 2 h\n")
    assert [s["score"] for s in _diagnosed(prose)["suspicious"]] == [3.0]


def test_a_build_without_the_gpu_backend_is_the_first_error_of_a_short_log(tmp_path: Path):
    """tune-cb (round 61's unknown/gmd-1): a build's own statement that it lacks the GPU backend,
    quoted without the exception that carries it (torch's _lazy_init AssertionError, 'not
    built with' / 'not compiled for' wordings), is shown as the first error of a short copy."""
    for text in (
        "Torch not compiled with CUDA enabled",
        "This CTranslate2 package was not compiled with CUDA support",
        "PyTorch is not built with CUDA support",
    ):
        p = tmp_path / "one.log"
        p.write_text(f"Starting server\n{text}\n")
        d = _diagnosed(p)
        assert d["hypotheses"] == [], text
        assert [s["line"] for s in d["suspicious"][:1]] == [2], (text, d["suspicious"])


def test_a_capability_gate_in_the_passive_voice_is_the_first_error(tmp_path: Path) -> None:
    """tune-cc (round 63's unknown/gnj-1): a capability check's verdict quoted without its
    exception prefix ('X is only supported on ... compute capability >= N', torch's
    TORCH_CHECK in aten/src/ATen/native/cuda/Blas.cpp) holds no error word; it is the first
    error of a short copy, above the shell lines that follow it. A line that only mentions a
    supported range without the 'only' gate is no verdict."""
    for text in (
        "torch._scaled_mm is only supported on devices with compute capability >= 9.0",
        "Block-scaled FP8 GEMM is only supported on compute capability 10.0 and above",
        "FP8 GEMM is only supported on devices with compute capability >= 8.9",
        "fp8e4nv is only supported on NVIDIA GPUs with compute capability 8.9 or newer",
    ):
        p = tmp_path / "gate.log"
        p.write_text(f"{text}\n$ nvidia-smi --query-gpu=compute_cap --format=csv\n8.6\n")
        d = _diagnosed(p)
        assert [s["line"] for s in d["suspicious"][:1]] == [1], (text, d["suspicious"])
    near = tmp_path / "near.log"
    near.write_text("Devices with compute capability 7.0 and above are supported.\n")
    assert _diagnosed(near)["suspicious"] == []


def test_a_resolver_verdict_heads_its_derivation(tmp_path: Path) -> None:
    """tune-cc (round 63's unknown/gnn-1): uv's '× No solution found when resolving
    dependencies:' holds no error word; in a short copy of a resolver report it is the first
    error, above the 'Because ...' lines that explain it (which hold verdict words too)."""
    p = tmp_path / "uv.log"
    p.write_text(
        "Resolving dependencies for the build image\n"
        "  × No solution found when resolving dependencies:\n"
        "  ╰─▶ Because there is no version of example-pkg==9.9 and you require example-pkg==9.9,\n"
        "      we can conclude that your requirements are unsatisfiable.\n"
    )
    d = _diagnosed(p)
    assert d["hypotheses"] == []
    assert [s["line"] for s in d["suspicious"][:1]] == [2], d["suspicious"]
    # 'solution' in prose without the verdict is no error line
    q = tmp_path / "prose.log"
    q.write_text(
        "Resolving dependencies for the build image\nThe solution found 3 packages to add\n"
    )
    assert _diagnosed(q)["suspicious"] == []


def test_a_julia_log_box_exception_value_is_the_first_error(tmp_path: Path) -> None:
    """tune-cd (round 64's unknown/gpb-1, gpc-1): Julia's ConsoleLogger prints
    '@error "<summary>" exception=e' as a box ('┌ Error: <summary>', '│   exception =', the
    error at '│    <line>'; JuliaLang/julia base/logging/ConsoleLogger.jl handle_message): the
    exception's first line is the first error, not the caption nor the key. A box without an
    exception value keeps its header as the statement, and a one-line value stays in the key."""
    p = tmp_path / "box.log"
    p.write_text(
        "┌ Error: Error during initialization of CUDA.jl\n"
        "│   exception =\n"
        "│    UndefVarError: `libcudnn` not defined in `cuDNN`\n"
        "│    Stacktrace:\n"
        "│      [1] __init__()\n"
        "└ @ CUDA ~/.julia/packages/CUDA/Tl08O/src/initialization.jl:206\n"
    )
    d = _diagnosed(p)
    assert [s["line"] for s in d["suspicious"][:1]] == [3], d["suspicious"]
    # a warning's box with a value that is no error word: the caption stays first
    plain = tmp_path / "plain.log"
    plain.write_text(
        "┌ Error: Your Tesla K20m GPU (compute capability 3.5) is not supported by CUDA.jl.\n"
        "└ @ CUDA ~/.julia/packages/CUDA/Tl08O/lib/cudadrv/state.jl:245\n"
    )
    assert [s["line"] for s in _diagnosed(plain)["suspicious"][:1]] == [1]
    # the same exception key in a box of another kind of record: the next box's header is not
    # captioning the first box's exception
    two = tmp_path / "two.log"
    two.write_text(
        "┌ Error: Failed to load the cuDNN library\n"
        "└ @ cuDNN ~/.julia/packages/cuDNN/x1/src/cuDNN.jl:180\n"
        "┌ Error: Error during initialization of CUDA.jl\n"
        "│   exception =\n"
        '│    could not load library "libcublas"\n'
        "└ @ CUDA ~/.julia/packages/CUDA/Tl08O/src/initialization.jl:206\n"
    )
    assert [s["line"] for s in _diagnosed(two)["suspicious"][:1]] == [1]


# tune-ch (rounds 65-67's first-error misses): (lines, the first error's line number). Each
# shape with other realistic values than its corpus row, and near misses the other way.
FIRST_ERROR_SHAPES = {
    # tune-gf (round 97's unknown/ibj-1, ibn-1): a run a harness stopped after it hung shows
    # the harness's statement of the stop: pytest's '!!! KeyboardInterrupt !!!' banner
    # (_pytest/terminal.py _report_keyboardinterrupt), faulthandler's 'Timeout (H:MM:SS)!'
    # (Modules/faulthandler.c, pytest-timeout's dump)
    "pytest-keyboardinterrupt-in-file-baton": (
        [
            "tests/test_ops.py::test_fused_rmsnorm[bfloat16-4096] ",
            "!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!! KeyboardInterrupt !!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!",
            "/usr/local/lib/python3.11/dist-packages/torch/utils/file_baton.py:42: KeyboardInterrupt",
            "(to show a full traceback on KeyboardInterrupt use --full-trace)",
            "================== 87 passed, 4 skipped in 3598.12s (0:59:58) ==================",
        ],
        2,
    ),
    "faulthandler-timeout-dump": (
        [
            "+++++++++++++++++++++++++++++++++++ Timeout ++++++++++++++++++++++++++++++++++++",
            "Timeout (0:15:00)!",
            "Thread 0x00007f3a9c1ff740 (most recent call first):",
            '  File "/home/ci/.venv/lib/python3.10/site-packages/torch/utils/file_baton.py",'
            " line 43 in wait",
            '  File "/home/ci/.venv/lib/python3.10/site-packages/torch/utils/cpp_extension.py",'
            " line 1905 in _jit_compile",
        ],
        2,
    ),
    # tune-gf (round 97's unknown/iay-1): Ollama's note that a backend was skipped because the
    # user's setting (OLLAMA_LLM_LIBRARY) asked for another, the only line of a short copy
    "ollama-library-skipped-at-users-request": (
        [
            'time=2025-11-02T09:14:51.337Z level=INFO source=runner.go:76 msg="skipping available'
            ' library at users request" requested=cuda_v11 libDir=/usr/lib/ollama/cuda_v12',
        ],
        1,
    ),
    # tune-gf (round 97's unknown/hzh-1): a build step's own 'error: ' (distutils' SystemExit)
    # as pip relays it, six columns in, above pip's 'Failed to build <name>' summary
    "pip-relayed-setup-error-above-summary": (
        [
            "  Building wheel for causal-conv1d (setup.py) ... error",
            "  error: subprocess-exited-with-error",
            "  ",
            "  × python setup.py bdist_wheel did not run successfully.",
            "  │ exit code: 1",
            "  ╰─> [6 lines of output]",
            "      running bdist_wheel",
            "      Guessing wheel URL:  https://github.com/Dao-AILab/causal-conv1d/releases/download/"
            "v1.4.0/causal_conv1d-1.4.0+cu122torch2.3cxx11abiFALSE-cp311-cp311-linux_x86_64.whl",
            "      error: <urlopen error [Errno 110] Connection timed out>",
            "      [end of output]",
            "  ",
            "  note: This error originates from a subprocess, and is likely not a problem with pip.",
            "  ERROR: Failed building wheel for causal-conv1d",
            "Failed to build causal-conv1d",
        ],
        9,
    ),
    # tune-gf (round 97's unknown/ibc-1): the kubelet's CRI record of a call the runtime failed
    # wraps the hook's error that journald printed above it
    "kubelet-runtime-service-record-under-hook-error": (
        [
            "Mar 14 10:02:41 gpu-3 kubelet[2211]:         nvidia-container-cli: initialization"
            " error: nvml error: driver not loaded: unknown",
            "Mar 14 10:02:41 gpu-3 kubelet[2211]: E0314 10:02:41.118270    2211"
            ' kuberuntime_manager.go:1256] "RunPodSandbox from runtime service failed" err=',
        ],
        1,
    ),
    # tune-di (round 90's unknown/hqp-1): llamafile's 'fatal error: support for --gpu X was
    # explicitly requested, but it wasn't available' (llamafile/cuda.c ImportCuda, metal.c
    # ImportMetal) follows the importer's own reason; it only wraps it, though in a compiler's
    # form. Near miss: a compiler's bare 'fatal error: <header>: No such file or directory'
    "llamafile-gpu-requested-after-its-reason": (
        [
            "initializing gpu module...",
            "note: won't compile AMD GPU support because $HIP_PATH/bin/clang++ is missing",
            "prebuilt binary /zip/ggml-rocm.so not found",
            "fatal error: support for --gpu amd was explicitly requested, but it wasn't available",
        ],
        2,
    ),
    "llamafile-gpu-requested-vulkan": (
        [
            "vulkan: no pre-built GPU library found",
            "vulkan: to enable Vulkan support, build with:",
            "vulkan:   llamafile/vulkan.sh",
            "fatal error: support for --gpu vulkan was explicitly requested, but it wasn't"
            " available",
        ],
        1,
    ),
    "llamafile-gpu-requested-alone": (
        ["fatal error: support for --gpu nvidia was explicitly requested, but it wasn't available"],
        1,
    ),
    "bare-fatal-error-header-near-miss": (
        [
            "note: building the optional YAML config reader",
            "fatal error: yaml-cpp/yaml.h: No such file or directory",
            "compilation terminated.",
        ],
        2,
    ),
    # tune-di (round 91's unknown/hrj-1): Kit's GPU Foundation skips a GPU with a Warning record
    # and, having created no device, says 'No device could be created.': the first skip is the
    # statement. Near miss: skips of masked GPUs (CUDA_VISIBLE_DEVICES) before another error,
    # with devices created, stay a note (round 91's unknown/hri-1)
    "kit-gpu-skipped-no-device": (
        [
            "2026-03-02T10:14:07Z [3,112ms] [Info] [carb.graphics-vulkan.plugin] Vulkan instance"
            " created",
            "2026-03-02T10:14:08Z [3,982ms] [Warning] [gpu.foundation.plugin] Skipping NVIDIA GPU"
            " due CUDA being in bad state: NVIDIA L40S",
            "2026-03-02T10:14:08Z [3,982ms] [Warning] [gpu.foundation.plugin] Please restart your"
            " system if CUDA is known to work in your system.",
            "2026-03-02T10:14:08Z [3,990ms] [Error] [gpu.foundation.plugin] No device could be"
            " created.",
            "2026-03-02T10:14:08Z [3,990ms] [Error] [omni.gpu_foundation_factory.plugin] Failed to"
            " create any GPU devices, including an attempt with compatibility mode.",
            "2026-03-02T10:14:08Z [3,991ms] [Error] [omni.kit.renderer.plugin] GPU Foundation is"
            " not initialized!",
        ],
        2,
    ),
    "kit-masked-gpus-skipped-near-miss": (
        [
            "2026-03-02T10:14:08Z [3,982ms] [Warning] [gpu.foundation.plugin] Skipping NVIDIA GPU"
            " due CUDA being in bad state: NVIDIA A100-SXM4-80GB",
            "2026-03-02T10:14:08Z [3,982ms] [Warning] [gpu.foundation.plugin] Please restart your"
            " system if CUDA is known to work in your system.",
            "2026-03-02T10:14:09Z [4,410ms] [Error] [omni.physx.plugin] PhysX error: GPU dynamics"
            " initialization failed",
        ],
        3,
    ),
    # tune-de (round 89's unknown/hph-1, unknown/gdx-4): GNU ld's relocation verdicts, worded
    # without an error word (bfd/elf64-x86-64.c 'PC-relative offset overflow in PLT entry for',
    # ld/ldmain.c reloc_overflow 'relocation truncated to fit:', the need-PIC 'can not be used
    # when making a shared object'), are the statement collect2's wrapper and ld's later 'final
    # link failed' / 'failed to set dynamic section sizes' follow; ld's warnings are not
    "ld-plt-offset-overflow": (
        [
            "[ 98%] Linking CUDA shared library libkernels.so",
            "libkernels.so: PC-relative offset overflow in PLT entry for `_Z11gemm_kernelILi8EEvPfS0_i'",
            "collect2: error: ld returned 1 exit status",
            "make[2]: *** [CMakeFiles/kernels.dir/build.make:812: libkernels.so] Error 1",
        ],
        2,
    ),
    "ld-relocation-truncated": (
        [
            "/usr/bin/ld: build/obj/grid.o: in function `setup_grid':",
            "grid.c:(.text+0x4d): relocation truncated to fit: R_X86_64_PC32 against `.bss'",
            "/usr/bin/ld: final link failed: nonrepresentable section on output",
            "collect2: error: ld returned 1 exit status",
        ],
        2,
    ),
    "ld-relocation-needs-pie": (
        [
            "/usr/bin/ld: libs/libio.a(reader.o): relocation R_X86_64_32S against symbol"
            " `table' can not be used when making a PIE object; recompile with -fPIE",
            "/usr/bin/ld: failed to set dynamic section sizes: bad value",
            "collect2: error: ld returned 1 exit status",
        ],
        1,
    ),
    "ld-relocation-warning-near-miss": (
        [
            "/usr/bin/ld: io.o: warning: relocation against `count' in read-only section `.text'",
            "/usr/bin/ld: final link failed: bad value",
            "collect2: error: ld returned 1 exit status",
        ],
        2,
    ),
    # tune-de (round 89's unknown/hpf-1, round 45's gcv-8): a verdict worded without an error
    # word on the continuation of a hand-wrapped sentence (Open MPI's help texts): the sentence
    # starts a line above; near misses: the line above ends its sentence, or is too short to
    # be a line wrapped at a column
    "wrapped-verdict-continuation": (
        [
            "--------------------------------------------------------------------------",
            "The user requested CUDA support with the --mca mpi_cuda_support 1 flag",
            "but the library was not compiled with any support.",
            "--------------------------------------------------------------------------",
        ],
        2,
    ),
    "wrapped-verdict-after-full-stop-near-miss": (
        [
            "Starting the exporter on port 9400 with the default collectors enabled.",
            "nvml library not found, GPU metrics are disabled for this run.",
        ],
        2,
    ),
    "wrapped-verdict-under-short-line-near-miss": (
        ["Probing compute devices", "gpu backend not available, using the cpu path"],
        2,
    ),
    # tune-dc (round 88's unknown/hnr-1): pip's summaries of a failed wheel build ('ERROR: Failed
    # building wheel for X', pypa/pip wheel_builder.py; 'ERROR: Could not build wheels for X,
    # which is required ...', commands/install.py; pip 25's 'error: failed-wheel-build-for-install'
    # / '× Failed to build installable wheels ...', exceptions.py InstallWheelBuildError) only
    # say a build above failed: the heading over the cut output is first, and the backend's own
    # exception outranks the reference line that scored as a diagnostic
    "pip-wheel-summaries-under-heading": (
        [
            "Building wheels for collected packages: selective-scan",
            "× Building wheel for selective-scan (pyproject.toml) did not run successfully.",
            "│ exit code: 1",
            "╰─> [Output cut]",
            "ERROR: Failed building wheel for selective-scan",
            "ERROR: Could not build wheels for selective-scan, which is required to install"
            " pyproject.toml-based projects",
        ],
        2,
    ),
    "pip-25-wheel-build-error-after-backend-exception": (
        [
            "  ╰─> [3 lines of output]",
            "      running bdist_wheel",
            "      ValueError: unsupported value for EXAMPLEPKG_BUILD_MODE: fast",
            "      [end of output]",
            "  ERROR: Failed building wheel for examplepkg",
            "Failed to build examplepkg",
            "error: failed-wheel-build-for-install",
            "",
            "× Failed to build installable wheels for some pyproject.toml based projects",
            "╰─> examplepkg",
        ],
        3,
    ),
    # near misses: a summary alone is still the first error (corpus unknown/fm-7), and pip's
    # info-level 'Failed to build X' is not a wrapper (a copy that starts with it: unknown/heu-1)
    "pip-wheel-summary-alone": (
        ["Collecting examplepkg==1.0", "ERROR: Failed building wheel for examplepkg"],
        2,
    ),
    "pip-info-summary-first": (
        [
            "Failed to build examplepkg",
            "ERROR: Failed to build installable wheels for some pyproject.toml based projects"
            " (examplepkg)",
        ],
        1,
    ),
    # tune-cu (round 84's unknown/hjy-1): pip's 'error: subprocess-exited-with-error' heading
    # (pypa/pip exceptions.py InstallationSubprocessError) around the build backend's output:
    # the backend's own exception inside '[N lines of output]' is the statement
    "pip-subprocess-output-exception": (
        [
            "  error: subprocess-exited-with-error",
            "",
            "  × Getting requirements to build wheel did not run successfully.",
            "  │ exit code: 1",
            "  ╰─> [6 lines of output]",
            "      Traceback (most recent call last):",
            '        File "setup.py", line 88, in <module>',
            "          raise RuntimeError('No CUDA build of this package for CUDA 13')",
            "      RuntimeError: No CUDA build of this package for CUDA 13",
            "      [end of output]",
            "",
            "  note: This error originates from a subprocess, and is likely not a problem with pip.",
            "error: subprocess-exited-with-error",
            "",
            "× Getting requirements to build wheel did not run successfully.",
            "│ exit code: 1",
            "╰─> See above for output.",
        ],
        9,
    ),
    # near miss: pip's heading with no output of the child in the excerpt is still the first
    # error (nothing states it better)
    "pip-subprocess-heading-alone": (
        [
            "Collecting examplepkg==1.0",
            "  Using cached examplepkg-1.0.tar.gz (12 kB)",
            "  Installing build dependencies ... done",
            "error: subprocess-exited-with-error",
            "",
            "× Getting requirements to build wheel did not run successfully.",
            "│ exit code: 1",
            "╰─> See above for output.",
        ],
        4,
    ),
    # tune-cw (round 74's unknown/hae-1): a configure step that failed, then the build driver:
    # ninja's 'loading 'build.ninja': No such file or directory' (ninja ManifestParser::Load),
    # CMake's 'Configuring incomplete, errors occurred!' and CUDA-Q's build script's 'Error: Build
    # failed. Please check the console output ...' only point back at the CMake Error record
    "cmake-error-then-ninja-no-manifest": (
        [
            '-- Found CUDAToolkit: /usr/local/cuda/include (found version "12.4.131")',
            "CMake Error at cmake/FindCUDNN.cmake:58 (message):",
            "  cuDNN not found: set CUDNN_ROOT to the install prefix",
            "-- Configuring incomplete, errors occurred!",
            "ninja: error: loading 'build.ninja': No such file or directory",
            "Error: Build failed. Please check the console output or the files in the"
            " /src/build/logs directory.",
        ],
        2,
    ),
    # near miss: ninja's own statement about a manifest it did load stays the first error
    "ninja-missing-input": (
        [
            "-- Build files have been written to: /src/build",
            "ninja: error: '/src/csrc/attention.cu', needed by"
            " 'CMakeFiles/attn.dir/csrc/attention.cu.o', missing and no known rule to make it",
            "Error: Build failed. Please check the console output or the files in the"
            " /src/build/logs directory.",
        ],
        2,
    ),
    # tune-cw (round 75's unknown/han-1): FFmpeg's relay of an encoder that did not open
    # (fftools/ffmpeg.c before 6.1: 'Error initializing output stream' carrying 'Error while
    # opening encoder ...') under the encoder's own '[<codec> @ 0x...]' reason
    "ffmpeg-encoder-open-relay": (
        [
            "[hevc_nvenc @ 0x55d0c6f1a2c0] OpenEncodeSessionEx failed: unsupported device (2):"
            " (no details)",
            "Error initializing output stream 0:0 -- Error while opening encoder for output"
            " stream #0:0 - maybe incorrect parameters such as bit_rate, rate, width or height",
            "Conversion failed!",
        ],
        1,
    ),
    # and the 6.1+ form (fftools/ffmpeg_enc.c), prefixed by its output stream's context
    "ffmpeg-encoder-open-relay-6": (
        [
            "[hevc_nvenc @ 0x5b654f1444c0] Cannot load libnvidia-encode.so.1",
            "[vost#0:0/hevc_nvenc @ 0x5b654f143e80] [enc:hevc_nvenc @ 0x5b654f144440] Error while"
            " opening encoder - maybe incorrect parameters such as bit_rate, rate, width or"
            " height.",
            "[out#0/mp4 @ 0x5b654f143a80] Nothing was written into output file, because at least"
            " one of its streams received no packets.",
        ],
        1,
    ),
    # near miss: the decoder's failure is FFmpeg's own statement (its error string follows),
    # not the encoder relay; the later 'Conversion failed!' only ends the run
    "ffmpeg-decoder-open": (
        [
            "Input #0, mov,mp4,m4a,3gp,3g2,mj2, from 'in.mp4':",
            "Error while opening decoder for input stream #0:0 : Function not implemented",
            "Conversion failed!",
        ],
        2,
    ),
    # tune-cw (round 75's unknown/hbe-1): nothing but a wrapper heading (ComfyUI's 'Error
    # occurred when executing <Node>:') over a message with no error word: the verdict below
    # it is the statement
    "comfyui-heading-over-verdict": (
        [
            "Error occurred when executing KSampler:",
            "",
            "Torch not compiled with CUDA enabled",
            "",
            'File "C:\\ComfyUI\\execution.py", line 151, in recursive_execute',
            "output_data, output_ui = get_output_data(obj, input_data_all)",
        ],
        3,
    ),
    # near miss: the heading over a message that states no verdict stays the first error
    "comfyui-heading-no-verdict": (
        [
            "Error occurred when executing VAEDecode:",
            "",
            "'NoneType' object is not subscriptable",
            "",
            'File "C:\\ComfyUI\\execution.py", line 151, in recursive_execute',
        ],
        1,
    ),
    # tune-cw (round 83's unknown/hip-1): PostgreSQL's server log (elog.c '<SEVERITY>:  ');
    # a LOG record an extension filled with error words ranks below the ERROR record, and a
    # backend's 'terminating connection due to administrator command' (ProcessInterrupts:
    # SIGTERM from the postmaster) is the end, not the cause
    "postgres-log-then-error-then-terminated": (
        [
            "2025-01-10 09:12:01.540 UTC [4420] LOG:  heterodb-extra: [error] failed on"
            " cuFileDriverOpen: nvidia-fs driver is not loaded (gpudirect.c:301)",
            "2025-01-10 09:12:01.541 UTC [4420] ERROR:  failed on cuInit: CUDA_ERROR_NO_DEVICE",
            '2025-01-10 09:12:01.545 UTC [4411] LOG:  background worker "PG-Strom GPU Service"'
            " (PID 4420) exited with exit code 1",
            "postgres=# select 1;",
            "FATAL:  terminating connection due to administrator command",
            "server closed the connection unexpectedly",
        ],
        2,
    ),
    # near miss: a FATAL record that states its own failure outranks the LOG record above it
    "postgres-log-then-own-fatal": (
        [
            "2025-01-10 09:12:01.540 UTC [77] LOG:  heterodb-extra: [error] failed on"
            " cuFileDriverOpen: nvidia-fs driver is not loaded (gpudirect.c:301)",
            "2025-01-10 09:12:01.541 UTC [77] FATAL:  could not map anonymous shared memory:"
            " Cannot allocate memory",
        ],
        2,
    ),
    # near miss: a LOG record alone (the postmaster's report of a crashed child) is still the
    # first error
    "postgres-log-alone": (
        [
            "2025-01-10 09:12:01.540 UTC [4411] LOG:  server process (PID 5021) was terminated"
            " by signal 11: Segmentation fault",
            "2025-01-10 09:12:01.541 UTC [4411] LOG:  terminating any other active server"
            " processes",
        ],
        1,
    ),
    # tune-ct (round 82's unknown/hhx-1): the OptiX SDK's sutil Exception what() ('<status
    # name>: Optix call '<call>' failed: <file>:<line>)' then 'Log:' and the OptiX compiler's
    # own lines) is the statement; the log's 'Error: ...' lines under it detail it
    "optix-status-head": (
        [
            "OPTIX_ERROR_PIPELINE_LINK_ERROR: Optix call 'optixPipelineCreate( context,"
            " &pipeline_compile_options, &pipeline_link_options, program_groups, 3, log,"
            " &sizeof_log, &pipeline )' failed: /src/render/pipeline.cpp:412)",
            "Log:",
            "COMPILE ERROR:",
            "Error: Symbol '__raygen__pinhole' was defined multiple times. First seen in:"
            " '__raygen__pinhole_and_2_more_81726354'",
        ],
        1,
    ),
    # near miss: a settings echo shaped like a status name is no statement; the exception is
    "status-name-setting-echo": (
        [
            "CUDA_ERROR_CHECK_LEVEL: 2",
            "RuntimeError: CUDA error: an illegal memory access was encountered",
        ],
        2,
    ),
    # tune-ct (round 82's unknown/hhg-1): glog's severity letter; a W record that goes on (a
    # pool disabled, with an error word and a driver wording) ranks below the E record that
    # states the failure (glog src/logging.cc: '<I|W|E|F><mmdd> <time> <tid> <file>:<line>] ')
    "glog-warning-then-error": (
        [
            "W0611 10:02:41.118203 1 pinned_memory_manager.cc:271] Unable to allocate pinned"
            " system memory, pinned memory pool will not be available: CUDA driver version is"
            " insufficient for CUDA runtime version",
            "I0611 10:02:41.118299 1 cuda_memory_manager.cc:117] CUDA memory pool disabled",
            "I0611 10:02:41.120417 1 model_lifecycle.cc:469] loading: resnet50_trt:1",
            "E0611 10:02:41.120502 1 model_lifecycle.cc:638] failed to load 'resnet50_trt'"
            " version 1: Invalid argument: unable to find backend library for backend"
            " 'tensorrt', try specifying runtime on the model configuration.",
        ],
        4,
    ),
    # near miss: the same W record with no E record after it is still the first error
    "glog-warning-alone": (
        [
            "I0611 10:02:41.118101 1 server.cc:120] Initializing Triton",
            "W0611 10:02:41.118203 1 pinned_memory_manager.cc:271] Unable to allocate pinned"
            " system memory, pinned memory pool will not be available: out of memory",
            "I0611 10:02:41.118299 1 cuda_memory_manager.cc:117] CUDA memory pool disabled",
        ],
        2,
    ),
    # DALI's pipeline-build headings over the operator's own error (dali/pipeline/pipeline.cc)
    "dali-build": (
        [
            "RuntimeError: Critical error when building pipeline:",
            'Error when adding operator: decoders__Video, instance name: "__Video_2", encountered:',
            "Error in thread 1: [/opt/dali/dali/operators/reader/loader/video_loader.cc:188]"
            " Failed to open video file: /data/a.mp4",
            "Current pipeline object is no longer valid.",
        ],
        3,
    ),
    # near miss: a DALI runtime error without the build headings is the exception line itself
    "dali-run": (
        [
            "RuntimeError: [/opt/dali/dali/pipeline/operator/op_spec.h:2] Assert on"
            ' "HasArgument(name)" failed: Argument "device_memory_padding" is not defined.',
            "Current pipeline object is no longer valid.",
        ],
        1,
    ),
    # cargo's 'test failed' and 'process didn't exit successfully' summaries
    "cargo-test": (
        [
            "     Running unittests src/lib.rs (target/debug/deps/kernels-5d1c2f0a9e8b7c6d)",
            "target/debug/deps/kernels-5d1c2f0a9e8b7c6d: error while loading shared libraries:"
            " libcuda.so.1: cannot open shared object file: No such file or directory",
            "error: test failed, to rerun pass `-p kernels --lib`",
        ],
        2,
    ),
    "cargo-run": (
        [
            "     Running `target/release/infer`",
            "thread 'main' panicked at src/main.rs:14:40:",
            "called `Result::unwrap()` on an `Err` value: DriverError(CUDA_ERROR_NO_DEVICE)",
            "error: process didn't exit successfully: `target/release/infer` (exit code: 101)",
        ],
        2,
    ),
    # near miss: a cargo error of its own (no wrapper wording) is still the statement
    "cargo-own": (
        [
            "    Updating crates.io index",
            "error: failed to select a version for the requirement `cudarc = ^0.99`",
        ],
        2,
    ),
    # libstdc++'s terminate heading, above a runtime's signal trailer
    "terminate": (
        [
            "terminate called after throwing an instance of 'std::runtime_error'",
            "  what():  NCCL error: unhandled cuda error",
            "FatalError: `Process abort signal` is detected by the operating system.",
            '  [TimeInfo: *** Aborted at 1712345678 (unix time) try "date -d @1712345678" ***]',
        ],
        1,
    ),
    # tune-ee (round 94's unknown/huk-1): the terminate heading run into a progress bar that
    # tqdm redrew with '\r' and no newline, above CPython's faulthandler trailer
    "terminate-after-progress-bar": (
        [
            "Capturing batches (bs=256 avail_mem=31.02 GB):   0%|          | 0/36 [00:00<?,"
            " ?it/s]terminate called after throwing an instance of 'std::logic_error'",
            "  what():  basic_string::_M_construct null not valid",
            "Fatal Python error: Aborted",
        ],
        1,
    ),
    # tune-ee (round 94's unknown/hvr-1): an absl::Status line (XLA, JAX), no error word
    "absl-status-resource-exhausted": (
        [
            "RESOURCE_EXHAUSTED: Shared memory size limit exceeded:",
            "requested 262144, available: 232448",
        ],
        1,
    ),
    "absl-status-internal-after-info": (
        [
            "I0000 00:00:1712345678.123456  4411 service.cc:145] XLA service initialized",
            "INTERNAL: ptxas exited with non-zero exit code 65280, output: ",
        ],
        2,
    ),
    # near miss: a status name quoted inside a sentence is not an absl::Status statement; the
    # exception line stating it ranks first
    "absl-status-quoted-near-miss": (
        [
            "retrying after status INTERNAL: ignored",
            "jax.errors.JaxRuntimeError: INVALID_ARGUMENT: Executable expected parameter 0 of size"
            " 4096 but got buffer with incompatible size 2048",
        ],
        2,
    ),
    # tune-fd (round 95's unknown/hxe-1): FFmpeg's hwcontext states the CUDA error; fftools'
    # 'Device creation failed', 'Failed to set value ... for option' and 'Error parsing global
    # options' only relay its code
    "ffmpeg-hwdevice-relays": (
        [
            "[AVHWDeviceContext @ 0x55f1c3a2e8c0] cu->cuInit(0) failed -> CUDA_ERROR_NO_DEVICE:"
            " no CUDA-capable device is detected",
            "Device creation failed: -542398533.",
            "Failed to set value 'cuda=cu:0' for option 'init_hw_device': Generic error in an"
            " external library",
            "Error parsing global options: Generic error in an external library",
        ],
        1,
    ),
    # near miss: the option relay alone is still shown
    "ffmpeg-option-relay-alone": (
        ["Failed to set value 'cuda=cu:0' for option 'init_hw_device': Invalid argument"],
        1,
    ),
    # tune-fd (round 95's unknown/hxm-1): NCCL's INFO notes on plugins it did without are not
    # errors; the limit verdict (an INFO line too) is the statement. Lower-case host headers
    # are records, not a hard-wrapped sentence
    "nccl-info-exceeds-after-probe-notes": (
        [
            "node3:21876:21876 [0] NCCL INFO NCCL version 2.25.1+cuda12.8",
            "node3:21876:21890 [0] NCCL INFO NET/Plugin: Could not find: libnccl-net.so. Using"
            " internal network plugin.",
            "node3:21876:21890 [0] NCCL INFO Failed to open libibverbs.so[.1]",
            "node3:21876:21890 [0] NCCL INFO ncclMaxSharedMem 82240 exceeds device/fn"
            " maxSharedMem 79856",
        ],
        4,
    ),
    # near miss: NCCL's WARN after the probe notes is the statement
    "nccl-warn-after-probe-notes": (
        [
            "node3:21876:21890 [0] NCCL INFO Failed to open libibverbs.so[.1]",
            "node3:21876:21890 [0] transport/p2p.cc:275 NCCL WARN Cuda failure 'peer access is"
            " not supported between these two devices'",
        ],
        2,
    ),
    # tune-fd (round 95's unknown/hxn-1): ptxas's feature verdict without its 'error   :' prefix
    "ptxas-feature-requires": (
        ["Feature 'cvt with .e4m3x2/.e5m2x2 on sm_89' requires PTX ISA .version 8.1 or later"],
        1,
    ),
    # glibc's malloc verdict above Open MPI's signal report
    "malloc-ompi": (
        [
            "malloc(): corrupted top size",
            "[node07:22113] *** Process received signal ***",
            "[node07:22113] Signal: Aborted (6)",
            "[node07:22113] Signal code:  (-6)",
            "[node07:22113] *** End of error message ***",
        ],
        1,
    ),
    # near miss: Open MPI's report alone is still shown (nothing else states the failure)
    "ompi-alone": (
        [
            "[node07:22113] *** Process received signal ***",
            "[node07:22113] Signal: Segmentation fault (11)",
        ],
        2,
    ),
    # jemalloc's page-size check, then the allocation failure it causes
    "jemalloc": (
        ["<jemalloc>: Unsupported system page size", "memory allocation of 64 bytes failed"],
        1,
    ),
    # FFmpeg's NVIDIA loader, before its own summary of the same failure
    "ffmpeg-load": (
        [
            "[AVHWDeviceContext @ 0x55d1c0a2b3c0] Cannot load libcuda.so.1",
            "[AVHWDeviceContext @ 0x55d1c0a2b3c0] Could not dynamically load CUDA",
            "Device creation failed: -1.",
        ],
        1,
    ),
    # bash's exec verdict above the CMake error its empty output causes
    "exec-format": (
        [
            # bash before 4.4 ends the line there; later ones add ': Exec format error'
            "/opt/cuda/bin/nvcc: /opt/cuda/bin/nvcc: cannot execute binary file",
            "CMake Error at /usr/share/cmake-3.22/Modules/FindCUDA.cmake:746 (string):",
            "  string sub-command REGEX, mode REPLACE needs at least 6 arguments total to",
        ],
        1,
    ),
    # a location header before its message, and an assert(0) after the program's message
    "error-at": (
        [
            "Link step failed!",
            "Error at /src/render/cuda_exec.cpp:412 in compileKernels",
            "nvJitLink error: Internal error",
        ],
        1,
    ),
    "assert-const": (
        [
            "Failed to parse weights file: model.onnx",
            "infer: weights.cpp:88: void load(const char*): Assertion `false' failed.",
            "Aborted (core dumped)",
        ],
        1,
    ),
    # near miss: an assertion of a real condition is the statement, above the line before it
    "assert-cond": (
        [
            "Loading engine from cache",
            "infer: engine.cpp:41: int build(): Assertion `engine != nullptr' failed.",
        ],
        2,
    ),
    # uvicorn's level prefix on every line of a logged traceback
    "uvicorn": (
        [
            "ERROR:    Exception in ASGI application",
            'ERROR:      File "/app/server.py", line 12, in startup',
            "ERROR:        os.makedirs(cache_dir, exist_ok=True)",
            "ERROR:    OSError: [Errno 30] Read-only file system: '/models/.cache'",
        ],
        4,
    ),
}


def test_a_copy_cut_inside_pips_relay_shows_no_error_line(tmp_path: Path) -> None:
    """tune-gf (round 97's unknown/ibf-1): a copy that ends inside pip's '[N lines of output]'
    relay, before its N lines, where every line shown only wraps or heads the child's failure
    (pip's '... error' status, 'error: subprocess-exited-with-error', a 'Traceback' header over
    frames): the statement was cut off, so no line is shown as the first error. Near misses:
    the same relay closed by '[end of output]' still shows pip's '×' verdict, and a cut copy
    with pip's 'Failed to build <name>' summary shows that summary."""
    head = [
        "Collecting flash-attn==2.5.8",
        "  Using cached flash_attn-2.5.8.tar.gz (2.5 MB)",
        "  Preparing metadata (setup.py) ... error",
        "  error: subprocess-exited-with-error",
        "  ",
        "  × python setup.py egg_info did not run successfully.",
        "  │ exit code: 1",
        "  ╰─> [12 lines of output]",
        "      Traceback (most recent call last):",
        '        File "<string>", line 2, in <module>',
        '        File "<pip-setuptools-caller>", line 34, in <module>',
    ]
    cut = tmp_path / "cut.log"
    cut.write_text("\n".join(head) + "\n")
    d = _diagnosed(cut)
    assert d["hypotheses"] == [] and d["suspicious"] == [], d["suspicious"][:3]
    closed = [*head[:8], "      [end of output]"]
    _names_none_points_at(tmp_path / "closed.log", closed, 6)
    _names_none_points_at(tmp_path / "summary.log", ["Failed to build flash-attn", *head[2:]], 1)


def test_an_msvc_probe_link_miss_names_nothing(tmp_path: Path) -> None:
    """tune-gf (round 97's unknown/hzp-1): DeepSpeed's has_function compiles test.c and links
    it against the library it probes for; on Windows cl.exe echoes 'test.c' and link.exe's
    LNK1181 reaches the console: the probe's answer, no cause and no error line. Near miss: the
    same LNK1181 in a real link (no probe echo above it) is still the linker's miss."""
    probe = tmp_path / "probe.log"
    probe.write_text(
        "[2025-05-02 11:20:07,104] [INFO] [real_accelerator.py:254:get_accelerator] Setting"
        " ds_accelerator to cuda (auto detect)\n"
        "test.c\n"
        "LINK : fatal error LNK1181: cannot open input file 'aio.lib'\n"
        "test.c\n"
        "LINK : fatal error LNK1181: cannot open input file 'cufile.lib'\n"
    )
    d = _diagnosed(probe)
    assert d["hypotheses"] == [] and d["suspicious"] == [], (d["hypotheses"], d["suspicious"])
    real = tmp_path / "real.log"
    real.write_text(
        "   Creating library build\\temp.win-amd64-cpython-311\\Release\\ops.lib\n"
        "LINK : fatal error LNK1181: cannot open input file 'cudart.lib'\n"
    )
    assert [s["signature"] for s in _diagnosed(real)["symptoms"]] == ["ld-cannot-find-lib"]


def test_the_first_error_under_wrappers_headings_and_trailers(tmp_path: Path) -> None:
    """tune-ch: each shape's first real error, not the wrapper above it (DALI's pipeline-build
    headings), the summary after it (cargo's), the trailer of the abort it causes (Open MPI's
    signal report, Paddle's FatalError, an assert(0)), a location header (c10's, 'Error at
    <file>:<line> in <func>') or a logger prefix on every line (uvicorn's)."""
    for name, (lines, first) in FIRST_ERROR_SHAPES.items():
        _names_none_points_at(tmp_path / f"{name}.log", lines, first)


def test_a_negated_lookup_or_a_copied_library_is_the_verdict_of_a_short_log(
    tmp_path: Path,
) -> None:
    """tune-ch (older nulls unknown/gky-1, gkz-1, gox-1, ges-4, glc-1): nvidia-smi's "couldn't
    find libnvidia-ml.so", Cog's "couldn't automatically determine a CUDA version" and
    ldconfig's '<lib> is not a symbolic link' hold no error word; each is the first error of a
    short copy. A 'couldn't' with no lookup verb, and ldconfig's report of a link, are none."""
    for lines, first in (
        (
            [
                "$ nvidia-smi",
                "NVIDIA-SMI couldn't find libnvidia-ml.so library in your system. Please make sure"
                " that the NVIDIA Display Driver is properly installed and present in your system.",
            ],
            2,
        ),
        (
            [
                "Building Docker image from environment in cog.yaml...",
                "ⅹ Cog couldn't automatically determine a CUDA version for torch==2.0.0. You need"
                " to set the 'cuda' option in cog.yaml to set what version to use.",
            ],
            2,
        ),
        (
            [
                "Processing triggers for libc-bin (2.39-0ubuntu8.4) ...",
                "/sbin/ldconfig.real: /usr/lib/wsl/lib/libnvidia-ml.so.1 is not a symbolic link",
            ],
            2,
        ),
    ):
        _names_none_points_at(tmp_path / "verdict.log", lines, first)
    for text in (
        "Note: the cache couldn't be warmed in time, continuing",
        "ldconfig: /usr/lib/libcuda.so.1 is a symbolic link to libcuda.so.560.35.03",
    ):
        p = tmp_path / "near.log"
        p.write_text(f"Starting\n{text}\n")
        assert _diagnosed(p)["suspicious"] == [], text


def test_an_allocation_refusal_a_missing_build_an_illegal_address_or_a_capability_warning(
    tmp_path: Path,
) -> None:
    """tune-ch (older nulls unknown/gep-2, gdd-2, gkk-1, gdd-4, fzv-8): verdicts worded without
    an error word, each the first error of a short copy: NVSHMEM's 'NULL value cannot
    allocate <obj>', the kernels hub's 'does not have build: <variant>', Cycles' 'Illegal
    address in CUDA queue <kernel>', torch's 'Found GPUn <name> which is of cuda capability
    X.Y.' (its warning's first line, under a bare 'UserWarning:' heading too). Near misses: an
    allocation stated as done, a capability line of nvidia-smi's query, are none."""
    for lines, first in (
        (["/src/host/init/init.cu:312: NULL value cannot allocate nvshmemi_device_state"], 1),
        (
            [
                "Fetching 4 files: 100%",
                "Kernel at path `/root/.cache/huggingface/hub/models--kernels-community--"
                "flash-attn3/snapshots/0123abcd` does not have build: torch29-cxx11-cu130-"
                "aarch64-linux",
            ],
            2,
        ),
        (["Illegal address in CUDA queue synchronize (integrator_intersect_closest)"], 1),
        (
            [
                "UserWarning:",
                "    Found GPU1 NVIDIA GB10 which is of cuda capability 12.1.",
                "    Minimum and Maximum cuda capability supported by this version of PyTorch is",
                "    (7.5) - (12.0)",
            ],
            2,
        ),
    ):
        _names_none_points_at(tmp_path / "verdict.log", lines, first)
    for text in (
        "nvshmem: allocated 1073741824 bytes of symmetric heap",
        "name, compute_cap: NVIDIA GeForce RTX 4090, 8.9",
    ):
        p = tmp_path / "near.log"
        p.write_text(f"Starting\n{text}\n")
        assert _diagnosed(p)["suspicious"] == [], text


def test_a_loader_verdict_that_a_library_is_absent_precedes_the_fallback_it_causes(
    tmp_path: Path,
) -> None:
    """tune-cr (round 80's unknown/hfq-1): Taichi's load_lib warns '<lib> lib not found.'
    (taichi/rhi/cuda/cuda_driver.cpp) before its arch selection falls back to CPU: the loader's
    line is the first error; where the library loaded, the fallback warning is the only
    statement left."""
    for lines, first in (
        (
            [
                "[Taichi] version 1.7.2, llvm 15.0.4, commit 0131dce9, linux, python 3.10.12",
                "[W 03/02/25 10:11:12.345 4321] [cuda_driver.cpp:load_lib@36] libcusparse.so lib"
                " not found.",
                "[W 03/02/25 10:11:12.346 4321] [misc.py:adaptive_arch_select@758] Arch=[<Arch.cuda:"
                " 3>] is not supported, falling back to CPU",
            ],
            2,
        ),
        (
            [
                "[Taichi] Starting on arch=cuda",
                "[cuda_driver.cpp:load_lib@39] libcuda.so loaded!",
                "[misc.py:adaptive_arch_select@758] Arch=[<Arch.cuda: 3>] is not supported,"
                " falling back to CPU.",
            ],
            3,
        ),
    ):
        _names_none_points_at(tmp_path / "loader.log", lines, first)
