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
