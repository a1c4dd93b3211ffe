"""Fuzzing the input paths session 33 added: Docker json-file unwrapping, the learned model's
boilerplate.yaml, and the planner's `unfixable` mark (fuzz-2).

Deterministic (the `ci` hypothesis profile derandomizes) and bounded: each target runs a
small fixed number of examples.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml
from docker_json_log import moby_escape
from hypothesis import example, given, settings
from hypothesis import strategies as st

import remedy.planner.provider as provider
from remedy.errors import KnowledgeError
from remedy.evidence import learned
from remedy.evidence.prefix import unwrap_docker_json
from remedy.evidence.scan import scan_path
from remedy.model import Facts
from remedy.planner.plan import make_plan

ROOT = Path(__file__).resolve().parents[1]
CORPUS = ROOT / "tests" / "fixtures" / "corpus"
EXAMPLE_FACTS = ROOT / "src" / "remedy" / "examples" / "seed-sm120-system-cuda128" / "facts.yaml"
BOILERPLATE = ROOT / "knowledge" / "learned" / "boilerplate.yaml"
# real lines that signatures match (anchored at the message's start and end among them)
SEED_LOGS = [
    "toolkit-major-matches-torch/1.log",
    "runtime-libs-match-cuda-major/1.log",
    "torch-arch-list-covers-gpu/1.log",
]
SEED_LINES = [
    line
    for name in SEED_LOGS
    for line in (CORPUS / name).read_text(encoding="utf-8", errors="replace").splitlines()
][:80]


def _escape(s: str, raw_escapes: bool) -> str:
    """s as a JSON string body the way moby writes it ('<', '>', '&' and controls as \\u00XX);
    ``raw_escapes``: json.dumps' own escaping (also valid JSON)."""
    if raw_escapes:
        return json.dumps(s)[1:-1]
    return moby_escape(s)


def _record(body: str) -> str:
    return '{"log":"' + body + '","stream":"stderr","time":"2026-12-03T22:00:00.1Z"}'


# -- Docker json-file unwrapping --------------------------------------------------------------

HOSTILE = [
    "\\ud800",  # a lone high surrogate: json.loads keeps it, no UTF-8 encodes it
    "\\udfff",
    "\\udfff\\ud800",  # a pair in the wrong order: two lone surrogates
    "\\ud83d\\ude00",  # a valid pair: one character
    "\\u0000",
    "\\x41",  # not a JSON escape: the record is kept as it is
    "\\",
    '"',
    "\\n",
    "\\r\\n",
    "\\u001b[31m",
]


@st.composite
def hostile_record(draw: st.DrawFn) -> str:
    line = draw(st.sampled_from(SEED_LINES) | st.text(max_size=40))
    body = _escape(line, draw(st.booleans()))
    for _ in range(draw(st.integers(0, 3))):
        at = draw(st.integers(0, len(body)))
        body = body[:at] + draw(st.sampled_from(HOSTILE)) + body[at:]
    rec = _record(body + draw(st.sampled_from(["\\n", "\\r\\n", ""])))
    cut = draw(st.none() | st.integers(0, len(rec)))
    return rec if cut is None else rec[:cut]


@settings(max_examples=150)
@given(rec=hostile_record())
@example(rec=_record("x\\ud800y\\n"))
@example(rec=_record("\\udfff\\n"))
@example(rec=_record("a\\nb\\n"))
def test_unwrap_is_total_and_yields_one_encodable_line(rec: str) -> None:
    """Whatever the record, unwrapping returns one line that UTF-8 can encode (a lone
    surrogate, kept by json.loads, failed every output: `remedy diagnose --log` exited 70)."""
    out = unwrap_docker_json(rec)
    out.encode("utf-8")
    assert "\n" not in out


@settings(max_examples=60)
@given(line=st.sampled_from(SEED_LINES) | st.text(max_size=60), raw=st.booleans())
def test_a_valid_record_unwraps_to_its_line(line: str, raw: bool) -> None:
    line = line.replace("\n", " ").replace("\r", " ")
    line = "".join("\ufffd" if 0xD800 <= ord(c) <= 0xDFFF else c for c in line)
    for end in ("\n", "\r\n", ""):
        assert unwrap_docker_json(_record(_escape(line + end, raw))) == line


@st.composite
def docker_log(draw: st.DrawFn) -> tuple[list[str], list[str]]:
    """(plain lines, the same lines as a json-file log, some left plain, CRLF or without the
    final newline)."""
    n = draw(st.integers(1, 12))
    start = draw(st.integers(0, len(SEED_LINES) - n))
    plain = SEED_LINES[start : start + n]
    raw = draw(st.booleans())
    out = []
    for line in plain:
        kind = draw(st.sampled_from(["json", "json", "crlf", "plain"]))
        if kind == "plain":
            out.append(line)
        else:
            out.append(_record(_escape(line + ("\r\n" if kind == "crlf" else "\n"), raw)))
    # the first line decides whether the log is read as json-file (scan: the hint engine)
    out[0] = _record(_escape(plain[0] + "\n", raw))
    return plain, out


def _symptoms(path: Path, method: str) -> list[tuple[str, int, dict[str, Any]]]:
    return sorted(
        (s.signature, s.line, dict(s.fields)) for s in scan_path(path, method=method).symptoms
    )


@settings(max_examples=25)
@given(case=docker_log(), newline_at_end=st.booleans())
def test_wrapped_log_scans_as_plain(
    case: tuple[list[str], list[str]], newline_at_end: bool, tmp_path_factory: Any
) -> None:
    """A json-file log, json and plain lines mixed, CRLF records, no final newline: the same
    symptoms (signature, line, fields) as the plain log, through the Python and grep scans."""
    plain, wrapped = case
    d = tmp_path_factory.mktemp("dj")
    (d / "plain.log").write_text("\n".join(plain) + "\n", encoding="utf-8")
    end = "\n" if newline_at_end else ""
    (d / "ctr-json.log").write_text("\n".join(wrapped) + end, encoding="utf-8", newline="")
    want = _symptoms(d / "plain.log", "python")
    for method in ("python", "grep"):
        assert _symptoms(d / "ctr-json.log", method) == want, method


def test_diagnose_cli_on_hostile_json_file_log(tmp_path: Path) -> None:
    """`remedy diagnose --log X [--json]` (a subprocess: the failure was in encoding the
    output): lone surrogates, NUL, an invalid escape, a record nested past the parser's depth,
    a 10 MB record, a record without a newline: exit 0, output UTF-8, the surrogate read as
    U+FFFD where a signature captured it."""
    recs = [
        _record("OSError: [Errno 30] Read-only file system: '/ro/\\ud83d\\ude00\\ud800'\\n"),
        _record("undefined reference to `cu\\udfffda'\\n"),
        _record("Error building extension 'fla\\ud800sh\\u0000x'\\n"),
        _record("bad \\x escape\\n"),
        '{"log":"x","a":' + "[" * 50_000 + "]" * 50_000 + "}",
        _record("A" * (10 * 2**20) + "\\n"),
        _record("no newline at the end"),
    ]
    log = tmp_path / "ctr-json.log"
    log.write_text("\n".join(recs), encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src"), "PYTHONIOENCODING": "utf-8"}
    for fmt in (["--json"], []):
        r = subprocess.run(
            [sys.executable, "-m", "remedy", "diagnose", "--log", str(log), *fmt],
            capture_output=True,
            env=env,
            timeout=120,
        )
        assert r.returncode == 0, r.stderr.decode("utf-8", "replace")[-800:]
        out = r.stdout.decode("utf-8")  # strict: valid UTF-8
        if fmt:
            data = json.loads(out)
            texts = [s["text"] for s in data["symptoms"]]
            assert "undefined reference to `cu\ufffdda'" in texts
            assert any("/ro/\U0001f600\ufffd" in t for t in texts)


# -- knowledge/learned/boilerplate.yaml -------------------------------------------------------

MALFORMED = [
    ("boilerplate: [\n", 2, "invalid YAML"),
    ("boilerplate: 3\n", 1, "must be a list"),
    ("tools: []\n", 1, "must be a list"),
    ("", 1, "must be a list"),
    ("- a\n", 1, "must be a list"),
    ("boilerplate:\n  - tool: pip\n    texts: abc\n", 3, "'texts': a list of strings"),
    ("boilerplate:\n  - tool: pip\n    texts:\n      - [1]\n", 3, "'texts': a list of strings"),
    ("boilerplate:\n  - tool: pip\n", 2, "'texts': a list of strings"),
]


@pytest.mark.parametrize(("text", "line", "what"), MALFORMED)
def test_malformed_boilerplate_names_file_and_line(
    text: str, line: int, what: str, tmp_path: Path
) -> None:
    p = tmp_path / "boilerplate.yaml"
    p.write_text(text, encoding="utf-8")
    with pytest.raises(KnowledgeError, match=what) as exc:
        learned.boilerplate_tokens(p)
    assert exc.value.file == str(p) and exc.value.line == line, str(exc.value)


def test_boilerplate_not_utf8(tmp_path: Path) -> None:
    p = tmp_path / "boilerplate.yaml"
    p.write_bytes(b"boilerplate:\n  - texts: ['\xff']\n")
    with pytest.raises(KnowledgeError, match="not valid UTF-8") as exc:
        learned.boilerplate_tokens(p)
    assert exc.value.line == 2


def test_train_cli_reports_a_malformed_boilerplate(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """`python -m remedy.evidence.learned --check` with a broken boilerplate.yaml: the file:line
    and exit 2 (KnowledgeError's), not a KeyError traceback."""
    kdir = tmp_path / "knowledge"
    (kdir / "learned").mkdir(parents=True)
    (kdir / "signatures.yaml").write_text((ROOT / "knowledge" / "signatures.yaml").read_text())
    (kdir / "learned" / "boilerplate.yaml").write_text("boilerplate:\n  - tool: pip\n")
    monkeypatch.setenv("REMEDY_KNOWLEDGE_DIR", str(kdir))
    code = learned.main(["--check", "--out", str(tmp_path / "m.json")])
    assert code == 2
    assert "boilerplate.yaml:2: a boilerplate entry needs 'texts'" in capsys.readouterr().err


@st.composite
def mutated_boilerplate(draw: st.DrawFn) -> bytes:
    data = BOILERPLATE.read_bytes()
    for _ in range(draw(st.integers(1, 4))):
        at = draw(st.integers(0, len(data)))
        op = draw(st.sampled_from(["cut", "insert", "delete"]))
        if op == "cut":
            data = data[:at]
        elif op == "insert":
            data = (
                data[:at]
                + draw(st.sampled_from([b"[", b"- ", b": ", b"\n  ", b"{", b"\xff", b"7"]))
                + data[at:]
            )
        else:
            data = data[:at] + data[at + draw(st.integers(1, 40)) :]
    return data


@settings(max_examples=60)
@given(data=mutated_boilerplate())
def test_fuzz_boilerplate_loader(data: bytes, tmp_path_factory: Any) -> None:
    """A mutated boilerplate.yaml: its tokens, or a KnowledgeError naming the file."""
    p = tmp_path_factory.mktemp("bp") / "boilerplate.yaml"
    p.write_bytes(data)
    try:
        words = learned.boilerplate_tokens(p)
    except KnowledgeError as exc:
        assert exc.file == str(p)
    else:
        assert all(isinstance(w, str) for w in words)


# -- the planner's unfixable mark -------------------------------------------------------------

FILES = [
    "libcuda.so",
    "libcuda.so.1",
    "nvml.h",
    "cuda_runtime.h",
    "libcudart.so.12",
    "libnvrtc.so.12",
    "cublas_v2.h",
    "libnvidia-ml.so.1",
    "cudnn.h",
    "cusparse.h",
    "libcufft.so.11",
    "crt/host_config.h",
    "libcupti.so.12",
    "nvToolsExt.h",
]


def _what_it_does(plan: Any) -> Any:
    return plan.model_dump(include={"status", "steps", "unresolved", "cost", "unexplained"})


def _both(facts: Facts, symptoms: Any = None) -> tuple[Any, Any]:
    from remedy.knowledge.loader import load_knowledge

    kb = load_knowledge()
    marked = make_plan(kb, facts, symptoms)
    real = provider.FactsProvider.unfixable
    provider.FactsProvider.unfixable = lambda self, state, goal: False  # type: ignore[method-assign]
    try:
        unmarked = make_plan(kb, facts, symptoms)
    finally:
        provider.FactsProvider.unfixable = real  # type: ignore[method-assign]
    return _what_it_does(marked), _what_it_does(unmarked)


def _facts(missing: list[str], drop: list[bool] | None = None) -> Facts:
    d = yaml.safe_load(EXAMPLE_FACTS.read_text())
    d["workload"]["missing_files"] = missing
    if drop:
        d["pythons"] = [p for p, k in zip(d["pythons"], drop + [True] * 9, strict=False) if k]
    return Facts.model_validate(d)


@pytest.mark.parametrize(
    "missing", [["libnvrtc.so.12", "crt/host_config.h"], ["crt/host_config.h", "nvToolsExt.h"]]
)
def test_a_repair_in_two_moves_is_not_marked_unfixable(missing: list[str]) -> None:
    """Two missing files, one shipped by the compiler wheels, the other by a pip provider: no
    single move makes the rule hold, so the mark left it unresolved ('partial') where the
    search without the mark plans both moves (fuzz-2)."""
    marked, unmarked = _both(_facts(missing))
    assert marked == unmarked
    assert not marked["unresolved"]
    assert {"pip-install-cuda-toolchain", "pip-install-provider"} <= {
        s["action"] for s in marked["steps"]
    }


@settings(max_examples=30)
@given(
    missing=st.lists(st.sampled_from(FILES), max_size=3, unique=True),
    drop=st.lists(st.booleans(), max_size=3),
)
def test_fuzz_the_mark_never_changes_the_plan(missing: list[str], drop: list[bool]) -> None:
    marked, unmarked = _both(_facts(missing, drop))
    assert marked == unmarked
