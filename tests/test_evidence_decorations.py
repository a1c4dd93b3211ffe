"""The same message under every log decoration (issue 17): a collector's prefix, colour codes,
a Markdown quote or CRLF line ends never change what remedy ranks first.

bench/decorations.py holds the decorations (each cited to the upstream code that writes it) and
measures the whole template table; here one classed template per class, chosen by index order,
is diagnosed under each, and each prefix shape of remedy.evidence.prefix is checked on real
lines.
"""

from __future__ import annotations

import importlib.util
from functools import cache
from pathlib import Path
from typing import Any

import pytest
import yaml

from remedy.evidence import scan_lines
from remedy.evidence.prefix import strip_prefixes

from conftest import diagnosed_log

ROOT = Path(__file__).resolve().parents[1]
TEMPLATES = ROOT / "tests" / "fixtures" / "templates"
_spec = importlib.util.spec_from_file_location("decorations", ROOT / "bench" / "decorations.py")
assert _spec is not None and _spec.loader is not None
DECO = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(DECO)

ROWS: list[dict[str, Any]] = yaml.safe_load((TEMPLATES / "index.yaml").read_text())["templates"]


def _sample() -> list[dict[str, Any]]:
    """The first row of each class in the index (no known miss): deterministic, every class."""
    seen: dict[str, dict[str, Any]] = {}
    for r in ROWS:
        if r["class"] and not r.get("known_miss") and r["class"] not in seen:
            seen[r["class"]] = r
    return list(seen.values())


SAMPLE = _sample()

# (decoration, template) pairs remedy still gets wrong, and why (strict: a fix shows here)
KNOWN: dict[tuple[str, str], str] = {
    # knowledge/field-signals.yaml unsupported-ptx-in-torch reads the line from its start
    # ('^(?:RuntimeError|torch.AcceleratorError): CUDA error: the provided PTX'); under
    # Inductor's wrapper the PTX came from the Triton kernels Inductor generated, so Triton's
    # class (driver-runs-ptx) is no worse an answer: the wrapper is not neutral here
    ("inductor-wrap", "torch-ext/aten-op-unsupported-ptx.log"): "Inductor runs Triton's PTX",
}


@cache
def _plain(file: str) -> list[str]:
    return [h.rule for h in diagnosed_log(TEMPLATES / file).hypotheses[:1]]


def test_sample_covers_every_class() -> None:
    assert len(SAMPLE) == len({r["class"] for r in ROWS if r["class"]}) >= 20


@pytest.mark.parametrize("name", [n for n in DECO.DECORATIONS if n != "none"])
def test_top1_unchanged_under_decoration(name: str, tmp_path: Path) -> None:
    fn = DECO.DECORATIONS[name][0]
    wrong = []
    touched = 0
    for r in SAMPLE:
        raw = (TEMPLATES / r["file"]).read_bytes().decode("utf-8", "surrogateescape")
        decorated = fn(raw)
        touched += decorated != raw
        p = tmp_path / "decorated.log"
        p.write_bytes(decorated.encode("utf-8", "surrogateescape"))
        got = [h.rule for h in diagnosed_log(p).hypotheses[:1]]
        want = _plain(r["file"])
        assert want == [r["class"]], f"{r['file']}: undecorated ranks {want}"
        if (got != want) != ((name, r["file"]) in KNOWN):
            wrong.append(f"{r['file']}: {want} -> {got} (known: {(name, r['file']) in KNOWN})")
    # a decoration that leaves the sample as it is tests nothing (colour codes and the
    # exception wrapper touch only the lines they are about; a prefix touches every log)
    assert touched >= 3, f"{name} changed only {touched} logs"
    assert not wrong, f"{name} changed top-1:\n" + "\n".join(wrong)


# --- each prefix shape on real lines --------------------------------------------------------


@pytest.mark.parametrize(
    ("line", "text", "process"),
    [
        # vLLM V1 (vllm/utils _add_prefix + vllm/logger.py _FORMAT): a held-out log's shape
        (
            "(EngineCore_DP0 pid=1815813) (Worker_TP0 pid=1815836) ERROR 09-17 23:37:06 "
            "[multiproc_executor.py:671] RuntimeError: CUDA error: out of memory",
            "RuntimeError: CUDA error: out of memory",
            "EngineCore_DP0 pid=1815813 Worker_TP0 pid=1815836",
        ),
        # the same tag coloured (CYAN "\033[1;36m", RESET "\033[0;0m")
        (
            "\x1b[1;36m(EngineCore_DP0 pid=7)\x1b[0;0m INFO 01-02 03:04:05 [core.py:90] x",
            "x",
            "EngineCore_DP0 pid=7",
        ),
        # Ray python/ray/_private/worker.py print_worker_logs, the docs' own examples
        ("(pid=45601) task", "task", "pid=45601"),
        ("(MyActor pid=480956) actor log message", "actor log message", "MyActor pid=480956"),
        (
            "(RayWorkerWrapper pid=4121, ip=10.0.3.17) ImportError: libcuda.so.1: x",
            "ImportError: libcuda.so.1: x",
            "RayWorkerWrapper pid=4121",
        ),
        # docker/compose cmd/formatter/logs.go: "%-<width>s |" + " "
        ("sglang-1    | Killed", "Killed", "sglang-1"),
        (
            "web_1  | Traceback (most recent call last):",
            "Traceback (most recent call last):",
            "web_1",
        ),
        # kubectl logs --prefix (logs.go addPrefixIfNeeded)
        ("[pod/vllm-0/server] Killed", "Killed", "pod/vllm-0/server"),
        # actions/runner PagingLogger.Write: DateTime.ToString("O")
        ("2025-01-01T12:00:00.1234567Z Killed", "Killed", None),
        # ... not journald's ISO shape, though a word and a colon follow
        (
            "2025-01-01T12:00:00.1234567Z ninja: build stopped: subcommand failed.",
            "ninja: build stopped: subcommand failed.",
            None,
        ),
        # CPython logging BASIC_FORMAT; torchrun's elastic agent logs this way
        ("ERROR:root:  File x", "  File x", None),
        (
            "ERROR:torch.distributed.elastic.multiprocessing.api:failed (exitcode: 1)",
            "failed (exitcode: 1)",
            None,
        ),
        # the logging HOWTO's format
        ("2025-01-01 12:00:00,123 - worker - ERROR - Killed", "Killed", None),
        # a Markdown quote, nested, around a journald line
        (
            "> > May 25 20:37:37 h python[1]: Killed",
            "Killed",
            "python[1]",
        ),
        # GCC -fdiagnostics-color: the codes dropped, the diagnostic intact
        (
            "\x1b[01m\x1b[Kk.cu:3:1:\x1b[m\x1b[K \x1b[01;31m\x1b[Kerror: \x1b[m\x1b[Kexpected ;",
            "k.cu:3:1: error: expected ;",
            None,
        ),
        # BuildKit's plain progress (moby/buildkit progressui printVtx): a RUN step's line
        (
            "#21 31.16 RuntimeError: moex: cudaFuncSetAttribute(...) failed",
            "RuntimeError: moex: cudaFuncSetAttribute(...) failed",
            None,
        ),
        # nested collectors: a CI timestamp, compose, a worker tag
        (
            "2025-01-01T12:00:00.1234567Z vllm-1  | (Worker_TP1 pid=9) Killed",
            "Killed",
            "vllm-1 Worker_TP1 pid=9",
        ),
    ],
)
def test_prefix_shapes(line: str, text: str, process: str | None) -> None:
    assert strip_prefixes(line) == (text, process)


@pytest.mark.parametrize(
    "line",
    [
        # messages that only look like a prefix stay whole
        "ERROR: Compiler /usr/bin/nvcc cannot compile programs.",
        ">>> import torch",
        "| NVIDIA-SMI 550.54.15   Driver Version: 550.54.15   CUDA Version: 12.4 |",
        "RuntimeError: CUDA error: no kernel image is available for execution on the device",
        "Subprocess sglang (pid=12) crashed with exit code -9",
        "WARNING: Running pip as the 'root' user",
        "[12/96] Building CUDA object CMakeFiles/flash.dir/a.cu.o",
        # BuildKit's own step records carry no seconds
        "#21 [17/69] RUN python3 build.py",
        "#21 ERROR: process did not complete successfully: exit code: 1",
    ],
)
def test_messages_are_not_prefixes(line: str) -> None:
    assert strip_prefixes(line) == (line, None)


def test_near_context_stays_in_its_worker() -> None:
    """vLLM's and compose's tags separate processes as journald's ident does: a ``near:``
    guard's context in one worker does not fire a line of another."""
    frame = '  File "/v/lib/python3.12/site-packages/flashinfer/compilation_context.py", line 65'
    err = "ValueError: not enough values to unpack (expected 2, got 1)"
    for a, b in [
        ("(Worker_TP0 pid=11) ", "(Worker_TP1 pid=12) "),
        ("sglang-1  | ", "sglang-2  | "),
        ("[pod/p-0/c] ", "[pod/p-1/c] "),
    ]:
        res = scan_lines([a + frame, b + err, a + err])
        assert [s.line for s in res.of("flashinfer-arch-list-invalid")] == [3], (a, b)


@pytest.mark.parametrize(
    ("name", "file"),
    [
        # a neighbour read back for its fields (nvcc's path names the toolkit) in grep's colours
        ("ansi-grep", "nvcc/unsupported-arch-setuptools-gpu-target.log"),
        ("ansi-grep", "torch-cuda/invalid-device-function.log"),
        # a field signal's 'where: text' anchored at the message's start, the log indented
        ("indent", "torch-cuda/unsupported-ptx.log"),
        ("indent", "ptxas/gpu-name-unknown-compiler-diagnostic.log"),
        # journald's ISO shape took a CI timestamp's 'word word: ' for host and ident
        ("gha", "driver/arch-dkms-hook-nvidia-exited.log"),
        ("gha", "wrap/shared-object-column-wrap.log"),
    ],
)
def test_rows_the_bench_saw_break(name: str, file: str, tmp_path: Path) -> None:
    """Rows outside the per-class sample that bench/decorations.py saw change at 6598894a."""
    raw = (TEMPLATES / file).read_text()
    p = tmp_path / "decorated.log"
    p.write_text(DECO.DECORATIONS[name][0](raw))
    want = next(r["class"] for r in ROWS if r["file"] == file)
    assert [h.rule for h in diagnosed_log(p).hypotheses[:1]] == [want]


def test_tracing_error_record_is_the_first_error() -> None:
    """Rust tracing-subscriber's ERROR record states the failure; anyhow's 'Error: <context>'
    that main returns after it only wraps it (the earlier line ranks first at equal score)."""
    lines = [
        "2025-04-23T03:14:05.341111Z  INFO text_embeddings_router: router/src/lib.rs:230: "
        "Starting model backend",
        "2025-04-23T03:14:07.818830Z ERROR text_embeddings_backend: backends/src/lib.rs:255: "
        "Could not start backend: cannot find tensor w",
        "Error: Could not create backend",
    ]
    res = scan_lines(lines)
    assert res.suspicious[0].line == 2, res.suspicious
    assert res.suspicious[0].reason.startswith("error record")
